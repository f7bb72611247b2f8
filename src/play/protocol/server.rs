//! The engine's text protocol: the UCI-style dialect of Sanmill (see
//! `docs/PROTOCOL.md` for every line read and written).
//!
//! A [`Uci`] reads one command per line. Searches run on their own thread, so
//! `stop`, `isready` and `quit` are answered while one runs. Sanmill's rule options
//! are collected as they come and take effect together at the next `isready`,
//! `ucinewgame`, `position`, `go` or `d` (see [`RuleValues::resolve`]). Each search ends with
//! Sanmill's single line `info depth D score cp N nodes N bestmove TOKEN` (scores
//! from White's point of view, a capture's removal left for the next search) and a
//! standard `bestmove PLY` line (the removal joined: `d7xf4`). Bad input gets an
//! `info string error: ...` line and is otherwise ignored.

pub use crate::play::protocol::options::Options;
use crate::play::protocol::options::{
    MAX_HASH_MB, MAX_MOVE_TIME_MS, MAX_SKILL, option_lines, parse_bool, parse_in, parse_setoption,
};
use crate::play::protocol::rule_options::{RuleValues, Set};
use crate::play::protocol::wire::score_text;
pub use crate::play::protocol::wire::{final_lines, info_line, sanmill_token};
use crate::rules::Rules;
use crate::rules::fen;
use crate::rules::game::Game;
use crate::rules::position::Color;
use crate::search::engine::eval;
use crate::search::engine::{Algorithm, Endgame, Engine, EngineConfig, Info, Limits};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// Writes one line, whole, to a session's output from any thread: what a job the
/// session started in the background (warming a database) has to say, as an
/// `info string` line.
pub type LineSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Opens a database directory as a source of exact values for the rules given, or
/// says why not (its databases are of other rules, ...); the sink writes lines to
/// the session's output later. Set by the program that has a database reader;
/// without one, `DatabasePath` is refused.
pub type EndgameOpener =
    Box<dyn Fn(&Path, &'static Rules, LineSink) -> Result<Arc<dyn Endgame>, String> + Send>;

/// How long a search still running at the end of input may go on before it is
/// stopped and answered.
pub const EOF_GRACE: Duration = Duration::from_secs(3);
/// Time kept in reserve when playing on a clock.
const CLOCK_MARGIN: Duration = Duration::from_millis(30);
/// Moves assumed left in the game when the GUI does not say (`movestogo`).
const MOVES_TO_GO: u32 = 25;

type Out<W> = Arc<Mutex<W>>;

/// A search running on its own thread; the thread hands the engine back.
struct Running {
    stop: Arc<AtomicBool>,
    /// A `go infinite` search, which only `stop` ends.
    infinite: bool,
    handle: JoinHandle<Engine>,
}

/// A protocol session writing to `W`.
pub struct Uci<W: Write + Send + 'static> {
    rules: &'static Rules,
    out: Out<W>,
    engine: Option<Engine>,
    running: Option<Running>,
    game: Game,
    options: Options,
    /// Sanmill's rule options as the driver set them.
    rule_values: RuleValues,
    /// Whether a rule option was set since the rules were last settled.
    rules_pending: bool,
    opener: Option<EndgameOpener>,
}

/// Writes one line and flushes (output errors are ignored: the GUI has gone).
fn say<W: Write>(out: &Mutex<W>, line: &str) {
    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(w, "{line}");
    let _ = w.flush();
}

