//! The search proper: iterative deepening over negamax alpha-beta with
//! principal-variation search or MTD(f), transposition table cutoffs, repetition
//! draws along the path, exact values from an [`Endgame`], and limits.

use super::endgame::{Endgame, best_exact, exact_line};
use super::eval::Eval;
use super::ordering::{MAX_PLY, Ordering, is_quiet, pick};
use super::terms::{Algorithm, Info, Limits, SearchResult};
use super::tt::{Bound, Hit, Table};
use super::zobrist::Zobrist;
use crate::mix::SplitMix;
use crate::rules::position::{Ply, Position};
use crate::rules::{Bits, Rules};
use crate::search::score::{
    DRAW, INFINITE, MATE_BOUND, from_table, from_value, is_mate, lost_at, mate_plies, to_table,
};
use std::sync::atomic::{AtomicBool, Ordering as MemOrder};
use std::time::Instant;

/// How often (in nodes) the clock and the stop flag are looked at.
const CHECK_EVERY: u64 = 1024;
/// The first iteration searched with an aspiration window around the last score.
const ASPIRATION_FROM: u32 = 4;
/// Half the width of the first aspiration window, in centi-stones.
const ASPIRATION: i32 = 40;
/// Plies of each node (in search order) never reduced.
const REDUCE_AFTER: usize = 3;
/// The least depth at which late quiet plies are reduced.
const REDUCE_FROM_DEPTH: u32 = 3;

/// Longest principal variation reported when playing by exact values.
const EXACT_PV: usize = 12;
/// Plies without a removal after which a game is drawn: the arena's default and
/// Sanmill's (the rules the databases solve have no such limit).
pub const QUIET_LIMIT: u32 = 100;
/// Plies without a removal after which evaluations start to shrink towards a draw
/// ([`damped`]).
pub const QUIET_GRACE: u32 = 20;

/// An evaluation `score` at a node `quiet` plies after the last removal, shrunk
/// linearly from its full value at [`QUIET_GRACE`] plies to a draw at
/// [`QUIET_LIMIT`]: a side that is ahead but makes no progress (no removal) sees
/// its advantage melt away, and prefers a line that removes a stone; a side that is
/// behind prefers to run out the count.
pub fn damped(score: i32, quiet: u32) -> i32 {
    if quiet <= QUIET_GRACE {
        return score;
    }
    let left = QUIET_LIMIT.saturating_sub(quiet) as i64;
    (score as i64 * left / (QUIET_LIMIT - QUIET_GRACE) as i64) as i32
}

/// Plays a covered root by exact values: `None` unless the root and all its
/// successors are covered.
pub fn play_exact(rules: &Rules, endgame: &dyn Endgame, root: &Position) -> Option<SearchResult> {
    if !endgame.has_distances() {
        return None;
    }
    let start = Instant::now();
    let (best, value) = best_exact(rules, endgame, root)?;
    let mut pv = vec![best];
    pv.extend(exact_line(
        rules,
        endgame,
        &root.after(rules, best),
        EXACT_PV - 1,
    ));
    Some(SearchResult {
        best: Some(best),
        score: from_value(value, 0),
        depth: 1,
        nodes: 1 + root.legal_plies(rules).len() as u64,
        pv,
        time: start.elapsed(),
        exact: true,
    })
}

