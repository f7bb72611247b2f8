//! Search: the placement-phase search that proves the empty board ([`opening`]),
//! the heuristic engine ([`engine`]) and the score scale they share ([`score`]),
//! and the analysis of a position that `millbase analyze` and the HTTP API both
//! answer with ([`analysis`]).

pub mod analysis;
pub mod engine;
pub mod opening;
pub mod score;
