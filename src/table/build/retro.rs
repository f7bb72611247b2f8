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
//! The cells and the layers are [`crate::table::build::layers`]'s, shared with the
//! placement sectors in which stones move; this module says what the moving phase's
//! plies, un-moves and captures are.
//!
//! Two positions reached from one position can fall into one symmetry class only if
//! a symmetry fixes the stones that did not move; so successor and predecessor lists
//! are deduplicated only when that set has a non-trivial stabilizer.

use crate::rules::position::points;
use crate::rules::value::Value;
use crate::rules::{Bits, Rules};
use crate::table::build::checkpoint::Checkpoint;
use crate::table::build::layers::{
    self, Cells, DRAWN_EXIT, DUPLICATE, MOST_MOVES, Slots, UNDECIDED, Unmoves, distinct,
    most_quiet_moves,
};
use crate::table::build::summary::Summary;
use crate::table::index::{Canon, Index, first_subset, next_subset, pdep};
use crate::table::pack::dontcare::FreeSlots;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub use crate::table::build::layers::Progress;

/// A solved subspace: the code of every slot (duplicates carry their canonical
/// twin's code), its summary, and the slots a capture reaches.
pub struct Solved {
    /// Stones of the side to move.
    pub k: u32,
    /// Stones of the opponent.
    pub l: u32,
    /// `codes[slot]`, see [`Value::code`].
    pub codes: Vec<u16>,
    /// Counts and extremes.
    pub summary: Summary,
    /// The canonical slots whose value a capturing ply reaches (a capture is
    /// among the best plies), unless the solve resumed from a checkpoint.
    pub reached: Option<FreeSlots>,
}

/// One subspace of the pair while it is being solved (its cells are apart, in a
/// [`Cells`]).
struct Side<'a> {
    k: u32,
    l: u32,
    /// Codes of `(l-1)-k`, where captures lead, if `l > 3`.
    lower: Option<&'a [u16]>,
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

/// The removal of one opponent stone from a position, as the slots of the
/// captures that make it need it: the class of the opponent's stones left, and the
/// mover's stones before the move mapped by its symmetry (a move then changes two
/// points of the image, `perm` their images). Classed once for a position that
/// closes mills with two moves or more; a single closing move's captures class
/// their removals themselves (keeping them would cost more than it saves).
struct Removal<'a> {
    canon: Canon,
    own_image: Bits,
    perm: &'a [u8],
}

struct Solver<'a> {
    idx: &'a Index,
    rules: &'a Rules,
}

