//! The database file of one subspace `k-l`: an explicit little-endian byte layout
//! (see `docs/FORMAT.md`), written atomically, read through a memory map.
//!
//! A file holds one *code* per index slot (see [`crate::rules::value`]: 0 a draw, otherwise
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
//! header carries a checksum, checked when the file is opened; a block table is
//! read an entry at a time, each checked where it stands, and its own checksum is
//! checked by [`SubspaceFile::verify_checksums`].
//!
//! Reading: [`SubspaceFile`] reads the header when the file is opened, and reads
//! and decompresses a block (by positioned reads) when it is read and not in the cache of decompressed blocks the file reads through (bounded in
//! bytes, shared by all files of a [`crate::table::probe::Tablebase`]); a warm probe takes one uncontended
//! lock and allocates nothing.

pub(crate) mod cache;
mod checksum;
mod coder;
mod depth_model;
mod error;
mod header;
// The WDL model coder's internals are public only for the research example
// `examples/wdl_model_ideas.rs` (feature `internals`, not a stable API).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod model;
#[cfg(not(feature = "internals"))]
mod model;
mod pack;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use checksum::{block_checksum, xxh64};
pub(crate) use error::open_regular_len;
pub use error::{FormatError, open_regular};

/// Slots per block of a model-coded WDL section ([`Encoding::Model`]) of the
/// sector with `k` and `l` stones on the board and `hands` in hand under `rules`:
/// whole classes, at least 2^14 slots.
pub fn model_block_slots(rules: &'static crate::Rules, k: u32, l: u32, hands: [u8; 2]) -> u64 {
    model::Geometry::new(rules, k, l, hands).block_slots()
}
pub use read::{SubspaceFile, read_header};
pub use write::{
    DEPTH_BLOCK, SERVING_DEPTH_BLOCK, SERVING_LEVEL, SERVING_WDL_BLOCK, WDL_BLOCK, WDL_LEVEL,
    WriteOptions, ZSTD_BLOCKS, depth_encoding_for, replace_file, sync_dir, write_atomic,
    write_depth_recoded, write_retabled, write_subspace, write_subspace_choosing,
    write_subspace_choosing_checked, write_subspace_with, write_wdl_only_chosen,
    write_wdl_only_copy,
};

pub use header::{
    BLOCK_ENTRY_LEN, COMPACT_ENTRY_LEN, DepthEntries, Encoding, Expect, FLAG_COMPACT_TABLES,
    FLAG_DECISIVE_DEPTHS, FLAG_EXACT_RESULTS, FLAG_LOSS_DEPTHS, FLAG_VALUE_DONT_CARES,
    FLAG_WDL_DONT_CARES, HEADER_LEN, Header, KIND_DEPTH, KIND_WDL, MAGIC, RETIRED,
    SECTION_ENTRY_LEN, Section, SubspaceMeta, VARIANT_LEN, VERSION, VERSION_DEPTH_MODEL,
    VERSION_FLAGS, VERSION_FULL, VERSION_WDL_MODEL, WIN_BY_LOOKAHEAD,
};
use header::{HEADER_CHECKED, KNOWN_FLAGS};
