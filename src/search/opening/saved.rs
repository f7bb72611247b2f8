//! `opening.bin`: the saved exact values of placement positions (layout in
//! `docs/FORMAT.md`), read when a search starts and written by [`super::Opening::save`].

use super::error::OpeningError;
use crate::rules::value::Value;
use crate::table::format::{FormatError, xxh64};
use std::path::Path;

pub(super) const MAGIC: &[u8; 8] = b"MILLOPEN";
pub(super) const VERSION: u32 = 1;
pub(super) const HEADER_LEN: usize = 48;
pub(super) const ENTRY_LEN: usize = 10;

/// Saved opening values: canonical keys with exact value codes, sorted by key.
#[derive(Default)]
pub(super) struct Saved {
    pub(super) entries: Vec<(u64, u16)>,
    pub(super) max_ply: u32,
}

impl Saved {
    /// Reads `path`; no file means no saved values.
    pub(super) fn load(path: &Path, fingerprint: u64) -> Result<Saved, OpeningError> {
        let read = |path: &Path| -> std::io::Result<Vec<u8>> {
            let mut file = match crate::table::format::open_regular(path) {
                Ok(f) => f,
                Err(FormatError::Io { source, .. }) => return Err(source),
                Err(e) => return Err(std::io::Error::other(e.to_string())),
            };
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes)?;
            Ok(bytes)
        };
        let bytes = match read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Saved::default()),
            Err(e) => {
                return Err(OpeningError::Saved {
                    path: path.to_path_buf(),
                    why: e.to_string(),
                });
            }
        };
        decode(&bytes, fingerprint).map_err(|why| OpeningError::Saved {
            path: path.to_path_buf(),
            why,
        })
    }

    pub(super) fn get(&self, key: u64) -> Option<Value> {
        self.entries
            .binary_search_by_key(&key, |e| e.0)
            .ok()
            .map(|i| Value::from_code(self.entries[i].1))
    }
}

pub(super) fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

pub(super) fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The bytes of a saved-values file (layout in `docs/FORMAT.md`).
pub(super) fn encode(fingerprint: u64, max_ply: u32, entries: &[(u64, u16)]) -> Vec<u8> {
    let mut body = Vec::with_capacity(entries.len() * ENTRY_LEN);
    for &(key, code) in entries {
        body.extend_from_slice(&key.to_le_bytes());
        body.extend_from_slice(&code.to_le_bytes());
    }
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&max_ply.to_le_bytes());
    out.extend_from_slice(&fingerprint.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxh64(&body).to_le_bytes());
    let header_sum = xxh64(&out);
    out.extend_from_slice(&header_sum.to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Reads and checks a saved-values file.
pub(super) fn decode(b: &[u8], fingerprint: u64) -> Result<Saved, String> {
    if b.len() < HEADER_LEN || &b[..8] != MAGIC {
        return Err("not a millbase opening-values file".into());
    }
    if xxh64(&b[..40]) != le_u64(b, 40) {
        return Err("header checksum mismatch".into());
    }
    if le_u32(b, 8) != VERSION {
        return Err(format!("format version {} is not {VERSION}", le_u32(b, 8)));
    }
    if le_u64(b, 16) != fingerprint {
        return Err("built under other rules (fingerprint differs)".into());
    }
    let n = le_u64(b, 24) as usize;
    let body = &b[HEADER_LEN..];
    if body.len() != n.saturating_mul(ENTRY_LEN) {
        return Err(format!(
            "{n} entries announced, {} bytes of entries",
            body.len()
        ));
    }
    if xxh64(body) != le_u64(b, 32) {
        return Err("entries checksum mismatch".into());
    }
    let entries: Vec<(u64, u16)> = body
        .chunks_exact(ENTRY_LEN)
        .map(|c| (le_u64(c, 0), u16::from_le_bytes([c[8], c[9]])))
        .collect();
    if entries.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err("entries are not sorted by key".into());
    }
    Ok(Saved {
        entries,
        max_ply: le_u32(b, 12),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_file_round_trips_and_detects_damage() {
        let entries = vec![(5u64, 3u16), (9, 0), (1 << 50, 12)];
        let bytes = encode(77, 8, &entries);
        let saved = decode(&bytes, 77).unwrap();
        assert_eq!(saved.entries, entries);
        assert_eq!(saved.get(9), Some(Value::Draw));
        assert!(decode(&bytes, 78).is_err());
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(decode(&bad, 77).is_err());
    }
}
