//! Helpers shared by the integration tests: fresh temporary directories, running
//! the `millbase` program, and the independent oracle (`oracle`).
#![allow(dead_code)]

pub mod oracle;

use std::path::PathBuf;

/// A fresh, empty directory `millbase-{prefix}-{pid}-{name}` in the temporary
/// directory (removed first if a run with the same process id left one).
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("millbase-{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
