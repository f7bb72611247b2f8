//! Helpers shared by the integration tests: scratch directories that leave nothing
//! behind (`scratch`), the tests' generator, databases and the independent oracle
//! (`oracle`) that several parts read, each built once per run.
#![allow(dead_code)]

pub mod oracle;
pub mod program;
pub mod scratch;

pub use scratch::Scratch;

use millbase::Rules;
use millbase::mix::SplitMix;
use millbase::table::build::{BuildOptions, BuildPhase, Selection, build};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// Every pair of the standard game with at most nine stones on the board (the
/// moving phase), built once per run and shared: the tests only read it (those
/// that damage files copy them first).
pub fn nine() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch::lasting("nine");
        let opts = BuildOptions::quiet(dir.clone(), Selection::MaxStones(9), Default::default());
        build(Rules::standard(), &opts).expect("the nine-stone set builds");
        dir
    })
}

/// The whole 4-stone standard game (`standard-4`, both phases, as built), built
/// once per run and shared: the tests only read it.
pub fn standard_4() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    whole_game_once(&DIR, "standard-4")
}

/// The whole 5-stone standard game (`standard-5`, both phases, as built), built
/// once per run and shared: the tests only read it.
pub fn standard_5() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    whole_game_once(&DIR, "standard-5")
}

/// The whole game of the rule set `name` (both phases, as built), built into `cell`
/// the first time it is asked for.
fn whole_game_once(cell: &'static OnceLock<PathBuf>, name: &str) -> &'static Path {
    cell.get_or_init(|| {
        let dir = scratch::lasting(name);
        let opts = BuildOptions::quiet(dir.clone(), Selection::All, BuildPhase::All);
        let rules = Rules::by_name(name).expect("a known rule set");
        build(rules, &opts).unwrap_or_else(|e| panic!("{name} builds: {e}"));
        dir
    })
}

/// The independent moving-phase oracle (3-3, 3-4, 4-3), solved once per run.
pub fn oracle() -> &'static oracle::Oracle {
    static ORACLE: OnceLock<oracle::Oracle> = OnceLock::new();
    ORACLE.get_or_init(|| {
        let t = std::time::Instant::now();
        let o = oracle::Oracle::solve();
        eprintln!("oracle solved in {:.2?}", t.elapsed());
        o
    })
}
