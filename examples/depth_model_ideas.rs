//! Figures for a model-coded depth section: the lost slots' distances of a real
//! file coded by adaptive binary models under several contexts, in bits per slot of
//! the sector (ideal code lengths, each model starting every block from the file's
//! counts, as the WDL model does).
//!
//! ```text
//! cargo run --release --example depth_model_ideas -- FILE.mdb K L
//! ```
//!
//! Environment: `SCHEMES=A,B` only the schemes whose names start so; `PRIOR_N`,
//! `LIMIT` the nodes' starting count and count limit (12 and 255, the format's);
//! `JUMP` computes the jump neighbours (any lower empty point); `MIX` instead
//! measures the format's contexts alone and mixed (logistic mixing, learning
//! rate `LR`) with a second model of other features; `APM` the format's contexts
//! with an APM stage on a secondary context (`SECS`, `SHARE`, `RATE`: see
//! `refined`).

use millbase::rules::Rules;
use millbase::rules::position::points;
use millbase::rules::value::Value;
use millbase::table::format::{Expect, SubspaceFile};
use millbase::table::index::{Index, first_subset, next_subset, pdep};
use std::path::Path;

const NONE: u8 = 255;
const MIN_BLOCK: u64 = 1 << 14;

/// Features of one lost slot, as a decoder would know them.
#[derive(Clone, Copy, Default)]
struct Feat {
    h: u8,
    prev: u8,
    nmax: u8,
    nmin: u8,
    ncount: u8,
    nwin: u8,
    jmax: u8,
    jmin: u8,
    oppcl: u8,
    owncl: u8,
    mob: u8,
    later: u8,
}

struct Scheme {
    name: &'static str,
    contexts: usize,
    /// (context, predicted value or None for a direct code)
    ctx: fn(&Feat) -> (usize, Option<u8>),
}

fn b64(x: u8) -> usize {
    if x == NONE { 64 } else { (x as usize).min(63) }
}

/// The format's depth context (`src/table/format/depth_model.rs`) and reference.
fn format_context(f: &Feat) -> (usize, u8) {
    let spread = if f.nmax == NONE {
        0
    } else {
        (f.nmax - f.nmin).min(7) as usize
    };
    let (r, m) = if f.nmax != NONE {
        (f.nmax, b64(f.nmax))
    } else if f.prev != NONE {
        (f.prev, 64)
    } else {
        (0, 65)
    };
    let c = ((m * 8 + spread) * 4 + f.ncount.min(3) as usize) * 4 + f.oppcl as usize;
    (c, r)
}

