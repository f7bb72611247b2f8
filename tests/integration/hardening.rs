//! The failures found when the program was attacked (issue 10), each a test: the
//! manifest as derived data, edited headers, FIFOs and directories where files
//! belong, error text, impossible input, lazy allocation, mutated FENs, and one
//! `Tablebase` probed from many threads at once.

use crate::common::program::{fails, run, text};
use crate::common::{Rng, Scratch};
use millbase::table::build::file_name;
use millbase::table::dir::manifest::Manifest;
use millbase::table::format::xxh64;
use millbase::table::index::Index;
use millbase::table::probe::Tablebase;
use millbase::{Color, Game, Position, Rules, rules::fen};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

fn succeeds(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Pairs 3-3 and 4-3 (files 3-3, 4-3, 3-4), built once by the program.
fn small() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = crate::common::scratch::lasting("small");
        succeeds(&["build", "--quiet", "--max-stones", "7", "--db", s(&dir)]);
        dir
    })
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn small_copy(name: &str) -> Scratch {
    let dir = Scratch::new(name);
    for f in ["3-3.mdb", "3-4.mdb", "4-3.mdb", "manifest.json"] {
        std::fs::copy(small().join(f), dir.join(f)).unwrap();
    }
    dir
}

fn names(dir: &Path) -> Vec<String> {
    Manifest::load(dir)
        .unwrap()
        .expect("a manifest")
        .subspaces
        .iter()
        .map(|e| e.name.clone())
        .collect()
}

// ---------------------------------------------------------------------------------
// 4. The manifest is derived data.
// ---------------------------------------------------------------------------------

#[test]
fn a_missing_manifest_is_rebuilt_from_the_files() {
    let dir = small_copy("manifest-missing");
    let good = std::fs::read(dir.join("manifest.json")).unwrap();
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    succeeds(&["build", "--quiet", "--max-stones", "7", "--db", s(&dir)]);
    assert_eq!(names(&dir), ["3-3", "3-4", "4-3"]);
    // stats works from the files with or without the manifest.
    let stats = succeeds(&["stats", "--db", s(&dir)]);
    assert!(stats.contains("3-4"), "{stats}");
    // With one pair missing too, every file is listed, not only the rebuilt pair.
    std::fs::remove_file(dir.join("manifest.json")).unwrap();
    std::fs::remove_file(dir.join("3-4.mdb")).unwrap();
    succeeds(&["build", "--quiet", "--max-stones", "7", "--db", s(&dir)]);
    assert_eq!(names(&dir), ["3-3", "3-4", "4-3"]);
    // Same files (determinism): the manifest's numbers are the same too.
    let fresh: Manifest =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let old: Manifest = serde_json::from_slice(&good).unwrap();
    for (a, b) in fresh.subspaces.iter().zip(&old.subspaces) {
        assert_eq!(
            (
                &a.name,
                &a.checksum,
                a.counts.wins,
                a.counts.losses,
                a.counts.draws
            ),
            (
                &b.name,
                &b.checksum,
                b.counts.wins,
                b.counts.losses,
                b.counts.draws
            )
        );
    }
}

#[test]
fn a_garbage_manifest_is_rebuilt_and_never_trusted() {
    let dir = small_copy("manifest-garbage");
    std::fs::write(
        dir.join("manifest.json"),
        [0xff, 0xfe, 0x00, 0x81, 0xc3, 0x28],
    )
    .unwrap();
    fails(&["stats", "--db", "/nonexistent-millbase-dir"]);
    // stats does not need it ...
    let stats = succeeds(&["stats", "--db", s(&dir)]);
    assert!(stats.contains("4-3"), "{stats}");
    // ... and build replaces it.
    succeeds(&["build", "--quiet", "--max-stones", "7", "--db", s(&dir)]);
    assert_eq!(names(&dir), ["3-3", "3-4", "4-3"]);
    // A manifest whose numbers disagree with the files: stats prints the files'.
    let path = dir.join("manifest.json");
    let mut m = Manifest::load(&dir).unwrap().unwrap();
    let real = m.subspaces[0].counts.wins;
    m.subspaces[0].counts.wins = 987_654_321;
    std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
    let stats = succeeds(&["stats", "--db", s(&dir), "--json"]);
    assert!(!stats.contains("987654321"), "{stats}");
    assert!(stats.contains(&real.to_string()), "{stats}");
    // And build puts the manifest right.
    succeeds(&["build", "--quiet", "--max-stones", "7", "--db", s(&dir)]);
    assert_eq!(
        Manifest::load(&dir).unwrap().unwrap().subspaces[0]
            .counts
            .wins,
        real
    );
}