impl<W: Write + Send + 'static> Uci<W> {
    /// A session for `rules` writing to `out`; `opener` reads database directories.
    pub fn new(rules: &'static Rules, out: W, opener: Option<EndgameOpener>) -> Uci<W> {
        let options = Options::default();
        let engine = Engine::new(
            rules,
            EngineConfig {
                hash_mb: options.hash_mb,
                ..EngineConfig::default()
            },
        );
        Uci {
            rules,
            out: Arc::new(Mutex::new(out)),
            engine: Some(engine),
            running: None,
            game: start_game(rules),
            options,
            rule_values: RuleValues::of(rules),
            rules_pending: false,
            opener,
        }
    }

    /// The current options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The rules played: those the session started with, or those Sanmill's rule
    /// options described when they last took effect.
    pub fn rules(&self) -> &'static Rules {
        self.rules
    }

    /// Reads commands until `quit` or the end of input. At the end of input a running
    /// search may go on for at most [`EOF_GRACE`] (so that piped commands get their
    /// answer) and is then stopped; a `go infinite` is stopped at once. Either way
    /// its closing lines are printed before this returns, and a GUI that dies (its
    /// end of the pipe closes) never leaves the engine searching.
    pub fn run(&mut self, input: impl BufRead) {
        // Lines as bytes: a line that is not UTF-8 is answered with an error and
        // skipped, never the end of the engine.
        for line in input.split(b'\n') {
            let Ok(bytes) = line else { break };
            let Ok(line) = std::str::from_utf8(&bytes) else {
                self.error("a line that is not UTF-8 text was ignored");
                continue;
            };
            if !self.handle(line) {
                return;
            }
        }
        if let Some(running) = self.running.as_ref().filter(|r| !r.infinite) {
            let deadline = Instant::now() + EOF_GRACE;
            while !running.handle.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        self.finish(true);
    }

    fn say(&self, line: &str) {
        say(&self.out, line);
    }

    /// A sink writing lines to the session's output from any thread.
    fn line_sink(&self) -> LineSink {
        let out = self.out.clone();
        Arc::new(move |line: &str| say(&out, line))
    }

    fn error(&self, message: &str) {
        self.say(&format!("info string error: {message}"));
    }

    /// Handles one command line; `false` after `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        let line = line.trim();
        let (command, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        if matches!(command, "isready" | "ucinewgame" | "position" | "go" | "d") {
            self.settle_rules();
        }
        match command {
            "" => {}
            "uci" => self.uci(),
            "isready" => self.say("readyok"),
            "ucinewgame" => self.new_game(),
            "setoption" => self.set_option(rest),
            "position" => self.position(rest),
            "go" => self.go(rest),
            "stop" => self.finish(true),
            "d" => self.say(&fen::format(
                self.rules,
                self.game.position(),
                self.game.counters,
            )),
            "quit" => {
                self.finish(true);
                return false;
            }
            other => self.error(&format!("unknown command '{other}'")),
        }
        true
    }

    fn uci(&self) {
        self.say(&format!("id name millbase {}", env!("CARGO_PKG_VERSION")));
        self.say("id author the millbase authors");
        option_lines().iter().for_each(|l| self.say(l));
        self.say("uciok");
    }

    /// Stops (if `stop`) or waits for a running search and takes the engine back.
    fn finish(&mut self, stop: bool) {
        let Some(running) = self.running.take() else {
            return;
        };
        if stop {
            running.stop.store(true, Ordering::Relaxed);
        }
        match running.handle.join() {
            Ok(engine) => self.engine = Some(engine),
            Err(_) => {
                self.error("the search failed; the engine was reset");
                self.engine = Some(Engine::new(self.rules, self.engine_config()));
            }
        }
    }

    fn engine(&mut self) -> &mut Engine {
        self.finish(true);
        self.engine
            .as_mut()
            .expect("the engine is home when no search runs")
    }

    fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            hash_mb: self.options.hash_mb,
            endgame: None,
            algorithm: if self.options.mtdf {
                Algorithm::Mtdf
            } else {
                Algorithm::Pvs
            },
            shuffle: None,
            eval: eval::named(self.options.eval)
                .expect("a known evaluation")
                .1,
            quiescence: self.options.quiescence,
            threat_extension: self.options.threat_extension,
            quiet_damping: crate::search::engine::QUIET_DAMPING,
            reductions: self.options.reductions,
            threads: self.options.threads,
        }
    }

    /// Puts the rule options set since the last time into effect: the rule set they
    /// describe replaces the one played (with a new engine and the start position),
    /// unless they describe none, or the database set is of other rules; then an
    /// error names the options or both rule sets, and the rules stay.
    fn settle_rules(&mut self) {
        if !std::mem::take(&mut self.rules_pending) {
            return;
        }
        let now = self.rules.name;
        let rules = match self.rule_values.resolve() {
            Ok(rules) if rules.name == now => return,
            Ok(rules) => rules,
            Err(e) => return self.error(&format!("{e}: the rules stay {now}")),
        };
        if let Some(dir) = &self.options.database {
            return self.error(&format!(
                "the rule options describe {}, but the databases of DatabasePath {dir} are of the rules {now}: the rules stay {now} (set DatabasePath to <empty> or to a directory of {} first)",
                rules.name, rules.name
            ));
        }
        self.finish(true);
        self.rules = rules;
        let mut engine = Engine::new(rules, self.engine_config());
        if self.options.shuffling {
            engine.set_shuffle(Some(time_seed()));
        }
        self.engine = Some(engine);
        self.game = start_game(rules);
    }

    fn new_game(&mut self) {
        self.engine().clear();
        self.game = start_game(self.rules);
    }

    fn position(&mut self, rest: &str) {
        let text = rest.strip_prefix("fen").map(str::trim).unwrap_or(rest);
        match Game::parse(self.rules, text) {
            Ok(game) => self.game = game,
            Err(e) => self.error(&format!("position refused, the previous one is kept: {e}")),
        }
    }

    fn set_option(&mut self, rest: &str) {
        let Some((name, value)) = parse_setoption(rest) else {
            return self.error("write: setoption name <Name> value <v>");
        };
        let result = match name.to_ascii_lowercase().as_str() {
            "hash" => parse_in(&value, 1, MAX_HASH_MB).and_then(|mb| {
                self.engine().set_hash_mb(mb)?;
                self.options.hash_mb = mb;
                Ok(())
            }),
            "databasepath" => self.set_database(&value),
            "skilllevel" | "depth" => {
                parse_in(&value, 0, MAX_SKILL).map(|d| self.options.skill_level = d)
            }
            "movetimems" => {
                parse_in(&value, 0, MAX_MOVE_TIME_MS).map(|t| self.options.move_time_ms = t)
            }
            "shuffling" => parse_bool(&value).map(|b| {
                self.options.shuffling = b;
                let seed = b.then(time_seed);
                self.engine().set_shuffle(seed);
            }),
            "usemtdf" => parse_bool(&value).map(|b| {
                self.options.mtdf = b;
                let algorithm = if b { Algorithm::Mtdf } else { Algorithm::Pvs };
                self.engine().set_algorithm(algorithm);
            }),
            "movetime" => parse_in(&value, 0, MAX_MOVE_TIME_MS / 1000)
                .map(|s| self.options.move_time_ms = s * 1000),
            "sanmillbestmove" => parse_bool(&value).map(|b| self.options.sanmill_bestmove = b),
            "eval" => match eval::named(&value) {
                Some((name, e)) => {
                    self.options.eval = name;
                    self.engine().set_eval(e);
                    Ok(())
                }
                None => Err(format!(
                    "option Eval value {value}: the evaluations are {}",
                    eval::names()
                )),
            },
            "quiescence" => parse_in(&value, 0, crate::search::engine::MAX_QUIESCENCE).map(|q| {
                self.options.quiescence = q;
                self.engine().set_quiescence(q);
            }),
            "threatextension" => parse_bool(&value).map(|b| {
                self.options.threat_extension = b;
                self.engine().set_threat_extension(b);
            }),
            "reductions" => parse_bool(&value).map(|b| {
                self.options.reductions = b;
                self.engine().set_reductions(b);
            }),
            "threads" => value
                .parse::<u64>()
                .map_err(|_| format!("'{value}' is not a whole number of threads"))
                .and_then(|n| {
                    let most = crate::search::engine::MAX_THREADS;
                    Ok(crate::memory::check_threads("Threads", n, most)?)
                })
                .map(|t| {
                    self.options.threads = t;
                    self.engine().set_threads(t);
                }),
            _ => match self.rule_values.set(&name, &value) {
                Ok(Set::Changed) => {
                    self.rules_pending = true;
                    Ok(())
                }
                Ok(Set::Unchanged) => Ok(()),
                Ok(Set::NotARuleOption) => Err(format!("unknown option '{name}'")),
                Err(e) => Err(e),
            },
        };
        if let Err(e) = result {
            self.error(&e);
        }
    }

    fn set_database(&mut self, value: &str) -> Result<(), String> {
        // The database must be of the rules the options set before it describe.
        self.settle_rules();
        if value.is_empty() || value == "<empty>" {
            self.options.database = None;
            self.engine().set_endgame(None);
            return Ok(());
        }
        let opener = self
            .opener
            .as_ref()
            .ok_or("this program cannot read databases")?;
        let endgame = opener(Path::new(value), self.rules, self.line_sink())?;
        self.options.database = Some(value.to_string());
        self.engine().set_endgame(Some(endgame));
        Ok(())
    }

    fn go(&mut self, rest: &str) {
        let infinite = rest.split_whitespace().any(|t| t == "infinite");
        let (rest, topn) = match split_topn(rest) {
            Ok(split) => split,
            Err(e) => return self.error(&e),
        };
        let limits = match parse_go(&rest, self.game.position().to_move, &self.options) {
            Ok(limits) => limits,
            Err(e) => return self.error(&e),
        };
        let sanmill_only = self.options.sanmill_bestmove;
        self.finish(true);
        let mut engine = self
            .engine
            .take()
            .unwrap_or_else(|| Engine::new(self.rules, self.engine_config()));
        let stop = Arc::new(AtomicBool::new(false));
        let (out, game, rules, flag) = (
            self.out.clone(),
            self.game.clone(),
            self.rules,
            stop.clone(),
        );
        let handle = std::thread::spawn(move || {
            if let Some(n) = topn {
                for line in topn_lines(&mut engine, rules, &game, n, &flag) {
                    say(&out, &line);
                }
            }
            let mut report = |info: &Info| say(&out, &info_line(rules, info));
            let result = engine.search_game(&game, &limits, &flag, &mut report);
            if let Some(e) = engine.config().endgame.as_ref().and_then(|e| e.damage()) {
                say(
                    &out,
                    &format!(
                        "info string error: a database file is damaged ({e}); this answer comes from the heuristic search, not the databases: rebuild with `millbase build`"
                    ),
                );
            }
            // Both closing lines under one lock, so that no `readyok` comes between
            // them (a driver may send `isready` on seeing the first).
            let lines = final_lines(rules, &result, game.position().to_move);
            let count = if sanmill_only { 1 } else { 2 };
            say(&out, &lines[..count].join("\n"));
            engine
        });
        self.running = Some(Running {
            stop,
            infinite,
            handle,
        });
    }
}

