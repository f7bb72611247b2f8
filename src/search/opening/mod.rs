//! The opening search: exact values of placement-phase positions.
//!
//! A negamax alpha-beta search over the placement phase whose leaves are the
//! positions where both hands are empty; the databases ([`Tablebase`]) give their
//! values. A ply that leaves the opponent fewer than three stones ends the game and is
//! `Win(1)`.
//!
//! **Scores.** Inside the search a value is an `i32` score relative to the root, on
//! the engine's scale ([`crate::search::score`]): `Win(n)` at depth `d` is
//! `MATE - (d + n)`, `Loss(n)` is `-(MATE - (d + n))`, a draw 0. Measured from the root every score is the ply at which the game ends, so plain
//! negation is exact and alpha-beta windows need no distance adjustment; the table
//! stores values relative to the node (a [`Value`] code), converted on the way in
//! and out.
//!
//! **Driver.** A first search with the window (-1, 1) decides win, draw or loss
//! cheaply (most of the tree is cut at the first refutation); only a decided root is
//! searched again with a window on its side of zero for the exact distance.
//!
//! **Table.** Keyed on the symmetry-canonical placement state ([`canonical_key`]):
//! both board sets under the 16 symmetries, hands, side to move and the pending flag
//! pack into 58 bits, so keys are exact and never collide. Buckets of two entries, one
//! depth-preferred and one always replaced, lock-free (Hyatt's key-xor-data check).
//!
//! **Missing databases.** [`Opening::solve`] answers with bounds: missing leaves are
//! first taken as `Win(1)` for the side to move there, then as `Loss(0)`; the two
//! results bound the true value (it is monotone in every leaf), and the subspaces met
//! are reported. Because alpha-beta prunes, the list names the subspaces the two
//! searches touched; building them may bring others into view.
//!
//! **Saved values.** [`Opening::save`] writes the exact values the table holds for
//! positions up to a given ply to `opening.bin` in the database directory (layout in
//! `docs/FORMAT.md`); every later search reads them first.

mod error;
mod key;
mod saved;
mod search;
mod table;

pub use error::OpeningError;
use key::ply_of;
pub use key::{canonical_key, key_position};
use saved::{Saved, encode};
use search::{MissingAs, Search, Stop};
use table::{Bound, Entry, Table};

use crate::rules::Rules;
use crate::rules::position::{Phase, Ply, Position};
use crate::rules::value::Value;
use crate::search::score::{INFINITE, value_at};
use crate::table::dir::manifest::subspace_name;
use crate::table::format::write_atomic;
use crate::table::probe::{ProbeError, Tablebase};
use std::cmp::Ordering as CmpOrdering;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The file of saved opening values in a database directory ([`crate::table::dir`]).
pub const SAVED_FILE: &str = crate::table::dir::OPENING;

/// Caps on the work of an opening search, shared by every query one [`Opening`]
/// answers after [`Opening::with_limit`]: a server gives each request its own.
#[derive(Clone, Copy, Debug)]
pub struct SearchLimit {
    /// Positions searched, in all.
    pub nodes: u64,
    /// Wall time, in all.
    pub time: std::time::Duration,
}

/// Settings of the opening search.
#[derive(Clone, Debug)]
pub struct OpeningOptions {
    /// Size of the transposition table in MiB (rounded down to a power of two).
    pub table_mib: usize,
    /// Search the root plies in parallel (rayon's global pool).
    pub parallel: bool,
    /// Answer placement positions from the placement sectors when the directory has
    /// them (one look-up), searching only where they are missing. `false` always
    /// searches: the independent check of the tables.
    pub use_tables: bool,
}

impl Default for OpeningOptions {
    fn default() -> Self {
        OpeningOptions {
            table_mib: 256,
            parallel: true,
            use_tables: true,
        }
    }
}

/// The result of [`Opening::solve`].
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The worst value for the side to move consistent with the databases present.
    pub lower: Value,
    /// The best such value; equal to `lower` when the answer is exact.
    pub upper: Value,
    /// A best ply (from the search that took missing leaves as wins for the side to
    /// move there); `None` if the side to move has none.
    pub best: Option<Ply>,
    /// Positions searched.
    pub nodes: u64,
    /// Database probes at the leaves.
    pub probes: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Subspaces `(k, l)` the search needed and did not find, sorted.
    pub missing: Vec<(u32, u32)>,
}

impl Outcome {
    /// The exact value, if the bounds meet.
    pub fn exact(&self) -> Option<Value> {
        (self.lower == self.upper).then_some(self.lower)
    }

    /// The missing subspaces as `k-l` names.
    pub fn missing_names(&self) -> Vec<String> {
        self.missing
            .iter()
            .map(|&(k, l)| subspace_name(k, l))
            .collect()
    }
}

