//! One game: its opening, its plies judged against the databases, its record.

use super::players::{Stop, UNCOVERED, make_player};
use super::*;
use crate::rules::Rules;
use crate::rules::fen::{self};
use crate::rules::game::{End, Game};
use crate::rules::notation::format_ply;
use crate::rules::position::{Color, Ply, Position};
use crate::rules::value::{Value, Wdl};
use crate::table::probe::Tablebase;
use serde::{Deserialize, Serialize};

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The loser was down to two stones.
    Stones,
    /// The loser had no legal move.
    Blocked,
    /// Third occurrence of a moving-phase position.
    Repetition,
    /// The side to move could not move on a full board the rules call a draw.
    FullBoard,
    /// Too many plies without a removal.
    QuietPlies,
    /// Too many plies in all.
    PlyLimit,
    /// An external engine answered `bestmove draw` (a draw by its own rules).
    EngineDraw,
    /// An external engine answered `bestmove none` (lost for it).
    EngineNoMove,
    /// An external engine printed an error line instead of a move (lost for it).
    EngineError,
    /// A player answered with an illegal ply (lost for it).
    IllegalPly,
    /// An external engine exited (lost for it).
    EngineCrashed,
    /// An external engine did not answer within its timeout (lost for it).
    EngineSilent,
}

/// A side in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Side {
    /// Player A.
    A,
    /// Player B.
    B,
}

/// A ply whose value under perfect play was worse than its position's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Blunder {
    /// Game number.
    pub game: usize,
    /// Ply number within the game (0 = the first ply after the opening).
    pub ply: usize,
    /// Who played it.
    pub side: Side,
    /// The position before, as a FEN.
    pub fen: String,
    /// The ply played.
    pub played: String,
    /// The position's value for the mover.
    pub before: String,
    /// The value of the ply played, for the mover.
    pub after: String,
    /// A best ply.
    pub best: String,
}

/// One game (a line of `arena --out`, which [`GameRecord::from_line`] reads back).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    /// Game number, from 0.
    pub game: usize,
    /// Player A's name.
    pub a: String,
    /// Player B's name.
    pub b: String,
    /// Who played White.
    pub white: Side,
    /// The start position (before the opening), as a FEN.
    pub start: String,
    /// The opening plies.
    pub opening: Vec<String>,
    /// The position after the opening, as a FEN.
    pub opening_fen: String,
    /// The databases' value of the position after the opening for A, if known.
    pub start_value_a: Option<String>,
    /// Its win/draw/loss for A.
    #[serde(skip)]
    pub start_wdl_a: Option<Wdl>,
    /// The plies of the game after the opening.
    pub moves: Vec<String>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// The winner, `None` for a draw.
    pub winner: Option<Side>,
    /// How it ended.
    pub reason: Reason,
    /// Plies after the opening.
    pub plies: usize,
    /// Blunders of the game.
    pub blunders: Vec<Blunder>,
    /// Per side (A, B): plies checked against the databases.
    pub checked: [u32; 2],
    /// Per side: plies that kept the result but won slower or lost faster.
    pub inaccurate: [u32; 2],
    /// Per side: blunders by kind, win→draw, draw→loss, win→loss.
    pub blunder_kinds: [[u32; 3]; 2],
    /// How an external engine ended the game (its answer, error line or failure),
    /// with the position, if one did.
    pub note: Option<String>,
    /// The match's seed ([`ArenaConfig::seed`]), by which a resumed match knows
    /// its own games.
    #[serde(default)]
    pub seed: u64,
}

impl GameRecord {
    /// A record read back from its JSON line (`arena --out`), with the fields the
    /// line does not carry restored; `None` if the line is no record.
    pub fn from_line(line: &str) -> Option<GameRecord> {
        let mut record: GameRecord = serde_json::from_str(line).ok()?;
        record.start_wdl_a = match record.start_value_a.as_deref() {
            None => None,
            Some(v) if v.starts_with("win") => Some(Wdl::Win),
            Some(v) if v.starts_with("loss") => Some(Wdl::Loss),
            Some("draw") => Some(Wdl::Draw),
            Some(_) => return None,
        };
        Some(record)
    }
}

