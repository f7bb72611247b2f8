//! Perft checked against a second, deliberately naive move generator written here
//! from RULES.md alone: its own board tables typed in by point name, an array of
//! cells, its own mill test and removal rule, positions copied rather than undone.
//! Nothing of the crate's rules tables or move generation is used by it.

use crate::common::Rng;
use millbase::rules::fen;
use millbase::rules::notation::format_ply;
use millbase::rules::perft::perft;
use millbase::{Position, Rules};
use std::collections::BTreeSet;
use std::sync::OnceLock;

// ---------------------------------------------------------------------------
// The naive generator.

/// The 24 points, in an order of our own (alphabetical).
const NAMES: [&str; 24] = [
    "a1", "a4", "a7", "b2", "b4", "b6", "c3", "c4", "c5", "d1", "d2", "d3", "d5", "d6", "d7", "e3",
    "e4", "e5", "f2", "f4", "f6", "g1", "g4", "g7",
];

/// Adjacency from RULES.md (32 edges).
const EDGES: [(&str, &str); 32] = [
    // outer ring
    ("a1", "a4"),
    ("a4", "a7"),
    ("a7", "d7"),
    ("d7", "g7"),
    ("g7", "g4"),
    ("g4", "g1"),
    ("g1", "d1"),
    ("d1", "a1"),
    // middle ring
    ("b2", "b4"),
    ("b4", "b6"),
    ("b6", "d6"),
    ("d6", "f6"),
    ("f6", "f4"),
    ("f4", "f2"),
    ("f2", "d2"),
    ("d2", "b2"),
    // inner ring
    ("c3", "c4"),
    ("c4", "c5"),
    ("c5", "d5"),
    ("d5", "e5"),
    ("e5", "e4"),
    ("e4", "e3"),
    ("e3", "d3"),
    ("d3", "c3"),
    // spokes
    ("a4", "b4"),
    ("b4", "c4"),
    ("d7", "d6"),
    ("d6", "d5"),
    ("g4", "f4"),
    ("f4", "e4"),
    ("d1", "d2"),
    ("d2", "d3"),
];

/// Mills from RULES.md (16 lines of three).
const MILLS: [[&str; 3]; 16] = [
    ["a1", "a4", "a7"],
    ["a7", "d7", "g7"],
    ["g7", "g4", "g1"],
    ["g1", "d1", "a1"],
    ["b2", "b4", "b6"],
    ["b6", "d6", "f6"],
    ["f6", "f4", "f2"],
    ["f2", "d2", "b2"],
    ["c3", "c4", "c5"],
    ["c5", "d5", "e5"],
    ["e5", "e4", "e3"],
    ["e3", "d3", "c3"],
    ["a4", "b4", "c4"],
    ["d7", "d6", "d5"],
    ["g4", "f4", "e4"],
    ["d1", "d2", "d3"],
];

/// The order of points in a Sanmill FEN board field (PROTOCOL.md).
const FEN_ORDER: [&str; 24] = [
    "d5", "e5", "e4", "e3", "d3", "c3", "c4", "c5", "d6", "f6", "f4", "f2", "d2", "b2", "b4", "b6",
    "d7", "g7", "g4", "g1", "d1", "a1", "a4", "a7",
];

fn index(name: &str) -> usize {
    NAMES
        .iter()
        .position(|&n| n == name)
        .unwrap_or_else(|| panic!("no point {name}"))
}

