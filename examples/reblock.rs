//! Rewrites database files with other block sizes (same codes, same header fields):
//! the measurement behind the block sizes in `docs/FORMAT.md`.
//!
//! ```text
//! cargo run --release --example reblock -- SRC DST WDL_LOG DEPTH_LOG [FILE ...]
//! ```
//!
//! Writes `DST/FILE` for every `FILE` (all `.mdb` files of `SRC` if none is named)
//! with WDL blocks of `2^WDL_LOG` slots and depth blocks of `2^DEPTH_LOG`, reads each
//! new file back and checks every code against the original, and skips files that
//! `DST` already has (so a stopped run resumes).

use millbase::table::format::{Expect, SubspaceFile, WriteOptions, write_subspace_with};
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: reblock SRC DST WDL_LOG DEPTH_LOG [FILE ...]");
        std::process::exit(2);
    }
    let (src, dst) = (PathBuf::from(&args[0]), PathBuf::from(&args[1]));
    let log = |s: &str| -> u32 {
        let v: u32 = s
            .parse()
            .expect("a block size is a power of two: give its log");
        assert!((10..=24).contains(&v), "block log {v}: choose 10 to 24");
        v
    };
    let opts = WriteOptions {
        wdl_block: 1 << log(&args[2]),
        depth_block: 1 << log(&args[3]),
        ..WriteOptions::default()
    };
    let mut files: Vec<String> = args[4..].to_vec();
    if files.is_empty() {
        files = std::fs::read_dir(&src)
            .expect("SRC")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".mdb"))
            .collect();
        files.sort();
    }
    std::fs::create_dir_all(&dst).expect("DST");
    let (mut before, mut after) = (0u64, 0u64);
    for name in files {
        let (from, to) = (src.join(&name), dst.join(&name));
        if to.exists() {
            continue;
        }
        let t = Instant::now();
        let f = SubspaceFile::open(&from, &Expect::any()).expect("a database file");
        let codes = f.read_all().expect("readable codes");
        let tmp = dst.join(format!("{name}.tmp"));
        write_subspace_with(&tmp, &f.header().meta, &codes, &opts).expect("written");
        let g = SubspaceFile::open(&tmp, &Expect::any()).expect("the new file");
        assert!(
            g.read_all().expect("readable") == codes,
            "{name}: codes differ"
        );
        std::fs::rename(&tmp, &to).expect("renamed");
        let (b, a) = (f.header().file_bytes(), g.header().file_bytes());
        before += b;
        after += a;
        println!(
            "{name}: {} slots, {b} -> {a} bytes ({:+.2}%), {:.1} s",
            f.size(),
            (a as f64 / b as f64 - 1.0) * 100.0,
            t.elapsed().as_secs_f64()
        );
    }
    if before > 0 {
        println!(
            "written now: {before} -> {after} bytes ({:+.2}%)",
            (after as f64 / before as f64 - 1.0) * 100.0
        );
    }
}
