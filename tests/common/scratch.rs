//! The tests' files in the temporary directory, all of them under one root per
//! process, `millbase-tests-{pid}` in [`std::env::temp_dir`], so that a run
//! leaves nothing behind.
//!
//! - [`Scratch::new`] makes a fresh directory for one test and removes it when
//!   the guard is dropped. If the guard is dropped while its thread panics (a
//!   failing test), the directory is kept for inspection: its path is printed on
//!   standard error and it stays after the run, until the next run's start
//!   removes it (below).
//! - [`lasting`] makes a directory that lives as long as the process: the
//!   fixtures built once per run and shared by many tests (the `OnceLock`s).
//! - When the process ends (the test harness returns from `main` or calls
//!   `exit`, whether tests failed or not), the root is removed, but for the
//!   directories kept by failing tests.
//! - The first use in a process removes the roots of processes that no longer
//!   run (a run that was killed or crashed, or one whose failing tests kept
//!   directories). On Unix a process is checked with `kill(pid, 0)`; elsewhere
//!   the roots of other processes are left alone.
//!
//! The file is shared by the integration binary (`tests/common`) and the crate's
//! unit tests (`#[cfg(test)]`, included with `#[path]`), so the rule is written
//! once. It uses only `std` and `libc`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The start of every root's name; the process id follows.
const PREFIX: &str = "millbase-tests-";

/// This process's root, once made.
static ROOT: OnceLock<PathBuf> = OnceLock::new();

/// The directories kept by guards dropped in a panicking thread.
static KEPT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// This process's root directory, `millbase-tests-{pid}` in the temporary
/// directory, made (empty) on first use; the roots of processes that no longer
/// run are removed then, and this one is removed when the process ends.
pub fn root() -> &'static Path {
    ROOT.get_or_init(|| {
        let tmp = std::env::temp_dir();
        remove_stale_roots(&tmp);
        let root = tmp.join(format!("{PREFIX}{}", std::process::id()));
        // A root with this process's id is left by an earlier process.
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root)
            .unwrap_or_else(|e| panic!("cannot make {}: {e}", root.display()));
        // SAFETY: `at_exit` is a function without arguments that does not
        // unwind (it catches any panic).
        unsafe { libc::atexit(at_exit) };
        root
    })
}

/// A fresh, empty directory in this process's root, named from `name` and a
/// number unique in the process, that lives until the process ends. For the
/// fixtures built once per run; a test's own files go in a [`Scratch`].
pub fn lasting(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = root().join(format!("{name}-{n}"));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
    dir
}

/// A fresh, empty directory for one test, removed when dropped (kept, and its
/// path printed, when dropped by a panicking thread). It reads as a [`Path`].
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty directory in this process's root, named from `name` (a
    /// number unique in the process is appended).
    pub fn new(name: &str) -> Scratch {
        Scratch(lasting(name))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("test files kept for inspection: {}", self.0.display());
            KEPT.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(self.0.clone());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.0.as_os_str()
    }
}

/// Removes the root when the process ends, but for the directories kept by
/// failing tests (the root then stays, and the next run removes it).
extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let Some(root) = ROOT.get() else { return };
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if kept.is_empty() {
            let _ = std::fs::remove_dir_all(root);
            return;
        }
        let Ok(entries) = std::fs::read_dir(root) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !kept.contains(&path) {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    });
}

/// Removes the roots in `tmp` of processes that no longer run.
fn remove_stale_roots(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid != std::process::id() && !runs(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether the process `pid` runs (or may: when it cannot be told).
fn runs(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 sends nothing; it only checks that `pid` exists.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        // EPERM: it runs, under another user.
        std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_removes_its_directory_unless_its_thread_panics() {
        let dir = Scratch::new("guard");
        assert!(dir.starts_with(root()) && dir.is_dir());
        std::fs::write(dir.join("file"), b"x").unwrap();
        let path = dir.to_path_buf();
        drop(dir);
        assert!(!path.exists());

        // A panic while the guard lives: the directory is kept and listed.
        let kept = std::panic::catch_unwind(|| {
            let dir = Scratch::new("guard-panics");
            std::fs::write(dir.join("file"), b"x").unwrap();
            panic!("kept: {}", dir.display());
        })
        .unwrap_err();
        let path = PathBuf::from(
            kept.downcast_ref::<String>()
                .unwrap()
                .strip_prefix("kept: ")
                .unwrap(),
        );
        assert!(path.join("file").is_file());
        let mut list = KEPT.lock().unwrap();
        assert!(list.contains(&path));
        // Not kept after all: this run must leave nothing.
        list.retain(|p| *p != path);
        std::fs::remove_dir_all(&path).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_roots_of_ended_processes_are_removed_and_others_kept() {
        // A process that has ended (and been waited for): its id is free.
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--list")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let ended = child.id();
        child.wait().unwrap();
        assert!(!runs(ended) && runs(std::process::id()));
        // A directory standing for the temporary one, with the roots of the ended
        // process and of this one, and a directory of another name.
        let tmp = Scratch::new("tmp");
        let names = [
            format!("{PREFIX}{ended}"),
            format!("{PREFIX}{}", std::process::id()),
            format!("{PREFIX}x"),
        ];
        for name in &names {
            std::fs::create_dir_all(tmp.join(name).join("inside")).unwrap();
        }
        remove_stale_roots(&tmp);
        assert!(!tmp.join(&names[0]).exists());
        assert!(tmp.join(&names[1]).join("inside").is_dir());
        assert!(tmp.join(&names[2]).join("inside").is_dir());
    }
}
