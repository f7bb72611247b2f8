//! Derived sectors: a WDL-only directory may leave a sector's file out and give its
//! results by one ply of search over its successors, whose sectors it stores.
//!
//! A position's result is the best result of its plies, so a sector needs no
//! file of its own where every ply leads into stored sectors: a moving-phase
//! subspace `k-l` (`k != l`) whose mirror `l-k` is stored (its plies without a
//! capture lead there) and whose captures lead into a stored subspace `(l-1)-k`,
//! and the placement sectors of one ply parity (every ply leads into the next
//! ply) whose last plies lead into stored subspaces. Syzygy stores its distance
//! tables for one side to move on the same reasoning. [`derive()`] picks, per
//! mirrored pair, the bigger side (else the smaller) where that holds, but not
//! first a side to move that flies (three stones: some fifty plies a position,
//! the slowest derived probes), smaller pairs first, then the placement parity
//! that saves more; a probe of a derived sector costs a probe of each ply, never
//! a search of two plies (measured on the whole game: a last placement ply
//! leading into derived subspaces probed at 0.2 M/s against 1.4 M/s one ply
//! earlier).
//!
//! A derived sector is marked by a small text file `NAME.derived` beside the
//! others (the files decide, as everywhere), naming the sector and the rules'
//! fingerprint ([`crate::table::dir::derived_marker`]);
//! [`crate::table::probe::Tablebase`] reads it at opening. The marker is
//! written (and synced) before the file is removed, so a crash between the two
//! leaves the file, which a probe prefers, and a rerun finishes the job.

use crate::table::dir::manifest::Manifest;
use crate::table::dir::{derived_marker, derived_marker_text, is_derived};
use crate::table::format::{SubspaceFile, write_atomic};
use crate::table::index::Index;
use crate::table::pack::PackError;
use crate::table::sector::Sector;
use std::path::Path;

/// A sector [`derive()`] left out, and the bytes its file took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Derived {
    /// The sector.
    pub sector: Sector,
    /// Bytes of the file removed (0 if it was removed before).
    pub bytes: u64,
}

/// Marks derived, and removes the files of, the sectors of the WDL-only directory
/// `dir` that one ply of search can give from the others (see the module's
/// documentation): per mirrored moving-phase pair with both files present, the
/// bigger side (else the smaller; never first a side to move that flies, whose
/// positions have many plies) if its plies lead only into stored sectors;
/// then, if every placement sector of the rules is present (stored or derived
/// already), the placement sectors of one ply parity whose plies lead only into
/// stored sectors, the parity that saves more bytes.
/// Idempotent: sectors derived already stay so, and a file left beside its marker
/// by a crash is removed. Full files are refused: a derived sector has no
/// distances.
pub fn derive(dir: &Path, idx: &Index) -> Result<Vec<Derived>, PackError> {
    let rules = idx.rules();
    let mut sizes = Vec::new();
    for (s, file) in crate::table::dir::existing_files(dir, idx) {
        let f: SubspaceFile = file?;
        if !f.wdl_only() {
            return Err(PackError::FullFileInOutput {
                path: f.path().to_path_buf(),
            });
        }
        sizes.push((s, f.header().file_bytes()));
    }
    let size = |s: Sector| sizes.iter().find(|x| x.0 == s).map(|x| x.1);
    let n = rules.stones;
    let moving = (3..=n).flat_map(|k| (3..=n).map(move |l| Sector::moving(k, l)));
    let every = moving.chain(Sector::placement_sectors(rules));
    let mut chosen: Vec<Sector> = every.filter(|&s| is_derived(dir, rules, s)).collect();
    // Whether every ply of `s` leads into a stored sector (or ends the game).
    let leads_into_stored = |s: Sector, chosen: &[Sector]| {
        let (quiet, capture) = s.children();
        [Some(quiet), capture]
            .into_iter()
            .flatten()
            .filter(|c| c.is_valid(rules))
            .all(|c| size(c).is_some() && !chosen.contains(&c))
    };
    // Mirrored pairs, smaller ones first (a capture leads into a smaller pair,
    // decided before): the bigger side, else the smaller, if it may be derived.
    let mut pairs: Vec<(u8, u8)> = (3..=n)
        .flat_map(|k| (k + 1..=n).map(move |l| (k, l)))
        .collect();
    pairs.sort_by_key(|&(k, l)| (k + l, k));
    for (k, l) in pairs {
        let (a, b) = (Sector::moving(k, l), Sector::moving(l, k));
        if size(a).is_none() || size(b).is_none() || chosen.contains(&a) || chosen.contains(&b) {
            continue;
        }
        // Not first a side to move that flies (some fifty plies a position),
        // then the bigger side.
        let mut sides = [a, b];
        sides.sort_by_key(|&s| (rules.flies(s.k as u32, 0), std::cmp::Reverse(size(s))));
        if let Some(s) = sides.into_iter().find(|&s| leads_into_stored(s, &chosen)) {
            chosen.push(s);
        }
    }
    // Placement: the sectors of one ply parity that may be derived, if the whole
    // phase is there; the parity that saves more.
    let placement = Sector::placement_sectors(rules);
    let present = |s: Sector| size(s).is_some() || chosen.contains(&s);
    if !placement.is_empty() && placement.iter().all(|&s| present(s)) {
        let parity = |s: &Sector| (s.hk + s.hl) as usize % 2;
        let may: Vec<Sector> = placement
            .iter()
            .copied()
            .filter(|&s| !chosen.contains(&s) && leads_into_stored(s, &chosen))
            .collect();
        let mut saved = [0u64; 2];
        for s in &may {
            saved[parity(s)] += size(*s).unwrap_or(0);
        }
        let already = placement.iter().find(|s| chosen.contains(s)).map(parity);
        let drop = already.unwrap_or((saved[1] > saved[0]) as usize);
        chosen.extend(may.into_iter().filter(|s| parity(s) == drop));
    }
    chosen.sort();
    chosen.dedup();
    let mut manifest = Manifest::load(dir)?;
    let mut out = Vec::new();
    for s in chosen {
        let marker = dir.join(derived_marker(s));
        if !is_derived(dir, rules, s) {
            write_atomic(&marker, derived_marker_text(rules, s).as_bytes())?;
        }
        let file = dir.join(s.file_name());
        let bytes = std::fs::metadata(&file).map_or(0, |m| m.len());
        if bytes > 0 {
            std::fs::remove_file(&file).map_err(|e| PackError::from(super::io_error(&file)(e)))?;
        }
        if let Some(m) = manifest.as_mut() {
            m.remove_sector(s);
        }
        out.push(Derived { sector: s, bytes });
    }
    if let Some(m) = manifest {
        m.save(dir)?;
    }
    Ok(out)
}
