//! Retrograde analysis of one pair of subspaces `k-l` and `l-k`, in memory.
//!
//! Within a pair only quiet moves (slides and jumps that close no mill) stay inside
//! the pair; captures lead to the already solved subspace `(l-1)-k`, or end the game
//! when the opponent is left with two stones. The scheme is Gasser's, with depths:
//!
//! 1. *Initialisation*, one pass over every slot: no legal move is `Loss(0)` (a draw
//!    on a full board that the rules call drawn, [`Value::stuck`]); a
//!    capture into a lost position makes a *tentative* win `Win(m+1)` (a quiet line
//!    may still win faster); a position whose every move is a capture into a won
//!    position is lost, `Loss(1 + max)`. Every other position gets a counter: the
//!    number of *distinct* successor slots of its quiet moves (a position can reach
//!    the same symmetry class twice), plus one if some capture leads to a draw or
//!    worse for the opponent (so the counter can never run out).
//! 2. *Layers* `t = 0, 1, 2, ...`: every slot whose value has distance `t` is final
//!    (anything shorter was found in an earlier layer). Its predecessors (un-moves
//!    that closed no mill, deduplicated by slot) are updated: after a `Loss(t)` they
//!    become `Win(t+1)` unless they already win as fast; after a `Win(t)` their
//!    counter drops, and at zero the predecessor is lost in `max(t+1, 1 + the
//!    longest capture win)`: one more than the *largest* successor win.
//! 3. What is never decided is a draw.
//!
//! Each slot is one `u16` cell while solving: a decided value's code (below `0x8000`),
//! or `0x8000 | counter` while undecided, so an update touches one cache line. Cells
//! are updated through relaxed atomics from rayon workers: within a layer every
//! write to a cell writes the same value, so the result does not depend on timing.
//!
//! Two positions reached from one position can fall into one symmetry class only if
//! a symmetry fixes the stones that did not move; so successor and predecessor lists
//! are deduplicated only when that set has a non-trivial stabilizer.

use crate::rules::position::points;
use crate::rules::value::{Counts, Value};
use crate::rules::{Bits, Rules};
use crate::table::build::frontier::{BLOCK, Frontier};
use crate::table::index::{Index, first_subset, next_subset, pdep};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};

/// Marks an undecided cell; the low bits count its successors not yet known to win.
const UNDECIDED: u16 = 0x8000;

/// The cell of a duplicate slot while building (not a real value).
const DUPLICATE: u16 = u16::MAX;

/// Slots scanned per rayon task.
const CHUNK: usize = 1 << 14;

/// Slots per window of a layer: scanned, then updated (see `Solver::layer`). Its
/// matches are kept as `u16` offsets, at most 8 MiB.
const WINDOW: usize = CHUNK << 8;

/// Statistics of one solved subspace, counted per symmetry class (canonical slot).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Canonical slots: the number of symmetry classes of positions.
    pub classes: u64,
    /// The classes won, lost and drawn, and the longest win and loss.
    pub counts: Counts,
    /// The first slot with the longest win, if there is a win.
    pub win_example: Option<u64>,
    /// The first slot with the longest loss, if there is a loss.
    pub loss_example: Option<u64>,
}

impl Summary {
    /// Counts the canonical slot `slot` holding `code`.
    pub fn count(&mut self, code: u16, slot: u64) {
        self.classes += 1;
        let value = Value::from_code(code);
        match value {
            Value::Win(n) => {
                self.win_example =
                    first_longest((self.counts.longest_win, self.win_example), (n, Some(slot)));
            }
            Value::Loss(n) => {
                self.loss_example = first_longest(
                    (self.counts.longest_loss, self.loss_example),
                    (n, Some(slot)),
                );
            }
            Value::Draw => {}
        }
        self.counts.add(value);
    }
}

/// A solved subspace: the code of every slot (duplicates carry their canonical
/// twin's code) and its summary.
pub struct Solved {
    /// Stones of the side to move.
    pub k: u32,
    /// Stones of the opponent.
    pub l: u32,
    /// `codes[slot]`, see [`Value::code`].
    pub codes: Vec<u16>,
    /// Counts and extremes.
    pub summary: Summary,
}

/// Progress callback: `(stage, fraction done of that stage)`.
pub type Progress<'a> = &'a (dyn Fn(&str, f64) + Sync);

