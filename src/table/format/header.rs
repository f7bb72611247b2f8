//! The header of a database file: the format's versions and constants, the
//! section encodings, a subspace's metadata, and what an opening expects.

use crate::rules::value::Counts;

/// The first eight bytes of every database file.
pub const MAGIC: [u8; 8] = *b"MILLBASE";
/// The newest format version this code reads, and the one it writes for a file whose
/// depth section is model-coded ([`Encoding::DepthRefined`]; version 6 is the same
/// with [`Encoding::DepthModel`], the depth model without its refiner, still read). Version 2 added the
/// header flags (decisive-only depths, don't-cares) and the WDL-only file (one
/// section, no distances); version 3 the model-coded WDL section; version 4 the
/// model-coded depth section (with a model-coded WDL section); versions 5 and 6
/// are 3 and 4 with the WDL model's refiner (`docs/FORMAT.md`, "Model coding"),
/// and versions 3 and 4 are no longer read ([`RETIRED`]). A file is written with
/// the lowest version that describes it (a full file without flags as version 1,
/// only on request: [`super::WriteOptions::decisive_depths`] is on by default).
pub const VERSION: u32 = 7;
/// The version of a file whose depth section is model-coded without the refiner
/// ([`Encoding::DepthModel`]), which this code reads and no longer writes.
pub const VERSION_DEPTH_MODEL: u32 = 6;
/// The version of a file whose WDL section is model-coded ([`Encoding::Model`])
/// and whose depth section (if any) is zstd-compressed.
pub const VERSION_WDL_MODEL: u32 = 5;
/// Versions no longer read: the WDL model without its refiner (stops 28 to 32).
/// Their files are written again from the build's files by `millbase repack` or
/// `millbase pack`.
pub const RETIRED: [u32; 2] = [3, 4];
/// The version of a file with header flags or without a depth section, whose WDL
/// section is zstd-compressed.
pub const VERSION_FLAGS: u32 = 2;
/// The version of a full file without flags: the first version, unchanged.
pub const VERSION_FULL: u32 = 1;
/// Bytes in the fixed header.
pub const HEADER_LEN: usize = 256;
/// Bytes in one section entry of the header.
pub const SECTION_ENTRY_LEN: usize = 48;
/// Bytes in one block-table entry.
pub const BLOCK_ENTRY_LEN: usize = 24;
/// Bytes in one entry of a compact block table ([`FLAG_COMPACT_TABLES`]).
pub const COMPACT_ENTRY_LEN: usize = 8;
/// Bytes of the header covered by the header checksum (all but the checksum).
pub(super) const HEADER_CHECKED: usize = HEADER_LEN - 8;
/// The longest variant name the header holds.
pub const VARIANT_LEN: usize = 32;
/// Header flag (format version 2, the `u32` at offset 202): the WDL section holds
/// don't-cares. A slot whose result a capturing ply reaches may store any result no
/// better than its true one; the true result is the better of the stored one and
/// the best result of the position's capturing plies. Only in WDL-only files.
pub const FLAG_WDL_DONT_CARES: u32 = 1;
/// Header flag (format version 2): the full values hold don't-cares (a full file
/// written by `millbase repack`). A slot whose exact value (result and distance) a
/// capturing ply reaches may store any value no better than its true one; the true
/// value is the better of the stored one and the best value of the position's
/// capturing plies. Only in full files, and always with [`FLAG_WDL_DONT_CARES`] (the
/// stored results then follow the WDL rule too) or with [`FLAG_EXACT_RESULTS`].
pub const FLAG_VALUE_DONT_CARES: u32 = 2;
/// Header flag (format version 2): the depth section holds the entries of the
/// decisive slots only. A block's raw bytes are the half distances of the slots of
/// the block whose trit is a win or a loss, in slot order (a draw has no distance);
/// a reader expands a block with the trits of its slots, from the WDL section. It
/// saves the draws' entries and puts the decisive distances side by side, where
/// they compress best. Only in full files; `millbase build` sets it.
pub const FLAG_DECISIVE_DEPTHS: u32 = 4;
/// Header flag (format version 2, always with [`FLAG_DECISIVE_DEPTHS`]): the depth
/// section holds the entries of the lost slots only, in slot order. A won slot's
/// distance is not stored: it is one more than the shortest distance of the lost
/// positions its plies lead into (a ply that ends the game makes it `Win(1)`), read
/// one ply ahead ([`crate::table::probe::Tablebase::probe`] does). In most sectors the side
/// to move rarely loses, so this leaves few entries. Only in full files; written
/// by `millbase repack --depths losses`.
pub const FLAG_LOSS_DEPTHS: u32 = 8;
/// Header flag (format version 2, in a full file with [`FLAG_VALUE_DONT_CARES`]
/// and instead of [`FLAG_WDL_DONT_CARES`]): the value don't-cares are of one kind
/// only. Every slot that is its class's canonical slot stores its true result, and
/// its true value too unless it stores `Loss(0)`; a stored `Loss(0)` is a loss
/// whose true value is the better of `Loss(0)` and the capturing plies' values.
/// A WDL probe is one look-up, and a full-value probe looks at capturing plies
/// only from a stored `Loss(0)`. Written by the fills that keep every result
/// (`millbase repack --fill loss0` or `--fill lean`).
pub const FLAG_EXACT_RESULTS: u32 = 16;
/// Header flag (format version 2 and later, any file): both block tables are
/// **compact**, 8 bytes an entry instead of 24: where block `j` ends, counted
/// from the end of the table (`u32`; block `j` starts where block `j - 1` ends,
/// block 0 right after the table), and the low 32 bits of the XXH64 of its bytes.
/// Written in every file with a model-coded WDL section (`millbase repack
/// --profile archive`, `millbase build --form small`, `millbase pack --wdl-only
/// --profile archive`), whose blocks are many and small: it takes two thirds off
/// their tables (25.7 MB of the whole standard game's 38.6 MB).
pub const FLAG_COMPACT_TABLES: u32 = 32;
/// The code [`super::SubspaceFile::read_all_partial`] gives a won slot of a file with
/// [`FLAG_LOSS_DEPTHS`], whose distance is not stored (no real code is this large).
pub const WIN_BY_LOOKAHEAD: u16 = u16::MAX;
/// Every flag this version knows.
pub(super) const KNOWN_FLAGS: u32 = FLAG_WDL_DONT_CARES
    | FLAG_VALUE_DONT_CARES
    | FLAG_DECISIVE_DEPTHS
    | FLAG_LOSS_DEPTHS
    | FLAG_EXACT_RESULTS
    | FLAG_COMPACT_TABLES;
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
    /// WDL, model-coded (format version 5): a block holds whole classes and is
    /// arithmetic-coded with a context model; block 0 of the section is the model's
    /// prior. Decoded, a block is laid out as [`Encoding::Trits5`].
    Model = 5,
    /// Depth of the lost slots only ([`FLAG_LOSS_DEPTHS`]), model-coded (format
    /// version 6) in the WDL model's blocks of whole classes; block 0 of the section
    /// is the model's prior, or empty where zstd was smaller (the blocks are then
    /// [`Encoding::HalfU8`], zstd-compressed). Decoded, a block is laid out as
    /// [`Encoding::HalfU8`].
    DepthModel = 6,
    /// As [`Encoding::DepthModel`], with a second stage refining each
    /// probability (format version 7; `docs/FORMAT.md`, "The depth refiner").
    DepthRefined = 7,
}

