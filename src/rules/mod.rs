//! The rules of a mill game as data: the board (points, adjacency, mills, and the
//! symmetries computed from them), the stones per side, when a side may fly, how
//! removals work, whether stones move during placement, what a full board means and
//! who moves first.
//!
//! Everything else in the crate reads a [`Rules`] value instead of hard-coding the
//! standard board, so that variants are new data, not new code. The rule sets of
//! `RULES.md` are [`Rules::by_name`]; the standard game is [`Rules::standard`].

pub mod color;
pub mod fen;
pub mod game;
pub mod notation;
pub mod perft;
pub mod position;
pub mod value;

use color::Color;
use std::sync::{Mutex, OnceLock};

/// A set of points, one bit per point (bit `i` is point `i`).
pub type Bits = u32;

/// Which opponent stones a completed mill may remove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemovalPolicy {
    /// A stone standing in a mill may not be removed, unless every opponent stone
    /// stands in a mill (the rule of every rule set of `RULES.md`).
    ProtectMillsUnlessAll,
    /// Any opponent stone may be removed (Sanmill's `mayRemoveFromMillsAlways`).
    Always,
}

/// How many stones a ply removes that closes two mills at once.
///
/// Every rule set of `RULES.md` removes one. Sanmill's `mayRemoveMultiple` (one
/// removal per mill) is not a value here: a position would have to carry a count of
/// pending removals, which [`position::Position`] and the database index do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MillRemovals {
    /// One stone, however many mills the ply closes.
    One,
}

/// What a board filled by the last placement means (the player to move is stuck).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullBoard {
    /// Rule 7 unchanged: the stuck player to move loses (`twelve`, `standard-12`).
    StuckLoses,
    /// The game is drawn (`morabaraba`).
    Draw,
}

/// One board: point names, edges and mills written as `a1-a4` and `a1-a4-a7` lists.
struct BoardData {
    /// What the board is, for help texts.
    name: &'static str,
    /// Whether it has the diagonal lines.
    diagonals: bool,
    points: &'static str,
    edges: &'static [&'static str],
    mills: &'static [&'static str],
}

/// The standard board, as written in `RULES.md`. Points are numbered in the order of
/// the Sanmill FEN: inner ring, middle ring, outer ring, each clockwise from twelve
/// o'clock, so that a FEN board string is the point list itself.
const STANDARD_POINTS: &str = "d5 e5 e4 e3 d3 c3 c4 c5 \
                               d6 f6 f4 f2 d2 b2 b4 b6 \
                               d7 g7 g4 g1 d1 a1 a4 a7";

const STANDARD_EDGES: &str = "a1-a4 a4-a7 a7-d7 d7-g7 g7-g4 g4-g1 g1-d1 d1-a1 \
     b2-b4 b4-b6 b6-d6 d6-f6 f6-f4 f4-f2 f2-d2 d2-b2 \
     c3-c4 c4-c5 c5-d5 d5-e5 e5-e4 e4-e3 e3-d3 d3-c3 \
     a4-b4 b4-c4 d7-d6 d6-d5 g4-f4 f4-e4 d1-d2 d2-d3";

const STANDARD_MILLS: &str = "a1-a4-a7 a7-d7-g7 g7-g4-g1 g1-d1-a1 \
     b2-b4-b6 b6-d6-f6 f6-f4-f2 f2-d2-b2 \
     c3-c4-c5 c5-d5-e5 e5-e4-e3 e3-d3-c3 \
     a4-b4-c4 d7-d6-d5 g4-f4-e4 d1-d2-d3";

/// The four diagonal lines of `twelve` and `morabaraba`: edges and mills.
const DIAGONAL_EDGES: &str = "a1-b2 b2-c3 a7-b6 b6-c5 g7-f6 f6-e5 g1-f2 f2-e3";
const DIAGONAL_MILLS: &str = "a1-b2-c3 a7-b6-c5 g7-f6-e5 g1-f2-e3";

