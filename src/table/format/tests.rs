//! Tests of the format: round trips, damage found, refusals.

use super::pack::*;
use super::read::*;
use super::write::*;
use super::*;

/// Writes `b`, edited by `edit` and with its header checksum fixed up as a writer
/// would, to `path`, and opens it.
fn reopen_edited(
    path: &Path,
    mut b: Vec<u8>,
    edit: impl FnOnce(&mut [u8]),
) -> Result<SubspaceFile, FormatError> {
    edit(&mut b);
    let sum = xxh64(&b[..HEADER_CHECKED]);
    LE::write_u64(&mut b[HEADER_CHECKED..], sum);
    fs::write(path, &b).unwrap();
    SubspaceFile::open(path, &Expect::any())
}
use crate::rules::value::{Counts, Value, Wdl};
use byteorder::{ByteOrder, LittleEndian as LE};
use std::fs;
use std::io::Write;
use std::path::Path;

use crate::mix::SplitMix as Mix;

pub(super) fn meta_for(codes: &[u16]) -> SubspaceMeta {
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
pub(super) fn realistic_codes(n: usize, seed: u64) -> Vec<u16> {
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

/// A fresh directory, removed when dropped.
pub(super) fn tmpdir(name: &str) -> crate::scratch::Scratch {
    crate::scratch::Scratch::new(&format!("format-{name}"))
}

pub(super) fn small_opts() -> WriteOptions {
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
        // Runs of slots, from any place in a byte to any other.
        for (start, end) in [
            (0, 1003),
            (0, 0),
            (7, 7),
            (3, 4),
            (4, 11),
            (998, 1003),
            (1, 999),
        ] {
            let mut out = vec![9];
            extend_trits(enc, &raw, start..end, &mut out).unwrap();
            let want: Vec<u8> = codes[start..end].iter().map(|&c| trit(c)).collect();
            assert_eq!(out[1..], want[..], "{start}..{end}");
        }
        // Past the block's end, and a byte no packing writes: the first such slot.
        // (Trits5's last byte holds slots 1000 to 1004, Bits2's 1000 to 1003.)
        let end = [1005, 1004][(enc == Encoding::Bits2) as usize];
        let mut out = Vec::new();
        assert_eq!(extend_trits(enc, &raw, 1000..1010, &mut out), Err(end));
        assert_eq!(out.len(), end - 1000);
        let mut bad = raw.clone();
        bad[40] = 0xff;
        let first = [200, 160][(enc == Encoding::Bits2) as usize];
        let mut out = Vec::new();
        assert_eq!(extend_trits(enc, &bad, 100..300, &mut out), Err(first));
        assert_eq!(out.len(), first - 100);
    }
    for c in 0..600u16 {
        assert_eq!(combine(trit(c), half(c)), Some(c));
    }
    // A draw's entry other than 0 is damage.
    assert_eq!(combine(0, 5), None);
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
        assert_eq!(f.header().depth.unwrap().encoding, expect_enc);
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

/// The block table is read an entry at a time: a bit flipped in an entry (its
/// offset, length, reserved bytes or checksum; in a compact table its end or
/// checksum) makes that entry's block an error when it is read, never a wrong
/// value; other blocks still read; `verify_checksums` names the table.
#[test]
fn a_damaged_table_entry_fails_its_own_block() {
    let dir = tmpdir("entry");
    let codes = realistic_codes(6_000, 13);
    let meta = meta_for(&codes);
    for compact in [false, true] {
        let good = dir.join("good.mdb");
        let opts = WriteOptions {
            compact_tables: compact,
            ..small_opts()
        };
        let h = write_subspace_with(&good, &meta, &codes, &opts).unwrap();
        assert_eq!(h.compact_tables(), compact);
        let bytes = fs::read(&good).unwrap();
        let bad = dir.join("bad.mdb");
        let (blocks, per) = (h.wdl.blocks as usize, h.wdl.block_slots as usize);
        let entry = h.wdl.entry_len();
        assert!(blocks >= 3, "{blocks} blocks");
        for b in 0..blocks {
            for bit in (0..entry * 8).step_by(5) {
                let mut damaged = bytes.clone();
                damaged[h.wdl.offset as usize + b * entry + bit / 8] ^= 1 << (bit % 8);
                fs::write(&bad, &damaged).unwrap();
                let f = SubspaceFile::open(&bad, &Expect::any()).unwrap();
                let mut read = 0;
                for (i, &c) in codes.iter().enumerate() {
                    // A slot's depth may need the results of its neighbours in other
                    // WDL blocks, and a compact entry's end is where the next block
                    // starts: an error there is no surprise; a wrong value, or a
                    // value from the damaged entry's block, is.
                    if let Ok(v) = f.code(i as u64) {
                        assert_eq!(v, c, "entry {b} bit {bit}: slot {i}");
                        assert_ne!(i / per, b, "entry {b} bit {bit}: its block read");
                        read += 1;
                    }
                }
                assert!(read > 0, "entry {b} bit {bit}: the intact blocks read");
                assert!(
                    matches!(
                        f.verify_checksums(),
                        Err(FormatError::Checksum {
                            section: "WDL table",
                            ..
                        })
                    ),
                    "entry {b} bit {bit}"
                );
            }
        }
    }
}

/// Compact block tables ([`super::FLAG_COMPACT_TABLES`]) hold the same blocks
/// in 8 bytes an entry: the same codes read back, 16 bytes less a block, and
/// [`write_retabled`] turns either file into the other byte for byte, zstd's
/// blocks and the model's alike.
#[test]
fn compact_tables_hold_the_same_blocks() {
    let dir = tmpdir("compact");
    let rules = crate::Rules::with_stones(5);
    let codes = positional_codes(rules, 3, 3, 3);
    let meta = model_meta(rules, 3, 3, [0, 0], &codes);
    let models = WriteOptions {
        wdl_encoding: Encoding::Model,
        loss_depths: true,
        depth_model: true,
        ..small_opts()
    };
    let wdl_only = WriteOptions {
        wdl_only: true,
        ..small_opts()
    };
    for opts in [small_opts(), models, wdl_only] {
        let [wide, compact] = [false, true].map(|c| {
            let path = dir.join(format!("{c}.mdb"));
            let opts = WriteOptions {
                compact_tables: c,
                ..opts
            };
            write_subspace_with(&path, &meta, &codes, &opts).unwrap();
            path
        });
        let [w, c] = [&wide, &compact].map(|p| SubspaceFile::open(p, &Expect::any()).unwrap());
        assert!(c.header().compact_tables() && !w.header().compact_tables());
        let blocks = c.header().wdl.blocks as u64 + c.header().depth.map_or(0, |d| d.blocks as u64);
        assert_eq!(
            w.header().file_bytes() - c.header().file_bytes(),
            16 * blocks
        );
        assert_eq!(c.wdl_model(), opts.wdl_encoding == Encoding::Model);
        for f in [&w, &c] {
            f.verify_checksums().unwrap();
            let wdl = f.read_all_wdl().unwrap();
            for (i, &code) in codes.iter().enumerate() {
                assert_eq!(wdl[i] as u8, trit(code), "slot {i}");
            }
            if !opts.wdl_only {
                let stored = f.read_all_partial().unwrap();
                for (i, (&code, &got)) in codes.iter().zip(&stored).enumerate() {
                    let win = opts.loss_depths && trit(code) == 1;
                    assert_eq!(got, if win { WIN_BY_LOOKAHEAD } else { code }, "slot {i}");
                }
            }
        }
        let again = dir.join("again.mdb");
        write_retabled(&w, &again, true).unwrap();
        assert_eq!(fs::read(&again).unwrap(), fs::read(&compact).unwrap());
        write_retabled(&c, &again, false).unwrap();
        assert_eq!(fs::read(&again).unwrap(), fs::read(&wide).unwrap());
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
}

#[test]
fn wrong_rules_version_subspace_size() {
    let dir = tmpdir("wrong");
    let codes = realistic_codes(3_000, 12);
    let meta = meta_for(&codes);
    let path = dir.join("f.mdb");
    write_subspace_with(&path, &meta, &codes, &small_opts()).unwrap();
    let n = codes.len() as u64;
    let err = SubspaceFile::open(&path, &Expect::exact(meta.fingerprint ^ 1, 3, 4, n)).unwrap_err();
    assert!(matches!(err, FormatError::RulesMismatch { .. }), "{err}");
    let err = SubspaceFile::open(&path, &Expect::exact(meta.fingerprint, 4, 3, n)).unwrap_err();
    assert!(matches!(err, FormatError::Mismatch { .. }), "{err}");
    let err = SubspaceFile::open(&path, &Expect::exact(meta.fingerprint, 3, 4, n + 1)).unwrap_err();
    assert!(matches!(err, FormatError::Mismatch { .. }), "{err}");
    // Another version, header checksum fixed up as a writer of that version would.
    let b = fs::read(&path).unwrap();
    let err = reopen_edited(&path, b.clone(), |b| {
        LE::write_u32(&mut b[8..], VERSION + 1)
    })
    .unwrap_err();
    assert!(
        matches!(err, FormatError::Version { found, expected, .. } if found == VERSION + 1 && expected == VERSION),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("millbase build"), "{msg}");
    // A retired version (the WDL model without its refiner) says how to write the
    // file again.
    for retired in RETIRED {
        let err =
            reopen_edited(&path, b.clone(), |b| LE::write_u32(&mut b[8..], retired)).unwrap_err();
        assert!(
            matches!(err, FormatError::Retired { found, .. } if found == retired),
            "{err}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("millbase repack") && msg.contains("millbase pack"),
            "{msg}"
        );
    }
}

#[test]
fn missing_file_is_io_error() {
    let err = SubspaceFile::open(Path::new("/nonexistent/3-3.mdb"), &Expect::any()).unwrap_err();
    assert!(matches!(err, FormatError::Io { .. }));
}

#[test]
fn wdl_only_files_hold_the_trits_and_refuse_distances() {
    let dir = tmpdir("wdl-only");
    let codes = realistic_codes(23_456, 11);
    let meta = meta_for(&codes);
    let full = dir.join("full.mdb");
    write_subspace_with(&full, &meta, &codes, &small_opts()).unwrap();
    let src = SubspaceFile::open(&full, &Expect::any()).unwrap();
    assert_eq!(
        (src.header().version, src.header().flags),
        (VERSION_FLAGS, FLAG_DECISIVE_DEPTHS)
    );
    // The copy of a full file's WDL section is the file the writer makes itself.
    let copy = dir.join("copy.mdb");
    let written = write_wdl_only_copy(&src, &copy).unwrap();
    let direct = dir.join("direct.mdb");
    let opts = WriteOptions {
        wdl_only: true,
        ..small_opts()
    };
    write_subspace_with(&direct, &meta, &codes, &opts).unwrap();
    assert_eq!(fs::read(&copy).unwrap(), fs::read(&direct).unwrap());
    let f = SubspaceFile::open(
        &copy,
        &Expect::exact(meta.fingerprint, 3, 4, codes.len() as u64),
    )
    .unwrap();
    assert_eq!(f.header(), &written);
    assert_eq!(written.version, VERSION_FLAGS);
    assert!(f.wdl_only() && written.depth.is_none());
    assert_eq!(written.meta, meta);
    assert_eq!(written.wdl, src.header().wdl);
    assert_eq!(written.file_bytes(), fs::metadata(&copy).unwrap().len());
    assert_eq!(written.file_bytes(), HEADER_LEN as u64 + written.wdl.length);
    f.verify_checksums().unwrap();
    let trits = f.read_all_wdl().unwrap();
    for (i, &c) in codes.iter().enumerate() {
        assert_eq!(trits[i], trit(c) as u16);
        assert_eq!(f.wdl(i as u64).unwrap(), Value::from_code(c).wdl());
    }
    for err in [
        f.code(0).unwrap_err(),
        f.value(5).unwrap_err(),
        f.read_all().unwrap_err(),
    ] {
        assert!(matches!(err, FormatError::WdlOnly { .. }), "{err}");
        assert!(err.to_string().contains("pack --wdl-only"), "{err}");
    }
    // A WDL-only header that still names a depth section, or a version 1 file
    // with one section, is refused.
    for (version, entry) in [(VERSION_FLAGS, 0xffu8), (VERSION_FULL, 0)] {
        let err = reopen_edited(&dir.join("bad.mdb"), fs::read(&copy).unwrap(), |b| {
            LE::write_u32(&mut b[8..], version);
            b[160] = entry;
        })
        .unwrap_err();
        assert!(matches!(err, FormatError::Corrupt { .. }), "{err}");
    }
    // A damaged WDL section is not copied.
    let mut b = fs::read(&full).unwrap();
    let at = HEADER_LEN + src.header().wdl.blocks as usize * BLOCK_ENTRY_LEN + 3;
    b[at] ^= 0x40;
    let damaged = dir.join("damaged.mdb");
    fs::write(&damaged, &b).unwrap();
    let d = SubspaceFile::open(&damaged, &Expect::any()).unwrap();
    let err = write_wdl_only_copy(&d, &dir.join("out.mdb")).unwrap_err();
    assert!(matches!(err, FormatError::Checksum { .. }), "{err}");
    assert!(!dir.join("out.mdb").exists());
}

/// Value don't-cares that keep every result (`FLAG_EXACT_RESULTS`, the `loss0`
/// fill): flags 2 and 16 (no WDL rule), the stored results read as they
/// are, a WDL-only copy without flags, and the option refused without value
/// don't-cares.
#[test]
fn exact_results_are_flags_2_and_16_and_their_wdl_copy_has_no_flag() {
    let dir = tmpdir("exact-results");
    let codes = realistic_codes(12_345, 7);
    let meta = meta_for(&codes);
    // Some losses stored as `Loss(0)`, every result kept.
    let filled: Vec<u16> = codes
        .iter()
        .enumerate()
        .map(|(i, &c)| if i % 3 == 0 && trit(c) == 2 { 1 } else { c })
        .collect();
    assert!(filled.iter().zip(&codes).filter(|(f, c)| f != c).count() > 10);
    let opts = WriteOptions {
        value_dont_cares: true,
        exact_results: true,
        loss_depths: true,
        ..small_opts()
    };
    let path = dir.join("exact.mdb");
    let h = write_subspace_with(&path, &meta, &filled, &opts).unwrap();
    assert_eq!((h.version, h.flags), (VERSION_FLAGS, 2 | 4 | 8 | 16));
    let f = SubspaceFile::open(&path, &Expect::any()).unwrap();
    assert!(f.value_dont_cares() && f.exact_results() && !f.wdl_dont_cares());
    for (i, (&c, &stored)) in codes.iter().zip(&filled).enumerate() {
        let want = [Wdl::Draw, Wdl::Win, Wdl::Loss][trit(c) as usize];
        assert_eq!(f.wdl(i as u64).unwrap(), want, "{i}");
        // Only a stored `Loss(0)` needs the capturing plies.
        let v = Value::from_code(stored);
        assert_eq!(f.value_is_exact(v), v != Value::Loss(0), "{i}");
    }
    let copy = write_wdl_only_copy(&f, &dir.join("copy.mdb")).unwrap();
    assert_eq!(copy.flags, 0);
    let no_dont_cares = WriteOptions {
        value_dont_cares: false,
        ..opts
    };
    let err = write_subspace_with(&dir.join("bad.mdb"), &meta, &codes, &no_dont_cares);
    assert!(matches!(err, Err(FormatError::Input { .. })), "{err:?}");
}

#[test]
fn full_files_with_value_dont_cares_are_version_2_with_flags_3() {
    let dir = tmpdir("value-dc");
    let codes = realistic_codes(12_345, 5);
    let meta = meta_for(&codes);
    // Filled values are no better than the truth and no longer than the longest:
    // here some wins replaced by `Loss(0)`.
    let filled: Vec<u16> = codes
        .iter()
        .enumerate()
        .map(|(i, &c)| if i % 7 == 0 && trit(c) == 1 { 1 } else { c })
        .collect();
    let opts = WriteOptions {
        value_dont_cares: true,
        ..small_opts()
    };
    let path = dir.join("dc.mdb");
    let h = write_subspace_with(&path, &meta, &filled, &opts).unwrap();
    assert_eq!((h.version, h.flags), (VERSION_FLAGS, 7));
    assert!(h.value_dont_cares() && h.wdl_dont_cares() && h.depth.is_some());
    // The header keeps the true counts and longest values.
    assert_eq!(h.meta, meta);
    let f = SubspaceFile::open(&path, &Expect::any()).unwrap();
    assert!(f.value_dont_cares());
    assert_eq!(f.read_all_stored().unwrap(), filled);
    let err = f.read_all().unwrap_err();
    assert!(matches!(err, FormatError::DontCares { .. }), "{err}");
    assert!(err.to_string().contains("millbase repack"), "{err}");
    // A WDL-only copy keeps the WDL rule's flag only.
    let copy = write_wdl_only_copy(&f, &dir.join("copy.mdb")).unwrap();
    assert_eq!(copy.flags, FLAG_WDL_DONT_CARES);
    // A filled value longer than the longest true one is refused.
    let mut long = filled.clone();
    long[3] = meta.counts.longest_loss + 3;
    let err = write_subspace_with(&dir.join("long.mdb"), &meta, &long, &opts).unwrap_err();
    assert!(matches!(err, FormatError::Input { .. }), "{err}");
    // Value don't-cares belong in full files only.
    let wdl_only = WriteOptions {
        wdl_only: true,
        ..opts.clone()
    };
    assert!(write_subspace_with(&dir.join("x.mdb"), &meta, &filled, &wdl_only).is_err());
    // Flags that do not go together are a damaged file: a full file with one of the
    // two don't-care flags, a WDL-only file with the value flag or decisive-only
    // depths, an unknown bit.
    let plain = dir.join("plain.mdb");
    let version_1 = WriteOptions {
        decisive_depths: false,
        ..small_opts()
    };
    write_subspace_with(&plain, &meta, &codes, &version_1).unwrap();
    let wdl_file = dir.join("wdl.mdb");
    write_subspace_with(
        &wdl_file,
        &meta,
        &codes,
        &WriteOptions {
            wdl_only: true,
            ..small_opts()
        },
    )
    .unwrap();
    for (src, flags) in [
        (&path, 1u32),
        (&path, 2),
        (&path, 5),
        (&path, 6),
        (&wdl_file, 2),
        (&wdl_file, 3),
        (&wdl_file, 4),
        (&wdl_file, 5),
        (&path, 8),
        (&path, 11),
        (&wdl_file, 12),
        (&path, 31),
        // Exact results go with value don't-cares only, instead of the WDL rule.
        (&path, 16),
        (&path, 20),
        (&path, 19),
        (&wdl_file, 16),
        (&wdl_file, 17),
        (&path, 64 | 7),
    ] {
        let err = reopen_edited(&dir.join("bad.mdb"), fs::read(src).unwrap(), |b| {
            LE::write_u32(&mut b[202..], flags)
        })
        .unwrap_err();
        assert!(matches!(err, FormatError::Corrupt { .. }), "{flags}: {err}");
    }
    // A file whose tables are not compact, said to be: its blocks are not where
    // the tables say or their bytes not what the checksums say, an error at the
    // first read.
    let b = fs::read(&path).unwrap();
    let flags = LE::read_u32(&b[202..]);
    let f = reopen_edited(&dir.join("bad.mdb"), b, |b| {
        LE::write_u32(&mut b[202..], flags | 32)
    })
    .unwrap();
    assert!(matches!(
        f.read_all_stored(),
        Err(FormatError::Corrupt { .. } | FormatError::Checksum { .. })
    ));
    // A version 1 file's reserved flag bytes are not read as flags.
    let b = fs::read(&plain).unwrap();
    let v1 = reopen_edited(&plain, b, |b| LE::write_u32(&mut b[202..], 3)).unwrap();
    assert!(!v1.value_dont_cares());
    assert_eq!(v1.read_all().unwrap(), codes);
}

#[test]
fn depths_of_decisive_slots_only_in_version_2_every_slot_in_version_1() {
    let dir = tmpdir("decisive");
    // Realistic codes with a run of draws longer than two depth blocks (a block with
    // no entries at all), and codes long enough for 16-bit entries.
    let mut short = realistic_codes(30_000, 13);
    short.splice(10_000..10_000, std::iter::repeat_n(0, 2_000));
    let long = random_codes(20_000, 700, 5);
    for (n, codes) in [short, long].iter().enumerate() {
        let meta = meta_for(codes);
        let (decisive, every) = (dir.join(format!("d{n}.mdb")), dir.join(format!("e{n}.mdb")));
        let h = write_subspace_with(&decisive, &meta, codes, &small_opts()).unwrap();
        assert_eq!((h.version, h.flags), (VERSION_FLAGS, FLAG_DECISIVE_DEPTHS));
        assert!(h.decisive_depths());
        let version_1 = WriteOptions {
            decisive_depths: false,
            ..small_opts()
        };
        let h1 = write_subspace_with(&every, &meta, codes, &version_1).unwrap();
        assert_eq!((h1.version, h1.flags), (VERSION_FULL, 0));
        assert_eq!(h.wdl, h1.wdl);
        assert!(h.depth.unwrap().length < h1.depth.unwrap().length);
        // Probes slot by slot (WDL and depth blocks of different sizes, so a depth
        // block's trits come from two WDL blocks) and the whole file at once.
        for p in [&decisive, &every] {
            let f = SubspaceFile::open(p, &Expect::any()).unwrap();
            f.verify_checksums().unwrap();
            assert_eq!(f.read_all().unwrap(), *codes);
            for (i, &c) in codes.iter().enumerate().rev() {
                assert_eq!(f.code(i as u64).unwrap(), c, "slot {i}");
            }
        }
        // A block holds the decisive slots' half distances, in order.
        let block = &codes[..777];
        let encoding = depth_encoding_for(meta.counts.longest_win.max(meta.counts.longest_loss));
        let mut raw = Vec::new();
        pack_depth(block, encoding, DepthEntries::Decisive, &mut raw);
        let mut expected = Vec::new();
        let decisive_codes: Vec<u16> = block.iter().copied().filter(|&c| c != 0).collect();
        pack_depth(
            &decisive_codes,
            encoding,
            DepthEntries::Every,
            &mut expected,
        );
        assert_eq!(raw, expected);
        // Expanding gives every slot's entry back, and refuses a wrong count.
        let trits: Vec<u8> = block.iter().map(|&c| trit(c)).collect();
        let mut every_entry = Vec::new();
        pack_depth(block, encoding, DepthEntries::Every, &mut every_entry);
        let decisive = DepthEntries::Decisive;
        assert_eq!(
            expand_depth(encoding, decisive, &trits, &raw),
            Some(every_entry)
        );
        let width = encoding.raw_len(1) as usize;
        assert_eq!(
            expand_depth(encoding, decisive, &trits, &raw[width..]),
            None
        );
        raw.extend_from_slice(&vec![0; width]);
        assert_eq!(expand_depth(encoding, decisive, &trits, &raw), None);
    }
}

#[test]
fn depths_of_lost_slots_only_with_flag_8() {
    let dir = tmpdir("losses");
    let mut short = realistic_codes(30_000, 17);
    short.splice(10_000..10_000, std::iter::repeat_n(0, 2_000));
    let long = random_codes(20_000, 700, 9);
    for (n, codes) in [short, long].iter().enumerate() {
        let meta = meta_for(codes);
        let (losses, decisive) = (dir.join(format!("l{n}.mdb")), dir.join(format!("d{n}.mdb")));
        let opts = WriteOptions {
            loss_depths: true,
            ..small_opts()
        };
        let h = write_subspace_with(&losses, &meta, codes, &opts).unwrap();
        assert_eq!(
            (h.version, h.flags),
            (VERSION_FLAGS, FLAG_DECISIVE_DEPTHS | FLAG_LOSS_DEPTHS)
        );
        assert!(h.loss_depths() && h.depth_entries() == DepthEntries::Losses);
        let hd = write_subspace_with(&decisive, &meta, codes, &small_opts()).unwrap();
        assert_eq!(h.wdl, hd.wdl);
        assert!(h.depth.unwrap().length < hd.depth.unwrap().length);
        let f = SubspaceFile::open(&losses, &Expect::any()).unwrap();
        f.verify_checksums().unwrap();
        assert!(f.loss_depths());
        // A win's distance is not in the file: asked for, it is a clear error.
        let partial = f.read_all_partial().unwrap();
        let mut wins = 0;
        for (i, &c) in codes.iter().enumerate().rev() {
            if trit(c) == 1 {
                wins += 1;
                assert_eq!(partial[i], WIN_BY_LOOKAHEAD, "slot {i}");
                let err = f.code(i as u64).unwrap_err();
                assert!(matches!(err, FormatError::WinByLookahead { .. }), "{err}");
                assert_eq!(f.wdl(i as u64).unwrap(), crate::rules::value::Wdl::Win);
            } else {
                assert_eq!(partial[i], c, "slot {i}");
                assert_eq!(f.code(i as u64).unwrap(), c, "slot {i}");
            }
        }
        assert!(wins > 1000, "{wins}");
        for err in [f.read_all().unwrap_err(), f.read_all_stored().unwrap_err()] {
            assert!(matches!(err, FormatError::WinByLookahead { .. }), "{err}");
            assert!(err.to_string().contains("repack --depths losses"), "{err}");
        }
        // A block holds the lost slots' half distances, in order.
        let block = &codes[..777];
        let encoding = depth_encoding_for(meta.counts.longest_win.max(meta.counts.longest_loss));
        let mut raw = Vec::new();
        pack_depth(block, encoding, DepthEntries::Losses, &mut raw);
        let lost: Vec<u16> = block.iter().copied().filter(|&c| trit(c) == 2).collect();
        let mut expected = Vec::new();
        pack_depth(&lost, encoding, DepthEntries::Every, &mut expected);
        assert_eq!(raw, expected);
        let trits: Vec<u8> = block.iter().map(|&c| trit(c)).collect();
        let back = expand_depth(encoding, DepthEntries::Losses, &trits, &raw).unwrap();
        for (i, &c) in block.iter().enumerate() {
            let h = half_at(encoding, &back, i).unwrap();
            assert_eq!(h, if trit(c) == 2 { (c - 1) / 2 } else { 0 }, "slot {i}");
        }
    }
}

/// Metadata of sector `k`-`l` with `hands` of `rules`, for `codes`.
fn model_meta(rules: &crate::Rules, k: u32, l: u32, hands: [u8; 2], codes: &[u16]) -> SubspaceMeta {
    SubspaceMeta {
        k,
        l,
        hands,
        fingerprint: rules.fingerprint(),
        variant: rules.name.into(),
        counts: Counts::of_codes(codes),
    }
}

/// Codes of sector `k`-`l` that depend on the position (the mobility of either
/// side, and noise), as real results do, so that the context model pays.
fn positional_codes(rules: &'static crate::Rules, k: u32, l: u32, seed: u64) -> Vec<u16> {
    let idx = crate::table::index::Index::for_rules(rules);
    let mut r = Mix(seed);
    let mobility = |side: u32, empty: u32| -> u32 {
        crate::rules::position::points(side)
            .map(|p| (rules.adjacency[p as usize] & empty).count_ones())
            .sum()
    };
    (0..idx.size(k, l))
        .map(|slot| {
            let (own, opp) = idx.position(k, l, slot);
            let empty = rules.all() & !(own | opp);
            let (a, b) = (mobility(own, empty), mobility(opp, empty));
            let noise = r.below(8) == 0;
            match (a.cmp(&(b + 2)), noise) {
                (_, true) => 1 + 2 * r.below(3) as u16,
                (std::cmp::Ordering::Greater, _) => 2 + 2 * (a - b) as u16,
                (std::cmp::Ordering::Less, _) if a + 2 < b => 1 + 2 * (b - a) as u16,
                _ => 0,
            }
        })
        .collect()
}

#[test]
fn model_coded_files_read_back_every_slot() {
    let dir = tmpdir("model");
    let rules = crate::Rules::with_stones(5);
    let idx = crate::table::index::Index::for_rules(rules);
    for (k, l, hands, entries) in [
        (3, 3, [0, 0], (true, false, false)),
        (3, 3, [1, 1], (true, true, false)),
        (3, 3, [2, 2], (true, true, true)),
        (2, 1, [3, 3], (false, false, false)),
        (2, 1, [3, 3], (true, true, true)),
    ] {
        let codes = if k == 2 {
            realistic_codes(idx.size(k, l) as usize, 5 + k as u64)
        } else {
            positional_codes(rules, k, l, k as u64)
        };
        let meta = model_meta(rules, k, l, hands, &codes);
        let opts = WriteOptions {
            wdl_encoding: Encoding::Model,
            decisive_depths: entries.0,
            loss_depths: entries.1,
            depth_model: entries.2,
            ..small_opts()
        };
        let path = dir.join(format!("{k}-{l}.mdb"));
        let h = write_subspace_with(&path, &meta, &codes, &opts).unwrap();
        let version = [VERSION_WDL_MODEL, VERSION][entries.2 as usize];
        assert_eq!((h.version, h.wdl.encoding), (version, Encoding::Model));
        let depth_encoding = h.depth.unwrap().encoding;
        assert_eq!(depth_encoding == Encoding::DepthRefined, entries.2);
        let f = SubspaceFile::open(&path, &Expect::any()).unwrap();
        f.verify_checksums().unwrap();
        // The models pay on positional codes, not on the small random sector.
        assert_eq!(f.wdl_model(), k != 2, "{k}-{l}");
        assert_eq!(f.depth_model(), k != 2 && entries.2, "{k}-{l}");
        let wdl = f.read_all_wdl().unwrap();
        for (i, &c) in codes.iter().enumerate() {
            assert_eq!(wdl[i] as u8, trit(c), "slot {i}");
        }
        let stored = f.read_all_partial().unwrap();
        for (i, (&s, &c)) in stored.iter().zip(&codes).enumerate() {
            let expected = if entries.1 && trit(c) == 1 {
                WIN_BY_LOOKAHEAD
            } else {
                c
            };
            assert_eq!(s, expected, "slot {i}");
        }
        // Random probes through the cache agree with the bulk read.
        let mut r = Mix(k as u64);
        for _ in 0..2000 {
            let i = r.below(codes.len() as u64);
            let w = f.wdl(i).unwrap();
            assert_eq!(
                w,
                [Wdl::Draw, Wdl::Win, Wdl::Loss][trit(codes[i as usize]) as usize]
            );
            if !(entries.1 && trit(codes[i as usize]) == 1) {
                assert_eq!(f.code(i).unwrap(), codes[i as usize]);
            }
        }
        // A WDL-only copy keeps the model-coded section and its version.
        let copy = dir.join(format!("{k}-{l}.wdl.mdb"));
        let hc = write_wdl_only_copy(&f, &copy).unwrap();
        assert_eq!(hc.version, VERSION_WDL_MODEL);
        let c = SubspaceFile::open(&copy, &Expect::any()).unwrap();
        assert_eq!(c.read_all_wdl().unwrap(), wdl);
    }
}

#[test]
fn model_coded_files_refuse_damage_and_unknown_rules() {
    let dir = tmpdir("model-bad");
    let rules = crate::Rules::with_stones(4);
    let idx = crate::table::index::Index::for_rules(rules);
    let codes = realistic_codes(idx.size(3, 3) as usize, 9);
    let opts = WriteOptions {
        wdl_encoding: Encoding::Model,
        ..small_opts()
    };
    let path = dir.join("3-3.mdb");
    // Codes that do not fit the sector are refused before anything is written.
    let short = &codes[..codes.len() - 1];
    let err = write_subspace_with(&path, &model_meta(rules, 3, 3, [0, 0], short), short, &opts)
        .unwrap_err();
    assert!(err.to_string().contains("slots"), "{err}");
    let h = write_subspace_with(
        &path,
        &model_meta(rules, 3, 3, [0, 0], &codes),
        &codes,
        &opts,
    )
    .unwrap();
    let good = fs::read(&path).unwrap();
    // A flipped byte in a data block is a checksum error when the block is read.
    let mut b = good.clone();
    let last = (h.wdl.offset + h.wdl.length) as usize - 3;
    b[last] ^= 0x40;
    fs::write(&path, &b).unwrap();
    let f = SubspaceFile::open(&path, &Expect::any()).unwrap();
    let Err(err) = f.read_all_wdl() else {
        panic!("a damaged block was read")
    };
    assert!(matches!(err, FormatError::Checksum { .. }), "{err}");
    // A damaged prior is refused when the file is opened.
    let mut b = good.clone();
    let prior_at = (h.wdl.offset + h.wdl.blocks as u64 * BLOCK_ENTRY_LEN as u64) as usize;
    b[prior_at + 2] ^= 1;
    fs::write(&path, &b).unwrap();
    let err = SubspaceFile::open(&path, &Expect::any()).unwrap_err();
    assert!(matches!(err, FormatError::Checksum { .. }), "{err}");
    // Rules this program does not know (another name, same data) are refused with
    // what to do.
    let err = reopen_edited(&path, good.clone(), |b| {
        b[16..32].fill(0);
        b[16..25].copy_from_slice(b"elsewhere");
    })
    .unwrap_err();
    assert!(err.to_string().contains("does not know"), "{err}");
    // A version 2 header with a model-coded section is refused.
    let err =
        reopen_edited(&path, good, |b| LE::write_u32(&mut b[8..], VERSION_FLAGS)).unwrap_err();
    assert!(
        err.to_string().contains("version 2 file with a model"),
        "{err}"
    );
}

#[test]
fn the_model_chooses_among_allowed_results_and_saves() {
    let dir = tmpdir("model-chosen");
    let rules = crate::Rules::with_stones(5);
    let (k, l) = (4, 4);
    let codes = positional_codes(rules, k, l, 3);
    let meta = model_meta(rules, k, l, [0, 0], &codes);
    let trits: Vec<u8> = codes.iter().map(|&c| trit(c)).collect();
    // One slot in three may store a result no better than its own (a don't-care
    // as a capture makes it), one in twenty anything.
    let mut r = Mix(5);
    let allowed: Vec<u8> = trits
        .iter()
        .map(|&t| match r.below(60) {
            0..=2 => 7,
            3..=22 => [0b011, 0b111, 0b100][t as usize],
            _ => 1 << t,
        })
        .collect();
    let as_codes: Vec<u16> = trits.iter().map(|&t| [0, 2, 1][t as usize]).collect();
    let plain = dir.join("plain.mdb");
    let opts = WriteOptions {
        wdl_only: true,
        wdl_encoding: Encoding::Model,
        ..WriteOptions::default()
    };
    let hp = write_subspace_with(&plain, &meta, &as_codes, &opts).unwrap();
    let chosen = dir.join("chosen.mdb");
    let hc = write_wdl_only_chosen(&chosen, &meta, &as_codes, &allowed).unwrap();
    assert!(hc.wdl_dont_cares() && hc.wdl_only() && hc.version == VERSION_WDL_MODEL);
    let f = SubspaceFile::open(&chosen, &Expect::any()).unwrap();
    assert!(f.wdl_model());
    let stored = f.read_all_wdl().unwrap();
    let mut changed = 0;
    for (i, (&s, &a)) in stored.iter().zip(&allowed).enumerate() {
        assert!(a >> s & 1 == 1, "slot {i}: stored {s}, allowed {a:b}");
        changed += (s as u8 != trits[i]) as u32;
    }
    assert!(changed > 1000, "{changed}");
    assert!(
        hc.wdl.length * 100 < hp.wdl.length * 97,
        "{} {}",
        hc.wdl.length,
        hp.wdl.length
    );
    // Bad masks are refused.
    let mut bad = allowed.clone();
    bad[7] = 0;
    assert!(write_wdl_only_chosen(&chosen, &meta, &as_codes, &bad).is_err());
}

#[test]
fn full_files_store_the_models_choice_and_every_loss() {
    let dir = tmpdir("full-chosen");
    let rules = crate::Rules::with_stones(5);
    let codes = positional_codes(rules, 4, 4, 7);
    let meta = model_meta(rules, 4, 4, [0, 0], &codes);
    let path = dir.join("4-4.mdb");
    let opts = WriteOptions {
        wdl_encoding: Encoding::Model,
        value_dont_cares: true,
        loss_depths: true,
        depth_model: true,
        ..small_opts()
    };
    // One slot in three that is not lost may store a win or a draw.
    let mut r = Mix(9);
    let allowed: Vec<u8> = codes
        .iter()
        .map(|&c| match (trit(c), r.below(3)) {
            (2, _) => 0b100,
            (_, 0) => 0b011,
            (t, _) => 1 << t,
        })
        .collect();
    write_subspace_choosing(&path, &meta, &codes, &opts, &allowed).unwrap();
    let f = SubspaceFile::open(&path, &Expect::any()).unwrap();
    assert!(f.depth_model() && f.value_dont_cares());
    let stored = f.read_all_partial().unwrap();
    let mut changed = 0;
    for (i, (&s, &c)) in stored.iter().zip(&codes).enumerate() {
        match trit(c) {
            2 => assert_eq!(s, c, "slot {i}"),
            t => {
                let st = if s == WIN_BY_LOOKAHEAD { 1 } else { trit(s) };
                assert!(allowed[i] >> st & 1 == 1, "slot {i}: {s}");
                changed += (st != t) as u32;
            }
        }
    }
    assert!(changed > 100, "{changed}");
    // A loss allowed where the code is not lost, a lost slot with a choice, the
    // code's own result not allowed, or options without the models: refused.
    let first = |t: u8| codes.iter().position(|&c| trit(c) == t).unwrap();
    for (slot, mask) in [(first(0), 0b101), (first(2), 0b110), (first(1), 0b001)] {
        let mut bad = allowed.clone();
        bad[slot] = mask;
        let err = write_subspace_choosing(&path, &meta, &codes, &opts, &bad).unwrap_err();
        assert!(err.to_string().contains("bad allowed results"), "{err}");
    }
    let zstd = WriteOptions {
        wdl_encoding: Encoding::Trits5,
        depth_model: false,
        ..opts.clone()
    };
    let err = write_subspace_choosing(&path, &meta, &codes, &zstd, &allowed).unwrap_err();
    assert!(err.to_string().contains("bad write options"), "{err}");
}

#[test]
fn model_coded_depths_refuse_damage_and_older_versions() {
    let dir = tmpdir("depth-model-bad");
    let rules = crate::Rules::with_stones(5);
    let codes = positional_codes(rules, 4, 4, 3);
    let meta = model_meta(rules, 4, 4, [0, 0], &codes);
    let path = dir.join("4-4.mdb");
    let opts = WriteOptions {
        wdl_encoding: Encoding::Model,
        loss_depths: true,
        depth_model: true,
        ..small_opts()
    };
    // The depth model needs loss-only depths and a model-coded WDL section.
    for bad in [
        WriteOptions {
            loss_depths: false,
            ..opts.clone()
        },
        WriteOptions {
            wdl_encoding: Encoding::Trits5,
            ..opts.clone()
        },
    ] {
        let err = write_subspace_with(&path, &meta, &codes, &bad).unwrap_err();
        assert!(err.to_string().contains("bad write options"), "{err}");
    }
    let h = write_subspace_with(&path, &meta, &codes, &opts).unwrap();
    assert_eq!(h.version, VERSION);
    let good = fs::read(&path).unwrap();
    // A flipped byte in a depth block is a checksum error when the block is read.
    let d = h.depth.unwrap();
    let mut b = good.clone();
    b[(d.offset + d.length) as usize - 2] ^= 0x10;
    fs::write(&path, &b).unwrap();
    let f = SubspaceFile::open(&path, &Expect::any()).unwrap();
    assert!(f.depth_model());
    let err = f.read_all_partial().unwrap_err();
    assert!(matches!(err, FormatError::Checksum { .. }), "{err}");
    // A version 5 header with a model-coded depth section is refused, and so is a
    // version 7 header whose depth entries are not the losses', a version 6 header
    // with the refined depth model (encoding 7) and a version 7 header with the
    // depth model of version 6 (encoding 6).
    for (version, flags, encoding) in [
        (VERSION_WDL_MODEL, h.flags, 7),
        (VERSION, FLAG_DECISIVE_DEPTHS, 7),
        (VERSION_DEPTH_MODEL, h.flags, 7),
        (VERSION, h.flags, 6),
    ] {
        let err = reopen_edited(&path, good.clone(), |b| {
            LE::write_u32(&mut b[8..], version);
            LE::write_u32(&mut b[202..], flags);
            LE::write_u32(&mut b[152 + 4..], encoding);
        })
        .unwrap_err();
        assert!(err.to_string().contains("depth model"), "{err}");
    }
    // A WDL-only copy is version 3: version 4 names the depth model.
    fs::write(&path, &good).unwrap();
    let f = SubspaceFile::open(&path, &Expect::any()).unwrap();
    let copy = dir.join("4-4.wdl.mdb");
    assert_eq!(
        write_wdl_only_copy(&f, &copy).unwrap().version,
        VERSION_WDL_MODEL
    );
}

/// The contexts both models compute are part of the format: a file written by one
/// build must decode in every other. Known answers, pinned by the first writer of
/// each coding: a digest of every WDL context and jump context, of the WDL block's
/// bytes coded from a flat prior (the refiner's integer arithmetic), and of the
/// depth model's bytes without and with its refiner (encodings 6 and 7) over one
/// block of sectors of the standard game with many stones, flying sides and stones
/// in hand. A faster context computation must give these.
#[test]
fn model_contexts_are_those_of_the_format() {
    use super::{depth_model, model};
    let rules = crate::Rules::standard();
    let idx = crate::table::index::Index::for_rules(rules);
    let digest = |h: u64, x: u64| crate::mix::splitmix64(h ^ x);
    let mut found = Vec::new();
    for (k, l, hands) in [
        (7, 7, [0, 0]),
        (3, 9, [0, 0]),
        (9, 3, [0, 0]),
        (6, 8, [1, 0]),
        (4, 5, [2, 3]),
    ] {
        let g = model::Geometry::new(rules, k, l, hands);
        let b = g.blocks() / 3;
        let range = g.block_range(b);
        let mut r = Mix(k as u64 * 31 + l as u64);
        // Results that follow the position (the mobility of either side), with noise.
        let truth: Vec<u8> = range
            .clone()
            .map(|slot| {
                let (own, opp) = idx.position(k, l, slot);
                let empty = rules.all() & !(own | opp);
                let m = |s: u32| -> u32 {
                    crate::rules::position::points(s)
                        .map(|p| (rules.adjacency[p as usize] & empty).count_ones())
                        .sum()
                };
                match (r.below(6), m(own).cmp(&m(opp))) {
                    (0, _) => r.below(3) as u8,
                    (_, std::cmp::Ordering::Greater) => 1,
                    (_, std::cmp::Ordering::Less) => 2,
                    _ => 0,
                }
            })
            .collect();
        let mut wdl = 0u64;
        let mut seen = vec![0u8; truth.len()];
        g.walk::<true>(b, &mut seen, |i, ctx, jumps| {
            wdl = digest(digest(wdl, ctx as u64), jumps as u64);
            truth[i]
        });
        let flat = model::Model::from_prior(&vec![0u16; model::NODES]);
        let coded = model::encode_block(&g, b, &truth, &flat);
        assert_eq!(model::decode_block(&g, b, &coded, &flat), truth);
        let wdl = coded.iter().fold(wdl, |h, &x| digest(h, x as u64));
        let halves: Vec<u8> = truth
            .iter()
            .filter(|&&t| t == 2)
            .map(|_| r.below(40) as u8)
            .collect();
        let prior = model::Model::from_prior(&vec![0u16; depth_model::NODES]);
        // Encoding 6 (version 6, still read) and encoding 7.
        let [depth, refined] = [false, true].map(|refined| {
            let bytes = depth_model::encode_block(&g, b, &truth, &halves, &prior, refined);
            bytes.iter().fold(0u64, |h, &x| digest(h, x as u64))
        });
        found.push((k, l, wdl, depth, refined));
    }
    let expected = [
        (
            7,
            7,
            3318865819836240256,
            5524862996847061291,
            3644784136156639175,
        ),
        (
            3,
            9,
            8994214628047913453,
            3033197334050838621,
            12621391171950082150,
        ),
        (
            9,
            3,
            3512581290654500600,
            8459331596803282245,
            17099761185308586861,
        ),
        (
            6,
            8,
            10402992402920523782,
            11057008487034697207,
            341196196209385121,
        ),
        (
            4,
            5,
            4149474380502039213,
            10829177791732854066,
            14443272768013276471,
        ),
    ];
    assert_eq!(found, expected);
}

/// Loss-only depths with both sections zstd-compressed in small blocks, several
/// depth blocks to a WDL block (`millbase repack --depths losses --fill loss0`
/// with small blocks: the serving profile's coding with loss-only depths). Every
/// slot reads back (a win's distance is not stored), and a flipped bit anywhere
/// (header, tables, blocks) is an error, never a wrong value.
#[test]
fn serving_files_read_back_and_refuse_damage() {
    let dir = tmpdir("serving");
    let codes = realistic_codes(8_000, 13);
    let meta = meta_for(&codes);
    let opts = WriteOptions {
        loss_depths: true,
        wdl_block: 1 << 11,
        depth_block: 1 << 9,
        wdl_level: SERVING_LEVEL,
        depth_level: SERVING_LEVEL,
        ..WriteOptions::default()
    };
    let path = dir.join("serving.mdb");
    let h = write_subspace_with(&path, &meta, &codes, &opts).unwrap();
    assert_eq!((h.version, h.flags), (VERSION_FLAGS, 12));
    assert_eq!(h.wdl.encoding, Encoding::Trits5);
    let partial: Vec<u16> = codes
        .iter()
        .map(|&c| if trit(c) == 1 { WIN_BY_LOOKAHEAD } else { c })
        .collect();
    // Every probe of the file at `at` either fails or gives the stored value; an
    // error if any failed.
    let never_wrong = |at: &Path| -> Result<(), FormatError> {
        let f = SubspaceFile::open(at, &Expect::any())?;
        let mut first_err = None;
        for (i, &c) in codes.iter().enumerate() {
            let wdl = f.wdl(i as u64);
            let code = f.code(i as u64);
            if let Ok(w) = wdl {
                assert_eq!(w, [Wdl::Draw, Wdl::Win, Wdl::Loss][trit(c) as usize], "{i}");
            }
            match code {
                Ok(v) => assert_eq!(v, c, "wrong value from a damaged file at slot {i}"),
                Err(FormatError::WinByLookahead { .. }) if trit(c) == 1 => {}
                Err(e) => first_err = first_err.or(Some(e)),
            }
            if let Err(e) = wdl {
                first_err = first_err.or(Some(e));
            }
        }
        if let Ok(all) = f.read_all_partial() {
            assert_eq!(all, partial);
        }
        first_err.map_or_else(|| f.verify_checksums(), Err)
    };
    never_wrong(&path).unwrap();
    let bytes = fs::read(&path).unwrap();
    let bad = dir.join("bad.mdb");
    let mut r = Mix(17);
    let mut places: Vec<usize> = (0..HEADER_LEN).step_by(7).collect();
    places.extend((0..150).map(|_| r.below(bytes.len() as u64) as usize));
    for at in places {
        let mut b = bytes.clone();
        b[at] ^= 1 << (at % 8);
        fs::write(&bad, &b).unwrap();
        assert!(never_wrong(&bad).is_err(), "flip at {at} went unnoticed");
    }
}
