use super::warm::{WarmOptions, WarmProgress};
use super::*;
use crate::mix::splitmix64;
use crate::rules::Bits;
use crate::rules::position::Color;
use crate::rules::position::Ply;
use crate::rules::value::Counts;
use crate::rules::value::{Value, Wdl};
use crate::scratch::Scratch;
use crate::table::format::FormatError;
use crate::table::format::{SubspaceMeta, WriteOptions, write_subspace_with};
use crate::table::index::Index;
use std::fs;
use std::path::Path;

/// A synthetic code for slot `i` of `k-l`: a fixed pseudo-random value.
fn synthetic(k: u32, l: u32, i: u64) -> u16 {
    let r = splitmix64(i ^ (k as u64) << 40 ^ (l as u64) << 48);
    match r % 10 {
        0..=1 => 0,
        2..=6 => 2 * (r >> 8 & 15) as u16 + 2, // Win(1..31)
        _ => 2 * (r >> 8 & 15) as u16 + 1,     // Loss(0..30)
    }
}

fn write_synthetic(dir: &Path, k: u32, l: u32) {
    write_synthetic_with(dir, k, l, &WriteOptions::default());
}

fn write_synthetic_with(dir: &Path, k: u32, l: u32, opts: &WriteOptions) {
    let idx = Index::standard();
    let codes: Vec<u16> = (0..idx.size(k, l)).map(|i| synthetic(k, l, i)).collect();
    let meta = SubspaceMeta {
        k,
        l,
        hands: [0, 0],
        fingerprint: Rules::standard().fingerprint(),
        variant: "standard".into(),
        counts: Counts::of_codes(&codes),
    };
    let opts = WriteOptions {
        wdl_level: 1,
        depth_level: 1,
        ..opts.clone()
    };
    write_subspace_with(
        &dir.join(crate::table::dir::manifest::file_name(k, l)),
        &meta,
        &codes,
        &opts,
    )
    .unwrap();
}

/// A fresh database directory, removed when dropped.
fn temp_db(name: &str) -> Scratch {
    Scratch::new(&format!("probe-{name}"))
}

/// A directory with the closed family 3-3, 3-4, 4-3 of synthetic files.
fn synthetic_db(name: &str) -> Scratch {
    let d = temp_db(name);
    for (k, l) in [(3, 3), (3, 4), (4, 3)] {
        write_synthetic(&d, k, l);
    }
    d
}

fn random_position(r: &mut u64, k: u32, l: u32) -> Position {
    let mut take = |n: u32, taken: Bits| {
        let mut set: Bits = 0;
        while set.count_ones() < n {
            *r = splitmix64(*r);
            let p = (*r % 24) as u32;
            if (taken | set) >> p & 1 == 0 {
                set |= 1 << p;
            }
        }
        set
    };
    let own = take(k, 0);
    let opp = take(l, own);
    Position::moving(
        if *r & 1 == 0 {
            Color::White
        } else {
            Color::Black
        },
        own,
        opp,
    )
}

#[test]
fn probes_read_the_canonical_slot() {
    let db = synthetic_db("canonical");
    let tb = Tablebase::open(&db).unwrap();
    assert_eq!(tb.available(), vec![(3, 3), (3, 4), (4, 3)]);
    let idx = Index::standard();
    let mut r = 1;
    for _ in 0..2000 {
        for (k, l) in [(3, 3), (3, 4), (4, 3)] {
            let pos = random_position(&mut r, k, l);
            let code = synthetic(k, l, idx.index(pos.own(), pos.opp()));
            assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
            assert_eq!(tb.probe_wdl(&pos).unwrap(), Value::from_code(code).wdl());
            // Symmetric images probe alike.
            let s = (r % 16) as usize;
            assert_eq!(
                tb.probe(&pos.transformed(tb.rules(), s)).unwrap(),
                Value::from_code(code)
            );
        }
    }
}

