//! The arena: many games between two players, with a report of the results.
//!
//! Players ([`PlayerSpec`]): `perfect` (the databases' oracle, choosing at random among
//! equally good plies), `engine:depth=D` / `engine:movetime=MS` (the crate's engine),
//! `random`, and `uci:COMMAND` (an external engine speaking the protocol of
//! `docs/PROTOCOL.md`, started as a subprocess).
//!
//! Games come in pairs: A plays White in even-numbered games and Black in odd ones,
//! and both games of a pair start from the same position (the start position, then
//! `opening_plies` random plies drawn for the pair). A game ends when a side has lost
//! (fewer than three stones, or no legal move), or as a draw on the third occurrence
//! of a moving-phase position (counted from the end of the opening), after `max_quiet` plies without a removal, or after
//! `max_plies` plies in all. The quiet-ply limit (default 100, as in Sanmill) is not
//! part of the rules the databases solve: a long database win can cross it, so raise
//! it (or set 0) when perfect wins must be played out.
//!
//! With a database, every moving-phase ply is checked against perfect play: a ply
//! whose value for its mover is worse in win/draw/loss than the position's value is a
//! *blunder*; a ply that keeps the result but wins slower (or loses faster) is
//! *inaccurate*.
//!
//! Everything is deterministic for a given seed (time-limited searches aside): each
//! game has its own players and seeds derived from the arena seed and the game number,
//! so games may run in parallel and are reported in game order.

use crate::engine::{Endgame, Engine, EngineConfig, Limits};
use crate::fen::{self, Counters};
use crate::game::Game;
use crate::notation::{format_ply, parse_ply, parse_ply_syntax};
use crate::opening::{Opening, OpeningError, OpeningOptions};
use crate::position::{Color, Phase, Ply, Position};
use crate::probe::{ProbeError, Tablebase};
use crate::rules::Rules;
use crate::protocol::server::sanmill_token;
use crate::value::{Value, Wdl};
use rayon::prelude::*;
use serde::Serialize;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Why the arena could not play.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// A player description could not be read.
    #[error("player '{text}': {why}")]
    Spec {
        /// The description.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// A player needs a database that is not there (a missing subspace, no `--db`).
    #[error("game {game}: player {player} cannot play {fen}: {why}")]
    Uncovered {
        /// Game number.
        game: usize,
        /// The player.
        player: String,
        /// The position, as a FEN.
        fen: String,
        /// Why (naming the missing subspace).
        why: String,
    },
    /// A player failed or answered with an illegal ply.
    #[error("game {game}: player {player}: {why}")]
    Player {
        /// Game number.
        game: usize,
        /// The player.
        player: String,
        /// What happened.
        why: String,
    },
    /// No usable opening or start position.
    #[error("{0}")]
    Start(String),
}

/// What a `uci:` or `engine:` player is asked to do per ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchLimit {
    /// A fixed search depth in plies.
    Depth(u32),
    /// A fixed time per ply in milliseconds.
    MoveTime(u64),
}

impl SearchLimit {
    /// How long an external engine may take for one move under this limit before the
    /// arena gives up on it: 30 s plus 10 s a ply of depth, or five times the move
    /// time plus 30 s.
    pub fn timeout(self) -> Duration {
        match self {
            SearchLimit::Depth(d) => Duration::from_secs(30 + 10 * d as u64),
            SearchLimit::MoveTime(ms) => {
                Duration::from_millis(ms.saturating_mul(5)) + Duration::from_secs(30)
            }
        }
    }
}

/// Where the games of a run start, after the start position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Openings {
    /// `random:K`: K uniformly random plies from the start, drawn for each pair of
    /// games (K = 0: the start position itself).
    Random(usize),
    /// `first-placements`: each legal first ply of the start position in turn (the 24
    /// first placements of the standard start), each played twice with colours
    /// swapped; a round is `2 × first plies` games.
    FirstPlacements,
}

impl FromStr for Openings {
    type Err = String;

    fn from_str(text: &str) -> Result<Openings, String> {
        if text == "first-placements" {
            return Ok(Openings::FirstPlacements);
        }
        match text.strip_prefix("random:").map(str::parse::<usize>) {
            Some(Ok(k)) => Ok(Openings::Random(k)),
            _ => Err(format!(
                "openings '{text}': write random:K (K random plies) or first-placements"
            )),
        }
    }
}

impl std::fmt::Display for Openings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Openings::Random(k) => write!(f, "random:{k}"),
            Openings::FirstPlacements => f.write_str("first-placements"),
        }
    }
}

/// A player, as written on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// `perfect`: the databases' best plies, at random among equals.
    Perfect,
    /// `random`: a uniformly random legal ply.
    Random,
    /// `engine:depth=D` or `engine:movetime=MS`, optionally `,hash=MB`, `,db=no`
    /// (do not give it the databases), `,shuffle=no` (no random choice among equal
    /// root plies).
    Engine {
        /// Search limit.
        limit: SearchLimit,
        /// Transposition table size in MiB.
        hash_mb: usize,
        /// Whether the engine probes the databases (when the arena has them).
        use_db: bool,
        /// Whether equally ordered root plies are shuffled (seeded per game).
        shuffle: bool,
    },
    /// `uci:COMMAND` or `uci:depth=D:COMMAND` / `uci:movetime=MS,db=yes:COMMAND`: an
    /// external engine; the command is split at whitespace (no shell). Default limit:
    /// depth 4. With `db=yes` it is sent `setoption name DatabasePath`. `timeout=S`
    /// sets how long a move may take before the engine is given up on (default: see
    /// [`SearchLimit::timeout`]).
    Uci {
        /// Program and arguments.
        command: Vec<String>,
        /// Search limit sent with `go`.
        limit: SearchLimit,
        /// Whether the arena's database directory is passed to it.
        use_db: bool,
        /// Seconds a move may take before the engine counts as silent.
        timeout: Option<u64>,
    },
}

