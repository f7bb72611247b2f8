//! Consistency check of a finished database: every stored value and depth is
//! recomputed from the stored values of its successors.
//!
//! This is a proof, not a spot check: if every decided value agrees with its
//! successors (a win with a successor lost one ply sooner and none sooner, a loss with
//! every successor won and the longest one ply sooner, a draw with no lost successor
//! and some drawn one) and the terminal rules hold (no move is `Loss(0)`, a capture to
//! two stones is `Win(1)`), then by induction on the distance every value is the true
//! one. Duplicate slots must equal their canonical twin.
//!
//! Placement sectors are checked the same way, each slot against the stored values
//! of the sectors its plies lead into (one ply later, down to the moving phase);
//! since placement is acyclic, this proves every placement value by induction on
//! the plies left.
//!
//! A file with value don't-cares (format version 2, `millbase repack`) is checked
//! as a probe reads it: each slot's value is the better of its stored value and its
//! capturing plies' values (`Tablebase::true_value`, which reads the smaller
//! sectors the captures lead into), and those values are checked as above: the
//! values a probe reads then agree with their successors' everywhere, which proves
//! them by the same induction.
//!
//! A file with loss-only depths (`millbase repack --depths losses`) stores no
//! distance for a win: each won slot's value is found as a probe finds it, the
//! fastest of its winning plies (an error if it has none), and the other slots are
//! checked against it as above, so the same induction holds.

use crate::rules::Bits;
use crate::rules::position::{Position, points};
use crate::rules::value::Value;
use crate::table::build::placement::{self, Children};
use crate::table::build::subspaces;
use crate::table::dir::open_sector;
use crate::table::format::{FormatError, WIN_BY_LOOKAHEAD};
use crate::table::index::Index;
use crate::table::probe::Tablebase;
use crate::table::sector::Sector;
use rayon::prelude::*;
use std::path::Path;

/// Checks the placement sector `sector` of `db`: every slot's value recomputed from
/// the stored values of the sectors its plies lead into (which must be present).
/// Duplicate slots are checked as positions of their own (their raw position's
/// value), which is their canonical twin's value.
pub fn check_sector(db: &Path, idx: &Index, sector: Sector) -> Result<SubspaceCheck, FormatError> {
    let rules = idx.rules();
    let codes = true_codes(db, idx, sector)?;
    let (quiet, capture) = sector.children();
    let quiet = true_codes(db, idx, quiet)?;
    let capture = match capture.filter(|c| c.is_valid(rules)) {
        Some(c) => Some(true_codes(db, idx, c)?),
        None => None,
    };
    let kids = Children {
        quiet: &quiet,
        capture: capture.as_deref(),
    };
    Ok(compare(idx, sector, &codes, |_, own, opp| {
        Value::from_code(placement::value_of(idx, sector, &kids, own, opp))
    }))
}

/// The value of every slot of `sector` in `db` as a probe reads it: the stored
/// codes, checksums checked; in a file with value don't-cares, each slot's canonical
/// stored value raised by its capturing plies' values, and in a file with loss-only
/// depths each won slot's distance found one ply ahead, both read through a
/// tablebase of `db`.
fn true_codes(db: &Path, idx: &Index, sector: Sector) -> Result<Vec<u16>, FormatError> {
    let file = open_sector(db, idx, sector)?;
    if !file.value_dont_cares() && !file.loss_depths() {
        return file.read_all();
    }
    let stored = file.read_all_partial()?;
    let unresolved = |what: String| FormatError::Corrupt {
        path: file.path().to_path_buf(),
        what: format!("its values cannot be resolved one ply ahead: {what}"),
    };
    let tb = Tablebase::open(db).map_err(|e| unresolved(e.to_string()))?;
    if tb.rules().fingerprint() != idx.rules().fingerprint() {
        return Err(unresolved(format!(
            "the directory's manifest is for rules '{}'",
            tb.rules().name
        )));
    }
    let (k, l) = sector.counts();
    (0..stored.len())
        .into_par_iter()
        .map(|slot| {
            let (own, opp) = idx.position(k, l, slot as u64);
            let code = stored[idx.index(own, opp) as usize];
            let pos = sector.position(own, opp);
            let v = if code == WIN_BY_LOOKAHEAD {
                tb.value_in(&file, &pos)
            } else if file.value_dont_cares() {
                tb.true_value(&pos, Value::from_code(code))
            } else {
                Ok(Value::from_code(code))
            };
            match v {
                Ok(v) => Ok(v.code()),
                Err(crate::table::probe::ProbeError::Format(e)) => Err(e),
                Err(e) => Err(unresolved(e.to_string())),
            }
        })
        .collect()
}

