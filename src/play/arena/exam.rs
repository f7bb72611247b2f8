//! The exam: positions drawn from perfect play, each answered by one or more
//! players and judged by the databases.
//!
//! A game against perfect play is decided by the first blunder, and a blunder is
//! rare: a draw-rate match needs hundreds of games to tell two engines apart. The
//! exam asks for one ply in each of many positions where a blunder is possible,
//! so it measures the same thing (how often a player gives away the value of a
//! position) with far less play, and all players answer the same positions, so two
//! players compare position by position.
//!
//! A *question* is drawn as follows: a ply count `t` is drawn uniformly from the
//! configured range, and both sides play `t` plies from the start, each ply drawn
//! uniformly among those that keep the position's win/draw/loss (perfect play, as
//! far as the result goes). The position reached is a question if one of its plies
//! is worse for the side to move than its best (a blunder is possible there);
//! otherwise the draw is discarded and counted. Every draw is seeded by the exam's
//! seed and the draw's number, so a seed gives the same questions on any machine
//! and with any number of threads. Draws are independent, so a position can be
//! asked more than once (in the first plies, which have few positions).
//!
//! An answer is a *blunder* if the ply's win/draw/loss for its mover is worse than
//! the position's. Each player answers each question as a new game (a player made
//! for that question, with the game's history from the start), so answers do not
//! depend on the order or the threads.

