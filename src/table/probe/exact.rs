//! Exact values: one look-up where the file stores the true value, and where it
//! does not (value don't-cares, loss-only depths) the reconstruction through the
//! capturing or winning plies.

use super::{Kind, ProbeError, Tablebase};
use crate::rules::Bits;
use crate::rules::position::Position;
use crate::rules::value::{Value, Wdl};
use crate::table::format::{FormatError, SubspaceFile};
use crate::table::sector::Sector;

impl Tablebase {
    /// The value of the moving-phase position with `own` for the side to move and
    /// `opp` for the opponent (disjoint, at most nine stones each). The fast path for
    /// engines: no check beyond that. A side to move with fewer than three stones has
    /// `Loss(0)`; an opponent with fewer than three is [`ProbeError::GameOver`].
    pub fn probe_sets(&self, own: Bits, opp: Bits) -> Result<Value, ProbeError> {
        match self.check_sets(own, opp)? {
            None => Ok(Value::Loss(0)),
            Some((k, l)) => {
                let file = self.file(k, l)?;
                let pos = Position::moving(crate::Color::White, own, opp);
                self.value_at(file, self.index.index(own, opp), &pos)
            }
        }
    }

    /// The value of a valid position with no removal pending whose side to move is
    /// alive: one look-up in its sector's file (either phase); in a file with value
    /// don't-cares, the better of the stored value and the capturing plies' values.
    pub(super) fn stored(&self, pos: &Position) -> Result<Value, ProbeError> {
        self.value_in(self.sector_file(Sector::of(pos))?, pos)
    }

    /// The value of `pos` (a valid position with no removal pending whose side to
    /// move is alive) as `file`, a file of its sector, gives it: the stored value,
    /// or in a file with value don't-cares ([`SubspaceFile::value_dont_cares`]) the
    /// better of it and the capturing plies' values, read from this tablebase.
    /// `millbase repack` checks a new file with it before the file takes its name.
    pub(crate) fn value_in(
        &self,
        file: &SubspaceFile,
        pos: &Position,
    ) -> Result<Value, ProbeError> {
        self.value_at(file, self.index.index(pos.own(), pos.opp()), pos)
    }

    /// [`Tablebase::value_in`] of `pos`, whose slot in `file` is `slot`.
    pub(super) fn value_at(
        &self,
        file: &SubspaceFile,
        slot: u64,
        pos: &Position,
    ) -> Result<Value, ProbeError> {
        if let Some(v) = self.won_by_lookahead(file, slot, || *pos)? {
            return Ok(v);
        }
        let stored = file.value(slot)?;
        if file.value_is_exact(stored) {
            return Ok(stored);
        }
        self.true_value(pos, stored)
    }

    /// The true value of `pos` (no removal pending, side to move alive) whose slot
    /// stores `stored` in a file with value don't-cares: the better of `stored` and
    /// the values of its capturing plies, which lead into smaller sectors, read from
    /// this tablebase (`millbase verify` applies the rule with it).
    pub(crate) fn true_value(&self, pos: &Position, stored: Value) -> Result<Value, ProbeError> {
        if stored == Value::Win(1) {
            return Ok(stored);
        }
        Ok(self
            .raise_by_captures(pos, stored, None)?
            .expect("an unbounded search always has a value"))
    }

