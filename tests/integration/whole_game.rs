//! The whole game in tables, on reduced games (the standard board with 3, 4 and 5
//! stones per side) that build in seconds: every stored placement value against an
//! independent solver, against the opening search, and against its children
//! (`verify`); probes of both phases; the build's plan, resume and refusals.

use crate::common::Rng as Mix;
use crate::common::Scratch;
use crate::common::oracle;

use millbase::search::opening::{Opening, OpeningOptions};
use millbase::table::build::{BuildOptions, BuildPhase, Selection, build, open_sector};
use millbase::table::index::Index;
use millbase::table::probe::{ProbeError, Tablebase};
use millbase::table::sector::Sector;
use millbase::{Color, Position, Rules, Value, table::verify};
use oracle::cyclic::{Cyclic, GameRules};
use oracle::placement::{Placement, Val};
use oracle::{Board, Oracle};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn build_game(dir: &Path, stones: u8, phase: BuildPhase, selection: Selection) {
    let opts = BuildOptions::quiet(dir.to_path_buf(), selection, phase);
    build(Rules::with_stones(stones), &opts).unwrap();
}

/// The whole game with `stones` per side, built once per test binary (4 and 5
/// stones shared with other modules).
fn game(stones: u8) -> &'static Path {
    match stones {
        4 => return crate::common::standard_4(),
        5 => return crate::common::standard_5(),
        _ => {}
    }
    static DIRS: [OnceLock<PathBuf>; 6] = [const { OnceLock::new() }; 6];
    DIRS[stones as usize].get_or_init(|| {
        let dir = crate::common::scratch::lasting(&format!("whole-{stones}"));
        build_game(&dir, stones, BuildPhase::All, Selection::All);
        dir
    })
}

/// The moving-phase oracle (3-3, 3-4, 4-3), solved once.
fn moving_oracle() -> &'static Oracle {
    crate::common::oracle()
}

fn same(v: Value, want: Val) -> bool {
    match v {
        Value::Win(n) => want == ('W', n),
        Value::Loss(n) => want == ('L', n),
        Value::Draw => want.0 == 'D',
    }
}

/// Every slot of every placement sector of `dir` against the independent solver.
fn check_against_oracle(dir: &Path, stones: u8, placement: &Placement) {
    check_against_rules(dir, Rules::with_stones(stones), placement)
}

/// As [`check_against_oracle`], under `rules`.
fn check_against_rules(dir: &Path, rules: &'static Rules, placement: &Placement) {
    let idx = Index::for_rules(rules);
    let sectors = Sector::placement_sectors(rules);
    let mut checked = 0u64;
    let mut bad = Vec::new();
    for &s in &sectors {
        let codes = open_sector(dir, idx, s).unwrap().read_all().unwrap();
        let (k, l) = s.counts();
        let wrong: Vec<String> = (0..codes.len())
            .into_par_iter()
            .filter_map(|i| {
                let (own, opp) = idx.position(k, l, i as u64);
                let want = placement.value(own, opp, s.hk as u32, s.hl as u32);
                let got = Value::from_code(codes[i]);
                (!same(got, want)).then(|| format!("{s} slot {i}: table {got}, oracle {want:?}"))
            })
            .collect();
        checked += codes.len() as u64;
        bad.extend(wrong);
    }
    eprintln!(
        "{} sectors, {checked} slots checked against {} raw positions: {} mismatches",
        sectors.len(),
        placement.positions(),
        bad.len()
    );
    assert!(
        bad.is_empty(),
        "first mismatches: {:?}",
        &bad[..bad.len().min(10)]
    );
    assert!(checked > 0);
}

#[test]
fn three_stones_whole_game_equals_the_independent_solver() {
    let dir = game(3);
    let o = moving_oracle();
    let board = Board::new();
    let placement = Placement::solve(&board, 3, &|own, opp| o.value(own, opp));
    check_against_oracle(dir, 3, &placement);
    // And the game's value, read from the table, is the oracle's.
    let tb = Tablebase::open(dir).unwrap();
    let start = Position::start(tb.rules());
    assert!(same(tb.probe(&start).unwrap(), placement.value(0, 0, 3, 3)));
}

