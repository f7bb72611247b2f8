//! Why a build stops: [`BuildError`].

use crate::table::format::FormatError;
use crate::table::pack::repack::RepackError;
use crate::table::probe::ProbeError;
use crate::table::sector::Sector;
use std::path::{Path, PathBuf};

/// Why a build stopped.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A file system error.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A database file could not be written or read.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The manifest could not be read or written.
    #[error("manifest: {0}")]
    Manifest(String),
    /// Not enough memory for the next pair.
    #[error(
        "pair {pair} needs about {need_gib:.1} GiB of memory and only {have_gib:.1} GiB is available; \
         free memory or build on a larger machine (finished subspaces are kept)"
    )]
    Memory {
        /// The pair.
        pair: String,
        /// Estimated need.
        need_gib: f64,
        /// Available.
        have_gib: f64,
    },
    /// A subspace outside the rules.
    #[error("subspace {k}-{l} does not exist: both counts must be between 3 and {max}")]
    Subspace {
        /// Side to move's stones.
        k: u32,
        /// Opponent's stones.
        l: u32,
        /// Stones per side.
        max: u8,
    },
    /// The thread pool could not start.
    #[error("thread pool: {0}")]
    Threads(String),
    /// Placement sectors need moving-phase subspaces that are not built.
    #[error(
        "the placement sectors lead into moving-phase subspaces that are not built yet ({missing}); \
         build them first with `millbase build --phase moving --db {db}` (or build everything: `millbase build --db {db}`)"
    )]
    MovingMissing {
        /// The missing subspaces, comma-separated.
        missing: String,
        /// The database directory.
        db: String,
    },
    /// Not a placement sector of these rules.
    #[error("{0} is not a placement sector of a game from the empty board under these rules")]
    NoSector(Sector),
    /// A finished file could not be recoded into the small form (or read back
    /// from it as a child).
    #[error("recoding into the small form: {0}")]
    Recode(#[from] RepackError),
    /// A child in the small form could not be read through the probe's rule.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The directory of `--reuse` cannot serve this build.
    #[error("--reuse: {0}")]
    Reuse(String),
    /// Rules whose game the builder cannot solve yet.
    #[error("the builder cannot build the rules {rules} yet: {why}")]
    Unsupported {
        /// The rules' name.
        rules: &'static str,
        /// What the builder lacks.
        why: &'static str,
    },
}

/// The [`BuildError::Io`] of `what` on `path`.
pub(crate) fn io<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> BuildError + 'a {
    move |source| BuildError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}