fn schemes() -> Vec<Scheme> {
    vec![
        Scheme {
            name: "order 0",
            contexts: 1,
            ctx: |_| (0, None),
        },
        Scheme {
            name: "prev",
            contexts: 65,
            ctx: |f| (b64(f.prev), None),
        },
        Scheme {
            name: "nbr max",
            contexts: 65,
            ctx: |f| (b64(f.nmax), None),
        },
        Scheme {
            name: "nbr max x count",
            contexts: 65 * 4,
            ctx: |f| (b64(f.nmax) * 4 + f.ncount.min(3) as usize, None),
        },
        Scheme {
            name: "nbr max, else prev",
            contexts: 130,
            ctx: |f| {
                if f.nmax == NONE {
                    (65 + b64(f.prev), None)
                } else {
                    (b64(f.nmax), None)
                }
            },
        },
        Scheme {
            name: "nbr max x spread x cnt",
            contexts: 65 * 4 * 4,
            ctx: |f| {
                let spread = if f.nmax == NONE {
                    0
                } else {
                    (f.nmax - f.nmin).min(3) as usize
                };
                (
                    (b64(f.nmax) * 4 + spread) * 4 + f.ncount.min(3) as usize,
                    None,
                )
            },
        },
        Scheme {
            name: "nbr max|prev x nwin",
            contexts: 130 * 4,
            ctx: |f| {
                let c = if f.nmax == NONE {
                    65 + b64(f.prev)
                } else {
                    b64(f.nmax)
                };
                (c * 4 + f.nwin.min(3) as usize, None)
            },
        },
        Scheme {
            name: "nbr max x spread7 x cnt",
            contexts: 65 * 8 * 4,
            ctx: |f| {
                let spread = if f.nmax == NONE {
                    0
                } else {
                    (f.nmax - f.nmin).min(7) as usize
                };
                (
                    (b64(f.nmax) * 8 + spread) * 4 + f.ncount.min(3) as usize,
                    None,
                )
            },
        },
        Scheme {
            name: "sp7 x cnt x p",
            contexts: 65 * 8 * 4 * 3,
            ctx: |f| {
                let spread = if f.nmax == NONE {
                    0
                } else {
                    (f.nmax - f.nmin).min(7) as usize
                };
                let m = if f.nmax == NONE { f.prev } else { f.nmax };
                let pr = if f.prev == NONE || m == NONE {
                    0
                } else if f.prev >= m {
                    1
                } else {
                    2
                };
                (
                    ((b64(m) * 8 + spread) * 4 + f.ncount.min(3) as usize) * 3 + pr,
                    None,
                )
            },
        },
        Scheme {
            name: "nbr/prev x spread x cnt x p",
            contexts: 65 * 4 * 4 * 3,
            ctx: |f| {
                let spread = if f.nmax == NONE {
                    0
                } else {
                    (f.nmax - f.nmin).min(3) as usize
                };
                let m = if f.nmax == NONE { f.prev } else { f.nmax };
                let pr = if f.prev == NONE || m == NONE {
                    0
                } else if f.prev >= m {
                    1
                } else {
                    2
                };
                (
                    ((b64(m) * 4 + spread) * 4 + f.ncount.min(3) as usize) * 3 + pr,
                    None,
                )
            },
        },
        Scheme {
            name: "jump max x spread x cnt",
            contexts: 65 * 4 * 4,
            ctx: |f| {
                let spread = if f.jmax == NONE {
                    0
                } else {
                    (f.jmax - f.jmin).min(3) as usize
                };
                (
                    (b64(f.jmax) * 4 + spread) * 4 + f.ncount.min(3) as usize,
                    None,
                )
            },
        },
        Scheme {
            name: "nbr max x jump max x sp",
            contexts: 65 * 8 * 4 * 4,
            ctx: |f| {
                let spread = if f.nmax == NONE {
                    0
                } else {
                    (f.nmax - f.nmin).min(3) as usize
                };
                let j = if f.jmax == NONE {
                    7
                } else if f.nmax == NONE {
                    6
                } else {
                    (f.jmax as i32 - f.nmax as i32).clamp(-3, 2) as usize + 3
                };
                (
                    ((b64(f.nmax) * 8 + j) * 4 + spread) * 4 + f.ncount.min(3) as usize,
                    None,
                )
            },
        },
        Scheme {
            name: "X sp7 cnt oppcl",
            contexts: 65 * 8 * 4 * 4,
            ctx: |f| {
                let spread = if f.nmax == NONE {
                    0
                } else {
                    (f.nmax - f.nmin).min(7) as usize
                };
                (
                    ((b64(f.nmax) * 8 + spread) * 4 + f.ncount.min(3) as usize) * 4
                        + f.oppcl as usize,
                    None,
                )
            },
        },
        Scheme {
            name: "X2 sp7 cnt oppcl owncl",
            contexts: 65 * 8 * 4 * 16,
            ctx: |f| {
                let spread = if f.nmax == NONE {
                    0
                } else {
                    (f.nmax - f.nmin).min(7) as usize
                };
                (
                    (((b64(f.nmax) * 8 + spread) * 4 + f.ncount.min(3) as usize) * 4
                        + f.oppcl as usize)
                        * 4
                        + f.owncl as usize,
                    None,
                )
            },
        },
        Scheme {
            name: "X3 sp7 cnt oppcl mob",
            contexts: 65 * 8 * 4 * 4 * 8,
            ctx: |f| {
                let spread = if f.nmax == NONE {
                    0
                } else {
                    (f.nmax - f.nmin).min(7) as usize
                };
                (
                    (((b64(f.nmax) * 8 + spread) * 4 + f.ncount.min(3) as usize) * 4
                        + f.oppcl as usize)
                        * 8
                        + f.mob as usize,
                    None,
                )
            },
        },
        Scheme {
            name: "E sp7 cnt oppcl",
            contexts: 66 * 8 * 4 * 4,
            ctx: |f| {
                let (c, r) = format_context(f);
                (c, Some(r))
            },
        },
        Scheme {
            name: "EL sp7 cnt oppcl later",
            contexts: 66 * 8 * 4 * 4 * 4,
            ctx: |f| {
                let (c, r) = format_context(f);
                (c * 4 + f.later.min(3) as usize, Some(r))
            },
        },
        Scheme {
            name: "EM sp7 cnt oppcl mob",
            contexts: 66 * 8 * 4 * 4 * 8,
            ctx: |f| {
                let (c, r) = format_context(f);
                (c * 8 + f.mob as usize, Some(r))
            },
        },
        Scheme {
            name: "delta nbr max|prev",
            contexts: 8,
            ctx: |f| {
                let p = if f.nmax != NONE {
                    f.nmax
                } else if f.prev != NONE {
                    f.prev
                } else {
                    0
                };
                let c = if f.nmax != NONE {
                    f.ncount.min(3) as usize
                } else {
                    4 + (f.prev != NONE) as usize
                };
                (c, Some(p))
            },
        },
    ]
}

