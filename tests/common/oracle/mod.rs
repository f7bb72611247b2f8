//! An independent oracle for the smallest endgame databases (3-3 and the pair
//! 3-4/4-3), written to check the builder against.
//!
//! It shares no code with the crate: its own board tables (typed in from
//! `RULES.md` by point name), its own move generation, its own indexing of *raw*
//! positions (no symmetry reduction), and a different algorithm (forward value
//! iteration instead of retrograde analysis). The only thing taken from the crate's
//! conventions is the numbering of the points, so that positions can be exchanged
//! as bitsets (`CRATE_ORDER` below, typed in from the brief, not imported).
//!
//! # Indexing
//!
//! Subspace `k-l`: `k` stones for the side to move (`own`), `l` for the opponent
//! (`opp`). A `k`-set of the 24 points has a colex rank in `0..C(24,k)`, which is
//! simply its position among all 24-bit integers with `k` bits set in increasing
//! order. The slot of a position is `rank(own) * C(24,l) + rank(opp)`; slots where
//! the two sets overlap are marked invalid and never looked at.
//!
//! # Algorithm (why the passes give exact distances)
//!
//! Values are distance to the end of the game (RULES.md "Values"). Write `d(P)` for
//! the distance of a decided position. By definition:
//! - `Win(n)` iff some successor is lost for the opponent, and the smallest `m + 1`
//!   over successors `Loss(m)` is `n`;
//! - `Loss(n)` iff every successor is won for the opponent and the largest `m + 1`
//!   over successors `Win(m)` is `n` (no successor at all: `Loss(0)`).
//!
//! Successors outside the pair being solved are known from the start: a capture
//! leaving the opponent two stones ends the game, i.e. a successor `Loss(0)`; other
//! captures lead into a lower subspace solved before, at whatever depth it has there.
//!
//! Pass `n = 0, 1, 2, ...` decides exactly the positions of value `Win(n)` or
//! `Loss(n)`. Invariant: before pass `n`, exactly the positions with a distance
//! `< n` are decided, with their correct values. In pass `n`, for an undecided `P`:
//! - if a successor is known as `Loss(n-1)`, `P` is `Win(n)`: every successor
//!   `Loss(m)` with `m < n-1` would be decided already (invariant, or external) and
//!   would have made `P` a `Win(m+1)` in an earlier pass, so `n` is the minimum;
//! - if every successor is known as a win and the largest is `Win(n-1)`, `P` is
//!   `Loss(n)`: no successor can turn out to be lost for the opponent (those are
//!   decided when their distance is below `n`... and all of them are decided wins).
//!
//! Conversely every `Win(n)`/`Loss(n)` position satisfies one of these tests in pass
//! `n`, because all successors of distance `< n` are decided by then. A position
//! decided in the *same* pass has distance `n`, so seeing it or not changes nothing:
//! a successor `Loss(n)` gives `m + 1 = n + 1 != n`, and a successor `Win(n)` makes
//! the largest win `n`, not `n - 1`. Hence the pass may update in place, in any
//! order and in parallel. Both conditions are checked with exact equality, and a
//! successor that would have decided a position earlier is an assertion failure.
//!
//! Which positions a pass looks at: a position of distance `n` has a successor of
//! distance `n - 1` (a `Win(n)` its fastest lost one, a `Loss(n)` its slowest won
//! one), decided in pass `n - 1` or outside the pair. So pass `n >= 2` looks only at
//! the undecided positions with a move into a position decided in pass `n - 1`
//! (found by moving a stone of that position's opponent back: the same move
//! tables, read the other way) or with a capture into a position outside the pair
//! at distance `n - 1`; passes 0 and 1 look at every position (stuck ones, and wins
//! by a capture to two stones). Looking at more positions changes nothing (the test
//! above decides only those of distance `n`); one missed would be left undecided,
//! a draw, which the tests against the builder and against each position's
//! successors would report. Every pass decides the same positions as a pass over
//! all of them would.
//!
//! Termination: if pass `n` decides nothing and no position outside the pair has a
//! distance `>= n`, no later pass has a successor to decide anything by; what is
//! never decided is a draw.
//!
//! Speed: passes look at their positions in opponent-major order, so that the
//! successors of consecutive positions share one row of the partner table; moves
//! of each stone set are precomputed (rank after the move, whether it closes a
//! mill).

#![allow(dead_code)]

pub mod cyclic;
pub mod placement;

use rayon::prelude::*;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering::Relaxed};

/// A walk over a position's predecessors, calling its argument with each slot.
type PredecessorWalk<'a> = dyn Fn(&mut dyn FnMut(u32)) + 'a;

