//! Model coding of a depth section with loss-only entries
//! ([`super::Encoding::DepthRefined`], format version 7; without the refiner
//! [`super::Encoding::DepthModel`], version 6, still read): each lost slot's half
//! distance is coded with the adaptive binary coder of [`super::model`], in the
//! blocks of whole classes the WDL model uses, given the block's results (which the
//! reader has from the WDL section).
//!
//! A lost slot's *reference* and context (see `docs/FORMAT.md`, "Model-coded
//! depths") come from its **earlier lost neighbours**, the positions with one
//! opponent stone slid to an adjacent empty point whose slot comes earlier in the
//! same class (the WDL model's neighbours): their largest half distance is the
//! reference, and the context is that largest value (up to 63), the spread between
//! the largest and the smallest (up to 7), how many there are (up to 3), and the
//! opponent's closable mills (up to 3). Without such a neighbour the reference is
//! the previous lost slot's half distance in the block (or 0), in contexts of their
//! own.
//!
//! A half distance `h` with reference `r` is coded as `z = zigzag(h - r)` in four
//! binary decisions (a tree of 16 leaves) when `z < 15`; otherwise as the escape
//! `15` and `h` itself in eight decisions, in a context of the closable mills only.
//! Every block starts from the file's prior (block 0 of the section), as in the WDL
//! model. In encoding 7 each probability then goes through a refiner (as the WDL
//! model's), whose rows are the side to move's mobility and closable mills times
//! the node of the trees, and the bit is coded with half the model's probability
//! and half the refiner's.

use super::coder::{Decoder, Encoder, Model, prior_of_counts};
use super::model::{Class, Geometry, OWN_CONTEXTS, Refined, Refiner, opp_closable_of, own_of};
use crate::rules::Bits;
use crate::table::index::{first_subset, next_subset};

/// No half distance (a slot not lost, or not decoded yet).
const NONE: u16 = u16::MAX;
/// Values of the reference bucket: a neighbour's largest half distance 0..=63
/// (capped), 64 = no lost neighbour but a previous lost slot, 65 = neither.
const BUCKETS: usize = 66;
/// Values of the spread between the neighbours' largest and smallest (up to 7).
const SPREAD: usize = 8;
/// Values of the count of lost neighbours (up to 3).
const COUNT: usize = 4;
/// Values of the opponent's closable mills (up to 3).
const CLOSABLE: usize = 4;
/// Number of contexts of the near code.
const CONTEXTS: usize = BUCKETS * SPREAD * COUNT * CLOSABLE;
/// Nodes of the tree of the near code (16 leaves; node 0 unused).
const NEAR: usize = 16;
/// The near code that says "escape": the half distance follows in full.
const ESCAPE: u32 = 15;
/// Bits of an escaped half distance.
const FULL_BITS: u32 = 8;
/// The first node of the escape trees (one per closable-mills count).
const ESCAPE_BASE: usize = CONTEXTS * NEAR;
/// Number of nodes of the depth model.
pub const NODES: usize = ESCAPE_BASE + CLOSABLE * (1 << FULL_BITS);
/// Nodes used fewer times than this over a sector have no prior.
const PRIOR_SEEN: u32 = 24;
/// A stored prior's probabilities are multiples of this (in units of 2^-16).
const PRIOR_STEP: u16 = 64;
/// Node kinds of the refiner ([`Encoding::DepthRefined`](super::Encoding::DepthRefined)):
/// each node of the near tree (1 to 15), and every node of the escape trees as one.
const KINDS: usize = NEAR + 1;
/// Quarters of a refined probability that are the model's (the rest the curve's).
const MODEL_QUARTERS: u32 = 2;

/// The second stage of a refined depth model (encoding 7): a [`Refiner`] whose
/// rows are the side to move's mobility and closable mills ([`own_of`]) times
/// the node kind ([`KINDS`]); none in encoding 6.
struct Stage(Option<Refiner>);

impl Stage {
    /// A block's stage, from the identity: refined or not.
    fn new(refined: bool) -> Stage {
        Stage(refined.then(|| Refiner::new(OWN_CONTEXTS * KINDS, MODEL_QUARTERS)))
    }

    /// The probability of a 0 to code node `node` with, in a slot of position
    /// context `position`: the model's, refined if there is a refiner.
    #[inline]
    fn p(&self, model: &Model, node: usize, position: u16) -> (u32, Option<Refined>) {
        let p = model.nodes[node] & 0xFFFF;
        match &self.0 {
            None => (p, None),
            Some(refiner) => {
                let kind = if node >= ESCAPE_BASE {
                    NEAR
                } else {
                    node % NEAR
                };
                let r = refiner.refine(p, own_of(position) * KINDS + kind);
                (r.p, Some(r))
            }
        }
    }

