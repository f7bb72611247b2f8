//! An independent solver of the placement phase of reduced games (the standard board
//! with `stones` stones per side, at most four), written to check the placement
//! sectors against.
//!
//! It shares no code with the crate: raw positions (no symmetry reduction), its own
//! ranking (colex rank of each stone set, `rank(own) * C(n, l) + rank(opp)` on `n` points), its
//! own placement and removal rules from the oracle's [`Board`], and its own
//! enumeration of what to solve (every count of stones on the board that placing
//! can give, a superset of the crate's sectors). Values come by backward induction
//! over the plies, the last placement leading into moving-phase positions whose
//! values a `leaf` function gives (the moving-phase oracle, or for subspaces it does
//! not cover a database the caller has checked otherwise).

use super::{Board, binom};
use rayon::prelude::*;
use std::collections::HashMap;

/// A value: `('W', n)`, `('L', n)` or `('D', 0)`, as the moving-phase oracle gives.
pub type Val = (char, u16);

/// Cell of an overlapping (impossible) pair of sets.
const NONE: u16 = u16::MAX;

fn encode(v: Val) -> u16 {
    match v {
        ('D', _) => 0,
        ('W', n) => 0x4000 | n,
        (_, n) => 0x8000 | n,
    }
}

fn decode(c: u16) -> Val {
    match c >> 14 {
        0 => ('D', 0),
        1 => ('W', c & 0x3FFF),
        _ => ('L', c & 0x3FFF),
    }
}

/// Colex rank of a set among the sets of its size.
fn rank(set: u32) -> u32 {
    let mut r = 0;
    let mut rest = set;
    let mut i = 1;
    while rest != 0 {
        let p = rest.trailing_zeros();
        rest &= rest - 1;
        r += binom(p, i);
        i += 1;
    }
    r
}

/// Every `k`-subset of the points of `full` in colex (increasing) order.
fn sets(full: u32, k: u32) -> Vec<u32> {
    (0..=full).filter(|s: &u32| s.count_ones() == k).collect()
}

/// Every placement position of one count of stones: `k`, `l` on the board and `hk`,
/// `hl` in hand for the side to move and the opponent.
type Key = (u32, u32, u32, u32);

/// The solved placement phase of a reduced game.
pub struct Placement {
    tables: HashMap<Key, Vec<u16>>,
    /// Points of the board.
    n: u32,
}

impl Placement {
    /// Solves the placement phase with `stones` per side; `leaf(own, opp)` is the
    /// value of a moving-phase position with both sides at three stones or more.
    pub fn solve(board: &Board, stones: u32, leaf: &(dyn Fn(u32, u32) -> Val + Sync)) -> Placement {
        assert!(stones <= 4, "raw tables of up to four stones a side");
        let by_size: Vec<Vec<u32>> = (0..=stones).map(|k| sets(board.full, k)).collect();
        let mut tables: HashMap<Key, Vec<u16>> = HashMap::new();
        for ply in (0..2 * stones).rev() {
            // White places on even plies: after `ply` plies White has placed
            // ceil(ply/2), Black floor(ply/2).
            let (placed_w, placed_b) = (ply.div_ceil(2), ply / 2);
            let (placed_me, placed_them) = if ply % 2 == 0 {
                (placed_w, placed_b)
            } else {
                (placed_b, placed_w)
            };
            let (hk, hl) = (stones - placed_me, stones - placed_them);
            let mut solved = Vec::new();
            for k in 0..=placed_me {
                for l in 0..=placed_them {
                    if k + hk < 3 || l + hl < 3 {
                        continue;
                    }
                    let t = Self::solve_count(board, &by_size, &tables, (k, l, hk, hl), leaf);
                    solved.push(((k, l, hk, hl), t));
                }
            }
            tables.extend(solved);
        }
        Placement { tables, n: board.n }
    }

    fn solve_count(
        board: &Board,
        by_size: &[Vec<u32>],
        tables: &HashMap<Key, Vec<u16>>,
        (k, l, hk, hl): Key,
        leaf: &(dyn Fn(u32, u32) -> Val + Sync),
    ) -> Vec<u16> {
        let width = binom(board.n, l) as usize;
        let quiet = tables.get(&(l, k + 1, hl, hk - 1));
        let capture = if l > 0 {
            tables.get(&(l - 1, k + 1, hl, hk - 1))
        } else {
            None
        };
        let child = |own: u32, opp: u32| -> Val {
            // `own` moves next; `opp` just placed.
            let (a, b) = (own.count_ones(), opp.count_ones());
            if a + hl < 3 {
                return ('L', 0);
            }
            if hl == 0 && hk - 1 == 0 {
                return leaf(own, opp);
            }
            let t = if a == l { quiet } else { capture }.expect("the next ply is solved");
            decode(t[rank(own) as usize * binom(board.n, b) as usize + rank(opp) as usize])
        };
        let mut out = vec![NONE; by_size[k as usize].len() * width];
        out.par_chunks_mut(width).enumerate().for_each(|(r, row)| {
            let own = by_size[k as usize][r];
            for &opp in &by_size[l as usize] {
                if own & opp != 0 {
                    continue;
                }
                let free = opp & !board.in_mills(opp);
                let removable = if free == 0 { opp } else { free };
                let mut best: Option<Val> = None;
                let mut empty = board.full & !(own | opp);
                while empty != 0 {
                    let p = empty.trailing_zeros() as usize;
                    empty &= empty - 1;
                    let placed = own | 1 << p;
                    let mut consider = |v: Val| {
                        let mine = match v {
                            ('L', n) => ('W', n + 1),
                            ('W', n) => ('L', n + 1),
                            d => d,
                        };
                        if better(mine, best) {
                            best = Some(mine);
                        }
                    };
                    if opp != 0 && board.closes_mill(placed, p) {
                        let mut rest = removable;
                        while rest != 0 {
                            let r = rest.trailing_zeros();
                            rest &= rest - 1;
                            consider(child(opp & !(1 << r), placed));
                        }
                    } else {
                        consider(child(opp, placed));
                    }
                }
                row[rank(opp) as usize] =
                    encode(best.expect("placement always has an empty point"));
            }
        });
        out
    }

    /// The value of a placement position: `own` (side to move) and `opp` on the
    /// board, `hk` and `hl` in hand.
    pub fn value(&self, own: u32, opp: u32, hk: u32, hl: u32) -> Val {
        let (k, l) = (own.count_ones(), opp.count_ones());
        let t = &self.tables[&(k, l, hk, hl)];
        let c = t[rank(own) as usize * binom(self.n, l) as usize + rank(opp) as usize];
        assert_ne!(c, NONE, "overlapping sets");
        decode(c)
    }

    /// Whether the solver has the positions of `k`, `l` stones on the board and
    /// `hk`, `hl` in hand.
    pub fn has(&self, k: u32, l: u32, hk: u32, hl: u32) -> bool {
        self.tables.contains_key(&(k, l, hk, hl))
    }

    /// Number of raw positions solved.
    pub fn positions(&self) -> usize {
        self.tables
            .values()
            .map(|t| t.iter().filter(|&&c| c != NONE).count())
            .sum()
    }
}

/// Whether `v` is better for the side to move than `best`: faster wins, then draws,
/// then slower losses.
fn better(v: Val, best: Option<Val>) -> bool {
    let score = |v: Val| match v {
        ('W', n) => 100_000 - n as i32,
        ('D', _) => 0,
        (_, n) => -100_000 + n as i32,
    };
    best.is_none_or(|b| score(v) > score(b))
}
