//! `millbase pack --wdl-only`: the packed directory answers every WDL question as
//! the full one does, on the whole reduced game (`standard-4`, both phases), refuses
//! every distance with a clear error, resumes, and never writes into its source.

use crate::common::Scratch;
use millbase::search::engine::Endgame;
use millbase::search::engine::endgame::nominal;
use millbase::table::format::{Encoding, FormatError};
use millbase::table::index::Index;
use millbase::table::pack::derived::derive;
use millbase::table::pack::{PackError, PackOptions, pack_wdl_only};
use millbase::table::probe::{ProbeError, Tablebase};
use millbase::table::sector::Sector;
use millbase::{Position, Rules};
use std::path::Path;
use std::process::Command;

fn rules() -> &'static Rules {
    Rules::by_name("standard-4").unwrap()
}

/// The whole standard-4 game, built once per run (shared with other modules).
fn full() -> &'static Path {
    crate::common::standard_4()
}

/// The full directory packed WDL-only into a scratch directory.
fn packed(name: &str) -> Scratch {
    packed_with(name, PackOptions::default())
}

/// The full directory packed WDL-only with `opts` into a scratch directory.
fn packed_with(name: &str, opts: PackOptions) -> Scratch {
    let out = Scratch::new(&format!("wdlpack-{name}"));
    pack_wdl_only(full(), &out, Index::for_rules(rules()), opts, |_| {}).unwrap();
    out
}

const DONT_CARES: PackOptions = PackOptions {
    dont_cares: true,
    coding: None,
    ..PackOptions::DEFAULT
};

/// Every canonical slot of every sector of the full directory, as a position.
fn every_position(tb: &Tablebase) -> Vec<Position> {
    let idx = tb.index();
    let mut out = Vec::new();
    for s in tb.available_sectors() {
        let (k, l) = s.counts();
        for slot in 0..idx.size(k, l) {
            let (own, opp) = idx.position(k, l, slot);
            if idx.index(own, opp) == slot {
                out.push(s.position(own, opp));
            }
        }
    }
    out
}

/// A distance refused by name: a WDL-only file's, or a derived sector's.
fn is_wdl_only(e: &ProbeError) -> bool {
    matches!(
        e,
        ProbeError::Format(FormatError::WdlOnly { .. }) | ProbeError::Derived { .. }
    )
}

#[test]
fn every_wdl_probe_equals_the_full_directory() {
    every_wdl_probe_equals(&packed("every"));
}

#[test]
fn every_wdl_probe_with_dont_cares_equals_the_full_directory() {
    let out = packed_with("every-dc", DONT_CARES);
    // The fill changed stored results (else this test would prove nothing), and
    // only to results no better than the truth.
    let tb = Tablebase::open(full()).unwrap();
    let pack = Tablebase::open(&out).unwrap();
    let (mut changed, mut slots) = (0u64, 0u64);
    for s in tb.available_sectors() {
        let (f, p) = (tb.sector_file(s).unwrap(), pack.sector_file(s).unwrap());
        assert!(p.wdl_dont_cares() && !f.wdl_dont_cares());
        let (a, b) = (f.read_all_wdl().unwrap(), p.read_all_wdl().unwrap());
        let rank = |t: u16| [1, 2, 0][t as usize];
        for (x, y) in a.iter().zip(&b) {
            changed += (x != y) as u64;
        }
        let idx = tb.index();
        let (k, l) = s.counts();
        for (slot, (x, y)) in a.iter().zip(&b).enumerate() {
            let (own, opp) = idx.position(k, l, slot as u64);
            if idx.index(own, opp) == slot as u64 {
                assert!(
                    rank(*y) <= rank(*x),
                    "{s} slot {slot}: stored {y}, true {x}"
                );
            }
        }
        slots += a.len() as u64;
    }
    assert!(changed * 50 > slots, "{changed} of {slots} changed");
    let bytes = |d: &Path| -> u64 {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    };
    let plain = packed("every-plain");
    assert!(
        bytes(&out) < bytes(&plain),
        "{} {}",
        bytes(&out),
        bytes(&plain)
    );
    // Resumed: every file kept.
    let again = pack_wdl_only(full(), &out, tb.index(), DONT_CARES, |_| {}).unwrap();
    assert!(again.iter().all(|r| r.kept));
    std::fs::remove_dir_all(&plain).unwrap();
    every_wdl_probe_equals(&out);
}

