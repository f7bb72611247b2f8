//! The exam against the databases of a small whole game (four stones a side):
//! its positions are drawn by perfect play and offer a blunder, perfect play
//! never blunders, every judgement agrees with the position's children as the
//! tables value them, and runs repeat for a seed with any number of threads.

use crate::common::Scratch;
use millbase::Rules;
use millbase::play::arena::PlayerSpec;
use millbase::play::arena::exam::{self, ExamConfig, Question};
use millbase::rules::position::Position;
use millbase::rules::value::Wdl;
use millbase::table::build::{BuildOptions, BuildPhase, Selection, build};
use millbase::table::probe::Tablebase;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

fn rules() -> &'static Rules {
    Rules::with_stones(4)
}

/// The whole four-stone game, built once per run (shared with other modules).
fn db_dir() -> &'static Path {
    crate::common::standard_4()
}

fn config(players: &[&str], questions: usize, seed: u64, threads: usize) -> ExamConfig {
    ExamConfig {
        players: players
            .iter()
            .map(|p| (p.parse::<PlayerSpec>().unwrap(), p.to_string()))
            .collect(),
        questions,
        plies: 0..=11,
        seed,
        threads,
        db: Arc::new(Tablebase::open(db_dir()).unwrap()),
        db_dir: Some(db_dir().to_path_buf()),
    }
}

/// The win/draw/loss of `pos` for its side to move, from the tables, or `Loss` when
/// the side to move has lost (fewer than three stones, or no legal ply).
fn wdl(db: &Tablebase, pos: &Position) -> Wdl {
    if pos.is_lost(rules()) {
        Wdl::Loss
    } else {
        db.probe_wdl(pos).unwrap()
    }
}

fn flip(w: Wdl) -> Wdl {
    match w {
        Wdl::Win => Wdl::Loss,
        Wdl::Draw => Wdl::Draw,
        Wdl::Loss => Wdl::Win,
    }
}

#[test]
fn questions_come_from_perfect_play_and_offer_a_blunder() {
    let c = config(&["perfect"], 60, 7, 1);
    let db = &c.db;
    let questions = exam::questions(&c).unwrap();
    assert_eq!(questions.len(), 60);
    let start = db.probe_wdl(&Position::start(rules())).unwrap();
    for q in &questions {
        assert!(c.plies.contains(&q.ply()));
        // Every ply of the way kept the value of the start for its mover.
        for (i, pos) in q.game.history.iter().enumerate() {
            let want = if i % 2 == 0 { start } else { flip(start) };
            assert_eq!(wdl(db, pos), want, "ply {i} of {:?}", q.game.plies);
        }
        assert_eq!(q.value, wdl(db, q.game.position()));
        // The judgement of each ply is its child's value seen from the mover.
        let pos = q.game.position();
        assert_eq!(q.plies.len(), pos.legal_plies(rules()).len());
        for &(ply, w) in &q.plies {
            assert_eq!(w, flip(wdl(db, &pos.after(rules(), ply))));
        }
        assert!(q.traps() > 0, "a question where no ply is a blunder");
        assert!(q.plies.iter().all(|m| m.1 <= q.value));
    }
    // The same seed draws the same positions.
    let again = exam::questions(&c).unwrap();
    let plies = |qs: &[Question]| qs.iter().map(|q| q.game.plies.clone()).collect::<Vec<_>>();
    assert_eq!(plies(&questions), plies(&again));
}

#[test]
fn perfect_never_blunders_and_answers_repeat_with_any_threads() {
    let players = ["perfect", "random", "engine:depth=2,db=no"];
    let one = config(&players, 80, 3, 1);
    let questions = exam::questions(&one).unwrap();
    let answers = exam::answer(&one, &questions, &|| {}).unwrap();
    for a in &answers {
        for ((q, &ply), &blunder) in questions.iter().zip(&a.plies).zip(&a.blunders) {
            let child = q.game.position().after(rules(), ply);
            let got = flip(wdl(&one.db, &child));
            assert_eq!(blunder, got < q.value, "{}: {:?}", a.name, q.game.plies);
        }
    }
    let count = |i: usize| answers[i].blunders.iter().filter(|&&b| b).count();
    assert_eq!(count(0), 0, "perfect blundered");
    assert!(count(1) > 20, "random blundered only {} times", count(1));
    // Threads change nothing (the random player is seeded per question).
    let two = config(&players, 80, 3, 2);
    let again = exam::answer(&two, &questions, &|| {}).unwrap();
    for (a, b) in answers.iter().zip(&again) {
        assert_eq!(a.plies, b.plies, "{}", a.name);
    }
    let report = exam::report(&questions, &answers[..2]);
    assert_eq!(report.players[1].blunders.count, count(1));
    let paired = report.paired.unwrap();
    assert_eq!((paired.first_only, paired.second_only), (0, count(1)));
    assert!(paired.p_value < 1e-4);
    let per_ply: usize = report.players[1].by_ply.iter().map(|r| r.1.count).sum();
    assert_eq!(per_ply, count(1));
    let asked: usize = report.by_ply.iter().map(|r| r.1).sum();
    assert_eq!(asked, questions.len());
}

fn millbase() -> Command {
    Command::new(env!("CARGO_BIN_EXE_millbase"))
}

#[test]
fn the_command_reports_as_json_and_refuses_a_directory_without_placement() {
    let scratch = Scratch::new("exam");
    let out_file = scratch.join("exam.jsonl");
    let out = millbase()
        .args(["exam", "perfect", "random", "--db"])
        .arg(db_dir())
        .args([
            "--positions",
            "30",
            "--plies",
            "2-9",
            "--json",
            "--quiet",
            "--out",
        ])
        .arg(&out_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["questions"], 30);
    assert_eq!(v["players"][0]["blunders"]["count"], 0);
    let random = v["players"][1]["blunders"]["count"].as_u64().unwrap();
    assert!(random > 0);
    assert_eq!(v["paired"]["second_only"].as_u64().unwrap(), random);
    // One line per position; each answer's judgement agrees with the report and
    // each game replays to the FEN written beside it.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 30);
    let blunders = |i: usize| {
        lines
            .iter()
            .filter(|l| l["answers"][i]["blunder"] == true)
            .count() as u64
    };
    assert_eq!((blunders(0), blunders(1)), (0, random));
    for l in &lines {
        let game = millbase::Game::parse(rules(), l["game"].as_str().unwrap()).unwrap();
        let fen = millbase::rules::fen::format(rules(), game.position(), game.counters);
        assert_eq!(l["fen"].as_str().unwrap(), fen);
        assert!(!l["traps"].as_array().unwrap().is_empty());
    }

    // A directory with the moving phase only.
    let moving = scratch.join("moving");
    build(
        rules(),
        &BuildOptions::quiet(moving.clone(), Selection::All, BuildPhase::Moving),
    )
    .unwrap();
    let out = millbase()
        .args(["exam", "perfect", "--db"])
        .arg(&moving)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("no placement sectors"), "{stderr}");

    let out = millbase()
        .args(["exam", "perfect", "--db"])
        .arg(db_dir())
        .args(["--plies", "9-2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("the first ply is after the last"),
        "{stderr}"
    );
}
