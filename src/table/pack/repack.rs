//! `millbase repack`: converts the full files of a database directory (format
//! version 1) into full files with value don't-cares (format version 2, header flags
//! 1 and 2, see `docs/FORMAT.md` and [`crate::table::pack::dontcare`]): every slot whose exact
//! value a capturing ply reaches, and every duplicate slot, is filled with what
//! compresses better; probes stay exact by looking at the capturing plies.
//! Every file written also stores depths for its decisive slots only (flag 4).
//! Without a fill (`--fill none`) the values are kept as they are and only the
//! depth section is re-encoded so (a version 1 file's draws hold depth entries),
//! checked slot by slot.
//!
//! In place or into another directory (`--out`). Per file: the true values are read
//! from the original, filled, written to `NAME.repack` beside the destination
//! (synced), and that file is opened and checked on every slot against the
//! original's values (through `Tablebase::value_in`, the probe's own rule) before
//! it is renamed to `NAME`, replacing the original in place. So the original is
//! never lost before its replacement is proved equal; a crash leaves either file
//! whole. A file that is already repacked is kept, so an interrupted repack resumes.
//! The children of a sector (the sectors its captures lead into) are read from the
//! source directory, repacked or not: probes of either are exact.

use crate::mix::splitmix64;
use crate::rules::value::Value;
use crate::table::dir::manifest::ManifestError;
use crate::table::dir::open_finished_at;
use crate::table::format::{
    Encoding, Expect, FormatError, Header, SERVING_DEPTH_BLOCK, SERVING_LEVEL, SERVING_WDL_BLOCK,
    SubspaceFile, WIN_BY_LOOKAHEAD, WriteOptions, replace_file, write_depth_recoded,
    write_retabled, write_subspace_choosing_checked, write_subspace_with,
};
use crate::table::index::Index;
use crate::table::pack::dontcare::{
    Fill, FillCounts, FreeSlots, capture_children, capture_free_slots, fill_values,
    fill_values_allowing,
};
use crate::table::pack::{Output, OutputError, Profile};
use crate::table::probe::{ProbeError, Tablebase};
use crate::table::sector::Sector;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Why a repack failed.
#[derive(Debug, thiserror::Error)]
pub enum RepackError {
    /// A source file holds win/draw/loss only: there are no values to repack.
    #[error(
        "{}: a WDL-only file (no distances); repack converts full files (its WDL don't-cares come from `millbase pack --wdl-only --dont-cares`)",
        path.display()
    )]
    WdlOnly {
        /// The file.
        path: PathBuf,
    },
    /// The new file does not give the original's value on some slot: it is
    /// deleted and the original kept (a bug in the fill, or a damaged source).
    #[error(
        "{}: the repacked file gives {found} at slot {slot} ({position}), the original {expected}; the original is kept",
        path.display()
    )]
    Differs {
        /// The original file.
        path: PathBuf,
        /// The first slot that differs.
        slot: u64,
        /// Its position, as text.
        position: String,
        /// The original's value.
        expected: Value,
        /// The repacked file's value.
        found: Value,
    },
    /// The options ask for a combination no file can hold.
    #[error("{0}")]
    Options(&'static str),
    /// A file could not be read or written.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A value needed to fill or check the don't-cares could not be probed.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The source or output directory could not be used, or a file not copied.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<ManifestError> for RepackError {
    fn from(e: ManifestError) -> RepackError {
        OutputError::from(e).into()
    }
}

/// What happened to one sector.
#[derive(Clone, Debug)]
pub struct RepackReport {
    /// The sector.
    pub sector: Sector,
    /// Index slots of the sector.
    pub slots: u64,
    /// Bytes of the WDL and depth sections of the source file.
    pub before: (u64, u64),
    /// Bytes of the WDL and depth sections of the repacked file.
    pub after: (u64, u64),
    /// Seconds this sector took (fill, write and check).
    pub seconds: f64,
    /// Whether the file was repacked already (kept as it is).
    pub kept: bool,
    /// Slots of this run's sectors up to and including this one, and of all of
    /// them: how far the run is.
    pub progress: (u64, u64),
    /// The free slots found and filled (`None` when kept, or without a fill).
    pub filled: Option<FillCounts>,
}

