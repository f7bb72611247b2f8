//! Measures variants of the WDL model (`docs/FORMAT.md`, "Model coding") on a
//! sample of a sector's blocks, with the don't-cares of `--fill model`
//! (duplicates and slots whose win a capture reaches may store a win or a draw;
//! each variant stores the allowed result it finds likelier):
//!
//! `cargo run --release --example wdl_model_ideas -- DB SECTOR BLOCKS`
//!
//! Every variant's prior is counted over every block of the file, from the true
//! results with the duplicates filled as `--fill lean` fills them (as the writer
//! does); the sampled blocks are then coded one by one from that prior. Printed:
//! bits per slot of the ideal code (what a range coder spends, within a few bytes
//! a block), in floating point (the format's refiner is integer arithmetic, with
//! 33 points on its curves where these have 25). Variants:
//!
//! - `base`: the model of format versions 3 and 4 (no refiner);
//! - `limit N`, `prior N`: the adaptation count's limit, the count a prior starts;
//! - `apm`: the base probability refined by an adaptive curve per *jump context*
//!   (the counts of the earlier jump neighbours' results: the sets with one
//!   opponent stone moved to any lower empty point), of every opponent stone or
//!   of the highest one only (what versions 5 and 6 do);
//! - `mix`: the base model and a second model (every stone's jump context, the
//!   slide neighbours' count and the previous result) mixed in the logistic
//!   domain by weights learnt per block.
use millbase::rules::Bits;
use millbase::rules::value::Value;
use millbase::table::dir::open_finished_sector;
use millbase::table::format::model::Geometry;
use millbase::table::index::{Index, first_subset, next_subset};
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use rayon::prelude::*;
use std::path::Path;

const ONE: f64 = 65536.0;

/// A binary adaptive node as the format's: probability of a 0 in 2^-16 units.
#[derive(Clone, Copy)]
struct Node {
    p: u32,
    n: u32,
}

#[derive(Clone, Copy)]
struct Adapt {
    limit: u32,
    prior_count: u32,
}

impl Node {
    fn of_prior(p: u16, a: Adapt) -> Node {
        match p {
            0 => Node { p: 32768, n: 0 },
            p => Node {
                p: (p as u32).clamp(48, 65488),
                n: a.prior_count,
            },
        }
    }

    fn adapt(&mut self, bit: bool, a: Adapt) {
        let rate = (2 * 65536) / (2 * self.n + 3);
        let p = self.p;
        let q = if bit {
            p - ((p * rate) >> 16)
        } else {
            p + (((65536 - p) * rate) >> 16)
        };
        self.p = q.clamp(48, 65488);
        self.n = (self.n + 1).min(a.limit);
    }
}

fn prior_of(counts: &[[u32; 2]]) -> Vec<u16> {
    counts
        .iter()
        .map(|&[z, o]| {
            if z + o == 0 {
                0
            } else {
                let p = (z as f64 + 0.4) / ((z + o) as f64 + 0.8);
                ((p * ONE).round() as u32).clamp(48, 65488) as u16
            }
        })
        .collect()
}

