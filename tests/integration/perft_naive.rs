//! Perft checked against a second, deliberately naive move generator written here
//! from RULES.md alone: its own board tables typed in by point name, an array of
//! cells, its own mill test and removal rule, positions copied rather than undone.
//! Nothing of the crate's rules tables or move generation is used by it.

use crate::common::Rng;
use millbase::rules::fen;
use millbase::rules::game::End;
use millbase::rules::notation::format_ply;
use millbase::rules::perft::perft;
use millbase::search::engine::{Engine, EngineConfig, Limits};
use millbase::search::score::from_value;
use millbase::{Color, Game, Position, Rules, Value};
use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;

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

/// The diagonal lines of `twelve` and `morabaraba` (RULES.md): corner to corner.
const DIAGONALS: [[&str; 3]; 4] = [
    ["a1", "b2", "c3"],
    ["a7", "b6", "c5"],
    ["g7", "f6", "e5"],
    ["g1", "f2", "e3"],
];

/// The order of points in a Sanmill FEN board field (PROTOCOL.md).
const FEN_ORDER: [&str; 24] = [
    "d5", "e5", "e4", "e3", "d3", "c3", "c4", "c5", "d6", "f6", "f4", "f2", "d2", "b2", "b4", "b6",
    "d7", "g7", "g4", "g1", "d1", "a1", "a4", "a7",
];

/// The 16-point board of `six` (RULES.md): its points alphabetically, its 20 edges
/// (two squares and four joins), its 8 mills (the sides) and its FEN order (middle
/// ring, then outer ring, each clockwise from twelve o'clock).
const SIX_NAMES: [&str; 16] = [
    "a1", "a4", "a7", "b2", "b4", "b6", "d1", "d2", "d6", "d7", "f2", "f4", "f6", "g1", "g4", "g7",
];
const SIX_EDGES: [(&str, &str); 20] = [
    ("a1", "a4"),
    ("a4", "a7"),
    ("a7", "d7"),
    ("d7", "g7"),
    ("g7", "g4"),
    ("g4", "g1"),
    ("g1", "d1"),
    ("d1", "a1"),
    ("b2", "b4"),
    ("b4", "b6"),
    ("b6", "d6"),
    ("d6", "f6"),
    ("f6", "f4"),
    ("f4", "f2"),
    ("f2", "d2"),
    ("d2", "b2"),
    ("a4", "b4"),
    ("d7", "d6"),
    ("g4", "f4"),
    ("d1", "d2"),
];
const SIX_MILLS: [[&str; 3]; 8] = [
    ["a1", "a4", "a7"],
    ["a7", "d7", "g7"],
    ["g7", "g4", "g1"],
    ["g1", "d1", "a1"],
    ["b2", "b4", "b6"],
    ["b6", "d6", "f6"],
    ["f6", "f4", "f2"],
    ["f2", "d2", "b2"],
];
const SIX_FEN_ORDER: [&str; 16] = [
    "d6", "f6", "f4", "f2", "d2", "b2", "b4", "b6", "d7", "g7", "g4", "g1", "d1", "a1", "a4", "a7",
];

/// When a side flies (RULES.md, "Rule sets at a glance").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fly {
    /// Never.
    Never,
    /// Exactly three on the board and none in hand.
    ThreeOnBoard,
    /// Exactly three on the board plus in hand, also with stones in hand (Lasker).
    ThreeInAll,
}

/// One rule set as this file reads RULES.md: its own board tables and switches.
#[derive(Debug)]
struct Tables {
    /// The name the crate knows it by.
    rules: &'static str,
    names: Vec<&'static str>,
    fen_order: Vec<&'static str>,
    neighbours: Vec<Vec<usize>>,
    mills: Vec<[usize; 3]>,
    stones: u32,
    fly: Fly,
    /// A side with stones in hand may move instead of placing (Lasker).
    move_while_placing: bool,
    /// A full board is a draw (Morabaraba).
    full_board_draw: bool,
}

impl Tables {
    fn index(&self, name: &str) -> usize {
        self.names
            .iter()
            .position(|&n| n == name)
            .unwrap_or_else(|| panic!("no point {name}"))
    }

    fn points(&self) -> usize {
        self.names.len()
    }
}

