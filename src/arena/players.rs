//! The players: random, perfect, the crate's engine, and an external engine.

use super::*;
use crate::engine::{Endgame, Engine, EngineConfig, Limits};
use crate::game::Game;
use crate::opening::{Opening, OpeningError, OpeningOptions};
use crate::position::{Phase, Ply, Position};
use crate::probe::{ProbeError, Tablebase};
use crate::protocol::client::UciClient;
use crate::rules::Rules;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Chooses plies for one side of one game.
pub(super) trait Player {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, String>;
}

struct RandomPlayer;

impl Player for RandomPlayer {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, String> {
        let legal = game.position().legal_plies(Rules::standard());
        if legal.is_empty() {
            return Err("no legal ply".into());
        }
        Ok(pick(&legal, seed))
    }
}

/// A missing database, told apart from other failures.
pub(super) const UNCOVERED: &str = "\u{0}uncovered:";

struct PerfectPlayer {
    db: Arc<Tablebase>,
}

impl Player for PerfectPlayer {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, String> {
        let pos = game.position();
        let uncovered = |e: ProbeError| match e {
            e @ ProbeError::Missing { .. } => format!("{UNCOVERED}{e}"),
            e => e.to_string(),
        };
        // Placement positions by look-up where the placement sectors are built,
        // by the opening search where they are not.
        let placement_search = pos.phase() == Phase::Placement && !self.db.covers(pos);
        if placement_search {
            return self.play_placement(pos, seed).map_err(|e| match e {
                OpeningError::Probe(e) => uncovered(e),
                e => e.to_string(),
            });
        }
        match self.db.best_ply_random(pos, seed) {
            Ok(Some((ply, _))) => Ok(ply),
            Ok(None) => Err("no legal ply".into()),
            Err(e) => Err(uncovered(e)),
        }
    }
}

impl PerfectPlayer {
    /// A placement ply from the opening search (saved values first), chosen with the
    /// seed among the equally best.
    fn play_placement(&self, pos: &Position, seed: u64) -> Result<Ply, OpeningError> {
        let options = OpeningOptions {
            table_mib: 64,
            parallel: false,
            use_tables: true,
        };
        let moves = Opening::new(&self.db, options)?.moves(pos)?;
        let best: Vec<Ply> = moves
            .iter()
            .take_while(|m| m.1 == moves[0].1)
            .map(|m| m.0)
            .collect();
        Ok(pick(&best, seed))
    }
}

struct EnginePlayer {
    engine: Engine,
    limits: Limits,
}

impl Player for EnginePlayer {
    fn play(&mut self, game: &Game, _seed: u64) -> Result<Ply, String> {
        let stop = AtomicBool::new(false);
        let result = self
            .engine
            .search_game(game, &self.limits, &stop, &mut |_| {});
        if let Some(e) = self
            .engine
            .config()
            .endgame
            .as_ref()
            .and_then(|e| e.damage())
        {
            return Err(format!("a database file is damaged: {e}"));
        }
        result.best.ok_or_else(|| "the engine found no ply".into())
    }
}

impl Player for UciClient {
    fn play(&mut self, game: &Game, _seed: u64) -> Result<Ply, String> {
        UciClient::play(self, game)
    }
}

pub(super) fn make_player(
    spec: &PlayerSpec,
    config: &ArenaConfig,
    seed: u64,
) -> Result<Box<dyn Player>, String> {
    let rules = Rules::standard();
    Ok(match spec {
        PlayerSpec::Random => Box::new(RandomPlayer),
        PlayerSpec::Perfect => Box::new(PerfectPlayer {
            db: config.db.clone().ok_or_else(|| {
                format!("{UNCOVERED}the perfect player needs the databases: give --db DIR")
            })?,
        }),
        PlayerSpec::Engine {
            limit,
            hash_mb,
            use_db,
            shuffle,
        } => {
            let endgame = config
                .db
                .clone()
                .filter(|_| *use_db)
                .map(|db| db as Arc<dyn Endgame>);
            let engine = Engine::new(
                rules,
                EngineConfig {
                    hash_mb: *hash_mb,
                    endgame,
                    shuffle: shuffle.then_some(seed),
                    ..EngineConfig::default()
                },
            );
            let limits = match *limit {
                SearchLimit::Depth(d) => Limits {
                    depth: Some(d),
                    ..Limits::default()
                },
                SearchLimit::MoveTime(ms) => Limits {
                    movetime: Some(Duration::from_millis(ms)),
                    ..Limits::default()
                },
            };
            Box::new(EnginePlayer { engine, limits })
        }
        PlayerSpec::Uci {
            command,
            limit,
            use_db,
            timeout,
        } => {
            let db = config.db_dir.as_deref().filter(|_| *use_db);
            let timeout = timeout.map_or(limit.timeout(), Duration::from_secs);
            Box::new(UciClient::start(command, *limit, timeout, db)?)
        }
    })
}
