//! Why the opening search gave no answer.

use crate::table::format::FormatError;
use crate::table::probe::ProbeError;
use std::path::PathBuf;

/// Why the opening search gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum OpeningError {
    /// A probe failed: a missing subspace (named, with the command that builds it), a
    /// damaged file, an illegal position.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The saved opening values are damaged or of other rules.
    #[error("{}: {why}; delete the file and run `millbase solve` again", path.display())]
    Saved {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Writing the saved values failed.
    #[error(transparent)]
    Write(#[from] FormatError),
    /// The rules do not fit the search's position keys ([`super::canonical_key`]).
    #[error(
        "rules {rules}: the opening search keys boards of at most 24 points and hands of at most 15 stones"
    )]
    Unsupported {
        /// The rules' name.
        rules: String,
    },
    /// A search of rules whose placement positions repeat (stones move during
    /// placement: `lasker`); the search assumes every placement ply places a stone.
    #[error(
        "rules {rules}: stones move during placement, so placement positions repeat and the opening search cannot value them; build the placement sectors (`millbase build --rules {rules}`), which answer them"
    )]
    Repeating {
        /// The rules' name.
        rules: String,
    },
    /// The search reached the limit set with [`super::Opening::with_limit`] before it had an
    /// answer.
    #[error(
        "the search stopped at its limit ({nodes} positions, {seconds:.1} s) without an answer"
    )]
    Limit {
        /// Positions searched in all.
        nodes: u64,
        /// Seconds since the limit was set.
        seconds: f64,
    },
    /// The transposition table of [`super::OpeningOptions::table_mib`] could not be had.
    #[error("the opening search's table: {0}")]
    Memory(String),
}
