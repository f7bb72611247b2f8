//! The cost of a cold block and the bytes per slot of each form of a database
//! directory: as built, the archive profile, the serving profile, WDL packages.
//!
//! ```text
//! cargo run --profile ci --example block_decode -- [--files N] [--blocks B] DIR...
//! ```
//!
//! For each directory `DIR`: its files' bytes and slots (bits per slot, all
//! sections and the WDL and depth sections apart). Then, for its `N` (default 3)
//! largest files together, the time of reading one block cold, over `B`
//! (default 400) blocks of each file spread evenly over it (every block of a
//! smaller file), p50, p99 and max:
//!
//! - **WDL block**: the first probe of a win, draw or loss into the block, as a
//!   reader meets it (read from the file, checksum checked, decoded), by
//!   `SubspaceFile::wdl` of the block's first slot on a file whose cache holds no
//!   block of it yet;
//! - **value block** (files with distances): the first read of a stored distance
//!   in a depth block, on another opening of the file, so the WDL blocks the
//!   depth block's expansion needs are decoded too: what a cold full-value probe
//!   of a lost slot costs in one file (a won slot of a file with loss-only depths
//!   adds the probes of its plies).
//!
//! The directories' files are read from the page cache (the tool does not drop
//! it); a block read more than once is not counted again.

use millbase::rules::value::Wdl;
use millbase::table::format::{Expect, SubspaceFile};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// p50, p99 and max of `times` in microseconds, as text.
fn spread(times: &mut [Duration]) -> String {
    if times.is_empty() {
        return "-".into();
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    format!(
        "p50 {:8.1} µs  p99 {:8.1} µs  max {:8.1} µs  ({} blocks)",
        at(0.5),
        at(0.99),
        at(1.0),
        times.len()
    )
}

/// Bits per slot.
fn bits(bytes: u64, slots: u64) -> f64 {
    bytes as f64 * 8.0 / slots.max(1) as f64
}

/// `count` block numbers out of `blocks`, spread evenly (all if there are fewer).
fn sample(blocks: u64, count: u64) -> Vec<u64> {
    let n = blocks.min(count);
    (0..n).map(|i| i * blocks / n).collect()
}

/// The times of reading the sampled WDL blocks and depth blocks of `path` cold.
fn time_file(path: &Path, count: u64) -> (Vec<Duration>, Vec<Duration>) {
    let f = SubspaceFile::open(path, &Expect::any()).expect("a database file");
    let h = f.header().clone();
    let per = h.wdl.block_slots as u64;
    let mut wdl = Vec::new();
    for b in sample(h.size.div_ceil(per), count) {
        let start = Instant::now();
        f.wdl(b * per).expect("the block reads");
        wdl.push(start.elapsed());
    }
    let mut value = Vec::new();
    if let Some(depth) = h.depth {
        // A slot with a stored distance, found by the first opening (whose
        // decoded blocks the timed one does not share).
        let stored = |s: u64| match f.wdl(s).expect("the block reads") {
            Wdl::Draw => !h.decisive_depths(),
            Wdl::Win => !h.loss_depths(),
            Wdl::Loss => true,
        };
        let g = SubspaceFile::open(path, &Expect::any()).expect("a database file");
        let per = depth.block_slots as u64;
        for b in sample(h.size.div_ceil(per), count) {
            let range = b * per..((b + 1) * per).min(h.size);
            let Some(slot) = range.clone().find(|&s| stored(s)) else {
                continue;
            };
            let start = Instant::now();
            g.code(slot).expect("the slot reads");
            value.push(start.elapsed());
        }
    }
    (wdl, value)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut option = |name: &str, default: u64| -> u64 {
        match args.iter().position(|a| a == name) {
            Some(i) if i + 1 < args.len() => {
                let v = args[i + 1].parse().expect("a number");
                args.drain(i..i + 2);
                v
            }
            _ => default,
        }
    };
    let (largest, count) = (option("--files", 3), option("--blocks", 400));
    if args.is_empty() {
        eprintln!("usage: block_decode [--files N] [--blocks B] DIR...");
        std::process::exit(2);
    }
    for dir in args.iter().map(PathBuf::from) {
        let mut files: Vec<(u64, PathBuf, SubspaceFile)> = std::fs::read_dir(&dir)
            .expect("a directory")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "mdb"))
            .map(|p| {
                let f = SubspaceFile::open(&p, &Expect::any()).expect("a database file");
                (f.header().file_bytes(), p, f)
            })
            .collect();
        files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let slots: u64 = files.iter().map(|f| f.2.size()).sum();
        let sum = |part: fn(&SubspaceFile) -> u64| files.iter().map(|f| part(&f.2)).sum::<u64>();
        let bytes = sum(|f| f.header().file_bytes());
        println!(
            "{}: {} files, {slots} slots, {bytes} bytes: {:.3} bits/slot (WDL {:.3}, depth {:.3})",
            dir.display(),
            files.len(),
            bits(bytes, slots),
            bits(sum(|f| f.section_bytes().0), slots),
            bits(sum(|f| f.section_bytes().1), slots),
        );
        let (mut wdl, mut value) = (Vec::new(), Vec::new());
        for (bytes, path, f) in files.iter().take(largest as usize) {
            let h = f.header();
            println!(
                "  {}: {} slots, {bytes} bytes, {:.3} bits/slot (WDL {} in blocks of {} slots, {:.3}; depth {}, {:.3})",
                path.file_name().and_then(|n| n.to_str()).unwrap_or("?"),
                h.size,
                bits(*bytes, h.size),
                h.wdl.encoding.name(),
                h.wdl.block_slots,
                bits(h.wdl.length, h.size),
                h.depth.map_or("none".into(), |d| format!(
                    "{} in blocks of {} slots",
                    d.encoding.name(),
                    d.block_slots
                )),
                bits(h.depth_bytes(), h.size),
            );
            let (w, v) = time_file(path, count);
            wdl.extend(w);
            value.extend(v);
        }
        println!("  WDL block cold:   {}", spread(&mut wdl));
        if !value.is_empty() {
            println!("  value block cold: {}", spread(&mut value));
        }
    }
}
