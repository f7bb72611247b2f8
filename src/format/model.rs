//! Model coding of the WDL section ([`super::Encoding::Model`], format version 3):
//! each slot's result is coded with an adaptive binary arithmetic coder whose
//! probabilities depend on a *context* the decoder computes from the position and
//! from the results it has decoded already, instead of zstd over packed trits.
//!
//! A block holds whole *classes* (the slots with the same stones of the side to
//! move, [`crate::index`]), at least [`MIN_BLOCK_SLOTS`] slots, and is coded in slot
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

use crate::index::{Index, first_subset, next_subset, pdep};
use crate::position::points;
use crate::rules::{Bits, Rules};

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
/// Number of contexts.
pub const CONTEXTS: usize = NEIGHBOURS * CLOSABLE * CLOSABLE * MOBILITY * MOBILITY * PREV;
/// Binary decisions per context: decisive or not, then loss or not.
pub(super) const NODES: usize = 2 * CONTEXTS;
/// Probabilities are of a bit being 0, in units of 2^-16.
const ONE: u32 = 1 << 16;
/// The least and greatest probability a node takes.
const P_MIN: u32 = 48;
const P_MAX: u32 = ONE - P_MIN;
/// A node's adaptation count stops here: its rate stays `1 / (LIMIT + 1.5)`.
const LIMIT: u32 = 255;
/// The count a node whose context the prior saw starts with.
const PRIOR_COUNT: u32 = 12;
/// The zstd level of the stored prior.
const PRIOR_LEVEL: i32 = 19;

/// `RATE[n] = 2^16 / (n + 1.5)`: the adaptation step of a node seen `n` times.
static RATE: [u32; LIMIT as usize + 1] = {
    let mut t = [0u32; LIMIT as usize + 1];
    let mut n = 0;
    while n <= LIMIT as usize {
        t[n] = (2 * ONE) / (2 * n as u32 + 3);
        n += 1;
    }
    t
};

