//! The database file of one subspace `k-l`: an explicit little-endian byte layout
//! (see `docs/FORMAT.md`), written atomically, read through a memory map.
//!
//! A file holds one *code* per index slot (see [`crate::value`]: 0 a draw, otherwise
//! distance + 1). It is stored as two sections, each a sequence of independently
//! zstd-compressed blocks behind an offset table:
//!
//! - the **WDL section**: win, draw or loss per slot, packed five slots per byte in
//!   base 3 before compression. A WDL probe decompresses one WDL block and nothing
//!   else.
//! - the **depth section**: `distance / 2` per slot (0 for draws) as one byte, or two
//!   when some distance exceeds 511. The parity of the distance follows from the WDL
//!   value (wins are odd, losses even), so storing it again would waste up to a bit
//!   per slot.
//!
//! Why base 3 and not two bits: five trits fill 243 of 256 byte values, so the raw WDL
//! data is 1.6 bits per slot instead of 2, and zstd's entropy stage works on bytes
//! that each carry five slots. On the real 3-3 and 3-4 tables it compresses to
//! 0.31 bits per slot against 0.37 and 0.46 for two-bit packing
//! (`examples/format_bench.rs recode`).
//!
//! Block sizes and levels ([`WriteOptions::default`]) trade size against write
//! time, measured on the same tables: WDL blocks of 2^20 slots (210 KB raw) at zstd
//! level 15 are within 2-3 % of level 19 at twice the speed, and 10-20 % smaller
//! than 2^18 or 2^16 slots. Depth is the bulk of the bytes and of the compression
//! time: blocks of 2^18 slots at level 9 are 20-30 % larger than level 15 but
//! compress about five times faster, which keeps compression a small part of a
//! full build; a builder that prefers smaller files sets `depth_level: 15`.
//!
//! Every block carries an XXH64 checksum of its compressed bytes, checked before the
//! block is decompressed, so a flipped byte is an error, never a wrong value. The
//! block tables and the header carry checksums too, checked when the file is opened.
//!
//! Reading: [`SubspaceFile`] maps the file and decompresses a block when it is read
//! and not in the [`BlockCache`] the file reads through (bounded in bytes, shared by
//! all files of a [`crate::probe::Tablebase`]); a warm probe takes one uncontended
//! lock and allocates nothing.

use crate::cache::{BlockCache, Key};
use crate::value::{Counts, Value, Wdl};
use byteorder::{ByteOrder, LittleEndian as LE};
use memmap2::Mmap;
use rayon::prelude::*;
use std::cell::RefCell;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The first eight bytes of every database file.
pub const MAGIC: [u8; 8] = *b"MILLBASE";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Bytes in the fixed header.
pub const HEADER_LEN: usize = 256;
/// Bytes in one section entry of the header.
pub const SECTION_ENTRY_LEN: usize = 48;
/// Bytes in one block-table entry.
pub const BLOCK_ENTRY_LEN: usize = 24;
/// Bytes of the header covered by the header checksum (all but the checksum).
const HEADER_CHECKED: usize = HEADER_LEN - 8;
/// The longest variant name the header holds.
pub const VARIANT_LEN: usize = 32;
/// Section kind of the WDL section.
pub const KIND_WDL: u32 = 1;
/// Section kind of the depth section.
pub const KIND_DEPTH: u32 = 2;

/// How the slots of a block are laid out before compression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// WDL, five slots per byte: `t0 + 3 t1 + 9 t2 + 27 t3 + 81 t4` with trits
    /// 0 = draw, 1 = win, 2 = loss.
    Trits5 = 1,
    /// WDL, four slots per byte, two bits each from the low bits up, same trits.
    Bits2 = 2,
    /// Depth, one byte per slot: `distance / 2`, 0 for a draw.
    HalfU8 = 3,
    /// Depth, two bytes (little-endian) per slot: `distance / 2`, 0 for a draw.
    HalfU16 = 4,
}

impl Encoding {
    fn from_u32(v: u32) -> Option<Encoding> {
        Some(match v {
            1 => Encoding::Trits5,
            2 => Encoding::Bits2,
            3 => Encoding::HalfU8,
            4 => Encoding::HalfU16,
            _ => return None,
        })
    }

    /// Raw (decompressed) bytes of a block of `n` slots.
    pub fn raw_len(self, n: u64) -> u64 {
        match self {
            Encoding::Trits5 => n.div_ceil(5),
            Encoding::Bits2 => n.div_ceil(4),
            Encoding::HalfU8 => n,
            Encoding::HalfU16 => 2 * n,
        }
    }

    /// Whether this encoding belongs in a WDL section (else a depth section).
    pub fn is_wdl(self) -> bool {
        matches!(self, Encoding::Trits5 | Encoding::Bits2)
    }

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Trits5 => "trits5",
            Encoding::Bits2 => "bits2",
            Encoding::HalfU8 => "half-u8",
            Encoding::HalfU16 => "half-u16",
        }
    }
}