/// One subspace of the pair while it is being solved.
struct Side<'a> {
    k: u32,
    l: u32,
    cells: &'a [AtomicU16],
    /// Codes of `(l-1)-k`, where captures lead, if `l > 3`.
    lower: Option<&'a [u16]>,
    /// The blocks of `cells` that got a decided value of each distance.
    frontier: Frontier,
}

impl Side<'_> {
    /// Stores the decided code `code` (not a draw) in cell `slot`, and marks it.
    #[inline]
    fn decide(&self, slot: usize, code: u16) {
        self.cells[slot].store(code, Relaxed);
        self.frontier.mark(code - 1, slot);
    }
}

/// Views a `u16` slice as atomics (same size and alignment; exclusive borrow).
fn atomic16(v: &mut [u16]) -> &[AtomicU16] {
    // SAFETY: AtomicU16 has the size and alignment of u16, and `v` is borrowed mutably,
    // so no non-atomic access can happen while the view lives.
    unsafe { &*(v as *mut [u16] as *const [AtomicU16]) }
}

/// The moves of a position, before any successor value is read: whether it has any,
/// how many distinct quiet successors, and where its captures lead.
#[derive(Default, Clone, Copy)]
struct Scan {
    any_move: bool,
    /// Some capture leaves the opponent two stones: a win in one.
    wins_now: bool,
    /// Distinct quiet successor slots.
    quiet: u16,
    /// The capture successors' slots in the lower subspace are `captures[first..end]`.
    first: usize,
    end: usize,
}

/// What the capture successors' values say.
#[derive(Default)]
struct Captures {
    /// Fastest win through a capture.
    win: Option<u16>,
    /// Some capture leads to a draw or a loss for the mover.
    nonwin: bool,
    /// Longest opponent win after a capture.
    loss: Option<u16>,
}

impl Captures {
    fn of(scan: &Scan, captures: &[u64], lower: Option<&[u16]>) -> Captures {
        let mut c = Captures {
            win: scan.wins_now.then_some(1),
            ..Captures::default()
        };
        let Some(lower) = lower else { return c };
        for &slot in &captures[scan.first..scan.end] {
            match Value::from_code(lower[slot as usize]) {
                Value::Loss(m) => c.win = Some(c.win.map_or(m + 1, |w| w.min(m + 1))),
                Value::Draw => c.nonwin = true,
                Value::Win(m) => c.loss = Some(c.loss.map_or(m, |w| w.max(m))),
            }
        }
        c
    }
}

/// Positions initialised together, so that their capture look-ups are prefetched
/// together (the look-ups are cache and TLB misses into the lower subspace).
const BATCH: usize = 64;

struct Solver<'a> {
    idx: &'a Index,
    rules: &'a Rules,
}

