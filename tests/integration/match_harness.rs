//! `tools/match.py`, the match harness: its statistics against figures computed by
//! hand, its counts against the arena's own report, and its SPRT stopping a match.

use crate::common::Scratch;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn millbase() -> &'static str {
    env!("CARGO_BIN_EXE_millbase")
}

fn harness(args: &[&str]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/match.py");
    Command::new("python3")
        .arg(script)
        .args(args)
        .args(["--millbase", millbase()])
        .output()
        .expect("python3 runs")
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "match.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON summary")
}

fn close(v: &Value, want: f64, tol: f64) {
    let got = v.as_f64().expect("a number");
    assert!((got - want).abs() < tol, "got {got}, want {want}");
}

/// A game record as the arena writes it, with only the fields the harness reads.
fn record(game: usize, white: &str, winner: Option<&str>) -> String {
    let winner = winner.map_or("null".to_string(), |w| format!("\"{w}\""));
    format!(
        "{{\"game\":{game},\"a\":\"new\",\"b\":\"old\",\"white\":\"{white}\",\"winner\":{winner}}}\n"
    )
}

#[test]
fn statistics_match_a_hand_computation() {
    let scratch = Scratch::new("match-statistics-match-a-hand");
    // Four pairs (A is White in even games). A's scores per pair of games:
    // W W = 1, W D = 3/4, D D = 1/2, L D = 1/4.
    let games = [
        ("A", Some("A")),
        ("B", Some("A")),
        ("A", Some("A")),
        ("B", None),
        ("A", None),
        ("B", None),
        ("A", Some("B")),
        ("B", None),
    ];
    let text: String = games
        .iter()
        .enumerate()
        .map(|(i, &(white, winner))| record(i, white, winner))
        .collect();
    let file = scratch.join("hand.jsonl");
    std::fs::write(&file, text).unwrap();
    let s = json_of(&harness(&[
        "report",
        file.to_str().unwrap(),
        "--sprt",
        "0",
        "50",
        "--json",
    ]));
    assert_eq!(
        (&s["wins"], &s["draws"], &s["losses"], &s["pairs"]),
        (
            &Value::from(3),
            &Value::from(4),
            &Value::from(1),
            &Value::from(4)
        )
    );
    assert_eq!(s["pentanomial"], serde_json::json!([0, 1, 1, 1, 1]));
    // Mean pair score 5/8; variance ((3/8)^2 + (1/8)^2 + (1/8)^2 + (3/8)^2) / 4 =
    // 5/64; half-width 1.959964 * sqrt(5/64 / 4) = 0.273913.
    close(&s["score"]["score"], 0.625, 1e-12);
    close(&s["score"]["low"], 0.351087, 1e-5);
    close(&s["score"]["high"], 0.898913, 1e-5);
    // Elo: -400 log10(1 / 0.625 - 1) = -400 log10(0.6) = 88.74.
    close(&s["score"]["elo"], 88.7395, 1e-3);
    // Draws 4 of 8, Wilson: centre 1/2, half-width 1.959964 / (1 + z^2/8) *
    // sqrt(1/32 + z^2/256) = 0.284784.
    close(&s["draw_rate"][0], 0.5, 1e-12);
    close(&s["draw_rate"][1], 0.215216, 1e-5);
    close(&s["draw_rate"][2], 0.784784, 1e-5);
    // As White (games 0, 2, 4, 6): W W D L; as Black: W D D D.
    let c = &s["by_colour"];
    assert_eq!(
        [
            &c["white"]["wins"],
            &c["white"]["draws"],
            &c["white"]["losses"]
        ],
        [&Value::from(2), &Value::from(1), &Value::from(1)]
    );
    assert_eq!(
        [
            &c["black"]["wins"],
            &c["black"]["draws"],
            &c["black"]["losses"]
        ],
        [&Value::from(1), &Value::from(3), &Value::from(0)]
    );
    // SPRT(0, 50): s1 = 1 / (1 + 10^(-1/8)) = 0.571463; LLR = 4 * 0.071463 *
    // (5/4 - 1/2 - 0.571463) / (2 * 5/64) = 0.326625; bounds +-ln(19) = 2.944439.
    close(&s["sprt"]["llr"], 0.326625, 1e-5);
    close(&s["sprt"]["upper"], 2.944439, 1e-5);
    close(&s["sprt"]["lower"], -2.944439, 1e-5);
    assert!(s["sprt"]["decision"].is_null());
}

