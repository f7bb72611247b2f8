//! Helpers shared by the integration tests: fresh temporary directories, running
//! the `millbase` program, and the independent oracle (`oracle`).
#![allow(dead_code)]

pub mod oracle;

use millbase::mix::SplitMix;
use std::path::PathBuf;

/// A fresh, empty directory `millbase-{prefix}-{pid}-{name}` in the temporary
/// directory (removed first if a run with the same process id left one).
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("millbase-{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The tests' deterministic generator: the crate's splitmix64 sequence
/// ([`millbase::mix::SplitMix`]) from a seed.
pub struct Rng(SplitMix);

impl Rng {
    /// The sequence from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix(seed))
    }

    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}