/// How to repack.
#[derive(Clone, Debug)]
pub struct RepackOptions {
    /// The directory to write; `None`: replace the files in place.
    pub out: Option<PathBuf>,
    /// What the free slots store; `None`: no value don't-cares, every value kept
    /// (only the depth section is re-encoded, decisive slots only).
    pub fill: Option<Fill>,
    /// Only these sectors (all when empty).
    pub only: Vec<Sector>,
    /// zstd level of the depth section ([`DEPTH_LEVEL`] unless set).
    pub depth_level: i32,
    /// Store the lost slots' distances only ([`crate::table::format::FLAG_LOSS_DEPTHS`]):
    /// a probe finds a win's distance one ply ahead.
    pub loss_depths: bool,
    /// Model-code the WDL section ([`crate::table::format::Encoding::Model`], format
    /// version 5) instead of zstd over packed trits.
    pub wdl_model: bool,
    /// Model-code the depth section ([`crate::table::format::Encoding::DepthRefined`],
    /// format version 7); only with `loss_depths` and `wdl_model`.
    pub depth_model: bool,
    /// Slots per block of a zstd-compressed WDL section (a model-coded one holds
    /// whole classes): a cold probe decompresses one block.
    pub wdl_block: u32,
    /// Slots per block of a zstd-compressed depth section.
    pub depth_block: u32,
    /// zstd level of the WDL section.
    pub wdl_level: i32,
}

/// How many won slots of a file with loss-only depths [`check_repacked`] values
/// one ply ahead, about (every one in a file with fewer wins).
pub const LOOKAHEAD_SAMPLE: u64 = 1 << 13;

/// The depth section's zstd level a repack uses unless told otherwise.
pub const DEPTH_LEVEL: i32 = 9;

impl Default for RepackOptions {
    fn default() -> Self {
        RepackOptions {
            out: None,
            fill: Some(Fill::default()),
            only: Vec::new(),
            depth_level: DEPTH_LEVEL,
            loss_depths: false,
            wdl_model: false,
            depth_model: false,
            wdl_block: WriteOptions::default().wdl_block,
            depth_block: WriteOptions::default().depth_block,
            wdl_level: WriteOptions::default().wdl_level,
        }
    }
}

impl RepackOptions {
    /// The smallest full files, every value and distance exact: the model's
    /// don't-cares, loss-only depths, both sections model-coded (format version 7,
    /// flags 47: compact block tables). What `millbase build --form small` leaves.
    pub fn smallest() -> RepackOptions {
        RepackOptions {
            fill: Some(Fill::Model),
            loss_depths: true,
            wdl_model: true,
            depth_model: true,
            ..RepackOptions::default()
        }
    }

    /// The full files of the serving profile ([`Profile::Serving`]): every value
    /// and every decisive distance stored as it is, no don't-cares, so that any
    /// probe reads one file (a full value one WDL block and one depth block of it,
    /// never the plies' children); both sections zstd-compressed in small blocks
    /// ([`SERVING_WDL_BLOCK`], [`SERVING_DEPTH_BLOCK`]), so that a cold probe
    /// decodes a WDL block in under 100 µs (format version 2, flags 4).
    pub fn serving() -> RepackOptions {
        RepackOptions {
            fill: None,
            loss_depths: false,
            depth_level: SERVING_LEVEL,
            wdl_level: SERVING_LEVEL,
            wdl_block: SERVING_WDL_BLOCK,
            depth_block: SERVING_DEPTH_BLOCK,
            ..RepackOptions::default()
        }
    }

    /// The options of `profile`: [`RepackOptions::smallest`] or
    /// [`RepackOptions::serving`].
    pub fn profile(profile: Profile) -> RepackOptions {
        match profile {
            Profile::Archive => RepackOptions::smallest(),
            Profile::Serving => RepackOptions::serving(),
        }
    }

