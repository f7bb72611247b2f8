//! Writing the file of a subspace: the codes packed and compressed block by block,
//! the header, and an atomic replacement of the file.

use super::DepthEntries;
use super::depth_model::{self, DepthCoding};
use super::model::{Coding, Geometry, Model, count_prior, store_prior};
use super::pack::{half, pack_depth, pack_wdl, trit};
use super::read::{SubspaceFile, parse_header};
use super::{
    BLOCK_ENTRY_LEN, COMPACT_ENTRY_LEN, Encoding, FLAG_COMPACT_TABLES, FLAG_DECISIVE_DEPTHS,
    FLAG_EXACT_RESULTS, FLAG_LOSS_DEPTHS, FLAG_VALUE_DONT_CARES, FLAG_WDL_DONT_CARES, FormatError,
    HEADER_CHECKED, HEADER_LEN, Header, KIND_DEPTH, KIND_WDL, MAGIC, Section, SubspaceMeta,
    VARIANT_LEN, VERSION, VERSION_FLAGS, VERSION_FULL, VERSION_WDL_MODEL, WIN_BY_LOOKAHEAD,
    block_checksum, xxh64,
};
use crate::rules::Rules;
use byteorder::{ByteOrder, LittleEndian as LE};
use rayon::prelude::*;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
    /// Packing of the WDL section: [`Encoding::Trits5`] or [`Encoding::Bits2`]
    /// (zstd-compressed, in blocks of `wdl_block` slots), or [`Encoding::Model`]
    /// (model-coded in blocks of whole classes, format version 5; the metadata
    /// must name rules this program knows).
    pub wdl_encoding: Encoding,
    /// Write the WDL section only (a format version 2 file without distances, for
    /// `millbase pack --wdl-only`); otherwise both sections (version 1).
    pub wdl_only: bool,
    /// The WDL results given are filled don't-cares ([`super::FLAG_WDL_DONT_CARES`]);
    /// only with `wdl_only`.
    pub wdl_dont_cares: bool,
    /// The values given are filled value don't-cares
    /// ([`super::FLAG_VALUE_DONT_CARES`], with [`super::FLAG_WDL_DONT_CARES`]): a
    /// full file of format version 2, written by `millbase repack`; not with
    /// `wdl_only`.
    pub value_dont_cares: bool,
    /// The value don't-cares given keep every result true and store `Loss(0)`
    /// only ([`super::FLAG_EXACT_RESULTS`], instead of
    /// [`super::FLAG_WDL_DONT_CARES`]); only with `value_dont_cares`.
    pub exact_results: bool,
    /// The depth section holds the decisive slots' entries only
    /// ([`super::FLAG_DECISIVE_DEPTHS`], format version 2): the default, which
    /// makes the depth section smaller; off, a full file without don't-cares is
    /// written as version 1 (every slot an entry, a draw's 0). Full files only.
    pub decisive_depths: bool,
    /// The depth section holds the lost slots' entries only
    /// ([`super::FLAG_LOSS_DEPTHS`], with `decisive_depths`): a win's distance is
    /// found one ply ahead. Off by default (`millbase repack --depths losses`).
    pub loss_depths: bool,
    /// Model-code the depth section ([`Encoding::DepthRefined`], format version 7),
    /// where zstd is not smaller: only with `loss_depths` and a model-coded WDL
    /// section. A sector whose longest loss does not fit the model
    /// ([`Encoding::HalfU16`]) keeps zstd (and version 5).
    pub depth_model: bool,
    /// Write compact block tables ([`super::FLAG_COMPACT_TABLES`]), where every
    /// section's blocks take at most 4 GiB (else the file keeps the 24-byte
    /// entries).
    pub compact_tables: bool,
}

/// Slots per WDL block the writer uses unless told otherwise.
pub const WDL_BLOCK: u32 = 1 << 20;

/// The zstd level of the WDL section the writer uses unless told otherwise.
pub const WDL_LEVEL: i32 = 15;

/// Slots per depth block the writer uses unless told otherwise.
pub const DEPTH_BLOCK: u32 = 1 << 18;

/// Slots per WDL block of the serving profile (`millbase repack --profile
/// serving`): 13 KB of packed trits, decompressed in about 20 µs.
pub const SERVING_WDL_BLOCK: u32 = 1 << 16;

/// Slots per WDL block of the serving profile's first files (with
/// [`super::FLAG_WDL_DONT_CARES`]), still read.
pub const SERVING_WDL_BLOCK_FIRST: u32 = 1 << 18;

/// Slots per depth block of the serving profile: at most 64 KB of entries.
pub const SERVING_DEPTH_BLOCK: u32 = 1 << 16;

/// The zstd level of both sections of the serving profile.
pub const SERVING_LEVEL: i32 = 19;

/// The block sizes (WDL, depth) of the zstd-compressed sections this program
/// writes or wrote: the build's ([`WriteOptions::default`]), the serving
/// profile's, and the serving profile's first.
pub const ZSTD_BLOCKS: [(u32, u32); 3] = [
    (WDL_BLOCK, DEPTH_BLOCK),
    (SERVING_WDL_BLOCK, SERVING_DEPTH_BLOCK),
    (SERVING_WDL_BLOCK_FIRST, SERVING_DEPTH_BLOCK),
];

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            wdl_block: WDL_BLOCK,
            depth_block: DEPTH_BLOCK,
            wdl_level: WDL_LEVEL,
            depth_level: 9,
            wdl_encoding: Encoding::Trits5,
            wdl_only: false,
            wdl_dont_cares: false,
            value_dont_cares: false,
            exact_results: false,
            decisive_depths: true,
            loss_depths: false,
            depth_model: false,
            compact_tables: false,
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
    let file = encode_subspace(path, meta, codes, opts, None, false)?.file;
    write_encoded(path, &file)
}