impl PlayerSpec {
    /// Whether this is the perfect player.
    pub fn is_perfect(&self) -> bool {
        matches!(self, PlayerSpec::Perfect)
    }
}

/// Reads `key=value,key=value` parameters.
fn params(text: &str) -> Vec<(&str, &str)> {
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect()
}

fn looks_like_params(text: &str) -> bool {
    !text.is_empty()
        && params(text)
            .iter()
            .all(|(k, v)| matches!(*k, "depth" | "movetime" | "db" | "timeout") && !v.is_empty())
}

fn yes_no(v: &str) -> Result<bool, String> {
    match v {
        "yes" | "true" | "on" | "1" => Ok(true),
        "no" | "false" | "off" | "0" => Ok(false),
        _ => Err(format!("'{v}' is not yes or no")),
    }
}

fn number<T: FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{key}={v}: not a positive number"))
}

impl FromStr for PlayerSpec {
    type Err = ArenaError;

    fn from_str(text: &str) -> Result<PlayerSpec, ArenaError> {
        let err = |why: String| ArenaError::Spec {
            text: text.to_string(),
            why,
        };
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        match kind {
            "perfect" if rest.is_empty() => Ok(PlayerSpec::Perfect),
            "random" if rest.is_empty() => Ok(PlayerSpec::Random),
            "engine" => {
                let (mut limit, mut hash_mb, mut use_db, mut shuffle) = (None, 16, true, true);
                for (k, v) in params(rest) {
                    match k {
                        "depth" => {
                            limit = Some(SearchLimit::Depth(number::<u32>(k, v).map_err(err)?))
                        }
                        "movetime" => {
                            limit = Some(SearchLimit::MoveTime(number::<u64>(k, v).map_err(err)?))
                        }
                        "hash" => hash_mb = number::<usize>(k, v).map_err(err)?.max(1),
                        "db" => use_db = yes_no(v).map_err(err)?,
                        "shuffle" => shuffle = yes_no(v).map_err(err)?,
                        _ => return Err(err(format!("unknown engine parameter '{k}'"))),
                    }
                }
                let limit = limit.ok_or_else(|| {
                    err("say how strong: engine:depth=D or engine:movetime=MS".into())
                })?;
                if matches!(limit, SearchLimit::Depth(0) | SearchLimit::MoveTime(0)) {
                    return Err(err("the limit must be positive".into()));
                }
                Ok(PlayerSpec::Engine {
                    limit,
                    hash_mb,
                    use_db,
                    shuffle,
                })
            }
            "uci" => {
                let (mut limit, mut use_db, mut command) = (SearchLimit::Depth(4), false, rest);
                let mut timeout = None;
                if let Some((head, tail)) = rest.split_once(':')
                    && looks_like_params(head)
                {
                    command = tail;
                    for (k, v) in params(head) {
                        match k {
                            "depth" => limit = SearchLimit::Depth(number(k, v).map_err(err)?),
                            "movetime" => limit = SearchLimit::MoveTime(number(k, v).map_err(err)?),
                            "timeout" => {
                                let t: u64 = number(k, v).map_err(err)?;
                                if t == 0 {
                                    return Err(err("timeout=S needs at least 1 second".into()));
                                }
                                timeout = Some(t);
                            }
                            _ => use_db = yes_no(v).map_err(err)?,
                        }
                    }
                }
                let command: Vec<String> = command.split_whitespace().map(String::from).collect();
                if command.is_empty() {
                    return Err(err("write uci:COMMAND, e.g. 'uci:millbase uci'".into()));
                }
                Ok(PlayerSpec::Uci {
                    command,
                    limit,
                    use_db,
                    timeout,
                })
            }
            _ => Err(err(
                "players are perfect, random, engine:depth=D, engine:movetime=MS, uci:COMMAND"
                    .into(),
            )),
        }
    }
}

/// How an arena run is set up.
#[derive(Clone)]
pub struct ArenaConfig {
    /// Player A and its name in reports.
    pub a: (PlayerSpec, String),
    /// Player B and its name in reports.
    pub b: (PlayerSpec, String),
    /// Number of games (pairs of games with colours swapped; an odd last game is
    /// played with A as White).
    pub games: usize,
    /// Where every game starts, before the opening plies.
    pub start: Position,
    /// Counters of the start position.
    pub start_counters: Counters,
    /// How each pair of games starts from `start`.
    pub openings: Openings,
    /// The seed everything random derives from.
    pub seed: u64,
    /// Games played at once.
    pub threads: usize,
    /// A game is drawn after this many plies without a removal (0: never).
    pub max_quiet: u32,
    /// A game is drawn after this many plies in all, opening excluded (0: never).
    pub max_plies: usize,
    /// The databases, for `perfect`, for engines and for blunder checks.
    pub db: Option<Arc<Tablebase>>,
    /// The database directory (for `uci:` players with `db=yes`).
    pub db_dir: Option<PathBuf>,
}

