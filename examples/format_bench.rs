//! Figures for the file format and the probe library.
//!
//! ```text
//! cargo run --release --example format_bench -- synthetic [SLOTS]
//!     bits per slot of the WDL and depth sections on synthetic codes, per encoding
//! cargo run --release --example format_bench -- recode DB [K-L ...]
//!     re-encodes real files with other encodings, levels and block sizes
//! cargo run --release --example format_bench -- placement DB [PROBES] [K-L-HK-HL ...]
//!     the same for placement sectors (all, or the ones named), with best-ply
//!     latency on the first (blocks cold) and second pass
//! cargo run --release --example format_bench -- blocks DB [K-L ...]
//!     size and decompression time per block of real files written with smaller
//!     blocks (what a cold probe or best ply pays per block it meets)
//! cargo run --release --example format_bench -- decode DB SECTOR...
//!     every WDL block of each named sector (`K-L` or `K-L-HK-HL`) decoded on one
//!     thread: bits per slot, ns per slot and ms per block (what a cold WDL probe
//!     pays), for zstd-coded and model-coded files alike; then, for a model-coded
//!     depth section, its share of reading every value (ns per lost slot, ms per
//!     depth block)
//! cargo run --release --example format_bench -- probe DB [PROBES] [K-L ...]
//!     random WDL and full probes per second (cold and warm, one thread), and
//!     best-ply latency, per subspace present in DB (or the ones named; WDL only
//!     in a directory made by `millbase pack --wdl-only`)
//! ```
//!
//! `CACHE_MB=N` sets the probe cache to N MiB (default 1 GiB) for `probe` and
//! `placement`.
//!
//! Figures are medians of a few runs where timing matters. The files written for
//! the trials go in a directory under the temporary directory that is removed when
//! the program ends (`tests/common/scratch.rs`).

// The tests' scratch directories (only the process-long one is used here).
#[allow(dead_code)]
#[path = "../tests/common/scratch.rs"]
mod scratch;

use millbase::mix::SplitMix as Mix;
use millbase::rules::value::Counts;
use millbase::table::dir::manifest::file_name;
use millbase::table::format::{
    Encoding, Expect, SubspaceFile, SubspaceMeta, WriteOptions, write_subspace_with,
};
use millbase::table::index::Index;
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use millbase::{Color, Position, Rules, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn meta_for(k: u32, l: u32, codes: &[u16]) -> SubspaceMeta {
    SubspaceMeta {
        k,
        l,
        hands: [0, 0],
        fingerprint: Rules::standard().fingerprint(),
        variant: "standard".into(),
        counts: Counts::of_codes(codes),
    }
}

/// Skewed codes in runs, roughly shaped like a real table: mostly short wins,
/// some losses, patches of draws.
fn realistic(n: usize, seed: u64) -> Vec<u16> {
    let mut r = Mix(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let x = r.below(1000);
        let run = 1 + r.below(12) as usize;
        let code = if x < 100 {
            0
        } else if x < 800 {
            2 * (r.below(4) + r.below(4)) as u16 + 2
        } else {
            2 * (r.below(13) as u16) + 1
        };
        for _ in 0..run.min(n - out.len()) {
            out.push(code);
        }
    }
    out
}

/// The directory for the trials' files, removed when the program ends.
fn scratch() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| scratch::lasting("format-bench"))
}

/// Writes `codes` with `opts` and prints the figures.
fn trial(label: &str, k: u32, l: u32, codes: &[u16], opts: &WriteOptions) {
    let path = scratch().join("trial.mdb");
    let meta = meta_for(k, l, codes);
    let t = Instant::now();
    let rep = write_subspace_with(&path, &meta, codes, opts).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let n = codes.len().max(1) as f64;
    println!(
        "{label:<34} wdl {:>7.4} bits/slot  depth {:>7.4} bits/slot  total {:>12} bytes  write {:>6.2} s ({:.1} M slots/s)",
        rep.wdl.length as f64 * 8.0 / n,
        rep.depth_bytes() as f64 * 8.0 / n,
        rep.file_bytes(),
        secs,
        n / secs / 1e6
    );
    let _ = std::fs::remove_file(&path);
}