/// `BINOM[x][i]` = C(x, i), for the colex ranks of neighbour sets.
static BINOM: [[i64; 34]; 33] = {
    let mut t = [[0i64; 34]; 33];
    let mut x = 0;
    while x < 33 {
        t[x][0] = 1;
        let mut i = 1;
        while i <= x {
            t[x][i] = t[x - 1][i - 1] + t[x - 1][i];
            i += 1;
        }
        x += 1;
    }
    t
};

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
    /// `code(i, context)`, which returns the slot's trit (0 draw, 1 win, 2 loss), and
    /// stores it in `trits[i]`, where later contexts see it. `trits` holds the
    /// block's slots.
    pub fn walk(&self, b: usize, trits: &mut [u8], mut code: impl FnMut(usize, usize) -> u8) {
        let range = self.block_range(b);
        debug_assert_eq!(trits.len() as u64, range.end - range.start);
        let mut prev = PREV - 1;
        let mut i = 0;
        for class in range.start / self.per_class..range.end / self.per_class {
            let c = self.class(class);
            let base = i;
            let mut packed = first_subset(self.l);
            for r in 0..self.per_class {
                let opp = pdep(packed, c.free);
                let slot = Slot {
                    r,
                    packed,
                    opp,
                    own: c.own,
                };
                let ctx = self.context(&slot, &c, &trits[base..i]) * PREV + prev;
                let t = code(i, ctx);
                trits[i] = t;
                prev = t as usize;
                i += 1;
                if r + 1 < self.per_class {
                    packed = next_subset(packed);
                }
            }
        }
    }

    /// What the walks need of class `class`, once for all its slots.
    pub(super) fn class(&self, class: u64) -> Class {
        let (own, _) = self.idx.class(self.k, class);
        let free = self.rules.all() & !own;
        Class {
            own,
            free,
            cidx: compressed_index(free),
            holes: self.own_holes(own),
            // A mill with a stone of the side to move is never the opponent's to
            // close.
            opp_mills: self
                .rules
                .mills
                .iter()
                .copied()
                .filter(|&m| m & own == 0)
                .collect(),
        }
    }

    /// The holes of the side to move's closable mills as far as its own stones
    /// decide: the third point of each mill holding two of `own`'s stones, where the
    /// side can put a stone (in hand, flying, or a stone of its own outside the
    /// mill next to it). A hole counts while it is empty.
    fn own_holes(&self, own: Bits) -> Vec<Bits> {
        let adj = &self.rules.adjacency;
        self.rules
            .mills
            .iter()
            .filter(|&&m| (m & own).count_ones() == 2)
            .filter(|&&m| {
                let h = (m & !own).trailing_zeros() as usize;
                self.any_own || adj[h] & own & !m != 0
            })
            .map(|&m| m & !own)
            .collect()
    }

    /// Calls `f(rank)` with the rank in the class of each **earlier neighbour** of
    /// `slot`: one opponent stone slid to an adjacent empty point that is lower
    /// (which gives a lower colex rank: an earlier slot; higher points give later
    /// slots, not decoded yet). `cidx` is the slot's [`Class::cidx`].
    ///
    /// A rank is found from the slot's own: the colex rank of a set is
    /// `sum C(s_i, i + 1)` over its elements `s_0 < s_1 < ...` (indices among the
    /// free points), and moving element `s_j = a` down to `b` gives `b` index `t`
    /// (the elements below it), raises the index of the elements between by one,
    /// and leaves the others.
    #[inline]
    pub(super) fn earlier_neighbours(
        &self,
        slot: &Slot,
        cidx: &[u8; 32],
        mut f: impl FnMut(usize),
    ) {
        let adj = &self.rules.adjacency;
        let empty = self.rules.all() & !(slot.own | slot.opp);
        // `raise[i]`: what raising the indices of elements `0..i` by one adds.
        let mut raise = [0i64; 33];
        let mut x = slot.packed;
        let mut i = 0;
        while x != 0 {
            let s = x.trailing_zeros() as usize;
            raise[i + 1] = raise[i] + BINOM[s][i + 2] - BINOM[s][i + 1];
            x &= x - 1;
            i += 1;
        }
        let below = |c: u8| (slot.packed & ((1 << c) - 1)).count_ones() as usize;
        for p in points(slot.opp) {
            let a = cidx[p as usize];
            let j = below(a);
            let without = slot.r as i64 - BINOM[a as usize][j + 1];
            for q in points(adj[p as usize] & empty & ((1 << p) - 1)) {
                let b = cidx[q as usize];
                let t = below(b);
                let n = without + BINOM[b as usize][t + 1] + raise[j] - raise[t];
                debug_assert_eq!(
                    n as u64,
                    self.idx
                        .rank_among(slot.opp ^ (1 << p) ^ (1 << q), slot.own)
                );
                debug_assert!((n as u64) < slot.r);
                f(n as usize);
            }
        }
    }

    /// The context of `slot` of class `c` without the previous slot's result;
    /// `done` the class's results of ranks `0..r`.
    #[inline]
    fn context(&self, slot: &Slot, c: &Class, done: &[u8]) -> usize {
        let (own, opp) = (slot.own, slot.opp);
        let empty = self.rules.all() & !(own | opp);
        let mut near = [0u8; 3];
        self.earlier_neighbours(slot, &c.cidx, |n| {
            let c = &mut near[done[n] as usize];
            *c = (*c + 1).min(2);
        });
        let neighbours = 9 * near[1] as usize + 3 * near[0] as usize + near[2] as usize;
        let own_closable = c
            .holes
            .iter()
            .filter(|&&h| h & opp == 0)
            .count()
            .min(CLOSABLE - 1);
        let opp_closable = self.opp_closable(&c.opp_mills, opp, empty);
        let own_mobility = MOBILITY_BUCKET[self.mobility(own, empty)] as usize;
        let opp_mobility = MOBILITY_BUCKET[self.mobility(opp, empty)] as usize;
        (((neighbours * CLOSABLE + own_closable) * CLOSABLE + opp_closable) * MOBILITY
            + own_mobility)
            * MOBILITY
            + opp_mobility
    }

    /// Slides of `side`'s stones to adjacent empty points (at most 63 counted).
    #[inline]
    fn mobility(&self, side: Bits, empty: Bits) -> usize {
        let adj = &self.rules.adjacency;
        let m: u32 = points(side)
            .map(|p| (adj[p as usize] & empty).count_ones())
            .sum();
        m.min(63) as usize
    }

    /// Mills of `mills` (the class's [`Class::opp_mills`]) with two of the
    /// opponent's stones `opp` and an empty third point that the opponent can fill
    /// with its next ply, at most 3.
    #[inline]
    pub(super) fn opp_closable(&self, mills: &[Bits], opp: Bits, empty: Bits) -> usize {
        let adj = &self.rules.adjacency;
        let mut n = 0;
        for &m in mills {
            let hole = m & empty;
            if (m & opp).count_ones() == 2 && hole != 0 {
                let h = hole.trailing_zeros() as usize;
                if self.any_opp || adj[h] & opp & !m != 0 {
                    n += 1;
                }
            }
        }
        n.min(CLOSABLE - 1)
    }
}