#[test]
fn four_stones_whole_game_equals_the_independent_solver() {
    let dir = game(4);
    // The moving-phase oracle covers 3-3, 3-4 and 4-3; 4-4 comes from the files,
    // each of whose values `verify` recomputes from its successors.
    let rules = Rules::with_stones(4);
    let idx = Index::for_rules(rules);
    let check = verify::check_subspace(dir, idx, 4, 4).unwrap();
    assert_eq!(check.mismatches, 0);
    let tb = Tablebase::open(dir).unwrap();
    assert!(
        std::ptr::eq(tb.rules(), rules),
        "the manifest names the rules"
    );
    let o = moving_oracle();
    let leaf = |own: u32, opp: u32| -> Val {
        if own.count_ones() == 4 && opp.count_ones() == 4 {
            match tb.probe_sets(own, opp).unwrap() {
                Value::Win(n) => ('W', n),
                Value::Loss(n) => ('L', n),
                Value::Draw => ('D', 0),
            }
        } else {
            o.value(own, opp)
        }
    };
    let placement = Placement::solve(&Board::new(), 4, &leaf);
    check_against_oracle(dir, 4, &placement);
}

/// Random placement positions of every ply of the 5-stone game (many with captures):
/// the table's value and every ply's value equal the opening search's, which shares
/// nothing with the placement solver but the moving-phase files at its leaves.
#[test]
fn five_stones_tables_equal_the_opening_search() {
    let dir = game(5);
    let tb = Tablebase::open(dir).unwrap();
    let rules = tb.rules();
    assert!(tb.has_placement());
    let mut search = Opening::new(
        &tb,
        OpeningOptions {
            table_mib: 16,
            parallel: false,
            use_tables: false,
        },
    )
    .unwrap();
    let mut mix = Mix::new(7);
    let (mut per_ply, mut with_captures) = ([0u32; 10], 0);
    for _ in 0..400 {
        let mut pos = Position::start(rules);
        let plies = mix.below(10);
        for _ in 0..plies {
            let legal = pos.legal_plies(rules);
            if legal.is_empty() || pos.hand == [0, 0] {
                break;
            }
            pos.make(rules, legal[mix.below(legal.len())]);
        }
        if pos.hand == [0, 0] || pos.is_over(rules) {
            continue;
        }
        let ply = (2 * rules.stones - pos.hand[0] - pos.hand[1]) as usize;
        per_ply[ply] += 1;
        with_captures +=
            (pos.board[0].count_ones() + pos.board[1].count_ones() < ply as u32) as u32;
        assert!(tb.covers(&pos));
        let table = tb.probe(&pos).unwrap();
        let searched = search.value(&pos).unwrap();
        assert_eq!(table, searched, "{pos:?}");
        assert_eq!(
            tb.moves(&pos).unwrap(),
            search.moves(&pos).unwrap(),
            "{pos:?}"
        );
    }
    eprintln!("positions per ply {per_ply:?}, {with_captures} after captures");
    assert!(
        per_ply.iter().all(|&n| n > 0),
        "every ply sampled: {per_ply:?}"
    );
    assert!(
        with_captures > 10,
        "captures in placement sampled: {with_captures}"
    );
}

#[test]
fn verify_checks_placement_sectors_and_finds_a_wrong_value() {
    let dir = Scratch::new("verify-bad");
    build_game(&dir, 4, BuildPhase::All, Selection::All);
    let rules = Rules::with_stones(4);
    let idx = Index::for_rules(rules);
    let checks = verify::check(&dir, idx, None).unwrap();
    let placement = checks.iter().filter(|c| !c.sector.is_moving()).count();
    assert_eq!(placement, Sector::placement_sectors(rules).len());
    assert!(checks.iter().all(|c| c.mismatches == 0));
    // Rewrite one sector with one value changed: verify must name it.
    let s = Sector {
        k: 2,
        l: 2,
        hk: 1,
        hl: 1,
    };
    let file = open_sector(&dir, idx, s).unwrap();
    let mut codes = file.read_all().unwrap();
    let h = file.header().clone();
    drop(file);
    let i = codes.iter().position(|&c| c != 0).unwrap();
    codes[i] = 0;
    // The header's counts, with the longest win and loss of the changed codes (the
    // writer checks those against the codes).
    let changed = millbase::rules::value::Counts::of_codes(&codes);
    let meta = millbase::table::format::SubspaceMeta {
        k: 2,
        l: 2,
        hands: [1, 1],
        counts: millbase::rules::value::Counts {
            longest_win: changed.longest_win,
            longest_loss: changed.longest_loss,
            ..h.meta.counts
        },
        ..h.meta
    };
    millbase::table::format::write_subspace(&dir.join(s.file_name()), &meta, &codes).unwrap();
    let check = verify::check(&dir, idx, Some(s)).unwrap();
    assert!(check[0].mismatches >= 1, "the changed slot is found");
}