fn variants(k: u32, l: u32, codes: &[u16]) {
    let base = WriteOptions::default();
    trial("default", k, l, codes, &base);
    trial(
        "bits2 wdl",
        k,
        l,
        codes,
        &WriteOptions {
            wdl_encoding: Encoding::Bits2,
            ..base.clone()
        },
    );
    trial(
        "both level 1 (time reference)",
        k,
        l,
        codes,
        &WriteOptions {
            wdl_level: 1,
            depth_level: 1,
            ..base.clone()
        },
    );
    // One section at a time; the other at level 1.
    for block in [16, 18, 20] {
        for level in [9, 15, 19] {
            trial(
                &format!("wdl 2^{block} level {level}"),
                k,
                l,
                codes,
                &WriteOptions {
                    wdl_block: 1 << block,
                    wdl_level: level,
                    depth_level: 1,
                    ..base.clone()
                },
            );
        }
    }
    for block in [16, 17, 18] {
        for level in [9, 12, 15, 19] {
            trial(
                &format!("depth 2^{block} level {level}"),
                k,
                l,
                codes,
                &WriteOptions {
                    depth_block: 1 << block,
                    depth_level: level,
                    wdl_level: 1,
                    ..base.clone()
                },
            );
        }
    }
}

fn synthetic(args: &[String]) {
    let n: usize = args
        .first()
        .map_or(20_000_000, |s| s.parse().expect("SLOTS"));
    println!("synthetic realistic codes, {n} slots");
    variants(3, 3, &realistic(n, 1));
    println!("uniform random codes (incompressible reference), {n} slots");
    let mut r = Mix(2);
    let codes: Vec<u16> = (0..n).map(|_| r.below(60) as u16).collect();
    trial("default", 3, 3, &codes, &WriteOptions::default());
}

fn parse_kl(s: &str) -> (u32, u32) {
    let (k, l) = s.split_once('-').expect("K-L");
    (k.parse().expect("K"), l.parse().expect("L"))
}

fn present(db: &Path) -> Vec<(u32, u32)> {
    let mut out = vec![];
    for k in 3..=9 {
        for l in 3..=9 {
            if db.join(file_name(k, l)).is_file() {
                out.push((k, l));
            }
        }
    }
    out
}

fn recode(args: &[String]) {
    let db = PathBuf::from(&args[0]);
    let list: Vec<(u32, u32)> = if args.len() > 1 {
        args[1..].iter().map(|s| parse_kl(s)).collect()
    } else {
        present(&db)
    };
    for (k, l) in list {
        let f = SubspaceFile::open(&db.join(file_name(k, l)), &Expect::any()).unwrap();
        let (w, d) = f.section_bytes();
        let n = f.size() as f64;
        println!(
            "{k}-{l}: {} slots, as built: wdl {:.4} bits/slot, depth {:.4} bits/slot",
            f.size(),
            w as f64 * 8.0 / n,
            d as f64 * 8.0 / n
        );
        let codes = f.read_all().unwrap();
        variants(k, l, &codes);
    }
}