/// What the walks need of a class (the slots with the same stones of the side to
/// move), computed once for its slots.
pub(super) struct Class {
    /// The side to move's stones (the class's representative).
    pub(super) own: Bits,
    /// The other points, where the opponent's stones are.
    pub(super) free: Bits,
    /// [`compressed_index`] of `free`.
    pub(super) cidx: [u8; 32],
    /// [`Geometry::own_holes`] of `own`.
    holes: Vec<Bits>,
    /// The mills without a stone of the side to move: the only ones the opponent
    /// may close.
    pub(super) opp_mills: Vec<Bits>,
}

/// A slot as a walk meets it: its rank `r` in the class, the opponent's stones
/// as a subset of the class's free points (`packed`) and on the board (`opp`),
/// and the side to move's (`own`, the class's representative).
pub(super) struct Slot {
    pub(super) r: u64,
    pub(super) packed: Bits,
    pub(super) opp: Bits,
    pub(super) own: Bits,
}

/// The index of each point among the points of `free` (below it), for points of
/// `free`.
pub(super) fn compressed_index(free: Bits) -> [u8; 32] {
    let mut c = [0u8; 32];
    for p in points(free) {
        c[p as usize] = (free & ((1 << p) - 1)).count_ones() as u8;
    }
    c
}

/// The adaptive probabilities of every node, each `p | n << 16` (`p` the
/// probability of a 0 bit, `n` how often the node adapted, up to [`LIMIT`]).
#[derive(Clone)]
pub struct Model {
    pub(super) nodes: Vec<u32>,
}

impl Model {
    /// The model every block starts from, given the stored prior (one `u16` per
    /// node, 0 where the sample never saw the context).
    pub fn from_prior(prior: &[u16]) -> Model {
        let nodes = prior
            .iter()
            .map(|&p| match p {
                0 => ONE / 2,
                p => (p as u32).clamp(P_MIN, P_MAX) | PRIOR_COUNT << 16,
            })
            .collect();
        Model { nodes }
    }