struct Tables {
    neighbours: Vec<Vec<usize>>,
    mills: Vec<[usize; 3]>,
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut neighbours = vec![Vec::new(); 24];
        for (a, b) in EDGES {
            neighbours[index(a)].push(index(b));
            neighbours[index(b)].push(index(a));
        }
        let mills = MILLS
            .iter()
            .map(|m| [index(m[0]), index(m[1]), index(m[2])])
            .collect();
        Tables { neighbours, mills }
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cell {
    Empty,
    White,
    Black,
}

#[derive(Clone, Copy, Debug)]
struct Naive {
    cells: [Cell; 24],
    /// Stones in hand: white, black.
    hand: [u32; 2],
    white_to_move: bool,
    pending: bool,
}

/// A naive ply: names of the points, as in RULES.md.
#[derive(Clone, Copy, Debug)]
struct NPly {
    from: Option<usize>,
    to: Option<usize>,
    remove: Option<usize>,
}

impl NPly {
    fn text(&self) -> String {
        let mut s = String::new();
        if let Some(f) = self.from {
            s += NAMES[f];
            s += "-";
        }
        if let Some(t) = self.to {
            s += NAMES[t];
        }
        if let Some(r) = self.remove {
            s += "x";
            s += NAMES[r];
        }
        s
    }
}

impl Naive {
    fn start() -> Naive {
        Naive {
            cells: [Cell::Empty; 24],
            hand: [9, 9],
            white_to_move: true,
            pending: false,
        }
    }

    /// Reads the fields of a FEN that matter: board, side, action, hands.
    fn from_fen(text: &str) -> Naive {
        let f: Vec<&str> = text.split_whitespace().collect();
        let board: Vec<char> = f[0].chars().filter(|&c| c != '/').collect();
        assert_eq!(board.len(), 24);
        let mut cells = [Cell::Empty; 24];
        for (k, c) in board.into_iter().enumerate() {
            cells[index(FEN_ORDER[k])] = match c {
                'O' => Cell::White,
                '@' => Cell::Black,
                '*' => Cell::Empty,
                other => panic!("bad cell {other}"),
            };
        }
        Naive {
            cells,
            hand: [f[5].parse().unwrap(), f[7].parse().unwrap()],
            white_to_move: f[1] == "w",
            pending: f[3] == "r",
        }
    }

    fn me(&self) -> Cell {
        if self.white_to_move {
            Cell::White
        } else {
            Cell::Black
        }
    }

    fn them(&self) -> Cell {
        if self.white_to_move {
            Cell::Black
        } else {
            Cell::White
        }
    }

    fn hand_of(&self, c: Cell) -> u32 {
        if c == Cell::White {
            self.hand[0]
        } else {
            self.hand[1]
        }
    }

    fn count(&self, c: Cell) -> u32 {
        self.cells.iter().filter(|&&x| x == c).count() as u32
    }

    /// Whether the stone on `p` stands in a mill of its colour.
    fn stands_in_mill(cells: &[Cell; 24], p: usize) -> bool {
        let c = cells[p];
        c != Cell::Empty
            && tables()
                .mills
                .iter()
                .any(|m| m.contains(&p) && m.iter().all(|&q| cells[q] == c))
    }

    /// The stones of colour `victim` that may be removed.
    fn removable(cells: &[Cell; 24], victim: Cell) -> Vec<usize> {
        let all: Vec<usize> = (0..24).filter(|&p| cells[p] == victim).collect();
        let free: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&p| !Self::stands_in_mill(cells, p))
            .collect();
        if free.is_empty() { all } else { free }
    }

    /// Adds `ply` (whose stone now stands on `to` in `after`) with every removal
    /// it must make.
    fn push(&self, after: &[Cell; 24], from: Option<usize>, to: usize, out: &mut Vec<NPly>) {
        if Self::stands_in_mill(after, to) {
            for r in Self::removable(after, self.them()) {
                out.push(NPly {
                    from,
                    to: Some(to),
                    remove: Some(r),
                });
            }
        } else {
            out.push(NPly {
                from,
                to: Some(to),
                remove: None,
            });
        }
    }

