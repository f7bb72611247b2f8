//! Game values: `Win(n)`, `Loss(n)`, `Draw`, from the side to move's point of view,
//! with `n` the number of plies to the end of the game under best play (RULES.md).
//!
//! A value packs into a `u16` *code*: `0` is a draw, otherwise `n + 1`. The side to
//! move wins in `n` plies only if it plays the last ply, so `n` is odd for a win and
//! even for a loss: the parity of the distance says which, and no bit is spent on it.

use crate::rules::position::{Ply, Position};
use crate::rules::{Bits, Rules};
use std::cmp::Ordering;
use std::fmt;

/// The exact value of a position for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// The side to move wins; the game ends after this many plies (odd).
    Win(u16),
    /// The side to move loses; the game ends after this many plies (even).
    Loss(u16),
    /// Neither side can force a win.
    Draw,
}

/// Win, draw or loss without distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Wdl {
    /// The side to move loses.
    Loss,
    /// Neither side can force a win.
    Draw,
    /// The side to move wins.
    Win,
}

impl Wdl {
    /// [`Value::of_ply`] without distances: `Win` for a ply that ended the game
    /// (`None`), otherwise the child's result seen by the side that played.
    pub fn of_ply(child: Option<Wdl>) -> Wdl {
        match child {
            None | Some(Wdl::Loss) => Wdl::Win,
            Some(Wdl::Draw) => Wdl::Draw,
            Some(Wdl::Win) => Wdl::Loss,
        }
    }
}

impl Value {
    /// The value of a position whose side to move (with three stones or more) has
    /// no legal ply, `empty` its empty points: `Loss(0)`, or a draw on a full board
    /// the rules call drawn ([`Rules::stuck_draws`]).
    #[inline]
    pub fn stuck(rules: &Rules, empty: Bits) -> Value {
        if rules.stuck_draws(empty) {
            Value::Draw
        } else {
            Value::Loss(0)
        }
    }
}

impl Position {
    /// The value of this position if its side to move has no legal ply:
    /// [`Value::stuck`] of its empty points (`Loss(0)`, or a draw on a full board
    /// under [`FullBoard::Draw`](crate::rules::FullBoard::Draw)). Meaningful only
    /// for a position without a legal ply whose side to move is not
    /// [`Position::lost_on_material`]. (Here rather than beside `Position`, so
    /// that positions do not depend on values.)
    #[inline]
    pub fn stuck_value(&self, rules: &Rules) -> Value {
        Value::stuck(rules, self.empty(rules))
    }
}

impl Value {
    /// The code of this value: 0 for a draw, distance + 1 otherwise.
    pub fn code(self) -> u16 {
        match self {
            Value::Draw => 0,
            Value::Win(n) | Value::Loss(n) => n + 1,
        }
    }

    /// The value of a code (inverse of [`Value::code`]).
    pub fn from_code(code: u16) -> Value {
        match code {
            0 => Value::Draw,
            c if (c - 1) % 2 == 1 => Value::Win(c - 1),
            c => Value::Loss(c - 1),
        }
    }

    /// The value one ply earlier, for the side that played into this position.
    pub fn parent(self) -> Value {
        match self {
            Value::Draw => Value::Draw,
            Value::Loss(n) => Value::Win(n + 1),
            Value::Win(n) => Value::Loss(n + 1),
        }
    }

    /// The decided value at distance `n`: a win if `n` is odd, a loss if even.
    pub fn from_distance(n: u16) -> Value {
        if n % 2 == 1 {
            Value::Win(n)
        } else {
            Value::Loss(n)
        }
    }

    /// Win, draw or loss.
    pub fn wdl(self) -> Wdl {
        match self {
            Value::Win(_) => Wdl::Win,
            Value::Draw => Wdl::Draw,
            Value::Loss(_) => Wdl::Loss,
        }
    }

    /// Plies to the end of the game, `None` for a draw.
    pub fn distance(self) -> Option<u16> {
        match self {
            Value::Win(n) | Value::Loss(n) => Some(n),
            Value::Draw => None,
        }
    }

    /// A total order for the side to move: faster wins are better, then draws, then
    /// slower losses. `a.cmp_goodness(b) == Greater` means `a` is better.
    pub fn cmp_goodness(self, other: Value) -> Ordering {
        self.goodness().cmp(&other.goodness())
    }