    /// The trit among `allowed` (bit `t` set: trit `t` allowed; not 0) that context
    /// `ctx` finds likeliest (the lowest trit among equals).
    #[inline]
    fn likeliest(&self, ctx: usize, allowed: u8) -> u8 {
        if allowed.is_power_of_two() {
            return allowed.trailing_zeros() as u8;
        }
        let draw = self.nodes[2 * ctx] & 0xFFFF;
        let win = self.nodes[2 * ctx + 1] & 0xFFFF;
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

    /// Node `i`'s probability of a 0 bit, then adapts it to `bit`.
    #[inline]
    pub(super) fn adapt(&mut self, i: usize, bit: bool) -> u32 {
        let s = self.nodes[i];
        let (p, n) = (s & 0xFFFF, s >> 16);
        let rate = RATE[n as usize];
        let q = if bit {
            p - ((p * rate) >> 16)
        } else {
            p + (((ONE - p) * rate) >> 16)
        };
        self.nodes[i] = q.clamp(P_MIN, P_MAX) | (n + 1).min(LIMIT) << 16;
        p
    }
}

/// The range encoder (carry-propagating, 32-bit range, bytes out).
pub(super) struct Encoder {
    low: u64,
    range: u32,
    cache: u8,
    pending: u64,
    out: Vec<u8>,
}

impl Encoder {
    pub(super) fn new() -> Encoder {
        Encoder {
            low: 0,
            range: u32::MAX,
            cache: 0,
            pending: 1,
            out: Vec::new(),
        }
    }

    /// Codes `bit` with probability `p0` (of a 0) in units of 2^-16.
    #[inline]
    pub(super) fn bit(&mut self, p0: u32, bit: bool) {
        let bound = (self.range >> 16) * p0;
        if bit {
            self.low += bound as u64;
            self.range -= bound;
        } else {
            self.range = bound;
        }
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.shift_low();
        }
    }

