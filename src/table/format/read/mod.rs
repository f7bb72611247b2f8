//! Reading a file: the header and block tables checked when it is opened, blocks
//! decompressed (and checksummed) when first read, through a [`BlockCache`] (the
//! file's own, or the one all files of a [`crate::table::probe::Tablebase`] share).

use super::DepthEntries;
use super::coder::{Model, load_prior_of};
use super::model::{Geometry, decode_block};
use super::pack::{byte_of_trit, combine, expand_depth, half_at, trit_at, trit_in, trits5};
use super::{
    BLOCK_ENTRY_LEN, Encoding, Expect, FLAG_DECISIVE_DEPTHS, FLAG_LOSS_DEPTHS,
    FLAG_VALUE_DONT_CARES, FLAG_WDL_DONT_CARES, FormatError, HEADER_CHECKED, HEADER_LEN, Header,
    KIND_DEPTH, KIND_WDL, KNOWN_FLAGS, MAGIC, RETIRED, SECTION_ENTRY_LEN, Section, SubspaceMeta,
    VARIANT_LEN, VERSION, VERSION_FULL, VERSION_WDL_MODEL, WIN_BY_LOOKAHEAD, open_regular, xxh64,
};
use super::{depth_model, model};
use crate::rules::Rules;
use crate::rules::value::{Counts, Value, Wdl};
use crate::table::format::cache::{BlockCache, Blocks};
use byteorder::{ByteOrder, LittleEndian as LE};
use crossbeam_epoch::Guard;
use memmap2::Mmap;
use rayon::prelude::*;
use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One entry of a block table.
#[derive(Clone, Copy, Debug)]
struct Block {
    offset: u64,
    len: u32,
    checksum: u64,
}

/// Where a file's compressed blocks are read from: the mapping, or (when `file` is
/// set, as it is for every probe on Unix) the file itself with positioned reads.
/// A read of a mapped page that a file cut short on disk no longer has is a
/// SIGBUS that kills the program; a positioned read of it is an error naming the
/// file, so a file damaged or truncated under a running program (a server) costs
/// the probes that need it, not the program. Only a cache miss reads a block, and
/// it then decompresses it, which costs far more than the read.
#[derive(Clone, Copy)]
struct Src<'a> {
    map: &'a [u8],
    file: Option<&'a File>,
}

impl<'a> Src<'a> {
    /// `len` bytes at `offset`: borrowed from the mapping, or read from the file.
    fn bytes(self, path: &Path, offset: u64, len: u32) -> Result<Cow<'a, [u8]>, FormatError> {
        #[cfg(unix)]
        if let Some(file) = self.file {
            use std::os::unix::fs::FileExt;
            let mut buf = vec![0; len as usize];
            return match file.read_exact_at(&mut buf, offset) {
                Ok(()) => Ok(Cow::Owned(buf)),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(FormatError::Truncated {
                    path: path.to_path_buf(),
                    expected: offset + len as u64,
                    found: file.metadata().map_or(0, |m| m.len()),
                }),
                Err(e) => Err(FormatError::io(path, e)),
            };
        }
        let _ = path;
        Ok(Cow::Borrowed(
            &self.map[offset as usize..offset as usize + len as usize],
        ))
    }
}

/// A section as the reader uses it: entry and block table.
struct SectionReader {
    info: Section,
    blocks: Vec<Block>,
    name: &'static str,
    /// The section's blocks in the cache.
    cached: Arc<Blocks>,
    /// The coder of a model-coded section ([`Encoding::Model`],
    /// [`Encoding::DepthModel`]), whose block 0 is the prior and block `b + 1`
    /// holds the slots of block `b`.
    model: Option<ModelCodec>,
}

/// What decodes the blocks of a model-coded section.
struct ModelCodec {
    geometry: Geometry,
    /// Nodes of the section's model (its prior's length).
    nodes: usize,
    /// The stored prior, one probability per node; `None` where the writer found
    /// zstd smaller (an empty block 0): the blocks are then zstd-compressed trits.
    prior: Option<Vec<u16>>,
}