fn start_game(rules: &Rules) -> Game {
    Game::parse(rules, "startpos").expect("the start position parses")
}

fn time_seed() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// The limits of `go ...` for `side` to move. A `go` naming no limit uses the
/// `SkillLevel` depth and `MoveTimeMs` options.
pub fn parse_go(rest: &str, side: Color, options: &Options) -> Result<Limits, String> {
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let mut limits = Limits::default();
    let mut clock = [None::<u64>; 2];
    let mut inc = [0u64; 2];
    let mut moves_to_go = None;
    let mut infinite = false;
    let mut i = 0;
    while i < tokens.len() {
        let number = |i: usize| -> Result<u64, String> {
            let t = tokens
                .get(i + 1)
                .ok_or_else(|| format!("'go {}' needs a number", tokens[i]))?;
            t.parse()
                .map_err(|_| format!("'go {} {t}': not a number", tokens[i]))
        };
        match tokens[i] {
            "infinite" => infinite = true,
            "ponder" => {}
            // Depth 0 is Sanmill's "no depth named": the options decide.
            "depth" => {
                limits.depth = Some(number(i)?.min(u32::MAX as u64) as u32).filter(|&d| d > 0)
            }
            "nodes" => limits.nodes = Some(number(i)?.max(1)),
            "movetime" => {
                limits.movetime = Some(number(i)?)
                    .filter(|&t| t > 0)
                    .map(Duration::from_millis)
            }
            "wtime" => clock[0] = Some(number(i)?),
            "btime" => clock[1] = Some(number(i)?),
            "winc" => inc[0] = number(i)?,
            "binc" => inc[1] = number(i)?,
            "movestogo" => moves_to_go = Some(number(i)?.max(1) as u32),
            other => return Err(format!("unknown go parameter '{other}'")),
        }
        i += if matches!(tokens[i], "infinite" | "ponder") {
            1
        } else {
            2
        };
    }
    if let Some(left) = clock[side.index()] {
        let share = clock_share(left, inc[side.index()], moves_to_go.unwrap_or(MOVES_TO_GO));
        limits.movetime = Some(limits.movetime.map_or(share, |t| t.min(share)));
    }
    let named = infinite || limits != Limits::default();
    if !named {
        limits.depth = (options.skill_level > 0).then_some(options.skill_level);
        limits.movetime =
            (options.move_time_ms > 0).then(|| Duration::from_millis(options.move_time_ms));
        if tokens.contains(&"depth") && limits == Limits::default() {
            // `go depth 0` with neither SkillLevel nor MoveTimeMs: a bounded search.
            limits.depth = Some(1);
        }
    }
    Ok(limits)
}

