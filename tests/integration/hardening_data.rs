//! Errors that misled (issue 38), each a test on the reduced game `standard-4`
//! (built in about a second): a manifest that cannot be read, something other than
//! a regular file where a database file belongs, a removal that names a stone that
//! cannot be removed, impossible positions, a directory that is not complete,
//! a manifest that does not describe its files, and an opening search whose saved
//! values cannot be saved or read.

use crate::common::Scratch;
use crate::common::program::{run, run_with, s, text};
use millbase::table::probe::Tablebase;
use millbase::{Position, Rules, rules::fen};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Standard output and standard error of a run that must succeed.
fn succeeds(args: &[&str]) -> (String, String) {
    let out = run(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "{args:?} failed ({:?}):\n{stdout}{stderr}",
        out.status
    );
    (stdout, stderr)
}

/// Standard output and standard error of a run that must fail with an exit code
/// (not a signal) and no panic.
fn fails(args: &[&str]) -> (String, String) {
    let out = run(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let what = format!("{args:?}\nstdout: {stdout}\nstderr: {stderr}");
    assert!(!out.status.success(), "succeeded: {what}");
    assert!(out.status.code().is_some(), "killed by a signal: {what}");
    assert!(!stderr.contains("panicked"), "panic: {what}");
    (stdout, stderr)
}

/// The whole game of `standard-4` (both phases), built once by the program.
fn base() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = crate::common::scratch::lasting("base");
        // The fast form: the tests below read and rewrite its files directly.
        let args = [
            "build",
            "--quiet",
            "--rules",
            "standard-4",
            "--form",
            "fast",
        ];
        succeeds(&[&args[..], &["--db", s(&dir)]].concat());
        dir
    })
}

/// A copy of [`base`] (regular files only).
fn copy(name: &str) -> Scratch {
    let dir = Scratch::new(name);
    for e in std::fs::read_dir(base()).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    dir
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo has no other requirements.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn rules() -> &'static Rules {
    Rules::by_name("standard-4").unwrap()
}

/// A moving-phase position of `standard-4`: White (d5 e5 e4, no mill) to move, three
/// stones each.
const FEN_3_3: &str = "OOO*****/@@@*****/******** w m s 3 0 3 0 0 0 0 0 0 0 0 0 1";

/// What goes in the place of a file in the tests of non-regular files.
#[derive(Clone, Copy, Debug)]
enum Odd {
    Missing,
    Empty,
    Garbage,
    Directory,
    Fifo,
    DevZero,
    Dangling,
}

fn put(path: &Path, odd: Odd) {
    let _ = std::fs::remove_file(path);
    match odd {
        Odd::Missing => {}
        Odd::Empty => std::fs::write(path, b"").unwrap(),
        Odd::Garbage => std::fs::write(path, b"{\"rules\": [garbage").unwrap(),
        Odd::Directory => std::fs::create_dir(path).unwrap(),
        Odd::Fifo => mkfifo(path),
        Odd::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        Odd::Dangling => std::os::unix::fs::symlink("no-such-target.mdb", path).unwrap(),
    }
}

// ---------------------------------------------------------------------------------
// A manifest that cannot be read: the rules come from the files' headers.
// ---------------------------------------------------------------------------------

#[test]
fn without_a_readable_manifest_the_rules_come_from_the_files_headers() {
    let expected = {
        let (out, _) = succeeds(&["probe", "--db", s(base()), FEN_3_3]);
        out
    };
    for odd in [
        Odd::Missing,
        Odd::Empty,
        Odd::Garbage,
        Odd::Directory,
        Odd::Fifo,
    ] {
        let dir = copy(&format!("manifest-{odd:?}"));
        put(&dir.join("manifest.json"), odd);
        // The library (what `serve` and UCI open) reads the rules from the files.
        let tb = Tablebase::open(&dir).unwrap();
        assert_eq!(tb.rules().name, "standard-4", "{odd:?}");
        assert_eq!(
            tb.manifest_problem().is_some(),
            !matches!(odd, Odd::Missing)
        );
        let (out, err) = succeeds(&["probe", "--db", s(&dir), FEN_3_3]);
        assert_eq!(out, expected, "{odd:?}");
        assert!(!err.contains("another rule set"), "{odd:?}: {err}");
        if !matches!(odd, Odd::Missing) {
            // Why the manifest was not read is said, once.
            assert!(err.contains("manifest.json"), "{odd:?}: {err}");
        }
        let (out, err) = succeeds(&["verify", "--db", s(&dir), "--only", "3-3"]);
        assert!(out.contains("verify ok"), "{odd:?}: {out}{err}");
        let (out, err) = succeeds(&["stats", "--db", s(&dir)]);
        assert!(out.contains("3-3"), "{odd:?}: {out}{err}");
        assert!(!err.contains("another rule set"), "{odd:?}: {err}");
    }
}

