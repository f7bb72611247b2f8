//! `repack`: full files with value don't-cares (format version 2), in place or into
//! another directory.

use anyhow::{Result, anyhow};
use clap::Args;
use millbase::table::index::Index;
use millbase::table::pack::Profile;
use millbase::table::pack::dontcare::Fill;
use millbase::table::pack::repack::{RepackOptions, RepackReport, repack};
use millbase::table::probe::Tablebase;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `repack`.
#[derive(Args)]
pub struct RepackArgs {
    /// The database directory whose full files to repack.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// Write the repacked files into this directory (created if missing) instead of
    /// replacing the files in place.
    #[arg(long)]
    out: Option<PathBuf>,
    /// What the free slots store: `loss` (Loss(0)), `low` (a draw where allowed, else
    /// Loss(0)), `prev` (the previous slot's value where allowed), `loss0`
    /// (Loss(0) in lost slots only, made for `--depths losses`), `lean` (as
    /// `loss0`, and a duplicate slot the previous value or a draw after a loss:
    /// made for `--depth-coding model`) or `model` (as `lean`, and a free slot
    /// that is not lost stores the win or draw the WDL model finds likelier; needs
    /// `--depths losses --wdl-coding model`); `none`: no value
    /// don't-cares, every value kept, the depth section re-encoded with the
    /// decisive slots' entries only (what `millbase build` writes).
    #[arg(long, default_value = "low")]
    fill: String,
    /// zstd level of the depth section (the build writes 9; a repack runs once, so a
    /// slower level that compresses better may pay).
    #[arg(long, default_value_t = millbase::table::pack::repack::DEPTH_LEVEL, value_parser = clap::value_parser!(i32).range(1..=22))]
    depth_level: i32,
    /// Which distances to store: `decisive` (every win's and loss's, what `millbase
    /// build` writes) or `losses` (the losses' only: a probe finds a win's distance
    /// one ply ahead, which makes full-value probes of wins slower and the files
    /// much smaller).
    #[arg(long, default_value = "decisive", value_parser = ["decisive", "losses"])]
    depths: String,
    /// How to code the WDL section: `zstd` (packed trits, zstd-compressed; what
    /// `millbase build` writes) or `model` (an adaptive context model and an
    /// arithmetic coder over blocks of whole classes, format version 5: smaller,
    /// slower to decode cold; `docs/FORMAT.md`, "Model coding").
    #[arg(long, default_value = "zstd", value_parser = ["zstd", "model"])]
    wdl_coding: String,
    /// How to code the depth section: `zstd` (what `millbase build` writes) or
    /// `model` (an adaptive context model over the lost slots' distances and its
    /// refiner, format version 7; needs `--depths losses --wdl-coding model`;
    /// `docs/FORMAT.md`, "Model-coded depths").
    #[arg(long, default_value = "zstd", value_parser = ["zstd", "model"])]
    depth_coding: String,
    /// A small form as a whole, every value and distance exact: `archive` (the
    /// smallest files: `--fill model --depths losses --wdl-coding model
    /// --depth-coding model`; a cold block decodes in milliseconds) or `serving`
    /// (`--fill none`, every value and decisive distance as built, both sections
    /// zstd-compressed in small blocks: larger files, a cold WDL block decoded in
    /// under 100 µs, any probe one file);
    /// `docs/FORMAT.md`, "Profiles".
    #[arg(
        long,
        value_parser = ["archive", "serving"],
        conflicts_with_all = ["fill", "depth_level", "depths", "wdl_coding", "depth_coding"]
    )]
    profile: Option<String>,
    /// Only these sectors (`K-L` or `K-L-HK-HL`, comma-separated).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// No line per sector.
    #[arg(long)]
    quiet: bool,
}

fn bits(bytes: u64, slots: u64) -> f64 {
    bytes as f64 * 8.0 / slots.max(1) as f64
}