use super::config::ArenaConfig;
use super::error::ArenaError;
use super::players::{Stop, make_player};
use super::seeds::{derive, pick};
use super::spec::PlayerSpec;
use super::stats::Rate;
use crate::rules::Rules;
use crate::rules::fen::{self, Counters};
use crate::rules::game::Game;
use crate::rules::notation::format_ply;
use crate::rules::position::{Ply, Position};
use crate::rules::value::Wdl;
use crate::table::probe::{ProbeError, Tablebase};
use rayon::prelude::*;
use serde::Serialize;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Draws per question asked for before the exam gives up (most positions of a
/// perfect game offer a blunder, so this is never reached on a real database).
const DRAWS_PER_QUESTION: usize = 200;

/// How an exam is set up.
#[derive(Clone)]
pub struct ExamConfig {
    /// The players and their names in reports.
    pub players: Vec<(PlayerSpec, String)>,
    /// Questions to ask.
    pub questions: usize,
    /// Plies from the start at which questions are drawn.
    pub plies: RangeInclusive<usize>,
    /// The seed the questions derive from.
    pub seed: u64,
    /// Answers computed at once.
    pub threads: usize,
    /// The databases that draw and judge the questions (they must cover every
    /// position reached, placement included).
    pub db: Arc<Tablebase>,
    /// The database directory (for `uci:` players with `db=yes`).
    pub db_dir: Option<PathBuf>,
}

/// A position to answer.
#[derive(Clone, Debug)]
pub struct Question {
    /// The game from the start to the position.
    pub game: Game,
    /// Its win/draw/loss for the side to move.
    pub value: Wdl,
    /// Every legal ply with its win/draw/loss for the side that plays it.
    pub plies: Vec<(Ply, Wdl)>,
}

impl Question {
    /// Plies from the start.
    pub fn ply(&self) -> usize {
        self.game.plies.len()
    }

    /// Plies that would be blunders here.
    pub fn traps(&self) -> usize {
        self.plies.iter().filter(|m| m.1 < self.value).count()
    }

    /// The win/draw/loss of `ply` for its mover, if it is legal here.
    pub fn judge(&self, ply: Ply) -> Option<Wdl> {
        self.plies.iter().find(|m| m.0 == ply).map(|m| m.1)
    }
}

/// Draws `config.questions` questions (see the module documentation).
pub fn questions(config: &ExamConfig) -> Result<Vec<Question>, ArenaError> {
    let rules = config.db.rules();
    let fail = |e: ProbeError| ArenaError::Start(format!("drawing the exam's positions: {e}"));
    let mut out = Vec::with_capacity(config.questions);
    let span = (config.plies.end() + 1).saturating_sub(*config.plies.start()) as u64;
    if span == 0 {
        return Err(ArenaError::Start("the range of plies is empty".into()));
    }
    let most = config.questions.saturating_mul(DRAWS_PER_QUESTION).max(1);
    for draw in 0..most {
        if out.len() == config.questions {
            break;
        }
        let seed = derive(config.seed, draw as u64, 0);
        let plies = config.plies.start() + (seed % span) as usize;
        if let Some(q) = draw_question(&config.db, rules, plies, seed).map_err(fail)? {
            out.push(q);
        }
    }
    if out.len() < config.questions {
        return Err(ArenaError::Start(format!(
            "only {} of {} positions offered a blunder in {most} draws; widen --plies",
            out.len(),
            config.questions
        )));
    }
    Ok(out)
}

/// Plays `plies` plies of perfect play (by win/draw/loss) from the start; the
/// position reached, if the game goes on and a blunder is possible there.
fn draw_question(
    db: &Tablebase,
    rules: &'static Rules,
    plies: usize,
    seed: u64,
) -> Result<Option<Question>, ProbeError> {
    let start_counters = Counters {
        fullmove: 1,
        ..Counters::default()
    };
    let mut game = Game::new(Position::start(rules), start_counters);
    for i in 0..=plies {
        let moves = db.moves_wdl(game.position())?;
        let Some(&(_, value)) = moves.first() else {
            return Ok(None);
        };
        if i == plies {
            let question = Question {
                game,
                value,
                plies: moves,
            };
            return Ok((question.traps() > 0).then_some(question));
        }
        let keep: Vec<Ply> = moves
            .iter()
            .take_while(|m| m.1 == value)
            .map(|m| m.0)
            .collect();
        game.play(rules, pick(&keep, derive(seed, i as u64, 1)));
    }
    unreachable!("the loop returns at its last ply")
}

/// One player's answers.
#[derive(Clone, Debug, Serialize)]
pub struct Answers {
    /// The player's name.
    pub name: String,
    /// The ply chosen for each question, in question order.
    #[serde(skip)]
    pub plies: Vec<Ply>,
    /// Whether each answer was a blunder, in question order.
    #[serde(skip)]
    pub blunders: Vec<bool>,
    /// Seconds of wall time per answer, on average.
    pub seconds_per_answer: f64,
}

/// What an exam found.
#[derive(Clone, Debug, Serialize)]
pub struct ExamReport {
    /// Questions asked.
    pub questions: usize,
    /// Plies that would be blunders, per question, on average.
    pub traps_per_question: f64,
    /// The plies from the start that questions were drawn at, each with its number
    /// of questions.
    pub by_ply: Vec<(usize, usize)>,
    /// Per player: blunders overall, then per ply from the start.
    pub players: Vec<PlayerReport>,
    /// With two players: the questions only one of them got wrong.
    pub paired: Option<Paired>,
}

/// One player's results.
#[derive(Clone, Debug, Serialize)]
pub struct PlayerReport {
    /// The player's name.
    pub name: String,
    /// Blunders among all answers.
    pub blunders: Rate,
    /// Blunders among the answers to questions of each ply from the start (plies
    /// with no question left out).
    pub by_ply: Vec<(usize, Rate)>,
    /// Seconds of wall time per answer, on average.
    pub seconds_per_answer: f64,
}

/// One question with every player's answer, as `millbase exam --out` writes it.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// The question's number (from 0).
    pub question: usize,
    /// The game from the start: `startpos moves ...`.
    pub game: String,
    /// The position as a FEN.
    pub fen: String,
    /// Its win/draw/loss for the side to move.
    pub value: String,
    /// The plies that would be blunders.
    pub traps: Vec<String>,
    /// Each player's answer, in player order.
    pub answers: Vec<RecordAnswer>,
}

/// One player's answer to one question.
#[derive(Clone, Debug, Serialize)]
pub struct RecordAnswer {
    /// The player's name.
    pub player: String,
    /// The ply it chose.
    pub ply: String,
    /// The ply's win/draw/loss for the player.
    pub result: String,
    /// Whether that is worse than the position's value.
    pub blunder: bool,
}

