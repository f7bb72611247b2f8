//! Packing a database directory for shipping: `millbase pack --wdl-only` writes,
//! for every sector file of a full directory, a file with its WDL section only
//! (format version 2, see `docs/FORMAT.md`), and a manifest that says so. The WDL
//! section is copied byte for byte (its checksums checked), so a pack decompresses
//! nothing and reads only the WDL sections.
//!
//! With don't-cares ([`crate::table::pack::dontcare`]), the WDL results of each sector are
//! filled first and the section compressed again: smaller files, and a probe that
//! looks at the capturing plies of a slot whose stored result is not a win. A
//! source file with don't-cares (`millbase repack`) has a WDL section that follows
//! the WDL rule already: it is copied as it is, with its flag.
//!
//! Each file is written atomically (temporary file, fsync, rename), and a file
//! already packed from the same source file is kept, so an interrupted pack resumes
//! where it stopped. The source directory is never written.

pub mod derived;
pub mod dontcare;
pub mod repack;

use crate::table::dir::manifest::{Entry, Manifest, ManifestError};
use crate::table::dir::{existing_files, open_finished_sector};
use crate::table::format::{
    Encoding, Expect, FormatError, Header, SERVING_LEVEL, SERVING_WDL_BLOCK, Section, SubspaceFile,
    VERSION_FLAGS, WDL_BLOCK, WDL_LEVEL, WriteOptions, write_subspace_with, write_wdl_only_chosen,
    write_wdl_only_copy,
};
use crate::table::index::Index;
use crate::table::pack::dontcare::{FillCounts, allowed_trits, fill_wdl_with, wdl_freedoms};
use crate::table::probe::{ProbeError, Tablebase};
use crate::table::sector::Sector;
use std::path::{Path, PathBuf};

/// Why a pack failed.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The output is the source directory.
    #[error(
        "{}: the output directory is the source database; pack into another directory (`--out DIR`)",
        dir.display()
    )]
    SameDirectory {
        /// The directory.
        dir: PathBuf,
    },
    /// The output already holds a full database file, which a pack would replace.
    #[error(
        "{}: a full database file (with distances) is in the output directory; pack into an empty directory or one written by `millbase pack --wdl-only`",
        path.display()
    )]
    FullFileInOutput {
        /// The file.
        path: PathBuf,
    },
    /// The file written does not read back what was meant to be stored: it is
    /// deleted (a bug in a coder, or a failing disk).
    #[error(
        "{}: the packed file reads result {found} at slot {slot}, where it should hold {expected}; it was deleted, the source is untouched (a bug or a failing disk: run the pack again, and report it if it repeats)",
        path.display()
    )]
    Differs {
        /// The packed file (deleted).
        path: PathBuf,
        /// The first slot that differs.
        slot: u64,
        /// What it reads (0 draw, 1 win, 2 loss).
        found: u16,
        /// What was to be stored: a trit, or (with don't-cares the model chose)
        /// the mask of allowed trits (bit 0 draw, 1 win, 2 loss).
        expected: String,
    },
    /// A file could not be read or written.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A value needed to fill the don't-cares could not be probed.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The source or output directory could not be used.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<ManifestError> for PackError {
    fn from(e: ManifestError) -> PackError {
        OutputError::from(e).into()
    }
}

/// Why the directories of a pack or a repack ([`repack::repack`]) could not be used.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The source has no database files.
    #[error("{}: no database files to {verb}", dir.display())]
    Empty {
        /// The source directory.
        dir: PathBuf,
        /// What was to be done: `pack` or `repack`.
        verb: &'static str,
    },
    /// The output directory's manifest is of other rules.
    #[error(
        "{}: its manifest is for rules '{found}', the source for '{expected}'; write into another directory",
        dir.display()
    )]
    OtherRules {
        /// The output directory.
        dir: PathBuf,
        /// The rules of the output's manifest.
        found: String,
        /// The rules of the source.
        expected: String,
    },
    /// The output's manifest could not be read or written.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A directory could not be created or resolved.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The wrapper of a file-system error on `path`.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What a pack and a repack start from: the output's manifest (of the source's