/// The naive tables of rule set `name` (`standard`, `lasker`, `morabaraba`,
/// `twelve`, `no-flying`, `six`, or `NAME-N`), built once each.
fn tables_of(name: &str) -> &'static Tables {
    static ALL: std::sync::Mutex<Vec<&'static Tables>> = std::sync::Mutex::new(Vec::new());
    let mut all = ALL.lock().unwrap();
    if let Some(t) = all.iter().find(|t| t.rules == name) {
        return t;
    }
    let (base, stones) = match name.rsplit_once('-') {
        Some((b, n)) if n.chars().all(|c| c.is_ascii_digit()) => (b, n.parse().ok()),
        _ => (name, None),
    };
    let (six, diagonals) = (base == "six", matches!(base, "twelve" | "morabaraba"));
    let (names, fen_order, edges, mut mill_names): (Vec<_>, Vec<_>, Vec<_>, Vec<_>) = if six {
        (
            SIX_NAMES.to_vec(),
            SIX_FEN_ORDER.to_vec(),
            SIX_EDGES.to_vec(),
            SIX_MILLS.to_vec(),
        )
    } else {
        (
            NAMES.to_vec(),
            FEN_ORDER.to_vec(),
            EDGES.to_vec(),
            MILLS.to_vec(),
        )
    };
    let mut edges = edges;
    if diagonals {
        for d in DIAGONALS {
            edges.push((d[0], d[1]));
            edges.push((d[1], d[2]));
            mill_names.push(d);
        }
    }
    let (own_stones, fly) = match base {
        "standard" => (9, Fly::ThreeOnBoard),
        "lasker" => (10, Fly::ThreeInAll),
        "morabaraba" | "twelve" => (12, Fly::ThreeOnBoard),
        "no-flying" => (9, Fly::Never),
        "six" => (6, Fly::Never),
        _ => panic!("no rule set {name}"),
    };
    let mut t = Tables {
        rules: Box::leak(name.to_string().into_boxed_str()),
        names,
        fen_order,
        neighbours: Vec::new(),
        mills: Vec::new(),
        stones: stones.unwrap_or(own_stones),
        fly,
        move_while_placing: base == "lasker",
        full_board_draw: base == "morabaraba",
    };
    t.neighbours = vec![Vec::new(); t.points()];
    for (a, b) in edges {
        let (a, b) = (t.index(a), t.index(b));
        t.neighbours[a].push(b);
        t.neighbours[b].push(a);
    }
    t.mills = mill_names
        .iter()
        .map(|m| [t.index(m[0]), t.index(m[1]), t.index(m[2])])
        .collect();
    let t: &'static Tables = Box::leak(Box::new(t));
    all.push(t);
    t
}

/// The standard game's tables.
fn tables() -> &'static Tables {
    tables_of("standard")
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cell {
    Empty,
    White,
    Black,
}

#[derive(Clone, Debug)]
struct Naive {
    t: &'static Tables,
    cells: Vec<Cell>,
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
    fn text(&self, t: &Tables) -> String {
        let mut s = String::new();
        if let Some(f) = self.from {
            s += t.names[f];
            s += "-";
        }
        if let Some(to) = self.to {
            s += t.names[to];
        }
        if let Some(r) = self.remove {
            s += "x";
            s += t.names[r];
        }
        s
    }
}

impl Naive {
    fn start() -> Naive {
        Naive::start_of(tables())
    }

    fn start_of(t: &'static Tables) -> Naive {
        Naive {
            t,
            cells: vec![Cell::Empty; t.points()],
            hand: [t.stones, t.stones],
            white_to_move: true,
            pending: false,
        }
    }

    /// Reads the fields of a FEN that matter: board, side, action, hands.
    fn from_fen(text: &str) -> Naive {
        Naive::from_fen_of(tables(), text)
    }