/// Rewrites real files with other block sizes (default levels) and prints the bits
/// per slot and the time to decompress one block of each section.
fn blocks(args: &[String]) {
    let db = PathBuf::from(&args[0]);
    for (k, l) in args[1..].iter().map(|s| parse_kl(s)) {
        let f = SubspaceFile::open(&db.join(file_name(k, l)), &Expect::any()).unwrap();
        let codes = f.read_all().unwrap();
        let n = codes.len() as f64;
        for (wdl_log, depth_log) in [(20, 18), (18, 16), (17, 15), (16, 14)] {
            let opts = WriteOptions {
                wdl_block: 1 << wdl_log,
                depth_block: 1 << depth_log,
                ..WriteOptions::default()
            };
            let path = scratch().join("blocks.mdb");
            let rep = write_subspace_with(&path, &meta_for(k, l, &codes), &codes, &opts).unwrap();
            // Per block: the whole section decompressed by WDL reads (one per block)
            // and by full reads, less the WDL part, over the number of blocks.
            let per_block = |step: u64, full: bool| {
                let mut runs = vec![];
                for _ in 0..3 {
                    let g = SubspaceFile::open(&path, &Expect::any()).unwrap();
                    let t = Instant::now();
                    let mut i = 0;
                    while i < codes.len() as u64 {
                        if full {
                            std::hint::black_box(g.code(i).unwrap());
                        } else {
                            std::hint::black_box(g.wdl(i).unwrap());
                        }
                        i += step;
                    }
                    runs.push(t.elapsed().as_secs_f64() * 1e6 / n.div_euclid(step as f64).max(1.0));
                }
                median(runs)
            };
            let wdl_us = per_block(1 << wdl_log, false);
            // A full read of slot i decompresses its WDL and its depth block; stepping
            // by the depth block size meets every depth block and a WDL block per
            // 2^(wdl_log - depth_log) of them.
            let full_us = per_block(1 << depth_log, true);
            let depth_us = full_us - wdl_us / (1 << (wdl_log - depth_log)) as f64;
            println!(
                "{k}-{l} wdl 2^{wdl_log} depth 2^{depth_log}: wdl {:.4} bits/slot, {wdl_us:.0} us/block; depth {:.4} bits/slot, {depth_us:.0} us/block",
                rep.wdl.length as f64 * 8.0 / n,
                rep.depth_bytes() as f64 * 8.0 / n,
            );
            let _ = std::fs::remove_file(&path);
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn random_sets(r: &mut Mix, k: u32, l: u32) -> (u32, u32) {
    let mut take = |n: u32, taken: u32| {
        let mut set = 0u32;
        while set.count_ones() < n {
            let p = r.below(24) as u32;
            if (taken | set) >> p & 1 == 0 {
                set |= 1 << p;
            }
        }
        set
    };
    let own = take(k, 0);
    (own, take(l, own))
}

/// The tablebase of `db`, its block cache `CACHE_MB` MiB if that is set.
fn open(db: &Path) -> Tablebase {
    let tb = Tablebase::open(db).unwrap();
    if let Ok(mb) = std::env::var("CACHE_MB") {
        tb.set_cache_limit(mb.parse::<usize>().expect("CACHE_MB") << 20);
    }
    tb
}

fn decode(args: &[String]) {
    let tb = open(Path::new(&args[0]));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for name in &args[1..] {
        let s = millbase::table::sector::Sector::parse(name).expect("SECTOR: K-L or K-L-HK-HL");
        let f = tb.sector_file(s).unwrap();
        let h = f.header();
        let runs: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                pool.install(|| f.read_all_wdl().unwrap());
                t.elapsed().as_secs_f64()
            })
            .collect();
        let secs = median(runs);
        let blocks = h.size.div_ceil(h.wdl.block_slots as u64);
        println!(
            "{name}: {} slots, WDL {} ({}), {:.3} bit/slot, {blocks} blocks of {} slots: {:.1} ns/slot, {:.2} ms/block (median of 3, one thread)",
            h.size,
            h.wdl.encoding.name(),
            if f.wdl_model() { "model" } else { "zstd" },
            h.wdl.length as f64 * 8.0 / h.size as f64,
            h.wdl.block_slots,
            secs * 1e9 / h.size as f64,
            secs * 1e3 / blocks as f64,
        );
        // zstd's depth blocks decode in a fraction of the WDL's time, under this
        // measurement's noise: only the depth model's time is worth a line.
        let Some(d) = h.depth.filter(|_| f.depth_model()) else {
            continue;
        };
        // The depth section's share: every value read, less the WDL read above.
        let runs: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                pool.install(|| f.read_all_partial().unwrap());
                t.elapsed().as_secs_f64() - secs
            })
            .collect();
        let secs = median(runs);
        let lost = h.meta.counts.losses.max(1);
        println!(
            "{name}: depth section {} ({}), {:.3} bit/slot, {} blocks of {} slots: {:.1} ns per lost slot, {:.2} ms/block beyond the WDL (median of 3, one thread)",
            d.encoding.name(),
            if f.depth_model() { "model" } else { "zstd" },
            d.length as f64 * 8.0 / h.size as f64,
            d.blocks,
            d.block_slots,
            secs * 1e9 / lost as f64,
            secs * 1e3 / d.blocks as f64,
        );
    }
}