    /// Learns the bit of node `node`, coded with `refined`.
    #[inline]
    fn learn(&mut self, model: &mut Model, node: usize, refined: Option<Refined>, bit: bool) {
        model.adapt(node, bit);
        if let (Some(refiner), Some(r)) = (&mut self.0, refined) {
            refiner.learn(r, bit);
        }
    }
}

/// The largest half distance the model codes: a section of longer distances is
/// stored with zstd ([`super::Encoding::HalfU16`]).
pub const MAX_HALF: u16 = (1 << FULL_BITS) - 1;

/// Walks the lost slots of block `b` (`trits`: the block's results, 2 = loss) in
/// slot order: for each, `code(context, reference)` returns its half distance,
/// which later contexts see.
fn walk_losses(g: &Geometry, b: usize, trits: &[u8], code: impl FnMut(usize, u16, u16) -> u16) {
    let position = |c: &Class, packed, _| c.position_of(packed, &c.tally(packed)) as u16;
    walk_losses_in(g, b, trits, &mut g.set_table(NONE), position, code);
}

/// [`walk_losses`] with `by_set`, a table from [`Geometry::set_table`] of any
/// contents (a thread's, reused from block to block): the walk reads only
/// entries it wrote itself; and `position(class, packed, i)` the position
/// context of slot `i` ([`super::model::position_of`]); `code(context, reference,
/// position)` as in [`walk_losses`].
fn walk_losses_in(
    g: &Geometry,
    b: usize,
    trits: &[u8],
    by_set: &mut [u16],
    position: impl Fn(&Class, Bits, usize) -> u16,
    mut code: impl FnMut(usize, u16, u16) -> u16,
) {
    let range = g.block_range(b);
    debug_assert_eq!(trits.len() as u64, range.end - range.start);
    // The half distances of the class's slots so far by their opponent stones
    // (NONE where not lost), as in [`Geometry::walk`]: each slot's entry is
    // written before a later slot can read it.
    let mut prev = NONE;
    let mut i = 0;
    for class in range.start / g.per_class..range.end / g.per_class {
        let c = g.class(class);
        let mut packed = first_subset(g.l);
        for r in 0..g.per_class {
            by_set[packed as usize] = NONE;
            if trits[i] == 2 {
                let (mut max, mut min, mut count) = (0, NONE, 0);
                c.earlier_neighbours(packed, |n| {
                    let h = by_set[n as usize];
                    if h != NONE {
                        count += 1;
                        max = max.max(h);
                        min = min.min(h);
                    }
                });
                let (bucket, reference, spread) = match (count, prev) {
                    (0, NONE) => (BUCKETS - 1, 0, 0),
                    (0, _) => (BUCKETS - 2, prev, 0),
                    _ => (max.min(63) as usize, max, (max - min).min(7) as usize),
                };
                let position = position(&c, packed, i);
                let ctx = ((bucket * SPREAD + spread) * COUNT + count.min(COUNT - 1)) * CLOSABLE
                    + opp_closable_of(position);
                let h = code(ctx, reference, position);
                by_set[packed as usize] = h;
                prev = h;
            }
            i += 1;
            if r + 1 < g.per_class {
                packed = next_subset(packed);
            }
        }
    }
}

/// `h - r` folded to a natural number: 0, -1, 1, -2, 2, ... give 0, 1, 2, 3, 4, ...
fn zigzag(h: u16, r: u16) -> u32 {
    let d = h as i32 - r as i32;
    if d >= 0 {
        2 * d as u32
    } else {
        (-2 * d - 1) as u32
    }
}

/// The half distance of near code `z` (below [`ESCAPE`]) with reference `r`, if
/// it is one.
fn unzigzag(z: u32, r: u16) -> Option<u16> {
    let d = if z.is_multiple_of(2) {
        (z / 2) as i32
    } else {
        -((z as i32 + 1) / 2)
    };
    u16::try_from(r as i32 + d).ok().filter(|&h| h <= MAX_HALF)
}

/// The nodes and bits that code half distance `h` with reference `r` in context
/// `ctx`, in order: calls `bit(node, bit)` for each.
fn bits_of(ctx: usize, r: u16, h: u16, mut bit: impl FnMut(usize, bool)) {
    let z = zigzag(h, r).min(ESCAPE);
    tree(ctx * NEAR, 4, z, &mut bit);
    if z == ESCAPE {
        tree(escape_base(ctx), FULL_BITS, h as u32, &mut bit);
    }
}

