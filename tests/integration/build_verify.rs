//! The builder end to end: every pair with k + l <= 9 is built and verified (each
//! stored value recomputed from its successors), published facts, determinism, and
//! faults: corrupt, truncated and foreign files, missing subspaces, a killed build.

use crate::common::{Scratch, nine};
use millbase::table::build::{BuildOptions, Selection, build, open_checked};
use millbase::table::dir::manifest::{Manifest, file_name};
use millbase::table::format::FormatError;
use millbase::table::index::Index;
use millbase::table::probe::{ProbeError, Tablebase};
use millbase::{Color, Position, Rules, Value, table::verify};
use std::path::Path;
use std::process::Command;

fn build_into(dir: &Path, selection: Selection) {
    let opts = BuildOptions::quiet(dir.to_path_buf(), selection, Default::default());
    build(Rules::standard(), &opts).unwrap();
}

/// A copy of the small set (3-3, 3-4, 4-3) to damage.
fn small_copy(name: &str) -> Scratch {
    let dir = Scratch::new(name);
    for f in ["3-3.mdb", "3-4.mdb", "4-3.mdb", "manifest.json"] {
        std::fs::copy(nine().join(f), dir.join(f)).unwrap();
    }
    dir
}

#[test]
fn every_value_agrees_with_its_successors() {
    let checks = verify::check(nine(), Index::standard(), None).unwrap();
    let names: Vec<(u32, u32)> = checks.iter().map(|c| c.subspace).collect();
    for k in 3..=6 {
        for l in 3..=6 {
            if k + l <= 9 {
                assert!(names.contains(&(k, l)), "{k}-{l} not checked");
            }
        }
    }
    for c in &checks {
        assert_eq!(c.mismatches, 0, "{:?}: {:?}", c.subspace, c.examples);
        assert!(c.slots > 0);
    }
}

#[test]
fn three_three_has_gassers_figures() {
    let m = Manifest::load(nine()).unwrap().unwrap();
    let e = m.get(3, 3).unwrap();
    assert_eq!(
        e.counts.longest_loss, 26,
        "Gasser: the longest 3-3 loss is 26 plies"
    );
    let classes = (e.counts.wins + e.counts.losses + e.counts.draws) as f64;
    let won = e.counts.wins as f64 / classes;
    assert!(
        (0.825..0.835).contains(&won),
        "Gasser: about 83% of 3-3 won, got {won}"
    );
}

#[test]
fn building_twice_gives_identical_files() {
    let dir = Scratch::new("again");
    build_into(&dir, Selection::Only(4, 3));
    for f in ["3-3.mdb", "3-4.mdb", "4-3.mdb"] {
        let a = std::fs::read(dir.join(f)).unwrap();
        let b = std::fs::read(nine().join(f)).unwrap();
        assert!(a == b, "{f} differs between two builds");
    }
}