impl ArenaConfig {
    /// A configuration with the defaults: the start position, no opening, seed 1,
    /// one thread, draws after 100 plies without a removal or 1000 plies.
    pub fn new(a: PlayerSpec, b: PlayerSpec, games: usize) -> ArenaConfig {
        let rules = Rules::standard();
        ArenaConfig {
            a: (a, "A".into()),
            b: (b, "B".into()),
            games,
            start: Position::start(rules),
            start_counters: Counters {
                fullmove: 1,
                ..Counters::default()
            },
            openings: Openings::Random(0),
            seed: 1,
            threads: 1,
            max_quiet: 100,
            max_plies: 1000,
            db: None,
            db_dir: None,
        }
    }
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The loser was down to two stones.
    Stones,
    /// The loser had no legal move.
    Blocked,
    /// Third occurrence of a moving-phase position.
    Repetition,
    /// Too many plies without a removal.
    QuietPlies,
    /// Too many plies in all.
    PlyLimit,
}

/// A side in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Side {
    /// Player A.
    A,
    /// Player B.
    B,
}

/// A ply whose value under perfect play was worse than its position's.
#[derive(Clone, Debug, Serialize)]
pub struct Blunder {
    /// Game number.
    pub game: usize,
    /// Ply number within the game (0 = the first ply after the opening).
    pub ply: usize,
    /// Who played it.
    pub side: Side,
    /// The position before, as a FEN.
    pub fen: String,
    /// The ply played.
    pub played: String,
    /// The position's value for the mover.
    pub before: String,
    /// The value of the ply played, for the mover.
    pub after: String,
    /// A best ply.
    pub best: String,
}

/// One game.
#[derive(Clone, Debug, Serialize)]
pub struct GameRecord {
    /// Game number, from 0.
    pub game: usize,
    /// Player A's name.
    pub a: String,
    /// Player B's name.
    pub b: String,
    /// Who played White.
    pub white: Side,
    /// The start position (before the opening), as a FEN.
    pub start: String,
    /// The opening plies.
    pub opening: Vec<String>,
    /// The position after the opening, as a FEN.
    pub opening_fen: String,
    /// The databases' value of the position after the opening for A, if known.
    pub start_value_a: Option<String>,
    /// Its win/draw/loss for A.
    #[serde(skip)]
    pub start_wdl_a: Option<Wdl>,
    /// The plies of the game after the opening.
    pub moves: Vec<String>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// The winner, `None` for a draw.
    pub winner: Option<Side>,
    /// How it ended.
    pub reason: Reason,
    /// Plies after the opening.
    pub plies: usize,
    /// Blunders of the game.
    pub blunders: Vec<Blunder>,
    /// Per side (A, B): plies checked against the databases.
    pub checked: [u32; 2],
    /// Per side: plies that kept the result but won slower or lost faster.
    pub inaccurate: [u32; 2],
    /// Per side: blunders by kind, win→draw, draw→loss, win→loss.
    pub blunder_kinds: [[u32; 3]; 2],
}

/// splitmix64: a well-mixed function of a 64-bit number.
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn derive(seed: u64, a: u64, b: u64) -> u64 {
    mix(mix(seed
        ^ mix(a.wrapping_add(0x51))
        ^ mix(b).rotate_left(17)))
}

fn pick<T: Copy>(items: &[T], seed: u64) -> T {
    items[((mix(seed) as u128 * items.len() as u128) >> 64) as usize]
}

/// Chooses plies for one side of one game.
trait Player {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, String>;
}

struct RandomPlayer;

impl Player for RandomPlayer {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, String> {
        let legal = game.position().legal_plies(Rules::standard());
        if legal.is_empty() {
            return Err("no legal ply".into());
        }
        Ok(pick(&legal, seed))
    }
}

/// A missing database, told apart from other failures.
const UNCOVERED: &str = "\u{0}uncovered:";

struct PerfectPlayer {
    db: Arc<Tablebase>,
}

impl Player for PerfectPlayer {
    fn play(&mut self, game: &Game, seed: u64) -> Result<Ply, String> {
        let pos = game.position();
        let uncovered = |e: ProbeError| match e {
            e @ ProbeError::Missing { .. } => format!("{UNCOVERED}{e}"),
            e => e.to_string(),
        };
        // Placement positions by look-up where the placement sectors are built,
        // by the opening search where they are not.
        let placement_search = pos.phase() == Phase::Placement && !self.db.covers(pos);
        if placement_search {
            return self.play_placement(pos, seed).map_err(|e| match e {
                OpeningError::Probe(e) => uncovered(e),
                e => e.to_string(),
            });
        }
        match self.db.best_ply_random(pos, seed) {
            Ok(Some((ply, _))) => Ok(ply),
            Ok(None) => Err("no legal ply".into()),
            Err(e) => Err(uncovered(e)),
        }
    }
}

impl PerfectPlayer {
    /// A placement ply from the opening search (saved values first), chosen with the
    /// seed among the equally best.
    fn play_placement(&self, pos: &Position, seed: u64) -> Result<Ply, OpeningError> {
        let options = OpeningOptions {
            table_mib: 64,
            parallel: false,
            use_tables: true,
        };
        let moves = Opening::new(&self.db, options)?.moves(pos)?;
        let best: Vec<Ply> = moves
            .iter()
            .take_while(|m| m.1 == moves[0].1)
            .map(|m| m.0)
            .collect();
        Ok(pick(&best, seed))
    }
}

struct EnginePlayer {
    engine: Engine,
    limits: Limits,
}

