//! One game: its opening, its plies judged against the databases, its record
//! ([`super::record`]).

use super::config::ArenaConfig;
use super::error::ArenaError;
use super::players::{Stop, UNCOVERED, make_player};
use super::record::{Blunder, GameRecord, Reason, Side};
use super::seeds::{derive, pick};
use super::spec::Openings;
use crate::rules::Rules;
use crate::rules::fen::{self};
use crate::rules::game::{End, Game};
use crate::rules::notation::format_ply;
use crate::rules::position::{Color, Ply, Position};
use crate::rules::value::{Value, Wdl};
use crate::table::probe::Tablebase;

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
