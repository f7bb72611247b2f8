//! Probing a database directory: exact values and best plies for positions of both
//! phases.
//!
//! [`Tablebase::open`] reads `manifest.json`'s rules entry (if present); nothing
//! else. Each sector's file is looked for the first time something asks about the
//! sector (a probe looks up its own; the questions about every sector list the
//! directories once). More directories can be added
//! ([`Tablebase::add_directory`]). Each file is opened and its header checked the
//! first time a position of its subspace is probed (kept in a `OnceLock`), and each
//! compressed block is decompressed when it is read and not in the cache of
//! decompressed blocks, which all files share and which holds at most
//! [`Tablebase::cache_limit`] bytes ([`DEFAULT_CACHE_LIMIT`] unless set).
//! A warm probe takes one uncontended lock and allocates nothing. A `Tablebase` is
//! `Send + Sync`: share one (`&` or `Arc`) between all threads.
//!
//! Values are from the side to move's point of view (RULES.md). Moving-phase
//! positions are in the subspace files `k-l.mdb`, placement-phase positions in the
//! sector files `k-l-hk-hl.mdb` ([`crate::table::sector`]); a directory without the
//! placement sectors answers placement positions with [`ProbeError::Missing`], and
//! the opening search ([`crate::search::opening`]) answers them instead.
//!
//! The rooms, one job each: `error.rs` ([`ProbeError`]), `catalog.rs` (the
//! sectors the rules allow, numbered once per process), `open.rs` (the
//! directories and which sector's file each holds, files opened on first use),
//! `exact.rs` (exact values, reconstructed where a file stores don't-cares or
//! loss-only depths), `wdl.rs` (win/draw/loss, derived sectors, the staged reads
//! of a position's children), `plies.rs` (ranked plies and best plies), `batch.rs` (many
//! positions' capturing plies at once, their memory reads overlapped), `warm.rs`
//! (reading the files and decoding blocks ahead of the probes). This file
//! holds `Tablebase` itself, its accessors and what every room asks first (is the
//! position valid, decided, or with a removal pending).

#[cfg(feature = "build")]
mod batch;
mod catalog;
mod error;
mod exact;
mod open;
mod plies;
#[cfg(test)]
mod tests;
pub mod warm;
mod wdl;

pub use error::ProbeError;

use crate::rules::position::{Position, PositionError};
use crate::rules::{Bits, Rules};
use crate::table::dir::manifest::Manifest;
use crate::table::format::SubspaceFile;
use crate::table::format::cache::BlockCache;
/// The default limit of a [`Tablebase`]'s cache of decompressed blocks, in bytes:
/// 1 GiB. The moving-phase databases up to ten stones fit whole; the complete
/// standard game decompresses to about 11 GB, so probing all of it evicts.
pub use crate::table::format::cache::DEFAULT_LIMIT as DEFAULT_CACHE_LIMIT;
use crate::table::index::Index;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A database directory opened for probing.
pub struct Tablebase {
    /// The directories, in the order they were added; a file is read from the first
    /// that has it.
    dirs: Vec<PathBuf>,
    cache: Arc<BlockCache>,
    rules: &'static Rules,
    /// The sectors the rules have, numbered (each has a slot), and the rules'
    /// fingerprint.
    catalog: &'static catalog::Catalog,
    /// What the manifest's head says of `wdl_only` ([`Tablebase::wdl_only`]).
    wdl_only: bool,
    /// The manifest read whole on first use, or why it could not be.
    manifest: OnceLock<Result<Option<Manifest>, String>>,
    index: &'static Index,
    /// Per sector, at [`Tablebase::slot`].
    slots: Vec<Slot>,
    /// Set once the directories have been listed and every slot's place noted
    /// (what the questions about all sectors need; a probe looks up its own
    /// sector's file instead).
    listed: OnceLock<()>,
    /// The first damaged file met by a caller that turns errors into "not covered"
    /// (the engine), so that it can still be reported.
    damage: OnceLock<String>,
}

struct Slot {
    /// Where the sector's answers are, found on first use: by looking up its own
    /// names, or by the listing of the directories ([`Tablebase::listed`]).
    place: OnceLock<Place>,
    /// Boxed: a `Tablebase` has a slot for every possible sector (thousands),
    /// and an open file's state is hundreds of bytes, which every opening of the
    /// directory would otherwise allocate and clear (the first cost of a cold
    /// probe).
    file: OnceLock<Box<SubspaceFile>>,
}

