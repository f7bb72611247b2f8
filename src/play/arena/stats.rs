//! The report: results, rates with intervals, results by colour, blunders.

use super::config::ArenaConfig;
use super::record::{Blunder, GameRecord, Reason, Side};
use crate::rules::position::Color;
use crate::rules::value::Wdl;
use serde::Serialize;

/// A proportion with its 95% Wilson score interval.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Rate {
    /// Count.
    pub count: usize,
    /// Count / total.
    pub rate: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

impl Rate {
    /// `count` out of `total`, with the Wilson interval (z = 1.96).
    pub fn new(count: usize, total: usize) -> Rate {
        if total == 0 {
            return Rate {
                count,
                rate: 0.0,
                low: 0.0,
                high: 1.0,
            };
        }
        let (n, p, z) = (total as f64, count as f64 / total as f64, 1.959964);
        let denom = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / denom;
        let half = z / denom * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
        Rate {
            count,
            rate: p,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:>5} {:5.1}% [{:5.1}%, {:5.1}%]",
            self.count,
            100.0 * self.rate,
            100.0 * self.low,
            100.0 * self.high
        )
    }
}

/// Per side: the databases' judgement of its plies.
#[derive(Clone, Debug, Serialize)]
pub struct Accuracy {
    /// Plies checked against the databases.
    pub checked: u32,
    /// Blunders: win→draw, draw→loss, win→loss.
    pub win_to_draw: u32,
    /// Draw to loss.
    pub draw_to_loss: u32,
    /// Win to loss.
    pub win_to_loss: u32,
    /// Plies that kept the result but won slower or lost faster.
    pub inaccurate: u32,
}

/// Results by the databases' value of the position after the opening, for A.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ByStart {
    /// Games.
    pub games: usize,
    /// A won.
    pub a_wins: usize,
    /// Drawn.
    pub draws: usize,
    /// B won.
    pub b_wins: usize,
}

/// One player's results with one colour.
#[derive(Clone, Debug, Serialize)]
pub struct ColourResults {
    /// The player.
    pub player: String,
    /// Its colour in these games.
    pub colour: String,
    /// Games it played with this colour.
    pub games: usize,
    /// Its wins with interval.
    pub wins: Rate,
    /// Draws with interval.
    pub draws: Rate,
    /// Its losses with interval.
    pub losses: Rate,
}

/// A lost game and where the loser first went wrong.
#[derive(Clone, Debug, Serialize)]
pub struct LostGame {
    /// Game number.
    pub game: usize,
    /// The side that lost.
    pub loser: Side,
    /// Its colour.
    pub colour: String,
    /// The opening plies of the game.
    pub opening: Vec<String>,
    /// The loser's first blunder; `None` when none was seen (the start was already
    /// lost for it, or its blunder was in positions the databases do not cover).
    pub first_blunder: Option<Blunder>,
}

/// What the arena reports.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Player A.
    pub a: String,
    /// Player B.
    pub b: String,
    /// Games played.
    pub games: usize,
    /// Games A won.
    pub a_wins: usize,
    /// Games drawn.
    pub draws: usize,
    /// Games B won.
    pub b_wins: usize,
    /// A's wins with interval.
    pub a_win_rate: Rate,
    /// Draws with interval.
    pub draw_rate: Rate,
    /// B's wins with interval.
    pub b_win_rate: Rate,
    /// Draws by threefold repetition.
    pub draws_repetition: usize,
    /// Draws by the limit of plies without a removal.
    pub draws_quiet: usize,
    /// Draws by the limit on game length.
    pub draws_ply_limit: usize,
    /// Draws claimed by an external engine (`bestmove draw`).
    pub draws_claimed: usize,
    /// Games an external engine lost by its answer or failure (`bestmove none`, an
    /// error line, an illegal ply, an exit, silence).
    pub forfeits: usize,
    /// How each game an external engine ended went, in game order.
    pub engine_endings: Vec<String>,
    /// The openings, as given (`random:K` or `first-placements`).
    pub openings: String,
    /// Which side is the perfect player, if one is.
    pub perfect: Option<Side>,
    /// The other side's draw rate against perfect play (when exactly one side is perfect).
    pub draw_rate_vs_perfect: Option<Rate>,
    /// Mean plies per game (after the opening).
    pub mean_plies: f64,
    /// Results from starts the databases call won for A.
    pub start_won_for_a: ByStart,
    /// From starts the databases call drawn.
    pub start_drawn: ByStart,
    /// From starts the databases call lost for A.
    pub start_lost_for_a: ByStart,
    /// A's plies judged by the databases.
    pub accuracy_a: Option<Accuracy>,
    /// B's plies judged by the databases.
    pub accuracy_b: Option<Accuracy>,
    /// Blunders per game by A (when the databases judge plies).
    pub blunders_per_game_a: Option<f64>,
    /// Blunders per game by B.
    pub blunders_per_game_b: Option<f64>,
    /// Results by colour of the player the report is about: the one that is not
    /// perfect, or A when neither or both are (White first).
    pub by_colour: Vec<ColourResults>,
    /// Every lost game with the loser's first blunder, in game order.
    pub lost_games: Vec<LostGame>,
    /// The first blunders, in game order.
    pub blunder_examples: Vec<Blunder>,
}