/// Takes `topn N` out of a `go` line: the rest and N (at least 1), as Sanmill reads it.
fn split_topn(rest: &str) -> Result<(String, Option<usize>), String> {
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let Some(i) = tokens.iter().position(|&t| t == "topn") else {
        return Ok((rest.to_string(), None));
    };
    let n = tokens
        .get(i + 1)
        .and_then(|t| t.parse::<usize>().ok())
        .ok_or("'go topn' needs a number")?;
    let others: Vec<&str> = tokens[..i]
        .iter()
        .chain(&tokens[i + 2..])
        .copied()
        .collect();
    Ok((others.join(" "), Some(n.max(1))))
}

/// Depth of the search that scores each root move for `go topn` (Sanmill's: 2 plies,
/// the move and a one-ply search below it).
const TOPN_CHILD_DEPTH: u32 = 1;

/// Sanmill's `info topn rank K move TOKEN score ...` lines: the `n` best root moves
/// (in Sanmill's tokens: a capture once, with its best removal), each scored by a
/// one-ply search after it, best first, scores from White's point of view.
fn topn_lines(
    engine: &mut Engine,
    rules: &Rules,
    game: &Game,
    n: usize,
    stop: &AtomicBool,
) -> Vec<String> {
    let pos = *game.position();
    let limits = Limits {
        depth: Some(TOPN_CHILD_DEPTH),
        ..Limits::default()
    };
    let mut scored: Vec<(String, i32)> = Vec::new();
    for ply in pos.legal_plies(rules) {
        let mut child = game.clone();
        child.play(rules, ply);
        let after = child.position();
        let score = if after.lost_on_material() {
            crate::search::score::MATE - 1
        } else {
            -engine.search_game(&child, &limits, stop, &mut |_| {}).score
        };
        let token = sanmill_token(rules, ply);
        match scored.iter_mut().find(|(t, _)| *t == token) {
            Some(entry) => entry.1 = entry.1.max(score),
            None => scored.push((token, score)),
        }
    }
    // A stable sort keeps the generation order among equal scores.
    scored.sort_by_key(|&(_, s)| std::cmp::Reverse(s));
    let white = |s: i32| if pos.to_move == Color::White { s } else { -s };
    scored
        .iter()
        .take(n)
        .enumerate()
        .map(|(k, (token, s))| {
            format!(
                "info topn rank {} move {token} score {}",
                k + 1,
                score_text(white(*s))
            )
        })
        .collect()
}

