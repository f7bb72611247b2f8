//! Warming a tablebase in the background, so that the first probes of a server or
//! an engine do not each pay for reading a file from disk and decoding a block.
//!
//! [`Tablebase::warm`] takes the directory's files in the order a game from the
//! empty board meets them ([`Tablebase::warm_order`]) and, in two passes:
//!
//! 1. **reads** every file: its header and block tables checked (the file
//!    opened, as a probe would), its bytes read once through a 1 MiB buffer (so
//!    that the kernel's page cache holds them; the process's memory does not
//!    grow), and its models' priors loaded;
//! 2. **decodes** blocks into the block cache (the WDL blocks of every file
//!    first, then the depth blocks), through the paths probes take, until the
//!    cache holds [`WarmOptions::decode_bytes`]: never more than the cache's
//!    limit ([`Tablebase::cache_limit`]), so warming never grows the process
//!    beyond what probes alone may.
//!
//! Probes answer while warming goes on (a `Tablebase` is shared by reference),
//! the same answers as before and after: warming only loads what probes would.
//! A [`WarmProgress`] shared with other threads says how far it has got and
//! stops it ([`WarmProgress::stop`]).

use super::Tablebase;
use crate::table::format::SubspaceFile;
use crate::table::sector::Sector;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Bytes read at a time when a file is read into the page cache.
const READ_CHUNK: usize = 1 << 20;

/// How much warming decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarmOptions {
    /// Warming decodes blocks until the block cache holds this many bytes (at
    /// most the cache's limit, whatever is asked).
    pub decode_bytes: usize,
}

impl WarmOptions {
    /// Half of `tb`'s cache limit: the other half stays free for the blocks
    /// probes decode, so warming does not evict them.
    pub fn half_cache(tb: &Tablebase) -> WarmOptions {
        WarmOptions {
            decode_bytes: tb.cache_limit() / 2,
        }
    }
}

/// How far warming has got, shared between the thread that warms and those that
/// report it (a server's status, a progress bar); every field is atomic.
#[derive(Debug, Default)]
pub struct WarmProgress {
    /// Files to read, known once they are all opened.
    of: AtomicUsize,
    /// Files read.
    files: AtomicUsize,
    /// Bytes of the files to read.
    of_bytes: AtomicU64,
    /// Bytes read.
    bytes: AtomicU64,
    /// Blocks warming decoded (or found decoded by a probe).
    blocks: AtomicU64,
    /// Every file read, and as many blocks decoded as allowed.
    done: AtomicBool,
    /// Asked to stop.
    stop: AtomicBool,
    /// When warming started.
    started: OnceLock<Instant>,
    /// How long it took, once done.
    took: OnceLock<Duration>,
    /// The first file that could not be read or decoded.
    error: OnceLock<String>,
}

/// A snapshot of a [`WarmProgress`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WarmStatus {
    /// Warming has finished: every file read, and blocks decoded up to the
    /// budget (or every block).
    pub done: bool,
    /// Files read.
    pub files: usize,
    /// Files to read (0 until they are all opened).
    pub of: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Bytes of the files to read.
    pub of_bytes: u64,
    /// Blocks warming decoded (or found decoded by a probe).
    pub blocks: u64,
    /// Milliseconds since warming started, or that it took once done.
    pub millis: u64,
    /// The first file that could not be read or decoded (warming skips it; probes
    /// of it report the same error).
    pub error: Option<String>,
}

impl WarmProgress {
    /// Asks warming to stop at its next step (a megabyte read or a block decoded).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether warming was asked to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// How far warming has got.
    pub fn status(&self) -> WarmStatus {
        let took = self
            .took
            .get()
            .copied()
            .or_else(|| self.started.get().map(|t: &Instant| t.elapsed()));
        WarmStatus {
            done: self.done.load(Ordering::Acquire),
            files: self.files.load(Ordering::Relaxed),
            of: self.of.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            of_bytes: self.of_bytes.load(Ordering::Relaxed),
            blocks: self.blocks.load(Ordering::Relaxed),
            millis: took.map_or(0, |d| d.as_millis() as u64),
            error: self.error.get().cloned(),
        }
    }