/// Re-coded with the context model (format version 5), with and without
/// don't-cares: every WDL probe as the full directory's, every file version 5, and
/// a resumed pack keeps them.
#[test]
fn every_wdl_probe_of_model_coded_files_equals_the_full_directory() {
    for dont_cares in [false, true] {
        let opts = PackOptions {
            dont_cares,
            coding: Some(Encoding::Model),
            ..PackOptions::DEFAULT
        };
        let out = packed_with(&format!("model-{dont_cares}"), opts);
        let pack = Tablebase::open(&out).unwrap();
        for s in pack.available_sectors() {
            let f = pack.sector_file(s).unwrap();
            assert_eq!(f.header().version, 5, "{s}");
            assert_eq!(f.wdl_dont_cares(), dont_cares, "{s}");
        }
        let again = pack_wdl_only(full(), &out, pack.index(), opts, |_| {}).unwrap();
        assert!(again.iter().all(|r| r.kept));
        // No bigger than zstd's packing of the same fill, by more than an empty
        // prior's table entry per file; smaller where the model pays.
        let zstd = packed_with(
            &format!("zstd-{dont_cares}"),
            PackOptions {
                coding: Some(Encoding::Trits5),
                ..opts
            },
        );
        let z = Tablebase::open(&zstd).unwrap();
        // This small game's files are too small for the model to pay (the unit
        // tests of `write_wdl_only_chosen` and the 5-stone game's in
        // `tests/repack.rs` are not).
        for s in pack.available_sectors() {
            let (m, z) = (pack.sector_file(s).unwrap(), z.sector_file(s).unwrap());
            let (m, z) = (m.section_bytes().0, z.section_bytes().0);
            assert!(m <= z + 24, "{s}: {m} {z}");
        }
        drop((pack, z));
        std::fs::remove_dir_all(&zstd).unwrap();
        // Checks every probe, then removes the directory.
        every_wdl_probe_equals(&out);
    }
}

fn every_wdl_probe_equals(out: &Path) {
    let full = Tablebase::open(full()).unwrap();
    let pack = Tablebase::open(out).unwrap();
    assert!(pack.wdl_only() && !full.wdl_only());
    let mut answered = pack.available_sectors();
    answered.extend(pack.derived_sectors());
    answered.sort();
    assert_eq!(answered, full.available_sectors());
    assert!(!Endgame::has_distances(&pack) && Endgame::has_distances(&full));
    let positions = every_position(&full);
    assert!(positions.len() > 100_000, "{}", positions.len());
    let (mut wins, mut losses) = (0, 0);
    for pos in &positions {
        let value = full.probe(pos).unwrap();
        let wdl = pack.probe_wdl(pos).unwrap();
        assert_eq!(wdl, value.wdl(), "{pos:?}");
        assert_eq!(full.probe_wdl(pos).unwrap(), wdl);
        if !pos.pending_removal && pos.phase() == millbase::rules::position::Phase::Moving {
            let (own, opp) = (pos.own(), pos.opp());
            assert_eq!(pack.probe_wdl_sets(own, opp).unwrap(), wdl);
        }
        wins += (wdl == millbase::Wdl::Win) as u32;
        losses += (wdl == millbase::Wdl::Loss) as u32;
        // A distance is refused, by name.
        assert!(is_wdl_only(&pack.probe(pos).unwrap_err()));
        // The engine's covered nodes: the nominal value of the same result.
        assert_eq!(Endgame::probe(&pack, pos), Some(nominal(wdl)));
        assert_eq!(Endgame::probe(&full, pos), Some(value));
    }
    assert!(wins > 1000 && losses > 1000, "{wins} wins, {losses} losses");
    assert_eq!(pack.damage(), None);
    std::fs::remove_dir_all(out).unwrap();
}

#[test]
fn moves_without_distances_equal_the_full_directory() {
    moves_without_distances_equal(&packed("moves"));
    moves_without_distances_equal(&packed_with("moves-dc", DONT_CARES));
}

fn moves_without_distances_equal(out: &Path) {
    let full = Tablebase::open(full()).unwrap();
    let pack = Tablebase::open(out).unwrap();
    // Every 61st position keeps the test short; all sectors are met.
    for pos in every_position(&full).iter().step_by(61) {
        let with: Vec<_> = full
            .moves(pos)
            .unwrap()
            .into_iter()
            .map(|(p, v)| (p, v.wdl()))
            .collect();
        let without = pack.moves_wdl(pos).unwrap();
        // The same plies with the same results; best first in both.
        let mut a = with.clone();
        let mut b = without.clone();
        a.sort_by_key(|m| format!("{m:?}"));
        b.sort_by_key(|m| format!("{m:?}"));
        assert_eq!(a, b, "{pos:?}");
        assert!(without.windows(2).all(|w| w[0].1 >= w[1].1));
        assert_eq!(full.moves_wdl(pos).unwrap(), without);
        if !without.is_empty() {
            assert!(is_wdl_only(&pack.moves(pos).unwrap_err()));
            assert!(is_wdl_only(&pack.best_ply(pos).unwrap_err()));
        }
    }
    std::fs::remove_dir_all(out).unwrap();
}