    /// The better of `floor` and the values of `pos`'s capturing plies, if that is
    /// worse than `bound` (`None`: no bound); `None` as soon as it is known not to be.
    /// The bound prunes like alpha-beta: a capture is looked at only for a child
    /// value that would beat the best so far, and a child in a file with value
    /// don't-cares raises its own stored value only while it stays below that.
    ///
    /// The children's stored results are read first, their memory reads
    /// overlapped ([`Tablebase::read_children`]), and the children valued most
    /// promising first: a child's stored result is no better than its true one,
    /// so the ply's result is at most the one it stores, and the children that
    /// store a loss (plies that may win) come first.
    #[cold]
    fn raise_by_captures(
        &self,
        pos: &Position,
        floor: Value,
        bound: Option<Value>,
    ) -> Result<Option<Value>, ProbeError> {
        let below = |v: Value| bound.is_none_or(|b| v.cmp_goodness(b).is_lt());
        if !below(floor) {
            return Ok(None);
        }
        if floor == Value::Win(1) {
            return Ok(Some(floor));
        }
        let Some(mut children) = self.read_children(pos, true)? else {
            // A capture ends the game.
            return Ok(below(Value::Win(1)).then_some(Value::Win(1)));
        };
        children.sort_by_key(|c| c.stored);
        let mut best = floor;
        for c in children {
            if best == Value::Win(1) {
                break;
            }
            if Wdl::of_ply(Some(c.stored)) < best.wdl() {
                continue;
            }
            // `parent` reverses the order: the ply beats `best` exactly when the
            // child's value is worse than the value `best` is the parent of
            // (every child value beats `Loss(0)`).
            let child_bound = tied_child(best);
            let found = match c.at {
                Some((file, slot)) => self.value_below_at(file, slot, &c.pos, child_bound)?,
                None => self.value_below(&c.pos, child_bound)?,
            };
            let Some(child) = found else {
                continue;
            };
            let v = child.parent();
            if v.cmp_goodness(best).is_gt() {
                best = v;
                if !below(best) {
                    return Ok(None);
                }
            }
        }
        Ok(Some(best))
    }

    /// The value of `pos` (no removal pending, side to move alive) if it is worse
    /// than `bound`, else `None`, looking at capturing plies only where its file
    /// has value don't-cares and the stored value is below the bound.
    fn value_below(
        &self,
        pos: &Position,
        bound: Option<Value>,
    ) -> Result<Option<Value>, ProbeError> {
        let file = self.sector_file(Sector::of(pos))?;
        let slot = self.index.index(pos.own(), pos.opp());
        self.value_below_at(file, slot, pos, bound)
    }

    /// [`Tablebase::value_below`] of `pos`, whose slot in `file` is `slot`.
    pub(super) fn value_below_at(
        &self,
        file: &SubspaceFile,
        slot: u64,
        pos: &Position,
        bound: Option<Value>,
    ) -> Result<Option<Value>, ProbeError> {
        // A stored result better than the bound's is above it whatever the distance:
        // the depth block is not read.
        if bound.is_some_and(|b| file.wdl(slot).is_ok_and(|w| w > b.wdl())) {
            return Ok(None);
        }
        let under = |v: Value| bound.is_none_or(|b| v.cmp_goodness(b).is_lt());
        if let Some(v) = self.won_by_lookahead(file, slot, || *pos)? {
            return Ok(under(v).then_some(v));
        }
        let stored = file.value(slot)?;
        if !under(stored) {
            return Ok(None);
        }
        if file.value_is_exact(stored) {
            return Ok(Some(stored));
        }
        self.raise_by_captures(pos, stored, bound)
    }

    /// In a file with loss-only depths ([`SubspaceFile::loss_depths`]), the exact
    /// value of slot `slot` if it stores a win (`pos()` is its position); `None`
    /// for any other slot or file. A stored win is a true win (a don't-care never
    /// stores a result better than the truth).
    #[inline]
    fn won_by_lookahead(
        &self,
        file: &SubspaceFile,
        slot: u64,
        pos: impl FnOnce() -> Position,
    ) -> Result<Option<Value>, ProbeError> {
        if !file.loss_depths() || file.wdl(slot)? != Wdl::Win {
            return Ok(None);
        }
        self.win_distance(file, &pos()).map(Some)
    }

