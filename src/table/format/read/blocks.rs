//! A section's blocks: each block's table entry read and checked when the block
//! is, and the block read (by a positioned read, or from the mapping off Unix),
//! checksummed and decompressed, by zstd or by the section's model.

use crate::rules::Rules;
use crate::table::format::cache::{BlockCache, Blocks};
use crate::table::format::coder::{Model, load_prior_of};
use crate::table::format::model::{Geometry, decode_block};
use crate::table::format::pack::{count_entries, expand_depth, trits5};
use crate::table::format::{
    BLOCK_ENTRY_LEN, COMPACT_ENTRY_LEN, DepthEntries, Encoding, FormatError, Header, Section,
    block_checksum, depth_model, model,
};
use byteorder::{ByteOrder, LittleEndian as LE};
use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// One entry of a block table.
#[derive(Clone, Copy, Debug)]
pub(super) struct Block {
    offset: u64,
    len: u32,
    checksum: u64,
}

/// Where a file's compressed blocks are read from: on Unix the file itself, by
/// positioned reads; elsewhere its mapping. A read of a mapped
/// page that a file cut short on disk no longer has is a SIGBUS that kills the
/// program; a positioned read of it is an error naming the file, so a file
/// damaged or truncated under a running program (a server) costs the probes
/// that need it, not the program. Only a cache miss reads a block, and it then
/// decompresses it, which costs far more than the read.
#[derive(Clone, Copy)]
pub(super) enum Src<'a> {
    /// The open file, read by positioned reads.
    #[cfg(unix)]
    File(&'a File),
    /// The file's mapping.
    #[cfg(not(unix))]
    Map(&'a [u8]),
}

impl<'a> Src<'a> {
    /// `len` bytes at `offset`: borrowed from the mapping, or read from the file.
    pub(super) fn bytes(
        self,
        path: &Path,
        offset: u64,
        len: u32,
    ) -> Result<Cow<'a, [u8]>, FormatError> {
        match self {
            #[cfg(unix)]
            Src::File(file) => {
                use std::os::unix::fs::FileExt;
                let mut buf = vec![0; len as usize];
                match file.read_exact_at(&mut buf, offset) {
                    Ok(()) => Ok(Cow::Owned(buf)),
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                        Err(FormatError::Truncated {
                            path: path.to_path_buf(),
                            expected: offset + len as u64,
                            found: file.metadata().map_or(0, |m| m.len()),
                        })
                    }
                    Err(e) => Err(FormatError::io(path, e)),
                }
            }
            #[cfg(not(unix))]
            Src::Map(map) => {
                let _ = path;
                Ok(Cow::Borrowed(
                    &map[offset as usize..offset as usize + len as usize],
                ))
            }
        }
    }
}

/// A section as the reader uses it: entry and block table.
pub(super) struct SectionReader {
    pub(super) info: Section,
    pub(super) name: &'static str,
    /// The section's blocks in the cache.
    pub(super) cached: Arc<Blocks>,
    /// The coder of a model-coded section ([`crate::table::format::Encoding::Model`],
    /// [`crate::table::format::Encoding::DepthModel`]), whose block 0 is the prior and block `b + 1`
    /// holds the slots of block `b`.
    pub(super) model: Option<ModelCodec>,
}

/// What decodes the blocks of a model-coded section.
pub(super) struct ModelCodec {
    pub(super) geometry: Geometry,
    /// Nodes of the section's model (its prior's length).
    pub(super) nodes: usize,
    /// Whether a prior is stored; not where the writer found zstd smaller (an
    /// empty block 0): the blocks are then zstd-compressed trits.
    pub(super) stored: bool,
    /// The stored prior, one probability per node, read on the first block decoded
    /// (at open only its bytes' checksum is checked), so that an open file holds
    /// no prior until it is decoded from.
    prior: OnceLock<Vec<u16>>,
}