/// Writes the encoded `file` to `path` atomically and returns its header as a
/// reader sees it: what the file holds, and the sizes of its sections for the
/// manifest.
fn write_encoded(path: &Path, file: &[u8]) -> Result<Header, FormatError> {
    let header = parse_header(path, file, file.len() as u64)?;
    write_atomic(path, file)?;
    Ok(header)
}

fn input_error(path: &Path, what: String) -> FormatError {
    FormatError::Input {
        path: path.to_path_buf(),
        what,
    }
}

/// Writes a WDL-only file with WDL don't-cares ([`super::FLAG_WDL_DONT_CARES`]),
/// model-coded ([`Encoding::Model`]), to `path` (atomically, as
/// [`write_subspace_with`]): slot `i` stores the trit `t` with bit `t` of
/// `allowed[i]` set that the model finds likeliest there (bit 0 draw, 1 win, 2
/// loss; a slot with one bit set stores that trit). `codes` are results as codes
/// (a draw, `Win(1)`, `Loss(0)`), allowed ones (the true results with the
/// don't-cares filled somehow): the model's prior is counted on them, and where
/// zstd codes them smaller than the model codes its choice, they are stored so.
pub fn write_wdl_only_chosen(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    allowed: &[u8],
) -> Result<Header, FormatError> {
    let opts = WriteOptions {
        wdl_only: true,
        wdl_dont_cares: true,
        wdl_encoding: Encoding::Model,
        compact_tables: true,
        ..WriteOptions::default()
    };
    if allowed.len() != codes.len() || allowed.iter().any(|&a| a == 0 || a > 7) {
        return Err(input_error(path, "bad allowed results".into()));
    }
    let file = encode_subspace(path, meta, codes, &opts, Some(allowed), false)?.file;
    write_encoded(path, &file)
}

/// Writes a full file with value don't-cares, loss-only depths and a model-coded
/// WDL section (`opts` must ask for all three) to `path`, atomically, as
/// [`write_subspace_with`], where slot `i` stores the result with bit `t` of
/// `allowed[i]` set (bit 0 draw, 1 win, 2 loss) that the model finds likeliest
/// there. The stored values are `codes`, the filled values, but for the result
/// the model chooses. A slot's loss bit must be set exactly where `codes` holds a
/// loss (its only choice then): the lost slots, and so the depth section, are
/// those of `codes`.
pub fn write_subspace_choosing(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    opts: &WriteOptions,
    allowed: &[u8],
) -> Result<Header, FormatError> {
    check_choosing(path, codes, opts, allowed)?;
    let file = encode_subspace(path, meta, codes, opts, Some(allowed), false)?.file;
    write_encoded(path, &file)
}

/// [`write_subspace_choosing`], each model-coded block decoded again in memory as
/// it is coded and compared with what it codes (every slot; see
/// `model::encode_block_checked`), and the file read back from `path`
/// and compared byte for byte with what was written. Returns the header and, if
/// the WDL section is model-coded, the result every slot stores (0 draw, 1 win, 2
/// loss) that the file decodes to, the depth section checked too (a model-coded
/// one decoded again in memory, a zstd-compressed one decompressed again, each
/// block compared with what it codes); `None` if the WDL section is
/// zstd-compressed (not decoded here: the caller reads the file).
pub fn write_subspace_choosing_checked(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    opts: &WriteOptions,
    allowed: &[u8],
) -> Result<(Header, Option<Vec<u8>>), FormatError> {
    check_choosing(path, codes, opts, allowed)?;
    let encoded = encode_subspace(path, meta, codes, opts, Some(allowed), true)?;
    let header = write_encoded(path, &encoded.file)?;
    if fs::read(path).map_err(|e| FormatError::io(path, e))? != encoded.file {
        return Err(FormatError::Corrupt {
            path: path.to_path_buf(),
            what: "the file read back differs from the bytes written".into(),
        });
    }
    Ok((header, encoded.stored))
}

/// Whether `opts` and `allowed` are what [`write_subspace_choosing`] takes.
fn check_choosing(
    path: &Path,
    codes: &[u16],
    opts: &WriteOptions,
    allowed: &[u8],
) -> Result<(), FormatError> {
    if opts.wdl_only
        || !opts.value_dont_cares
        || !opts.loss_depths
        || opts.wdl_encoding != Encoding::Model
    {
        return Err(input_error(path, "bad write options".into()));
    }
    let bad = |(&a, &c): (&u8, &u16)| {
        let t = trit(c);
        let loss = 1 << 2;
        if t == 2 {
            a != loss
        } else {
            a > 7 || a & loss != 0 || a >> t & 1 == 0
        }
    };
    if allowed.len() != codes.len() || allowed.iter().zip(codes).any(bad) {
        return Err(input_error(path, "bad allowed results".into()));
    }
    Ok(())
}

/// What [`encode_subspace`] makes.
struct Encoded {
    /// The complete file contents.
    file: Vec<u8>,
    /// With `checked`, if the WDL section is model-coded: the result each slot
    /// stores, as its blocks decode in memory (the depth section's blocks checked
    /// in memory too).
    stored: Option<Vec<u8>>,
}

