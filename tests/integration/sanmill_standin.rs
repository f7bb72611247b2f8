//! The arena against a stand-in that replays Sanmill's engine line for line
//! (`tests/sanmill/`): whole games with removals asked for as searches of their own,
//! `bestmove draw`, and a refused option. A stand-in that reads anything but what
//! the real engine read stops with `info string stand-in diverged`, which ends the
//! game as a crash and fails these tests.

use std::path::PathBuf;
use std::process::Command;

fn recording(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sanmill")
        .join(name)
}

fn standin(name: &str) -> String {
    format!(
        "python3 {} replay {}",
        recording("standin.py").display(),
        recording(name).display()
    )
}

fn arena(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .arg("arena")
        .args(args)
        .args(["--quiet", "--json"])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn summary(args: &[&str]) -> serde_json::Value {
    let (ok, out, err) = arena(args);
    assert!(ok, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// Removals the engine answered as searches of their own in a recording.
fn removals(name: &str) -> usize {
    std::fs::read_to_string(recording(name))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("< ") && l.contains(" bestmove x"))
        .count()
}

#[test]
fn whole_games_replay_with_either_colour_and_removals_as_searches() {
    for (name, args) in [
        (
            "white.txt",
            [
                format!("uci:depth=2:{}", standin("white.txt")),
                "random".into(),
            ],
        ),
        (
            "black.txt",
            [
                "random".into(),
                format!("uci:depth=2:{}", standin("black.txt")),
            ],
        ),
    ] {
        let s = summary(&[&args[0], &args[1], "--games", "1", "--seed", "3"]);
        assert_eq!(s["engine_endings"], serde_json::json!([]), "{name}: {s}");
        assert_eq!(s["games"], 1);
        // The recorded engine won; the replay reached the recording's end.
        let engine_won = if name == "white.txt" {
            "a_wins"
        } else {
            "b_wins"
        };
        assert_eq!(s[engine_won], 1, "{name}: {s}");
        assert!(removals(name) >= 2, "{name}");
    }
}

#[test]
fn bestmove_draw_ends_the_game_drawn() {
    let fen = "O@O@O@O@/*O@*****/******** w m s 5 0 5 0 0 0 -1 -1 -1 -1 0 100 60";
    let s = summary(&[
        &format!("uci:depth=2:{}", standin("draw.txt")),
        "random",
        "--games",
        "1",
        "--start",
        fen,
        "--max-quiet",
        "0",
    ]);
    assert_eq!(
        (s["draws"].as_u64(), s["draws_claimed"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
    let ending = s["engine_endings"][0].as_str().unwrap();
    assert!(
        ending.contains("EngineDraw") && ending.ends_with("bestmove draw"),
        "{ending}"
    );
}

#[test]
fn an_option_the_engine_refuses_stops_the_run_naming_it() {
    let (ok, _, err) = arena(&[
        &format!(
            "uci:option.DatabasePath=/data/millbase:{}",
            standin("refused.txt")
        ),
        "random",
        "--games",
        "1",
    ]);
    assert!(!ok);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("unsupported setoption: setoption name DatabasePath value /data/millbase"),
        "{err}"
    );
}
