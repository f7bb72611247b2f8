//! The terms of a search: the algorithm at its root, its limits, what it reports
//! after each iteration and what it answers.

use crate::rules::position::Ply;
use crate::rules::value::Value;
use crate::search::score;
use std::time::Duration;

/// The search algorithm at the root of each iteration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Algorithm {
    /// Alpha-beta with principal-variation search (null windows after the first ply).
    #[default]
    Pvs,
    /// MTD(f): a sequence of null-window searches converging on the score, starting
    /// from the previous iteration's score.
    Mtdf,
}

/// When a search stops (besides the stop flag). `None` means no limit; with no limit
/// at all the search runs until stopped or until the depth reaches the ply cap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Last iteration depth, in plies.
    pub depth: Option<u32>,
    /// Stop after about this many nodes.
    pub nodes: Option<u64>,
    /// Stop after this much time; no iteration is started after half of it.
    pub movetime: Option<Duration>,
}

/// What the search reports after each completed iteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// The iteration depth.
    pub depth: u32,
    /// The score for the side to move (see [`crate::search::score`]).
    pub score: i32,
    /// Nodes searched so far.
    pub nodes: u64,
    /// Time since the search started.
    pub time: Duration,
    /// The principal variation.
    pub pv: Vec<Ply>,
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The ply to play; `None` only if the position has no legal ply.
    pub best: Option<Ply>,
    /// Score of the best ply for the side to move (see [`crate::search::score`]).
    pub score: i32,
    /// Depth of the last completed iteration (1 when played by exact values).
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
    /// The principal variation, starting with `best`.
    pub pv: Vec<Ply>,
    /// Time spent.
    pub time: Duration,
    /// Whether the root was played by exact values from the [`super::Endgame`].
    pub exact: bool,
}

impl SearchResult {
    /// The exact value the score proves, if it is a mate score (or an exact draw).
    pub fn value(&self) -> Option<Value> {
        score::to_value(self.score)
            .or((self.exact && self.score == score::DRAW).then_some(Value::Draw))
    }
}