/// The state of one search.
pub struct Search<'a> {
    rules: &'static Rules,
    zobrist: &'static Zobrist,
    table: &'a Table,
    ordering: &'a mut Ordering,
    endgame: Option<&'a dyn Endgame>,
    stop: &'a AtomicBool,
    limits: Limits,
    start: Instant,
    nodes: u64,
    aborted: bool,
    /// Keys of the positions before the current node: the game's history, then the
    /// current line.
    path: Vec<u64>,
    /// Index of the first history entry a root successor could repeat.
    history_floor: usize,
    plies: Vec<Vec<Ply>>,
    scores: Vec<Vec<i32>>,
    pv: Vec<Vec<Ply>>,
    /// The best root ply of the current iteration, once its search completed.
    root_best: Option<(Ply, i32)>,
    shuffle: Option<u64>,
    eval: Eval,
    /// Plies of the quiescence search.
    quiescence: u32,
    /// Whether new mill threats in placement are searched one ply deeper.
    threat_extension: bool,
    /// The depth of the current iteration.
    iteration: u32,
    /// Per ply of the current line: plies since the last removal (the root's from
    /// the game).
    quiet: Vec<u32>,
    /// Whether leaf evaluations are [`damped`] by `quiet`.
    damping: bool,
    /// Whether late quiet plies are searched less deep first ([`reduction`]).
    reductions: bool,
    /// Plies by which the iterations start deeper: 0 for the main thread, 1 for
    /// every other helper of a lazy SMP search, so that the threads do not all
    /// search the same depth at the same time.
    skew: u32,
}