/// Compares every stored code of `sector` with `expected(slot, own, opp)`, in
/// parallel: the mismatches counted, the first [`KEEP`] kept as examples.
fn compare(
    idx: &Index,
    sector: Sector,
    codes: &[u16],
    expected: impl Fn(usize, Bits, Bits) -> Value + Sync,
) -> SubspaceCheck {
    let (k, l) = sector.counts();
    let chunks: Vec<(u64, Vec<Mismatch>)> = codes
        .par_chunks(1 << 14)
        .enumerate()
        .map(|(ci, chunk)| {
            let mut bad = Vec::new();
            let mut count = 0u64;
            for (j, &code) in chunk.iter().enumerate() {
                let slot = (ci << 14) + j;
                let (own, opp) = idx.position(k, l, slot as u64);
                let expected = expected(slot, own, opp);
                let stored = Value::from_code(code);
                if stored != expected {
                    count += 1;
                    if bad.len() < KEEP {
                        bad.push(Mismatch {
                            position: sector.position(own, opp),
                            stored,
                            expected,
                        });
                    }
                }
            }
            (count, bad)
        })
        .collect();
    let mismatches = chunks.iter().map(|c| c.0).sum();
    let examples = chunks.into_iter().flat_map(|c| c.1).take(KEEP).collect();
    SubspaceCheck {
        subspace: (k, l),
        sector,
        slots: codes.len() as u64,
        mismatches,
        examples,
        wdl_only: false,
    }
}

/// One disagreement.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// The position (White to move).
    pub position: Position,
    /// What the file says.
    pub stored: Value,
    /// What the successors say.
    pub expected: Value,
}

/// The outcome of checking one subspace.
#[derive(Clone, Debug)]
pub struct SubspaceCheck {
    /// `(k, l)`.
    pub subspace: (u32, u32),
    /// The sector checked (a moving-phase subspace has empty hands).
    pub sector: Sector,
    /// Slots checked.
    pub slots: u64,
    /// Disagreements found (in total).
    pub mismatches: u64,
    /// The first disagreements, for the report.
    pub examples: Vec<Mismatch>,
    /// Whether the file holds win/draw/loss only ([`check_wdl`]): the values of
    /// the mismatches are then nominal, their [`Value::wdl`] what was compared.
    pub wdl_only: bool,
}

/// Most disagreements kept per subspace for the report.
const KEEP: usize = 20;

/// Checks subspace `k-l` of `db` against `(l-k)` (quiet successors) and `(l-1)-k`
/// (captures), which must be present.
pub fn check_subspace(
    db: &Path,
    idx: &Index,
    k: u32,
    l: u32,
) -> Result<SubspaceCheck, FormatError> {
    let load = |a: u32, b: u32| -> Result<Vec<u16>, FormatError> {
        true_codes(db, idx, Sector::moving(a as u8, b as u8))
    };
    let codes = load(k, l)?;
    let other_owned;
    let other: &[u16] = if k == l {
        &codes
    } else {
        other_owned = load(l, k)?;
        &other_owned
    };
    let lower = if l > 3 { Some(load(l - 1, k)?) } else { None };
    Ok(compare(
        idx,
        Sector::moving(k as u8, l as u8),
        &codes,
        |slot, own, opp| {
            let canonical = idx.index(own, opp) as usize;
            if canonical != slot {
                Value::from_code(codes[canonical])
            } else {
                expected_value(idx, own, opp, other, lower.as_deref())
            }
        },
    ))
}

/// The value of `(own, opp)` from its successors' stored values.
fn expected_value(idx: &Index, own: u32, opp: u32, other: &[u16], lower: Option<&[u16]>) -> Value {
    let rules = idx.rules();
    let empty = rules.all() & !(own | opp);
    let fly = rules.flies(own.count_ones(), 0);
    let removable = rules.removable(opp);
    let mut best: Option<Value> = None;
    let mut consider = |v: Value| {
        if best.is_none_or(|b| v.cmp_goodness(b).is_gt()) {
            best = Some(v);
        }
    };
    for from in points(own) {
        for to in points(rules.destinations(from, empty, fly)) {
            let after = own ^ (1 << from) ^ (1 << to);
            if rules.closes_mill(after, to) {
                for r in points(removable) {
                    // Without a lower subspace the removal leaves two stones.
                    let child = lower.map(|lower| {
                        Value::from_code(lower[idx.index(opp & !(1 << r), after) as usize])
                    });
                    consider(Value::of_ply(child));
                }
            } else {
                let child = Value::from_code(other[idx.index(opp, after) as usize]);
                consider(Value::of_ply(Some(child)));
            }
        }
    }
    best.unwrap_or_else(|| rules.stuck_value(empty))
}

