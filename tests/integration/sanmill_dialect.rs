//! `millbase uci` as Sanmill's tools drive it: one closing line in Sanmill's form
//! (`--sanmill-bestmove`), a removal as a search of its own, `go depth 0`, `go topn N`,
//! and Sanmill's rule options resolved to the one rule set they describe, refused
//! with an `info string` naming them when they describe none.

use millbase::Rules;
use millbase::rules::notation::parse_ply;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `millbase uci ARGS` on `input` to its end; the lines it printed.
fn session(args: &[&str], input: &str) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .arg("uci")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn with_bestmove(lines: &[String]) -> Vec<&String> {
    lines.iter().filter(|l| l.contains("bestmove")).collect()
}

fn token(line: &str) -> &str {
    line.rsplit(' ').next().unwrap()
}

// White to move closes the mill d7-g7-a7 by placing at g7 (a7 and d7 are White's).
const CAPTURE: &str = "position startpos moves a7 b6 d7 d6";

#[test]
fn one_closing_line_in_sanmills_form_and_the_removal_as_its_own_search() {
    let input = format!("position startpos\ngo depth 2\n{CAPTURE}\ngo depth 2\n");
    let both = session(&[], &input);
    let one = session(&["--sanmill-bestmove"], &input);
    let set = session(
        &[],
        &format!("setoption name SanmillBestmove value true\n{input}"),
    );
    assert_eq!(with_bestmove(&both).len(), 4, "{both:?}");
    assert_eq!(with_bestmove(&one), with_bestmove(&set));
    let closing = with_bestmove(&one);
    assert_eq!(closing.len(), 2, "{one:?}");
    for line in &closing {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&words[..2], ["info", "depth"], "{line}");
        assert_eq!(words[3], "score");
        assert_eq!(words[words.len() - 4], "nodes");
        assert_eq!(words[words.len() - 2], "bestmove");
    }
    // The same search in both modes: Sanmill's line is the first of the two.
    let both_sanmill: Vec<_> = with_bestmove(&both)
        .into_iter()
        .filter(|l| l.starts_with("info"))
        .collect();
    assert_eq!(both_sanmill, closing);
    // The capture comes as the move alone; its removal is the answer to a second
    // search from the position with the removal pending, and together they are
    // the standard line's ply.
    let mill = token(closing[1]);
    assert!(!mill.contains('x'), "{mill}");
    let removal_input = format!("{CAPTURE} {mill}\ngo depth 2\n");
    let removal = session(&["--sanmill-bestmove"], &removal_input);
    let removal = token(with_bestmove(&removal)[0]).to_string();
    assert!(removal.starts_with('x'), "{removal}");
    let standard = token(with_bestmove(&both)[3]);
    assert_eq!(format!("{mill}{removal}"), standard);
    let game =
        millbase::Game::parse(Rules::standard(), CAPTURE.trim_start_matches("position ")).unwrap();
    parse_ply(Rules::standard(), game.position(), standard).unwrap();
}

#[test]
fn go_depth_0_takes_the_depth_from_the_options_as_sanmill_does() {
    let lines = session(
        &["--sanmill-bestmove"],
        "setoption name MoveTimeMs value 0\nsetoption name SkillLevel value 3\nposition startpos\ngo depth 0\n",
    );
    assert!(
        with_bestmove(&lines)[0].starts_with("info depth 3 "),
        "{lines:?}"
    );
    let lines = session(
        &["--sanmill-bestmove"],
        "setoption name MoveTimeMs value 0\nposition startpos\ngo depth 0\n",
    );
    assert!(
        with_bestmove(&lines)[0].starts_with("info depth 1 "),
        "{lines:?}"
    );
}

