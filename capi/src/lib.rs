//! The C ABI of millbase's probe library ([`millbase::table::probe::Tablebase`]): open a
//! database directory, value positions of both phases, list every legal ply with its
//! value, pick a best ply. The header is `capi/millbase.h`, generated from this
//! crate by cbindgen (`capi/tests/header.rs` checks that it is current).
//!
//! Every function returns an [`mb_status`] (`MB_OK` is 0) and writes its result
//! through an out pointer; on failure [`mb_last_error`] gives a one-line message
//! on the calling thread. No panic crosses into C: one is caught and reported as
//! `MB_ERR_INTERNAL`. A handle may be used from any number of threads at once (the
//! probe library is lock-free); only [`mb_close`] must not overlap other calls on
//! the same handle.
//!
//! This is the probe library itself, not the CLI's opening search: a placement
//! position whose sector file is missing is `MB_ERR_MISSING`, where `millbase
//! probe` would search instead.
#![allow(non_camel_case_types)]
#![warn(missing_docs)]

mod message;
mod status;
mod types;

pub use status::{mb_last_error, mb_status, mb_status_name};
pub use types::{MB_NONE, MB_PLY_TEXT, mb_move, mb_position, mb_value, mb_wdl};

use millbase::table::probe::Tablebase;
use millbase::{Game, Position, Rules};
use status::{Failure, guard};
use std::ffi::{CStr, CString, c_char};
use std::path::Path;
use std::sync::OnceLock;

/// An open database directory. Opaque: create with [`mb_open`], free with
/// [`mb_close`].
pub struct mb_tablebase {
    tb: Tablebase,
}

/// The handle behind `tb`.
///
/// # Safety
/// `tb` is NULL or a handle from [`mb_open`] not yet closed.
unsafe fn handle<'a>(tb: *const mb_tablebase) -> Result<&'a Tablebase, Failure> {
    // SAFETY: the caller's contract.
    unsafe { tb.as_ref() }
        .map(|h| &h.tb)
        .ok_or_else(|| Failure::null("the tablebase handle"))
}

/// The UTF-8 text behind `p`, named `what` in errors.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|e| Failure::new(mb_status::MB_ERR_UTF8, format!("{what} is not UTF-8: {e}")))
}

/// The place behind an out pointer, named `what` in errors.
///
/// # Safety
/// `p` is NULL or valid for writing one `T`.
unsafe fn out<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the caller's contract.
    unsafe { p.as_mut() }.ok_or_else(|| Failure::null(what))
}

/// The position behind `pos`.
///
/// # Safety
/// `pos` is NULL or points to an `mb_position`.
unsafe fn position(pos: *const mb_position) -> Result<Position, Failure> {
    // SAFETY: the caller's contract.
    let p = unsafe { pos.as_ref() }.ok_or_else(|| Failure::null("the position"))?;
    p.to_position()
}

/// The position a text names under `rules`: `startpos` or a Sanmill FEN, either
/// optionally followed by `moves t1 t2 ...` (as `millbase probe` reads it).
fn parse_text(rules: &Rules, text: &str) -> Result<Position, Failure> {
    Ok(*Game::parse(rules, text)?.position())
}

/// The version of this library, e.g. `"0.1.0"`. Never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn mb_version() -> *const c_char {
    static VERSION: OnceLock<CString> = OnceLock::new();
    VERSION
        .get_or_init(|| CString::new(env!("CARGO_PKG_VERSION")).unwrap_or_default())
        .as_ptr()
}

/// The name of point `point` (`"d5"` for 0 .. `"a7"` for 23), the bit order of
/// [`mb_position`]; NULL if there is no such point.
#[unsafe(no_mangle)]
pub extern "C" fn mb_point_name(point: u32) -> *const c_char {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        let rules = Rules::standard();
        (0..rules.points() as u8)
            .map(|p| CString::new(rules.name(p)).unwrap_or_default())
            .collect()
    });
    names
        .get(point as usize)
        .map_or(std::ptr::null(), |n| n.as_ptr())
}

/// Opens the database directory `dir` and stores a new handle in `*out` (NULL on
/// failure). Reads the manifest (which names the rules, e.g. the 4-stone game) and
/// notes which files exist; each file is mapped when first probed.
/// `MB_ERR_NO_DATABASE` if `dir` is not a directory.
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string; `out` is NULL or valid for writing a
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_open(dir: *const c_char, out: *mut *mut mb_tablebase) -> mb_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let out = unsafe { self::out(out, "the out pointer") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the caller's contract.
        let dir = unsafe { text(dir, "the directory") }?;
        let tb = Tablebase::open(Path::new(dir))?;
        *out = Box::into_raw(Box::new(mb_tablebase { tb }));
        Ok(())
    })
}

/// Closes a handle from [`mb_open`] and frees it; NULL is ignored. No other call
/// may use the handle during or after this one.
///
/// # Safety
/// `tb` is NULL or a handle from [`mb_open`] not yet closed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_close(tb: *mut mb_tablebase) {
    if !tb.is_null() {
        // SAFETY: the caller's contract: the handle came from `Box::into_raw`.
        let handle = unsafe { Box::from_raw(tb) };
        // Dropping unmaps the files; a panic there must not reach C either.
        let _ = guard(move || {
            drop(handle);
            Ok(())
        });
    }
}