/// The legal first plies of the start position, in the order of
/// [`Position::legal_plies`] (for the standard start: the 24 placements, a1 first).
pub fn first_plies(config: &ArenaConfig) -> Vec<Ply> {
    config.start.legal_plies(config.rules)
}

/// Games in one round of `first-placements` from the configured start: each first
/// ply with both colours.
pub fn first_placement_round(config: &ArenaConfig) -> usize {
    2 * first_plies(config).len()
}

/// The position after the opening of pair `pair`: with `random:K`, K uniformly random
/// plies from the start, redrawn (up to 1000 times) if the game ends or cannot go on;
/// with `first-placements`, first ply number `pair` modulo their count.
pub fn opening(config: &ArenaConfig, pair: usize) -> Result<Game, ArenaError> {
    let rules = config.rules;
    let no_game = |what: String| {
        ArenaError::Start(format!(
            "no game can be played from {} with {what}",
            fen::format(rules, &config.start, config.start_counters),
        ))
    };
    let plies = match config.openings {
        Openings::Random(k) => k,
        Openings::FirstPlacements => {
            let first = first_plies(config);
            let mut game = Game::new(config.start, config.start_counters);
            if config.start.is_over(rules) || first.is_empty() {
                return Err(no_game("a first ply".into()));
            }
            game.play(rules, first[pair % first.len()]);
            return Ok(game);
        }
    };
    for attempt in 0..1000u64 {
        let mut game = Game::new(config.start, config.start_counters);
        let seed = derive(config.seed, 1 + pair as u64, attempt);
        let mut ok = true;
        for i in 0..plies {
            let legal = game.position().legal_plies(rules);
            if legal.is_empty() || game.position().is_over(rules) {
                ok = false;
                break;
            }
            game.play(rules, pick(&legal, derive(seed, i as u64, 7)));
        }
        if ok && !game.position().is_over(rules) {
            return Ok(game);
        }
        if plies == 0 {
            break;
        }
    }
    Err(no_game(format!("{plies} random plies")))
}

/// The value of `pos` for the side to move by the databases, if they cover it (a
/// moving-phase position whose subspace is built, or a placement position whose
/// sector is).
fn db_value(db: &Tablebase, pos: &Position) -> Option<Value> {
    if !db.covers(pos) {
        return None;
    }
    db.probe(pos).ok()
}

/// The value for the mover of playing `ply` in `pos`, if the databases cover it.
fn ply_value(db: &Tablebase, rules: &Rules, pos: &Position, ply: Ply) -> Option<Value> {
    let child = pos.after(rules, ply);
    if child.material(child.to_move) >= 3 && !db.covers(&child) {
        return None;
    }
    db.ply_value(&child).ok()
}