impl Solver<'_> {
    /// Calls `f(from, to, closes_mill)` for every move of the side to move, from
    /// point `from` to point `to`.
    #[inline]
    fn moves(&self, own: Bits, opp: Bits, mut f: impl FnMut(u8, u8, bool)) {
        let empty = self.rules.all() & !(own | opp);
        let fly = self.rules.flies(own.count_ones(), 0);
        for from in points(own) {
            for to in points(self.rules.destinations(from, empty, fly)) {
                let after = own ^ (1 << from) ^ (1 << to);
                f(from, to, self.rules.closes_mill(after, to));
            }
        }
    }

    /// Scans the moves of `(own, opp)` in side `s`: capture successors' slots are
    /// appended to `captures` (and prefetched); with `quiet` (scratch space), the
    /// distinct quiet successors are counted. `removals` is scratch space.
    fn scan<'r>(
        &'r self,
        s: &Side,
        own: Bits,
        opp: Bits,
        mut quiet: Option<&mut Slots>,
        captures: &mut Vec<u64>,
        removals: &mut Vec<Removal<'r>>,
    ) -> Scan {
        let mut e = Scan {
            first: captures.len(),
            ..Scan::default()
        };
        // The stones a capture may remove, found at the first move that closes a
        // mill (most positions have none).
        let mut removable = None;
        let canon = self.idx.canon(opp);
        // A quiet successor's slot takes the mover's stones mapped by `canon.sym`:
        // they are mapped once, and each move then moves two points of the image.
        let perm = &self.rules.symmetries[canon.sym as usize];
        let own_image = if quiet.is_some() && canon.stab != 0 {
            self.rules.map(canon.sym as usize, own)
        } else {
            0
        };
        removals.clear();
        // Moves that close a mill so far: from the second on, the captures use the
        // removals classed once for the position.
        let mut closing = 0u32;
        self.moves(own, opp, |from, to, closes| {
            e.any_move = true;
            if closes {
                match s.lower {
                    None => e.wins_now = true,
                    Some(lower) => {
                        let mut capture = |slot: u64| {
                            crate::memory::prefetch(&lower[slot as usize]);
                            captures.push(slot);
                        };
                        closing += 1;
                        let removable = *removable.get_or_insert_with(|| self.rules.removable(opp));
                        if closing == 1 {
                            // Most positions close one mill at most: each removal
                            // is classed where it is made.
                            let after = own ^ (1 << from) ^ (1 << to);
                            for r in points(removable) {
                                capture(self.idx.index(opp & !(1 << r), after));
                            }
                            return;
                        }
                        if removals.is_empty() {
                            removals.extend(points(removable).map(|r| self.removal(own, opp, r)));
                        }
                        for m in removals.iter() {
                            let image = m.own_image
                                ^ (1 << m.perm[from as usize])
                                ^ (1 << m.perm[to as usize]);
                            capture(self.idx.slot_of_image(&m.canon, image));
                        }
                    }
                }
            } else if let Some(buf) = quiet.as_deref_mut() {
                if canon.stab != 0 {
                    let image = own_image ^ (1 << perm[from as usize]) ^ (1 << perm[to as usize]);
                    buf[e.quiet as usize] = self.idx.slot_of_image(&canon, image);
                }
                e.quiet += 1;
            }
        });
        if let Some(buf) = quiet
            && canon.stab != 0
        {
            e.quiet = distinct(&mut buf[..e.quiet as usize]) as u16;
        }
        e.end = captures.len();
        e
    }

    /// The removal of the opponent's stone `r` from `(own, opp)`, for the slots of
    /// the captures that make it.
    #[inline]
    fn removal(&self, own: Bits, opp: Bits, r: u8) -> Removal<'_> {
        let canon = self.idx.canon(opp & !(1 << r));
        Removal {
            canon,
            own_image: self.rules.map(canon.sym as usize, own),
            perm: &self.rules.symmetries[canon.sym as usize],
        }
    }

    /// Initial cell of a position from its scan and its captures' values; `stuck`
    /// is its value if it has no move ([`Value::stuck`]).
    fn judge(scan: &Scan, c: &Captures, stuck: Value) -> u16 {
        let stuck = (!scan.any_move).then_some(stuck);
        layers::initial_cell(stuck, c.win, c.loss, scan.quiet, c.nonwin)
    }

    /// [`Solver::judge`], where exit marks are kept: whether a capture reaches
    /// the value decided (a win through a capture, or a loss whose every move
    /// is a capture), and an undecided cell with a drawing capture flagged
    /// [`DRAWN_EXIT`] (a draw in the end, unless a quiet ply wins).
    fn judge_marking(scan: &Scan, c: &Captures, stuck: Value) -> (u16, bool) {
        let cell = Self::judge(scan, c, stuck);
        if cell & UNDECIDED != 0 {
            let drawn = scan.any_move && c.nonwin;
            (cell | if drawn { DRAWN_EXIT } else { 0 }, false)
        } else {
            (cell, scan.any_move)
        }
    }

    /// Longest opponent win through a capture from `(own, opp)`, if any.
    fn longest_capture_loss(&self, s: &Side, own: Bits, opp: Bits) -> Option<u16> {
        let mut captures = Vec::new();
        let scan = self.scan(s, own, opp, None, &mut captures, &mut Vec::new());
        Captures::of(&scan, &captures, s.lower).loss
    }

    /// Distinct slots (in the other side) of the positions that reach `(own, opp)` by
    /// a quiet move of the opponent; `own_stab` is the stabilizer of `own`.
    fn predecessors(&self, own: Bits, opp: Bits, own_stab: u16, out: &mut Slots) -> usize {
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

    /// Initialises side `s` into `cells`: values, counters and duplicate marks.
    fn initialise(&self, s: &Side, cells: &Cells, progress: Progress) {
        let per = self.idx.per_class(s.k, s.l);
        let classes = self.idx.classes(s.k);
        let done = AtomicU64::new(0);
        (0..classes).into_par_iter().for_each(|class| {
            let (rep, stab) = self.idx.class(s.k, class);
            let free = self.rules.all() & !rep;
            let mut packed = first_subset(s.l);
            let mut captures = Vec::with_capacity(BATCH * 16);
            let mut batch: Vec<(usize, Scan, Bits)> = Vec::with_capacity(BATCH);
            let mut removals = Vec::new();
            let mut quiet = [0; MOST_MOVES];
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
                    if !self.idx.is_least(stab, opp) {
                        cells.values[slot].store(DUPLICATE, Relaxed);
                    } else {
                        let scan =
                            self.scan(s, rep, opp, Some(&mut quiet), &mut captures, &mut removals);
                        batch.push((slot, scan, free & !opp));
                    }
                }
                for &(slot, ref scan, empty) in &batch {
                    let stuck = Value::stuck(self.rules, empty);
                    let c = Captures::of(scan, &captures, s.lower);
                    if cells.exits.is_some() {
                        let (cell, reaches) = Self::judge_marking(scan, &c, stuck);
                        cells.init(slot, cell);
                        if reaches {
                            cells.exit_reaches(slot, true);
                        }
                    } else {
                        cells.init(slot, Self::judge(scan, &c, stuck));
                    }
                }
            }
            let d = done.fetch_add(1, Relaxed);
            if d.is_multiple_of(256) {
                progress("init", d as f64 / classes as f64);
            }
        });
    }
}

