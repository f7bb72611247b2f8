//! The layers of a retrograde solve of a pair of sectors, shared by the moving
//! phase ([`crate::table::build::retro`]) and the placement sectors in which stones
//! also move ([`crate::table::build::moving_placement`]).
//!
//! A pair is one or two *sides* (sectors) whose quiet plies lead from one into the
//! other. Once every cell is initialised (a decided value, or `UNDECIDED | counter`
//! of the quiet successors not yet known to win), layer `t = 0, 1, 2, ...` takes
//! every cell of distance `t`, which is final, to its quiet predecessors in the other
//! side: after a `Loss(t)` they become `Win(t+1)` unless they already win as fast;
//! after a `Win(t)` their counter drops, and at zero the predecessor is lost in
//! `max(t+1, 1 + the longest win of a ply out of the pair)`. What is never decided
//! is a draw. What the game is enters only through [`Unmoves`]: the predecessors of
//! a cell, the longest exit win, and the canonical twin of a duplicate slot.
//!
//! Each slot is one `u16` cell: a decided value's code (below `0x8000`), or
//! `0x8000 | counter` while undecided, with the loss hint of [`HINT`] (the
//! longest win through an exit, for the layer that finds the cell lost), so an
//! update touches one cache line. Cells
//! are updated through relaxed atomics from rayon workers: within a layer every
//! write to a cell writes the same value, so the result does not depend on timing.
//! A [`Frontier`] records which blocks got a value of each distance, so a layer
//! reads only those blocks.

use crate::rules::value::Value;
use crate::table::build::checkpoint::Checkpoint;
use crate::table::build::frontier::{BLOCK, Frontier};
use crate::table::build::summary::{Summary, merge};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};

/// Marks an undecided cell; its [`COUNTER`] bits count its successors not yet
/// known to win, its [`HINT`] bits hold its loss hint.
pub(crate) const UNDECIDED: u16 = 0x8000;

/// The bits of an undecided cell that count its quiet successors not yet known to
/// win (at most [`MOST_MOVES`], and one for a drawn exit).
const COUNTER: u16 = 0x7f;

/// The bits of an undecided cell that hold its *loss hint*: the longest opponent
/// win through an exit, found when the cell was initialised, so that a cell whose
/// counter drops to zero is valued without reading its exits again. Shifted by
/// [`HINT_SHIFT`]: 0 unknown ([`Unmoves::longest_exit_loss`] finds it), 1 none,
/// `m + 2` a win in `m`.
const HINT: u16 = 0x7f << HINT_SHIFT;

/// Where [`HINT`] starts.
const HINT_SHIFT: u32 = 7;

// The counter holds every quiet move and a drawn exit.
const _: () = assert!((MOST_MOVES as u16) < COUNTER && COUNTER & HINT == 0);
const _: () = assert!((UNDECIDED | DRAWN_EXIT) & (COUNTER | HINT) == 0);

/// The cell of a duplicate slot while building (not a real value).
pub(crate) const DUPLICATE: u16 = u16::MAX;

/// In an undecided cell of a side that keeps exit marks ([`ExitMarks`]): an exit
/// draws, so it reaches the value if the cell ends a draw. (Counters stay far
/// below it: a drawn exit keeps one that no successor brings down.)
pub(crate) const DRAWN_EXIT: u16 = 0x4000;

/// Slots scanned per rayon task.
pub(crate) const CHUNK: usize = 1 << 14;

/// Slots per window of a layer: scanned, then updated (see [`layer`]). Its matches
/// are kept as `u16` offsets, at most 8 MiB.
const WINDOW: usize = CHUNK << 8;

/// The quiet plies of one position (or un-moves into it) are gathered in buffers of
/// this many slots on the stack, so that the solvers' inner loops allocate nothing.
/// Each solver checks that its rules cannot exceed it ([`most_quiet_moves`]): 63
/// for a board of 24 points (three flying stones, 21 empty points).
pub(crate) const MOST_MOVES: usize = 64;

/// A buffer of predecessor slots.
pub(crate) type Slots = [u64; MOST_MOVES];