/// The tablebase an [`Opening`] probes: borrowed, or shared so that the search can
/// live as long as its owner (a player) without a borrow.
enum Source<'a> {
    Borrowed(&'a Tablebase),
    Shared(Arc<Tablebase>),
}

impl std::ops::Deref for Source<'_> {
    type Target = Tablebase;
    fn deref(&self) -> &Tablebase {
        match self {
            Source::Borrowed(tb) => tb,
            Source::Shared(tb) => tb,
        }
    }
}

/// The opening search on a database directory. Keeps its transposition table
/// between queries, so a series of queries (as `analyze` makes) shares work.
pub struct Opening<'a> {
    tb: Source<'a>,
    rules: &'static Rules,
    saved: Saved,
    /// Why the saved values could not be read, if they could not (they are then
    /// ignored, and [`Opening::save`] writes the file anew).
    saved_problem: Option<String>,
    /// The transposition table, allocated when a search first needs it (a probe of
    /// a moving-phase position or of a saved value never does).
    table: Option<Table>,
    /// What the table's entries assumed about missing leaves.
    table_mode: MissingAs,
    /// Whether a missing leaf has been valued by assumption since the last clear.
    table_assumed: bool,
    inverse: Vec<Vec<u8>>,
    options: OpeningOptions,
    /// The caps, with the moment they were set, and the positions searched since.
    limit: Option<(SearchLimit, Instant)>,
    spent: u64,
}

impl Opening<'static> {
    /// As [`Opening::new`], owning a share of `tb`: a search that lives as long as
    /// its owner (a player keeps one, with its table and saved values, for a game).
    pub fn shared(
        tb: Arc<Tablebase>,
        options: OpeningOptions,
    ) -> Result<Opening<'static>, OpeningError> {
        Opening::from_source(Source::Shared(tb), options)
    }
}

