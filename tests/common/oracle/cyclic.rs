//! An independent solver of the placement phase of reduced games in which
//! placement positions can repeat (`lasker`: a side with stones in hand may move a
//! stone instead of placing one) or whose board can fill, written to check the
//! crate against.
//!
//! It shares no code with the crate: raw positions (no symmetry reduction), its own
//! colex ranking, its own placement, move and removal rules on the oracle's
//! [`Board`], and its own enumeration of what to solve: every count of stones on the
//! board and in hand, for each side independently, with both sides alive (three
//! stones or more on board and in hand) and at least one stone in hand (a superset
//! of what a game from the empty board reaches). The moving-phase positions the
//! last placement leads into are valued by a `leaf` function (the moving-phase
//! oracle).
//!
//! # Algorithm
//!
//! Forward value iteration, as the moving-phase oracle does (see its proof there):
//! pass `n = 0, 1, 2, ...` decides exactly the positions of distance `n`: a position
//! with a successor known as `Loss(n-1)` is `Win(n)`, one whose successors are all
//! known wins, the largest `Win(n-1)`, is `Loss(n)`. The successors outside the
//! solved set (a removal that leaves the opponent two stones, `Loss(0)`; the
//! moving-phase leaves) are known from the start, with their distances; a pass that
//! decides nothing skips to one past the next outside distance. What is never
//! decided is a draw. A side to move without a legal ply has lost (`Loss(0)`,
//! decided in pass 0), unless the board is full and the rules draw it: then it is
//! never decided.

use super::{Board, binom};
use rayon::prelude::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU16, Ordering::Relaxed};

/// A value: `('W', n)`, `('L', n)` or `('D', 0)`, as the other oracles give.
pub type Val = (char, u16);

/// The rules besides the board, as `RULES.md` states them per rule set.
#[derive(Clone, Copy, Debug)]
pub struct GameRules {
    /// Stones per side.
    pub stones: u32,
    /// A side with stones in hand may move a stone instead of placing (`lasker`).
    pub move_in_placement: bool,
    /// The flying threshold (three) counts the stones on the board and in hand, with
    /// or without stones in hand (`lasker`); otherwise a side flies with exactly
    /// three stones on the board and an empty hand. Only where the board flies.
    pub fly_counts_hand: bool,
    /// A side that cannot move on a full board draws (`morabaraba`).
    pub full_board_draw: bool,
}

impl GameRules {
    /// The rules of the rule set `name` (`standard`, `lasker`, `morabaraba`,
    /// `twelve`, `no-flying`, `six`, each with an optional `-N`), typed in from
    /// `RULES.md`.
    pub fn of(name: &str) -> GameRules {
        let (base, n) = match name.rsplit_once('-') {
            Some((b, n)) if n.chars().all(|c| c.is_ascii_digit()) => (b, n.parse().ok()),
            _ => (name, None),
        };
        let (stones, lasker, draw) = match base {
            "standard" | "no-flying" => (9, false, false),
            "lasker" => (10, true, false),
            "morabaraba" => (12, false, true),
            "twelve" => (12, false, false),
            "six" => (6, false, false),
            _ => panic!("the oracle has no rules {name}"),
        };
        GameRules {
            stones: n.unwrap_or(stones),
            move_in_placement: lasker,
            fly_counts_hand: lasker,
            full_board_draw: draw,
        }
    }
}

/// Stones on the board and in hand: `k`, `l` on the board, `hk`, `hl` in hand, for
/// the side to move and the opponent.
pub type Key = (u32, u32, u32, u32);

/// The solved positions of each key (looked up once per ply: hashed by
/// [`KeyHasher`]).
type Tables = HashMap<Key, Vec<AtomicU16>, BuildHasherDefault<KeyHasher>>;

/// A hasher for the keys of [`Tables`], four small counts: a multiply per count
/// (the default hasher's resistance to chosen keys is not needed here, and its
/// cost showed in profiles of the solver).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(7) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

const UNDECIDED: u16 = 0;
const INVALID: u16 = 0xFFFF;
const WIN: u16 = 0x4000;
const LOSS: u16 = 0x8000;
const DIST: u16 = 0x3FFF;

