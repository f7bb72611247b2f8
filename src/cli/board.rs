//! `show`, `moves`, `perft`: looking at positions.

use anyhow::Result;
use clap::Args;
use millbase::rules::notation::format_ply;
use millbase::rules::position::Phase;
use millbase::{Game, Position, Rules, rules::fen, rules::perft};
use std::process::ExitCode;
use std::time::Instant;

/// A position argument: `startpos`, a FEN, either followed by `moves ...`.
#[derive(Args)]
pub struct PositionArg {
    /// `startpos`, or a Sanmill FEN (quote it), optionally followed by `moves t1 t2 ...`.
    #[arg(
        num_args = 1..,
        required = true,
        value_name = "POS",
        allow_negative_numbers = true
    )]
    pub position: Vec<String>,
}

impl PositionArg {
    /// Reads the position as a game.
    pub fn game(&self, rules: &Rules) -> Result<Game> {
        Ok(Game::parse(rules, &self.position.join(" "))?)
    }
}

/// Arguments of `show`.
#[derive(Args)]
pub struct ShowArgs {
    /// The rules (`standard`, `lasker`, `morabaraba`, `twelve`, `no-flying`, `six`,
    /// each also `NAME-N` with N stones per side).
    #[arg(long, default_value = "standard", value_parser = super::db::rules_arg)]
    rules: &'static Rules,
    #[command(flatten)]
    pos: PositionArg,
}

/// Arguments of `moves`.
#[derive(Args)]
pub struct MovesArgs {
    /// The rules (`standard`, `lasker`, `morabaraba`, `twelve`, `no-flying`, `six`,
    /// each also `NAME-N` with N stones per side).
    #[arg(long, default_value = "standard", value_parser = super::db::rules_arg)]
    rules: &'static Rules,
    #[command(flatten)]
    pos: PositionArg,
}

/// Arguments of `perft`.
#[derive(Args)]
pub struct PerftArgs {
    /// The rules (`standard`, `lasker`, `morabaraba`, `twelve`, `no-flying`, `six`,
    /// each also `NAME-N` with N stones per side).
    #[arg(long, default_value = "standard", value_parser = super::db::rules_arg)]
    rules: &'static Rules,
    /// Depth in plies.
    depth: u32,
    /// The position (default: startpos).
    #[arg(num_args = 0.., value_name = "POS", allow_negative_numbers = true)]
    position: Vec<String>,
}

/// The board as an ASCII diagram: `O` white, `@` black, `.` empty.
pub fn diagram(rules: &Rules, pos: &Position) -> String {
    const ART: &str = "\
7 a7-----------d7-----------g7
  |            |            |
6 |   b6-------d6-------f6  |
  |   |        |        |   |
5 |   |   c5---d5---e5  |   |
  |   |   |         |   |   |
4 a4--b4--c4        e4--f4--g4
  |   |   |         |   |   |
3 |   |   c3---d3---e3  |   |
  |   |        |        |   |
2 |   b2-------d2-------f2  |
  |            |            |
1 a1-----------d1-----------g1
   a   b   c   d   e   f   g";
    const SIX_ART: &str = "\
7 a7-----------d7-----------g7
  |            |            |
6 |   b6-------d6-------f6  |
  |   |                 |   |
4 a4--b4                f4--g4
  |   |                 |   |
2 |   b2-------d2-------f2  |
  |            |            |
1 a1-----------d1-----------g1
   a   b   c   d   e   f   g";
    let art = if rules.point("d5").is_some() {
        ART
    } else {
        SIX_ART
    };
    let mut out = art.to_string();
    for p in 0..rules.points() as u8 {
        let name = rules.name(p);
        let mark = if pos.board[0] >> p & 1 == 1 {
            'O'
        } else if pos.board[1] >> p & 1 == 1 {
            '@'
        } else {
            '.'
        };
        // Replace the point name in the art, keeping the line that leaves it.
        if let Some(at) = out.match_indices(name).map(|(i, _)| i).find(|&i| i > 0) {
            let fill = if out[at + 2..].starts_with('-') {
                '-'
            } else {
                ' '
            };
            out.replace_range(at..at + 2, &format!("{mark}{fill}"));
        }
    }
    out
}

/// A description of the position: diagram, side to move, hands, FEN.
pub fn describe(rules: &Rules, game: &Game) -> String {
    let pos = game.position();
    let mut s = diagram(rules, pos);
    s.push_str(&format!(
        "\n\n{} to move{}; on board O {} @ {}; in hand O {} @ {}; phase {}\nFEN {}\n",
        pos.to_move,
        if pos.pending_removal {
            " (must remove a stone)"
        } else {
            ""
        },
        pos.board[0].count_ones(),
        pos.board[1].count_ones(),
        pos.hand[0],
        pos.hand[1],
        if pos.phase() == Phase::Placement {
            "placement"
        } else {
            "moving"
        },
        fen::format(rules, pos, game.counters)
    ));
    if pos.is_drawn(rules) {
        s.push_str("Game over: the board is full, a draw.\n");
    } else if pos.is_lost(rules) {
        s.push_str(&format!("Game over: {} has lost.\n", pos.to_move));
    } else if game.is_repetition() {
        s.push_str("The position repeats: a draw.\n");
    }
    s
}

/// `millbase show POS`.
pub fn show(a: ShowArgs) -> Result<ExitCode> {
    let rules = a.rules;
    let game = a.pos.game(rules)?;
    print!("{}", describe(rules, &game));
    Ok(ExitCode::SUCCESS)
}

/// `millbase moves POS`.
pub fn moves(a: MovesArgs) -> Result<ExitCode> {
    let rules = a.rules;
    let game = a.pos.game(rules)?;
    let plies: Vec<String> = game
        .position()
        .legal_plies(rules)
        .into_iter()
        .map(|p| format_ply(rules, p))
        .collect();
    println!("{}", plies.join(" "));
    Ok(ExitCode::SUCCESS)
}

/// `millbase perft DEPTH [POS]`.
pub fn perft(a: PerftArgs) -> Result<ExitCode> {
    let rules = a.rules;
    let text = if a.position.is_empty() {
        "startpos".to_string()
    } else {
        a.position.join(" ")
    };
    let mut pos = *Game::parse(rules, &text)?.position();
    let start = Instant::now();
    let mut total = 0;
    for d in 1..=a.depth {
        let n = perft::perft(rules, &mut pos, d);
        total += n;
        println!("depth={d} nodes={n}");
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "time={secs:.3}s nodes={total} nps={:.0}",
        total as f64 / secs.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}
