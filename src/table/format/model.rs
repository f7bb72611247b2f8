//! Model coding of the WDL section ([`super::Encoding::Model`], format version 5):
//! each slot's result is coded with an adaptive binary arithmetic coder whose
//! probabilities depend on a *context* the decoder computes from the position and
//! from the results it has decoded already, instead of zstd over packed trits.
//!
//! A block holds whole *classes* (the slots with the same stones of the side to
//! move, [`crate::table::index`]), at least [`MIN_BLOCK_SLOTS`] slots, and is coded in slot
//! order. The context of a slot (see `docs/FORMAT.md`, "Model coding") is:
//!
//! - the results of its **earlier neighbours**: the positions with the same stones
//!   of the side to move and one opponent stone slid to an adjacent empty point
//!   whose slot comes earlier in the same class, counted per result up to 2;
//! - the **closable mills** of either side (up to 3): mills with two of the side's
//!   stones and an empty third point that the side can fill with its next ply (a
//!   stone in hand, a flying side, or a stone of the side outside the mill next to
//!   the point);
//! - the **mobility** of either side (slides to adjacent empty points), in 8
//!   buckets;
//! - the **previous slot's** result in the block (or none at the block's start).
//!
//! A result is two binary decisions (decisive or draw; if decisive, loss or win),
//! each with a probability per context that adapts as the block is coded. Every
//! block starts from the file's *prior*: the probabilities counted over a sample of
//! the file's blocks, stored once per file (block 0 of the section, zstd-compressed).
//! The walk over a block ([`Geometry::walk`]) is one function for the encoder and the
//! decoder, so the two cannot disagree on a context.

use super::coder::{Decoder, Encoder, ONE, P_MAX, P_MIN, prior_of_counts};
pub use super::coder::{Model, store_prior};
use crate::rules::position::points;
use crate::rules::{Bits, Rules};
use crate::table::index::{Index, first_subset, next_subset, pext};

/// The fewest slots a block holds (it holds whole classes, so usually more).
pub const MIN_BLOCK_SLOTS: u64 = 1 << 14;
/// Values of the neighbour context: `9 w + 3 d + l`, each counted up to 2.
const NEIGHBOURS: usize = 27;
/// Values of a closable-mills count (0 to 3).
const CLOSABLE: usize = 4;
/// Mobility buckets.
const MOBILITY: usize = 8;
/// Values of the previous result: draw, win, loss, none.
const PREV: usize = 4;
/// Values of the jump context: the earlier jump neighbours' draws, wins and
/// losses, each in 4 buckets ([`JUMP_BUCKET`]).
const JUMP_CONTEXTS: usize = 64;
/// Values of a slot's **position context**, the part of its context that
/// depends on the position alone: the closable mills and the mobility of
/// either side.
const POSITIONS: usize = CLOSABLE * CLOSABLE * MOBILITY * MOBILITY;
/// Number of contexts.
pub const CONTEXTS: usize = NEIGHBOURS * POSITIONS * PREV;

/// The position context of context `ctx` (as [`Geometry::walk`] gives it).
pub(super) fn position_of(ctx: usize) -> u16 {
    (ctx / PREV % POSITIONS) as u16
}

/// The side to move's mobility bucket and closable mills of position context
/// `position`, as one number below [`OWN_CONTEXTS`].
pub(super) fn own_of(position: u16) -> usize {
    let p = position as usize;
    p / MOBILITY % MOBILITY * CLOSABLE + p / (MOBILITY * MOBILITY * CLOSABLE) % CLOSABLE
}

/// Values of [`own_of`].
pub(super) const OWN_CONTEXTS: usize = MOBILITY * CLOSABLE;

/// The opponent's closable mills (up to 3) of position context `position`.
pub(super) fn opp_closable_of(position: u16) -> usize {
    position as usize / (MOBILITY * MOBILITY) % CLOSABLE
}
/// Binary decisions per context: decisive or not, then loss or not.
pub(super) const NODES: usize = 2 * CONTEXTS;
/// Jump neighbour counts' buckets: 0, 1, 2-4, 5 and more.
static JUMP_BUCKET: [u8; 256] = {
    let mut t = [3u8; 256];
    t[0] = 0;
    t[1] = 1;
    t[2] = 2;
    t[3] = 2;
    t[4] = 2;
    t
};

/// A result's unit in a count of results a byte each: `1 << (8 t)` for trit `t`
/// (0 draw, 1 win, 2 loss).
const RESULT_UNIT: [u32; 4] = [1, 1 << 8, 1 << 16, 1 << 24];

/// Mobility buckets: 0, 1, 2, 3-4, 5-6, 7-9, 10-13, 14 and more.
static MOBILITY_BUCKET: [u8; 64] = {
    let mut t = [7u8; 64];
    let mut m = 0;
    while m < 64 {
        t[m] = match m {
            0..=2 => m as u8,
            3..=4 => 3,
            5..=6 => 4,
            7..=9 => 5,
            10..=13 => 6,
            _ => 7,
        };
        m += 1;
    }
    t
};

/// What the coder of a sector's blocks needs to know: the index, the stone counts,
/// and whether each side can put a stone on any empty point (it has stones in hand,
/// or flies).
#[derive(Clone, Copy)]
pub struct Geometry {
    idx: &'static Index,
    rules: &'static Rules,
    k: u32,
    pub(super) l: u32,
    any_own: bool,
    any_opp: bool,
    pub(super) per_class: u64,
    size: u64,
    block_slots: u64,
}

