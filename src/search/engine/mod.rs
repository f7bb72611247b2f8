//! The heuristic engine: a game-tree search for positions no database covers, which
//! takes exact values from an [`Endgame`] (the databases) where one is given.
//!
//! Inside (private modules): `search`, negamax alpha-beta with principal-variation
//! search (or MTD(f)), iterative deepening, depth, node and time limits, a stop
//! flag, repetition draws; `tt`, the transposition table; `zobrist`, position keys;
//! `ordering`, move ordering; `eval`, static evaluation. Public:
//!
//! - [`score`](crate::search::score): the score scale (centi-stones and mate distances);
//! - [`endgame`]: the [`Endgame`] trait and play by exact values.
//!
//! ```
//! use millbase::search::engine::{Engine, EngineConfig, Limits};
//! use millbase::{Game, Rules};
//! use std::sync::atomic::AtomicBool;
//!
//! let rules = Rules::standard();
//! let game = Game::parse(rules, "startpos moves d2 f4").unwrap();
//! let mut engine = Engine::new(rules, EngineConfig::default());
//! let limits = Limits { depth: Some(3), ..Limits::default() };
//! let result = engine.search_game(&game, &limits, &AtomicBool::new(false), &mut |_| {});
//! assert!(game.position().is_legal(rules, result.best.unwrap()));
//! ```

pub mod endgame;
pub mod eval;
pub mod linear;
pub mod net;
pub mod net_weights;
mod ordering;
mod search;
mod terms;
mod tt;
pub mod tuned;
mod zobrist;

pub use endgame::Endgame;
pub use terms::{Algorithm, Info, Limits, SearchResult};

use crate::rules::Rules;
use crate::rules::game::Game;
use crate::rules::position::{Color, Position};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// How an [`Engine`] is set up.
#[derive(Clone)]
pub struct EngineConfig {
    /// Size of the transposition table in MiB.
    pub hash_mb: usize,
    /// Exact values where covered (the databases), or none.
    pub endgame: Option<Arc<dyn Endgame>>,
    /// The root algorithm.
    pub algorithm: Algorithm,
    /// With a seed, plies that order equally at the root are shuffled, so that equal
    /// plies are chosen at random (repeatably for a given seed).
    pub shuffle: Option<u64>,
    /// The static evaluation (the one named [`eval::DEFAULT_EVAL`] by default;
    /// see [`eval::NAMED`]).
    pub eval: eval::Eval,
    /// Plies of captures searched beyond the nominal depth (the quiescence search;
    /// 0: none, the static evaluation at depth 0).
    pub quiescence: u32,
    /// Whether a placement that makes a double mill threat (two holes of open mills,
    /// one new, with a stone in hand to fill one) is searched one ply deeper, at
    /// most once on a line.
    pub threat_extension: bool,
    /// Whether leaf evaluations shrink towards a draw as the plies without a
    /// removal near the 100-ply rule (`search::damped`).
    pub quiet_damping: bool,
    /// Whether late quiet plies are searched less deep first, and again in full
    /// only if they look better than the best so far (late move reductions).
    pub reductions: bool,
    /// Threads of a search (lazy SMP: helper threads search the same root and
    /// share the transposition table; the main thread's result is played).
    pub threads: usize,
}

/// The default [`EngineConfig::quiescence`].
pub const QUIESCENCE: u32 = 0;

/// The default [`EngineConfig::threat_extension`].
pub const THREAT_EXTENSION: bool = false;

/// The default [`EngineConfig::quiet_damping`]: off, as a match at depth 4 against
/// the engine without it did not show a gain (README, "Engine and arena").
pub const QUIET_DAMPING: bool = false;

/// The default [`EngineConfig::reductions`].
pub const REDUCTIONS: bool = true;

/// The most threads a search takes.
pub const MAX_THREADS: usize = 64;

/// The most plies of quiescence search the arena and `uci` accept.
pub const MAX_QUIESCENCE: u32 = 16;

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            hash_mb: 16,
            endgame: None,
            algorithm: Algorithm::Pvs,
            shuffle: None,
            eval: eval::named(eval::DEFAULT_EVAL)
                .expect("the default evaluation")
                .1,
            quiescence: QUIESCENCE,
            threat_extension: THREAT_EXTENSION,
            quiet_damping: QUIET_DAMPING,
            reductions: REDUCTIONS,
            threads: 1,
        }
    }
}

/// The engine: configuration plus the tables it keeps between searches.
pub struct Engine {
    rules: &'static Rules,
    config: EngineConfig,
    table: tt::Table,
    ordering: ordering::Ordering,
    /// The move ordering of each helper thread, kept between searches.
    helpers: Vec<ordering::Ordering>,
}