/// One side of a pair while it is solved: its cells and their frontier.
pub(crate) struct Cells<'a> {
    /// One cell per slot.
    pub values: &'a [AtomicU16],
    /// The blocks of `values` that got a decided value of each distance.
    pub frontier: Frontier,
    /// Where the game keeps them ([`solve_resumable`]), the slots whose current
    /// value an exit reaches ([`ExitMarks`]).
    pub exits: Option<ExitMarks>,
}

/// One bit a slot: whether a ply out of the pair (an exit) reaches the cell's
/// decided value, that is, whether an exit is among its best plies. The
/// initialisation marks the values it decides through exits; the layers unmark
/// an exit's win that a faster quiet win replaces, and mark a loss as long as
/// the longest exit's; [`finish`] marks the draws with a drawn exit
/// ([`DRAWN_EXIT`]). Kept where every exit is a capture (the moving phase), it
/// is the set of slots a capture reaches that a recode needs
/// ([`crate::table::pack::dontcare::FreeSlots`]). The undecided cells, most of
/// those the layers write, carry no mark, so their updates touch no more memory.
pub(crate) struct ExitMarks {
    words: Vec<AtomicU64>,
}

impl ExitMarks {
    /// No slot of `n` marked.
    fn new(n: usize) -> ExitMarks {
        ExitMarks {
            words: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Marks `slot` (`on`) or unmarks it.
    #[inline]
    fn set(&self, slot: usize, on: bool) {
        let (word, bit) = (&self.words[slot / 64], 1u64 << (slot % 64));
        if on {
            word.fetch_or(bit, Relaxed);
        } else {
            word.fetch_and(!bit, Relaxed);
        }
    }

    /// The marks as words, slot `64 w + b` bit `b` of word `w`.
    pub fn into_words(self) -> Vec<u64> {
        self.words.into_iter().map(AtomicU64::into_inner).collect()
    }
}

impl<'a> Cells<'a> {
    /// The cells `v`, seen as atomics for the solve, with an empty frontier, and
    /// exit marks if `exits`.
    pub fn new(v: &'a mut [u16], exits: bool) -> Cells<'a> {
        Cells {
            frontier: Frontier::new(v.len()),
            exits: exits.then(|| ExitMarks::new(v.len())),
            values: atomic16(v),
        }
    }

    /// The cells `v` as a checkpoint left them between two layers, with the
    /// frontier of every decided value in them (and no exit marks: a checkpoint
    /// does not keep them).
    pub fn restored(v: &'a mut [u16]) -> Cells<'a> {
        let cells = Cells::new(v, false);
        cells
            .values
            .par_chunks(BLOCK)
            .enumerate()
            .for_each(|(b, block)| {
                for (j, c) in block.iter().enumerate() {
                    let code = c.load(Relaxed);
                    if code != 0 && code & UNDECIDED == 0 {
                        cells.frontier.mark(code - 1, b * BLOCK + j);
                    }
                }
            });
        cells
    }

    /// Stores the initial cell `cell` of `slot` (decided or not), marking a decided
    /// one in the frontier.
    #[inline]
    pub fn init(&self, slot: usize, cell: u16) {
        if cell & UNDECIDED == 0 {
            self.decide(slot, cell);
        } else {
            self.values[slot].store(cell, Relaxed);
        }
    }

    /// Stores the decided code `code` (not a draw) in cell `slot`, and marks it.
    #[inline]
    pub fn decide(&self, slot: usize, code: u16) {
        self.values[slot].store(code, Relaxed);
        self.frontier.mark(code - 1, slot);
    }

    /// Records whether an exit reaches the decided value of `slot`, where exit
    /// marks are kept.
    #[inline]
    pub fn exit_reaches(&self, slot: usize, reaches: bool) {
        if let Some(marks) = &self.exits {
            marks.set(slot, reaches);
        }
    }
}

/// Views a `u16` slice as atomics (same size and alignment; exclusive borrow).
fn atomic16(v: &mut [u16]) -> &[AtomicU16] {
    // SAFETY: AtomicU16 has the size and alignment of u16, and `v` is borrowed mutably,
    // so no non-atomic access can happen while the view lives.
    unsafe { &*(v as *mut [u16] as *const [AtomicU16]) }
}

/// The game of a pair, as the layers need it. Sides are numbered as in the slice of
/// [`Cells`] given to [`solve`]; the quiet plies of side `i` lead into side
/// `(i + 1) % sides`.
pub(crate) trait Unmoves: Sync {
    /// Writes to `out` the distinct slots, in the other side, of the positions
    /// that reach `slot` of side `side` by a quiet ply; returns how many.
    fn predecessors(&self, side: usize, slot: u64, out: &mut Slots) -> usize;
    /// The longest opponent win after a ply out of the pair from `slot` of side
    /// `side`, if any (the depth of a loss whose quiet successors all win).
    fn longest_exit_loss(&self, side: usize, slot: u64) -> Option<u16>;
    /// The canonical slot of the duplicate slot `slot` of side `side`.
    fn twin(&self, side: usize, slot: u64) -> u64;
}

/// Progress callback: `(stage, fraction done of that stage)`.
pub type Progress<'a> = &'a (dyn Fn(&str, f64) + Sync);

/// Solves a pair whose sides' cells are `codes` (zeroed, one vector per side):
/// restored from `checkpoint`'s file if it has a valid one, else each side `i`
/// initialised by `init(i, cells)`; then the layers ([`solve`]), saving
/// checkpoints between them. Returns each side's summary, and with `exits` (a
/// game whose exits are all captures) the slots whose value an exit reaches
/// ([`ExitMarks`]), unless the solve resumed from a checkpoint.
pub(crate) fn solve_resumable(
    codes: &mut [Vec<u16>],
    init: impl Fn(usize, &Cells),
    exits: bool,
    game: &impl Unmoves,
    progress: Progress,
    checkpoint: Option<&Checkpoint>,
) -> Vec<(Summary, Option<Vec<u64>>)> {
    let first = checkpoint.and_then(|c| c.restore(codes));
    let cells: Vec<Cells> = codes
        .iter_mut()
        .map(|c| match first {
            Some(_) => Cells::restored(c),
            None => Cells::new(c, exits),
        })
        .collect();
    if first.is_none() {
        for (i, c) in cells.iter().enumerate() {
            init(i, c);
        }
    }
    let summaries = solve(&cells, game, progress, first.unwrap_or(0), checkpoint);
    summaries
        .into_iter()
        .zip(cells)
        .map(|(summary, c)| (summary, c.exits.map(ExitMarks::into_words)))
        .collect()
}

/// Runs the layers over the initialised `sides`, from layer `first`, until no
/// value is left to propagate, then finishes them (see [`finish`]); returns each
/// side's summary. Between layers, `checkpoint` saves the cells when its time has
/// come. `progress` hears `"layer t"` and the fraction of the layers known so far.
pub(crate) fn solve(
    sides: &[Cells],
    game: &impl Unmoves,
    progress: Progress,
    first: u16,
    checkpoint: Option<&Checkpoint>,
) -> Vec<Summary> {
    let decided = |c: u16| c & UNDECIDED == 0;
    let mut longest = sides
        .iter()
        .filter_map(|s| {
            s.values
                .par_iter()
                .map(|v| v.load(Relaxed))
                .filter(|&c| decided(c))
                .max()
        })
        .max()
        .map_or(0, |c| Value::from_code(c).distance().unwrap_or(0));
    let mut t = first;
    while t <= longest {
        if let Some(c) = checkpoint {
            let cells: Vec<&[AtomicU16]> = sides.iter().map(|s| s.values).collect();
            c.maybe_save(t, &cells);
        }
        progress(&format!("layer {t}"), t as f64 / (longest as f64 + 1.0));
        for i in 0..sides.len() {
            let o = (i + 1) % sides.len();
            longest = longest.max(layer(game, sides, i, o, t));
        }
        t += 1;
    }
    (0..sides.len()).map(|i| finish(game, sides, i)).collect()
}

/// Processes the final values of distance `t` in side `s`, updating side `o`.
/// Returns the largest distance assigned. Only the blocks of cells that the
/// frontier marks for `t` are read.
///
/// The scan reads four cells per 64-bit atomic load, the updates read and write
/// single cells as 16-bit atomics; the memory model forbids mixed-size accesses
/// that race, so the two never run at once: each window of cells is first
/// scanned (loads only, nothing writes), its matches collected, and only then
/// processed. rayon's join between the two phases orders every scan load before
/// every update of the window.
fn layer(game: &impl Unmoves, sides: &[Cells], s: usize, o: usize, t: u16) -> u16 {
    let target = Value::from_distance(t).code();
    let (side, other) = (&sides[s], &sides[o]);
    let mut longest = 0;
    for (wi, window) in side.values.chunks(WINDOW).enumerate() {
        let first = wi * WINDOW;
        if !side
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
                for b in side.frontier.blocks(t, blocks) {
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
                let slots = hits.iter().map(|&j| (ci * CHUNK + j as usize) as u64);
                update_all(game, other, s, o, t, slots)
            })
            .max()
            .unwrap_or(0);
        longest = longest.max(most);
    }
    longest
}

/// Updates the predecessors (in side `o`, whose cells are `other`) of the final
/// values of distance `t` at `slots` of side `s`; returns the largest distance
/// assigned.
///
/// The predecessors' cells lie anywhere in gigabytes of cells, so each update
/// waits for main memory unless its cell was fetched ahead. The predecessors of
/// the next slot are found (a few hundred nanoseconds of un-moves and index
/// arithmetic) and their cells prefetched before this slot's are updated, so
/// that those waits overlap the work. The order of the updates within a layer
/// does not change what they write.
fn update_all(
    game: &impl Unmoves,
    other: &Cells,
    s: usize,
    o: usize,
    t: u16,
    mut slots: impl Iterator<Item = u64>,
) -> u16 {
    let fetch = |slot: u64, buf: &mut Slots| {
        let n = game.predecessors(s, slot, buf);
        for &q in &buf[..n] {
            crate::memory::prefetch(&other.values[q as usize]);
        }
        n
    };
    // The current slot's predecessors and the next one's, already fetched.
    // (Fetching two or three slots ahead was no faster on `twelve-6`.)
    let mut buffers = ([0u64; MOST_MOVES], [0u64; MOST_MOVES]);
    let (mut here, mut next) = (&mut buffers.0, &mut buffers.1);
    let Some(first) = slots.next() else {
        return 0;
    };
    let mut n = fetch(first, here);
    let mut longest = 0;
    loop {
        let after = slots.next().map(|slot| fetch(slot, next));
        for &q in &here[..n] {
            longest = longest.max(update(game, other, o, q as usize, t));
        }
        let Some(m) = after else { break };
        std::mem::swap(&mut here, &mut next);
        n = m;
    }
    longest
}

/// A predecessor `q` (in side `o`, whose cells are `s`) of a final value of
/// distance `t`. Returns the distance it got, or 0.
#[inline]
fn update(game: &impl Unmoves, s: &Cells, o: usize, q: usize, t: u16) -> u16 {
    let cell = &s.values[q];
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
                    if slower_win {
                        // Only an exit wins before the layers: a quiet ply
                        // wins faster.
                        s.exit_reaches(q, false);
                    }
                    s.frontier.mark(t + 1, q);
                    return t + 1;
                }
                Err(now) => cur = now,
            }
        }
    } else {
        // The successor wins: one fewer way out for q.
        if cell.load(Relaxed) & UNDECIDED == 0 {
            return 0;
        }
        let before = cell.fetch_sub(1, Relaxed);
        if before & !HINT != UNDECIDED + 1 {
            return 0;
        }
        let longest = loss_hint(before).unwrap_or_else(|| game.longest_exit_loss(o, q as u64));
        let depth = (t + 1).max(longest.map_or(0, |m| m + 1));
        s.decide(q, Value::Loss(depth).code());
        if depth == longest.map_or(0, |m| m + 1) {
            s.exit_reaches(q, true);
        }
        depth
    }
}