    /// The value of `pos`, a won position: the fastest of its winning plies (a
    /// ply that ends the game, `Win(1)`, or one into a lost position, one ply more
    /// than that position's distance). Only lost children's values are read, and a
    /// lost slot's distance is stored, so this looks one ply ahead and no further
    /// (beyond the capturing plies of a child with don't-cares). `file` names the
    /// file to blame if no ply wins.
    ///
    /// Every child's stored result is read first, the reads overlapped
    /// ([`Tablebase::read_children`]). A child that stores a draw or a win is not
    /// lost (nothing stored is better than the truth), so only the children that
    /// store a loss are read further, the shortest stored loss first: a stored
    /// `Loss(m)` bounds the child's true value from below, so once a child is
    /// known to be lost in `m`, no child that stores a longer loss can give a
    /// faster win, and each capture look-ahead is bounded by the best win found.
    #[cold]
    pub(crate) fn win_distance(
        &self,
        file: &SubspaceFile,
        pos: &Position,
    ) -> Result<Value, ProbeError> {
        let Some(children) = self.read_children(pos, false)? else {
            return Ok(Value::Win(1));
        };
        let mut lost = Vec::new();
        for c in children.into_iter().filter(|c| c.stored == Wdl::Loss) {
            let (stored, exact) = match c.at {
                Some((file, slot)) => {
                    let stored = file.value(slot)?;
                    (stored, file.value_is_exact(stored))
                }
                // A derived sector's or an unopened file's: exact, or the error.
                None => (self.stored(&c.pos)?, true),
            };
            lost.push((stored, exact, c.pos));
        }
        lost.sort_by(|a, b| a.0.cmp_goodness(b.0));
        let mut best: Option<Value> = None;
        for (stored, exact, child) in lost {
            // The child's value that would tie the best win so far (a draw before
            // any: the child must stay lost).
            let tie = best
                .map_or(Some(Value::Draw), tied_child)
                .expect("a win has a child");
            if stored.cmp_goodness(tie).is_ge() {
                break;
            }
            let value = if exact {
                Some(stored)
            } else {
                self.raise_by_captures(&child, stored, Some(tie))?
            };
            if let Some(v) = value {
                best = Some(v.parent());
            }
        }
        best.ok_or_else(|| {
            ProbeError::Format(FormatError::Corrupt {
                path: file.path().to_path_buf(),
                what: format!(
                    "it stores a win for {}, but no ply of it wins",
                    crate::rules::fen::format(self.rules, pos, Default::default())
                ),
            })
        })
    }

    /// The value of playing into `child` (a position after a legal ply), for the
    /// side that played: `Win(1)` if it left the opponent fewer than three stones,
    /// otherwise the child's value one ply earlier ([`Value::parent`]). The one
    /// rule is [`crate::rules::value::ply_value`].
    pub fn ply_value(&self, child: &Position) -> Result<Value, ProbeError> {
        crate::rules::value::ply_value(child, |c| self.stored(c))
    }

    /// The exact value of a position of either phase for the side to move: one
    /// look-up in its sector's file.
    ///
    /// A side to move with fewer than three stones, or with no legal move, has
    /// `Loss(0)`. A position with a removal pending (a mill just closed) is valued
    /// through its removals. Errors: the sector's file is missing or damaged (a
    /// placement position in a directory without placement sectors is
    /// [`ProbeError::Missing`]), the position is illegal, or already decided (the
    /// opponent has fewer than three stones).
    pub fn probe(&self, pos: &Position) -> Result<Value, ProbeError> {
        match self.classify(pos)? {
            Kind::Lost => Ok(Value::Loss(0)),
            Kind::Stored => self.stored(pos),
            Kind::Removal => Ok(self.moves(pos)?.first().map_or(Value::Loss(0), |m| m.1)),
        }
    }
}

/// The child value whose [`Value::parent`] is `v` (a ply into a position worse
/// than it beats `v`); `None` for `Loss(0)`, which every ply beats.
fn tied_child(v: Value) -> Option<Value> {
    match v {
        Value::Loss(0) => None,
        Value::Loss(n) => Some(Value::Win(n - 1)),
        Value::Win(n) => Some(Value::Loss(n - 1)),
        Value::Draw => Some(Value::Draw),
    }
}