impl Geometry {
    /// The geometry of the sector with `k` and `l` stones on the board and `hands`
    /// in hand (side to move first) under `rules`.
    pub fn new(rules: &'static Rules, k: u32, l: u32, hands: [u8; 2]) -> Geometry {
        let idx = Index::for_rules(rules);
        let per_class = idx.per_class(k, l);
        Geometry {
            idx,
            rules,
            k,
            l,
            any_own: rules.flies(k, hands[0]) || hands[0] > 0,
            any_opp: rules.flies(l, hands[1]) || hands[1] > 0,
            per_class,
            size: idx.size(k, l),
            block_slots: per_class * MIN_BLOCK_SLOTS.div_ceil(per_class),
        }
    }

    /// Slots per block: whole classes, at least [`MIN_BLOCK_SLOTS`].
    pub fn block_slots(&self) -> u64 {
        self.block_slots
    }

    /// Slots in the sector.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.size.div_ceil(self.block_slots) as usize
    }

    /// Slots of block `b`.
    pub fn block_range(&self, b: usize) -> std::ops::Range<u64> {
        let start = b as u64 * self.block_slots;
        start..(start + self.block_slots).min(self.size)
    }

    /// Walks block `b` in slot order: for each slot `i` (from 0 in the block) calls
    /// `code(i, context, jumps)`, which returns the slot's trit (0 draw, 1 win, 2
    /// loss), and stores it in `trits[i]`, where later contexts see it. `trits`
    /// holds the block's slots; `jumps` is the refiner's context
    /// ([`Class::earlier_jumps`]), or 0 if `JUMPS` is false (a walk that does not
    /// need it: the prior's count).
    pub fn walk<const JUMPS: bool>(
        &self,
        b: usize,
        trits: &mut [u8],
        code: impl FnMut(usize, usize, usize) -> u8,
    ) {
        self.walk_in::<JUMPS>(b, trits, &mut self.set_table(0u8), code);
    }

    /// [`Geometry::walk`] with `by_set`, a table from [`Geometry::set_table`] of
    /// any contents (a thread's, reused from block to block): the walk reads
    /// only entries it wrote itself.
    pub(super) fn walk_in<const JUMPS: bool>(
        &self,
        b: usize,
        trits: &mut [u8],
        by_set: &mut [u8],
        code: impl FnMut(usize, usize, usize) -> u8,
    ) {
        let context = |packed, c: &Class, by_set: &[u8], _| self.context(packed, c, by_set);
        self.walk_with::<JUMPS>(b, trits, by_set, context, code);
    }

    /// [`Geometry::walk_in`] where the **position context** of each slot of the
    /// block is known, `positions[i]` for slot `i` (as [`count_prior`] finds it,
    /// [`position_of`] its context): only the part that depends on the results
    /// before it is computed.
    pub(super) fn walk_positioned(
        &self,
        b: usize,
        trits: &mut [u8],
        by_set: &mut [u8],
        positions: &[u16],
        code: impl FnMut(usize, usize, usize) -> u8,
    ) {
        debug_assert_eq!(positions.len(), trits.len());
        let context = |packed, c: &Class, by_set: &[u8], i: usize| {
            c.neighbours(packed, by_set) * POSITIONS + positions[i] as usize
        };
        self.walk_with::<true>(b, trits, by_set, context, code);
    }

    /// The walk of [`Geometry::walk_in`], each slot's context but the previous
    /// result's `context(packed, class, by_set, i)`.
    #[inline]
    fn walk_with<const JUMPS: bool>(
        &self,
        b: usize,
        trits: &mut [u8],
        by_set: &mut [u8],
        context: impl Fn(Bits, &Class, &[u8], usize) -> usize,
        mut code: impl FnMut(usize, usize, usize) -> u8,
    ) {
        let range = self.block_range(b);
        debug_assert_eq!(trits.len() as u64, range.end - range.start);
        debug_assert_eq!(by_set.len(), 1 << (self.rules.points() - self.k as usize));
        let mut prev = PREV - 1;
        let mut i = 0;
        // The results of the class's slots so far by their opponent stones (as a
        // subset of the free points): a neighbour's is one look-up away. Entries
        // of earlier classes (and blocks) are stale, but a slot's earlier
        // neighbours and jump neighbours are earlier slots of its own class.
        for class in range.start / self.per_class..range.end / self.per_class {
            let c = self.class(class);
            let mut packed = first_subset(self.l);
            for r in 0..self.per_class {
                let ctx = context(packed, &c, by_set, i) * PREV + prev;
                let jumps = if JUMPS {
                    c.earlier_jumps(packed, by_set)
                } else {
                    0
                };
                let t = code(i, ctx, jumps);
                trits[i] = t;
                by_set[packed as usize] = t;
                prev = t as usize;
                i += 1;
                if r + 1 < self.per_class {
                    packed = next_subset(packed);
                }
            }
        }
    }

    /// The position contexts of block `b`'s slots, found by a walk of their own
    /// (as [`count_prior`] finds them while it counts).
    #[cfg(test)]
    pub(super) fn positions(&self, b: usize) -> Vec<u16> {
        let range = self.block_range(b);
        let mut trits = vec![0u8; (range.end - range.start) as usize];
        let mut positions = Vec::with_capacity(trits.len());
        self.walk::<false>(b, &mut trits, |i, ctx, _| {
            positions.push(position_of(ctx));
            (i % 3) as u8
        });
        positions
    }

    /// The fewest blocks a thread counts into one table when it counts a prior:
    /// a few batches a thread (the counts add up alike however the blocks are
    /// split).
    pub(super) fn prior_batch(&self) -> usize {
        self.blocks()
            .div_ceil(4 * rayon::current_num_threads())
            .max(1)
    }

    /// A table with an entry for every subset of a class's free points.
    pub(super) fn set_table<T: Copy>(&self, fill: T) -> Vec<T> {
        vec![fill; 1 << (self.rules.points() - self.k as usize)]
    }

    /// What the walks need of class `class`, once for all its slots.
    pub(super) fn class(&self, class: u64) -> Class {
        let (own, _) = self.idx.class(self.k, class);
        Class::new(self.rules, own, self.any_own, self.any_opp)
    }

    /// The position contexts of block `b`'s slots, `positions[i]` for slot `i`
    /// (the part of the context [`Geometry::context`] finds that depends on the
    /// position alone), without the walk's results.
    fn block_positions(&self, b: usize, positions: &mut [u16]) {
        let range = self.block_range(b);
        debug_assert_eq!(positions.len() as u64, range.end - range.start);
        let mut slots = positions.iter_mut();
        for class in range.start / self.per_class..range.end / self.per_class {
            let c = self.class(class);
            let mut packed = first_subset(self.l);
            for r in 0..self.per_class {
                *slots.next().expect("a slot of the block") = self.position(packed, &c) as u16;
                if r + 1 < self.per_class {
                    packed = next_subset(packed);
                }
            }
        }
    }

    /// The position context of the slot of class `c` whose opponent stones are
    /// `packed` (as [`position_of`] finds it in [`Geometry::context`]).
    #[inline]
    fn position(&self, packed: Bits, c: &Class) -> usize {
        let (mut sums, mut mills) = (0, 0);
        let mut stones = packed;
        while stones != 0 {
            let a = stones.trailing_zeros();
            stones &= stones - 1;
            let p = &c.points[a as usize];
            sums += p.sums + ((p.adjacent & !packed).count_ones() << 16);
            mills += p.mills;
        }
        c.position_of(packed, &Tally { sums, mills })
    }

    /// The context of the slot of class `c` whose opponent stones are `packed`,
    /// without the previous slot's result; `by_set` the results of the class's
    /// earlier slots by their opponent stones.
    #[inline]
    fn context(&self, packed: Bits, c: &Class, by_set: &[u8]) -> usize {
        // One byte per result (draw, win, loss) counts the neighbours, in a
        // register: at most 4 neighbours a stone, so a byte never overflows.
        // One pass over the opponent's stones finds the earlier neighbours and
        // tallies (as [`Class::earlier_neighbours`] and [`Class::tally`]).
        let mut near = 0u32;
        let (mut sums, mut mills) = (0, 0);
        let mut stones = packed;
        while stones != 0 {
            let a = stones.trailing_zeros();
            stones &= stones - 1;
            let p = &c.points[a as usize];
            sums += p.sums + ((p.adjacent & !packed).count_ones() << 16);
            mills += p.mills;
            let mut to = p.lower & !packed;
            while to != 0 {
                let b = to.trailing_zeros();
                to &= to - 1;
                near += RESULT_UNIT[by_set[(packed ^ (1 << a) ^ (1 << b)) as usize] as usize & 3];
            }
        }
        let count = |t: u32| (near >> (8 * t) & 0xff).min(2) as usize;
        let neighbours = 9 * count(1) + 3 * count(0) + count(2);
        neighbours * POSITIONS + c.position_of(packed, &Tally { sums, mills })
    }
}