/// The game of a pair being solved, for the layers: its sides and how to move in
/// them.
struct Pair<'a, 'b> {
    solver: &'b Solver<'a>,
    sides: &'b [Side<'a>],
}

impl Unmoves for Pair<'_, '_> {
    fn predecessors(&self, side: usize, slot: u64, out: &mut Slots) -> usize {
        let (idx, s) = (self.solver.idx, &self.sides[side]);
        let (own, opp, stab) = idx.position_with_stab(s.k, s.l, slot);
        self.solver.predecessors(own, opp, stab, out)
    }

    fn longest_exit_loss(&self, side: usize, slot: u64) -> Option<u16> {
        let s = &self.sides[side];
        let (own, opp) = self.solver.idx.position(s.k, s.l, slot);
        self.solver.longest_capture_loss(s, own, opp)
    }

    fn twin(&self, side: usize, slot: u64) -> u64 {
        let s = &self.sides[side];
        self.solver.idx.twin(s.k, s.l, slot)
    }
}

/// Bytes of memory a pair needs while solving, lower subspaces excluded: one
/// `u16` cell per slot.
pub fn pair_memory(idx: &Index, k: u32, l: u32) -> u64 {
    let slots = idx.size(k, l) + if k == l { 0 } else { idx.size(l, k) };
    slots * 2
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
    solve_pair_resumable(idx, (k, l), lower, progress, None)
}