    /// Records the first error met.
    fn fail(&self, e: impl ToString) {
        let _ = self.error.set(e.to_string());
    }
}

impl Tablebase {
    /// The sectors whose files warming reads, in the order a game from the empty
    /// board meets them: the placement sectors by plies played, then the
    /// moving-phase subspaces from the most stones on the board to the fewest.
    pub fn warm_order(&self) -> Vec<Sector> {
        let mut sectors = self.available_sectors();
        let stones = self.rules.stones as u32;
        // Moving-phase subspaces come after every placement ply, most stones first.
        sectors.sort_by_key(|s| {
            let (k, l) = s.counts();
            if s.is_moving() {
                (1, 2 * stones - (k + l), stones - k.max(l))
            } else {
                (0, s.ply(self.rules), k.abs_diff(l))
            }
        });
        sectors
    }

    /// Warms the tablebase, reporting to `progress` as it goes, until done or
    /// stopped ([`WarmProgress::stop`]). The files of [`Tablebase::warm_order`]
    /// are taken in two passes: first each is opened (header and block tables
    /// checked), read once through a 1 MiB buffer (into the kernel's page cache;
    /// the process does not grow) and its models' priors loaded; then blocks are
    /// decoded into the block cache, every file's WDL blocks before any depth
    /// block, until the cache holds [`WarmOptions::decode_bytes`] (never more than
    /// its limit). Probes may run meanwhile and answer as they would have. A file
    /// that cannot be read is skipped and noted in `progress`; probes of it fail as
    /// they would have.
    pub fn warm(&self, options: &WarmOptions, progress: &WarmProgress) {
        let _ = progress.started.set(Instant::now());
        let files = self.warm_files(progress);
        if !progress.stopped() {
            self.read_files(&files, progress);
        }
        if !progress.stopped() {
            self.decode_blocks(&files, options, progress);
        }
        if !progress.stopped() {
            let started = progress.started.get().copied();
            let _ = progress
                .took
                .set(started.map_or(Duration::ZERO, |t| t.elapsed()));
            progress.done.store(true, Ordering::Release);
        }
    }

    /// The files of [`Tablebase::warm_order`], opened; their number and bytes
    /// recorded in `progress`.
    fn warm_files(&self, progress: &WarmProgress) -> Vec<&SubspaceFile> {
        let files: Vec<&SubspaceFile> = self
            .warm_order()
            .into_iter()
            .filter_map(|s| self.sector_file(s).map_err(|e| progress.fail(e)).ok())
            .collect();
        let bytes = files.iter().map(|f| f.header().file_bytes()).sum();
        progress.of_bytes.store(bytes, Ordering::Relaxed);
        progress.of.store(files.len(), Ordering::Relaxed);
        files
    }

    /// Pass 1: every file's bytes read into the page cache, its priors loaded.
    fn read_files(&self, files: &[&SubspaceFile], progress: &WarmProgress) {
        let mut buf = vec![0; READ_CHUNK];
        for f in files {
            let read = f.read_through(&mut buf, |n| {
                progress.bytes.fetch_add(n, Ordering::Relaxed);
                !progress.stopped()
            });
            if progress.stopped() {
                return;
            }
            if let Err(e) = read.and_then(|()| f.load_priors()) {
                progress.fail(e);
            }
            progress.files.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Pass 2: blocks decoded into the block cache, every file's WDL blocks
    /// first, then the depth blocks, until the cache holds the budget.
    fn decode_blocks(
        &self,
        files: &[&SubspaceFile],
        options: &WarmOptions,
        progress: &WarmProgress,
    ) {
        let budget = options.decode_bytes.min(self.cache_limit());
        for depth in [false, true] {
            for f in files {
                let (wdl_blocks, depth_blocks) = f.block_counts();
                let blocks = if depth { depth_blocks } else { wdl_blocks };
                for b in 0..blocks {
                    if progress.stopped() || self.cache_bytes() >= budget {
                        return;
                    }
                    let decoded = if depth {
                        f.warm_depth_block(b)
                    } else {
                        f.warm_wdl_block(b)
                    };
                    if let Err(e) = decoded {
                        // The rest of a damaged file is left to the probes.
                        progress.fail(e);
                        break;
                    }
                    progress.blocks.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}