#[test]
fn a_flipped_byte_is_caught_and_rebuilt() {
    let dir = small_copy("flip");
    let path = dir.join(file_name(4, 3));
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let idx = Index::standard();
    assert!(matches!(
        open_checked(&dir, idx, 4, 3),
        Err(FormatError::Checksum { .. })
    ));
    // Probing every position of the damaged file gives an error or the true value,
    // never a wrong value.
    let tb = Tablebase::open(&dir).unwrap();
    let good = Tablebase::open(nine()).unwrap();
    let mut errors = 0;
    for slot in 0..idx.size(4, 3) {
        let (own, opp) = idx.position(4, 3, slot);
        let pos = Position::moving(Color::White, own, opp);
        match tb.probe(&pos) {
            Ok(v) => assert_eq!(v, good.probe(&pos).unwrap()),
            Err(ProbeError::Format(_)) => errors += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert!(errors > 0, "the damaged block was never reported");
    // A build run repairs it.
    build_into(&dir, Selection::Only(4, 3));
    open_checked(&dir, idx, 4, 3).unwrap();
}

#[test]
fn a_truncated_file_is_refused() {
    let dir = small_copy("trunc");
    let path = dir.join(file_name(3, 4));
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = open_checked(&dir, Index::standard(), 3, 4).unwrap_err();
    assert!(
        matches!(
            err,
            FormatError::Truncated { .. } | FormatError::Corrupt { .. }
        ),
        "{err}"
    );
    let tb = Tablebase::open(&dir).unwrap();
    let own = 0b111;
    let opp = 0b1111 << 8;
    assert!(tb.probe(&Position::moving(Color::White, own, opp)).is_err());
}

#[test]
fn files_of_other_rules_or_versions_are_refused() {
    let dir = small_copy("foreign");
    let path = dir.join(file_name(3, 3));
    let original = std::fs::read(&path).unwrap();
    // Another rule set: change the fingerprint and re-seal the header checksum.
    let mut bytes = original.clone();
    bytes[48] ^= 1;
    let sum = millbase::table::format::xxh64(&bytes[..248]);
    bytes[248..256].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let err = open_checked(&dir, Index::standard(), 3, 3).unwrap_err();
    assert!(matches!(err, FormatError::RulesMismatch { .. }), "{err}");
    // Another format version.
    let mut bytes = original;
    bytes[8] = 99;
    let sum = millbase::table::format::xxh64(&bytes[..248]);
    bytes[248..256].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let err = open_checked(&dir, Index::standard(), 3, 3).unwrap_err();
    assert!(
        matches!(err, FormatError::Version { found: 99, .. }),
        "{err}"
    );
}

#[test]
fn a_missing_subspace_is_named() {
    let dir = small_copy("missing");
    let tb = Tablebase::open(&dir).unwrap();
    let idx = Index::standard();
    let (own, opp) = idx.position(5, 4, 12345);
    match tb.probe(&Position::moving(Color::White, own, opp)) {
        Err(ProbeError::Missing { subspace, hint, .. }) => {
            assert_eq!(subspace, "5-4");
            assert!(hint.contains("millbase build"), "{hint}");
        }
        other => panic!("expected a missing-subspace error, got {other:?}"),
    }
    // verify of a pair whose capture targets are missing says which file.
    std::fs::copy(nine().join("5-4.mdb"), dir.join("5-4.mdb")).unwrap();
    std::fs::copy(nine().join("4-5.mdb"), dir.join("4-5.mdb")).unwrap();
    let err = verify::check(
        &dir,
        idx,
        Some(millbase::table::sector::Sector::moving(5, 4)),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("3-5.mdb") || err.contains("4-4.mdb"), "{err}");
}

#[test]
fn a_killed_build_resumes_cleanly() {
    let dir = Scratch::new("kill");
    // The pairs 5-4 leads into, finished (as a build that got this far has them).
    for f in ["3-3", "3-4", "4-3", "4-4", "5-3", "3-5"] {
        let f = format!("{f}.mdb");
        std::fs::copy(nine().join(&f), dir.join(&f)).unwrap();
    }
    // The build dies (abort: no clean-up, like a kill) at a named point mid-pair:
    // 5-4 written, its twin 4-5 not.
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args([
            "build", "--quiet", "--only", "5-4", "--form", "fast", "--db",
        ])
        .arg(&dir)
        .env("MILLBASE_TEST_ABORT_AFTER", "written:5-4")
        .output()
        .unwrap();
    assert!(!out.status.success(), "the build was not stopped");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("aborting after written:5-4"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("5-4.mdb").exists(), "killed before the pair");
    assert!(!dir.join("4-5.mdb").exists(), "killed after the pair");
    // Whatever has its final name is complete and intact.
    let idx = Index::standard();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(stem) = name.strip_suffix(".mdb") {
            let (k, l) = millbase::table::dir::manifest::parse_subspace(stem).unwrap();
            open_checked(&dir, idx, k, l).unwrap();
        }
    }
    let status = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args([
            "build", "--quiet", "--only", "5-4", "--form", "fast", "--db",
        ])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        !std::fs::read_dir(&dir).unwrap().any(|e| e
            .unwrap()
            .path()
            .extension()
            .is_some_and(|x| x == "tmp"))
    );
    // The resumed pair is the uninterrupted build's, byte for byte (whose every
    // value `every_value_agrees_with_its_successors` checks).
    for f in ["5-4.mdb", "4-5.mdb"] {
        let resumed = std::fs::read(dir.join(f)).unwrap();
        assert!(
            resumed == std::fs::read(nine().join(f)).unwrap(),
            "{f} differs"
        );
    }
    let tb = Tablebase::open(&dir).unwrap();
    let (own, opp) = idx.position(3, 3, 6653);
    assert_eq!(
        tb.probe(&Position::moving(Color::White, own, opp)).unwrap(),
        Value::Loss(26)
    );
}

