//! `arena`: games between two players, with results and intervals.

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use millbase::play::arena::{self, ArenaConfig, Openings, PlayerSpec, UciDefaults};
use millbase::play::protocol::client::GoLimits;
use millbase::{Game, Rules};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `arena`.
#[derive(Args)]
pub struct ArenaArgs {
    /// Player A: perfect, perfect:strict, perfect:trap, random, engine:depth=D,
    /// engine:movetime=MS, engine:nodes=N (options ,hash=MB ,db=no ,shuffle=no ,eval=shipped|tuned
    /// ,qs=PLIES ,ext=yes|no ,damp=yes|no ,lmr=yes|no), uci:COMMAND or
    /// uci:PARAMS:COMMAND (PARAMS: depth=D,movetime=MS,nodes=N,timeout=S,db=yes,
    /// option.NAME=VALUE).
    a: String,
    /// Player B (as A).
    b: String,
    /// Number of games (rounds with `--openings first-placements`); A and B swap
    /// colours every game.
    #[arg(long, default_value_t = 100, value_parser = super::at_least_one)]
    games: usize,
    /// Openings: `random:K` plays K random plies from the start for each pair of
    /// games; `first-placements` plays each of the 24 first placements with both
    /// colours (48 games a round; `--games` then counts rounds).
    #[arg(long, default_value = "random:0")]
    openings: String,
    /// Start position: `startpos` or a FEN, optionally followed by `moves ...`.
    #[arg(long, default_value = "startpos")]
    start: String,
    /// Seed of everything random.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 1, value_parser = super::at_least_one)]
    threads: usize,
    /// Play only game N of the run (from 0; its opening and seeds as in the whole
    /// run, so a match can be played one game at a time and resumed).
    #[arg(long, value_name = "N")]
    only_game: Option<usize>,
    /// Database directory (for perfect, for engines, and to find blunders).
    #[arg(long)]
    db: Option<PathBuf>,
    /// The rules played (`standard`, `lasker`, `morabaraba`, `twelve`, `no-flying`,
    /// `six`, each also `NAME-N`). Default: the rules of `--db`'s databases, else
    /// `standard`; with `--db` they must be the databases' rules.
    #[arg(long, value_parser = super::db::rules_arg)]
    rules: Option<&'static Rules>,
    /// Draw after this many plies without a removal (0: never).
    #[arg(long, default_value_t = 100)]
    max_quiet: u32,
    /// Draw after this many plies in all, opening excluded (0: never).
    #[arg(long, default_value_t = 1000)]
    max_plies: usize,
    /// `setoption name NAME value VALUE` for every uci: player (repeatable; sent
    /// before the options of its spec).
    #[arg(long = "uci-option", value_name = "NAME=VALUE", value_parser = arena::option_pair)]
    uci_options: Vec<(String, String)>,
    /// `go depth D` for every uci: player whose spec sets no limit (0: the engine's
    /// own depth, e.g. from Sanmill's SkillLevel).
    #[arg(long, value_name = "D")]
    uci_depth: Option<u32>,
    /// `go movetime MS` for every uci: player whose spec sets no limit.
    #[arg(long, value_name = "MS")]
    uci_movetime: Option<u64>,
    /// `go nodes N` for every uci: player whose spec sets no limit.
    #[arg(long, value_name = "N")]
    uci_nodes: Option<u64>,
    /// Seconds a uci: player may take for one search before it loses as silent.
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    uci_timeout: Option<u64>,
    /// Append every game as a JSON line to this file as soon as it ends (a finished
    /// match is left in game order). A file already holding games of this match
    /// (the same arguments) resumes it: those games are not played again, and the
    /// report covers the whole match.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// `millbase arena A B ...`.
pub fn arena(args: ArenaArgs) -> Result<ExitCode> {
    ignore_sigpipe();
    let db = match &args.db {
        Some(dir) => Some(Arc::new(super::db::open_sized(dir)?)),
        None => None,
    };
    // The games are played under the databases' rules (their manifest says them).
    let rules = match (db.as_ref().map(|db| db.rules()), args.rules) {
        (Some(theirs), Some(asked)) if theirs.fingerprint() != asked.fingerprint() => {
            anyhow::bail!(
                "--rules {} but the databases of --db are of the rules {}: give --rules {} or another --db",
                asked.name,
                theirs.name,
                theirs.name
            )
        }
        (Some(theirs), _) => theirs,
        (None, asked) => asked.unwrap_or(Rules::standard()),
    };
    let defaults = UciDefaults {
        go: GoLimits {
            depth: args.uci_depth,
            movetime: args.uci_movetime,
            nodes: args.uci_nodes,
        },
        options: args.uci_options.clone(),
        timeout: args.uci_timeout,
    };
    let a = args.a.parse::<PlayerSpec>()?.with_uci_defaults(&defaults);
    let b = args.b.parse::<PlayerSpec>()?.with_uci_defaults(&defaults);
    let openings: Openings = args
        .openings
        .parse()
        .map_err(|e| anyhow::anyhow!("--openings: {e}"))?;
    let start =
        Game::parse(rules, &args.start).with_context(|| format!("--start {}", args.start))?;
    let mut config = ArenaConfig::new(a, b, args.games);
    config.rules = rules;
    config.a.1 = args.a.clone();
    config.b.1 = args.b.clone();
    config.start = *start.position();
    config.start_counters = start.counters;
    config.openings = openings;
    if openings == Openings::FirstPlacements {
        config.games = args
            .games
            .checked_mul(arena::first_placement_round(&config))
            .filter(|&g| g > 0)
            .context("--openings first-placements: the start position has no legal ply")?;
    }
    config.seed = args.seed;
    config.threads = millbase::memory::check_threads(
        "--threads",
        args.threads as u64,
        millbase::memory::thread_limit(),
    )?;
    config.only_game = args.only_game;
    config.max_quiet = args.max_quiet;
    config.max_plies = args.max_plies;
    config.db = db;
    config.db_dir = args.db.clone();

    let bar = ProgressBar::with_draw_target(
        Some(config.only_game.map_or(config.games, |_| 1) as u64),
        if args.quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} games {elapsed} (eta {eta}) {msg}")
            .expect("a valid template"),
    );
    let in_run = |g: usize| config.only_game.is_none_or(|only| only == g);
    let (done, out) = match &args.out {
        Some(path) => {
            let (done, file) =
                resume(path, &config).with_context(|| format!("--out {}", path.display()))?;
            (done, Some(std::sync::Mutex::new(file)))
        }
        None => (Vec::new(), None),
    };
    let done: Vec<arena::GameRecord> = done.into_iter().filter(|r| in_run(r.game)).collect();
    let done_games: std::collections::HashSet<usize> = done.iter().map(|r| r.game).collect();
    bar.set_position(done.len() as u64);
    let write_error = std::sync::Mutex::new(None);
    let records = arena::run_except(&config, &|g| done_games.contains(&g), &|record| {
        bar.inc(1);
        if let Some(file) = &out {
            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = append_record(&mut file, record) {
                write_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(e);
            }
        }
    });
    bar.finish_and_clear();
    if let (Some(path), Some(e)) = (&args.out, write_error.into_inner().unwrap_or(None)) {
        return Err(e).with_context(|| format!("--out {}: writing a game", path.display()));
    }
    let mut records = records?;
    records.extend(done);
    records.sort_by_key(|r| r.game);
    if let Some(path) = &args.out {
        // The games went in as they ended; the finished match is left in game order
        // (written aside and renamed over, so no game is lost on the way).
        drop(out);
        let mut aside = path.as_os_str().to_owned();
        aside.push(".sorting");
        let aside = PathBuf::from(aside);
        write_json_lines(&aside, &records)
            .and_then(|()| Ok(std::fs::rename(&aside, path)?))
            .with_context(|| format!("--out {}: putting the games in order", path.display()))?;
    }
    let summary = arena::summarize(&config, &records);
    let text = if args.json {
        format!("{}\n", serde_json::to_string(&summary)?)
    } else {
        summary.to_string()
    };
    print_report(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Appends one game to the `--out` file, flushed, so that a match cut short keeps
/// every game that ended.
fn append_record(file: &mut std::fs::File, record: &arena::GameRecord) -> std::io::Result<()> {
    let mut line = serde_json::to_string(record)?;
    line.push('\n');
    file.write_all(line.as_bytes())?;
    file.flush()
}

/// Opens the `--out` file for appending and reads the games it already holds,
/// which must be games of this match (players, and the opening the arguments give
/// each game). A last line cut short (the run was killed while writing it) is
/// dropped from the file.
fn resume(path: &Path, config: &ArenaConfig) -> Result<(Vec<arena::GameRecord>, std::fs::File)> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes)?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete < bytes.len() {
        file.set_len(complete as u64)?;
    }
    let text = std::str::from_utf8(&bytes[..complete]).map_err(|_| {
        anyhow::anyhow!("not the games of a match: not UTF-8 text; give another --out file")
    })?;
    let mut records = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let record = arena::GameRecord::from_line(line).with_context(|| {
            format!(
                "line {} is not a game of `millbase arena`; give another --out file",
                n + 1
            )
        })?;
        let g = record.game;
        let other = |why: String| {
            anyhow::anyhow!(
                "holds game {g} of another match ({why}); rerun with the arguments that wrote it, or give another --out file"
            )
        };
        if (record.a.as_str(), record.b.as_str()) != (config.a.1.as_str(), config.b.1.as_str()) {
            return Err(other(format!("players {} and {}", record.a, record.b)));
        }
        if record.seed != config.seed {
            return Err(other(format!("seed {}", record.seed)));
        }
        if g >= config.games {
            return Err(other(format!("this match has {} games", config.games)));
        }
        let start = arena::opening(config, g / 2)?;
        let fen = millbase::rules::fen::format(config.rules, start.position(), start.counters);
        if record.opening_fen != fen {
            return Err(other(format!("its opening reached {}", record.opening_fen)));
        }
        if !seen.insert(g) {
            return Err(other("the game is in the file twice".into()));
        }
        records.push(record);
    }
    Ok((records, file))
}

/// Writes `items` to `path`, one JSON object a line.
pub(super) fn write_json_lines<T: serde::Serialize>(path: &Path, items: &[T]) -> Result<()> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    for item in items {
        serde_json::to_writer(&mut file, item)?;
        writeln!(file)?;
    }
    file.flush()?;
    Ok(())
}

/// Writes a report to standard output; a reader that stops reading
/// (`millbase arena ... | head`) is no error.
pub(super) fn print_report(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // SIGPIPE is ignored by the commands that print reports, so the write fails
        // instead of killing the program.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => written.context("writing the report"),
    }
}

/// Makes a closed pipe an error of the write, not death by SIGPIPE (which `main`
/// restores for the other commands): an engine that exits closes the pipe the
/// players write to, and that must be an error naming the engine.
pub(super) fn ignore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal disposition; no handler runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}
