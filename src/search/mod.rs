//! Search: the placement-phase search that proves the empty board ([`opening`]),
//! the heuristic engine ([`engine`]) and the score scale they share ([`score`]).

pub mod engine;
pub mod opening;
pub mod score;