impl Solver<'_> {
    /// Calls `f(own_after, closes_mill)` for every move of the side to move.
    #[inline]
    fn moves(&self, own: Bits, opp: Bits, mut f: impl FnMut(Bits, bool)) {
        let empty = self.rules.all() & !(own | opp);
        let fly = self.rules.flies(own.count_ones(), 0);
        for from in points(own) {
            for to in points(self.rules.destinations(from, empty, fly)) {
                let after = own ^ (1 << from) ^ (1 << to);
                f(after, self.rules.closes_mill(after, to));
            }
        }
    }

    /// Scans the moves of `(own, opp)` in side `s`: capture successors' slots are
    /// appended to `captures` (and prefetched); with `count_quiet`, the distinct
    /// quiet successors are counted.
    fn scan(
        &self,
        s: &Side,
        own: Bits,
        opp: Bits,
        count_quiet: bool,
        captures: &mut Vec<u64>,
    ) -> Scan {
        let mut e = Scan {
            first: captures.len(),
            ..Scan::default()
        };
        let removable = self.rules.removable(opp);
        let canon = self.idx.canon(opp);
        let mut buf = [0u64; MOST_MOVES];
        self.moves(own, opp, |after, closes| {
            e.any_move = true;
            if closes {
                match s.lower {
                    None => e.wins_now = true,
                    Some(lower) => {
                        for r in points(removable) {
                            let slot = self.idx.index(opp & !(1 << r), after);
                            crate::memory::prefetch(&lower[slot as usize]);
                            captures.push(slot);
                        }
                    }
                }
            } else if count_quiet {
                if canon.stab != 0 {
                    buf[e.quiet as usize] = self.idx.slot(&canon, after);
                }
                e.quiet += 1;
            }
        });
        if canon.stab != 0 {
            e.quiet = distinct(&mut buf[..e.quiet as usize]) as u16;
        }
        e.end = captures.len();
        e
    }

    /// Initial cell of a position from its scan and its captures' values; `stuck`
    /// is its value if it has no move ([`Value::stuck`]).
    fn judge(scan: &Scan, c: &Captures, stuck: Value) -> u16 {
        if !scan.any_move {
            // A drawn stuck position (a full board) is a counter no successor can
            // bring down: it ends a draw.
            return match stuck {
                Value::Draw => UNDECIDED | 1,
                v => v.code(),
            };
        }
        if let Some(w) = c.win {
            return Value::Win(w).code();
        }
        if scan.quiet == 0 && !c.nonwin {
            let longest = c.loss.expect("every move is a capture into a win");
            return Value::Loss(longest + 1).code();
        }
        UNDECIDED | (scan.quiet + c.nonwin as u16)
    }

    /// Longest opponent win through a capture from `(own, opp)`, if any.
    fn longest_capture_loss(&self, s: &Side, own: Bits, opp: Bits) -> Option<u16> {
        let mut captures = Vec::new();
        let scan = self.scan(s, own, opp, false, &mut captures);
        Captures::of(&scan, &captures, s.lower).loss
    }

    /// Distinct slots (in the other side) of the positions that reach `(own, opp)` by
    /// a quiet move of the opponent; `own_stab` is the stabilizer of `own`.
    fn predecessors(
        &self,
        own: Bits,
        opp: Bits,
        own_stab: u16,
        out: &mut [u64; MOST_MOVES],
    ) -> usize {
        let empty = self.rules.all() & !(own | opp);
        let fly = self.rules.flies(opp.count_ones(), 0);
        let mut n = 0;
        for to in points(opp) {
            if self.rules.closes_mill(opp, to) {
                continue;
            }
            for from in points(self.rules.destinations(to, empty, fly)) {
                out[n] = self.idx.index(opp ^ (1 << to) ^ (1 << from), own);
                n += 1;
            }
        }
        if own_stab != 0 {
            distinct(&mut out[..n])
        } else {
            n
        }
    }

    /// Initialises side `s`: cells and duplicate marks.
    fn initialise(&self, s: &Side, progress: Progress) {
        let per = self.idx.per_class(s.k, s.l);
        let classes = self.idx.classes(s.k);
        let done = AtomicU64::new(0);
        (0..classes).into_par_iter().for_each(|class| {
            let (rep, stab) = self.idx.class(s.k, class);
            let free = self.rules.all() & !rep;
            let mut packed = first_subset(s.l);
            let mut captures = Vec::with_capacity(BATCH * 16);
            let mut batch: Vec<(usize, Scan, Bits)> = Vec::with_capacity(BATCH);
            let mut r = 0;
            while r < per {
                captures.clear();
                batch.clear();
                while batch.len() < BATCH && r < per {
                    let slot = (class * per + r) as usize;
                    let opp = pdep(packed, free);
                    r += 1;
                    if r < per {
                        packed = next_subset(packed);
                    }
                    if stab != 0 && self.idx.index(rep, opp) != slot as u64 {
                        s.cells[slot].store(DUPLICATE, Relaxed);
                    } else {
                        let scan = self.scan(s, rep, opp, true, &mut captures);
                        batch.push((slot, scan, free & !opp));
                    }
                }
                for &(slot, ref scan, empty) in &batch {
                    let stuck = Value::stuck(self.rules, empty);
                    let cell = Self::judge(scan, &Captures::of(scan, &captures, s.lower), stuck);
                    if cell & UNDECIDED == 0 {
                        s.decide(slot, cell);
                    } else {
                        s.cells[slot].store(cell, Relaxed);
                    }
                }
            }
            let d = done.fetch_add(1, Relaxed);
            if d.is_multiple_of(256) {
                progress("init", d as f64 / classes as f64);
            }
        });
    }

    /// Processes the final values of distance `t` in side `s`, updating `other`.
    /// Returns the largest distance assigned. Only the blocks of cells that the
    /// frontier marks for `t` are read.
    ///
    /// The scan reads four cells per 64-bit atomic load, the updates read and write
    /// single cells as 16-bit atomics; the memory model forbids mixed-size accesses
    /// that race, so the two never run at once: each window of cells is first
    /// scanned (loads only, nothing writes), its matches collected, and only then
    /// processed. rayon's join between the two phases orders every scan load before
    /// every update of the window.
    fn layer(&self, s: &Side, other: &Side, t: u16) -> u16 {
        let target = Value::from_distance(t).code();
        let per = self.idx.per_class(s.k, s.l);
        let mut longest = 0;
        for (wi, window) in s.cells.chunks(WINDOW).enumerate() {
            let first = wi * WINDOW;
            if !s
                .frontier
                .any(t, first / BLOCK..(first + window.len()).div_ceil(BLOCK))
            {
                continue;
            }
            // Phase 1: scan (reads only). Offsets within a chunk fit a u16.
            let found: Vec<(usize, Vec<u16>)> = window
                .par_chunks(CHUNK)
                .enumerate()
                .filter_map(|(ci, chunk)| {
                    let start = first + ci * CHUNK;
                    let blocks = start / BLOCK..(start + chunk.len()).div_ceil(BLOCK);
                    let mut hits = Vec::new();
                    for b in s.frontier.blocks(t, blocks) {
                        let offset = b * BLOCK - start;
                        let block = &chunk[offset..(offset + BLOCK).min(chunk.len())];
                        for_matching(block, target, |j| hits.push((offset + j) as u16));
                    }
                    (!hits.is_empty()).then_some((wi * (WINDOW / CHUNK) + ci, hits))
                })
                .collect();
            // Phase 2: updates (16-bit accesses only).
            let most = found
                .par_iter()
                .map(|(ci, hits)| {
                    let mut longest = 0;
                    let mut preds = [0u64; MOST_MOVES];
                    for &j in hits {
                        let slot = (ci * CHUNK + j as usize) as u64;
                        let (own, opp) = self.idx.position(s.k, s.l, slot);
                        let (_, stab) = self.idx.class(s.k, slot / per);
                        let n = self.predecessors(own, opp, stab, &mut preds);
                        for &q in &preds[..n] {
                            crate::memory::prefetch(&other.cells[q as usize]);
                        }
                        for &q in &preds[..n] {
                            longest = longest.max(self.update(other, q as usize, t));
                        }
                    }
                    longest
                })
                .max()
                .unwrap_or(0);
            longest = longest.max(most);
        }
        longest
    }

    /// A predecessor `q` (in side `s`) of a final value of distance `t`.
    #[inline]
    fn update(&self, s: &Side, q: usize, t: u16) -> u16 {
        let cell = &s.cells[q];
        if t.is_multiple_of(2) {
            // The successor is lost: q wins in t + 1 unless it already wins as fast.
            let win = Value::Win(t + 1).code();
            let mut cur = cell.load(Relaxed);
            loop {
                let undecided = cur & UNDECIDED != 0;
                let slower_win = !undecided && cur.is_multiple_of(2) && cur > win;
                if !undecided && !slower_win {
                    return 0;
                }
                match cell.compare_exchange_weak(cur, win, Relaxed, Relaxed) {
                    Ok(_) => {
                        s.frontier.mark(t + 1, q);
                        return t + 1;
                    }
                    Err(now) => cur = now,
                }
            }
        } else {
            // The successor wins: one fewer way out for q.
            if cell.load(Relaxed) & UNDECIDED == 0 || cell.fetch_sub(1, Relaxed) != UNDECIDED + 1 {
                return 0;
            }
            let (own, opp) = self.idx.position(s.k, s.l, q as u64);
            let longest = self.longest_capture_loss(s, own, opp);
            let depth = (t + 1).max(longest.map_or(0, |m| m + 1));
            s.decide(q, Value::Loss(depth).code());
            depth
        }
    }

    /// Undecided cells become draws, duplicates take their canonical twin's code;
    /// returns the counts and extremes.
    fn finish(&self, s: &Side) -> Summary {
        s.cells.par_iter().for_each(|v| {
            let c = v.load(Relaxed);
            if c & UNDECIDED != 0 && c != DUPLICATE {
                v.store(Value::Draw.code(), Relaxed);
            }
        });
        let summary = s
            .cells
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(ci, chunk)| {
                let mut m = Summary::default();
                for (j, v) in chunk.iter().enumerate() {
                    let code = v.load(Relaxed);
                    if code == DUPLICATE {
                        continue;
                    }
                    m.count(code, (ci * CHUNK + j) as u64);
                }
                m
            })
            .reduce(Summary::default, merge);
        s.cells
            .par_chunks(CHUNK)
            .enumerate()
            .for_each(|(ci, chunk)| {
                for (j, v) in chunk.iter().enumerate() {
                    if v.load(Relaxed) == DUPLICATE {
                        let (own, opp) = self.idx.position(s.k, s.l, (ci * CHUNK + j) as u64);
                        let twin = self.idx.index(own, opp) as usize;
                        v.store(s.cells[twin].load(Relaxed), Relaxed);
                    }
                }
            });
        summary
    }
}

