//! What filling the don't-cares of a sector would save: the WDL and depth sections
//! of whole blocks of a real file recompressed with the don't-care slots filled in
//! several ways (the storage issue's measurement before choosing a fill).
//!
//! ```text
//! cargo run --release --example dontcare_fill -- DB SECTOR [BLOCKS]
//! ```
//!
//! Takes `BLOCKS` (default 4) WDL blocks of 2^20 slots, evenly spread over the
//! sector's file, and for every slot decides:
//! - *duplicate*: not its class's canonical slot (never read);
//! - *WDL don't-care*: a capturing ply (a child in a smaller sector) reaches the
//!   slot's win/draw/loss, so a WDL-only file may store any result no better;
//! - *value don't-care*: a capturing ply reaches the exact value, so a full file may
//!   store any value no better (its WDL and depth).
//!
//! Then it packs the blocks as the format does (trits5 at zstd level 15 for WDL,
//! half-u8 at level 9 for depth, blocks of 2^20 and 2^18 slots) with the
//! don't-cares and duplicates filled by each rule, and prints bits per slot:
//! - `none`: the true values (what files hold today);
//! - `prev`: the previous slot's (filled) value if it is allowed, else the best
//!   allowed one (the true value);
//! - `loss`: the worst value (`Loss(0)`), always allowed;
//! - `low`: a draw where a draw is allowed (for a WDL-only file: where the slot is
//!   not lost), else `Loss(0)`;
//! - `major`: the block's most common true result, if allowed, else the true value
//!   (with the depth of the previous slot of that result).

use millbase::Value;
use millbase::rules::value::Wdl;
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use std::time::Instant;

const WDL_BLOCK: usize = 1 << 20;
const DEPTH_BLOCK: usize = 1 << 18;

/// What a slot allows.
#[derive(Clone, Copy)]
struct Slot {
    value: Value,
    dup: bool,
    wdl_free: bool,
    value_free: bool,
}

fn trit(v: Value) -> u8 {
    match v.wdl() {
        Wdl::Draw => 0,
        Wdl::Win => 1,
        Wdl::Loss => 2,
    }
}

fn half(v: Value) -> u8 {
    v.distance().map_or(0, |n| (n / 2).min(255) as u8)
}

fn zsize(raw: &[u8], level: i32) -> usize {
    zstd::bulk::compress(raw, level).unwrap().len()
}

fn wdl_bytes(values: &[Value]) -> usize {
    let raw: Vec<u8> = values
        .chunks(WDL_BLOCK)
        .flat_map(|b| {
            b.chunks(5)
                .map(|c| c.iter().rev().fold(0u8, |a, &v| a * 3 + trit(v)))
                .collect::<Vec<u8>>()
        })
        .collect();
    raw.chunks(WDL_BLOCK / 5 + 1).map(|c| zsize(c, 15)).sum()
}

fn depth_bytes(values: &[Value]) -> usize {
    values
        .chunks(DEPTH_BLOCK)
        .map(|b| zsize(&b.iter().map(|&v| half(v)).collect::<Vec<u8>>(), 9))
        .sum()
}

/// `v` if it is no better than `truth`, else `truth`.
fn at_most(v: Value, truth: Value) -> Value {
    if v.cmp_goodness(truth).is_le() {
        v
    } else {
        truth
    }
}

