//! `pack`: a database directory to ship, WDL only.

use anyhow::{Result, bail};
use clap::Args;
use millbase::index::Index;
use millbase::pack::pack_wdl_only;
use millbase::probe::Tablebase;
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
    /// No line per sector.
    #[arg(long)]
    quiet: bool,
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
    let mut first = true;
    let reports = pack_wdl_only(&a.db, &a.out, idx, |r| {
        if !a.quiet {
            if std::mem::take(&mut first) {
                println!(
                    "{:>10} {:>14} {:>14}",
                    "sector", "source bytes", "WDL-only bytes"
                );
            }
            let note = if r.kept { "already packed" } else { "" };
            println!(
                "{:>10} {:>14} {:>14}  {note}",
                r.sector.name(),
                r.source_bytes,
                r.packed_bytes
            );
        }
    })?;
    let source: u64 = reports.iter().map(|r| r.source_bytes).sum();
    let packed: u64 = reports.iter().map(|r| r.packed_bytes).sum();
    println!(
        "packed {} files, {source} bytes into {packed} bytes (WDL only): {}",
        reports.len(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