/// rules, with the sectors to write planned), the source's manifest, and the
/// source's files to write again.
pub(crate) struct Output {
    /// The output's manifest: the one there if it is of these rules and `keep`
    /// asked for it, else a new one.
    pub manifest: Manifest,
    /// The source's manifest, if readable (its build times and examples).
    pub source_manifest: Option<Manifest>,
    /// The source's files to write, with their sectors.
    pub files: Vec<(Sector, Result<SubspaceFile, FormatError>)>,
    /// Whether the output is the source directory.
    pub same: bool,
}

impl Output {
    /// Creates the output directory `out`, checks its manifest against the rules of
    /// `idx`, lists the source's files of the sectors `wanted` keeps (none is an
    /// error) and plans them in the output's manifest. `verb` names the work in
    /// errors; `keep` keeps the output's own manifest's entries.
    pub fn prepare(
        src: &Path,
        out: &Path,
        idx: &Index,
        verb: &'static str,
        keep: bool,
        wanted: impl Fn(Sector) -> bool,
    ) -> Result<Output, OutputError> {
        std::fs::create_dir_all(out).map_err(io_error(out))?;
        let same = src.canonicalize().map_err(io_error(src))?
            == out.canonicalize().map_err(io_error(out))?;
        let rules = idx.rules();
        let mut manifest = match Manifest::load(out) {
            Ok(Some(m)) if m.fingerprint() != Some(rules.fingerprint()) => {
                return Err(OutputError::OtherRules {
                    dir: out.to_path_buf(),
                    found: m.rules.name,
                    expected: rules.name.to_string(),
                });
            }
            Ok(Some(m)) if keep => m,
            _ => Manifest::new(rules.name, rules.fingerprint()),
        };
        let files: Vec<_> = existing_files(src, idx)
            .into_iter()
            .filter(|&(s, _)| wanted(s))
            .collect();
        if files.is_empty() {
            return Err(OutputError::Empty {
                dir: src.to_path_buf(),
                verb,
            });
        }
        let targets: Vec<Sector> = files.iter().map(|&(s, _)| s).collect();
        manifest.plan(out, &targets)?;
        // The class counts a fresh process reads instead of building the index
        // tables (derived data, like the manifest).
        let _ = crate::table::dir::classes::write(out, rules);
        Ok(Output {
            manifest,
            source_manifest: Manifest::load(src).ok().flatten(),
            files,
            same,
        })
    }

    /// The manifest entry of a file written from the source's file of `sector`:
    /// made from its `header`, with the source's build time (if `timed`) and
    /// examples of the longest win and loss.
    pub fn entry(&self, sector: Sector, header: &Header, timed: bool) -> Entry {
        entry_from(self.source_manifest.as_ref(), sector, header, timed)
    }
}

/// The manifest entry of a file of `sector` with `header`, written again from a file
/// that `source` (a manifest) lists: its build time (if `timed`) and examples kept.
pub(crate) fn entry_from(
    source: Option<&Manifest>,
    sector: Sector,
    header: &Header,
    timed: bool,
) -> Entry {
    let old = source.and_then(|m| m.get_sector(sector));
    let seconds = old.filter(|_| timed).map_or(0.0, |e| e.build_seconds);
    let mut entry = Entry::new(header, seconds);
    if let Some(e) = old {
        if timed {
            entry.positions_per_second = e.positions_per_second;
        }
        entry.longest_win_example = e.longest_win_example.clone();
        entry.longest_loss_example = e.longest_loss_example.clone();
    }
    entry
}

/// What happened to one sector.
#[derive(Clone, Debug)]
pub struct PackReport {
    /// The sector.
    pub sector: Sector,
    /// Bytes of the source file.
    pub source_bytes: u64,
    /// Bytes of the packed file.
    pub packed_bytes: u64,
    /// Index slots of the sector.
    pub slots: u64,
    /// Seconds this sector took.
    pub seconds: f64,
    /// Whether the packed file was already there (from an interrupted pack).
    pub kept: bool,
    /// The don't-cares found and filled (`None` without don't-cares, or when kept).
    pub filled: Option<FillCounts>,
}

