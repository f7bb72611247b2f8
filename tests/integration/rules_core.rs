//! Property tests of the rules core: make/undo, symmetries, FEN and ply notation
//! round trips, and the board data of RULES.md.

use millbase::rules::fen::{self, Counters};
use millbase::rules::notation::{format_ply, parse_ply, parse_ply_syntax};
use millbase::rules::position::{NONE, Phase, points};
use millbase::{Color, Game, Ply, Position, Rules};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn rules() -> &'static Rules {
    Rules::standard()
}

/// The set of points named in a space-separated list.
fn set_of(names: &str) -> u32 {
    names
        .split_whitespace()
        .map(|n| rules().point(n).unwrap_or_else(|| panic!("no point {n}")))
        .fold(0, |acc, p| acc | 1 << p)
}

/// A ply's image under symmetry `s`.
fn map_ply(s: usize, ply: Ply) -> Ply {
    let perm = &rules().symmetries[s];
    let m = |p: u8| if p == NONE { NONE } else { perm[p as usize] };
    Ply {
        from: m(ply.from),
        to: m(ply.to),
        remove: m(ply.remove),
    }
}

fn legal_set(pos: &Position) -> BTreeSet<Ply> {
    let plies = pos.legal_plies(rules());
    let set: BTreeSet<Ply> = plies.iter().copied().collect();
    assert_eq!(set.len(), plies.len(), "duplicate legal plies in {pos:?}");
    set
}