const ONE: u32 = 1 << 16;

fn prior_n() -> u32 {
    std::env::var("PRIOR_N").map_or(12, |v| v.parse().unwrap())
}

fn limit() -> u32 {
    static L: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *L.get_or_init(|| std::env::var("LIMIT").map_or(255, |v| v.parse().unwrap()))
}

/// Adaptive nodes: probability of 0 and a count, as the WDL model.
struct Nodes {
    p: Vec<u32>,
    n: Vec<u32>,
}

impl Nodes {
    fn from_counts(c: &[[u32; 2]]) -> Nodes {
        let p = c
            .iter()
            .map(|&[z, o]| {
                if z + o == 0 {
                    ONE / 2
                } else {
                    (((z as f64 + 0.4) / ((z + o) as f64 + 0.8)) * ONE as f64) as u32
                }
            })
            .map(|p| p.clamp(48, ONE - 48))
            .collect();
        let n = c
            .iter()
            .map(|&[z, o]| if z + o == 0 { 0 } else { prior_n() })
            .collect();
        Nodes { p, n }
    }
    /// Probability of a 1 at node `i`, then adapts it to `bit`.
    fn p1_then(&mut self, i: usize, bit: bool) -> f64 {
        let p = self.p[i];
        let _ = self.cost(i, bit);
        1.0 - p as f64 / ONE as f64
    }
    fn cost(&mut self, i: usize, bit: bool) -> f64 {
        let p = self.p[i];
        let n = self.n[i];
        let rate = 2 * ONE / (2 * n + 3);
        let pb = if bit { ONE - p } else { p };
        let q = if bit {
            p - ((p * rate) >> 16)
        } else {
            p + (((ONE - p) * rate) >> 16)
        };
        self.p[i] = q.clamp(48, ONE - 48);
        self.n[i] = (n + 1).min(limit());
        -(pb as f64 / ONE as f64).log2()
    }
}

/// The bits a symbol takes: direct 8-bit tree, or zigzag delta in a 9-bit tree.
fn bits_of(f: &Feat, pred: Option<u8>) -> (u32, u32) {
    match pred {
        None => (f.h as u32, 8),
        Some(p) => {
            let d = f.h as i32 - p as i32;
            let z = if d >= 0 { 2 * d } else { -2 * d - 1 };
            (z as u32, 9)
        }
    }
}

