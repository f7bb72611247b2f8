//! Why a probe gave no value: [`ProbeError`].

use crate::rules::position::PositionError;
use crate::table::format::FormatError;
use std::path::PathBuf;

/// Why a probe gave no value.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The database directory does not exist or is not a directory.
    #[error("{}: {}", dir.display(), what.as_deref().map_or_else(
        || format!("no database directory here; build one with `millbase build --db {}`", dir.display()),
        |what| format!("is {what}, not a database directory: give the directory that holds the database files")
    ))]
    NoDatabase {
        /// The directory given.
        dir: PathBuf,
        /// What is there instead (`a file`, `a FIFO`, ...), if anything is.
        what: Option<String>,
    },
    /// The file of the position's subspace is not in the database directory.
    #[error("no database for subspace {subspace} in {}: {hint}", dir.display())]
    Missing {
        /// The subspace, `"k-l"`.
        subspace: String,
        /// The database directory.
        dir: PathBuf,
        /// What to do: the command that builds it.
        hint: String,
    },
    /// The sector is derived in this WDL-only directory ([`crate::table::pack::derived`]): it
    /// has no file, its results come from one ply of search.
    #[error(
        "sector {subspace} is derived in {} (no file: its results are the best of its plies), so it has win/draw/loss only; values with distance need the full database",
        dir.display()
    )]
    Derived {
        /// The sector, `"k-l"` or `"k-l-hk-hl"`.
        subspace: String,
        /// The database directory.
        dir: PathBuf,
    },
    /// The subspace's file is damaged, of other rules or of another format.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A directory added to a tablebase is of other rules than the first.
    #[error("{}: its manifest is for rules {found}, the tablebase is for {expected}", dir.display())]
    OtherRules {
        /// The directory added.
        dir: PathBuf,
        /// The rules of its manifest.
        found: String,
        /// The rules of the tablebase.
        expected: String,
    },
    /// The position cannot occur under the rules.
    #[error("illegal position: {0}")]
    Illegal(#[from] PositionError),
    /// The opponent has fewer than three stones: the game ended before this
    /// position, so it has no value of its own.
    #[error(
        "the game is already over: the opponent of the side to move has fewer than three stones"
    )]
    GameOver,
}

impl ProbeError {
    /// Whether the error says the directory has win/draw/loss only where a
    /// distance was asked: a WDL-only file, or a derived sector. Callers that can
    /// do with the result ask [`super::Tablebase::probe_wdl`] then.
    pub fn is_wdl_only(&self) -> bool {
        matches!(
            self,
            ProbeError::Format(FormatError::WdlOnly { .. }) | ProbeError::Derived { .. }
        )
    }
}