/// `millbase pack --derive`: per mirrored pair one side, and the placement
/// sectors of one ply parity, left out and given by one ply of search; every WDL
/// probe and every ply's result as the full directory's, distances refused by
/// name; idempotent, kept by a resumed pack, and a file left beside its marker (a
/// crash) is removed by the next run.
#[test]
fn derived_sectors_answer_every_wdl_probe_as_the_full_directory() {
    let scratch = Scratch::new("wdlpack-derived-sectors-answer-every");
    let idx = Index::for_rules(rules());
    let opts = PackOptions {
        dont_cares: true,
        coding: Some(Encoding::Model),
        ..PackOptions::DEFAULT
    };
    let out = packed_with("derived", opts);
    let copy = packed_with("derived-copy", opts);
    let bytes = |d: &Path| -> u64 {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    };
    let before = bytes(&out);
    let derived: Vec<Sector> = derive(&out, idx)
        .unwrap()
        .iter()
        .map(|d| d.sector)
        .collect();
    let pack = Tablebase::open(&out).unwrap();
    assert_eq!(pack.derived_sectors(), derived);
    // Per mirrored pair at most one side, never a subspace without a mirror; one
    // placement parity; and every ply of a derived sector leads into a stored
    // one (or ends the game), so a derived probe is one ply of stored probes.
    let sectors = Tablebase::open(full()).unwrap().available_sectors();
    // A side to move that flies (three stones) is stored where its mirror could
    // be derived: 4-3 is, and 3-4 not.
    for s in derived.iter().filter(|s| s.is_moving()) {
        assert_ne!(s.k, s.l, "{s}");
        assert!(!derived.contains(&Sector::moving(s.l, s.k)), "{s}");
        assert_ne!(s.k, 3, "{s}: its side to move flies");
    }
    assert!(derived.contains(&Sector::moving(4, 3)), "{derived:?}");
    let parity = |s: &Sector| (s.hk + s.hl) % 2;
    let dropped: Vec<_> = derived.iter().filter(|s| !s.is_moving()).collect();
    assert!(dropped.iter().all(|s| parity(s) == parity(dropped[0])));
    for s in &derived {
        let (quiet, capture) = s.children();
        for c in [Some(quiet), capture].into_iter().flatten() {
            if c.is_valid(rules()) {
                assert!(sectors.contains(&c) && !derived.contains(&c), "{s} -> {c}");
            }
        }
    }
    let moving_pairs = sectors
        .iter()
        .filter(|s| s.is_moving() && s.k < s.l)
        .count();
    let derived_moving = derived.iter().filter(|s| s.is_moving()).count();
    assert!(derived_moving * 3 >= moving_pairs * 2, "{derived:?}");
    assert!(!dropped.is_empty(), "{derived:?}");
    assert!(bytes(&out) < before, "{} {before}", bytes(&out));
    // Again: nothing more, nothing removed; a resumed pack writes no derived file.
    let again = derive(&out, idx).unwrap();
    assert!(again.iter().all(|d| d.bytes == 0));
    assert_eq!(again.len(), derived.len());
    let resumed = pack_wdl_only(full(), &out, idx, opts, |_| {}).unwrap();
    assert!(resumed.iter().all(|r| r.kept));
    assert!(derived.iter().all(|s| !out.join(s.file_name()).exists()));
    // A crash between the marker and the removal: the file is back beside its
    // marker; probes read it, and the next run removes it.
    let s = derived[0];
    std::fs::copy(copy.join(s.file_name()), out.join(s.file_name())).unwrap();
    assert!(!Tablebase::open(&out).unwrap().is_derived(s));
    let redo = derive(&out, idx).unwrap();
    assert!(redo.iter().any(|d| d.sector == s && d.bytes > 0));
    assert!(Tablebase::open(&out).unwrap().is_derived(s));
    // A full directory is refused, untouched.
    let err = derive(full(), idx).unwrap_err();
    assert!(matches!(err, PackError::FullFileInOutput { .. }), "{err}");
    std::fs::remove_dir_all(&copy).unwrap();
    let moves = scratch.join("derived-moves");
    std::fs::create_dir_all(&moves).unwrap();
    for e in std::fs::read_dir(&out).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), moves.join(e.file_name())).unwrap();
    }
    moves_without_distances_equal(&moves);
    every_wdl_probe_equals(&out);
}

