//! The protocol through a subprocess: `millbase uci` driven line by line.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use millbase::rules::notation::parse_ply;
use millbase::{Game, Rules};

struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Session {
    fn start() -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_millbase"))
            .arg("uci")
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
