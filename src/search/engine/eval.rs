//! Static evaluation in centi-stones from the side to move's point of view: the
//! evaluations an engine can use, by name. `shipped` and `tuned` are weight sets of
//! the linear evaluation ([`super::linear`]: its items are re-exported here), `net`
//! is the network ([`super::net`]).

pub use super::linear::{
    Features, SidePhase, TERMS, TERMS_PER_PHASE, WEIGHTS, Weights, evaluate, evaluate_with,
    features, flatten, side_phase, terms, weigh,
};
use super::net::Net;
use crate::rules::Rules;
use crate::rules::position::Position;

/// The name of the evaluation engines use unless told otherwise: `net`, which
/// blundered in 22 of 1,000 exam positions where `tuned` blundered in 42, at
/// 200,000 nodes a ply (README, "Network evaluation"). Off the standard board it
/// is the `tuned` weights ([`Eval::for_rules`]).
pub const DEFAULT_EVAL: &str = "net";

/// An evaluation the engine can use: linear in [`terms`] with a weight set, or the
/// network of [`super::net`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Eval {
    /// [`evaluate_with`] these weights.
    Linear(&'static [Weights; 3]),
    /// The network ([`super::net::Net::evaluate`]).
    Net(&'static Net),
}

/// The evaluations by name: `shipped` ([`WEIGHTS`], set by hand), `tuned`
/// ([`super::tuned::TUNED`], fitted to exact values by `tools/tune-eval.sh`) and
/// `net` ([`super::net_weights::NET`], trained on exact values by
/// `tools/train-net.sh`).
pub const NAMED: [(&str, Eval); 3] = [
    ("shipped", Eval::Linear(&WEIGHTS)),
    ("tuned", Eval::Linear(&super::tuned::TUNED)),
    ("net", Eval::Net(&super::net_weights::NET)),
];

/// The evaluation called `name` (see [`NAMED`]), ignoring case.
pub fn named(name: &str) -> Option<(&'static str, Eval)> {
    NAMED
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .copied()
}

/// The names of [`NAMED`], for messages: "shipped, tuned or net".
pub fn names() -> String {
    let names: Vec<&str> = NAMED.iter().map(|&(n, _)| n).collect();
    let (last, rest) = names.split_last().expect("evaluations");
    format!("{} or {last}", rest.join(", "))
}

impl Eval {
    /// This evaluation where it applies to `rules`: the network knows only the
    /// standard board ([`super::net::applies`]); elsewhere it is replaced by the
    /// `tuned` weights.
    pub fn for_rules(self, rules: &Rules) -> Eval {
        match self {
            Eval::Net(_) if !super::net::applies(rules) => Eval::Linear(&super::tuned::TUNED),
            other => other,
        }
    }

    /// The static evaluation of `pos` for the side to move, in centi-stones. The
    /// caller handles positions where the game is over.
    pub fn evaluate(&self, rules: &Rules, pos: &Position) -> i32 {
        match self {
            Eval::Linear(w) => evaluate_with(rules, pos, w),
            Eval::Net(net) => net.evaluate(rules, pos),
        }
    }
}
