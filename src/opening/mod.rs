//! The opening search: exact values of placement-phase positions.
//!
//! A negamax alpha-beta search over the placement phase whose leaves are the
//! positions where both hands are empty; the databases ([`Tablebase`]) give their
//! values. A ply that leaves the opponent fewer than three stones ends the game and is
//! `Win(1)`.
//!
//! **Scores.** Inside the search a value is an `i32` score relative to the root, on
//! the engine's scale ([`crate::engine::score`]): `Win(n)` at depth `d` is
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

use crate::engine::score::{INFINITE, from_value, value_at};
use crate::format::{FormatError, write_atomic, xxh64};
use crate::manifest::subspace_name;
use crate::position::{Color, NONE, Phase, Ply, Position};
use crate::probe::{ProbeError, Tablebase};
use crate::rules::{Bits, Rules};
use crate::value::Value;
use rayon::prelude::*;
use std::cmp::Ordering as CmpOrdering;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The file of saved opening values in a database directory ([`crate::layout`]).
pub const SAVED_FILE: &str = crate::layout::OPENING;
const MAGIC: &[u8; 8] = b"MILLOPEN";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 48;
const ENTRY_LEN: usize = 10;

/// Why the opening search gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum OpeningError {
    /// A probe failed: a missing subspace (named, with the command that builds it), a
    /// damaged file, an illegal position.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The saved opening values are damaged or of other rules.
    #[error("{}: {why}; delete the file and run `millbase solve` again", path.display())]
    Saved {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Writing the saved values failed.
    #[error(transparent)]
    Write(#[from] FormatError),
    /// The rules do not fit the search's position keys ([`canonical_key`]).
    #[error(
        "rules {rules}: the opening search keys boards of at most 24 points and hands of at most 15 stones"
    )]
    Unsupported {
        /// The rules' name.
        rules: String,
    },
    /// The search reached the limit set with [`Opening::with_limit`] before it had an
    /// answer.
    #[error(
        "the search stopped at its limit ({nodes} positions, {seconds:.1} s) without an answer"
    )]
    Limit {
        /// Positions searched in all.
        nodes: u64,
        /// Seconds since the limit was set.
        seconds: f64,
    },
}

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

/// How leaves of a missing subspace are valued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MissingAs {
    /// An error: the caller wants an exact value.
    Error,
    /// `Win(1)` for the side to move at the leaf.
    Win,
    /// `Loss(0)` for the side to move at the leaf.
    Loss,
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
        let saved = Saved::load(&tb.dir().join(SAVED_FILE), rules.fingerprint())?;
        let inverse = (0..rules.symmetries.len())
            .map(|s| rules.symmetries[rules.inverse(s)].clone())
            .collect();
        Ok(Opening {
            tb,
            rules,
            saved,
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
        crate::value::ranked_plies(rules, pos, |child| self.value(child))
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
        self.use_mode(mode);
        let table_mib = self.options.table_mib;
        let table = &*self.table.get_or_insert_with(|| Table::new(table_mib));
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
            crate::position::PositionError::OffBoard,
        ));
    }
    pos.validate(rules).map_err(ProbeError::Illegal)?;
    if pos.material(pos.to_move.other()) < 3 {
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

/// The symmetry-canonical key of a position and the symmetry that maps the position
/// onto its canonical form. Bits 0–23 White's set, 24–47 Black's, 48–51 White's hand,
/// 52–55 Black's hand, 56 Black to move, 57 removal pending; the key is the smallest
/// over the 16 symmetries (the sets mapped, the rest unchanged). Boards of at most
/// 24 points and hands of at most 15 stones: [`Opening`] refuses other rules
/// ([`OpeningError::Unsupported`]).
pub fn canonical_key(rules: &Rules, pos: &Position) -> (u64, usize) {
    let rest = (pos.hand[0] as u64) << 48
        | (pos.hand[1] as u64) << 52
        | ((pos.to_move == Color::Black) as u64) << 56
        | (pos.pending_removal as u64) << 57;
    let mut best = (u64::MAX, 0);
    for s in 0..rules.symmetries.len() {
        let sets = rules.map(s, pos.board[0]) as u64 | (rules.map(s, pos.board[1]) as u64) << 24;
        if sets < best.0 {
            best = (sets, s);
        }
    }
    (best.0 | rest, best.1)
}

/// The position of a canonical key.
pub fn key_position(key: u64) -> Position {
    Position {
        board: [(key & 0xff_ffff) as Bits, (key >> 24 & 0xff_ffff) as Bits],
        hand: [(key >> 48 & 15) as u8, (key >> 52 & 15) as u8],
        to_move: if key >> 56 & 1 == 1 {
            Color::Black
        } else {
            Color::White
        },
        pending_removal: key >> 57 & 1 == 1,
    }
}

/// Stones placed since the start of the game, for a canonical key.
fn ply_of(rules: &Rules, key: u64) -> u32 {
    let p = key_position(key);
    2 * rules.stones as u32 - p.hand[0] as u32 - p.hand[1] as u32
}

/// One search: shared, read-only state and counters.
struct Search<'s> {
    tb: &'s Tablebase,
    rules: &'static Rules,
    saved: &'s Saved,
    table: &'s Table,
    inverse: &'s [Vec<u8>],
    mode: MissingAs,
    parallel: bool,
    nodes: AtomicU64,
    probes: AtomicU64,
    missing: [AtomicU64; 2],
    /// Positions this search may visit.
    node_limit: u64,
    /// When it must stop.
    deadline: Option<Instant>,
}