#[test]
fn go_topn_ranks_the_root_moves_before_the_closing_line() {
    let lines = session(
        &["--sanmill-bestmove"],
        &format!("{CAPTURE}\ngo depth 2 topn 3\nposition startpos\ngo topn 100 depth 1\n"),
    );
    let topn: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("info topn"))
        .collect();
    assert_eq!(topn.len(), 3 + 24, "{lines:?}");
    let closing = lines.iter().position(|l| l.contains("bestmove")).unwrap();
    assert!(
        lines
            .iter()
            .position(|l| l.starts_with("info topn"))
            .unwrap()
            < closing
    );
    let game =
        millbase::Game::parse(Rules::standard(), CAPTURE.trim_start_matches("position ")).unwrap();
    let mut tokens = Vec::new();
    let mut scores = Vec::new();
    for (k, line) in topn[..3].iter().enumerate() {
        let w: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            &w[..4],
            ["info", "topn", "rank", &(k + 1).to_string()],
            "{line}"
        );
        assert_eq!(w[4], "move");
        tokens.push(w[5]);
        assert_eq!(w[6], "score");
        scores.push(if w[7] == "mate" {
            100_000 * w[8].parse::<i64>().unwrap().signum()
        } else {
            w[8].parse().unwrap()
        });
    }
    // The mill at g7 (with its best removal) ranks first, once, for White.
    assert_eq!(tokens[0], "g7", "{topn:?}");
    assert!(scores.windows(2).all(|s| s[0] >= s[1]), "{scores:?}");
    let legal: Vec<String> = game
        .position()
        .legal_plies(Rules::standard())
        .iter()
        .map(|&p| millbase::play::protocol::server::sanmill_token(Rules::standard(), p))
        .collect();
    assert!(tokens.iter().all(|t| legal.contains(&t.to_string())));
    let mut distinct = tokens.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 3);
    let all: std::collections::BTreeSet<&str> = topn[3..]
        .iter()
        .map(|l| l.split_whitespace().nth(5).unwrap())
        .collect();
    assert_eq!(all.len(), 24);
}

#[test]
fn sanmills_rule_options_take_effect_together_as_the_one_rule_set_they_describe() {
    // Options that only matter together (no rule set has 12 stones and no
    // diagonals with a full board drawn), then `isready`: morabaraba, silently.
    let lines = session(
        &[],
        "setoption name BoardFullAction value 4\nsetoption name PiecesCount value 12\n\
         setoption name HasDiagonalLines value true\nisready\n\
         position startpos moves a1 d7 b2 d6 c3\nd\n",
    );
    assert_eq!(lines[0], "readyok", "{lines:?}");
    // c3 closes the diagonal a1-b2-c3: a removal pending, 12 stones a side.
    let fen: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!((fen[3], fen[5], fen[7]), ("r", "9", "10"), "{lines:?}");
    // Each option alone with `isready`: the rule set after each, or the refusal.
    let steps = [
        ("PiecesCount value 10", None),
        ("MayMoveInPlacingPhase value on", None),
        ("MayFly value false", Some("MayFly false")),
        ("MayMoveInPlacingPhase value false", None),
        ("flyPieceCount value 4", None),
        (
            "MayRemoveMultiple value true",
            Some("MayRemoveMultiple true"),
        ),
        ("MayRemoveMultiple value false", None),
        (
            "CustodianCaptureEnabled value true",
            Some("CustodianCaptureEnabled true"),
        ),
        ("CustodianCaptureEnabled value false", None),
        ("LeapCaptureOnSquareEdges value false", None),
        ("NMoveRule value 50", None),
        ("ThreefoldRepetitionRule value false", None),
        ("PiecesCount value 13", Some("from 3 to 12")),
        ("MayFly value perhaps", Some("true or false")),
    ];
    let mut input = String::new();
    for (option, _) in steps {
        input.push_str(&format!("setoption name {option}\nisready\nd\n"));
    }
    let lines = session(&[], &input);
    let mut answers = lines.split(|l| l == "readyok");
    let mut fens = Vec::new();
    for (option, refused) in steps {
        let said = answers.next().unwrap();
        // The FEN printed by `d` after the previous `isready` comes first.
        let errors: Vec<&String> = said
            .iter()
            .filter(|l| l.starts_with("info string"))
            .collect();
        fens.extend(
            said.iter()
                .filter(|l| !l.starts_with("info string"))
                .cloned(),
        );
        match refused {
            None => assert!(errors.is_empty(), "{option}: {said:?}"),
            Some(name) => assert!(
                errors.len() == 1
                    && errors[0].starts_with("info string error: ")
                    && errors[0].contains(name),
                "{option}: {said:?}"
            ),
        }
    }
    fens.extend(answers.next().unwrap().iter().cloned());
    // The stones in hand at the start of each step's rule set: standard-10, lasker
    // (10), the refusal keeps lasker, standard-10, no-flying-10 (flyPieceCount 4
    // with MayFly false), ...
    let hands: Vec<&str> = fens
        .iter()
        .map(|f| f.split_whitespace().nth(5).unwrap())
        .collect();
    assert!(hands.iter().all(|&h| h == "10"), "{fens:?}");
}