fn lines_of(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn games_and_counts_equal_one_arena_run() {
    let scratch = Scratch::new("match-games-and-counts-equal");
    // The 4-stone game (both phases, a second to build): the engine against perfect
    // play from all 24 first placements with both colours, one arena run per game
    // against one arena run of all 48.
    let db = scratch.join("g4");
    let built = Command::new(millbase())
        .args(["build", "--quiet", "--rules", "standard-4", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(built.status.success());
    let db_s = db.to_str().unwrap();
    let engine = "engine:depth=2,db=no";
    let log = scratch.join("fp.jsonl");
    let log_s = log.to_str().unwrap();
    let s = json_of(&harness(&[
        "perfect",
        engine,
        "--db",
        db_s,
        "--games",
        "48",
        "--threads",
        "2",
        "--log",
        log_s,
        "--json",
    ]));
    let all = scratch.join("fp-arena.jsonl");
    let arena = Command::new(millbase())
        .args(["arena", engine, "perfect", "--db", db_s])
        .args([
            "--openings",
            "first-placements",
            "--games",
            "1",
            "--seed",
            "1",
        ])
        .args(["--quiet", "--json", "--out"])
        .arg(&all)
        .output()
        .unwrap();
    assert!(arena.status.success());
    let mut mine = lines_of(&log);
    let theirs = lines_of(&all);
    mine.sort_by_key(|r| r["game"].as_u64());
    assert_eq!(mine.len(), 48);
    for (m, t) in mine.iter().zip(&theirs) {
        for key in ["game", "white", "opening", "moves", "winner", "reason"] {
            assert_eq!(m[key], t[key], "game {}: {key}", t["game"]);
        }
    }
    let a: Value = serde_json::from_slice(&arena.stdout).unwrap();
    assert_eq!(s["games"], 48);
    assert_eq!(s["pairs"], 24);
    assert_eq!(
        (&s["wins"], &s["draws"], &s["losses"]),
        (&a["a_wins"], &a["draws"], &a["b_wins"])
    );
    for (i, colour) in ["white", "black"].iter().enumerate() {
        let mine = &s["by_colour"][*colour];
        let theirs = &a["by_colour"][i];
        assert_eq!(theirs["colour"].as_str().unwrap().to_lowercase(), *colour);
        assert_eq!(mine["wins"], theirs["wins"]["count"]);
        assert_eq!(mine["draws"], theirs["draws"]["count"]);
        assert_eq!(mine["losses"], theirs["losses"]["count"]);
        close(
            &mine["draw_rate"][1],
            theirs["draws"]["low"].as_f64().unwrap(),
            1e-6,
        );
        close(
            &mine["draw_rate"][2],
            theirs["draws"]["high"].as_f64().unwrap(),
            1e-6,
        );
    }
}

#[test]
fn a_logged_match_resumes_where_it_stopped() {
    let scratch = Scratch::new("match-a-logged-match-resumes");
    let log = scratch.join("resume.jsonl");
    let log_s = log.to_str().unwrap();
    let (a, b) = ("engine:depth=1,db=no", "random");
    let first = json_of(&harness(&[
        "ab", a, b, "--games", "4", "--log", log_s, "--json",
    ]));
    assert_eq!(first["games"], 4);
    let before = std::fs::read_to_string(&log).unwrap();
    // An interrupted write leaves half a line: it is dropped, the game played again.
    std::fs::write(&log, format!("{before}{{\"game\": 4, \"a\"")).unwrap();
    let more = json_of(&harness(&[
        "ab", a, b, "--games", "6", "--log", log_s, "--json",
    ]));
    assert_eq!(more["games"], 6);
    let after = std::fs::read_to_string(&log).unwrap();
    assert!(
        after.starts_with(&before),
        "the log's games are kept as they were"
    );
    let games: Vec<u64> = lines_of(&log)
        .iter()
        .map(|r| r["game"].as_u64().unwrap())
        .collect();
    assert_eq!(games, [0, 1, 2, 3, 4, 5]);
    // The same games from scratch: what the resumed match played is that match.
    let fresh = json_of(&harness(&["ab", a, b, "--games", "6", "--json"]));
    assert_eq!(
        (&fresh["wins"], &fresh["draws"], &fresh["losses"]),
        (&more["wins"], &more["draws"], &more["losses"])
    );
    // Nothing left to play: the log is reported as it is.
    let again = json_of(&harness(&[
        "ab", a, b, "--games", "6", "--log", log_s, "--json",
    ]));
    assert_eq!(again["games"], 6);
    // Another match cannot continue this log.
    let out = harness(&[
        "ab",
        "engine:depth=2,db=no",
        b,
        "--games",
        "8",
        "--log",
        log_s,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.starts_with("error: ")
            && err.contains("another match")
            && err.trim().lines().count() == 1,
        "{err}"
    );
}

#[test]
fn sprt_stops_a_decided_match() {
    // Depth 2 (hand-set weights) against random moves: every pair is won, so
    // SPRT(0, 200) accepts H1 after the first pair (LLR 9.6 > ln 19) instead of
    // playing all 40 games.
    let s = json_of(&harness(&[
        "ab",
        "engine:depth=2,db=no,eval=shipped",
        "random",
        "--games",
        "40",
        "--sprt",
        "0",
        "200",
        "--json",
    ]));
    assert_eq!(s["games"], 2, "{s}");
    assert_eq!(s["wins"], 2, "{s}");
    assert!(s["sprt"]["decision"].as_str().unwrap().starts_with("H1"));
    assert!(s["sprt"]["llr"].as_f64().unwrap() >= s["sprt"]["upper"].as_f64().unwrap());
}

#[test]
fn bad_input_is_one_line() {
    let out = harness(&["ab", "engine:depth=0", "random", "--games", "2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.starts_with("error: the arena failed") && err.trim().lines().count() == 1,
        "{err}"
    );
    let out = harness(&["perfect", "engine:depth=1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("perfect needs --db"));
    let out = harness(&["sanmill", "--movetime", "100", "--dry-run"]);
    assert!(out.status.success());
    let cmd = String::from_utf8_lossy(&out.stdout);
    assert!(
        cmd.contains("engine:movetime=100,db=no")
            && cmd.contains("option.SkillLevel=30,option.MoveTimeMs=100"),
        "{cmd}"
    );
}
