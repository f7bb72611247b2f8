//! Search scores: centi-stones for heuristic values, and mate-distance scores for
//! positions whose end is known, so that exact values and heuristic values live on
//! one scale.
//!
//! A win that ends the game `n` plies after the root scores `MATE - n`, a loss
//! `-(MATE - n)`: faster wins and slower losses score higher, as with
//! [`Value::cmp_goodness`]. Heuristic scores stay well inside `±MATE_BOUND`.

use crate::rules::value::Value;

/// The score of a side that wins right now (plies from the root subtracted).
pub const MATE: i32 = 30_000;
/// Scores beyond this bound (in absolute value) are mate scores.
pub const MATE_BOUND: i32 = 28_000;
/// Greater than every score: the initial search window.
pub const INFINITE: i32 = 31_000;
/// The score of a draw (and of a repetition).
pub const DRAW: i32 = 0;

/// The score of the side to move that has lost, `ply` plies from the root.
pub fn lost_at(ply: usize) -> i32 {
    -(MATE - ply as i32)
}

/// Whether `score` is a mate score.
pub fn is_mate(score: i32) -> bool {
    score.abs() > MATE_BOUND
}

/// The score of an exact value found `ply` plies from the root.
pub fn from_value(value: Value, ply: usize) -> i32 {
    match value {
        Value::Draw => DRAW,
        Value::Win(n) => MATE - (ply as i32 + n as i32),
        Value::Loss(n) => -(MATE - (ply as i32 + n as i32)),
    }
}

/// Plies to the end of the game for a mate score, positive when the side to move
/// wins, negative when it loses; `None` for a heuristic score.
pub fn mate_plies(score: i32) -> Option<i32> {
    is_mate(score).then(|| score.signum() * (MATE - score.abs()))
}

/// A mate score as the root's exact value (inverse of [`from_value`] at ply 0).
pub fn to_value(score: i32) -> Option<Value> {
    is_mate(score).then(|| value_at(score, 0))
}

/// The exact value of a node `ply` plies from the root whose score is exact (a mate
/// score or the draw score): the inverse of [`from_value`] at `ply`.
pub fn value_at(score: i32, ply: usize) -> Value {
    let n = |s: i32| (MATE - ply as i32 - s) as u16;
    match score.cmp(&DRAW) {
        std::cmp::Ordering::Greater => Value::Win(n(score)),
        std::cmp::Ordering::Less => Value::Loss(n(-score)),
        std::cmp::Ordering::Equal => Value::Draw,
    }
}

/// A score relative to the node `ply` plies from the root, for storing in the
/// transposition table: mate scores count from the node instead of the root.
pub fn to_table(score: i32, ply: usize) -> i32 {
    match score {
        s if s > MATE_BOUND => s + ply as i32,
        s if s < -MATE_BOUND => s - ply as i32,
        s => s,
    }
}

/// The inverse of [`to_table`].
pub fn from_table(score: i32, ply: usize) -> i32 {
    match score {
        s if s > MATE_BOUND => s - ply as i32,
        s if s < -MATE_BOUND => s + ply as i32,
        s => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_scores_agree() {
        for v in [
            Value::Win(1),
            Value::Win(17),
            Value::Loss(0),
            Value::Loss(40),
            Value::Draw,
        ] {
            let s = from_value(v, 0);
            assert_eq!(to_value(s).unwrap_or(Value::Draw), v);
            assert_eq!(
                from_table(to_table(from_value(v, 5), 5), 5),
                from_value(v, 5)
            );
        }
        assert!(from_value(Value::Win(1), 0) > from_value(Value::Win(3), 0));
        assert!(from_value(Value::Loss(8), 0) > from_value(Value::Loss(2), 0));
        assert_eq!(mate_plies(from_value(Value::Win(3), 2)), Some(5));
        assert_eq!(mate_plies(lost_at(4)), Some(-4));
    }
}