/// The example of the longer of two extremes `(plies, example slot)`, the smaller
/// slot of two equally long ones; an extreme without a slot is no extreme.
fn first_longest(a: (u16, Option<u64>), b: (u16, Option<u64>)) -> Option<u64> {
    match (a.1, b.1) {
        (Some(x), Some(y)) if a.0 > b.0 || (a.0 == b.0 && x <= y) => a.1,
        (Some(_), Some(_)) | (None, _) => b.1,
        (Some(_), None) => a.1,
    }
}

/// Adds two summaries of disjoint sets of slots.
pub fn merge(a: Summary, b: Summary) -> Summary {
    Summary {
        classes: a.classes + b.classes,
        counts: a.counts.merge(b.counts),
        win_example: first_longest(
            (a.counts.longest_win, a.win_example),
            (b.counts.longest_win, b.win_example),
        ),
        loss_example: first_longest(
            (a.counts.longest_loss, a.loss_example),
            (b.counts.longest_loss, b.loss_example),
        ),
    }
}

/// Calls `f(i)` for every `i` with `cells[i] == target`. Reads four cells per atomic
/// 64-bit load and tests the four lanes at once; most layers match few cells. Must
/// not run while anything writes `cells` (mixed-size atomics may not race).
fn for_matching(cells: &[AtomicU16], target: u16, mut f: impl FnMut(usize)) {
    const LOW: u64 = 0x0001_0001_0001_0001;
    const HIGH: u64 = 0x8000_8000_8000_8000;
    let mut lanes = |base: usize, n: usize| {
        for (i, cell) in cells[base..base + n].iter().enumerate() {
            if cell.load(Relaxed) == target {
                f(base + i);
            }
        }
    };
    // SAFETY: AtomicU64 may hold any bits; `align_to` gives aligned, in-bounds words
    // covering the middle of the slice, read only through atomic loads.
    let (head, words, tail) = unsafe { cells.align_to::<AtomicU64>() };
    lanes(0, head.len());
    let pattern = LOW * target as u64;
    for (w, word) in words.iter().enumerate() {
        let x = word.load(Relaxed) ^ pattern;
        if x.wrapping_sub(LOW) & !x & HIGH != 0 {
            lanes(head.len() + 4 * w, 4);
        }
    }
    lanes(cells.len() - tail.len(), tail.len());
}