/// The crate's point numbering (bit `i` is the `i`-th name), from the brief.
pub const CRATE_ORDER: &str = "d5 e5 e4 e3 d3 c3 c4 c5 \
                               d6 f6 f4 f2 d2 b2 b4 b6 \
                               d7 g7 g4 g1 d1 a1 a4 a7";

/// The 32 edges of RULES.md "Board".
const EDGES: &str = "a1-a4 a4-a7 a7-d7 d7-g7 g7-g4 g4-g1 g1-d1 d1-a1 \
                     b2-b4 b4-b6 b6-d6 d6-f6 f6-f4 f4-f2 f2-d2 d2-b2 \
                     c3-c4 c4-c5 c5-d5 d5-e5 e5-e4 e4-e3 e3-d3 d3-c3 \
                     a4-b4 b4-c4 d7-d6 d6-d5 g4-f4 f4-e4 d1-d2 d2-d3";

/// The 16 mills of RULES.md "Board".
const MILLS: &str = "a1-a4-a7 a7-d7-g7 g7-g4-g1 g1-d1-a1 \
                     b2-b4-b6 b6-d6-f6 f6-f4-f2 f2-d2-b2 \
                     c3-c4-c5 c5-d5-e5 e5-e4-e3 e3-d3-c3 \
                     a4-b4-c4 d7-d6-d5 g4-f4-e4 d1-d2-d3";

/// All 24 points.
pub const FULL: u32 = (1 << 24) - 1;

/// The 16 points of `six` (RULES.md, "The 16-point board") in the crate's numbering
/// (middle ring, outer ring, each clockwise from twelve o'clock), its 20 edges and
/// its 8 mills, typed in from RULES.md.
pub const SIX_ORDER: &str = "d6 f6 f4 f2 d2 b2 b4 b6 \
                             d7 g7 g4 g1 d1 a1 a4 a7";
const SIX_EDGES: &str = "a1-a4 a4-a7 a7-d7 d7-g7 g7-g4 g4-g1 g1-d1 d1-a1 \
                         b2-b4 b4-b6 b6-d6 d6-f6 f6-f4 f4-f2 f2-d2 d2-b2 \
                         a4-b4 d7-d6 g4-f4 d1-d2";
/// The diagonal lines of `twelve` and `morabaraba` (RULES.md, "Diagonal lines").
const DIAGONAL_EDGES: &str = "a1-b2 b2-c3 a7-b6 b6-c5 g7-f6 f6-e5 g1-f2 f2-e3";
const DIAGONAL_MILLS: &str = "a1-b2-c3 a7-b6-c5 g7-f6-e5 g1-f2-e3";
const SIX_MILLS: &str = "a1-a4-a7 a7-d7-g7 g7-g4-g1 g1-d1-a1 \
                         b2-b4-b6 b6-d6-f6 f6-f4-f2 f2-d2-b2";

/// The board: names, adjacency, mills and the 16 symmetries, all in crate numbering,
/// and whether a side with three stones flies.
pub struct Board {
    /// Number of points.
    pub n: u32,
    /// All points.
    pub full: u32,
    /// A side with exactly three stones flies (`standard`); else it slides
    /// (`no-flying`, `six`).
    pub fly: bool,
    /// Point names by bit number.
    pub names: Vec<&'static str>,
    /// Adjacent points of each point.
    pub adj: [u32; 24],
    /// The 16 mills.
    pub mills: Vec<u32>,
    /// The mills through each point.
    pub mills_at: Vec<Vec<u32>>,
    /// The symmetry group as point permutations (`sym[s][p]` = image of `p`).
    pub syms: Vec<[u8; 24]>,
}

impl Board {
    /// Builds the tables of the standard game from the name lists above.
    pub fn new() -> Board {
        Board::of("standard")
    }

