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
//! [`crate::table::index`]) hold their canonical twin's value without a second pass; the
//! counts of the summary are per symmetry class (canonical slots only), as for the
//! moving phase.

use crate::rules::Bits;
use crate::rules::position::points;
use crate::rules::value::Value;
use crate::table::build::near_ranks::{Binomials, MOST_POINTS, PlusOne, binomials};
use crate::table::build::summary::Summary;
use crate::table::index::{Index, next_subset, pdep, pext, unrank};
use crate::table::pack::dontcare::FreeSlots;
use crate::table::sector::Sector;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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
///
/// Branch-free: each child code becomes a merit (see [`merit`]), the best child is
/// the one of greatest merit, and [`code_of_merit`] turns it back into the parent's
/// code. Which kind of child comes next is data the branch predictor cannot guess.
#[inline]
pub fn best_of_children(codes: impl Iterator<Item = u16>) -> u16 {
    code_of_merit(codes.map(merit).fold(0, u16::max))
}

/// The flag of a cell in group order ([`solve_sector`]) whose value a capturing
/// ply reaches (codes are below 2^15, see [`merit`]).
const REACHED: u16 = 0x8000;

/// A draw's merit, between every loss's and every win's.
const DRAW_MERIT: u16 = 0x8000;

/// How good a child of code `c` is for the side that plays into it, as a number that
/// grows with the parent's value. A child code is 0 (draw), odd (the child's side to
/// move loses, so the parent wins, sooner for a smaller code) or even (the child's
/// side wins, so the parent loses, later for a larger code). Codes are below 2^15
/// (distances are far shorter), so wins map above [`DRAW_MERIT`] (`!c`), losses
/// below it (`c`).
#[inline]
fn merit(c: u16) -> u16 {
    debug_assert!(c < DRAW_MERIT, "code {c} out of range");
    let win = (c & 1).wrapping_neg();
    let draw = ((c == 0) as u16).wrapping_neg();
    (win & !c) | (!win & (c | (draw & DRAW_MERIT)))
}

