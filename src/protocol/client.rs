//! The protocol's client: an external engine driven through its standard input
//! and output, as the arena's `uci:` player.

use crate::arena::SearchLimit;
use crate::fen::{self};
use crate::game::Game;
use crate::notation::{parse_ply, parse_ply_syntax};
use crate::position::{Ply, Position};
use crate::protocol::server::sanmill_token;
use crate::rules::Rules;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// An external engine speaking the protocol of `docs/PROTOCOL.md`.
///
/// A search's answer is either a standard `bestmove PLY` line (a capture with its
/// removal joined) or Sanmill's `info ... bestmove TOKEN` line, where a mill-closing
/// move comes without its removal and the removal is the answer to a second search
/// from the position with the removal pending. millbase's engine prints both lines;
/// after an `info ... bestmove` line the arena sends `isready` and takes a standard
/// `bestmove` line arriving before `readyok` instead (millbase writes both lines at
/// once); once an engine has printed a standard line, only standard lines are
/// awaited. Until then each search starts with an `isready` round trip that clears
/// whatever the last one left.
pub struct UciClient {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    go: String,
    timeout: Duration,
    standard: bool,
    name: String,
}

impl UciClient {
    /// Starts the engine and sets it up (`uci`, options, `ucinewgame`, `isready`).
    pub fn start(
        command: &[String],
        limit: SearchLimit,
        timeout: Duration,
        db: Option<&std::path::Path>,
    ) -> Result<UciClient, String> {
        Self::start_inner(command, limit, timeout, db)
            .map_err(|e| format!("{e} (while starting it: uci, options, isready)"))
    }

    fn start_inner(
        command: &[String],
        limit: SearchLimit,
        timeout: Duration,
        db: Option<&std::path::Path>,
    ) -> Result<UciClient, String> {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start '{}': {e}", command.join(" ")))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let go = match limit {
            SearchLimit::Depth(d) => format!("go depth {d}"),
            SearchLimit::MoveTime(ms) => format!("go movetime {ms}"),
        };
        let mut player = UciClient {
            child,
            stdin,
            lines: rx,
            go,
            timeout,
            standard: false,
            name: command.join(" "),
        };
        player.send("uci")?;
        player.wait_for(|l| l == "uciok", Duration::from_secs(30))?;
        if let SearchLimit::Depth(_) = limit {
            // Sanmill's engine applies a default time limit unless told otherwise.
            player.send("setoption name MoveTimeMs value 0")?;
        }
        player.send("setoption name Shuffling value false")?;
        if let Some(dir) = db {
            player.send(&format!(
                "setoption name DatabasePath value {}",
                dir.display()
            ))?;
        }
        player.send("ucinewgame")?;
        player.send("isready")?;
        player.wait_for(|l| l == "readyok", Duration::from_secs(60))?;
        Ok(player)
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("'{}' stopped reading its input: {e}", self.name))
    }

    fn recv(&mut self, deadline: Instant) -> Result<String, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => Ok(line.trim().to_string()),
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("'{}' did not answer in time", self.name))
            }
            Err(RecvTimeoutError::Disconnected) => Err(format!("'{}' exited", self.name)),
        }
    }

    fn wait_for(
        &mut self,
        done: impl Fn(&str) -> bool,
        within: Duration,
    ) -> Result<String, String> {
        let deadline = Instant::now() + within;
        loop {
            let line = self.recv(deadline)?;
            if done(&line) {
                return Ok(line);
            }
        }
    }

    /// Sends the position and `go`; the answer token and whether it is a standard
    /// `bestmove` (a complete ply).
    fn search(&mut self, position: &str) -> Result<(String, bool), String> {
        if !self.standard {
            // Lines left from the last search (a late standard `bestmove`) must not
            // be taken for this one's answer.
            self.send("isready")?;
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let line = self.recv(deadline)?;
                if line.starts_with("bestmove") {
                    self.standard = true;
                }
                if line == "readyok" {
                    break;
                }
            }
        }
        self.send(position)?;
        self.send(&self.go.clone())?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let line = self.recv(deadline)?;
            let mut words = line.split_whitespace();
            match words.next() {
                Some("bestmove") => {
                    self.standard = true;
                    return Ok((words.next().unwrap_or("").to_string(), true));
                }
                Some("info") if !self.standard => {
                    let Some(token) = words.skip_while(|&w| w != "bestmove").nth(1) else {
                        continue;
                    };
                    let token = token.to_string();
                    self.send("isready")?;
                    loop {
                        let line = self.recv(deadline)?;
                        if let Some(t) = line.strip_prefix("bestmove ") {
                            self.standard = true;
                            let t = t.split_whitespace().next().unwrap_or("").to_string();
                            self.wait_for(|l| l == "readyok", self.timeout)?;
                            return Ok((t, true));
                        }
                        if line == "readyok" {
                            return Ok((token, false));
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// `position startpos|fen ... moves ...` for `game`, removals as separate tokens.
fn position_command(rules: &Rules, game: &Game, extra: Option<&str>) -> String {
    let start = Position::start(rules);
    let mut text = if game.start == start && game.start_counters.plies_since_removal == 0 {
        "position startpos".to_string()
    } else {
        format!(
            "position fen {}",
            fen::format(rules, &game.start, game.start_counters)
        )
    };
    let mut tokens = Vec::new();
    for &ply in &game.plies {
        tokens.push(sanmill_token(rules, ply));
        if ply.removes() && !ply.is_lone_removal() {
            tokens.push(format!("x{}", rules.name(ply.remove)));
        }
    }
    tokens.extend(extra.map(String::from));
    if !tokens.is_empty() {
        text.push_str(" moves ");
        text.push_str(&tokens.join(" "));
    }
    text
}

impl UciClient {
    /// Asks the engine for its ply in `game` (two searches for a capture in Sanmill's
    /// dialect).
    pub fn play(&mut self, game: &Game) -> Result<Ply, String> {
        let rules = Rules::standard();
        let pos = *game.position();
        let (token, complete) = self.search(&position_command(rules, game, None))?;
        let bad = |t: &str, e: String| format!("answered '{t}': {e}");
        if complete || pos.pending_removal {
            return parse_ply(rules, &pos, &token).map_err(|e| bad(&token, e.to_string()));
        }
        let ply = parse_ply_syntax(rules, &token).map_err(|e| bad(&token, e.to_string()))?;
        if ply.removes() || !pos.ply_closes_mill(rules, ply) {
            return parse_ply(rules, &pos, &token).map_err(|e| bad(&token, e.to_string()));
        }
        // Sanmill's first half of a capture: ask for the removal.
        let (removal, _) = self.search(&position_command(rules, game, Some(&token)))?;
        let r = parse_ply_syntax(rules, &removal).map_err(|e| bad(&removal, e.to_string()))?;
        let full = ply.with_removal(r.remove);
        if !r.is_lone_removal() || !pos.is_legal(rules, full) {
            return Err(format!(
                "answered '{token}' and then '{removal}', which is not a legal removal"
            ));
        }
        Ok(full)
    }
}

impl Drop for UciClient {
    fn drop(&mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
