//! Retrograde analysis of a pair of placement sectors in which stones also move
//! (`lasker`: a side with stones in hand may move a stone instead of placing one).
//!
//! A move keeps the hands, so from sector `k-l-hk-hl` it leads into `l-k-hl-hk`
//! and back: the two sectors form a cycle, like a moving-phase pair `k-l`/`l-k`. Every
//! other ply leaves the pair into a sector solved before it (see
//! [`exits`]): a placement into `l-(k+1)-hl-(hk-1)` (the moving-phase
//! subspace `l-(k+1)` after the last stone), a placement that closes a mill into
//! `(l-1)-(k+1)-hl-(hk-1)`, a move that closes a mill into `(l-1)-k-hl-hk`; a removal
//! that leaves the opponent fewer than three stones on board and in hand wins at
//! once. Flying follows [`Rules::flies`] with the side's hand (in `lasker` three
//! stones on board and in hand fly), in moves and in un-moves alike.
//!
//! The scheme is the one of the moving phase (`retro.rs`, [`crate::table::build::solve_pair`]): a first pass
//! values what the exits decide (a lost exit is a tentative win, a position whose
//! every ply is an exit into a win is lost) and counts the distinct quiet
//! successors of the rest; layers `t = 0, 1, ...` then propagate each value of
//! distance `t` to its quiet predecessors (un-moves that closed no mill): a loss
//! makes them wins in `t + 1`, a win takes one from their counter, and a counter
//! at zero is a loss one ply longer than the longest successor win. What is never
//! decided is a draw. The sectors are small next to the moving phase's, so the
//! layers scan every cell and update one after another.

use crate::rules::position::points;
use crate::rules::value::Value;
use crate::rules::{Bits, Rules};
use crate::table::build::retro::Summary;
use crate::table::index::Index;
use crate::table::sector::Sector;
use rayon::prelude::*;

/// Marks an undecided cell; the low bits count its quiet successors not yet known
/// to win (plus one if an exit is drawn).
const UNDECIDED: u16 = 0x8000;

/// The cell of a duplicate slot while solving.
const DUPLICATE: u16 = u16::MAX;

/// What one ply leads to.
enum Ply {
    /// Out of the pair, into a position of this code (`Loss(0)` when the removal
    /// leaves the opponent fewer than three stones).
    Exit(u16),
    /// A quiet move, into this slot of the other sector of the pair.
    Quiet(u64),
}

/// Calls `f` for every ply of `(own, opp)` in sector `s`, with `exit(sector, slot)`
/// the code of a solved sector's slot. Returns whether there is a ply.
fn plies(
    idx: &Index,
    s: Sector,
    own: Bits,
    opp: Bits,
    exit: &(dyn Fn(Sector, u64) -> u16 + Sync),
    mut f: impl FnMut(Ply),
) -> bool {
    let rules = idx.rules();
    let empty = rules.all() & !(own | opp);
    let removable = rules.removable(opp);
    let mut any = false;
    // A ply that puts a stone on `to`, the mover's stones then `after` and its hand
    // `hand`; `inside`: a move, which stays in the pair unless it closes a mill.
    let mut land = |after: Bits, to: u8, hand: u8, inside: bool| {
        any = true;
        let next = |opp_after: Bits| Sector {
            k: opp_after.count_ones() as u8,
            l: after.count_ones() as u8,
            hk: s.hl,
            hl: hand,
        };
        if opp != 0 && rules.closes_mill(after, to) {
            for r in points(removable) {
                let left = opp & !(1 << r);
                let c = next(left);
                f(Ply::Exit(if c.k as u32 + c.hk as u32 >= 3 {
                    exit(c, idx.index(left, after))
                } else {
                    Value::Loss(0).code()
                }));
            }
        } else if inside {
            f(Ply::Quiet(idx.index(opp, after)));
        } else {
            f(Ply::Exit(exit(next(opp), idx.index(opp, after))));
        }
    };
    if s.hk > 0 {
        for to in points(empty) {
            land(own | 1 << to, to, s.hk - 1, false);
        }
    }
    if s.hk == 0 || rules.move_in_placement {
        let fly = rules.flies(own.count_ones(), s.hk);
        for from in points(own) {
            for to in points(rules.destinations(from, empty, fly)) {
                land(own ^ (1 << from) ^ (1 << to), to, s.hk, true);
            }
        }
    }
    any
}