fn encode(v: Val) -> u16 {
    match v {
        ('D', _) => UNDECIDED,
        ('W', n) => WIN | n,
        (_, n) => LOSS | n,
    }
}

fn decode(c: u16) -> Val {
    match c {
        UNDECIDED => ('D', 0),
        c if c & !DIST == WIN => ('W', c & DIST),
        c => ('L', c & DIST),
    }
}

/// The solved placement phase.
pub struct Cyclic {
    tables: Tables,
    /// Points of the board.
    n: u32,
    /// `c[p][i]` = `C(p, i)`.
    c: [[u32; 16]; 33],
    /// Passes made.
    pub passes: u32,
}

/// What one ply leads to.
enum Child {
    /// A position of the solved set: its key and slot.
    Inner(Key, usize),
    /// A value known from the start (a terminal `Loss(0)` or a moving-phase leaf).
    Known(u16),
}

struct Solver<'a> {
    board: &'a Board,
    rules: GameRules,
    leaf: &'a (dyn Fn(u32, u32) -> Val + Sync),
    c: [[u32; 16]; 33],
}

impl Solver<'_> {
    fn rank(&self, set: u32) -> usize {
        let mut r = 0;
        let mut rest = set;
        let mut i = 1;
        while rest != 0 {
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            r += self.c[p][i];
            i += 1;
        }
        r as usize
    }

    fn slot(&self, own: u32, opp: u32) -> usize {
        self.rank(own) * self.c[self.board.n as usize][opp.count_ones() as usize] as usize
            + self.rank(opp)
    }

    /// Whether a side with `on_board` stones and `in_hand` in hand flies.
    fn flies(&self, on_board: u32, in_hand: u32) -> bool {
        self.board.fly
            && if self.rules.fly_counts_hand {
                on_board + in_hand == 3
            } else {
                in_hand == 0 && on_board == 3
            }
    }

    /// Calls `f` for the result of every legal ply of `(own, opp)` with hands
    /// `hk`, `hl` (the side to move's first), until `f` returns `true`. Returns
    /// whether there was a ply.
    fn plies(
        &self,
        own: u32,
        opp: u32,
        hk: u32,
        hl: u32,
        mut f: impl FnMut(Child) -> bool,
    ) -> bool {
        let b = self.board;
        let empty = b.full & !(own | opp);
        let free = opp & !b.in_mills(opp);
        let removable = if free == 0 { opp } else { free };
        let mut any = false;
        // The ply puts a stone on `to` (`after` the mover's stones), leaving the
        // mover `hand` in hand. Returns true to stop.
        let mut land = |after: u32, to: usize, hand: u32| -> bool {
            any = true;
            let child = |opp_after: u32| -> Child {
                let (a, m) = (opp_after.count_ones(), after.count_ones());
                if a + hl < 3 {
                    return Child::Known(LOSS);
                }
                if hl == 0 && hand == 0 {
                    return Child::Known(encode((self.leaf)(opp_after, after)));
                }
                Child::Inner((a, m, hl, hand), self.slot(opp_after, after))
            };
            if opp != 0 && b.closes_mill(after, to) {
                let mut rest = removable;
                while rest != 0 {
                    let r = rest & rest.wrapping_neg();
                    rest &= rest - 1;
                    if f(child(opp & !r)) {
                        return true;
                    }
                }
                false
            } else {
                f(child(opp))
            }
        };
        if hk > 0 {
            let mut rest = empty;
            while rest != 0 {
                let p = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if land(own | 1 << p, p, hk - 1) {
                    return true;
                }
            }
        }
        if hk == 0 || self.rules.move_in_placement {
            let fly = self.flies(own.count_ones(), hk);
            let mut stones = own;
            while stones != 0 {
                let from = stones.trailing_zeros() as usize;
                stones &= stones - 1;
                let mut targets = if fly { empty } else { b.adj[from] & empty };
                while targets != 0 {
                    let to = targets.trailing_zeros() as usize;
                    targets &= targets - 1;
                    if land(own & !(1 << from) | 1 << to, to, hk) {
                        return true;
                    }
                }
            }
        }
        any
    }

    fn code(&self, tables: &Tables, child: &Child) -> u16 {
        match *child {
            Child::Known(c) => c,
            Child::Inner(key, slot) => tables[&key][slot].load(Relaxed),
        }
    }

    /// The new code of `(own, opp)` with hands `hk`, `hl` in pass `n`, or
    /// `UNDECIDED`.
    fn decide(&self, tables: &Tables, n: u16, (own, opp, hk, hl): (u32, u32, u32, u32)) -> u16 {
        let mut all_won = true;
        let mut max_win: i32 = -1;
        let mut win = false;
        let any = self.plies(own, opp, hk, hl, |child| {
            let code = self.code(tables, &child);
            debug_assert_ne!(code, INVALID, "a ply onto an occupied point");
            match code & !DIST {
                LOSS => {
                    let m = code & DIST;
                    assert!(m + 1 >= n, "a faster win was missed");
                    if m + 1 == n {
                        win = true;
                        return true;
                    }
                    all_won = false;
                }
                WIN => max_win = max_win.max((code & DIST) as i32),
                _ => all_won = false,
            }
            false
        });
        if win {
            return WIN | n;
        }
        if !any && self.rules.full_board_draw && own | opp == self.board.full {
            return UNDECIDED;
        }
        if all_won {
            assert!(max_win + 1 >= n as i32, "a longer loss was missed");
            if max_win + 1 == n as i32 {
                return LOSS | n;
            }
        }
        UNDECIDED
    }
}

