//! `exam`: positions from perfect play answered by players and judged by the
//! databases.

use super::arena::{ignore_sigpipe, print_report, write_json_lines};
use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use millbase::play::arena::PlayerSpec;
use millbase::play::arena::exam::{self, ExamConfig};
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `exam`.
#[derive(Args)]
pub struct ExamArgs {
    /// One or two players, as in `arena` (engine:movetime=MS,db=no,
    /// uci:movetime=MS:COMMAND, ...). With two, both answer the same positions and
    /// the report compares them position by position.
    #[arg(required = true, num_args = 1..=2)]
    players: Vec<String>,
    /// Database directory covering the whole game (placement sectors included):
    /// it draws the positions and judges the answers.
    #[arg(long)]
    db: PathBuf,
    /// Positions to ask (each one where a blunder is possible).
    #[arg(long, default_value_t = 1000, value_parser = super::at_least_one)]
    positions: usize,
    /// Plies from the start at which positions are drawn, `FROM-TO` (0-17: the
    /// placement phase of the standard game) or one number.
    #[arg(long, default_value = "0-17", value_parser = ply_range)]
    plies: RangeInclusive<usize>,
    /// Seed of the positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Answers computed at once.
    #[arg(long, default_value_t = 1, value_parser = super::at_least_one)]
    threads: usize,
    /// Write every position with each player's answer as a JSON line to this file
    /// (the game from the start, FEN, value, the plies that would be blunders).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Reads `FROM-TO` or `N`.
fn ply_range(text: &str) -> Result<RangeInclusive<usize>, String> {
    let number = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|_| format!("'{t}' is not a number of plies"))
    };
    let (from, to) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => (number(text)?, number(text)?),
    };
    if from > to {
        return Err(format!("{from}-{to}: the first ply is after the last"));
    }
    Ok(from..=to)
}

/// `millbase exam PLAYER [PLAYER] --db DIR ...`.
pub fn exam(args: ExamArgs) -> Result<ExitCode> {
    ignore_sigpipe();
    let db = Arc::new(super::db::open_sized(&args.db)?);
    if !db.has_placement() {
        bail!(
            "{} has no placement sectors: the exam draws positions from the start, so it \
             needs the whole game (run `millbase build --db {}`)",
            args.db.display(),
            args.db.display()
        );
    }
    let players = args
        .players
        .iter()
        .map(|p| Ok((p.parse::<PlayerSpec>()?, p.clone())))
        .collect::<Result<Vec<_>>>()?;
    let config = ExamConfig {
        players,
        questions: args.positions,
        plies: args.plies.clone(),
        seed: args.seed,
        threads: millbase::memory::check_threads(
            "--threads",
            args.threads as u64,
            millbase::memory::thread_limit(),
        )?,
        db,
        db_dir: Some(args.db.clone()),
    };
    let draw = if args.quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let questions = exam::questions(&config).context("drawing the positions")?;
    let bar =
        ProgressBar::with_draw_target(Some((questions.len() * config.players.len()) as u64), draw);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} answers {elapsed} (eta {eta})")
            .expect("a valid template"),
    );
    let answers = exam::answer(&config, &questions, &|| bar.inc(1));
    bar.finish_and_clear();
    let answers = answers?;
    if let Some(path) = &args.out {
        write_json_lines(
            path,
            &exam::records(config.db.rules(), &questions, &answers),
        )
        .with_context(|| format!("--out {}", path.display()))?;
    }
    let report = exam::report(&questions, &answers);
    let text = if args.json {
        format!("{}\n", serde_json::to_string(&report)?)
    } else {
        report.to_string()
    };
    print_report(&text)?;
    Ok(ExitCode::SUCCESS)
}