#[test]
fn moves_are_successor_values_best_first() {
    let db = synthetic_db("moves");
    let tb = Tablebase::open(&db).unwrap();
    let rules = tb.rules();
    let mut r = 7;
    let mut saw_capture_win = false;
    for _ in 0..300 {
        for (k, l) in [(3, 3), (3, 4), (4, 3)] {
            let pos = random_position(&mut r, k, l);
            let moves = tb.moves(&pos).unwrap();
            assert_eq!(moves.len(), pos.legal_plies(rules).len());
            for w in moves.windows(2) {
                assert!(w[0].1.cmp_goodness(w[1].1).is_ge());
            }
            for &(ply, v) in &moves {
                let child = pos.after(rules, ply);
                if child.lost_on_material() {
                    assert_eq!(v, Value::Win(1));
                    saw_capture_win = true;
                } else {
                    assert_eq!(v, tb.probe(&child).unwrap().parent());
                }
            }
            // Equal values keep generation order.
            let legal = pos.legal_plies(rules);
            for w in moves.windows(2) {
                if w[0].1 == w[1].1 {
                    let a = legal.iter().position(|&p| p == w[0].0);
                    let b = legal.iter().position(|&p| p == w[1].0);
                    assert!(a < b);
                }
            }
            let best = tb.best_ply(&pos).unwrap();
            assert_eq!(best, moves.first().copied());
            let rnd = tb.best_ply_random(&pos, r).unwrap();
            if let (Some((_, bv)), Some((_, rv))) = (best, rnd) {
                assert_eq!(bv, rv);
            }
        }
    }
    assert!(saw_capture_win);
}

#[test]
fn random_choice_covers_all_ties() {
    let db = synthetic_db("ties");
    let tb = Tablebase::open(&db).unwrap();
    let mut r = 3;
    // Find a position with several equally best plies.
    for _ in 0..1000 {
        let pos = random_position(&mut r, 3, 3);
        let moves = tb.moves(&pos).unwrap();
        let ties = moves.iter().take_while(|m| m.1 == moves[0].1).count();
        if ties >= 3 {
            let mut seen = std::collections::HashSet::new();
            for seed in 0..200 {
                seen.insert(tb.best_ply_random(&pos, seed).unwrap().unwrap().0);
            }
            assert_eq!(seen.len(), ties);
            return;
        }
    }
    panic!("no position with three equally best plies found");
}

#[test]
fn pending_removal_is_valued_through_removals() {
    let db = synthetic_db("removal");
    let tb = Tablebase::open(&db).unwrap();
    let rules = tb.rules();
    let mut r = 11;
    let mut checked = 0;
    while checked < 50 {
        let pos = random_position(&mut r, 4, 3);
        for ply in pos.legal_plies(rules).into_iter().filter(|p| p.removes()) {
            let mut half = pos;
            half.make(
                rules,
                Ply {
                    remove: crate::rules::position::NONE,
                    ..ply
                },
            );
            assert!(half.pending_removal);
            let v = tb.probe(&half).unwrap();
            assert_eq!(v, tb.moves(&half).unwrap()[0].1);
            assert_eq!(tb.probe_wdl(&half).unwrap(), v.wdl());
            checked += 1;
        }
    }
}

#[test]
fn errors_for_missing_illegal_placement_and_finished() {
    let db = synthetic_db("errors");
    let tb = Tablebase::open(&db).unwrap();
    let rules = tb.rules();
    let mut r = 5;
    let pos = random_position(&mut r, 5, 4);
    match tb.probe(&pos) {
        Err(ProbeError::Missing { subspace, hint, .. }) => {
            assert_eq!(subspace, "5-4");
            assert!(hint.contains("--only 5-4"), "{hint}");
        }
        other => panic!("{other:?}"),
    }
    let start = Position::start(rules);
    // No placement sectors here: the start position's sector is named as missing.
    match tb.probe(&start) {
        Err(ProbeError::Missing { subspace, hint, .. }) => {
            assert_eq!(subspace, "0-0-9-9");
            assert!(hint.contains("--phase placement"), "{hint}");
        }
        other => panic!("{other:?}"),
    }
    let mut bad = random_position(&mut r, 3, 3);
    bad.board[0] |= bad.board[1] & bad.board[1].wrapping_neg();
    assert!(matches!(tb.probe(&bad), Err(ProbeError::Illegal(_))));
    assert!(matches!(
        tb.probe_sets(0b111, 0b111),
        Err(ProbeError::Illegal(_))
    ));
    assert!(matches!(
        tb.probe_sets(1 << 30 | 0b11, 0b111 << 8),
        Err(ProbeError::Illegal(_))
    ));
    assert_eq!(tb.probe_sets(0b11, 0b111 << 8).unwrap(), Value::Loss(0));
    assert!(matches!(
        tb.probe_sets(0b111 << 8, 0b11),
        Err(ProbeError::GameOver)
    ));
    let lost = Position::moving(Color::White, 0b11, 0b111 << 8);
    assert_eq!(tb.probe(&lost).unwrap(), Value::Loss(0));
    assert_eq!(tb.probe_wdl(&lost).unwrap(), Wdl::Loss);
    assert!(tb.moves(&lost).unwrap().is_empty());
    assert_eq!(tb.best_ply(&lost).unwrap(), None);
    let over = Position::moving(Color::White, 0b111 << 8, 0b11);
    assert!(matches!(tb.probe(&over), Err(ProbeError::GameOver)));
    assert!(matches!(
        Tablebase::open(Path::new("/nonexistent/db")),
        Err(ProbeError::NoDatabase { .. })
    ));
}