/// Every `k`-subset of the points of `full` in colex (increasing) order.
fn sets(full: u32, k: u32) -> Vec<u32> {
    (0..=full).filter(|s: &u32| s.count_ones() == k).collect()
}

impl Cyclic {
    /// Solves every placement position of `rules` on `board`; `leaf(own, opp)` is
    /// the value of a moving-phase position with both sides at three stones or
    /// more, `own` to move.
    pub fn solve(
        board: &Board,
        rules: GameRules,
        leaf: &(dyn Fn(u32, u32) -> Val + Sync),
    ) -> Cyclic {
        let s = rules.stones;
        assert!(s <= 4, "raw tables of up to four stones a side");
        let mut c = [[0u32; 16]; 33];
        for (p, row) in c.iter_mut().enumerate() {
            for (i, v) in row.iter_mut().enumerate() {
                *v = binom(p as u32, i as u32);
            }
        }
        let solver = Solver {
            board,
            rules,
            leaf,
            c,
        };
        let by_size: Vec<Vec<u32>> = (0..=s).map(|k| sets(board.full, k)).collect();
        let mut keys = Vec::new();
        for (k, hk) in (0..=s).flat_map(|k| (0..=s - k).map(move |h| (k, h))) {
            for (l, hl) in (0..=s).flat_map(|l| (0..=s - l).map(move |h| (l, h))) {
                let alive = k + hk >= 3 && l + hl >= 3;
                if alive && hk + hl > 0 && k + l <= board.n {
                    keys.push((k, l, hk, hl));
                }
            }
        }
        let mut tables = Tables::default();
        // The positions of each key, as `(own, opp)`, opponent-major.
        let mut work: Vec<(Key, Vec<(u32, u32)>)> = Vec::new();
        for &(k, l, hk, hl) in &keys {
            let width = binom(board.n, l) as usize;
            let mut cells = Vec::with_capacity(by_size[k as usize].len() * width);
            for &own in &by_size[k as usize] {
                for &opp in &by_size[l as usize] {
                    cells.push(AtomicU16::new(if own & opp == 0 {
                        UNDECIDED
                    } else {
                        INVALID
                    }));
                }
            }
            tables.insert((k, l, hk, hl), cells);
            let todo = by_size[l as usize]
                .iter()
                .flat_map(|&opp| {
                    by_size[k as usize]
                        .iter()
                        .filter(move |&&own| own & opp == 0)
                        .map(move |&own| (own, opp))
                })
                .collect();
            work.push(((k, l, hk, hl), todo));
        }
        // The distances known from the start: every terminal and leaf successor
        // (short games: below 256 plies).
        let mut external = vec![false; DIST as usize + 1];
        for (key, todo) in &work {
            let (_, _, hk, hl) = *key;
            let found = todo
                .par_iter()
                .fold(
                    || [0u64; 4],
                    |mut acc, &(own, opp)| {
                        solver.plies(own, opp, hk, hl, |child| {
                            if let Child::Known(code) = child
                                && code != UNDECIDED
                            {
                                let d = (code & DIST) as usize;
                                assert!(d < 256, "a leaf distance beyond the oracle's range");
                                acc[d / 64] |= 1 << (d % 64);
                            }
                            false
                        });
                        acc
                    },
                )
                .reduce(|| [0u64; 4], |a, b| std::array::from_fn(|i| a[i] | b[i]));
            for (d, seen) in external.iter_mut().enumerate().take(256) {
                *seen |= found[d / 64] >> (d % 64) & 1 == 1;
            }
        }
        // A side without a ply loses at once.
        external[0] = true;
        let mut passes = 0;
        let mut n: u16 = 0;
        loop {
            let mut decided = 0;
            for (key, todo) in work.iter_mut() {
                let (_, _, hk, hl) = *key;
                let before = todo.len();
                let newly: Vec<(usize, u16)> = todo
                    .par_iter()
                    .filter_map(|&(own, opp)| {
                        let code = solver.decide(&tables, n, (own, opp, hk, hl));
                        (code != UNDECIDED).then(|| (solver.slot(own, opp), code))
                    })
                    .collect();
                // Written after the pass over the key: a position decided in this
                // pass has distance n, and seeing it or not changes nothing.
                let cells = &tables[key];
                for &(slot, code) in &newly {
                    cells[slot].store(code, Relaxed);
                }
                todo.retain(|&(own, opp)| cells[solver.slot(own, opp)].load(Relaxed) == UNDECIDED);
                decided += before - todo.len();
            }
            passes += 1;
            if decided > 0 {
                n += 1;
                continue;
            }
            match (n as usize..external.len()).find(|&d| external[d]) {
                Some(d) => n = d as u16 + 1,
                None => break,
            }
            assert!(n < DIST, "distance overflow");
        }
        Cyclic {
            tables,
            n: board.n,
            c,
            passes,
        }
    }