#[test]
fn a_pair_that_cannot_fit_is_refused_before_starting() {
    let dir = Scratch::new("memory");
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(["build", "--quiet", "--only", "3-3", "--db"])
        .arg(&dir)
        .env("MILLBASE_MEMORY_LIMIT", "100000")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: pair 3-3 needs about"), "{err}");
    assert!(err.contains("GiB is available"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    assert!(!dir.join("3-3.mdb").exists());
}

/// Every slot of every file holds the builder's in-memory value (read whole), and
/// the probe path (value and WDL) returns it on a spread of slots of each file.
#[test]
fn probing_the_files_gives_the_builders_in_memory_values() {
    use crate::common::nine;
    use millbase::table::build::{plan, solve_pair};
    use std::collections::HashMap;
    let idx = Index::standard();
    let tb = Tablebase::open(nine()).unwrap();
    let mut solved: HashMap<(u32, u32), Vec<u16>> = HashMap::new();
    for (k, l) in plan(Rules::standard(), Selection::MaxStones(9)).unwrap() {
        let pair = solve_pair(
            idx,
            k,
            l,
            |a, b| solved.get(&(a, b)).map(|v| v.as_slice()),
            &|_, _| {},
        );
        for s in pair {
            let stored = open_checked(nine(), idx, s.k, s.l)
                .unwrap()
                .read_all()
                .unwrap();
            assert!(
                stored == s.codes,
                "{}-{}: the file is not the solve",
                s.k,
                s.l
            );
            // Every 7th slot through the probe path, from an offset that differs
            // between the files.
            for (slot, &code) in s.codes.iter().enumerate().skip(s.k as usize).step_by(7) {
                let (own, opp) = idx.position(s.k, s.l, slot as u64);
                let probed = tb.probe_sets(own, opp).unwrap();
                assert_eq!(
                    probed,
                    Value::from_code(code),
                    "{}-{} slot {slot}",
                    s.k,
                    s.l
                );
                assert_eq!(tb.probe_wdl_sets(own, opp).unwrap(), probed.wdl());
            }
            solved.insert((s.k, s.l), s.codes);
        }
    }
    assert_eq!(solved.len(), 10);
}

/// Runs `millbase build ARGS --db DIR` with `env`; returns its success and
/// standard error.
fn build_logged(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .arg("build")
        .args(args)
        .arg("--db")
        .arg(dir)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The files of `dir` and `reference` (every `.mdb`), byte for byte, and no
/// checkpoint left in `dir`.
fn same_files(dir: &Path, reference: &Path) {
    let mut n = 0;
    for entry in std::fs::read_dir(reference).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "mdb") {
            let name = path.file_name().unwrap();
            assert!(
                std::fs::read(&path).unwrap() == std::fs::read(dir.join(name)).unwrap(),
                "{name:?} differs"
            );
            n += 1;
        }
    }
    assert!(n >= 3, "{n} files compared");
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".ckpt"))
        .collect();
    assert!(left.is_empty(), "checkpoints left: {left:?}");
}