fn line(r: &RepackReport) -> String {
    let share = |n: u64| format!("{:.1}", 100.0 * n as f64 / r.slots.max(1) as f64);
    let (dup, dc) = match r.filled {
        Some(f) => (share(f.duplicates), share(f.dont_cares)),
        None => ("-".into(), "-".into()),
    };
    let note = if r.kept { "  already repacked" } else { "" };
    format!(
        "{:>10} {:>13} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {dup:>6} {dc:>6} {:>8.1}{note}",
        r.sector.name(),
        r.slots,
        bits(r.before.0, r.slots),
        bits(r.after.0, r.slots),
        bits(r.before.1, r.slots),
        bits(r.after.1, r.slots),
        r.seconds
    )
}

/// The run's progress after each sector, on standard error (standard output keeps
/// the table that `tools/size-table.py` reads): slots done of all, and an ETA from
/// the rate of the sectors repacked in this run (files kept from an earlier run
/// take no time, so they count as done but not in the rate).
#[derive(Default)]
struct Eta {
    /// Slots repacked in this run, and their seconds.
    worked: (u64, f64),
}

impl Eta {
    fn line(&mut self, r: &RepackReport) -> String {
        if !r.kept {
            self.worked.0 += r.slots;
            self.worked.1 += r.seconds;
        }
        let (done, total) = r.progress;
        let eta = match self.worked {
            (slots, secs) if slots > 0 => {
                let s = (secs * (total - done) as f64 / slots as f64) as u64;
                format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
            }
            _ => "unknown".into(),
        };
        format!(
            "repack: {} of {} M slots ({:.1}%), ETA {eta} at this run's rate so far",
            done / 1_000_000,
            total / 1_000_000,
            100.0 * done as f64 / total.max(1) as f64
        )
    }
}

/// `millbase repack`.
pub fn repack_cmd(a: RepackArgs) -> Result<ExitCode> {
    let fill = match a.fill.as_str() {
        "none" => None,
        name => Some(Fill::parse(name).ok_or_else(|| {
            anyhow!("unknown fill '{name}': use loss, low, prev, loss0, lean, model or none")
        })?),
    };
    let only = super::parse_sectors(&a.only)?;
    let rules = Tablebase::open(&a.db)?.rules();
    let idx = Index::for_rules(rules);
    let opts = match a.profile.as_deref().and_then(Profile::parse) {
        Some(profile) => RepackOptions {
            out: a.out.clone(),
            only,
            ..RepackOptions::profile(profile)
        },
        None => RepackOptions {
            out: a.out.clone(),
            fill,
            only,
            depth_level: a.depth_level,
            loss_depths: a.depths == "losses",
            wdl_model: a.wdl_coding == "model",
            depth_model: a.depth_coding == "model",
            ..RepackOptions::default()
        },
    };
    opts.check()?;
    let start = std::time::Instant::now();
    let mut first = true;
    let mut eta = Eta::default();
    let reports = repack(&a.db, idx, &opts, |r| {
        if a.quiet {
            return;
        }
        eprintln!("{}", eta.line(r));
        if std::mem::take(&mut first) {
            println!(
                "{:>10} {:>13} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>8}",
                "sector", "slots", "wdl", "wdl v2", "depth", "depth2", "dup %", "d-c %", "seconds"
            );
        }
        println!("{}", line(r));
    })?;
    let sum = |f: fn(&RepackReport) -> u64| reports.iter().map(f).sum::<u64>();
    let slots = sum(|r| r.slots);
    let (before, after) = (
        sum(|r| r.before.0 + r.before.1),
        sum(|r| r.after.0 + r.after.1),
    );
    println!(
        "repacked {} files ({slots} slots, fill {}, depths {}): {before} bytes of sections into {after} ({:.3} -> {:.3} bit/slot; WDL {:.3} -> {:.3}, depth {:.3} -> {:.3}) in {:.1} s: {}",
        reports.len(),
        opts.fill.map_or("none", Fill::name),
        if opts.loss_depths {
            "losses"
        } else {
            "decisive"
        },
        bits(before, slots),
        bits(after, slots),
        bits(sum(|r| r.before.0), slots),
        bits(sum(|r| r.after.0), slots),
        bits(sum(|r| r.before.1), slots),
        bits(sum(|r| r.after.1), slots),
        start.elapsed().as_secs_f64(),
        a.out.as_ref().unwrap_or(&a.db).display()
    );
    Ok(ExitCode::SUCCESS)
}