impl Player for EnginePlayer {
    fn play(&mut self, game: &Game, _seed: u64) -> Result<Ply, String> {
        let stop = AtomicBool::new(false);
        let result = self
            .engine
            .search_game(game, &self.limits, &stop, &mut |_| {});
        if let Some(e) = self
            .engine
            .config()
            .endgame
            .as_ref()
            .and_then(|e| e.damage())
        {
            return Err(format!("a database file is damaged: {e}"));
        }
        result.best.ok_or_else(|| "the engine found no ply".into())
    }
}

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
struct UciPlayer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    go: String,
    timeout: Duration,
    standard: bool,
    name: String,
}

impl UciPlayer {
    fn start(
        command: &[String],
        limit: SearchLimit,
        timeout: Duration,
        db: Option<&std::path::Path>,
    ) -> Result<UciPlayer, String> {
        Self::start_inner(command, limit, timeout, db)
            .map_err(|e| format!("{e} (while starting it: uci, options, isready)"))
    }

    fn start_inner(
        command: &[String],
        limit: SearchLimit,
        timeout: Duration,
        db: Option<&std::path::Path>,
    ) -> Result<UciPlayer, String> {
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
        let mut player = UciPlayer {
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

impl Player for UciPlayer {
    fn play(&mut self, game: &Game, _seed: u64) -> Result<Ply, String> {
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

impl Drop for UciPlayer {
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

fn make_player(
    spec: &PlayerSpec,
    config: &ArenaConfig,
    seed: u64,
) -> Result<Box<dyn Player>, String> {
    let rules = Rules::standard();
    Ok(match spec {
        PlayerSpec::Random => Box::new(RandomPlayer),
        PlayerSpec::Perfect => Box::new(PerfectPlayer {
            db: config.db.clone().ok_or_else(|| {
                format!("{UNCOVERED}the perfect player needs the databases: give --db DIR")
            })?,
        }),
        PlayerSpec::Engine {
            limit,
            hash_mb,
            use_db,
            shuffle,
        } => {
            let endgame = config
                .db
                .clone()
                .filter(|_| *use_db)
                .map(|db| db as Arc<dyn Endgame>);
            let engine = Engine::new(
                rules,
                EngineConfig {
                    hash_mb: *hash_mb,
                    endgame,
                    shuffle: shuffle.then_some(seed),
                    ..EngineConfig::default()
                },
            );
            let limits = match *limit {
                SearchLimit::Depth(d) => Limits {
                    depth: Some(d),
                    ..Limits::default()
                },
                SearchLimit::MoveTime(ms) => Limits {
                    movetime: Some(Duration::from_millis(ms)),
                    ..Limits::default()
                },
            };
            Box::new(EnginePlayer { engine, limits })
        }
        PlayerSpec::Uci {
            command,
            limit,
            use_db,
            timeout,
        } => {
            let db = config.db_dir.as_deref().filter(|_| *use_db);
            let timeout = timeout.map_or(limit.timeout(), Duration::from_secs);
            Box::new(UciPlayer::start(command, *limit, timeout, db)?)
        }
    })
}

/// The legal first plies of the start position, in the order of
/// [`Position::legal_plies`] (for the standard start: the 24 placements, a1 first).
pub fn first_plies(config: &ArenaConfig) -> Vec<Ply> {
    config.start.legal_plies(Rules::standard())
}

/// Games in one round of `first-placements` from the configured start: each first
/// ply with both colours.
pub fn first_placement_round(config: &ArenaConfig) -> usize {
    2 * first_plies(config).len()
}

/// The position after the opening of pair `pair`: with `random:K`, K uniformly random
/// plies from the start, redrawn (up to 1000 times) if the game ends or cannot go on;
/// with `first-placements`, first ply number `pair` modulo their count.
pub fn opening(config: &ArenaConfig, pair: usize) -> Result<Game, ArenaError> {
    let rules = Rules::standard();
    let no_game = |what: String| {
        ArenaError::Start(format!(
            "no game can be played from {} with {what}",
            fen::format(rules, &config.start, config.start_counters),
        ))
    };
    let plies = match config.openings {
        Openings::Random(k) => k,
        Openings::FirstPlacements => {
            let first = first_plies(config);
            let mut game = Game::new(config.start, config.start_counters);
            if config.start.is_over(rules) || first.is_empty() {
                return Err(no_game("a first ply".into()));
            }
            game.play(rules, first[pair % first.len()]);
            return Ok(game);
        }
    };
    for attempt in 0..1000u64 {
        let mut game = Game::new(config.start, config.start_counters);
        let seed = derive(config.seed, 1 + pair as u64, attempt);
        let mut ok = true;
        for i in 0..plies {
            let legal = game.position().legal_plies(rules);
            if legal.is_empty() || game.position().is_over(rules) {
                ok = false;
                break;
            }
            game.play(rules, pick(&legal, derive(seed, i as u64, 7)));
        }
        if ok && !game.position().is_over(rules) {
            return Ok(game);
        }
        if plies == 0 {
            break;
        }
    }
    Err(no_game(format!("{plies} random plies")))
}

/// The value of `pos` for the side to move by the databases, if they cover it (a
/// moving-phase position whose subspace is built, or a placement position whose
/// sector is).
fn db_value(db: &Tablebase, pos: &Position) -> Option<Value> {
    if !db.covers(pos) {
        return None;
    }
    db.probe(pos).ok()
}

/// The value for the mover of playing `ply` in `pos`, if the databases cover it.
fn ply_value(db: &Tablebase, rules: &Rules, pos: &Position, ply: Ply) -> Option<Value> {
    let child = pos.after(rules, ply);
    if child.material(child.to_move) >= 3 && !db.covers(&child) {
        return None;
    }
    db.ply_value(&child).ok()
}

/// Plays game `number` (A is White in even games) from `start`.
pub fn play_game(
    config: &ArenaConfig,
    number: usize,
    start: &Game,
) -> Result<GameRecord, ArenaError> {
    let rules = Rules::standard();
    let a_white = number.is_multiple_of(2);
    let side_of = |c: Color| {
        if (c == Color::White) == a_white {
            Side::A
        } else {
            Side::B
        }
    };
    let game_seed = derive(config.seed, number as u64, 0xA7E4A);
    let spec_of = |s: Side| if s == Side::A { &config.a } else { &config.b };
    let fail = |s: Side, why: String| {
        let player = spec_of(s).1.clone();
        match why.strip_prefix(UNCOVERED) {
            Some(why) => ArenaError::Uncovered {
                game: number,
                player,
                fen: fen::format(rules, start.position(), start.counters),
                why: why.to_string(),
            },
            None => ArenaError::Player {
                game: number,
                player,
                why,
            },
        }
    };
    let mut players = [
        make_player(&config.a.0, config, derive(game_seed, 1, 1)).map_err(|e| fail(Side::A, e))?,
        make_player(&config.b.0, config, derive(game_seed, 2, 2)).map_err(|e| fail(Side::B, e))?,
    ];
    // The game proper starts after the opening: repetitions count from here, so that
    // random opening plies going back and forth cannot end the game.
    let mut game = Game::new(*start.position(), start.counters);
    let first = 0;
    let start_value = config
        .db
        .as_deref()
        .and_then(|db| db_value(db, game.position()))
        .map(|v| {
            if side_of(game.position().to_move) == Side::A {
                v
            } else {
                v.parent()
            }
        });
    let mut record = GameRecord {
        game: number,
        a: config.a.1.clone(),
        b: config.b.1.clone(),
        white: side_of(Color::White),
        start: fen::format(rules, &start.start, start.start_counters),
        opening: start.ply_texts(rules),
        opening_fen: fen::format(rules, start.position(), start.counters),
        start_value_a: start_value.map(|v| v.to_string()),
        start_wdl_a: start_value.map(Value::wdl),
        moves: Vec::new(),
        result: String::new(),
        winner: None,
        reason: Reason::Repetition,
        plies: 0,
        blunders: Vec::new(),
        checked: [0; 2],
        inaccurate: [0; 2],
        blunder_kinds: [[0; 3]; 2],
    };
    let (winner, reason) = loop {
        let pos = *game.position();
        let played = game.plies.len() - first;
        if pos.material(pos.to_move.other()) < 3 {
            break (Some(pos.to_move), Reason::Stones);
        }
        if pos.material(pos.to_move) < 3 {
            break (Some(pos.to_move.other()), Reason::Stones);
        }
        let legal = pos.legal_plies(rules);
        if legal.is_empty() {
            break (Some(pos.to_move.other()), Reason::Blocked);
        }
        if game.occurrences() >= 3 {
            break (None, Reason::Repetition);
        }
        if config.max_quiet > 0 && game.counters.plies_since_removal >= config.max_quiet {
            break (None, Reason::QuietPlies);
        }
        if config.max_plies > 0 && played >= config.max_plies {
            break (None, Reason::PlyLimit);
        }
        let side = side_of(pos.to_move);
        let s = side as usize;
        let here = fen::format(rules, &pos, game.counters);
        let ply = players[s]
            .play(&game, derive(game_seed, played as u64, 3))
            .map_err(|e| match fail(side, e) {
                ArenaError::Uncovered {
                    game, player, why, ..
                } => ArenaError::Uncovered {
                    game,
                    player,
                    fen: here.clone(),
                    why,
                },
                other => other,
            })?;
        if !legal.contains(&ply) {
            return Err(fail(
                side,
                format!(
                    "played the illegal ply {} in {}",
                    format_ply(rules, ply),
                    here
                ),
            ));
        }
        if let Some(db) = config.db.as_deref()
            && let Some(before) = db_value(db, &pos)
            && let Some(after) = ply_value(db, rules, &pos, ply)
        {
            record.checked[s] += 1;
            let kind = match (before.wdl(), after.wdl()) {
                (Wdl::Win, Wdl::Draw) => Some(0),
                (Wdl::Draw, Wdl::Loss) => Some(1),
                (Wdl::Win, Wdl::Loss) => Some(2),
                _ => None,
            };
            if let Some(kind) = kind {
                record.blunder_kinds[s][kind] += 1;
                let best = db
                    .best_ply(&pos)
                    .ok()
                    .flatten()
                    .map(|(p, _)| format_ply(rules, p))
                    .unwrap_or_default();
                record.blunders.push(Blunder {
                    game: number,
                    ply: played,
                    side,
                    fen: fen::format(rules, &pos, game.counters),
                    played: format_ply(rules, ply),
                    before: before.to_string(),
                    after: after.to_string(),
                    best,
                });
            } else if after.cmp_goodness(before).is_lt() {
                record.inaccurate[s] += 1;
            }
        }
        game.play(rules, ply);
    };
    record.moves = game.plies[first..]
        .iter()
        .map(|&p| format_ply(rules, p))
        .collect();
    record.plies = record.moves.len();
    record.winner = winner.map(side_of);
    record.reason = reason;
    record.result = match winner {
        Some(Color::White) => "1-0",
        Some(Color::Black) => "0-1",
        None => "1/2-1/2",
    }
    .to_string();
    Ok(record)
}

/// Plays every game of `config`, `config.threads` at a time, calling `progress` after
/// each; the records come in game order. The first error (by game number) stops the
/// run.
pub fn run(
    config: &ArenaConfig,
    progress: &(dyn Fn(&GameRecord) + Sync),
) -> Result<Vec<GameRecord>, ArenaError> {
    let pairs = config.games.div_ceil(2);
    let openings: Vec<Game> = (0..pairs)
        .map(|p| opening(config, p))
        .collect::<Result<_, _>>()?;
    let abort = AtomicBool::new(false);
    let play = |g: usize| {
        if abort.load(Ordering::Relaxed) {
            return None;
        }
        let result = play_game(config, g, &openings[g / 2]);
        match &result {
            Ok(r) => progress(r),
            Err(_) => abort.store(true, Ordering::Relaxed),
        }
        Some(result)
    };
    let results: Vec<Option<Result<GameRecord, ArenaError>>> = if config.threads > 1 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .build()
            .map_err(|e| ArenaError::Start(format!("cannot start threads: {e}")))?;
        pool.install(|| (0..config.games).into_par_iter().map(play).collect())
    } else {
        (0..config.games).map(play).collect()
    };
    // An error aborts the rest; report the first error in game order.
    let mut records = Vec::with_capacity(config.games);
    let mut first_error = None;
    for r in results.into_iter().flatten() {
        match r {
            Ok(rec) => records.push(rec),
            Err(e) => {
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(records),
    }
}

/// A proportion with its 95% Wilson score interval.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Rate {
    /// Count.
    pub count: usize,
    /// Count / total.
    pub rate: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

impl Rate {
    /// `count` out of `total`, with the Wilson interval (z = 1.96).
    pub fn new(count: usize, total: usize) -> Rate {
        if total == 0 {
            return Rate {
                count,
                rate: 0.0,
                low: 0.0,
                high: 1.0,
            };
        }
        let (n, p, z) = (total as f64, count as f64 / total as f64, 1.959964);
        let denom = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / denom;
        let half = z / denom * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
        Rate {
            count,
            rate: p,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:>5} {:5.1}% [{:5.1}%, {:5.1}%]",
            self.count,
            100.0 * self.rate,
            100.0 * self.low,
            100.0 * self.high
        )
    }
}

/// Per side: the databases' judgement of its plies.
#[derive(Clone, Debug, Serialize)]
pub struct Accuracy {
    /// Plies checked against the databases.
    pub checked: u32,
    /// Blunders: win→draw, draw→loss, win→loss.
    pub win_to_draw: u32,
    /// Draw to loss.
    pub draw_to_loss: u32,
    /// Win to loss.
    pub win_to_loss: u32,
    /// Plies that kept the result but won slower or lost faster.
    pub inaccurate: u32,
}

/// Results by the databases' value of the position after the opening, for A.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ByStart {
    /// Games.
    pub games: usize,
    /// A won.
    pub a_wins: usize,
    /// Drawn.
    pub draws: usize,
    /// B won.
    pub b_wins: usize,
}

/// One player's results with one colour.
#[derive(Clone, Debug, Serialize)]
pub struct ColourResults {
    /// The player.
    pub player: String,
    /// Its colour in these games.
    pub colour: String,
    /// Games it played with this colour.
    pub games: usize,
    /// Its wins with interval.
    pub wins: Rate,
    /// Draws with interval.
    pub draws: Rate,
    /// Its losses with interval.
    pub losses: Rate,
}

/// A lost game and where the loser first went wrong.
#[derive(Clone, Debug, Serialize)]
pub struct LostGame {
    /// Game number.
    pub game: usize,
    /// The side that lost.
    pub loser: Side,
    /// Its colour.
    pub colour: String,
    /// The opening plies of the game.
    pub opening: Vec<String>,
    /// The loser's first blunder; `None` when none was seen (the start was already
    /// lost for it, or its blunder was in positions the databases do not cover).
    pub first_blunder: Option<Blunder>,
}

/// What the arena reports.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Player A.
    pub a: String,
    /// Player B.
    pub b: String,
    /// Games played.
    pub games: usize,
    /// Games A won.
    pub a_wins: usize,
    /// Games drawn.
    pub draws: usize,
    /// Games B won.
    pub b_wins: usize,
    /// A's wins with interval.
    pub a_win_rate: Rate,
    /// Draws with interval.
    pub draw_rate: Rate,
    /// B's wins with interval.
    pub b_win_rate: Rate,
    /// Draws by threefold repetition.
    pub draws_repetition: usize,
    /// Draws by the limit of plies without a removal.
    pub draws_quiet: usize,
    /// Draws by the limit on game length.
    pub draws_ply_limit: usize,
    /// The openings, as given (`random:K` or `first-placements`).
    pub openings: String,
    /// Which side is the perfect player, if one is.
    pub perfect: Option<Side>,
    /// The other side's draw rate against perfect play (when exactly one side is perfect).
    pub draw_rate_vs_perfect: Option<Rate>,
    /// Mean plies per game (after the opening).
    pub mean_plies: f64,
    /// Results from starts the databases call won for A.
    pub start_won_for_a: ByStart,
    /// From starts the databases call drawn.
    pub start_drawn: ByStart,
    /// From starts the databases call lost for A.
    pub start_lost_for_a: ByStart,
    /// A's plies judged by the databases.
    pub accuracy_a: Option<Accuracy>,
    /// B's plies judged by the databases.
    pub accuracy_b: Option<Accuracy>,
    /// Blunders per game by A (when the databases judge plies).
    pub blunders_per_game_a: Option<f64>,
    /// Blunders per game by B.
    pub blunders_per_game_b: Option<f64>,
    /// Results by colour of the player the report is about: the one that is not
    /// perfect, or A when neither or both are (White first).
    pub by_colour: Vec<ColourResults>,
    /// Every lost game with the loser's first blunder, in game order.
    pub lost_games: Vec<LostGame>,
    /// The first blunders, in game order.
    pub blunder_examples: Vec<Blunder>,
}

/// Sums up the records.
pub fn summarize(config: &ArenaConfig, records: &[GameRecord]) -> Summary {
    let games = records.len();
    let count = |f: &dyn Fn(&GameRecord) -> bool| records.iter().filter(|r| f(r)).count();
    let a_wins = count(&|r| r.winner == Some(Side::A));
    let b_wins = count(&|r| r.winner == Some(Side::B));
    let draws = games - a_wins - b_wins;
    let drawn_by = |reason| count(&|r| r.winner.is_none() && r.reason == reason);
    let perfect = match (config.a.0.is_perfect(), config.b.0.is_perfect()) {
        (true, false) => Some(Side::A),
        (false, true) => Some(Side::B),
        _ => None,
    };
    let accuracy = |s: usize| {
        config.db.as_ref().map(|_| Accuracy {
            checked: records.iter().map(|r| r.checked[s]).sum(),
            win_to_draw: records.iter().map(|r| r.blunder_kinds[s][0]).sum(),
            draw_to_loss: records.iter().map(|r| r.blunder_kinds[s][1]).sum(),
            win_to_loss: records.iter().map(|r| r.blunder_kinds[s][2]).sum(),
            inaccurate: records.iter().map(|r| r.inaccurate[s]).sum(),
        })
    };
    let by_start = |wdl: Wdl| {
        let mut b = ByStart::default();
        for r in records.iter().filter(|r| r.start_wdl_a == Some(wdl)) {
            b.games += 1;
            match r.winner {
                Some(Side::A) => b.a_wins += 1,
                Some(Side::B) => b.b_wins += 1,
                None => b.draws += 1,
            }
        }
        b
    };
    let subject = if perfect == Some(Side::A) {
        Side::B
    } else {
        Side::A
    };
    let by_colour = [Color::White, Color::Black]
        .into_iter()
        .map(|colour| colour_results(config, records, subject, colour))
        .collect();
    let per_game = |s: usize| {
        config.db.as_ref().map(|_| {
            let total: u32 = records
                .iter()
                .map(|r| r.blunder_kinds[s].iter().sum::<u32>())
                .sum();
            if games == 0 {
                0.0
            } else {
                f64::from(total) / games as f64
            }
        })
    };
    Summary {
        a: config.a.1.clone(),
        b: config.b.1.clone(),
        games,
        a_wins,
        draws,
        b_wins,
        a_win_rate: Rate::new(a_wins, games),
        draw_rate: Rate::new(draws, games),
        b_win_rate: Rate::new(b_wins, games),
        draws_repetition: drawn_by(Reason::Repetition),
        draws_quiet: drawn_by(Reason::QuietPlies),
        draws_ply_limit: drawn_by(Reason::PlyLimit),
        openings: config.openings.to_string(),
        perfect,
        draw_rate_vs_perfect: perfect.map(|_| Rate::new(draws, games)),
        mean_plies: if games == 0 {
            0.0
        } else {
            records.iter().map(|r| r.plies).sum::<usize>() as f64 / games as f64
        },
        start_won_for_a: by_start(Wdl::Win),
        start_drawn: by_start(Wdl::Draw),
        start_lost_for_a: by_start(Wdl::Loss),
        accuracy_a: accuracy(0),
        accuracy_b: accuracy(1),
        blunders_per_game_a: per_game(0),
        blunders_per_game_b: per_game(1),
        by_colour,
        lost_games: records.iter().filter_map(lost_game).collect(),
        blunder_examples: records
            .iter()
            .flat_map(|r| r.blunders.iter().cloned())
            .take(8)
            .collect(),
    }
}

/// The results of `side` in the games where it played `colour`.
fn colour_results(
    config: &ArenaConfig,
    records: &[GameRecord],
    side: Side,
    colour: Color,
) -> ColourResults {
    let games: Vec<&GameRecord> = records
        .iter()
        .filter(|r| (r.white == side) == (colour == Color::White))
        .collect();
    let n = games.len();
    let count = |w: Option<Side>| games.iter().filter(|r| r.winner == w).count();
    let other = if side == Side::A { Side::B } else { Side::A };
    ColourResults {
        player: if side == Side::A {
            &config.a.1
        } else {
            &config.b.1
        }
        .clone(),
        colour: colour.to_string(),
        games: n,
        wins: Rate::new(count(Some(side)), n),
        draws: Rate::new(count(None), n),
        losses: Rate::new(count(Some(other)), n),
    }
}

/// A lost game with the loser's first blunder; `None` for a draw.
fn lost_game(r: &GameRecord) -> Option<LostGame> {
    let loser = match r.winner? {
        Side::A => Side::B,
        Side::B => Side::A,
    };
    let colour = if r.white == loser {
        Color::White
    } else {
        Color::Black
    };
    Some(LostGame {
        game: r.game,
        loser,
        colour: colour.to_string(),
        opening: r.opening.clone(),
        first_blunder: r.blunders.iter().find(|b| b.side == loser).cloned(),
    })
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "A = {}, B = {}: {} games", self.a, self.b, self.games)?;
        writeln!(f, "             count   rate   95% interval")?;
        writeln!(f, "  A wins   {}", self.a_win_rate)?;
        writeln!(f, "  draws    {}", self.draw_rate)?;
        writeln!(f, "  B wins   {}", self.b_win_rate)?;
        writeln!(
            f,
            "  draws by repetition {}, by plies without a removal {}, by game length {}",
            self.draws_repetition, self.draws_quiet, self.draws_ply_limit
        )?;
        if let (Some(side), Some(rate)) = (self.perfect, self.draw_rate_vs_perfect) {
            let other = if side == Side::A { &self.b } else { &self.a };
            writeln!(f, "  draw rate of {other} against perfect play: {rate}")?;
        }
        writeln!(f, "  mean game length: {:.1} plies", self.mean_plies)?;
        for (name, b) in [
            ("won for A", &self.start_won_for_a),
            ("drawn", &self.start_drawn),
            ("lost for A", &self.start_lost_for_a),
        ] {
            if b.games > 0 {
                writeln!(
                    f,
                    "  from starts {name:<10}: {:>5} games, A won {}, drawn {}, B won {}",
                    b.games, b.a_wins, b.draws, b.b_wins
                )?;
            }
        }
        for (name, acc) in [(&self.a, &self.accuracy_a), (&self.b, &self.accuracy_b)] {
            if let Some(a) = acc {
                writeln!(
                    f,
                    "  {name}: {} plies checked, blunders win->draw {}, draw->loss {}, win->loss {}; slower wins / faster losses {}",
                    a.checked, a.win_to_draw, a.draw_to_loss, a.win_to_loss, a.inaccurate
                )?;
            }
        }
        if let Some(first) = self.by_colour.first() {
            writeln!(f, "  {} by colour ({}):", first.player, self.openings)?;
            writeln!(
                f,
                "    colour  games   wins  draws   rate   95% interval   losses"
            )?;
            for c in &self.by_colour {
                writeln!(
                    f,
                    "    {:<6} {:>6} {:>6} {}  {:>6}",
                    c.colour, c.games, c.wins.count, c.draws, c.losses.count
                )?;
            }
        }
        if let (Some(a), Some(b)) = (self.blunders_per_game_a, self.blunders_per_game_b) {
            writeln!(
                f,
                "  blunders per game: {} {a:.2}, {} {b:.2}",
                self.a, self.b
            )?;
        }
        let judged = self.accuracy_a.is_some();
        if judged && !self.lost_games.is_empty() {
            writeln!(
                f,
                "  first blunder of each lost game (ply counted after the opening):"
            )?;
        }
        for l in self.lost_games.iter().filter(|_| judged) {
            let name = if l.loser == Side::A { &self.a } else { &self.b };
            match &l.first_blunder {
                Some(b) => writeln!(
                    f,
                    "    game {} ({} {}, opening {}): ply {} {} in {} ({} -> {}; best {})",
                    l.game,
                    name,
                    l.colour,
                    l.opening.join(" "),
                    b.ply,
                    b.played,
                    b.fen,
                    b.before,
                    b.after,
                    b.best
                )?,
                None => writeln!(
                    f,
                    "    game {} ({} {}, opening {}): no blunder seen (start already lost, or not covered)",
                    l.game,
                    name,
                    l.colour,
                    l.opening.join(" ")
                )?,
            }
        }
        for b in &self.blunder_examples {
            writeln!(
                f,
                "  blunder, game {} ply {} by {:?}: {} in {} ({} -> {}; best {})",
                b.game, b.ply, b.side, b.played, b.fen, b.before, b.after, b.best
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(
            "perfect".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Perfect
        );
        assert_eq!(
            "engine:depth=3,db=no".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Engine {
                limit: SearchLimit::Depth(3),
                hash_mb: 16,
                use_db: false,
                shuffle: true
            }
        );
        assert_eq!(
            "uci:movetime=50:/bin/x uci".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Uci {
                command: vec!["/bin/x".into(), "uci".into()],
                limit: SearchLimit::MoveTime(50),
                use_db: false,
                timeout: None,
            }
        );
        assert_eq!(
            "uci:C:/x.exe".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Uci {
                command: vec!["C:/x.exe".into()],
                limit: SearchLimit::Depth(4),
                use_db: false,
                timeout: None,
            }
        );
        for bad in [
            "engine",
            "engine:depth=0",
            "engine:speed=3",
            "perfect:x",
            "uci:",
            "bogus",
        ] {
            assert!(bad.parse::<PlayerSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn wilson_intervals() {
        let r = Rate::new(50, 100);
        assert!((r.low - 0.4038).abs() < 1e-3 && (r.high - 0.5962).abs() < 1e-3);
        let z = Rate::new(0, 10);
        assert_eq!(z.low, 0.0);
        assert!((z.high - 0.2775).abs() < 1e-3);
    }

    #[test]
    fn random_games_end() {
        let mut c = ArenaConfig::new(PlayerSpec::Random, PlayerSpec::Random, 4);
        c.threads = 2;
        let recs = run(&c, &|_| {}).unwrap();
        assert_eq!(recs.len(), 4);
        assert_eq!(recs[0].white, Side::A);
        assert_eq!(recs[1].white, Side::B);
        let again = run(&c, &|_| {}).unwrap();
        assert_eq!(recs[3].moves, again[3].moves);
    }
}