/// How to pack.
#[derive(Clone, Copy, Debug)]
pub struct PackOptions {
    /// Fill the WDL don't-cares ([`crate::table::pack::dontcare`]) and mark the files so.
    pub dont_cares: bool,
    /// Code the WDL sections so ([`Encoding::Trits5`] with zstd, or
    /// [`Encoding::Model`]); `None`: as the source codes them.
    pub coding: Option<Encoding>,
    /// Slots per block of a WDL section written with zstd (a model-coded one
    /// holds whole classes).
    pub wdl_block: u32,
    /// zstd level of a WDL section written with zstd.
    pub wdl_level: i32,
}

impl Default for PackOptions {
    fn default() -> Self {
        PackOptions::DEFAULT
    }
}

impl PackOptions {
    /// No don't-cares, the WDL sections coded as the source codes them (zstd in
    /// the writer's default blocks where a coding is asked for).
    pub const DEFAULT: PackOptions = PackOptions {
        dont_cares: false,
        coding: None,
        wdl_block: WDL_BLOCK,
        wdl_level: WDL_LEVEL,
    };

    /// The WDL package of `profile`: model-coded, don't-cares filled
    /// ([`Profile::Archive`]), or zstd-compressed in blocks of
    /// [`SERVING_WDL_BLOCK`] slots, every result true, so that a probe is one
    /// look-up ([`Profile::Serving`]; from a directory of the serving profile
    /// the sections are copied).
    pub fn profile(profile: Profile) -> PackOptions {
        match profile {
            Profile::Archive => PackOptions {
                dont_cares: true,
                coding: Some(Encoding::Model),
                ..PackOptions::default()
            },
            Profile::Serving => PackOptions {
                dont_cares: false,
                coding: Some(Encoding::Trits5),
                wdl_block: SERVING_WDL_BLOCK,
                wdl_level: SERVING_LEVEL,
            },
        }
    }
}

/// The two small forms (`millbase repack --profile`, `millbase pack --profile`),
/// both exact on every slot: one cannot be both the smallest and the fastest to
/// decode cold (`docs/FORMAT.md`, "Profiles").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// The smallest files: both sections model-coded in blocks of whole classes
    /// (format versions 5 and 6). A cold block costs milliseconds to decode.
    #[default]
    Archive,
    /// Files for serving probes: both sections zstd-compressed in small blocks
    /// (format version 2), larger, a WDL block decoded cold in under 100 µs.
    Serving,
}

impl Profile {
    /// The profile named `name` (`archive` or `serving`).
    pub fn parse(name: &str) -> Option<Profile> {
        match name {
            "archive" => Some(Profile::Archive),
            "serving" => Some(Profile::Serving),
            _ => None,
        }
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Archive => "archive",
            Profile::Serving => "serving",
        }
    }
}

/// Packs every sector file of the full database `src` into `out`, WDL only, for the
/// rules of `idx`. `done` is called after each sector. Refuses to write into `src`
/// or over a full database file.
pub fn pack_wdl_only(
    src: &Path,
    out: &Path,
    idx: &Index,
    opts: PackOptions,
    done: impl FnMut(&PackReport),
) -> Result<Vec<PackReport>, PackError> {
    pack_wdl_only_sectors(src, out, idx, opts, &[], done)
}