    fn plies(&self) -> Vec<NPly> {
        let mut out = Vec::new();
        let (me, them) = (self.me(), self.them());
        if self.count(me) + self.hand_of(me) < 3 || self.count(them) + self.hand_of(them) < 3 {
            return out;
        }
        if self.pending {
            for r in Self::removable(&self.cells, them) {
                out.push(NPly {
                    from: None,
                    to: None,
                    remove: Some(r),
                });
            }
            return out;
        }
        if self.hand_of(me) > 0 {
            for to in 0..24 {
                if self.cells[to] == Cell::Empty {
                    let mut after = self.cells;
                    after[to] = me;
                    self.push(&after, None, to, &mut out);
                }
            }
            return out;
        }
        let flying = self.count(me) == 3;
        for from in 0..24 {
            if self.cells[from] != me {
                continue;
            }
            for to in 0..24 {
                if self.cells[to] != Cell::Empty {
                    continue;
                }
                if !flying && !tables().neighbours[from].contains(&to) {
                    continue;
                }
                let mut after = self.cells;
                after[from] = Cell::Empty;
                after[to] = me;
                self.push(&after, Some(from), to, &mut out);
            }
        }
        out
    }

    fn play(&self, ply: NPly) -> Naive {
        let mut next = *self;
        let side = if self.white_to_move { 0 } else { 1 };
        if let Some(f) = ply.from {
            next.cells[f] = Cell::Empty;
        } else if ply.to.is_some() {
            next.hand[side] -= 1;
        }
        if let Some(t) = ply.to {
            next.cells[t] = self.me();
        }
        if let Some(r) = ply.remove {
            assert_eq!(next.cells[r], self.them());
            next.cells[r] = Cell::Empty;
        }
        next.pending = false;
        next.white_to_move = !self.white_to_move;
        next
    }

    fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let plies = self.plies();
        if depth == 1 {
            return plies.len() as u64;
        }
        plies.iter().map(|&p| self.play(p).perft(depth - 1)).sum()
    }

    fn texts(&self) -> BTreeSet<String> {
        self.plies().iter().map(NPly::text).collect()
    }
}

// ---------------------------------------------------------------------------
// Comparison with the crate.

fn crate_texts(pos: &Position) -> BTreeSet<String> {
    let r = Rules::standard();
    pos.legal_plies(r)
        .into_iter()
        .map(|p| format_ply(r, p))
        .collect()
}

/// On a mismatch, finds the first position (depth-first) whose ply lists differ.
fn divide(naive: &Naive, pos: &Position, depth: u32) -> Option<String> {
    let r = Rules::standard();
    let (a, b) = (naive.texts(), crate_texts(pos));
    if a != b {
        return Some(format!(
            "at {}: naive only {:?}, crate only {:?}",
            fen::format(r, pos, Default::default()),
            a.difference(&b).collect::<Vec<_>>(),
            b.difference(&a).collect::<Vec<_>>()
        ));
    }
    if depth <= 1 {
        return None;
    }
    for ply in naive.plies() {
        let text = ply.text();
        let cp = pos
            .legal_plies(r)
            .into_iter()
            .find(|&p| format_ply(r, p) == text)
            .unwrap();
        if let Some(why) = divide(&naive.play(ply), &pos.after(r, cp), depth - 1) {
            return Some(format!("{text} {why}"));
        }
    }
    None
}

/// Perft of both generators from a FEN, to `depth`; returns the counts per depth.
fn both(fen_text: &str, depth: u32) -> Vec<u64> {
    let r = Rules::standard();
    let (mut pos, _) = fen::parse(r, fen_text).unwrap_or_else(|e| panic!("{fen_text}: {e}"));
    let naive = Naive::from_fen(fen_text);
    let before = pos;
    let mut counts = Vec::new();
    for d in 1..=depth {
        let ours = naive.perft(d);
        let theirs = perft(r, &mut pos, d);
        assert_eq!(pos, before, "perft changed the position");
        if ours != theirs {
            panic!(
                "{fen_text} depth {d}: naive {ours}, crate {theirs}; {}",
                divide(&naive, &pos, d).unwrap_or_default()
            );
        }
        counts.push(ours);
    }
    counts
}