impl ModelCodec {
    /// The coder of `header`'s `section` (`"WDL"` or `"depth"`), checked against the
    /// rules the header names (which this program must know) and the section's
    /// geometry.
    pub(super) fn new(
        path: &Path,
        header: &Header,
        section: &str,
    ) -> Result<ModelCodec, FormatError> {
        let meta = &header.meta;
        let rules = Rules::by_name(&meta.variant)
            .filter(|r| r.fingerprint() == meta.fingerprint)
            .ok_or_else(|| FormatError::Mismatch {
                path: path.to_path_buf(),
                what: format!(
                    "its {section} section is model-coded for rules '{}' (fingerprint {:016x}), which this program does not know; probe it with the millbase that wrote it, or repack the source without `--{}-coding model`",
                    meta.variant, meta.fingerprint, section.to_lowercase()
                ),
            })?;
        let geometry = Geometry::new(rules, meta.k, meta.l, meta.hands);
        if geometry.size() != header.size {
            return Err(FormatError::Corrupt {
                path: path.to_path_buf(),
                what: format!(
                    "model-coded {section} section of {} slots; the rules give {}",
                    header.size,
                    geometry.size()
                ),
            });
        }
        let nodes = if section == "WDL" {
            model::NODES
        } else {
            depth_model::NODES
        };
        Ok(ModelCodec {
            geometry,
            nodes,
            stored: false,
            prior: OnceLock::new(),
        })
    }
}

thread_local! {
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Decompresses `src` into exactly `raw_len` bytes, or fails.
pub(crate) fn decompress(src: &[u8], raw_len: usize) -> io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new()?);
        }
        let d = slot.as_mut().expect("just set");
        let mut out = Vec::with_capacity(raw_len);
        let n = d.decompress_to_buffer(src, &mut out)?;
        if n != raw_len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("block holds {n} bytes, {raw_len} expected"),
            ));
        }
        Ok(out)
    })
}

impl SectionReader {
    /// Checks the section's geometry against the file. Its table is read an entry
    /// at a time as blocks are read ([`SectionReader::block`]), or whole when a
    /// caller reads every block ([`SectionReader::table`]).
    pub(super) fn new(
        path: &Path,
        (src, file_len): (Src, u64),
        info: Section,
        size: u64,
        name: &'static str,
        mut model: Option<ModelCodec>,
        (cache, file): (&BlockCache, u32),
    ) -> Result<SectionReader, FormatError> {
        let corrupt = |what: String| FormatError::Corrupt {
            path: path.to_path_buf(),
            what,
        };
        if info.block_slots == 0 {
            return Err(corrupt(format!("{name} section has blocks of 0 slots")));
        }
        // A model-coded section's block 0 is its prior.
        let blocks = size.div_ceil(info.block_slots as u64) + model.is_some() as u64;
        if blocks != info.blocks as u64 {
            return Err(corrupt(format!(
                "{name} section has {} blocks, {blocks} expected",
                info.blocks
            )));
        }
        let table_len = info.table_len();
        let end = info.offset.checked_add(info.length);
        match end {
            None => return Err(corrupt(format!("{name} section length overflows"))),
            Some(end) if end > file_len => {
                return Err(FormatError::Truncated {
                    path: path.to_path_buf(),
                    expected: end,
                    found: file_len,
                });
            }
            Some(_) => {}
        }
        if table_len > info.length {
            return Err(corrupt(format!(
                "{name} section shorter than its block table"
            )));
        }
        let mut reader = SectionReader {
            info,
            name,
            cached: cache.blocks(file, info.blocks as usize),
            model: None,
        };
        if let Some(m) = &mut model {
            // The prior's bytes are checked now, read on first use.
            let stored = reader.compressed(path, src, 0)?;
            m.stored = !stored.is_empty();
            if m.stored && m.geometry.block_slots() != info.block_slots as u64 {
                return Err(corrupt(format!(
                    "model-coded {name} section in blocks of {} slots; the rules give {}",
                    info.block_slots,
                    m.geometry.block_slots()
                )));
            }
        }
        reader.model = model;
        Ok(reader)
    }