/// What the exits of a position say, and its distinct quiet successors.
#[derive(Default)]
struct Scan {
    any: bool,
    /// Fastest win through an exit.
    win: Option<u16>,
    /// Some exit is drawn.
    drawn: bool,
    /// Longest opponent win after an exit.
    loss: Option<u16>,
    /// Distinct quiet successor slots.
    quiet: Vec<u64>,
}

fn scan(
    idx: &Index,
    s: Sector,
    own: Bits,
    opp: Bits,
    exit: &(dyn Fn(Sector, u64) -> u16 + Sync),
) -> Scan {
    let mut sc = Scan::default();
    sc.any = plies(idx, s, own, opp, exit, |p| match p {
        Ply::Exit(code) => match Value::from_code(code) {
            Value::Loss(m) => sc.win = Some(sc.win.map_or(m + 1, |w| w.min(m + 1))),
            Value::Draw => sc.drawn = true,
            Value::Win(m) => sc.loss = Some(sc.loss.map_or(m, |w| w.max(m))),
        },
        Ply::Quiet(slot) => sc.quiet.push(slot),
    });
    sc.quiet.sort_unstable();
    sc.quiet.dedup();
    sc
}

/// The distinct slots, in sector `s`'s partner, of the positions that reach
/// `(own, opp)` of `s` by a quiet move of the opponent (whose hand is `s.hl`).
fn predecessors(rules: &Rules, idx: &Index, s: Sector, own: Bits, opp: Bits) -> Vec<u64> {
    let empty = rules.all() & !(own | opp);
    let fly = rules.flies(opp.count_ones(), s.hl);
    let mut out = Vec::new();
    for to in points(opp) {
        // A mill closed with a stone to remove is no quiet move.
        if own != 0 && rules.closes_mill(opp, to) {
            continue;
        }
        for from in points(rules.destinations(to, empty, fly)) {
            out.push(idx.index(opp ^ (1 << to) ^ (1 << from), own));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The sectors the plies of the pair of `s` (`s` and its [`partner`]) lead out of
/// it into, each valid under `rules` (moving-phase subspaces included): placements,
/// placements that close a mill, moves that close a mill.
pub fn exits(rules: &Rules, s: Sector) -> Vec<Sector> {
    let mut out = Vec::new();
    for side in [s, partner(s)] {
        let Sector { k, l, hk, hl } = side;
        if hk > 0 {
            out.push(Sector {
                k: l,
                l: k + 1,
                hk: hl,
                hl: hk - 1,
            });
            if l > 0 && k + 1 >= 3 {
                out.push(Sector {
                    k: l - 1,
                    l: k + 1,
                    hk: hl,
                    hl: hk - 1,
                });
            }
        }
        if (hk == 0 || rules.move_in_placement) && l > 0 && k >= 3 {
            out.push(Sector {
                k: l - 1,
                l: k,
                hk: hl,
                hl: hk,
            });
        }
    }
    out.retain(|c| c.is_valid(rules) && *c != s && *c != partner(s));
    out.sort();
    out.dedup();
    out
}

/// The other sector of the pair of `s`: the side to move and the opponent swapped.
pub fn partner(s: Sector) -> Sector {
    Sector {
        k: s.l,
        l: s.k,
        hk: s.hl,
        hl: s.hk,
    }
}

/// Solves the pair of placement sectors `s` and [`partner`]`(s)` of rules that move
/// stones during placement; `exit(sector, slot)` gives the code of a slot of an
/// exit sector (solved before). Returns `s` first, then its partner unless it is
/// `s` itself: each sector's codes (duplicates with their twin's) and summary.
pub fn solve_pair(
    idx: &Index,
    s: Sector,
    exit: &(dyn Fn(Sector, u64) -> u16 + Sync),
) -> Vec<(Sector, Vec<u16>, Summary)> {
    let rules = idx.rules();
    let sides: Vec<Sector> = if partner(s) == s {
        vec![s]
    } else {
        vec![s, partner(s)]
    };
    let mut cells: Vec<Vec<u16>> = sides
        .iter()
        .map(|&side| {
            let (k, l) = side.counts();
            (0..idx.size(k, l))
                .into_par_iter()
                .map(|slot| {
                    let (own, opp) = idx.position(k, l, slot);
                    if idx.index(own, opp) != slot {
                        return DUPLICATE;
                    }
                    let sc = scan(idx, side, own, opp, exit);
                    if !sc.any {
                        // A drawn stuck position (a full board) keeps a counter
                        // that no successor brings down.
                        return match Value::stuck(rules, rules.all() & !(own | opp)) {
                            Value::Draw => UNDECIDED | 1,
                            v => v.code(),
                        };
                    }
                    if let Some(w) = sc.win {
                        return Value::Win(w).code();
                    }
                    if sc.quiet.is_empty() && !sc.drawn {
                        let longest = sc.loss.expect("every ply is an exit into a win");
                        return Value::Loss(longest + 1).code();
                    }
                    UNDECIDED | (sc.quiet.len() as u16 + sc.drawn as u16)
                })
                .collect()
        })
        .collect();
    let decided = |c: u16| c & UNDECIDED == 0;
    let mut longest = cells
        .iter()
        .flatten()
        .filter(|&&c| decided(c))
        .map(|&c| Value::from_code(c).distance().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let mut t = 0u16;
    while t <= longest {
        let target = Value::from_distance(t).code();
        for i in 0..sides.len() {
            let side = sides[i];
            let o = (i + 1) % sides.len();
            let (k, l) = side.counts();
            let found: Vec<u64> = (0..cells[i].len())
                .filter(|&slot| cells[i][slot] == target)
                .map(|slot| slot as u64)
                .collect();
            for slot in found {
                let (own, opp) = idx.position(k, l, slot);
                for q in predecessors(rules, idx, side, own, opp) {
                    let cell = &mut cells[o][q as usize];
                    if t.is_multiple_of(2) {
                        // The successor is lost: q wins in t + 1 unless it already
                        // wins as fast.
                        let win = Value::Win(t + 1).code();
                        let slower_win = decided(*cell) && cell.is_multiple_of(2) && *cell > win;
                        if !decided(*cell) || slower_win {
                            *cell = win;
                            longest = longest.max(t + 1);
                        }
                    } else if !decided(*cell) {
                        *cell -= 1;
                        if *cell == UNDECIDED {
                            let other = sides[o];
                            let (a, b) = idx.position(other.k as u32, other.l as u32, q);
                            let exits_loss = scan(idx, other, a, b, exit).loss;
                            let depth = (t + 1).max(exits_loss.map_or(0, |m| m + 1));
                            *cell = Value::Loss(depth).code();
                            longest = longest.max(depth);
                        }
                    }
                }
            }
        }
        t += 1;
    }
    sides
        .iter()
        .zip(cells)
        .map(|(&side, mut codes)| {
            let (k, l) = side.counts();
            for c in codes.iter_mut() {
                if *c != DUPLICATE && !decided(*c) {
                    *c = Value::Draw.code();
                }
            }
            let summary = codes
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c != DUPLICATE)
                .fold(Summary::default(), |mut m, (slot, &c)| {
                    m.count(c, slot as u64);
                    m
                });
            for slot in 0..codes.len() {
                if codes[slot] == DUPLICATE {
                    let (own, opp) = idx.position(k, l, slot as u64);
                    codes[slot] = codes[idx.index(own, opp) as usize];
                }
            }
            (side, codes, summary)
        })
        .collect()
}