    fn from_fen_of(t: &'static Tables, text: &str) -> Naive {
        let f: Vec<&str> = text.split_whitespace().collect();
        let board: Vec<char> = f[0].chars().filter(|&c| c != '/').collect();
        assert_eq!(board.len(), t.points());
        let mut cells = vec![Cell::Empty; t.points()];
        for (k, c) in board.into_iter().enumerate() {
            cells[t.index(t.fen_order[k])] = match c {
                'O' => Cell::White,
                '@' => Cell::Black,
                '*' => Cell::Empty,
                other => panic!("bad cell {other}"),
            };
        }
        Naive {
            t,
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
    fn stands_in_mill(&self, cells: &[Cell], p: usize) -> bool {
        let c = cells[p];
        c != Cell::Empty
            && self
                .t
                .mills
                .iter()
                .any(|m| m.contains(&p) && m.iter().all(|&q| cells[q] == c))
    }

    /// The stones of colour `victim` that may be removed.
    fn removable(&self, cells: &[Cell], victim: Cell) -> Vec<usize> {
        let all: Vec<usize> = (0..cells.len()).filter(|&p| cells[p] == victim).collect();
        let free: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&p| !self.stands_in_mill(cells, p))
            .collect();
        if free.is_empty() { all } else { free }
    }

    /// Adds `ply` (whose stone now stands on `to` in `after`) with every removal
    /// it must make.
    fn push(&self, after: &[Cell], from: Option<usize>, to: usize, out: &mut Vec<NPly>) {
        let victims = self.removable(after, self.them());
        if self.stands_in_mill(after, to) && !victims.is_empty() {
            for r in victims {
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

    /// Whether the game is drawn by a full board (Morabaraba).
    fn full_board_draw(&self) -> bool {
        self.t.full_board_draw && !self.pending && self.cells.iter().all(|&c| c != Cell::Empty)
    }

    fn plies(&self) -> Vec<NPly> {
        let mut out = Vec::new();
        let (me, them) = (self.me(), self.them());
        if self.count(me) + self.hand_of(me) < 3 || self.count(them) + self.hand_of(them) < 3 {
            return out;
        }
        if self.pending {
            for r in self.removable(&self.cells, them) {
                out.push(NPly {
                    from: None,
                    to: None,
                    remove: Some(r),
                });
            }
            return out;
        }
        let n = self.cells.len();
        let in_hand = self.hand_of(me);
        if in_hand > 0 {
            for to in 0..n {
                if self.cells[to] == Cell::Empty {
                    let mut after = self.cells.clone();
                    after[to] = me;
                    self.push(&after, None, to, &mut out);
                }
            }
            if !self.t.move_while_placing {
                return out;
            }
        }
        let flying = match self.t.fly {
            Fly::Never => false,
            Fly::ThreeOnBoard => in_hand == 0 && self.count(me) == 3,
            Fly::ThreeInAll => self.count(me) + in_hand == 3,
        };
        for from in 0..n {
            if self.cells[from] != me {
                continue;
            }
            for to in 0..n {
                if self.cells[to] != Cell::Empty {
                    continue;
                }
                if !flying && !self.t.neighbours[from].contains(&to) {
                    continue;
                }
                let mut after = self.cells.clone();
                after[from] = Cell::Empty;
                after[to] = me;
                self.push(&after, Some(from), to, &mut out);
            }
        }
        out
    }

    fn play(&self, ply: NPly) -> Naive {
        let mut next = self.clone();
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
        self.plies().iter().map(|p| p.text(self.t)).collect()
    }
}

// ---------------------------------------------------------------------------
// Comparison with the crate.

fn crate_texts(pos: &Position) -> BTreeSet<String> {
    crate_texts_of(Rules::standard(), pos)
}

fn crate_texts_of(r: &Rules, pos: &Position) -> BTreeSet<String> {
    pos.legal_plies(r)
        .into_iter()
        .map(|p| format_ply(r, p))
        .collect()
}

/// The crate's rule set of the same name as the naive tables.
fn crate_rules(t: &Tables) -> &'static Rules {
    Rules::by_name(t.rules).unwrap_or_else(|| panic!("the crate has no rules {}", t.rules))
}

/// On a mismatch, finds the first position (depth-first) whose ply lists differ.
fn divide(naive: &Naive, pos: &Position, depth: u32) -> Option<String> {
    let r = crate_rules(naive.t);
    let (a, b) = (naive.texts(), crate_texts_of(r, pos));
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
        let text = ply.text(naive.t);
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
    both_of(tables(), fen_text, depth)
}

/// As [`both`], under the rule set of `t`.
fn both_of(t: &'static Tables, fen_text: &str, depth: u32) -> Vec<u64> {
    let r = crate_rules(t);
    let (pos, _) = fen::parse(r, fen_text).unwrap_or_else(|e| panic!("{fen_text}: {e}"));
    both_from(&Naive::from_fen_of(t, fen_text), pos, depth)
}

/// Perft of the naive position and the crate's, which must be the same, to `depth`.
fn both_from(naive: &Naive, mut pos: Position, depth: u32) -> Vec<u64> {
    let r = crate_rules(naive.t);
    let before = pos;
    let mut counts = Vec::new();
    for d in 1..=depth {
        let ours = naive.perft(d);
        let theirs = perft(r, &mut pos, d);
        assert_eq!(pos, before, "perft changed the position");
        if ours != theirs {
            panic!(
                "{} {} depth {d}: naive {ours}, crate {theirs}; {}",
                naive.t.rules,
                fen::format(r, &pos, Default::default()),
                divide(naive, &pos, d).unwrap_or_default()
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
            let text = ply.text(naive.t);
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

/// The rule sets of RULES.md and reduced forms that reach their special rules
/// (flying from the first move, a full board) in few plies.
const RULE_SETS: [&str; 14] = [
    "standard",
    "lasker",
    "morabaraba",
    "twelve",
    "no-flying",
    "six",
    "standard-3",
    "lasker-3",
    "lasker-4",
    "no-flying-4",
    "morabaraba-5",
    "twelve-4",
    "six-4",
    "six-8",
];

/// Plays random games under rule set `name` with both generators side by side,
/// comparing the ply lists at every position, the position through the FEN, the
/// full-board draw, and perft to depth 2 at every 25th position.
fn random_walks(name: &str, games: usize, seed: u64) -> usize {
    let t = tables_of(name);
    let r = crate_rules(t);
    let mut rng = Rng::new(seed);
    let mut positions = 0;
    for _game in 0..games {
        let mut naive = Naive::start_of(t);
        let mut pos = Position::start(r);
        for _ply in 0..150 {
            let a = naive.texts();
            let b = crate_texts_of(r, &pos);
            let at = fen::format(r, &pos, Default::default());
            assert_eq!(a, b, "{name} at {at}");
            assert_eq!(naive.full_board_draw(), pos.is_drawn(r), "{name} at {at}");
            assert_eq!(a.is_empty(), pos.is_over(r), "{name} at {at}");
            positions += 1;
            if positions % 25 == 0 {
                both_from(&naive, pos, 2);
            }
            if a.is_empty() {
                break;
            }
            let plies = naive.plies();
            let ply = plies[(rng.next() % plies.len() as u64) as usize];
            let text = ply.text(t);
            let cp = pos
                .legal_plies(r)
                .into_iter()
                .find(|&p| format_ply(r, p) == text)
                .unwrap();
            naive = naive.play(ply);
            pos.make(r, cp);
            let there = Naive::from_fen_of(t, &fen::format(r, &pos, Default::default()));
            assert_eq!(there.cells, naive.cells, "{name}");
            assert_eq!(there.hand, naive.hand, "{name}");
            assert_eq!(there.white_to_move, naive.white_to_move, "{name}");
        }
    }
    positions
}

#[test]
fn every_rule_set_agrees_on_random_games() {
    for (i, name) in RULE_SETS.into_iter().enumerate() {
        let positions = random_walks(name, 60, 0x2545_f491_4f6c_dd1d ^ i as u64);
        assert!(positions > 500, "{name}: {positions}");
    }
}

/// Perft from the start of every rule set, both generators, to depth 4 (counts
/// both agreed on, kept as a regression).
#[test]
fn every_rule_set_perft_from_the_start() {
    let known: [(&str, [u64; 4]); 14] = KNOWN_START;
    for (name, want) in known {
        let t = tables_of(name);
        let r = crate_rules(t);
        let counts = both_from(&Naive::start_of(t), Position::start(r), 4);
        eprintln!("{name}: {counts:?}");
        assert_eq!(counts, want, "{name}");
    }
}

const KNOWN_START: [(&str, [u64; 4]); 14] = [
    ("standard", [24, 552, 12144, 255024]),
    ("lasker", [24, 552, 13552, 319176]),
    ("morabaraba", [24, 552, 12144, 255024]),
    ("twelve", [24, 552, 12144, 255024]),
    ("no-flying", [24, 552, 12144, 255024]),
    ("six", [16, 240, 3360, 43680]),
    ("standard-3", [24, 552, 12144, 255024]),
    ("lasker-3", [24, 552, 24288, 1044384]),
    ("lasker-4", [24, 552, 13552, 319176]),
    ("no-flying-4", [24, 552, 12144, 255024]),
    ("morabaraba-5", [24, 552, 12144, 255024]),
    ("twelve-4", [24, 552, 12144, 255024]),
    ("six-4", [16, 240, 3360, 43680]),
    ("six-8", [16, 240, 3360, 43680]),
];

/// Special positions of the variants, both generators to a depth: Lasker's moves
/// and flying with stones in hand, no flying at three stones, the six men's board.
#[test]
fn variant_positions_agree() {
    let cases: [(&str, &str, u32, &[u64]); 5] = [
        // Lasker: White has a1 a4 on the board and 1 in hand (3 in all): it may
        // place, or fly either stone; Black has 5 on the board and 4 in hand.
        (
            "lasker",
            "********/@*@*@***/*****OO@ w p p 2 1 4 5 0 0 -1 -1 -1 -1 0 0 1",
            3,
            &[54, 1635, 84732],
        ),
        // Lasker: both hands still full-ish, stones on the board may slide.
        (
            "lasker",
            "O*******/***@****/******** w p p 1 9 1 9 0 0 -1 -1 -1 -1 0 0 2",
            3,
            &[25, 576, 14462],
        ),
        // No flying: White with three stones slides.
        (
            "no-flying",
            "********/**@*O***/*@@**OO* w m s 3 0 3 0 0 0 -1 -1 -1 -1 0 0 1",
            4,
            &[7, 34, 217, 1405],
        ),
        // Six men's morris, moving phase.
        (
            "six",
            "O@*O@**O/@*O@***@ w m s 4 0 5 0 0 0 -1 -1 -1 -1 0 0 1",
            4,
            &[4, 24, 93, 560],
        ),
        // Morabaraba: a diagonal a1-b2-c3 for White to close with c3.
        (
            "morabaraba",
            "********/*****O@*/*****O*@ w p p 2 10 2 10 0 0 -1 -1 -1 -1 0 0 1",
            3,
            &[21, 401, 8086],
        ),
    ];
    for (name, fen_text, depth, want) in cases {
        let counts = both_of(tables_of(name), fen_text, depth);
        eprintln!("{name} {fen_text}: {counts:?}");
        assert_eq!(&counts[..want.len()], want, "{name}");
    }
}

/// A full board after placement (24 stones, no mill): a draw in `morabaraba`,
/// a loss for White (to move and stuck) in `twelve`. The filling is found by
/// random placements that close no mill, in both generators' terms. Every user of
/// the rule agrees: the game's end, the value of a stuck side, and the engine's
/// score of the full board and of the last placement that fills it.
#[test]
fn full_board_after_placement() {
    let mut rng = Rng::new(0x1234_5678_9abc_def1);
    let filled = loop {
        let mut naive = Naive::start_of(tables_of("twelve"));
        let mut stuck = false;
        while naive.hand != [0, 0] {
            let quiet: Vec<NPly> = naive
                .plies()
                .into_iter()
                .filter(|p| p.remove.is_none())
                .collect();
            if quiet.is_empty() {
                stuck = true;
                break;
            }
            naive = naive.play(quiet[(rng.next() % quiet.len() as u64) as usize]);
        }
        if !stuck {
            break naive;
        }
    };
    let twelve = Rules::by_name("twelve").unwrap();
    let mut pos = Position::start(twelve);
    for (p, &c) in filled.cells.iter().enumerate() {
        let at = twelve.point(filled.t.names[p]).unwrap();
        match c {
            Cell::White => pos.board[0] |= 1 << at,
            Cell::Black => pos.board[1] |= 1 << at,
            Cell::Empty => panic!("the board is full"),
        }
    }
    pos.hand = [0, 0];
    let text = fen::format(twelve, &pos, Default::default());
    for (name, drawn) in [("twelve", false), ("morabaraba", true)] {
        let t = tables_of(name);
        let r = crate_rules(t);
        let (pos, _) = fen::parse(r, &text).unwrap_or_else(|e| panic!("{name} {text}: {e}"));
        let naive = Naive::from_fen_of(t, &text);
        assert!(naive.plies().is_empty() && pos.legal_plies(r).is_empty());
        assert_eq!(naive.full_board_draw(), drawn, "{name}");
        assert_eq!(pos.is_drawn(r), drawn, "{name}");
        assert_eq!(pos.is_lost(r), !drawn, "{name}");
        assert!(pos.is_over(r), "{name}");
        let want = if drawn { Value::Draw } else { Value::Loss(0) };
        assert_eq!(pos.stuck_value(r), want, "{name}");
        let end = Game::new(pos, Default::default()).end(r, 2);
        if drawn {
            assert_eq!(end, Some(End::FullBoard), "{name}");
        } else {
            assert_eq!(
                end,
                Some(End::Blocked {
                    winner: Color::Black
                }),
                "{name}"
            );
        }
        let mut engine = Engine::new(r, EngineConfig::default());
        let limits = Limits {
            depth: Some(3),
            ..Limits::default()
        };
        let stop = AtomicBool::new(false);
        let full = engine.search(&pos, &[], &limits, &stop, &mut |_| {});
        assert_eq!(full.score, from_value(want, 0), "{name}: the full board");
        // One black stone back in hand: Black's last placement fills the board.
        let last = pos.board[1].trailing_zeros();
        let before = Position {
            board: [pos.board[0], pos.board[1] & !(1 << last)],
            hand: [0, 1],
            to_move: Color::Black,
            pending_removal: false,
        };
        assert_eq!(before.legal_plies(r).len(), 1, "{name}");
        let res = engine.search(&before, &[], &limits, &stop, &mut |_| {});
        assert_eq!(
            res.score,
            from_value(want.parent(), 0),
            "{name}: the last placement"
        );
    }
}