/// Reads `text`, `startpos` or a Sanmill FEN, either optionally followed by
/// `moves t1 t2 ...`, under the rules of `tb`'s databases, into `*out`.
/// `MB_ERR_BAD_POSITION` if it cannot be read or a ply of the list is illegal.
///
/// # Safety
/// `tb` is a live handle or NULL; `text` is NULL or a NUL-terminated string; `out`
/// is NULL or valid for writing an `mb_position`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_parse(
    tb: *const mb_tablebase,
    text: *const c_char,
    out: *mut mb_position,
) -> mb_status {
    guard(|| {
        // SAFETY: the caller's contract, for each pointer.
        let (tb, text, out) = unsafe {
            (
                handle(tb)?,
                self::text(text, "the position text")?,
                self::out(out, "the out pointer")?,
            )
        };
        *out = mb_position::from(&parse_text(tb.rules(), text)?);
        Ok(())
    })
}

/// The exact value of `*pos` for the side to move, in `*out`: one look-up in its
/// subspace's or placement sector's file. A side to move with fewer than three
/// stones or no legal ply has a loss in 0.
///
/// # Safety
/// `tb` is a live handle or NULL; `pos` is NULL or points to an `mb_position`; `out`
/// is NULL or valid for writing an `mb_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_probe(
    tb: *const mb_tablebase,
    pos: *const mb_position,
    out: *mut mb_value,
) -> mb_status {
    guard(|| {
        // SAFETY: the caller's contract, for each pointer.
        let (tb, pos, out) = unsafe {
            (
                handle(tb)?,
                position(pos)?,
                self::out(out, "the out pointer")?,
            )
        };
        *out = tb.probe(&pos)?.into();
        Ok(())
    })
}

/// As [`mb_probe`], for the position a text names (as [`mb_parse`] reads it).
///
/// # Safety
/// As [`mb_parse`], with `out` valid for writing an `mb_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_probe_text(
    tb: *const mb_tablebase,
    text: *const c_char,
    out: *mut mb_value,
) -> mb_status {
    guard(|| {
        // SAFETY: the caller's contract, for each pointer.
        let (tb, text, out) = unsafe {
            (
                handle(tb)?,
                self::text(text, "the position text")?,
                self::out(out, "the out pointer")?,
            )
        };
        *out = tb.probe(&parse_text(tb.rules(), text)?)?.into();
        Ok(())
    })
}

/// The fast path for engines: the value of the moving-phase position with the
/// stones `own` for the side to move and `opp` for its opponent (both hands empty,
/// no removal pending), without building a position.
///
/// # Safety
/// `tb` is a live handle or NULL; `out` is NULL or valid for writing an `mb_value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_probe_sets(
    tb: *const mb_tablebase,
    own: u32,
    opp: u32,
    out: *mut mb_value,
) -> mb_status {
    guard(|| {
        // SAFETY: the caller's contract, for each pointer.
        let (tb, out) = unsafe { (handle(tb)?, self::out(out, "the out pointer")?) };
        *out = tb.probe_sets(own, opp)?.into();
        Ok(())
    })
}

/// Every legal ply of `*pos` with its value for the side to move, best first
/// (fastest win, then draws, then slowest loss), as `millbase analyze` lists them.
/// Stores the number of plies in `*count` and the plies in `moves[0 ..]`; if
/// `capacity` is smaller than that number, stores only the count and returns
/// `MB_ERR_BUFFER` (call with `capacity` 0 and `moves` NULL to ask the size). A
/// side to move that has lost has no plies: `*count` is 0.
///
/// # Safety
/// `tb` is a live handle or NULL; `pos` is NULL or points to an `mb_position`;
/// `moves` is NULL or valid for writing `capacity` `mb_move`s; `count` is NULL or
/// valid for writing a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_moves(
    tb: *const mb_tablebase,
    pos: *const mb_position,
    moves: *mut mb_move,
    capacity: usize,
    count: *mut usize,
) -> mb_status {
    guard(|| {
        // SAFETY: the caller's contract, for each pointer.
        let (tb, pos, count) = unsafe {
            (
                handle(tb)?,
                position(pos)?,
                out(count, "the count pointer")?,
            )
        };
        let list = tb.moves(&pos)?;
        *count = list.len();
        if list.len() > capacity {
            return Err(Failure::new(
                mb_status::MB_ERR_BUFFER,
                format!(
                    "the position has {} legal plies, the array holds {capacity}",
                    list.len()
                ),
            ));
        }
        if list.is_empty() {
            return Ok(());
        }
        if moves.is_null() {
            return Err(Failure::null("the moves array"));
        }
        for (i, &(ply, value)) in list.iter().enumerate() {
            // SAFETY: `moves` holds `capacity` >= `list.len()` elements.
            unsafe { moves.add(i).write(mb_move::new(tb.rules(), ply, value)) };
        }
        Ok(())
    })
}

/// A best ply of `*pos` and its value, in `*out`: the first of [`mb_moves`].
/// `MB_ERR_NO_PLY` if the side to move has no legal ply (it has lost).
///
/// # Safety
/// `tb` is a live handle or NULL; `pos` is NULL or points to an `mb_position`; `out`
/// is NULL or valid for writing an `mb_move`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mb_best_move(
    tb: *const mb_tablebase,
    pos: *const mb_position,
    out: *mut mb_move,
) -> mb_status {
    guard(|| {
        // SAFETY: the caller's contract, for each pointer.
        let (tb, pos, out) = unsafe {
            (
                handle(tb)?,
                position(pos)?,
                self::out(out, "the out pointer")?,
            )
        };
        let (ply, value) = tb.best_ply(&pos)?.ok_or_else(|| {
            Failure::new(
                mb_status::MB_ERR_NO_PLY,
                "the side to move has no legal ply: it has lost",
            )
        })?;
        *out = mb_move::new(tb.rules(), ply, value);
        Ok(())
    })
}