/// Why a database file could not be written, opened or read. Every message says what
/// to do about it.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The operating system refused a read or write.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file does not start with the magic bytes.
    #[error(
        "{}: not a millbase database file (wrong magic bytes); if it is in a database directory, move it away and run `millbase build`",
        path.display()
    )]
    BadMagic {
        /// The file.
        path: PathBuf,
    },
    /// The file was written in another format version.
    #[error(
        "{}: format version {found}, this program reads version {expected}; delete it and run `millbase build`, or use a millbase that reads version {found}",
        path.display()
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this program reads.
        expected: u32,
    },
    /// The file was built for another rule set.
    #[error(
        "{}: built for rules '{variant}' with fingerprint {found:016x}, expected {expected:016x}; it belongs to another rule set or program version: move it away and run `millbase build`",
        path.display()
    )]
    RulesMismatch {
        /// The file.
        path: PathBuf,
        /// The variant name in the file.
        variant: String,
        /// The fingerprint in the file.
        found: u64,
        /// The fingerprint expected.
        expected: u64,
    },
    /// The file is intact but is not the one expected (other subspace or index size).
    #[error(
        "{}: {what}; the file is misnamed or from another index version: delete it and run `millbase build`",
        path.display()
    )]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        what: String,
    },
    /// The file is shorter than its header says.
    #[error(
        "{}: truncated ({found} bytes, {expected} expected); delete it and run `millbase build`",
        path.display()
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Bytes the header promises (at least).
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// A checksum does not match: the bytes changed after writing.
    #[error(
        "{}: checksum mismatch in the {section}{}; the file is corrupt: delete it and run `millbase build`",
        path.display(),
        block.map(|b| format!(" block {b}")).unwrap_or_default()
    )]
    Checksum {
        /// The file.
        path: PathBuf,
        /// `header`, `WDL table`, `WDL data`, `depth table` or `depth data`.
        section: &'static str,
        /// The block, if the checksum is per block.
        block: Option<u32>,
    },
    /// The bytes are inconsistent in a way no checksum caught.
    #[error("{}: corrupt: {what}; delete it and run `millbase build`", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The path names a directory, FIFO, device or socket, not a regular file.
    #[error(
        "{}: is a {kind}, not a regular file; a database file must be a regular file: move it away and run `millbase build`",
        path.display()
    )]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is instead (`directory`, `FIFO`, ...).
        kind: &'static str,
    },
    /// A slot index beyond the subspace (a caller bug, not a file problem).
    #[error("slot {idx} out of range: the subspace has {size} slots")]
    OutOfRange {
        /// The index asked for.
        idx: u64,
        /// Slots in the subspace.
        size: u64,
    },
    /// The writer was given inconsistent data (a builder bug).
    #[error("refusing to write {}: {what}", path.display())]
    Input {
        /// The file that was to be written.
        path: PathBuf,
        /// What is inconsistent.
        what: String,
    },
}

/// Opens `path` for reading, refusing anything that is not a regular file. A FIFO is
/// opened without blocking (so a FIFO without a writer cannot hang the program) and
/// then refused like a directory or a device.
pub fn open_regular(path: &Path) -> Result<File, FormatError> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| FormatError::io(path, e))?;
    let meta = file.metadata().map_err(|e| FormatError::io(path, e))?;
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let kind = if kind.is_dir() {
        "directory"
    } else {
        file_kind(&kind)
    };
    Err(FormatError::NotAFile {
        path: path.to_path_buf(),
        kind,
    })
}

fn file_kind(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "device";
        }
    }
    let _ = kind;
    "special file"
}

impl FormatError {
    fn io(path: &Path, source: io::Error) -> FormatError {
        FormatError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// What the builder knows about a subspace, written into the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubspaceMeta {
    /// Stones of the side to move.
    pub k: u32,
    /// Stones of the opponent.
    pub l: u32,
    /// Stones in hand of the side to move and of the opponent: `[0, 0]` for a
    /// moving-phase subspace, otherwise a placement sector.
    pub hands: [u8; 2],
    /// [`crate::Rules::fingerprint`] of the rules.
    pub fingerprint: u64,
    /// The variant's name (at most 32 bytes of UTF-8).
    pub variant: String,
    /// Won, lost and drawn positions as the builder counts them (the standard
    /// builder: per symmetry class), the longest win and loss. The longest win and
    /// loss are checked against the codes.
    pub counts: Counts,
}

/// Tuning of the writer. The defaults are what `millbase build` uses.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Slots per WDL block. Larger blocks compress better; a cold probe
    /// decompresses one whole block.
    pub wdl_block: u32,
    /// Slots per depth block.
    pub depth_block: u32,
    /// zstd level of the WDL section.
    pub wdl_level: i32,
    /// zstd level of the depth section.
    pub depth_level: i32,
    /// Packing of the WDL section ([`Encoding::Trits5`] or [`Encoding::Bits2`]).
    pub wdl_encoding: Encoding,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            wdl_block: 1 << 20,
            depth_block: 1 << 18,
            wdl_level: 15,
            depth_level: 9,
            wdl_encoding: Encoding::Trits5,
        }
    }
}

/// The depth section's encoding the writer chooses for a largest distance.
pub fn depth_encoding_for(max_distance: u16) -> Encoding {
    if max_distance / 2 <= u8::MAX as u16 {
        Encoding::HalfU8
    } else {
        Encoding::HalfU16
    }
}

/// One section of a file, as described by its header entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// [`KIND_WDL`] or [`KIND_DEPTH`].
    pub kind: u32,
    /// Layout of the slots in a decompressed block.
    pub encoding: Encoding,
    /// File offset of the section (its block table).
    pub offset: u64,
    /// Bytes of the section: block table and blocks.
    pub length: u64,
    /// Slots per block (the last block may hold fewer).
    pub block_slots: u32,
    /// Number of blocks.
    pub blocks: u32,
    /// XXH64 of the block table.
    pub table_checksum: u64,
    /// XXH64 of the block data (everything after the table).
    pub data_checksum: u64,
}