/// Where a sector's answers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// No directory has its file or marks it derived.
    Missing,
    /// Its file is in directory number `.0` of [`Tablebase::dirs`], the first
    /// that has it.
    File(u32),
    /// Directory number `.0` marks it derived ([`crate::table::pack::derived`]),
    /// and no earlier one has its file.
    Derived(u32),
}

// Probes from many threads share one `Tablebase`.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Tablebase>();
};

impl std::fmt::Debug for Tablebase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebase")
            .field("dirs", &self.dirs)
            .field("available", &self.available())
            .finish_non_exhaustive()
    }
}

impl Tablebase {
    /// The first database directory (where the manifest was read).
    pub fn dir(&self) -> &Path {
        &self.dirs[0]
    }

    /// Every database directory, in the order they were added.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The most bytes of decompressed blocks kept in memory.
    pub fn cache_limit(&self) -> usize {
        self.cache.limit()
    }

    /// Sets the most bytes of decompressed blocks kept in memory (blocks beyond it
    /// are evicted, least recently read first, and decompressed again when read).
    pub fn set_cache_limit(&self, bytes: usize) {
        self.cache.set_limit(bytes);
    }

    /// Bytes of decompressed blocks kept in memory now.
    pub fn cache_bytes(&self) -> usize {
        self.cache.bytes()
    }

    /// The rules the databases are probed under.
    pub fn rules(&self) -> &'static Rules {
        self.rules
    }

    /// The manifest, if the directory has a readable one (read whole the first
    /// time it is asked for: opening reads its rules entry only).
    pub fn manifest(&self) -> Option<&Manifest> {
        self.loaded_manifest().as_ref().ok()?.as_ref()
    }

    /// Why the manifest could not be read, if it could not.
    pub fn manifest_problem(&self) -> Option<&str> {
        self.loaded_manifest().as_ref().err().map(String::as_str)
    }

    /// The manifest of the first directory, read whole on first use.
    fn loaded_manifest(&self) -> &Result<Option<Manifest>, String> {
        self.manifest
            .get_or_init(|| Manifest::load(self.dir()).map_err(|e| e.to_string()))
    }

    /// Records `e` as the first damage met (see [`Tablebase::damage`]).
    #[cfg_attr(not(feature = "engine"), allow(dead_code))]
    pub(crate) fn note_damage(&self, e: &ProbeError) {
        let _ = self.damage.set(e.to_string());
    }

    /// The first damaged or unreadable file met by a caller that could not stop on
    /// the error (the engine, which searches on instead), if any.
    pub fn damage(&self) -> Option<&str> {
        self.damage.get().map(String::as_str)
    }

    /// The index the files are probed with.
    pub fn index(&self) -> &'static Index {
        self.index
    }

    /// The subspace of `own`/`opp`, or `None` if the side to move has lost.
    #[inline]
    fn check_sets(&self, own: Bits, opp: Bits) -> Result<Option<(u32, u32)>, ProbeError> {
        let (k, l) = (own.count_ones(), opp.count_ones());
        let max = self.rules.stones as u32;
        if own & opp != 0 || (own | opp) & !self.rules.all() != 0 || k > max || l > max {
            // The full check names the problem (off-board stones first: `validate`
            // would name an overlap off the board).
            if (own | opp) & !self.rules.all() == 0 {
                Position::moving(crate::Color::White, own, opp).validate(self.rules)?;
            }
            return Err(ProbeError::Illegal(PositionError::OffBoard));
        }
        if k < 3 {
            return Ok(None);
        }
        if l < 3 {
            return Err(ProbeError::GameOver);
        }
        Ok(Some((k, l)))
    }

    /// What a position is, before any file is read.
    fn classify(&self, pos: &Position) -> Result<Kind, ProbeError> {
        // Off-board stones first: `validate` would name an overlap off the board.
        if (pos.board[0] | pos.board[1]) & !self.rules.all() != 0 {
            return Err(ProbeError::Illegal(PositionError::OffBoard));
        }
        pos.validate(self.rules)?;
        if pos.lost_on_material() {
            return Ok(Kind::Lost);
        }
        if pos.below_three(pos.to_move.other()) {
            return Err(ProbeError::GameOver);
        }
        Ok(if pos.pending_removal {
            Kind::Removal
        } else {
            Kind::Stored
        })
    }
}

/// What a valid moving-phase position needs to be valued.
enum Kind {
    /// The side to move has fewer than three stones.
    Lost,
    /// In a database file.
    Stored,
    /// A removal is pending: valued through its removals.
    Removal,
}