    /// Entry `b` of the block table, read alone and checked where it stands: the
    /// block inside the section, starting where the table ends (block 0) or
    /// after it, and ending where the next begins; the reserved bytes zero. A probe so reads one place of
    /// the table, not all of it (a page, where a table can be hundreds of
    /// kilobytes); a damaged entry the local checks miss gives bytes that do not
    /// match its checksum, and `verify` checks the table's own checksum
    /// ([`SubspaceFile::verify_checksums`](super::SubspaceFile::verify_checksums)).
    fn block(&self, path: &Path, src: Src, b: usize) -> Result<Block, FormatError> {
        let info = self.info;
        let entries = info.blocks as usize;
        let data = info.offset + info.table_len();
        let section_end = info.offset + info.length;
        let last = b + 1 == entries;
        let misplaced = || FormatError::Corrupt {
            path: path.to_path_buf(),
            what: format!("{} block {b} is not where the table says", self.name),
        };
        // The entries are read like the blocks (a file cut short under the
        // program is an error, not a signal). The table's bounds were checked
        // against the file at open.
        if info.compact {
            // Where the block before ends (0 for block 0), then this block's end
            // and checksum, counted from the end of the table.
            let at = info.offset + (b.saturating_sub(1) * COMPACT_ENTRY_LEN) as u64;
            let e = src.bytes(
                path,
                at,
                (COMPACT_ENTRY_LEN * (1 + (b > 0) as usize)) as u32,
            )?;
            let (start, e) = match b {
                0 => (0, &e[..]),
                _ => (LE::read_u32(&e[0..]) as u64, &e[COMPACT_ENTRY_LEN..]),
            };
            let end = LE::read_u32(&e[0..]) as u64;
            if start > end || data + end > section_end || (last && data + end != section_end) {
                return Err(misplaced());
            }
            return Ok(Block {
                offset: data + start,
                len: (end - start) as u32,
                checksum: LE::read_u32(&e[4..]) as u64,
            });
        }
        let at = info.offset + (b * BLOCK_ENTRY_LEN) as u64;
        let e = src.bytes(
            path,
            at,
            (BLOCK_ENTRY_LEN + if last { 0 } else { 8 }) as u32,
        )?;
        let blk = Block {
            offset: LE::read_u64(&e[0..]),
            len: LE::read_u32(&e[8..]),
            checksum: LE::read_u64(&e[16..]),
        };
        let next = if last {
            section_end
        } else {
            LE::read_u64(&e[BLOCK_ENTRY_LEN..])
        };
        let fits = if b == 0 {
            blk.offset == data
        } else {
            blk.offset >= data
        };
        let reserved = LE::read_u32(&e[12..]);
        if !fits
            || reserved != 0
            || blk.offset.checked_add(blk.len as u64) != Some(next)
            || next > section_end
        {
            return Err(misplaced());
        }
        Ok(blk)
    }

    /// The model a block of this section starts from, if the section is model-coded
    /// behind a stored prior: its geometry and prior, the prior read from the file
    /// the first time.
    pub(super) fn model_prior(
        &self,
        path: &Path,
        src: Src,
    ) -> Result<Option<(&Geometry, &[u16])>, FormatError> {
        let Some(m) = self.model.as_ref().filter(|m| m.stored) else {
            return Ok(None);
        };
        if let Some(prior) = m.prior.get() {
            return Ok(Some((&m.geometry, prior)));
        }
        let stored = self.compressed(path, src, 0)?;
        let prior = load_prior_of(&stored, m.nodes).map_err(|e| FormatError::Corrupt {
            path: path.to_path_buf(),
            what: format!("{} section's model prior: {e}", self.name),
        })?;
        // A racing thread may have read it too: the same bytes, the same prior.
        let _ = m.prior.set(prior);
        Ok(Some((&m.geometry, m.prior.get().expect("just set"))))
    }

    /// The table entry of the block that holds the slots of block `b`.
    pub(super) fn entry(&self, b: usize) -> usize {
        b + self.model.is_some() as usize
    }