    /// Whether the options go together: the depth model and the model's fill
    /// need loss-only depths and the WDL model.
    pub fn check(&self) -> Result<(), RepackError> {
        let models = self.loss_depths && self.wdl_model;
        if self.depth_model && !models {
            return Err(RepackError::Options(
                "--depth-coding model needs --depths losses and --wdl-coding model",
            ));
        }
        if self.fill == Some(Fill::Model) && !models {
            return Err(RepackError::Options(
                "--fill model needs --depths losses and --wdl-coding model",
            ));
        }
        if self.wdl_block == 0 || self.depth_block == 0 {
            return Err(RepackError::Options("blocks hold at least one slot"));
        }
        Ok(())
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> RepackError + '_ {
    move |e| super::io_error(path)(e).into()
}

/// Repacks every full file of `src` (or the sectors of `opts.only`) for the rules of
/// `idx`, into `opts.out` or in place. `done` is called after each sector.
pub fn repack(
    src: &Path,
    idx: &Index,
    opts: &RepackOptions,
    mut done: impl FnMut(&RepackReport),
) -> Result<Vec<RepackReport>, RepackError> {
    opts.check()?;
    let dest = opts.out.as_deref().unwrap_or(src);
    let wanted = |s: Sector| opts.only.is_empty() || opts.only.contains(&s);
    let mut output = Output::prepare(src, dest, idx, "repack", true, wanted)?;
    let in_place = output.same;
    let tb = Tablebase::open(src)?;
    // Repacked files hold distances: the manifest stops saying win/draw/loss only
    // (a repack into a WDL-only package replaces its files).
    output.manifest.wdl_only = false;
    let files = std::mem::take(&mut output.files);
    let size = |s: Sector| {
        let (k, l) = s.counts();
        idx.size(k, l)
    };
    let total: u64 = files.iter().map(|&(s, _)| size(s)).sum();
    let mut so_far = 0;
    let mut reports = Vec::with_capacity(files.len());
    for (sector, file) in files {
        let file = file?;
        let start = std::time::Instant::now();
        let (header, kept, filled) = repack_file(&tb, &file, dest, sector, opts, in_place)?;
        let entry = output.entry(sector, &header, true);
        let manifest = &mut output.manifest;
        manifest.format_version = manifest.format_version.max(header.version);
        manifest.record(dest, entry)?;
        let s = file.header();
        let report = RepackReport {
            sector,
            slots: header.size,
            before: (s.wdl.length, s.depth_bytes()),
            after: (header.wdl.length, header.depth_bytes()),
            seconds: start.elapsed().as_secs_f64(),
            kept,
            filled,
            progress: {
                so_far += size(sector);
                (so_far, total)
            },
        };
        done(&report);
        reports.push(report);
    }
    Ok(reports)
}

/// Repacks the full file `src` of `sector` into the directory `dest` (`in_place`:
/// `dest` is the directory of `src`, whose file is replaced) as `opts` say, reading
/// the values of its children from `tb`: fills, writes `NAME.repack`, checks every
/// slot against `src` and renames it over `NAME`. A file that is repacked so already
/// is kept. Returns the new file's header, whether it was kept, and the slots filled.
/// The manifest is the caller's to update.
pub fn repack_file(
    tb: &Tablebase,
    src: &SubspaceFile,
    dest: &Path,
    sector: Sector,
    opts: &RepackOptions,
    in_place: bool,
) -> Result<(Header, bool, Option<FillCounts>), RepackError> {
    repack_to(
        tb,
        src,
        &dest.join(sector.file_name()),
        (sector, None),
        opts,
        in_place,
    )
}

/// Where [`repack_beside`] leaves the repacked form of `sector`'s file in `db`:
/// `NAME.recoded`, beside the file `NAME` it will replace.
pub fn beside_path(db: &Path, sector: Sector) -> PathBuf {
    db.join(format!("{}.recoded", sector.file_name()))
}

/// [`repack_file`] of the file `src` of `sector` in `db` into
/// [`beside_path`], leaving `src` as it is, so that files that read `src` as a
/// child still read its fast form; [`install_beside`] later puts it in `src`'s
/// place. An intact repacked file made from the same source found there (a
/// resumed build) is kept. Returns its header and whether it was kept. `known`:
/// the slots a capture reaches, where the caller found them already (as a build
/// does as it solves a placement sector); the repack finds them otherwise.
pub fn repack_beside(
    tb: &Tablebase,
    src: &SubspaceFile,
    (db, sector): (&Path, Sector),
    known: Option<&FreeSlots>,
    opts: &RepackOptions,
) -> Result<(Header, bool), RepackError> {
    let path = beside_path(db, sector);
    let (header, kept, _) = repack_to(tb, src, &path, (sector, known), opts, false)?;
    Ok((header, kept))
}

/// Puts the file [`repack_beside`] left for `sector` in `db` in the place of
/// the sector's file (a rename: either file is whole at any moment).
pub fn install_beside(db: &Path, sector: Sector) -> Result<(), RepackError> {
    Ok(replace_file(
        &beside_path(db, sector),
        &db.join(sector.file_name()),
    )?)
}

/// [`repack_file`] into the file `path` (`in_place`: `path` is `src`'s own),
/// with the slots a capture reaches `known` or found.
fn repack_to(
    tb: &Tablebase,
    src: &SubspaceFile,
    path: &Path,
    (sector, known): (Sector, Option<&FreeSlots>),
    opts: &RepackOptions,
    in_place: bool,
) -> Result<(Header, bool, Option<FillCounts>), RepackError> {
    opts.check()?;
    if src.wdl_only() {
        return Err(RepackError::WdlOnly {
            path: src.path().to_path_buf(),
        });
    }
    Job {
        src,
        tb,
        path,
        idx: tb.index(),
        sector,
        known,
        opts,
        in_place,
    }
    .run()
}

/// Whether `f` is a file that a repack with `opts` would keep as it is (see
/// [`repack_file`]): its values and blocks as the repack writes them
/// (`holds_repacked`), in the block tables it writes (compact where the WDL
/// section is model-coded, [`crate::table::format::FLAG_COMPACT_TABLES`]).
pub fn is_repacked(f: &SubspaceFile, opts: &RepackOptions) -> bool {
    holds_repacked(f, opts) && f.header().compact_tables() == opts.wdl_model
}

/// Whether `f` holds the values and blocks a repack with `opts` writes, in
/// whatever block tables: if its tables are not those of the repack, it is
/// written again with the same blocks ([`write_retabled`]).
fn holds_repacked(f: &SubspaceFile, opts: &RepackOptions) -> bool {
    holds_repacked_values(f, opts) && depth_coded_as(f, opts)
}

/// Whether the depth section of `f` is coded as a repack with `opts` codes it:
/// the refined depth model or zstd as asked (distances too long for the depth
/// model stay zstd, half-u16).
fn depth_coded_as(f: &SubspaceFile, opts: &RepackOptions) -> bool {
    f.header().depth.is_some_and(|d| {
        (d.encoding == Encoding::DepthRefined) == opts.depth_model
            || d.encoding == Encoding::HalfU16
    })
}

/// Whether `f` holds what a repack with `opts` writes but for the coding of its
/// depth section: the depth model without its refiner (format version 6) where
/// the repack writes the refined one. The repack then codes that section again
/// from the file's stored codes and keeps its WDL blocks
/// ([`write_depth_recoded`]).
fn holds_repacked_but_depth(f: &SubspaceFile, opts: &RepackOptions) -> bool {
    opts.depth_model
        && f.header()
            .depth
            .is_some_and(|d| d.encoding == Encoding::DepthModel)
        && holds_repacked_values(f, opts)
}

/// Whether `f` holds the values, entries and blocks a repack with `opts`
/// writes, whatever the coding of its depth section.
fn holds_repacked_values(f: &SubspaceFile, opts: &RepackOptions) -> bool {
    let h = f.header();
    let depths = h.decisive_depths() && h.loss_depths() == opts.loss_depths;
    let coding = (h.wdl.encoding == Encoding::Model) == opts.wdl_model;
    // A model-coded section's blocks are whole classes (or, behind an empty
    // prior, the block size asked for); a zstd one's the block size asked for.
    let blocks = (h.wdl.encoding == Encoding::Model || h.wdl.block_slots == opts.wdl_block)
        && h.depth
            .is_some_and(|d| d.encoding.is_depth_model() || d.block_slots == opts.depth_block);
    // The fill's kind of don't-cares: results kept ([`Fill::keeps_results`]) or not.
    let fill = match opts.fill {
        Some(fill) => f.value_dont_cares() && f.exact_results() == fill.keeps_results(),
        None => !f.value_dont_cares(),
    };
    depths && coding && blocks && fill
}

/// One sector to repack.
struct Job<'a> {
    src: &'a SubspaceFile,
    tb: &'a Tablebase,
    /// The file to write.
    path: &'a Path,
    idx: &'a Index,
    sector: Sector,
    /// The slots a capture reaches, if known ([`repack_beside`]).
    known: Option<&'a FreeSlots>,
    opts: &'a RepackOptions,
    in_place: bool,
}