/// A build killed just after a checkpoint in the middle of a pair solves the rest
/// of the pair from it, and its files are those of a build without checkpoints,
/// byte for byte: a moving-phase pair (`standard-4`'s `4-4`) and a pair of
/// placement sectors in which stones move (`lasker-3`'s `2-3-1-0` with `3-2-0-1`).
/// A damaged checkpoint is refused, named, and the pair solved from its start.
#[test]
fn a_build_killed_mid_pair_resumes_from_its_checkpoint() {
    let games: [(&[&str], &str, u16); 2] = [
        (&["--rules", "standard-4", "--phase", "moving"], "4-4", 6),
        (&["--rules", "lasker-3"], "2-3-1-0", 3),
    ];
    for (args, unit, layer) in games {
        let reference = Scratch::new("ckpt-reference");
        let status = Command::new(env!("CARGO_BIN_EXE_millbase"))
            .args(["build", "--quiet", "--no-checkpoints"])
            .args(args)
            .arg("--db")
            .arg(&*reference)
            .status()
            .unwrap();
        assert!(status.success());
        for damage in [false, true] {
            let dir = Scratch::new("ckpt");
            let stage = format!("checkpoint:{unit}:{layer}");
            // A checkpoint after every layer, until the one named.
            let every_layer = [args, &["--checkpoint-minutes", "0"]].concat();
            let (ok, err) =
                build_logged(&every_layer, &dir, &[("MILLBASE_TEST_ABORT_AFTER", &stage)]);
            assert!(
                !ok && err.contains(&format!("aborting after {stage}")),
                "{err}"
            );
            let checkpoint = dir.join(format!("{unit}.ckpt"));
            assert!(checkpoint.exists());
            if damage {
                let mut bytes = std::fs::read(&checkpoint).unwrap();
                let at = bytes.len() - 3;
                bytes[at] ^= 1;
                std::fs::write(&checkpoint, bytes).unwrap();
            }
            let (ok, err) = build_logged(args, &dir, &[]);
            assert!(ok, "{err}");
            let resumed = format!("{unit}: resumed from its checkpoint at layer {layer}");
            if damage {
                assert!(!err.contains(&resumed), "{err}");
                assert!(err.contains("not used (cells checksum mismatch)"), "{err}");
            } else {
                assert!(err.contains(&resumed), "{err}");
            }
            same_files(&dir, &reference);
        }
    }
}

/// `--reuse DIR` takes the files of rules that differ only in the full board
/// (`twelve` for `morabaraba`), checked, relabelled, and byte for byte those of a
/// build from nothing; rules that differ otherwise are refused, named.
#[test]
fn a_build_reuses_the_files_of_rules_that_differ_only_in_the_full_board() {
    let only = ["--only", "4-3", "--phase", "moving"];
    let twelve = Scratch::new("reuse-twelve");
    let (ok, err) = build_logged(&[&only[..], &["--rules", "twelve"]].concat(), &twelve, &[]);
    assert!(ok, "{err}");
    let scratch = Scratch::new("reuse-morabaraba");
    let (ok, err) = build_logged(
        &[&only[..], &["--rules", "morabaraba"]].concat(),
        &scratch,
        &[],
    );
    assert!(ok, "{err}");
    let taken = Scratch::new("reuse-taken");
    let source = twelve.to_str().unwrap();
    let args = [&only[..], &["--rules", "morabaraba", "--reuse", source]].concat();
    let (ok, err) = build_logged(&args, &taken, &[]);
    assert!(ok, "{err}");
    assert!(err.contains("3 files taken from"), "{err}");
    assert!(!err.contains("started"), "nothing solved: {err}");
    same_files(&taken, &scratch);
    let refused = Scratch::new("reuse-refused");
    let (ok, err) = build_logged(&[&only[..], &["--reuse", source]].concat(), &refused, &[]);
    assert!(!ok);
    assert!(
        err.contains("holds twelve, whose game is not that of standard"),
        "{err}"
    );
}