    /// The board and flying rule of the rule set `rules` (`standard`, `lasker`,
    /// `no-flying`, `six`, `twelve`, `morabaraba`, as RULES.md describes them; a
    /// `-N` suffix is ignored). Which stones count for flying, and moves during
    /// placement, are [`cyclic::GameRules`].
    pub fn of(rules: &str) -> Board {
        let base = rules.rsplit_once('-').map_or(rules, |(b, n)| {
            if n.chars().all(|c| c.is_ascii_digit()) {
                b
            } else {
                rules
            }
        });
        let with_diagonals =
            |a: &str, b: &str| -> &'static str { Box::leak(format!("{a} {b}").into_boxed_str()) };
        let (order, edges, mills, fly) = match base {
            "standard" | "lasker" => (CRATE_ORDER, EDGES, MILLS, true),
            "no-flying" => (CRATE_ORDER, EDGES, MILLS, false),
            "six" => (SIX_ORDER, SIX_EDGES, SIX_MILLS, false),
            // The full board (where the two differ) needs 12 stones a side, beyond
            // the oracle's four.
            "twelve" | "morabaraba" => (
                CRATE_ORDER,
                with_diagonals(EDGES, DIAGONAL_EDGES),
                with_diagonals(MILLS, DIAGONAL_MILLS),
                true,
            ),
            _ => panic!("the oracle has no rules {rules}"),
        };
        let names: Vec<&'static str> = order.split_whitespace().collect();
        let n = names.len() as u32;
        let bit = |name: &str| -> usize {
            names
                .iter()
                .position(|&n| n == name)
                .unwrap_or_else(|| panic!("unknown point {name}"))
        };
        let mut adj = [0u32; 24];
        for e in edges.split_whitespace() {
            let (a, b) = e.split_once('-').unwrap();
            let (a, b) = (bit(a), bit(b));
            adj[a] |= 1 << b;
            adj[b] |= 1 << a;
        }
        let mills: Vec<u32> = mills
            .split_whitespace()
            .map(|m| m.split('-').map(|p| 1u32 << bit(p)).sum())
            .collect();
        let mills_at = (0..n)
            .map(|p| {
                mills
                    .iter()
                    .copied()
                    .filter(|&m| m & (1 << p) != 0)
                    .collect()
            })
            .collect();

        // Symmetries from geometry: coordinates centred on d4, generated by a
        // quarter turn, a mirror and the inner/outer square swap.
        let coord = |name: &str| -> (i32, i32) {
            let b = name.as_bytes();
            (b[0] as i32 - b'd' as i32, b[1] as i32 - b'4' as i32)
        };
        let from_coord = |(x, y): (i32, i32)| -> u8 {
            let name = format!("{}{}", (b'd' as i32 + x) as u8 as char, y + 4);
            bit(&name) as u8
        };
        let make = |f: &dyn Fn((i32, i32)) -> (i32, i32)| -> [u8; 24] {
            let mut perm: [u8; 24] = std::array::from_fn(|p| p as u8);
            for (p, name) in names.iter().enumerate() {
                perm[p] = from_coord(f(coord(name)));
            }
            perm
        };
        let rot = make(&|(x, y)| (y, -x));
        let mirror = make(&|(x, y)| (-x, y));
        // The swap exchanges the innermost and outermost squares: 1 and 3 on the
        // 24-point board, 2 and 3 on the 16-point one.
        let swap = make(&|(x, y)| match (n, x.abs().max(y.abs())) {
            (24, 1) => (3 * x, 3 * y),
            (24, 3) => (x / 3, y / 3),
            (16, 2) => (3 * x / 2, 3 * y / 2),
            (16, 3) => (2 * x / 3, 2 * y / 3),
            _ => (x, y),
        });
        let mut identity = [0u8; 24];
        for (p, v) in identity.iter_mut().enumerate() {
            *v = p as u8;
        }
        let mut syms = vec![identity];
        let mut i = 0;
        while i < syms.len() {
            for g in [rot, mirror, swap] {
                let mut c: [u8; 24] = std::array::from_fn(|p| p as u8);
                for p in 0..n as usize {
                    c[p] = g[syms[i][p] as usize];
                }
                if !syms.contains(&c) {
                    syms.push(c);
                }
            }
            i += 1;
        }
        Board {
            n,
            full: (1 << n) - 1,
            fly,
            names,
            adj,
            mills,
            mills_at,
            syms,
        }
    }

    /// Image of a point set under symmetry `s`.
    pub fn map(&self, s: usize, set: u32) -> u32 {
        let mut out = 0;
        let mut rest = set;
        while rest != 0 {
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            out |= 1 << self.syms[s][p];
        }
        out
    }

    /// Whether the stone just placed on `to` completes a mill of `stones`.
    #[inline]
    pub fn closes_mill(&self, stones: u32, to: usize) -> bool {
        for &m in &self.mills_at[to] {
            if stones & m == m {
                return true;
            }
        }
        false
    }

    /// The stones of `stones` standing in a mill.
    #[inline]
    pub fn in_mills(&self, stones: u32) -> u32 {
        let mut out = 0;
        for &m in &self.mills {
            if stones & m == m {
                out |= m;
            }
        }
        out
    }