fn visit(nodes_per: usize, s: &Scheme, f: &Feat, mut on: impl FnMut(usize, bool)) {
    let (c, pred) = (s.ctx)(f);
    if s.name.starts_with("E") {
        let r = pred.unwrap();
        let d = f.h as i32 - r as i32;
        let z = if d >= 0 { 2 * d } else { -2 * d - 1 };
        let zc = z.min(15) as u32;
        let mut node = 1usize;
        for k in (0..4).rev() {
            let bit = zc >> k & 1 == 1;
            on(c * 16 + node, bit);
            node = node * 2 + bit as usize;
        }
        if zc == 15 {
            let base = s.contexts * 16 + (f.oppcl as usize) * 256;
            let mut node = 1usize;
            for k in (0..8).rev() {
                let bit = f.h >> k & 1 == 1;
                on(base + node, bit);
                node = node * 2 + bit as usize;
            }
        }
        return;
    }
    let (v, width) = bits_of(f, pred);
    let mut node = 1usize;
    for k in (0..width).rev() {
        let bit = v >> k & 1 == 1;
        on(c * nodes_per + node, bit);
        node = node * 2 + bit as usize;
    }
}

fn closable(rules: &Rules, side: u32, empty: u32, any: bool) -> u8 {
    let adj = &rules.adjacency;
    let mut n = 0;
    for &m in &rules.mills {
        let hole = m & empty;
        if (m & side).count_ones() == 2 && hole != 0 {
            let h = hole.trailing_zeros() as usize;
            if any || adj[h] & side & !m != 0 {
                n += 1;
            }
        }
    }
    n.min(3)
}

fn mob_bucket(m: u32) -> u8 {
    match m {
        0..=2 => m as u8,
        3..=4 => 3,
        5..=6 => 4,
        7..=9 => 5,
        10..=13 => 6,
        _ => 7,
    }
}

fn mix_scheme() -> Scheme {
    Scheme {
        name: "E-B prev mob owncl cnt r",
        contexts: 4 * 8 * 4 * 4 * 16,
        ctx: |f| {
            let (r, _) = if f.nmax != NONE {
                (f.nmax, 0)
            } else if f.prev != NONE {
                (f.prev, 64)
            } else {
                (0, 65)
            };
            let pr = if f.prev == NONE {
                0
            } else if f.prev < r {
                1
            } else if f.prev == r {
                2
            } else {
                3
            };
            (
                (((pr * 8 + f.mob as usize) * 4 + f.owncl as usize) * 4 + f.ncount.min(3) as usize)
                    * 16
                    + (r as usize).min(15),
                Some(r),
            )
        },
    }
}

fn stretch(p: f64) -> f64 {
    let p = p.clamp(1e-6, 1.0 - 1e-6);
    (p / (1.0 - p)).ln()
}

/// The format's scheme among [`schemes`].
fn format_scheme() -> Scheme {
    schemes()
        .into_iter()
        .find(|s| s.name.starts_with("E sp7"))
        .expect("the format's scheme")
}

/// Ideal code length of the E scheme mixed with a second model of other features.
fn mixed(feats: &[(u32, Feat)], n: f64) {
    let a = &format_scheme();
    let b = mix_scheme();
    let total = |s: &Scheme| s.contexts * 16 + 4 * 256;
    let prior_of = |s: &Scheme| {
        let mut counts = vec![[0u32; 2]; total(s)];
        for (_, ft) in feats {
            visit(512, s, ft, |i, bit| counts[i][bit as usize] += 1);
        }
        Nodes::from_counts(&counts)
    };
    let (pa, pb) = (prior_of(a), prior_of(&b));
    let lr: f64 = std::env::var("LR").map_or(0.002, |v| v.parse().unwrap());
    for use_b in [false, true] {
        let mut na = Nodes {
            p: pa.p.clone(),
            n: pa.n.clone(),
        };
        let mut nb = Nodes {
            p: pb.p.clone(),
            n: pb.n.clone(),
        };
        let (mut sa, mut sb) = (vec![u32::MAX; pa.p.len()], vec![u32::MAX; pb.p.len()]);
        let mut w = vec![[1.0f64, 0.0, 0.0]; 64];
        let mut bits = 0.0;
        for (blk, ft) in feats {
            let mut seq_a = Vec::new();
            visit(512, a, ft, |i, bit| seq_a.push((i, bit)));
            let mut seq_b = Vec::new();
            visit(512, &b, ft, |i, _| seq_b.push(i));
            for (k, (&(ia, bit), &ib)) in seq_a.iter().zip(&seq_b).enumerate() {
                if sa[ia] != *blk {
                    sa[ia] = *blk;
                    na.p[ia] = pa.p[ia];
                    na.n[ia] = pa.n[ia];
                }
                if sb[ib] != *blk {
                    sb[ib] = *blk;
                    nb.p[ib] = pb.p[ib];
                    nb.n[ib] = pb.n[ib];
                }
                let p1a = na.p1_then(ia, bit);
                let p1b = nb.p1_then(ib, bit);
                let x = [stretch(p1a), stretch(p1b), 0.3];
                let m = &mut w[(k.min(11)) * 4 + ft.ncount.min(3) as usize];
                let dot = if use_b {
                    m[0] * x[0] + m[1] * x[1] + m[2] * x[2]
                } else {
                    x[0]
                };
                let p = 1.0 / (1.0 + (-dot).exp());
                let p = p.clamp(1.0 / 4096.0, 1.0 - 1.0 / 4096.0);
                bits -= if bit { p.log2() } else { (1.0 - p).log2() };
                let err = bit as u8 as f64 - p;
                for j in 0..3 {
                    m[j] += lr * err * x[j];
                }
            }
        }
        println!(
            "  {:<26} {:>7.4}",
            if use_b {
                "E mixed with B"
            } else {
                "E alone (mixer path)"
            },
            bits / n
        );
    }
}