/// What the walks need of a class (the slots with the same stones of the side to
/// move), computed once for its slots. The opponent's stones are a subset of the
/// class's free points, written by their indices among the free points (a
/// *packed* set), so that everything a context needs is a sum over those stones
/// of what each point adds, in a few registers.
pub(super) struct Class {
    /// Per free point, by its index among the free points.
    points: [FreePoint; 32],
    /// Slides of the side to move's stones to free points (each free point it
    /// slides to counted once per stone).
    own_slides: u32,
    /// The holes of the side to move's closable mills as far as its own stones
    /// decide: the third point of each mill holding two of its stones, where it
    /// can put a stone (in hand, flying, or a stone of its own outside the mill
    /// next to it). A hole counts while it is empty.
    own_holes: u32,
    /// The mills without a stone of the side to move (packed), the only ones the
    /// opponent may close: mill `i` has lane `i` in [`Tally::mills`].
    opp_mills: Vec<Bits>,
    /// Whether the opponent can put a stone on any empty point.
    any_opp: bool,
}

/// What a free point of a class knows, by its index among the free points.
#[derive(Clone, Copy, Default)]
struct FreePoint {
    /// The free points adjacent to it.
    adjacent: Bits,
    /// Those below it.
    lower: Bits,
    /// What an opponent stone on it adds to [`Tally::sums`]: the side to move's
    /// stones next to it (slides they lose), and the side to move's holes on it
    /// (taken), a byte each.
    sums: u32,
    /// What an opponent stone on it adds to [`Tally::mills`]: 1 in the lane of
    /// each of [`Class::opp_mills`] through it.
    mills: u64,
}