/// Sorts and deduplicates `v` in place; returns the number of distinct values.
fn distinct(v: &mut [u64]) -> usize {
    v.sort_unstable();
    let mut n = 0;
    for i in 0..v.len() {
        if n == 0 || v[i] != v[n - 1] {
            v[n] = v[i];
            n += 1;
        }
    }
    n
}

/// Bytes of memory a pair needs while solving, lower subspaces excluded: one
/// `u16` cell per slot.
pub fn pair_memory(idx: &Index, k: u32, l: u32) -> u64 {
    let slots = idx.size(k, l) + if k == l { 0 } else { idx.size(l, k) };
    slots * 2
}

/// The quiet moves of one position (or un-moves into it) are gathered in buffers of
/// this many slots on the stack, so that the solver's inner loops allocate nothing.
/// [`solve_pair`] checks that the rules cannot exceed it ([`most_quiet_moves`]): 54
/// for the standard board (three flying stones, 18 empty points).
const MOST_MOVES: usize = 64;

/// An upper bound on the quiet moves of a side with `k` stones against `l`: each
/// stone to every empty point when it flies, else to each of its neighbours.
fn most_quiet_moves(rules: &Rules, k: u32, l: u32) -> usize {
    let points = rules.all().count_ones();
    if rules.flies(k, 0) {
        (k * points.saturating_sub(k + l)) as usize
    } else {
        let degree = rules.adjacency.iter().map(|a| a.count_ones()).max();
        (k * degree.unwrap_or(0)) as usize
    }
}

