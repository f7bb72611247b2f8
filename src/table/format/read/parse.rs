//! Checking a file's header: magic, version, checksum, flags and section entries.

use crate::rules::value::Counts;
use crate::table::format::{
    Encoding, FLAG_COMPACT_TABLES, FLAG_DECISIVE_DEPTHS, FLAG_EXACT_RESULTS, FLAG_LOSS_DEPTHS,
    FLAG_VALUE_DONT_CARES, FLAG_WDL_DONT_CARES, FormatError, HEADER_CHECKED, HEADER_LEN, Header,
    KIND_DEPTH, KIND_WDL, KNOWN_FLAGS, MAGIC, RETIRED, SECTION_ENTRY_LEN, Section, SubspaceMeta,
    VARIANT_LEN, VERSION, VERSION_DEPTH_MODEL, VERSION_FULL, VERSION_WDL_MODEL, open_regular,
    xxh64,
};
use byteorder::{ByteOrder, LittleEndian as LE};
use std::io;
use std::path::Path;

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
        compact: false,
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
pub(crate) fn parse_header(
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
    // WDL rule because its values follow the value rule), or value don't-cares
    // that keep every result (exact results), with or without decisive-only
    // depths; a WDL-only file has no values to hold value don't-cares,
    // and no depths.
    // Loss-only depths are decisive-only depths of a kind.
    // Compact block tables go with any file.
    let allowed = if depth.is_some() {
        let dont_cares = flags & !(FLAG_DECISIVE_DEPTHS | FLAG_LOSS_DEPTHS | FLAG_COMPACT_TABLES);
        (dont_cares == 0
            || dont_cares == FLAG_WDL_DONT_CARES | FLAG_VALUE_DONT_CARES
            || dont_cares == FLAG_VALUE_DONT_CARES | FLAG_EXACT_RESULTS)
            && (flags & FLAG_LOSS_DEPTHS == 0 || flags & FLAG_DECISIVE_DEPTHS != 0)
    } else {
        flags
            & (FLAG_VALUE_DONT_CARES | FLAG_DECISIVE_DEPTHS | FLAG_LOSS_DEPTHS | FLAG_EXACT_RESULTS)
            == 0
    };
    if !allowed {
        return Err(corrupt(format!(
            "header flags {flags:#x} in a {} file",
            if depth.is_some() { "full" } else { "WDL-only" }
        )));
    }
    let compact = flags & FLAG_COMPACT_TABLES != 0;
    let depth = depth.map(|d| Section { compact, ..d });
    let wdl = Section {
        compact,
        ..parse_section(path, &h[104..152], KIND_WDL)?
    };
    if (wdl.encoding == Encoding::Model) != (version >= VERSION_WDL_MODEL) {
        return Err(corrupt(format!(
            "a version {version} file with a {} WDL section",
            wdl.encoding.name()
        )));
    }
    // Versions 6 and 7 are version 5 with a model-coded depth section (without and
    // with its refiner), which holds the lost slots' distances only.
    let depth_version = match depth.map(|d| d.encoding) {
        Some(Encoding::DepthModel) => Some(VERSION_DEPTH_MODEL),
        Some(Encoding::DepthRefined) => Some(VERSION),
        _ => None,
    };
    let consistent = match depth_version {
        Some(v) => version == v && flags & FLAG_LOSS_DEPTHS != 0,
        None => version < VERSION_DEPTH_MODEL,
    };
    if !consistent {
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
