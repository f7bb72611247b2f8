//! Reading a whole file: every code or every result, decompressed in parallel
//! without filling the cache, and every checksum checked.

use super::SubspaceFile;
use super::blocks::SectionReader;
use super::parse::parse_header;
use crate::table::format::pack::{combine, half_at, trit_at};
use crate::table::format::{DepthEntries, FormatError, WIN_BY_LOOKAHEAD, xxh64};
use rayon::prelude::*;

impl SubspaceFile {
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
    /// that in a file with loss-only depths ([`crate::table::format::FLAG_LOSS_DEPTHS`]) a won
    /// slot holds [`WIN_BY_LOOKAHEAD`], since its distance is not stored.
    pub fn read_all_partial(&self) -> Result<Vec<u16>, FormatError> {
        self.read_all_partial_given(self.read_all_wdl()?)
    }

    /// [`SubspaceFile::read_all_partial`] given the trits of the WDL section,
    /// `trits` (as [`SubspaceFile::read_all_wdl`] gives them, known from a file
    /// of the same WDL blocks): only the depth section is read.
    pub(crate) fn read_all_partial_given(&self, trits: Vec<u16>) -> Result<Vec<u16>, FormatError> {
        let depth = self.depth()?;
        let size = self.header.size;
        let entries = self.header.depth_entries();
        let mut codes = trits;
        if codes.len() as u64 != size {
            return Err(self.corrupt_slot("WDL", codes.len().min(size as usize) as u64));
        }
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
        let map = self.map()?;
        let reparsed = parse_header(&self.path, map, map.len() as u64)?;
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
            let table_len = s.info.table_len();
            let start = s.info.offset as usize;
            let mid = start + table_len as usize;
            let end = (s.info.offset + s.info.length) as usize;
            if xxh64(self.mapped(start..mid)?) != s.info.table_checksum {
                return Err(FormatError::Checksum {
                    path: self.path.clone(),
                    section: table,
                    block: None,
                });
            }
            (0..s.info.blocks as usize)
                .into_par_iter()
                .try_for_each(|b| s.compressed(&self.path, self.src(), b).map(|_| ()))?;
            if xxh64(self.mapped(mid..end)?) != s.info.data_checksum {
                return Err(FormatError::Checksum {
                    path: self.path.clone(),
                    section: data,
                    block: None,
                });
            }
        }
        Ok(())
    }

    /// The compressed bytes of every block of the WDL section, or of the depth
    /// section with `depth` (`None` if the file has none), in table order (a
    /// model-coded section's prior first), after checking the section's table
    /// and data checksums and every block's.
    pub(crate) fn blocks_checked(&self, depth: bool) -> Result<Option<Vec<Vec<u8>>>, FormatError> {
        let (s, name) = match depth {
            false => (&self.wdl, "WDL"),
            true => match &self.depth {
                Some(d) => (d, "depth"),
                None => return Ok(None),
            },
        };
        self.section_checked(s, name)?;
        (0..s.info.blocks as usize)
            .map(|b| Ok(s.compressed(&self.path, self.src(), b)?.into_owned()))
            .collect::<Result<_, _>>()
            .map(Some)
    }

    /// Checks the table and data checksums of the section `s` (`name` its name
    /// in errors).
    fn section_checked(&self, s: &SectionReader, name: &'static str) -> Result<(), FormatError> {
        let start = s.info.offset as usize;
        let mid = start + s.info.table_len() as usize;
        let end = (s.info.offset + s.info.length) as usize;
        let [table, data] = match name {
            "WDL" => ["WDL table", "WDL data"],
            _ => ["depth table", "depth data"],
        };
        for (bytes, sum, section) in [
            (self.mapped(start..mid)?, s.info.table_checksum, table),
            (self.mapped(mid..end)?, s.info.data_checksum, data),
        ] {
            if xxh64(bytes) != sum {
                return Err(FormatError::Checksum {
                    path: self.path.clone(),
                    section,
                    block: None,
                });
            }
        }
        Ok(())
    }

    /// The mapped bytes of `range`, which are about to be read through: the
    /// kernel is told to read them ahead (the mapping is opened for random
    /// access, which reads a page a fault).
    fn mapped(&self, range: std::ops::Range<usize>) -> Result<&[u8], FormatError> {
        let map = self.map()?;
        #[cfg(unix)]
        let _ = map.advise_range(memmap2::Advice::WillNeed, range.start, range.len());
        Ok(&map[range])
    }
}