#[test]
fn the_rule_set_reached_is_played() {
    // Three white stones against three: standard flies (3 x 18 empty points),
    // no-flying (MayFly false) slides.
    let fen = "O*O*O***/@*******/*****@*@ w m s 3 0 3 0 0 0 -1 -1 -1 -1 0 0 30";
    let root_moves = |options: &str| -> Vec<String> {
        let lines = session(
            &[],
            &format!("{options}position fen {fen}\ngo depth 1 topn 99\n"),
        );
        lines
            .iter()
            .filter(|l| l.starts_with("info topn"))
            .map(|l| l.split_whitespace().nth(5).unwrap().to_string())
            .collect()
    };
    assert_eq!(root_moves("").len(), 54);
    let slides = root_moves("setoption name MayFly value false\n");
    let rules = Rules::standard();
    assert!(!slides.is_empty());
    for m in &slides {
        let (from, to) = m.split_once('-').unwrap();
        let (from, to) = (rules.point(from).unwrap(), rules.point(to).unwrap());
        assert!(rules.adjacency[usize::from(from)] >> to & 1 == 1, "{m}");
    }
}

/// One `setoption` line and `isready`: what the session said before `readyok`.
fn answer_to(args: &[&str], option: &str) -> Vec<String> {
    let lines = session(args, &format!("setoption name {option}\nisready\n"));
    let end = lines.iter().position(|l| l == "readyok").unwrap();
    lines[..end].to_vec()
}

#[test]
fn rule_options_start_from_the_rules_of_the_session_and_must_be_those_of_its_directory() {
    // --rules standard-5: the session starts with five stones a side, and
    // PiecesCount 9 makes it standard.
    let lines = session(
        &["--rules", "standard-5"],
        "d\nsetoption name PiecesCount value 9\nd\n",
    );
    let hands: Vec<&str> = lines
        .iter()
        .map(|l| l.split_whitespace().nth(5).unwrap())
        .collect();
    assert_eq!(hands, ["5", "9"], "{lines:?}");
    // six, which no options describe, stays six when sent Sanmill's defaults and
    // the options no rule set depends on; a default changed makes it standard.
    let lines = session(
        &["--rules", "six"],
        "setoption name PiecesCount value 9\nsetoption name NMoveRule value 50\nd\n\
         setoption name MayFly value false\nd\n",
    );
    let boards: Vec<&str> = lines
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        boards,
        ["********/********", "********/********/********"],
        "{lines:?}"
    );
    // A directory of the 4-stone game gives its rules to the session.
    let dir = crate::common::Scratch::new("dialect-rules");
    let built = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(["build", "--quiet", "--rules", "standard-4", "--db"])
        .arg(&dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(built.success());
    let db = dir.to_str().unwrap();
    assert_eq!(
        answer_to(&["--db", db], "PiecesCount value 4"),
        Vec::<String>::new()
    );
    // Options describing other rules than the directory's are refused, naming both.
    let refused = answer_to(&["--db", db], "PiecesCount value 9");
    assert!(
        refused.len() == 1
            && refused[0].starts_with("info string error: ")
            && refused[0].contains("describe standard,")
            && refused[0].contains("rules standard-4"),
        "{refused:?}"
    );
    // The same directory is refused by a standard session, at start and by option.
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(["uci", "--rules", "standard", "--db", db])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("standard-4") && err.contains("--rules standard-4"),
        "{err}"
    );
    let said = answer_to(&[], &format!("DatabasePath value {db}"));
    assert!(
        said.len() == 1
            && said[0].starts_with("info string error:")
            && said[0].contains("standard-4"),
        "{said:?}"
    );
    // And the session plays the 4-stone game: after 8 placements it moves.
    let lines = session(
        &["--db", db],
        "position startpos moves a7 b6 d1 d6 g7 f4 g1 b4\ngo depth 2\n",
    );
    let best = token(with_bestmove(&lines).last().unwrap()).to_string();
    assert!(best.contains('-'), "a moving ply, not {best}: {lines:?}");
}
