//! The heuristic engine: forced wins against a brute-force solver, legality of
//! every answer, limits, the transposition table, and exact values from an
//! [`Endgame`] taking over from the search.

use millbase::mix::SplitMix;
use millbase::rules::position::Phase;
use millbase::search::engine::{Algorithm, Endgame, Engine, EngineConfig, Limits, SearchResult};
use millbase::search::score::{MATE, from_value};
use millbase::{Color, Game, Ply, Position, Rules, Value};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn rules() -> &'static Rules {
    Rules::standard()
}

fn set(names: &str) -> u32 {
    names
        .split_whitespace()
        .fold(0, |acc, n| acc | 1 << rules().point(n).unwrap())
}

fn engine(algorithm: Algorithm) -> Engine {
    Engine::new(
        rules(),
        EngineConfig {
            hash_mb: 4,
            algorithm,
            ..EngineConfig::default()
        },
    )
}

fn search(engine: &mut Engine, pos: &Position, limits: Limits) -> SearchResult {
    engine.search(pos, &[], &limits, &AtomicBool::new(false), &mut |_| {})
}

fn depth(d: u32) -> Limits {
    Limits {
        depth: Some(d),
        ..Limits::default()
    }
}

/// A forced end of the game within `n` plies, by plain minimax over every ply
/// (no pruning, no tables): `Win(k)`/`Loss(k)` with the exact `k`, or `None`.
fn solve(pos: &Position, n: u16) -> Option<Value> {
    let r = rules();
    if pos.is_lost(r) {
        return Some(Value::Loss(0));
    }
    if n == 0 {
        return None;
    }
    let values: Vec<Option<Value>> = pos
        .legal_plies(r)
        .into_iter()
        .map(|p| solve(&pos.after(r, p), n - 1).map(Value::parent))
        .collect();
    let best = |vs: Vec<Value>| vs.into_iter().max_by(|a, b| a.cmp_goodness(*b));
    let wins: Vec<Value> = values
        .iter()
        .flatten()
        .copied()
        .filter(|v| matches!(v, Value::Win(_)))
        .collect();
    if !wins.is_empty() {
        return best(wins);
    }
    let losses: Option<Vec<Value>> = values.into_iter().collect();
    losses.and_then(best)
}

/// A random moving-phase position with 3 to `max` stones a side.
fn random_position(rng: &mut SplitMix, max: u64) -> Position {
    let mut free: Vec<u8> = (0..24).collect();
    let mut stones = |rng: &mut SplitMix| {
        let count = 3 + rng.next_u64() % (max - 2);
        (0..count).fold(0u32, |acc, _| {
            let i = (rng.next_u64() % free.len() as u64) as usize;
            acc | 1 << free.swap_remove(i)
        })
    };
    let (white, black) = (stones(rng), stones(rng));
    let side = if rng.next_u64().is_multiple_of(2) {
        Color::White
    } else {
        Color::Black
    };
    let mut pos = Position::moving(Color::White, white, black);
    pos.to_move = side;
    pos
}

#[test]
fn capture_to_two_stones_is_found_at_depth_one() {
    let r = rules();
    // White (moving, 4 stones) closes a1-a4-a7 with d7-a7; Black has 3 stones.
    let pos = Position::moving(Color::White, set("a1 a4 d7 g1"), set("c3 e5 f2"));
    for algorithm in [Algorithm::Pvs, Algorithm::Mtdf] {
        let res = search(&mut engine(algorithm), &pos, depth(1));
        let best = res.best.unwrap();
        assert_eq!(res.score, MATE - 1, "{algorithm:?}");
        assert_eq!(res.value(), Some(Value::Win(1)));
        assert!(best.removes() && pos.is_legal(r, best));
        assert_eq!(r.name(best.to), "a7");
    }
}