impl Job<'_> {
    /// Writes, checks and installs the repacked file, unless it is there already.
    /// Returns its header, whether it was kept, and the slots filled.
    fn run(&self) -> Result<(Header, bool, Option<FillCounts>), RepackError> {
        if let Some(header) = self.repacked_already()? {
            return Ok((header, true, None));
        }
        let mut staging = self.path.as_os_str().to_owned();
        staging.push(".repack");
        let staging = PathBuf::from(staging);
        let (filled, header) = match self.stage(&staging) {
            Ok(done) => done,
            Err(e) => {
                let _ = std::fs::remove_file(&staging);
                return Err(e);
            }
        };
        replace_file(&staging, self.path)?;
        Ok((header, false, filled))
    }

    /// Whether `f` is a file this repack would write (or better): one with the
    /// depth entries asked for, and with value don't-cares unless there is no fill.
    fn is_done(&self, f: &SubspaceFile) -> bool {
        is_repacked(f, self.opts)
    }

    /// The repacked file's header if the destination holds one made from this
    /// source: in place, the source itself when it is repacked already (see
    /// [`Job::is_done`]); elsewhere, an intact repacked file of the same sector
    /// and header data.
    fn repacked_already(&self) -> Result<Option<Header>, RepackError> {
        if self.in_place {
            return Ok(self.is_done(self.src).then(|| self.src.header().clone()));
        }
        let Ok(done) = open_finished_at(self.path, self.idx, self.sector) else {
            return Ok(None);
        };
        let (s, d) = (self.src.header(), done.header());
        // A source that is repacked already was copied byte for byte.
        let same_source = !self.is_done(self.src) || s.checksum == d.checksum;
        let same = self.is_done(&done)
            && same_source
            && s.meta == d.meta
            && s.size == d.size
            && done.verify_checksums().is_ok();
        Ok(same.then(|| d.clone()))
    }

    /// The slots of the sector (true codes `truth`) whose value a capture
    /// reaches, for `fill`, found with the true codes of the sectors the
    /// captures lead into read whole into memory
    /// ([`crate::table::pack::dontcare::capture_free_slots`]): some times
    /// cheaper than probing their files slot by slot. `None` (the fill probes)
    /// unless each of those files is of the fast form, which holds every true
    /// code (a build recodes a file while its children are so).
    fn found_in_memory(&self, truth: &[u16], fill: Fill) -> Result<Option<FreeSlots>, RepackError> {
        let rules = self.idx.rules();
        let mut children = Vec::new();
        for c in capture_children(rules, self.sector) {
            let Ok(file) = self.tb.sector_file(c) else {
                return Ok(None);
            };
            if file.wdl_only() || file.value_dont_cares() || file.loss_depths() {
                return Ok(None);
            }
            children.push((c, file.read_all()?));
        }
        let child = |c: Sector| {
            children
                .iter()
                .find(|(s, _)| *s == c)
                .map(|(_, codes)| codes.as_slice())
        };
        Ok(Some(capture_free_slots(
            self.idx,
            self.sector,
            truth,
            fill,
            child,
        )))
    }

    /// Writes the repacked file to `staging` and checks it on every slot; a source
    /// that is repacked already is copied (its checksums checked).
    fn stage(&self, staging: &Path) -> Result<(Option<FillCounts>, Header), RepackError> {
        let (k, l) = self.sector.counts();
        let expect = Expect::sector(
            self.idx.rules().fingerprint(),
            self.sector,
            self.idx.size(k, l),
        );
        if self.is_done(self.src) {
            self.src.verify_checksums()?;
            std::fs::copy(self.src.path(), staging).map_err(io_error(staging))?;
            std::fs::File::open(staging)
                .and_then(|f| f.sync_all())
                .map_err(io_error(staging))?;
            let copy = SubspaceFile::open(staging, &expect)?;
            copy.verify_checksums()?;
            return Ok((None, copy.header().clone()));
        }
        if holds_repacked(self.src, self.opts) {
            // Only the block tables change: the same blocks, every checksum
            // checked on the way in and again in the file written.
            write_retabled(self.src, staging, self.opts.wdl_model)?;
            let copy = SubspaceFile::open(staging, &expect)?;
            copy.verify_checksums()?;
            return Ok((None, copy.header().clone()));
        }
        if holds_repacked_but_depth(self.src, self.opts) {
            // The WDL blocks stay; the depth section is coded again from the
            // stored codes (each block decoded again by the writer), and the file
            // written is read back on every slot.
            let opts = WriteOptions {
                wdl_encoding: Encoding::Model,
                value_dont_cares: self.src.value_dont_cares(),
                exact_results: self.src.exact_results(),
                loss_depths: true,
                depth_model: true,
                depth_level: self.opts.depth_level,
                depth_block: self.opts.depth_block,
                compact_tables: self.opts.wdl_model,
                ..WriteOptions::default()
            };
            let before = self.src.read_all_partial()?;
            write_depth_recoded(self.src, &before, staging, &opts)?;
            let copy = SubspaceFile::open(staging, &expect)?;
            copy.verify_checksums()?;
            // The WDL blocks are the source's (their checksums checked): the
            // depth section is read through the new file's reader.
            let trits = before
                .par_iter()
                .map(|&c| match c {
                    0 => 0,
                    c if c == WIN_BY_LOOKAHEAD || c % 2 == 0 => 1,
                    _ => 2,
                })
                .collect();
            let after = copy.read_all_partial_given(trits)?;
            if let Some(slot) = (0..before.len()).find(|&i| before[i] != after[i]) {
                let (own, opp) = self.idx.position(k, l, slot as u64);
                let position = self.sector.position(own, opp);
                let text = |c: u16| match c {
                    WIN_BY_LOOKAHEAD => Value::Win(1),
                    c => Value::from_code(c),
                };
                return Err(RepackError::Differs {
                    path: self.src.path().to_path_buf(),
                    slot: slot as u64,
                    position: crate::rules::fen::format(
                        self.idx.rules(),
                        &position,
                        Default::default(),
                    ),
                    expected: text(before[slot]),
                    found: text(after[slot]),
                });
            }
            return Ok((None, copy.header().clone()));
        }
        // A small file's true values come through the probe's rule.
        let truth = true_codes(self.tb, self.sector, self.src)?;
        let mut codes = truth.clone();
        let found = match (self.known, self.opts.fill) {
            (None, Some(fill)) => self.found_in_memory(&truth, fill)?,
            _ => None,
        };
        let known = self.known.or(found.as_ref());
        let (counts, allowed, free) = match self.opts.fill {
            Some(Fill::Model) => {
                let (counts, allowed, free) =
                    fill_values_allowing(self.tb, self.sector, &mut codes, known)?;
                (Some(counts), Some(allowed), Some(free))
            }
            Some(fill) => (
                Some(fill_values(self.tb, self.sector, &mut codes, fill, known)?),
                None,
                None,
            ),
            None => (None, None, None),
        };
        let opts = WriteOptions {
            value_dont_cares: counts.is_some(),
            exact_results: counts.is_some() && self.opts.fill.is_some_and(Fill::keeps_results),
            loss_depths: self.opts.loss_depths,
            depth_level: self.opts.depth_level,
            wdl_encoding: if self.opts.wdl_model {
                Encoding::Model
            } else {
                Encoding::Trits5
            },
            depth_model: self.opts.depth_model,
            wdl_block: self.opts.wdl_block,
            depth_block: self.opts.depth_block,
            wdl_level: self.opts.wdl_level,
            compact_tables: self.opts.wdl_model,
            ..WriteOptions::default()
        };
        let meta = &self.src.header().meta;
        // A model-coded WDL section: the writer decoded every block of both
        // sections in memory and read the file back, so what it stores is at hand
        // without decoding the file again.
        let stored = match allowed {
            Some(allowed) => {
                let (_, trits) =
                    write_subspace_choosing_checked(staging, meta, &codes, &opts, &allowed)?;
                drop(allowed);
                trits.map(|trits| {
                    codes
                        .par_iter_mut()
                        .zip(trits)
                        .for_each(|(c, t)| *c = stored_code(*c, t));
                    codes
                })
            }
            None => {
                write_subspace_with(staging, meta, &codes, &opts)?;
                None
            }
        };
        let staged = SubspaceFile::open(staging, &expect)?;
        match stored {
            Some(stored) => {
                staged.verify_checksums()?;
                let (tb, sector, path) = (self.tb, self.sector, self.src.path());
                match &free {
                    Some(free) => check_filled(tb, sector, &staged, &truth, &stored, free, path)?,
                    None => check_stored(tb, sector, &staged, &truth, &stored, true, path)?,
                }
            }
            None => check_repacked(self.tb, self.sector, &staged, &truth, self.src.path())?,
        }
        Ok((counts, staged.header().clone()))
    }
}

