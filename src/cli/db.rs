//! `build`, `verify`, `stats`: making and checking a database directory.

use super::progress::BuildBars;
use anyhow::{Context, Result, bail};
use clap::Args;
use millbase::rules::value::Counts;
use millbase::table::build::{self, BuildOptions, BuildPhase, Form, PairReport, Selection};
use millbase::table::dir::manifest::{Entry, Manifest, parse_subspace};
use millbase::table::index::{Index, binomial};
use millbase::table::sector::Sector;
use millbase::{Rules, table::verify};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// The values of `build --phase` (the library's [`BuildPhase`], named for the
/// command line).
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum PhaseArg {
    /// The moving-phase subspaces only.
    Moving,
    /// The placement-phase sectors only (the moving phase must be built).
    Placement,
    /// The moving phase, then the placement sectors.
    All,
}

/// The values of `build --form` (the library's [`Form`]).
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum FormArg {
    /// The files as solved: zstd, every value and decisive distance stored
    /// (fastest to write; `millbase repack` makes them small later).
    Fast,
    /// The smallest files, every value and distance exact: each finished file is
    /// recoded (model coding, don't-cares, checked on every slot) in the background
    /// while the next is solved.
    Small,
    /// The serving profile's files, every value and distance exact: larger than
    /// `small`, each WDL block decoded cold in under 100 µs (zstd in small
    /// blocks, every value and decisive distance), recoded in the background as
    /// `small` is.
    Serving,
}

/// Arguments of `build`.
#[derive(Args)]
pub struct BuildArgs {
    /// The database directory.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// Build only the pair K-L / L-K (and what it depends on), e.g. `--only 5-4`; or
    /// one placement sector K-L-HK-HL and the sectors it leads into, e.g.
    /// `--only 8-7-1-1` (the moving phase must be built).
    #[arg(long, value_name = "K-L", conflicts_with = "max_stones")]
    only: Option<String>,
    /// Which phases to build: the moving-phase subspaces, the placement sectors
    /// (which need the moving phase), or both in that order.
    #[arg(long, value_enum, default_value_t = PhaseArg::All)]
    phase: PhaseArg,
    /// The rules: `standard`, `lasker`, `morabaraba`, `twelve`, `no-flying`, `six`
    /// (docs/RULES.md), each also `NAME-N` with N stones per side (3 to 12, 3 to 8
    /// for six; small N build the whole game in seconds).
    #[arg(long, default_value = "standard", value_parser = rules_arg)]
    rules: &'static Rules,
    /// Build every pair with at most N stones on the board in all, e.g. `--max-stones 10`.
    #[arg(long, value_name = "N")]
    max_stones: Option<u32>,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = super::at_least_one)]
    threads: Option<usize>,
    /// Which files to leave (docs/FORMAT.md): `small` (the archive profile) or
    /// `serving` (the serving profile), recoded in the background as the build
    /// goes on, or `fast`, the files as solved (quicker to write, four times larger).
    #[arg(long, value_enum, default_value_t = FormArg::Small)]
    form: FormArg,
    /// Minutes between two checkpoints of a pair solved by layers (its cells saved
    /// as `NAME.ckpt` in the directory, so that a stopped build resumes the pair
    /// at the layer it had reached); 0: after every layer.
    #[arg(
        long,
        value_name = "MINUTES",
        default_value_t = 10,
        conflicts_with = "no_checkpoints"
    )]
    checkpoint_minutes: u64,
    /// No checkpoints: a stopped build solves an unfinished pair again from its start.
    #[arg(long)]
    no_checkpoints: bool,
    /// Take the finished files of DIR that hold the same values under its rules
    /// and these, instead of solving them: every position that cannot reach a full
    /// board if the rules differ only there (`twelve` for `morabaraba` and back),
    /// the moving phase up to the stones both have if they differ only in the
    /// stones and the placement phase (`standard` for `lasker` and back).
    #[arg(long, value_name = "DIR")]
    reuse: Option<PathBuf>,
    /// With --reuse: move the files out of DIR instead of copying them, for a disk
    /// that cannot hold both directories (DIR loses them; a build of DIR's rules
    /// with `--reuse` of this directory and `--move` moves them back).
    #[arg(long = "move", requires = "reuse")]
    move_files: bool,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
}

/// Arguments of `verify`.
#[derive(Args)]
pub struct VerifyArgs {
    /// The database directory.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// Check only the pair K-L / L-K, or the placement sector K-L-HK-HL.
    #[arg(long, value_name = "K-L")]
    only: Option<String>,
}

/// Arguments of `stats`.
#[derive(Args)]
pub struct StatsArgs {
    /// The database directory.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// One JSON object per subspace, in a JSON list.
    #[arg(long)]
    json: bool,
}