#[test]
fn forced_wins_and_losses_match_brute_force() {
    let r = rules();
    let mut rng = SplitMix(7);
    // Wins in 1 and 3 plies, losses in 2, and undecided positions: how many of each to test.
    let mut wanted = [3usize, 3, 3, 10];
    for _ in 0..3000 {
        let pos = random_position(&mut rng, 5);
        if pos.is_over(r) {
            continue;
        }
        let want = solve(&pos, 3);
        let slot = match want {
            Some(Value::Win(1)) => 0,
            Some(Value::Win(_)) => 1,
            Some(Value::Loss(_)) => 2,
            _ => 3,
        };
        if wanted[slot] == 0 {
            continue;
        }
        wanted[slot] -= 1;
        // Lazy SMP too: two threads sharing the table prove the same values.
        for (algorithm, threads) in [
            (Algorithm::Pvs, 1),
            (Algorithm::Mtdf, 1),
            (Algorithm::Pvs, 2),
        ] {
            let mut e = engine(algorithm);
            e.set_threads(threads);
            let res = search(&mut e, &pos, depth(3));
            assert!(pos.is_legal(r, res.best.unwrap()));
            assert_eq!(
                res.value(),
                want,
                "{algorithm:?}, {threads} threads, on {pos:?}"
            );
            if let Some(Value::Win(k)) = want {
                let after = pos.after(r, res.best.unwrap());
                assert_eq!(
                    solve(&after, k - 1),
                    Some(Value::Loss(k - 1)),
                    "the best ply keeps the win"
                );
            }
        }
        if wanted == [0; 4] {
            break;
        }
    }
    assert_eq!(wanted[..2], [0, 0], "wins in 1 and 3 plies were tested");
    assert_eq!(wanted[3], 0, "undecided positions were tested");
}

#[test]
fn answers_are_always_legal() {
    let r = rules();
    let mut rng = SplitMix(3);
    for algorithm in [Algorithm::Pvs, Algorithm::Mtdf] {
        let mut e = engine(algorithm);
        let mut game = Game::parse(r, "startpos").unwrap();
        for turn in 0..120 {
            let pos = *game.position();
            if pos.is_over(r) || game.is_repetition() {
                break;
            }
            let limits = Limits {
                depth: Some(3),
                nodes: Some(20_000),
                ..Limits::default()
            };
            let res = e.search_game(&game, &limits, &AtomicBool::new(false), &mut |_| {});
            let best = res.best.expect("a position that is not over has a ply");
            assert!(pos.is_legal(r, best), "turn {turn}: {best:?}");
            assert_eq!(res.pv.first(), Some(&best));
            // Mix in random plies so that the games visit varied positions.
            let legal = pos.legal_plies(r);
            let ply = if rng.next_u64().is_multiple_of(3) {
                legal[(rng.next_u64() % legal.len() as u64) as usize]
            } else {
                best
            };
            game.play(r, ply);
        }
    }
}

#[test]
fn a_pending_removal_root_is_answered_with_a_removal() {
    let r = rules();
    let game = Game::parse(r, "startpos moves a7 d6 d7 f4 g7").unwrap();
    assert!(game.position().pending_removal);
    let res =
        engine(Algorithm::Pvs).search_game(&game, &depth(3), &AtomicBool::new(false), &mut |_| {});
    let best = res.best.unwrap();
    assert!(best.is_lone_removal() && game.position().is_legal(r, best));
}