#[test]
fn damaged_and_foreign_files_are_errors() {
    let d = temp_db("bad");
    write_synthetic(&d, 3, 3);
    write_synthetic(&d, 3, 4);
    let path = d.join("3-3.mdb");
    let mut bytes = fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0x40;
    fs::write(&path, &bytes).unwrap();
    let tb = Tablebase::open(&d).unwrap();
    let mut r = 9;
    let mut errors = 0;
    let idx = Index::standard();
    for _ in 0..3000 {
        let pos = random_position(&mut r, 3, 3);
        match tb.probe(&pos) {
            Ok(v) => assert_eq!(
                v,
                Value::from_code(synthetic(3, 3, idx.index(pos.own(), pos.opp())))
            ),
            Err(ProbeError::Format(FormatError::Checksum { .. })) => errors += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(errors > 0);
    // A file of another subspace under this name.
    fs::copy(d.join("3-4.mdb"), d.join("4-3.mdb")).unwrap();
    let tb = Tablebase::open(&d).unwrap();
    let pos = random_position(&mut r, 4, 3);
    assert!(matches!(
        tb.probe(&pos),
        Err(ProbeError::Format(FormatError::Mismatch { .. }))
    ));
}

#[test]
fn the_block_cache_stays_within_its_limit() {
    // Small blocks, so that the files have hundreds of them.
    let d = synthetic_db_small_blocks("cache");
    let tb = Tablebase::open(&*d).unwrap();
    assert_eq!(tb.cache_limit(), DEFAULT_CACHE_LIMIT);
    let limit = 200 * 1024;
    tb.set_cache_limit(limit);
    let idx = Index::standard();
    let mut r = 23;
    for _ in 0..3000 {
        for (k, l) in [(3, 3), (3, 4), (4, 3)] {
            let pos = random_position(&mut r, k, l);
            let code = synthetic(k, l, idx.index(pos.own(), pos.opp()));
            assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
            assert!(tb.cache_bytes() <= limit, "{}", tb.cache_bytes());
        }
    }
    // It was used, and more blocks were read than it holds.
    let held: usize = [(3, 3), (3, 4), (4, 3)]
        .iter()
        .map(|&(k, l)| tb.file(k, l).unwrap().cached().1)
        .sum();
    assert_eq!(held, tb.cache_bytes());
    assert!(held > limit / 2, "{held}");
    let all: u64 = [(3, 3), (3, 4), (4, 3)]
        .iter()
        .map(|&(k, l)| idx.size(k, l) * 6 / 5)
        .sum();
    assert!(all as usize > 2 * limit);
    tb.set_cache_limit(0);
    assert_eq!(tb.cache_bytes(), 0);
    let pos = random_position(&mut r, 3, 3);
    let code = synthetic(3, 3, idx.index(pos.own(), pos.opp()));
    assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
}

#[test]
fn files_come_from_the_first_directory_that_has_them() {
    let a = temp_db("dirs-a");
    let b = temp_db("dirs-b");
    write_synthetic(&a, 3, 3);
    write_synthetic(&b, 3, 3);
    write_synthetic(&b, 3, 4);
    write_synthetic(&b, 4, 3);
    // A damaged copy in the second directory is never read.
    let path = b.join("3-3.mdb");
    let mut bytes = fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0x40;
    fs::write(&path, &bytes).unwrap();
    let mut tb = Tablebase::open(&*a).unwrap();
    assert_eq!(tb.available(), vec![(3, 3)]);
    tb.add_directory(&*b).unwrap();
    assert_eq!(tb.available(), vec![(3, 3), (3, 4), (4, 3)]);
    assert_eq!(tb.dirs(), &[a.to_path_buf(), b.to_path_buf()]);
    let idx = Index::standard();
    let mut r = 31;
    for _ in 0..2000 {
        for (k, l) in [(3, 3), (3, 4), (4, 3)] {
            let pos = random_position(&mut r, k, l);
            let code = synthetic(k, l, idx.index(pos.own(), pos.opp()));
            assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
        }
    }
    assert!(matches!(
        tb.add_directory("/nonexistent/db"),
        Err(ProbeError::NoDatabase { .. })
    ));
    // A directory of other rules is refused.
    let c = temp_db("dirs-c");
    crate::table::dir::manifest::Manifest::load_or_new(&c, Rules::by_name("standard-4").unwrap())
        .unwrap()
        .save(&c)
        .unwrap();
    let e = tb.add_directory(&*c).unwrap_err();
    assert!(matches!(e, ProbeError::OtherRules { .. }), "{e}");
}

/// Opening a directory lists nothing: a sector is looked for the first time
/// something asks about it (so a file written after opening and before that is
/// found), a directory added later is searched for what the first lacked, and
/// the questions about every sector list the directories once.
#[test]
fn sectors_are_looked_for_on_first_use() {
    let a = temp_db("lazy-a");
    let b = temp_db("lazy-b");
    write_synthetic(&a, 3, 3);
    let mut tb = Tablebase::open(&*a).unwrap();
    write_synthetic(&a, 3, 4);
    assert!(tb.has(3, 4));
    assert!(!tb.has(4, 3));
    write_synthetic(&b, 4, 3);
    tb.add_directory(&*b).unwrap();
    assert!(tb.has(4, 3));
    assert_eq!(tb.available(), vec![(3, 3), (3, 4), (4, 3)]);
    let idx = Index::standard();
    let mut r = 5;
    for (k, l) in [(3, 3), (3, 4), (4, 3)] {
        let pos = random_position(&mut r, k, l);
        let code = synthetic(k, l, idx.index(pos.own(), pos.opp()));
        assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
    }
    // Once listed, a sector's place stays what the listing found.
    write_synthetic(&a, 4, 4);
    assert!(!tb.has(4, 4));
    assert!(matches!(
        tb.probe(&random_position(&mut r, 4, 4)),
        Err(ProbeError::Missing { .. })
    ));
    assert!(Tablebase::open(&*a).unwrap().has(4, 4));
}

#[test]
fn no_panic_on_arbitrary_positions() {
    let db = synthetic_db("arbitrary");
    let tb = Tablebase::open(&db).unwrap();
    let mut r = 17u64;
    let mut next = || {
        r = splitmix64(r);
        r
    };
    for i in 0..20_000 {
        let x = next();
        let y = next();
        // Mostly small stone counts on the board, sometimes anything at all.
        let mask = if i % 4 == 0 { u32::MAX } else { 0x00ff_ffff };
        let sparse = |v: u64| (v as u32 & (v >> 32) as u32 & (v >> 16) as u32) & mask;
        let pos = Position {
            board: [
                sparse(x),
                sparse(y) & !if i % 8 == 0 { 0 } else { sparse(x) },
            ],
            hand: if i % 3 == 0 {
                [(x % 4) as u8, (y % 4) as u8]
            } else {
                [0, 0]
            },
            to_move: if x & 1 == 0 {
                Color::White
            } else {
                Color::Black
            },
            pending_removal: y % 5 == 0,
        };
        let _ = tb.probe(&pos);
        let _ = tb.probe_wdl(&pos);
        let _ = tb.moves(&pos);
        let _ = tb.best_ply_random(&pos, x);
        let _ = tb.probe_sets(pos.board[0], pos.board[1]);
    }
}

/// The synthetic family of [`synthetic_db`] in blocks of 4,096 slots, so that
/// each file has dozens of blocks.
fn synthetic_db_small_blocks(name: &str) -> Scratch {
    let d = temp_db(name);
    let opts = WriteOptions {
        wdl_block: 4096,
        depth_block: 4096,
        ..Default::default()
    };
    for (k, l) in [(3, 3), (3, 4), (4, 3)] {
        write_synthetic_with(&d, k, l, &opts);
    }
    d
}

#[test]
fn warming_reads_every_file_and_decodes_every_block_that_fits() {
    let d = synthetic_db_small_blocks("warm-all");
    let tb = Tablebase::open(&*d).unwrap();
    let order: Vec<String> = tb.warm_order().iter().map(|s| s.name()).collect();
    assert_eq!(order, ["3-4", "4-3", "3-3"], "most stones first");
    let progress = WarmProgress::default();
    tb.warm(&WarmOptions::half_cache(&tb), &progress);
    let status = progress.status();
    let bytes: u64 = fs::read_dir(&*d)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(status.done && status.error.is_none(), "{status:?}");
    assert_eq!((status.files, status.of), (3, 3));
    assert_eq!((status.bytes, status.of_bytes), (bytes, bytes));
    // Every block of both sections is in the cache, nothing evicted.
    let idx = Index::standard();
    let blocks: u64 = [(3, 3), (3, 4), (4, 3)]
        .iter()
        .map(|&(k, l)| 2 * idx.size(k, l).div_ceil(4096))
        .sum();
    assert_eq!(status.blocks, blocks);
    let held: usize = [(3, 3), (3, 4), (4, 3)]
        .iter()
        .map(|&(k, l)| tb.file(k, l).unwrap().cached().0)
        .sum();
    assert_eq!(held as u64, blocks);
}

#[test]
fn warming_stops_at_its_budget_and_when_asked() {
    let d = synthetic_db_small_blocks("warm-budget");
    let tb = Tablebase::open(&*d).unwrap();
    let budget = 64 * 1024;
    let progress = WarmProgress::default();
    tb.warm(
        &WarmOptions {
            decode_bytes: budget,
        },
        &progress,
    );
    let status = progress.status();
    assert!(status.done, "{status:?}");
    assert_eq!(status.bytes, status.of_bytes);
    // The last block decoded may pass the budget by at most one block (4,096
    // slots of one byte).
    let held = tb.cache_bytes();
    assert!((budget..budget + 4096).contains(&held), "{held}");
    // The WDL blocks of every file come before any depth block.
    let wdl: u64 = [(3, 3), (3, 4), (4, 3)]
        .iter()
        .map(|&(k, l)| Index::standard().size(k, l).div_ceil(4096))
        .sum();
    assert!(status.blocks > 0 && status.blocks < wdl, "{status:?}");
    // Stopped before it starts: nothing read, never done.
    let tb = Tablebase::open(&*d).unwrap();
    let progress = WarmProgress::default();
    progress.stop();
    tb.warm(&WarmOptions::half_cache(&tb), &progress);
    let status = progress.status();
    assert!(
        !status.done && status.bytes == 0 && status.blocks == 0,
        "{status:?}"
    );
    assert_eq!(tb.cache_bytes(), 0);
}

#[test]
fn probes_while_warming_answer_as_before() {
    let d = synthetic_db_small_blocks("warm-probes");
    let tb = Tablebase::open(&*d).unwrap();
    let idx = Index::standard();
    let progress = WarmProgress::default();
    std::thread::scope(|scope| {
        let probes = scope.spawn(|| {
            let mut r = 5;
            let mut passes = 0;
            // At least one pass, begun before warming starts; then until it is done.
            while passes == 0 || !progress.status().done {
                for (k, l) in [(3, 3), (3, 4), (4, 3)] {
                    let pos = random_position(&mut r, k, l);
                    let code = synthetic(k, l, idx.index(pos.own(), pos.opp()));
                    assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
                    assert_eq!(tb.probe_wdl(&pos).unwrap(), Value::from_code(code).wdl());
                }
                passes += 1;
            }
            passes
        });
        tb.warm(&WarmOptions::half_cache(&tb), &progress);
        assert!(probes.join().unwrap() > 0);
    });
    assert!(progress.status().done);
}