/// Undecided cells of side `i` become draws (marked where an exit draws),
/// duplicates take their canonical twin's code; returns the counts and extremes.
fn finish(game: &impl Unmoves, sides: &[Cells], i: usize) -> Summary {
    let cells = sides[i].values;
    cells.par_iter().enumerate().for_each(|(slot, v)| {
        let c = v.load(Relaxed);
        if c & UNDECIDED != 0 && c != DUPLICATE {
            v.store(Value::Draw.code(), Relaxed);
            if c & DRAWN_EXIT != 0 {
                sides[i].exit_reaches(slot, true);
            }
        }
    });
    let summary = cells
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
    cells.par_chunks(CHUNK).enumerate().for_each(|(ci, chunk)| {
        for (j, v) in chunk.iter().enumerate() {
            if v.load(Relaxed) == DUPLICATE {
                let twin = game.twin(i, (ci * CHUNK + j) as u64) as usize;
                v.store(cells[twin].load(Relaxed), Relaxed);
            }
        }
    });
    summary
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

/// A position's cell before the layers, from what its exits (plies that leave the
/// pair: captures, placements) say. `stuck`: its value if it has no ply
/// ([`Value::stuck`]; a drawn one keeps a counter that no successor brings down, so
/// it ends a draw). Else a win through an exit (`win`: the fastest), or a loss when
/// every ply is an exit into a win (`loss`: the longest); else `UNDECIDED` counting
/// its distinct quiet successors, plus one if an exit is drawn.
#[inline]
pub(crate) fn initial_cell(
    stuck: Option<Value>,
    win: Option<u16>,
    loss: Option<u16>,
    quiet: u16,
    drawn: bool,
) -> u16 {
    if let Some(stuck) = stuck {
        return match stuck {
            Value::Draw => UNDECIDED | 1,
            v => v.code(),
        };
    }
    if let Some(w) = win {
        return Value::Win(w).code();
    }
    if quiet == 0 && !drawn {
        let longest = loss.expect("every ply is an exit into a win");
        return Value::Loss(longest + 1).code();
    }
    // A win too long for the hint's bits is left for the layers to find.
    let hint = match loss {
        None => 1,
        Some(m) if m + 2 <= HINT >> HINT_SHIFT => m + 2,
        Some(_) => 0,
    };
    UNDECIDED | hint << HINT_SHIFT | (quiet + drawn as u16)
}

/// The loss hint of an undecided cell ([`HINT`]): `Some` of the longest opponent
/// win through an exit (`None` if no exit leads into a win), or `None` if unknown.
#[inline]
fn loss_hint(cell: u16) -> Option<Option<u16>> {
    match (cell & HINT) >> HINT_SHIFT {
        0 => None,
        1 => Some(None),
        h => Some(Some(h - 2)),
    }
}

/// Sorts and deduplicates `v` in place; returns the number of distinct values.
pub(crate) fn distinct(v: &mut [u64]) -> usize {
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

/// An upper bound on the quiet moves of a side with `k` stones on the board and
/// `hand` in hand against `l`: each stone to every empty point when it flies
/// ([`crate::rules::Rules::flies`]), else to each of its neighbours.
pub(crate) fn most_quiet_moves(rules: &crate::rules::Rules, k: u32, l: u32, hand: u8) -> usize {
    let points = rules.all().count_ones();
    if rules.flies(k, hand) {
        (k * points.saturating_sub(k + l)) as usize
    } else {
        let degree = rules.adjacency.iter().map(|a| a.count_ones()).max();
        (k * degree.unwrap_or(0)) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An undecided cell carries its loss hint beside its counter: every hint that
    /// fits comes back, one too long is unknown, and the counter is untouched.
    #[test]
    fn undecided_cells_carry_their_loss_hint() {
        for (loss, hint) in [
            (None, Some(None)),
            (Some(0), Some(Some(0))),
            (Some(37), Some(Some(37))),
            (Some(125), Some(Some(125))),
            (Some(126), None),
            (Some(900), None),
        ] {
            for (quiet, drawn) in [(1, false), (MOST_MOVES as u16, true)] {
                let cell = initial_cell(None, None, loss, quiet, drawn);
                assert_eq!(cell & UNDECIDED, UNDECIDED);
                assert_eq!(cell & COUNTER, quiet + drawn as u16, "{loss:?}");
                assert_eq!(loss_hint(cell), hint, "{loss:?}");
            }
        }
        // A stuck drawn position keeps a counter and no hint.
        assert_eq!(
            loss_hint(initial_cell(Some(Value::Draw), None, None, 0, false)),
            None
        );
    }

    /// Every cell equal to the target is found, across the unaligned head, the
    /// words and the tail, and nothing else.
    #[test]
    fn matching_cells_are_found() {
        let mut v: Vec<u16> = (0..103).map(|i| (i % 7) as u16).collect();
        let cells = atomic16(&mut v[1..]);
        let mut got = Vec::new();
        for_matching(cells, 3, |i| got.push(i));
        let want: Vec<usize> = (0..102).filter(|i| (i + 1) % 7 == 3).collect();
        assert_eq!(got, want);
    }
}