/// Sums over the opponent's stones of what each point adds.
pub(super) struct Tally {
    /// A byte each: the side to move's slides its stones block, the side to
    /// move's holes they take, their own slides to empty points.
    sums: u32,
    /// Two bits per mill of [`Class::opp_mills`]: how many of its points they hold.
    mills: u64,
}

/// Lanes of [`Tally::mills`] (two bits each).
const MILL_LANES: u64 = 0x5555_5555_5555_5555;

impl Tally {
    fn own_blocked(&self) -> u32 {
        self.sums & 0xff
    }

    fn holes_taken(&self) -> u32 {
        self.sums >> 8 & 0xff
    }

    fn opp_slides(&self) -> u32 {
        self.sums >> 16 & 0xff
    }
}

impl Class {
    /// The class of the side to move's stones `own` under `rules`; `any_own` and
    /// `any_opp`: whether either side can put a stone on any empty point.
    fn new(rules: &Rules, own: Bits, any_own: bool, any_opp: bool) -> Class {
        let free = rules.all() & !own;
        let adj = &rules.adjacency;
        let packed = |set: Bits| pext(set, free);
        let own_holes: Vec<Bits> = rules
            .mills
            .iter()
            .filter(|&&m| (m & own).count_ones() == 2)
            .filter(|&&m| {
                let h = (m & !own).trailing_zeros() as usize;
                any_own || adj[h] & own & !m != 0
            })
            .map(|&m| m & !own)
            .collect();
        let opp_mills: Vec<Bits> = rules
            .mills
            .iter()
            .copied()
            .filter(|&m| m & own == 0)
            .collect();
        assert!(
            opp_mills.len() <= 32,
            "at most 32 mills fit the lanes of a tally"
        );
        let mut free_points = [FreePoint::default(); 32];
        for (a, p) in points(free).enumerate() {
            let bit = 1 << p;
            let own_next = (adj[p as usize] & own).count_ones();
            let holes = own_holes.iter().filter(|&&h| h == bit).count() as u32;
            free_points[a] = FreePoint {
                adjacent: packed(adj[p as usize] & free),
                lower: packed(adj[p as usize] & free & (bit - 1)),
                sums: own_next | holes << 8,
                mills: opp_mills
                    .iter()
                    .enumerate()
                    .filter(|&(_, m)| m & bit != 0)
                    .fold(0, |lanes, (i, _)| lanes | 1 << (2 * i)),
            };
        }
        Class {
            points: free_points,
            own_slides: points(own)
                .map(|p| (adj[p as usize] & free).count_ones())
                .sum(),
            own_holes: own_holes.len() as u32,
            opp_mills: opp_mills.iter().map(|&m| packed(m)).collect(),
            any_opp,
        }
    }

    /// The neighbour context of the slot whose opponent stones are `packed`
    /// (as in [`Geometry::context`]): its earlier neighbours' results, `9 w + 3
    /// d + l`, each counted up to 2; `by_set` the results of the class's
    /// earlier slots.
    #[inline]
    fn neighbours(&self, packed: Bits, by_set: &[u8]) -> usize {
        let mut near = 0u32;
        self.earlier_neighbours(packed, |set| {
            near += RESULT_UNIT[by_set[set as usize] as usize & 3];
        });
        let count = |t: u32| (near >> (8 * t) & 0xff).min(2) as usize;
        9 * count(1) + 3 * count(0) + count(2)
    }

    /// Calls `f(set)` with each **earlier neighbour** of the slot whose opponent
    /// stones are `packed`: one stone slid to an adjacent empty point below it. In
    /// colex order a lower point gives an earlier slot of the class; a higher one
    /// a later slot, not coded yet.
    #[inline]
    pub(super) fn earlier_neighbours(&self, packed: Bits, mut f: impl FnMut(Bits)) {
        let mut stones = packed;
        while stones != 0 {
            let a = stones.trailing_zeros();
            stones &= stones - 1;
            let mut to = self.points[a as usize].lower & !packed;
            while to != 0 {
                let b = to.trailing_zeros();
                to &= to - 1;
                f(packed ^ (1 << a) ^ (1 << b));
            }
        }
    }

    /// The **jump context** of the slot whose opponent stones are `packed`: the
    /// results of its earlier *jump* neighbours, the sets with the highest stone
    /// of `packed` moved to any lower free point (the slots coded last before
    /// it in colex order), counted per result, each count bucketed by
    /// [`JUMP_BUCKET`], as `16 draws + 4 wins + losses`; `by_set` the results of
    /// the class's earlier slots.
    #[inline]
    pub(super) fn earlier_jumps(&self, packed: Bits, by_set: &[u8]) -> usize {
        // A byte per result, as in `Geometry::context`: at most 31 jumps.
        let mut near = 0u32;
        if packed != 0 {
            let top = 1 << (Bits::BITS - 1 - packed.leading_zeros());
            let mut to = (top - 1) & !packed;
            while to != 0 {
                let b = to & to.wrapping_neg();
                to &= to - 1;
                near += RESULT_UNIT[by_set[(packed ^ top ^ b) as usize] as usize & 3];
            }
        }
        let bucket = |t: u32| JUMP_BUCKET[(near >> (8 * t) & 0xff) as usize] as usize;
        (bucket(0) * 4 + bucket(1)) * 4 + bucket(2)
    }