impl ModelCodec {
    /// The coder of `header`'s `section` (`"WDL"` or `"depth"`), checked against the
    /// rules the header names (which this program must know) and the section's
    /// geometry.
    fn new(path: &Path, header: &Header, section: &str) -> Result<ModelCodec, FormatError> {
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
            prior: None,
        })
    }
}

/// An open, memory-mapped database file of one subspace.
///
/// `Send + Sync`. Decompressed blocks are kept in a bounded cache (the file's own,
/// or the one all files of a [`crate::table::probe::Tablebase`] share), within its limit;
/// [`SubspaceFile::read_all`] does not fill the cache.
pub struct SubspaceFile {
    path: PathBuf,
    map: Mmap,
    /// The open file, which the blocks are read from ([`Src`]).
    file: File,
    header: Header,
    wdl: SectionReader,
    /// `None` in a WDL-only file.
    depth: Option<SectionReader>,
    cache: Arc<BlockCache>,
    /// The file's number in the cache.
    id: u32,
}

/// The result a WDL trit stands for (0 draw, 1 win, 2 loss).
#[inline]
fn wdl_of_trit(t: u8) -> Wdl {
    match t {
        0 => Wdl::Draw,
        1 => Wdl::Win,
        _ => Wdl::Loss,
    }
}

/// A slot's win, draw or loss whose byte is on its way to the processor's caches
/// ([`SubspaceFile::pending_wdl`]).
pub(crate) struct PendingWdl<'a> {
    /// The file.
    pub(crate) file: &'a SubspaceFile,
    idx: u64,
    /// The slot's place in its block.
    i: usize,
    /// The byte in the cached block; `None` where the block is not kept.
    byte: Option<&'a u8>,
}

impl PendingWdl<'_> {
    /// Win, draw or loss of the slot.
    #[inline]
    pub(crate) fn get(&self) -> Result<Wdl, FormatError> {
        let Some(&byte) = self.byte else {
            return self.file.wdl(self.idx);
        };
        let trit = trit_in(self.file.wdl.info.encoding, byte, self.i);
        trit.map(wdl_of_trit)
            .ok_or_else(|| self.file.corrupt_slot("WDL", self.idx))
    }
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