/// The 16-point board of `six`: the outer and middle squares of the 7×7 grid, in
/// Sanmill's order without the inner square (middle ring, then outer ring).
const SIX_POINTS: &str = "d6 f6 f4 f2 d2 b2 b4 b6 \
                          d7 g7 g4 g1 d1 a1 a4 a7";
const SIX_EDGES: &str = "a1-a4 a4-a7 a7-d7 d7-g7 g7-g4 g4-g1 g1-d1 d1-a1 \
     b2-b4 b4-b6 b6-d6 d6-f6 f6-f4 f4-f2 f2-d2 d2-b2 \
     a4-b4 d7-d6 g4-f4 d1-d2";
const SIX_MILLS: &str = "a1-a4-a7 a7-d7-g7 g7-g4-g1 g1-d1-a1 \
     b2-b4-b6 b6-d6-f6 f6-f4-f2 f2-d2-b2";

const BOARD_24: BoardData = BoardData {
    name: "24 points",
    diagonals: false,
    points: STANDARD_POINTS,
    edges: &[STANDARD_EDGES],
    mills: &[STANDARD_MILLS],
};
const BOARD_24_DIAGONALS: BoardData = BoardData {
    name: "24 points with diagonal lines",
    diagonals: true,
    points: STANDARD_POINTS,
    edges: &[STANDARD_EDGES, DIAGONAL_EDGES],
    mills: &[STANDARD_MILLS, DIAGONAL_MILLS],
};
const BOARD_16: BoardData = BoardData {
    name: "16 points",
    diagonals: false,
    points: SIX_POINTS,
    edges: &[SIX_EDGES],
    mills: &[SIX_MILLS],
};

/// The rule choices of one named rule set of `RULES.md` besides its board.
struct RuleSet {
    name: &'static str,
    board: &'static BoardData,
    stones: u8,
    fly_with: Option<u8>,
    fly_counts_hand: bool,
    move_in_placement: bool,
    full_board: FullBoard,
}

/// The named rule sets of `RULES.md`, `standard` first.
const RULE_SETS: [RuleSet; 6] = [
    RuleSet {
        name: "standard",
        board: &BOARD_24,
        stones: 9,
        fly_with: Some(3),
        fly_counts_hand: false,
        move_in_placement: false,
        full_board: FullBoard::StuckLoses,
    },
    RuleSet {
        name: "lasker",
        board: &BOARD_24,
        stones: 10,
        fly_with: Some(3),
        fly_counts_hand: true,
        move_in_placement: true,
        full_board: FullBoard::StuckLoses,
    },
    RuleSet {
        name: "morabaraba",
        board: &BOARD_24_DIAGONALS,
        stones: 12,
        fly_with: Some(3),
        fly_counts_hand: false,
        move_in_placement: false,
        full_board: FullBoard::Draw,
    },
    RuleSet {
        name: "twelve",
        board: &BOARD_24_DIAGONALS,
        stones: 12,
        fly_with: Some(3),
        fly_counts_hand: false,
        move_in_placement: false,
        full_board: FullBoard::StuckLoses,
    },
    RuleSet {
        name: "no-flying",
        board: &BOARD_24,
        stones: 9,
        fly_with: None,
        fly_counts_hand: false,
        move_in_placement: false,
        full_board: FullBoard::StuckLoses,
    },
    RuleSet {
        name: "six",
        board: &BOARD_16,
        stones: 6,
        fly_with: None,
        fly_counts_hand: false,
        move_in_placement: false,
        full_board: FullBoard::StuckLoses,
    },
];