/// A build's log opens with its plan, whose counts are those of the steps it then
/// starts: its pairs and sectors (a `lasker` sector solved with its partner
/// starts once for both), and the positions they hold.
#[test]
fn a_build_log_opens_with_the_plan_it_then_carries_out() {
    for rules in ["standard-4", "lasker-3"] {
        let dir = Scratch::new(&format!("plan-{rules}"));
        let (ok, log) = build_logged(&["--rules", rules, "--form", "fast"], &dir, &[]);
        assert!(ok, "{log}");
        let plan = log.lines().next().unwrap();
        let number = |after: &str| -> u64 {
            let rest = plan.split(after).next().unwrap();
            rest.split_whitespace().last().unwrap().parse().unwrap()
        };
        let (pairs, sectors) = (number(" moving-phase pairs"), number(" placement sectors"));
        let positions = number(" positions");
        assert!(plan.starts_with(&format!("[0:00:00] {rules}: ")), "{plan}");
        // `K-L: started, N positions` (N: both subspaces of the pair) and
        // `K-L-HK-HL: started, N positions...` (N: that sector's alone).
        let started: Vec<(usize, u64)> = log
            .lines()
            .filter_map(|l| {
                let (name, rest) = l.split_once("] ")?.1.split_once(": started, ")?;
                let n: u64 = rest.split_whitespace().next()?.parse().ok()?;
                Some((name.matches('-').count(), n))
            })
            .collect();
        let started_sectors = started.iter().filter(|s| s.0 == 3).count() as u64;
        assert_eq!(
            started.iter().filter(|s| s.0 == 1).count() as u64,
            pairs,
            "{log}"
        );
        assert!(sectors > 0 && started_sectors <= sectors, "{log}");
        let mut logged: u64 = started.iter().filter(|s| s.0 == 1).map(|s| s.1).sum();
        // Each sector's positions, from the files the build wrote.
        let tb = Tablebase::open(&dir).unwrap();
        let idx = Index::for_rules(tb.rules());
        let mut files = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let Some(stem) = name.strip_suffix(".mdb") else {
                continue;
            };
            let n: Vec<u32> = stem.split('-').map(|x| x.parse().unwrap()).collect();
            if n.len() == 4 {
                logged += idx.size(n[0], n[1]);
                files += 1;
            }
        }
        assert_eq!(files, sectors, "{log}");
        assert_eq!(logged, positions, "{log}");
    }
}

/// The plain log's progress, line by line: the share of the work done never
/// falls and ends at 100.0%, and the ETA is `unknown` or `h:mm:ss`, 0:00:00 at
/// the end. Both with the files recoded as the build goes (recodes reported
/// while the solves run) and without.
#[test]
fn a_build_logs_a_share_of_the_work_that_only_grows_to_the_whole() {
    let is_clock = |s: &str| {
        let parts: Vec<&str> = s.split(':').collect();
        parts.len() == 3
            && parts.iter().all(|p| p.parse::<u64>().is_ok())
            && parts[1..].iter().all(|p| p.len() == 2)
    };
    for (rules, form) in [("standard-4", "small"), ("lasker-3", "fast")] {
        let dir = Scratch::new(&format!("progress-{rules}"));
        let (ok, log) = build_logged(&["--rules", rules, "--form", form], &dir, &[]);
        assert!(ok, "{log}");
        let (mut last, mut eta, mut lines) = (0.0f64, String::new(), 0);
        for line in log.lines().filter(|l| l.contains("% of the work, ETA ")) {
            let tail = line.rsplit_once("; ").unwrap().1;
            let percent: f64 = tail.split('%').next().unwrap().parse().unwrap();
            assert!(percent >= last, "{percent}% after {last}%: {line}\n{log}");
            last = percent;
            eta = tail.rsplit_once("ETA ").unwrap().1.to_string();
            assert!(eta == "unknown" || is_clock(&eta), "{line}");
            lines += 1;
        }
        assert!(lines > 10, "{log}");
        assert_eq!(last, 100.0, "{log}");
        assert_eq!(eta, "0:00:00", "{log}");
    }
}
