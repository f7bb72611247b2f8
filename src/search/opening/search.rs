//! One alpha-beta search of a placement position: negamax over the placement phase,
//! leaves probed in the databases, the table and the saved values consulted.

use super::key::canonical_key;
use super::saved::Saved;
use super::table::{Bound, Entry, Table};
use crate::rules::Rules;
use crate::rules::position::{NONE, Phase, Ply, Position};
use crate::rules::value::Value;
use crate::search::score::{INFINITE, from_value, value_at};
use crate::table::probe::{ProbeError, Tablebase};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// How leaves of a missing subspace are valued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MissingAs {
    /// An error: the caller wants an exact value.
    Error,
    /// `Win(1)` for the side to move at the leaf.
    Win,
    /// `Loss(0)` for the side to move at the leaf.
    Loss,
}

/// One search: shared, read-only state and counters.
pub(super) struct Search<'s> {
    pub(super) tb: &'s Tablebase,
    pub(super) rules: &'static Rules,
    pub(super) saved: &'s Saved,
    pub(super) table: &'s Table,
    pub(super) inverse: &'s [Vec<u8>],
    pub(super) mode: MissingAs,
    pub(super) parallel: bool,
    pub(super) nodes: AtomicU64,
    pub(super) probes: AtomicU64,
    pub(super) missing: [AtomicU64; 2],
    /// Positions this search may visit.
    pub(super) node_limit: u64,
    /// When it must stop.
    pub(super) deadline: Option<Instant>,
}

/// Why a search stopped without a value.
pub(super) enum Stop {
    /// A probe failed.
    Probe(ProbeError),
    /// The [`super::SearchLimit`] was reached.
    Limit,
}

impl From<ProbeError> for Stop {
    fn from(e: ProbeError) -> Self {
        Stop::Probe(e)
    }
}

/// How often (in positions) the search looks at the clock.
pub(super) const CLOCK_EVERY: u64 = 1024;

impl Search<'_> {
    /// Counts a position; `Err` once the limit is reached.
    pub(super) fn count_node(&self) -> Result<(), Stop> {
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
    pub(super) fn root_search(
        &self,
        pos: &Position,
        alpha: i32,
        beta: i32,
    ) -> Result<(i32, Option<Ply>), Stop> {
        let plies = self.ordered(pos, None);
        let Some((&first, rest)) = plies.split_first() else {
            return Ok((from_value(pos.stuck_value(self.rules), 0), None));
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
    pub(super) fn child_score(
        &self,
        pos: &Position,
        ply: Ply,
        d: i32,
        alpha: i32,
        beta: i32,
    ) -> Result<i32, Stop> {
        let child = pos.after(self.rules, ply);
        if child.lost_on_material() {
            return Ok(from_value(Value::Win(1), d as usize));
        }
        Ok(-self.negamax(&child, d + 1, -beta, -alpha)?)
    }

    /// Fail-soft negamax: exact inside (alpha, beta), a bound outside.
    pub(super) fn negamax(
        &self,
        pos: &Position,
        d: i32,
        alpha: i32,
        beta: i32,
    ) -> Result<i32, Stop> {
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
            return Ok(from_value(pos.stuck_value(self.rules), d as usize));
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
    pub(super) fn leaf(&self, pos: &Position) -> Result<Value, ProbeError> {
        let (own, opp) = (pos.own(), pos.opp());
        let k = own.count_ones();
        let empty = self.rules.all() & !(own | opp);
        if k < 3 {
            return Ok(Value::Loss(0));
        }
        if !self.rules.flies(k, 0) && self.rules.cannot_slide(own, empty) {
            return Ok(Value::stuck(self.rules, empty));
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

    pub(super) fn note_missing(&self, k: u32, l: u32) {
        let bit = k * 10 + l;
        let word = &self.missing[(bit / 64) as usize];
        let mask = 1u64 << (bit % 64);
        if word.load(Ordering::Relaxed) & mask == 0 {
            word.fetch_or(mask, Ordering::Relaxed);
        }
    }

    pub(super) fn missing_list(&self) -> Vec<(u32, u32)> {
        (0..100u32)
            .filter(|&b| {
                self.missing[(b / 64) as usize].load(Ordering::Relaxed) >> (b % 64) & 1 == 1
            })
            .map(|b| (b / 10, b % 10))
            .collect()
    }

    /// The legal plies, the table's hint first, then mills, blocks, point degree.
    pub(super) fn ordered(&self, pos: &Position, hint: Option<Ply>) -> Vec<Ply> {
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
    pub(super) fn encode_ply(&self, ply: Ply, sym: usize) -> u16 {
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
    pub(super) fn decode_ply(&self, packed: u16, sym: usize) -> Ply {
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
