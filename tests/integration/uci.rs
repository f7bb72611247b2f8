//! The protocol through a subprocess: `millbase uci` driven line by line.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use millbase::rules::notation::{format_ply, parse_ply};
use millbase::{Game, Rules};

struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Session {
    fn start() -> Session {
        Session::start_with(&[])
    }

    /// `millbase uci ARGS...`.
    fn start_with(args: &[&str]) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_millbase"))
            .arg("uci")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("millbase uci starts");
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `last`.
    fn until(&mut self, last: &str) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("an answer in time");
            let done = line.starts_with(last);
            out.push(line);
            if done {
                return out;
            }
        }
    }
}

/// The value after `key` in a line of `key value` pairs.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut tokens = line.split_whitespace();
    tokens.by_ref().find(|&t| t == key)?;
    tokens.next()
}

#[test]
fn a_session_from_uci_to_quit() {
    let r = Rules::standard();
    let mut s = Session::start();
    s.send("uci");
    let hello = s.until("uciok");
    assert!(hello[0].starts_with("id name millbase"));
    assert!(hello.iter().any(|l| l.starts_with("id author ")));
    for option in [
        "Hash",
        "DatabasePath",
        "SkillLevel",
        "MoveTimeMs",
        "Shuffling",
    ] {
        assert!(
            hello
                .iter()
                .any(|l| l.starts_with(&format!("option name {option} type "))),
            "{option}"
        );
    }
    s.send("isready");
    assert_eq!(s.until("readyok"), vec!["readyok"]);

    // A quiet search: progress lines, Sanmill's closing line, the standard line.
    s.send("ucinewgame");
    s.send("position startpos moves d2 f4");
    s.send("go depth 3");
    let lines = s.until("bestmove");
    let n = lines.len();
    let progress: Vec<&String> = lines[..n - 2].iter().collect();
    assert_eq!(progress.len(), 3);
    for (i, line) in progress.iter().enumerate() {
        assert_eq!(field(line, "depth"), Some((i + 1).to_string().as_str()));
        assert_eq!(field(line, "score"), Some("cp"));
        assert!(
            field(line, "nodes").is_some()
                && field(line, "nps").is_some()
                && field(line, "pv").is_some()
        );
    }
    let sanmill = &lines[n - 2];
    assert!(sanmill.starts_with("info depth 3 score "), "{sanmill}");
    let token = field(sanmill, "bestmove").unwrap();
    let best = lines[n - 1].strip_prefix("bestmove ").unwrap();
    assert_eq!(token, best);
    let game = Game::parse(r, "startpos moves d2 f4").unwrap();
    assert!(parse_ply(r, game.position(), best).is_ok());

    // A capture: Sanmill's token is the move, the standard line joins the removal;
    // the removal is then the answer in the pending-removal position.
    // (The hand-set weights, whose move at depth 2 is the capture.)
    s.send("setoption name Eval value shipped");
    s.send("position startpos moves a7 d6 d7 f4");
    s.send("go depth 2");
    let lines = s.until("bestmove");
    let n = lines.len();
    assert_eq!(field(&lines[n - 2], "bestmove"), Some("g7"));
    let joined = lines[n - 1].strip_prefix("bestmove ").unwrap();
    assert!(joined.starts_with("g7x"), "{joined}");
    s.send("position startpos moves a7 d6 d7 f4 g7");
    s.send("go depth 2");
    let lines = s.until("bestmove");
    let removal = lines.last().unwrap().strip_prefix("bestmove ").unwrap();
    assert!(removal.starts_with('x'), "{removal}");
    assert_eq!(field(&lines[lines.len() - 2], "bestmove"), Some(removal));

    // The network evaluation answers with a legal ply; an unknown evaluation is an
    // error that names the known ones.
    s.send("setoption name Eval value NET");
    s.send("position startpos moves a7 d6 d7 f4");
    s.send("go depth 4");
    let lines = s.until("bestmove");
    let best = lines.last().unwrap().strip_prefix("bestmove ").unwrap();
    let game = Game::parse(r, "startpos moves a7 d6 d7 f4").unwrap();
    assert!(parse_ply(r, game.position(), best).is_ok(), "{best}");
    s.send("setoption name Eval value nonsense");
    s.send("setoption name Threads value 0");
    s.send("isready");
    let lines = s.until("readyok");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Eval value nonsense") && l.contains("shipped, tuned or net")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Threads 0: give at least 1")),
        "{lines:?}"
    );
    // Two threads (lazy SMP): a legal answer.
    s.send("setoption name Threads value 2");
    s.send("go depth 6");
    let lines = s.until("bestmove");
    let best = lines.last().unwrap().strip_prefix("bestmove ").unwrap();
    assert!(parse_ply(r, game.position(), best).is_ok(), "{best}");
    s.send("setoption name Threads value 1");

    // Errors are reported, not fatal.
    s.send("bogus");
    s.send("position fen nonsense");
    s.send("setoption name Hash value lots");
    s.send("isready");
    let lines = s.until("readyok");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("info string error: "))
            .count(),
        3,
        "{lines:?}"
    );

    // Options, then an infinite search ended by stop.
    s.send("setoption name Hash value 8");
    s.send("setoption name Shuffling value false");
    s.send("setoption name MoveTimeMs value 0");
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(200));
    s.send("stop");
    let lines = s.until("bestmove");
    assert!(lines[lines.len() - 2].contains(" bestmove "));

    s.send("quit");
    let status = s.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn piped_commands_get_their_answer_at_end_of_input() {
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"position startpos\ngo depth 4\n")?;
            child.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("info depth 4 score ") && l.contains(" bestmove ")),
        "{text}"
    );
    assert!(text.lines().last().unwrap().starts_with("bestmove "));
}

