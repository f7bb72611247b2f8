//! Legal plies agree with Sanmill's engine under every rule set it plays.
//!
//! For each rule set Sanmill's options describe, random legal games (placement and
//! moving phases, flying, positions with a removal pending) are played with
//! millbase's rules; at sampled positions Sanmill's engine lists its legal plies
//! (`position startpos moves ...`, then its `moves` command) after being told the
//! rule set by the options the arena sends ([`sanmill_setup`]), and the set must be
//! millbase's. With `TGF` naming Sanmill's engine the test talks to it (and with
//! `TGF_RECORD=DIR` records the dialogues into DIR); without, it replays the
//! dialogues recorded in `tests/sanmill/legal-NAME.txt` through `standin.py`.
//!
//! The one known difference: Sanmill's `lasker` does not fly with stones in hand
//! (`docs/RULES.md`, "Lasker, flying with stones in hand"); such positions must differ
//! exactly in the flying moves, and are counted apart.

use millbase::play::protocol::rule_options::sanmill_setup;
use millbase::play::protocol::wire::sanmill_token;
use millbase::rules::position::{NONE, Phase};
use millbase::{Game, Ply, Position, Rules};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The rule sets compared (all of Sanmill's options' columns).
const RULE_SETS: [&str; 5] = ["standard", "twelve", "morabaraba", "lasker", "no-flying"];
/// Random games a rule set.
const GAMES: u64 = 10;
/// Longest game played (plies).
const MAX_PLIES: usize = 140;

fn sanmill_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sanmill")
}

/// splitmix64: the positions must be the same on every run (the dialogue is replayed).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The positions asked about: `startpos moves ...` texts (Sanmill's tokens, a
/// removal its own token, so that a text may end with a removal pending).
fn positions(rules: &'static Rules, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for _ in 0..GAMES {
        let mut game = Game::parse(rules, "startpos").unwrap();
        let mut tokens: Vec<String> = Vec::new();
        for _ in 0..MAX_PLIES {
            let pos = *game.position();
            if pos.below_three(pos.to_move) || pos.below_three(pos.to_move.other()) {
                break;
            }
            let me = pos.to_move;
            let flies = rules.flies(me.pick(pos.board).count_ones(), me.pick(pos.hand));
            if rng.below(if flies { 2 } else { 6 }) == 0 {
                out.push(tokens.join(" "));
            }
            // A lasker jump with stones in hand is not Sanmill's: asked about, never
            // played, so that the game goes on under rules both sides share.
            let legal: Vec<Ply> = pos
                .legal_plies(rules)
                .into_iter()
                .filter(|p| !flies_with_hand(rules, pos, *p))
                .collect();
            if legal.is_empty() {
                out.push(tokens.join(" "));
                break;
            }
            // Captures half the time while both sides have more than four stones
            // (to reach the endgame and flying, and stay there), and in
            // lasker moves rather than placements (to keep stones in hand while
            // losing stones: flying with stones in hand).
            let captures: Vec<Ply> = legal.iter().copied().filter(|p| p.remove != NONE).collect();
            let moves: Vec<Ply> = legal.iter().copied().filter(|p| p.from != NONE).collect();
            let plenty = pos.material(me) > 4 && pos.material(me.other()) > 4;
            let pool = if plenty && !captures.is_empty() && rng.below(2) == 0 {
                captures
            } else if rules.move_in_placement && !moves.is_empty() && rng.below(5) < 4 {
                moves
            } else {
                legal
            };
            let ply = pool[rng.below(pool.len())];
            tokens.push(sanmill_token(rules, ply));
            if ply.remove != NONE && !ply.is_lone_removal() {
                // The removal pending, asked about half the time.
                if rng.below(2) == 0 {
                    out.push(tokens.join(" "));
                }
                tokens.push(sanmill_token(rules, Ply::removal(ply.remove)));
            }
            game.play(rules, ply);
        }
    }
    if 2 * usize::from(rules.stones) >= rules.points() {
        out.extend(full_board(rules, &mut rng));
    }
    out
}

/// A game whose placements fill the board without a mill: its last four positions
/// (the full board last), for the rules where that can happen.
fn full_board(rules: &'static Rules, rng: &mut Rng) -> Vec<String> {
    for _ in 0..10_000 {
        let mut game = Game::parse(rules, "startpos").unwrap();
        let mut tokens: Vec<String> = Vec::new();
        let mut texts = Vec::new();
        loop {
            let pos = *game.position();
            texts.push(tokens.join(" "));
            if pos.empty(rules) == 0 {
                return texts.split_off(texts.len() - 4);
            }
            let quiet: Vec<Ply> = pos
                .legal_plies(rules)
                .into_iter()
                .filter(|p| p.from == NONE && p.remove == NONE)
                .collect();
            if quiet.is_empty() || pos.hand == [0, 0] {
                break;
            }
            let ply = quiet[rng.below(quiet.len())];
            tokens.push(sanmill_token(rules, ply));
            game.play(rules, ply);
        }
    }
    panic!("{}: no full board found", rules.name)
}