/// Solves the pair `k-l` / `l-k`. `lower(a, b)` must return the codes of the solved
/// subspace `a-b` for the capture targets `(l-1)-k` and `(k-1)-l` (when at least 3).
/// Returns `k-l` first, then `l-k` unless `k == l`.
///
/// Panics if the rules allow more quiet moves than the solver's buffers hold (64:
/// rules are compiled-in data; the standard board and its reduced games are within).
pub fn solve_pair<'a>(
    idx: &Index,
    k: u32,
    l: u32,
    lower: impl Fn(u32, u32) -> Option<&'a [u16]>,
    progress: Progress,
) -> Vec<Solved> {
    let solver = Solver {
        idx,
        rules: idx.rules(),
    };
    let most = most_quiet_moves(solver.rules, k, l).max(most_quiet_moves(solver.rules, l, k));
    assert!(
        most <= MOST_MOVES,
        "rules {}: up to {most} quiet moves in {k}-{l}, the solver's buffers hold {MOST_MOVES}",
        solver.rules.name
    );
    let dims: Vec<(u32, u32)> = if k == l {
        vec![(k, l)]
    } else {
        vec![(k, l), (l, k)]
    };
    let mut codes: Vec<Vec<u16>> = dims
        .iter()
        .map(|&(a, b)| crate::memory::zeroed_huge(idx.size(a, b) as usize))
        .collect();
    let summaries = {
        let sides: Vec<Side> = dims
            .iter()
            .zip(codes.iter_mut())
            .map(|(&(a, b), c)| Side {
                k: a,
                l: b,
                frontier: Frontier::new(c.len()),
                cells: atomic16(c),
                lower: (b > 3).then(|| lower(b - 1, a).expect("the lower subspace is solved")),
            })
            .collect();
        for s in &sides {
            solver.initialise(s, progress);
        }
        let decided = |c: u16| c & UNDECIDED == 0;
        let mut longest = sides
            .iter()
            .filter_map(|s| {
                s.cells
                    .par_iter()
                    .map(|v| v.load(Relaxed))
                    .filter(|&c| decided(c))
                    .max()
            })
            .max()
            .map_or(0, |c| Value::from_code(c).distance().unwrap_or(0));
        let mut t = 0u16;
        while t <= longest {
            progress(&format!("layer {t}"), t as f64 / (longest as f64 + 1.0));
            for (i, s) in sides.iter().enumerate() {
                let other = &sides[(i + 1) % sides.len()];
                longest = longest.max(solver.layer(s, other, t));
            }
            t += 1;
        }
        sides.iter().map(|s| solver.finish(s)).collect::<Vec<_>>()
    };
    dims.into_iter()
        .zip(codes)
        .zip(summaries)
        .map(|(((k, l), codes), summary)| Solved {
            k,
            l,
            codes,
            summary,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The full board (`12-12` on the 24 points): no side can move, a loss under
    /// `twelve` and a draw under `morabaraba` ([`Value::stuck`]), in every
    /// slot, duplicates included. No capture is possible, so the lower subspace is
    /// never read.
    #[test]
    fn full_board_is_lost_or_drawn_by_the_rules() {
        for (name, want) in [("twelve", Value::Loss(0)), ("morabaraba", Value::Draw)] {
            let rules = Rules::by_name(name).unwrap();
            let idx = Index::for_rules(rules);
            let solved = solve_pair(idx, 12, 12, |_, _| Some(&[]), &|_, _| {});
            let codes = &solved[0].codes;
            assert_eq!(codes.len() as u64, idx.size(12, 12));
            assert!(codes.iter().all(|&c| c == want.code()), "{name}");
            assert_eq!(
                solved[0].summary.counts.total(),
                Some(solved[0].summary.classes)
            );
        }
    }

    #[test]
    fn three_three_matches_gasser() {
        let idx = Index::standard();
        let solved = solve_pair(idx, 3, 3, |_, _| None, &|_, _| {});
        let s = &solved[0].summary;
        assert_eq!(s.loss_example.map(|_| s.counts.longest_loss), Some(26));
        let won = s.counts.wins as f64 / s.classes as f64;
        assert!((0.82..0.84).contains(&won), "won fraction {won}");
    }
}