// ---------------------------------------------------------------------------------
// Something other than a regular file in a database file's place.
// ---------------------------------------------------------------------------------

#[test]
fn a_data_file_that_is_not_a_regular_file_is_named_in_every_command() {
    for (odd, what) in [
        (Odd::Directory, "is a directory"),
        (Odd::Fifo, "is a FIFO"),
        (Odd::DevZero, "is a device"),
        (Odd::Dangling, "dangling symbolic link"),
    ] {
        let dir = copy(&format!("data-{odd:?}"));
        let file = dir.join("3-3.mdb");
        put(&file, odd);
        let named = |err: &str| {
            assert!(err.contains(s(&file)), "{odd:?}: {err}");
            assert!(err.contains(what), "{odd:?}: {err}");
            assert!(!err.contains("no database for"), "{odd:?}: {err}");
        };
        let (_, err) = fails(&["probe", "--db", s(&dir), FEN_3_3]);
        named(&err);
        let (_, err) = fails(&["analyze", "--db", s(&dir), FEN_3_3]);
        named(&err);
        let (_, err) = fails(&["verify", "--db", s(&dir)]);
        named(&err);
        let (_, err) = fails(&["stats", "--db", s(&dir)]);
        named(&err);
        let (_, err) = fails(&["info", "--check", s(&file)]);
        named(&err);
        // The engine says which file it searched around.
        let out = run_with(
            &["uci", "--rules", "standard-4", "--db", s(&dir)],
            format!("position fen {FEN_3_3}\ngo depth 2\n").as_bytes(),
        );
        let out = text(&out.stdout);
        let line = out
            .lines()
            .find(|l| l.starts_with("info string error: a database file is damaged"))
            .unwrap_or_else(|| panic!("{odd:?}: no damage reported:\n{out}"));
        named(line);
        // The library too.
        let tb = Tablebase::open(&dir).unwrap();
        let (pos, _) = fen::parse(rules(), FEN_3_3).unwrap();
        let err = tb.probe(&pos).unwrap_err().to_string();
        named(&err);
    }
}