#[test]
fn pack_resumes_and_refuses_its_source_and_full_files() {
    let scratch = Scratch::new("wdlpack-pack-resumes-and-refuses");
    let idx = Index::for_rules(rules());
    let out = packed("resume");
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".mdb"))
        .collect();
    assert!(names.len() > 10);
    let before: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(out.join(n)).unwrap())
        .collect();
    // An interrupted pack: one file missing, a half-written temporary file.
    std::fs::remove_file(out.join(&names[0])).unwrap();
    std::fs::write(out.join(format!("{}.tmp", names[1])), b"MILLBASE half").unwrap();
    // A damaged packed file is written again.
    let mut bad = before[2].clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    std::fs::write(out.join(&names[2]), &bad).unwrap();
    let reports = pack_wdl_only(full(), &out, idx, PackOptions::default(), |_| {}).unwrap();
    let written: Vec<String> = reports
        .iter()
        .filter(|r| !r.kept)
        .map(|r| r.sector.file_name())
        .collect();
    let mut expect = vec![names[0].clone(), names[2].clone()];
    expect.sort();
    let mut got = written.clone();
    got.sort();
    assert_eq!(got, expect);
    for (n, b) in names.iter().zip(&before) {
        assert_eq!(&std::fs::read(out.join(n)).unwrap(), b, "{n}");
    }
    // Never into the source, under any spelling of it.
    let same = full().join(".");
    let err = pack_wdl_only(full(), &same, idx, PackOptions::default(), |_| {}).unwrap_err();
    assert!(matches!(err, PackError::SameDirectory { .. }), "{err}");
    // Never over a full file.
    let mixed = scratch.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    std::fs::copy(full().join("3-3.mdb"), mixed.join("3-3.mdb")).unwrap();
    let err = pack_wdl_only(full(), &mixed, idx, PackOptions::default(), |_| {}).unwrap_err();
    assert!(matches!(err, PackError::FullFileInOutput { .. }), "{err}");
    assert_eq!(
        std::fs::read(mixed.join("3-3.mdb")).unwrap(),
        std::fs::read(full().join("3-3.mdb")).unwrap()
    );
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&mixed).unwrap();
}

fn millbase(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_command_line_on_a_packed_directory() {
    let scratch = Scratch::new("wdlpack-the-command-line-on");
    let out = scratch.join("cli");
    let (src, dst) = (full().to_str().unwrap(), out.to_str().unwrap());
    let (ok, stdout, stderr) = millbase(&["pack", "--wdl-only", "--db", src, "--out", dst]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("packed 19 files"), "{stdout}");
    let (ok, _, stderr) = millbase(&["pack", "--wdl-only", "--db", src, "--out", src]);
    assert!(!ok && stderr.contains("source database"), "{stderr}");
    let (ok, _, stderr) = millbase(&["pack", "--db", src, "--out", dst]);
    assert!(!ok && stderr.contains("--wdl-only"), "{stderr}");
    // One sector, re-coded by the model; a name that is no sector is refused.
    let one = scratch.join("cli-one");
    let one_dst = one.to_str().unwrap();
    let one_pack = |only: &str, extra: &[&str]| {
        let args = [
            "pack",
            "--wdl-only",
            "--db",
            src,
            "--out",
            one_dst,
            "--only",
            only,
        ];
        millbase(&[&args[..], extra].concat())
    };
    let (ok, stdout, stderr) = one_pack("3-3", &["--wdl-coding", "model"]);
    assert!(ok && stdout.contains("packed 1 files"), "{stdout} {stderr}");
    let (ok, _, stderr) = one_pack("3-x", &[]);
    assert!(!ok && stderr.contains("is not a sector"), "{stderr}");
    std::fs::remove_dir_all(&one).unwrap();
    // A won moving-phase position and a placement position.
    for pos in [
        "O*O*****/@*@*****/O*****@* w m s 3 0 3 0 0 0 -1 -1 -1 -1 0 0 1",
        "startpos moves d6 d5 a7 c4",
    ] {
        let (ok, full_text, stderr) = millbase(&["analyze", "--db", src, "--json", pos]);
        assert!(ok, "{stderr}");
        let (ok, pack_text, stderr) = millbase(&["analyze", "--db", dst, "--json", pos]);
        assert!(ok, "{stderr}");
        let full: serde_json::Value = serde_json::from_str(&full_text).unwrap();
        let pack: serde_json::Value = serde_json::from_str(&pack_text).unwrap();
        assert_eq!(pack["value"], full["value"], "{pos}");
        let strip = |v: &serde_json::Value| -> Vec<(String, String)> {
            let mut m: Vec<_> = v["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m["ply"].to_string(), m["value"].to_string()))
                .collect();
            m.sort();
            m
        };
        assert_eq!(strip(&pack), strip(&full), "{pos}");
        assert!(pack["moves"][0].get("distance").is_none());
        let (ok, _, stderr) = millbase(&["probe", "--db", dst, pos]);
        assert!(!ok && stderr.contains("pack --wdl-only"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    let (ok, stdout, _) = millbase(&["info", &format!("{dst}/3-3.mdb"), "--check"]);
    assert!(
        ok && stdout.contains("version 2") && stdout.contains("WDL-only"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}