/// The block cache the command line asked for (`--cache-mb`), bytes.
static CACHE_LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Sets the block cache of every tablebase the command opens to `mib` MiB.
pub(crate) fn set_cache_mib(mib: u64) {
    let bytes = usize::try_from(mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
    let _ = CACHE_LIMIT.set(bytes);
}

/// Opens the database directory `dir` for probing, with the block cache
/// `--cache-mb` asked for (else the library's default).
pub(crate) fn open_sized(
    dir: &std::path::Path,
) -> Result<millbase::table::probe::Tablebase, millbase::table::probe::ProbeError> {
    let tb = millbase::table::probe::Tablebase::open(dir)?;
    if let Some(&bytes) = CACHE_LIMIT.get() {
        tb.set_cache_limit(bytes);
    }
    Ok(tb)
}

/// Opens the database directory `dir` for probing, warning on standard error when
/// its manifest could not be read (the rules then come from the files' headers).
pub(crate) fn open_tablebase(dir: &std::path::Path) -> Result<millbase::table::probe::Tablebase> {
    let tb = open_sized(dir)?;
    if let Some(problem) = tb.manifest_problem() {
        eprintln!(
            "warning: {problem}\nwarning: the rules are read from the database files' headers: {}",
            tb.rules().name
        );
    }
    Ok(tb)
}

/// Parses `--rules NAME`.
pub(crate) fn rules_arg(text: &str) -> Result<&'static Rules, String> {
    Rules::parse(text).map_err(|e| e.to_string())
}

fn subspace_arg(text: &str) -> Result<(u32, u32)> {
    parse_subspace(text).with_context(|| format!("'{text}' is not a subspace: write K-L, e.g. 5-4"))
}

/// `millbase build`.
pub fn build(a: BuildArgs) -> Result<ExitCode> {
    let rules = a.rules;
    let selection = match (&a.only, a.max_stones) {
        (Some(s), _) => match Sector::parse(s) {
            Some(sector) if !sector.is_moving() => Selection::Sector(sector),
            _ => {
                let (k, l) = subspace_arg(s)?;
                Selection::Only(k, l)
            }
        },
        (None, Some(n)) => Selection::MaxStones(n),
        (None, None) => Selection::All,
    };
    if let Some(t) = a.threads {
        millbase::memory::check_threads("--threads", t as u64, millbase::memory::thread_limit())?;
    }
    let opts = BuildOptions {
        db: a.db.clone(),
        selection,
        phase: match a.phase {
            PhaseArg::Moving => BuildPhase::Moving,
            PhaseArg::Placement => BuildPhase::Placement,
            PhaseArg::All => BuildPhase::All,
        },
        threads: a.threads,
        form: match a.form {
            FormArg::Fast => Form::Fast,
            FormArg::Small => Form::Small,
            FormArg::Serving => Form::Serving,
        },
        checkpoints: (!a.no_checkpoints)
            .then(|| std::time::Duration::from_secs(a.checkpoint_minutes.saturating_mul(60))),
        reuse: a.reuse.clone(),
        reuse_by_moving: a.move_files,
    };
    let threads = a.threads.unwrap_or_else(rayon::current_num_threads);
    let reports = build::build_with(rules, &opts, &BuildBars::new(rules, a.quiet))?;
    print_reports(&reports, threads);
    println!("database directory: {}", a.db.display());
    Ok(ExitCode::SUCCESS)
}

fn print_reports(reports: &[PairReport], threads: usize) {
    println!(
        "{:>5} {:>13} {:>9} {:>12} {:>9} {:>12} {:>9} {:>9}",
        "pair", "positions", "seconds", "pos/s/thread", "peak MiB", "bytes", "WDL b/p", "depth b/p"
    );
    for r in reports {
        if r.skipped {
            println!("{:>5} {:>13} {:>9}", r.name(), r.positions, "skipped");
            continue;
        }
        let bits = |b: u64| b as f64 * 8.0 / r.positions as f64;
        println!(
            "{:>5} {:>13} {:>9.2} {:>12.0} {:>9} {:>12} {:>9.3} {:>9.3}",
            r.name(),
            r.positions,
            r.seconds,
            r.positions as f64 / r.seconds / threads as f64,
            r.peak_rss >> 20,
            r.bytes,
            bits(r.wdl_bytes),
            bits(r.depth_bytes)
        );
    }
}