    /// A set as a list of names, for messages.
    pub fn show(&self, set: u32) -> String {
        (0..self.n)
            .filter(|p| set >> p & 1 == 1)
            .map(|p| self.names[p as usize])
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Default for Board {
    fn default() -> Self {
        Board::new()
    }
}

/// Binomial coefficient `C(n, r)` for the small values used here.
pub fn binom(n: u32, r: u32) -> u32 {
    if r > n {
        return 0;
    }
    let mut c: u64 = 1;
    for i in 0..r as u64 {
        c = c * (n as u64 - i) / (i + 1);
    }
    c as u32
}

/// Colex ranking of `k`-subsets of the 24 points, and the moves of each set.
pub struct Ranking {
    /// Number of stones.
    pub k: u32,
    /// All `k`-sets in increasing numeric order (which is colex order).
    pub sets: Vec<u32>,
    /// `c[n][i]` = `C(n, i)` for `n < 24`, `i <= 4`.
    c: [[u32; 5]; 24],
    /// Moves of `sets[r]` are `moves[move_start[r]..move_start[r + 1]]`, each
    /// encoded as `rank of the set after the move | to << 14 | MILL if it closes a
    /// mill through `to``. Flying moves (k = 3) list every point not in the set, so
    /// a move onto an opponent stone must be skipped by the caller.
    move_start: Vec<u32>,
    moves: Vec<u32>,
}

/// Flag of a move that closes a mill (see [`Ranking`]).
const MILL: u32 = 1 << 19;

impl Ranking {
    /// All `k`-subsets of 24 points, `k <= 4`, with their moves on `board`.
    pub fn new(k: u32, board: &Board) -> Ranking {
        assert!((1..=4).contains(&k));
        let mut sets = Vec::with_capacity(binom(board.n, k) as usize);
        // Gosper's hack: the next larger integer with the same number of bits.
        let mut s: u32 = (1 << k) - 1;
        while s <= board.full {
            sets.push(s);
            let low = s & s.wrapping_neg();
            let ripple = s + low;
            s = (((ripple ^ s) >> 2) / low) | ripple;
        }
        assert_eq!(sets.len(), binom(board.n, k) as usize);
        let mut c = [[0u32; 5]; 24];
        for (n, row) in c.iter_mut().enumerate() {
            for (i, v) in row.iter_mut().enumerate() {
                *v = binom(n as u32, i as u32);
            }
        }
        let mut r = Ranking {
            k,
            sets,
            c,
            move_start: vec![0],
            moves: Vec::new(),
        };
        for i in 0..r.sets.len() {
            let own = r.sets[i];
            let mut stones = own;
            while stones != 0 {
                let from = stones.trailing_zeros() as usize;
                stones &= stones - 1;
                // Exactly three stones fly where the rules fly, more slide
                // (RULES.md "Play" 4).
                let mut targets = if k == 3 && board.fly {
                    board.full & !own
                } else {
                    board.adj[from] & !own
                };
                while targets != 0 {
                    let to = targets.trailing_zeros() as usize;
                    targets &= targets - 1;
                    let moved = own & !(1 << from) | 1 << to;
                    let mill = if board.closes_mill(moved, to) {
                        MILL
                    } else {
                        0
                    };
                    r.moves.push(r.rank(moved) | (to as u32) << 14 | mill);
                }
            }
            r.move_start.push(r.moves.len() as u32);
        }
        r
    }

    /// Colex rank: the sum of `C(p, i+1)` over the elements `p`, `i`-th from below.
    #[inline]
    pub fn rank(&self, set: u32) -> u32 {
        let mut r = 0;
        let mut rest = set;
        let mut i = 1;
        while rest != 0 {
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            r += self.c[p][i];
            i += 1;
        }
        r
    }

    /// Number of `k`-sets.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// The encoded moves of the set of rank `r`.
    #[inline]
    fn moves_of(&self, r: usize) -> &[u32] {
        &self.moves[self.move_start[r] as usize..self.move_start[r + 1] as usize]
    }
}

/// Cell codes. A decided value keeps its distance in the low 14 bits.
const UNDECIDED: u16 = 0;
const INVALID: u16 = 0xFFFF;
const WIN: u16 = 0x4000;
const LOSS: u16 = 0x8000;
const DIST: u16 = 0x3FFF;

/// One subspace `k-l`, every raw position, one cell each.
pub struct Table {
    /// Stones of the side to move.
    pub k: u32,
    /// Stones of the opponent.
    pub l: u32,
    cells: Vec<AtomicU16>,
}

/// Win/loss/draw counts and extremes of one subspace.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Subspace `k-l`.
    pub k: u32,
    /// Opponent stones.
    pub l: u32,
    /// Raw positions (disjoint set pairs).
    pub raw: u64,
    /// Raw positions won, lost, drawn for the side to move.
    pub wins: u64,
    /// See `wins`.
    pub losses: u64,
    /// See `wins`.
    pub draws: u64,
    /// Longest win (plies) and one position `(own, opp)` attaining it.
    pub longest_win: u16,
    /// Example of the longest win.
    pub longest_win_at: (u32, u32),
    /// Longest loss (plies) and one position attaining it.
    pub longest_loss: u16,
    /// Example of the longest loss.
    pub longest_loss_at: (u32, u32),
    /// Passes the solver needed for the pair containing this subspace.
    pub passes: u32,
}

/// Counts per symmetry class (16-element group).
#[derive(Clone, Debug, Default)]
pub struct ClassSummary {
    /// Number of classes.
    pub classes: u64,
    /// Classes won, lost, drawn for the side to move.
    pub wins: u64,
    /// See `wins`.
    pub losses: u64,
    /// See `wins`.
    pub draws: u64,
}

/// The solved oracle: 3-3, 3-4 and 4-3.
pub struct Oracle {
    /// Board tables.
    pub board: Board,
    rank3: Ranking,
    rank4: Ranking,
    /// Solved subspaces.
    pub tables: Vec<Table>,
    passes: Vec<((u32, u32), u32)>,
}

/// Everything a pass needs to read.
struct Ctx<'a> {
    board: &'a Board,
    rank3: &'a Ranking,
    rank4: &'a Ranking,
    /// The subspaces solved before (capture targets).
    lower: &'a [Table],
}

