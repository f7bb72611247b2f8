//! `solve`, `probe`, `analyze`, `play`: perfect play from the databases and the
//! opening search.

use super::board::{PositionArg, describe};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use millbase::rules::game::End;
use millbase::rules::notation::{format_ply, parse_ply};
use millbase::rules::position::Phase;
use millbase::search::analysis::{Analysis, Plies, Source, value_json};
use millbase::search::opening::{Opening, OpeningError, OpeningOptions, Outcome};
use millbase::table::probe::{ProbeError, Tablebase};
use millbase::{Color, Game, Ply, Position, Rules, Value};
use serde_json::{Value as Json, json};
use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

/// Database and search settings shared by the oracle commands.
#[derive(Args)]
pub struct OracleArgs {
    /// The database directory.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// Transposition table size of the opening search, MiB.
    #[arg(long, default_value_t = 256)]
    table_mib: usize,
}

impl OracleArgs {
    fn open(&self) -> Result<Tablebase> {
        millbase::memory::check_mib("--table-mib", self.table_mib as u64)?;
        super::db::open_tablebase(&self.db)
    }

    fn options(&self) -> OpeningOptions {
        OpeningOptions {
            table_mib: self.table_mib,
            ..OpeningOptions::default()
        }
    }
}

/// Arguments of `solve`.
#[derive(Args)]
pub struct SolveArgs {
    #[command(flatten)]
    oracle: OracleArgs,
    /// The position to solve (default: the empty board): `startpos` or a FEN,
    /// optionally followed by `moves ...`, quoted as one argument.
    #[arg(long, default_value = "startpos")]
    position: String,
    /// Save the exact values found for positions up to this many plies into the
    /// placement phase (0 saves nothing).
    #[arg(long, default_value_t = 8)]
    save_plies: u32,
    /// Search even where the placement sectors answer, and with them present check
    /// the table's value against the search's (the independent check of the tables).
    #[arg(long)]
    search: bool,
}

/// Arguments of `probe` and `analyze`.
#[derive(Args)]
pub struct QueryArgs {
    #[command(flatten)]
    oracle: OracleArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pos: PositionArg,
}

/// Which side a person plays.
#[derive(Clone, Copy, ValueEnum)]
pub enum Side {
    /// White, who moves first.
    White,
    /// Black.
    Black,
}

/// Arguments of `play`.
#[derive(Args)]
pub struct PlayArgs {
    #[command(flatten)]
    oracle: OracleArgs,
    /// The side the person plays.
    #[arg(long, value_enum, default_value = "white")]
    human: Side,
}

fn game_of(rules: &Rules, text: &str) -> Result<Game> {
    Ok(Game::parse(rules, text)?)
}