// ---------------------------------------------------------------------------------
// 5. A header edited with its checksum recomputed is not "finished".
// ---------------------------------------------------------------------------------

/// Rewrites bytes of the header of `path` and recomputes the header checksum.
fn edit_header(path: &Path, edit: impl FnOnce(&mut [u8])) {
    let mut b = std::fs::read(path).unwrap();
    edit(&mut b[..256]);
    let sum = xxh64(&b[..248]);
    b[248..256].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(path, b).unwrap();
}

#[test]
fn edited_headers_are_rebuilt_not_skipped() {
    type Edit = (&'static str, fn(&mut [u8]));
    let edits: [Edit; 4] = [
        // WDL section encoding Trits5 -> Bits2.
        ("encoding", |h| {
            h[104 + 4..104 + 8].copy_from_slice(&2u32.to_le_bytes())
        }),
        // A foreign rules fingerprint.
        ("fingerprint", |h| h[48] ^= 1),
        // Another slot count (and block size, so the geometry stays consistent).
        ("slots", |h| {
            let size = u64::from_le_bytes(h[64..72].try_into().unwrap());
            h[64..72].copy_from_slice(&(size - 1).to_le_bytes());
        }),
        // Counts that do not fit the subspace.
        ("counts", |h| {
            h[72..80].copy_from_slice(&u64::MAX.to_le_bytes())
        }),
    ];
    for (name, edit) in edits {
        let dir = small_copy(&format!("header-{name}"));
        let file = dir.join("3-3.mdb");
        let good = std::fs::read(&file).unwrap();
        edit_header(&file, edit);
        let err = fails(&["info", s(&file), "--check"]);
        assert!(err.contains("3-3.mdb"), "{name}: {err}");
        // The probe library checks what it reads by (its counts are only a record).
        if name != "counts" {
            fails(&[
                "probe",
                "O*O*O***/@*@*@***/******** w m s 3 0 3 0 0 0 -1 -1 -1 -1 0 0 1",
                "--db",
                s(&dir),
            ]);
        }
        let out = succeeds(&["build", "--max-stones", "7", "--db", s(&dir)]);
        assert!(
            !out.contains("3-3         210140   skipped"),
            "{name}: {out}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), good, "{name}: not rebuilt");
        let info = succeeds(&["info", s(&file), "--check"]);
        assert!(info.contains("checksums      ok"), "{info}");
    }
}

// ---------------------------------------------------------------------------------
// 6. Anything that is not a regular file is refused, never waited on.
// ---------------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn fifos_and_directories_are_refused() {
    let dir = Scratch::new("fifo");
    let fifo = dir.join("3-3.mdb");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo has no other requirements.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let err = fails(&["info", s(&fifo)]);
    assert!(err.contains("FIFO, not a regular file"), "{err}");
    let err = fails(&["verify", "--db", s(&dir)]);
    assert!(err.contains("FIFO"), "{err}");
    fails(&["stats", "--db", s(&dir)]);
    // A manifest that is a FIFO does not hang stats either.
    let mdir = small_copy("fifo-manifest");
    std::fs::remove_file(mdir.join("manifest.json")).unwrap();
    let c = std::ffi::CString::new(mdir.join("manifest.json").to_str().unwrap()).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    succeeds(&["stats", "--db", s(&mdir)]);
    // build does not take the FIFO for a finished file: it builds 3-3 in its place.
    succeeds(&["build", "--quiet", "--only", "3-3", "--db", s(&dir)]);
    assert!(std::fs::metadata(&fifo).unwrap().is_file());
    // A directory.
    let err = fails(&["info", s(&dir)]);
    assert!(err.contains("is a directory, not a regular file"), "{err}");
}

// ---------------------------------------------------------------------------------
// 8. Error text.
// ---------------------------------------------------------------------------------

#[test]
fn error_text_says_each_thing_once_and_names_it() {
    let err = fails(&["moves", "startpos", "moves", "a8"]);
    assert_eq!(err.matches("'a8' is not a point").count(), 1, "{err}");
    let err = fails(&[
        "show",
        "********/********/******** w p p 0 9 0 9 0 2 -1 -1 -1 -1 0 0 1",
    ]);
    assert!(err.contains("field 10"), "{err}");
    let err = fails(&["moves", "startpos", "moves", "d6", "f4", "d6"]);
    assert!(err.contains("d6 is occupied by your own stone"), "{err}");
    let err = fails(&["moves", "startpos", "moves", "d6", "f4", "f4"]);
    assert!(err.contains("f4 is occupied by an opponent stone"), "{err}");
    let err = fails(&["info", "/"]);
    assert!(err.contains("directory"), "{err}");
    assert!(!err.contains("No such device"), "{err}");
}

/// A usage error is one line that names what is wrong (a missing argument is on
/// clap's second line) and the help of the command it was given to.
#[test]
fn usage_errors_name_the_missing_argument_and_the_command_help() {
    for (cmd, missing) in [("probe", "<POS>"), ("show", "<POS>"), ("perft", "<DEPTH>")] {
        let err = fails(&[cmd]);
        assert!(
            err.contains("not provided") && err.contains(missing),
            "{err}"
        );
        assert!(err.contains(&format!("'millbase {cmd} --help'")), "{err}");
    }
    let err = fails(&["build", "--form", "huge"]);
    assert!(err.contains("'huge'") && err.contains("small"), "{err}");
}

#[test]
fn move_time_over_the_documented_maximum_is_refused() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"setoption name MoveTimeMs value 3600001\nsetoption name MoveTimeMs value 3600000\nquit\n")
        .unwrap();
    let out = text(&child.wait_with_output().unwrap().stdout);
    let errors: Vec<&str> = out.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{out}");
    assert!(
        errors[0].contains("3600001") && errors[0].contains("3600000"),
        "{out}"
    );
    assert!(!out.contains("18446744073709551615"), "{out}");
}

