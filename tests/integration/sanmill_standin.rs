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

#[test]
fn the_rules_are_told_to_the_engine_as_sanmills_options() {
    // Morabaraba: the engine is sent the table's options and plays a whole game.
    let s = summary(&[
        &format!("uci:depth=2:{}", standin("morabaraba.txt")),
        "random",
        "--rules",
        "morabaraba",
        "--games",
        "1",
        "--seed",
        "3",
    ]);
    assert_eq!(s["engine_endings"], serde_json::json!([]), "{s}");
    assert_eq!(
        (s["games"].as_u64(), s["a_wins"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
    let rules = millbase::Rules::by_name("morabaraba").unwrap();
    let want: Vec<String> = millbase::play::protocol::rule_options::sanmill_setup(rules)
        .unwrap()
        .iter()
        .map(|(n, v)| format!("> setoption name {n} value {v}"))
        .collect();
    assert_eq!(want.len(), 3);
    let text = std::fs::read_to_string(recording("morabaraba.txt")).unwrap();
    for line in &want {
        assert!(text.lines().any(|l| l == line), "{line}");
    }
    // Sanmill's engine cannot play five stones a side: the run stops naming the option.
    let (ok, _, err) = arena(&[
        &format!("uci:depth=2:{}", standin("refused-standard-5.txt")),
        "random",
        "--rules",
        "standard-5",
        "--games",
        "1",
        "--seed",
        "3",
    ]);
    assert!(
        !ok && err.contains("unsupported setoption: setoption name PiecesCount value 5"),
        "{err}"
    );
    // millbase's engine can: sent PiecesCount 5, it plays standard-5 (with nine stones
    // it would place where a move is due, an illegal ply).
    let s = summary(&[
        &format!("uci:depth=2:{} uci", env!("CARGO_BIN_EXE_millbase")),
        "random",
        "--rules",
        "standard-5",
        "--games",
        "2",
    ]);
    assert_eq!(s["engine_endings"], serde_json::json!([]), "{s}");
    assert_eq!(s["games"], 2, "{s}");
}