/// The line that says warming is done.
const WARM_DONE: &str = "info string warm: done";

/// `position startpos moves ...` of a random game of `rules` of up to `max` plies.
fn random_game(rules: &Rules, rng: &mut crate::common::Rng, max: usize) -> String {
    let mut pos = millbase::Position::start(rules);
    let mut text = String::from("position startpos moves");
    for _ in 0..rng.below(max + 1) {
        let plies = pos.legal_plies(rules);
        if plies.is_empty() || pos.material(pos.to_move) < 3 {
            break;
        }
        let ply = plies[rng.below(plies.len())];
        text.push(' ');
        text.push_str(&format_ply(rules, ply));
        pos.make(rules, ply);
    }
    text
}

/// The score and best ply of each of `games` searched to depth 2 (each after
/// `ucinewgame`), and the `info string` lines met on the way.
fn searched(s: &mut Session, games: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    let (mut answers, mut infos) = (Vec::new(), Vec::new());
    for game in games {
        s.send("ucinewgame");
        s.send(game);
        s.send("go depth 2");
        let lines = s.until("bestmove");
        infos.extend(
            lines
                .iter()
                .filter(|l| l.starts_with("info string"))
                .cloned(),
        );
        let sanmill = lines
            .iter()
            .rev()
            .find(|l| l.contains(" bestmove "))
            .unwrap();
        let score = field(sanmill, "score").unwrap().to_string();
        answers.push((score, lines.last().unwrap().clone()));
    }
    (answers, infos)
}

#[test]
fn warm_is_reported_and_changes_no_answer() {
    let db = crate::common::standard_4();
    let rules = Rules::by_name("standard-4").unwrap();
    let mut rng = crate::common::Rng::new(0x77a2);
    let games: Vec<String> = (0..40).map(|_| random_game(rules, &mut rng, 16)).collect();
    let dir = db.to_str().unwrap();
    let mut warm = Session::start_with(&["--rules", "standard-4", "--db", dir, "--warm"]);
    // Searched at once, while warming may still go on.
    let (during, mut infos) = searched(&mut warm, &games);
    if !infos.iter().any(|l| l.starts_with(WARM_DONE)) {
        infos.push(warm.until(WARM_DONE).pop().unwrap());
    }
    let done: Vec<&String> = infos.iter().filter(|l| l.starts_with(WARM_DONE)).collect();
    assert_eq!(done.len(), 1, "{infos:?}");
    // It names every file of the directory.
    let files = std::fs::read_dir(db)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".mdb")
        })
        .count();
    assert!(
        done[0].contains(&format!(": {files} files read (")),
        "{}",
        done[0]
    );
    let (after, _) = searched(&mut warm, &games);
    assert_eq!(during, after, "answers while warming and after differ");
    warm.send("quit");
    assert!(warm.child.wait().unwrap().success());
    // A session without `--warm` says nothing of it and answers alike.
    let mut cold = Session::start_with(&["--rules", "standard-4", "--db", dir]);
    let (answers, infos) = searched(&mut cold, &games);
    assert!(infos.iter().all(|l| !l.contains("warm")), "{infos:?}");
    assert_eq!(answers, during, "a warmed and a cold session differ");
    cold.send("quit");
    assert!(cold.child.wait().unwrap().success());
}

/// `--cache-mb` sets the block cache of the databases a command opens: the warm
/// line of `uci --warm` names it as the limit; a size of 0 is refused.
#[test]
fn cache_mb_sets_the_block_cache() {
    let dir = crate::common::standard_4().to_str().unwrap();
    let mut s = Session::start_with(&[
        "--rules",
        "standard-4",
        "--db",
        dir,
        "--warm",
        "--cache-mb",
        "16",
    ]);
    let done = s.until(WARM_DONE).pop().unwrap();
    assert!(done.contains(" of 16.0 MiB)"), "{done}");
    s.send("quit");
    assert!(s.child.wait().unwrap().success());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(["probe", "startpos", "--db", dir, "--cache-mb", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--cache-mb") && err.contains("1..="), "{err}");
}