/// Checks that `staged`, read as a probe reads it (the stored value, raised by the
/// capturing plies' values from `tb`), gives `truth[i]` for the position of every
/// slot `i` of `sector`; `original` names the source in the error. A duplicate slot
/// reads its canonical twin, so it is checked as the twin's value (and the source's
/// duplicate must equal its twin). Decompresses every block of `staged`.
pub fn check_repacked(
    tb: &Tablebase,
    sector: Sector,
    staged: &SubspaceFile,
    truth: &[u16],
    original: &Path,
) -> Result<(), RepackError> {
    let stored = staged.read_all_partial()?;
    check_stored(tb, sector, staged, truth, &stored, false, original)
}

/// What a slot of a file with loss-only depths reads as before its captures
/// (as [`SubspaceFile::read_all_partial`] gives it) when it stores result `trit`
/// (0 draw, 1 win, 2 loss) and its filled code is `code` (a loss where `trit`
/// is one: the loss and its distance are stored as they are).
fn stored_code(code: u16, trit: u8) -> u16 {
    match trit {
        0 => Value::Draw.code(),
        1 => WIN_BY_LOOKAHEAD,
        _ => code,
    }
}

/// One WDL block in this many of a file checked with its stored codes in memory
/// is read through the file's reader (see [`check_stored`]).
const READER_STRIDE: u64 = 8;