/// Why a search stopped without a value.
enum Stop {
    /// A probe failed.
    Probe(ProbeError),
    /// The [`SearchLimit`] was reached.
    Limit,
}

impl From<ProbeError> for Stop {
    fn from(e: ProbeError) -> Self {
        Stop::Probe(e)
    }
}

/// How often (in positions) the search looks at the clock.
const CLOCK_EVERY: u64 = 1024;

impl Search<'_> {
    /// Counts a position; `Err` once the limit is reached.
    fn count_node(&self) -> Result<(), Stop> {
        let n = self.nodes.fetch_add(1, Ordering::Relaxed) + 1;
        if n > self.node_limit {
            return Err(Stop::Limit);
        }
        if n.is_multiple_of(CLOCK_EVERY) && self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Stop::Limit);
        }
        Ok(())
    }

    /// The root: the first ply alone, the others in parallel with the window it set.
    fn root_search(
        &self,
        pos: &Position,
        alpha: i32,
        beta: i32,
    ) -> Result<(i32, Option<Ply>), Stop> {
        let plies = self.ordered(pos, None);
        let Some((&first, rest)) = plies.split_first() else {
            return Ok((from_value(Value::Loss(0), 0), None));
        };
        let mut best = (self.child_score(pos, first, 0, alpha, beta)?, Some(first));
        if best.0 >= beta || rest.is_empty() {
            return Ok(best);
        }
        let a = alpha.max(best.0);
        let scores: Vec<i32> = if self.parallel {
            rest.par_iter()
                .map(|&p| self.child_score(pos, p, 0, a, beta))
                .collect::<Result<_, _>>()?
        } else {
            rest.iter()
                .map(|&p| self.child_score(pos, p, 0, a, beta))
                .collect::<Result<_, _>>()?
        };
        for (&p, &s) in rest.iter().zip(&scores) {
            if s > best.0 {
                best = (s, Some(p));
            }
        }
        Ok(best)
    }

    /// The score of `ply` played at depth `d`, seen from the side that plays it.
    fn child_score(
        &self,
        pos: &Position,
        ply: Ply,
        d: i32,
        alpha: i32,
        beta: i32,
    ) -> Result<i32, Stop> {
        let child = pos.after(self.rules, ply);
        if child.material(child.to_move) < 3 {
            return Ok(from_value(Value::Win(1), d as usize));
        }
        Ok(-self.negamax(&child, d + 1, -beta, -alpha)?)
    }

    /// Fail-soft negamax: exact inside (alpha, beta), a bound outside.
    fn negamax(&self, pos: &Position, d: i32, alpha: i32, beta: i32) -> Result<i32, Stop> {
        self.count_node()?;
        if pos.phase() == Phase::Moving && !pos.pending_removal {
            return Ok(from_value(self.leaf(pos)?, d as usize));
        }
        let (key, sym) = canonical_key(self.rules, pos);
        if let Some(v) = self.saved.get(key) {
            return Ok(from_value(v, d as usize));
        }
        let entry = self.table.get(key);
        let mut hint = None;
        if let Some(e) = entry {
            let s = from_value(Value::from_code(e.code), d as usize);
            match e.bound {
                Bound::Exact => return Ok(s),
                Bound::Lower if s >= beta => return Ok(s),
                Bound::Upper if s <= alpha => return Ok(s),
                _ => {}
            }
            hint = Some(self.decode_ply(e.ply, sym));
        }
        let mut best = (-INFINITE, None);
        for ply in self.ordered(pos, hint) {
            let s = self.child_score(pos, ply, d, alpha.max(best.0), beta)?;
            if s > best.0 {
                best = (s, Some(ply));
                if s >= beta {
                    break;
                }
            }
        }
        let Some(ply) = best.1 else {
            return Ok(from_value(Value::Loss(0), d as usize));
        };
        let bound = if best.0 <= alpha {
            Bound::Upper
        } else if best.0 >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        let remaining = (pos.hand[0] + pos.hand[1]) as u64;
        let code = value_at(best.0, d as usize).code();
        self.table.put(
            key,
            Entry {
                code,
                bound,
                remaining,
                ply: self.encode_ply(ply, sym),
            },
        );
        Ok(best.0)
    }

    /// The value of a position with both hands empty.
    fn leaf(&self, pos: &Position) -> Result<Value, ProbeError> {
        let (own, opp) = (pos.own(), pos.opp());
        let k = own.count_ones();
        let empty = self.rules.all() & !(own | opp);
        if k < 3 || (!self.rules.flies(k, 0) && self.rules.cannot_slide(own, empty)) {
            return Ok(Value::Loss(0));
        }
        match self.tb.probe_sets(own, opp) {
            Ok(v) => {
                self.probes.fetch_add(1, Ordering::Relaxed);
                Ok(v)
            }
            Err(ProbeError::Missing { .. }) if self.mode != MissingAs::Error => {
                self.note_missing(k, opp.count_ones());
                Ok(if self.mode == MissingAs::Win {
                    Value::Win(1)
                } else {
                    Value::Loss(0)
                })
            }
            Err(e) => Err(e),
        }
    }

    fn note_missing(&self, k: u32, l: u32) {
        let bit = k * 10 + l;
        let word = &self.missing[(bit / 64) as usize];
        let mask = 1u64 << (bit % 64);
        if word.load(Ordering::Relaxed) & mask == 0 {
            word.fetch_or(mask, Ordering::Relaxed);
        }
    }

    fn missing_list(&self) -> Vec<(u32, u32)> {
        (0..100u32)
            .filter(|&b| {
                self.missing[(b / 64) as usize].load(Ordering::Relaxed) >> (b % 64) & 1 == 1
            })
            .map(|b| (b / 10, b % 10))
            .collect()
    }

    /// The legal plies, the table's hint first, then mills, blocks, point degree.
    fn ordered(&self, pos: &Position, hint: Option<Ply>) -> Vec<Ply> {
        let mut plies = pos.legal_plies(self.rules);
        let opp_open = self.rules.mill_holes(pos.opp(), pos.empty(self.rules));
        let rank = |p: &Ply| -> i32 {
            if Some(*p) == hint {
                return i32::MIN;
            }
            let mut r = 0;
            if p.removes() {
                r += 1000 + 10 * self.rules.adjacency[p.remove as usize].count_ones() as i32;
            }
            if p.to != NONE {
                if opp_open >> p.to & 1 == 1 {
                    r += 500;
                }
                r += self.rules.adjacency[p.to as usize].count_ones() as i32;
            }
            -r
        };
        plies.sort_by_cached_key(rank);
        plies
    }

    /// A ply in canonical coordinates, packed into 10 bits (31 for no point).
    fn encode_ply(&self, ply: Ply, sym: usize) -> u16 {
        let map = |p: u8| {
            if p == NONE {
                31
            } else {
                self.rules.symmetries[sym][p as usize] as u16
            }
        };
        map(ply.to) | map(ply.remove) << 5
    }

    /// The ply of [`Search::encode_ply`] back in the position's coordinates.
    fn decode_ply(&self, packed: u16, sym: usize) -> Ply {
        let back = |q: u16| {
            if q == 31 {
                NONE
            } else {
                self.inverse[sym][q as usize]
            }
        };
        Ply {
            from: NONE,
            to: back(packed & 31),
            remove: back(packed >> 5 & 31),
        }
    }
}