/// The filled values of `slots` by `rule`, for a WDL-only file (`wdl`: only the
/// result matters, so a WDL don't-care may take any result no better) or a full one.
fn fill(slots: &[Slot], rule: &str, wdl: bool) -> Vec<Value> {
    let free = |s: &Slot| s.dup || if wdl { s.wdl_free } else { s.value_free };
    let mut counts = [0usize; 3];
    for s in slots {
        counts[trit(s.value) as usize] += 1;
    }
    let major =
        [Value::Draw, Value::Win(1), Value::Loss(0)][(0..3).max_by_key(|&i| counts[i]).unwrap()];
    let mut out = Vec::with_capacity(slots.len());
    let mut prev = Value::Loss(0);
    for s in slots {
        let v = if !free(s) || rule == "none" {
            s.value
        } else {
            // A duplicate may hold anything; a don't-care anything no better.
            let truth = if s.dup { Value::Win(1) } else { s.value };
            let want = match rule {
                "prev" => prev,
                "loss" => Value::Loss(0),
                // A draw where it is allowed, else `Loss(0)`: depth 0 everywhere.
                "low" if Value::Draw.cmp_goodness(truth).is_le() => Value::Draw,
                "low" => Value::Loss(0),
                _ => major,
            };
            if wdl {
                // Only the result is stored: compare results.
                if want.wdl() <= truth.wdl() {
                    want
                } else {
                    s.value
                }
            } else {
                at_most(want, truth)
            }
        };
        out.push(v);
        prev = v;
    }
    out
}

fn classify(tb: &Tablebase, s: Sector, from: u64, n: u64) -> Vec<Slot> {
    let idx = tb.index();
    let (k, l) = s.counts();
    let file = tb.sector_file(s).unwrap();
    let rules = tb.rules();
    (from..from + n)
        .map(|slot| {
            let value = file.value(slot).unwrap();
            let (own, opp) = idx.position(k, l, slot);
            if idx.index(own, opp) != slot {
                return Slot {
                    value,
                    dup: true,
                    wdl_free: false,
                    value_free: false,
                };
            }
            let pos = s.position(own, opp);
            let best = pos
                .legal_plies(rules)
                .into_iter()
                .filter(|p| p.removes())
                .map(|p| tb.ply_value(&pos.after(rules, p)).unwrap())
                .max_by(|a, b| a.cmp_goodness(*b));
            Slot {
                value,
                dup: false,
                wdl_free: best.is_some_and(|b| b.wdl() == value.wdl()),
                value_free: best == Some(value),
            }
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(name)) = (args.first(), args.get(1)) else {
        eprintln!("usage: dontcare_fill DB SECTOR [BLOCKS]");
        std::process::exit(2);
    };
    let blocks: u64 = args.get(2).map_or(4, |a| a.parse().expect("BLOCKS"));
    let tb = Tablebase::open(dir).unwrap();
    let s = Sector::parse(name).expect("a sector, K-L or K-L-HK-HL");
    let (k, l) = s.counts();
    let size = tb.index().size(k, l);
    let total = size.div_ceil(WDL_BLOCK as u64);
    let t = Instant::now();
    let mut slots = Vec::new();
    for i in 0..blocks.min(total) {
        let b = i * total / blocks.min(total);
        let from = b * WDL_BLOCK as u64;
        slots.extend(classify(&tb, s, from, (size - from).min(WDL_BLOCK as u64)));
    }
    let n = slots.len() as f64;
    let share = |f: fn(&Slot) -> bool| 100.0 * slots.iter().filter(|s| f(s)).count() as f64 / n;
    println!(
        "{name}: {} slots in {} blocks of {total}; duplicates {:.1}%, WDL don't-cares {:.1}%, value don't-cares {:.1}% ({:.0} s)",
        slots.len(),
        blocks.min(total),
        share(|s| s.dup),
        share(|s| s.wdl_free),
        share(|s| s.value_free),
        t.elapsed().as_secs_f64()
    );
    let bits = |b: usize| b as f64 * 8.0 / n;
    println!(
        "{:>6} {:>12} {:>12} {:>12}",
        "fill", "WDL-only", "full WDL", "full depth"
    );
    for rule in ["none", "prev", "loss", "low", "major"] {
        let w = fill(&slots, rule, true);
        let f = fill(&slots, rule, false);
        println!(
            "{rule:>6} {:>12.4} {:>12.4} {:>12.4}",
            bits(wdl_bytes(&w)),
            bits(wdl_bytes(&f)),
            bits(depth_bytes(&f))
        );
    }
}
