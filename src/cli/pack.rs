//! `pack`: a database directory to ship, WDL only.

use anyhow::{Result, bail};
use clap::Args;
use millbase::table::format::Encoding;
use millbase::table::index::Index;
use millbase::table::pack::{PackOptions, PackReport, Profile, pack_wdl_only_sectors};
use millbase::table::probe::Tablebase;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `pack`.
#[derive(Args)]
pub struct PackArgs {
    /// The full database directory to pack (read only).
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// The directory to write (created if missing; never the source).
    #[arg(long)]
    out: PathBuf,
    /// Keep win/draw/loss only, no distances (the only packing there is so far).
    #[arg(long)]
    wdl_only: bool,
    /// Fill the WDL don't-cares (slots whose result a capturing ply reaches) with
    /// what compresses better, and mark the files so: smaller files, a slower pack,
    /// and probes that look at capturing plies where the stored result is not a win.
    #[arg(long)]
    dont_cares: bool,
    /// How to code the WDL sections: `copy` (as the source codes them), `zstd`
    /// (packed trits, zstd-compressed) or `model` (a context model and an
    /// arithmetic coder, format version 5: smaller, slower to decode cold).
    #[arg(long, default_value = "copy", value_parser = ["copy", "zstd", "model"])]
    wdl_coding: String,
    /// A small form as a whole: `archive` (the smallest files: `--dont-cares
    /// --wdl-coding model`; a cold block decodes in milliseconds) or `serving`
    /// (every result true, zstd-compressed in small blocks: larger files, a probe
    /// one look-up, a cold block decoded in well under 100 µs); `docs/FORMAT.md`,
    /// "Profiles".
    #[arg(
        long,
        value_parser = ["archive", "serving"],
        conflicts_with_all = ["dont_cares", "wdl_coding"]
    )]
    profile: Option<String>,
    /// Then leave out the sectors whose results one ply of search gives from
    /// stored ones (per mirrored moving-phase pair `k-l`/`l-k` one side, and, once
    /// the whole placement phase is packed, the placement sectors of one ply
    /// parity; never a sector leading into another left out), marking each with a
    /// `NAME.derived` file: 0.61 GB for the whole game's 1.08, and a probe there
    /// costs a probe of each ply (`docs/FORMAT.md`, "Derived sectors").
    #[arg(long)]
    derive: bool,
    /// Only these sectors (`K-L` or `K-L-HK-HL`, comma-separated).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// No line per sector.
    #[arg(long)]
    quiet: bool,
}

fn line(r: &PackReport) -> String {
    let share = |n: u64| format!("{:.1}", 100.0 * n as f64 / r.slots.max(1) as f64);
    let (dup, dc) = match r.filled {
        Some(f) => (share(f.duplicates), share(f.dont_cares)),
        None => ("-".into(), "-".into()),
    };
    let note = if r.kept { "  already packed" } else { "" };
    format!(
        "{:>10} {:>14} {:>14} {dup:>7} {dc:>7} {:>8.1}{note}",
        r.sector.name(),
        r.source_bytes,
        r.packed_bytes,
        r.seconds
    )
}

/// `millbase pack`.
pub fn pack(a: PackArgs) -> Result<ExitCode> {
    if !a.wdl_only {
        bail!(
            "say what to pack: `--wdl-only` (win/draw/loss without distances) is the packing there is"
        );
    }
    let rules = Tablebase::open(&a.db)?.rules();
    let idx = Index::for_rules(rules);
    let opts = match a.profile.as_deref().and_then(Profile::parse) {
        Some(profile) => PackOptions::profile(profile),
        None => PackOptions {
            dont_cares: a.dont_cares,
            coding: match a.wdl_coding.as_str() {
                "zstd" => Some(Encoding::Trits5),
                "model" => Some(Encoding::Model),
                _ => None,
            },
            ..PackOptions::DEFAULT
        },
    };
    let start = std::time::Instant::now();
    let mut first = true;
    let only = super::parse_sectors(&a.only)?;
    let reports = pack_wdl_only_sectors(&a.db, &a.out, idx, opts, &only, |r| {
        if a.quiet {
            return;
        }
        if std::mem::take(&mut first) {
            println!(
                "{:>10} {:>14} {:>14} {:>7} {:>7} {:>8}",
                "sector", "source bytes", "packed bytes", "dup %", "d-c %", "seconds"
            );
        }
        println!("{}", line(r));
    })?;
    let source: u64 = reports.iter().map(|r| r.source_bytes).sum();
    let packed: u64 = reports.iter().map(|r| r.packed_bytes).sum();
    println!(
        "packed {} files, {source} bytes into {packed} bytes (WDL only{}) in {:.1} s: {}",
        reports.len(),
        if opts.dont_cares {
            ", don't-cares filled"
        } else {
            ""
        },
        start.elapsed().as_secs_f64(),
        a.out.display()
    );
    if a.derive {
        let derived = millbase::table::pack::derived::derive(&a.out, idx)?;
        let bytes: u64 = derived.iter().map(|d| d.bytes).sum();
        let names: Vec<String> = derived.iter().map(|d| d.sector.name()).collect();
        println!(
            "derived {} sectors ({bytes} bytes of files removed): {}",
            derived.len(),
            names.join(" ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