#[test]
fn build_names_a_directory_in_a_files_place_before_any_work() {
    let dir = copy("build-dir");
    let file = dir.join("3-3.mdb");
    put(&file, Odd::Directory);
    let (_, err) = fails(&["build", "--quiet", "--rules", "standard-4", "--db", s(&dir)]);
    assert!(
        err.contains(s(&file)) && err.contains("is a directory, not a regular file"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
}

// ---------------------------------------------------------------------------------
// Plies and positions.
// ---------------------------------------------------------------------------------

#[test]
fn a_removal_of_a_stone_that_cannot_be_removed_says_why() {
    // White closes a7 d7 g7; d5 is empty.
    let (_, err) = fails(&["show", "startpos moves a7 d6 d7 f4 g7xd5"]);
    assert!(err.contains("d5 is not a removable stone"), "{err}");
    assert!(err.contains("d5 is empty"), "{err}");
    assert!(!err.contains("must place one"), "{err}");
    // White's own stone.
    let (_, err) = fails(&["show", "startpos moves a7 d6 d7 f4 g7xa7"]);
    assert!(err.contains("a7 holds your own stone"), "{err}");
    // A black stone in a mill while Black has one outside mills: Black has the
    // mill b6 d6 f6 and a stone on a1 (the standard
    // game: `show` plays nine stones a side).
    let (_, err) = fails(&["show", "startpos moves a7 b6 d7 d6 g1 f6xg1 g4 a1 g7xd6"]);
    assert!(err.contains("d6 stands in a mill"), "{err}");
    assert!(err.contains("a1"), "{err}");
    // A lone removal with none pending.
    let (_, err) = fails(&["show", "startpos moves a7 d6 d7 f4 g7 xf4 xd6"]);
    assert!(err.contains("no removal is pending"), "{err}");
    // A removal named on a ply that closes no mill.
    let (_, err) = fails(&["show", "startpos moves a7xd6"]);
    assert!(err.contains("a7 closes no mill"), "{err}");
}

#[test]
fn a_removal_pending_without_a_mill_is_refused() {
    // White to remove, but White has no mill on the board.
    let fen = "OOO*****/@@@*****/******** w m r 3 0 3 0 1 0 -1 -1 -1 -1 0 0 1";
    let (out, err) = fails(&["probe", "--db", s(base()), fen]);
    assert!(!out.contains("win"), "{out}");
    assert!(err.contains("no mill on the board"), "{err}");
    assert!(fen::parse(rules(), fen).is_err());
    // With White's mill c5 d5 e5 the same removal is a position.
    let ok = "OO*****O/@@@*****/******** w m r 3 0 3 0 1 0 -1 -1 -1 -1 0 0 1";
    assert!(fen::parse(rules(), ok).is_ok());
    succeeds(&["probe", "--db", s(base()), ok]);
    let mut pos: Position = fen::parse(rules(), FEN_3_3).unwrap().0;
    pos.pending_removal = true;
    assert!(pos.validate(rules()).is_err());
}

// ---------------------------------------------------------------------------------
// verify: what should be there, WDL-only directories, misnamed files.
// ---------------------------------------------------------------------------------

/// A repack into `--out` killed after its first files: the manifest records what the
/// run set out to write, and verify names what is missing and fails.
#[test]
fn verify_names_the_files_a_killed_run_did_not_write() {
    let out = Scratch::new("killed-repack");
    // A repack that stops after three files, as one killed there would (its
    // manifest is saved after each file): run it whole, then take the rest away.
    succeeds(&["repack", "--quiet", "--db", s(base()), "--out", s(&out)]);
    let mut gone = Vec::new();
    for e in std::fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".mdb") && !["3-3.mdb", "3-4.mdb", "4-3.mdb"].contains(&name.as_str()) {
            std::fs::remove_file(out.join(&name)).unwrap();
            gone.push(name);
        }
    }
    assert_eq!(gone.len(), 16);
    let (stdout, stderr) = fails(&["verify", "--db", s(&out)]);
    assert!(stdout.contains("verify FAILED"), "{stdout}{stderr}");
    assert!(!stdout.contains("verify ok"), "{stdout}");
    for name in &gone {
        assert!(stdout.contains(name.as_str()), "{name} not named: {stdout}");
    }

    // The manifest of a run that did not finish lists what it had still to write.
    let out = Scratch::new("killed-repack-pending");
    let sectors: Vec<_> = ["3-3", "3-4", "4-3", "4-4"]
        .iter()
        .map(|n| millbase::table::sector::Sector::parse(n).unwrap())
        .collect();
    let mut m = millbase::table::dir::manifest::Manifest::new(rules().name, rules().fingerprint());
    m.plan(&out, &sectors).unwrap();
    for f in ["3-3.mdb", "3-4.mdb", "4-3.mdb"] {
        std::fs::copy(base().join(f), out.join(f)).unwrap();
        let file = millbase::table::format::SubspaceFile::open(
            &out.join(f),
            &millbase::table::format::Expect::any(),
        )
        .unwrap();
        m.record(
            &out,
            millbase::table::dir::manifest::Entry::new(file.header(), 0.0),
        )
        .unwrap();
    }
    let saved = millbase::table::dir::manifest::Manifest::load(&out)
        .unwrap()
        .unwrap();
    assert_eq!(saved.pending, ["4-4"]);
    let (stdout, _) = fails(&["verify", "--db", s(&out)]);
    assert!(stdout.contains("4-4.mdb"), "{stdout}");
    // A run that finishes leaves nothing pending.
    let (_, _) = succeeds(&["repack", "--quiet", "--db", s(base()), "--out", s(&out)]);
    let saved = millbase::table::dir::manifest::Manifest::load(&out)
        .unwrap()
        .unwrap();
    assert!(saved.pending.is_empty(), "{:?}", saved.pending);
    let (stdout, _) = succeeds(&["verify", "--db", s(&out), "--only", "3-3"]);
    assert!(stdout.contains("verify ok"), "{stdout}");
}