/// Checks the WDL-only file of `sector` in `db` (`millbase pack --wdl-only`): every
/// canonical slot's result as a probe reads it ([`Tablebase::probe_wdl`], which
/// applies don't-cares and reads derived sectors) against the results of its
/// plies, read the same way. Without distances this shows that the results are
/// consistent with each other (every win has a lost successor, every loss only won
/// ones, every draw no lost one and some drawn one), not that no win or loss was
/// stored as a draw: the full database's `verify` proves that. The mismatches hold
/// nominal values (`Win(1)`, `Loss(0)`, `Draw`): read their [`Value::wdl`].
pub fn check_wdl(db: &Path, idx: &Index, sector: Sector) -> Result<SubspaceCheck, FormatError> {
    use crate::rules::value::Wdl;
    use crate::table::probe::ProbeError;
    let rules = idx.rules();
    let file = open_sector(db, idx, sector)?;
    file.verify_checksums()?;
    let unresolved = |e: ProbeError| match e {
        ProbeError::Format(e) => e,
        e => FormatError::Corrupt {
            path: file.path().to_path_buf(),
            what: format!("its results cannot be checked against their successors: {e}"),
        },
    };
    let tb = Tablebase::open(db).map_err(unresolved)?;
    if tb.rules().fingerprint() != rules.fingerprint() {
        return Err(unresolved(ProbeError::OtherRules {
            dir: db.to_path_buf(),
            found: tb.rules().name.to_string(),
            expected: rules.name.to_string(),
        }));
    }
    let nominal = |w: Wdl| match w {
        Wdl::Win => Value::Win(1),
        Wdl::Draw => Value::Draw,
        Wdl::Loss => Value::Loss(0),
    };
    let (k, l) = sector.counts();
    let size = idx.size(k, l);
    let chunks: Vec<(u64, Vec<Mismatch>)> = (0..size.div_ceil(1 << 14))
        .into_par_iter()
        .map(|c| -> Result<(u64, Vec<Mismatch>), FormatError> {
            let mut bad = Vec::new();
            let mut count = 0;
            for slot in c << 14..size.min((c + 1) << 14) {
                let (own, opp) = idx.position(k, l, slot);
                // A duplicate slot is never read: its canonical twin is.
                if idx.index(own, opp) != slot {
                    continue;
                }
                let pos = sector.position(own, opp);
                let stored = match tb.probe_wdl(&pos) {
                    Err(ProbeError::GameOver) => continue,
                    other => other.map_err(unresolved)?,
                };
                let plies = pos.legal_plies(rules);
                let mut expected = if plies.is_empty() {
                    pos.stuck_value(rules).wdl()
                } else {
                    Wdl::Loss
                };
                for ply in plies {
                    let child = pos.after(rules, ply);
                    let v = if child.lost_on_material() {
                        Wdl::Win
                    } else {
                        match tb.probe_wdl(&child).map_err(unresolved)? {
                            Wdl::Win => Wdl::Loss,
                            Wdl::Draw => Wdl::Draw,
                            Wdl::Loss => Wdl::Win,
                        }
                    };
                    expected = expected.max(v);
                }
                if stored != expected {
                    count += 1;
                    if bad.len() < KEEP {
                        bad.push(Mismatch {
                            position: pos,
                            stored: nominal(stored),
                            expected: nominal(expected),
                        });
                    }
                }
            }
            Ok((count, bad))
        })
        .collect::<Result<_, _>>()?;
    Ok(SubspaceCheck {
        subspace: (k, l),
        sector,
        slots: size,
        mismatches: chunks.iter().map(|c| c.0).sum(),
        examples: chunks.into_iter().flat_map(|c| c.1).take(KEEP).collect(),
        wdl_only: true,
    })
}

/// Whether the file of `sector` in `db` holds win/draw/loss only (an unreadable
/// file is not: the full check names what is wrong with it).
fn is_wdl_only(db: &Path, sector: Sector) -> bool {
    crate::table::format::read_header(&db.join(sector.file_name())).is_ok_and(|h| h.wdl_only())
}

/// Checks the given sectors: a moving-phase subspace as its pair (both subspaces), a
/// placement sector alone; with `None`, every file present, moving phase first. A
/// WDL-only file is checked by [`check_wdl`].
pub fn check(
    db: &Path,
    idx: &Index,
    only: Option<Sector>,
) -> Result<Vec<SubspaceCheck>, FormatError> {
    let rules = idx.rules();
    let max = rules.stones as u32;
    let targets: Vec<Sector> = match only {
        Some(s) if s.is_moving() => {
            let (k, l) = s.counts();
            subspaces((k.max(l), k.min(l)))
                .into_iter()
                .map(|(a, b)| Sector::moving(a as u8, b as u8))
                .collect()
        }
        Some(s) => vec![s],
        None => (3..=max)
            .flat_map(|k| (3..=max).map(move |l| Sector::moving(k as u8, l as u8)))
            .chain(Sector::placement_sectors(rules))
            // Anything in a file's place: a dangling link too is named.
            .filter(|s| std::fs::symlink_metadata(db.join(s.file_name())).is_ok())
            .collect(),
    };
    targets
        .into_iter()
        .map(|s| {
            if is_wdl_only(db, s) {
                check_wdl(db, idx, s)
            } else if s.is_moving() {
                check_subspace(db, idx, s.k as u32, s.l as u32)
            } else {
                check_sector(db, idx, s)
            }
        })
        .collect()
}