/// Every question with every player's answer, in question order.
pub fn records(rules: &Rules, questions: &[Question], answers: &[Answers]) -> Vec<Record> {
    let text = |p: Ply| format_ply(rules, p);
    questions
        .iter()
        .enumerate()
        .map(|(i, q)| Record {
            question: i,
            game: q.game.text(rules),
            fen: fen::format(rules, q.game.position(), q.game.counters),
            value: q.value.to_string(),
            traps: q
                .plies
                .iter()
                .filter(|m| m.1 < q.value)
                .map(|m| text(m.0))
                .collect(),
            answers: answers
                .iter()
                .map(|a| {
                    let ply = a.plies[i];
                    RecordAnswer {
                        player: a.name.clone(),
                        ply: text(ply),
                        result: q.judge(ply).map_or("illegal".into(), |w| w.to_string()),
                        blunder: a.blunders[i],
                    }
                })
                .collect(),
        })
        .collect()
}

/// Two players compared on the same questions.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Paired {
    /// Questions the first player got wrong and the second right.
    pub first_only: usize,
    /// Questions the second player got wrong and the first right.
    pub second_only: usize,
    /// Two-sided p-value of the sign test on those questions: how likely so
    /// uneven a split is if both players blunder equally often.
    pub p_value: f64,
}

/// Asks every question of every player.
pub fn answer(
    config: &ExamConfig,
    questions: &[Question],
    on_answer: &(dyn Fn() + Sync),
) -> Result<Vec<Answers>, ArenaError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads.max(1))
        .build()
        .map_err(|e| ArenaError::Start(format!("no threads for the exam: {e}")))?;
    config
        .players
        .iter()
        .map(|(spec, name)| {
            let timed: Vec<(Ply, f64)> = pool.install(|| {
                questions
                    .par_iter()
                    .enumerate()
                    .map(|(i, q)| {
                        let start = Instant::now();
                        let ply = ask(config, spec, name, i, q)?;
                        on_answer();
                        Ok((ply, start.elapsed().as_secs_f64()))
                    })
                    .collect::<Result<_, ArenaError>>()
            })?;
            let plies: Vec<Ply> = timed.iter().map(|t| t.0).collect();
            let seconds: f64 = timed.iter().map(|t| t.1).sum();
            let blunders = questions
                .iter()
                .zip(&plies)
                .map(|(q, &p)| q.judge(p).is_some_and(|w| w < q.value))
                .collect();
            Ok(Answers {
                name: name.clone(),
                plies,
                blunders,
                seconds_per_answer: seconds / questions.len().max(1) as f64,
            })
        })
        .collect()
}

/// One answer: a new player for the question plays one ply, which must be legal.
fn ask(
    config: &ExamConfig,
    spec: &PlayerSpec,
    name: &str,
    i: usize,
    q: &Question,
) -> Result<Ply, ArenaError> {
    let mut arena = ArenaConfig::new(spec.clone(), PlayerSpec::Random, 1);
    arena.rules = config.db.rules();
    arena.db = Some(config.db.clone());
    arena.db_dir = config.db_dir.clone();
    let seed = derive(config.seed, i as u64, 2);
    let failed = |why: String| ArenaError::Player {
        game: i,
        player: name.to_string(),
        why: format!(
            "{why} (at {})",
            fen::format(arena.rules, q.game.position(), q.game.counters)
        ),
    };
    let mut player = make_player(spec, &arena, seed).map_err(|why| ArenaError::Spec {
        text: name.to_string(),
        why,
    })?;
    let ply = player.play(&q.game, seed).map_err(|stop| match stop {
        Stop::Fail(why) => failed(why),
        Stop::Ends(reason, detail) => failed(format!("{reason:?}: {detail}")),
    })?;
    if q.judge(ply).is_none() {
        return Err(failed("an illegal ply".into()));
    }
    Ok(ply)
}

