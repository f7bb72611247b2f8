//! How an arena run is set up: [`ArenaConfig`].

use super::spec::{Openings, PlayerSpec};
use crate::rules::Rules;
use crate::rules::fen::Counters;
use crate::rules::position::Position;
use crate::table::probe::Tablebase;
use std::path::PathBuf;
use std::sync::Arc;

/// How an arena run is set up.
#[derive(Clone)]
pub struct ArenaConfig {
    /// Player A and its name in reports.
    pub a: (PlayerSpec, String),
    /// Player B and its name in reports.
    pub b: (PlayerSpec, String),
    /// Number of games (pairs of games with colours swapped; an odd last game is
    /// played with A as White).
    pub games: usize,
    /// Where every game starts, before the opening plies.
    pub start: Position,
    /// Counters of the start position.
    pub start_counters: Counters,
    /// How each pair of games starts from `start`.
    pub openings: Openings,
    /// The seed everything random derives from.
    pub seed: u64,
    /// Games played at once.
    pub threads: usize,
    /// Play only this game of the run (its opening and seeds as in the whole run),
    /// so that a run can be split into single games and resumed; `None`: every game.
    pub only_game: Option<usize>,
    /// A game is drawn after this many plies without a removal (0: never).
    pub max_quiet: u32,
    /// A game is drawn after this many plies in all, opening excluded (0: never).
    pub max_plies: usize,
    /// The rules the games are played under; with databases, theirs (the directory's
    /// manifest says them: [`Tablebase::rules`]), or [`super::run`] refuses them.
    pub rules: &'static Rules,
    /// The databases, for `perfect`, for engines and for blunder checks.
    pub db: Option<Arc<Tablebase>>,
    /// The database directory (for `uci:` players with `db=yes`).
    pub db_dir: Option<PathBuf>,
}

impl ArenaConfig {
    /// A configuration with the defaults: the standard rules, the start position, no
    /// opening, seed 1, one thread, draws after 100 plies without a removal or 1000
    /// plies.
    pub fn new(a: PlayerSpec, b: PlayerSpec, games: usize) -> ArenaConfig {
        let rules = Rules::standard();
        ArenaConfig {
            a: (a, "A".into()),
            b: (b, "B".into()),
            games,
            start: Position::start(rules),
            start_counters: Counters {
                fullmove: 1,
                ..Counters::default()
            },
            openings: Openings::Random(0),
            seed: 1,
            threads: 1,
            only_game: None,
            max_quiet: 100,
            max_plies: 1000,
            rules,
            db: None,
            db_dir: None,
        }
    }
}