/// The complete file contents; with `allowed`, the WDL section model-coded with the
/// model's choice among the allowed results ([`write_wdl_only_chosen`]); with
/// `checked`, each model-coded block decoded in memory and compared with what it
/// codes (an error if any slot differs).
fn encode_subspace(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    opts: &WriteOptions,
    allowed: Option<&[u8]>,
    checked: bool,
) -> Result<Encoded, FormatError> {
    if meta.variant.len() > VARIANT_LEN {
        return Err(input_error(
            path,
            format!("variant name longer than {VARIANT_LEN} bytes"),
        ));
    }
    if !opts.wdl_encoding.is_wdl()
        || opts.wdl_block == 0
        || opts.depth_block == 0
        || (opts.wdl_dont_cares && !opts.wdl_only)
        || (opts.value_dont_cares && opts.wdl_only)
        || (opts.exact_results && !opts.value_dont_cares)
        || (opts.depth_model && (!opts.loss_depths || opts.wdl_encoding != Encoding::Model))
    {
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
    // A WDL-only file's distances say nothing (its codes carry results only), and
    // a full file's filled values are no longer than the longest true ones (they
    // are worse than the truth, copied from other slots or `Loss(0)`).
    let longest = (meta.counts.longest_win, meta.counts.longest_loss);
    let consistent = if opts.wdl_dont_cares || opts.wdl_only {
        true
    } else if opts.value_dont_cares {
        win <= longest.0 && loss <= longest.1
    } else {
        (win, loss) == longest
    };
    if !consistent {
        return Err(input_error(
            path,
            format!(
                "the codes have longest win {win} and longest loss {loss}, the metadata says {} and {}",
                meta.counts.longest_win, meta.counts.longest_loss
            ),
        ));
    }
    let max_distance = meta.counts.longest_win.max(meta.counts.longest_loss);
    let depth_encoding = depth_encoding_for(max_distance);

    let packing = match opts.wdl_encoding {
        Encoding::Model => Encoding::Trits5,
        e => e,
    };
    let pack = |c: &[u16], out: &mut Vec<u8>| pack_wdl(c, packing, out);
    let mut stored = None;
    // The WDL model's position contexts, kept for the depth model's walks.
    let mut positions = None;
    let (wdl_blocks, wdl_block) = if opts.wdl_encoding == Encoding::Model {
        // The model where it is no larger than zstd's blocks (with a choice,
        // they hold `codes`' fill, which is allowed too); else those behind an
        // empty prior. zstd's blocks are compressed only until they reach the
        // model's size.
        let (g, model, per, chosen, p) = model_blocks(path, meta, codes, allowed, checked)?;
        if opts.depth_model && !opts.wdl_only {
            positions = Some(p);
        }
        let limit = section_bytes(&model).saturating_sub(BLOCK_ENTRY_LEN);
        let guess = guess_sizes(
            &g,
            &model,
            opts.wdl_block,
            blocks_of(opts.wdl_block) as usize,
        );
        match compress_blocks_below(codes, opts.wdl_block, opts.wdl_level, pack, limit, &guess)
            .map_err(|e| FormatError::io(path, e))?
        {
            None => {
                stored = chosen;
                (model, per)
            }
            Some(blocks) => (
                std::iter::once(Vec::new()).chain(blocks).collect(),
                opts.wdl_block,
            ),
        }
    } else {
        let blocks = compress_blocks(codes, opts.wdl_block, opts.wdl_level, pack)
            .map_err(|e| FormatError::io(path, e))?;
        (blocks, opts.wdl_block)
    };
    let entries = match (opts.decisive_depths, opts.loss_depths) {
        (_, true) => DepthEntries::Losses,
        (true, false) => DepthEntries::Decisive,
        (false, false) => DepthEntries::Every,
    };
    let depth_blocks = if opts.wdl_only {
        None
    } else {
        // With `checked` and the WDL section's trits at hand, zstd's depth blocks
        // are checked too: the caller then has every stored code without
        // reading the file.
        let check_zstd = stored.is_some();
        let section = (entries, depth_encoding);
        Some(depth_section(
            path,
            meta,
            codes,
            opts,
            section,
            (checked, check_zstd),
            positions,
        )?)
    };

    let mut file = vec![0u8; HEADER_LEN];
    let compact = opts.compact_tables
        && fits_compact(&wdl_blocks)
        && depth_blocks
            .as_ref()
            .is_none_or(|(_, _, b)| fits_compact(b));
    let wdl = append_section(
        &mut file,
        KIND_WDL,
        opts.wdl_encoding,
        wdl_block,
        &wdl_blocks,
        compact,
    );
    let depth = depth_blocks.map(|(encoding, per, blocks)| {
        append_section(&mut file, KIND_DEPTH, encoding, per, &blocks, compact)
    });

    let h = &mut file[..HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    // A file version 1 describes is written as version 1 (see `VERSION`).
    let decisive = depth.is_some() && entries != DepthEntries::Every;
    let version = if depth.is_some_and(|d| d.encoding == Encoding::DepthRefined) {
        VERSION
    } else if opts.wdl_encoding == Encoding::Model {
        VERSION_WDL_MODEL
    } else if depth.is_some() && !opts.value_dont_cares && !decisive {
        VERSION_FULL
    } else {
        VERSION_FLAGS
    };
    LE::write_u32(&mut h[8..], version);
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
    LE::write_u16(&mut h[102..], 1 + depth.is_some() as u16);
    write_section_entry(&mut h[104..152], &wdl);
    // A WDL-only file leaves the depth entry zero.
    if let Some(depth) = &depth {
        write_section_entry(&mut h[152..200], depth);
    }
    h[200] = meta.hands[0];
    h[201] = meta.hands[1];
    let dont_cares = if opts.value_dont_cares && opts.exact_results {
        FLAG_VALUE_DONT_CARES | FLAG_EXACT_RESULTS
    } else if opts.value_dont_cares {
        FLAG_WDL_DONT_CARES | FLAG_VALUE_DONT_CARES
    } else if opts.wdl_dont_cares {
        FLAG_WDL_DONT_CARES
    } else {
        0
    };
    let free = match entries {
        _ if depth.is_none() => 0,
        DepthEntries::Every => 0,
        DepthEntries::Decisive => FLAG_DECISIVE_DEPTHS,
        DepthEntries::Losses => FLAG_DECISIVE_DEPTHS | FLAG_LOSS_DEPTHS,
    };
    let tables = if compact { FLAG_COMPACT_TABLES } else { 0 };
    LE::write_u32(&mut h[202..], dont_cares | free | tables);
    let checksum = xxh64(&h[..HEADER_CHECKED]);
    LE::write_u64(&mut h[HEADER_CHECKED..], checksum);
    Ok(Encoded { file, stored })
}

/// Writes the WDL-only copy of `src` to `path` (atomically, as [`write_subspace_with`]):
/// the same header data and the same WDL blocks, byte for byte (every checksum of
/// the section checked first), without the depth section, as format version 2.
/// The WDL section of a file with value don't-cares follows the WDL rule, so the
/// copy keeps [`FLAG_WDL_DONT_CARES`]; that of a file with [`FLAG_EXACT_RESULTS`]
/// holds every true result, and the copy has no flag. The copy is version 5 if the
/// WDL section is model-coded, else version 2, and its block table is compact
/// where the section is model-coded (as every model-coded file this program writes).
/// Returns the new file's header.
pub fn write_wdl_only_copy(src: &SubspaceFile, path: &Path) -> Result<Header, FormatError> {
    let h = src.header();
    let wdl = src
        .blocks_checked(false)?
        .expect("every file has a WDL section");
    let model = h.wdl.encoding == Encoding::Model;
    // The lowest version that describes the copy: versions 6 and 7 name the depth
    // model.
    let version = if model {
        VERSION_WDL_MODEL
    } else {
        VERSION_FLAGS
    };
    let rewrite = Rewrite {
        version,
        flags: h.flags & FLAG_WDL_DONT_CARES,
        compact: model,
    };
    write_rewritten(src, path, &wdl, None, rewrite)
}

/// Writes `src` again to `path` (atomically, as [`write_subspace_with`]) with
/// the same header data and the same blocks, byte for byte (every checksum
/// checked first), in block tables that are compact
/// ([`super::FLAG_COMPACT_TABLES`]) if `compact` and the blocks fit, else of
/// 24-byte entries: the file a writer that made these blocks writes with that
/// table. A version 1 file (which has no flags) is copied as it is. Returns the
/// new file's header.
pub fn write_retabled(
    src: &SubspaceFile,
    path: &Path,
    compact: bool,
) -> Result<Header, FormatError> {
    let h = src.header();
    let wdl = src
        .blocks_checked(false)?
        .expect("every file has a WDL section");
    let depth = src.blocks_checked(true)?;
    let depth = h
        .depth
        .zip(depth.as_deref())
        .map(|(d, b)| (d.encoding, d.block_slots, b));
    let rewrite = Rewrite {
        version: h.version,
        flags: h.flags & !FLAG_COMPACT_TABLES,
        // A version 1 file has no flags to say so.
        compact: compact && h.version >= VERSION_FLAGS,
    };
    write_rewritten(src, path, &wdl, depth, rewrite)
}

/// What [`write_rewritten`] writes into the header of a file it writes again.
struct Rewrite {
    version: u32,
    /// The flags but [`FLAG_COMPACT_TABLES`] (ignored in version 1).
    flags: u32,
    /// Compact block tables, where the blocks fit ([`fits_compact`]).
    compact: bool,
}

/// Writes to `path` (atomically, as [`write_subspace_with`]) the file of `src`'s
/// header data with the WDL blocks `wdl` (in `src`'s WDL encoding and block size)
/// and the depth section `depth` (encoding, slots per block, blocks; none: a
/// WDL-only file), as `rewrite` says. Returns the new file's header.
fn write_rewritten(
    src: &SubspaceFile,
    path: &Path,
    wdl: &[Vec<u8>],
    depth: Option<(Encoding, u32, &[Vec<u8>])>,
    rewrite: Rewrite,
) -> Result<Header, FormatError> {
    let h = src.header();
    let compact =
        rewrite.compact && fits_compact(wdl) && depth.is_none_or(|(_, _, b)| fits_compact(b));
    let mut file = src.header_bytes()[..HEADER_LEN].to_vec();
    let (encoding, per) = (h.wdl.encoding, h.wdl.block_slots);
    let wdl = append_section(&mut file, KIND_WDL, encoding, per, wdl, compact);
    let depth = depth.map(|(encoding, per, blocks)| {
        append_section(&mut file, KIND_DEPTH, encoding, per, blocks, compact)
    });
    let head = &mut file[..HEADER_LEN];
    LE::write_u32(&mut head[8..], rewrite.version);
    LE::write_u16(&mut head[102..], 1 + depth.is_some() as u16);
    write_section_entry(&mut head[104..152], &wdl);
    match &depth {
        Some(depth) => write_section_entry(&mut head[152..200], depth),
        None => head[152..200].fill(0),
    }
    if rewrite.version >= VERSION_FLAGS {
        let tables = if compact { FLAG_COMPACT_TABLES } else { 0 };
        LE::write_u32(&mut head[202..], rewrite.flags | tables);
    }
    let checksum = xxh64(&head[..HEADER_CHECKED]);
    LE::write_u64(&mut head[HEADER_CHECKED..], checksum);
    write_encoded(path, &file)
}

/// The depth section of `codes` (`entries` and `depth_encoding` as the writer
/// chose them): its encoding, slots per block and blocks. With `opts.depth_model`
/// and half distances that fit a byte, the depth model's blocks where they are
/// no larger than zstd's, else zstd's behind an empty prior; otherwise zstd's
/// blocks. `checked`: the model's blocks are decoded again, and with
/// `check_zstd` zstd's are decompressed again, and compared with what they code.
/// `positions`: each slot's position context, if known (the WDL model's).
fn depth_section(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    opts: &WriteOptions,
    (entries, depth_encoding): (DepthEntries, Encoding),
    (checked, check_zstd): (bool, bool),
    positions: Option<Vec<u16>>,
) -> Result<(Encoding, u32, Vec<Vec<u8>>), FormatError> {
    let pack = |c: &[u16], out: &mut Vec<u8>| pack_depth(c, depth_encoding, entries, out);
    let check = |blocks: &[Vec<u8>]| -> Result<(), FormatError> {
        if check_zstd {
            check_compressed(codes, opts.depth_block, blocks, pack)
                .map_err(|b| coder_fault(path, &format!("zstd depth block {b}")))?;
        }
        Ok(())
    };
    if !(opts.depth_model && depth_encoding == Encoding::HalfU8) {
        let blocks = compress_blocks(codes, opts.depth_block, opts.depth_level, pack)
            .map_err(|e| FormatError::io(path, e))?;
        check(&blocks)?;
        return Ok((depth_encoding, opts.depth_block, blocks));
    }
    // The model where it is no larger than zstd's blocks behind an empty prior;
    // else those. zstd's blocks are compressed only until they reach the model's
    // size.
    let (g, model, per) = depth_model_blocks(path, meta, codes, checked, positions)?;
    let limit = section_bytes(&model).saturating_sub(BLOCK_ENTRY_LEN);
    let n = (codes.len() as u64).div_ceil(opts.depth_block as u64) as usize;
    let guess = guess_sizes(&g, &model, opts.depth_block, n);
    let level = opts.depth_level;
    Ok(
        match compress_blocks_below(codes, opts.depth_block, level, pack, limit, &guess)
            .map_err(|e| FormatError::io(path, e))?
        {
            None => (Encoding::DepthRefined, per, model),
            Some(blocks) => {
                check(&blocks)?;
                let blocks = std::iter::once(Vec::new()).chain(blocks).collect();
                (Encoding::DepthRefined, opts.depth_block, blocks)
            }
        },
    )
}

/// Writes `src`, a full file with loss-only depths and a model-coded WDL
/// section, again to `path` (atomically, as [`write_subspace_with`]) with the same
/// header data and the same WDL blocks, byte for byte (every checksum checked
/// first), and its depth section coded anew from its stored codes `stored` (as
/// [`SubspaceFile::read_all_partial`] gives them) as `opts` asks
/// (the refined depth model where `opts.depth_model`), each block decoded again
/// and compared; block tables compact as `opts` asks. Converts a version 6 file
/// into the version 7 file a writer of these values writes. Returns the new
/// file's header.
pub fn write_depth_recoded(
    src: &SubspaceFile,
    stored: &[u16],
    path: &Path,
    opts: &WriteOptions,
) -> Result<Header, FormatError> {
    let h = src.header();
    if !h.loss_depths() || h.wdl.encoding != Encoding::Model || !opts.loss_depths {
        return Err(input_error(
            path,
            "recoding the depth section alone needs loss-only depths and a model-coded WDL section"
                .into(),
        ));
    }
    if stored.len() as u64 != h.size {
        return Err(input_error(
            path,
            format!("{} codes for {} slots", stored.len(), h.size),
        ));
    }
    // A won slot has no depth entry: any win stands for it.
    let codes: Vec<u16> = stored
        .par_iter()
        .map(|&c| if c == WIN_BY_LOOKAHEAD { 2 } else { c })
        .collect();
    let wdl_blocks = src
        .blocks_checked(false)?
        .expect("every file has a WDL section");
    let section = (DepthEntries::Losses, depth_encoding_for(h.max_distance));
    let (encoding, per, depth_blocks) =
        depth_section(path, &h.meta, &codes, opts, section, (true, true), None)?;
    let version = match encoding {
        Encoding::DepthRefined => VERSION,
        _ => VERSION_WDL_MODEL,
    };
    let rewrite = Rewrite {
        version,
        flags: h.flags & !FLAG_COMPACT_TABLES,
        compact: opts.compact_tables,
    };
    let depth = Some((encoding, per, depth_blocks.as_slice()));
    write_rewritten(src, path, &wdl_blocks, depth, rewrite)
}

/// The geometry of the model coders for `meta`'s sector, whose rules this program
/// must know, checked against the number of `codes`.
fn model_geometry(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
) -> Result<Geometry, FormatError> {
    let rules = Rules::by_name(&meta.variant)
        .filter(|r| r.fingerprint() == meta.fingerprint)
        .ok_or_else(|| {
            input_error(
                path,
                format!(
                    "model coding needs rules this program knows, not '{}'",
                    meta.variant
                ),
            )
        })?;
    let g = Geometry::new(rules, meta.k, meta.l, meta.hands);
    if g.size() != codes.len() as u64 || g.block_slots() > u32::MAX as u64 {
        return Err(input_error(
            path,
            format!(
                "{} codes for a sector of {} slots under rules '{}'",
                codes.len(),
                g.size(),
                meta.variant
            ),
        ));
    }
    Ok(g)
}

/// The geometry of a model-coded section, its blocks, its slots per block,
/// (from a checked coding of the WDL section) the trit each slot stores, and
/// each slot's position context (see [`count_prior`]).
type ModelBlocks = (Geometry, Vec<Vec<u8>>, u32, Option<Vec<u8>>, Vec<u16>);

/// The geometry of `meta`'s sector; the blocks of a model-coded WDL section of
/// `codes` ([`Encoding::Model`]): the stored prior, then each block of whole
/// classes coded in parallel (with `allowed`, the model's choice among each
/// slot's allowed results); the section's slots per block; with `checked` and
/// `allowed`, the trit each slot stores, every block decoded in memory and
/// compared with it; and each slot's position context.
fn model_blocks(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    allowed: Option<&[u8]>,
    checked: bool,
) -> Result<ModelBlocks, FormatError> {
    let g = model_geometry(path, meta, codes)?;
    let (prior, positions) = count_prior(&g, |s| trit(codes[s as usize]));
    let model = Model::from_prior(&prior);
    let stored_prior = store_prior(&prior).map_err(|e| FormatError::io(path, e))?;
    if let (true, Some(allowed)) = (checked, allowed) {
        // The reader's model comes from the stored prior.
        if super::coder::load_prior_of(&stored_prior, super::model::NODES)
            .ok()
            .as_deref()
            != Some(prior.as_slice())
        {
            return Err(coder_fault(path, "the stored prior"));
        }
        let coded: Vec<Option<(Vec<u8>, Vec<u8>)>> = (0..g.blocks())
            .into_par_iter()
            .map_init(
                || Coding::new(&g, &model),
                |coding, b| {
                    let r = g.block_range(b);
                    let r = r.start as usize..r.end as usize;
                    coding.encode_checked(&g, b, &allowed[r.clone()], &positions[r])
                },
            )
            .collect();
        let mut blocks = Vec::with_capacity(coded.len() + 1);
        blocks.push(stored_prior);
        let mut stored = Vec::with_capacity(codes.len());
        for (b, c) in coded.into_iter().enumerate() {
            let (bytes, trits) = c.ok_or_else(|| coder_fault(path, &format!("WDL block {b}")))?;
            blocks.push(bytes);
            stored.extend_from_slice(&trits);
        }
        return Ok((g, blocks, g.block_slots() as u32, Some(stored), positions));
    }
    let mut blocks = vec![stored_prior];
    blocks.par_extend((0..g.blocks()).into_par_iter().map_init(
        || Coding::new(&g, &model),
        |coding, b| {
            let r = g.block_range(b);
            let r = r.start as usize..r.end as usize;
            let p = &positions[r.clone()];
            match allowed {
                Some(a) => coding.encode_choosing(&g, b, &a[r], p).0,
                None => {
                    let sure: Vec<u8> = codes[r].iter().map(|&c| 1 << trit(c)).collect();
                    coding.encode_choosing(&g, b, &sure, p).0
                }
            }
        },
    ));
    Ok((g, blocks, g.block_slots() as u32, None, positions))
}

/// The error of a model-coded block (or prior) that does not decode to what
/// was coded: a fault of the coder, never of the input.
fn coder_fault(path: &Path, what: &str) -> FormatError {
    input_error(path, format!("{what} does not decode to what was coded"))
}

/// The geometry of `meta`'s sector, the blocks of a model-coded depth section
/// of `codes` with loss-only entries ([`Encoding::DepthModel`]): the stored
/// prior, then each block of whole classes coded in parallel (with `checked`,
/// each decoded in memory and compared with what it codes); and the section's
/// slots per block. The half distances must fit the model
/// ([`depth_model::MAX_HALF`]). `positions`: each slot's position context, from
/// the WDL model's prior ([`count_prior`]), or computed here
/// ([`super::model::positions`]).
fn depth_model_blocks(
    path: &Path,
    meta: &SubspaceMeta,
    codes: &[u16],
    checked: bool,
    positions: Option<Vec<u16>>,
) -> Result<(Geometry, Vec<Vec<u8>>, u32), FormatError> {
    let g = model_geometry(path, meta, codes)?;
    let lost = |s: u64| trit(codes[s as usize]);
    let positions = match positions {
        Some(p) => p,
        None => super::model::positions(&g),
    };
    let prior = depth_model::count_prior(&g, lost, |s| half(codes[s as usize]), Some(&positions));
    let model = Model::from_prior(&prior);
    let stored_prior = store_prior(&prior).map_err(|e| FormatError::io(path, e))?;
    if checked
        && super::coder::load_prior_of(&stored_prior, depth_model::NODES)
            .ok()
            .as_deref()
            != Some(prior.as_slice())
    {
        return Err(coder_fault(path, "the stored depth prior"));
    }
    let coded: Vec<Option<Vec<u8>>> = (0..g.blocks())
        .into_par_iter()
        .map_init(
            || DepthCoding::new(&g, &model, true),
            |coding, b| {
                let r = g.block_range(b);
                let r = r.start as usize..r.end as usize;
                let (block, p) = (&codes[r.clone()], &positions[r]);
                let trits: Vec<u8> = block.iter().map(|&c| trit(c)).collect();
                let halves: Vec<u8> = block
                    .iter()
                    .filter(|&&c| trit(c) == 2)
                    .map(|&c| half(c) as u8)
                    .collect();
                if checked {
                    coding.encode_checked(&g, b, &trits, &halves, p)
                } else {
                    Some(coding.encode(&g, b, &trits, &halves, p))
                }
            },
        )
        .collect();
    let mut blocks = Vec::with_capacity(coded.len() + 1);
    blocks.push(stored_prior);
    for (b, c) in coded.into_iter().enumerate() {
        blocks.push(c.ok_or_else(|| coder_fault(path, &format!("depth block {b}")))?);
    }
    Ok((g, blocks, g.block_slots() as u32))
}

/// The bytes of a section's blocks with a block entry each. (The choice between
/// a model's blocks and zstd's counts 24-byte entries in every file, compact
/// tables or not, so that the choice, and the blocks, are the same either way.)
fn section_bytes(blocks: &[Vec<u8>]) -> usize {
    blocks.iter().map(|x| x.len() + BLOCK_ENTRY_LEN).sum()
}

/// One block in this many is compressed first, to see whether zstd's blocks
/// can come near the model's at all ([`compress_blocks_below`]).
const SAMPLE_EVERY: usize = 16;

/// [`compress_blocks`] if their bytes, with a block entry each, stay below
/// `limit`; `None` as soon as the blocks compressed so far reach it, or once a
/// sample shows they would exceed it by far.
///
/// With `guess`, a guess of each block's size from the model's blocks: first
/// one block in [`SAMPLE_EVERY`], spread over the section, is compressed; if
/// the sample's bytes, scaled by the guess of all blocks against the guess of
/// the sample's, exceed `limit` by a quarter, the answer is `None` (zstd's
/// blocks would be much larger; the model's files are mostly two to four times
/// smaller). Otherwise the blocks are compressed a batch at a time, in
/// parallel, likeliest largest first (the answer is the same in any order, but
/// a large block reaches the limit sooner).
fn compress_blocks_below(
    codes: &[u16],
    per_block: u32,
    level: i32,
    pack: impl Fn(&[u16], &mut Vec<u8>) + Sync,
    limit: usize,
    guess: &[usize],
) -> io::Result<Option<Vec<Vec<u8>>>> {
    let chunks: Vec<&[u16]> = codes.chunks(per_block as usize).collect();
    debug_assert_eq!(guess.len(), chunks.len());
    let compress = |which: &[usize]| -> io::Result<Vec<Vec<u8>>> {
        which
            .par_iter()
            .map_init(
                || (zstd::bulk::Compressor::new(level), Vec::new()),
                |(compressor, raw), &b| {
                    pack(chunks[b], raw);
                    match compressor {
                        Ok(c) => c.compress(raw),
                        Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                    }
                },
            )
            .collect()
    };
    let mut blocks = vec![Vec::new(); chunks.len()];
    let mut done = vec![false; chunks.len()];
    let mut bytes = 0;
    let sample: Vec<usize> = (0..chunks.len()).step_by(SAMPLE_EVERY).collect();
    let guess_of = |b: usize| guess.get(b).copied().unwrap_or(0);
    let sample_guess: usize = sample.iter().map(|&b| guess_of(b)).sum();
    if chunks.len() >= 2 * SAMPLE_EVERY && sample_guess > 0 {
        for (&b, block) in sample.iter().zip(compress(&sample)?) {
            bytes += block.len() + BLOCK_ENTRY_LEN;
            blocks[b] = block;
            done[b] = true;
        }
        let all_guess: usize = guess.iter().sum();
        let scaled = bytes as u128 * all_guess as u128 / sample_guess as u128;
        if bytes >= limit || 4 * scaled > 5 * limit as u128 {
            return Ok(None);
        }
    }
    let mut order: Vec<usize> = (0..chunks.len()).filter(|&b| !done[b]).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(guess_of(b)), b));
    for batch in order.chunks(rayon::current_num_threads().max(1)) {
        for (&b, block) in batch.iter().zip(compress(batch)?) {
            bytes += block.len() + BLOCK_ENTRY_LEN;
            blocks[b] = block;
        }
        if bytes >= limit {
            return Ok(None);
        }
    }
    Ok(Some(blocks))
}