/// The fixed header of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version.
    pub version: u32,
    /// The subspace, its rules and its counts, as the writer was given them.
    pub meta: SubspaceMeta,
    /// Index slots in the subspace.
    pub size: u64,
    /// The largest distance of any slot (the larger of the longest win and loss).
    pub max_distance: u16,
    /// The WDL section.
    pub wdl: Section,
    /// The depth section.
    pub depth: Section,
    /// XXH64 of the first 248 header bytes, which covers the whole file through the
    /// section and block checksums: the file's identity in `manifest.json`.
    pub checksum: u64,
}

impl Header {
    /// Bytes of the whole file: the header and both sections.
    pub fn file_bytes(&self) -> u64 {
        self.depth.offset + self.depth.length
    }
}

/// What [`SubspaceFile::open`] checks the header against; `None` accepts anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// The rules fingerprint.
    pub fingerprint: Option<u64>,
    /// The subspace `(k, l)`.
    pub subspace: Option<(u32, u32)>,
    /// The hands `[side to move, opponent]`.
    pub hands: Option<[u8; 2]>,
    /// The number of index slots.
    pub size: Option<u64>,
}

impl Expect {
    /// Accept any intact file (for `millbase info`).
    pub fn any() -> Expect {
        Expect::default()
    }

    /// Expect exactly this rule set, moving-phase subspace and index size.
    pub fn exact(fingerprint: u64, k: u32, l: u32, size: u64) -> Expect {
        Expect {
            fingerprint: Some(fingerprint),
            subspace: Some((k, l)),
            hands: Some([0, 0]),
            size: Some(size),
        }
    }

    /// Expect exactly this rule set, sector (either phase) and index size.
    pub fn sector(fingerprint: u64, sector: crate::sector::Sector, size: u64) -> Expect {
        Expect {
            hands: Some([sector.hk, sector.hl]),
            ..Expect::exact(fingerprint, sector.k as u32, sector.l as u32, size)
        }
    }
}

// ---------------------------------------------------------------------------------
// XXH64
// ---------------------------------------------------------------------------------

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

#[inline]
fn xxh_round(acc: u64, input: u64) -> u64 {
    acc.wrapping_add(input.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

#[inline]
fn xxh_merge(acc: u64, val: u64) -> u64 {
    (acc ^ xxh_round(0, val)).wrapping_mul(P1).wrapping_add(P4)
}

/// XXH64 of `data` with seed 0: the checksum of every part of a file. The standard
/// algorithm (Yann Collet's xxHash), so other languages can use their library.
pub fn xxh64(data: &[u8]) -> u64 {
    let len = data.len() as u64;
    let mut rest = data;
    let mut h = if rest.len() >= 32 {
        let mut v = [P1.wrapping_add(P2), P2, 0, 0u64.wrapping_sub(P1)];
        while rest.len() >= 32 {
            for (i, lane) in v.iter_mut().enumerate() {
                *lane = xxh_round(*lane, LE::read_u64(&rest[8 * i..]));
            }
            rest = &rest[32..];
        }
        let mut h = v[0]
            .rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18));
        for lane in v {
            h = xxh_merge(h, lane);
        }
        h
    } else {
        P5
    };
    h = h.wrapping_add(len);
    while rest.len() >= 8 {
        h ^= xxh_round(0, LE::read_u64(rest));
        h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        h ^= (LE::read_u32(rest) as u64).wrapping_mul(P1);
        h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        rest = &rest[4..];
    }
    for &b in rest {
        h ^= (b as u64).wrapping_mul(P5);
        h = h.rotate_left(11).wrapping_mul(P1);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

// ---------------------------------------------------------------------------------
// Slot transforms
// ---------------------------------------------------------------------------------

/// The trit of a code: 0 draw, 1 win, 2 loss.
#[inline]
fn trit(code: u16) -> u8 {
    if code == 0 {
        0
    } else if code.is_multiple_of(2) {
        1 // distance = code - 1 is odd: a win
    } else {
        2
    }
}

/// `TRITS[b][i]`: the `i`-th trit of the byte `b` (`b < 243`).
static TRITS: [[u8; 5]; 243] = {
    let mut t = [[0u8; 5]; 243];
    let mut b = 0;
    while b < 243 {
        let mut v = b;
        let mut i = 0;
        while i < 5 {
            t[b][i] = (v % 3) as u8;
            v /= 3;
            i += 1;
        }
        b += 1;
    }
    t
};

fn pack_wdl(codes: &[u16], encoding: Encoding, out: &mut Vec<u8>) {
    out.clear();
    match encoding {
        Encoding::Trits5 => out.extend(
            codes
                .chunks(5)
                .map(|c| c.iter().rev().fold(0u8, |acc, &code| acc * 3 + trit(code))),
        ),
        Encoding::Bits2 => out.extend(codes.chunks(4).map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |acc, (i, &code)| acc | trit(code) << (2 * i))
        })),
        _ => unreachable!("not a WDL encoding"),
    }
}

/// `distance / 2` of a code, 0 for a draw.
#[inline]
fn half(code: u16) -> u16 {
    if code == 0 { 0 } else { (code - 1) / 2 }
}

fn pack_depth(codes: &[u16], encoding: Encoding, out: &mut Vec<u8>) {
    out.clear();
    match encoding {
        Encoding::HalfU8 => out.extend(codes.iter().map(|&c| half(c) as u8)),
        Encoding::HalfU16 => {
            for &c in codes {
                out.extend_from_slice(&half(c).to_le_bytes());
            }
        }
        _ => unreachable!("not a depth encoding"),
    }
}

