//! The opening search against a plain minimax (no pruning, no table) on reduced
//! placement positions whose leaves lie in small subspaces; bounds with missing
//! databases; saved values; the `probe`/`analyze` JSON of the binary.

use crate::common::{Rng, Scratch};
use millbase::rules::Bits;
use millbase::search::opening::{Opening, OpeningOptions};
use millbase::table::build::{BuildOptions, Selection, build};
use millbase::table::probe::Tablebase;
use millbase::{Color, Position, Rules, Value, rules::fen};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Every pair with at most eight stones, built once per test run.
fn small_db() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = crate::common::scratch::lasting("opening");
        let opts = BuildOptions::quiet(dir.clone(), Selection::MaxStones(8), Default::default());
        build(Rules::standard(), &opts).expect("small build");
        dir
    })
}

fn options() -> OpeningOptions {
    OpeningOptions {
        table_mib: 8,
        parallel: true,
        use_tables: true,
    }
}

/// Plain minimax over exact values: every ply, no pruning, no table.
fn minimax(tb: &Tablebase, pos: &Position) -> Value {
    let rules = tb.rules();
    if pos.hand == [0, 0] && !pos.pending_removal {
        return tb.probe(pos).expect("leaf in the small set");
    }
    pos.legal_plies(rules)
        .into_iter()
        .map(|ply| {
            let child = pos.after(rules, ply);
            if child.material(child.to_move) < 3 {
                Value::Win(1)
            } else {
                minimax(tb, &child).parent()
            }
        })
        .max_by(|a, b| a.cmp_goodness(*b))
        .unwrap_or(Value::Loss(0))
}

fn random_set(r: &mut Rng, n: u32, taken: Bits) -> Bits {
    let mut set: Bits = 0;
    while set.count_ones() < n {
        let p = r.next() % 24;
        if (taken | set) >> p & 1 == 0 {
            set |= 1 << p;
        }
    }
    set
}

/// A placement position with at most four stones per side on board and in hand,
/// so that every leaf has at most eight stones.
fn late_placement(r: &mut Rng) -> Position {
    let to_move = if r.next() & 1 == 0 {
        Color::White
    } else {
        Color::Black
    };
    let hw = 1 + (r.next() % 2) as u8;
    let hb = if to_move == Color::White { hw } else { hw + 1 };
    // Three or four stones per side, on board and in hand together.
    let nw = 3 + (r.next() % 2) as u32 - hw as u32;
    let w = random_set(r, nw, 0);
    let nb = 3 + (r.next() % 2) as u32 - hb as u32;
    let b = random_set(r, nb, w);
    Position {
        board: [w, b],
        hand: [hw, hb],
        to_move,
        pending_removal: false,
    }
}

#[test]
fn opening_search_agrees_with_minimax() {
    let tb = Tablebase::open(small_db()).unwrap();
    let rules = tb.rules();
    let mut opening = Opening::new(&tb, options()).unwrap();
    let mut r = Rng::new(42);
    let mut decided = 0;
    for _ in 0..60 {
        let pos = late_placement(&mut r);
        assert!(pos.validate(rules).is_ok(), "{pos:?}");
        let want = minimax(&tb, &pos);
        assert_eq!(opening.value(&pos).unwrap(), want, "{}", fen_of(&pos));
        let solved = opening.solve(&pos).unwrap();
        assert_eq!(solved.exact(), Some(want));
        assert!(solved.missing.is_empty());
        decided += (want != Value::Draw) as u32;
        // Every ply's value, and the best one first.
        let moves = opening.moves(&pos).unwrap();
        assert_eq!(moves[0].1, want);
        for (ply, v) in moves.iter().take(4) {
            let child = pos.after(rules, *ply);
            let expect = if child.material(child.to_move) < 3 {
                Value::Win(1)
            } else {
                minimax(&tb, &child).parent()
            };
            assert_eq!(*v, expect);
        }
    }
    assert!(
        decided >= 10,
        "only {decided} decided positions: a weak sample"
    );
}

#[test]
fn pending_removal_roots_and_sequential_search() {
    let tb = Tablebase::open(small_db()).unwrap();
    let rules = tb.rules();
    let mut opening = Opening::new(
        &tb,
        OpeningOptions {
            parallel: false,
            ..options()
        },
    )
    .unwrap();
    let mut r = Rng::new(7);
    let mut seen = 0;
    while seen < 15 {
        let pos = late_placement(&mut r);
        for ply in pos.legal_plies(rules).into_iter().filter(|p| p.removes()) {
            let mut half = pos;
            half.make(
                rules,
                millbase::Ply {
                    remove: millbase::rules::position::NONE,
                    ..ply
                },
            );
            assert!(half.pending_removal);
            assert_eq!(opening.value(&half).unwrap(), minimax(&tb, &half));
            seen += 1;
        }
    }
}