/// `millbase verify`.
pub fn verify(a: VerifyArgs) -> Result<ExitCode> {
    let rules = open_tablebase(&a.db)?.rules();
    let idx = Index::for_rules(rules);
    let only = match a.only.as_deref() {
        Some(text) => Some(match Sector::parse(text) {
            Some(s) => s,
            None => {
                let (k, l) = subspace_arg(text)?;
                Sector::moving(k as u8, l as u8)
            }
        }),
        None => None,
    };
    // What the manifest says should be here (its entries, and what a build, pack or
    // repack set out to write) but is not: a run killed half-way, or a file deleted.
    let missing: Vec<String> = match (&only, Manifest::load(&a.db)) {
        (None, Ok(Some(m))) => m
            .missing(&a.db)
            .into_iter()
            // Sectors of these rules only, and not derived (no file by design).
            .filter(|name| {
                Sector::parse(name).is_some_and(|s| {
                    s.is_valid(rules) && !millbase::table::dir::is_derived(&a.db, rules, s)
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let checks = verify::check(&a.db, idx, only)?;
    if checks.is_empty() && missing.is_empty() {
        bail!(
            "no database files in {}: run `millbase build --db {}` first",
            a.db.display(),
            a.db.display()
        );
    }
    let mut bad = 0;
    for c in &checks {
        println!(
            "{}: {} slots, {} mismatches{}",
            c.sector,
            c.slots,
            c.mismatches,
            if c.wdl_only {
                " (win/draw/loss only)"
            } else {
                ""
            }
        );
        for m in &c.examples {
            let fen = millbase::rules::fen::format(idx.rules(), &m.position, Default::default());
            if c.wdl_only {
                println!(
                    "  {fen}: stored {}, expected {}",
                    m.stored.wdl(),
                    m.expected.wdl()
                );
            } else {
                println!("  {fen}: stored {}, expected {}", m.stored, m.expected);
            }
        }
        bad += c.mismatches;
    }
    if !missing.is_empty() {
        println!(
            "verify FAILED: {} the manifest lists {} missing: {} (a build, pack or repack into {} did not finish, or the files were removed: run it again)",
            if missing.len() == 1 {
                "1 file".to_string()
            } else {
                format!("{} files", missing.len())
            },
            if missing.len() == 1 { "is" } else { "are" },
            missing
                .iter()
                .map(|n| format!("{n}.mdb"))
                .collect::<Vec<_>>()
                .join(", "),
            a.db.display()
        );
    }
    if bad > 0 {
        println!("verify FAILED: {bad} mismatches");
    }
    if bad > 0 || !missing.is_empty() {
        return Ok(ExitCode::from(1));
    }
    if checks.iter().any(|c| c.wdl_only) {
        println!(
            "verify ok: every win/draw/loss agrees with its successors (without distances this shows they are consistent, not that no win or loss was stored as a draw: verify the full database for that)"
        );
    } else {
        println!("verify ok: every value agrees with its successors");
    }
    Ok(ExitCode::SUCCESS)
}

/// One line of `stats --json`.
#[derive(Serialize)]
struct Stat {
    subspace: String,
    classes: u64,
    raw: u64,
    #[serde(flatten)]
    counts: Counts,
    longest_win_example: Option<String>,
    longest_loss_example: Option<String>,
}

/// `millbase stats`.
pub fn stats(a: StatsArgs) -> Result<ExitCode> {
    let rules = open_tablebase(&a.db)?.rules();
    let idx = Index::for_rules(rules);
    // The numbers come from the files' headers (checked by their checksum and against
    // what this program writes), not from the manifest, which is only a record; the
    // manifest gives the examples when it describes the same file.
    let manifest = Manifest::load(&a.db).ok().flatten();
    let mut entries = Vec::new();
    for (sector, file) in build::existing_files(&a.db, idx) {
        let file = file?;
        let mut e = Entry::new(file.header(), 0.0);
        if let Some(m) = manifest
            .as_ref()
            .and_then(|m| m.get_sector(sector))
            .filter(|m| m.checksum == e.checksum)
        {
            e.longest_win_example = m.longest_win_example.clone();
            e.longest_loss_example = m.longest_loss_example.clone();
        }
        entries.push(e);
    }
    if entries.is_empty() {
        bail!(
            "no database files in {}: run `millbase build --db {}`",
            a.db.display(),
            a.db.display()
        );
    }
    let n = rules.points() as u32;
    let mut stats: Vec<Stat> = entries
        .iter()
        .filter_map(|e| {
            let (k, l) = e.sector()?.counts();
            Some(Stat {
                subspace: e.name.clone(),
                classes: e.counts.total().unwrap_or(u64::MAX),
                raw: binomial(n, k) * binomial(n - k, l),
                counts: e.counts,
                longest_win_example: e.longest_win_example.clone(),
                longest_loss_example: e.longest_loss_example.clone(),
            })
        })
        .collect();
    // Moving phase by stones on the board, then placement sectors from the empty board.
    stats.sort_by_key(|s| {
        Sector::parse(&s.subspace).map(|x| {
            let placed = rules.stones as u32 * 2 - x.hk as u32 - x.hl as u32;
            (
                !x.is_moving(),
                if x.is_moving() {
                    (x.k + x.l) as u32
                } else {
                    placed
                },
                x,
            )
        })
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:>9} {:>12} {:>14} {:>12} {:>12} {:>12} {:>6} {:>6}",
        "sector", "classes", "raw", "wins", "losses", "draws", "lwin", "lloss"
    );
    for s in &stats {
        let c = &s.counts;
        println!(
            "{:>9} {:>12} {:>14} {:>12} {:>12} {:>12} {:>6} {:>6}",
            s.subspace, s.classes, s.raw, c.wins, c.losses, c.draws, c.longest_win, c.longest_loss
        );
        if let Some(f) = &s.longest_win_example {
            println!("      longest win:  {f}");
        }
        if let Some(f) = &s.longest_loss_example {
            println!("      longest loss: {f}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