/// [`check_repacked`] with the codes `staged` reads before its captures at hand
/// (`stored`, as [`SubspaceFile::read_all_partial`] gives them). `in_memory`:
/// `stored` are what the writer decoded from the file's bytes in memory
/// ([`write_subspace_choosing_checked`]), so a slot's value is the probe's rule
/// (the stored value raised by the capturing plies, a win's distance one ply
/// ahead) applied to its stored code, without the file's reader; but in every
/// eighth WDL block and the last, each slot is probed through the reader as
/// without `in_memory`, and a slot there that is its own twin and stores no win
/// is probed even if it stores its true value, so that the reader decodes the
/// block.
pub fn check_stored(
    tb: &Tablebase,
    sector: Sector,
    staged: &SubspaceFile,
    truth: &[u16],
    stored: &[u16],
    in_memory: bool,
    original: &Path,
) -> Result<(), RepackError> {
    Check {
        tb,
        sector,
        staged,
        truth,
        stored,
        in_memory,
        free: None,
        original,
    }
    .run()
}

/// [`check_stored`] with the codes at hand (`in_memory`) of a file filled by
/// [`Fill::Model`], given the slots whose value the fill found a capturing ply to
/// reach (`free`, from [`fill_values_allowing`]): in the blocks the reader leaves
/// out, a free slot that stores less than its truth reads as its truth without a
/// search of its captures (the probe's rule: the better of the stored value and
/// the captures', which reach the truth and, the values being true, no more). In
/// the blocks the reader reads, every such slot is still searched as the probe
/// searches it, so the fill's finding is checked there; a slot outside `free`
/// that stores less than its truth is searched wherever it is.
pub fn check_filled(
    tb: &Tablebase,
    sector: Sector,
    staged: &SubspaceFile,
    truth: &[u16],
    stored: &[u16],
    free: &FreeSlots,
    original: &Path,
) -> Result<(), RepackError> {
    Check {
        tb,
        sector,
        staged,
        truth,
        stored,
        in_memory: true,
        free: Some(free),
        original,
    }
    .run()
}