// ---------------------------------------------------------------------------------
// 9. Impossible input.
// ---------------------------------------------------------------------------------

#[test]
fn impossible_input_is_refused_naming_the_field() {
    let cases: [(&str, &str); 11] = [
        // Moving phase with 2 stones a side.
        (
            "O*O*****/@*@*****/******** w m s 2 0 2 0 0 0 -1 -1 -1 -1 0 0 1",
            "field 5",
        ),
        (
            "O*O*O***/@*@*****/******** w m s 3 0 2 0 0 0 -1 -1 -1 -1 0 0 1",
            "field 7",
        ),
        // No stones at all in the moving phase.
        (
            "********/********/******** w m s 0 0 0 0 0 0 -1 -1 -1 -1 0 0 1",
            "field 5",
        ),
        // A removal pending for a side with 2 stones.
        (
            "O*O*****/@*@*@***/******** w m r 2 0 3 0 1 0 -1 -1 -1 -1 0 0 1",
            "field 5",
        ),
        // Fields 11-15 out of range.
        (
            "********/********/******** w p p 0 9 0 9 0 0 57 -1 -1 -1 0 0 1",
            "field 11",
        ),
        (
            "********/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -2 0 0 1",
            "field 14",
        ),
        (
            "********/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 12345 0 1",
            "field 15",
        ),
        // A wrong phase, a wrong action.
        (
            "********/********/******** w m p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
            "field 3",
        ),
        (
            "********/********/******** w p s 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
            "field 4",
        ),
        (
            "O*O*O***/@*@*@***/******** w m p 3 0 3 0 0 0 -1 -1 -1 -1 0 0 1",
            "field 4",
        ),
        // An unknown extension token.
        (
            "********/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1 foo:bar",
            "foo:bar",
        ),
    ];
    for (fen, field) in cases {
        let err = fails(&["show", fen]);
        assert!(err.contains(field), "{fen}: {err}");
        fails(&["probe", fen, "--db", "/nonexistent-millbase-dir"]);
    }
    let err = fails(&["arena", "random", "random", "--games", "0"]);
    assert!(err.contains("--games"), "{err}");
    let err = fails(&[
        "build",
        "--threads",
        "0",
        "--db",
        "/nonexistent-millbase-dir",
    ]);
    assert!(err.contains("--threads"), "{err}");
}