/// The time for one move from `left` ms on the clock and `inc` ms increment.
fn clock_share(left: u64, inc: u64, moves_to_go: u32) -> Duration {
    let left = Duration::from_millis(left);
    let share = left / moves_to_go + Duration::from_millis(inc) * 3 / 4;
    share
        .min(left.saturating_sub(CLOCK_MARGIN))
        .max(Duration::from_millis(5))
}

/// Runs a session on standard input and output.
pub fn run_stdio(rules: &'static Rules, opener: Option<EndgameOpener>) {
    let mut session = Uci::new(rules, std::io::stdout(), opener);
    session.run(std::io::stdin().lock());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::position::Ply;
    use crate::search::score;

    #[test]
    fn go_limits() {
        let o = Options::default();
        let ms = Duration::from_millis;
        let go = |text: &str, side| parse_go(text, side, &o).unwrap();
        assert_eq!(
            go("depth 4", Color::White),
            Limits {
                depth: Some(4),
                ..Limits::default()
            }
        );
        assert_eq!(
            go("", Color::White),
            Limits {
                movetime: Some(ms(1000)),
                ..Limits::default()
            }
        );
        assert_eq!(go("infinite", Color::White), Limits::default());
        assert_eq!(
            go("movetime 0 nodes 7", Color::White),
            Limits {
                nodes: Some(7),
                ..Limits::default()
            }
        );
        let clock = go("wtime 10000 btime 2500 winc 100 binc 0", Color::Black);
        assert_eq!(clock.movetime, Some(ms(100)));
        assert!(parse_go("depth", Color::White, &o).is_err());
        assert!(parse_go("depth x", Color::White, &o).is_err());
        assert!(parse_go("sometimes", Color::White, &o).is_err());
        let skill = Options {
            skill_level: 6,
            move_time_ms: 0,
            ..Options::default()
        };
        assert_eq!(
            parse_go("", Color::White, &skill).unwrap(),
            Limits {
                depth: Some(6),
                ..Limits::default()
            }
        );
    }

    #[test]
    fn tokens_scores_and_options() {
        let r = Rules::standard();
        let capture = crate::rules::notation::parse_ply_syntax(r, "d7xf4").unwrap();
        assert_eq!(sanmill_token(r, capture), "d7");
        assert_eq!(
            sanmill_token(r, Ply::removal(r.point("f4").unwrap())),
            "xf4"
        );
        assert_eq!(score_text(35), "cp 35");
        assert_eq!(score_text(score::MATE - 3), "mate 2");
        assert_eq!(score_text(-(score::MATE - 2)), "mate -1");
        assert_eq!(
            parse_setoption("name Database Path value /tmp/a b"),
            Some(("Database Path".to_string(), "/tmp/a b".to_string()))
        );
        assert_eq!(
            parse_setoption("name Clear"),
            Some(("Clear".to_string(), String::new()))
        );
        assert_eq!(parse_setoption("value 3"), None);
    }

    #[test]
    fn a_session_in_memory() {
        let r = Rules::standard();
        let buf = Arc::new(Mutex::new(Vec::<u8>::new()));
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().write(b)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut uci = Uci::new(r, Shared(buf.clone()), None);
        // The hand-set weights: the expected move is theirs at depth 2.
        let input = "setoption name DatabasePath value /nowhere\nsetoption name Eval value shipped\nposition startpos moves a7 d6 d7 f4\ngo depth 2\n";
        uci.run(input.as_bytes());
        let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("info string error: "), "{text}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("info depth 2 ") && l.ends_with(" bestmove g7")),
            "{text}"
        );
        assert!(lines.last().unwrap().starts_with("bestmove g7x"), "{text}");
    }
}