/// The first node of the escape tree of context `ctx`.
fn escape_base(ctx: usize) -> usize {
    ESCAPE_BASE + ((ctx % CLOSABLE) << FULL_BITS)
}

/// The `width` bits of `v`, high first, each at its node of the binary tree whose
/// node 1 is `base + 1`.
fn tree(base: usize, width: u32, v: u32, bit: &mut impl FnMut(usize, bool)) {
    let mut node = 1;
    for k in (0..width).rev() {
        let b = v >> k & 1 == 1;
        bit(base + node, b);
        node = 2 * node + b as usize;
    }
}

/// Decodes a `width`-bit value from the tree at `base` of a slot of position
/// context `position`.
fn decode_tree(
    (model, stage): (&mut Model, &mut Stage),
    dec: &mut Decoder,
    (base, width): (usize, u32),
    position: u16,
) -> u32 {
    let mut node = 1;
    for _ in 0..width {
        let (p, refined) = stage.p(model, base + node, position);
        let b = dec.bit(p);
        stage.learn(model, base + node, refined, b);
        node = 2 * node + b as usize;
    }
    node as u32 - (1 << width)
}

/// What a thread keeps from one block to the next while it codes the depth
/// blocks of a sector that start from one model (as the WDL model's
/// [`super::model::Coding`]): a working copy of the model, put back as it was
/// after each block (the trees of the contexts the block saw, and the escape
/// trees), the walk's set table, and the contexts, references and position
/// contexts of the block coded last; refined (encoding 7) or not (encoding 6).
pub struct DepthCoding<'m> {
    start: &'m Model,
    model: Model,
    refined: bool,
    by_set: Vec<u16>,
    contexts: Vec<(u32, u16, u16)>,
}