/// The complete rule set of one mill variant: every field that can change the value
/// of a position.
#[derive(Clone, Debug)]
pub struct Rules {
    /// Short name of the variant, e.g. `standard` or `no-flying-5`.
    pub name: &'static str,
    /// What the board is (`24 points`, `24 points with diagonal lines`, `16 points`).
    pub board: &'static str,
    /// Whether the board has the four diagonal lines (their edges and mills are in
    /// [`Rules::adjacency`] and [`Rules::mills`]).
    pub diagonal_lines: bool,
    /// Point names (`a1`..`g7`), indexed by point number.
    pub point_names: Vec<&'static str>,
    /// For each point, the set of adjacent points.
    pub adjacency: Vec<Bits>,
    /// Every mill (line of three) as a set of points.
    pub mills: Vec<Bits>,
    /// For each point, the mills through it.
    pub mills_at: Vec<Vec<Bits>>,
    /// The board symmetries as point permutations: `symmetries[s][p]` is the image of
    /// point `p` under symmetry `s`. Computed from the board: every permutation of
    /// the points that maps adjacency to adjacency and mills to mills, in
    /// lexicographic order, so symmetry 0 is the identity.
    pub symmetries: Vec<Vec<u8>>,
    /// Byte-split images of point sets, `sym_tables[s][byte][value]`, so that a
    /// symmetry maps a set with one look-up per byte.
    sym_tables: Vec<[[Bits; 256]; 4]>,
    /// Stones each side starts with in hand.
    pub stones: u8,
    /// The flying threshold: a side with exactly this many stones moves by flying
    /// (which stones count: see [`Rules::fly_counts_hand`]); `None`: never.
    pub fly_with: Option<u8>,
    /// Whether the flying threshold counts stones on the board plus in hand, and a
    /// side may then fly while it still holds stones (`lasker`); otherwise only the
    /// stones on the board count, and only with an empty hand.
    pub fly_counts_hand: bool,
    /// Which stones a mill may remove.
    pub removal: RemovalPolicy,
    /// How many stones a ply closing two mills removes.
    pub mill_removals: MillRemovals,
    /// Whether a side with stones in hand may move a stone on the board instead of
    /// placing (`lasker`).
    pub move_in_placement: bool,
    /// What a full board (no empty point) means for the player to move.
    pub full_board: FullBoard,
    /// The side that places first.
    pub first: Color,
}

/// Why a `--rules` name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    /// No rule set has this name.
    #[error(
        "unknown rules '{0}': the rule sets are {names}, each also as NAME-N with N stones per side (3 to half the points: 12, or 8 for six)",
        names = Rules::names().join(", ")
    )]
    Unknown(String),
    /// A known rule set with a stone count out of range.
    #[error(
        "rules '{name}': {stones} stones per side is out of range for {base}, whose board has {points} points; use {base}-N with N from 3 to {max}"
    )]
    Stones {
        /// The name given.
        name: String,
        /// The rule set it names.
        base: &'static str,
        /// The stone count asked for.
        stones: u64,
        /// Points of the board.
        points: usize,
        /// The largest count allowed.
        max: usize,
    },
}

