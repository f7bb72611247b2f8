//! The protocol's client: an external engine driven through its standard input and
//! output, as the arena's `uci:` player.
//!
//! A search's answer is either a standard `bestmove PLY` line (a capture with its
//! removal joined) or Sanmill's `info ... bestmove TOKEN` line, where a mill-closing
//! move comes without its removal and the removal is the answer to a second search
//! from the position with the removal pending. millbase's engine prints both lines
//! (or only Sanmill's, with `SanmillClosing`); after an `info ... bestmove` line the
//! client sends `isready` and takes a standard `bestmove` line arriving before
//! `readyok` instead; once an engine has printed a standard line, only standard
//! lines are awaited. Until then each search starts with an `isready` round trip
//! that clears whatever the last one left.
//!
//! What ends a game instead of a ply is an [`Outcome`]: Sanmill's `bestmove draw`
//! (it applies threefold repetition and its N-move rules itself) and `bestmove
//! none`, its `info string sanmill_error {...}` lines (with `StrictFailurePolicy`),
//! an illegal answer, an engine that exits, and one silent past the timeout.

use crate::play::protocol::rule_options;
use crate::play::protocol::wire::sanmill_token;
use crate::rules::Rules;
use crate::rules::fen;
use crate::rules::game::Game;
use crate::rules::notation::{parse_ply, parse_ply_syntax};
use crate::rules::position::{Ply, Position};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The limits sent with every `go`; none set means `go depth 4`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GoLimits {
    /// `go depth D` (0: Sanmill's engine takes the depth from its `SkillLevel`).
    pub depth: Option<u32>,
    /// `go movetime MS`.
    pub movetime: Option<u64>,
    /// `go nodes N`.
    pub nodes: Option<u64>,
}

impl GoLimits {
    /// The `go` line.
    pub fn command(&self) -> String {
        let mut go = String::from("go");
        let depth = match (self.depth, self.movetime, self.nodes) {
            (None, None, None) => Some(4),
            (d, _, _) => d,
        };
        for (key, value) in [
            ("depth", depth.map(u64::from)),
            ("movetime", self.movetime),
            ("nodes", self.nodes),
        ] {
            if let Some(v) = value {
                go.push_str(&format!(" {key} {v}"));
            }
        }
        go
    }

    /// How long one search may take before the engine counts as silent: 30 s, plus
    /// 10 s a ply of depth, plus five times the move time.
    pub fn default_timeout(&self) -> Duration {
        let depth = self
            .depth
            .unwrap_or(if self.movetime.is_none() { 4 } else { 0 });
        Duration::from_secs(30 + 10 * u64::from(depth))
            + Duration::from_millis(self.movetime.unwrap_or(0).saturating_mul(5))
    }
}

/// How to start and set up an external engine.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// Limits of each search.
    pub go: GoLimits,
    /// `setoption name N value V` lines, sent in this order after the client's own
    /// (`MoveTimeMs 0` when no move time is given, `Shuffling false`, then Sanmill's
    /// rule options for [`ClientConfig::rules`] where they differ from Sanmill's
    /// defaults, see [`rule_options::sanmill_setup`]), so they win.
    pub options: Vec<(String, String)>,
    /// Sent as `setoption name DatabasePath value DIR`.
    pub database: Option<PathBuf>,
    /// How long one search may take.
    pub timeout: Duration,
    /// The rules of the games: told to the engine as Sanmill's rule options; how
    /// positions are sent and plies read.
    pub rules: &'static Rules,
}

/// What the engine answered for one ply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A legal ply (a capture with its removal).
    Ply(Ply),
    /// `bestmove draw`: the engine holds the game drawn by its own rules.
    Draw,
    /// `bestmove none`: the engine found no move.
    NoMove,
    /// An error line (`info string sanmill_error ...` or `info string error: ...`)
    /// in place of a move; the line.
    Error(String),
    /// An answer that is not a legal ply here; what was wrong.
    Illegal(String),
    /// The engine exited or stopped reading; what happened.
    Crashed(String),
    /// No answer within the timeout.
    Silent(String),
}

/// Why a search gave no ply.
enum Fail {
    Exited(String),
    Silent(String),
}

impl From<Fail> for Outcome {
    fn from(f: Fail) -> Outcome {
        match f {
            Fail::Exited(why) => Outcome::Crashed(why),
            Fail::Silent(why) => Outcome::Silent(why),
        }
    }
}

