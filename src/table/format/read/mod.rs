//! Reading a file: the header checked when it is opened, each block's table entry
//! checked and the block decompressed (and checksummed) when first read, through a [`BlockCache`] (the
//! file's own, or the one all files of a [`crate::table::probe::Tablebase`] share).
//!
//! The rooms: `parse.rs` checks the header, `blocks.rs` reads, checks and
//! decodes a section's blocks, `slots.rs` reads one slot, `whole.rs` the whole
//! file, `warm.rs` reads and decodes ahead of the probes; this file opens a file
//! and holds what it knows of it.

mod blocks;
mod parse;
mod slots;
mod warm;
mod whole;

pub(super) use blocks::decompress;
pub(super) use parse::parse_header;
pub use parse::read_header;

use super::{Encoding, Expect, FormatError, HEADER_LEN, Header, open_regular_len};
use crate::table::format::cache::BlockCache;
use blocks::{ModelCodec, SectionReader, Src};
use memmap2::Mmap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// An open database file of one subspace.
///
/// Opening reads the header (one read) and checks it; probes read the block
/// table's entries and the blocks by positioned reads. The file is mapped only
/// for the readers of whole sections (and, off Unix, for every read).
///
/// `Send + Sync`. Decompressed blocks are kept in a bounded cache (the file's own,
/// or the one all files of a [`crate::table::probe::Tablebase`] share), within its limit;
/// [`SubspaceFile::read_all`] does not fill the cache.
pub struct SubspaceFile {
    path: PathBuf,
    /// The file mapped, on first use ([`SubspaceFile::map`]).
    map: OnceLock<Mmap>,
    /// The open file, which the blocks are read from ([`Src`]).
    file: File,
    /// The file's length when it was opened.
    len: u64,
    /// The header's bytes as read.
    header_bytes: [u8; HEADER_LEN],
    header: Header,
    wdl: SectionReader,
    /// `None` in a WDL-only file.
    depth: Option<SectionReader>,
    cache: Arc<BlockCache>,
    /// The file's number in the cache.
    id: u32,
}

impl Drop for SubspaceFile {
    fn drop(&mut self) {
        self.cache.forget(self.id);
    }
}

impl std::fmt::Debug for SubspaceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubspaceFile")
            .field("path", &self.path)
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// `file` (at `path`, of `len` bytes) mapped for random access.
fn map_file(path: &Path, file: &File, len: u64) -> Result<Mmap, FormatError> {
    let len = usize::try_from(len).map_err(|_| FormatError::Corrupt {
        path: path.to_path_buf(),
        what: format!("{len} bytes, more than this machine can map"),
    })?;
    // SAFETY: the file is opened read-only and database files are never modified
    // in place (writers create a new file and rename it). Truncating a mapped file
    // behind the program's back is outside what any reader can defend against.
    let map = unsafe { memmap2::MmapOptions::new().len(len).map(file) }
        .map_err(|e| FormatError::io(path, e))?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Random);
    Ok(map)
}

impl SubspaceFile {
    /// Opens a file, checking magic, version, header checksum, the
    /// expectations, section bounds and block tables. Blocks are checked when read.
    /// The file reads through a cache of its own with the default limit
    /// ([`crate::table::probe::DEFAULT_CACHE_LIMIT`]).
    pub fn open(path: &Path, expect: &Expect) -> Result<SubspaceFile, FormatError> {
        SubspaceFile::open_cached(path, expect, Arc::default())
    }