/// The code of a slot from its trit and its stored half distance.
#[inline]
fn combine(trit: u8, half: u16) -> Option<u16> {
    match trit {
        0 => (half == 0).then_some(0),
        // A win in n = 2h + 1 plies has code n + 1; a loss in n = 2h, code n + 1.
        1 => half.checked_mul(2)?.checked_add(2),
        2 => half.checked_mul(2)?.checked_add(1),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------

/// Writes the file of one subspace with the default options. See [`write_subspace_with`].
pub fn write_subspace(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
) -> Result<Header, FormatError> {
    write_subspace_with(path, meta, codes, &WriteOptions::default())
}

/// Writes the file of one subspace: `codes[i]` is the code of index slot `i`.
///
/// The file is written to `<path>.tmp`, synced, renamed to `path`, and the directory
/// synced, so a crash leaves either no file or a complete one. The output depends only
/// on the arguments: the same input gives a byte-identical file. Compression runs in
/// parallel on the current rayon pool.
pub fn write_subspace_with(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    opts: &WriteOptions,
) -> Result<Header, FormatError> {
    let file = encode_subspace(path, meta, codes, opts)?;
    // The header as a reader sees it: what the file holds, and the sizes of its
    // sections for the manifest.
    let header = parse_header(path, &file, file.len() as u64)?;
    write_atomic(path, &file)?;
    Ok(header)
}

fn input_error(path: &Path, what: String) -> FormatError {
    FormatError::Input {
        path: path.to_path_buf(),
        what,
    }
}

/// The complete file contents.
fn encode_subspace(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    opts: &WriteOptions,
) -> Result<Vec<u8>, FormatError> {
    if meta.variant.len() > VARIANT_LEN {
        return Err(input_error(
            path,
            format!("variant name longer than {VARIANT_LEN} bytes"),
        ));
    }
    if !opts.wdl_encoding.is_wdl() || opts.wdl_block == 0 || opts.depth_block == 0 {
        return Err(input_error(path, "bad write options".into()));
    }
    let blocks_of = |per: u32| (codes.len() as u64).div_ceil(per as u64);
    if blocks_of(opts.wdl_block) > u32::MAX as u64 || blocks_of(opts.depth_block) > u32::MAX as u64
    {
        return Err(input_error(path, "too many blocks".into()));
    }
    // The longest win and loss, from the codes themselves.
    let (win, loss) = codes
        .par_chunks(1 << 16)
        .map(|c| {
            c.iter()
                .fold((0u16, 0u16), |(w, l), &code| match trit(code) {
                    1 => (w.max(code - 1), l),
                    2 => (w, l.max(code - 1)),
                    _ => (w, l),
                })
        })
        .reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
    if (win, loss) != (meta.counts.longest_win, meta.counts.longest_loss) {
        return Err(input_error(
            path,
            format!(
                "the codes have longest win {win} and longest loss {loss}, the metadata says {} and {}",
                meta.counts.longest_win, meta.counts.longest_loss
            ),
        ));
    }
    let max_distance = win.max(loss);
    let depth_encoding = depth_encoding_for(max_distance);

    let wdl_blocks = compress_blocks(codes, opts.wdl_block, opts.wdl_level, |c, out| {
        pack_wdl(c, opts.wdl_encoding, out)
    })
    .map_err(|e| FormatError::io(path, e))?;
    let depth_blocks = compress_blocks(codes, opts.depth_block, opts.depth_level, |c, out| {
        pack_depth(c, depth_encoding, out)
    })
    .map_err(|e| FormatError::io(path, e))?;

    let mut file = vec![0u8; HEADER_LEN];
    let wdl = append_section(
        &mut file,
        KIND_WDL,
        opts.wdl_encoding,
        opts.wdl_block,
        &wdl_blocks,
    );
    let depth = append_section(
        &mut file,
        KIND_DEPTH,
        depth_encoding,
        opts.depth_block,
        &depth_blocks,
    );

    let h = &mut file[..HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    LE::write_u32(&mut h[8..], VERSION);
    LE::write_u32(&mut h[12..], HEADER_LEN as u32);
    h[16..16 + meta.variant.len()].copy_from_slice(meta.variant.as_bytes());
    LE::write_u64(&mut h[48..], meta.fingerprint);
    LE::write_u32(&mut h[56..], meta.k);
    LE::write_u32(&mut h[60..], meta.l);
    LE::write_u64(&mut h[64..], codes.len() as u64);
    LE::write_u64(&mut h[72..], meta.counts.wins);
    LE::write_u64(&mut h[80..], meta.counts.losses);
    LE::write_u64(&mut h[88..], meta.counts.draws);
    LE::write_u16(&mut h[96..], meta.counts.longest_win);
    LE::write_u16(&mut h[98..], meta.counts.longest_loss);
    LE::write_u16(&mut h[100..], max_distance);
    LE::write_u16(&mut h[102..], 2);
    write_section_entry(&mut h[104..152], &wdl);
    write_section_entry(&mut h[152..200], &depth);
    h[200] = meta.hands[0];
    h[201] = meta.hands[1];
    let checksum = xxh64(&h[..HEADER_CHECKED]);
    LE::write_u64(&mut h[HEADER_CHECKED..], checksum);
    Ok(file)
}

/// Packs and compresses the blocks of `codes` in parallel, in order.
fn compress_blocks(
    codes: &[u16],
    per_block: u32,
    level: i32,
    pack: impl Fn(&[u16], &mut Vec<u8>) + Sync,
) -> io::Result<Vec<Vec<u8>>> {
    codes
        .par_chunks(per_block as usize)
        .map_init(
            || (zstd::bulk::Compressor::new(level), Vec::new()),
            |(compressor, raw), chunk| {
                pack(chunk, raw);
                match compressor {
                    Ok(c) => c.compress(raw),
                    Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                }
            },
        )
        .collect()
}

/// Appends a section (block table, then blocks) to `file` and returns its entry.
fn append_section(
    file: &mut Vec<u8>,
    kind: u32,
    encoding: Encoding,
    block_slots: u32,
    blocks: &[Vec<u8>],
) -> Section {
    let offset = file.len() as u64;
    let table_len = blocks.len() * BLOCK_ENTRY_LEN;
    let data_start = offset + table_len as u64;
    let mut table = vec![0u8; table_len];
    let mut at = data_start;
    for (i, block) in blocks.iter().enumerate() {
        let e = &mut table[i * BLOCK_ENTRY_LEN..(i + 1) * BLOCK_ENTRY_LEN];
        LE::write_u64(&mut e[0..], at);
        LE::write_u32(&mut e[8..], block.len() as u32);
        LE::write_u32(&mut e[12..], 0); // reserved
        LE::write_u64(&mut e[16..], xxh64(block));
        at += block.len() as u64;
    }
    file.extend_from_slice(&table);
    let data_from = file.len();
    for block in blocks {
        file.extend_from_slice(block);
    }
    Section {
        kind,
        encoding,
        offset,
        length: file.len() as u64 - offset,
        block_slots,
        blocks: blocks.len() as u32,
        table_checksum: xxh64(&table),
        data_checksum: xxh64(&file[data_from..]),
    }
}

fn write_section_entry(e: &mut [u8], s: &Section) {
    LE::write_u32(&mut e[0..], s.kind);
    LE::write_u32(&mut e[4..], s.encoding as u32);
    LE::write_u64(&mut e[8..], s.offset);
    LE::write_u64(&mut e[16..], s.length);
    LE::write_u32(&mut e[24..], s.block_slots);
    LE::write_u32(&mut e[28..], s.blocks);
    LE::write_u64(&mut e[32..], s.table_checksum);
    LE::write_u64(&mut e[40..], s.data_checksum);
}

/// Writes `bytes` to `path` through `<path>.tmp`: write, fsync, rename, fsync the
/// directory. Used for database files and the manifest.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FormatError> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let result = (|| {
        let mut f = File::create(&tmp).map_err(|e| FormatError::io(&tmp, e))?;
        f.write_all(bytes).map_err(|e| FormatError::io(&tmp, e))?;
        f.sync_all().map_err(|e| FormatError::io(&tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| FormatError::io(path, e))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // Make the rename durable. Directories cannot be opened everywhere (Windows);
        // there the rename is as durable as the platform makes it.
        if let Ok(d) = File::open(dir) {
            d.sync_all().map_err(|e| FormatError::io(dir, e))?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

// ---------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------

/// One entry of a block table.
#[derive(Clone, Copy, Debug)]
struct Block {
    offset: u64,
    len: u32,
    checksum: u64,
}

/// A section as the reader uses it: entry and block table.
struct SectionReader {
    info: Section,
    blocks: Vec<Block>,
    name: &'static str,
    /// The section's number in cache keys.
    number: u8,
}

/// An open, memory-mapped database file of one subspace.
///
/// `Send + Sync`. Decompressed blocks are kept in a [`BlockCache`] (the file's own
/// or one shared with other files, see [`SubspaceFile::open_cached`]), within its
/// limit; [`SubspaceFile::read_all`] does not fill the cache.
pub struct SubspaceFile {
    path: PathBuf,
    map: Mmap,
    header: Header,
    wdl: SectionReader,
    depth: SectionReader,
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

/// Reads and checks the header in `bytes` (the start of a file of `file_len` bytes).
fn parse_header(path: &Path, bytes: &[u8], file_len: u64) -> Result<Header, FormatError> {
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
    if version != VERSION {
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
    let sections = LE::read_u16(&h[102..]);
    if sections != 2 {
        return Err(corrupt(format!("{sections} sections, expected 2")));
    }
    Ok(Header {
        version,
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
        wdl: parse_section(path, &h[104..152], KIND_WDL)?,
        depth: parse_section(path, &h[152..200], KIND_DEPTH)?,
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
        name: &'static str,
        table_name: &'static str,
    ) -> Result<SectionReader, FormatError> {
        let corrupt = |what: String| FormatError::Corrupt {
            path: path.to_path_buf(),
            what,
        };
        if info.block_slots == 0 {
            return Err(corrupt(format!("{name} section has blocks of 0 slots")));
        }
        let blocks = size.div_ceil(info.block_slots as u64);
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
        Ok(SectionReader {
            info,
            blocks: out,
            name,
            number: (info.kind == KIND_DEPTH) as u8,
        })
    }

    /// Slots in block `b`.
    fn slots_in(&self, b: usize, size: u64) -> u64 {
        let per = self.info.block_slots as u64;
        (size - b as u64 * per).min(per)
    }

    /// The compressed bytes of block `b`, checksum checked.
    fn compressed<'m>(
        &self,
        path: &Path,
        map: &'m [u8],
        b: usize,
    ) -> Result<&'m [u8], FormatError> {
        let blk = self.blocks[b];
        // The table was checked against the section bounds at open.
        let bytes = &map[blk.offset as usize..blk.offset as usize + blk.len as usize];
        if xxh64(bytes) != blk.checksum {
            return Err(FormatError::Checksum {
                path: path.to_path_buf(),
                section: self.name,
                block: Some(b as u32),
            });
        }
        Ok(bytes)
    }

    /// Block `b` decompressed, checksum checked.
    fn decode(&self, path: &Path, map: &[u8], b: usize, size: u64) -> Result<Vec<u8>, FormatError> {
        let src = self.compressed(path, map, b)?;
        let raw_len = self.info.encoding.raw_len(self.slots_in(b, size)) as usize;
        decompress(src, raw_len).map_err(|e| FormatError::Corrupt {
            path: path.to_path_buf(),
            what: format!("{} block {b} does not decompress: {e}", self.name),
        })
    }

    /// `read` applied to block `b`, from `cache` or decompressed into it.
    #[inline]
    fn with_block<R>(
        &self,
        file: &SubspaceFile,
        b: usize,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, FormatError> {
        file.cache.with(
            Key::new(file.id, self.number, b as u32),
            || self.decode(&file.path, &file.map, b, file.header.size),
            read,
        )
    }
}

/// The trit of slot `i` of a decompressed WDL block.
#[inline]
fn trit_at(encoding: Encoding, data: &[u8], i: usize) -> Option<u8> {
    match encoding {
        Encoding::Trits5 => {
            let byte = *data.get(i / 5)?;
            TRITS.get(byte as usize).map(|t| t[i % 5])
        }
        _ => {
            let t = data.get(i / 4)? >> (2 * (i % 4)) & 3;
            (t < 3).then_some(t)
        }
    }
}

/// The half distance of slot `i` of a decompressed depth block.
#[inline]
fn half_at(encoding: Encoding, data: &[u8], i: usize) -> Option<u16> {
    match encoding {
        Encoding::HalfU8 => data.get(i).map(|&b| b as u16),
        _ => data.get(2 * i..2 * i + 2).map(LE::read_u16),
    }
}

impl SubspaceFile {
    /// Opens and maps a file, checking magic, version, header checksum, the
    /// expectations, section bounds and block tables. Blocks are checked when read.
    /// The file reads through a cache of its own with the default limit
    /// ([`crate::cache::DEFAULT_LIMIT`]).
    pub fn open(path: &Path, expect: &Expect) -> Result<SubspaceFile, FormatError> {
        SubspaceFile::open_cached(path, expect, Arc::default())
    }

    /// As [`SubspaceFile::open`], reading through `cache` (shared with other files).
    pub fn open_cached(
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
        if header.wdl.offset != HEADER_LEN as u64
            || Some(header.depth.offset) != header.wdl.offset.checked_add(header.wdl.length)
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
        let wdl = SectionReader::new(path, &map, header.wdl, header.size, "WDL", "WDL table")?;
        let depth = SectionReader::new(
            path,
            &map,
            header.depth,
            header.size,
            "depth",
            "depth table",
        )?;
        if header.depth.offset + header.depth.length != file_len {
            return Err(corrupt("bytes after the last section"));
        }
        Ok(SubspaceFile {
            path: path.to_path_buf(),
            map,
            header,
            wdl,
            depth,
            id: cache.register(),
            cache,
        })
    }

    /// The file's header.
    pub fn header(&self) -> &Header {
        &self.header
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
        self.wdl
            .with_block(self, b, |data| trit_at(encoding, data, i))?
            .ok_or_else(|| self.corrupt_slot("WDL", idx))
    }

    /// Win, draw or loss of slot `idx`. Reads only the WDL section.
    #[inline]
    pub fn wdl(&self, idx: u64) -> Result<Wdl, FormatError> {
        Ok(match self.trit(idx)? {
            0 => Wdl::Draw,
            1 => Wdl::Win,
            _ => Wdl::Loss,
        })
    }

    /// The code of slot `idx` (see [`crate::value`]). Reads a WDL and a depth block.
    pub fn code(&self, idx: u64) -> Result<u16, FormatError> {
        let t = self.trit(idx)?;
        let per = self.depth.info.block_slots as u64;
        let (b, i) = ((idx / per) as usize, (idx % per) as usize);
        let encoding = self.depth.info.encoding;
        self.depth
            .with_block(self, b, |data| half_at(encoding, data, i))?
            .and_then(|h| combine(t, h))
            .ok_or_else(|| self.corrupt_slot("depth", idx))
    }

    /// The value of slot `idx`.
    pub fn value(&self, idx: u64) -> Result<Value, FormatError> {
        self.code(idx).map(Value::from_code)
    }

    /// Every code of the file, decompressed in parallel on the current rayon pool,
    /// without filling the probe cache. Checks every block checksum on the way.
    pub fn read_all(&self) -> Result<Vec<u16>, FormatError> {
        let size = self.header.size;
        let mut codes = crate::memory::zeroed_huge::<u16>(size as usize);
        // Pass 1: trits into the codes.
        let wdl = &self.wdl;
        codes
            .par_chunks_mut(wdl.info.block_slots as usize)
            .enumerate()
            .try_for_each(|(b, chunk)| -> Result<(), FormatError> {
                let data = wdl.decode(&self.path, &self.map, b, size)?;
                for (i, c) in chunk.iter_mut().enumerate() {
                    *c = trit_at(wdl.info.encoding, &data, i).ok_or_else(|| {
                        self.corrupt_slot("WDL", b as u64 * wdl.info.block_slots as u64 + i as u64)
                    })? as u16;
                }
                Ok(())
            })?;
        // Pass 2: combine with the half distances.
        let depth = &self.depth;
        codes
            .par_chunks_mut(depth.info.block_slots as usize)
            .enumerate()
            .try_for_each(|(b, chunk)| -> Result<(), FormatError> {
                let data = depth.decode(&self.path, &self.map, b, size)?;
                for (i, c) in chunk.iter_mut().enumerate() {
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
        for (s, table, data) in [
            (&self.wdl, "WDL table", "WDL data"),
            (&self.depth, "depth table", "depth data"),
        ] {
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
                .try_for_each(|b| s.compressed(&self.path, &self.map, b).map(|_| ()))?;
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

    /// Bytes of the WDL and the depth section, for size reports.
    pub fn section_bytes(&self) -> (u64, u64) {
        (self.header.wdl.length, self.header.depth.length)
    }

    /// Decompressed blocks of this file held in its cache, and their bytes.
    pub fn cached(&self) -> (usize, usize) {
        self.cache.held_by(self.id)
    }
}

// ---------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mix::SplitMix as Mix;

    fn meta_for(codes: &[u16]) -> SubspaceMeta {
        SubspaceMeta {
            k: 3,
            l: 4,
            hands: [0, 0],
            fingerprint: 0x1234_5678_9abc_def0,
            variant: "standard".into(),
            counts: Counts::of_codes(codes),
        }
    }

    fn random_codes(n: usize, max_code: u16, seed: u64) -> Vec<u16> {
        let mut r = Mix(seed);
        (0..n)
            .map(|_| r.below(max_code as u64 + 1) as u16)
            .collect()
    }

    /// Skewed, locally correlated codes, shaped like real tables: long runs of wins
    /// with short distances, some losses, draws in patches.
    pub(crate) fn realistic_codes(n: usize, seed: u64) -> Vec<u16> {
        let mut r = Mix(seed);
        let mut out = Vec::with_capacity(n);
        let mut draw_patch = 0;
        while out.len() < n {
            if draw_patch > 0 {
                draw_patch -= 1;
                out.push(0);
                continue;
            }
            let x = r.below(1000);
            let code = if x < 5 {
                draw_patch = r.below(40);
                0
            } else if x < 830 {
                2 * (r.below(4) as u16 + r.below(3) as u16) + 2 // wins 1..11
            } else {
                2 * (r.below(13) as u16) + 1 // losses 0..24
            };
            out.push(code);
        }
        out
    }

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("millbase-format-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn small_opts() -> WriteOptions {
        WriteOptions {
            wdl_block: 1000,
            depth_block: 777,
            wdl_level: 3,
            depth_level: 3,
            ..Default::default()
        }
    }

    #[test]
    fn xxh64_matches_reference() {
        assert_eq!(xxh64(b""), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxh64(b"abc"), 0x44BC_2CF5_AD77_0999);
        // zstd's frame checksum is the low 32 bits of XXH64 of the content, seed 0:
        // an independent implementation to check the long-input paths against.
        for len in [0usize, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 100, 1000, 4099] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            let mut enc = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
            enc.include_checksum(true).unwrap();
            enc.write_all(&data).unwrap();
            let frame = enc.finish().unwrap();
            let zstd_sum = LE::read_u32(&frame[frame.len() - 4..]);
            assert_eq!(zstd_sum, xxh64(&data) as u32, "length {len}");
        }
    }

    #[test]
    fn trit_packing_round_trips() {
        let codes = random_codes(1003, 40, 1);
        for enc in [Encoding::Trits5, Encoding::Bits2] {
            let mut raw = Vec::new();
            pack_wdl(&codes, enc, &mut raw);
            assert_eq!(raw.len() as u64, enc.raw_len(codes.len() as u64));
            for (i, &c) in codes.iter().enumerate() {
                assert_eq!(trit_at(enc, &raw, i), Some(trit(c)));
            }
        }
        for c in 0..600u16 {
            assert_eq!(combine(trit(c), half(c)), Some(c));
        }
    }

    #[test]
    fn round_trip_random_and_realistic() {
        let dir = tmpdir("rt");
        for (name, codes) in [
            ("random", random_codes(12_345, 60, 7)),
            ("realistic", realistic_codes(20_000, 8)),
            ("long", random_codes(5_000, 1200, 9)), // distances > 511: u16 depth
            ("one", vec![5u16]),
            ("empty", vec![]),
        ] {
            let path = dir.join(format!("{name}.mdb"));
            let meta = meta_for(&codes);
            let rep = write_subspace_with(&path, &meta, &codes, &small_opts()).unwrap();
            assert_eq!(rep.file_bytes(), fs::metadata(&path).unwrap().len());
            assert!(!dir.join(format!("{name}.mdb.tmp")).exists());
            let f = SubspaceFile::open(
                &path,
                &Expect::exact(meta.fingerprint, 3, 4, codes.len() as u64),
            )
            .unwrap();
            assert_eq!(f.header().meta.counts.wins, meta.counts.wins);
            assert_eq!(f.header().checksum, rep.checksum);
            let expect_enc = if meta.counts.longest_win.max(meta.counts.longest_loss) > 511 {
                Encoding::HalfU16
            } else {
                Encoding::HalfU8
            };
            assert_eq!(f.header().depth.encoding, expect_enc);
            f.verify_checksums().unwrap();
            assert_eq!(f.read_all().unwrap(), codes, "{name}");
            for (i, &c) in codes.iter().enumerate() {
                assert_eq!(f.code(i as u64).unwrap(), c);
                assert_eq!(f.wdl(i as u64).unwrap(), Value::from_code(c).wdl());
            }
            assert!(matches!(
                f.code(codes.len() as u64),
                Err(FormatError::OutOfRange { .. })
            ));
        }
        fs::remove_dir_all(&dir).unwrap();
    }

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
        assert_eq!(f.cache.blocks_of(f.id, f.depth.number), 0);
        assert_eq!(f.cache.blocks_of(f.id, f.wdl.number), f.wdl.blocks.len());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn output_is_deterministic() {
        let dir = tmpdir("det");
        let codes = realistic_codes(50_000, 5);
        let meta = meta_for(&codes);
        let a = dir.join("a.mdb");
        let b = dir.join("b.mdb");
        write_subspace_with(&a, &meta, &codes, &small_opts()).unwrap();
        // A different thread count must not change the bytes.
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| write_subspace_with(&b, &meta, &codes, &small_opts()).unwrap());
        assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn inconsistent_metadata_is_refused() {
        let dir = tmpdir("meta");
        let codes = realistic_codes(1000, 5);
        let mut meta = meta_for(&codes);
        meta.counts.longest_loss += 2;
        let err = write_subspace(&dir.join("x.mdb"), &meta, &codes).unwrap_err();
        assert!(matches!(err, FormatError::Input { .. }), "{err}");
        assert!(!dir.join("x.mdb").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Every probe of a damaged file either fails or returns the true code.
    fn never_wrong(path: &Path, codes: &[u16]) -> Result<(), FormatError> {
        let f = SubspaceFile::open(path, &Expect::any())?;
        let mut first_err = None;
        for (i, &c) in codes.iter().enumerate() {
            match f.code(i as u64) {
                Ok(v) => assert_eq!(v, c, "wrong value from a damaged file at slot {i}"),
                Err(e) => first_err = first_err.or(Some(e)),
            }
        }
        if let Ok(all) = f.read_all() {
            assert_eq!(all, codes);
        }
        match first_err {
            Some(e) => Err(e),
            None => f.verify_checksums(),
        }
    }

    #[test]
    fn corrupt_files_give_errors_not_values() {
        let dir = tmpdir("corrupt");
        let codes = realistic_codes(6_000, 11);
        let meta = meta_for(&codes);
        let good = dir.join("good.mdb");
        write_subspace_with(&good, &meta, &codes, &small_opts()).unwrap();
        let bytes = fs::read(&good).unwrap();
        let bad = dir.join("bad.mdb");
        // Flip one bit at many places, header included: always an error.
        let mut r = Mix(99);
        let mut places: Vec<usize> = (0..HEADER_LEN).step_by(3).collect();
        places.extend((0..300).map(|_| r.below(bytes.len() as u64) as usize));
        for at in places {
            let mut b = bytes.clone();
            b[at] ^= 1 << (at % 8);
            fs::write(&bad, &b).unwrap();
            let res = never_wrong(&bad, &codes);
            // Reserved header bytes are covered by the header checksum too.
            assert!(res.is_err(), "flip at {at} went unnoticed");
        }
        // Truncation anywhere.
        for len in [
            0,
            5,
            8,
            100,
            HEADER_LEN - 1,
            HEADER_LEN,
            HEADER_LEN + 10,
            bytes.len() - 1,
        ] {
            fs::write(&bad, &bytes[..len]).unwrap();
            let err = never_wrong(&bad, &codes).unwrap_err();
            assert!(
                matches!(
                    err,
                    FormatError::Truncated { .. } | FormatError::Corrupt { .. }
                ),
                "len {len}: {err}"
            );
        }
        // Trailing garbage.
        let mut b = bytes.clone();
        b.push(0);
        fs::write(&bad, &b).unwrap();
        assert!(matches!(
            never_wrong(&bad, &codes),
            Err(FormatError::Corrupt { .. })
        ));
        // Not a database at all.
        fs::write(&bad, b"{\"hello\": 1}\n").unwrap();
        assert!(matches!(
            never_wrong(&bad, &codes),
            Err(FormatError::BadMagic { .. })
        ));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn wrong_rules_version_subspace_size() {
        let dir = tmpdir("wrong");
        let codes = realistic_codes(3_000, 12);
        let meta = meta_for(&codes);
        let path = dir.join("f.mdb");
        write_subspace_with(&path, &meta, &codes, &small_opts()).unwrap();
        let n = codes.len() as u64;
        let err =
            SubspaceFile::open(&path, &Expect::exact(meta.fingerprint ^ 1, 3, 4, n)).unwrap_err();
        assert!(matches!(err, FormatError::RulesMismatch { .. }), "{err}");
        let err = SubspaceFile::open(&path, &Expect::exact(meta.fingerprint, 4, 3, n)).unwrap_err();
        assert!(matches!(err, FormatError::Mismatch { .. }), "{err}");
        let err =
            SubspaceFile::open(&path, &Expect::exact(meta.fingerprint, 3, 4, n + 1)).unwrap_err();
        assert!(matches!(err, FormatError::Mismatch { .. }), "{err}");
        // Another version, header checksum fixed up as a writer of that version would.
        let mut b = fs::read(&path).unwrap();
        LE::write_u32(&mut b[8..], VERSION + 1);
        let sum = xxh64(&b[..HEADER_CHECKED]);
        LE::write_u64(&mut b[HEADER_CHECKED..], sum);
        fs::write(&path, &b).unwrap();
        let err = SubspaceFile::open(&path, &Expect::any()).unwrap_err();
        assert!(
            matches!(err, FormatError::Version { found, expected, .. } if found == VERSION + 1 && expected == VERSION),
            "{err}"
        );
        let msg = err.to_string();
        assert!(msg.contains("millbase build"), "{msg}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_file_is_io_error() {
        let err =
            SubspaceFile::open(Path::new("/nonexistent/3-3.mdb"), &Expect::any()).unwrap_err();
        assert!(matches!(err, FormatError::Io { .. }));
    }
}