/// `millbase solve`.
pub fn solve(a: SolveArgs) -> Result<ExitCode> {
    let tb = a.oracle.open()?;
    let rules = tb.rules();
    let game = game_of(rules, &a.position)?;
    let pos = game.position();
    let table = Opening::new(&tb, a.oracle.options())?;
    let from_table = table.in_tables(pos);
    drop(table);
    if from_table {
        let start = std::time::Instant::now();
        let value = tb.probe(pos)?;
        let best = tb.best_ply(pos)?;
        println!(
            "value        {value} (placement sector {}, one look-up)",
            millbase::table::sector::Sector::of(pos)
        );
        if let Some((p, _)) = best {
            println!("best ply     {}", format_ply(rules, p));
        }
        println!("time         {:.3} s", start.elapsed().as_secs_f64());
        if !a.search {
            return Ok(ExitCode::SUCCESS);
        }
        let mut search = Opening::new(
            &tb,
            OpeningOptions {
                use_tables: false,
                ..a.oracle.options()
            },
        )?;
        let out = search.solve(pos)?;
        print!("search:\n{}", solve_report(rules, &out, &a.oracle.db));
        return Ok(if out.exact() == Some(value) {
            println!("check        the table and the search agree");
            ExitCode::SUCCESS
        } else {
            println!(
                "check        FAILED: the table says {value}, the search {} .. {}",
                out.lower, out.upper
            );
            ExitCode::from(1)
        });
    }
    let mut opening = Opening::new(&tb, a.oracle.options())?;
    warn_saved(&opening);
    let out = opening.solve(pos)?;
    print!("{}", solve_report(rules, &out, &a.oracle.db));
    if a.save_plies > 0 && out.exact().is_some() && game.position().phase() == Phase::Placement {
        let path = tb.dir().join(millbase::search::opening::SAVED_FILE);
        // The answer stands whether or not it could be saved for the next run.
        match opening.save(a.save_plies) {
            Ok(n) => println!(
                "saved        {n} exact values up to ply {} in {}",
                a.save_plies,
                path.display()
            ),
            Err(e) => eprintln!(
                "warning: the values found were not saved to {} ({e}); the answer above stands, the next run searches again",
                path.display()
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Warns on standard error when the saved opening values could not be read.
fn warn_saved(opening: &Opening) {
    if let Some(problem) = opening.saved_problem() {
        eprintln!(
            "warning: {problem}\nwarning: the saved opening values are ignored (positions are searched instead); `millbase solve` writes the file anew"
        );
    }
}

fn solve_report(rules: &Rules, out: &Outcome, db: &std::path::Path) -> String {
    let mut s = match out.exact() {
        Some(v) => format!("value        {v}\n"),
        None => format!(
            "value        not exact: between {} and {} (for the side to move)\n",
            out.lower, out.upper
        ),
    };
    if let Some(p) = out.best {
        s.push_str(&format!("best ply     {}\n", format_ply(rules, p)));
    }
    s.push_str(&format!("nodes        {}\n", out.nodes));
    s.push_str(&format!("probes       {}\n", out.probes));
    s.push_str(&format!("time         {:.3} s\n", out.seconds));
    if !out.missing.is_empty() {
        let names = out.missing_names();
        s.push_str(&format!("missing      {}\n", names.join(" ")));
        if out.exact().is_some() {
            s.push_str("(the bounds meet: the answer is exact without them)\n");
            return s;
        }
        s.push_str(&format!(
            "to make it exact, build them: `millbase build --db {} --only K-L` for each \
             (or everything: `millbase build --db {}`)\n",
            db.display(),
            db.display()
        ));
    }
    s
}

/// `millbase probe POS`.
pub fn probe(a: QueryArgs) -> Result<ExitCode> {
    let tb = a.oracle.open()?;
    let game = a.pos.game(tb.rules())?;
    let mut opening = Opening::new(&tb, a.oracle.options())?;
    warn_saved(&opening);
    let v = opening.value(game.position())?;
    if a.json {
        let mut obj = value_json(v);
        let source = Source::of(&tb, game.position());
        obj.insert("source".into(), json!(source.name()));
        println!("{}", Json::Object(obj));
    } else {
        println!("{v} (for {} to move)", game.position().to_move);
    }
    Ok(ExitCode::SUCCESS)
}

/// `millbase analyze POS`: the [`Analysis`] of the position, as text or as the
/// JSON the HTTP API answers with too.
pub fn analyze(a: QueryArgs) -> Result<ExitCode> {
    let tb = a.oracle.open()?;
    let rules = tb.rules();
    let game = a.pos.game(rules)?;
    let pos = game.position();
    let mut opening = Opening::new(&tb, a.oracle.options())?;
    warn_saved(&opening);
    let analysis = Analysis::new(&tb, pos, || Ok(&mut opening))?;
    if a.json {
        println!("{}", Json::Object(analysis.to_json()));
        return Ok(ExitCode::SUCCESS);
    }
    match &analysis.plies {
        Plies::Exact(moves) => {
            let value = analysis.value().unwrap_or(Value::Loss(0));
            println!("{value} (for {} to move)", pos.to_move);
            for &(p, v) in moves {
                println!("{:<10} {v}", format_ply(rules, p));
            }
        }
        Plies::Wdl(moves) => {
            println!(
                "{} (for {} to move; WDL-only database: no distances)",
                analysis.wdl(),
                pos.to_move
            );
            for &(p, w) in moves {
                println!("{:<10} {w}", format_ply(rules, p));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `millbase play`.
pub fn play(a: PlayArgs) -> Result<ExitCode> {
    let tb = a.oracle.open()?;
    let rules = tb.rules();
    let mut opening = Opening::new(&tb, a.oracle.options())?;
    warn_saved(&opening);
    let human = match a.human {
        Side::White => Color::White,
        Side::Black => Color::Black,
    };
    let mut game = Game::new(Position::start(rules), Default::default());
    // Lines as bytes: a line that is not UTF-8 is refused, never the end of the game.
    let mut lines = std::io::stdin().lock().split(b'\n');
    println!("You play {human}. Enter plies as d6, a1-a4, d6xg7; 'quit' or end of input stops.");
    loop {
        let pos = *game.position();
        println!("\n{}", describe(rules, &game));
        if let Some(end) = game_end(rules, &game) {
            println!("{end}");
            return Ok(ExitCode::SUCCESS);
        }
        println!("value: {}", assessment(&mut opening, &pos));
        let ply = if pos.to_move == human {
            match read_ply(rules, &pos, &mut lines)? {
                Some(p) => p,
                None => return Ok(ExitCode::SUCCESS),
            }
        } else {
            let p = oracle_ply(&mut opening, &pos)?;
            println!("oracle plays {}", format_ply(rules, p));
            p
        };
        game.play(rules, ply);
    }
}

/// Why the game is over, if it is.
fn game_end(rules: &Rules, game: &Game) -> Option<String> {
    let pos = game.position();
    Some(match game.end(rules, 2)? {
        End::Stones { winner } if winner == pos.to_move => format!(
            "{} has fewer than three stones: {} wins.",
            pos.to_move.other(),
            pos.to_move
        ),
        End::Stones { .. } | End::Blocked { .. } => {
            format!("{} cannot move: {} wins.", pos.to_move, pos.to_move.other())
        }
        End::Repetition => "The position repeats: a draw.".to_string(),
    })
}

/// The value of the position for the side to move, or why it is unknown.
fn assessment(opening: &mut Opening, pos: &Position) -> String {
    match opening.value(pos) {
        Ok(v) => format!("{v} for {}", pos.to_move),
        Err(e) => format!("unknown ({e})"),
    }
}

/// The oracle's ply: a best ply, or with databases missing the bounds search's best.
fn oracle_ply(opening: &mut Opening, pos: &Position) -> Result<Ply> {
    match opening.moves(pos) {
        Ok(m) => m.first().map(|m| m.0).context("no legal ply"),
        Err(OpeningError::Probe(ProbeError::Missing { .. })) => {
            opening.solve(pos)?.best.context("no legal ply")
        }
        Err(e) => Err(e.into()),
    }
}

/// Reads plies until a legal one; `None` at end of input or `quit`.
fn read_ply(
    rules: &Rules,
    pos: &Position,
    lines: &mut impl Iterator<Item = std::io::Result<Vec<u8>>>,
) -> Result<Option<Ply>> {
    loop {
        println!("your ply ({}):", pos.to_move);
        let Some(line) = lines.next() else {
            println!("end of input: goodbye.");
            return Ok(None);
        };
        let line = line?;
        let Ok(text) = std::str::from_utf8(&line) else {
            println!("refused: that line is not valid UTF-8 text");
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        if text == "quit" {
            return Ok(None);
        }
        match parse_ply(rules, pos, text) {
            Ok(p) => return Ok(Some(p)),
            Err(e) => println!("refused: {e}"),
        }
    }
}