thread_local! {
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Decompresses `src` into exactly `raw_len` bytes, or fails.
fn decompress(src: &[u8], raw_len: usize) -> io::Result<Vec<u8>> {
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

fn parse_section(path: &Path, e: &[u8], kind: u32) -> Result<Section, FormatError> {
    let corrupt = |what: String| FormatError::Corrupt {
        path: path.to_path_buf(),
        what,
    };
    let found_kind = LE::read_u32(&e[0..]);
    if found_kind != kind {
        return Err(corrupt(format!(
            "section kind {found_kind}, expected {kind}"
        )));
    }
    let enc = LE::read_u32(&e[4..]);
    let encoding = Encoding::from_u32(enc)
        .filter(|e| e.is_wdl() == (kind == KIND_WDL))
        .ok_or_else(|| corrupt(format!("unknown encoding {enc} in section kind {kind}")))?;
    Ok(Section {
        kind,
        encoding,
        offset: LE::read_u64(&e[8..]),
        length: LE::read_u64(&e[16..]),
        block_slots: LE::read_u32(&e[24..]),
        blocks: LE::read_u32(&e[28..]),
        table_checksum: LE::read_u64(&e[32..]),
        data_checksum: LE::read_u64(&e[40..]),
    })
}

/// Reads and checks the header of the file at `path` (magic, version, header
/// checksum), without mapping the file or reading its sections: enough to learn
/// which rules and sector a file was written for.
pub fn read_header(path: &Path) -> Result<Header, FormatError> {
    let file = open_regular(path)?;
    let file_len = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    io::Read::read_to_end(&mut io::Read::take(file, HEADER_LEN as u64), &mut bytes)
        .map_err(|e| FormatError::io(path, e))?;
    parse_header(path, &bytes, file_len)
}

/// Reads and checks the header in `bytes` (the start of a file of `file_len` bytes).
pub(super) fn parse_header(
    path: &Path,
    bytes: &[u8],
    file_len: u64,
) -> Result<Header, FormatError> {
    if !bytes.starts_with(&MAGIC) && !MAGIC.starts_with(bytes) {
        return Err(FormatError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    if bytes.len() < 12 {
        return Err(FormatError::Truncated {
            path: path.to_path_buf(),
            expected: HEADER_LEN as u64,
            found: file_len,
        });
    }
    let version = LE::read_u32(&bytes[8..]);
    if RETIRED.contains(&version) {
        return Err(FormatError::Retired {
            path: path.to_path_buf(),
            found: version,
        });
    }
    if !(VERSION_FULL..=VERSION).contains(&version) {
        return Err(FormatError::Version {
            path: path.to_path_buf(),
            found: version,
            expected: VERSION,
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(FormatError::Truncated {
            path: path.to_path_buf(),
            expected: HEADER_LEN as u64,
            found: file_len,
        });
    }
    let h = &bytes[..HEADER_LEN];
    if xxh64(&h[..HEADER_CHECKED]) != LE::read_u64(&h[HEADER_CHECKED..]) {
        return Err(FormatError::Checksum {
            path: path.to_path_buf(),
            section: "header",
            block: None,
        });
    }
    let corrupt = |what: String| FormatError::Corrupt {
        path: path.to_path_buf(),
        what,
    };
    let header_len = LE::read_u32(&h[12..]);
    if header_len as usize != HEADER_LEN {
        return Err(corrupt(format!(
            "header length {header_len}, expected {HEADER_LEN}"
        )));
    }
    let name = &h[16..16 + VARIANT_LEN];
    let end = name.iter().position(|&b| b == 0).unwrap_or(VARIANT_LEN);
    let variant = std::str::from_utf8(&name[..end])
        .map_err(|_| corrupt("variant name is not UTF-8".into()))?
        .to_string();
    // Version 1 files hold both sections; version 2 adds the WDL-only file, whose
    // depth entry is all zero.
    let sections = LE::read_u16(&h[102..]);
    let depth_entry = &h[152..152 + SECTION_ENTRY_LEN];
    let depth = match sections {
        2 => Some(parse_section(path, depth_entry, KIND_DEPTH)?),
        1 if version >= 2 && depth_entry.iter().all(|&b| b == 0) => None,
        1 if version >= 2 => return Err(corrupt("a WDL-only file with a depth entry".into())),
        _ => {
            let expected = if version >= 2 { "1 or 2" } else { "2" };
            return Err(corrupt(format!("{sections} sections, expected {expected}")));
        }
    };
    let flags = if version >= 2 {
        LE::read_u32(&h[202..])
    } else {
        0
    };
    if flags & !KNOWN_FLAGS != 0 {
        return Err(corrupt(format!(
            "unknown header flags {flags:#x}: written by a newer millbase? use one that reads them"
        )));
    }
    // A full file has no don't-cares or both kinds (its stored results follow the
    // WDL rule because its values follow the value rule), with or without
    // decisive-only depths; a WDL-only file has no values to hold value don't-cares,
    // and no depths.
    // Loss-only depths are decisive-only depths of a kind.
    let allowed = if depth.is_some() {
        let dont_cares = flags & !(FLAG_DECISIVE_DEPTHS | FLAG_LOSS_DEPTHS);
        (dont_cares == 0 || dont_cares == FLAG_WDL_DONT_CARES | FLAG_VALUE_DONT_CARES)
            && (flags & FLAG_LOSS_DEPTHS == 0 || flags & FLAG_DECISIVE_DEPTHS != 0)
    } else {
        flags & (FLAG_VALUE_DONT_CARES | FLAG_DECISIVE_DEPTHS | FLAG_LOSS_DEPTHS) == 0
    };
    if !allowed {
        return Err(corrupt(format!(
            "header flags {flags:#x} in a {} file",
            if depth.is_some() { "full" } else { "WDL-only" }
        )));
    }
    let wdl = parse_section(path, &h[104..152], KIND_WDL)?;
    if (wdl.encoding == Encoding::Model) != (version >= VERSION_WDL_MODEL) {
        return Err(corrupt(format!(
            "a version {version} file with a {} WDL section",
            wdl.encoding.name()
        )));
    }
    // Version 6 is version 5 with a model-coded depth section, which holds the lost
    // slots' distances only.
    let depth_model = depth.is_some_and(|d| d.encoding == Encoding::DepthModel);
    if depth_model != (version >= VERSION) || (depth_model && flags & FLAG_LOSS_DEPTHS == 0) {
        let coding = depth.map_or("no", |d| d.encoding.name());
        return Err(corrupt(format!(
            "a version {version} file with {coding} depth section and flags {flags:#x}"
        )));
    }
    Ok(Header {
        version,
        flags,
        meta: SubspaceMeta {
            k: LE::read_u32(&h[56..]),
            l: LE::read_u32(&h[60..]),
            hands: [h[200], h[201]],
            fingerprint: LE::read_u64(&h[48..]),
            variant,
            counts: Counts {
                wins: LE::read_u64(&h[72..]),
                losses: LE::read_u64(&h[80..]),
                draws: LE::read_u64(&h[88..]),
                longest_win: LE::read_u16(&h[96..]),
                longest_loss: LE::read_u16(&h[98..]),
            },
        },
        size: LE::read_u64(&h[64..]),
        max_distance: LE::read_u16(&h[100..]),
        wdl,
        depth,
        checksum: LE::read_u64(&h[HEADER_CHECKED..]),
    })
}

impl SectionReader {
    /// Checks the section's geometry and table against the file and reads the table.
    fn new(
        path: &Path,
        map: &[u8],
        info: Section,
        size: u64,
        (name, table_name): (&'static str, &'static str),
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
        let table_len = blocks * BLOCK_ENTRY_LEN as u64;
        let end = info.offset.checked_add(info.length);
        let file_len = map.len() as u64;
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
        let table = &map[info.offset as usize..(info.offset + table_len) as usize];
        if xxh64(table) != info.table_checksum {
            return Err(FormatError::Checksum {
                path: path.to_path_buf(),
                section: table_name,
                block: None,
            });
        }
        let mut at = info.offset + table_len;
        let mut out = Vec::with_capacity(blocks as usize);
        for (i, e) in table.chunks_exact(BLOCK_ENTRY_LEN).enumerate() {
            let b = Block {
                offset: LE::read_u64(&e[0..]),
                len: LE::read_u32(&e[8..]),
                checksum: LE::read_u64(&e[16..]),
            };
            if b.offset != at {
                return Err(corrupt(format!(
                    "{name} block {i} is not where the table says"
                )));
            }
            at += b.len as u64;
            out.push(b);
        }
        if at != info.offset + info.length {
            return Err(corrupt(format!("{name} blocks do not fill the section")));
        }
        let mut reader = SectionReader {
            info,
            blocks: out,
            name,
            cached: cache.blocks(file, info.blocks as usize),
            model: None,
        };
        if let Some(m) = &mut model {
            let stored = reader.compressed(path, Src { map, file: None }, 0)?;
            if !stored.is_empty() {
                m.prior = Some(
                    load_prior_of(&stored, m.nodes)
                        .map_err(|e| corrupt(format!("{name} section's model prior: {e}")))?,
                );
                if m.geometry.block_slots() != info.block_slots as u64 {
                    return Err(corrupt(format!(
                        "model-coded {name} section in blocks of {} slots; the rules give {}",
                        info.block_slots,
                        m.geometry.block_slots()
                    )));
                }
            }
        }
        reader.model = model;
        Ok(reader)
    }

    /// The table entry of the block that holds the slots of block `b`.
    fn entry(&self, b: usize) -> usize {
        b + self.model.is_some() as usize
    }

    /// Slots in block `b`.
    fn slots_in(&self, b: usize, size: u64) -> u64 {
        let per = self.info.block_slots as u64;
        (size - b as u64 * per).min(per)
    }

    /// The compressed bytes of table entry `b`, checksum checked.
    fn compressed<'m>(
        &self,
        path: &Path,
        src: Src<'m>,
        b: usize,
    ) -> Result<Cow<'m, [u8]>, FormatError> {
        let blk = self.blocks[b];
        // The table was checked against the section bounds at open.
        let bytes = src.bytes(path, blk.offset, blk.len)?;
        if xxh64(&bytes) != blk.checksum {
            return Err(FormatError::Checksum {
                path: path.to_path_buf(),
                section: self.name,
                block: Some(b as u32),
            });
        }
        Ok(bytes)
    }

    /// Block `b` decompressed, checksum checked.
    fn decode(&self, path: &Path, src: Src, b: usize, size: u64) -> Result<Vec<u8>, FormatError> {
        if let Some(ModelCodec {
            geometry,
            prior: Some(prior),
            ..
        }) = &self.model
        {
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
    fn decode_len(
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
    /// ([`super::FLAG_DECISIVE_DEPTHS`], [`super::FLAG_LOSS_DEPTHS`]), expanded to
    /// one entry per slot with `trits`, the trits of the block's slots (a slot
    /// without an entry gets 0).
    fn decode_decisive(
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
        let packed = if let Some(ModelCodec {
            geometry,
            prior: Some(prior),
            ..
        }) = &self.model
        {
            let bytes = self.compressed(path, src, self.entry(b))?;
            depth_model::decode_block(geometry, b, trits, &bytes, &Model::from_prior(prior))
                .ok_or_else(mismatch)?
        } else {
            let stored = trits.iter().filter(|&&t| entries.has(t)).count() as u64;
            let raw_len = self.info.encoding.raw_len(stored) as usize;
            self.decode_len(path, src, b, raw_len)?
        };
        expand_depth(self.info.encoding, entries, trits, &packed).ok_or_else(mismatch)
    }

    /// `read` applied to block `b`, from `cache` or loaded into it by `load`.
    #[inline]
    fn with_block<R>(
        &self,
        file: &SubspaceFile,
        b: usize,
        load: impl FnOnce() -> Result<Vec<u8>, FormatError>,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, FormatError> {
        file.cache.with(&self.cached, b, load, read)
    }
}

impl SubspaceFile {
    /// Opens and maps a file, checking magic, version, header checksum, the
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
        let mut file = open_regular(path)?;
        let file_len = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
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
        // SAFETY: the file is opened read-only and database files are never modified
        // in place (writers create a new file and rename it). Truncating a mapped file
        // behind the program's back is outside what any reader can defend against.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| FormatError::io(path, e))?;
        let header = parse_header(path, &map, file_len)?;
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
        let names = ("WDL", "WDL table");
        let id = cache.register();
        let cached = (&*cache, id);
        let wdl = SectionReader::new(path, &map, header.wdl, header.size, names, model, cached)?;
        let names = ("depth", "depth table");
        let depth = header
            .depth
            .map(|d| {
                let model = (d.encoding == Encoding::DepthModel)
                    .then(|| ModelCodec::new(path, &header, "depth"))
                    .transpose()?;
                SectionReader::new(path, &map, d, header.size, names, model, cached)
            })
            .transpose()?;
        if header.file_bytes() != file_len {
            return Err(corrupt("bytes after the last section"));
        }
        Ok(SubspaceFile {
            path: path.to_path_buf(),
            map,
            file,
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

    /// Where the blocks are read from ([`Src`]): the file, by positioned reads.
    fn src(&self) -> Src<'_> {
        Src {
            map: &self.map,
            file: Some(&self.file),
        }
    }

    /// The raw bytes of the file's header.
    pub(super) fn header_bytes(&self) -> &[u8] {
        &self.map[..HEADER_LEN]
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

    /// The trit (0 draw, 1 win, 2 loss) of slot `idx`.
    #[inline]
    fn trit(&self, idx: u64) -> Result<u8, FormatError> {
        self.check_idx(idx)?;
        let per = self.wdl.info.block_slots as u64;
        let (b, i) = ((idx / per) as usize, (idx % per) as usize);
        let encoding = self.wdl.info.encoding;
        let load = || self.wdl.decode(&self.path, self.src(), b, self.header.size);
        self.wdl
            .with_block(self, b, load, |data| trit_at(encoding, data, i))?
            .ok_or_else(|| self.corrupt_slot("WDL", idx))
    }

    /// Slot `idx`'s win, draw or loss, to be read by [`PendingWdl::get`] while
    /// `guard` pins the thread: its block is decompressed now if the cache does
    /// not hold it, and its byte fetched into the processor's caches without
    /// waiting. A probe that reads many slots takes them all this way first, so
    /// that their waits for main memory overlap.
    #[inline]
    pub(crate) fn pending_wdl<'a>(
        &'a self,
        idx: u64,
        guard: &'a Guard,
    ) -> Result<PendingWdl<'a>, FormatError> {
        self.check_idx(idx)?;
        let per = self.wdl.info.block_slots as u64;
        let (b, i) = ((idx / per) as usize, (idx % per) as usize);
        let at = byte_of_trit(self.wdl.info.encoding, i);
        let load = || self.wdl.decode(&self.path, self.src(), b, self.header.size);
        let byte = self
            .cache
            .pinned_byte(&self.wdl.cached, b, at, load, guard)?;
        Ok(PendingWdl {
            file: self,
            idx,
            i,
            byte,
        })
    }

    /// Starts fetching the first thing [`SubspaceFile::pending_wdl`] of slot `idx`
    /// reads, its block's cache entry (a hint: nothing waits).
    #[inline]
    pub(crate) fn prefetch_wdl(&self, idx: u64) {
        let per = self.wdl.info.block_slots as u64;
        self.wdl.cached.prefetch_entry((idx / per) as usize);
    }

    /// Win, draw or loss of slot `idx`. Reads only the WDL section.
    #[inline]
    pub fn wdl(&self, idx: u64) -> Result<Wdl, FormatError> {
        self.trit(idx).map(wdl_of_trit)
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
        matches!(self.wdl.model, Some(ModelCodec { prior: Some(_), .. }))
    }

    /// Whether the depth section is decoded by the depth model: model-coded
    /// ([`Encoding::DepthModel`]) and not zstd-coded behind an empty prior.
    pub fn depth_model(&self) -> bool {
        matches!(
            self.depth.as_ref().and_then(|d| d.model.as_ref()),
            Some(ModelCodec { prior: Some(_), .. })
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

    /// The stored code of slot `idx` (see [`crate::rules::value`]). Reads a WDL and a depth
    /// block. In a file with value don't-cares it may be worse than the true one.
    pub fn code(&self, idx: u64) -> Result<u16, FormatError> {
        let depth = self.depth()?;
        let t = self.trit(idx)?;
        if t == 0 && self.header.decisive_depths() {
            return Ok(0);
        }
        if t == 1 && self.header.loss_depths() {
            return Err(FormatError::WinByLookahead {
                path: self.path.clone(),
            });
        }
        let per = depth.info.block_slots as u64;
        let (b, i) = ((idx / per) as usize, (idx % per) as usize);
        let encoding = depth.info.encoding;
        depth
            .with_block(
                self,
                b,
                || self.load_depth(depth, b),
                |data| half_at(encoding, data, i),
            )?
            .and_then(|h| combine(t, h))
            .ok_or_else(|| self.corrupt_slot("depth", idx))
    }

    /// Depth block `b` decompressed, one entry per slot (expanded with the block's
    /// trits in a file with decisive-only depths).
    fn load_depth(&self, depth: &SectionReader, b: usize) -> Result<Vec<u8>, FormatError> {
        let size = self.header.size;
        if !self.header.decisive_depths() {
            return depth.decode(&self.path, self.src(), b, size);
        }
        let start = b as u64 * depth.info.block_slots as u64;
        let trits = self.trits(start, start + depth.slots_in(b, size))?;
        let entries = self.header.depth_entries();
        depth.decode_decisive(&self.path, self.src(), b, entries, &trits)
    }

    /// The trits of slots `start..end`, one WDL block at a time through the cache.
    fn trits(&self, start: u64, end: u64) -> Result<Vec<u8>, FormatError> {
        let per = self.wdl.info.block_slots as u64;
        let encoding = self.wdl.info.encoding;
        let mut out = Vec::with_capacity((end - start) as usize);
        let mut idx = start;
        while idx < end {
            let b = (idx / per) as usize;
            let stop = end.min((b as u64 + 1) * per);
            let range = (idx - b as u64 * per) as usize..(stop - b as u64 * per) as usize;
            let load = || self.wdl.decode(&self.path, self.src(), b, self.header.size);
            let complete = self.wdl.with_block(self, b, load, |data| {
                let before = out.len();
                out.extend(range.clone().map_while(|i| trit_at(encoding, data, i)));
                out.len() - before == range.len()
            })?;
            if !complete {
                return Err(self.corrupt_slot("WDL", start + out.len() as u64));
            }
            idx = stop;
        }
        Ok(out)
    }

    /// The stored value of slot `idx` (see [`SubspaceFile::code`]).
    pub fn value(&self, idx: u64) -> Result<Value, FormatError> {
        self.code(idx).map(Value::from_code)
    }

    /// Every code of the file, decompressed in parallel on the current rayon pool,
    /// without filling the probe cache. Checks every block checksum on the way.
    /// Refuses a file with value don't-cares ([`FormatError::DontCares`]), whose
    /// stored codes are not all true values: see [`SubspaceFile::read_all_stored`].
    pub fn read_all(&self) -> Result<Vec<u16>, FormatError> {
        if self.value_dont_cares() {
            return Err(FormatError::DontCares {
                path: self.path.clone(),
            });
        }
        self.read_all_stored()
    }

    /// Every stored code of the file, as [`SubspaceFile::read_all`] but also of a
    /// file with value don't-cares, where a stored code may be worse than the true
    /// one (`millbase verify` and `millbase repack` apply the rule themselves).
    /// Refuses a file with loss-only depths ([`FormatError::WinByLookahead`]),
    /// whose wins have no stored distance: see [`SubspaceFile::read_all_partial`].
    pub fn read_all_stored(&self) -> Result<Vec<u16>, FormatError> {
        if self.header.loss_depths() {
            return Err(FormatError::WinByLookahead {
                path: self.path.clone(),
            });
        }
        self.read_all_partial()
    }

    /// Every stored code of the file as [`SubspaceFile::read_all_stored`], except
    /// that in a file with loss-only depths ([`super::FLAG_LOSS_DEPTHS`]) a won
    /// slot holds [`WIN_BY_LOOKAHEAD`], since its distance is not stored.
    pub fn read_all_partial(&self) -> Result<Vec<u16>, FormatError> {
        let depth = self.depth()?;
        let size = self.header.size;
        let entries = self.header.depth_entries();
        let mut codes = self.read_all_wdl()?;
        // Combine the trits with the half distances.
        codes
            .par_chunks_mut(depth.info.block_slots as usize)
            .enumerate()
            .try_for_each(|(b, chunk)| -> Result<(), FormatError> {
                let data = if entries == DepthEntries::Every {
                    depth.decode(&self.path, self.src(), b, size)?
                } else {
                    let trits: Vec<u8> = chunk.iter().map(|&t| t as u8).collect();
                    depth.decode_decisive(&self.path, self.src(), b, entries, &trits)?
                };
                for (i, c) in chunk.iter_mut().enumerate() {
                    if *c == 1 && entries == DepthEntries::Losses {
                        *c = WIN_BY_LOOKAHEAD;
                        continue;
                    }
                    *c = half_at(depth.info.encoding, &data, i)
                        .and_then(|h| combine(*c as u8, h))
                        .ok_or_else(|| {
                            let idx = b as u64 * depth.info.block_slots as u64 + i as u64;
                            self.corrupt_slot("depth", idx)
                        })?;
                }
                Ok(())
            })?;
        Ok(codes)
    }

    /// The trit of every slot (0 draw, 1 win, 2 loss, as `u16`), decompressed in
    /// parallel without filling the probe cache. Works on WDL-only files too.
    pub fn read_all_wdl(&self) -> Result<Vec<u16>, FormatError> {
        let size = self.header.size;
        let mut codes = crate::memory::zeroed_huge::<u16>(size as usize);
        let wdl = &self.wdl;
        codes
            .par_chunks_mut(wdl.info.block_slots as usize)
            .enumerate()
            .try_for_each(|(b, chunk)| -> Result<(), FormatError> {
                let data = wdl.decode(&self.path, self.src(), b, size)?;
                for (i, c) in chunk.iter_mut().enumerate() {
                    *c = trit_at(wdl.info.encoding, &data, i).ok_or_else(|| {
                        self.corrupt_slot("WDL", b as u64 * wdl.info.block_slots as u64 + i as u64)
                    })? as u16;
                }
                Ok(())
            })?;
        Ok(codes)
    }

    /// Checks every checksum of the file: header (again), both block tables, both
    /// data areas and every block. Does not decompress.
    pub fn verify_checksums(&self) -> Result<(), FormatError> {
        let reparsed = parse_header(&self.path, &self.map, self.map.len() as u64)?;
        if reparsed != self.header {
            return Err(FormatError::Checksum {
                path: self.path.clone(),
                section: "header",
                block: None,
            });
        }
        let sections = [
            Some((&self.wdl, "WDL table", "WDL data")),
            self.depth
                .as_ref()
                .map(|d| (d, "depth table", "depth data")),
        ];
        for (s, table, data) in sections.into_iter().flatten() {
            let table_len = s.info.blocks as u64 * BLOCK_ENTRY_LEN as u64;
            let start = s.info.offset as usize;
            let mid = start + table_len as usize;
            let end = (s.info.offset + s.info.length) as usize;
            if xxh64(&self.map[start..mid]) != s.info.table_checksum {
                return Err(FormatError::Checksum {
                    path: self.path.clone(),
                    section: table,
                    block: None,
                });
            }
            (0..s.blocks.len())
                .into_par_iter()
                .try_for_each(|b| s.compressed(&self.path, self.src(), b).map(|_| ()))?;
            if xxh64(&self.map[mid..end]) != s.info.data_checksum {
                return Err(FormatError::Checksum {
                    path: self.path.clone(),
                    section: data,
                    block: None,
                });
            }
        }
        Ok(())
    }

    /// The bytes of the WDL section (block table and blocks), after checking its
    /// table and data checksums: what a WDL-only copy of the file holds.
    pub(super) fn wdl_section_checked(&self) -> Result<&[u8], FormatError> {
        let s = &self.wdl;
        let start = s.info.offset as usize;
        let mid = start + s.info.blocks as usize * BLOCK_ENTRY_LEN;
        let end = (s.info.offset + s.info.length) as usize;
        for (bytes, sum, section) in [
            (&self.map[start..mid], s.info.table_checksum, "WDL table"),
            (&self.map[mid..end], s.info.data_checksum, "WDL data"),
        ] {
            if xxh64(bytes) != sum {
                return Err(FormatError::Checksum {
                    path: self.path.clone(),
                    section,
                    block: None,
                });
            }
        }
        Ok(&self.map[start..end])
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
    use std::fs;

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
        assert_eq!(f.wdl.cached.held(), f.wdl.blocks.len());
        fs::remove_dir_all(&dir).unwrap();
    }
}