    /// As [`SubspaceFile::open`], reading through `cache` (shared with other files).
    pub(crate) fn open_cached(
        path: &Path,
        expect: &Expect,
        cache: Arc<BlockCache>,
    ) -> Result<SubspaceFile, FormatError> {
        let (mut file, file_len) = open_regular_len(path)?;
        if file_len < HEADER_LEN as u64 {
            let mut bytes = Vec::new();
            io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| FormatError::io(path, e))?;
            parse_header(path, &bytes, file_len)?;
            // The file grew since its length was read: it is being written.
            return Err(FormatError::Truncated {
                path: path.to_path_buf(),
                expected: HEADER_LEN as u64,
                found: file_len,
            });
        }
        // One read of the header: a probe maps nothing (a mapping costs a fresh
        // process two system calls and a page fault, and its unmapping a third
        // call when the file is closed).
        let mut header_bytes = [0; HEADER_LEN];
        io::Read::read_exact(&mut file, &mut header_bytes).map_err(|e| FormatError::io(path, e))?;
        let header = parse_header(path, &header_bytes, file_len)?;
        if let Some(fp) = expect.fingerprint
            && fp != header.meta.fingerprint
        {
            return Err(FormatError::RulesMismatch {
                path: path.to_path_buf(),
                variant: header.meta.variant.clone(),
                found: header.meta.fingerprint,
                expected: fp,
            });
        }
        let mismatch = |what: String| FormatError::Mismatch {
            path: path.to_path_buf(),
            what,
        };
        if let Some((k, l)) = expect.subspace
            && (k, l) != (header.meta.k, header.meta.l)
        {
            return Err(mismatch(format!(
                "holds subspace {}-{}, expected {k}-{l}",
                header.meta.k, header.meta.l
            )));
        }
        if let Some(hands) = expect.hands
            && hands != header.meta.hands
        {
            return Err(mismatch(format!(
                "holds stones in hand {:?}, expected {hands:?}",
                header.meta.hands
            )));
        }
        if let Some(size) = expect.size
            && size != header.size
        {
            return Err(mismatch(format!(
                "has {} slots, the index has {size}",
                header.size
            )));
        }
        let corrupt = |what: &str| FormatError::Corrupt {
            path: path.to_path_buf(),
            what: what.into(),
        };
        let wdl_end = header.wdl.offset.checked_add(header.wdl.length);
        if header.wdl.offset != HEADER_LEN as u64
            || header.depth.is_some_and(|d| Some(d.offset) != wdl_end)
        {
            return Err(corrupt("sections are not where the header says"));
        }
        if header.max_distance
            != header
                .meta
                .counts
                .longest_win
                .max(header.meta.counts.longest_loss)
        {
            return Err(corrupt(
                "max distance disagrees with the longest win and loss",
            ));
        }
        let model = (header.wdl.encoding == Encoding::Model)
            .then(|| ModelCodec::new(path, &header, "WDL"))
            .transpose()?;
        let map = OnceLock::new();
        #[cfg(not(unix))]
        let _ = map.set(map_file(path, &file, file_len)?);
        #[cfg(unix)]
        let src = (Src::File(&file), file_len);
        #[cfg(not(unix))]
        let src = (Src::Map(map.get().expect("just mapped")), file_len);
        let id = cache.register();
        let cached = (&*cache, id);
        let wdl = SectionReader::new(path, src, header.wdl, header.size, "WDL", model, cached)?;
        let depth = header
            .depth
            .map(|d| {
                let model = d
                    .encoding
                    .is_depth_model()
                    .then(|| ModelCodec::new(path, &header, "depth"))
                    .transpose()?;
                SectionReader::new(path, src, d, header.size, "depth", model, cached)
            })
            .transpose()?;
        if header.file_bytes() != file_len {
            return Err(corrupt("bytes after the last section"));
        }
        Ok(SubspaceFile {
            path: path.to_path_buf(),
            map,
            file,
            len: file_len,
            header_bytes,
            header,
            wdl,
            depth,
            id,
            cache,
        })
    }

    /// The file's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Where the blocks are read from ([`Src`]): on Unix the file, by
    /// positioned reads; elsewhere the mapping made at open.
    fn src(&self) -> Src<'_> {
        #[cfg(unix)]
        return Src::File(&self.file);
        #[cfg(not(unix))]
        return Src::Map(self.map.get().expect("mapped at open off Unix"));
    }

    /// The file mapped (on first use: the readers of whole sections), for
    /// random access: a fault reads its page, not megabytes around it (the
    /// readers ask for read-ahead of what they read through,
    /// [`SubspaceFile::mapped`]).
    fn map(&self) -> Result<&Mmap, FormatError> {
        if let Some(map) = self.map.get() {
            return Ok(map);
        }
        let map = map_file(&self.path, &self.file, self.len)?;
        // A racing thread may have mapped it too: either mapping is the file.
        Ok(self.map.get_or_init(|| map))
    }

    /// The raw bytes of the file's header.
    pub(super) fn header_bytes(&self) -> &[u8] {
        &self.header_bytes
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of index slots.
    pub fn size(&self) -> u64 {
        self.header.size
    }

    fn check_idx(&self, idx: u64) -> Result<(), FormatError> {
        if idx < self.header.size {
            Ok(())
        } else {
            Err(FormatError::OutOfRange {
                idx,
                size: self.header.size,
            })
        }
    }

    fn corrupt_slot(&self, section: &str, idx: u64) -> FormatError {
        FormatError::Corrupt {
            path: self.path.clone(),
            what: format!("invalid {section} entry for slot {idx}"),
        }
    }

    /// Whether the file holds win/draw/loss only: [`SubspaceFile::code`],
    /// [`SubspaceFile::value`] and [`SubspaceFile::read_all`] fail with
    /// [`FormatError::WdlOnly`].
    pub fn wdl_only(&self) -> bool {
        self.depth.is_none()
    }

    /// Whether the WDL section is decoded by the context model: model-coded
    /// ([`Encoding::Model`]) and not zstd-coded behind an empty prior (which the
    /// writer chooses where the model would not be smaller).
    pub fn wdl_model(&self) -> bool {
        matches!(self.wdl.model, Some(ModelCodec { stored: true, .. }))
    }

    /// Whether the depth section is decoded by the depth model: model-coded
    /// ([`Encoding::DepthModel`], [`Encoding::DepthRefined`]) and not zstd-coded
    /// behind an empty prior.
    pub fn depth_model(&self) -> bool {
        matches!(
            self.depth.as_ref().and_then(|d| d.model.as_ref()),
            Some(ModelCodec { stored: true, .. })
        )
    }

    /// Whether the WDL section holds don't-cares ([`super::FLAG_WDL_DONT_CARES`]):
    /// [`SubspaceFile::wdl`] is then a result no better than the true one, which is
    /// the better of it and the capturing plies' results
    /// ([`crate::table::probe::Tablebase::probe_wdl`] applies the rule).
    pub fn wdl_dont_cares(&self) -> bool {
        self.header.wdl_dont_cares()
    }

    /// Whether the full values hold don't-cares ([`super::FLAG_VALUE_DONT_CARES`], a
    /// full file written by `millbase repack`): [`SubspaceFile::value`] is then a
    /// value no better than the true one, which is the better of it and the
    /// capturing plies' values ([`crate::table::probe::Tablebase::probe`] applies the
    /// rule), and [`SubspaceFile::read_all`] refuses the file.
    pub fn value_dont_cares(&self) -> bool {
        self.header.value_dont_cares()
    }

    /// Whether the value don't-cares keep every result true and store `Loss(0)`
    /// only ([`super::FLAG_EXACT_RESULTS`]): [`SubspaceFile::wdl`] is then the
    /// true result, and [`SubspaceFile::value`] the true value unless it is
    /// `Loss(0)`.
    pub fn exact_results(&self) -> bool {
        self.header.exact_results()
    }

    /// Whether `v`, the stored value of a canonical slot of this file, is its true
    /// value with no look at the capturing plies ([`Header::value_is_exact`]).
    #[inline]
    pub fn value_is_exact(&self, v: crate::rules::value::Value) -> bool {
        self.header.value_is_exact(v)
    }

    /// Whether the depth section holds the lost slots' entries only
    /// ([`super::FLAG_LOSS_DEPTHS`]): [`SubspaceFile::value`] of a won slot is then
    /// [`FormatError::WinByLookahead`], and [`crate::table::probe::Tablebase::probe`] finds
    /// the distance one ply ahead.
    pub fn loss_depths(&self) -> bool {
        self.header.loss_depths()
    }

    /// The depth section, or the error that says this file has none.
    fn depth(&self) -> Result<&SectionReader, FormatError> {
        self.depth.as_ref().ok_or_else(|| FormatError::WdlOnly {
            path: self.path.clone(),
        })
    }

    /// Bytes of the WDL and the depth section (0 if none), for size reports.
    pub fn section_bytes(&self) -> (u64, u64) {
        (self.header.wdl.length, self.header.depth_bytes())
    }

    /// Decompressed blocks of this file held in its cache, and their bytes.
    pub fn cached(&self) -> (usize, usize) {
        self.cache.held_by(self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::format::tests::{meta_for, realistic_codes, small_opts, tmpdir};
    use crate::table::format::write_subspace_with;

    #[test]
    fn wdl_probes_never_touch_depth() {
        let dir = tmpdir("wdlonly");
        let codes = realistic_codes(10_000, 3);
        let path = dir.join("a.mdb");
        write_subspace_with(&path, &meta_for(&codes), &codes, &small_opts()).unwrap();
        let f = SubspaceFile::open(&path, &Expect::any()).unwrap();
        for i in 0..codes.len() as u64 {
            f.wdl(i).unwrap();
        }
        assert_eq!(f.depth.as_ref().map_or(0, |d| d.cached.held()), 0);
        assert_eq!(f.wdl.cached.held(), f.wdl.info.blocks as usize);
        // On Unix probes read the file by positioned reads: it was never mapped.
        assert!(cfg!(not(unix)) || f.map.get().is_none());
        f.verify_checksums().unwrap();
        assert!(f.map.get().is_some());
    }
}
