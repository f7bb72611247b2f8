//! `info`: print the header of a database file.

use anyhow::Result;
use clap::Args;
use millbase::Rules;
use millbase::table::format::{Encoding, Expect, Section, SubspaceFile};
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

fn section_line(name: &str, s: &Section, size: u64, coding: &str) -> String {
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
        coding,
        s.table_checksum,
        s.data_checksum
    )
}

/// `millbase info FILE [--check]`.
pub fn info(a: InfoArgs) -> Result<ExitCode> {
    let file = SubspaceFile::open(&a.file, &Expect::any())?;
    let h = file.header();
    // The header names its rules: this program's rules of that name, if any.
    let named = Rules::by_name(&h.meta.variant);
    let rules_note = match named {
        Some(r) if r.fingerprint() == h.meta.fingerprint => {
            format!("matches this program's {} rules", r.name)
        }
        Some(r) => format!("NOT this program's {} rules", r.name),
        None => "rules this program does not know".to_string(),
    };
    let rules = named.unwrap_or(Rules::standard());
    let mut out = String::new();
    out.push_str(&format!("file           {}\n", a.file.display()));
    let dont_cares = match (h.value_dont_cares(), h.wdl_dont_cares()) {
        (true, _) if h.exact_results() => {
            ", value don't-cares in lost slots only, every result exact (flags 2 and 16: `millbase repack --fill loss0`)"
        }
        (true, _) => ", value don't-cares (flags 1 and 2: `millbase repack`)",
        (false, true) => ", WDL don't-cares (flag 1)",
        _ => "",
    };
    let free = if h.loss_depths() {
        ", depths of lost slots only (flags 4 and 8: wins one ply ahead)"
    } else if h.decisive_depths() {
        ", depths of decisive slots only (flag 4)"
    } else {
        ""
    };
    let flags = format!("{dont_cares}{free}");
    out.push_str(&format!("format         version {}{flags}\n", h.version));
    out.push_str(&format!(
        "rules          {} (fingerprint {:016x}, {rules_note})\n",
        h.meta.variant, h.meta.fingerprint
    ));
    let sector = millbase::table::sector::Sector {
        k: h.meta.k.min(255) as u8,
        l: h.meta.l.min(255) as u8,
        hk: h.meta.hands[0],
        hl: h.meta.hands[1],
    };
    out.push_str(&format!(
        "sector         {sector} (side to move {} stones on the board and {} in hand, opponent {} and {})\n",
        h.meta.k, h.meta.hands[0], h.meta.l, h.meta.hands[1]
    ));
    out.push_str(&format!("index slots    {}\n", h.size));
    out.push_str(&format!("wins           {}\n", h.meta.counts.wins));
    out.push_str(&format!("losses         {}\n", h.meta.counts.losses));
    out.push_str(&format!("draws          {}\n", h.meta.counts.draws));
    out.push_str(&format!(
        "longest win    {} plies\n",
        h.meta.counts.longest_win
    ));
    out.push_str(&format!(
        "longest loss   {} plies\n",
        h.meta.counts.longest_loss
    ));
    out.push_str(&format!("max distance   {} plies\n", h.max_distance));
    out.push_str(&format!("header xxh64   {:016x}\n", h.checksum));
    let wdl_coding = match h.wdl.encoding {
        Encoding::Model if file.wdl_model() => {
            "model (context model, range coder; block 0 the prior)"
        }
        Encoding::Model => {
            "model, zstd trits5 blocks (empty prior: the model would not be smaller)"
        }
        e => e.name(),
    };
    out.push_str(&section_line("WDL", &h.wdl, h.size, wdl_coding));
    match &h.depth {
        Some(d) => {
            let coding = match d.encoding {
                Encoding::DepthModel if file.depth_model() => {
                    "depth model (lost slots' distances, context model; block 0 the prior)"
                }
                Encoding::DepthRefined if file.depth_model() => {
                    "depth model, refined (lost slots' distances, context model and refiner; block 0 the prior)"
                }
                Encoding::DepthModel | Encoding::DepthRefined => {
                    "depth model, zstd half-u8 blocks (empty prior: the model would not be smaller)"
                }
                e => e.name(),
            };
            out.push_str(&section_line("depth", d, h.size, coding))
        }
        None => {
            out.push_str("depth          none: a WDL-only file (win/draw/loss, no distances)\n")
        }
    }
    let total = h.file_bytes();
    out.push_str(&format!("total          {total} bytes\n"));
    print!("{out}");
    if a.check {
        file.verify_checksums()?;
        println!("checksums      ok");
        let idx = millbase::table::index::Index::for_rules(rules);
        let valid = |n: u32| (3..=rules.stones as u32).contains(&n);
        let exists = if sector.is_moving() {
            valid(h.meta.k) && valid(h.meta.l)
        } else {
            h.meta.k <= rules.stones as u32
                && h.meta.l <= rules.stones as u32
                && sector.is_valid(rules)
        };
        if !exists {
            anyhow::bail!(
                "{}: sector {sector} does not exist under the {} rules: this file was not written by this program",
                a.file.display(),
                rules.name
            );
        }
        if let Some(why) = millbase::table::build::foreign_header(idx, h, sector) {
            anyhow::bail!(
                "{}: the checksums match but the header is not the one this program writes for {sector}: {why}; delete it and run `millbase build`",
                a.file.display(),
            );
        }
        // A file's name says which sector it holds in a database directory: a file
        // named for another sector would answer that sector's probes wrongly.
        let named_for = a
            .file
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".mdb"))
            .and_then(millbase::table::sector::Sector::parse);
        if let Some(named_for) = named_for
            && named_for != sector
        {
            anyhow::bail!(
                "{}: the file is named for sector {named_for} but holds {sector}: in a database directory it would be read for {named_for}; rename it to {} or delete it and run `millbase build`",
                a.file.display(),
                sector.file_name()
            );
        }
        println!("header         as this program writes it for {sector}");
    }
    Ok(ExitCode::SUCCESS)
}