#[test]
fn naive_tables_match_rules_md_counts() {
    let t = tables();
    let degree: usize = t.neighbours.iter().map(Vec::len).sum();
    assert_eq!(degree, 64);
    assert_eq!(t.mills.len(), 16);
    let mut per_point = [0; 24];
    for m in &t.mills {
        for &p in m {
            per_point[p] += 1;
        }
    }
    assert!(
        per_point.iter().all(|&n| n == 2),
        "every point is on two mills"
    );
    let mut fen_sorted = FEN_ORDER;
    fen_sorted.sort();
    assert_eq!(fen_sorted, NAMES);
}

#[test]
fn start_position_to_depth_5() {
    let r = Rules::standard();
    let naive = Naive::start();
    let mut pos = Position::start(r);
    let want = [24u64, 552, 12_144, 255_024, 5_140_800];
    for (d, &w) in (1..=5).zip(want.iter()) {
        assert_eq!(naive.perft(d), w, "naive, depth {d}");
        assert_eq!(perft(r, &mut pos, d), w, "crate, depth {d}");
    }
    assert_eq!(pos, Position::start(r));
}

#[test]
fn placement_subtree_with_mills_agrees() {
    // A subtree where White threatens a1-a4-a7 at once, four plies deep.
    let r = Rules::standard();
    let game = millbase::Game::parse(r, "startpos moves a1 b2 a4 d2").unwrap();
    let fen_text = fen::format(r, game.position(), game.counters);
    let counts = both(&fen_text, 4);
    // 19 placements, and a7 closing a1-a4-a7 with either black stone taken.
    assert_eq!(counts[0], 21);
}

/// Moving-phase and special positions: (name, FEN, depth).
const POSITIONS: [(&str, &str, u32); 9] = [
    // White flies with a1 a4 g7 (a7 closes a mill); Black has 7, b6-d6-f6 a mill.
    (
        "white flies",
        "**@**@**/@@@****@/@O***OO* w m s 3 0 7 0 0 0 -1 -1 -1 -1 0 0 1",
        5,
    ),
    // Both sides have three stones and fly.
    (
        "both fly",
        "********/**@*O***/*@@**OO* w m s 3 0 3 0 0 0 -1 -1 -1 -1 0 0 1",
        3,
    ),
    (
        "both fly, black",
        "********/**@*O***/*@@**OO* b m s 3 0 3 0 0 0 -1 -1 -1 -1 0 0 1",
        3,
    ),
    // White's four corner stones are shut in by a4 d7 g4 d1.
    (
        "white blocked",
        "******@*/********/@O@O@O@O w m s 4 0 5 0 0 0 -1 -1 -1 -1 0 0 1",
        3,
    ),
    // Same with Black to move: Black's moves may free White or not.
    (
        "black to move",
        "******@*/********/@O@O@O@O b m s 4 0 5 0 0 0 -1 -1 -1 -1 0 0 1",
        6,
    ),
    // Every black stone stands in a mill (a1-a4-a7, b2-b4-b6): any may be removed.
    (
        "all in mills",
        "**O*OO**/**OO*@@@/***O*@@@ w m s 6 0 6 0 0 0 -1 -1 -1 -1 0 0 1",
        5,
    ),
    // White has closed g4-f4-e4 and must remove b4, d6 or e5.
    (
        "pending, moving",
        "*@O**O**/@*O*O*@*/**O**@@@ w m r 5 0 6 0 1 0 -1 -1 -1 -1 0 0 1",
        5,
    ),
    // PROTOCOL.md: White to remove after a7 d6 d7 f4 g7.
    (
        "pending, placing",
        "********/@*@*****/OO*****O w p r 3 6 2 7 1 0 -1 -1 -1 -1 0 0 3",
        4,
    ),
    // Last placements, into the moving phase.
    (
        "late placement",
        "**@O*O*@/@OO**@@*/O@@**OO* w p p 7 1 7 1 0 0 -1 -1 -1 -1 0 0 1",
        5,
    ),
];