/// [`pack_wdl_only`] of the sectors in `only` (every sector when empty).
pub fn pack_wdl_only_sectors(
    src: &Path,
    out: &Path,
    idx: &Index,
    opts: PackOptions,
    only: &[Sector],
    mut done: impl FnMut(&PackReport),
) -> Result<Vec<PackReport>, PackError> {
    let rules = idx.rules();
    // A sector derived in the output ([`crate::table::pack::derived`]) stays so.
    let wanted = |s: Sector| {
        (only.is_empty() || only.contains(&s)) && !crate::table::dir::is_derived(out, rules, s)
    };
    // The output is checked to be another directory before its manifest is planned.
    std::fs::create_dir_all(out).map_err(|e| PackError::from(io_error(out)(e)))?;
    let resolve = |p: &Path| {
        p.canonicalize()
            .map_err(|e| PackError::from(io_error(p)(e)))
    };
    if resolve(src)? == resolve(out)? {
        return Err(PackError::SameDirectory {
            dir: out.to_path_buf(),
        });
    }
    let mut output = Output::prepare(src, out, idx, "pack", false, wanted)?;
    output.manifest.wdl_only = true;
    output.manifest.format_version = VERSION_FLAGS;
    let source = Tablebase::open(src)?;
    let files = std::mem::take(&mut output.files);
    let mut reports = Vec::with_capacity(files.len());
    for (sector, file) in files {
        let file = file?;
        let job = Job {
            src: &file,
            source: &source,
            out,
            idx,
            sector,
            opts,
        };
        let start = std::time::Instant::now();
        let (header, kept, filled) = job.run()?;
        let entry = output.entry(sector, &header, false);
        let manifest = &mut output.manifest;
        manifest.format_version = manifest.format_version.max(header.version);
        manifest.record(out, entry)?;
        let report = PackReport {
            sector,
            source_bytes: file.header().file_bytes(),
            packed_bytes: header.file_bytes(),
            slots: header.size,
            seconds: start.elapsed().as_secs_f64(),
            kept,
            filled,
        };
        done(&report);
        reports.push(report);
    }
    Ok(reports)
}

/// One sector to pack.
struct Job<'a> {
    src: &'a SubspaceFile,
    source: &'a Tablebase,
    out: &'a Path,
    idx: &'a Index,
    sector: Sector,
    opts: PackOptions,
}

impl Job<'_> {
    /// Writes the WDL-only file of the sector into the output, unless a packed file
    /// of the same contents is already there. Returns its header, whether it was
    /// kept, and the don't-cares filled.
    fn run(&self) -> Result<(Header, bool, Option<FillCounts>), PackError> {
        let path = self.out.join(self.sector.file_name());
        if std::fs::symlink_metadata(&path).is_ok()
            && let Some(header) = self.packed_already()?
        {
            return Ok((header, true, None));
        }
        if self.copies() {
            return Ok((write_wdl_only_copy(self.src, &path)?, false, None));
        }
        let mut trits = self.src.read_all_wdl()?;
        let fill = !self.src.wdl_dont_cares() && self.opts.dont_cares;
        let freedom = if fill {
            Some(wdl_freedoms(self.source, self.sector, &trits)?)
        } else {
            None
        };
        // The model chooses among the allowed results itself.
        let allowed: Option<Vec<u8>> = freedom
            .as_ref()
            .filter(|_| self.coding() == Encoding::Model)
            .map(|f| {
                trits
                    .iter()
                    .zip(f)
                    .map(|(&t, &f)| allowed_trits(t, f))
                    .collect()
            });
        let counts = freedom.map(|f| fill_wdl_with(&mut trits, &f));
        // The writer takes codes: a draw, Win(1) and Loss(0) carry the three results.
        for t in trits.iter_mut() {
            *t = [0, 2, 1][*t as usize];
        }
        let header = match &allowed {
            Some(allowed) => {
                write_wdl_only_chosen(&path, &self.src.header().meta, &trits, allowed)?
            }
            None => {
                let opts = WriteOptions {
                    wdl_only: true,
                    wdl_dont_cares: fill || self.src.wdl_dont_cares(),
                    wdl_encoding: self.coding(),
                    wdl_block: self.opts.wdl_block,
                    wdl_level: self.opts.wdl_level,
                    compact_tables: self.coding() == Encoding::Model,
                    ..WriteOptions::default()
                };
                write_subspace_with(&path, &self.src.header().meta, &trits, &opts)?
            }
        };
        self.check(&path, &trits, allowed.as_deref())?;
        Ok((header, false, counts))
    }

    /// Reads the file written to `path` back on every slot: each result must be
    /// the one of `codes` (a draw, `Win(1)`, `Loss(0)`), or one of `allowed`'s where
    /// the model chose. Deletes the file if not.
    fn check(&self, path: &Path, codes: &[u16], allowed: Option<&[u8]>) -> Result<(), PackError> {
        let (k, l) = self.sector.counts();
        let expect = Expect::sector(
            self.idx.rules().fingerprint(),
            self.sector,
            self.idx.size(k, l),
        );
        let stored = SubspaceFile::open(path, &expect)?.read_all_wdl()?;
        let bad = stored.iter().enumerate().find_map(|(i, &t)| {
            let ok = match allowed {
                Some(a) => a[i] >> t & 1 == 1,
                None => t == [0, 2, 1][codes[i] as usize],
            };
            (!ok).then_some((i, t))
        });
        let Some((slot, found)) = bad else {
            return Ok(());
        };
        let _ = std::fs::remove_file(path);
        Err(PackError::Differs {
            path: path.to_path_buf(),
            slot: slot as u64,
            found,
            expected: match allowed {
                Some(a) => format!("one of the results {:03b}", a[slot]),
                None => format!("{}", [0, 2, 1][codes[slot] as usize]),
            },
        })
    }
}

