//! Many games, in parallel, reported in game order.

use super::config::ArenaConfig;
use super::error::ArenaError;
use super::game::{opening, play_game};
use super::record::GameRecord;
use crate::rules::game::Game;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Plays every game of `config` (or only [`ArenaConfig::only_game`]),
/// `config.threads` at a time, calling `progress` after each; the records come in
/// game order. The first error (by game number) stops the run.
pub fn run(
    config: &ArenaConfig,
    progress: &(dyn Fn(&GameRecord) + Sync),
) -> Result<Vec<GameRecord>, ArenaError> {
    run_except(config, &|_| false, progress)
}

/// As [`run`], leaving out the games for which `done` is true (played in an earlier
/// run whose records the caller has): the records returned are the new games'.
pub fn run_except(
    config: &ArenaConfig,
    done: &(dyn Fn(usize) -> bool + Sync),
    progress: &(dyn Fn(&GameRecord) + Sync),
) -> Result<Vec<GameRecord>, ArenaError> {
    if let Some(db) = &config.db
        && db.rules().fingerprint() != config.rules.fingerprint()
    {
        return Err(ArenaError::Start(format!(
            "the databases in {} are for the {} rules, the games are played under {}",
            db.dir().display(),
            db.rules().name,
            config.rules.name
        )));
    }
    let games = match config.only_game {
        Some(g) if g >= config.games => {
            return Err(ArenaError::Start(format!(
                "game {g} is not in a run of {} games (numbered from 0)",
                config.games
            )));
        }
        Some(g) => g..g + 1,
        None => 0..config.games,
    };
    let pairs = config.games.div_ceil(2);
    let openings: Vec<Game> = (0..pairs)
        .map(|p| opening(config, p))
        .collect::<Result<_, _>>()?;
    let abort = AtomicBool::new(false);
    let play = |g: usize| {
        if done(g) || abort.load(Ordering::Relaxed) {
            return None;
        }
        let result = play_game(config, g, &openings[g / 2]);
        match &result {
            Ok(r) => progress(r),
            Err(_) => abort.store(true, Ordering::Relaxed),
        }
        Some(result)
    };
    let results: Vec<Option<Result<GameRecord, ArenaError>>> = if config.threads > 1 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .build()
            .map_err(|e| ArenaError::Start(format!("cannot start threads: {e}")))?;
        pool.install(|| games.into_par_iter().map(play).collect())
    } else {
        games.map(play).collect()
    };
    // An error aborts the rest; report the first error in game order.
    let mut records = Vec::with_capacity(config.games);
    let mut first_error = None;
    for r in results.into_iter().flatten() {
        match r {
            Ok(rec) => records.push(rec),
            Err(e) => {
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(records),
    }
}