/// A guess of the size of each of the `n` blocks of `per_block` slots of a
/// section from the blocks of a model-coded one (`model`, the prior first, then
/// the blocks of `g`): the model's bytes over the block's slots.
fn guess_sizes(g: &Geometry, model: &[Vec<u8>], per_block: u32, n: usize) -> Vec<usize> {
    let per = per_block as u64;
    let mut guess = vec![0usize; n];
    for (b, bytes) in model.iter().skip(1).enumerate() {
        let r = g.block_range(b);
        let len = (r.end - r.start).max(1);
        let mut at = r.start;
        while at < r.end {
            let z = (at / per) as usize;
            let end = ((z as u64 + 1) * per).min(r.end);
            if let Some(x) = guess.get_mut(z) {
                *x += (bytes.len() as u64 * (end - at) / len) as usize;
            }
            at = end;
        }
    }
    guess
}

/// Whether `blocks`, the blocks [`compress_blocks`] made of `codes` with
/// `per_block` and `pack`, decompress to what `pack` makes of their slots, as a
/// reader decompresses them: `Err(b)` for a block `b` that does not.
fn check_compressed(
    codes: &[u16],
    per_block: u32,
    blocks: &[Vec<u8>],
    pack: impl Fn(&[u16], &mut Vec<u8>) + Sync,
) -> Result<(), usize> {
    if codes.chunks(per_block as usize).len() != blocks.len() {
        return Err(blocks.len().min(codes.len().div_ceil(per_block as usize)));
    }
    codes
        .par_chunks(per_block as usize)
        .zip(blocks)
        .enumerate()
        .try_for_each_init(Vec::new, |raw, (b, (chunk, block))| {
            pack(chunk, raw);
            match super::read::decompress(block, raw.len()) {
                Ok(back) if back == *raw => Ok(()),
                _ => Err(b),
            }
        })
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

/// Whether `blocks` fit a compact block table: their bytes at most 4 GiB.
fn fits_compact(blocks: &[Vec<u8>]) -> bool {
    blocks.iter().map(|b| b.len() as u64).sum::<u64>() <= u32::MAX as u64
}

/// Appends a section (block table, then blocks) to `file` and returns its entry;
/// the table `compact` ([`super::FLAG_COMPACT_TABLES`]: the blocks must fit, see
/// [`fits_compact`]) or not.
fn append_section(
    file: &mut Vec<u8>,
    kind: u32,
    encoding: Encoding,
    block_slots: u32,
    blocks: &[Vec<u8>],
    compact: bool,
) -> Section {
    let offset = file.len() as u64;
    let entry_len = if compact {
        COMPACT_ENTRY_LEN
    } else {
        BLOCK_ENTRY_LEN
    };
    let table_len = blocks.len() * entry_len;
    let data_start = offset + table_len as u64;
    let mut table = vec![0u8; table_len];
    let mut at = data_start;
    for (block, e) in blocks.iter().zip(table.chunks_exact_mut(entry_len)) {
        let check = block_checksum(block, compact);
        if compact {
            // Where the block ends, from the end of the table.
            LE::write_u32(&mut e[0..], (at + block.len() as u64 - data_start) as u32);
            LE::write_u32(&mut e[4..], check as u32);
        } else {
            LE::write_u64(&mut e[0..], at);
            LE::write_u32(&mut e[8..], block.len() as u32);
            LE::write_u32(&mut e[12..], 0); // reserved
            LE::write_u64(&mut e[16..], check);
        }
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
        compact,
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

/// Renames `from` to `to` (replacing it, atomically on one file system) and syncs
/// the directory of `to`, so that the rename survives a crash.
pub fn replace_file(from: &Path, to: &Path) -> Result<(), FormatError> {
    fs::rename(from, to).map_err(|e| FormatError::io(to, e))?;
    sync_dir(to)
}

/// Syncs the directory that holds `path` (where directories can be opened).
pub fn sync_dir(path: &Path) -> Result<(), FormatError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Directories cannot be opened everywhere (Windows); there the rename is as
    // durable as the platform makes it.
    if let Ok(d) = File::open(dir) {
        d.sync_all().map_err(|e| FormatError::io(dir, e))?;
    }
    Ok(())
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
        replace_file(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::SplitMix;

    #[test]
    fn compressed_depth_blocks_are_checked_against_what_they_pack() {
        // Draws, wins (even codes) and losses (odd), loss-only entries.
        let mut rng = SplitMix(5);
        let codes: Vec<u16> = (0..10_000)
            .map(|_| match rng.below(3) {
                0 => 0,
                1 => 2 + 2 * rng.below(20) as u16,
                _ => 1 + 2 * rng.below(20) as u16,
            })
            .collect();
        let pack = |c: &[u16], out: &mut Vec<u8>| {
            pack_depth(c, Encoding::HalfU8, DepthEntries::Losses, out)
        };
        let per = 1000;
        let mut blocks = compress_blocks(&codes, per, 9, pack).unwrap();
        assert_eq!(check_compressed(&codes, per, &blocks, pack), Ok(()));
        // Another block's bytes in block 3: it decompresses, to other entries.
        blocks[3] = blocks[4].clone();
        assert_eq!(check_compressed(&codes, per, &blocks, pack), Err(3));
        // A damaged block, and a block missing.
        blocks[3][0] ^= 0xff;
        assert_eq!(check_compressed(&codes, per, &blocks, pack), Err(3));
        blocks.pop();
        assert!(check_compressed(&codes, per, &blocks, pack).is_err());
    }

    #[test]
    fn zstd_blocks_are_given_up_below_the_limit_or_by_the_sample() {
        // Random trits: zstd's blocks are about the packed size, 200 bytes each.
        let mut rng = SplitMix(9);
        let codes: Vec<u16> = (0..64_000).map(|_| rng.below(3) as u16 * 2).collect();
        let pack = |c: &[u16], out: &mut Vec<u8>| pack_wdl(c, Encoding::Trits5, out);
        let per = 1000;
        let all = compress_blocks(&codes, per, 3, pack).unwrap();
        let total = all.iter().map(|b| b.len() + BLOCK_ENTRY_LEN).sum::<usize>();
        let even = vec![100; all.len()];
        // Above the total: every block, as compress_blocks makes them.
        let below = |limit, guess: &[usize]| {
            compress_blocks_below(&codes, per, 3, pack, limit, guess).unwrap()
        };
        assert_eq!(below(total + 1, &even), Some(all.clone()));
        // At the total, or a little below (the sample's estimate is near it,
        // within a quarter): none.
        assert_eq!(below(total, &even), None);
        assert_eq!(below(total * 9 / 10, &even), None);
        // A guess that makes the sample look small (its blocks guessed four
        // times the others) keeps the sample from deciding alone: the answer is
        // still exact.
        let skewed: Vec<usize> = (0..all.len())
            .map(|b| if b % SAMPLE_EVERY == 0 { 400 } else { 100 })
            .collect();
        assert_eq!(below(total + 1, &skewed), Some(all.clone()));
        // A guess that makes the sample look large (its blocks guessed a
        // quarter of the others) makes the sample decide alone, here wrongly:
        // zstd's blocks given up though they would have fit (the file keeps the
        // model's blocks, larger here, never wrong).
        let misled: Vec<usize> = (0..all.len())
            .map(|b| if b % SAMPLE_EVERY == 0 { 25 } else { 100 })
            .collect();
        assert_eq!(below(total + 1, &misled), None);
    }
}