impl Rules {
    /// The standard game (nine men's morris) of `RULES.md`, built once.
    pub fn standard() -> &'static Rules {
        Rules::base(0)
    }

    /// The named rule set `RULE_SETS[i]`, built once.
    fn base(i: usize) -> &'static Rules {
        static BASES: [OnceLock<Rules>; RULE_SETS.len()] = [const { OnceLock::new() }; 6];
        BASES[i].get_or_init(|| Rules::from_set(&RULE_SETS[i]))
    }

    fn from_set(set: &RuleSet) -> Rules {
        let board = set.board;
        let names: Vec<&'static str> = board.points.split_whitespace().collect();
        let mut r = Rules::from_data(
            set.name,
            names,
            &board.edges.join(" "),
            &board.mills.join(" "),
            set.stones,
            set.fly_with,
        );
        r.board = board.name;
        r.diagonal_lines = board.diagonals;
        r.fly_counts_hand = set.fly_counts_hand;
        r.move_in_placement = set.move_in_placement;
        r.full_board = set.full_board;
        r
    }

    /// The names of the rule sets of `RULES.md`, `standard` first (each also exists
    /// as `NAME-N`).
    pub fn names() -> Vec<&'static str> {
        RULE_SETS.iter().map(|s| s.name).collect()
    }

    /// The standard board and rules with `stones` stones per side instead of nine
    /// (named `standard-N`; `standard` itself for nine): the reduced games the tests
    /// build whole in seconds. Built once per count and kept for the program's life.
    pub fn with_stones(stones: u8) -> &'static Rules {
        Rules::standard().reduced(stones)
    }

    /// This rule set with `stones` stones per side (`NAME-N`; `self` for its own
    /// count). Built once per name and count and kept for the program's life.
    pub fn reduced(&'static self, stones: u8) -> &'static Rules {
        static OTHERS: Mutex<Vec<&'static Rules>> = Mutex::new(Vec::new());
        // The rule set this one reduces: the named set of `NAME` or `NAME-N`.
        let base = RULE_SETS
            .iter()
            .position(|s| {
                self.name == s.name
                    || self
                        .name
                        .strip_prefix(s.name)
                        .and_then(|rest| rest.strip_prefix('-'))
                        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            })
            .map_or(self, Rules::base);
        if stones == base.stones {
            return base;
        }
        let name = format!("{}-{stones}", base.name);
        let mut others = OTHERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = others.iter().find(|r| r.name == name) {
            return r;
        }
        let mut r = base.clone();
        r.stones = stones;
        r.name = Box::leak(name.into_boxed_str());
        let r: &'static Rules = Box::leak(Box::new(r));
        others.push(r);
        r
    }

    /// The rule set called `name`: one of [`Rules::names`], or `NAME-N` for it with
    /// `N` stones per side (3 to half the points of its board).
    pub fn by_name(name: &str) -> Option<&'static Rules> {
        Rules::parse(name).ok()
    }

    /// As [`Rules::by_name`], with an error that says what is wrong with the name
    /// and lists the known ones.
    pub fn parse(name: &str) -> Result<&'static Rules, RulesError> {
        if let Some(i) = RULE_SETS.iter().position(|s| s.name == name) {
            return Ok(Rules::base(i));
        }
        let unknown = || RulesError::Unknown(name.to_string());
        let (base, n) = name.rsplit_once('-').ok_or_else(unknown)?;
        let i = RULE_SETS
            .iter()
            .position(|s| s.name == base)
            .ok_or_else(unknown)?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return Err(unknown());
        }
        let base = Rules::base(i);
        let max = base.points() / 2;
        match n.parse::<u64>() {
            Ok(n) if (3..=max as u64).contains(&n) => Ok(base.reduced(n as u8)),
            _ => Err(RulesError::Stones {
                name: name.to_string(),
                base: base.name,
                stones: n.parse().unwrap_or(u64::MAX),
                points: base.points(),
                max,
            }),
        }
    }

    /// Builds a rule set from point names, edges and mills written as `a1-a4` and
    /// `a1-a4-a7` lists; the symmetries are computed from the board. Every other rule
    /// field is that of `standard` (set the public fields to change them).
    ///
    /// Panics on malformed data: rule sets are compiled into the program, so bad data
    /// is a programming error caught by the tests.
    pub fn from_data(
        name: &'static str,
        point_names: Vec<&'static str>,
        edges: &str,
        mills: &str,
        stones: u8,
        fly_with: Option<u8>,
    ) -> Rules {
        let n = point_names.len();
        assert!(n <= 32, "at most 32 points fit a Bits set");
        let lookup = |s: &str| -> usize {
            point_names
                .iter()
                .position(|&p| p == s)
                .unwrap_or_else(|| panic!("unknown point {s} in rules data"))
        };
        let mut adjacency = vec![0; n];
        for edge in edges.split_whitespace() {
            let (a, b) = edge.split_once('-').expect("edge a-b");
            let (a, b) = (lookup(a), lookup(b));
            adjacency[a] |= 1 << b;
            adjacency[b] |= 1 << a;
        }
        let mills: Vec<Bits> = mills
            .split_whitespace()
            .map(|m| m.split('-').fold(0, |acc, p| acc | 1 << lookup(p)))
            .collect();
        let mills_at = (0..n)
            .map(|p| mills.iter().copied().filter(|m| m >> p & 1 == 1).collect())
            .collect();
        let symmetries = automorphisms(&adjacency, &mills);
        let sym_tables = symmetries.iter().map(|perm| byte_tables(perm)).collect();
        Rules {
            name,
            board: "",
            diagonal_lines: false,
            point_names,
            adjacency,
            mills,
            mills_at,
            symmetries,
            sym_tables,
            stones,
            fly_with,
            fly_counts_hand: false,
            removal: RemovalPolicy::ProtectMillsUnlessAll,
            mill_removals: MillRemovals::One,
            move_in_placement: false,
            full_board: FullBoard::StuckLoses,
            first: Color::White,
        }
    }

    /// Number of points on the board.
    pub fn points(&self) -> usize {
        self.point_names.len()
    }

    /// The set of all points.
    pub fn all(&self) -> Bits {
        if self.points() == 32 {
            u32::MAX
        } else {
            (1 << self.points()) - 1
        }
    }

    /// The point called `name` (`a1`..`g7`), if the board has it.
    pub fn point(&self, name: &str) -> Option<u8> {
        self.point_names
            .iter()
            .position(|&p| p == name)
            .map(|p| p as u8)
    }

    /// The name of point `p`.
    pub fn name(&self, p: u8) -> &'static str {
        self.point_names[p as usize]
    }

    /// Image of the point set `set` under symmetry `s`: one look-up per byte.
    #[inline]
    pub fn map(&self, s: usize, set: Bits) -> Bits {
        let t = &self.sym_tables[s];
        t[0][(set & 0xff) as usize]
            | t[1][(set >> 8 & 0xff) as usize]
            | t[2][(set >> 16 & 0xff) as usize]
            | t[3][(set >> 24) as usize]
    }

    /// The index of the inverse of symmetry `s`.
    pub fn inverse(&self, s: usize) -> usize {
        let perm = &self.symmetries[s];
        (0..self.symmetries.len())
            .find(|&t| (0..self.points()).all(|p| self.symmetries[t][perm[p] as usize] == p as u8))
            .expect("symmetries form a group")
    }

    /// Whether `point` completes a mill of the stones `own` (which include `point`).
    #[inline]
    pub fn closes_mill(&self, own: Bits, point: u8) -> bool {
        self.mills_at[point as usize].iter().any(|&m| m & !own == 0)
    }

    /// The points where one more stone of `own` completes a mill: the missing point of
    /// every mill that `own` fills but for one point (occupied or not; callers mask
    /// the empty points). For an empty `p`, `closes_mill(own | 1 << p, p)` holds
    /// exactly when `p` is in this set. Branch-free over the mills.
    #[inline]
    pub fn closing_points(&self, own: Bits) -> Bits {
        self.mills.iter().fold(0, |acc, &m| {
            let missing = m & !own;
            acc | missing & ((missing.count_ones() == 1) as Bits).wrapping_neg()
        })
    }

    /// The stones of `own` that stand in a mill.
    #[inline]
    pub fn in_mills(&self, own: Bits) -> Bits {
        self.mills
            .iter()
            .filter(|&&m| own & m == m)
            .fold(0, |acc, &m| acc | m)
    }

    /// The opponent stones (of `opp`) that a completed mill may remove.
    #[inline]
    pub fn removable(&self, opp: Bits) -> Bits {
        match self.removal {
            RemovalPolicy::ProtectMillsUnlessAll => {
                let free = opp & !self.in_mills(opp);
                if free == 0 { opp } else { free }
            }
            RemovalPolicy::Always => opp,
        }
    }

    /// Whether a side with `on_board` stones and `in_hand` in hand moves by flying
    /// (when it moves: with stones in hand only under
    /// [`Rules::move_in_placement`]).
    #[inline]
    pub fn flies(&self, on_board: u32, in_hand: u8) -> bool {
        match self.fly_with {
            None => false,
            Some(f) if self.fly_counts_hand => on_board + in_hand as u32 == f as u32,
            Some(f) => in_hand == 0 && on_board == f as u32,
        }
    }

    /// Whether a side to move (with three stones or more) that has no legal ply,
    /// `empty` the empty points, draws: only on a full board under
    /// [`FullBoard::Draw`] (`morabaraba`); otherwise it has lost (rule 7 of
    /// `RULES.md`). The one home of that rule: [`value::Value::stuck`] and
    /// [`Position::stuck_value`](position::Position::stuck_value) turn it into a
    /// value for the builder, `verify`, the probe's checks, the searches, the
    /// protocol server and games.
    #[inline]
    pub fn stuck_draws(&self, empty: Bits) -> bool {
        empty == 0 && self.full_board == FullBoard::Draw
    }

    /// The empty points a stone at `from` may move to.
    #[inline]
    pub fn destinations(&self, from: u8, empty: Bits, fly: bool) -> Bits {
        if fly {
            empty
        } else {
            self.adjacency[from as usize] & empty
        }
    }

    /// Whether no stone of `side` has an empty neighbour (in `empty`): a side that
    /// must slide cannot move.
    pub fn cannot_slide(&self, side: Bits, empty: Bits) -> bool {
        let mut rest = side;
        while rest != 0 {
            let p = rest.trailing_zeros();
            if self.adjacency[p as usize] & empty != 0 {
                return false;
            }
            rest &= rest - 1;
        }
        true
    }

    /// The open mills of `side`: mills holding two of its stones whose third point
    /// is empty (in `empty`), so that filling it closes the mill.
    pub fn open_mills(&self, side: Bits, empty: Bits) -> impl Iterator<Item = Bits> + '_ {
        self.mills
            .iter()
            .copied()
            .filter(move |&m| (m & side).count_ones() == 2 && m & empty != 0)
    }

    /// The empty points that would close a mill of `side` (the third points of its
    /// open mills).
    pub fn mill_holes(&self, side: Bits, empty: Bits) -> Bits {
        self.open_mills(side, empty)
            .fold(0, |acc, m| acc | (m & empty))
    }

    /// The stones of `side` that stand in its open mills.
    pub fn open_mill_stones(&self, side: Bits, empty: Bits) -> Bits {
        self.open_mills(side, empty)
            .fold(0, |acc, m| acc | (m & side))
    }

    /// A stable fingerprint of everything that decides game values, written into
    /// database files and manifests so that a file built under other rules is
    /// refused: two rule sets answer the same game exactly when their fingerprints
    /// are equal. FNV-1a (64 bits) over a canonical text (`FORMAT.md`, "The rules
    /// fingerprint"): the board size, stones, flying threshold and removal policy,
    /// each point's name and neighbours, each mill; then one token for each field
    /// that differs from `standard`'s value, so that `standard`'s text (and every
    /// file written before these fields existed) is unchanged. The symmetries are
    /// not in it: they follow from the adjacency and mills.
    pub fn fingerprint(&self) -> u64 {
        fnv1a(&self.fingerprint_text())
    }

    /// The text [`Rules::fingerprint`] hashes.
    pub fn fingerprint_text(&self) -> String {
        self.text(Scope::Whole)
    }

    /// Whether `self` and `other` play the same game wherever the board cannot
    /// fill up: their rules differ at most in what a full board means (`twelve`
    /// and `morabaraba`).
    pub fn agrees_below_full_board(&self, other: &Rules) -> bool {
        self.text(Scope::BelowFullBoard) == other.text(Scope::BelowFullBoard)
    }

    /// Whether `self` and `other` play the same moving phase (no stone in hand)
    /// wherever the board cannot fill up: their rules differ at most in the
    /// stones a side starts with, the rules of the placement phase and what a
    /// full board means (`standard` and `lasker`, below ten stones a side).
    pub fn agrees_in_moving_phase(&self, other: &Rules) -> bool {
        self.text(Scope::MovingPhase) == other.text(Scope::MovingPhase)
    }

    /// The fingerprint's text, or the part of it that `scope` reads.
    fn text(&self, scope: Scope) -> String {
        let whole = scope == Scope::Whole;
        let placement = scope != Scope::MovingPhase;
        let mut text = format!("points={};", self.points());
        if placement {
            text.push_str(&format!("stones={};", self.stones));
        }
        text.push_str(&format!(
            "fly={:?};removal={:?};",
            self.fly_with, self.removal
        ));
        for (p, adj) in self.adjacency.iter().enumerate() {
            text.push_str(&format!("{}:{:x};", self.point_names[p], adj));
        }
        for m in &self.mills {
            text.push_str(&format!("m{m:x};"));
        }
        // Fields added after the first databases: a token only when the value is
        // not the standard one.
        // Which stones count for flying differs only while a hand holds stones.
        if placement && self.fly_counts_hand {
            text.push_str("flyhand;");
        }
        match self.mill_removals {
            MillRemovals::One => {}
        }
        if placement && self.move_in_placement {
            text.push_str("moveinplacement;");
        }
        // The full board needs every point filled: it cannot happen with fewer
        // stones, and then the rule changes no value.
        if whole && self.full_board == FullBoard::Draw && 2 * self.stones as usize >= self.points()
        {
            text.push_str("fullboard=draw;");
        }
        if self.first == Color::Black {
            text.push_str("first=black;");
        }
        text
    }
}