#[test]
fn bounds_name_missing_subspaces_and_contain_the_value() {
    let full = Tablebase::open(small_db()).unwrap();
    let part = Scratch::new("opening-part");
    for f in ["3-3.mdb", "4-3.mdb", "3-4.mdb"] {
        std::fs::copy(small_db().join(f), part.join(f)).unwrap();
    }
    let tb = Tablebase::open(&part).unwrap();
    let mut opening = Opening::new(&tb, options()).unwrap();
    let mut reference = Opening::new(&full, options()).unwrap();
    // White 3 + 1, Black 3 + 1: leaves in 4-4 (missing) unless a mill takes a stone.
    let mut r = Rng::new(5);
    let mut inexact = 0;
    for _ in 0..20 {
        let w = random_set(&mut r, 3, 0);
        let b = random_set(&mut r, 3, w);
        let pos = Position {
            board: [w, b],
            hand: [1, 1],
            to_move: Color::White,
            pending_removal: false,
        };
        let truth = reference.value(&pos).unwrap();
        let out = opening.solve(&pos).unwrap();
        assert!(
            out.lower.cmp_goodness(truth).is_le(),
            "{} {truth}",
            out.lower
        );
        assert!(
            out.upper.cmp_goodness(truth).is_ge(),
            "{} {truth}",
            out.upper
        );
        if out.exact().is_none() {
            inexact += 1;
            assert!(out.missing.contains(&(4, 4)), "{:?}", out.missing);
            assert!(out.missing_names().contains(&"4-4".to_string()));
        }
    }
    assert!(inexact > 0);
}

#[test]
fn saved_values_are_read_back() {
    let tb = Tablebase::open(small_db()).unwrap();
    let mut r = Rng::new(99);
    let positions: Vec<Position> = (0..10).map(|_| late_placement(&mut r)).collect();
    let values: Vec<Value> = {
        let mut opening = Opening::new(&tb, options()).unwrap();
        let v = positions
            .iter()
            .map(|p| opening.value(p).unwrap())
            .collect();
        assert!(opening.save(18).unwrap() >= positions.len());
        v
    };
    let mut again = Opening::new(&tb, options()).unwrap();
    assert!(again.saved_len() >= positions.len());
    for (p, v) in positions.iter().zip(values) {
        assert_eq!(again.value(p).unwrap(), v);
    }
    std::fs::remove_file(small_db().join(millbase::search::opening::SAVED_FILE)).unwrap();
}

fn fen_of(pos: &Position) -> String {
    fen::format(Rules::standard(), pos, Default::default())
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn probe_and_analyze_json() {
    let db = small_db().to_str().unwrap();
    let pos = Position {
        board: [0b111, 0b111 << 8],
        hand: [1, 1],
        to_move: Color::White,
        pending_removal: false,
    };
    let f = fen_of(&pos);
    let (ok, out, err) = run(&["probe", "--db", db, "--table-mib", "8", "--json", &f]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(["win", "draw", "loss"].contains(&v["value"].as_str().unwrap()));
    assert_eq!(v.get("distance").is_some(), v["value"] != "draw");
    let (ok, out, err) = run(&["analyze", "--db", db, "--table-mib", "8", "--json", &f]);
    assert!(ok, "{err}");
    let a: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(a["value"], v["value"]);
    let moves = a["moves"].as_array().unwrap();
    assert_eq!(moves.len(), pos.legal_plies(Rules::standard()).len());
    assert_eq!(moves[0]["value"], a["value"]);
    for m in moves {
        assert!(m["ply"].is_string());
        assert_eq!(m.get("distance").is_some(), m["value"] != "draw");
    }
    // A moving-phase position in 3-3.
    let moving = fen_of(&Position::moving(Color::White, 0b111 << 16, 0b1011));
    let (ok, out, err) = run(&["probe", "--db", db, "--json", &moving]);
    assert!(ok, "{err}");
    assert!(out.contains("\"value\""));
    // A missing subspace is named with the command that builds it.
    let big = fen_of(&Position::moving(Color::White, 0b11111 << 16, 0b11111));
    let (ok, _, err) = run(&["probe", "--db", db, &big]);
    assert!(!ok);
    assert!(
        err.contains("5-5") && err.contains("millbase build"),
        "{err}"
    );
}

#[test]
fn play_refuses_bad_input_and_stops_at_end_of_input() {
    use std::io::Write;
    let db = small_db().to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(["play", "--db", db, "--table-mib", "8", "--human", "white"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"zz\nd4\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert_eq!(text.matches("refused").count(), 2, "{text}");
    assert!(text.contains("end of input"), "{text}");
    // Without the big databases the value is unknown, and says what is missing.
    assert!(text.contains("millbase build"), "{text}");
}