    /// The sums over the opponent's stones `packed`.
    #[inline]
    pub(super) fn tally(&self, packed: Bits) -> Tally {
        let (mut sums, mut mills) = (0, 0);
        let mut stones = packed;
        while stones != 0 {
            let p = &self.points[stones.trailing_zeros() as usize];
            stones &= stones - 1;
            sums += p.sums + ((p.adjacent & !packed).count_ones() << 16);
            mills += p.mills;
        }
        Tally { sums, mills }
    }

    /// The position context of the slot whose opponent stones are `packed`, from
    /// their tally `t`: the closable mills of both sides and their mobilities.
    #[inline]
    pub(super) fn position_of(&self, packed: Bits, t: &Tally) -> usize {
        let own_closable = (self.own_holes - t.holes_taken()).min(CLOSABLE as u32 - 1) as usize;
        let opp_closable = self.opp_closable(packed, t);
        let own_mobility = MOBILITY_BUCKET[(self.own_slides - t.own_blocked()).min(63) as usize];
        let opp_mobility = MOBILITY_BUCKET[t.opp_slides().min(63) as usize];
        ((own_closable * CLOSABLE + opp_closable) * MOBILITY + own_mobility as usize) * MOBILITY
            + opp_mobility as usize
    }

    /// The opponent's closable mills (up to 3) with its stones `packed` (tallied
    /// in `t`): mills with two of its stones and an empty third point that it can
    /// fill with its next ply (a stone in hand, flying, or one of its stones
    /// outside the mill next to the point).
    #[inline]
    pub(super) fn opp_closable(&self, packed: Bits, t: &Tally) -> usize {
        // Lanes holding 2 (binary 10).
        let mut two = t.mills >> 1 & !t.mills & MILL_LANES;
        let mut n = 0;
        while two != 0 {
            let m = self.opp_mills[two.trailing_zeros() as usize / 2];
            two &= two - 1;
            let hole = (m & !packed).trailing_zeros() as usize;
            n += (self.any_opp || self.points[hole].adjacent & packed & !m != 0) as usize;
        }
        n.min(CLOSABLE - 1)
    }
}

/// Points of the logistic curve the refiner is built on: `4096 / (1 + e^-x)` for
/// `x = -8, -7.5, ..., 8`, rounded.
const SQUASH_POINTS: [u16; 33] = [
    1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546, 2048, 2550, 2994, 3349,
    3608, 3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095,
];

/// The logistic function in integers: `4096 / (1 + e^(-d / 256))` for `d` in
/// `-2047..=2047`, interpolated between [`SQUASH_POINTS`].
const fn squash(d: i32) -> i32 {
    let i = ((d + 2048) >> 7) as usize;
    let w = (d + 2048) & 127;
    (SQUASH_POINTS[i] as i32 * (128 - w) + SQUASH_POINTS[i + 1] as i32 * w + 64) >> 7
}

/// `STRETCH[p]`, the inverse of [`squash`] for a 12-bit probability `p`: the least
/// `d` with `squash(d) >= p` (2047 for the few above the curve's end).
static STRETCH: [i16; 4096] = {
    let mut t = [2047i16; 4096];
    let mut next = 0;
    let mut d = -2047;
    while d <= 2047 {
        let v = squash(d) as usize;
        while next <= v {
            t[next] = d as i16;
            next += 1;
        }
        d += 1;
    }
    t
};

/// Entries of a refiner row: the stretch domain in steps of 128.
const BUCKETS: usize = 33;

/// A second stage of a model's probabilities (an APM): per row, a curve mapping
/// the model's probability to a better one, learnt as the block is coded. Every
/// block starts from the identity. The WDL model's rows are its jump contexts
/// ([`Class::earlier_jumps`]) times the node kinds (decisive, loss); the depth
/// model's are the side to move's mobility and closable mills times the node
/// of its trees ([`super::depth_model`]).
#[derive(Clone)]
pub(super) struct Refiner {
    /// Rows of [`BUCKETS`] probabilities of a 0 bit (2^-16 units).
    rows: Vec<u16>,
    /// Quarters of the coded probability that are the model's (the rest is the
    /// curve's).
    model_quarters: u32,
}

/// A refined probability and where the refiner read it, to learn from its bit.
#[derive(Clone, Copy)]
pub(super) struct Refined {
    /// The probability of a 0 bit to code with (2^-16 units).
    pub(super) p: u32,
    at: usize,
    w: u32,
}

impl Refiner {
    /// `rows` curves, each the identity; the coded probability is
    /// `model_quarters` quarters the model's.
    pub(super) fn new(rows: usize, model_quarters: u32) -> Refiner {
        let row = SQUASH_POINTS.map(|p| p << 4);
        Refiner {
            rows: row.repeat(rows),
            model_quarters,
        }
    }

    /// The WDL model's refiner: its jump contexts times two node kinds, a quarter
    /// the model's probability.
    fn wdl() -> Refiner {
        Refiner::new(JUMP_CONTEXTS * 2, 1)
    }

