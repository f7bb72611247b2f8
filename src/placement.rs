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

use crate::index::{Index, first_subset, next_subset, pdep, unrank};
use crate::position::points;
use crate::retro::Summary;
use crate::rules::Bits;
use crate::sector::Sector;
use crate::value::Value;
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

/// Positions whose children are looked up together, so that the look-ups (cache
/// misses into the child sectors) overlap.
const BATCH: usize = 16;

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

#[inline]
fn prefetch(p: &u16) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed.
    unsafe {
        core::arch::x86_64::_mm_prefetch(
            p as *const u16 as *const i8,
            core::arch::x86_64::_MM_HINT_T0,
        );
    }
}

/// Slots solved per rayon task.
const CHUNK: usize = 1 << 14;

/// The codes of every slot of the placement sector `sector`, from its children's
/// codes. Parallel on the current rayon pool; `progress` gets the fraction done.
pub fn solve_sector(
    idx: &Index,
    sector: Sector,
    kids: &Children,
    progress: &(dyn Fn(f64) + Sync),
) -> (Vec<u16>, Summary) {
    let (k, l) = sector.counts();
    let size = idx.size(k, l) as usize;
    assert!(size <= u32::MAX as usize, "child slots are kept as u32");
    let mut codes = crate::memory::zeroed_huge::<u16>(size);
    let chunks = size.div_ceil(CHUNK);
    let done = AtomicU64::new(0);
    codes
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(ci, out)| {
            solve_range(idx, sector, kids, ci * CHUNK, out);
            let d = done.fetch_add(1, Relaxed);
            if d.is_multiple_of(64) {
                progress(d as f64 / chunks as f64);
            }
        });
    let summary = codes
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(ci, chunk)| summarize(idx, sector, ci * CHUNK, chunk))
        .reduce(Summary::default, crate::retro::merge);
    (codes, summary)
}

/// The positions of consecutive slots of a sector, from any slot on: the class
/// representative and the opponent set, stepping the opponent sets in colex order.
struct Slots<'a> {
    idx: &'a Index,
    k: u32,
    l: u32,
    per: u64,
    class: u64,
    r: u64,
    rep: Bits,
    free: Bits,
    packed: Bits,
}

impl<'a> Slots<'a> {
    fn new(idx: &'a Index, k: u32, l: u32, start: u64) -> Slots<'a> {
        let per = idx.per_class(k, l);
        let (class, r) = (start / per, start % per);
        let rep = idx.class(k, class).0;
        let free = idx.rules().all() & !rep;
        Slots {
            idx,
            k,
            l,
            per,
            class,
            r,
            rep,
            free,
            packed: unrank(r, l, free.count_ones()),
        }
    }

    /// The position of the current slot; moves to the next.
    #[inline]
    fn next_position(&mut self) -> (Bits, Bits) {
        let here = (self.rep, pdep(self.packed, self.free));
        self.r += 1;
        if self.r < self.per {
            self.packed = next_subset(self.packed);
        } else {
            self.r = 0;
            self.class += 1;
            if self.class < self.idx.classes(self.k) {
                self.rep = self.idx.class(self.k, self.class).0;
                self.free = self.idx.rules().all() & !self.rep;
            }
            self.packed = first_subset(self.l);
        }
        here
    }
}

/// The child slots of a batch of positions, looked up together.
#[derive(Default)]
struct Batch {
    quiet: Vec<u32>,
    capture: Vec<u32>,
    /// Per position: its place in the output, the end of its quiet and capture
    /// children, and whether a removal wins at once.
    items: Vec<(usize, usize, usize, bool)>,
}

impl Batch {
    fn clear(&mut self) {
        self.quiet.clear();
        self.capture.clear();
        self.items.clear();
    }

    fn prefetch(&self, kids: &Children) {
        for &q in &self.quiet {
            prefetch(&kids.quiet[q as usize]);
        }
        if let Some(c) = kids.capture {
            for &q in &self.capture {
                prefetch(&c[q as usize]);
            }
        }
    }

    fn evaluate(&self, kids: &Children, out: &mut [u16]) {
        let (mut q0, mut c0) = (0, 0);
        for &(at, q1, c1, wins) in &self.items {
            out[at] = if wins {
                Value::Win(1).code()
            } else {
                let qs = self.quiet[q0..q1].iter().map(|&q| kids.quiet[q as usize]);
                let cs = self.capture[c0..c1].iter().map(|&q| {
                    kids.capture.expect("captures lead into a solved sector")[q as usize]
                });
                best_of_children(qs.chain(cs))
            };
            (q0, c0) = (q1, c1);
        }
    }
}

/// Solves the slots `start..start + out.len()`. Software-pipelined: the children of
/// one batch are computed and prefetched while the previous batch's, prefetched a
/// batch earlier, are read, so index arithmetic overlaps the cache misses.
fn solve_range(idx: &Index, sector: Sector, kids: &Children, start: usize, out: &mut [u16]) {
    let (k, l) = sector.counts();
    let mut slots = Slots::new(idx, k, l, start as u64);
    let (mut cur, mut prev) = (Batch::default(), Batch::default());
    let mut at = 0;
    loop {
        cur.clear();
        while cur.items.len() < BATCH && at < out.len() {
            let (own, opp) = slots.next_position();
            let wins = children(idx, sector, own, opp, &mut cur.quiet, &mut cur.capture);
            cur.items
                .push((at, cur.quiet.len(), cur.capture.len(), wins));
            at += 1;
        }
        cur.prefetch(kids);
        prev.evaluate(kids, out);
        if cur.items.is_empty() {
            return;
        }
        std::mem::swap(&mut cur, &mut prev);
    }
}

/// Counts the canonical slots of `start..start + codes.len()`.
fn summarize(idx: &Index, sector: Sector, start: usize, codes: &[u16]) -> Summary {
    let (k, l) = sector.counts();
    let per = idx.per_class(k, l);
    let mut summary = Summary::default();
    for (i, &code) in codes.iter().enumerate() {
        let slot = (start + i) as u64;
        let (_, stab) = idx.class(k, slot / per);
        let canonical = stab == 0 || {
            let (own, opp) = idx.position(k, l, slot);
            idx.index(own, opp) == slot
        };
        if canonical {
            summary.count(code, slot);
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