#[test]
fn placement_needs_the_moving_phase_and_names_what_is_missing() {
    let dir = Scratch::new("no-moving");
    let opts = BuildOptions::quiet(dir.to_path_buf(), Selection::All, BuildPhase::Placement);
    let err = build(Rules::with_stones(4), &opts).unwrap_err().to_string();
    assert!(
        err.contains("4-4") && err.contains("--phase moving"),
        "{err}"
    );
    // Moving phase alone, then placement alone: the same files as one build.
    build_game(&dir, 4, BuildPhase::Moving, Selection::All);
    assert!(!dir.join("0-0-4-4.mdb").exists());
    build_game(&dir, 4, BuildPhase::Placement, Selection::All);
    for s in Sector::placement_sectors(Rules::with_stones(4)) {
        let name = s.file_name();
        assert_eq!(
            std::fs::read(dir.join(&name)).unwrap(),
            std::fs::read(game(4).join(&name)).unwrap(),
            "{name} is the same built in two steps"
        );
    }
}

#[test]
fn resume_rebuilds_only_what_is_missing_or_damaged() {
    let dir = Scratch::new("resume");
    build_game(&dir, 4, BuildPhase::All, Selection::All);
    let victim = Sector {
        k: 3,
        l: 3,
        hk: 1,
        hl: 0,
    };
    let path = dir.join(victim.file_name());
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0xff;
    std::fs::write(&path, &bad).unwrap();
    std::fs::remove_file(dir.join("0-0-4-4.mdb")).unwrap();
    std::fs::write(dir.join("1-1-3-3.mdb.tmp"), b"half written").unwrap();
    let reports = build(
        Rules::with_stones(4),
        &BuildOptions::quiet(dir.to_path_buf(), Selection::All, BuildPhase::All),
    )
    .unwrap();
    let rebuilt: Vec<String> = reports
        .iter()
        .filter(|r| !r.skipped)
        .map(|r| r.name())
        .collect();
    assert_eq!(rebuilt, ["3-3-1-0", "0-0-4-4"]);
    assert_eq!(std::fs::read(&path).unwrap(), good);
    assert!(!dir.join("1-1-3-3.mdb.tmp").exists());
}

#[test]
fn only_a_sector_builds_it_and_what_it_leads_into() {
    let dir = Scratch::new("only");
    build_game(&dir, 4, BuildPhase::Moving, Selection::All);
    let target = Sector {
        k: 2,
        l: 2,
        hk: 2,
        hl: 2,
    };
    build_game(&dir, 4, BuildPhase::All, Selection::Sector(target));
    let tb = Tablebase::open(&dir).unwrap();
    assert!(tb.has_sector(target));
    assert!(!tb.has_sector(Sector {
        k: 0,
        l: 0,
        hk: 4,
        hl: 4
    }));
    // A position of an earlier ply is not covered: a clear error naming its sector.
    let start = Position::start(tb.rules());
    match tb.probe(&start) {
        Err(ProbeError::Missing { subspace, hint, .. }) => {
            assert_eq!(subspace, "0-0-4-4");
            assert!(hint.contains("--phase placement"), "{hint}");
        }
        other => panic!("expected a missing sector, got {other:?}"),
    }
}

#[test]
fn sector_counts_of_the_standard_game() {
    let rules = Rules::standard();
    let idx = Index::standard();
    let sectors = Sector::placement_sectors(rules);
    assert_eq!(sectors.len(), 305);
    let slots: u64 = sectors
        .iter()
        .map(|s| idx.size(s.k as u32, s.l as u32))
        .sum();
    // Malom counts 449 sectors and 18.67 G slots with an index of this shape; see
    // docs/FORMAT.md for why ours are fewer.
    assert_eq!(slots, 18_654_421_599);
}

