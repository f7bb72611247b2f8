//! Solving one placement-phase sector by backward induction.
//!
//! Placement never repeats a position (every ply puts a stone from a hand on the
//! board), so the placement phase is acyclic: a sector's values follow from the
//! values of the sectors one ply later, which are solved first, the last placement
//! leading into the moving-phase subspaces. The value of a position is the best,
//! for the side to move, of the values of its plies: a placement that closes a mill
//! is one ply per removable opponent stone, and a removal that leaves the opponent
//! fewer than three stones (on board and in hand) wins at once (`Win(1)`).
//! Distances are to the end of the game, across captures and across the change of
//! phase, so the empty board's value is the value of the game.
//!
//! Every slot gets the value of its own raw position, so duplicate slots (see
//! [`crate::index`]) hold their canonical twin's value without a second pass; the
//! counts of the summary are per symmetry class (canonical slots only), as for the
//! moving phase.

use crate::index::{Index, binomial, next_subset, pdep, unrank};
use crate::position::points;
use crate::retro::Summary;
use crate::rules::Bits;
use crate::sector::Sector;
use crate::value::Value;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};

/// The solved codes of the sectors a placement sector leads into.
pub struct Children<'a> {
    /// Codes of the sector after a placement that removes nothing.
    pub quiet: &'a [u16],
    /// Codes of the sector after a placement that removes a stone; `None` when such a
    /// removal leaves the opponent fewer than three stones (the mover wins at once),
    /// or when the opponent has no stone on the board.
    pub capture: Option<&'a [u16]>,
}

/// The best value over children codes, for the side that plays into them: the
/// fastest win over lost children, else a draw if any child is drawn, else the
/// slowest loss. `codes` must not be empty.
#[inline]
pub fn best_of_children(codes: impl Iterator<Item = u16>) -> u16 {
    // A child code is 0 (draw), odd (the child's side to move loses: Loss(c - 1)) or
    // even (it wins: Win(c - 1)); seen one ply earlier each code becomes c + 1.
    let (mut fastest_win, mut draw, mut slowest_loss) = (u16::MAX, false, 0u16);
    for c in codes {
        if c == 0 {
            draw = true;
        } else if c % 2 == 1 {
            fastest_win = fastest_win.min(c + 1);
        } else {
            slowest_loss = slowest_loss.max(c + 1);
        }
    }
    if fastest_win != u16::MAX {
        fastest_win
    } else if draw {
        Value::Draw.code()
    } else {
        slowest_loss
    }
}

/// The child slots of one position: quiet children in the quiet sector, captures in
/// the capture sector. Returns `true` if some removal wins at once.
#[inline]
fn children(
    idx: &Index,
    sector: Sector,
    own: Bits,
    opp: Bits,
    quiet: &mut Vec<u32>,
    capture: &mut Vec<u32>,
) -> bool {
    let rules = idx.rules();
    let empty = rules.all() & !(own | opp);
    let removable = rules.removable(opp);
    // A removal leaves the opponent `l - 1 + hl` stones: below three, the game is won.
    let capture_wins = sector.l as u32 + sector.hl as u32 <= 3;
    // Quiet children have the opponent to move with `opp`, and `own` plus one point:
    // map `own` once by the symmetry that canonicalises `opp`, then add the point.
    let canon = idx.canon(opp);
    let own_image = rules.map(canon.sym as usize, own);
    let perm = &rules.symmetries[canon.sym as usize];
    for p in points(empty) {
        let after = own | 1 << p;
        if opp != 0 && rules.closes_mill(after, p) {
            if capture_wins {
                return true;
            }
            for r in points(removable) {
                capture.push(idx.index(opp & !(1 << r), after) as u32);
            }
        } else {
            quiet.push(idx.slot_of_image(&canon, own_image | 1 << perm[p as usize]) as u32);
        }
    }
    false
}

/// Positions solved per rayon task.
const CHUNK: u64 = 1 << 13;