fn stretch(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

fn squash(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn cost(p0: f64, bit: bool) -> f64 {
    -(if bit { 1.0 - p0 } else { p0 }).log2()
}

/// What the second model of `mix` sees of a slot: the counts of its earlier jump
/// neighbours' results (draw, win, loss; each up to 3).
struct Jumps {
    k: u32,
    l: u32,
    per: u64,
}

impl Jumps {
    /// The jump context of the slot whose opponent stones are `packed` (a subset
    /// of the class's free points), given the class's results so far by set: the
    /// jumps of every opponent stone to a lower free point, or with `top` of the
    /// highest stone only (as the format's refiner).
    fn context(&self, packed: Bits, by_set: &[u8], top: bool) -> usize {
        let mut c = [0u32; 3];
        let mut stones = match top {
            true if packed != 0 => 1 << (31 - packed.leading_zeros()),
            _ => packed,
        };
        while stones != 0 {
            let a = stones.trailing_zeros();
            stones &= stones - 1;
            let mut to = ((1u32 << a) - 1) & !packed;
            while to != 0 {
                let b = to.trailing_zeros();
                to &= to - 1;
                c[by_set[(packed ^ (1 << a) ^ (1 << b)) as usize] as usize] += 1;
            }
        }
        let q = |x: u32| match x {
            0 => 0,
            1 => 1,
            2..=4 => 2,
            _ => 3,
        };
        (q(c[0]) * 4 + q(c[1])) as usize * 4 + q(c[2]) as usize
    }
}

struct Sample {
    g: Geometry,
    jumps: Jumps,
    /// Lean-filled trits of every slot (for priors).
    lean: Vec<u8>,
    /// Sampled blocks and their allowed masks.
    blocks: Vec<(usize, Vec<u8>)>,
}

const JUMP_CTX: usize = 64;

impl Sample {
    /// Walks block `b` as the format does, also tracking the opponent sets, and
    /// calls `code(i, ctx, jump_ctx)` for each slot.
    fn walk(&self, b: usize, mut code: impl FnMut(usize, usize, usize) -> u8) {
        let range = self.g.block_range(b);
        let mut trits = vec![0u8; (range.end - range.start) as usize];
        let mut by_set = vec![0u8; 1 << (24 - self.jumps.k)];
        let mut packed = first_subset(self.jumps.l);
        let mut r = 0;
        self.g.walk::<false>(b, &mut trits, |i, ctx, _| {
            if r == 0 {
                packed = first_subset(self.jumps.l);
            }
            // Both jump contexts: every stone's in the high digit, the top's low.
            let j = self.jumps.context(packed, &by_set, false) * JUMP_CTX
                + self.jumps.context(packed, &by_set, true);
            let t = code(i, ctx, j);
            by_set[packed as usize] = t;
            r += 1;
            if r == self.jumps.per {
                r = 0;
            } else {
                packed = next_subset(packed);
            }
            t
        });
    }

    fn counts(&self, nodes: usize, node: impl Fn(usize, usize) -> usize + Sync) -> Vec<[u32; 2]> {
        (0..self.g.blocks())
            .into_par_iter()
            .map(|b| {
                let start = self.g.block_range(b).start as usize;
                let mut counts = vec![[0u32; 2]; 2 * nodes];
                self.walk(b, |i, ctx, j| {
                    let t = self.lean[start + i];
                    let c = node(ctx, j);
                    counts[2 * c][(t != 0) as usize] += 1;
                    if t != 0 {
                        counts[2 * c + 1][(t == 2) as usize] += 1;
                    }
                    t
                });
                counts
            })
            .reduce(
                || vec![[0u32; 2]; 2 * nodes],
                |mut a, b| {
                    for (x, y) in a.iter_mut().zip(&b) {
                        x[0] += y[0];
                        x[1] += y[1];
                    }
                    a
                },
            )
    }
}

/// Bits per slot over the sampled blocks of a model that gives, per slot, the
/// probability of a 0 for node 0 (decisive?) and node 1 (loss?) and learns.
trait Predictor: Clone + Send {
    fn p(&mut self, ctx: usize, j: usize, node: usize) -> f64;
    fn learn(&mut self, ctx: usize, j: usize, node: usize, bit: bool);
}

fn measure<P: Predictor + Sync>(s: &Sample, start: &P) -> f64 {
    let (bits, slots) = s
        .blocks
        .par_iter()
        .map(|(b, allowed)| {
            let mut m = start.clone();
            let mut bits = 0.0;
            s.walk(*b, |i, ctx, j| {
                let a = allowed[i];
                let pd = m.p(ctx, j, 0);
                let pl = m.p(ctx, j, 1);
                let probs = [pd, (1.0 - pd) * pl, (1.0 - pd) * (1.0 - pl)];
                let t = (0..3u8)
                    .filter(|&t| a >> t & 1 == 1)
                    .max_by(|&x, &y| {
                        probs[x as usize]
                            .partial_cmp(&probs[y as usize])
                            .unwrap()
                            .then((2 - x).cmp(&(2 - y)))
                    })
                    .unwrap();
                bits += cost(pd, t != 0);
                m.learn(ctx, j, 0, t != 0);
                if t != 0 {
                    bits += cost(pl, t == 2);
                    m.learn(ctx, j, 1, t == 2);
                }
                t
            });
            (bits, allowed.len())
        })
        .reduce(|| (0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    bits / slots as f64
}

#[derive(Clone)]
struct Base {
    nodes: Vec<Node>,
    a: Adapt,
}

impl Base {
    fn new(prior: &[u16], a: Adapt) -> Base {
        Base {
            nodes: prior.iter().map(|&p| Node::of_prior(p, a)).collect(),
            a,
        }
    }
}

impl Predictor for Base {
    fn p(&mut self, ctx: usize, _: usize, node: usize) -> f64 {
        self.nodes[2 * ctx + node].p as f64 / ONE
    }
    fn learn(&mut self, ctx: usize, _: usize, node: usize, bit: bool) {
        let a = self.a;
        self.nodes[2 * ctx + node].adapt(bit, a);
    }
}

/// Base refined by an APM indexed by `sel(ctx, j)`.
#[derive(Clone)]
struct Apm<F: Fn(usize, usize) -> usize + Clone + Send> {
    base: Base,
    table: Vec<f64>,
    sel: F,
    rate: f64,
    last: [(usize, f64); 2],
}

const BUCKETS: usize = 24;

impl<F: Fn(usize, usize) -> usize + Clone + Send> Apm<F> {
    fn new(base: Base, sets: usize, sel: F, rate: f64) -> Self {
        let mut table = Vec::with_capacity(sets * 2 * (BUCKETS + 1));
        for _ in 0..sets * 2 {
            for i in 0..=BUCKETS {
                table.push(squash(
                    (i as f64 - BUCKETS as f64 / 2.0) * 16.0 / BUCKETS as f64,
                ));
            }
        }
        Apm {
            base,
            table,
            sel,
            rate,
            last: [(0, 0.0); 2],
        }
    }
}

impl<F: Fn(usize, usize) -> usize + Clone + Send> Predictor for Apm<F> {
    fn p(&mut self, ctx: usize, j: usize, node: usize) -> f64 {
        let p = self.base.p(ctx, j, node).clamp(1e-4, 1.0 - 1e-4);
        let x = ((stretch(p) + 8.0) * BUCKETS as f64 / 16.0).clamp(0.0, BUCKETS as f64 - 1e-9);
        let at = ((self.sel)(ctx, j) * 2 + node) * (BUCKETS + 1) + x as usize;
        let w = x.fract();
        self.last[node] = (at, w);
        let q = self.table[at] * (1.0 - w) + self.table[at + 1] * w;
        (p + 3.0 * q) / 4.0
    }
    fn learn(&mut self, ctx: usize, j: usize, node: usize, bit: bool) {
        let (at, w) = self.last[node];
        let target = if bit { 0.0 } else { 1.0 };
        self.table[at] += (target - self.table[at]) * self.rate * (1.0 - w);
        self.table[at + 1] += (target - self.table[at + 1]) * self.rate * w;
        self.base.learn(ctx, j, node, bit);
    }
}

/// Two models mixed in the logistic domain.
#[derive(Clone)]
struct Mix {
    a: Base,
    b: Base,
    /// Second model's context from (ctx, j).
    ctx2: fn(usize, usize) -> usize,
    /// Weights per mixer set, 3 each.
    w: Vec<[f64; 3]>,
    sel: fn(usize, usize) -> usize,
    lr: f64,
    last: [[f64; 3]; 2],
    out: [f64; 2],
}

impl Predictor for Mix {
    fn p(&mut self, ctx: usize, j: usize, node: usize) -> f64 {
        let pa = self.a.p(ctx, j, node).clamp(1e-4, 1.0 - 1e-4);
        let pb = self
            .b
            .p((self.ctx2)(ctx, j), 0, node)
            .clamp(1e-4, 1.0 - 1e-4);
        let x = [stretch(pa), stretch(pb), 0.3];
        let w = &self.w[(self.sel)(ctx, j) * 2 + node];
        let dot = w[0] * x[0] + w[1] * x[1] + w[2] * x[2];
        self.last[node] = x;
        self.out[node] = squash(dot).clamp(1e-5, 1.0 - 1e-5);
        self.out[node]
    }
    fn learn(&mut self, ctx: usize, j: usize, node: usize, bit: bool) {
        let err = (if bit { 0.0 } else { 1.0 }) - self.out[node];
        let set = (self.sel)(ctx, j) * 2 + node;
        for i in 0..3 {
            self.w[set][i] += self.lr * err * self.last[node][i];
        }
        self.a.learn(ctx, j, node, bit);
        let c2 = (self.ctx2)(ctx, j);
        self.b.learn(c2, 0, node, bit);
    }
}

fn nb(ctx: usize) -> usize {
    ctx / 4096
}
fn prev(ctx: usize) -> usize {
    ctx % 4
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, db, sector, blocks] = &args[..] else {
        eprintln!("usage: wdl_model_ideas DB SECTOR BLOCKS");
        std::process::exit(2);
    };
    let db = Path::new(db);
    let sector = Sector::parse(sector).expect("a sector name");
    let idx = Index::standard();
    let rules = idx.rules();
    let (k, l) = sector.counts();
    let file = open_finished_sector(db, idx, sector).expect("the sector's file");
    let codes = file.read_all().expect("its values");
    let tb = Tablebase::open(db).expect("the database");
    let g = Geometry::new(rules, k, l, [sector.hk, sector.hl]);
    let trit = |c: u16| match Value::from_code(c) {
        Value::Draw => 0u8,
        Value::Win(_) => 1,
        Value::Loss(_) => 2,
    };
    // Lean fill: duplicates keep the previous slot's result unless a loss (then a draw).
    let size = codes.len() as u64;
    let chunk = 1u64 << 16;
    let dup: Vec<bool> = (0..size.div_ceil(chunk))
        .into_par_iter()
        .flat_map_iter(|c| {
            let r = c * chunk..((c + 1) * chunk).min(size);
            r.clone()
                .zip(idx.positions(k, l, r))
                .map(|(s, (own, opp))| idx.index(own, opp) != s)
                .collect::<Vec<_>>()
        })
        .collect();
    let mut lean = Vec::with_capacity(codes.len());
    let mut last = 0u8;
    for (c, &d) in codes.iter().zip(&dup) {
        let t = if d {
            if last == 2 { 0 } else { last }
        } else {
            trit(*c)
        };
        lean.push(t);
        last = t;
    }
    let n: usize = blocks.parse().expect("a number of blocks");
    let total = g.blocks();
    let picked: Vec<usize> = (0..n.min(total))
        .map(|j| j * total / n.min(total))
        .collect();
    let blocks: Vec<(usize, Vec<u8>)> = picked
        .par_iter()
        .map(|&b| {
            let r = g.block_range(b);
            let allowed = r
                .clone()
                .zip(idx.positions(k, l, r))
                .map(|(slot, (own, opp))| {
                    if dup[slot as usize] {
                        return 3;
                    }
                    let truth = Value::from_code(codes[slot as usize]);
                    match truth {
                        Value::Draw => 1,
                        Value::Loss(_) => 4,
                        Value::Win(_) => {
                            let pos = sector.position(own, opp);
                            let free = pos.legal_plies(rules).into_iter().any(|ply| {
                                ply.removes()
                                    && tb
                                        .ply_value(&pos.after(rules, ply))
                                        .expect("a child's value")
                                        .cmp_goodness(truth)
                                        .is_ge()
                            });
                            if free { 3 } else { 2 }
                        }
                    }
                })
                .collect();
            (b, allowed)
        })
        .collect();
    let s = Sample {
        g,
        jumps: Jumps {
            k,
            l,
            per: idx.per_class(k, l),
        },
        lean,
        blocks,
    };
    let base_counts = s.counts(110_592, |c, _| c);
    let prior = prior_of(&base_counts);
    let std = Adapt {
        limit: 255,
        prior_count: 12,
    };
    println!(
        "{sector}: {} of {total} blocks, {} slots",
        s.blocks.len(),
        s.blocks.iter().map(|b| b.1.len()).sum::<usize>()
    );
    let report = |name: &str, bits: f64| println!("{name:<40} {bits:.4}");
    report("base", measure(&s, &Base::new(&prior, std)));
    for limit in [60, 1023] {
        let a = Adapt { limit, ..std };
        report(
            &format!("limit {limit}"),
            measure(&s, &Base::new(&prior, a)),
        );
    }
    for prior_count in [4, 30] {
        let a = Adapt { prior_count, ..std };
        report(
            &format!("prior {prior_count}"),
            measure(&s, &Base::new(&prior, a)),
        );
    }
    let every = |j: usize| j / JUMP_CTX;
    let top = |j: usize| j % JUMP_CTX;
    let apm = Apm::new(Base::new(&prior, std), JUMP_CTX, move |_, j| every(j), 0.12);
    report("apm, every stone's jumps", measure(&s, &apm));
    let apm = Apm::new(Base::new(&prior, std), JUMP_CTX, move |_, j| top(j), 0.12);
    report("apm, the highest stone's jumps", measure(&s, &apm));
    // Second model: every stone's jumps x slide neighbours x prev.
    let ctx2: fn(usize, usize) -> usize = |c, j| ((j / JUMP_CTX) * 27 + nb(c)) * 4 + prev(c);
    let n2 = JUMP_CTX * 27 * 4;
    let prior2 = prior_of(&s.counts(n2, ctx2));
    let m = Mix {
        a: Base::new(&prior, std),
        b: Base::new(&prior2, std),
        ctx2,
        w: vec![[0.65, 0.35, 0.0]; 27 * 2],
        sel: |c, _| nb(c),
        lr: 0.02,
        last: [[0.0; 3]; 2],
        out: [0.5; 2],
    };
    report("mix with a model of every stone's jumps", measure(&s, &m));
}