// ---------------------------------------------------------------------------------
// 11. No search table for a probe that needs no search.
// ---------------------------------------------------------------------------------

#[test]
fn a_table_size_the_machine_cannot_hold_is_refused_before_the_probe() {
    // A table of 1 TiB cannot be had: refused with the most this machine takes,
    // even where the probe would not need the table (a size typed is checked).
    let e = fails(&[
        "probe",
        "O*O*O***/@*@*@***/******** w m s 3 0 3 0 0 0 -1 -1 -1 -1 0 0 1",
        "--db",
        s(small()),
        "--table-mib",
        "1048576",
    ]);
    assert!(e.contains("--table-mib 1048576 is more than"), "{e}");
    assert!(e.contains("give at most"), "{e}");
}

// ---------------------------------------------------------------------------------
// Must hold: mutated FENs, many threads on one Tablebase.
// ---------------------------------------------------------------------------------

/// A FEN mutated: fields replaced, dropped, duplicated, swapped, characters
/// changed, numbers pushed out of range.
fn mutate(rng: &mut Rng, fen: &str) -> String {
    const TOKENS: [&str; 24] = [
        "",
        "-1",
        "0",
        "1",
        "2",
        "3",
        "9",
        "10",
        "24",
        "-2",
        "99999999999999999999",
        "w",
        "b",
        "p",
        "m",
        "o",
        "r",
        "s",
        "x",
        "ids:nodes",
        "foo:bar",
        "O",
        "@@@@@@@@",
        "é",
    ];
    let mut f: Vec<String> = fen.split_whitespace().map(String::from).collect();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(f.len());
        match rng.below(7) {
            0 => f[i] = TOKENS[rng.below(TOKENS.len())].to_string(),
            1 => {
                f.remove(i);
            }
            2 => f.insert(i, TOKENS[rng.below(TOKENS.len())].to_string()),
            3 => {
                let j = rng.below(f.len());
                f.swap(i, j);
            }
            4 => {
                let mut chars: Vec<char> = f[i].chars().collect();
                if !chars.is_empty() {
                    let at = rng.below(chars.len());
                    chars[at] = ['O', '@', '*', '/', '0', '-', 'é', 'X'][rng.below(8)];
                }
                f[i] = chars.into_iter().collect();
            }
            5 => f[i] = (rng.next() as i64 % 30 - 5).to_string(),
            _ => f.push(TOKENS[rng.below(TOKENS.len())].to_string()),
        }
    }
    f.join(" ")
}

#[test]
fn thousands_of_mutated_fens_give_one_line_errors_and_no_panic() {
    let r = Rules::standard();
    // Seeds: FENs of positions along random games, both phases.
    let mut rng = Rng::new(0x5eed_1234_abcd_0001);
    let mut seeds = Vec::new();
    for _ in 0..20 {
        let mut game = Game::parse(r, "startpos").unwrap();
        for _ in 0..40 {
            let legal = game.position().legal_plies(r);
            if legal.is_empty() {
                break;
            }
            let ply = legal[rng.below(legal.len())];
            game.play(r, ply);
            seeds.push(fen::format(r, game.position(), game.counters));
        }
    }
    let mut refused = 0;
    let mut cli = Vec::new();
    for i in 0..5000 {
        let fen = mutate(&mut rng, &seeds[i % seeds.len()]);
        match fen::parse(r, &fen) {
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains('\n') && !msg.is_empty(), "{fen}: {msg:?}");
                refused += 1;
                if i % 50 == 0 {
                    cli.push(fen.clone());
                }
            }
            Ok((pos, counters)) => {
                // Whatever is accepted is a possible position that reads back the same.
                pos.validate(r).unwrap();
                let again = fen::format(r, &pos, counters);
                assert_eq!(fen::parse(r, &again).unwrap(), (pos, counters), "{fen}");
            }
        }
        let _ = Game::parse(r, &format!("{fen} moves d6 a1-a4 xg7"));
    }
    assert!(refused > 2500, "only {refused} of 5000 refused");
    // A sample through the program: one line, no panic, a non-zero exit.
    for fen in &cli {
        fails(&["show", fen]);
    }
}