impl Ctx<'_> {
    fn ranking(&self, k: u32) -> &Ranking {
        match k {
            3 => self.rank3,
            4 => self.rank4,
            _ => panic!("oracle covers 3 and 4 stones only"),
        }
    }

    fn index(&self, own: u32, opp: u32) -> usize {
        let k = own.count_ones();
        let l = opp.count_ones();
        self.ranking(k).rank(own) as usize * self.ranking(l).len()
            + self.ranking(l).rank(opp) as usize
    }

    /// Decides the position `(own, opp)` of slot `slot` in table `t` in pass `n`,
    /// if its value has distance `n`: returns the new cell code, or `UNDECIDED`.
    /// `next` is the partner subspace `l-k` (quiet moves), `lower` the subspace
    /// `(l-1)-k` (captures), absent when a capture leaves two stones.
    fn decide(&self, n: u16, slot: usize, t: &Table, next: &Table, lower: Option<&Table>) -> u16 {
        let b = self.board;
        let rk = self.ranking(t.k);
        let rl = self.ranking(t.l);
        let own_rank = slot / rl.len();
        let opp = rl.sets[slot % rl.len()];
        // Slot of (opp, moved) in `next`: rank(opp) * C(24,k) + rank(moved).
        let base = (slot % rl.len()) * rk.len();
        let mut all_won = true; // every successor so far is a win for the opponent
        let mut max_win: i32 = -1; // the largest such win
        // `consider` returns true when the position is decided as Win(n).
        let mut consider = |code: u16| -> bool {
            match code & !DIST {
                LOSS => {
                    let m = code & DIST;
                    assert!(m + 1 >= n, "a faster win was missed");
                    if m + 1 == n {
                        return true;
                    }
                    all_won = false;
                }
                WIN => max_win = max_win.max((code & DIST) as i32),
                _ => all_won = false,
            }
            false
        };
        for &e in rk.moves_of(own_rank) {
            let to = e >> 14 & 31;
            if opp >> to & 1 == 1 {
                continue; // flying onto an opponent stone
            }
            let moved_rank = (e & 0x3FFF) as usize;
            if e & MILL == 0 {
                if consider(next.cells[base + moved_rank].load(Relaxed)) {
                    return WIN | n;
                }
                continue;
            }
            // A mill: remove one opponent stone not in a mill, any if all are.
            let protected = b.in_mills(opp);
            let mut removable = if opp & !protected != 0 {
                opp & !protected
            } else {
                opp
            };
            while removable != 0 {
                let r = removable & removable.wrapping_neg();
                removable &= removable - 1;
                let code = match lower {
                    None => LOSS, // two stones left: Loss(0) for the opponent
                    Some(lo) => {
                        let left = opp & !r;
                        let c = lo.cells
                            [self.ranking(lo.k).rank(left) as usize * rk.len() + moved_rank]
                            .load(Relaxed);
                        debug_assert!(c != INVALID);
                        c
                    }
                };
                if consider(code) {
                    return WIN | n;
                }
            }
        }
        if all_won {
            assert!(max_win + 1 >= n as i32, "a longer loss was missed");
            if max_win + 1 == n as i32 {
                return LOSS | n;
            }
        }
        UNDECIDED
    }

    /// Calls `visit` with the slot, in `T`'s partner table, of every position with a
    /// quiet move into `(own, opp)` of table `T`: the opponent `opp` moved one stone
    /// back from `t` to an empty `f` (a move of the set `opp` from `t` to `f`, as
    /// [`Ranking`] lists them: adjacent, or anywhere when three stones fly), where
    /// the move `f` to `t` closed no mill of `opp`.
    fn quiet_predecessors(&self, own: u32, opp: u32, mut visit: impl FnMut(u32)) {
        let (ra, rb) = (
            self.ranking(own.count_ones()),
            self.ranking(opp.count_ones()),
        );
        let own_rank = ra.rank(own);
        let milled = self.board.in_mills(opp);
        for &e in rb.moves_of(rb.rank(opp) as usize) {
            let before = e & 0x3FFF;
            let (f, t) = (e >> 14 & 31, opp & !rb.sets[before as usize]);
            if own >> f & 1 == 0 && t & milled == 0 {
                visit(before * ra.len() as u32 + own_rank);
            }
        }
    }

    /// Calls `visit` with the slot, in the pair table `k-l` whose capture target is
    /// `(l-1)-k`, of every position with a capture into `(own, opp)` of that target:
    /// the opponent `opp` (`k` stones) moved back from `t`, on a mill of `opp`, to an
    /// empty `f`, and a stone `r` of the side to move, removable from `own | r`, put
    /// back on an empty point other than `f`.
    fn capture_predecessors(&self, own: u32, opp: u32, mut visit: impl FnMut(u32)) {
        let b = self.board;
        let (rk, rl) = (
            self.ranking(opp.count_ones()),
            self.ranking(own.count_ones() + 1),
        );
        let milled = b.in_mills(opp);
        let empty = b.full & !(own | opp);
        // The stones `r` that may have been removed.
        let mut removed = 0;
        for r in (0..b.n).map(|p| 1u32 << p).filter(|r| empty & r != 0) {
            let before = own | r;
            let protected = b.in_mills(before);
            if before & !protected == 0 || r & protected == 0 {
                removed |= r;
            }
        }
        for &e in rk.moves_of(rk.rank(opp) as usize) {
            let moved_back = e & 0x3FFF;
            let (f, t) = (e >> 14 & 31, opp & !rk.sets[moved_back as usize]);
            if own >> f & 1 == 1 || t & milled == 0 {
                continue;
            }
            let mut rs = removed & !(1 << f);
            while rs != 0 {
                let r = rs & rs.wrapping_neg();
                rs &= rs - 1;
                visit(moved_back * rl.len() as u32 + rl.rank(own | r));
            }
        }
    }

    /// Solves the subspaces `(k, l)` of one pair by forward passes; returns the
    /// tables and the number of passes.
    fn solve_pair(&self, shapes: &[(u32, u32)]) -> (Vec<Table>, u32) {
        let pair: Vec<Table> = shapes
            .iter()
            .map(|&(k, l)| {
                let (rk, rl) = (self.ranking(k), self.ranking(l));
                let cells = (0..rk.len() * rl.len())
                    .into_par_iter()
                    .map(|i| {
                        let own = rk.sets[i / rl.len()];
                        let opp = rl.sets[i % rl.len()];
                        AtomicU16::new(if own & opp != 0 { INVALID } else { UNDECIDED })
                    })
                    .collect();
                Table { k, l, cells }
            })
            .collect();
        // Per table: its partner (as a table and its place in `pair`) and its
        // capture target.
        let work: Vec<(&Table, usize, Option<&Table>)> = pair
            .iter()
            .map(|t| {
                let next = pair
                    .iter()
                    .position(|u| u.k == t.l && u.l == t.k)
                    .expect("partner");
                let lower = (t.l > 3).then(|| {
                    self.lower
                        .iter()
                        .find(|u| u.k == t.l - 1 && u.l == t.k)
                        .expect("lower subspace solved first")
                });
                (t, next, lower)
            })
            .collect();
        // Per table, the slots of its capture target by distance (the positions
        // outside the pair; terminal captures, to two stones, have distance 0).
        let outside: Vec<Vec<Vec<u32>>> = work
            .iter()
            .map(|(_, _, lower)| {
                let mut by_distance: Vec<Vec<u32>> = Vec::new();
                for (slot, c) in lower.iter().flat_map(|lo| lo.cells.iter().enumerate()) {
                    let c = c.load(Relaxed);
                    if c != INVALID && c != UNDECIDED {
                        let d = (c & DIST) as usize;
                        if by_distance.len() <= d {
                            by_distance.resize(d + 1, Vec::new());
                        }
                        by_distance[d].push(slot as u32);
                    }
                }
                by_distance
            })
            .collect();
        let last_outside = outside.iter().map(|o| o.len()).max().unwrap_or(0);
        let mut passes = 0;
        let mut n: u16 = 0;
        // The positions decided in the last pass, per table.
        let mut last: Vec<Vec<u32>> = vec![Vec::new(); work.len()];
        loop {
            let mut decided_now = Vec::with_capacity(work.len());
            for (i, &(t, next, lower)) in work.iter().enumerate() {
                let todo: Vec<u32> = if n <= 1 {
                    // Passes 0 and 1 look at every position: stuck ones, and wins by
                    // a capture to two stones.
                    // Opponent-major order: consecutive positions share the
                    // opponent set, so their quiet successors all lie in one row
                    // of the partner table (rank(opp) * C(24,k) + ..), which stays
                    // in cache.
                    let (nk, nl) = (self.ranking(t.k).len(), self.ranking(t.l).len());
                    (0..nl)
                        .flat_map(|j| (0..nk).map(move |i| (i * nl + j) as u32))
                        .filter(|&s| t.cells[s as usize].load(Relaxed) == UNDECIDED)
                        .collect()
                } else {
                    self.candidates(t, &pair[next], &last[next], lower, &outside[i], n)
                };
                let next = &pair[next];
                let decided: Vec<u32> = todo
                    .par_iter()
                    .copied()
                    .filter(|&slot| {
                        let code = self.decide(n, slot as usize, t, next, lower);
                        if code == UNDECIDED {
                            return false;
                        }
                        t.cells[slot as usize].store(code, Relaxed);
                        true
                    })
                    .collect();
                decided_now.push(decided);
            }
            let decided: usize = decided_now.iter().map(Vec::len).sum();
            if std::env::var_os("ORACLE_VERBOSE").is_some() {
                eprintln!("oracle {shapes:?}: pass {n} decided {decided}");
            }
            passes += 1;
            last = decided_now;
            // A later pass decides a position only through a successor decided in
            // the pass before it, in the pair or outside: none is left.
            if decided == 0 && n >= 1 && n as usize >= last_outside {
                return (pair, passes);
            }
            n += 1;
            assert!(n < DIST, "distance overflow");
        }
    }

    /// The positions of `t` that pass `n` (at least 2) must look at: those still
    /// undecided with a successor of distance `n - 1`, which pass `n - 1` decided
    /// (`last`, positions of the partner table `next`) or which lies outside the
    /// pair (`outside[n - 1]`, positions of the capture target `lower`). A position
    /// of distance `n` has such a successor (a `Win(n)` its fastest lost one, a
    /// `Loss(n)` its slowest won one), so no other can be decided in pass `n`.
    fn candidates(
        &self,
        t: &Table,
        next: &Table,
        last: &[u32],
        lower: Option<&Table>,
        outside: &[Vec<u32>],
        n: u16,
    ) -> Vec<u32> {
        let seen: Vec<AtomicU64> = (0..t.cells.len().div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        let first = |slot: u32| {
            let bit = 1u64 << (slot % 64);
            t.cells[slot as usize].load(Relaxed) == UNDECIDED
                && seen[slot as usize / 64].fetch_or(bit, Relaxed) & bit == 0
        };
        let position = |u: &Table, slot: u32| {
            let nl = self.ranking(u.l).len();
            let own = self.ranking(u.k).sets[slot as usize / nl];
            (own, self.ranking(u.l).sets[slot as usize % nl])
        };
        // The undecided predecessors a walk visits first.
        let fresh = |walk: &PredecessorWalk| {
            let mut found = Vec::new();
            walk(&mut |p| {
                if first(p) {
                    found.push(p);
                }
            });
            found
        };
        let mut out: Vec<u32> = last
            .par_iter()
            .flat_map_iter(|&slot| {
                let (own, opp) = position(next, slot);
                fresh(&|visit| self.quiet_predecessors(own, opp, visit))
            })
            .collect();
        if let (Some(lo), Some(slots)) = (lower, outside.get(n as usize - 1)) {
            out.par_extend(slots.par_iter().flat_map_iter(|&slot| {
                let (own, opp) = position(lo, slot);
                fresh(&|visit| self.capture_predecessors(own, opp, visit))
            }));
        }
        // In opponent-major order (see the full passes): sorted as the numbers
        // rank(opp) * C(24,k) + rank(own).
        let (nk, nl) = (
            self.ranking(t.k).len() as u32,
            self.ranking(t.l).len() as u32,
        );
        out.par_iter_mut().for_each(|s| *s = *s % nl * nk + *s / nl);
        out.par_sort_unstable();
        out.par_iter_mut().for_each(|s| *s = *s % nk * nl + *s / nk);
        out
    }
}