/// Every check that applies to a single position.
fn check_position(pos: &Position, counters: Counters) {
    let r = rules();
    assert!(pos.validate(r).is_ok(), "invalid position reached: {pos:?}");
    let legal = legal_set(pos);

    // Game end as RULES.md states it.
    let over = pos.material(Color::White) < 3 || pos.material(Color::Black) < 3;
    if over {
        assert!(legal.is_empty(), "plies after the end of the game: {pos:?}");
    }
    if !over && (pos.phase() == Phase::Placement || pos.pending_removal) {
        assert!(!legal.is_empty(), "no ply in placement or removal: {pos:?}");
    }
    if !over && pos.own().count_ones() == 3 && pos.hand[pos.to_move.index()] == 0 {
        assert!(
            !legal.is_empty(),
            "a side that flies is never blocked: {pos:?}"
        );
    }
    assert_eq!(
        pos.is_lost(r),
        pos.material(pos.to_move) < 3 || legal.is_empty()
    );

    // Every legal ply: its shape, make/undo, notation.
    for &ply in &legal {
        if pos.pending_removal {
            assert!(ply.is_lone_removal());
        } else if pos.hand[pos.to_move.index()] > 0 {
            assert!(ply.is_placement());
        } else {
            assert!(ply.from != NONE && ply.to != NONE);
        }
        if ply.removes() {
            assert!(pos.opp() >> ply.remove & 1 == 1, "removes a non-stone");
        }

        let mut p = *pos;
        p.make(r, ply);
        assert!(!p.pending_removal, "a full ply leaves a removal pending");
        assert_eq!(p.to_move, pos.to_move.other());
        assert_eq!(p.board[0] & p.board[1], 0);
        assert!(
            p.validate(r).is_ok(),
            "{} led to an invalid position",
            format_ply(r, ply)
        );
        p.undo(ply);
        assert_eq!(
            p,
            *pos,
            "make/undo of {} changed the position",
            format_ply(r, ply)
        );

        // A mill-closing ply made without its removal leaves the removal pending,
        // and the lone removals then are exactly the removal choices.
        if ply.removes() && !ply.is_lone_removal() {
            let bare = Ply {
                remove: NONE,
                ..ply
            };
            assert!(pos.ply_closes_mill(r, bare));
            let mut half = *pos;
            half.make(r, bare);
            assert!(half.pending_removal);
            assert_eq!(half.to_move, pos.to_move);
            let lone: BTreeSet<u8> = half.legal_plies(r).iter().map(|l| l.remove).collect();
            let choices: BTreeSet<u8> = legal
                .iter()
                .filter(|l| {
                    Ply {
                        remove: NONE,
                        ..**l
                    } == bare
                })
                .map(|l| l.remove)
                .collect();
            assert_eq!(lone, choices);
            half.undo(bare);
            assert_eq!(half, *pos, "make/undo of a half ply changed the position");
        } else if !pos.pending_removal {
            assert!(!pos.ply_closes_mill(r, ply));
        }

        let text = format_ply(r, ply);
        assert_eq!(parse_ply_syntax(r, &text), Ok(ply), "{text}");
        assert_eq!(parse_ply(r, pos, &text), Ok(ply), "{text}");
    }

    // Symmetries: the legal plies of the image are the images of the legal plies.
    for s in 0..r.symmetries.len() {
        let image = pos.transformed(r, s);
        assert_eq!(image.hand, pos.hand);
        assert_eq!(image.to_move, pos.to_move);
        assert_eq!(image.pending_removal, pos.pending_removal);
        for side in 0..2 {
            assert_eq!(image.board[side].count_ones(), pos.board[side].count_ones());
            assert_eq!(
                r.in_mills(image.board[side]),
                r.map(s, r.in_mills(pos.board[side]))
            );
        }
        let mapped: BTreeSet<Ply> = legal.iter().map(|&l| map_ply(s, l)).collect();
        assert_eq!(legal_set(&image), mapped, "symmetry {s} of {pos:?}");
        assert_eq!(image.is_lost(r), pos.is_lost(r));
        // Back again with the inverse.
        assert_eq!(image.transformed(r, r.inverse(s)), *pos);
    }

    // FEN round trip.
    let text = fen::format(r, pos, counters);
    let (back, c) = fen::parse(r, &text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(back, *pos, "{text}");
    assert_eq!(c, counters, "{text}");
    assert_eq!(fen::format(r, &back, c), text);
    // And without the extension token.
    let bare = text.trim_end_matches(" ids:nodes");
    assert_eq!(fen::parse(r, bare).unwrap(), (*pos, counters));
}

/// Plays from `start`, choosing plies by `choices`, checking each position on the way.
/// A choice with its high bit set plays a mill-closing ply in two halves (the move,
/// then the lone removal), as GUIs send it. Returns the game.
fn walk(start: Position, counters: Counters, choices: &[u32]) -> Game {
    let r = rules();
    let mut game = Game::new(start, counters);
    let mut texts: Vec<String> = Vec::new();
    // Independent counters, as Sanmill keeps them.
    let mut fullmove = counters.fullmove;
    let mut since = counters.plies_since_removal;
    for &c in choices {
        let pos = *game.position();
        check_position(&pos, game.counters);
        let legal = pos.legal_plies(r);
        if legal.is_empty() {
            break;
        }
        let ply = legal[(c & 0xffff) as usize % legal.len()];
        if c & 0x8000_0000 != 0 && ply.removes() && !ply.is_lone_removal() {
            let bare = Ply {
                remove: NONE,
                ..ply
            };
            game.play(r, bare);
            texts.push(format_ply(r, bare));
            check_position(game.position(), game.counters);
            assert!(game.position().pending_removal);
            game.play(r, Ply::removal(ply.remove));
            texts.push(format!("x{}", r.name(ply.remove)));
        } else {
            game.play(r, ply);
            texts.push(format_ply(r, ply));
        }
        if ply.removes() {
            since = 0;
        } else if ply.from != NONE {
            since += 1;
        }
        if pos.to_move == Color::Black {
            fullmove += 1;
        }
        assert_eq!(
            game.counters,
            Counters {
                plies_since_removal: since,
                fullmove
            }
        );
        assert_eq!(*game.position(), pos.after(r, ply));
    }
    check_position(game.position(), game.counters);

    // The same game read back from text reaches the same position and counters.
    let start_text = if start == Position::start(r)
        && counters
            == (Counters {
                fullmove: 1,
                plies_since_removal: 0,
            }) {
        "startpos".to_string()
    } else {
        fen::format(r, &start, counters)
    };
    let text = if texts.is_empty() {
        start_text.clone()
    } else {
        format!("{start_text} moves {}", texts.join(" "))
    };
    let again = Game::parse(r, &text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(again.position(), game.position(), "{text}");
    assert_eq!(again.counters, game.counters, "{text}");
    // Game::parse merges a lone removal token into the ply before it, so the
    // half-way positions with a removal pending are not in its history.
    let settled = |g: &Game| -> Vec<Position> {
        g.history
            .iter()
            .copied()
            .filter(|p| !p.pending_removal)
            .collect()
    };
    assert_eq!(settled(&again), settled(&game), "{text}");
    assert_eq!(
        again.plies.len() + texts.iter().filter(|t| t.starts_with('x')).count(),
        texts.len()
    );
    // The FEN of the end position, with its counters, reads back as a game.
    let end_fen = fen::format(r, game.position(), game.counters);
    let resumed = Game::parse(r, &end_fen).unwrap();
    assert_eq!(resumed.position(), game.position());
    assert_eq!(resumed.counters, game.counters);
    game
}

/// A random moving-phase (or game-over) position: `w` white and `b` black stones on
/// shuffled points.
fn moving_position() -> impl Strategy<Value = Position> {
    (
        Just((0u8..24).collect::<Vec<u8>>()).prop_shuffle(),
        2usize..=9,
        2usize..=9,
        any::<bool>(),
    )
        .prop_map(|(perm, w, b, black)| {
            let white: u32 = perm[..w].iter().fold(0, |a, &p| a | 1 << p);
            let blk: u32 = perm[w..w + b].iter().fold(0, |a, &p| a | 1 << p);
            Position {
                board: [white, blk],
                hand: [0, 0],
                to_move: if black { Color::Black } else { Color::White },
                pending_removal: false,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_games_from_the_start(choices in prop::collection::vec(any::<u32>(), 0..70)) {
        let r = rules();
        walk(Position::start(r), Counters { fullmove: 1, plies_since_removal: 0 }, &choices);
    }

    #[test]
    fn random_games_from_moving_positions(
        pos in moving_position(),
        choices in prop::collection::vec(any::<u32>(), 0..40),
        since in 0u32..50,
        fullmove in 1u32..100,
    ) {
        walk(pos, Counters { plies_since_removal: since, fullmove }, &choices);
    }

    #[test]
    fn symmetries_commute_with_mill_tests(set in 0u32..1 << 24, p in 0u8..24) {
        let r = rules();
        for s in 0..16 {
            let q = r.symmetries[s][p as usize];
            let image = r.map(s, set);
            prop_assert_eq!(image.count_ones(), set.count_ones());
            prop_assert_eq!(r.in_mills(image), r.map(s, r.in_mills(set)));
            prop_assert_eq!(r.removable(image), r.map(s, r.removable(set)));
            prop_assert_eq!(r.closes_mill(image | 1 << q, q), r.closes_mill(set | 1 << p, p));
            prop_assert_eq!(r.map(r.inverse(s), image), set);
            // The table look-up agrees with the permutation itself.
            let slow = points(set).fold(0u32, |a, x| a | 1 << r.symmetries[s][x as usize]);
            prop_assert_eq!(image, slow);
        }
    }
}

/// The board of RULES.md, typed in by point name.
const EDGES: &str = "a1-a4 a4-a7 a7-d7 d7-g7 g7-g4 g4-g1 g1-d1 d1-a1 \
    b2-b4 b4-b6 b6-d6 d6-f6 f6-f4 f4-f2 f2-d2 d2-b2 \
    c3-c4 c4-c5 c5-d5 d5-e5 e5-e4 e4-e3 e3-d3 d3-c3 \
    a4-b4 b4-c4 d7-d6 d6-d5 g4-f4 f4-e4 d1-d2 d2-d3";
const MILLS: &str = "a1-a4-a7 a7-d7-g7 g7-g4-g1 g1-d1-a1 \
    b2-b4-b6 b6-d6-f6 f6-f4-f2 f2-d2-b2 \
    c3-c4-c5 c5-d5-e5 e5-e4-e3 e3-d3-c3 \
    a4-b4-c4 d7-d6-d5 g4-f4-e4 d1-d2-d3";

#[test]
fn board_has_24_points_32_edges_16_mills() {
    let r = rules();
    assert_eq!(r.points(), 24);
    assert_eq!(r.all(), (1 << 24) - 1);
    let mut names: Vec<&str> = r.point_names.clone();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 24);
    for f in "abcdefg".chars() {
        for k in 1..=7 {
            let name = format!("{f}{k}");
            let on_board =
                (f == 'd' || k == 4 || f as u8 - b'a' == k - 1 || f as u8 - b'a' == 7 - k)
                    && !(f == 'd' && k == 4);
            assert_eq!(r.point(&name).is_some(), on_board, "{name}");
        }
    }
    let edges: u32 = r.adjacency.iter().map(|a| a.count_ones()).sum();
    assert_eq!(edges, 2 * 32);
    let listed: Vec<u32> = EDGES
        .split_whitespace()
        .map(|e| set_of(&e.replace('-', " ")))
        .collect();
    assert_eq!(listed.len(), 32);
    for p in 0..24u8 {
        assert_eq!(
            r.adjacency[p as usize] >> p & 1,
            0,
            "self loop at {}",
            r.name(p)
        );
        let want = listed
            .iter()
            .filter(|e| *e >> p & 1 == 1)
            .fold(0, |a, e| a | (e & !(1 << p)));
        assert_eq!(r.adjacency[p as usize], want, "neighbours of {}", r.name(p));
    }
    assert_eq!(r.mills.len(), 16);
    let mut got = r.mills.clone();
    got.sort();
    let mut want: Vec<u32> = MILLS
        .split_whitespace()
        .map(|m| set_of(&m.replace('-', " ")))
        .collect();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(r.stones, 9);
    assert_eq!(r.fly_with, Some(3));
}

#[test]
fn sixteen_symmetries_form_a_group_of_automorphisms() {
    let r = rules();
    assert_eq!(r.symmetries.len(), 16);
    let perms: BTreeSet<Vec<u8>> = r.symmetries.iter().cloned().collect();
    assert_eq!(perms.len(), 16, "symmetries repeat");
    let mills: BTreeSet<u32> = r.mills.iter().copied().collect();
    for (s, perm) in r.symmetries.iter().enumerate() {
        let mut sorted = perm.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            (0..24).collect::<Vec<u8>>(),
            "symmetry {s} is not a permutation"
        );
        for a in 0..24 {
            for b in 0..24 {
                let adjacent = r.adjacency[a] >> b & 1;
                assert_eq!(r.adjacency[perm[a] as usize] >> perm[b] & 1, adjacent);
            }
        }
        let images: BTreeSet<u32> = r.mills.iter().map(|&m| r.map(s, m)).collect();
        assert_eq!(images, mills, "symmetry {s} does not map mills to mills");
        // Closed under composition.
        for t in 0..16 {
            let comp: Vec<u8> = (0..24).map(|p| r.symmetries[t][perm[p] as usize]).collect();
            assert!(perms.contains(&comp), "not a group");
        }
    }
    // The inner/outer swap is in the group: some symmetry maps a1 to c3 ... and
    // fixes the middle ring as a set.
    let middle = set_of("b2 b4 b6 d6 f6 f4 f2 d2");
    let outer = set_of("a1 a4 a7 d7 g7 g4 g1 d1");
    let inner = set_of("c3 c4 c5 d5 e5 e4 e3 d3");
    let swaps = (0..16).filter(|&s| r.map(s, outer) == inner).count();
    assert_eq!(swaps, 8);
    assert!((0..16).all(|s| r.map(s, middle) == middle));
}

#[test]
fn known_positions() {
    let r = rules();
    let start = Position::start(r);
    assert_eq!(start.legal_plies(r).len(), 24);
    // White to remove after a7 d6 d7 f4 g7: xd6 or xf4.
    let g = Game::parse(r, "startpos moves a7 d6 d7 f4 g7").unwrap();
    let mut texts: Vec<String> = g
        .position()
        .legal_plies(r)
        .iter()
        .map(|&p| format_ply(r, p))
        .collect();
    texts.sort();
    assert_eq!(texts, ["xd6", "xf4"]);
    check_position(g.position(), g.counters);
    // Joined and split removal tokens are the same game.
    let a = Game::parse(r, "startpos moves a7 d6 d7 f4 g7 xf4 b6").unwrap();
    let b = Game::parse(r, "startpos moves a7 d6 d7 f4 g7xf4 b6").unwrap();
    assert_eq!(a.history, b.history);
    assert_eq!(a.counters, b.counters);
    // A mill-closing ply in the middle of a list must name its removal.
    assert!(Game::parse(r, "startpos moves a7 d6 d7 f4 g7 b6").is_err());
}

/// The rules fingerprint of `standard` is the one every database file written so far
/// carries (FORMAT.md, "Rules fingerprint"), and every named rule set and reduced
/// form has its own.
#[test]
fn fingerprints_standard_unchanged_and_distinct() {
    assert_eq!(Rules::standard().fingerprint(), 0xe12a_216d_600c_3903);
    assert_eq!(
        Rules::by_name("standard-5").unwrap().fingerprint(),
        0x3559_3bb0_1c2b_20bf
    );
    let mut seen = std::collections::BTreeMap::new();
    for name in Rules::names() {
        let base = Rules::by_name(name).unwrap();
        eprintln!("| `{name}` | `{:016x}` |", base.fingerprint());
        for n in 3..=base.points() / 2 {
            let r = Rules::by_name(&format!("{name}-{n}")).unwrap();
            if let Some(other) = seen.insert(r.fingerprint(), r.name) {
                // `morabaraba-N` and `twelve-N` differ only in the full board, which
                // needs 12 stones a side: below that they are the same game.
                let same_game = n < 12 && other == format!("morabaraba-{n}");
                assert!(same_game, "{} and {other} share a fingerprint", r.name);
            }
        }
    }
    assert_eq!(seen.len(), 5 * 10 + 6 - 9);
}