    fn shift_low(&mut self) {
        if self.low < 0xFF00_0000 || self.low >= 1 << 32 {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.cache;
            while self.pending > 0 {
                self.out.push(byte.wrapping_add(carry));
                byte = 0xFF;
                self.pending -= 1;
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.pending += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
}

/// The range decoder matching [`Encoder`]. Past the end of its input it reads
/// zeros (a damaged block is caught by its checksum before it is decoded).
pub(super) struct Decoder<'a> {
    code: u32,
    range: u32,
    src: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    pub(super) fn new(src: &'a [u8]) -> Decoder<'a> {
        let mut d = Decoder {
            code: 0,
            range: u32::MAX,
            src,
            at: 0,
        };
        for _ in 0..5 {
            d.code = d.code << 8 | d.byte() as u32;
        }
        d
    }

    #[inline]
    fn byte(&mut self) -> u8 {
        let b = self.src.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    #[inline]
    pub(super) fn bit(&mut self, p0: u32) -> bool {
        let bound = (self.range >> 16) * p0;
        let bit = self.code >= bound;
        if bit {
            self.code -= bound;
            self.range -= bound;
        } else {
            self.range = bound;
        }
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.code = self.code << 8 | self.byte() as u32;
        }
        bit
    }
}

/// Codes block `b`, whose trits (0 draw, 1 win, 2 loss) are `trits`, starting from
/// `model`. Returns the block's bytes.
pub fn encode_block(g: &Geometry, b: usize, trits: &[u8], model: &Model) -> Vec<u8> {
    let allowed: Vec<u8> = trits.iter().map(|&t| 1 << t).collect();
    encode_block_choosing(g, b, &allowed, model).0
}

/// Codes block `b` where slot `i` may store any trit `t` with bit `t` of
/// `allowed[i]` set (a don't-care allows several): the allowed trit the model
/// finds likeliest there, so that a free slot costs little and teaches the model
/// what its neighbours look like. Returns the block's bytes and the stored trits.
pub fn encode_block_choosing(
    g: &Geometry,
    b: usize,
    allowed: &[u8],
    model: &Model,
) -> (Vec<u8>, Vec<u8>) {
    let mut model = model.clone();
    let mut enc = Encoder::new();
    let mut stored = vec![0u8; allowed.len()];
    g.walk(b, &mut stored, |i, ctx| {
        let t = model.likeliest(ctx, allowed[i]);
        let p = model.adapt(2 * ctx, t != 0);
        enc.bit(p, t != 0);
        if t != 0 {
            let p = model.adapt(2 * ctx + 1, t == 2);
            enc.bit(p, t == 2);
        }
        t
    });
    (enc.finish(), stored)
}

/// Decodes block `b` from `src`, starting from `model`: its trits, one per slot.
pub fn decode_block(g: &Geometry, b: usize, src: &[u8], model: &Model) -> Vec<u8> {
    let mut model = model.clone();
    let mut dec = Decoder::new(src);
    let range = g.block_range(b);
    let mut trits = vec![0u8; (range.end - range.start) as usize];
    g.walk(b, &mut trits, |_, ctx| {
        let p = model.nodes[2 * ctx] & 0xFFFF;
        let decisive = dec.bit(p);
        model.adapt(2 * ctx, decisive);
        if !decisive {
            return 0;
        }
        let p = model.nodes[2 * ctx + 1] & 0xFFFF;
        let loss = dec.bit(p);
        model.adapt(2 * ctx + 1, loss);
        1 + loss as u8
    });
    trits
}

/// The prior of a sector whose trits are `trit(slot)`: each node's probability of a
/// 0 bit over every block of the sector, 0 where a context was never seen.
pub fn count_prior(g: &Geometry, trit: impl Fn(u64) -> u8 + Sync) -> Vec<u16> {
    use rayon::prelude::*;
    let counts = (0..g.blocks())
        .into_par_iter()
        .map(|b| {
            let range = g.block_range(b);
            let truth: Vec<u8> = range.clone().map(&trit).collect();
            let mut seen = vec![0u8; truth.len()];
            let mut counts = vec![[0u32; 2]; NODES];
            g.walk(b, &mut seen, |i, ctx| {
                let t = truth[i];
                counts[2 * ctx][(t != 0) as usize] += 1;
                if t != 0 {
                    counts[2 * ctx + 1][(t == 2) as usize] += 1;
                }
                t
            });
            counts
        })
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
    prior_of_counts(&counts)
}

/// Each node's probability of a 0 bit from its counts of 0 and 1 bits, 0 where
/// there are none (a stored prior).
pub(super) fn prior_of_counts(counts: &[[u32; 2]]) -> Vec<u16> {
    counts
        .iter()
        .map(|&[zero, one]| {
            if zero + one == 0 {
                return 0;
            }
            let p = (zero as f64 + 0.4) / ((zero + one) as f64 + 0.8);
            ((p * ONE as f64).round() as u32).clamp(P_MIN, P_MAX) as u16
        })
        .collect()
}

/// The prior as stored: little-endian `u16`s, zstd-compressed.
pub fn store_prior(prior: &[u16]) -> std::io::Result<Vec<u8>> {
    let raw: Vec<u8> = prior.iter().flat_map(|p| p.to_le_bytes()).collect();
    zstd::bulk::compress(&raw, PRIOR_LEVEL)
}

/// A prior of `nodes` probabilities from its stored bytes, or why they are not one.
pub(super) fn load_prior_of(stored: &[u8], nodes: usize) -> Result<Vec<u16>, String> {
    let raw = zstd::bulk::decompress(stored, 2 * nodes).map_err(|e| e.to_string())?;
    if raw.len() != 2 * nodes {
        return Err(format!(
            "the model's prior holds {} bytes, {} expected",
            raw.len(),
            2 * nodes
        ));
    }
    Ok(raw
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::SplitMix;

    #[test]
    fn coder_round_trips_skewed_and_random_bits() {
        let mut rng = SplitMix(7);
        let probs: Vec<u32> = (0..5000)
            .map(|i| [100, 32768, 65000, 48, 65488][i % 5])
            .collect();
        let bits: Vec<bool> = probs
            .iter()
            .map(|&p| (rng.next_u64() % ONE as u64) as u32 >= p)
            .collect();
        let mut enc = Encoder::new();
        for (&p, &b) in probs.iter().zip(&bits) {
            enc.bit(p, b);
        }
        let out = enc.finish();
        let mut dec = Decoder::new(&out);
        for (&p, &b) in probs.iter().zip(&bits) {
            assert_eq!(dec.bit(p), b);
        }
    }

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
            let prior = count_prior(&g, |s| trits[s as usize]);
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
        let prior = count_prior(&g, |s| trits[s as usize]);
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