    /// The probability `p` (of a 0, 2^-16 units) refined by row `row`: a share
    /// the model's, the rest the curve's at `p`'s stretch, interpolated.
    #[inline]
    pub(super) fn refine(&self, p: u32, row: usize) -> Refined {
        let s = (STRETCH[(p >> 4) as usize] as i32 + 2048) as u32;
        let (lo, w) = ((s >> 7) as usize, s & 127);
        let at = row * BUCKETS + lo;
        let q = (self.rows[at] as u32 * (128 - w) + self.rows[at + 1] as u32 * w) >> 7;
        let m = self.model_quarters;
        Refined {
            p: ((m * p + (4 - m) * q) >> 2).clamp(P_MIN, P_MAX),
            at,
            w,
        }
    }

    /// Moves the two entries `r` read toward `bit`, each by an eighth of the way
    /// times its share of the interpolation.
    #[inline]
    pub(super) fn learn(&mut self, r: Refined, bit: bool) {
        let target = if bit { 0 } else { ONE as i32 - 1 };
        for (i, share) in [(r.at, 128 - r.w), (r.at + 1, r.w)] {
            let e = self.rows[i] as i32;
            self.rows[i] = (e + (((target - e) * share as i32) >> 10)) as u16;
        }
    }
}

/// The WDL coder's state over a block: the context model (a thread's, see
/// [`Coding`]) and its refiner.
struct WdlCoder<'a> {
    model: &'a mut Model,
    refiner: Refiner,
}

impl WdlCoder<'_> {
    /// The refined probability of node kind `node` (0 decisive, 1 loss) of
    /// context `ctx` in jump context `jumps`.
    #[inline]
    fn p(&self, ctx: usize, jumps: usize, node: usize) -> Refined {
        let p = self.model.nodes[2 * ctx + node] & 0xFFFF;
        self.refiner.refine(p, jumps * 2 + node)
    }

    /// Learns the bit of node kind `node` of context `ctx`, coded with `r`.
    #[inline]
    fn learn(&mut self, ctx: usize, node: usize, r: Refined, bit: bool) {
        self.model.adapt(2 * ctx + node, bit);
        self.refiner.learn(r, bit);
    }

    /// Decodes the trit of a slot of context `ctx` and jump context `jumps`
    /// from `dec`, and learns it.
    #[inline]
    fn decode_trit(&mut self, dec: &mut Decoder, ctx: usize, jumps: usize) -> u8 {
        let r = self.p(ctx, jumps, 0);
        let decisive = dec.bit(r.p);
        self.learn(ctx, 0, r, decisive);
        if !decisive {
            return 0;
        }
        let r = self.p(ctx, jumps, 1);
        let loss = dec.bit(r.p);
        self.learn(ctx, 1, r, loss);
        1 + loss as u8
    }

    /// The trit among `allowed` (bit `t` set: trit `t` allowed; not 0) that is
    /// likeliest (the lowest trit among equals) under the refined probabilities
    /// it is coded with: `draw` of a draw, `win` of a win given a decisive result.
    #[inline]
    fn likeliest(draw: u32, win: u32, allowed: u8) -> u8 {
        if allowed.is_power_of_two() {
            return allowed.trailing_zeros() as u8;
        }
        // In units of 2^-32: draw, win, loss.
        let p = [
            (draw as u64) << 16,
            (ONE - draw) as u64 * win as u64,
            (ONE - draw) as u64 * (ONE - win) as u64,
        ];
        (0..3u8)
            .filter(|&t| allowed >> t & 1 == 1)
            .max_by_key(|&t| (p[t as usize], 2 - t))
            .expect("a slot allows some trit")
    }
}

/// What a thread keeps from one block to the next while it codes the blocks of
/// a sector that start from one model: a working copy of that model, which every
/// block adapts and which is put back as it was after the block (the nodes of
/// the contexts the block saw, not all 2^18), the walk's set table, and the
/// contexts of the block coded last.
pub struct Coding<'m> {
    start: &'m Model,
    model: Model,
    by_set: Vec<u8>,
    /// Each slot's context and jump context, `context << 6 | jumps`.
    contexts: Vec<u32>,
}