/// The codes of every slot of the placement sector `sector`, from its children's
/// codes. Parallel on the current rayon pool; `progress` gets the fraction done.
///
/// The positions are visited grouped by the *opponent's* set, taken as the
/// representative `rep` of its symmetry class: every position `(own, rep)` with `own`
/// a set of `k` points among those `rep` leaves free. A quiet placement leads to
/// `(rep, own + p)` with the opponent to move, so all quiet children of a group lie in
/// one class block of the child sector (a few KiB to a few hundred KiB, in cache),
/// and the canonical form of `rep` is known once per group. Each position's value is
/// stored at its canonical slot; a second pass copies canonical values into the
/// duplicate slots (see [`crate::index`]) and counts the classes.
/// [`value_of`] computes the same values slot by slot, the plain way: `verify` uses it.
pub fn solve_sector(
    idx: &Index,
    sector: Sector,
    kids: &Children,
    progress: &(dyn Fn(f64) + Sync),
) -> (Vec<u16>, Summary) {
    let (k, l) = sector.counts();
    let size = idx.size(k, l) as usize;
    let mut codes = crate::memory::zeroed_huge::<u16>(size);
    let cells = atomic16(&mut codes);
    // Sets of `k` stones among the points a class representative of `l` leaves free.
    let per = binomial(idx.rules().points() as u32 - l, k);
    let tasks: Vec<(u64, u64)> = (0..idx.classes(l))
        .flat_map(|class| (0..per).step_by(CHUNK as usize).map(move |s| (class, s)))
        .collect();
    let binomials = binomials();
    let done = AtomicU64::new(0);
    let total = (idx.classes(l) * per) as f64;
    tasks.par_iter().for_each(|&(class, first)| {
        let end = (first + CHUNK).min(per);
        solve_group(idx, &binomials, sector, kids, cells, class, first..end);
        let d = done.fetch_add(end - first, Relaxed) + (end - first);
        if d / (1 << 20) != (d - (end - first)) / (1 << 20) {
            progress(d as f64 / total);
        }
    });
    let summary = (0..size.div_ceil(CHUNK as usize))
        .into_par_iter()
        .map(|ci| {
            let start = ci * CHUNK as usize;
            finish_range(idx, k, l, cells, start..(start + CHUNK as usize).min(size))
        })
        .reduce(Summary::default, crate::retro::merge);
    (codes, summary)
}

/// `binomials[n][i]` is the binomial coefficient `C(n, i)`: enough for the colex
/// ranks of sets of up to 13 stones among up to 32 points.
type Binomials = [[u64; 16]; 33];

fn binomials() -> Binomials {
    let mut t = [[0; 16]; 33];
    for (n, row) in t.iter_mut().enumerate() {
        for (i, c) in row.iter_mut().enumerate() {
            *c = binomial(n as u32, i as u32);
        }
    }
    t
}

/// The colex rank of `packed` with every bit one place higher in the order: the sum
/// over its bits `e_1 < e_2 < ...` of `C(e_i, i + 1)`.
fn colex_shifted(binomials: &Binomials, packed: Bits) -> u64 {
    points(packed)
        .enumerate()
        .map(|(i, e)| binomials[e as usize][i + 2])
        .sum()
}

/// Views a `u16` slice as atomics (same size and alignment; exclusive borrow).
fn atomic16(v: &mut [u16]) -> &[AtomicU16] {
    // SAFETY: AtomicU16 has the size and alignment of u16, and `v` is borrowed mutably,
    // so no non-atomic access can happen while the view lives.
    unsafe { &*(v as *mut [u16] as *const [AtomicU16]) }
}