impl Engine {
    /// An engine for `rules`.
    pub fn new(rules: &'static Rules, config: EngineConfig) -> Engine {
        Engine {
            rules,
            table: tt::Table::new(config.hash_mb),
            config,
            ordering: ordering::Ordering::default(),
            helpers: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Resizes the transposition table (clearing it).
    ///
    /// A table the machine cannot hold is refused with the reason, and the old
    /// table is kept.
    pub fn set_hash_mb(&mut self, mib: usize) -> Result<(), String> {
        let table = tt::Table::try_new(mib)
            .map_err(|e| format!("{e}; the table stays at {} MiB", self.config.hash_mb))?;
        self.config.hash_mb = mib;
        self.table = table;
        Ok(())
    }

    /// Sets or removes the source of exact values.
    pub fn set_endgame(&mut self, endgame: Option<Arc<dyn Endgame>>) {
        self.config.endgame = endgame;
    }

    /// Sets the root algorithm.
    pub fn set_algorithm(&mut self, algorithm: Algorithm) {
        self.config.algorithm = algorithm;
    }

    /// Sets the static evaluation (see [`eval::NAMED`]).
    pub fn set_eval(&mut self, eval: eval::Eval) {
        self.config.eval = eval;
    }

    /// Sets the plies of the quiescence search (0: none).
    pub fn set_quiescence(&mut self, plies: u32) {
        self.config.quiescence = plies;
    }

    /// Sets whether double mill threats made in placement are searched one ply deeper.
    pub fn set_threat_extension(&mut self, on: bool) {
        self.config.threat_extension = on;
    }

    /// Sets whether late quiet plies are searched less deep first.
    pub fn set_reductions(&mut self, on: bool) {
        self.config.reductions = on;
    }

    /// Sets the threads of a search (1 to [`MAX_THREADS`]).
    pub fn set_threads(&mut self, threads: usize) {
        self.config.threads = threads.clamp(1, MAX_THREADS);
    }

    /// Sets the root shuffling seed (`None`: no shuffling).
    pub fn set_shuffle(&mut self, seed: Option<u64>) {
        self.config.shuffle = seed;
    }

    /// Forgets what earlier searches learned (a new game).
    pub fn clear(&mut self) {
        self.table.clear();
        self.ordering.clear();
        self.helpers.iter_mut().for_each(ordering::Ordering::clear);
    }

    /// Searches the current position of `game`, with its earlier positions for
    /// repetition.
    pub fn search_game(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&Info),
    ) -> SearchResult {
        let (root, history) = game.history.split_last().expect("a game has a position");
        let quiet = game.counters.plies_since_removal;
        self.search_from(root, history, quiet, limits, stop, on_info)
    }

    /// Searches `root`, reached through the positions `history` (oldest first, for
    /// repetition draws), within `limits` or until `stop` is set. `on_info` is
    /// called after each completed iteration.
    ///
    /// The plies since the last removal (for `search::damped`) are counted in
    /// `history`: the positions at its end with the root's number of stones.
    pub fn search(
        &mut self,
        root: &Position,
        history: &[Position],
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&Info),
    ) -> SearchResult {
        let stones = |p: &Position| p.material(Color::White) + p.material(Color::Black);
        let quiet = history
            .iter()
            .rev()
            .take_while(|p| stones(p) == stones(root))
            .count() as u32;
        self.search_from(root, history, quiet, limits, stop, on_info)
    }

    /// [`Engine::search`] `quiet` plies after the last removal.
    fn search_from(
        &mut self,
        root: &Position,
        history: &[Position],
        quiet: u32,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&Info),
    ) -> SearchResult {
        let endgame = self.config.endgame.clone();
        if let Some(result) = endgame
            .as_deref()
            .and_then(|e| search::play_exact(self.rules, e, root))
        {
            on_info(&Info {
                depth: result.depth,
                score: result.score,
                nodes: result.nodes,
                time: result.time,
                pv: result.pv.clone(),
            });
            return result;
        }
        self.table.new_search();
        self.ordering.new_search();
        let helpers = self.config.threads.clamp(1, MAX_THREADS) - 1;
        self.helpers
            .resize_with(helpers, ordering::Ordering::default);
        let eval = self.config.eval.for_rules(self.rules);
        let quiet = Some(quiet).filter(|_| self.config.quiet_damping);
        let config = &self.config;
        let rules = self.rules;
        let table = &self.table;
        let endgame = endgame.as_deref();
        let new_search = |ordering, stop, limits: &Limits| {
            search::Search::new(
                rules,
                table,
                ordering,
                endgame,
                stop,
                limits,
                history,
                root,
                config.shuffle,
                eval,
                config.quiescence,
                config.threat_extension,
                quiet,
                config.reductions,
            )
        };
        // Helpers search until the main thread is done, at most as deep.
        let helpers_stop = AtomicBool::new(false);
        let helper_limits = Limits {
            depth: limits.depth,
            ..Limits::default()
        };
        std::thread::scope(|scope| {
            let running: Vec<_> = self
                .helpers
                .iter_mut()
                .enumerate()
                .map(|(i, ordering)| {
                    ordering.new_search();
                    let mut search = new_search(ordering, &helpers_stop, &helper_limits);
                    search.set_skew(1 - i as u32 % 2);
                    scope.spawn(move || {
                        search.iterate(root, config.algorithm, &mut |_| {});
                        search.nodes()
                    })
                })
                .collect();
            let mut main = new_search(&mut self.ordering, stop, limits);
            let mut result = main.iterate(root, config.algorithm, on_info);
            helpers_stop.store(true, std::sync::atomic::Ordering::Relaxed);
            for helper in running {
                result.nodes += helper.join().expect("a helper thread of the search");
            }
            result
        })
    }
}
