//! Move ordering: the hash move first, then plies that close a mill (removing the
//! most dangerous stone first), plies that block an opponent mill, the two killer
//! plies of the node's depth, the history heuristic, and last the degree of the
//! destination point.

use crate::rules::position::{Color, NONE, Ply, Position};
use crate::rules::{Bits, Rules};

/// Maximum search ply (depth from the root) the tables provide for.
pub const MAX_PLY: usize = 128;

const HASH: i32 = 1 << 30;
const CAPTURE: i32 = 1 << 26;
const BLOCK: i32 = 1 << 25;
const KILLER: [i32; 2] = [1 << 24, (1 << 24) - 1];
/// History scores stay below the killers.
const HISTORY_MAX: i32 = 1 << 22;
/// Index for "no point" (placements, lone removals) in the history table.
const SLOTS: usize = 33;

/// Killer plies per ply and the history table per side, kept between nodes.
pub struct Ordering {
    killers: Vec<[Option<Ply>; 2]>,
    history: Vec<i32>,
}

impl Default for Ordering {
    fn default() -> Self {
        Ordering {
            killers: vec![[None; 2]; MAX_PLY + 1],
            history: vec![0; 2 * SLOTS * SLOTS],
        }
    }
}

fn slot(point: u8) -> usize {
    if point == NONE {
        SLOTS - 1
    } else {
        (point as usize).min(SLOTS - 2)
    }
}

fn history_index(side: Color, ply: Ply) -> usize {
    let to = if ply.to == NONE { ply.remove } else { ply.to };
    (side.index() * SLOTS + slot(ply.from)) * SLOTS + slot(to)
}

impl Ordering {
    /// Forgets killers and halves history, at the start of a search.
    pub fn new_search(&mut self) {
        self.killers.fill([None; 2]);
        self.history.iter_mut().for_each(|h| *h /= 2);
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        *self = Ordering::default();
    }

    /// Records a quiet ply that caused a beta cutoff at `ply` with `depth` to go.
    pub fn reward(&mut self, side: Color, ply: Ply, at: usize, depth: u32) {
        if ply.removes() {
            return;
        }
        let killers = &mut self.killers[at.min(MAX_PLY)];
        if killers[0] != Some(ply) {
            killers[1] = killers[0];
            killers[0] = Some(ply);
        }
        let h = &mut self.history[history_index(side, ply)];
        *h += (depth * depth) as i32;
        if *h > HISTORY_MAX {
            self.history.iter_mut().for_each(|h| *h /= 2);
        }
    }

    /// Scores `plies` for ordering (higher first) into `scores`.
    pub fn score(
        &self,
        rules: &Rules,
        pos: &Position,
        plies: &[Ply],
        hash: Option<Ply>,
        at: usize,
        scores: &mut Vec<i32>,
    ) {
        let empty = pos.empty(rules);
        let (own, opp) = (pos.own(), pos.opp());
        let their_holes = rules.mill_holes(opp, empty);
        let their_twos = rules.open_mill_stones(opp, empty);
        let killers = self.killers[at.min(MAX_PLY)];
        scores.clear();
        scores.extend(plies.iter().map(|&ply| {
            if Some(ply) == hash {
                return HASH;
            }
            let mut s = 0;
            if ply.removes() {
                s += CAPTURE + removal_value(rules, ply.remove, their_twos);
            }
            if ply.to != NONE {
                if their_holes >> ply.to & 1 == 1 {
                    s += BLOCK;
                }
                s += rules.adjacency[ply.to as usize].count_ones() as i32;
                if ply.from != NONE && own >> ply.from & 1 == 1 && leaves_hole(rules, own, ply) {
                    s += 2;
                }
            }
            if let Some(k) = killers.iter().position(|&k| k == Some(ply)) {
                s += KILLER[k];
            }
            s + self.history[history_index(pos.to_move, ply)].min(HISTORY_MAX)
        }));
    }
}

/// How much removing the stone on `at` hurts the opponent: stones of open mills first.
fn removal_value(rules: &Rules, at: u8, twos: Bits) -> i32 {
    ((twos >> at & 1) as i32) * 64 + rules.adjacency[at as usize].count_ones() as i32
}

/// Whether a move leaves a closed mill (opening it to close it again later).
fn leaves_hole(rules: &Rules, own: Bits, ply: Ply) -> bool {
    rules.closes_mill(own, ply.from)
}

/// Whether a ply scored `score` by [`Ordering::score`] is quiet: no hash ply, no
/// capture, no block of an opponent mill and no killer, only history and the
/// point's degree put it where it is (a candidate for a reduced search).
pub fn is_quiet(score: i32) -> bool {
    score < KILLER[1]
}

/// Moves the highest-scored ply of `plies[from..]` to `from` (lazy selection sort).
pub fn pick(plies: &mut [Ply], scores: &mut [i32], from: usize) {
    let best = (from..plies.len())
        .max_by_key(|&i| (scores[i], std::cmp::Reverse(i)))
        .unwrap_or(from);
    plies.swap(from, best);
    scores.swap(from, best);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Game;

    #[test]
    fn hash_then_capture_then_block() {
        let r = Rules::standard();
        // White can close a1-a4-a7 by placing on a7; Black threatens d7-g7 via... none.
        let g = Game::parse(r, "startpos moves a1 g7 a4 g4").unwrap();
        let pos = *g.position();
        let mut plies = pos.legal_plies(r);
        let mut scores = Vec::new();
        let o = Ordering::default();
        o.score(r, &pos, &plies, None, 0, &mut scores);
        pick(&mut plies, &mut scores, 0);
        assert!(plies[0].removes(), "a mill-closing ply comes first");
        let quiet: Vec<Ply> = pos
            .legal_plies(r)
            .into_iter()
            .filter(|p| !p.removes())
            .collect();
        let mut q = quiet.clone();
        o.score(r, &pos, &q, None, 0, &mut scores);
        pick(&mut q, &mut scores, 0);
        assert_eq!(
            r.name(q[0].to),
            "g1",
            "blocking Black's g-file mill comes first among quiet plies"
        );
        o.score(r, &pos, &quiet, Some(quiet[5]), 0, &mut scores);
        let mut q = quiet.clone();
        pick(&mut q, &mut scores, 0);
        assert_eq!(q[0], quiet[5]);
    }
}