impl<'a> Search<'a> {
    /// Prepares a search of `root` reached through `history`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        rules: &'static Rules,
        table: &'a Table,
        ordering: &'a mut Ordering,
        endgame: Option<&'a dyn Endgame>,
        stop: &'a AtomicBool,
        limits: &Limits,
        history: &[Position],
        root: &Position,
        shuffle: Option<u64>,
        eval: Eval,
        quiescence: u32,
        threat_extension: bool,
        quiet: Option<u32>,
        reductions: bool,
    ) -> Search<'a> {
        let zobrist = Zobrist::get();
        // Only positions with the root's stones on board and in hand can recur
        // (stones leave the board and the hands, never come back).
        let same = |p: &Position| {
            p.board.map(u32::count_ones) == root.board.map(u32::count_ones) && p.hand == root.hand
        };
        let history_floor = history.iter().rposition(|p| !same(p)).map_or(0, |i| i + 1);
        Search {
            rules,
            zobrist,
            table,
            ordering,
            endgame,
            stop,
            limits: *limits,
            start: Instant::now(),
            nodes: 0,
            aborted: false,
            path: history.iter().map(|p| zobrist.key(p)).collect(),
            history_floor,
            plies: (0..=MAX_PLY).map(|_| Vec::with_capacity(64)).collect(),
            scores: (0..=MAX_PLY).map(|_| Vec::with_capacity(64)).collect(),
            pv: vec![Vec::new(); MAX_PLY + 2],
            root_best: None,
            shuffle,
            eval,
            quiescence,
            threat_extension,
            iteration: 0,
            quiet: {
                let mut q = vec![0; MAX_PLY + 2];
                q[0] = quiet.unwrap_or(0);
                q
            },
            damping: quiet.is_some(),
            reductions,
            skew: 0,
        }
    }

    /// Makes the iterations start `skew` plies deeper (a helper thread's search).
    pub fn set_skew(&mut self, skew: u32) {
        self.skew = skew;
    }

    /// Nodes searched so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Iterative deepening until a limit is reached; reports each iteration.
    pub fn iterate(
        &mut self,
        root: &Position,
        algorithm: Algorithm,
        on_info: &mut dyn FnMut(&Info),
    ) -> SearchResult {
        let max_depth = self
            .limits
            .depth
            .unwrap_or(MAX_PLY as u32 - 8)
            .clamp(1, MAX_PLY as u32 - 8);
        let root_plies = root.legal_plies(self.rules);
        let mut result = SearchResult {
            best: root_plies.first().copied(),
            score: if root_plies.is_empty() {
                from_value(root.stuck_value(self.rules), 0)
            } else {
                0
            },
            depth: 0,
            nodes: 0,
            pv: root_plies.first().copied().into_iter().collect(),
            time: self.start.elapsed(),
            exact: false,
        };
        if root_plies.is_empty() {
            return result;
        }
        for depth in (1 + self.skew).min(max_depth)..=max_depth {
            self.root_best = None;
            self.iteration = depth;
            let score = match algorithm {
                Algorithm::Pvs if depth >= ASPIRATION_FROM && result.depth > 0 => {
                    self.aspiration(root, depth, result.score)
                }
                Algorithm::Pvs => {
                    self.negamax(root, depth, -INFINITE, INFINITE, 0, self.history_floor)
                }
                Algorithm::Mtdf => self.mtdf(root, depth, result.score),
            };
            self.take_iteration(root, algorithm, score, &mut result);
            result.nodes = self.nodes;
            result.time = self.start.elapsed();
            if self.aborted {
                break;
            }
            result.depth = depth;
            on_info(&Info {
                depth,
                score: result.score,
                nodes: self.nodes,
                time: result.time,
                pv: result.pv.clone(),
            });
            if self.done_after_iteration(depth, result.score, root_plies.len()) {
                break;
            }
        }
        result
    }

    /// Takes the outcome of an iteration into `result`. An aborted iteration still
    /// counts if it completed a root ply better than the last iteration's.
    fn take_iteration(
        &self,
        root: &Position,
        algorithm: Algorithm,
        score: i32,
        result: &mut SearchResult,
    ) {
        let best = if self.aborted {
            match self.root_best {
                Some((p, s)) if s > result.score || result.depth == 0 => Some((p, s)),
                _ => None,
            }
        } else {
            let hash = || {
                self.table
                    .probe(self.zobrist.key(root))
                    .and_then(|h| h.best)
            };
            self.root_best
                .map(|(p, _)| p)
                .or_else(hash)
                .or(result.best)
                .map(|p| (p, score))
        };
        if let Some((p, s)) = best {
            result.best = Some(p);
            result.score = s;
            result.pv = self.principal_variation(root, algorithm, p);
        }
    }

    /// Whether to start no further iteration.
    fn done_after_iteration(&self, depth: u32, score: i32, root_plies: usize) -> bool {
        let proven = mate_plies(score).is_some_and(|n| n.unsigned_abs() <= depth);
        let timed = self.limits.movetime.is_some();
        let half_time = self
            .limits
            .movetime
            .is_some_and(|t| self.start.elapsed() * 2 >= t);
        proven || half_time || (timed && root_plies == 1)
    }

    fn principal_variation(&self, root: &Position, algorithm: Algorithm, best: Ply) -> Vec<Ply> {
        match algorithm {
            Algorithm::Pvs if self.pv[0].first() == Some(&best) => self.pv[0].clone(),
            _ => self.table_line(root, best),
        }
    }

    /// The line of hash plies from `root` after `best`, checked for legality.
    fn table_line(&self, root: &Position, best: Ply) -> Vec<Ply> {
        let mut line = vec![best];
        let mut pos = root.after(self.rules, best);
        let mut seen = vec![self.zobrist.key(root)];
        while line.len() < 32 {
            let key = self.zobrist.key(&pos);
            let Some(ply) = self.table.probe(key).and_then(|h| h.best) else {
                break;
            };
            if seen.contains(&key) || !pos.is_legal(self.rules, ply) {
                break;
            }
            seen.push(key);
            line.push(ply);
            pos.make(self.rules, ply);
        }
        line
    }

    /// A search in a window around `guess`, widened (fourfold each time) on the side
    /// where it fails until the score falls inside.
    fn aspiration(&mut self, root: &Position, depth: u32, guess: i32) -> i32 {
        let mut delta = ASPIRATION;
        let (mut low, mut high) = (guess - delta, guess + delta);
        if is_mate(guess) {
            (low, high) = (-INFINITE, INFINITE);
        }
        loop {
            self.root_best = None;
            let score = self.negamax(root, depth, low, high, 0, self.history_floor);
            if self.aborted || (score > low && score < high) {
                return score;
            }
            delta *= 4;
            if score <= low {
                low = (score - delta).max(-INFINITE);
            } else {
                high = (score + delta).min(INFINITE);
            }
        }
    }

    /// MTD(f): null-window searches from `guess` until the bounds meet.
    fn mtdf(&mut self, root: &Position, depth: u32, guess: i32) -> i32 {
        let (mut low, mut high, mut g) = (-INFINITE, INFINITE, guess);
        let mut best = None;
        while low < high && !self.aborted {
            let beta = if g == low { g + 1 } else { g };
            self.root_best = None;
            g = self.negamax(root, depth, beta - 1, beta, 0, self.history_floor);
            if self.aborted {
                break;
            }
            if g < beta {
                high = g;
            } else {
                low = g;
                best = self.root_best.map(|(p, _)| (p, g));
            }
        }
        self.root_best = best;
        g
    }

    /// Counts a node and says whether the search must stop (a limit reached, now or
    /// before: a stopped search counts no more nodes, so a node limit is exact).
    fn enter_node(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        self.nodes += 1;
        self.check_limits()
    }

    /// Whether a limit has been reached; sets `aborted`.
    fn check_limits(&mut self) -> bool {
        if self.limits.nodes.is_some_and(|n| self.nodes >= n) {
            self.aborted = true;
        }
        if self.nodes.is_multiple_of(CHECK_EVERY) {
            let late = self
                .limits
                .movetime
                .is_some_and(|t| self.start.elapsed() >= t);
            if late || self.stop.load(MemOrder::Relaxed) {
                self.aborted = true;
            }
        }
        self.aborted
    }

    /// Whether `key` occurred on the path since `floor`.
    fn repeats(&self, key: u64, floor: usize) -> bool {
        self.path[floor.min(self.path.len())..]
            .iter()
            .rev()
            .any(|&k| k == key)
    }

    /// The score of a node at depth 0: a loss if the side to move is blocked (a
    /// draw on a full board the rules call drawn), otherwise the static evaluation ([`damped`] by the plies since the last
    /// removal, with damping on).
    fn leaf(&self, pos: &Position, ply: usize) -> i32 {
        if is_blocked(self.rules, pos) {
            from_value(pos.stuck_value(self.rules), ply)
        } else if self.damping {
            damped(self.eval.evaluate(self.rules, pos), self.quiet[ply])
        } else {
            self.eval.evaluate(self.rules, pos)
        }
    }

    /// The quiescence search: the static evaluation (standing pat), or better, a
    /// capturing ply followed by the same search, at most `left` plies deep. Only
    /// captures are searched, so no position can repeat.
    fn quiesce(&mut self, pos: &Position, mut alpha: i32, beta: i32, ply: usize, left: u32) -> i32 {
        let stand = self.leaf(pos, ply);
        if left == 0 || stand >= beta || is_mate(stand) || ply >= MAX_PLY - 1 {
            return stand;
        }
        let mut plies = std::mem::take(&mut self.plies[ply]);
        let mut scores = std::mem::take(&mut self.scores[ply]);
        plies.clear();
        pos.generate(self.rules, &mut plies);
        plies.retain(|p| p.removes());
        self.ordering
            .score(self.rules, pos, &plies, None, ply, &mut scores);
        let mut best = stand;
        alpha = alpha.max(stand);
        for i in 0..plies.len() {
            pick(&mut plies, &mut scores, i);
            let child = pos.after(self.rules, plies[i]);
            self.quiet[ply + 1] = 0;
            let score = -self.quiesce_child(&child, -beta, -alpha, ply + 1, left - 1);
            if self.aborted {
                break;
            }
            if score > best {
                best = score;
                alpha = alpha.max(score);
                if alpha >= beta {
                    break;
                }
            }
        }
        self.plies[ply] = plies;
        self.scores[ply] = scores;
        if self.aborted { DRAW } else { best }
    }

    /// A node of the quiescence search after a capture: lost below three stones,
    /// exact where the endgame covers it, else searched on.
    fn quiesce_child(
        &mut self,
        pos: &Position,
        alpha: i32,
        beta: i32,
        ply: usize,
        left: u32,
    ) -> i32 {
        if self.enter_node() {
            return DRAW;
        }
        if pos.lost_on_material() {
            return lost_at(ply);
        }
        if let Some(value) = self.endgame.and_then(|e| e.probe(pos)) {
            return from_value(value, ply);
        }
        self.quiesce(pos, alpha, beta, ply, left)
    }

    /// Negamax alpha-beta with principal-variation search. `floor` is the first
    /// path index whose positions the children could repeat.
    fn negamax(
        &mut self,
        pos: &Position,
        depth: u32,
        alpha: i32,
        beta: i32,
        ply: usize,
        floor: usize,
    ) -> i32 {
        self.pv[ply].clear();
        if self.enter_node() {
            return DRAW;
        }
        if pos.lost_on_material() {
            return lost_at(ply);
        }
        let key = self.zobrist.key(pos);
        if ply > 0 {
            if self.repeats(key, floor) {
                return DRAW;
            }
            if let Some(value) = self.endgame.and_then(|e| e.probe(pos)) {
                return from_value(value, ply);
            }
        }
        if depth == 0 || ply >= MAX_PLY - 1 {
            return self.quiesce(pos, alpha, beta, ply, self.quiescence);
        }
        let hit = self.table.probe(key);
        if ply > 0
            && let Some(cut) = hit.and_then(|h| table_cutoff(h, depth, alpha, beta, ply))
        {
            return cut;
        }
        let mut plies = std::mem::take(&mut self.plies[ply]);
        let mut scores = std::mem::take(&mut self.scores[ply]);
        plies.clear();
        pos.generate(self.rules, &mut plies);
        if ply == 0
            && let Some(seed) = self.shuffle
        {
            shuffle(&mut plies, seed);
        }
        self.ordering.score(
            self.rules,
            pos,
            &plies,
            hit.and_then(|h| h.best),
            ply,
            &mut scores,
        );
        let score = self.search_plies(
            pos,
            &mut plies,
            &mut scores,
            depth,
            alpha,
            beta,
            ply,
            floor,
            key,
        );
        self.plies[ply] = plies;
        self.scores[ply] = scores;
        let Some((best, best_ply)) = score else {
            return if self.aborted {
                DRAW
            } else {
                from_value(pos.stuck_value(self.rules), ply)
            };
        };
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.table.store(
            key,
            Hit {
                best: best_ply,
                score: to_table(best, ply),
                depth: depth.min(255) as u8,
                bound,
            },
        );
        best
    }

    /// The loop over the plies of a node: `None` if there are none or the search
    /// was aborted, else the best score and ply.
    #[allow(clippy::too_many_arguments)]
    fn search_plies(
        &mut self,
        pos: &Position,
        plies: &mut [Ply],
        scores: &mut [i32],
        depth: u32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        floor: usize,
        key: u64,
    ) -> Option<(i32, Option<Ply>)> {
        if plies.is_empty() {
            return None;
        }
        self.path.push(key);
        let mut best = (-INFINITE, None);
        let holes = self.rules.mill_holes(pos.own(), pos.empty(self.rules));
        for i in 0..plies.len() {
            pick(plies, scores, i);
            let p = plies[i];
            let child = pos.after(self.rules, p);
            let child_floor = if p.is_reversible() {
                floor
            } else {
                self.path.len()
            };
            // At most one extension on a path: only while the path's plies and depth
            // still add up to the iteration's depth.
            let extend = self.threat_extension
                && ply as u32 + depth <= self.iteration
                && makes_threat(self.rules, &child, holes);
            let child_depth = depth - 1 + u32::from(extend);
            self.quiet[ply + 1] = if p.removes() { 0 } else { self.quiet[ply] + 1 };
            let search = |s: &mut Self, d: u32, a: i32, b: i32| {
                -s.negamax(&child, d, a, b, ply + 1, child_floor)
            };
            let mut reduce = if self.reductions && !extend && is_quiet(scores[i]) {
                reduction(depth, i)
            } else {
                0
            };
            // A ply that makes a new mill threat is searched in full.
            if reduce > 0
                && self.rules.mill_holes(child.opp(), child.empty(self.rules)) & !holes != 0
            {
                reduce = 0;
            }
            let score = if i == 0 {
                search(self, child_depth, -beta, -alpha)
            } else {
                // A late quiet ply is first searched less deep with a null window;
                // only if it seems to raise alpha is it searched again in full.
                let mut s = search(self, child_depth - reduce, -alpha - 1, -alpha);
                if reduce > 0 && s > alpha {
                    s = search(self, child_depth, -alpha - 1, -alpha);
                }
                if s > alpha && s < beta {
                    search(self, child_depth, -beta, -alpha)
                } else {
                    s
                }
            };
            if self.aborted {
                break;
            }
            if score > best.0 {
                best = (score, Some(p));
                if score > alpha {
                    alpha = score;
                    self.set_pv(ply, p);
                    if ply == 0 {
                        self.root_best = Some((p, score));
                    }
                    if alpha >= beta {
                        self.ordering.reward(pos.to_move, p, ply, depth);
                        break;
                    }
                }
            }
        }
        self.path.pop();
        (!self.aborted).then_some(best)
    }

    fn set_pv(&mut self, ply: usize, p: Ply) {
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line.clear();
        line.push(p);
        line.extend_from_slice(&tail[0]);
    }
}