    /// The value of a ply for the side that plays it, from the value of the position
    /// it leads to: `None` when the ply ended the game (it left the opponent fewer
    /// than three stones), which is `Win(1)`; otherwise that value one ply earlier
    /// ([`Value::parent`]). The rule every user of values applies through this
    /// function or [`ply_value`].
    pub fn of_ply(child: Option<Value>) -> Value {
        child.map_or(Value::Win(1), Value::parent)
    }

    fn goodness(self) -> i32 {
        match self {
            Value::Win(n) => 100_000 - n as i32,
            Value::Draw => 0,
            Value::Loss(n) => -100_000 + n as i32,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(n) => write!(f, "win in {n}"),
            Value::Loss(n) => write!(f, "loss in {n}"),
            Value::Draw => f.write_str("draw"),
        }
    }
}

impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Wdl::Win => "win",
            Wdl::Draw => "draw",
            Wdl::Loss => "loss",
        })
    }
}

/// The value of playing into `child` (the position after a legal ply) for the side
/// that played: [`Value::of_ply`], with `value` asked for the child's value only when
/// the game goes on.
pub fn ply_value<E>(
    child: &Position,
    value: impl FnOnce(&Position) -> Result<Value, E>,
) -> Result<Value, E> {
    let ended = child.lost_on_material();
    Ok(Value::of_ply(if ended {
        None
    } else {
        Some(value(child)?)
    }))
}

/// Every legal ply of `pos` with its value for the side that plays it
/// ([`ply_value`], children valued by `value`), best first by
/// [`Value::cmp_goodness`]: fastest win, then draws, then slowest loss; plies of equal
/// value in the order of [`Position::legal_plies`]. Empty when there is no legal ply.
pub fn ranked_plies<E>(
    rules: &Rules,
    pos: &Position,
    mut value: impl FnMut(&Position) -> Result<Value, E>,
) -> Result<Vec<(Ply, Value)>, E> {
    let mut out = Vec::new();
    for ply in pos.legal_plies(rules) {
        out.push((ply, ply_value(&pos.after(rules, ply), &mut value)?));
    }
    // A stable sort keeps equal values in generation order.
    out.sort_by(|a, b| b.1.cmp_goodness(a.1));
    Ok(out)
}

/// How many positions of a subspace are won, lost and drawn, and its longest win and
/// loss: what the builder counts, a file's header records ([`crate::table::format::Header`])
/// and the manifest lists ([`crate::table::dir::manifest::Entry`]). The builders count one
/// position per symmetry class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    /// Won positions.
    pub wins: u64,
    /// Lost positions.
    pub losses: u64,
    /// Drawn positions.
    pub draws: u64,
    /// The longest win in plies (0 if there is none).
    pub longest_win: u16,
    /// The longest loss in plies (0 if there is none).
    pub longest_loss: u16,
}

impl Counts {
    /// Counts one position of value `value`.
    pub fn add(&mut self, value: Value) {
        match value {
            Value::Win(n) => {
                self.wins += 1;
                self.longest_win = self.longest_win.max(n);
            }
            Value::Loss(n) => {
                self.losses += 1;
                self.longest_loss = self.longest_loss.max(n);
            }
            Value::Draw => self.draws += 1,
        }
    }

    /// The counts of every code in `codes` (see [`Value::code`]).
    pub fn of_codes(codes: &[u16]) -> Counts {
        let mut counts = Counts::default();
        for &code in codes {
            counts.add(Value::from_code(code));
        }
        counts
    }

    /// The counts of two disjoint sets of positions together.
    pub fn merge(self, other: Counts) -> Counts {
        Counts {
            wins: self.wins + other.wins,
            losses: self.losses + other.losses,
            draws: self.draws + other.draws,
            longest_win: self.longest_win.max(other.longest_win),
            longest_loss: self.longest_loss.max(other.longest_loss),
        }
    }

    /// Wins, losses and draws together; `None` if the sum overflows (a damaged
    /// header).
    pub fn total(&self) -> Option<u64> {
        self.wins
            .checked_add(self.losses)
            .and_then(|n| n.checked_add(self.draws))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_order() {
        for v in [
            Value::Draw,
            Value::Win(1),
            Value::Loss(0),
            Value::Loss(26),
            Value::Win(301),
        ] {
            assert_eq!(Value::from_code(v.code()), v);
        }
        assert_eq!(Value::Loss(0).parent(), Value::Win(1));
        assert!(Value::Win(1).cmp_goodness(Value::Win(3)).is_gt());
        assert!(Value::Draw.cmp_goodness(Value::Loss(40)).is_gt());
        assert!(Value::Loss(40).cmp_goodness(Value::Loss(2)).is_gt());
    }
}
