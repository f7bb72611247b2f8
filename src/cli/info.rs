//! `info`: print the header of a database file.

use anyhow::Result;
use clap::Args;
use millbase::Rules;
use millbase::format::{Expect, Section, SubspaceFile};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `info`.
#[derive(Args)]
pub struct InfoArgs {
    /// A database file (`k-l.mdb`).
    file: PathBuf,
    /// Also check every checksum of the file (reads it all).
    #[arg(long)]
    check: bool,
}

fn section_line(name: &str, s: &Section, size: u64) -> String {
    let bits = if size == 0 {
        0.0
    } else {
        s.length as f64 * 8.0 / size as f64
    };
    format!(
        "{name:<6} {:>14} bytes at {:>12}  {:>7.4} bits/slot  {} blocks of {} slots, {}\n       table xxh64 {:016x}  data xxh64 {:016x}\n",
        s.length,
        s.offset,
        bits,
        s.blocks,
        s.block_slots,
        s.encoding.name(),
        s.table_checksum,
        s.data_checksum
    )
}

/// `millbase info FILE [--check]`.
pub fn info(a: InfoArgs) -> Result<ExitCode> {
    let file = SubspaceFile::open(&a.file, &Expect::any())?;
    let h = file.header();
    let rules = Rules::standard();
    let rules_note = if h.fingerprint == rules.fingerprint() {
        "matches this program's standard rules"
    } else {
        "NOT this program's standard rules"
    };
    let mut out = String::new();
    out.push_str(&format!("file           {}\n", a.file.display()));
    out.push_str(&format!("format         version {}\n", h.version));
    out.push_str(&format!(
        "rules          {} (fingerprint {:016x}, {rules_note})\n",
        h.variant, h.fingerprint
    ));
    out.push_str(&format!(
        "subspace       {}-{} (side to move {} stones, opponent {})\n",
        h.k, h.l, h.k, h.l
    ));
    out.push_str(&format!("index slots    {}\n", h.size));
    out.push_str(&format!("wins           {}\n", h.wins));
    out.push_str(&format!("losses         {}\n", h.losses));
    out.push_str(&format!("draws          {}\n", h.draws));
    out.push_str(&format!("longest win    {} plies\n", h.longest_win));
    out.push_str(&format!("longest loss   {} plies\n", h.longest_loss));
    out.push_str(&format!("max distance   {} plies\n", h.max_distance));
    out.push_str(&format!("header xxh64   {:016x}\n", h.checksum));
    out.push_str(&section_line("WDL", &h.wdl, h.size));
    out.push_str(&section_line("depth", &h.depth, h.size));
    let total = h.depth.offset + h.depth.length;
    out.push_str(&format!("total          {total} bytes\n"));
    print!("{out}");
    if a.check {
        file.verify_checksums()?;
        println!("checksums      ok");
        let idx = millbase::index::Index::standard();
        let valid = |n: u32| (3..=rules.stones as u32).contains(&n);
        if !valid(h.k) || !valid(h.l) {
            anyhow::bail!(
                "{}: subspace {}-{} does not exist under the standard rules: this file was not written by this program",
                a.file.display(),
                h.k,
                h.l
            );
        }
        if let Some(why) = millbase::build::foreign_header(idx, h, h.k, h.l) {
            anyhow::bail!(
                "{}: the checksums match but the header is not the one this program writes for {}-{}: {why}; delete it and run `millbase build`",
                a.file.display(),
                h.k,
                h.l
            );
        }
        println!(
            "header         as this program writes it for {}-{}",
            h.k, h.l
        );
    }
    Ok(ExitCode::SUCCESS)
}