impl Encoding {
    pub(super) fn from_u32(v: u32) -> Option<Encoding> {
        Some(match v {
            1 => Encoding::Trits5,
            2 => Encoding::Bits2,
            3 => Encoding::HalfU8,
            4 => Encoding::HalfU16,
            5 => Encoding::Model,
            6 => Encoding::DepthModel,
            7 => Encoding::DepthRefined,
            _ => return None,
        })
    }

    /// Raw (decompressed) bytes of a block of `n` slots.
    pub fn raw_len(self, n: u64) -> u64 {
        match self {
            Encoding::Trits5 | Encoding::Model => n.div_ceil(5),
            Encoding::Bits2 => n.div_ceil(4),
            Encoding::HalfU8 | Encoding::DepthModel | Encoding::DepthRefined => n,
            Encoding::HalfU16 => 2 * n,
        }
    }

    /// Whether this is a depth model's encoding ([`Encoding::DepthModel`],
    /// [`Encoding::DepthRefined`]): block 0 of the section is the prior.
    pub fn is_depth_model(self) -> bool {
        matches!(self, Encoding::DepthModel | Encoding::DepthRefined)
    }

    /// Whether this encoding belongs in a WDL section (else a depth section).
    pub fn is_wdl(self) -> bool {
        matches!(self, Encoding::Trits5 | Encoding::Bits2 | Encoding::Model)
    }

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Trits5 => "trits5",
            Encoding::Bits2 => "bits2",
            Encoding::HalfU8 => "half-u8",
            Encoding::HalfU16 => "half-u16",
            Encoding::Model => "model",
            Encoding::DepthModel => "depth model",
            Encoding::DepthRefined => "depth model, refined",
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
    /// Whether the block table is compact ([`FLAG_COMPACT_TABLES`], a header flag:
    /// not stored in the section's entry).
    pub compact: bool,
}

impl Section {
    /// Bytes of one entry of the block table.
    pub fn entry_len(&self) -> usize {
        if self.compact {
            COMPACT_ENTRY_LEN
        } else {
            BLOCK_ENTRY_LEN
        }
    }