#[test]
fn one_tablebase_answers_many_threads_at_once() {
    let dir = small();
    let idx = Index::standard();
    // The expected values, from a Tablebase of its own, one thread.
    let mut rng = Rng::new(0xdead_beef_cafe_f00d);
    let subspaces = [(3u32, 3u32), (3, 4), (4, 3)];
    let queries: Vec<(u32, u32)> = (0..20_000)
        .map(|_| {
            let (k, l) = subspaces[rng.below(3)];
            let slot = rng.next() % idx.size(k, l);
            idx.position(k, l, slot)
        })
        .collect();
    let reference = Tablebase::open(dir).unwrap();
    let expected: Vec<_> = queries
        .iter()
        .map(|&(own, opp)| reference.probe_sets(own, opp).unwrap())
        .collect();
    // A fresh Tablebase, so that the threads race to map the files too.
    let tb = Tablebase::open(dir).unwrap();
    let start = std::sync::Barrier::new(8);
    std::thread::scope(|scope| {
        for t in 0..8 {
            let (tb, start, queries, expected) = (&tb, &start, &queries, &expected);
            scope.spawn(move || {
                start.wait();
                for i in (0..queries.len()).map(|i| (i * 7 + t * 2503) % queries.len()) {
                    let (own, opp) = queries[i];
                    assert_eq!(tb.probe_sets(own, opp).unwrap(), expected[i]);
                    assert_eq!(tb.probe_wdl_sets(own, opp).unwrap(), expected[i].wdl());
                    if i % 64 == 0 {
                        let pos = Position::moving(Color::White, own, opp);
                        if !pos.legal_plies(Rules::standard()).is_empty() {
                            tb.best_ply(&pos).unwrap();
                        }
                    }
                }
            });
        }
    });
    let _ = file_name(3, 3);
}

// ---------------------------------------------------------------------------------
// 1, 3, 7: the protocol. 2, 10: engines that die or fall silent.
// ---------------------------------------------------------------------------------

/// Feeds `input` to `millbase ARGS uci` and returns its standard output.
fn uci_session(args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .arg("uci")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "uci exited with {:?}", out.status);
    text(&out.stdout)
}

#[test]
fn a_line_that_is_not_utf8_is_an_error_and_the_engine_goes_on() {
    let out = uci_session(&[], b"isready\nbogus \xe9t\xe9\nisready\n");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "readyok");
    assert!(
        lines[1].starts_with("info string error: ") && lines[1].contains("UTF-8"),
        "{out}"
    );
    assert_eq!(lines[2], "readyok");
}

#[test]
fn a_table_the_machine_cannot_hold_is_refused_and_the_old_one_kept() {
    // 65536 MiB is the documented maximum and more than this machine (24 GiB) has.
    let out = uci_session(
        &[],
        b"setoption name Hash value 65536\nisready\ngo depth 2\n",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("info string error: Hash 65536"),
        "{out}"
    );
    assert!(lines[0].contains("stays at 16 MiB"), "{out}");
    assert_eq!(lines[1], "readyok");
    assert!(
        out.lines().last().unwrap().starts_with("bestmove "),
        "it still searches: {out}"
    );
}

#[test]
fn a_damaged_file_is_reported_not_searched_around() {
    let dir = small_copy("damaged-engine");
    // Damage the middle of 3-3's data: its block checksums fail when read.
    let path = dir.join(file_name(3, 3));
    let mut bytes = std::fs::read(&path).unwrap();
    for i in (bytes.len() / 2..bytes.len() - 8).step_by(512) {
        bytes[i] ^= 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let rules = Rules::standard();
    let a = |n: &str| 1u32 << rules.point(n).unwrap();
    let pos = Position::moving(
        Color::White,
        a("a1") | a("d1") | a("g4"),
        a("a7") | a("d7") | a("c4"),
    );
    let fen = fen::format(rules, &pos, Default::default());
    let out = uci_session(
        &["--db", s(&dir)],
        format!("position fen {fen}\ngo depth 3\n").as_bytes(),
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("info string error: a database file is damaged")),
        "{out}"
    );
    assert!(
        out.lines().last().unwrap().starts_with("bestmove "),
        "{out}"
    );
    // In the arena, the engine player stops the match with the damage as the error.
    let err = fails(&[
        "arena",
        "engine:depth=2",
        "random",
        "--games",
        "2",
        "--db",
        s(&dir),
        "--quiet",
        "--openings",
        "random:0",
        "--start",
        &fen,
    ]);
    assert!(err.contains("damaged"), "{err}");
}

