//! An external engine's answers that end a game: Sanmill's `bestmove draw` and
//! `bestmove none`, its `sanmill_error` lines, an illegal ply, an exit and silence
//! each end that game with the reason recorded, and the arena plays on. An option
//! the engine refuses stops the run with an error naming it. Sanmill's lines are
//! taken from its recorded dialogues (`tests/sanmill/`).
#![cfg(unix)]

use crate::common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A shell engine `name` in `dir` answering `uci` and `isready`, and `go` with
/// `on_go`.
fn engine(dir: &Path, name: &str, on_go: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nwhile read l; do case \"$l\" in\n\
             uci) echo 'id name TGF Mill Rust'; echo uciok;;\n\
             isready) echo readyok;;\n\
             go*) {on_go};;\n\
             quit) exit 0;;\n\
             esac; done\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_string()
}

fn arena(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .arg("arena")
        .args(args)
        .arg("--quiet")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Plays `games` games of the engine against `random` and returns the summary.
fn summary(engine: &str, extra: &[&str]) -> serde_json::Value {
    let spec = format!("uci:depth=1,timeout=2:{engine}");
    let mut args = vec![spec.as_str(), "random", "--games", "3", "--json"];
    args.extend_from_slice(extra);
    let (ok, out, err) = arena(&args);
    assert!(ok, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// The first line Sanmill's engine printed containing `what`, from a recording.
fn recorded(file: &str, what: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sanmill")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("< ") && l.contains(what))
        .unwrap_or_else(|| panic!("no '{what}' in {file}"));
    // As a shell word: single quotes, with the quotes inside closed and reopened.
    format!("echo '{}'", line[2..].replace('\'', "'\\''"))
}

#[test]
fn each_way_an_engine_ends_a_game_is_recorded_and_the_run_goes_on() {
    let cases = [
        (
            "draw",
            recorded("draw.txt", "bestmove draw"),
            "EngineDraw",
            "bestmove draw",
        ),
        (
            "none",
            recorded("session.txt", "bestmove none"),
            "EngineNoMove",
            "bestmove none",
        ),
        (
            "error",
            recorded("session.txt", "sanmill_error"),
            "EngineError",
            "position_history_truncated",
        ),
        (
            "illegal",
            "echo 'info depth 1 score cp 0 nodes 1 bestmove z9'".into(),
            "IllegalPly",
            "answered 'z9'",
        ),
        ("crash", "exit 3".into(), "EngineCrashed", "exited"),
        (
            "silent",
            ":".into(),
            "EngineSilent",
            "did not answer in time",
        ),
    ];
    let dir = Scratch::new("endings");
    for (name, on_go, reason, detail) in cases {
        let s = summary(&engine(&dir, name, &on_go), &[]);
        assert_eq!(s["games"], 3, "{name}: {s}");
        let endings = s["engine_endings"].as_array().unwrap();
        assert_eq!(endings.len(), 3, "{name}: {s}");
        for e in endings {
            let e = e.as_str().unwrap();
            assert!(e.contains(reason) && e.contains(detail), "{name}: {e}");
        }
        if name == "draw" {
            assert_eq!(
                (s["draws"].as_u64(), s["draws_claimed"].as_u64()),
                (Some(3), Some(3))
            );
        } else {
            assert_eq!(
                (s["b_wins"].as_u64(), s["forfeits"].as_u64()),
                (Some(3), Some(3)),
                "{name}"
            );
        }
    }
}

#[test]
fn options_and_limits_reach_the_engine_and_a_refused_option_stops_the_run() {
    use std::os::unix::fs::PermissionsExt;
    // Logs every line it reads; refuses the option named Bogus as Sanmill does.
    let dir = Scratch::new("endings-options");
    let log = dir.join("log.txt");
    let path = dir.join("logger.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nwhile read l; do echo \"$l\" >> '{}'; case \"$l\" in\n\
             uci) echo uciok;;\n\
             isready) echo readyok;;\n\
             'setoption name Bogus'*) echo \"info string unsupported setoption: $l\";;\n\
             go*) echo 'info depth 1 score cp 0 nodes 1 bestmove draw';;\n\
             quit) exit 0;;\n\
             esac; done\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = format!(
        "uci:movetime=250,nodes=1000,option.SkillLevel=30,option.Move Overhead=5:{}",
        path.display()
    );
    let (ok, _, err) = arena(&[
        &spec,
        "random",
        "--games",
        "1",
        "--uci-option",
        "Threads=1",
        "--uci-depth",
        "9",
    ]);
    assert!(ok, "{err}");
    let sent = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = sent.lines().collect();
    let at = |l: &str| {
        lines
            .iter()
            .position(|x| *x == l)
            .unwrap_or_else(|| panic!("no '{l}' in {sent}"))
    };
    // The arena's own, the flags', then the spec's, in that order; the spec's limits win.
    assert!(at("setoption name Shuffling value false") < at("setoption name Threads value 1"));
    assert!(at("setoption name Threads value 1") < at("setoption name SkillLevel value 30"));
    assert!(at("setoption name SkillLevel value 30") < at("setoption name Move Overhead value 5"));
    at("go movetime 250 nodes 1000");
    assert!(!sent.contains("MoveTimeMs"), "{sent}");
    // The flags' limits for a spec without any.
    std::fs::remove_file(&log).unwrap();
    let (ok, _, err) = arena(&[
        &format!("uci:{}", path.display()),
        "random",
        "--games",
        "1",
        "--uci-depth",
        "0",
    ]);
    assert!(ok, "{err}");
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(
        sent.contains("go depth 0\n") && sent.contains("MoveTimeMs value 0"),
        "{sent}"
    );
    let (ok, _, err) = arena(&[
        &format!("uci:option.Bogus=1:{}", path.display()),
        "random",
        "--games",
        "1",
    ]);
    assert!(!ok);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("unsupported setoption: setoption name Bogus value 1"),
        "{err}"
    );
}