/// Sums up the records.
pub fn summarize(config: &ArenaConfig, records: &[GameRecord]) -> Summary {
    let games = records.len();
    let count = |f: &dyn Fn(&GameRecord) -> bool| records.iter().filter(|r| f(r)).count();
    let a_wins = count(&|r| r.winner == Some(Side::A));
    let b_wins = count(&|r| r.winner == Some(Side::B));
    let draws = games - a_wins - b_wins;
    let drawn_by = |reason| count(&|r| r.winner.is_none() && r.reason == reason);
    let perfect = match (config.a.0.is_perfect(), config.b.0.is_perfect()) {
        (true, false) => Some(Side::A),
        (false, true) => Some(Side::B),
        _ => None,
    };
    let accuracy = |s: usize| {
        config.db.as_ref().map(|_| Accuracy {
            checked: records.iter().map(|r| r.checked[s]).sum(),
            win_to_draw: records.iter().map(|r| r.blunder_kinds[s][0]).sum(),
            draw_to_loss: records.iter().map(|r| r.blunder_kinds[s][1]).sum(),
            win_to_loss: records.iter().map(|r| r.blunder_kinds[s][2]).sum(),
            inaccurate: records.iter().map(|r| r.inaccurate[s]).sum(),
        })
    };
    let by_start = |wdl: Wdl| {
        let mut b = ByStart::default();
        for r in records.iter().filter(|r| r.start_wdl_a == Some(wdl)) {
            b.games += 1;
            match r.winner {
                Some(Side::A) => b.a_wins += 1,
                Some(Side::B) => b.b_wins += 1,
                None => b.draws += 1,
            }
        }
        b
    };
    let subject = if perfect == Some(Side::A) {
        Side::B
    } else {
        Side::A
    };
    let by_colour = [Color::White, Color::Black]
        .into_iter()
        .map(|colour| colour_results(config, records, subject, colour))
        .collect();
    let per_game = |s: usize| {
        config.db.as_ref().map(|_| {
            let total: u32 = records
                .iter()
                .map(|r| r.blunder_kinds[s].iter().sum::<u32>())
                .sum();
            if games == 0 {
                0.0
            } else {
                f64::from(total) / games as f64
            }
        })
    };
    Summary {
        a: config.a.1.clone(),
        b: config.b.1.clone(),
        games,
        a_wins,
        draws,
        b_wins,
        a_win_rate: Rate::new(a_wins, games),
        draw_rate: Rate::new(draws, games),
        b_win_rate: Rate::new(b_wins, games),
        draws_repetition: drawn_by(Reason::Repetition),
        draws_quiet: drawn_by(Reason::QuietPlies),
        draws_ply_limit: drawn_by(Reason::PlyLimit),
        draws_claimed: drawn_by(Reason::EngineDraw),
        forfeits: count(&|r| {
            r.winner.is_some()
                && matches!(
                    r.reason,
                    Reason::EngineNoMove
                        | Reason::EngineError
                        | Reason::IllegalPly
                        | Reason::EngineCrashed
                        | Reason::EngineSilent
                )
        }),
        engine_endings: records
            .iter()
            .filter_map(|r| {
                r.note
                    .as_ref()
                    .map(|n| format!("game {} ({:?}): {n}", r.game, r.reason))
            })
            .collect(),
        openings: config.openings.to_string(),
        perfect,
        draw_rate_vs_perfect: perfect.map(|_| Rate::new(draws, games)),
        mean_plies: if games == 0 {
            0.0
        } else {
            records.iter().map(|r| r.plies).sum::<usize>() as f64 / games as f64
        },
        start_won_for_a: by_start(Wdl::Win),
        start_drawn: by_start(Wdl::Draw),
        start_lost_for_a: by_start(Wdl::Loss),
        accuracy_a: accuracy(0),
        accuracy_b: accuracy(1),
        blunders_per_game_a: per_game(0),
        blunders_per_game_b: per_game(1),
        by_colour,
        lost_games: records.iter().filter_map(lost_game).collect(),
        blunder_examples: records
            .iter()
            .flat_map(|r| r.blunders.iter().cloned())
            .take(8)
            .collect(),
    }
}

/// The results of `side` in the games where it played `colour`.
fn colour_results(
    config: &ArenaConfig,
    records: &[GameRecord],
    side: Side,
    colour: Color,
) -> ColourResults {
    let games: Vec<&GameRecord> = records
        .iter()
        .filter(|r| (r.white == side) == (colour == Color::White))
        .collect();
    let n = games.len();
    let count = |w: Option<Side>| games.iter().filter(|r| r.winner == w).count();
    let other = if side == Side::A { Side::B } else { Side::A };
    ColourResults {
        player: if side == Side::A {
            &config.a.1
        } else {
            &config.b.1
        }
        .clone(),
        colour: colour.to_string(),
        games: n,
        wins: Rate::new(count(Some(side)), n),
        draws: Rate::new(count(None), n),
        losses: Rate::new(count(Some(other)), n),
    }
}