    /// Bytes of the block table.
    pub fn table_len(&self) -> u64 {
        self.blocks as u64 * self.entry_len() as u64
    }
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
    /// Flags ([`FLAG_WDL_DONT_CARES`], [`FLAG_VALUE_DONT_CARES`],
    /// [`FLAG_DECISIVE_DEPTHS`], [`FLAG_LOSS_DEPTHS`], [`FLAG_EXACT_RESULTS`],
    /// [`FLAG_COMPACT_TABLES`]); 0 in a version 1 file.
    pub flags: u32,
    /// The depth section; `None` in a WDL-only file (format version 2, written by
    /// `millbase pack --wdl-only`), which holds win/draw/loss and no distances.
    pub depth: Option<Section>,
    /// XXH64 of the first 248 header bytes, which covers the whole file through the
    /// section and block checksums: the file's identity in `manifest.json`.
    pub checksum: u64,
}

impl Header {
    /// Bytes of the whole file: the header and its sections.
    pub fn file_bytes(&self) -> u64 {
        let last = self.depth.as_ref().unwrap_or(&self.wdl);
        last.offset + last.length
    }

    /// Whether the WDL section holds don't-cares ([`FLAG_WDL_DONT_CARES`]): a probe
    /// takes the better of the stored result and the capturing plies' results.
    pub fn wdl_dont_cares(&self) -> bool {
        self.flags & FLAG_WDL_DONT_CARES != 0
    }

    /// Whether the full values hold don't-cares ([`FLAG_VALUE_DONT_CARES`]): a probe
    /// takes the better of the stored value and the capturing plies' values.
    pub fn value_dont_cares(&self) -> bool {
        self.flags & FLAG_VALUE_DONT_CARES != 0
    }

    /// Whether the value don't-cares keep every result true and store `Loss(0)`
    /// only ([`FLAG_EXACT_RESULTS`]).
    pub fn exact_results(&self) -> bool {
        self.flags & FLAG_EXACT_RESULTS != 0
    }

    /// Whether a stored value `v` (of a canonical slot) is the slot's true value
    /// as it stands, with no look at the capturing plies: in a file without value
    /// don't-cares always; with them, `Win(1)` (nothing is better), and with
    /// [`FLAG_EXACT_RESULTS`] every value but `Loss(0)`.
    pub fn value_is_exact(&self, v: crate::rules::value::Value) -> bool {
        use crate::rules::value::Value;
        !self.value_dont_cares()
            || v == Value::Win(1)
            || (self.exact_results() && v != Value::Loss(0))
    }

    /// Whether the depth section holds the decisive slots' entries only
    /// ([`FLAG_DECISIVE_DEPTHS`]).
    pub fn decisive_depths(&self) -> bool {
        self.flags & FLAG_DECISIVE_DEPTHS != 0
    }

    /// Whether the depth section holds the lost slots' entries only
    /// ([`FLAG_LOSS_DEPTHS`]): a win's distance is found one ply ahead.
    pub fn loss_depths(&self) -> bool {
        self.flags & FLAG_LOSS_DEPTHS != 0
    }

    /// Whether the block tables are compact ([`FLAG_COMPACT_TABLES`]).
    pub fn compact_tables(&self) -> bool {
        self.flags & FLAG_COMPACT_TABLES != 0
    }

    /// Which slots have an entry in the depth section.
    pub fn depth_entries(&self) -> DepthEntries {
        if self.loss_depths() {
            DepthEntries::Losses
        } else if self.decisive_depths() {
            DepthEntries::Decisive
        } else {
            DepthEntries::Every
        }
    }

    /// Whether the file holds win/draw/loss only (no depth section).
    pub fn wdl_only(&self) -> bool {
        self.depth.is_none()
    }

    /// Bytes of the depth section (0 in a WDL-only file).
    pub fn depth_bytes(&self) -> u64 {
        self.depth.map_or(0, |d| d.length)
    }
}

/// What [`super::SubspaceFile::open`] checks the header against; `None` accepts anything.
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
    pub fn sector(fingerprint: u64, sector: crate::table::sector::Sector, size: u64) -> Expect {
        Expect {
            hands: Some([sector.hk, sector.hl]),
            ..Expect::exact(fingerprint, sector.k as u32, sector.l as u32, size)
        }
    }
}

/// Which slots have an entry in a depth block, by their trit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepthEntries {
    /// Every slot (format version 1; a draw's entry is 0).
    Every,
    /// The decisive slots ([`super::FLAG_DECISIVE_DEPTHS`]).
    Decisive,
    /// The lost slots ([`super::FLAG_LOSS_DEPTHS`]): a win's distance is found one
    /// ply ahead.
    Losses,
}

impl DepthEntries {
    /// Whether a slot with trit `t` (0 draw, 1 win, 2 loss) has an entry.
    #[inline]
    pub(super) fn has(self, t: u8) -> bool {
        match self {
            DepthEntries::Every => true,
            DepthEntries::Decisive => t != 0,
            DepthEntries::Losses => t == 2,
        }
    }
}
