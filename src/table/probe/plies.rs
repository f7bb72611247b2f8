//! The plies of a position with their values or results, best first, and a best
//! ply (the first, or one chosen at random among the equals).

use super::{Kind, ProbeError, Tablebase};
use crate::mix::{below, splitmix64};
use crate::rules::position::{Ply, Position};
use crate::rules::value::{Value, Wdl, ranked_plies};

impl Tablebase {
    /// Every legal ply of a position of either phase with its exact value for the side
    /// that plays it, best first: fastest win, then draws, then slowest loss; plies
    /// of equal value in the order of [`Position::legal_plies`]. A ply that leaves
    /// the opponent two stones is `Win(1)`; otherwise the value is the successor's
    /// value seen one ply earlier ([`Value::parent`]). Empty when the side to move
    /// has lost (fewer than three stones or no legal ply).
    pub fn moves(&self, pos: &Position) -> Result<Vec<(Ply, Value)>, ProbeError> {
        if let Kind::Lost = self.classify(pos)? {
            return Ok(Vec::new());
        }
        ranked_plies(self.rules, pos, |c| self.stored(c))
    }

    /// Every legal ply of a position of either phase with its win, draw or loss for
    /// the side that plays it, best first (wins, draws, losses; equals in the order
    /// of [`Position::legal_plies`]). Reads no depth data, so it works on a WDL-only
    /// directory (`millbase pack --wdl-only`), where [`Tablebase::moves`] fails.
    pub fn moves_wdl(&self, pos: &Position) -> Result<Vec<(Ply, Wdl)>, ProbeError> {
        if let Kind::Lost = self.classify(pos)? {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for ply in pos.legal_plies(self.rules) {
            out.push((ply, self.ply_wdl(&pos.after(self.rules, ply))?));
        }
        // A stable sort keeps equal results in generation order.
        out.sort_by_key(|m| std::cmp::Reverse(m.1));
        Ok(out)
    }

    /// A best ply and its value, the first of [`Tablebase::moves`]; `None` when the
    /// side to move has no legal ply (it has lost).
    ///
    /// Reads the win/draw/loss of every ply first and depth data only for the plies
    /// of the best result (one when it is a draw): in a large sector most children
    /// lie in different blocks, and a depth block is the larger read. On a WDL-only
    /// file it fails as [`Tablebase::moves`] does.
    pub fn best_ply(&self, pos: &Position) -> Result<Option<(Ply, Value)>, ProbeError> {
        if self.wdl_only() {
            // The first of `moves`, which says this directory has no distances.
            return Ok(self.moves(pos)?.into_iter().next());
        }
        if let Kind::Lost = self.classify(pos)? {
            return Ok(None);
        }
        let rules = self.rules;
        let mut plies = Vec::new();
        for ply in pos.legal_plies(rules) {
            let child = pos.after(rules, ply);
            let ended = child.lost_on_material();
            let wdl = Wdl::of_ply(if ended {
                None
            } else {
                Some(self.stored_wdl(&child)?)
            });
            plies.push((ply, child, wdl));
        }
        let Some(top) = plies.iter().map(|p| p.2).max() else {
            return Ok(None);
        };
        let mut best: Option<(Ply, Value)> = None;
        for (ply, child, _) in plies.iter().filter(|p| p.2 == top) {
            if top == Wdl::Draw {
                // One full read (a draw) keeps a WDL-only file's error, as `moves`.
                return Ok(Some((*ply, self.ply_value(child)?)));
            }
            let v = self.ply_value(child)?;
            // Strictly better only: the first of equal values, as in `moves`.
            if best.is_none_or(|(_, b)| v.cmp_goodness(b).is_gt()) {
                best = Some((*ply, v));
            }
        }
        Ok(best)
    }

    /// A best ply chosen uniformly at random among all plies of the best value,
    /// reproducibly from `seed`; `None` when the side to move has no legal ply.
    pub fn best_ply_random(
        &self,
        pos: &Position,
        seed: u64,
    ) -> Result<Option<(Ply, Value)>, ProbeError> {
        let moves = self.moves(pos)?;
        let Some(&(_, best)) = moves.first() else {
            return Ok(None);
        };
        let ties = moves.iter().take_while(|m| m.1 == best).count() as u64;
        let pick = below(splitmix64(seed), ties) as usize;
        Ok(Some(moves[pick]))
    }
}