/// An executable shell script `engine.sh` in a scratch directory (returned with it).
fn script(name: &str, body: &str) -> (Scratch, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new(name);
    let path = dir.join("engine.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

#[test]
fn an_engine_that_dies_is_an_error_naming_it_not_a_signal() {
    let (_dir, after_uciok) = script("dies", "read l; echo uciok; exit 0\n");
    for engine in ["/bin/true", "/bin/false", s(&after_uciok)] {
        let spec = format!("uci:{engine}");
        let err = fails(&["arena", &spec, "random", "--games", "2", "--quiet"]);
        // Depending on timing the arena sees the exit or the closed pipe first.
        let said = err.contains("exited") || err.contains("stopped reading its input");
        assert!(err.contains(engine) && said, "{err}");
    }
}

#[test]
fn an_engine_that_never_answers_go_loses_as_silent_after_its_timeout_and_the_run_goes_on() {
    let (_dir, silent) = script(
        "silent",
        "while read l; do case \"$l\" in uci) echo uciok;; isready) echo readyok;; quit) exit 0;; esac; done\n",
    );
    let spec = format!("uci:depth=2,timeout=1:{}", s(&silent));
    // With the old fixed 300 s this would outlast `run`'s two-minute hang guard.
    let out = run(&[
        "arena", &spec, "random", "--games", "2", "--quiet", "--json",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["b_wins"], 2, "{stdout}");
    assert_eq!(summary["forfeits"], 2, "{stdout}");
    let endings = summary["engine_endings"].as_array().unwrap();
    assert_eq!(endings.len(), 2);
    assert!(endings.iter().all(|e| {
        let e = e.as_str().unwrap();
        e.contains("EngineSilent") && e.contains("did not answer in time")
    }));
}

/// Thousands of mutated protocol lines in one session: the engine never panics or
/// exits, answers every `isready`, and every complaint is one `info string error:` line.
#[test]
fn thousands_of_mutated_protocol_lines_give_one_line_errors_and_no_panic() {
    use std::io::Write;
    let base = [
        "uci",
        "isready",
        "ucinewgame",
        "position startpos moves d6 f4 d7 b4 d5",
        "position startpos moves d6 d5 a7 c4 g7 xd5",
        "position fen ********/********/******** w p p 0 9 0 9 0 0 0 0 0 0 0 0 1",
        "setoption name Hash value 8",
        "setoption name SkillLevel value 2",
        "setoption name MoveTimeMs value 0",
        "setoption name Shuffling value true",
        "setoption name DatabasePath value /nonexistent",
        "go depth 1",
        "stop",
        "d",
    ];
    let mut rng = Rng::new(99);
    let mut input = Vec::new();
    let mut isready = 0;
    for _ in 0..3000 {
        let line = base[rng.below(base.len())];
        // `mutate` may drop tokens: lines of one token go through unchanged.
        let mut line = if line.contains(' ') {
            mutate(&mut rng, line)
        } else {
            line.to_string()
        };
        // Searches stay short and the session stays open.
        if line.split_whitespace().next() == Some("go") {
            line = "go depth 1".into();
        }
        if line.contains("quit") || line.contains("infinite") {
            continue;
        }
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
        input.extend_from_slice(b"isready\n");
        isready += 1 + (line.trim() == "isready") as usize;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .arg("uci")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let ready = stdout.lines().filter(|l| *l == "readyok").count();
    assert!(
        ready >= isready - 50,
        "answered {ready} of about {isready} isready"
    );
    for l in stdout.lines().filter(|l| l.contains("error")) {
        assert!(l.starts_with("info string error: "), "{l}");
    }
}
