//! The layout of a database directory: what each file is called and how a finished
//! file is opened. Every other module asks here.
//!
//! A directory holds one file per moving-phase subspace, `k-l.mdb`
//! ([`file_name`]), one per placement sector, `k-l-hk-hl.mdb`
//! ([`Sector::file_name`]: a sector's file is named after the sector), the manifest
//! [`MANIFEST`] (derived data, see [`crate::table::dir::manifest`]), the opening
//! search's saved values [`OPENING`] ([`crate::search::opening`]), the class counts
//! of the index [`classes::CLASSES`] (derived data, see [`crate::table::dir::classes`]) and, in a packed
//! WDL-only directory, a marker `k-l.derived` per sector left out because one ply of
//! search gives its results ([`derived_marker`], [`is_derived`]).

pub mod classes;
pub mod manifest;

use crate::rules::Rules;
use crate::table::format::{
    Encoding, Expect, FormatError, Header, SubspaceFile, WriteOptions, ZSTD_BLOCKS,
    depth_encoding_for, model_block_slots,
};
use crate::table::index::Index;
use crate::table::sector::Sector;
use std::path::Path;

/// The file name of the manifest inside a database directory.
pub const MANIFEST: &str = "manifest.json";

/// The file name of the opening search's saved values inside a database directory.
pub const OPENING: &str = "opening.bin";

/// The file name of the marker that says sector `s` is derived: its results are
/// the best of its plies, given by one ply of search over stored sectors, and it has
/// no file of its own (see [`crate::table::pack::derived`]).
pub fn derived_marker(s: Sector) -> String {
    format!("{s}.derived")
}

/// The contents of the marker of derived sector `s` under `rules`.
pub fn derived_marker_text(rules: &Rules, s: Sector) -> String {
    format!(
        "millbase derived sector {s}, rules {} {:016x}: its results are the best of its plies\n",
        rules.name,
        rules.fingerprint()
    )
}

/// Whether `dir` marks sector `s` derived under `rules` (a marker of other rules
/// or another sector, or an unreadable one, does not count).
pub fn is_derived(dir: &Path, rules: &Rules, s: Sector) -> bool {
    // Only a regular file is read: a FIFO in a marker's place must not block.
    crate::table::format::open_regular(&dir.join(derived_marker(s))).is_ok_and(|mut f| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut f, &mut text).is_ok()
            && text == derived_marker_text(rules, s)
    })
}

/// The file name of subspace `k-l` inside a database directory: `k-l.mdb` (the
/// [`Sector::file_name`] of the moving-phase sector).
pub fn file_name(k: u32, l: u32) -> String {
    Sector::moving(k as u8, l as u8).file_name()
}

/// Opens the finished file of subspace `k-l`, checking header and checksums.
pub fn open_checked(db: &Path, idx: &Index, k: u32, l: u32) -> Result<SubspaceFile, FormatError> {
    open_sector(db, idx, Sector::moving(k as u8, l as u8))
}

/// Opens the finished file of a sector (either phase), checking header and checksums.
pub fn open_sector(db: &Path, idx: &Index, s: Sector) -> Result<SubspaceFile, FormatError> {
    let file = open_finished_sector(db, idx, s)?;
    file.verify_checksums()?;
    Ok(file)
}

/// Opens the file of subspace `k-l` and checks that its header is the one this
/// program writes for that subspace (see [`foreign_header`]); block data and its
/// checksums are not read.
pub fn open_finished(db: &Path, idx: &Index, k: u32, l: u32) -> Result<SubspaceFile, FormatError> {
    open_finished_sector(db, idx, Sector::moving(k as u8, l as u8))
}

/// [`open_finished`] for a sector of either phase.
pub fn open_finished_sector(
    db: &Path,
    idx: &Index,
    s: Sector,
) -> Result<SubspaceFile, FormatError> {
    open_finished_at(&db.join(s.file_name()), idx, s)
}

/// [`open_finished_sector`] of the file at `path`, which holds sector `s`.
pub fn open_finished_at(path: &Path, idx: &Index, s: Sector) -> Result<SubspaceFile, FormatError> {
    let (k, l) = s.counts();
    let expect = Expect::sector(idx.rules().fingerprint(), s, idx.size(k, l));
    let file = SubspaceFile::open(path, &expect)?;
    if let Some(what) = foreign_header(idx, file.header(), s) {
        return Err(FormatError::Mismatch {
            path: file.path().to_path_buf(),
            what,
        });
    }
    Ok(file)
}