    /// The value of a placement position: `own` (side to move) and `opp` on the
    /// board, `hk` and `hl` in hand; `None` if the oracle did not solve it (a side
    /// below three stones, or both hands empty).
    pub fn value(&self, own: u32, opp: u32, hk: u32, hl: u32) -> Option<Val> {
        let (k, l) = (own.count_ones(), opp.count_ones());
        let t = self.tables.get(&(k, l, hk, hl))?;
        let rank = |set: u32| -> usize {
            let mut r = 0;
            let mut rest = set;
            let mut i = 1;
            while rest != 0 {
                let p = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                r += self.c[p][i];
                i += 1;
            }
            r as usize
        };
        let code =
            t[rank(own) * self.c[self.n as usize][l as usize] as usize + rank(opp)].load(Relaxed);
        assert_ne!(code, INVALID, "overlapping sets");
        Some(decode(code))
    }

    /// The keys solved, and every raw position `(own, opp)` of each.
    pub fn positions(&self) -> Vec<(Key, u32, u32)> {
        let mut out = Vec::new();
        let mut keys: Vec<Key> = self.tables.keys().copied().collect();
        keys.sort_unstable();
        let full = if self.n == 32 {
            !0
        } else {
            (1u32 << self.n) - 1
        };
        let by_size: Vec<Vec<u32>> = (0..=4).map(|k| sets(full, k)).collect();
        for key in keys {
            let (k, l, _, _) = key;
            for &own in &by_size[k as usize] {
                for &opp in &by_size[l as usize] {
                    if own & opp == 0 {
                        out.push((key, own, opp));
                    }
                }
            }
        }
        out
    }
}