impl<'m> Coding<'m> {
    /// A thread's coding of the blocks of geometry `g` that start from `model`.
    pub fn new(g: &Geometry, model: &'m Model) -> Coding<'m> {
        Coding {
            start: model,
            model: model.clone(),
            by_set: g.set_table(0),
            contexts: Vec::new(),
        }
    }

    /// Puts back the working model's nodes of the contexts recorded.
    fn restore(&mut self) {
        for &c in &self.contexts {
            let at = 2 * (c >> 6) as usize;
            self.model.nodes[at..at + 2].copy_from_slice(&self.start.nodes[at..at + 2]);
        }
        debug_assert!(self.model.nodes == self.start.nodes);
    }

    /// Codes block `b` where slot `i` may store any trit `t` with bit `t` of
    /// `allowed[i]` set (a don't-care allows several): the allowed trit the
    /// model finds likeliest there, so that a free slot costs little and
    /// teaches the model what its neighbours look like. Returns the block's
    /// bytes and the stored trits. `positions`: the block's slots' position
    /// contexts ([`count_prior`]).
    pub fn encode_choosing(
        &mut self,
        g: &Geometry,
        b: usize,
        allowed: &[u8],
        positions: &[u16],
    ) -> (Vec<u8>, Vec<u8>) {
        let mut coder = WdlCoder {
            model: &mut self.model,
            refiner: Refiner::wdl(),
        };
        let contexts = &mut self.contexts;
        contexts.clear();
        let mut enc = Encoder::new();
        let mut stored = vec![0u8; allowed.len()];
        g.walk_positioned(
            b,
            &mut stored,
            &mut self.by_set,
            positions,
            |i, ctx, jumps| {
                contexts.push((ctx as u32) << 6 | jumps as u32);
                // The two nodes' model entries and refiner rows are apart, so learning
                // the first bit leaves the second's probability as it was before: a
                // slot with one allowed trit reads it only if it codes it.
                let a = allowed[i];
                let first = coder.p(ctx, jumps, 0);
                let (t, second) = if a.is_power_of_two() {
                    (a.trailing_zeros() as u8, None)
                } else {
                    let second = coder.p(ctx, jumps, 1);
                    (WdlCoder::likeliest(first.p, second.p, a), Some(second))
                };
                enc.bit(first.p, t != 0);
                coder.learn(ctx, 0, first, t != 0);
                if t != 0 {
                    let second = second.unwrap_or_else(|| coder.p(ctx, jumps, 1));
                    enc.bit(second.p, t == 2);
                    coder.learn(ctx, 1, second, t == 2);
                }
                t
            },
        );
        self.restore();
        (enc.finish(), stored)
    }

    /// [`Coding::encode_choosing`], then the block's bytes decoded again, every
    /// slot, and compared with the trits stored: `None` if any differs (a fault
    /// of the coder). The decoding walks the contexts the coding recorded: a
    /// context is a function of the position and of the trits before it in the
    /// block, the same in both walks while the trits decoded are those coded,
    /// so it is the decoding [`decode_block`] does without computing the
    /// contexts a second time. It starts from the model put back as it was, so
    /// a fault in putting it back fails the check too.
    pub fn encode_checked(
        &mut self,
        g: &Geometry,
        b: usize,
        allowed: &[u8],
        positions: &[u16],
    ) -> Option<(Vec<u8>, Vec<u8>)> {
        let (bytes, stored) = self.encode_choosing(g, b, allowed, positions);
        let mut coder = WdlCoder {
            model: &mut self.model,
            refiner: Refiner::wdl(),
        };
        let mut dec = Decoder::new(&bytes);
        let same =
            self.contexts.iter().zip(&stored).all(|(&c, &t)| {
                coder.decode_trit(&mut dec, (c >> 6) as usize, (c & 63) as usize) == t
            });
        // The decoding may stop early, at a slot that differs: the contexts
        // after it did not adapt, and are put back as they were.
        self.restore();
        same.then_some((bytes, stored))
    }
}

/// Codes block `b`, whose trits (0 draw, 1 win, 2 loss) are `trits`, starting from
/// `model`. Returns the block's bytes.
#[cfg(test)]
pub fn encode_block(g: &Geometry, b: usize, trits: &[u8], model: &Model) -> Vec<u8> {
    let allowed: Vec<u8> = trits.iter().map(|&t| 1 << t).collect();
    encode_block_choosing(g, b, &allowed, model).0
}

/// [`Coding::encode_choosing`] of one block, starting from `model`.
#[cfg(test)]
pub fn encode_block_choosing(
    g: &Geometry,
    b: usize,
    allowed: &[u8],
    model: &Model,
) -> (Vec<u8>, Vec<u8>) {
    Coding::new(g, model).encode_choosing(g, b, allowed, &g.positions(b))
}

/// Decodes block `b` from `src`, starting from `model`: its trits, one per slot.
pub fn decode_block(g: &Geometry, b: usize, src: &[u8], model: &Model) -> Vec<u8> {
    let mut model = model.clone();
    let mut coder = WdlCoder {
        model: &mut model,
        refiner: Refiner::wdl(),
    };
    let mut dec = Decoder::new(src);
    let range = g.block_range(b);
    let mut trits = vec![0u8; (range.end - range.start) as usize];
    g.walk::<true>(b, &mut trits, |_, ctx, jumps| {
        coder.decode_trit(&mut dec, ctx, jumps)
    });
    trits
}

/// Each slot's position context (as [`count_prior`] gives them), without a
/// prior.
pub(super) fn positions(g: &Geometry) -> Vec<u16> {
    use rayon::prelude::*;
    let mut positions = vec![0u16; g.size() as usize];
    positions
        .par_chunks_mut(g.block_slots() as usize)
        .enumerate()
        .for_each(|(b, p)| g.block_positions(b, p));
    positions
}

/// The blocks a prior is counted over: one in this many ([`count_prior`]).
pub const PRIOR_STRIDE: usize = 4;

/// The prior of a sector whose trits are `trit(slot)`: each node's probability of a
/// 0 bit over the sector's blocks `0, PRIOR_STRIDE, 2 PRIOR_STRIDE, ...` (a
/// sample: the others' contexts are not computed), 0 where a context was never
/// seen there; and each slot's position context (2 bytes a slot), which the
/// coding of the blocks ([`Coding`]) and the depth model's walk take instead of
/// computing it again.
pub fn count_prior(g: &Geometry, trit: impl Fn(u64) -> u8 + Sync) -> (Vec<u16>, Vec<u16>) {
    use rayon::prelude::*;
    let mut positions = vec![0u16; g.size() as usize];
    // One table of counts (and one set table) per batch of blocks a thread
    // takes, not per block: a table holds a count for each of the 2^18 nodes,
    // where a block has some 2^15 slots.
    let counts = positions
        .par_chunks_mut(g.block_slots() as usize)
        .enumerate()
        .with_min_len(g.prior_batch())
        .fold(
            || (vec![[0u32; 2]; NODES], g.set_table(0u8)),
            |(mut counts, mut by_set), (b, positions)| {
                if b % PRIOR_STRIDE != 0 {
                    g.block_positions(b, positions);
                    return (counts, by_set);
                }
                let range = g.block_range(b);
                let truth: Vec<u8> = range.clone().map(&trit).collect();
                let mut seen = vec![0u8; truth.len()];
                g.walk_in::<false>(b, &mut seen, &mut by_set, |i, ctx, _| {
                    positions[i] = position_of(ctx);
                    let t = truth[i];
                    counts[2 * ctx][(t != 0) as usize] += 1;
                    if t != 0 {
                        counts[2 * ctx + 1][(t == 2) as usize] += 1;
                    }
                    t
                });
                (counts, by_set)
            },
        )
        .map(|(counts, _)| counts)
        .reduce(
            || vec![[0u32; 2]; NODES],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(&b) {
                    x[0] += y[0];
                    x[1] += y[1];
                }
                a
            },
        );
    (prior_of_counts(&counts), positions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::SplitMix;
    use crate::table::format::coder::load_prior_of;

    #[test]
    fn sectors_without_opponent_stones_or_own_stones_round_trip() {
        let rules = Rules::with_stones(5);
        for (k, l, hands) in [
            (1, 0, [4, 5]),
            (0, 1, [5, 4]),
            (0, 0, [5, 5]),
            (5, 0, [0, 0]),
        ] {
            let g = Geometry::new(rules, k, l, hands);
            let mut rng = SplitMix(k as u64 * 7 + l as u64);
            let trits: Vec<u8> = (0..g.size()).map(|_| (rng.next_u64() % 3) as u8).collect();
            let (prior, _) = count_prior(&g, |s| trits[s as usize]);
            let model = Model::from_prior(&prior);
            for b in 0..g.blocks() {
                let r = g.block_range(b);
                let block = &trits[r.start as usize..r.end as usize];
                let coded = encode_block(&g, b, block, &model);
                assert_eq!(decode_block(&g, b, &coded, &model), block, "{k}-{l}");
            }
        }
    }

    #[test]
    fn checked_blocks_are_the_chosen_ones_and_decode_to_their_trits() {
        let rules = Rules::with_stones(4);
        let g = Geometry::new(rules, 3, 3, [0, 0]);
        let mut rng = SplitMix(3);
        // Some slots fixed, some free among two or three results.
        let allowed: Vec<u8> = (0..g.size())
            .map(|_| [1, 2, 4, 3, 6, 7][(rng.next_u64() % 6) as usize])
            .collect();
        let (prior, positions) = count_prior(&g, |s| allowed[s as usize].trailing_zeros() as u8);
        let model = Model::from_prior(&prior);
        // One thread's coding of every block, in reverse order: each block as if
        // coded first.
        let mut coding = Coding::new(&g, &model);
        assert!(g.blocks() > 1);
        for b in (0..g.blocks()).rev() {
            let r = g.block_range(b);
            let a = &allowed[r.start as usize..r.end as usize];
            let p = &positions[r.start as usize..r.end as usize];
            assert_eq!(p, g.positions(b));
            let (bytes, stored) = coding.encode_checked(&g, b, a, p).unwrap();
            assert!(coding.model.nodes == model.nodes);
            assert_eq!(
                (bytes.clone(), stored.clone()),
                encode_block_choosing(&g, b, a, &model)
            );
            assert_eq!(decode_block(&g, b, &bytes, &model), stored);
            assert!(stored.iter().zip(a).all(|(&t, &m)| m >> t & 1 == 1));
        }
    }

    #[test]
    fn blocks_round_trip_and_skew_costs_less() {
        let rules = Rules::with_stones(4);
        let g = Geometry::new(rules, 3, 3, [0, 0]);
        assert!(g.block_slots() >= MIN_BLOCK_SLOTS);
        assert_eq!(g.block_slots() % g.per_class, 0);
        let mut rng = SplitMix(11);
        let trits: Vec<u8> = (0..g.size())
            .map(|s| match rng.next_u64() % 10 {
                0 => 1,
                1 => 2,
                _ => (s % 7 == 0) as u8,
            })
            .collect();
        let (prior, _) = count_prior(&g, |s| trits[s as usize]);
        let prior = load_prior_of(&store_prior(&prior).unwrap(), NODES).unwrap();
        let model = Model::from_prior(&prior);
        let mut bytes = 0;
        for b in 0..g.blocks() {
            let r = g.block_range(b);
            let block = &trits[r.start as usize..r.end as usize];
            let coded = encode_block(&g, b, block, &model);
            bytes += coded.len();
            assert_eq!(decode_block(&g, b, &coded, &model), block);
        }
        // Order 0 entropy of the source is about 1.1 bits; the model spends less
        // than packed trits' 1.6.
        assert!((bytes * 8) as f64 / (g.size() as f64) < 1.4);
    }
}
