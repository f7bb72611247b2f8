//! How many slots of a database a probe could recover without their stored value
//! (the storage issue's "don't-cares"), estimated from random slots per sector.
//!
//! ```text
//! cargo run --release --example dontcare -- DB [SAMPLES] [moving|placement|all]
//! ```
//!
//! Per sector, `SAMPLES` (default 2,000) random slots, each one of:
//! - *duplicate*: not the canonical slot of its symmetry class (padding: its value
//!   is never read, so it may be anything);
//! - *terminal*: the side to move has lost by rule (no legal ply), known without
//!   the table;
//! - *capture, exact*: a capturing ply is among the best, so the full value is the
//!   best of the capturing plies' values (a one-ply look-ahead into smaller sectors);
//! - *capture, WDL*: a capturing ply reaches the position's win/draw/loss but not its
//!   distance;
//! - *stored*: the rest, whose value only the table knows.
//!
//! With Syzygy's rule (store anything no better than the true value where a capture
//! reaches it, and probe as the better of the stored value and the captures'), the
//! first three classes cost the WDL section nearly nothing; the figures say how
//! much of each sector that is. The totals weigh each sector by its slots.

use millbase::mix::SplitMix;
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use std::time::Instant;

/// Counts of the classes, in the order of the module doc.
#[derive(Default, Clone, Copy)]
struct Classes([u64; 5]);

const NAMES: [&str; 5] = [
    "duplicate",
    "terminal",
    "capture exact",
    "capture WDL",
    "stored",
];

fn classify(tb: &Tablebase, s: Sector, samples: u64) -> Classes {
    let idx = tb.index();
    let (k, l) = s.counts();
    let size = idx.size(k, l);
    let mut mix = SplitMix(size ^ (s.hk as u64) << 40 ^ (s.hl as u64) << 48);
    let mut slots: Vec<u64> = (0..samples.min(size)).map(|_| mix.below(size)).collect();
    slots.sort_unstable();
    let mut c = Classes::default();
    for slot in slots {
        let (own, opp) = idx.position(k, l, slot);
        if idx.index(own, opp) != slot {
            c.0[0] += 1;
            continue;
        }
        let pos = s.position(own, opp);
        let moves = tb
            .moves(&pos)
            .unwrap_or_else(|e| panic!("{s} slot {slot}: {e}"));
        let Some(&(_, best)) = moves.first() else {
            c.0[1] += 1;
            continue;
        };
        let capture = moves
            .iter()
            .filter(|(p, _)| p.removes())
            .map(|&(_, v)| v)
            .max_by(|a, b| a.cmp_goodness(*b));
        c.0[match capture {
            Some(v) if v == best => 2,
            Some(v) if v.wdl() == best.wdl() => 3,
            _ => 4,
        }] += 1;
    }
    c
}

fn line(name: &str, c: &Classes) -> String {
    let n = c.0.iter().sum::<u64>().max(1) as f64;
    let cells: Vec<String> =
        c.0.iter()
            .map(|&x| format!("{:>6.1}%", 100.0 * x as f64 / n))
            .collect();
    format!("{name:>10} {}", cells.join(" "))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: dontcare DB [SAMPLES] [moving|placement|all]");
        std::process::exit(2);
    };
    let samples: u64 = args.get(1).map_or(2000, |a| a.parse().expect("SAMPLES"));
    let which = args.get(2).map_or("all", String::as_str);
    let tb = Tablebase::open(dir).unwrap_or_else(|e| {
        eprintln!("{dir}: {e}");
        std::process::exit(1)
    });
    let t = Instant::now();
    println!(
        "{:>10} {}",
        "sector",
        NAMES.map(|n| format!("{n:>7}")).join(" ")
    );
    let mut total = [0f64; 5];
    let mut slots = 0f64;
    for s in tb.available_sectors() {
        let wanted = match which {
            "moving" => s.is_moving(),
            "placement" => !s.is_moving(),
            _ => true,
        };
        if !wanted {
            continue;
        }
        let c = classify(&tb, s, samples);
        println!("{}", line(&s.name(), &c));
        let size = tb.index().size(s.k as u32, s.l as u32) as f64;
        let n = c.0.iter().sum::<u64>().max(1) as f64;
        for (t, &x) in total.iter_mut().zip(&c.0) {
            *t += size * x as f64 / n;
        }
        slots += size;
    }
    let cells: Vec<String> = total
        .iter()
        .map(|&x| format!("{:>6.1}%", 100.0 * x / slots.max(1.0)))
        .collect();
    println!(
        "{:>10} {}  ({:.2} G slots, {:.0} s)",
        "all",
        cells.join(" "),
        slots / 1e9,
        t.elapsed().as_secs_f64()
    );
}
