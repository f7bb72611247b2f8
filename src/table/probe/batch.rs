//! Many positions' capturing plies at once: whether each reaches a value, the
//! question the fill of value don't-cares asks of every slot of a sector
//! ([`crate::table::pack::dontcare`]). The children of a batch of positions are
//! located and their bytes fetched before any is read, so that their waits for
//! main memory overlap across positions (one after another, each look-up waited
//! for its own), and a child whose stored result already rules the ply out is
//! not valued further.

use super::{ProbeError, Tablebase};
use crate::rules::position::Position;
use crate::rules::value::{Value, Wdl};
use crate::table::format::SubspaceFile;
use crate::table::sector::Sector;

/// Positions a batch locates before it reads any: their children's memory reads
/// overlap, and the lines fetched stay in the processor's caches until read.
const BATCH: usize = 64;

/// A child of a position of the batch, on its way to be read.
struct Pending<'a> {
    /// The number of the position it is a child of, in the batch.
    of: usize,
    /// The position after the capturing ply.
    pos: Position,
    /// Its file and slot; `None` where its sector is derived or its file could
    /// not be opened (valued the slow way, which reports that).
    at: Option<(&'a SubspaceFile, u64)>,
}

impl Tablebase {
    /// For each `(pos, target)` of `items` (valid positions with no removal
    /// pending whose side to move is alive), whether a capturing ply of `pos` is
    /// worth `target` or better for the side to move: a ply that ends the game,
    /// or one into a child whose value, one ply earlier ([`Value::parent`]), is
    /// that good. The same answer as valuing each capturing ply by
    /// [`Tablebase::ply_value`] until one is good enough, found with fewer waits:
    /// the children of [`BATCH`] positions are located and their stored results'
    /// bytes fetched first, and a child whose stored result bounds the ply below
    /// the target (a stored result is no better than the true one) is not valued.
    pub(crate) fn captures_reach(
        &self,
        items: &[(Position, Value)],
    ) -> Result<Vec<bool>, ProbeError> {
        let mut out = Vec::with_capacity(items.len());
        let guard = crate::table::format::cache::pin();
        let mut children = Vec::new();
        let mut slots = Vec::new();
        let mut pending = Vec::new();
        for batch in items.chunks(BATCH) {
            let first = out.len();
            out.extend(std::iter::repeat_n(false, batch.len()));
            let reached = &mut out[first..];
            children.clear();
            self.locate_children(batch, reached, &mut children);
            // The children's slots, their classes' entries fetched above; each
            // slot's block entry fetched.
            slots.clear();
            for c in &children {
                let slot = c.at.map(|(file, _)| {
                    let slot = self.index.index(c.pos.own(), c.pos.opp());
                    file.prefetch_wdl(slot);
                    slot
                });
                slots.push(slot);
            }
            // Each slot's byte fetched (its block decompressed if not held).
            pending.clear();
            for (c, slot) in children.iter_mut().zip(&slots) {
                match (c.at.as_mut(), slot) {
                    (Some((file, at)), Some(slot)) => {
                        *at = *slot;
                        pending.push(Some(file.pending_wdl(*slot, &guard)?));
                    }
                    _ => pending.push(None),
                }
            }
            // Valued in order, each position's children until one reaches.
            for (c, p) in children.iter().zip(&pending) {
                if reached[c.of] {
                    continue;
                }
                let target = batch[c.of].1;
                reached[c.of] = match (c.at, p) {
                    (Some((file, slot)), Some(p)) => {
                        // The ply is worth at most the result its child stores
                        // makes it.
                        if Wdl::of_ply(Some(p.get()?)) < target.wdl() {
                            continue;
                        }
                        match worse_child(target) {
                            // Valued only as far as the bound: a capture search
                            // of a child with don't-cares stops there.
                            Some(bound) => {
                                self.value_below_at(file, slot, &c.pos, bound)?.is_some()
                            }
                            None => reaches(self.value_at(file, slot, &c.pos)?, target),
                        }
                    }
                    _ => reaches(self.stored(&c.pos)?, target),
                };
            }
        }
        Ok(out)
    }

    /// The children of `batch`'s positions after their capturing plies, into
    /// `out` with their files, their classes' look-up entries fetched; a
    /// position with a ply that ends the game is `reached` at once (`Win(1)` is
    /// as good as any target) and its children are not listed.
    fn locate_children<'a>(
        &'a self,
        batch: &[(Position, Value)],
        reached: &mut [bool],
        out: &mut Vec<Pending<'a>>,
    ) {
        let rules = self.rules;
        let mut last: Option<(Sector, Option<&SubspaceFile>)> = None;
        for (of, (pos, target)) in batch.iter().enumerate() {
            let start = out.len();
            for ply in pos.legal_plies(rules) {
                if !ply.removes() {
                    continue;
                }
                let child = pos.after(rules, ply);
                if child.lost_on_material() {
                    reached[of] = true;
                    out.truncate(start);
                    break;
                }
                if *target == Value::Loss(0) {
                    // Every ply is worth that much.
                    reached[of] = true;
                    out.truncate(start);
                    break;
                }
                let sector = Sector::of(&child);
                let file = match last {
                    Some((s, file)) if s == sector => file,
                    _ => last.insert((sector, self.stored_file(sector))).1,
                };
                if file.is_some() {
                    self.index.prefetch_canon(child.own());
                }
                out.push(Pending {
                    of,
                    pos: child,
                    at: file.map(|f| (f, 0)),
                });
            }
        }
    }
}

/// Whether a ply into a child of value `child` is worth `target` or better.
fn reaches(child: Value, target: Value) -> bool {
    child.parent().cmp_goodness(target).is_ge()
}

/// For a decisive `target`, the child values that a ply worth `target` or better
/// leads into are exactly those worse than the bound returned
/// ([`Tablebase::value_below_at`]'s question; `None` there: no bound, every
/// child). `None` for a draw (valued exactly instead).
///
/// A ply into `Loss(m)` is worth `Win(m + 1)`, at least `Win(n)` when `m < n`:
/// the children worse than `Loss(n)`. A ply into `Win(m)` is worth
/// `Loss(m + 1)`, at least `Loss(n)` when `m > n - 2`, and a ply into a draw or
/// a loss more: the children worse than `Win(n - 2)` (every child where `n < 2`).
/// A bound need not be a value a position can have (distances of wins are odd,
/// of losses even): it is only compared with.
fn worse_child(target: Value) -> Option<Option<Value>> {
    match target {
        Value::Win(n) => Some(Some(Value::Loss(n))),
        Value::Loss(n) => Some(n.checked_sub(2).map(Value::Win)),
        Value::Draw => None,
    }
}