/// How much of the game a text of the rules describes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// All of it: the fingerprint.
    Whole,
    /// Every position that cannot reach a full board.
    BelowFullBoard,
    /// The moving phase below a full board, whatever the stones a side starts with.
    MovingPhase,
}

/// FNV-1a, 64 bits.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every permutation of the points that maps adjacency to adjacency and mills to
/// mills, in lexicographic order (the identity first). A backtracking search over
/// point images, point by point, checking each new point's edges to the points
/// already placed and each mill as soon as its three points are placed.
fn automorphisms(adjacency: &[Bits], mills: &[Bits]) -> Vec<Vec<u8>> {
    let n = adjacency.len();
    let is_mill = |set: Bits| mills.contains(&set);
    // The mills that are complete once points 0..=p are placed, by p.
    let mut mills_done: Vec<Vec<Bits>> = vec![Vec::new(); n];
    for &m in mills {
        mills_done[31 - m.leading_zeros() as usize].push(m);
    }
    let mut out = Vec::new();
    let mut image = vec![0u8; n];
    fn search(
        p: usize,
        used: Bits,
        image: &mut Vec<u8>,
        adjacency: &[Bits],
        mills_done: &[Vec<Bits>],
        is_mill: &dyn Fn(Bits) -> bool,
        out: &mut Vec<Vec<u8>>,
    ) {
        let n = adjacency.len();
        if p == n {
            out.push(image.clone());
            return;
        }
        for q in 0..n as u8 {
            if used >> q & 1 == 1 {
                continue;
            }
            let edges_kept =
                (0..p).all(|r| (adjacency[p] >> r & 1) == (adjacency[q as usize] >> image[r] & 1));
            if !edges_kept {
                continue;
            }
            image[p] = q;
            let mills_kept = mills_done[p].iter().all(|&m| {
                is_mill(
                    (0..=p)
                        .filter(|&r| m >> r & 1 == 1)
                        .fold(0, |acc, r| acc | 1 << image[r]),
                )
            });
            if mills_kept {
                search(
                    p + 1,
                    used | 1 << q,
                    image,
                    adjacency,
                    mills_done,
                    is_mill,
                    out,
                );
            }
        }
    }
    search(0, 0, &mut image, adjacency, &mills_done, &is_mill, &mut out);
    out
}