/// What a table entry says about its score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    /// The value is at most this.
    Upper = 1,
    /// The value is at least this.
    Lower = 2,
    /// The value is this.
    Exact = 3,
}

/// A table entry: a node-relative value code, its bound, stones left in hand
/// (work below the node) and the best ply in canonical coordinates.
#[derive(Clone, Copy, Debug)]
struct Entry {
    code: u16,
    bound: Bound,
    remaining: u64,
    ply: u16,
}

impl Entry {
    fn pack(self) -> u64 {
        1 << 63
            | self.code as u64
            | (self.bound as u64) << 16
            | self.remaining << 18
            | (self.ply as u64) << 23
    }

    fn unpack(data: u64) -> Option<Entry> {
        let bound = match data >> 16 & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => return None,
        };
        Some(Entry {
            code: data as u16,
            bound,
            remaining: data >> 18 & 31,
            ply: (data >> 23 & 0x3ff) as u16,
        })
    }
}

/// Where the check word sits in an entry's data word (the entry uses bits 0..33 and 63).
const CHECK_SHIFT: u32 = 33;
/// The check word's 30 bits.
const CHECK_MASK: u64 = (1 << 30) - 1;

/// The check word of a key: 30 bits of a hash independent of the bucket's.
fn check_word(key: u64) -> u64 {
    (key ^ key >> 29).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 34 & CHECK_MASK
}