/// The report of `answers` to `questions`.
pub fn report(questions: &[Question], answers: &[Answers]) -> ExamReport {
    let mut plies: Vec<usize> = questions.iter().map(Question::ply).collect();
    plies.sort_unstable();
    plies.dedup();
    let players = answers
        .iter()
        .map(|a| PlayerReport {
            name: a.name.clone(),
            blunders: Rate::new(a.blunders.iter().filter(|&&b| b).count(), questions.len()),
            by_ply: plies
                .iter()
                .map(|&p| {
                    let at = || {
                        questions
                            .iter()
                            .zip(&a.blunders)
                            .filter(|(q, _)| q.ply() == p)
                    };
                    (
                        p,
                        Rate::new(at().filter(|(_, b)| **b).count(), at().count()),
                    )
                })
                .collect(),
            seconds_per_answer: a.seconds_per_answer,
        })
        .collect();
    let paired = match answers {
        [a, b] => {
            let only = |x: &Answers, y: &Answers| {
                x.blunders
                    .iter()
                    .zip(&y.blunders)
                    .filter(|(x, y)| **x && !**y)
                    .count()
            };
            let (first_only, second_only) = (only(a, b), only(b, a));
            Some(Paired {
                first_only,
                second_only,
                p_value: sign_test(first_only, second_only),
            })
        }
        _ => None,
    };
    let traps: usize = questions.iter().map(Question::traps).sum();
    ExamReport {
        questions: questions.len(),
        by_ply: plies
            .iter()
            .map(|&p| (p, questions.iter().filter(|q| q.ply() == p).count()))
            .collect(),
        traps_per_question: traps as f64 / questions.len().max(1) as f64,
        players,
        paired,
    }
}

impl std::fmt::Display for ExamReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} positions from perfect play; {:.1} plies of each would be blunders",
            self.questions, self.traps_per_question
        )?;
        writeln!(f, "{:<40} {:>30}  s/answer", "player", "blunders (95%)")?;
        for p in &self.players {
            writeln!(
                f,
                "{:<40} {:>30}  {:.3}",
                p.name, p.blunders, p.seconds_per_answer
            )?;
        }
        write!(f, "\n{:>4} {:>9}", "ply", "positions")?;
        for i in 0..self.players.len() {
            write!(f, " {:>30}", format!("player {}", i + 1))?;
        }
        writeln!(f)?;
        for (row, &(ply, total)) in self.by_ply.iter().enumerate() {
            write!(f, "{ply:>4} {total:>9}")?;
            for p in &self.players {
                write!(f, " {:>30}", p.by_ply[row].1)?;
            }
            writeln!(f)?;
        }
        if let Some(p) = &self.paired {
            writeln!(
                f,
                "\nonly player 1 blundered: {}; only player 2: {}; sign test p = {:.4}",
                p.first_only, p.second_only, p.p_value
            )?;
        }
        Ok(())
    }
}

/// The two-sided p-value of the sign test: the chance, with `a + b` fair coin
/// tosses, of a split at least as uneven as `a` to `b`.
pub fn sign_test(a: usize, b: usize) -> f64 {
    let n = a + b;
    let k = a.min(b);
    if n == 0 {
        return 1.0;
    }
    // The binomial probabilities in log space: exact for any n.
    let ln_choose = |i: usize| -> f64 {
        (1..=i)
            .map(|j| ((n - i + j) as f64).ln() - (j as f64).ln())
            .sum()
    };
    let tail: f64 = (0..=k)
        .map(|i| (ln_choose(i) - n as f64 * std::f64::consts::LN_2).exp())
        .sum();
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::sign_test;

    #[test]
    fn the_sign_test_agrees_with_hand_computed_values() {
        assert_eq!(sign_test(0, 0), 1.0);
        assert_eq!(sign_test(3, 3), 1.0);
        // 5 of 5 one way: 2 / 32.
        assert!((sign_test(5, 0) - 0.0625).abs() < 1e-12);
        // 1 of 10 one way: 2 * 11 / 1024.
        assert!((sign_test(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
        // Symmetric, and small for a lopsided split of many.
        assert_eq!(sign_test(30, 70), sign_test(70, 30));
        assert!(sign_test(30, 70) < 1e-4);
        assert!(sign_test(2000, 2100) > 0.1);
    }
}