#[test]
fn verify_checks_a_wdl_only_directory_against_successors() {
    let w = Scratch::new("wdl-only");
    let _ = std::fs::remove_dir_all(&w);
    succeeds(&[
        "pack",
        "--wdl-only",
        "--quiet",
        "--db",
        s(base()),
        "--out",
        s(&w),
    ]);
    let (stdout, stderr) = succeeds(&["verify", "--db", s(&w), "--only", "3-3"]);
    assert!(stdout.contains("verify ok"), "{stdout}{stderr}");
    assert!(stdout.contains("win/draw/loss"), "{stdout}");
    let (stdout, stderr) = succeeds(&["verify", "--db", s(&w), "--only", "2-2-2-2"]);
    assert!(stdout.contains("verify ok"), "{stdout}{stderr}");

    // One win of 3-3 stored as a draw: verify finds it.
    use millbase::table::format::{Expect, SubspaceFile, WriteOptions, write_subspace_with};
    let full = SubspaceFile::open(&base().join("3-3.mdb"), &Expect::any()).unwrap();
    let mut codes = full.read_all().unwrap();
    let idx = millbase::table::index::Index::for_rules(rules());
    let slot = (0..codes.len())
        .find(|&i| {
            let (own, opp) = idx.position(3, 3, i as u64);
            idx.index(own, opp) == i as u64 && codes[i] == millbase::Value::Win(3).code()
        })
        .expect("a canonical win in 3");
    codes[slot] = millbase::Value::Draw.code();
    let path = w.join("3-3.mdb");
    std::fs::remove_file(&path).unwrap();
    let opts = WriteOptions {
        wdl_only: true,
        ..WriteOptions::default()
    };
    write_subspace_with(&path, &full.header().meta, &codes, &opts).unwrap();
    let (stdout, stderr) = fails(&["verify", "--db", s(&w), "--only", "3-3"]);
    assert!(stdout.contains("verify FAILED"), "{stdout}{stderr}");
    assert!(stdout.contains("stored draw, expected win"), "{stdout}");
}

#[test]
fn info_check_refuses_a_file_named_for_another_sector() {
    let dir = Scratch::new("misnamed");
    let file = dir.join("3-3.mdb");
    std::fs::copy(base().join("3-4.mdb"), &file).unwrap();
    let (_, err) = fails(&["info", "--check", s(&file)]);
    assert!(err.contains("named for sector 3-3 but holds 3-4"), "{err}");
    // Correctly named, it passes.
    let file = dir.join("3-4.mdb");
    std::fs::copy(base().join("3-4.mdb"), &file).unwrap();
    succeeds(&["info", "--check", s(&file)]);
}

#[test]
fn repack_into_a_wdl_only_package_says_the_files_hold_distances() {
    let w = Scratch::new("repack-over-wdl");
    let _ = std::fs::remove_dir_all(&w);
    succeeds(&[
        "pack",
        "--wdl-only",
        "--quiet",
        "--db",
        s(base()),
        "--out",
        s(&w),
    ]);
    let m = millbase::table::dir::manifest::Manifest::load(&w)
        .unwrap()
        .unwrap();
    assert!(m.wdl_only);
    succeeds(&["repack", "--quiet", "--db", s(base()), "--out", s(&w)]);
    let m = millbase::table::dir::manifest::Manifest::load(&w)
        .unwrap()
        .unwrap();
    assert!(
        !m.wdl_only,
        "the manifest says WDL only over files with distances"
    );
    let tb = Tablebase::open(&w).unwrap();
    assert!(!tb.wdl_only());
    let (out, _) = succeeds(&["probe", "--db", s(&w), FEN_3_3]);
    assert!(out.contains(" in "), "a distance: {out}");
}