/// The transposition table: buckets of two entries, each stored as `key ^ data`
/// and `data`, so a torn write by two threads is detected and ignored.
struct Table {
    slots: Vec<[AtomicU64; 2]>,
    mask: u64,
}

impl Table {
    fn new(mib: usize) -> Table {
        let bytes = mib.max(1) << 20;
        // Largest power of two of buckets (32 bytes each) that fits.
        let buckets = 1usize << (usize::BITS - 1 - (bytes / 32).leading_zeros());
        let slots = (0..2 * buckets)
            .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
            .collect();
        Table {
            slots,
            mask: buckets as u64 - 1,
        }
    }

    fn bucket(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17 & self.mask) as usize * 2
    }

    /// The key and data of slot `i`. A torn entry (the two words written by two
    /// threads) yields a key that is not the one either wrote; such a key is caught
    /// by the check word in the data (bits 33..63, a hash of the key the data was
    /// written for) and by the bucket it must belong to, and the slot reads as empty.
    fn read(&self, i: usize) -> (u64, u64) {
        let [check, data] = &self.slots[i];
        let data = data.load(Ordering::Relaxed);
        let key = check.load(Ordering::Relaxed) ^ data;
        if data == 0
            || data >> CHECK_SHIFT & CHECK_MASK != check_word(key)
            || self.bucket(key) != i & !1
        {
            return (0, 0);
        }
        (key, data)
    }

    fn get(&self, key: u64) -> Option<Entry> {
        let b = self.bucket(key);
        (b..b + 2).find_map(|i| match self.read(i) {
            (k, data) if k == key && data != 0 => Entry::unpack(data),
            _ => None,
        })
    }

    fn put(&self, key: u64, entry: Entry) {
        let b = self.bucket(key);
        let (k0, d0) = self.read(b);
        let keep_first = d0 != 0
            && k0 != key
            && Entry::unpack(d0).is_some_and(|e| e.remaining > entry.remaining);
        let i = if keep_first { b + 1 } else { b };
        let data = entry.pack() | check_word(key) << CHECK_SHIFT;
        self.slots[i][1].store(data, Ordering::Relaxed);
        self.slots[i][0].store(key ^ data, Ordering::Relaxed);
    }

    fn clear(&self) {
        for s in &self.slots {
            s[0].store(0, Ordering::Relaxed);
            s[1].store(0, Ordering::Relaxed);
        }
    }

    /// The exact entries whose key passes `keep`, as `(key, code)`.
    fn exact_entries(&self, keep: impl Fn(u64) -> bool) -> Vec<(u64, u16)> {
        (0..self.slots.len())
            .filter_map(|i| {
                let (key, data) = self.read(i);
                let e = Entry::unpack(data)?;
                (data != 0 && e.bound == Bound::Exact && key >> 58 == 0 && keep(key))
                    .then_some((key, e.code))
            })
            .collect()
    }
}