/// Solves the positions `(own, rep)` with `rep` the representative of class `class`
/// of the opponent's sets and `own` the sets of `k` free points of colex ranks
/// `ranks`, storing each value at its canonical slot. Positions related by a
/// symmetry fixing `rep` store the same value at the same slot.
fn solve_group(
    idx: &Index,
    binomials: &Binomials,
    sector: Sector,
    kids: &Children,
    cells: &[AtomicU16],
    class: u64,
    ranks: std::ops::Range<u64>,
) {
    let rules = idx.rules();
    let (k, l) = sector.counts();
    let rep = idx.class(l, class).0;
    // `canon.sym` fixes `rep`, and a slot is the least over the stabilizer of `rep`,
    // so unmapped sets may be passed to `slot_of_image`.
    let canon = idx.canon(rep);
    let free = rules.all() & !rep;
    // A removal leaves the opponent `l - 1 + hl` stones: below three, the game is won.
    let capture_wins = sector.l as u32 + sector.hl as u32 <= 3;
    let removals: Vec<_> = if rep == 0 {
        Vec::new()
    } else {
        points(rules.removable(rep))
            .map(|r| idx.canon(rep & !(1 << r)))
            .collect()
    };
    let (mut quiet, mut capture) = (Vec::with_capacity(24), Vec::with_capacity(64));
    let free_points: Vec<u8> = points(free).collect();
    let quiet_base = canon.class as u64 * idx.per_class(l, k + 1);
    let mut packed = unrank(ranks.start, k, free.count_ones());
    for rank in ranks.clone() {
        let own = pdep(packed, free);
        quiet.clear();
        capture.clear();
        let mut wins = false;
        // Quiet children `(rep, own + p)`: with no symmetry fixing `rep`, the child's
        // slot is `quiet_base` plus the colex rank of `packed` with the bit of `p`
        // added, which a walk over the free points gives for every `p` at once:
        // `lower` sums the terms of the set bits below `p`, `upper` those above
        // (each one place higher for the bit added).
        let (mut lower, mut upper, mut below) = (0, colex_shifted(binomials, packed), 0);
        for (j, &p) in free_points.iter().enumerate() {
            if packed >> j & 1 == 1 {
                below += 1;
                lower += binomials[j][below];
                upper -= binomials[j][below + 1];
                continue;
            }
            let after = own | 1 << p;
            if rep != 0 && rules.closes_mill(after, p) {
                if capture_wins {
                    wins = true;
                    break;
                }
                capture.extend(removals.iter().map(|c| idx.slot(c, after)));
            } else if canon.stab == 0 {
                quiet.push(quiet_base + lower + binomials[j][below + 1] + upper);
            } else {
                quiet.push(idx.slot_of_image(&canon, after));
            }
        }
        let code = if wins {
            Value::Win(1).code()
        } else {
            let qs = quiet.iter().map(|&q| kids.quiet[q as usize]);
            let cs = capture
                .iter()
                .map(|&q| kids.capture.expect("captures lead into a solved sector")[q as usize]);
            best_of_children(qs.chain(cs))
        };
        cells[idx.index(own, rep) as usize].store(code, Relaxed);
        if rank + 1 < ranks.end {
            packed = next_subset(packed);
        }
    }
}

/// Gives the duplicate slots of `range` their canonical twin's value and counts the
/// canonical ones.
fn finish_range(
    idx: &Index,
    k: u32,
    l: u32,
    cells: &[AtomicU16],
    range: std::ops::Range<usize>,
) -> Summary {
    let per = idx.per_class(k, l);
    let mut summary = Summary::default();
    for slot in range {
        let (_, stab) = idx.class(k, slot as u64 / per);
        let twin = if stab == 0 {
            slot
        } else {
            let (own, opp) = idx.position(k, l, slot as u64);
            idx.index(own, opp) as usize
        };
        if twin == slot {
            summary.count(cells[slot].load(Relaxed), slot as u64);
        } else {
            cells[slot].store(cells[twin].load(Relaxed), Relaxed);
        }
    }
    summary
}

/// The value of one placement position `own`/`opp` of `sector` from its children's
/// codes (the check [`crate::verify`] makes slot by slot).
pub fn value_of(idx: &Index, sector: Sector, kids: &Children, own: Bits, opp: Bits) -> u16 {
    let (mut quiet, mut capture) = (Vec::new(), Vec::new());
    if children(idx, sector, own, opp, &mut quiet, &mut capture) {
        return Value::Win(1).code();
    }
    let qs = quiet.iter().map(|&q| kids.quiet[q as usize]);
    let cs = capture
        .iter()
        .map(|&q| kids.capture.expect("captures lead into a solved sector")[q as usize]);
    best_of_children(qs.chain(cs))
}