// ---------------------------------------------------------------------------------
// The opening search's saved values.
// ---------------------------------------------------------------------------------

/// The moving phase of `standard-4` only: placement positions are searched.
fn moving_only(name: &str) -> Scratch {
    let dir = Scratch::new(name);
    for e in std::fs::read_dir(base()).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let moving = name
            .strip_suffix(".mdb")
            .and_then(millbase::table::sector::Sector::parse)
            .is_some_and(|s| s.is_moving());
        if moving {
            std::fs::copy(base().join(&name), dir.join(&name)).unwrap();
        }
    }
    dir
}

#[test]
fn solve_answers_and_warns_when_its_values_cannot_be_saved() {
    let dir = moving_only("unsaved");
    // The saved values cannot be written (their temporary file's place is taken;
    // a read-only directory does the same for any user but root).
    std::fs::create_dir(dir.join("opening.bin.tmp")).unwrap();
    let (out, err) = succeeds(&["solve", "--db", s(&dir)]);
    assert!(out.contains("value        draw"), "{out}");
    assert!(err.starts_with("warning: "), "{err}");
    assert!(err.contains("not saved"), "{err}");
}

#[test]
fn a_damaged_opening_file_is_ignored_with_a_warning_and_rewritten() {
    let dir = moving_only("damaged-opening");
    let (out, _) = succeeds(&["solve", "--db", s(&dir)]);
    assert!(out.contains("saved"), "{out}");
    let expected = succeeds(&["probe", "--db", s(&dir), "startpos moves a7"]).0;
    // Damage the saved values.
    let path = dir.join("opening.bin");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let (out, err) = succeeds(&["probe", "--db", s(&dir), "startpos moves a7"]);
    assert_eq!(out, expected);
    assert!(
        err.contains("opening.bin") && err.contains("ignored"),
        "{err}"
    );
    // solve writes the file anew, and the warning goes.
    succeeds(&["solve", "--db", s(&dir)]);
    let (out, err) = succeeds(&["probe", "--db", s(&dir), "startpos moves a7"]);
    assert_eq!(out, expected);
    assert!(err.is_empty(), "{err}");
}

// ---------------------------------------------------------------------------------
// Found attacking it again.
// ---------------------------------------------------------------------------------

/// `--db` naming a file said "no database directory here; build one with
/// `millbase build --db FILE`", which cannot work.
#[test]
fn a_db_that_is_a_file_or_fifo_is_named_as_such() {
    let file = base().join("3-3.mdb");
    let (_, err) = fails(&["probe", "--db", s(&file), FEN_3_3]);
    assert!(err.contains("is a file, not a database directory"), "{err}");
    assert!(!err.contains("millbase build"), "{err}");
    let dir = Scratch::new("db-fifo");
    let fifo = dir.join("db");
    mkfifo(&fifo);
    let (_, err) = fails(&["stats", "--db", s(&fifo)]);
    assert!(err.contains("is a FIFO, not a database directory"), "{err}");
    let (_, err) = fails(&["probe", "--db", s(&dir.join("none")), FEN_3_3]);
    assert!(err.contains("no database directory here"), "{err}");
}

/// A FIFO in the place of a derived sector's marker (`k-l.derived`) hung every
/// command that opened the directory: the marker was read with a blocking open.
#[test]
fn a_fifo_for_a_derived_marker_does_not_hang() {
    let dir = copy("marker-fifo");
    std::fs::remove_file(dir.join("4-3.mdb")).unwrap();
    mkfifo(&dir.join("4-3.derived"));
    // A position of 3-4, whose file is there.
    let (out, _) = succeeds(&[
        "probe",
        "--db",
        s(&dir),
        "OOO*****/@@@@****/******** w m s 3 0 4 0 0 0 0 0 0 0 0 0 1",
    ]);
    assert!(!out.is_empty());
}