/// A secondary context of the APM stage ([`refined`]).
struct Secondary {
    name: &'static str,
    contexts: usize,
    ctx: fn(&Feat) -> usize,
}

/// The previous lost slot's half distance against the reference: none, below,
/// equal, above.
fn prev_vs_reference(f: &Feat) -> usize {
    let r = if f.nmax != NONE {
        f.nmax
    } else if f.prev != NONE {
        f.prev
    } else {
        0
    };
    match f.prev {
        NONE => 0,
        p if p < r => 1,
        p if p == r => 2,
        _ => 3,
    }
}

fn secondaries() -> Vec<Secondary> {
    vec![
        Secondary {
            name: "none",
            contexts: 1,
            ctx: |_| 0,
        },
        Secondary {
            name: "prev x count",
            contexts: 16,
            ctx: |f| prev_vs_reference(f) * 4 + f.ncount.min(3) as usize,
        },
        Secondary {
            name: "mob x owncl",
            contexts: 32,
            ctx: |f| f.mob as usize * 4 + f.owncl as usize,
        },
        Secondary {
            name: "nwin x prev",
            contexts: 16,
            ctx: |f| f.nwin.min(3) as usize * 4 + prev_vs_reference(f),
        },
        Secondary {
            name: "mob x prev",
            contexts: 32,
            ctx: |f| f.mob as usize * 4 + prev_vs_reference(f),
        },
    ]
}