#[test]
fn limits_are_obeyed() {
    let start = Position::start(rules());
    let mut infos = Vec::new();
    let res =
        engine(Algorithm::Pvs).search(&start, &[], &depth(4), &AtomicBool::new(false), &mut |i| {
            infos.push(i.depth)
        });
    assert_eq!(res.depth, 4);
    assert_eq!(infos, vec![1, 2, 3, 4]);

    let nodes = Limits {
        nodes: Some(5_000),
        ..Limits::default()
    };
    let res = search(&mut engine(Algorithm::Pvs), &start, nodes);
    assert!(res.nodes <= 5_000, "{} nodes", res.nodes);
    assert!(start.is_legal(rules(), res.best.unwrap()));

    // A search with no limit ends when the stop flag is set, with a legal ply.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let res = engine(Algorithm::Mtdf).search(&start, &[], &Limits::default(), &stop, &mut |_| {});
    stopper.join().unwrap();
    assert!(start.is_legal(rules(), res.best.unwrap()));

    // A stop flag already set still yields a legal ply.
    let res = engine(Algorithm::Pvs).search(
        &start,
        &[],
        &Limits::default(),
        &AtomicBool::new(true),
        &mut |_| {},
    );
    assert!(start.is_legal(rules(), res.best.unwrap()));

    // A time limit alone ends the search (no depth limit: returning at all is the
    // check; how fast is a benchmark's business, not a test's).
    let timed = Limits {
        movetime: Some(Duration::from_millis(50)),
        ..Limits::default()
    };
    let res = search(&mut engine(Algorithm::Pvs), &start, timed);
    assert!(start.is_legal(rules(), res.best.unwrap()));
}

#[test]
fn the_table_carries_results_between_searches() {
    let r = rules();
    let game = Game::parse(r, "startpos moves d2 f4 g4 d3 e4 d1").unwrap();
    let mut e = engine(Algorithm::Pvs);
    let first = e.search_game(&game, &depth(5), &AtomicBool::new(false), &mut |_| {});
    let second = e.search_game(&game, &depth(5), &AtomicBool::new(false), &mut |_| {});
    assert!(
        second.nodes < first.nodes / 2,
        "{} then {}",
        first.nodes,
        second.nodes
    );
    e.clear();
    let third = e.search_game(&game, &depth(5), &AtomicBool::new(false), &mut |_| {});
    assert_eq!(
        (third.best, third.score, third.nodes),
        (first.best, first.score, first.nodes)
    );
}

#[test]
fn repetition_scores_as_a_draw() {
    let r = rules();
    // White is three stones down; a1-a4 leads back to a position of the game's past.
    let pos = Position::moving(
        Color::White,
        set("a1 g7 c5 e3"),
        set("b2 b6 f6 f2 d3 d5 c4"),
    );
    let back = millbase::rules::notation::parse_ply(r, &pos, "a1-a4").unwrap();
    let earlier = pos.after(r, back);
    let without = search(&mut engine(Algorithm::Pvs), &pos, depth(1));
    assert!(without.score < -100, "{}", without.score);
    for algorithm in [Algorithm::Pvs, Algorithm::Mtdf] {
        let res = engine(algorithm).search(
            &pos,
            &[earlier],
            &depth(1),
            &AtomicBool::new(false),
            &mut |_| {},
        );
        assert_eq!((res.best, res.score), (Some(back), 0), "{algorithm:?}");
    }
}

#[test]
fn repetition_in_lasker_placement_scores_as_a_draw() {
    // Under `lasker` stones move while some are still in hand, so placement
    // positions recur: the same position as above, both sides with a stone in hand.
    let r = Rules::by_name("lasker").unwrap();
    let mut pos = Position::moving(
        Color::White,
        set("a1 g7 c5 e3"),
        set("b2 b6 f6 f2 d3 d5 c4"),
    );
    pos.hand = [1, 1];
    let back = millbase::rules::notation::parse_ply(r, &pos, "a1-a4").unwrap();
    let earlier = pos.after(r, back);
    let mut engine = Engine::new(
        r,
        EngineConfig {
            hash_mb: 4,
            ..EngineConfig::default()
        },
    );
    let limits = depth(1);
    let stop = AtomicBool::new(false);
    let without = engine.search(&pos, &[], &limits, &stop, &mut |_| {});
    assert!(without.score < -100, "{}", without.score);
    engine.clear();
    let res = engine.search(&pos, &[earlier], &limits, &stop, &mut |_| {});
    assert_eq!((res.best, res.score), (Some(back), 0));
    // A game that goes there and back sees the repetition too.
    let mut game = Game::new(earlier, Default::default());
    game.play_tokens(r, &["b2-d2", "a4-a1", "d2-b2", "a1-a4"])
        .unwrap();
    assert!(game.is_repetition());
    assert_eq!(game.end(r, 2), Some(millbase::rules::game::End::Repetition));
}