fn byte_tables(perm: &[u8]) -> [[Bits; 256]; 4] {
    let mut t = [[0; 256]; 4];
    for (byte, table) in t.iter_mut().enumerate() {
        for (v, slot) in table.iter_mut().enumerate() {
            *slot = (0..8)
                .filter(|b| v >> b & 1 == 1)
                .map(|b| byte * 8 + b)
                .filter(|&p| p < perm.len())
                .fold(0, |acc, p| acc | 1 << perm[p]);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_board_counts() {
        let r = Rules::standard();
        assert_eq!(r.points(), 24);
        let edges: u32 = r.adjacency.iter().map(|a| a.count_ones()).sum();
        assert_eq!(edges / 2, 32);
        assert_eq!(r.mills.len(), 16);
        assert!(r.mills.iter().all(|m| m.count_ones() == 3));
        assert_eq!(r.symmetries.len(), 16);
        assert_eq!(r.symmetries[0], (0..24).collect::<Vec<u8>>());
        // Every point lies on exactly two mills.
        assert!(r.mills_at.iter().all(|m| m.len() == 2));
    }

    #[test]
    fn symmetries_are_distinct_automorphisms() {
        let r = Rules::standard();
        let mut seen = std::collections::HashSet::new();
        for (s, perm) in r.symmetries.iter().enumerate() {
            assert!(seen.insert(perm.clone()), "symmetry {s} repeats");
            for p in 0..24u8 {
                let adj = r.map(s, r.adjacency[p as usize]);
                assert_eq!(adj, r.adjacency[perm[p as usize] as usize]);
            }
            let mut mills: Vec<Bits> = r.mills.iter().map(|&m| r.map(s, m)).collect();
            let mut orig = r.mills.clone();
            mills.sort();
            orig.sort();
            assert_eq!(mills, orig);
            let inv = r.inverse(s);
            assert_eq!(r.map(inv, r.map(s, 0xabcdef)), 0xabcdef);
        }
    }

    /// `closing_points` (every point at once) and `closes_mill` (one point) are the
    /// same rule, on sets of every size from a fixed pseudo-random stream.
    #[test]
    fn closing_points_agree_with_closes_mill() {
        let r = Rules::standard();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let own = (x as Bits) & (x >> 32) as Bits & r.all();
            let own = if x & 1 == 1 { own } else { x as Bits & r.all() };
            let closing = r.closing_points(own);
            for p in 0..24u8 {
                if own >> p & 1 == 0 {
                    let closes = r.closes_mill(own | 1 << p, p);
                    assert_eq!(closing >> p & 1 == 1, closes, "{own:#x} point {p}");
                }
            }
        }
    }

    #[test]
    fn fingerprint_is_stable_and_discriminating() {
        let r = Rules::standard();
        assert_eq!(r.fingerprint(), r.fingerprint());
        let mut other = r.clone();
        other.fly_with = None;
        assert_ne!(r.fingerprint(), other.fingerprint());
    }

    /// The group sizes of the three boards, each computed from adjacency and mills.
    #[test]
    fn symmetry_groups_of_the_boards() {
        for name in Rules::names() {
            let r = Rules::by_name(name).unwrap();
            assert_eq!(r.symmetries.len(), 16, "{name}");
            assert_eq!(r.symmetries[0], (0..r.points() as u8).collect::<Vec<u8>>());
        }
    }

    #[test]
    fn names_and_reduced_forms() {
        for name in Rules::names() {
            let r = Rules::by_name(name).unwrap();
            assert_eq!(r.name, name);
            let own = format!("{name}-{}", r.stones);
            assert!(std::ptr::eq(Rules::by_name(&own).unwrap(), r), "{own}");
            let four = Rules::by_name(&format!("{name}-4")).unwrap();
            assert_eq!((four.name, four.stones), (&*format!("{name}-4"), 4));
            assert!(std::ptr::eq(four.reduced(r.stones), r));
            assert!(std::ptr::eq(
                Rules::by_name(&format!("{name}-4")).unwrap(),
                four
            ));
        }
        assert_eq!(Rules::by_name("six-8").unwrap().stones, 8);
        for bad in [
            "six-9",
            "standard-13",
            "standard-2",
            "no-flying",
            "flying-5",
            "standard-",
            "standard-x",
        ] {
            let ok = Rules::parse(bad);
            assert_eq!(ok.is_ok(), bad == "no-flying", "{bad}");
        }
        let err = Rules::parse("sixx").unwrap_err().to_string();
        assert!(
            err.contains("standard, lasker, morabaraba, twelve, no-flying, six"),
            "{err}"
        );
        let err = Rules::parse("six-9").unwrap_err().to_string();
        assert!(err.contains("from 3 to 8"), "{err}");
    }
}
