//! Figures for the next round of the storage issue: the depth section of real
//! files (version 1, or repacked with don't-cares) coded in other ways, in bits per
//! slot. Nothing here is a format yet; it measures what each idea would save.
//!
//! ```text
//! cargo run --release --example depth_ideas -- FILE.mdb ...
//! ```
//!
//! Per file, the stored codes (don't-cares as filled) and:
//! - `as built`: the file's own depth section;
//! - `half-u8 2^B lN`: one byte `floor(n / 2)` per slot, blocks of `2^B` slots,
//!   zstd level `N` (the format's encoding; the file uses 2^18 at level 9);
//! - `decisive only`: the same bytes with the draws left out (a reader knows them
//!   from the WDL section, but must count the decisive slots before a slot);
//! - `block minimum`: each block's decisive bytes minus the block's smallest;
//! - `wins | losses`: decisive bytes in two streams, wins and losses apart;
//! - `losses only`: the losses' stream alone (a win's distance follows from its
//!   children's, one ply ahead);
//! - `draws = prev 2^B lN`: every slot kept, a draw's byte the previous slot's (a
//!   reader that ignores a draw's depth entry needs no count of decisive slots).

use millbase::rules::value::Value;
use millbase::table::format::{Expect, SubspaceFile};
use std::path::Path;

fn zsize(raw: &[u8], level: i32) -> usize {
    zstd::bulk::compress(raw, level).unwrap().len()
}

/// Bytes of `halves` cut into blocks of `block` slots, each compressed at `level`.
fn blocks(halves: &[u8], block: usize, level: i32) -> usize {
    halves.chunks(block).map(|c| zsize(c, level)).sum()
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: depth_ideas FILE.mdb ...");
        std::process::exit(2);
    }
    for name in files {
        let f = SubspaceFile::open(Path::new(&name), &Expect::any()).unwrap();
        let codes = f.read_all_stored().unwrap();
        let n = codes.len() as f64;
        let bits = |b: usize| b as f64 * 8.0 / n;
        let values: Vec<Value> = codes.iter().map(|&c| Value::from_code(c)).collect();
        let half = |v: &Value| v.distance().map_or(0, |d| (d / 2).min(255) as u8);
        let halves: Vec<u8> = values.iter().map(half).collect();
        let (_, depth) = f.section_bytes();
        println!(
            "{name}: {} slots, version {}, flags {}; depth bits/slot:",
            codes.len(),
            f.header().version,
            f.header().flags
        );
        println!("  {:<24} {:>8.4}", "as built", bits(depth as usize));
        let mut prev = 0;
        let filled: Vec<u8> = values
            .iter()
            .zip(&halves)
            .map(|(v, &h)| {
                if *v != Value::Draw {
                    prev = h;
                }
                prev
            })
            .collect();
        for (b, level) in [(18, 9), (18, 15)] {
            let label = format!("draws = prev 2^{b} l{level}");
            println!(
                "  {label:<24} {:>8.4}",
                bits(blocks(&filled, 1 << b, level))
            );
        }
        for (b, level) in [(18, 9), (18, 15), (18, 19), (20, 15)] {
            let label = format!("half-u8 2^{b} l{level}");
            println!(
                "  {label:<24} {:>8.4}",
                bits(blocks(&halves, 1 << b, level))
            );
        }
        // The decisive slots of each 2^18 block, as a reader would group them.
        let block = 1 << 18;
        let (mut decisive, mut shifted, mut split, mut losses) = (0, 0, 0, 0);
        for (vals, hs) in values.chunks(block).zip(halves.chunks(block)) {
            let keep: Vec<u8> = vals
                .iter()
                .zip(hs)
                .filter(|(v, _)| **v != Value::Draw)
                .map(|(_, &h)| h)
                .collect();
            decisive += zsize(&keep, 15);
            let min = keep.iter().copied().min().unwrap_or(0);
            let minus: Vec<u8> = keep.iter().map(|h| h - min).collect();
            shifted += zsize(&minus, 15) + 1;
            let side = |win: bool| -> Vec<u8> {
                vals.iter()
                    .zip(hs)
                    .filter(|(v, _)| matches!(v, Value::Win(_)) == win && **v != Value::Draw)
                    .map(|(_, &h)| h)
                    .collect()
            };
            let lost = zsize(&side(false), 15);
            split += zsize(&side(true), 15) + lost;
            losses += lost;
        }
        println!("  {:<24} {:>8.4}", "decisive only l15", bits(decisive));
        println!("  {:<24} {:>8.4}", "block minimum l15", bits(shifted));
        println!("  {:<24} {:>8.4}", "wins | losses l15", bits(split));
        println!("  {:<24} {:>8.4}", "losses only l15", bits(losses));
    }
}
