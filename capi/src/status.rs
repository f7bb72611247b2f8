//! Status codes, the thread-local last error, and the guard that keeps panics and
//! errors from crossing the C boundary.

use crate::message::one_line;
use millbase::rules::game::GameError;
use millbase::table::probe::ProbeError;
use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What a call returned. `MB_OK` is zero; every other code is an error whose
/// one-line message [`mb_last_error`] gives on the same thread.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mb_status {
    /// Success.
    MB_OK = 0,
    /// A required pointer argument is NULL.
    MB_ERR_NULL = 1,
    /// A string argument is not UTF-8.
    MB_ERR_UTF8 = 2,
    /// The database directory does not exist or is not a directory.
    MB_ERR_NO_DATABASE = 3,
    /// The file of the position's subspace or placement sector is not in the
    /// directory; the message names it and the command that builds it.
    MB_ERR_MISSING = 4,
    /// A database file is damaged, truncated, or of other rules or format version.
    MB_ERR_DAMAGED = 5,
    /// The position text (FEN, `startpos`, `moves ...`) cannot be read.
    MB_ERR_BAD_POSITION = 6,
    /// The position cannot occur under the rules (overlapping or off-board stones,
    /// too many stones, hands that do not fit the side to move, a bad field).
    MB_ERR_ILLEGAL = 7,
    /// The opponent of the side to move has fewer than three stones: the game ended
    /// before this position, which has no value of its own.
    MB_ERR_GAME_OVER = 8,
    /// The caller's array is too small; the count needed has been stored.
    MB_ERR_BUFFER = 9,
    /// The side to move has no legal ply (it has lost), so there is no best ply.
    MB_ERR_NO_PLY = 10,
    /// An internal error (a bug in millbase), caught before it crossed into C.
    MB_ERR_INTERNAL = 11,
}

/// An error on its way to the caller: its code and one-line message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: mb_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: mb_status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn null(what: &str) -> Failure {
        Failure::new(mb_status::MB_ERR_NULL, format!("{what} is NULL"))
    }
}

impl From<ProbeError> for Failure {
    fn from(e: ProbeError) -> Failure {
        let status = match e {
            ProbeError::NoDatabase { .. } => mb_status::MB_ERR_NO_DATABASE,
            // A derived sector has no distances: the data asked for is not there.
            ProbeError::Missing { .. } | ProbeError::Derived { .. } => mb_status::MB_ERR_MISSING,
            ProbeError::Format(_) | ProbeError::OtherRules { .. } => mb_status::MB_ERR_DAMAGED,
            ProbeError::Illegal(_) => mb_status::MB_ERR_ILLEGAL,
            ProbeError::GameOver => mb_status::MB_ERR_GAME_OVER,
        };
        Failure::new(status, one_line(&e))
    }
}

impl From<GameError> for Failure {
    fn from(e: GameError) -> Failure {
        Failure::new(mb_status::MB_ERR_BAD_POSITION, one_line(&e))
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Stores `message` as this thread's last error (inner NUL bytes, which a message
/// built from the caller's text could hold, become spaces).
fn set_last_error(message: &str) {
    let clean = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = clean);
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "unknown panic"
    }
}

/// Runs the body of an exported function: its error becomes a status and the
/// thread's last error, and a panic is caught here (never unwinding into C) and
/// reported as `MB_ERR_INTERNAL`.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> mb_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => mb_status::MB_OK,
        Ok(Err(f)) => {
            set_last_error(&f.message);
            f.status
        }
        Err(payload) => {
            set_last_error(&format!(
                "internal error (a bug in millbase, please report it): {}",
                panic_text(payload.as_ref())
            ));
            mb_status::MB_ERR_INTERNAL
        }
    }
}

/// The message of the last failed call on the calling thread, or an empty string
/// if none has failed. The text stays valid until the next failing call on this
/// thread; copy it to keep it. Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn mb_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// A short constant name of a status code (`"MB_ERR_MISSING"`), or `"unknown"`.
/// Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn mb_status_name(status: i32) -> *const c_char {
    let name: &'static std::ffi::CStr = match status {
        0 => c"MB_OK",
        1 => c"MB_ERR_NULL",
        2 => c"MB_ERR_UTF8",
        3 => c"MB_ERR_NO_DATABASE",
        4 => c"MB_ERR_MISSING",
        5 => c"MB_ERR_DAMAGED",
        6 => c"MB_ERR_BAD_POSITION",
        7 => c"MB_ERR_ILLEGAL",
        8 => c"MB_ERR_GAME_OVER",
        9 => c"MB_ERR_BUFFER",
        10 => c"MB_ERR_NO_PLY",
        11 => c"MB_ERR_INTERNAL",
        _ => c"unknown",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: mb_last_error returns a valid NUL-terminated string.
        unsafe { CStr::from_ptr(mb_last_error()) }
            .to_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn a_panic_becomes_internal_with_its_message() {
        let s = guard(|| panic!("boom {}", 42));
        assert_eq!(s, mb_status::MB_ERR_INTERNAL);
        assert!(last().contains("boom 42"), "{}", last());
    }

    #[test]
    fn an_error_sets_the_message_per_thread() {
        let s = guard(|| Err(Failure::new(mb_status::MB_ERR_ILLEGAL, "bad\0thing")));
        assert_eq!(s, mb_status::MB_ERR_ILLEGAL);
        assert_eq!(last(), "bad thing");
        let other = std::thread::spawn(last).join().unwrap();
        assert_eq!(other, "", "another thread's last error is its own");
        assert_eq!(guard(|| Ok(())), mb_status::MB_OK);
        assert_eq!(last(), "bad thing", "success leaves the message");
    }

    #[test]
    fn every_status_has_its_name() {
        use mb_status::*;
        let all = [
            MB_OK,
            MB_ERR_NULL,
            MB_ERR_UTF8,
            MB_ERR_NO_DATABASE,
            MB_ERR_MISSING,
            MB_ERR_DAMAGED,
            MB_ERR_BAD_POSITION,
            MB_ERR_ILLEGAL,
            MB_ERR_GAME_OVER,
            MB_ERR_BUFFER,
            MB_ERR_NO_PLY,
            MB_ERR_INTERNAL,
        ];
        for s in all {
            // SAFETY: constant NUL-terminated strings.
            let name = unsafe { CStr::from_ptr(mb_status_name(s as i32)) };
            assert_eq!(name.to_str().unwrap(), format!("{s:?}"));
        }
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(mb_status_name(99)) }, c"unknown");
    }
}