/// What [`check_stored`] and [`check_filled`] check.
#[derive(Clone, Copy)]
struct Check<'a> {
    tb: &'a Tablebase,
    sector: Sector,
    staged: &'a SubspaceFile,
    truth: &'a [u16],
    stored: &'a [u16],
    in_memory: bool,
    /// The slots a capture reaches, as the fill found them.
    free: Option<&'a FreeSlots>,
    original: &'a Path,
}

impl Check<'_> {
    fn run(&self) -> Result<(), RepackError> {
        let Check {
            tb,
            sector,
            staged,
            truth,
            stored,
            in_memory,
            free,
            original,
        } = *self;
        let idx = tb.index();
        let (k, l) = sector.counts();
        let size = staged.header().size;
        if size != truth.len() as u64 || stored.len() != truth.len() {
            return Err(FormatError::Mismatch {
                path: staged.path().to_path_buf(),
                what: format!("{size} slots, the original {}", truth.len()),
            }
            .into());
        }
        let per_block = (staged.header().wdl.block_slots as u64).max(1);
        let differs = |slot: usize, found: Value| RepackError::Differs {
            path: original.to_path_buf(),
            slot: slot as u64,
            position: {
                let (own, opp) = idx.position(k, l, slot as u64);
                crate::rules::fen::format(
                    idx.rules(),
                    &sector.position(own, opp),
                    Default::default(),
                )
            },
            expected: Value::from_code(truth[slot]),
            found,
        };
        // Of the wins whose distance a probe finds one ply ahead, a sample is checked
        // that way in a large file (each costs a probe of every ply), all in a small one.
        let wins = stored.iter().filter(|&&c| c == WIN_BY_LOOKAHEAD).count() as u64;
        let stride = (wins / LOOKAHEAD_SAMPLE).max(1);
        let last_block = (size.max(1) - 1) / per_block;
        // Whether the reader reads slot `at`'s block in the check.
        let through_reader = |at: u64| {
            let b = at / per_block;
            !in_memory || b.is_multiple_of(READER_STRIDE) || b == last_block
        };
        // The first slot from `from` on that starts a block the reader reads (one
        // slot of which is probed whatever it stores), if `in_memory`.
        let next_probe = |from: u64| -> u64 {
            let b = from.div_ceil(per_block);
            let next = b.next_multiple_of(READER_STRIDE).min(last_block.max(b));
            if in_memory && next <= last_block {
                next * per_block
            } else {
                u64::MAX
            }
        };
        let check_win = |slot: usize| -> Result<(), RepackError> {
            if Value::from_code(truth[slot]).wdl() != crate::rules::value::Wdl::Win {
                return Err(differs(slot, Value::Win(1)));
            }
            if stride > 1 && !splitmix64(slot as u64).is_multiple_of(stride) {
                return Ok(());
            }
            let (own, opp) = idx.position(k, l, slot as u64);
            let pos = sector.position(own, opp);
            let found = if through_reader(slot as u64) {
                tb.value_in(staged, &pos)?
            } else {
                tb.win_distance(staged, &pos)?
            };
            if found.code() != truth[slot] {
                return Err(differs(slot, found));
            }
            Ok(())
        };
        // A file without value don't-cares holds every slot's true value.
        if !staged.value_dont_cares() && !in_memory {
            return stored.par_iter().zip(truth).enumerate().try_for_each(
                |(slot, (&s, &t))| match s {
                    WIN_BY_LOOKAHEAD => check_win(slot),
                    _ if s != t => Err(differs(slot, Value::from_code(s))),
                    _ => Ok(()),
                },
            );
        }
        // In chunks, each walking its slots' positions in order, its probes under one
        // pin of the block cache (nested pins are free).
        const CHUNK: usize = 1 << 10;
        stored
            .par_chunks(CHUNK)
            .enumerate()
            .try_for_each(|(c, chunk)| -> Result<(), RepackError> {
                let _pinned = crate::table::format::cache::pin();
                let start = (c * CHUNK) as u64;
                let slots = start..start + chunk.len() as u64;
                let positions = idx.positions_with_twins(k, l, slots.clone());
                // From the start of each block the reader reads, the first slot that
                // is its own twin and stores no win by lookahead is probed whatever it
                // stores.
                let mut probe_from = next_probe(start);
                for ((slot, (own, opp, twin)), &code) in slots.zip(positions).zip(chunk) {
                    let at = slot;
                    let slot = slot as usize;
                    let twin = twin as usize;
                    if twin != slot {
                        if truth[twin] != truth[slot] {
                            return Err(differs(slot, Value::from_code(truth[twin])));
                        }
                        continue;
                    }
                    if code == truth[slot] && at < probe_from {
                        continue;
                    }
                    if code == WIN_BY_LOOKAHEAD {
                        check_win(slot)?;
                        continue;
                    }
                    if at >= probe_from {
                        probe_from = next_probe(at + 1);
                    }
                    let stored = Value::from_code(code);
                    // With exact results a WDL probe reads the stored result as it is.
                    if staged.exact_results() && stored.wdl() != Value::from_code(truth[slot]).wdl()
                    {
                        return Err(differs(slot, stored));
                    }
                    let pos = sector.position(own, opp);
                    let found = if through_reader(at) {
                        tb.value_in(staged, &pos)?
                    } else if staged.value_is_exact(stored) {
                        stored
                    } else if free.is_some_and(|f| f.contains(at))
                        && stored.cmp_goodness(Value::from_code(truth[slot])).is_le()
                    {
                        // A capture reaches the truth (the fill found it): the
                        // probe's rule gives the truth.
                        Value::from_code(truth[slot])
                    } else {
                        tb.true_value(&pos, stored)?
                    };
                    let worse = stored.cmp_goodness(Value::from_code(truth[slot]));
                    if found.code() != truth[slot] || worse.is_gt() {
                        return Err(differs(slot, found));
                    }
                }
                Ok(())
            })
    }
}