/// A lost game with the loser's first blunder; `None` for a draw.
fn lost_game(r: &GameRecord) -> Option<LostGame> {
    let loser = match r.winner? {
        Side::A => Side::B,
        Side::B => Side::A,
    };
    let colour = if r.white == loser {
        Color::White
    } else {
        Color::Black
    };
    Some(LostGame {
        game: r.game,
        loser,
        colour: colour.to_string(),
        opening: r.opening.clone(),
        first_blunder: r.blunders.iter().find(|b| b.side == loser).cloned(),
    })
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "A = {}, B = {}: {} games", self.a, self.b, self.games)?;
        writeln!(f, "             count   rate   95% interval")?;
        writeln!(f, "  A wins   {}", self.a_win_rate)?;
        writeln!(f, "  draws    {}", self.draw_rate)?;
        writeln!(f, "  B wins   {}", self.b_win_rate)?;
        writeln!(
            f,
            "  draws by repetition {}, by plies without a removal {}, by game length {}",
            self.draws_repetition, self.draws_quiet, self.draws_ply_limit
        )?;
        if !self.engine_endings.is_empty() {
            writeln!(
                f,
                "  ended by an engine: {} draws claimed, {} forfeits",
                self.draws_claimed, self.forfeits
            )?;
            for e in &self.engine_endings {
                writeln!(f, "    {e}")?;
            }
        }
        if let (Some(side), Some(rate)) = (self.perfect, self.draw_rate_vs_perfect) {
            let other = if side == Side::A { &self.b } else { &self.a };
            writeln!(f, "  draw rate of {other} against perfect play: {rate}")?;
        }
        writeln!(f, "  mean game length: {:.1} plies", self.mean_plies)?;
        for (name, b) in [
            ("won for A", &self.start_won_for_a),
            ("drawn", &self.start_drawn),
            ("lost for A", &self.start_lost_for_a),
        ] {
            if b.games > 0 {
                writeln!(
                    f,
                    "  from starts {name:<10}: {:>5} games, A won {}, drawn {}, B won {}",
                    b.games, b.a_wins, b.draws, b.b_wins
                )?;
            }
        }
        for (name, acc) in [(&self.a, &self.accuracy_a), (&self.b, &self.accuracy_b)] {
            if let Some(a) = acc {
                writeln!(
                    f,
                    "  {name}: {} plies checked, blunders win->draw {}, draw->loss {}, win->loss {}; slower wins / faster losses {}",
                    a.checked, a.win_to_draw, a.draw_to_loss, a.win_to_loss, a.inaccurate
                )?;
            }
        }
        if let Some(first) = self.by_colour.first() {
            writeln!(f, "  {} by colour ({}):", first.player, self.openings)?;
            writeln!(
                f,
                "    colour  games   wins  draws   rate   95% interval   losses"
            )?;
            for c in &self.by_colour {
                writeln!(
                    f,
                    "    {:<6} {:>6} {:>6} {}  {:>6}",
                    c.colour, c.games, c.wins.count, c.draws, c.losses.count
                )?;
            }
        }
        if let (Some(a), Some(b)) = (self.blunders_per_game_a, self.blunders_per_game_b) {
            writeln!(
                f,
                "  blunders per game: {} {a:.2}, {} {b:.2}",
                self.a, self.b
            )?;
        }
        let judged = self.accuracy_a.is_some();
        if judged && !self.lost_games.is_empty() {
            writeln!(
                f,
                "  first blunder of each lost game (ply counted after the opening):"
            )?;
        }
        for l in self.lost_games.iter().filter(|_| judged) {
            let name = if l.loser == Side::A { &self.a } else { &self.b };
            match &l.first_blunder {
                Some(b) => writeln!(
                    f,
                    "    game {} ({} {}, opening {}): ply {} {} in {} ({} -> {}; best {})",
                    l.game,
                    name,
                    l.colour,
                    l.opening.join(" "),
                    b.ply,
                    b.played,
                    b.fen,
                    b.before,
                    b.after,
                    b.best
                )?,
                None => writeln!(
                    f,
                    "    game {} ({} {}, opening {}): no blunder seen (start already lost, or not covered)",
                    l.game,
                    name,
                    l.colour,
                    l.opening.join(" ")
                )?,
            }
        }
        for b in &self.blunder_examples {
            writeln!(
                f,
                "  blunder, game {} ply {} by {:?}: {} in {} ({} -> {}; best {})",
                b.game, b.ply, b.side, b.played, b.fen, b.before, b.after, b.best
            )?;
        }
        Ok(())
    }
}