/// Plays game `number` (A is White in even games) from `start`.
pub fn play_game(
    config: &ArenaConfig,
    number: usize,
    start: &Game,
) -> Result<GameRecord, ArenaError> {
    let rules = config.rules;
    let a_white = number.is_multiple_of(2);
    let side_of = |c: Color| {
        if (c == Color::White) == a_white {
            Side::A
        } else {
            Side::B
        }
    };
    let game_seed = derive(config.seed, number as u64, 0xA7E4A);
    let spec_of = |s: Side| if s == Side::A { &config.a } else { &config.b };
    let fail = |s: Side, why: String| {
        let player = spec_of(s).1.clone();
        match why.strip_prefix(UNCOVERED) {
            Some(why) => ArenaError::Uncovered {
                game: number,
                player,
                fen: fen::format(rules, start.position(), start.counters),
                why: why.to_string(),
            },
            None => ArenaError::Player {
                game: number,
                player,
                why,
            },
        }
    };
    let mut players = [
        make_player(&config.a.0, config, derive(game_seed, 1, 1)).map_err(|e| fail(Side::A, e))?,
        make_player(&config.b.0, config, derive(game_seed, 2, 2)).map_err(|e| fail(Side::B, e))?,
    ];
    // The game proper starts after the opening: repetitions count from here, so that
    // random opening plies going back and forth cannot end the game.
    let mut game = Game::new(*start.position(), start.counters);
    let first = 0;
    let start_value = config
        .db
        .as_deref()
        .and_then(|db| db_value(db, game.position()))
        .map(|v| {
            if side_of(game.position().to_move) == Side::A {
                v
            } else {
                v.parent()
            }
        });
    let mut record = GameRecord {
        game: number,
        a: config.a.1.clone(),
        b: config.b.1.clone(),
        white: side_of(Color::White),
        start: fen::format(rules, &start.start, start.start_counters),
        opening: start.ply_texts(rules),
        opening_fen: fen::format(rules, start.position(), start.counters),
        start_value_a: start_value.map(|v| v.to_string()),
        start_wdl_a: start_value.map(Value::wdl),
        moves: Vec::new(),
        result: String::new(),
        winner: None,
        reason: Reason::Repetition,
        plies: 0,
        blunders: Vec::new(),
        checked: [0; 2],
        inaccurate: [0; 2],
        blunder_kinds: [[0; 3]; 2],
        note: None,
        seed: config.seed,
    };
    let (winner, reason) = loop {
        let pos = *game.position();
        let played = game.plies.len() - first;
        match game.end(rules, 3) {
            Some(End::Stones { winner }) => break (Some(winner), Reason::Stones),
            Some(End::Blocked { winner }) => break (Some(winner), Reason::Blocked),
            Some(End::Repetition) => break (None, Reason::Repetition),
            Some(End::FullBoard) => break (None, Reason::FullBoard),
            None => {}
        }
        let legal = pos.legal_plies(rules);
        if config.max_quiet > 0 && game.counters.plies_since_removal >= config.max_quiet {
            break (None, Reason::QuietPlies);
        }
        if config.max_plies > 0 && played >= config.max_plies {
            break (None, Reason::PlyLimit);
        }
        let side = side_of(pos.to_move);
        let s = side as usize;
        let here = fen::format(rules, &pos, game.counters);
        let ply = match players[s].play(&game, derive(game_seed, played as u64, 3)) {
            Ok(ply) => ply,
            Err(Stop::Ends(reason, detail)) => {
                record.note = Some(format!("{} in {here}: {detail}", spec_of(side).1));
                let winner = (reason != Reason::EngineDraw).then(|| pos.to_move.other());
                break (winner, reason);
            }
            Err(Stop::Fail(e)) => {
                return Err(match fail(side, e) {
                    ArenaError::Uncovered {
                        game, player, why, ..
                    } => ArenaError::Uncovered {
                        game,
                        player,
                        fen: here.clone(),
                        why,
                    },
                    other => other,
                });
            }
        };
        if !legal.contains(&ply) {
            return Err(fail(
                side,
                format!(
                    "played the illegal ply {} in {}",
                    format_ply(rules, ply),
                    here
                ),
            ));
        }
        if let Some(db) = config.db.as_deref()
            && let Some(before) = db_value(db, &pos)
            && let Some(after) = ply_value(db, rules, &pos, ply)
        {
            record.checked[s] += 1;
            let kind = match (before.wdl(), after.wdl()) {
                (Wdl::Win, Wdl::Draw) => Some(0),
                (Wdl::Draw, Wdl::Loss) => Some(1),
                (Wdl::Win, Wdl::Loss) => Some(2),
                _ => None,
            };
            if let Some(kind) = kind {
                record.blunder_kinds[s][kind] += 1;
                let best = db
                    .best_ply(&pos)
                    .ok()
                    .flatten()
                    .map(|(p, _)| format_ply(rules, p))
                    .unwrap_or_default();
                record.blunders.push(Blunder {
                    game: number,
                    ply: played,
                    side,
                    fen: fen::format(rules, &pos, game.counters),
                    played: format_ply(rules, ply),
                    before: before.to_string(),
                    after: after.to_string(),
                    best,
                });
            } else if after.cmp_goodness(before).is_lt() {
                record.inaccurate[s] += 1;
            }
        }
        game.play(rules, ply);
    };
    record.moves = game.plies[first..]
        .iter()
        .map(|&p| format_ply(rules, p))
        .collect();
    record.plies = record.moves.len();
    record.winner = winner.map(side_of);
    record.reason = reason;
    record.result = match winner {
        Some(Color::White) => "1-0",
        Some(Color::Black) => "0-1",
        None => "1/2-1/2",
    }
    .to_string();
    Ok(record)
}