/// The true code of every slot of `file`, the file of `sector` (any full file: a
/// stored value raised by the capturing plies' values where the file has value
/// don't-cares, a win's distance found one ply ahead where it has loss-only
/// depths), with `tb` answering for its children. Decompresses every block.
pub fn true_codes(
    tb: &Tablebase,
    sector: Sector,
    file: &SubspaceFile,
) -> Result<Vec<u16>, RepackError> {
    if file.wdl_only() {
        return Err(RepackError::WdlOnly {
            path: file.path().to_path_buf(),
        });
    }
    let every = file.value_dont_cares();
    if !every && !file.loss_depths() {
        // Every slot holds its true value.
        return Ok(file.read_all()?);
    }
    let mut codes = file.read_all_partial()?;
    let idx = tb.index();
    let (k, l) = sector.counts();
    // In chunks, each walking its slots' positions in order under one pin of the
    // block cache.
    const CHUNK: usize = 1 << 10;
    codes.par_chunks_mut(CHUNK).enumerate().try_for_each(
        |(c, chunk)| -> Result<(), ProbeError> {
            let _pinned = crate::table::format::cache::pin();
            let first = (c * CHUNK) as u64;
            let positions = idx.positions(k, l, first..first + chunk.len() as u64);
            for (code, (own, opp)) in chunk.iter_mut().zip(positions) {
                if every || *code == WIN_BY_LOOKAHEAD {
                    *code = tb.value_in(file, &sector.position(own, opp))?.code();
                }
            }
            Ok(())
        },
    )?;
    Ok(codes)
}