/// The score a table entry proves for a node, if it settles the node.
fn table_cutoff(hit: Hit, depth: u32, alpha: i32, beta: i32, ply: usize) -> Option<i32> {
    let score = from_table(hit.score, ply);
    // A proven win (a lower bound beyond the mate bound) or a proven loss (an upper
    // bound below it) holds whatever the depth it was found at.
    let proven = match hit.bound {
        Bound::Exact => is_mate(score),
        Bound::Lower => score > MATE_BOUND,
        Bound::Upper => score < -MATE_BOUND,
    };
    if (hit.depth as u32) < depth && !proven {
        return None;
    }
    match hit.bound {
        Bound::Exact => Some(score),
        Bound::Lower if score >= beta => Some(score),
        Bound::Upper if score <= alpha => Some(score),
        _ => None,
    }
}

/// Plies less deep to search the `i`th ply (in search order) of a node `depth`
/// plies from the horizon first, if it is quiet: none for the first
/// [`REDUCE_AFTER`] plies or at shallow depths; one, or two for the latest plies
/// of deep nodes.
fn reduction(depth: u32, i: usize) -> u32 {
    if depth < REDUCE_FROM_DEPTH || i < REDUCE_AFTER {
        0
    } else if depth >= 6 && i >= 3 * REDUCE_AFTER {
        2
    } else {
        1
    }
}

/// Whether the ply that led to `child` made a double mill threat in placement: the
/// mover still has a stone in hand and open mills with at least two holes, one of
/// them new (not among the mover's `holes` before the ply), so that one blocking
/// stone cannot stop both.
fn makes_threat(rules: &Rules, child: &Position, holes: Bits) -> bool {
    let mover = child.to_move.other();
    let after = rules.mill_holes(child.opp(), child.empty(rules));
    child.hand[mover.index()] > 0 && after & !holes != 0 && after.count_ones() >= 2
}

/// Whether the side to move must slide but has nowhere to go.
fn is_blocked(rules: &Rules, pos: &Position) -> bool {
    let own = pos.own();
    pos.hand[pos.to_move.index()] == 0
        && !pos.pending_removal
        && !rules.flies(own.count_ones(), 0)
        && rules.cannot_slide(own, pos.empty(rules))
}

/// Shuffles `plies` repeatably for `seed` (Fisher-Yates).
fn shuffle(plies: &mut [Ply], seed: u64) {
    let mut rng = SplitMix(seed);
    for i in (1..plies.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        plies.swap(i, j);
    }
}