/// [`solve_pair`], resuming from `checkpoint`'s file if it has a valid one and
/// saving the state between layers.
pub(crate) fn solve_pair_resumable<'a>(
    idx: &Index,
    (k, l): (u32, u32),
    lower: impl Fn(u32, u32) -> Option<&'a [u16]>,
    progress: Progress,
    checkpoint: Option<&Checkpoint>,
) -> Vec<Solved> {
    let solver = Solver {
        idx,
        rules: idx.rules(),
    };
    let most = most_quiet_moves(solver.rules, k, l, 0).max(most_quiet_moves(solver.rules, l, k, 0));
    assert!(
        most <= MOST_MOVES,
        "rules {}: up to {most} quiet moves in {k}-{l}, the solver's buffers hold {MOST_MOVES}",
        solver.rules.name
    );
    let sides: Vec<Side> = if k == l {
        vec![(k, l)]
    } else {
        vec![(k, l), (l, k)]
    }
    .into_iter()
    .map(|(a, b)| Side {
        k: a,
        l: b,
        lower: (b > 3).then(|| lower(b - 1, a).expect("the lower subspace is solved")),
    })
    .collect();
    let mut codes: Vec<Vec<u16>> = sides
        .iter()
        .map(|s| crate::memory::zeroed_huge(idx.size(s.k, s.l) as usize))
        .collect();
    let pair = Pair {
        solver: &solver,
        sides: &sides,
    };
    // Every exit of the moving phase is a capture: the exit marks are the slots
    // a capture reaches.
    let summaries = layers::solve_resumable(
        &mut codes,
        |i, cells| solver.initialise(&sides[i], cells, progress),
        true,
        &pair,
        progress,
        checkpoint,
    );
    sides
        .iter()
        .zip(codes)
        .zip(summaries)
        .map(|((s, codes), (summary, reached))| Solved {
            k: s.k,
            l: s.l,
            codes,
            summary,
            reached: reached.map(FreeSlots::from_words),
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

    /// The slots a capture reaches, as the solve marks them, are those found from
    /// the children's codes by generating every ply
    /// ([`crate::table::pack::dontcare::capture_free_slots`], itself checked
    /// against the probes in the integration tests), on every canonical slot but
    /// the lost-in-0 ones of every moving pair of whole reduced games: flying and
    /// not, a drawn and a lost full board, and the small board; and the codes are
    /// the build's.
    #[test]
    fn the_solve_marks_the_slots_a_capture_reaches() {
        use crate::table::build::{BuildOptions, BuildPhase, Selection, build};
        use crate::table::pack::dontcare::{Fill, capture_free_slots};
        use crate::table::sector::Sector;
        let dir = std::env::temp_dir().join(format!("mb-marks-{}", std::process::id()));
        for name in [
            "standard-4",
            "no-flying-4",
            "twelve-4",
            "morabaraba-4",
            "six-4",
        ] {
            let rules = Rules::by_name(name).unwrap();
            let idx = Index::for_rules(rules);
            let db = dir.join(name);
            let opts = BuildOptions::quiet(db.clone(), Selection::All, BuildPhase::Moving);
            build(rules, &opts).unwrap();
            let codes = |k: u32, l: u32| {
                let s = Sector::moving(k as u8, l as u8);
                crate::table::dir::open_sector(&db, idx, s)
                    .unwrap()
                    .read_all()
                    .unwrap()
            };
            let n = rules.stones as u32;
            let mut reached_slots = 0;
            for k in 3..=n {
                for l in k..=n {
                    let lowers: Vec<((u32, u32), Vec<u16>)> = [(l - 1, k), (k - 1, l)]
                        .into_iter()
                        .filter(|&(a, _)| a >= 3)
                        .map(|(a, b)| ((a, b), codes(a, b)))
                        .collect();
                    let lower = |a, b| {
                        lowers
                            .iter()
                            .find(|(d, _)| *d == (a, b))
                            .map(|(_, c)| c.as_slice())
                    };
                    for solved in solve_pair(idx, k, l, lower, &|_, _| {}) {
                        let (a, b) = (solved.k, solved.l);
                        let truth = codes(a, b);
                        assert!(solved.codes == truth, "{name} {a}-{b}: codes differ");
                        let reached = solved.reached.expect("a solve from the start marks");
                        let child = |c: Sector| lower(c.k as u32, c.l as u32);
                        let sector = Sector::moving(a as u8, b as u8);
                        let generated = capture_free_slots(idx, sector, &truth, Fill::Loss0, child);
                        for (slot, &code) in truth.iter().enumerate() {
                            let slot = slot as u64;
                            let (own, opp) = idx.position(a, b, slot);
                            if idx.index(own, opp) != slot || code == Value::Loss(0).code() {
                                continue;
                            }
                            assert_eq!(
                                reached.contains(slot),
                                generated.contains(slot),
                                "{name} {a}-{b} slot {slot} {:?}",
                                Value::from_code(code)
                            );
                            reached_slots += reached.contains(slot) as u64;
                        }
                    }
                }
            }
            assert!(reached_slots > 1000, "{name}: {reached_slots}");
        }
        let _ = std::fs::remove_dir_all(&dir);
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