/// Whether `ply` is a jump made with stones in hand (`lasker`), which Sanmill does
/// not play.
fn flies_with_hand(rules: &Rules, pos: Position, ply: Ply) -> bool {
    let me = pos.to_move;
    rules.fly_counts_hand
        && pos.hand[me.index()] > 0
        && ply.from != NONE
        && rules.adjacency[usize::from(ply.from)] >> ply.to & 1 == 0
}

/// millbase's legal plies at `moves`, as Sanmill's tokens (a capture once), and
/// those of them that are not jumps with stones in hand.
fn millbase_plies(rules: &Rules, moves: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let game = Game::parse(rules, &format!("startpos moves {moves}")).unwrap();
    let pos = *game.position();
    let tokens = |keep: &dyn Fn(Ply) -> bool| {
        pos.legal_plies(rules)
            .into_iter()
            .filter(|&p| keep(p))
            .map(|p| sanmill_token(rules, p))
            .collect()
    };
    (
        tokens(&|_| true),
        tokens(&|p| !flies_with_hand(rules, pos, p)),
    )
}

struct Engine {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Engine {
    fn start(name: &str) -> Engine {
        let transcript = sanmill_dir().join(format!("legal-{name}.txt"));
        let standin = sanmill_dir().join("standin.py");
        let mut command = match std::env::var("TGF") {
            Ok(tgf) => match std::env::var("TGF_RECORD") {
                Ok(dir) => {
                    let mut c = Command::new("python3");
                    c.arg(&standin)
                        .arg("record")
                        .arg(PathBuf::from(dir).join(format!("legal-{name}.txt")))
                        .args(["--", &tgf, "uci"]);
                    c
                }
                Err(_) => {
                    let mut c = Command::new(tgf);
                    c.arg("uci");
                    c
                }
            },
            Err(_) => {
                let mut c = Command::new("python3");
                c.arg(&standin).arg("replay").arg(&transcript);
                c
            }
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Engine {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends `quit`, closes the engine's input and waits for it to exit.
    fn quit(mut self) {
        self.send("quit");
        drop(self.stdin);
        let _ = self.child.wait();
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Reads lines up to one `done` accepts; a refusal or a stand-in that diverged
    /// fails the test.
    fn until(&mut self, done: impl Fn(&str) -> bool) -> String {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the engine exited"
            );
            let line = line.trim().to_string();
            assert!(
                !line.starts_with("info string unsupported")
                    && !line.starts_with("info string stand-in diverged")
                    && !line.contains("error"),
                "{line}"
            );
            if done(&line) {
                return line;
            }
        }
    }
}

#[test]
fn legal_plies_agree_with_sanmill_under_every_rule_set() {
    let mut report = Vec::new();
    for (seed, name) in RULE_SETS.iter().enumerate() {
        let rules = Rules::by_name(name).unwrap();
        let mut engine = Engine::start(name);
        engine.send("uci");
        engine.until(|l| l == "uciok");
        for (option, value) in sanmill_setup(rules).unwrap() {
            engine.send(&format!("setoption name {option} value {value}"));
        }
        engine.send("isready");
        engine.until(|l| l == "readyok");
        let (mut compared, mut plies, mut lasker_flying, mut flying, mut full) = (0, 0, 0, 0, 0);
        let mut phases = BTreeSet::new();
        for moves in positions(rules, 1 + seed as u64) {
            engine.send(format!("position startpos moves {moves}").trim_end());
            engine.send("moves");
            let line = engine.until(|l| l.starts_with("moves"));
            let theirs: BTreeSet<String> =
                line.split_whitespace().skip(1).map(String::from).collect();
            let (ours, shared) = millbase_plies(rules, &moves);
            let game = Game::parse(rules, &format!("startpos moves {moves}")).unwrap();
            let pos = game.position();
            phases.insert(match (pos.pending_removal, pos.phase()) {
                (true, _) => "removal",
                (_, Phase::Placement) => "placement",
                _ => "moving",
            });
            full += usize::from(pos.empty(rules) == 0);
            let me = pos.to_move;
            let on_board = me.pick(pos.board).count_ones();
            if !pos.pending_removal && rules.flies(on_board, pos.hand[me.index()]) {
                flying += 1;
            }
            // Sanmill's plies are millbase's but for lasker's jumps with stones in hand.
            assert_eq!(theirs, shared, "{name}: startpos moves {moves}");
            if shared != ours {
                lasker_flying += 1;
            }
            compared += 1;
            plies += theirs.len();
        }
        engine.quit();
        assert!(compared >= 100, "{name}: only {compared} positions");
        assert_eq!(
            phases.len(),
            3,
            "{name}: every kind of position is asked about: {phases:?}"
        );
        report.push(format!(
            "{name}: {compared} positions ({flying} with the side to move flying, {lasker_flying} of them with stones in hand, {full} full boards), {plies} plies"
        ));
    }
    eprintln!("{}", report.join("\n"));
}