/// The parent's code for the best child's merit `m` (see [`merit`]): a child seen one
/// ply earlier has its code plus one, and a drawn child gives a draw.
#[inline]
fn code_of_merit(m: u16) -> u16 {
    if m > DRAW_MERIT {
        !m + 1
    } else if m == DRAW_MERIT {
        0
    } else {
        m + 1
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
/// codes, and the canonical slots whose value a capturing ply reaches (the
/// don't-cares a recode fills, [`crate::table::pack::dontcare`], found here for
/// the cost of a comparison). Parallel on the current rayon pool; `progress`
/// gets the fraction done.
///
/// The positions are visited grouped by the *opponent's* set, taken as the
/// representative `rep` of its symmetry class: every position `(own, rep)` with `own`
/// a set of `k` points among those `rep` leaves free. A quiet placement leads to
/// `(rep, own + p)` with the opponent to move, so all quiet children of a group lie in
/// one class block of the child sector (a few KiB to a few hundred KiB, in cache),
/// and the canonical form of `rep` is known once per group; so do the children of
/// each removal. The values are written in this *group order* (class of the
/// opponent's set, then colex rank of `own` among the free points: the index of
/// subspace `l-k` without its least over the stabilizer), one after another, and one
/// pass then reads them into slot order ([`to_slot_order`]), which also gives
/// duplicate slots (see [`crate::table::index`]) their value and counts the classes.
/// [`value_of`] computes the same values slot by slot, the plain way: `verify` uses it.
pub fn solve_sector(
    idx: &Index,
    sector: Sector,
    kids: &Children,
    progress: &(dyn Fn(f64) + Sync),
) -> (Vec<u16>, Summary, FreeSlots) {
    let (k, l) = sector.counts();
    let by_group = solve_in_group_order(idx, sector, kids, progress);
    let size = idx.size(k, l) as usize;
    let mut codes = crate::memory::zeroed_huge::<u16>(size);
    let mut reached = vec![0u64; size.div_ceil(64)];
    let summary = codes
        .par_chunks_mut(CHUNK as usize)
        .zip(reached.par_chunks_mut(CHUNK as usize / 64))
        .enumerate()
        .map(|(ci, out)| to_slot_order(idx, k, l, &by_group, ci as u64 * CHUNK, out))
        .reduce(Summary::default, crate::table::build::summary::merge);
    (codes, summary, FreeSlots::from_words(reached))
}

/// Bytes of memory solving a sector `k-l` takes besides its children: the codes in
/// group order and in slot order, side by side during the last pass.
pub fn sector_memory(idx: &Index, k: u32, l: u32) -> u64 {
    (idx.size(k, l) + group_order_size(idx, k, l)) * 2
}

/// Positions of a sector `k-l` in group order: every set of `k` points among the
/// free points of every class representative of `l` points.
fn group_order_size(idx: &Index, k: u32, l: u32) -> u64 {
    idx.classes(l) * idx.per_class(l, k)
}

/// The codes of the positions of `sector` in group order (see [`solve_sector`]).
fn solve_in_group_order(
    idx: &Index,
    sector: Sector,
    kids: &Children,
    progress: &(dyn Fn(f64) + Sync),
) -> Vec<u16> {
    let (k, l) = sector.counts();
    let per = idx.per_class(l, k);
    let total = group_order_size(idx, k, l);
    let mut by_group = crate::memory::zeroed_huge::<u16>(total as usize);
    // Tasks of up to CHUNK positions of one group, each with its part of `by_group`.
    let mut tasks = Vec::new();
    let mut rest: &mut [u16] = &mut by_group;
    for class in 0..idx.classes(l) {
        for first in (0..per).step_by(CHUNK as usize) {
            let len = CHUNK.min(per - first) as usize;
            let (out, tail) = std::mem::take(&mut rest).split_at_mut(len);
            tasks.push((class, first, out));
            rest = tail;
        }
    }
    let binomials = binomials();
    let done = AtomicU64::new(0);
    tasks.into_par_iter().for_each(|(class, first, out)| {
        let n = out.len() as u64;
        solve_group(idx, binomials, sector, kids, class, first, out);
        let d = done.fetch_add(n, Relaxed) + n;
        if d / (1 << 20) != (d - n) / (1 << 20) {
            progress(d as f64 / total as f64);
        }
    });
    by_group
}
/// Solves the positions `(own, rep)` with `rep` the representative of class `class`
/// of the opponent's sets and `own` the sets of `k` free points of colex ranks
/// `first..first + out.len()`, writing each value to `out` in that order.
///
/// The free points of `rep` are numbered `0..n` (`own` is `packed` on them). Per
/// position, the points where a placement closes a mill come from one pass over the
/// mills ([`Rules::closing_points`]); the other empty points are the quiet plies,
/// whose children lie in one class block of the quiet sector at
/// [`PlusOne`]; each closing point is one ply per removal, into the
/// capture sector. The best child is found without a branch per child ([`merit`]).
///
/// [`Rules::closing_points`]: crate::rules::Rules::closing_points
fn solve_group(
    idx: &Index,
    binomials: &Binomials,
    sector: Sector,
    kids: &Children,
    class: u64,
    first: u64,
    out: &mut [u16],
) {
    let rules = idx.rules();
    let (k, l) = sector.counts();
    let rep = idx.class(l, class).0;
    // `canon.sym` fixes `rep`, and a slot is the least over the stabilizer of `rep`,
    // so unmapped sets may be passed to `slot_of_image`.
    let canon = idx.canon(rep);
    let free = rules.all() & !rep;
    let n = free.count_ones();
    let every: Bits = if n == 32 { !0 } else { (1 << n) - 1 };
    // A removal leaves the opponent `l - 1 + hl` stones: below three, the game is won.
    let capture_wins = sector.l as u32 + sector.hl as u32 <= 3;
    // With no opponent stone on the board, a mill removes nothing: every ply is quiet.
    let removals: Vec<_> = if rep == 0 {
        Vec::new()
    } else {
        points(rules.removable(rep))
            .map(|r| idx.canon(rep & !(1 << r)))
            .collect()
    };
    let free_points: Vec<u8> = points(free).collect();
    let quiet_base = canon.class as u64 * idx.per_class(l, k + 1);
    // Sets of more points than near ranks take (none on a board of 24) rank whole.
    let near_ranks_fit = (k as usize) <= MOST_POINTS;
    let mut packed = unrank(first, k, n);
    let len = out.len();
    for (i, cell) in out.iter_mut().enumerate() {
        let own = pdep(packed, free);
        let closing = if removals.is_empty() {
            0
        } else {
            pext(rules.closing_points(own), free) & !packed
        };
        *cell = if capture_wins && closing != 0 {
            Value::Win(1).code() | REACHED
        } else {
            let quiet = every & !packed & !closing;
            let mut best = 0;
            if canon.stab == 0 && near_ranks_fit {
                let ranks = PlusOne::new(binomials, packed);
                for j in points(quiet) {
                    best = best.max(merit(
                        kids.quiet[(quiet_base + ranks.with(j as u32)) as usize],
                    ));
                }
            } else {
                for j in points(quiet) {
                    let child = idx.slot_of_image(&canon, own | 1 << free_points[j as usize]);
                    best = best.max(merit(kids.quiet[child as usize]));
                }
            }
            let mut best_capture = 0;
            if closing != 0 {
                let capture = kids.capture.expect("captures lead into a solved sector");
                for j in points(closing) {
                    let after = own | 1 << free_points[j as usize];
                    for c in &removals {
                        best_capture =
                            best_capture.max(merit(capture[idx.slot(c, after) as usize]));
                    }
                }
            }
            let top = best.max(best_capture);
            debug_assert!(top != 0, "a placement position has a ply");
            // Every child has a merit above 0: a capture reaches the value when
            // the best capture is the best ply.
            code_of_merit(top) | if best_capture == top { REACHED } else { 0 }
        };
        if i + 1 < len {
            packed = next_subset(packed);
        }
    }
}

/// Reads the codes of the slots `first..first + out.len()` of sector `k-l` from
/// `by_group` (see [`solve_sector`]) into `out`, and counts the canonical slots;
/// sets bit `i` of `reached` for each canonical slot `first + i` whose value a
/// capturing ply reaches.
///
/// A slot holds the position `(own, opp)` with `own` its class representative; the
/// symmetry `sym` that maps `opp` to its representative `rep` maps the position to
/// `(own', rep)`, which group order holds at the class of `rep` and the rank of
/// `own'` among the points `rep` leaves free. Every set of `k` free points of `rep`
/// has its own place there, so no least over a stabilizer is needed, and a duplicate
/// slot reads the value of its own raw position, its canonical twin's.
fn to_slot_order(
    idx: &Index,
    k: u32,
    l: u32,
    by_group: &[u16],
    first: u64,
    (out, reached): (&mut [u16], &mut [u64]),
) -> Summary {
    // The sources are scattered over `by_group`, so most reads miss the caches: the
    // sources of a batch are computed and prefetched first, then read.
    const BATCH: usize = 256;
    let mut summary = Summary::default();
    let mut batch = Vec::with_capacity(BATCH);
    let len = out.len();
    let mut read = |batch: &mut Vec<(usize, u64, bool)>| {
        for (i, source, canonical) in batch.drain(..) {
            let cell = by_group[source as usize];
            let code = cell & !REACHED;
            out[i] = code;
            if canonical {
                summary.count(code, first + i as u64);
                if cell & REACHED != 0 {
                    reached[i / 64] |= 1 << (i % 64);
                }
            }
        }
    };
    for_each_source(idx, k, l, first, len, |i, _, source, canonical| {
        crate::memory::prefetch(&by_group[source as usize]);
        batch.push((i, source, canonical));
        if batch.len() == BATCH {
            read(&mut batch);
        }
    });
    read(&mut batch);
    summary
}

/// Calls `f(i, slot, source, canonical)` for the slots `slot = first + i` of sector
/// `k-l`, `i < len`: `source` is where group order holds the slot's position (see
/// [`to_slot_order`]), `canonical` whether the slot is its class's canonical one.
fn for_each_source(
    idx: &Index,
    k: u32,
    l: u32,
    first: u64,
    len: usize,
    mut f: impl FnMut(usize, u64, u64, bool),
) {
    let rules = idx.rules();
    let (per, per_group) = (idx.per_class(k, l), idx.per_class(l, k));
    let symmetries = rules.symmetries.len();
    let end = first + len as u64;
    let mut slot = first;
    while slot < end {
        // One class block of the mover's sets: its representative's images.
        let class = slot / per;
        let (own, stab) = idx.class(k, class);
        let mut images = [0; 16];
        for (s, image) in images.iter_mut().enumerate().take(symmetries) {
            *image = rules.map(s, own);
        }
        let free = rules.all() & !own;
        let block_end = ((class + 1) * per).min(end);
        let mut packed = unrank(slot % per, l, free.count_ones());
        loop {
            let opp = pdep(packed, free);
            let c = idx.canon(opp);
            let source = c.class as u64 * per_group + idx.rank_among(images[c.sym as usize], c.rep);
            let canonical = stab == 0 || idx.index(own, opp) == slot;
            f((slot - first) as usize, slot, source, canonical);
            slot += 1;
            if slot == block_end {
                break;
            }
            packed = next_subset(packed);
        }
    }
}

/// The value of one placement position `own`/`opp` of `sector` from its children's
/// codes (the check [`crate::table::verify`] makes slot by slot).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots a capture reaches, as the solve finds them, are those found
    /// from the children's codes by generating every ply
    /// ([`crate::table::pack::dontcare::capture_free_slots`], itself checked
    /// against the probes in the integration tests), on every canonical slot
    /// but the lost-in-0 ones of every placement sector of whole reduced games
    /// of three boards; and the codes are the build's.
    #[test]
    fn the_solve_finds_the_slots_a_capture_reaches() {
        use crate::table::build::{BuildOptions, BuildPhase, Selection, build};
        use crate::table::pack::dontcare::{Fill, capture_free_slots};
        let dir = std::env::temp_dir().join(format!("mb-reached-{}", std::process::id()));
        for name in ["standard-4", "twelve-4", "six-4"] {
            let rules = crate::rules::Rules::by_name(name).unwrap();
            let idx = Index::for_rules(rules);
            let db = dir.join(name);
            build(
                rules,
                &BuildOptions::quiet(db.clone(), Selection::All, BuildPhase::All),
            )
            .unwrap();
            let codes = |s: Sector| {
                crate::table::dir::open_sector(&db, idx, s)
                    .unwrap()
                    .read_all()
                    .unwrap()
            };
            let mut reached_slots = 0;
            for s in Sector::placement_sectors(rules) {
                let truth = codes(s);
                let (quiet, capture) = s.children();
                let capture = capture.filter(|c| c.is_valid(rules));
                let (quiet_codes, capture_codes) = (codes(quiet), capture.map(codes));
                let kids = Children {
                    quiet: &quiet_codes,
                    capture: capture_codes.as_deref(),
                };
                let (solved, _, reached) = solve_sector(idx, s, &kids, &|_| {});
                assert!(solved == truth, "{name} {s}: codes differ");
                let child = |c: Sector| {
                    if Some(c) == capture {
                        capture_codes.as_deref()
                    } else {
                        None
                    }
                };
                let generated = capture_free_slots(idx, s, &truth, Fill::Loss0, child);
                let (k, l) = s.counts();
                for (slot, &code) in truth.iter().enumerate() {
                    let slot = slot as u64;
                    let (own, opp) = idx.position(k, l, slot);
                    if idx.index(own, opp) != slot || code == Value::Loss(0).code() {
                        continue;
                    }
                    assert_eq!(
                        reached.contains(slot),
                        generated.contains(slot),
                        "{name} {s} slot {slot}"
                    );
                    reached_slots += reached.contains(slot) as u64;
                }
            }
            assert!(reached_slots > 1000, "{name}: {reached_slots}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The permutation into slot order, on every slot of sectors of many shapes of
    /// the standard board (mover and opponent with 0 to 5 stones): each slot's source
    /// in group order holds a position that a board symmetry maps the slot's own
    /// position to, and exactly the slots [`Index::index`] gives are counted as
    /// canonical; a pass in pieces (as the solver's tasks make) finds the same.
    #[test]
    fn group_order_sources_are_the_slots_positions() {
        let idx = Index::standard();
        let rules = idx.rules();
        let shapes = [
            (0, 0),
            (1, 0),
            (0, 1),
            (1, 1),
            (2, 0),
            (0, 2),
            (2, 1),
            (1, 2),
        ];
        let more = [(3, 2), (2, 3), (4, 1), (3, 3), (5, 2), (2, 5), (4, 4)];
        let mut canonical_slots = 0;
        for (k, l) in shapes.into_iter().chain(more) {
            let size = idx.size(k, l);
            let per_group = idx.per_class(l, k);
            let mut sources = Vec::with_capacity(size as usize);
            for_each_source(idx, k, l, 0, size as usize, |i, slot, source, canonical| {
                assert_eq!(i as u64, slot);
                let (own, opp) = idx.position(k, l, slot);
                let (rep, _) = idx.class(l, source / per_group);
                let free = rules.all() & !rep;
                let grouped = pdep(unrank(source % per_group, k, free.count_ones()), free);
                assert!(
                    (0..rules.symmetries.len())
                        .any(|s| rules.map(s, own) == grouped && rules.map(s, opp) == rep),
                    "{k}-{l} slot {slot}: source {source} is another position"
                );
                assert_eq!(
                    canonical,
                    idx.index(own, opp) == slot,
                    "{k}-{l} slot {slot}"
                );
                canonical_slots += canonical as u64;
                sources.push((source, canonical));
            });
            assert_eq!(sources.len() as u64, size);
            let piece = 997;
            for first in (0..size).step_by(piece) {
                let len = (piece as u64).min(size - first) as usize;
                for_each_source(idx, k, l, first, len, |i, slot, source, canonical| {
                    assert_eq!(first + i as u64, slot);
                    assert_eq!(sources[slot as usize], (source, canonical));
                });
            }
        }
        assert!(canonical_slots > 0);
    }
}
