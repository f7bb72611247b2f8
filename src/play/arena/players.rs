//! The players: random, perfect, the crate's engine, and an external engine.

use super::config::ArenaConfig;
use super::record::Reason;
use super::seeds::pick;
use super::spec::{Choice, PlayerSpec, SearchLimit};
use crate::play::protocol::client::{ClientConfig, Outcome, UciClient};
use crate::rules::Rules;
use crate::rules::game::Game;
use crate::rules::position::{Phase, Ply, Position};
use crate::rules::value::Wdl;
use crate::search::engine::eval;
use crate::search::engine::{Endgame, Engine, EngineConfig, Limits};
use crate::search::opening::{Opening, OpeningError, OpeningOptions};
use crate::table::probe::{ProbeError, Tablebase};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Why a player gave no ply.
pub(super) enum Stop {
    /// The run cannot go on (a missing or damaged database, an internal failure).
    Fail(String),
    /// The game ends here, for this reason, with this detail; the run goes on.
    Ends(Reason, String),
}

impl From<String> for Stop {
    fn from(why: String) -> Stop {
        Stop::Fail(why)
    }
}

/// Chooses plies for one side of one game.
pub(super) trait Player {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, Stop>;
}

struct RandomPlayer {
    rules: &'static Rules,
}

impl Player for RandomPlayer {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, Stop> {
        let legal = game.position().legal_plies(self.rules);
        if legal.is_empty() {
            return Err(Stop::Fail("no legal ply".into()));
        }
        Ok(pick(&legal, seed))
    }
}

/// A missing database, told apart from other failures.
pub(super) const UNCOVERED: &str = "\u{0}uncovered:";

struct PerfectPlayer {
    db: Arc<Tablebase>,
    choice: Choice,
    /// The opening search for placement positions the sectors do not cover, made at
    /// the first such ply and kept (with its table and saved values) for the
    /// player's life.
    opening: Option<Opening<'static>>,
}

impl Player for PerfectPlayer {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, Stop> {
        Ok(self.choose(game, seed)?)
    }
}

impl PerfectPlayer {
    fn choose(&mut self, game: &Game, seed: u64) -> Result<Ply, String> {
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
        let moves = self.db.moves(pos).map_err(uncovered)?;
        let Some(&(_, best)) = moves.first() else {
            return Err("no legal ply".into());
        };
        let equal: Vec<Ply> = moves
            .iter()
            .take_while(|m| m.1 == best)
            .map(|m| m.0)
            .collect();
        Ok(match self.choice {
            Choice::Strict => equal[0],
            Choice::Trap if best.wdl() == Wdl::Draw => pick(&self.traps(pos, &equal), seed),
            _ => pick(&equal, seed),
        })
    }

    /// The drawing plies leaving the opponent the most losing replies (all of
    /// `drawing` when a child is not covered by the databases).
    fn traps(&self, pos: &Position, drawing: &[Ply]) -> Vec<Ply> {
        let rules = self.db.rules();
        let losing_replies = |ply: Ply| -> Option<usize> {
            let child = pos.after(rules, ply);
            if !self.db.covers(&child) {
                return None;
            }
            let replies = self.db.moves(&child).ok()?;
            Some(replies.iter().filter(|r| r.1.wdl() == Wdl::Loss).count())
        };
        let counts: Option<Vec<usize>> = drawing.iter().map(|&p| losing_replies(p)).collect();
        let Some(counts) = counts else {
            return drawing.to_vec();
        };
        let most = counts.iter().copied().max().unwrap_or(0);
        drawing
            .iter()
            .zip(&counts)
            .filter(|&(_, &c)| c == most)
            .map(|(&p, _)| p)
            .collect()
    }

    /// A placement ply from the opening search (saved values first): the first of the
    /// equally best with `strict`, otherwise chosen with the seed among them.
    fn play_placement(&mut self, pos: &Position, seed: u64) -> Result<Ply, OpeningError> {
        let opening = match &mut self.opening {
            Some(opening) => opening,
            empty => {
                let options = OpeningOptions {
                    table_mib: 64,
                    parallel: false,
                    use_tables: true,
                };
                empty.insert(Opening::shared(self.db.clone(), options)?)
            }
        };
        let moves = opening.moves(pos)?;
        let best: Vec<Ply> = moves
            .iter()
            .take_while(|m| m.1 == moves[0].1)
            .map(|m| m.0)
            .collect();
        Ok(match self.choice {
            Choice::Strict => best[0],
            _ => pick(&best, seed),
        })
    }
}

struct EnginePlayer {
    engine: Engine,
    limits: Limits,
}

impl Player for EnginePlayer {
    fn play(&mut self, game: &Game, _seed: u64) -> Result<Ply, Stop> {
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
            return Err(Stop::Fail(format!("a database file is damaged: {e}")));
        }
        result
            .best
            .ok_or_else(|| Stop::Fail("the engine found no ply".into()))
    }
}

impl Player for UciClient {
    fn play(&mut self, game: &Game, _seed: u64) -> Result<Ply, Stop> {
        let (reason, detail) = match UciClient::play(self, game) {
            Outcome::Ply(ply) => return Ok(ply),
            Outcome::Draw => (Reason::EngineDraw, "bestmove draw".to_string()),
            Outcome::NoMove => (Reason::EngineNoMove, "bestmove none".to_string()),
            Outcome::Error(line) => (Reason::EngineError, line),
            Outcome::Illegal(why) => (Reason::IllegalPly, why),
            Outcome::Crashed(why) => (Reason::EngineCrashed, why),
            Outcome::Silent(why) => (Reason::EngineSilent, why),
        };
        Err(Stop::Ends(reason, detail))
    }
}

pub(super) fn make_player(
    spec: &PlayerSpec,
    config: &ArenaConfig,
    seed: u64,
) -> Result<Box<dyn Player>, String> {
    let rules = config.rules;
    Ok(match spec {
        PlayerSpec::Random => Box::new(RandomPlayer { rules }),
        PlayerSpec::Perfect(choice) => Box::new(PerfectPlayer {
            choice: *choice,
            db: config.db.clone().ok_or_else(|| {
                format!("{UNCOVERED}the perfect player needs the databases: give --db DIR")
            })?,
            opening: None,
        }),
        PlayerSpec::Engine {
            limit,
            hash_mb,
            use_db,
            shuffle,
            eval,
            quiescence,
            threat_extension,
            quiet_damping,
            reductions,
            threads,
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
                    eval: eval::named(eval).expect("a known evaluation").1,
                    quiescence: *quiescence,
                    threat_extension: *threat_extension,
                    quiet_damping: *quiet_damping,
                    reductions: *reductions,
                    threads: *threads,
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
                SearchLimit::Nodes(n) => Limits {
                    nodes: Some(n),
                    ..Limits::default()
                },
            };
            Box::new(EnginePlayer { engine, limits })
        }
        PlayerSpec::Uci {
            command,
            go,
            options,
            use_db,
            timeout,
        } => Box::new(UciClient::start(&ClientConfig {
            command: command.clone(),
            go: *go,
            options: options.clone(),
            database: config.db_dir.clone().filter(|_| *use_db),
            timeout: timeout.map_or(go.default_timeout(), Duration::from_secs),
            rules,
        })?),
    })
}