impl From<Fail> for String {
    fn from(f: Fail) -> String {
        match f {
            Fail::Exited(why) | Fail::Silent(why) => why,
        }
    }
}

/// What one search answered.
enum Answer {
    /// A token and whether it came on a standard `bestmove` line (a complete ply).
    Token(String, bool),
    /// An error line instead of a move.
    Error(String),
}

/// The longest line an engine may write, in bytes (without its newline). A longer
/// one ends the engine's game as a crash: it is no protocol line, and reading on
/// would let an engine fill the arena's memory.
pub const MAX_LINE: usize = 1 << 16;

/// Sends the lines of an engine's output to `tx` until it ends or a line is longer
/// than [`MAX_LINE`] (then an error, and nothing more). Lines are read as bytes
/// and decoded lossily: a byte that is not UTF-8 (in an `info string`, an engine's
/// name) becomes U+FFFD and never ends the engine's game.
pub fn read_lines(
    stdout: impl std::io::Read,
    tx: &std::sync::mpsc::Sender<Result<String, String>>,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let mut limited = std::io::Read::take(&mut reader, MAX_LINE as u64 + 1);
        match limited.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') && line.len() > MAX_LINE {
            let _ = tx.send(Err(format!("wrote a line longer than {MAX_LINE} bytes")));
            return;
        }
        let text = String::from_utf8_lossy(&line);
        if tx
            .send(Ok(text.trim_end_matches(['\n', '\r']).to_string()))
            .is_err()
        {
            return;
        }
    }
}

/// An external engine, started and set up.
pub struct UciClient {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Result<String, String>>,
    go: String,
    timeout: Duration,
    standard: bool,
    name: String,
    rules: &'static Rules,
}

/// Whether `line` is an engine's complaint: Sanmill's error and refused-option lines,
/// millbase's error lines.
fn is_error_line(line: &str) -> bool {
    line.starts_with("info string sanmill_error")
        || line.starts_with("info string error")
        || line.starts_with("info string unsupported setoption")
}

impl UciClient {
    /// Starts the engine and sets it up (`uci`, options, `ucinewgame`, `isready`); an
    /// option the engine refuses is an error naming it.
    pub fn start(config: &ClientConfig) -> Result<UciClient, String> {
        Self::start_inner(config)
            .map_err(|e| format!("{e} (while starting it: uci, options, isready)"))
    }