/// An endgame that knows one position only.
struct OnePosition(Position, Value);

impl Endgame for OnePosition {
    fn probe(&self, pos: &Position) -> Option<Value> {
        (*pos == self.0).then_some(self.1)
    }
}

#[test]
fn covered_nodes_take_exact_values() {
    let r = rules();
    // Placement-free middle game: White can capture with d7-a7, but the fake
    // database says the quiet g1-g4 leaves Black lost in 6 plies.
    let pos = Position::moving(Color::White, set("a1 a4 d7 g1 f6"), set("c3 e5 f2 d1 b4"));
    let quiet = millbase::rules::notation::parse_ply(r, &pos, "g1-g4").unwrap();
    let target = pos.after(r, quiet);
    let fake: Arc<dyn Endgame> = Arc::new(OnePosition(target, Value::Loss(6)));
    // (The premise is the tuned weights' view at depth 2.)
    let tuned = millbase::search::engine::eval::named("tuned").unwrap().1;
    let mut plain_engine = engine(Algorithm::Pvs);
    plain_engine.set_eval(tuned);
    let plain = search(&mut plain_engine, &pos, depth(2));
    assert!(
        plain.best.unwrap().removes(),
        "without the database the capture looks best"
    );
    for algorithm in [Algorithm::Pvs, Algorithm::Mtdf] {
        let mut e = Engine::new(
            r,
            EngineConfig {
                hash_mb: 4,
                endgame: Some(fake.clone()),
                algorithm,
                shuffle: None,
                eval: tuned,
                ..EngineConfig::default()
            },
        );
        let res = search(&mut e, &pos, depth(2));
        assert_eq!(res.best, Some(quiet), "{algorithm:?}");
        assert_eq!(res.score, from_value(Value::Win(7), 0));
        assert_eq!(res.value(), Some(Value::Win(7)));
        assert!(!res.exact);
    }
}

/// An endgame that covers every moving-phase position with at most 4 stones a
/// side, with the values of a 2-ply world: forced ends within 2 plies, else draws.
struct Shallow;

impl Endgame for Shallow {
    fn probe(&self, pos: &Position) -> Option<Value> {
        let small = pos.board.iter().all(|b| b.count_ones() <= 4);
        (pos.phase() == Phase::Moving && small).then(|| solve(pos, 2).unwrap_or(Value::Draw))
    }
}

#[test]
fn a_covered_root_is_played_by_exact_values() {
    let r = rules();
    let mut rng = SplitMix(11);
    let mut played = 0;
    for _ in 0..200 {
        let pos = random_position(&mut rng, 4);
        if pos.board.iter().any(|b| b.count_ones() > 4) || pos.is_over(r) {
            continue;
        }
        let mut e = Engine::new(
            r,
            EngineConfig {
                endgame: Some(Arc::new(Shallow)),
                ..EngineConfig::default()
            },
        );
        let res = search(&mut e, &pos, depth(5));
        assert!(res.exact);
        let best = res.best.unwrap();
        let value_of = |p: Ply| {
            let child = pos.after(r, p);
            let v = if child.is_lost(r) {
                Value::Loss(0)
            } else {
                Shallow.probe(&child).unwrap()
            };
            v.parent()
        };
        let chosen = value_of(best);
        for p in pos.legal_plies(r) {
            assert!(
                !value_of(p).cmp_goodness(chosen).is_gt(),
                "{p:?} is better than {best:?}"
            );
        }
        assert_eq!(res.score, from_value(chosen, 0));
        played += 1;
        if played == 5 {
            break;
        }
    }
    assert_eq!(played, 5);
}
