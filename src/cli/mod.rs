//! Command-line interface: one file per subcommand.

mod active;
mod arena;
mod args;
mod board;
mod db;
mod eta;
mod exam;
mod info;
mod oracle;
mod pack;
mod progress;
mod repack;
#[cfg(feature = "serve")]
mod serve;
mod uci;
mod warm;

use args::{at_least_one, parse_sectors};
use clap::error::ErrorKind;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Endgame databases, perfect play and an engine for nine men's morris.
#[derive(Parser)]
#[command(name = "millbase", version, about)]
struct Cli {
    /// MiB of decompressed database blocks a command that probes databases keeps
    /// in memory (default 1024): more keeps a whole game's play warm.
    #[arg(long, global = true, value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    cache_mb: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show a position as a board diagram.
    Show(board::ShowArgs),
    /// List the legal plies of a position.
    Moves(board::MovesArgs),
    /// Count ply sequences to a depth (move-generation check and speed).
    Perft(board::PerftArgs),
    /// Speak the engine protocol (Sanmill's UCI dialect) on standard input and output.
    Uci(uci::UciArgs),
    /// Build the endgame databases (default: the full standard set into db/), resumably.
    Build(db::BuildArgs),
    /// Check a database: checksums, then every value recomputed from its successors.
    Verify(db::VerifyArgs),
    /// Per-subspace statistics of a database: classes, raw positions, W/L/D, longest.
    Stats(db::StatsArgs),
    /// Copy a database directory for shipping: `--wdl-only` keeps win/draw/loss only.
    Pack(pack::PackArgs),
    /// Rewrite full files with don't-cares (format 2): smaller, probes stay exact.
    Repack(repack::RepackArgs),
    /// Print the header of a database file.
    Info(info::InfoArgs),
    /// Solve a placement position (default: the empty board) with the opening search.
    Solve(oracle::SolveArgs),
    /// Print the exact value of a position (either phase).
    Probe(oracle::QueryArgs),
    /// Print every legal ply of a position with its value, best first.
    Analyze(oracle::QueryArgs),
    /// Play against the oracle in the terminal.
    Play(oracle::PlayArgs),
    /// Play games between two players and report results with intervals.
    Arena(arena::ArenaArgs),
    /// Ask players for a ply in positions from perfect play; count their blunders.
    Exam(exam::ExamArgs),
    /// Serve the JSON API and the web analysis board over HTTP.
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
}

/// Parses the command line and runs the subcommand.
pub fn run() -> anyhow::Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return Ok(usage_error(e)),
    };
    if let Some(mb) = cli.cache_mb {
        db::set_cache_mib(mb);
    }
    match cli.command {
        Command::Show(a) => board::show(a),
        Command::Moves(a) => board::moves(a),
        Command::Perft(a) => board::perft(a),
        Command::Uci(a) => uci::uci(a),
        Command::Info(a) => info::info(a),
        Command::Build(a) => db::build(a),
        Command::Verify(a) => db::verify(a),
        Command::Stats(a) => db::stats(a),
        Command::Pack(a) => pack::pack(a),
        Command::Repack(a) => repack::repack_cmd(a),
        Command::Solve(a) => oracle::solve(a),
        Command::Probe(a) => oracle::probe(a),
        Command::Analyze(a) => oracle::analyze(a),
        Command::Play(a) => oracle::play(a),
        Command::Arena(a) => arena::arena(a),
        Command::Exam(a) => exam::exam(a),
        #[cfg(feature = "serve")]
        Command::Serve(a) => serve::serve(a),
    }
}

/// Help and version go out as clap writes them; a usage error becomes one line, like
/// every other error of the program.
fn usage_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        _ => {}
    }
    let text = e.render().to_string();
    eprintln!(
        "error: {} (see '{} --help')",
        first_paragraph(&text),
        usage_command(&text)
    );
    ExitCode::from(2)
}

/// clap's message without its `error: ` prefix, up to its first blank line, as one
/// line (a missing argument is named on the line after the message's first).
fn first_paragraph(text: &str) -> String {
    let lines = text.lines().take_while(|l| !l.trim().is_empty());
    let words: Vec<&str> = lines.map(str::trim).collect();
    let joined = words.join(" ");
    let joined = joined.strip_prefix("error: ").unwrap_or(&joined);
    if joined.is_empty() {
        "bad arguments".to_string()
    } else {
        joined.to_string()
    }
}

/// The command whose usage clap printed (`millbase probe`), from its `Usage:`
/// line: the words before the first option or argument; `millbase` if none.
fn usage_command(text: &str) -> String {
    let usage = text.lines().find_map(|l| l.trim().strip_prefix("Usage: "));
    let words = usage.into_iter().flat_map(str::split_whitespace);
    let command: Vec<&str> = words
        .take_while(|w| !w.starts_with(['[', '<', '-']))
        .collect();
    if command.is_empty() {
        "millbase".to_string()
    } else {
        command.join(" ")
    }
}