    fn start_inner(config: &ClientConfig) -> Result<UciClient, String> {
        let command = &config.command;
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
        std::thread::spawn(move || read_lines(stdout, &tx));
        let mut client = UciClient {
            child,
            stdin,
            lines: rx,
            go: config.go.command(),
            timeout: config.timeout,
            standard: false,
            name: command.join(" "),
            rules: config.rules,
        };
        client.send("uci")?;
        client.wait_for(|l| l == "uciok", Duration::from_secs(30))?;
        let mut options = Vec::new();
        if config.go.movetime.is_none() {
            // Sanmill's engine applies a default time limit unless told otherwise.
            options.push(("MoveTimeMs".to_string(), "0".to_string()));
        }
        options.push(("Shuffling".into(), "false".into()));
        // The rules, before the database (whose rules must be these): the rule options
        // that differ from Sanmill's defaults. Rules that Sanmill's options cannot
        // describe (`six`) are sent nothing: the engine plays them by its command line.
        if let Ok(rule_options) = rule_options::sanmill_setup(config.rules) {
            options.extend(rule_options.into_iter().map(|(n, v)| (n.to_string(), v)));
        }
        if let Some(dir) = &config.database {
            options.push(("DatabasePath".into(), dir.display().to_string()));
        }
        options.extend(config.options.iter().cloned());
        for (name, value) in &options {
            client.send(&format!("setoption name {name} value {value}"))?;
        }
        client.send("ucinewgame")?;
        client.send("isready")?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let line = client.recv(deadline)?;
            if line == "readyok" {
                break;
            }
            if is_error_line(&line) {
                return Err(format!("'{}' refused its setup: {line}", client.name));
            }
        }
        Ok(client)
    }

    fn send(&mut self, line: &str) -> Result<(), Fail> {
        writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| Fail::Exited(format!("'{}' stopped reading its input: {e}", self.name)))
    }

    fn recv(&mut self, deadline: Instant) -> Result<String, Fail> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(Ok(line)) => Ok(line.trim().to_string()),
            Ok(Err(why)) => Err(Fail::Exited(format!("'{}' {why}", self.name))),
            Err(RecvTimeoutError::Timeout) => Err(Fail::Silent(format!(
                "'{}' did not answer in time",
                self.name
            ))),
            Err(RecvTimeoutError::Disconnected) => {
                Err(Fail::Exited(format!("'{}' exited", self.name)))
            }
        }
    }

    fn wait_for(&mut self, done: impl Fn(&str) -> bool, within: Duration) -> Result<String, Fail> {
        let deadline = Instant::now() + within;
        loop {
            let line = self.recv(deadline)?;
            if done(&line) {
                return Ok(line);
            }
        }
    }

    /// Sends the position and `go` and reads the answer.
    fn search(&mut self, position: &str) -> Result<Answer, Fail> {
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
            if is_error_line(&line) {
                return Ok(Answer::Error(line));
            }
            let mut words = line.split_whitespace();
            match words.next() {
                Some("bestmove") => {
                    self.standard = true;
                    return Ok(Answer::Token(words.next().unwrap_or("").to_string(), true));
                }
                Some("info") if !self.standard => {
                    let Some(token) = words.skip_while(|&w| w != "bestmove").nth(1) else {
                        continue;
                    };
                    let token = token.to_string();
                    return self.standard_after(token, deadline);
                }
                _ => {}
            }
        }
    }

    /// After Sanmill's `info ... bestmove TOKEN`: a standard `bestmove` arriving
    /// before the answer to `isready` replaces it.
    fn standard_after(&mut self, token: String, deadline: Instant) -> Result<Answer, Fail> {
        self.send("isready")?;
        loop {
            let line = self.recv(deadline)?;
            if let Some(t) = line.strip_prefix("bestmove ") {
                self.standard = true;
                let t = t.split_whitespace().next().unwrap_or("").to_string();
                self.wait_for(|l| l == "readyok", self.timeout)?;
                return Ok(Answer::Token(t, true));
            }
            if line == "readyok" {
                return Ok(Answer::Token(token, false));
            }
        }
    }

    /// Asks the engine for its ply in `game` (two searches for a capture in Sanmill's
    /// dialect).
    pub fn play(&mut self, game: &Game) -> Outcome {
        self.play_inner(game).unwrap_or_else(Outcome::from)
    }

    fn play_inner(&mut self, game: &Game) -> Result<Outcome, Fail> {
        let rules = self.rules;
        let pos = *game.position();
        let (token, complete) = match self.search(&position_command(rules, game, None))? {
            Answer::Error(line) => return Ok(Outcome::Error(line)),
            Answer::Token(t, c) => (t, c),
        };
        match token.as_str() {
            "draw" => return Ok(Outcome::Draw),
            "none" | "(none)" | "0000" => return Ok(Outcome::NoMove),
            _ => {}
        }
        let bad = |t: &str, e: String| Outcome::Illegal(format!("answered '{t}': {e}"));
        let complete_ply = |t: &str| match parse_ply(rules, &pos, t) {
            Ok(p) => Outcome::Ply(p),
            Err(e) => bad(t, e.to_string()),
        };
        if complete || pos.pending_removal {
            return Ok(complete_ply(&token));
        }
        let ply = match parse_ply_syntax(rules, &token) {
            Ok(p) => p,
            Err(e) => return Ok(bad(&token, e.to_string())),
        };
        if ply.removes() || !pos.ply_closes_mill(rules, ply) {
            return Ok(complete_ply(&token));
        }
        // Sanmill's first half of a capture: ask for the removal.
        let removal = match self.search(&position_command(rules, game, Some(&token)))? {
            Answer::Error(line) => return Ok(Outcome::Error(line)),
            Answer::Token(t, _) => t,
        };
        let full = parse_ply_syntax(rules, &removal)
            .ok()
            .filter(|r| r.is_lone_removal())
            .map(|r| ply.with_removal(r.remove))
            .filter(|&full| pos.is_legal(rules, full));
        Ok(match full {
            Some(full) => Outcome::Ply(full),
            None => Outcome::Illegal(format!(
                "answered '{token}' and then '{removal}', which is not a legal removal"
            )),
        })
    }
}

/// `position startpos|fen ... moves ...` for `game`, removals as separate tokens.
pub fn position_command(rules: &Rules, game: &Game, extra: Option<&str>) -> String {
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