impl<'m> DepthCoding<'m> {
    /// A thread's coding of the depth blocks of geometry `g` that start from
    /// `model`, `refined` or not.
    pub fn new(g: &Geometry, model: &'m Model, refined: bool) -> DepthCoding<'m> {
        DepthCoding {
            start: model,
            model: model.clone(),
            refined,
            by_set: g.set_table(NONE),
            contexts: Vec::new(),
        }
    }

    /// Puts back the working model's nodes of the contexts recorded, and the
    /// escape trees.
    fn restore(&mut self) {
        for &(ctx, _, _) in &self.contexts {
            let at = ctx as usize * NEAR;
            self.model.nodes[at..at + NEAR].copy_from_slice(&self.start.nodes[at..at + NEAR]);
        }
        self.model.nodes[ESCAPE_BASE..].copy_from_slice(&self.start.nodes[ESCAPE_BASE..]);
        debug_assert!(self.model.nodes == self.start.nodes);
    }

    /// Codes the half distances `halves` (at most [`MAX_HALF`]) of the lost
    /// slots of block `b`, whose results are `trits` and position contexts
    /// `positions` ([`super::model::count_prior`]).
    pub fn encode(
        &mut self,
        g: &Geometry,
        b: usize,
        trits: &[u8],
        halves: &[u8],
        positions: &[u16],
    ) -> Vec<u8> {
        let model = &mut self.model;
        let contexts = &mut self.contexts;
        contexts.clear();
        let mut stage = Stage::new(self.refined);
        let mut enc = Encoder::new();
        let mut next = halves.iter();
        let position = |_: &Class, _, i: usize| positions[i];
        walk_losses_in(
            g,
            b,
            trits,
            &mut self.by_set,
            position,
            |ctx, r, position| {
                contexts.push((ctx as u32, r, position));
                let h = *next.next().expect("a half distance per lost slot") as u16;
                bits_of(ctx, r, h, |node, bit| {
                    let (p, refined) = stage.p(model, node, position);
                    enc.bit(p, bit);
                    stage.learn(model, node, refined, bit);
                });
                h
            },
        );
        debug_assert!(next.next().is_none());
        self.restore();
        enc.finish()
    }

    /// [`DepthCoding::encode`], then the block's bytes decoded again, every
    /// lost slot, and compared with `halves`: `None` if any differs (a fault of
    /// the coder). The decoding walks the contexts and references the coding
    /// recorded, which depend on the results and on the half distances before
    /// them only (as the WDL model's checked coding).
    pub fn encode_checked(
        &mut self,
        g: &Geometry,
        b: usize,
        trits: &[u8],
        halves: &[u8],
        positions: &[u16],
    ) -> Option<Vec<u8>> {
        let bytes = self.encode(g, b, trits, halves, positions);
        let mut dec = Decoder::new(&bytes);
        let mut stage = Stage::new(self.refined);
        let model = &mut self.model;
        let same = self
            .contexts
            .iter()
            .zip(halves)
            .all(|(&(ctx, r, position), &h)| {
                let coder = (&mut *model, &mut stage);
                decode_half(coder, &mut dec, (ctx as usize, r, position)) == Some(h as u16)
            });
        self.restore();
        same.then_some(bytes)
    }
}

/// Codes the half distances `halves` (at most [`MAX_HALF`]) of the lost slots of
/// block `b`, whose results are `trits`, starting from `model`, refined or not.
/// (A thread coding many blocks keeps a [`DepthCoding`] instead.)
#[cfg(test)]
pub fn encode_block(
    g: &Geometry,
    b: usize,
    trits: &[u8],
    halves: &[u8],
    model: &Model,
    refined: bool,
) -> Vec<u8> {
    DepthCoding::new(g, model, refined).encode(g, b, trits, halves, &g.positions(b))
}

/// Decodes the half distance of a lost slot of context `ctx`, reference `r` and
/// position context `position` from `dec`; `None` if it is out of range (a
/// damaged block).
fn decode_half(
    coder: (&mut Model, &mut Stage),
    dec: &mut Decoder,
    (ctx, r, position): (usize, u16, u16),
) -> Option<u16> {
    let (model, stage) = coder;
    let z = decode_tree((model, stage), dec, (ctx * NEAR, 4), position);
    if z == ESCAPE {
        let escape = (escape_base(ctx), FULL_BITS);
        Some(decode_tree((model, stage), dec, escape, position) as u16)
    } else {
        unzigzag(z, r)
    }
}

/// Decodes the half distances of the lost slots of block `b`, whose results are
/// `trits`, from `src`, starting from `model`, refined (encoding 7) or not;
/// `None` if a decoded value is out of range (a damaged block).
pub fn decode_block(
    g: &Geometry,
    b: usize,
    trits: &[u8],
    src: &[u8],
    model: &Model,
    refined: bool,
) -> Option<Vec<u8>> {
    let mut model = model.clone();
    let mut stage = Stage::new(refined);
    let mut dec = Decoder::new(src);
    let mut out = Vec::with_capacity(trits.iter().filter(|&&t| t == 2).count());
    let mut bad = false;
    walk_losses(g, b, trits, |ctx, r, position| {
        let coder = (&mut model, &mut stage);
        let h = decode_half(coder, &mut dec, (ctx, r, position)).unwrap_or_else(|| {
            bad = true;
            0
        });
        out.push(h as u8);
        h
    });
    (!bad).then_some(out)
}

/// The prior of a sector whose results are `trit(slot)` and lost slots' half
/// distances `half(slot)` (at most [`MAX_HALF`]): each node's probability of a 0
/// bit over every block, 0 where a node was never used. `positions`: each
/// slot's position context if known ([`super::model::count_prior`]).
pub fn count_prior(
    g: &Geometry,
    trit: impl Fn(u64) -> u8 + Sync,
    half: impl Fn(u64) -> u16 + Sync,
    positions: Option<&[u16]>,
) -> Vec<u16> {
    use rayon::prelude::*;
    // One table of counts (and one set table) per batch of blocks a thread
    // takes, not per block.
    let counts = (0..g.blocks())
        .into_par_iter()
        .with_min_len(g.prior_batch())
        .fold(
            || (vec![[0u32; 2]; NODES], g.set_table(NONE)),
            |(mut counts, mut by_set), b| {
                let range = g.block_range(b);
                let trits: Vec<u8> = range.clone().map(&trit).collect();
                let mut lost = range.clone().filter(|&s| trit(s) == 2).map(&half);
                let code = |ctx, r, _| {
                    let h = lost.next().expect("a half distance per lost slot");
                    bits_of(ctx, r, h, |node, bit| counts[node][bit as usize] += 1);
                    h
                };
                match positions {
                    Some(p) => {
                        let p = &p[range.start as usize..range.end as usize];
                        let position = |_: &Class, _, i: usize| p[i];
                        walk_losses_in(g, b, &trits, &mut by_set, position, code);
                    }
                    None => {
                        let position =
                            |c: &Class, packed, _| c.position_of(packed, &c.tally(packed)) as u16;
                        walk_losses_in(g, b, &trits, &mut by_set, position, code);
                    }
                }
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
    // A node seen rarely starts from nothing (its prior would cost more than it
    // saves), and the others' probabilities are rounded so the prior compresses.
    let mut prior = prior_of_counts(&counts);
    for (p, &[zero, one]) in prior.iter_mut().zip(&counts) {
        *p = if zero + one < PRIOR_SEEN {
            0
        } else {
            (*p + PRIOR_STEP / 2) / PRIOR_STEP * PRIOR_STEP
        }
        .clamp(
            if *p == 0 { 0 } else { PRIOR_STEP },
            u16::MAX - PRIOR_STEP + 1,
        );
    }
    prior
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::SplitMix;
    use crate::rules::Rules;

    #[test]
    fn zigzag_round_trips() {
        for r in [0u16, 1, 7, 100, 255] {
            for h in r.saturating_sub(7)..=(r + 7).min(MAX_HALF) {
                let z = zigzag(h, r);
                if z < ESCAPE {
                    assert_eq!(unzigzag(z, r), Some(h));
                }
            }
        }
        assert_eq!(unzigzag(1, 0), None);
        assert_eq!(unzigzag(2, MAX_HALF), None);
    }

    #[test]
    fn blocks_round_trip_near_and_far_distances() {
        let rules = Rules::with_stones(4);
        let g = Geometry::new(rules, 3, 3, [0, 0]);
        let mut rng = SplitMix(5);
        let trits: Vec<u8> = (0..g.size()).map(|_| (rng.next_u64() % 3) as u8).collect();
        // Mostly alike distances, some far off, the largest and zero among them.
        let halves: Vec<u16> = (0..g.size())
            .map(|s| match rng.next_u64() % 20 {
                0 => MAX_HALF,
                1 => (rng.next_u64() % 256) as u16,
                _ => 10 + (s % 3) as u16,
            })
            .collect();
        let prior = count_prior(&g, |s| trits[s as usize], |s| halves[s as usize], None);
        let (_, positions) = super::super::model::count_prior(&g, |s| trits[s as usize]);
        assert_eq!(
            count_prior(
                &g,
                |s| trits[s as usize],
                |s| halves[s as usize],
                Some(&positions)
            ),
            prior
        );
        assert_eq!(prior.len(), NODES);
        let model = Model::from_prior(&prior);
        let mut sizes = Vec::new();
        for refined in [false, true] {
            let (mut bytes, mut lost) = (0, 0);
            // One thread's coding of every block, in reverse order: each block as if
            // coded first.
            let mut coding = DepthCoding::new(&g, &model, refined);
            assert!(g.blocks() > 1);
            for b in (0..g.blocks()).rev() {
                let r = g.block_range(b);
                let r = r.start as usize..r.end as usize;
                let t = &trits[r.clone()];
                let h: Vec<u8> = r
                    .clone()
                    .filter(|&s| trits[s] == 2)
                    .map(|s| halves[s] as u8)
                    .collect();
                let coded = encode_block(&g, b, t, &h, &model, refined);
                let p = &positions[r.clone()];
                assert_eq!(
                    coding.encode_checked(&g, b, t, &h, p).as_ref(),
                    Some(&coded)
                );
                assert!(coding.model.nodes == model.nodes);
                bytes += coded.len();
                lost += h.len();
                assert_eq!(
                    decode_block(&g, b, t, &coded, &model, refined),
                    Some(h.clone())
                );
                // Read by the other coding, the bytes are other distances, or none.
                assert_ne!(decode_block(&g, b, t, &coded, &model, !refined), Some(h));
            }
            // Skewed: far below a byte per entry.
            assert!((bytes * 8) as f64 / (lost as f64) < 5.0, "{bytes} bytes");
            sizes.push(bytes);
        }
        // The refiner learns the skew the model's contexts leave.
        assert!(sizes[1] < sizes[0], "{sizes:?}");
    }

    #[test]
    fn a_sector_without_losses_codes_nothing() {
        let rules = Rules::with_stones(4);
        let g = Geometry::new(rules, 2, 3, [0, 0]);
        let trits = vec![1u8; g.block_range(0).count()];
        let model = Model::from_prior(&count_prior(&g, |_| 1, |_| 0, None));
        for refined in [false, true] {
            let coded = encode_block(&g, 0, &trits, &[], &model, refined);
            assert_eq!(
                decode_block(&g, 0, &trits, &coded, &model, refined),
                Some(vec![])
            );
        }
    }
}