/// Saved opening values: canonical keys with exact value codes, sorted by key.
#[derive(Default)]
struct Saved {
    entries: Vec<(u64, u16)>,
    max_ply: u32,
}

impl Saved {
    /// Reads `path`; no file means no saved values.
    fn load(path: &Path, fingerprint: u64) -> Result<Saved, OpeningError> {
        let read = |path: &Path| -> std::io::Result<Vec<u8>> {
            let mut file = match crate::format::open_regular(path) {
                Ok(f) => f,
                Err(FormatError::Io { source, .. }) => return Err(source),
                Err(e) => return Err(std::io::Error::other(e.to_string())),
            };
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes)?;
            Ok(bytes)
        };
        let bytes = match read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Saved::default()),
            Err(e) => {
                return Err(OpeningError::Saved {
                    path: path.to_path_buf(),
                    why: e.to_string(),
                });
            }
        };
        decode(&bytes, fingerprint).map_err(|why| OpeningError::Saved {
            path: path.to_path_buf(),
            why,
        })
    }

    fn get(&self, key: u64) -> Option<Value> {
        self.entries
            .binary_search_by_key(&key, |e| e.0)
            .ok()
            .map(|i| Value::from_code(self.entries[i].1))
    }
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The bytes of a saved-values file (layout in `docs/FORMAT.md`).
fn encode(fingerprint: u64, max_ply: u32, entries: &[(u64, u16)]) -> Vec<u8> {
    let mut body = Vec::with_capacity(entries.len() * ENTRY_LEN);
    for &(key, code) in entries {
        body.extend_from_slice(&key.to_le_bytes());
        body.extend_from_slice(&code.to_le_bytes());
    }
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&max_ply.to_le_bytes());
    out.extend_from_slice(&fingerprint.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxh64(&body).to_le_bytes());
    let header_sum = xxh64(&out);
    out.extend_from_slice(&header_sum.to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Reads and checks a saved-values file.
fn decode(b: &[u8], fingerprint: u64) -> Result<Saved, String> {
    if b.len() < HEADER_LEN || &b[..8] != MAGIC {
        return Err("not a millbase opening-values file".into());
    }
    if xxh64(&b[..40]) != le_u64(b, 40) {
        return Err("header checksum mismatch".into());
    }
    if le_u32(b, 8) != VERSION {
        return Err(format!("format version {} is not {VERSION}", le_u32(b, 8)));
    }
    if le_u64(b, 16) != fingerprint {
        return Err("built under other rules (fingerprint differs)".into());
    }
    let n = le_u64(b, 24) as usize;
    let body = &b[HEADER_LEN..];
    if body.len() != n.saturating_mul(ENTRY_LEN) {
        return Err(format!(
            "{n} entries announced, {} bytes of entries",
            body.len()
        ));
    }
    if xxh64(body) != le_u64(b, 32) {
        return Err("entries checksum mismatch".into());
    }
    let entries: Vec<(u64, u16)> = body
        .chunks_exact(ENTRY_LEN)
        .map(|c| (le_u64(c, 0), u16::from_le_bytes([c[8], c[9]])))
        .collect();
    if entries.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err("entries are not sorted by key".into());
    }
    Ok(Saved {
        entries,
        max_ply: le_u32(b, 12),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_search_outlives_the_borrow() {
        let dir =
            std::env::temp_dir().join(format!("millbase-opening-shared-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let rules = Rules::by_name("standard-3").unwrap();
        let opts = crate::build::BuildOptions {
            db: dir.clone(),
            selection: crate::build::Selection::All,
            phase: crate::build::BuildPhase::Moving,
            threads: Some(1),
            quiet: true,
        };
        crate::build::build(rules, &opts).unwrap();
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
        let _ = std::fs::remove_dir_all(&dir);
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

    #[test]
    fn canonical_keys_are_symmetry_invariant() {
        let r = Rules::standard();
        let pos = Position {
            board: [0b1011 << 3, 0b11 << 17],
            hand: [5, 6],
            to_move: Color::Black,
            pending_removal: false,
        };
        let (key, sym) = canonical_key(r, &pos);
        for s in 0..16 {
            assert_eq!(canonical_key(r, &pos.transformed(r, s)).0, key);
        }
        assert_eq!(key_position(key), pos.transformed(r, sym));
    }

    #[test]
    fn saved_file_round_trips_and_detects_damage() {
        let entries = vec![(5u64, 3u16), (9, 0), (1 << 50, 12)];
        let bytes = encode(77, 8, &entries);
        let saved = decode(&bytes, 77).unwrap();
        assert_eq!(saved.entries, entries);
        assert_eq!(saved.get(9), Some(Value::Draw));
        assert!(decode(&bytes, 78).is_err());
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(decode(&bad, 77).is_err());
    }

    #[test]
    fn table_keeps_entries() {
        let t = Table::new(1);
        let e = Entry {
            code: 7,
            bound: Bound::Exact,
            remaining: 9,
            ply: 31 | 4 << 5,
        };
        t.put(123, e);
        let got = t.get(123).unwrap();
        assert_eq!(
            (got.code, got.bound, got.remaining, got.ply),
            (7, Bound::Exact, 9, e.ply)
        );
        assert!(t.get(124).is_none());
        assert_eq!(t.exact_entries(|_| true), vec![(123, 7)]);
    }

    /// Two threads writing one slot at once can leave the key word of one entry
    /// with the data word of the other. Such torn slots must never be read as an
    /// entry, and above all never be saved to `opening.bin` under a made-up key.
    #[test]
    fn torn_entries_are_never_read_or_saved() {
        let t = Table::new(1);
        let mut rng = 0x1234_5678_9abc_def0_u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let entry = |code: u64| Entry {
            code: code as u16,
            bound: Bound::Exact,
            remaining: code % 19,
            ply: (code % 1000) as u16,
        };
        for _ in 0..20_000 {
            // Two writers of one slot, with keys of the shape canonical_key makes.
            let (ka, kb) = (next() & ((1 << 58) - 1), next() & ((1 << 58) - 1));
            let (a, b) = (entry(next() % 400), entry(next() % 400));
            t.clear();
            t.put(ka, a);
            let i = t.bucket(ka);
            let da = t.slots[i][1].load(Ordering::Relaxed);
            let db = b.pack() | check_word(kb) << CHECK_SHIFT;
            // The torn slot: a's key word, b's data word (and the reverse).
            for (check, data) in [(ka ^ da, db), ((kb ^ db), da)] {
                t.slots[i][0].store(check, Ordering::Relaxed);
                t.slots[i][1].store(data, Ordering::Relaxed);
                if da == db {
                    continue;
                }
                assert_eq!(t.read(i), (0, 0), "torn slot read as an entry");
                assert!(t.exact_entries(|_| true).is_empty());
                assert!(t.get(ka).is_none() && t.get(kb).is_none());
            }
        }
    }
}