impl<'a> Opening<'a> {
    /// An opening search probing `tb`, reading the saved values of its directory if
    /// there are any.
    pub fn new(tb: &'a Tablebase, options: OpeningOptions) -> Result<Opening<'a>, OpeningError> {
        Opening::from_source(Source::Borrowed(tb), options)
    }

    fn from_source(tb: Source<'a>, options: OpeningOptions) -> Result<Opening<'a>, OpeningError> {
        let rules = tb.rules();
        if rules.points() > 24 || rules.stones > 15 {
            return Err(OpeningError::Unsupported {
                rules: rules.name.to_string(),
            });
        }
        // Damaged saved values are only a lost shortcut: ignored (and said by
        // `saved_problem`), never a reason to answer nothing.
        let (saved, saved_problem) =
            match Saved::load(&tb.dir().join(SAVED_FILE), rules.fingerprint()) {
                Ok(saved) => (saved, None),
                Err(e) => (Saved::default(), Some(e.to_string())),
            };
        let inverse = (0..rules.symmetries.len())
            .map(|s| rules.symmetries[rules.inverse(s)].clone())
            .collect();
        Ok(Opening {
            tb,
            rules,
            saved,
            saved_problem,
            table: None,
            table_mode: MissingAs::Error,
            table_assumed: false,
            inverse,
            options,
            limit: None,
            spent: 0,
        })
    }

    /// Caps everything this search does from now on: once it has searched
    /// `limit.nodes` positions or run for `limit.time`, a query that still needs to
    /// search fails with [`OpeningError::Limit`] (look-ups in the tables and saved
    /// values go on). The table keeps only what finished searches proved.
    pub fn with_limit(mut self, limit: SearchLimit) -> Self {
        self.limit = Some((limit, Instant::now()));
        self.spent = 0;
        self
    }

    /// Whether a placement position is answered by the placement sectors: tables
    /// allowed and [`Tablebase::covers`] the position.
    pub fn in_tables(&self, pos: &Position) -> bool {
        self.options.use_tables && pos.phase() == Phase::Placement && self.tb.covers(pos)
    }

    /// Why the saved values (`opening.bin`) could not be read, if they could not:
    /// they are ignored, every position is searched or looked up instead, and
    /// [`Opening::save`] replaces the file.
    pub fn saved_problem(&self) -> Option<&str> {
        self.saved_problem.as_deref()
    }

    /// Number of saved values read from the database directory.
    pub fn saved_len(&self) -> usize {
        self.saved.entries.len()
    }

    /// Solves a position with whatever databases are present: exact when they cover
    /// every leaf the search needs, bounds otherwise. Moving-phase positions are
    /// probed directly.
    pub fn solve(&mut self, pos: &Position) -> Result<Outcome, OpeningError> {
        let start = Instant::now();
        self.check(pos)?;
        if pos.phase() == Phase::Moving || self.in_tables(pos) {
            let value = self.tb.probe(pos)?;
            let best = self.tb.best_ply(pos)?.map(|m| m.0);
            return Ok(outcome(value, value, best, (0, 1), Vec::new(), start));
        }
        let optimistic = self.run(pos, MissingAs::Win)?;
        let mut missing = optimistic.missing.clone();
        let (mut nodes, mut probes) = (optimistic.nodes, optimistic.probes);
        let (lower, upper) = if missing.is_empty() {
            (optimistic.value, optimistic.value)
        } else {
            let pessimistic = self.run(pos, MissingAs::Loss)?;
            nodes += pessimistic.nodes;
            probes += pessimistic.probes;
            missing.extend(pessimistic.missing);
            missing.sort_unstable();
            missing.dedup();
            order(optimistic.value, pessimistic.value)
        };
        Ok(outcome(
            lower,
            upper,
            optimistic.best,
            (nodes, probes),
            missing,
            start,
        ))
    }

    /// The exact value of any position for the side to move; an error names the
    /// first missing subspace met.
    pub fn value(&mut self, pos: &Position) -> Result<Value, OpeningError> {
        self.check(pos)?;
        if pos.phase() == Phase::Moving || self.in_tables(pos) {
            return Ok(self.tb.probe(pos)?);
        }
        if let Some(v) = self.saved.get(canonical_key(self.rules, pos).0) {
            return Ok(v);
        }
        Ok(self.run(pos, MissingAs::Error)?.value)
    }

    /// Every legal ply with its exact value for the side that plays it, best first
    /// (fastest win, draws, slowest loss; ties in generation order).
    pub fn moves(&mut self, pos: &Position) -> Result<Vec<(Ply, Value)>, OpeningError> {
        self.check(pos)?;
        if pos.phase() == Phase::Moving || self.in_tables(pos) {
            return Ok(self.tb.moves(pos)?);
        }
        let rules = self.rules;
        crate::rules::value::ranked_plies(rules, pos, |child| self.value(child))
    }

    /// Saves the exact values the table holds for positions at most `max_ply` plies
    /// into the placement phase (stones placed), merged with those already saved, to
    /// `opening.bin` in the database directory. Values that rest on assumptions about
    /// missing databases are never saved. Returns the number of values in the file.
    pub fn save(&mut self, max_ply: u32) -> Result<usize, OpeningError> {
        let mut fresh = if self.table_assumed {
            Vec::new()
        } else {
            self.table
                .as_ref()
                .map(|t| t.exact_entries(|key| ply_of(self.rules, key) <= max_ply))
                .unwrap_or_default()
        };
        fresh.extend(self.saved.entries.iter().copied());
        fresh.sort_unstable_by_key(|e| e.0);
        fresh.dedup_by_key(|e| e.0);
        let max = max_ply.max(self.saved.max_ply);
        let path = self.tb.dir().join(SAVED_FILE);
        write_atomic(&path, &encode(self.rules.fingerprint(), max, &fresh))?;
        self.saved = Saved {
            entries: fresh,
            max_ply: max,
        };
        Ok(self.saved.entries.len())
    }

    fn check(&self, pos: &Position) -> Result<(), OpeningError> {
        Ok(check_position(self.rules, pos)?)
    }

    /// Prepares the table for `mode`: entries made under other assumptions go.
    fn use_mode(&mut self, mode: MissingAs) {
        let compatible = self.table_mode == mode || !self.table_assumed;
        if !compatible && let Some(table) = &self.table {
            table.clear();
            self.table_assumed = false;
        }
        self.table_mode = mode;
    }

    /// One search of a placement position under `mode`.
    fn run(&mut self, pos: &Position, mode: MissingAs) -> Result<RootResult, OpeningError> {
        if self.rules.move_in_placement {
            return Err(OpeningError::Repeating {
                rules: self.rules.name.to_string(),
            });
        }
        self.use_mode(mode);
        let table_mib = self.options.table_mib;
        if self.table.is_none() {
            self.table = Some(Table::try_new(table_mib).map_err(OpeningError::Memory)?);
        }
        let table = self.table.as_ref().expect("the table was just made");
        let (node_limit, deadline) = match self.limit {
            Some((l, since)) => (
                l.nodes.saturating_sub(self.spent),
                since.checked_add(l.time),
            ),
            None => (u64::MAX, None),
        };
        let search = Search {
            tb: &self.tb,
            rules: self.rules,
            saved: &self.saved,
            table,
            inverse: &self.inverse,
            mode,
            parallel: self.options.parallel,
            nodes: AtomicU64::new(0),
            probes: AtomicU64::new(0),
            missing: [AtomicU64::new(0), AtomicU64::new(0)],
            node_limit,
            deadline,
        };
        let result = search
            .root_search(pos, -1, 1)
            .and_then(|(score, best)| match score {
                0 => Ok((score, best)),
                s if s > 0 => search.root_search(pos, 0, INFINITE),
                _ => search.root_search(pos, -INFINITE, 0),
            });
        self.spent += search.nodes.load(Ordering::Relaxed);
        let (score, best) = match result {
            Err(Stop::Limit) => {
                let since = self.limit.map_or(0.0, |l| l.1.elapsed().as_secs_f64());
                return Err(OpeningError::Limit {
                    nodes: self.spent,
                    seconds: since,
                });
            }
            Err(Stop::Probe(e)) => return Err(e.into()),
            Ok(r) => r,
        };
        let missing = search.missing_list();
        self.table_assumed |= !missing.is_empty();
        if let Some(ply) = best {
            let (key, sym) = canonical_key(self.rules, pos);
            let entry = Entry {
                code: value_at(score, 0).code(),
                bound: Bound::Exact,
                remaining: (pos.hand[0] + pos.hand[1]) as u64,
                ply: search.encode_ply(ply, sym),
            };
            table.put(key, entry);
        }
        Ok(RootResult {
            value: value_at(score, 0),
            best,
            nodes: search.nodes.into_inner(),
            probes: search.probes.into_inner(),
            missing,
        })
    }
}

/// Whether a position can be queried at all: on the board, legal under the rules,
/// and not already decided (the opponent of the side to move has three stones or
/// more). The check every query of [`Opening`] starts with.
pub fn check_position(rules: &Rules, pos: &Position) -> Result<(), ProbeError> {
    if (pos.board[0] | pos.board[1]) & !rules.all() != 0 {
        return Err(ProbeError::Illegal(
            crate::rules::position::PositionError::OffBoard,
        ));
    }
    pos.validate(rules).map_err(ProbeError::Illegal)?;
    if pos.below_three(pos.to_move.other()) {
        return Err(ProbeError::GameOver);
    }
    Ok(())
}

struct RootResult {
    value: Value,
    best: Option<Ply>,
    nodes: u64,
    probes: u64,
    missing: Vec<(u32, u32)>,
}

fn outcome(
    lower: Value,
    upper: Value,
    best: Option<Ply>,
    (nodes, probes): (u64, u64),
    missing: Vec<(u32, u32)>,
    start: Instant,
) -> Outcome {
    Outcome {
        lower,
        upper,
        best,
        nodes,
        probes,
        seconds: start.elapsed().as_secs_f64(),
        missing,
    }
}

/// The two values ordered worse, better for the side to move.
fn order(a: Value, b: Value) -> (Value, Value) {
    if a.cmp_goodness(b) == CmpOrdering::Greater {
        (b, a)
    } else {
        (a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::score::from_value;

    #[test]
    fn a_shared_search_outlives_the_borrow() {
        let dir = crate::scratch::Scratch::new("opening-shared");
        let rules = Rules::by_name("standard-3").unwrap();
        let opts = crate::table::build::BuildOptions {
            threads: Some(1),
            ..crate::table::build::BuildOptions::quiet(
                dir.to_path_buf(),
                crate::table::build::Selection::All,
                crate::table::build::BuildPhase::Moving,
            )
        };
        crate::table::build::build(rules, &opts).unwrap();
        let tb = Arc::new(Tablebase::open(&dir).unwrap());
        let options = OpeningOptions {
            table_mib: 1,
            parallel: false,
            use_tables: true,
        };
        let mut shared = Opening::shared(tb.clone(), options.clone()).unwrap();
        let mut borrowed = Opening::new(&tb, options).unwrap();
        let start = Position::start(rules);
        let moves = shared.moves(&start).unwrap();
        assert_eq!(moves, borrowed.moves(&start).unwrap());
        assert_eq!(moves.len(), start.legal_plies(rules).len());
        assert_eq!(shared.value(&start).unwrap(), moves[0].1);
        drop(borrowed);
        // The search holds its own share.
        assert_eq!(Arc::strong_count(&tb), 2);
        drop(tb);
        assert_eq!(shared.value(&start).unwrap(), moves[0].1);
    }

    #[test]
    fn scores_and_values_round_trip() {
        for d in [0, 3, 17] {
            for v in [
                Value::Draw,
                Value::Win(1),
                Value::Loss(0),
                Value::Win(41),
                Value::Loss(88),
            ] {
                assert_eq!(value_at(from_value(v, d), d), v);
                // Negation one ply up is the parent value.
                assert_eq!(value_at(-from_value(v, d + 1), d), v.parent());
            }
        }
    }
}