fn probe(args: &[String]) {
    let db = PathBuf::from(&args[0]);
    let n: usize = args
        .get(1)
        .map_or(2_000_000, |s| s.parse().expect("PROBES"));
    let tb = open(&db);
    let t = Instant::now();
    Index::standard();
    println!("index tables: {:.2} s", t.elapsed().as_secs_f64());
    let mut r = Mix(42);
    let only: Vec<(u32, u32)> = args[2.min(args.len())..]
        .iter()
        .map(|s| parse_kl(s))
        .collect();
    // The subspaces with a file, and the derived ones (`pack --derive`).
    let mut subspaces = tb.available();
    let derived = tb.derived_sectors();
    subspaces.extend(derived.iter().filter(|s| s.is_moving()).map(|s| s.counts()));
    subspaces.sort();
    for (k, l) in subspaces {
        if !only.is_empty() && !only.contains(&(k, l)) {
            continue;
        }
        let sets: Vec<(u32, u32)> = (0..n).map(|_| random_sets(&mut r, k, l)).collect();
        // Cold: the first pass decompresses blocks as it meets them.
        let t = Instant::now();
        let mut wins = 0u64;
        for &(own, opp) in &sets {
            wins += (tb.probe_wdl_sets(own, opp).unwrap() == millbase::Wdl::Win) as u64;
        }
        let cold = n as f64 / t.elapsed().as_secs_f64();
        let mut warm = vec![];
        for _ in 0..3 {
            let t = Instant::now();
            for &(own, opp) in &sets {
                wins += (tb.probe_wdl_sets(own, opp).unwrap() == millbase::Wdl::Win) as u64;
            }
            warm.push(n as f64 / t.elapsed().as_secs_f64());
        }
        if tb.is_derived(Sector::moving(k as u8, l as u8)) {
            println!(
                "{k}-{l}: {n} random probes: WDL cold {:.2} M/s, warm {:.2} M/s (median of 3); derived (one ply of search) ({wins})",
                cold / 1e6,
                median(warm) / 1e6,
            );
            continue;
        }
        let f = tb.sector_file(Sector::moving(k as u8, l as u8)).unwrap();
        if f.wdl_only() {
            // A packed directory (`millbase pack --wdl-only`): no distances.
            println!(
                "{k}-{l}: {n} random probes: WDL cold {:.2} M/s, warm {:.2} M/s (median of 3); WDL-only file{} ({wins})",
                cold / 1e6,
                median(warm) / 1e6,
                if f.wdl_dont_cares() {
                    " with don't-cares"
                } else {
                    ""
                },
            );
            continue;
        }
        let mut full = vec![];
        for _ in 0..3 {
            let t = Instant::now();
            for &(own, opp) in &sets {
                wins += matches!(tb.probe_sets(own, opp).unwrap(), Value::Win(_)) as u64;
            }
            full.push(n as f64 / t.elapsed().as_secs_f64());
        }
        // Best ply: random positions of this subspace (warm after the passes above
        // for this subspace; successors in other subspaces may be cold the first time).
        let positions: Vec<Position> = sets
            .iter()
            .take(2000)
            .map(|&(own, opp)| Position::moving(Color::White, own, opp))
            .collect();
        for p in &positions {
            let _ = tb.best_ply(p);
        }
        let mut lat = vec![];
        let mut inconsistent = 0;
        for p in &positions {
            let t = Instant::now();
            let best = tb.best_ply(p);
            lat.push(t.elapsed().as_secs_f64() * 1e6);
            // The stored value must be the best successor's (a check of the data).
            if let (Ok(v), Ok(best)) = (tb.probe(p), best) {
                let expect = best.map_or(Value::Loss(0), |b| b.1);
                inconsistent += (v != expect) as u32;
            }
        }
        let (blocks, bytes) = f.cached();
        println!(
            "{k}-{l}: {n} random probes: WDL cold {:.2} M/s, warm {:.2} M/s (median of 3), full value warm {:.2} M/s; best ply warm median {:.1} us, max {:.1} us; cache {blocks} blocks, {:.1} MB; {inconsistent} of {} values differ from their best successor's{} ({wins})",
            cold / 1e6,
            median(warm) / 1e6,
            median(full) / 1e6,
            median(lat.clone()),
            lat.iter().cloned().fold(0.0, f64::max),
            bytes as f64 / 1e6,
            positions.len(),
            if f.value_dont_cares() {
                "; file with value don't-cares"
            } else {
                ""
            },
        );
    }
}