impl Oracle {
    /// Solves 3-3, then the pair 3-4/4-3, of the standard game.
    pub fn solve() -> Oracle {
        Oracle::solve_for(Board::new())
    }

    /// Solves 3-3, then the pair 3-4/4-3, on `board` with its flying rule.
    pub fn solve_for(board: Board) -> Oracle {
        Oracle::solve_up_to(board, 4)
    }

    /// Solves the subspaces of `board` with at most `most` (3 or 4) stones a side:
    /// 3-3, then the pair 3-4/4-3 if `most` is 4.
    pub fn solve_up_to(board: Board, most: u32) -> Oracle {
        let rank3 = Ranking::new(3, &board);
        let rank4 = Ranking::new(4, &board);
        let mut tables: Vec<Table> = Vec::new();
        let mut passes = Vec::new();
        let shapes: [&[(u32, u32)]; 2] = [&[(3, 3)], &[(3, 4), (4, 3)]];
        for shapes in shapes.into_iter().take(most as usize - 2) {
            let ctx = Ctx {
                board: &board,
                rank3: &rank3,
                rank4: &rank4,
                lower: &tables,
            };
            let (solved, p) = ctx.solve_pair(shapes);
            for &s in shapes {
                passes.push((s, p));
            }
            tables.extend(solved);
        }
        Oracle {
            board,
            rank3,
            rank4,
            tables,
            passes,
        }
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            board: &self.board,
            rank3: &self.rank3,
            rank4: &self.rank4,
            lower: &self.tables,
        }
    }

    fn table(&self, k: u32, l: u32) -> &Table {
        self.tables
            .iter()
            .find(|t| t.k == k && t.l == l)
            .unwrap_or_else(|| panic!("oracle has no subspace {k}-{l}"))
    }

    /// The value of the position with `own` (side to move) and `opp` stones, as
    /// raw bitsets in the crate's numbering: `('W', n)`, `('L', n)` or `('D', 0)`.
    pub fn value(&self, own: u32, opp: u32) -> (char, u16) {
        assert_eq!(own & opp, 0, "overlapping sets");
        assert_eq!((own | opp) & !self.board.full, 0, "points beyond the board");
        let t = self.table(own.count_ones(), opp.count_ones());
        decode(t.cells[self.ctx().index(own, opp)].load(Relaxed))
    }

    /// Every raw position `(own, opp)` of subspace `k-l`, in slot order.
    pub fn positions(&self, k: u32, l: u32) -> Vec<(u32, u32)> {
        let ctx = self.ctx();
        let (rk, rl) = (ctx.ranking(k), ctx.ranking(l));
        let mut out = Vec::new();
        for &own in &rk.sets {
            for &opp in &rl.sets {
                if own & opp == 0 {
                    out.push((own, opp));
                }
            }
        }
        out
    }

    /// Raw counts and extremes of subspace `k-l`.
    pub fn summary(&self, k: u32, l: u32) -> Summary {
        let t = self.table(k, l);
        let ctx = self.ctx();
        let (rk, rl) = (ctx.ranking(k), ctx.ranking(l));
        let mut s = Summary {
            k,
            l,
            passes: self
                .passes
                .iter()
                .find(|(sh, _)| *sh == (k, l))
                .map_or(0, |p| p.1),
            ..Summary::default()
        };
        for (i, cell) in t.cells.iter().enumerate() {
            let own = rk.sets[i / rl.len()];
            let opp = rl.sets[i % rl.len()];
            match decode(cell.load(Relaxed)) {
                ('X', _) => continue,
                ('W', d) => {
                    s.wins += 1;
                    if d > s.longest_win {
                        s.longest_win = d;
                        s.longest_win_at = (own, opp);
                    }
                }
                ('L', d) => {
                    s.losses += 1;
                    if d > s.longest_loss {
                        s.longest_loss = d;
                        s.longest_loss_at = (own, opp);
                    }
                }
                _ => s.draws += 1,
            }
            s.raw += 1;
        }
        s
    }

    /// Counts per symmetry class: a position counts if it is the smallest
    /// `(own, opp)` of its orbit under the 16 symmetries.
    pub fn class_summary(&self, k: u32, l: u32) -> ClassSummary {
        self.positions(k, l)
            .par_iter()
            .filter(|&&(own, opp)| {
                (1..self.board.syms.len())
                    .all(|s| (self.board.map(s, own), self.board.map(s, opp)) >= (own, opp))
            })
            .map(|&(own, opp)| {
                let mut c = ClassSummary {
                    classes: 1,
                    ..ClassSummary::default()
                };
                match self.value(own, opp).0 {
                    'W' => c.wins = 1,
                    'L' => c.losses = 1,
                    _ => c.draws = 1,
                }
                c
            })
            .reduce(ClassSummary::default, |a, b| ClassSummary {
                classes: a.classes + b.classes,
                wins: a.wins + b.wins,
                losses: a.losses + b.losses,
                draws: a.draws + b.draws,
            })
    }
}

fn decode(code: u16) -> (char, u16) {
    match code {
        INVALID => ('X', 0),
        UNDECIDED => ('D', 0),
        c if c & !DIST == WIN => ('W', c & DIST),
        c => ('L', c & DIST),
    }
}