/// The worked example of docs/FORMAT.md ("Computing a slot"), number by number.
#[test]
fn the_worked_example_of_the_format_page() {
    let rules = Rules::standard();
    let idx = Index::standard();
    let game = millbase::Game::parse(rules, "startpos moves d6 d5 a7 c4").unwrap();
    let pos = game.position();
    assert_eq!(Sector::of(pos).name(), "2-2-7-7");
    assert_eq!((pos.own(), pos.opp()), (0x80_0100, 0x41));
    let c = idx.canon(pos.own());
    assert_eq!((c.class, c.rep, c.stab), (7, 0x102, 0));
    let mapped = rules.map(c.sym as usize, pos.opp());
    assert_eq!(mapped, 0x5_0000);
    assert_eq!(
        millbase::table::index::pext(mapped, rules.all() & !c.rep),
        0x1_4000
    );
    assert_eq!(idx.per_class(2, 2), 231);
    assert_eq!(idx.index(pos.own(), pos.opp()), 1751);
    let classes: Vec<u64> = (0..=9).map(|k| idx.classes(k)).collect();
    assert_eq!(
        classes,
        [1, 4, 30, 158, 757, 2830, 8774, 22188, 46879, 82880]
    );
}

/// Builds the whole game of rule set `name` into a fresh directory.
fn build_named(name: &str) -> Scratch {
    let dir = Scratch::new(name);
    let opts = BuildOptions::quiet(dir.to_path_buf(), Selection::All, BuildPhase::All);
    build(Rules::by_name(name).unwrap(), &opts).unwrap();
    dir
}

