//! The command-line program on good and bad input: bad input gives a one-line
//! `error:` message and a non-zero exit, never a panic.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("the millbase binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts that `args` fail cleanly; returns the error line.
fn fails(args: &[&str]) -> String {
    let out = run(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let what = format!("{args:?}\nstdout: {stdout}\nstderr: {stderr}");
    assert!(!out.status.success(), "succeeded: {what}");
    assert!(out.status.code().is_some(), "killed by a signal: {what}");
    assert!(
        !stderr.contains("panicked") && !stdout.contains("panicked"),
        "panic: {what}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {what}");
    assert!(lines[0].starts_with("error:"), "no 'error:': {what}");
    assert!(
        lines[0].len() > "error: ".len() + 5,
        "empty message: {what}"
    );
    lines[0].to_string()
}

fn succeeds(args: &[&str]) -> String {
    let out = run(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    assert!(!stderr.contains("panicked"));
    stdout
}

const START_FEN: &str = "********/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1 ids:nodes";

#[test]
fn malformed_fens_are_refused() {
    for fen in [
        // Too few fields.
        "********/********/******** w p p 0 9 0 9",
        // A ring of 7.
        "*******/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
        // A bad cell.
        "***Z****/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
        // A bad side to move.
        "********/********/******** q p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
        // A count that is not a number.
        "********/********/******** w p p 0 nine 0 9 0 0 -1 -1 -1 -1 0 0 1",
        // A count that disagrees with the board.
        "O*******/********/******** b p p 0 8 0 9 0 0 -1 -1 -1 -1 0 0 1",
        // A removal pending with nothing to show for it.
        "********/********/******** w p r 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
        // Impossible hands: Black to move before White has placed.
        "********/********/******** b p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
        // Huge and negative numbers.
        "********/********/******** w p p 0 99999999999999999999 0 9 0 0 -1 -1 -1 -1 0 0 1",
        "********/********/******** w p p 0 -9 0 9 0 0 -1 -1 -1 -1 0 0 1",
    ] {
        for cmd in ["show", "moves"] {
            fails(&[cmd, fen]);
        }
        fails(&["perft", "1", fen]);
    }
}

#[test]
fn ten_white_stones_are_refused() {
    let line = fails(&[
        "show",
        "OOOOOOOO/OO******/******** w m s 10 0 0 0 0 0 -1 -1 -1 -1 0 0 1",
    ]);
    assert!(line.contains("10"), "{line}");
    // Nine on the board and one in hand is ten as well.
    fails(&[
        "show",
        "OOOOOOOO/O*@@@***/******** w m s 9 1 3 1 0 0 -1 -1 -1 -1 0 0 1",
    ]);
}

#[test]
fn illegal_plies_are_refused() {
    for moves in [
        // A point taken twice.
        "startpos moves a1 a1",
        // A move in the placement phase.
        "startpos moves a1-a4",
        // A mill-closing placement in mid-list without its removal.
        "startpos moves a7 d6 d7 f4 g7 b6",
        // Removing a stone that is not there / not the opponent's.
        "startpos moves a7 d6 d7 f4 g7xa1",
        "startpos moves a7 d6 d7 f4 g7xa7",
        // A lone removal with no mill.
        "startpos moves xa1",
        // A slide to a point that is not adjacent.
        "@OOO@*@O/O@@O*@O*/***@O*@O b m s 9 0 8 0 0 0 -1 -1 -1 -1 0 11 15 moves f4-a1",
    ] {
        fails(&["moves", moves]);
        fails(&["show", moves]);
    }
    // Split into several arguments, as a shell passes them.
    fails(&["moves", "startpos", "moves", "a1", "a1"]);
}

#[test]
fn unknown_points_and_garbage_are_refused() {
    for pos in [
        "startpos moves d4",
        "startpos moves h9",
        "startpos moves a1-z9",
        "startpos moves a1xq1",
        "startpos moves é1",
        "garbage",
        "startpos garbage",
        "startpos moves a1 garbage",
        "",
        "moves a1",
        "\u{1}\u{7f}",
    ] {
        fails(&["moves", pos]);
        fails(&["show", pos]);
    }
    fails(&["perft", "2", "garbage"]);
}

#[test]
fn perft_prints_one_line_per_depth() {
    let out = succeeds(&["perft", "3"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.contains(&"depth=1 nodes=24"), "{out}");
    assert!(lines.contains(&"depth=2 nodes=552"), "{out}");
    assert!(lines.contains(&"depth=3 nodes=12144"), "{out}");
    assert!(
        lines[..3]
            == [
                "depth=1 nodes=24",
                "depth=2 nodes=552",
                "depth=3 nodes=12144"
            ]
    );
    assert!(out.contains("nps="), "{out}");
    // The position may be given.
    let out = succeeds(&["perft", "2", START_FEN]);
    assert!(out.lines().any(|l| l == "depth=2 nodes=552"), "{out}");
    let out = succeeds(&[
        "perft", "1", "startpos", "moves", "a7", "d6", "d7", "f4", "g7",
    ]);
    assert!(out.lines().any(|l| l == "depth=1 nodes=2"), "{out}");
}

#[test]
fn moves_lists_the_removals_after_a_mill() {
    let out = succeeds(&["moves", "startpos moves a7 d6 d7 f4 g7"]);
    let mut plies: Vec<&str> = out.split_whitespace().collect();
    plies.sort();
    assert_eq!(plies, ["xd6", "xf4"], "{out}");
    // Also as separate arguments.
    let out = succeeds(&["moves", "startpos", "moves", "a7", "d6", "d7", "f4", "g7"]);
    let mut plies: Vec<&str> = out.split_whitespace().collect();
    plies.sort();
    assert_eq!(plies, ["xd6", "xf4"], "{out}");
    // The moving example of PROTOCOL.md.
    let out = succeeds(&[
        "moves",
        "@OOO@*@O/O@@O*@O*/***@O*@O b m s 9 0 8 0 0 0 -1 -1 -1 -1 0 11 15 ids:nodes",
    ]);
    let mut plies: Vec<&str> = out.split_whitespace().collect();
    plies.sort();
    let mut want = [
        "f4-g4", "d3-d2", "d3-c3", "c4-c3", "g1-g4", "a4-a1", "b2-d2",
    ];
    want.sort();
    assert_eq!(plies, want, "{out}");
}

#[test]
fn show_prints_the_board_and_side() {
    let out = succeeds(&["show", "startpos moves a7 d6 d7 f4 g7"]);
    assert!(out.contains("white to move"), "{out}");
    assert!(
        out.contains("********/@*@*****/OO*****O w p r 3 6 2 7 1 0"),
        "{out}"
    );
}

#[test]
fn flags_after_a_position_are_flags_not_fen_fields() {
    let fen = "O@O@O@**/*O@*****/******** w m s 4 0 4 0 0 0 -1 -1 -1 -1 0 0 1";
    // An unknown flag after the position is refused, not swallowed as a FEN token.
    fails(&["show", fen, "--bogus"]);
    // Unquoted FEN fields (with their -1s) still read as one position.
    let mut args = vec!["moves"];
    args.extend(fen.split(' '));
    assert!(!succeeds(&args).trim().is_empty());
    // Text after the 17 fields that is not an extension token is refused.
    let err = fails(&["show", &format!("{fen} junk")]);
    assert!(err.contains("junk"), "{err}");
}

#[test]
fn the_arena_piped_into_a_reader_that_stops_is_no_panic() {
    // `millbase arena ... | head -0`: the reader has gone before the summary is
    // written (the games take longer than closing the pipe).
    let mut child = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(["arena", "random", "random", "--games", "400", "--quiet"])
        .env("RUST_BACKTRACE", "0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the millbase binary runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(stderr.is_empty(), "{stderr}");
}

/// `--rules` names every rule set of RULES.md on `perft`, `moves` and `show`; an
/// unknown name is refused with the list of known ones.
#[test]
fn rules_option_takes_every_rule_set() {
    let out = succeeds(&["perft", "2", "--rules", "six"]);
    assert!(out.contains("depth=2 nodes=240"), "{out}");
    let out = succeeds(&["perft", "3", "--rules", "lasker"]);
    assert!(out.contains("depth=3 nodes=13552"), "{out}");
    let out = succeeds(&["moves", "--rules", "six-4", "startpos"]);
    assert_eq!(out.split_whitespace().count(), 16, "{out}");
    let out = succeeds(&["show", "--rules", "morabaraba", "startpos"]);
    assert!(
        out.contains("FEN ********/********/******** w p p 0 12 0 12"),
        "{out}"
    );
    let out = succeeds(&["show", "--rules", "six", "startpos"]);
    assert!(out.contains("FEN ********/******** w p p 0 6 0 6"), "{out}");
    let err = fails(&["perft", "1", "--rules", "nine"]);
    assert!(
        err.contains("standard, lasker, morabaraba, twelve, no-flying, six"),
        "{err}"
    );
    let err = fails(&["perft", "1", "--rules", "six-9"]);
    assert!(err.contains("from 3 to 8"), "{err}");
}