/// Random probes of every placement sector present: WDL and full value (warm, by
/// `Tablebase::probe_wdl` / `probe` on positions), and the latency of a perfect
/// placement ply (`Tablebase::best_ply`).
fn placement(args: &[String]) {
    let db = PathBuf::from(&args[0]);
    let n: usize = args
        .get(1)
        .map_or(1_000_000, |s| s.parse().expect("PROBES"));
    let t = Instant::now();
    let tb = open(&db);
    let start = Position::start(tb.rules());
    if tb.covers(&start) {
        let v: Box<dyn std::fmt::Display> = if tb.wdl_only() {
            Box::new(tb.probe_wdl(&start).unwrap())
        } else {
            Box::new(tb.probe(&start).unwrap())
        };
        println!(
            "empty board: {v}, {:.3} s from opening the directory (cold)",
            t.elapsed().as_secs_f64()
        );
    }
    let only = &args[2.min(args.len())..];
    let mut r = Mix(42);
    // The sectors with a file, and the derived ones (`pack --derive`).
    let mut sectors = tb.available_sectors();
    sectors.extend(tb.derived_sectors());
    sectors.sort();
    for s in sectors
        .into_iter()
        .filter(|s| !s.is_moving() && (only.is_empty() || only.contains(&s.to_string())))
    {
        let positions: Vec<Position> = (0..n)
            .map(|_| {
                let (own, opp) = random_sets(&mut r, s.k as u32, s.l as u32);
                let mut p = Position::moving(s.to_move(), own, opp);
                p.hand[s.to_move().index()] = s.hk;
                p.hand[s.to_move().other().index()] = s.hl;
                p
            })
            .collect();
        let mut wins = 0u64;
        for p in &positions {
            wins += (tb.probe_wdl(p).unwrap() == millbase::Wdl::Win) as u64;
        }
        let rate = |f: &dyn Fn(&Position) -> bool| {
            let mut runs = vec![];
            for _ in 0..3 {
                let t = Instant::now();
                let c = positions.iter().filter(|p| f(p)).count();
                runs.push(n as f64 / t.elapsed().as_secs_f64());
                std::hint::black_box(c);
            }
            median(runs)
        };
        let wdl = rate(&|p| tb.probe_wdl(p).unwrap() == millbase::Wdl::Win);
        if tb.wdl_only() {
            let what = if tb.is_derived(s) {
                "derived (one ply of search)"
            } else {
                "WDL-only file"
            };
            println!(
                "{s} (ply {}): {n} random probes, WDL warm {:.2} M/s; {what} ({wins})",
                s.ply(tb.rules()),
                wdl / 1e6,
            );
            continue;
        }
        let full = rate(&|p| matches!(tb.probe(p).unwrap(), Value::Win(_)));
        // Best plies of 2,000 positions, twice: the first pass reads the children's
        // blocks cold (from the page cache), the second finds them decompressed.
        let latencies = || {
            let mut lat = vec![];
            for p in positions.iter().take(2000) {
                let t = Instant::now();
                let best = tb.best_ply(p).unwrap();
                lat.push(t.elapsed().as_secs_f64() * 1e6);
                std::hint::black_box(best);
            }
            lat
        };
        let cold = latencies();
        let warm = latencies();
        println!(
            "{s} (ply {}): {n} random probes, WDL warm {:.2} M/s, full value warm {:.2} M/s; best ply median {:.1} us, max {:.1} us (first pass, blocks cold), median {:.1} us (second pass) ({wins})",
            s.ply(tb.rules()),
            wdl / 1e6,
            full / 1e6,
            median(cold.clone()),
            cold.iter().cloned().fold(0.0, f64::max),
            median(warm),
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("synthetic") => synthetic(&args[1..]),
        Some("recode") if args.len() > 1 => recode(&args[1..]),
        Some("probe") if args.len() > 1 => probe(&args[1..]),
        Some("blocks") if args.len() > 1 => blocks(&args[1..]),
        Some("placement") if args.len() > 1 => placement(&args[1..]),
        Some("decode") if args.len() > 2 => decode(&args[1..]),
        _ => {
            eprintln!(
                "usage: format_bench synthetic [SLOTS] | recode DB [K-L ...] | probe DB [PROBES] [K-L ...] | placement DB [PROBES] [K-L-HK-HL ...] | blocks DB [K-L ...] | decode DB SECTOR..."
            );
            std::process::exit(2);
        }
    }
}