    /// Slots in block `b`.
    pub(super) fn slots_in(&self, b: usize, size: u64) -> u64 {
        let per = self.info.block_slots as u64;
        (size - b as u64 * per).min(per)
    }

    /// The compressed bytes of table entry `b`, checksum checked.
    pub(super) fn compressed<'m>(
        &self,
        path: &Path,
        src: Src<'m>,
        b: usize,
    ) -> Result<Cow<'m, [u8]>, FormatError> {
        let blk = self.block(path, src, b)?;
        let bytes = src.bytes(path, blk.offset, blk.len)?;
        if block_checksum(&bytes, self.info.compact) != blk.checksum {
            return Err(FormatError::Checksum {
                path: path.to_path_buf(),
                section: self.name,
                block: Some(b as u32),
            });
        }
        Ok(bytes)
    }

    /// Block `b` decompressed, checksum checked.
    pub(super) fn decode(
        &self,
        path: &Path,
        src: Src,
        b: usize,
        size: u64,
    ) -> Result<Vec<u8>, FormatError> {
        if let Some((geometry, prior)) = self.model_prior(path, src)? {
            let bytes = self.compressed(path, src, self.entry(b))?;
            let trits = decode_block(geometry, b, &bytes, &Model::from_prior(prior));
            let mut raw = Vec::with_capacity(trits.len().div_ceil(5));
            trits5(trits.into_iter(), &mut raw);
            return Ok(raw);
        }
        let raw_len = self.info.encoding.raw_len(self.slots_in(b, size)) as usize;
        self.decode_len(path, src, b, raw_len)
    }

    /// Block `b` decompressed into exactly `raw_len` bytes, checksum checked.
    pub(super) fn decode_len(
        &self,
        path: &Path,
        src: Src,
        b: usize,
        raw_len: usize,
    ) -> Result<Vec<u8>, FormatError> {
        let bytes = self.compressed(path, src, self.entry(b))?;
        decompress(&bytes, raw_len).map_err(|e| FormatError::Corrupt {
            path: path.to_path_buf(),
            what: format!("{} block {b} does not decompress: {e}", self.name),
        })
    }

    /// Depth block `b` of a file with decisive-only or loss-only depths
    /// ([`crate::table::format::FLAG_DECISIVE_DEPTHS`], [`crate::table::format::FLAG_LOSS_DEPTHS`]), expanded to
    /// one entry per slot with `trits`, the trits of the block's slots (a slot
    /// without an entry gets 0).
    pub(super) fn decode_decisive(
        &self,
        path: &Path,
        src: Src,
        b: usize,
        entries: DepthEntries,
        trits: &[u8],
    ) -> Result<Vec<u8>, FormatError> {
        let mismatch = || FormatError::Corrupt {
            path: path.to_path_buf(),
            what: format!("depth block {b} does not match its WDL"),
        };
        let packed = if let Some((geometry, prior)) = self.model_prior(path, src)? {
            let bytes = self.compressed(path, src, self.entry(b))?;
            let model = Model::from_prior(prior);
            let refined = self.info.encoding == Encoding::DepthRefined;
            depth_model::decode_block(geometry, b, trits, &bytes, &model, refined)
                .ok_or_else(mismatch)?
        } else {
            let stored = count_entries(entries, trits) as u64;
            let raw_len = self.info.encoding.raw_len(stored) as usize;
            self.decode_len(path, src, b, raw_len)?
        };
        expand_depth(self.info.encoding, entries, trits, &packed).ok_or_else(mismatch)
    }

    /// `read` applied to block `b`, from `cache` (the file's) or loaded into it by
    /// `load`.
    #[inline]
    pub(super) fn with_block<R>(
        &self,
        cache: &BlockCache,
        b: usize,
        load: impl FnOnce() -> Result<Vec<u8>, FormatError>,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, FormatError> {
        cache.with(&self.cached, b, load, read)
    }
}
