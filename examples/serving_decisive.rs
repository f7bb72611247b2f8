//! The serving profile with every decisive distance stored (flag 4 without flag
//! 8) instead of the lost slots' only: what a full-value probe gains when a won
//! slot's distance is one look-up instead of a look one ply ahead, and what the
//! files cost.
//!
//! ```text
//! cargo run --release --example serving_decisive -- DB OUT SECTOR...
//! ```
//!
//! Repacks the named sectors (`K-L` or `K-L-HK-HL`) of the full directory `DB`
//! of the standard game into `OUT` with `RepackOptions::serving()` but decisive
//! depths, every slot checked as any repack. Probe the result with `format_bench -- probe`, beside
//! the serving profile's other files.

use millbase::table::index::Index;
use millbase::table::pack::repack::{RepackOptions, repack};
use millbase::table::sector::Sector;
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, out, sectors @ ..] = &args[..] else {
        eprintln!("usage: serving_decisive DB OUT SECTOR...");
        std::process::exit(2);
    };
    let only: Vec<Sector> = sectors
        .iter()
        .map(|s| Sector::parse(s).unwrap_or_else(|| panic!("not a sector: {s}")))
        .collect();
    let opts = RepackOptions {
        out: Some(out.into()),
        only,
        loss_depths: false,
        ..RepackOptions::serving()
    };
    let reports = repack(Path::new(db), Index::standard(), &opts, |r| {
        println!("{r:?}");
    })
    .unwrap_or_else(|e| panic!("{e}"));
    println!("{} files repacked into {out}", reports.len());
}