/// Ideal code length of the format's scheme with an APM stage after it (as the
/// WDL model's refiner): per secondary context and tree node (the escape
/// trees' nodes as one), a curve over the stretched probability in 33 points,
/// interpolated, reset every block, learning at `RATE`; the bit coded with
/// `SHARE` of the curve's probability and the rest of the model's.
fn refined(feats: &[(u32, Feat)], n: f64) {
    let a = &format_scheme();
    let mut counts = vec![[0u32; 2]; a.contexts * 16 + 4 * 256];
    for (_, ft) in feats {
        visit(512, a, ft, |i, bit| counts[i][bit as usize] += 1);
    }
    let pa = Nodes::from_counts(&counts);
    let share: f64 = std::env::var("SHARE").map_or(0.5, |v| v.parse().unwrap());
    let rate: f64 = std::env::var("RATE").map_or(0.125, |v| v.parse().unwrap());
    let pick = std::env::var("SECS").unwrap_or_default();
    let identity: Vec<f64> = (0..33)
        .map(|j| 1.0 / (1.0 + (-(j as f64 * 0.5 - 8.0)).exp()))
        .collect();
    let clamp = |p: f64| p.clamp(1.0 / 65536.0, 1.0 - 1.0 / 65536.0);
    let cost = |p: f64, bit: bool| if bit { -p.log2() } else { -(1.0 - p).log2() };
    for sec in secondaries()
        .into_iter()
        .filter(|s| pick.is_empty() || pick.split(',').any(|p| s.name.starts_with(p)))
    {
        let mut na = Nodes {
            p: pa.p.clone(),
            n: pa.n.clone(),
        };
        let mut stamp = vec![u32::MAX; pa.p.len()];
        let rows = sec.contexts * 17;
        let mut apm = identity.repeat(rows);
        let mut block = u32::MAX;
        let (mut bits, mut alone) = (0.0, 0.0);
        for (blk, ft) in feats {
            if *blk != block {
                block = *blk;
                apm = identity.repeat(rows);
            }
            let c = (sec.ctx)(ft);
            let mut seq = Vec::new();
            visit(512, a, ft, |i, bit| seq.push((i, bit)));
            for (i, bit) in seq {
                if stamp[i] != *blk {
                    stamp[i] = *blk;
                    na.p[i] = pa.p[i];
                    na.n[i] = pa.n[i];
                }
                let node = if i >= a.contexts * 16 { 16 } else { i % 16 };
                let p1 = clamp(na.p1_then(i, bit));
                let x = (stretch(p1).clamp(-7.999, 7.999) + 8.0) * 2.0;
                let (lo, w) = (x.floor() as usize, x - x.floor());
                let at = (c * 17 + node) * 33 + lo;
                let q = apm[at] * (1.0 - w) + apm[at + 1] * w;
                bits += cost(clamp(p1 * (1.0 - share) + q * share), bit);
                alone += cost(p1, bit);
                let t = bit as u8 as f64;
                apm[at] += (t - apm[at]) * (1.0 - w) * rate;
                apm[at + 1] += (t - apm[at + 1]) * w * rate;
            }
        }
        println!(
            "  {:<26} {:>7.4} (alone {:.4})",
            sec.name,
            bits / n,
            alone / n
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, k, l] = &args[..] else {
        eprintln!("usage: depth_model_ideas FILE.mdb K L");
        std::process::exit(2);
    };
    let (k, l): (u32, u32) = (k.parse().unwrap(), l.parse().unwrap());
    let f = SubspaceFile::open(Path::new(name), &Expect::any()).unwrap();
    let codes = f.read_all_stored().unwrap();
    let rules = Rules::standard();
    let idx = Index::standard();
    let per = idx.per_class(k, l);
    assert_eq!(codes.len() as u64, idx.size(k, l));
    let block = per * MIN_BLOCK.div_ceil(per);
    let all = rules.all();
    let adj = &rules.adjacency;
    let h_of = |c: u16| match Value::from_code(c) {
        Value::Loss(n) => (n / 2).min(254) as u8,
        _ => NONE,
    };
    // Features of every lost slot, with its block.
    let mut feats: Vec<(u32, Feat)> = Vec::new();
    let mut prev = NONE;
    for class in 0..idx.classes(k) {
        let (own, _) = idx.class(k, class);
        let base = class * per;
        if base.is_multiple_of(block) {
            prev = NONE;
        }
        let free = all & !own;
        let mut packed = first_subset(l);
        for r in 0..per {
            let opp = pdep(packed, free);
            if r + 1 < per {
                packed = next_subset(packed);
            }
            let h = h_of(codes[(base + r) as usize]);
            if h == NONE {
                continue;
            }
            let empty = all & !(own | opp);
            let mut ft = Feat {
                h,
                prev,
                nmax: NONE,
                nmin: NONE,
                ..Default::default()
            };
            for p in points(opp) {
                for q in points(adj[p as usize] & empty & ((1 << p) - 1)) {
                    let n = idx.rank_among(opp ^ (1 << p) ^ (1 << q), own);
                    let c = codes[(base + n) as usize];
                    let nh = h_of(c);
                    if nh != NONE {
                        ft.ncount += 1;
                        ft.nmax = if ft.nmax == NONE { nh } else { ft.nmax.max(nh) };
                        ft.nmin = if ft.nmin == NONE { nh } else { ft.nmin.min(nh) };
                    } else if matches!(Value::from_code(c), Value::Win(_)) {
                        ft.nwin += 1;
                    }
                }
            }
            for p in points(opp) {
                for q in points(adj[p as usize] & empty & !((1 << p) - 1)) {
                    let n = idx.rank_among(opp ^ (1 << p) ^ (1 << q), own);
                    if h_of(codes[(base + n) as usize]) != NONE {
                        ft.later += 1;
                    }
                }
            }
            ft.jmax = NONE;
            ft.jmin = NONE;
            for p in points(opp).filter(|_| std::env::var("JUMP").is_ok()) {
                for q in points(empty & ((1 << p) - 1)) {
                    let n = idx.rank_among(opp ^ (1 << p) ^ (1 << q), own);
                    let nh = h_of(codes[(base + n) as usize]);
                    if nh != NONE {
                        ft.jmax = if ft.jmax == NONE { nh } else { ft.jmax.max(nh) };
                        ft.jmin = if ft.jmin == NONE { nh } else { ft.jmin.min(nh) };
                    }
                }
            }
            ft.oppcl = closable(rules, opp, empty, l <= 3);
            ft.owncl = closable(rules, own, empty, k <= 3);
            ft.mob = mob_bucket(
                points(own)
                    .map(|p| (adj[p as usize] & empty).count_ones())
                    .sum(),
            );
            feats.push(((base / block) as u32, ft));
            prev = h;
        }
    }
    let n = codes.len() as f64;
    println!("{name}: {} slots, {} lost", codes.len(), feats.len());
    // zstd baseline: loss bytes per 2^18-slot block, level 9.
    let mut z = 0usize;
    let mut cur = Vec::new();
    let mut blk = 0u64;
    for (s, &c) in codes.iter().enumerate() {
        if s as u64 >> 18 != blk {
            z += zstd::bulk::compress(&cur, 9).unwrap().len();
            cur.clear();
            blk = s as u64 >> 18;
        }
        let h = h_of(c);
        if h != NONE {
            cur.push(h);
        }
    }
    z += zstd::bulk::compress(&cur, 9).unwrap().len();
    println!(
        "  {:<26} {:>7.4}",
        "zstd 9, 2^18 blocks",
        z as f64 * 8.0 / n
    );
    if std::env::var_os("MIX").is_some() {
        mixed(&feats, n);
        return;
    }
    if std::env::var_os("APM").is_some() {
        refined(&feats, n);
        return;
    }
    let only: Vec<String> = std::env::var("SCHEMES")
        .map(|v| v.split(',').map(String::from).collect())
        .unwrap_or_default();
    for s in schemes()
        .into_iter()
        .filter(|s| only.is_empty() || only.iter().any(|o| s.name.starts_with(o.as_str())))
    {
        let per_ctx = 512;
        let total = if s.name.starts_with("E") {
            s.contexts * 16 + 4 * 256
        } else {
            s.contexts * per_ctx
        };
        let mut counts = vec![[0u32; 2]; total];
        for (_, ft) in &feats {
            visit(per_ctx, &s, ft, |i, b| counts[i][b as usize] += 1);
        }
        let prior = Nodes::from_counts(&counts);
        let stored_prior = {
            let raw: Vec<u8> = prior
                .p
                .iter()
                .flat_map(|p| (*p as u16).to_le_bytes())
                .collect();
            zstd::bulk::compress(&raw, 19).unwrap().len()
        };
        let mut bits = 0.0;
        let mut nodes = Nodes {
            p: prior.p.clone(),
            n: prior.n.clone(),
        };
        let mut stamp = vec![u32::MAX; prior.p.len()];
        for (b, ft) in &feats {
            visit(per_ctx, &s, ft, |i, bit| {
                if stamp[i] != *b {
                    stamp[i] = *b;
                    nodes.p[i] = prior.p[i];
                    nodes.n[i] = prior.n[i];
                }
                bits += nodes.cost(i, bit)
            });
        }
        println!(
            "  {:<26} {:>7.4}  (prior {} bytes)",
            s.name,
            (bits + stored_prior as f64 * 8.0) / n,
            stored_prior
        );
    }
}