/// Every slot of the moving-phase subspaces 3-3, 3-4 and 4-3 of `dir` against the
/// oracle solved on the rule set's own board.
fn check_moving_against_oracle(dir: &Path, rules: &'static Rules, o: &Oracle) {
    let idx = Index::for_rules(rules);
    let mut bad = Vec::new();
    let max = rules.stones as u32;
    for (k, l) in [(3u32, 3u32), (3, 4), (4, 3)] {
        if k.max(l) > max {
            continue;
        }
        let codes = open_sector(dir, idx, Sector::moving(k as u8, l as u8))
            .unwrap()
            .read_all()
            .unwrap();
        for (i, &code) in codes.iter().enumerate() {
            let (own, opp) = idx.position(k, l, i as u64);
            let want = o.value(own, opp);
            let got = Value::from_code(code);
            if !same(got, want) {
                bad.push(format!("{k}-{l} slot {i}: table {got}, oracle {want:?}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{}: {:?}",
        rules.name,
        &bad[..bad.len().min(10)]
    );
}

/// `no-flying-N`, `six-N`, `twelve-3` and `morabaraba-3`: the builder's files,
/// moving phase (3-3, 3-4, 4-3) and every placement sector, against the independent
/// solver on the rule set's own board and flying rule; 4-4 is checked by `verify`.
#[test]
fn variants_whole_game_equal_the_independent_solver() {
    let games: [(&str, &[u8]); 4] = [
        ("no-flying", &[3, 4]),
        ("six", &[3, 4]),
        ("twelve", &[3]),
        ("morabaraba", &[3]),
    ];
    // `twelve` and `morabaraba` differ only on a full board, which no reduced game
    // fills: one oracle answers both, of three stones a side (their games here).
    let mut twelve: Option<Oracle> = None;
    for (base, counts) in games {
        let board = Board::of(base);
        let own;
        let o = match base {
            "twelve" | "morabaraba" => {
                &*twelve.get_or_insert_with(|| Oracle::solve_up_to(Board::of(base), 3))
            }
            _ => {
                own = Oracle::solve_for(Board::of(base));
                &own
            }
        };
        for &stones in counts {
            let name = format!("{base}-{stones}");
            let rules = Rules::by_name(&name).unwrap();
            let dir = build_named(&name);
            check_moving_against_oracle(&dir, rules, o);
            let tb = Tablebase::open(&dir).unwrap();
            assert!(std::ptr::eq(tb.rules(), rules), "the manifest names {name}");
            if stones == 4 {
                let check = verify::check_subspace(&dir, Index::for_rules(rules), 4, 4).unwrap();
                assert_eq!(check.mismatches, 0, "{name} 4-4");
            }
            let leaf = |own: u32, opp: u32| -> Val {
                if own.count_ones() == 4 && opp.count_ones() == 4 {
                    match tb.probe_sets(own, opp).unwrap() {
                        Value::Win(n) => ('W', n),
                        Value::Loss(n) => ('L', n),
                        Value::Draw => ('D', 0),
                    }
                } else {
                    o.value(own, opp)
                }
            };
            let start = Position::start(rules);
            let value = tb.probe(&start).unwrap();
            // The placement oracle of a four-stone game on 24 points takes minutes:
            // there the moving phase above stands against the oracle, and the
            // placement sectors against their successors (`verify`).
            if stones == 3 || board.n <= 16 {
                let placement = Placement::solve(&board, stones as u32, &leaf);
                check_against_rules(&dir, rules, &placement);
                assert!(same(
                    value,
                    placement.value(0, 0, stones as u32, stones as u32)
                ));
            } else {
                for s in Sector::placement_sectors(rules) {
                    let check = verify::check_sector(&dir, Index::for_rules(rules), s).unwrap();
                    assert_eq!(check.mismatches, 0, "{name} {s:?}");
                }
            }
            eprintln!("{name}: start {value}");
        }
    }
}

/// The rules the builder cannot solve (a game that Black begins, which no rule set
/// of RULES.md is) are refused with the reason, before anything is written.
#[test]
fn unsupported_rules_are_refused() {
    let mut black = Rules::by_name("standard-3").unwrap().clone();
    black.first = Color::Black;
    let black: &'static Rules = Box::leak(Box::new(black));
    let dir = Scratch::new("refused-black-first");
    let opts = BuildOptions::quiet(dir.join("db"), Selection::All, BuildPhase::All);
    let err = build(black, &opts).unwrap_err().to_string();
    assert!(err.contains("cannot build the rules"), "{err}");
    assert!(err.contains("Black moves first"), "{err}");
    assert!(!dir.join("db").exists(), "nothing written");
}

fn value_of(v: Val) -> Value {
    match v {
        ('W', n) => Value::Win(n),
        ('L', n) => Value::Loss(n),
        _ => Value::Draw,
    }
}

/// The solver of placement phases that can repeat (forward value iteration over
/// every count of stones on board and in hand) against the acyclic one (backward
/// induction by ply), on `standard-3`, where placement cannot repeat: every position
/// both solve has the same value and distance.
#[test]
fn cyclic_placement_solver_equals_the_acyclic_one() {
    let o = moving_oracle();
    let board = Board::of("standard");
    let leaf = |own: u32, opp: u32| o.value(own, opp);
    let acyclic = Placement::solve(&board, 3, &leaf);
    let cyclic = Cyclic::solve(&board, GameRules::of("standard-3"), &leaf);
    let mut compared = 0;
    for ((k, l, hk, hl), own, opp) in cyclic.positions() {
        if acyclic.has(k, l, hk, hl) {
            let want = acyclic.value(own, opp, hk, hl);
            assert_eq!(
                cyclic.value(own, opp, hk, hl),
                Some(want),
                "{own:#x} {opp:#x} {hk} {hl}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, acyclic.positions());
}

/// `lasker-3` (a side with stones in hand may move a stone instead of placing, and
/// flies when it has three stones on board and in hand): every placement position
/// of the independent solver, raw, holds the best of its plies by the crate's own
/// rules ([`Position::legal_plies`], [`Position::after`]), each ply's end valued by
/// the same solver, the moving-phase oracle or the end of the game; no ply is
/// `Loss(0)`. Those equations have one solution, the game's values, so the solver
/// and the crate's rules agree on Lasker. Then the builder's `lasker-3`: every slot
/// of every sector (moving phase and placement) equals the solver's value and
/// distance, and the start's value is the solver's. `lasker-4` (whose 4-4 and
/// four-stone placement tables are beyond the raw solver) is built and every value
/// checked against its plies' by `verify`.
#[test]
fn lasker_whole_game_equals_the_independent_solver() {
    let rules = Rules::by_name("lasker-3").unwrap();
    let o = moving_oracle();
    let leaf = |own: u32, opp: u32| o.value(own, opp);
    let cyclic = Cyclic::solve(&Board::of("lasker"), GameRules::of("lasker-3"), &leaf);
    let positions = cyclic.positions();
    let moved: usize = positions
        .par_iter()
        .map(|&((_, _, hk, hl), own, opp)| {
            let pos = Position {
                board: [own, opp],
                hand: [hk as u8, hl as u8],
                to_move: Color::White,
                pending_removal: false,
            };
            let value_after = |child: Position| -> Value {
                if child.lost_on_material() {
                    return Value::Loss(0);
                }
                let (a, b) = (child.own(), child.opp());
                let [w, bl] = child.hand;
                let v = if w == 0 && bl == 0 {
                    o.value(a, b)
                } else {
                    cyclic
                        .value(a, b, bl as u32, w as u32)
                        .expect("the child is solved")
                };
                value_of(v)
            };
            let plies = pos.legal_plies(rules);
            let want = plies
                .iter()
                .map(|&p| Value::of_ply(Some(value_after(pos.after(rules, p)))))
                .max_by(|a, b| a.cmp_goodness(*b))
                .unwrap_or_else(|| pos.stuck_value(rules));
            let got = value_of(cyclic.value(own, opp, hk, hl).unwrap());
            assert_eq!(got, want, "{own:#x} {opp:#x} hands {hk} {hl}");
            plies.iter().filter(|p| !p.is_placement() && hk > 0).count()
        })
        .sum();
    // Moves with stones in hand were among the plies.
    assert!(moved > 0);
    let start = cyclic.value(0, 0, 3, 3).unwrap();
    eprintln!(
        "lasker-3: start {start:?}, {} positions, {} passes",
        positions.len(),
        cyclic.passes
    );

    let dir = build_named("lasker-3");
    check_moving_against_oracle(&dir, rules, o);
    let idx = Index::for_rules(rules);
    let mut checked = 0;
    for s in Sector::placement_sectors(rules) {
        let codes = open_sector(&dir, idx, s).unwrap().read_all().unwrap();
        let (k, l) = s.counts();
        let wrong: Vec<String> = (0..codes.len())
            .into_par_iter()
            .filter_map(|i| {
                let (own, opp) = idx.position(k, l, i as u64);
                let want = cyclic.value(own, opp, s.hk as u32, s.hl as u32).unwrap();
                let got = Value::from_code(codes[i]);
                (!same(got, want)).then(|| format!("{s} slot {i}: table {got}, oracle {want:?}"))
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "first mismatches: {:?}",
            &wrong[..wrong.len().min(10)]
        );
        checked += codes.len();
    }
    assert!(checked > 0);
    let tb = Tablebase::open(&dir).unwrap();
    assert!(same(tb.probe(&Position::start(rules)).unwrap(), start));
    drop(dir);
    // Without the placement sectors the opening search, which assumes placement
    // positions never repeat, refuses to search instead of recursing forever.
    let dir = Scratch::new("lasker-3-moving");
    let opts = BuildOptions::quiet(dir.to_path_buf(), Selection::All, BuildPhase::Moving);
    build(rules, &opts).unwrap();
    let tb = Tablebase::open(&dir).unwrap();
    let mut opening = Opening::new(&tb, OpeningOptions::default()).unwrap();
    let err = opening
        .solve(&Position::start(rules))
        .unwrap_err()
        .to_string();
    assert!(err.contains("placement positions repeat"), "{err}");
    drop(dir);

    let rules = Rules::by_name("lasker-4").unwrap();
    let dir = build_named("lasker-4");
    let checks = verify::check(&dir, Index::for_rules(rules), None).unwrap();
    assert_eq!(checks.len(), 4 + Sector::placement_sectors(rules).len());
    for c in &checks {
        assert_eq!(c.mismatches, 0, "lasker-4 {}: {:?}", c.sector, c.examples);
    }
    let tb = Tablebase::open(&dir).unwrap();
    eprintln!(
        "lasker-4: start {}",
        tb.probe(&Position::start(rules)).unwrap()
    );
}