#[test]
fn special_positions_agree() {
    // Counts both generators agreed on, kept as a regression (prefixes).
    let known: [(&str, &[u64]); 9] = [
        ("white flies", &[45, 389, 17256, 204526]),
        ("both fly", &[56, 3062, 152590]),
        ("both fly, black", &[58, 2906, 153598]),
        ("white blocked", &[0, 0, 0]),
        ("black to move", &[7, 8, 76, 138]),
        ("all in mills", &[20, 114, 1197, 13094]),
        ("pending, moving", &[3, 23, 255, 2135]),
        ("pending, placing", &[2, 40, 760, 13680]),
        ("late placement", &[28, 477, 4628, 51041]),
    ];
    for (name, fen_text, depth) in POSITIONS {
        let counts = both(fen_text, depth);
        assert!(counts.len() == depth as usize, "{name}");
        let want = known.iter().find(|k| k.0 == name).unwrap().1;
        assert_eq!(&counts[..want.len()], want, "{name}");
        eprintln!("{name}: {counts:?}");
    }
}

#[test]
fn special_positions_regression() {
    let r = Rules::standard();
    let get = |name: &str| POSITIONS.iter().find(|p| p.0 == name).unwrap().1;
    let pos = |name: &str| fen::parse(r, get(name)).unwrap().0;

    // The blocked side has no ply and has lost.
    let blocked = pos("white blocked");
    assert_eq!(perft(r, &mut blocked.clone(), 1), 0);
    assert_eq!(perft(r, &mut blocked.clone(), 3), 0);
    assert!(blocked.is_lost(r));
    assert!(Naive::from_fen(get("white blocked")).plies().is_empty());

    // White flies: 3 stones to 14 empty points, and a7 closes a1-a4-a7 and takes
    // any of the 4 black stones outside b6-d6-f6 (from a1 or a4 the mill is not closed;
    // g7-a7 closes it): 3 * 14 - 1 + 4 = 45.
    assert_eq!(Naive::from_fen(get("white flies")).plies().len(), 45);
    assert_eq!(crate_texts(&pos("white flies")).len(), 45);

    // Both fly: 3 stones to 18 empty points, d2 does not help; a1-a4 need a7 with
    // a stone from d2: d2-a7 takes any of 3 black stones. 3 * 18 - 1 + 3 = 56.
    assert_eq!(crate_texts(&pos("both fly")).len(), 56);

    // All black stones in mills: g1-g4 and e4-e3 each take any of the 6.
    let all = crate_texts(&pos("all in mills"));
    for p in ["a1", "a4", "a7", "b2", "b4", "b6"] {
        assert!(all.contains(&format!("g1-g4x{p}")), "g1-g4x{p}");
        assert!(all.contains(&format!("e4-e3x{p}")), "e4-e3x{p}");
    }

    // The pending removal: exactly xb4 xd6 xe5 (a1-a4-a7 is protected).
    let pending: Vec<String> = crate_texts(&pos("pending, moving")).into_iter().collect();
    assert_eq!(pending, ["xb4", "xd6", "xe5"]);
}

#[test]
fn random_walks_agree_ply_by_ply() {
    let r = Rules::standard();
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut positions = 0;
    for _game in 0..300 {
        let mut naive = Naive::start();
        let mut pos = Position::start(r);
        for _ply in 0..200 {
            let a = naive.texts();
            let b = crate_texts(&pos);
            assert_eq!(a, b, "at {}", fen::format(r, &pos, Default::default()));
            positions += 1;
            if a.is_empty() {
                break;
            }
            let plies = naive.plies();
            let ply = plies[(rng.next() % plies.len() as u64) as usize];
            let text = ply.text();
            let cp = pos
                .legal_plies(r)
                .into_iter()
                .find(|&p| format_ply(r, p) == text)
                .unwrap();
            naive = naive.play(ply);
            pos.make(r, cp);
            // Both sides agree on the position, through the FEN.
            let there = Naive::from_fen(&fen::format(r, &pos, Default::default()));
            assert_eq!(there.cells, naive.cells);
            assert_eq!(there.hand, naive.hand);
            assert_eq!(there.white_to_move, naive.white_to_move);
        }
    }
    assert!(positions > 10_000);
}