impl Job<'_> {
    /// The WDL coding of the packed file.
    fn coding(&self) -> Encoding {
        self.opts.coding.unwrap_or(self.src.header().wdl.encoding)
    }

    /// Whether the WDL section is copied as it is: coded as asked, and without
    /// don't-cares asked for or from a source whose WDL section holds them already
    /// (a repacked full file).
    fn copies(&self) -> bool {
        let wdl = &self.src.header().wdl;
        self.coding() == wdl.encoding
            && self.blocks_as_asked(wdl)
            && (!self.opts.dont_cares || self.src.wdl_dont_cares())
    }

    /// Whether the WDL section `wdl` is in blocks of the size asked for: whole
    /// classes where it is model-coded, else [`PackOptions::wdl_block`] slots
    /// when the coding is asked for (as the source's when it is not).
    fn blocks_as_asked(&self, wdl: &Section) -> bool {
        wdl.encoding == Encoding::Model
            || self.opts.coding.is_none()
            || wdl.block_slots == self.opts.wdl_block
    }

    /// The header of the packed file in the output if it is an intact WDL-only file
    /// of the sector made from the same source the same way (the same WDL section
    /// when copied, the same header data and flags when filled), so that a resumed
    /// pack keeps it. A full file there is an error.
    fn packed_already(&self) -> Result<Option<Header>, PackError> {
        let Ok(packed) = open_finished_sector(self.out, self.idx, self.sector) else {
            return Ok(None);
        };
        if !packed.wdl_only() {
            return Err(PackError::FullFileInOutput {
                path: packed.path().to_path_buf(),
            });
        }
        let (s, p) = (self.src.header(), packed.header());
        let same_wdl = if !self.copies() {
            p.wdl_dont_cares() == (self.opts.dont_cares || s.wdl_dont_cares())
                && p.wdl.encoding == self.coding()
                && self.blocks_as_asked(&p.wdl)
        } else {
            // The same blocks, in the table the copy gives them.
            p.wdl_dont_cares() == s.wdl_dont_cares()
                && s.wdl.blocks == p.wdl.blocks
                && s.wdl.length - s.wdl.table_len() == p.wdl.length - p.wdl.table_len()
                && s.wdl.data_checksum == p.wdl.data_checksum
                && p.compact_tables() == (s.wdl.encoding == Encoding::Model)
        };
        let same = same_wdl
            && s.meta == p.meta
            && s.size == p.size
            && s.max_distance == p.max_distance
            && packed.verify_checksums().is_ok();
        Ok(same.then(|| p.clone()))
    }
}