/// Why `h` is not the header this program writes for subspace `k-l` (rules, variant,
/// subspace, index size, section encodings and block sizes, counts), or `None` if it
/// is. A zstd-compressed section may be in the build's blocks or the serving
/// profile's ([`ZSTD_BLOCKS`]). Checksums that match prove only that the bytes are the ones written, not that
/// this program wrote them: a finished file must pass this too.
pub fn foreign_header(idx: &Index, h: &Header, s: Sector) -> Option<String> {
    let (k, l) = s.counts();
    let rules = idx.rules();
    let opts = WriteOptions::default();
    let size = idx.size(k, l);
    if h.meta.fingerprint != rules.fingerprint() || h.meta.variant != rules.name {
        return Some(format!(
            "built for rules '{}' ({:016x}), not this program's '{}' ({:016x})",
            h.meta.variant,
            h.meta.fingerprint,
            rules.name,
            rules.fingerprint()
        ));
    }
    if (h.meta.k, h.meta.l, h.meta.hands) != (k, l, [s.hk, s.hl]) {
        let found = Sector {
            k: h.meta.k as u8,
            l: h.meta.l as u8,
            hk: h.meta.hands[0],
            hl: h.meta.hands[1],
        };
        return Some(format!("holds {found}, expected {s}"));
    }
    if h.size != size {
        return Some(format!("has {} slots, the index has {size}", h.size));
    }
    // A model-coded section (WDL or depth) has blocks of whole classes, or zstd's
    // behind an empty prior where the model would not be smaller.
    let wdl_ok = match h.wdl.encoding {
        Encoding::Model => {
            h.wdl.block_slots == opts.wdl_block
                || h.wdl.block_slots as u64 == model_block_slots(rules, k, l, [s.hk, s.hl])
        }
        e => e == opts.wdl_encoding && ZSTD_BLOCKS.iter().any(|b| b.0 == h.wdl.block_slots),
    };
    if !wdl_ok {
        return Some(format!(
            "WDL section encoded {} in blocks of {} slots, this program writes {} in blocks of {}",
            h.wdl.encoding.name(),
            h.wdl.block_slots,
            opts.wdl_encoding.name(),
            opts.wdl_block
        ));
    }
    // A WDL-only file (`millbase pack --wdl-only`) has no depth section.
    let depth = depth_encoding_for(h.max_distance);
    let depth_ok = |d: &crate::table::format::Section| match d.encoding {
        Encoding::DepthModel | Encoding::DepthRefined => {
            depth == Encoding::HalfU8
                && (d.block_slots == opts.depth_block
                    || d.block_slots as u64 == model_block_slots(rules, k, l, [s.hk, s.hl]))
        }
        e => e == depth && ZSTD_BLOCKS.iter().any(|b| b.1 == d.block_slots),
    };
    if let Some(d) = &h.depth
        && !depth_ok(d)
    {
        return Some(format!(
            "depth section encoded {} in blocks of {} slots, this program writes {} in blocks of {}",
            d.encoding.name(),
            d.block_slots,
            depth.name(),
            opts.depth_block
        ));
    }
    let c = &h.meta.counts;
    if c.total().is_none_or(|n| n == 0 || n > size) {
        return Some(format!(
            "counts {} wins, {} losses, {} draws for {size} slots",
            c.wins, c.losses, c.draws
        ));
    }
    None
}

/// Every sector (moving-phase subspaces by stones, then placement sectors from the
/// last ply back) whose file exists in `db`, with the file opened by
/// [`open_finished_sector`] (or why it could not be).
pub fn existing_files(db: &Path, idx: &Index) -> Vec<(Sector, Result<SubspaceFile, FormatError>)> {
    let rules = idx.rules();
    let max = rules.stones;
    let mut moving: Vec<Sector> = (3..=max)
        .flat_map(|k| (3..=max).map(move |l| Sector::moving(k, l)))
        .collect();
    moving.sort_by_key(|s| (s.k + s.l, s.k, s.l));
    moving
        .into_iter()
        .chain(Sector::placement_sectors(rules))
        .filter(|s| std::fs::symlink_metadata(db.join(s.file_name())).is_ok())
        .map(|s| (s, open_finished_sector(db, idx, s)))
        .collect()
}

/// The rules the database files in `db` were written for, read from their headers
/// (each carries the rules' name and fingerprint): what a directory without a
/// readable manifest is probed under. Only regular files named like a sector
/// (`k-l.mdb`, `k-l-hk-hl.mdb`) whose header is intact and names rules this program
/// knows count; if they name several rule sets, the one most files name (the files
/// of the others are refused when read, naming their rules). `None` if no file
/// names rules this program knows.
pub fn rules_of_files(db: &Path) -> Option<&'static crate::Rules> {
    let mut found: Vec<(&'static crate::Rules, usize)> = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(db)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".mdb")) else {
            continue;
        };
        let path = db.join(&name);
        // Neither a FIFO nor a device is opened: only a regular file (through links).
        if Sector::parse(stem).is_none() || !path.is_file() {
            continue;
        }
        let Ok(h) = crate::table::format::read_header(&path) else {
            continue;
        };
        let Some(rules) = crate::Rules::by_name(&h.meta.variant)
            .filter(|r| r.fingerprint() == h.meta.fingerprint)
        else {
            continue;
        };
        match found
            .iter_mut()
            .find(|(r, _)| r.fingerprint() == rules.fingerprint())
        {
            Some((_, n)) => *n += 1,
            None => found.push((rules, 1)),
        }
    }
    // The most files; of equals, the first name in order.
    let most = found.iter().map(|&(_, n)| n).max()?;
    found.into_iter().find(|&(_, n)| n == most).map(|(r, _)| r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_derived_marker_counts_only_for_its_sector_and_rules() {
        let dir = crate::scratch::Scratch::new("marker");
        let (standard, four) = (Rules::standard(), Rules::by_name("standard-4").unwrap());
        let (s, other) = (Sector::moving(4, 3), Sector::moving(3, 4));
        assert_eq!(derived_marker(s), "4-3.derived");
        assert!(!is_derived(&dir, standard, s));
        std::fs::write(
            dir.join(derived_marker(s)),
            derived_marker_text(standard, s),
        )
        .unwrap();
        assert!(is_derived(&dir, standard, s));
        assert!(!is_derived(&dir, four, s));
        // A marker whose text names another sector does not count.
        std::fs::write(
            dir.join(derived_marker(other)),
            derived_marker_text(standard, s),
        )
        .unwrap();
        assert!(!is_derived(&dir, standard, other));
    }
}
