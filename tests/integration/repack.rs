//! `millbase repack`: full files with value don't-cares (format version 2) answer
//! every probe as the original files do, on every third slot of the whole reduced
//! game `standard-4` and every fifth of the smaller sectors of `standard-5` (both
//! phases; the repack itself checks every slot of every file it writes through the
//! probe's rule, so the tests' probes add the other questions: results, set
//! probes, ranked and best plies); `verify` passes on them; the
//! arena's perfect player plays the same games; a repack in place resumes, and a
//! file that would not give the original's values is never installed.

use crate::common::Scratch;
use millbase::play::arena::{self, ArenaConfig, Openings};
use millbase::rules::value::Wdl;
use millbase::table::build::{BuildOptions, BuildPhase, Form, Selection, build};
use millbase::table::dir::manifest::{Entry, Manifest};
use millbase::table::format::{
    Encoding, Expect, FormatError, SERVING_DEPTH_BLOCK, SERVING_WDL_BLOCK, SubspaceFile,
    WIN_BY_LOOKAHEAD, WriteOptions, write_retabled, write_subspace_with,
};
use millbase::table::index::Index;
use millbase::table::pack::dontcare::{
    Fill, FreeSlots, Freedom, capture_children, capture_free_slots, fill_values,
    fill_values_allowing,
};
use millbase::table::pack::repack::{
    RepackError, RepackOptions, check_filled, check_repacked, check_stored, is_repacked, repack,
    true_codes,
};
use millbase::table::pack::{PackOptions, Profile, pack_wdl_only};
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use millbase::{Rules, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

fn rules(n: u32) -> &'static Rules {
    Rules::by_name(&format!("standard-{n}")).unwrap()
}

/// The whole standard-4 game, built once per run (shared with other modules).
fn game4() -> &'static Path {
    crate::common::standard_4()
}

/// The whole standard-5 game, built once per run (shared with other modules).
fn game5() -> &'static Path {
    crate::common::standard_5()
}

/// `src` repacked with `fill` into the new directory `out`.
fn repacked(src: &Path, n: u32, out: PathBuf, fill: Fill) -> PathBuf {
    let opts = RepackOptions {
        out: Some(out.clone()),
        fill: Some(fill),
        ..RepackOptions::default()
    };
    let reports = repack(src, Index::for_rules(rules(n)), &opts, |_| {}).unwrap();
    assert!(reports.iter().all(|r| !r.kept && r.filled.is_some()));
    // The progress adds each sector's slots up to all of them.
    let total: u64 = reports.iter().map(|r| r.slots).sum();
    let mut so_far = 0;
    for r in &reports {
        so_far += r.slots;
        assert_eq!(r.progress, (so_far, total), "{}", r.sector.name());
    }
    out
}

fn bytes(d: &Path) -> u64 {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".mdb"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

/// Every probe of `new` equals `old`'s on the position of every `step`-th slot
/// (duplicates included) of the sectors `sectors`: value, result, the moving
/// phase's set probes, and every `moves_step`-th slot's ranked plies and best ply.
/// Returns the canonical slots looked at whose stored value differs from the
/// original (the don't-cares the test exercised).
fn probes_equal(old: &Path, new: &Path, sectors: &[Sector], step: u64, moves_step: u64) -> u64 {
    let a = Tablebase::open(old).unwrap();
    let b = Tablebase::open(new).unwrap();
    assert_eq!(a.available_sectors(), b.available_sectors());
    let idx = a.index();
    let mut changed = 0;
    for &s in sectors {
        let (fa, fb) = (a.sector_file(s).unwrap(), b.sector_file(s).unwrap());
        assert!(!fa.value_dont_cares(), "{s}");
        assert!(fb.header().version >= 2, "{s}");
        let (k, l) = s.counts();
        for slot in (0..idx.size(k, l)).step_by(step as usize) {
            let (own, opp) = idx.position(k, l, slot);
            let pos = s.position(own, opp);
            let v = a.probe(&pos).unwrap();
            assert_eq!(b.probe(&pos).unwrap(), v, "{s} slot {slot}");
            assert_eq!(b.probe_wdl(&pos).unwrap(), v.wdl(), "{s} slot {slot}");
            if s.is_moving() {
                assert_eq!(b.probe_sets(own, opp).unwrap(), v, "{s} slot {slot}");
                assert_eq!(b.probe_wdl_sets(own, opp).unwrap(), v.wdl());
            }
            if slot % moves_step == 0 {
                assert_eq!(b.moves(&pos).unwrap(), a.moves(&pos).unwrap(), "{s} {slot}");
                assert_eq!(b.best_ply(&pos).unwrap(), a.best_ply(&pos).unwrap());
            }
            // A win of a file with loss-only depths has no stored value.
            if idx.index(own, opp) == slot {
                changed += (fb.value(slot).ok() != Some(v)) as u64;
            }
        }
    }
    changed
}

fn tb_file_has_dont_cares(dir: &Path, s: Sector) -> bool {
    let tb = Tablebase::open(dir).unwrap();
    tb.sector_file(s).unwrap().value_dont_cares()
}

/// Every sector of the directory `dir`.
fn all_sectors(dir: &Path) -> Vec<Sector> {
    Tablebase::open(dir).unwrap().available_sectors()
}

fn verify_clean(dir: &Path, n: u32, only: Option<Sector>) {
    let checks = millbase::table::verify::check(dir, Index::for_rules(rules(n)), only).unwrap();
    assert!(!checks.is_empty());
    for c in &checks {
        assert_eq!(c.mismatches, 0, "{}: {:?}", c.sector, c.examples.first());
    }
}

/// Slots between two probed ones in the 4-stone game: the repack checked every
/// slot of each file it wrote already.
const STEP_4: u64 = 3;

/// Slots between two probed ones in the serving profile's tests: the profile's
/// coding is the zstd one every other test reads, and the repack checked every
/// slot of each file it wrote already.
const STEP_SERVING: u64 = 7;

/// Slots between two probed ones in the 5-stone game's sectors.
const STEP_5: u64 = 5;

/// The whole 4-stone game rewritten as format version 1 files (every slot a depth
/// entry, no flags), made once and only read (the repacks write elsewhere); checks
/// that the build wrote decisive-only depths (flag 4).
fn game4_v1() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| version_1_copy(crate::common::scratch::lasting("repack-g4-v1")))
}

/// The whole 4-stone game written as format version 1 files into the directory
/// `v1`.
fn version_1_copy(v1: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&v1).unwrap();
    std::fs::copy(game4().join("manifest.json"), v1.join("manifest.json")).unwrap();
    let built = Tablebase::open(game4()).unwrap();
    for s in all_sectors(game4()) {
        let f = built.sector_file(s).unwrap();
        assert!(f.header().decisive_depths(), "the build writes flag 4: {s}");
        let opts = WriteOptions {
            decisive_depths: false,
            ..WriteOptions::default()
        };
        let h = write_subspace_with(
            &v1.join(s.file_name()),
            &f.header().meta,
            &f.read_all().unwrap(),
            &opts,
        )
        .unwrap();
        assert_eq!((h.version, h.flags), (1, 0));
    }
    v1
}

/// The default fill on the whole 4-stone game: every probe on every third slot,
/// ranked plies on every fifteenth, `verify` on everything. The other fills: the repack's own
/// check of every slot, smaller files, and probes on a spread of slots.
#[test]
fn every_fill_of_the_4_stone_game_probes_as_the_original() {
    let scratch = Scratch::new("repack-every-fill-of-the");
    // Every fill makes the files smaller than version 1's (what a repack converts);
    // against the build's own files (decisive-only depths) only some fills gain.
    let plain = bytes(game4_v1());
    let sectors = all_sectors(game4());
    // `loss0`, `lean` and `model` are made for loss-only depths, and change lost
    // and duplicate slots only: few here. `loss_only_depths_answer_every_probe_as_the_original`
    // and `model_coded_depths_answer_every_probe_as_the_original` test them.
    let for_losses = [Fill::Loss0, Fill::Lean, Fill::Model];
    for fill in Fill::ALL.into_iter().filter(|f| !for_losses.contains(f)) {
        let out = repacked(
            game4(),
            4,
            scratch.join(format!("g4-{}", fill.name())),
            fill,
        );
        let full = fill == Fill::default();
        let (step, moves_step) = if full { (STEP_4, 15) } else { (17, 101) };
        assert!(sectors.iter().all(|&s| tb_file_has_dont_cares(&out, s)));
        let changed = probes_equal(game4(), &out, &sectors, step, moves_step);
        // The fill changed stored values (else this would prove nothing).
        assert!(changed > 1000 / step, "{}: {changed}", fill.name());
        assert!(
            bytes(&out) < plain,
            "{}: {} {plain}",
            fill.name(),
            bytes(&out)
        );
        if full {
            verify_clean(&out, 4, None);
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
}

/// The 5-stone game, both phases: its sectors of fewer than 1 M slots repacked in
/// place in a copy (the repack checked each on every slot through the probe's
/// rule), then every probe on every fifth slot of those sectors, `verify` of each,
/// and perfect play.
#[test]
fn the_5_stone_game_probes_and_plays_as_the_original() {
    let scratch = Scratch::new("repack-the-5-stone-game");
    let dir = scratch.join("g5-copy");
    copy_dir(game5(), &dir);
    let idx = Index::for_rules(rules(5));
    let small: Vec<Sector> = all_sectors(game5())
        .into_iter()
        .filter(|s| idx.size(s.k as u32, s.l as u32) < 1_000_000)
        .collect();
    assert!(small.iter().any(|s| s.is_moving()) && small.iter().any(|s| !s.is_moving()));
    let opts = RepackOptions {
        only: small.clone(),
        ..RepackOptions::default()
    };
    let reports = repack(&dir, idx, &opts, |_| {}).unwrap();
    assert_eq!(reports.len(), small.len());
    assert!(small.iter().all(|&s| tb_file_has_dont_cares(&dir, s)));
    let changed = probes_equal(game5(), &dir, &small, STEP_5, 7);
    assert!(changed > 10_000 / STEP_5, "{changed}");
    for &s in &small {
        verify_clean(&dir, 5, Some(s));
    }
    same_perfect_games(game5(), &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The arena's perfect player plays the same 12 games (6 random plies, then
/// perfect play) on both directories, and none of its plies is a blunder.
fn same_perfect_games(original: &Path, copy: &Path) {
    let play = |d: &Path| {
        let tb = Arc::new(Tablebase::open(d).unwrap());
        let mut c = ArenaConfig::new("perfect".parse().unwrap(), "perfect".parse().unwrap(), 12);
        c.rules = tb.rules();
        c.start = millbase::Position::start(tb.rules());
        c.openings = Openings::Random(6);
        c.db = Some(tb);
        c.db_dir = Some(d.to_path_buf());
        arena::run(&c, &|_| {}).unwrap()
    };
    let (a, b) = (play(original), play(copy));
    assert_eq!(a.len(), 12);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.moves, y.moves);
        assert_eq!(x.start_value_a, y.start_value_a);
        assert_eq!((x.winner, x.plies), (y.winner, y.plies));
        assert!(y.blunders.is_empty() && y.inaccurate == [0, 0]);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn in_place_repack_resumes_and_keeps_a_shippable_wdl_section() {
    let scratch = Scratch::new("repack-in-place-repack-resumes");
    let dir = scratch.join("inplace");
    copy_dir(game4(), &dir);
    let idx = Index::for_rules(rules(4));
    let opts = RepackOptions {
        only: vec![Sector::moving(4, 4), Sector::moving(4, 3)],
        ..RepackOptions::default()
    };
    // Part of it, as if interrupted; then all of it, which keeps those two.
    let first = repack(&dir, idx, &opts, |_| {}).unwrap();
    assert_eq!(first.len(), 2);
    let all = repack(&dir, idx, &RepackOptions::default(), |_| {}).unwrap();
    let kept: Vec<Sector> = all.iter().filter(|r| r.kept).map(|r| r.sector).collect();
    assert_eq!(kept, vec![Sector::moving(4, 3), Sector::moving(4, 4)]);
    let again = repack(&dir, idx, &RepackOptions::default(), |_| {}).unwrap();
    assert!(again.iter().all(|r| r.kept));
    assert!(
        std::fs::read_dir(&dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".repack"))
    );
    probes_equal(game4(), &dir, &all_sectors(game4()), 3, 101);
    // The manifest says version 2 and the new sizes.
    let m = millbase::table::dir::manifest::Manifest::load(&dir)
        .unwrap()
        .unwrap();
    assert_eq!(m.format_version, 2);
    let tb = Tablebase::open(&dir).unwrap();
    for e in &m.subspaces {
        let f = tb.sector_file(e.sector().unwrap()).unwrap();
        assert_eq!(e.checksum, format!("{:016x}", f.header().checksum));
    }
    // Building from it needs true values: a clear error, not wrong values.
    let f = tb.sector_file(Sector::moving(4, 4)).unwrap();
    assert!(matches!(f.read_all(), Err(FormatError::DontCares { .. })));
    // A WDL-only pack copies the WDL section, which follows the WDL rule.
    for dont_cares in [false, true] {
        let packed = scratch.join(format!("inplace-pack-{dont_cares}"));
        pack_wdl_only(
            &dir,
            &packed,
            idx,
            PackOptions {
                dont_cares,
                coding: None,
                ..PackOptions::DEFAULT
            },
            |_| {},
        )
        .unwrap();
        let p = Tablebase::open(&packed).unwrap();
        let full = Tablebase::open(game4()).unwrap();
        for s in full.available_sectors() {
            assert!(p.sector_file(s).unwrap().wdl_dont_cares());
            let (k, l) = s.counts();
            for slot in (0..idx.size(k, l)).step_by(5) {
                let (own, opp) = idx.position(k, l, slot);
                let pos = s.position(own, opp);
                assert_eq!(p.probe_wdl(&pos).unwrap(), full.probe_wdl(&pos).unwrap());
            }
        }
        std::fs::remove_dir_all(&packed).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_that_differs_is_refused_before_it_is_installed() {
    let scratch = Scratch::new("repack-a-file-that-differs");
    let idx = Index::for_rules(rules(4));
    let tb = Tablebase::open(game4()).unwrap();
    let s = Sector::moving(4, 3);
    let file = tb.sector_file(s).unwrap();
    let truth = file.read_all().unwrap();
    let dir = scratch.join("differs");
    std::fs::create_dir_all(&dir).unwrap();
    let staged = dir.join("4-3.mdb");
    let opts = WriteOptions {
        value_dont_cares: true,
        ..WriteOptions::default()
    };
    let (k, l) = s.counts();
    // A canonical slot no capture reaches, stored as `Loss(0)`: the probe cannot
    // recover it.
    let fixed = (0..truth.len())
        .find(|&i| {
            let (own, opp) = idx.position(k, l, i as u64);
            let pos = s.position(own, opp);
            idx.index(own, opp) == i as u64
                && truth[i] != Value::Loss(0).code()
                && !pos.legal_plies(idx.rules()).iter().any(|p| p.removes())
        })
        .unwrap();
    let mut codes = truth.clone();
    codes[fixed] = Value::Loss(0).code();
    write_subspace_with(&staged, &file.header().meta, &codes, &opts).unwrap();
    let f = SubspaceFile::open(&staged, &Default::default()).unwrap();
    match check_repacked(&tb, s, &f, &truth, file.path()) {
        Err(RepackError::Differs { slot, .. }) => assert_eq!(slot, fixed as u64),
        other => panic!("{other:?}"),
    }
    // A better value than the truth is refused even where a capture reaches it.
    let mut codes = truth.clone();
    let better = (0..truth.len())
        .find(|&i| {
            let (own, opp) = idx.position(k, l, i as u64);
            idx.index(own, opp) == i as u64
                && matches!(Value::from_code(truth[i]), Value::Loss(n) if n > 0)
        })
        .unwrap();
    codes[better] = Value::Draw.code();
    write_subspace_with(&staged, &file.header().meta, &codes, &opts).unwrap();
    let f = SubspaceFile::open(&staged, &Default::default()).unwrap();
    assert!(matches!(
        check_repacked(&tb, s, &f, &truth, file.path()),
        Err(RepackError::Differs { .. })
    ));
    // The untouched truth passes.
    write_subspace_with(&staged, &file.header().meta, &truth, &opts).unwrap();
    let f = SubspaceFile::open(&staged, &Default::default()).unwrap();
    check_repacked(&tb, s, &f, &truth, file.path()).unwrap();
    // With the stored codes at hand (as the writer decoded them), a wrong code
    // is caught in a block the reader reads in the check and in one it leaves
    // out; the true codes pass.
    let opts = WriteOptions {
        wdl_block: 64,
        ..opts
    };
    write_subspace_with(&staged, &file.header().meta, &truth, &opts).unwrap();
    let f = SubspaceFile::open(&staged, &Default::default()).unwrap();
    let stored = f.read_all_partial().unwrap();
    check_stored(&tb, s, &f, &truth, &stored, true, file.path()).unwrap();
    let blocks = truth.len().div_ceil(64);
    assert!(blocks > 16, "{blocks} blocks");
    let fixed = |i: usize| only_the_table_knows(idx, s, &truth, i);
    // In a block the reader leaves out, a wrong code at hand is caught.
    let wrong = (0..truth.len())
        .find(|&i| i / 64 % 8 != 0 && i / 64 + 1 < blocks && fixed(i))
        .unwrap();
    let mut bad = stored.clone();
    bad[wrong] = Value::Loss(0).code();
    match check_stored(&tb, s, &f, &truth, &bad, true, file.path()) {
        Err(RepackError::Differs { slot, .. }) => assert_eq!(slot, wrong as u64),
        other => panic!("{other:?}"),
    }
    // In a block the reader reads, the file is read: a wrong value in the file
    // at the block's first slot that is its own twin is caught, though the codes
    // at hand are right.
    let own_twin = |i: usize| {
        let (own, opp) = idx.position(k, l, i as u64);
        idx.index(own, opp) == i as u64
    };
    let wrong = (8..blocks - 1)
        .step_by(8)
        .filter_map(|b| (b * 64..(b + 1) * 64).find(|&i| own_twin(i)))
        .find(|&i| fixed(i))
        .unwrap();
    let mut codes = truth.clone();
    codes[wrong] = Value::Loss(0).code();
    write_subspace_with(&staged, &file.header().meta, &codes, &opts).unwrap();
    let f = SubspaceFile::open(&staged, &Default::default()).unwrap();
    match check_stored(&tb, s, &f, &truth, &stored, true, file.path()) {
        Err(RepackError::Differs { slot, .. }) => assert_eq!(slot, wrong as u64),
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The model's fill finds the slots whose value a capturing ply reaches for many
/// slots at once (their children's look-ups batched, and a child whose stored
/// result rules the ply out not valued); they are the slots some capturing ply,
/// valued one by one by the probe, reaches (every canonical slot neither lost in
/// 0 nor drawn): on every sector of the 4-stone game, with the children read from
/// the files as built and from files filled and model-coded as `millbase build
/// --form small` leaves them.
#[test]
fn the_fill_finds_the_slots_a_capture_reaches() {
    let scratch = Scratch::new("repack-the-fill-finds");
    let small = scratch.join("small");
    let opts = RepackOptions {
        out: Some(small.clone()),
        ..RepackOptions::smallest()
    };
    repack(game4(), Index::for_rules(rules(4)), &opts, |_| {}).unwrap();
    for dir in [game4(), small.as_path()] {
        let tb = Tablebase::open(dir).unwrap();
        let idx = tb.index();
        let r = idx.rules();
        let mut found = 0;
        for s in all_sectors(dir) {
            let file = tb.sector_file(s).unwrap();
            let truth = true_codes(&tb, s, file).unwrap();
            let mut codes = truth.clone();
            let (_, _, free) = fill_values_allowing(&tb, s, &mut codes, None).unwrap();
            let (k, l) = s.counts();
            for (slot, &code) in truth.iter().enumerate() {
                let (own, opp) = idx.position(k, l, slot as u64);
                let v = Value::from_code(code);
                let asked =
                    idx.index(own, opp) == slot as u64 && v != Value::Loss(0) && v != Value::Draw;
                let pos = s.position(own, opp);
                let reached = asked
                    && pos.legal_plies(r).into_iter().any(|p| {
                        p.removes()
                            && tb
                                .ply_value(&pos.after(r, p))
                                .unwrap()
                                .cmp_goodness(v)
                                .is_ge()
                    });
                assert_eq!(free.contains(slot as u64), reached, "{s} slot {slot}");
                found += reached as u64;
            }
        }
        assert!(found > 1000, "{}: {found} free slots", dir.display());
    }
}

/// The slots a capture reaches, as a recode finds them from the codes of the
/// sectors its captures lead into ([`capture_children`]) read whole into
/// memory ([`capture_free_slots`]), are those the fill finds by probing the
/// children's files, on every sector of a whole reduced game of several rule
/// sets (standard, a game with moves during placement, the twelve-stone board
/// with its diagonals, the 16-point board): for the model's fill the same set,
/// for `loss0` (the serving profile's) the same codes stored.
#[test]
fn the_slots_found_in_memory_are_those_the_fill_finds_by_probing() {
    let scratch = Scratch::new("repack-found-in-memory");
    for name in ["standard-4", "lasker-4", "twelve-4", "six-4"] {
        let rules = Rules::by_name(name).unwrap();
        let dir = scratch.join(name);
        build(
            rules,
            &BuildOptions::quiet(dir.clone(), Selection::All, BuildPhase::All),
        )
        .unwrap();
        let tb = Tablebase::open(&dir).unwrap();
        let idx = tb.index();
        let codes: std::collections::BTreeMap<Sector, Vec<u16>> = all_sectors(&dir)
            .into_iter()
            .map(|s| (s, tb.sector_file(s).unwrap().read_all().unwrap()))
            .collect();
        let mut found = 0;
        for (&s, truth) in &codes {
            // Only the sectors the repack reads whole: a capture into any other
            // would be missed, and the sets would differ.
            let kids = capture_children(rules, s);
            let child = |c: Sector| {
                kids.contains(&c)
                    .then(|| codes.get(&c).map(|v| v.as_slice()))
                    .flatten()
            };
            let known = capture_free_slots(idx, s, truth, Fill::Model, child);
            let mut filled = truth.clone();
            let (_, _, free) = fill_values_allowing(&tb, s, &mut filled, None).unwrap();
            assert!(known == free, "{name} {s}: the model's free slots differ");
            found += (0..truth.len() as u64)
                .filter(|&i| free.contains(i))
                .count();
            let known = capture_free_slots(idx, s, truth, Fill::Loss0, child);
            let (mut a, mut b) = (truth.clone(), truth.clone());
            let searched = fill_values(&tb, s, &mut a, Fill::Loss0, None).unwrap();
            let given = fill_values(&tb, s, &mut b, Fill::Loss0, Some(&known)).unwrap();
            assert_eq!(searched, given, "{name} {s}");
            assert!(a == b, "{name} {s}: the loss0 fill differs");
        }
        assert!(found > 100, "{name}: {found} free slots");
    }
}

/// The check of a model-filled file takes the fill's free slots for found where
/// the reader does not read: there a slot that stores less than its truth and is
/// not free is caught; where the reader reads, a slot marked free that no capture
/// reaches is caught; the fill's own slots pass.
#[test]
fn the_check_of_a_filled_file_trusts_the_fill_only_outside_the_readers_blocks() {
    let scratch = Scratch::new("repack-the-check-of-a-filled");
    let idx = Index::for_rules(rules(4));
    let tb = Tablebase::open(game4()).unwrap();
    let s = Sector::moving(4, 3);
    let file = tb.sector_file(s).unwrap();
    let truth = file.read_all().unwrap();
    let mut codes = truth.clone();
    let (_, _, free) = fill_values_allowing(&tb, s, &mut codes, None).unwrap();
    let staged = scratch.join("4-3.mdb");
    let opts = WriteOptions {
        value_dont_cares: true,
        wdl_block: 64,
        ..WriteOptions::default()
    };
    let write = |codes: &[u16]| {
        write_subspace_with(&staged, &file.header().meta, codes, &opts).unwrap();
        SubspaceFile::open(&staged, &Default::default()).unwrap()
    };
    let f = write(&codes);
    let stored = f.read_all_partial().unwrap();
    let lowered = (0..truth.len()).filter(|&i| stored[i] != truth[i]).count();
    assert!(lowered > 100, "{lowered} slots store less than their truth");
    check_filled(&tb, s, &f, &truth, &stored, &free, file.path()).unwrap();
    let blocks = truth.len().div_ceil(64);
    let fixed = |i: usize| only_the_table_knows(idx, s, &truth, i);
    // Outside the reader's blocks, a lowered slot that is not free.
    let wrong = (0..truth.len())
        .find(|&i| i / 64 % 8 != 0 && i / 64 + 1 < blocks && fixed(i))
        .unwrap();
    let mut bad = stored.clone();
    bad[wrong] = Value::Loss(0).code();
    match check_filled(&tb, s, &f, &truth, &bad, &free, file.path()) {
        Err(RepackError::Differs { slot, .. }) => assert_eq!(slot, wrong as u64),
        other => panic!("{other:?}"),
    }
    // In a block the reader reads, a lowered slot marked free wrongly.
    let wrong = (8..blocks - 1)
        .step_by(8)
        .flat_map(|b| b * 64..(b + 1) * 64)
        .find(|&i| fixed(i) && !free.contains(i as u64))
        .unwrap();
    let freedom: Vec<Freedom> = (0..truth.len() as u64)
        .map(|i| {
            if free.contains(i) || i == wrong as u64 {
                Freedom::AtMost
            } else {
                Freedom::Fixed
            }
        })
        .collect();
    let marked = FreeSlots::of(&freedom);
    let mut lowered = codes.clone();
    lowered[wrong] = Value::Loss(0).code();
    let f = write(&lowered);
    let stored = f.read_all_partial().unwrap();
    match check_filled(&tb, s, &f, &truth, &stored, &marked, file.path()) {
        Err(RepackError::Differs { slot, .. }) => assert_eq!(slot, wrong as u64),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_command_repacks_and_refuses_bad_arguments() {
    let scratch = Scratch::new("repack-the-command-repacks-and");
    let bin = env!("CARGO_BIN_EXE_millbase");
    let out = scratch.join("cli");
    let run = |args: &[&str]| Command::new(bin).args(args).output().unwrap();
    let db = game4().to_str().unwrap();
    let dst = out.to_str().unwrap();
    let o = run(&[
        "repack", "--db", db, "--out", dst, "--fill", "prev", "--only", "3-3",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("repacked 1 files"), "{text}");
    let o = run(&["info", &format!("{dst}/3-3.mdb"), "--check"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("value don't-cares"),
        "{text}"
    );
    let o = run(&["verify", "--db", dst, "--only", "3-3"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A profile: the serving one, which another profile then rewrites.
    // The serving profile stores every value and decisive distance (flag 4), the
    // archive's model fill neither (flags 1, 2, 4, 8), in compact block tables
    // (flag 32).
    for (profile, encoding, flags) in [
        ("serving", Encoding::Trits5, 4),
        ("archive", Encoding::Model, 47),
    ] {
        let served = scratch.join(format!("cli-{profile}"));
        let o = run(&[
            "repack",
            "--db",
            db,
            "--out",
            served.to_str().unwrap(),
            "--profile",
            profile,
            "--only",
            "4-3",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let tb = Tablebase::open(&served).unwrap();
        let f = tb.sector_file(Sector::parse("4-3").unwrap()).unwrap();
        assert_eq!(
            (f.header().wdl.encoding, f.header().flags),
            (encoding, flags)
        );
        let profile = Profile::parse(profile).unwrap();
        assert!(is_repacked(f, &RepackOptions::profile(profile)));
        std::fs::remove_dir_all(&served).unwrap();
    }
    for (args, want) in [
        (
            vec!["repack", "--db", db, "--fill", "best"],
            "unknown fill 'best'",
        ),
        (
            vec!["repack", "--db", db, "--only", "4-x"],
            "'4-x' is not a sector",
        ),
        (
            vec![
                "repack",
                "--db",
                db,
                "--profile",
                "serving",
                "--fill",
                "low",
            ],
            "cannot be used with",
        ),
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// `--fill none` on version 1 files (the whole 4-stone game rewritten as version 1
/// first): every file becomes version 2 with decisive-only depths (flag 4) and no
/// value don't-cares, every stored value equal to the original's on every slot,
/// `verify` clean; the depth sections do not grow, and a second run keeps them all.
#[test]
fn repack_without_a_fill_stores_decisive_depths_only_and_keeps_every_value() {
    let scratch = Scratch::new("repack-repack-without-a-fill");
    let v1 = game4_v1();
    let sectors = all_sectors(game4());
    let out = scratch.join("g4-none");
    let opts = RepackOptions {
        out: Some(out.clone()),
        fill: None,
        ..RepackOptions::default()
    };
    let idx = Index::for_rules(rules(4));
    let reports = repack(v1, idx, &opts, |_| {}).unwrap();
    assert_eq!(reports.len(), sectors.len());
    assert!(reports.iter().all(|r| !r.kept && r.filled.is_none()));
    assert!(reports.iter().all(|r| r.after.0 == r.before.0));
    let (before, after) = reports
        .iter()
        .fold((0, 0), |(b, a), r| (b + r.before.1, a + r.after.1));
    assert!(after < before, "depth {before} -> {after}");
    let (a, b) = (Tablebase::open(v1).unwrap(), Tablebase::open(&out).unwrap());
    let mut draws = 0;
    for &s in &sectors {
        let (fa, fb) = (a.sector_file(s).unwrap(), b.sector_file(s).unwrap());
        assert_eq!((fb.header().version, fb.header().flags), (2, 4), "{s}");
        let codes = fa.read_all().unwrap();
        assert_eq!(fb.read_all().unwrap(), codes, "{s}");
        for (slot, &c) in codes.iter().enumerate().step_by(3) {
            assert_eq!(fb.code(slot as u64).unwrap(), c, "{s} slot {slot}");
        }
        draws += codes.iter().filter(|&&c| c == 0).count();
    }
    assert!(draws > 1000, "{draws}");
    verify_clean(&out, 4, None);
    let again = repack(v1, idx, &opts, |_| {}).unwrap();
    assert!(again.iter().all(|r| r.kept));
    std::fs::remove_dir_all(&out).unwrap();
}

/// `repack --depths losses`, without a fill and with `loss0` (made for it), on the whole
/// 4-stone game: a win's distance is found one ply ahead, and every probe (values,
/// results; ranked and best plies on a spread) on every third slot equals the original's
/// (a spread of slots with the fill, which the repack checked on every slot); the
/// files are smaller; `verify` is clean; repacked back to every decisive distance
/// without a fill, each file holds the original's codes.
#[test]
fn loss_only_depths_answer_every_probe_as_the_original() {
    let scratch = Scratch::new("repack-loss-only-depths-answer");
    let sectors = all_sectors(game4());
    let idx = Index::for_rules(rules(4));
    let built = bytes(game4());
    for fill in [None, Some(Fill::Loss0)] {
        let name = fill.map_or("none", Fill::name);
        let out = scratch.join(format!("g4-losses-{name}"));
        let opts = RepackOptions {
            out: Some(out.clone()),
            fill,
            loss_depths: true,
            ..RepackOptions::default()
        };
        let reports = repack(game4(), idx, &opts, |_| {}).unwrap();
        assert!(
            reports
                .iter()
                .all(|r| !r.kept && r.filled.is_some() == fill.is_some())
        );
        assert!(bytes(&out) < built, "{name}: {} {built}", bytes(&out));
        // Every third slot without a fill; with one, a wider spread (the repack
        // checked every slot of both).
        let (step, moves_step) = if fill.is_none() {
            (STEP_4, 13)
        } else {
            (7, 61)
        };
        let changed = probes_equal(game4(), &out, &sectors, step, moves_step);
        assert!(changed > 10_000 / step, "{name}: {changed}");
        let tb = Tablebase::open(&out).unwrap();
        let mut wins = 0;
        for &s in &sectors {
            let f = tb.sector_file(s).unwrap();
            assert_eq!(f.header().flags & 12, 12, "{s}");
            assert_eq!(f.value_dont_cares(), fill.is_some());
            let partial = f.read_all_partial().unwrap();
            wins += partial.iter().filter(|&&c| c == WIN_BY_LOOKAHEAD).count();
            let err = f.read_all_stored().unwrap_err();
            assert!(matches!(err, FormatError::WinByLookahead { .. }), "{err}");
        }
        assert!(wins > 10_000, "{wins}");
        verify_clean(&out, 4, None);
        // Resumes: every file is done already.
        let again = repack(game4(), idx, &opts, |_| {}).unwrap();
        assert!(again.iter().all(|r| r.kept));
        // Back to every decisive distance and every value: each file's codes are
        // the original's, the wins' distances found again one ply ahead.
        let back = scratch.join(format!("g4-back-{name}"));
        let opts = RepackOptions {
            out: Some(back.clone()),
            fill: None,
            ..RepackOptions::default()
        };
        repack(&out, idx, &opts, |_| {}).unwrap();
        let (a, b) = (
            Tablebase::open(game4()).unwrap(),
            Tablebase::open(&back).unwrap(),
        );
        for &s in &sectors {
            let want = a.sector_file(s).unwrap().read_all().unwrap();
            assert_eq!(b.sector_file(s).unwrap().read_all().unwrap(), want, "{s}");
        }
        std::fs::remove_dir_all(&out).unwrap();
        std::fs::remove_dir_all(&back).unwrap();
    }
}

/// Model-coded WDL sections (format version 5): the whole 4-stone game, with
/// loss-only depths and no fill, and with the default fill (every probe on every
/// third slot as the original, `verify` clean, a resumed repack keeps the files, a
/// WDL-only pack keeps the coding); then the 5-stone sectors where the model pays,
/// in place in a copy, every probe and `verify`. Where the model would not be
/// smaller the writer keeps zstd's blocks behind an empty prior, so no WDL
/// section grows by more than that prior's table entry.
#[test]
fn model_coded_wdl_answers_every_probe_as_the_original() {
    let scratch = Scratch::new("repack-model-coded-wdl-answers");
    let wdl_bytes = |d: &Path, sectors: &[Sector]| -> (u64, usize) {
        let tb = Tablebase::open(d).unwrap();
        sectors.iter().fold((0, 0), |(b, m), &s| {
            let f = tb.sector_file(s).unwrap();
            assert_eq!(f.header().version, 5, "{s}");
            (b + f.section_bytes().0, m + f.wdl_model() as usize)
        })
    };
    let sectors = all_sectors(game4());
    let idx = Index::for_rules(rules(4));
    let zstd_bytes: u64 = {
        let tb = Tablebase::open(game4()).unwrap();
        sectors
            .iter()
            .map(|&s| tb.sector_file(s).unwrap().section_bytes().0)
            .sum()
    };
    for (fill, loss_depths) in [(None, true), (Some(Fill::default()), false)] {
        let name = fill.map_or("none", Fill::name);
        let out = scratch.join(format!("g4-model-{name}"));
        let opts = RepackOptions {
            out: Some(out.clone()),
            fill,
            loss_depths,
            wdl_model: true,
            ..RepackOptions::default()
        };
        let reports = repack(game4(), idx, &opts, |_| {}).unwrap();
        assert!(reports.iter().all(|r| !r.kept));
        let (bytes, _) = wdl_bytes(&out, &sectors);
        assert!(bytes <= zstd_bytes + 24 * sectors.len() as u64, "{name}");
        probes_equal(game4(), &out, &sectors, STEP_4, 13);
        // Every probed slot equals the original's (which `verify` passes), so
        // `verify` of the files themselves is run once, on the fill that ships.
        if fill.is_some() {
            verify_clean(&out, 4, None);
        }
        let again = repack(game4(), idx, &opts, |_| {}).unwrap();
        assert!(again.iter().all(|r| r.kept));
        let packed = scratch.join(format!("g4-model-pack-{name}"));
        pack_wdl_only(&out, &packed, idx, PackOptions::default(), |_| {}).unwrap();
        wdl_bytes(&packed, &sectors);
        // The zstd coding asked for again is another file: rewritten, not kept.
        let zstd = RepackOptions {
            wdl_model: false,
            only: vec![sectors[0]],
            ..opts.clone()
        };
        let back = repack(game4(), idx, &zstd, |_| {}).unwrap();
        assert!(back.iter().all(|r| !r.kept));
        std::fs::remove_dir_all(&out).unwrap();
        std::fs::remove_dir_all(&packed).unwrap();
    }
    // The 5-stone sectors where the model pays, both phases.
    let dir = scratch.join("g5-model");
    copy_dir(game5(), &dir);
    let idx = Index::for_rules(rules(5));
    let some: Vec<Sector> = ["5-3", "2-5-1-0", "2-4-1-1"]
        .iter()
        .map(|s| Sector::parse(s).unwrap())
        .collect();
    let before = {
        let tb = Tablebase::open(&dir).unwrap();
        some.iter()
            .map(|&s| tb.sector_file(s).unwrap().section_bytes().0)
            .sum::<u64>()
    };
    let opts = RepackOptions {
        only: some.clone(),
        fill: None,
        loss_depths: true,
        wdl_model: true,
        ..RepackOptions::default()
    };
    repack(&dir, idx, &opts, |_| {}).unwrap();
    let (after, models) = wdl_bytes(&dir, &some);
    assert_eq!(models, some.len());
    assert!(after * 4 < before * 3, "{after} {before}");
    probes_equal(game5(), &dir, &some, STEP_5, 97);
    // `verify` reads model-coded files of both phases (every probe above
    // already equals the original's).
    for s in ["5-3", "2-5-1-0"] {
        verify_clean(&dir, 5, Some(Sector::parse(s).unwrap()));
    }
    same_perfect_games(game5(), &dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Model-coded depth sections (format version 6): the whole 4-stone game (with
/// value don't-cares, the fills made for the model) and 5-stone sectors of both phases,
/// repacked with loss-only depths coded by the depth model, answer every probe as
/// the original (on every third or fifth slot), `verify` is clean, the perfect
/// player's games are the same, a second run keeps every file, and no depth
/// section is bigger than zstd's by more than a table entry. (The model's own
/// blocks are checked by the format's tests and, on every slot of the real game,
/// by the repack itself.)
#[test]
fn model_coded_depths_answer_every_probe_as_the_original() {
    let scratch = Scratch::new("repack-model-coded-depths-answer");
    let depth_of = |d: &Path, sectors: &[Sector]| -> (u64, usize) {
        let tb = Tablebase::open(d).unwrap();
        sectors.iter().fold((0, 0), |(b, m), &s| {
            let f = tb.sector_file(s).unwrap();
            assert!(f.loss_depths() && f.header().wdl.encoding == Encoding::Model);
            (b + f.section_bytes().1, m + f.depth_model() as usize)
        })
    };
    let model = RepackOptions {
        fill: None,
        loss_depths: true,
        wdl_model: true,
        depth_model: true,
        ..RepackOptions::default()
    };
    let sectors = all_sectors(game4());
    let idx = Index::for_rules(rules(4));
    // Value don't-cares filled (`lean` and `model`, made for the models): the
    // model codes what is stored, and probes apply the don't-care rule. (Every
    // value kept: the 5-stone sectors below.)
    let stored = |d: &Path| -> Vec<Vec<u16>> {
        let tb = Tablebase::open(d).unwrap();
        let read = |s: &Sector| tb.sector_file(*s).unwrap().read_all_partial().unwrap();
        sectors.iter().map(read).collect()
    };
    let mut lean = None;
    for fill in [Some(Fill::Lean), Some(Fill::Model)] {
        let out = scratch.join(format!(
            "g4-depth-model-{}",
            fill.map_or("none", Fill::name)
        ));
        let opts = RepackOptions {
            out: Some(out.clone()),
            fill,
            ..model.clone()
        };
        let reports = repack(game4(), idx, &opts, |_| {}).unwrap();
        // The fill changed stored values (else it would prove nothing here).
        let changed: u64 = reports
            .iter()
            .filter_map(|r| r.filled)
            .map(|f| f.changed)
            .sum();
        assert_eq!(changed > 100, fill.is_some(), "{changed}");
        assert!(reports.iter().all(|r| !r.kept));
        let tb = Tablebase::open(&out).unwrap();
        for &s in &sectors {
            let f = tb.sector_file(s).unwrap();
            let version = f.header().version;
            let coded = f.header().depth.unwrap().encoding == Encoding::DepthRefined;
            assert_eq!(version == 7, coded, "{s}");
        }
        drop(tb);
        probes_equal(game4(), &out, &sectors, STEP_4, 13);
        // As above: `verify` once, on the fill that ships.
        if fill == Some(Fill::Model) {
            verify_clean(&out, 4, None);
        }
        let again = repack(game4(), idx, &opts, |_| {}).unwrap();
        assert!(again.iter().all(|r| r.kept));
        // zstd depths asked for again are another file: rewritten, not kept.
        let zstd = RepackOptions {
            depth_model: false,
            only: vec![sectors[0]],
            ..opts.clone()
        };
        assert!(
            repack(game4(), idx, &zstd, |_| {})
                .unwrap()
                .iter()
                .all(|r| !r.kept)
        );
        match fill {
            Some(Fill::Lean) => lean = Some(stored(&out)),
            // The model's choices: other wins and draws than `lean`'s (some),
            // the same losses.
            Some(Fill::Model) => {
                let lean = lean.take().unwrap();
                let mut other = 0;
                for (a, b) in lean.iter().flatten().zip(stored(&out).iter().flatten()) {
                    let lost =
                        |c: u16| c != WIN_BY_LOOKAHEAD && Value::from_code(c).wdl() == Wdl::Loss;
                    assert_eq!(lost(*a), lost(*b));
                    other += (a != b) as u64;
                }
                assert!(other > 0);
            }
            _ => {}
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
    let bad = RepackOptions {
        out: Some(scratch.join("g4-fill-model-zstd")),
        fill: Some(Fill::Model),
        wdl_model: false,
        depth_model: false,
        ..model.clone()
    };
    let err = repack(game4(), idx, &bad, |_| {}).unwrap_err();
    assert!(err.to_string().contains("--fill model needs"), "{err}");

    // 5-stone sectors, both phases: the model against zstd.
    let idx = Index::for_rules(rules(5));
    // Sectors with many lost slots' distances, of both phases.
    let some: Vec<Sector> = ["3-3", "4-3", "3-4", "2-3-1-0", "3-4-1-0"]
        .iter()
        .map(|s| Sector::parse(s).unwrap())
        .collect();
    let (zdir, mdir) = (
        scratch.join("g5-depth-zstd"),
        scratch.join("g5-depth-model"),
    );
    // zstd's loss-only depths into another directory; the model in place, in a copy
    // of the whole game (for the perfect player's games).
    copy_dir(game5(), &mdir);
    for (out, depth_model) in [(Some(zdir.clone()), false), (None, true)] {
        let opts = RepackOptions {
            out,
            only: some.clone(),
            depth_model,
            ..model.clone()
        };
        repack(
            if depth_model { &mdir } else { game5() },
            idx,
            &opts,
            |_| {},
        )
        .unwrap();
    }
    let (zstd_bytes, _) = depth_of(&zdir, &some);
    // These small sectors' distances are fewer than the model needs to learn
    // (files of the real game use it: README), so zstd's blocks stay, behind an
    // empty prior: never bigger by more than its table entry.
    let (model_bytes, _) = depth_of(&mdir, &some);
    assert!(model_bytes <= zstd_bytes + 24 * some.len() as u64);
    probes_equal(game5(), &mdir, &some, STEP_5, 97);
    // `verify` on one sector of each phase, as above.
    for s in ["4-3", "3-4-1-0"] {
        verify_clean(&mdir, 5, Some(Sector::parse(s).unwrap()));
    }
    same_perfect_games(game5(), &mdir);
    std::fs::remove_dir_all(&zdir).unwrap();
    std::fs::remove_dir_all(&mdir).unwrap();
}

/// The serving profile (zstd in small blocks, no don't-cares, every decisive
/// distance) on the whole 4-stone game: every probe as the original's on every
/// seventh slot, a cold WDL probe reads one block of one file and a cold full
/// value reads that one file only (no look one ply ahead), a second run keeps every
/// file, and the build's block sizes are another file (rewritten, not kept). Its
/// WDL package (`pack --wdl-only --profile serving`), from the build's files and
/// copied from the serving files, gives every result as the original with no
/// don't-cares, and resumes. Repacked into the archive profile and back, its
/// files are byte for byte those repacked from the build's files. (Many blocks
/// to a file: the format's tests.)
#[test]
fn the_serving_profile_answers_every_probe_as_the_original() {
    let scratch = Scratch::new("repack-the-serving-profile-answers");
    let sectors = all_sectors(game4());
    let idx = Index::for_rules(rules(4));
    let out = scratch.join("g4-serving");
    let opts = RepackOptions {
        out: Some(out.clone()),
        ..RepackOptions::serving()
    };
    let reports = repack(game4(), idx, &opts, |_| {}).unwrap();
    assert!(reports.iter().all(|r| !r.kept && r.filled.is_none()));
    let tb = Tablebase::open(&out).unwrap();
    for &s in &sectors {
        let h = tb.sector_file(s).unwrap().header();
        let depth = h.depth.unwrap();
        // No don't-cares, decisive depths: flag 4 alone.
        assert_eq!((h.version, h.flags), (2, 4), "{s}");
        let wdl = (h.wdl.encoding, h.wdl.block_slots);
        assert_eq!(wdl, (Encoding::Trits5, SERVING_WDL_BLOCK));
        let depth = (depth.encoding, depth.block_slots);
        assert_eq!(depth, (Encoding::HalfU8, SERVING_DEPTH_BLOCK));
    }
    let changed = probes_equal(game4(), &out, &sectors, STEP_SERVING, 97);
    assert_eq!(changed, 0, "every stored value is the true one");
    // A cold WDL probe is one look-up: one file opened, one block decoded. A
    // cold full value, won slots included, reads that file only.
    let mut won = 0;
    for &s in &sectors {
        let (k, l) = s.counts();
        for slot in (0..idx.size(k, l)).step_by(7919) {
            let (own, opp) = idx.position(k, l, slot);
            let pos = s.position(own, opp);
            let cold = Tablebase::open(&out).unwrap();
            cold.probe_wdl(&pos).unwrap();
            let opened: Vec<_> = cold.opened_files().map(|f| f.cached().0).collect();
            assert_eq!(opened, [1], "{s} {slot}");
            let cold = Tablebase::open(&out).unwrap();
            won += usize::from(matches!(cold.probe(&pos).unwrap(), Value::Win(_)));
            assert_eq!(cold.opened_files().count(), 1, "{s} {slot}");
        }
    }
    assert!(won > 10, "{won} won slots probed cold");
    let again = repack(game4(), idx, &opts, |_| {}).unwrap();
    assert!(again.iter().all(|r| r.kept));
    // The WDL packages of the serving profile, from the build's files and from
    // the serving files; every result as the original's.
    for (name, src) in [("built", game4()), ("served", out.as_path())] {
        let packed = scratch.join(format!("g4-serving-pack-{name}"));
        let serving = PackOptions::profile(Profile::Serving);
        let run = |opts| pack_wdl_only(src, &packed, idx, opts, |_| {}).unwrap();
        assert!(run(serving).iter().all(|r| !r.kept));
        let (a, b) = (
            Tablebase::open(game4()).unwrap(),
            Tablebase::open(&packed).unwrap(),
        );
        for &s in &sectors {
            let h = b.sector_file(s).unwrap().header();
            // Every result true: no flag, a probe one look-up.
            assert!(h.wdl_only() && h.flags == 0, "{s}");
            let wdl = (h.wdl.encoding, h.wdl.block_slots);
            assert_eq!(wdl, (Encoding::Trits5, SERVING_WDL_BLOCK));
            let (k, l) = s.counts();
            for slot in (0..idx.size(k, l)).step_by(STEP_SERVING as usize) {
                let (own, opp) = idx.position(k, l, slot);
                let pos = s.position(own, opp);
                let want = a.probe_wdl(&pos).unwrap();
                assert_eq!(b.probe_wdl(&pos).unwrap(), want, "{s} {slot}");
            }
        }
        assert!(run(serving).iter().all(|r| r.kept));
        std::fs::remove_dir_all(&packed).unwrap();
    }
    // The build's block sizes: another file, written again.
    let built_blocks = RepackOptions {
        only: vec![sectors[0]],
        wdl_block: millbase::table::format::WDL_BLOCK,
        ..opts.clone()
    };
    let back = repack(game4(), idx, &built_blocks, |_| {}).unwrap();
    assert!(back.iter().all(|r| !r.kept));
    // One small profile into the other: the archive made from the serving files,
    // and the serving files made from that archive, are byte for byte those made
    // from the build's files (their true values come through the probe's rule).
    let sector = sectors[0];
    let serving = RepackOptions {
        out: Some(out.clone()),
        only: vec![sector],
        ..RepackOptions::serving()
    };
    repack(game4(), idx, &serving, |_| {}).unwrap();
    let (archive, archived, served) = (
        scratch.join("g4-archive-built"),
        scratch.join("g4-archive-served"),
        scratch.join("g4-served-archived"),
    );
    let to = |src: &Path, dest: &Path, base: RepackOptions| {
        let opts = RepackOptions {
            out: Some(dest.to_path_buf()),
            ..base
        };
        let reports = repack(src, idx, &opts, |_| {}).unwrap();
        assert!(reports.iter().all(|r| !r.kept));
    };
    to(game4(), &archive, RepackOptions::smallest());
    to(&out, &archived, RepackOptions::smallest());
    to(&archived, &served, RepackOptions::serving());
    // The archive with 24-byte block tables, as the profile wrote it before compact
    // tables: the repack writes the same blocks again in compact ones, the files
    // byte for byte those of the archive.
    let (wide, rewritten) = (
        scratch.join("g4-archive-wide"),
        scratch.join("g4-archive-rewritten"),
    );
    std::fs::create_dir_all(&wide).unwrap();
    let mut manifest = Manifest::load(&archive).unwrap().unwrap();
    for &s in &sectors {
        let name = s.file_name();
        let f = SubspaceFile::open(&archive.join(&name), &Expect::any()).unwrap();
        assert!(f.header().compact_tables(), "{s}");
        let h = write_retabled(&f, &wide.join(&name), false).unwrap();
        assert!(!h.compact_tables() && h.file_bytes() > f.header().file_bytes());
        let seconds = manifest.get_sector(s).unwrap().build_seconds;
        manifest.upsert(Entry::new(&h, seconds));
    }
    manifest.save(&wide).unwrap();
    to(&wide, &rewritten, RepackOptions::smallest());
    for s in sectors {
        let name = s.file_name();
        let read = |d: &Path| std::fs::read(d.join(&name)).unwrap();
        assert!(read(&archived) == read(&archive), "{s}: archive");
        assert!(read(&served) == read(&out), "{s}: serving");
        assert!(read(&rewritten) == read(&archive), "{s}: compact tables");
    }
    for d in [&out, &archive, &archived, &served, &wide, &rewritten] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// A directory of the archive profile as format version 6 wrote it (the depth
/// model without its refiner, 24-byte block tables: `tests/fixtures/standard-4-v6`)
/// answers every probe as the build's files, and `repack --profile archive` turns
/// it into version 7, byte for byte the files the repack makes from the build's
/// files (its WDL blocks kept, its depth sections coded again).
#[test]
fn a_version_6_archive_reads_and_repacks_into_version_7() {
    let scratch = Scratch::new("repack-a-version-6-archive");
    let old = scratch.join("v6");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/standard-4-v6"),
        &old,
    );
    let sectors = all_sectors(game4());
    for &s in &sectors {
        let f = SubspaceFile::open(&old.join(s.file_name()), &Expect::any()).unwrap();
        assert_eq!((f.header().version, f.header().flags), (6, 15), "{s}");
    }
    let fresh = Tablebase::open(game4()).unwrap();
    let stored = Tablebase::open(&old).unwrap();
    let idx = fresh.index();
    for &s in &sectors {
        let (k, l) = s.counts();
        for slot in (0..idx.size(k, l)).step_by(STEP_4 as usize) {
            let (own, opp) = idx.position(k, l, slot);
            let pos = s.position(own, opp);
            assert_eq!(
                stored.probe(&pos).unwrap(),
                fresh.probe(&pos).unwrap(),
                "{s} {slot}"
            );
        }
    }
    let idx = Index::for_rules(rules(4));
    let (converted, repacked) = (scratch.join("v7"), scratch.join("fresh"));
    for (src, out) in [(old.as_path(), &converted), (game4(), &repacked)] {
        let opts = RepackOptions {
            out: Some(out.clone()),
            ..RepackOptions::smallest()
        };
        let reports = repack(src, idx, &opts, |_| {}).unwrap();
        assert!(reports.iter().all(|r| !r.kept));
    }
    for s in sectors {
        let name = s.file_name();
        let read = |d: &Path| std::fs::read(d.join(&name)).unwrap();
        assert!(read(&converted) == read(&repacked), "{s}");
        let f = SubspaceFile::open(&converted.join(&name), &Expect::any()).unwrap();
        assert_eq!((f.header().version, f.header().flags), (7, 47), "{s}");
    }
}

/// Every file of `dir` is in the smallest form (`build --form small`) and no
/// staging file is left.
fn all_smallest(dir: &Path) {
    let tb = Tablebase::open(dir).unwrap();
    let smallest = RepackOptions::smallest();
    for s in tb.available_sectors() {
        let f = tb.sector_file(s).unwrap();
        assert!(is_repacked(f, &smallest), "{s} is not in the small form");
    }
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(
            !name.ends_with(".repack") && !name.ends_with(".tmp"),
            "{name}"
        );
    }
}

/// `build --form small` leaves the smallest files (each checked on every slot by
/// the recoding), which answer every probe as the fast form's on every third slot;
/// a later run reads the small files of an earlier one
/// as children (here the placement sectors read the moving phase's).
#[test]
fn a_small_form_build_probes_as_the_fast_build() {
    let scratch = Scratch::new("repack-a-small-form-build");
    let dir = scratch.join("small-build");
    let rules = rules(4);
    let small = |phase| BuildOptions {
        form: Form::Small,
        ..BuildOptions::quiet(dir.clone(), Selection::All, phase)
    };
    build(rules, &small(BuildPhase::Moving)).unwrap();
    all_smallest(&dir);
    build(rules, &small(BuildPhase::All)).unwrap();
    all_smallest(&dir);
    let sectors = all_sectors(game4());
    assert_eq!(all_sectors(&dir), sectors);
    let changed = probes_equal(game4(), &dir, &sectors, STEP_4, 13);
    assert!(changed > 100, "{changed} don't-cares exercised");
    verify_clean(&dir, 4, None);
    // The manifest lists every file as it is.
    let m = millbase::table::dir::manifest::Manifest::load(&dir)
        .unwrap()
        .unwrap();
    let tb = Tablebase::open(&dir).unwrap();
    for &s in &sectors {
        let h = tb.sector_file(s).unwrap().header();
        assert_eq!(
            m.get_sector(s).unwrap().checksum,
            format!("{:016x}", h.checksum),
            "{s}"
        );
    }
    assert!(m.pending.is_empty(), "{:?}", m.pending);
    assert!(bytes(&dir) * 2 < bytes(game4()));
    same_files_as_repack(game4(), &dir, &sectors, scratch.join("repacked"));
}

/// `build --form small` of a game whose stones move during placement (`lasker-4`:
/// its placement sectors solved in pairs, each pair's files recoded together):
/// every file ends in the small form, with every slot's true value that of the
/// fast build.
#[test]
fn a_small_form_build_where_stones_move_in_placement_keeps_every_value() {
    let rules = Rules::by_name("lasker-4").unwrap();
    let scratch = Scratch::new("repack-lasker-small");
    let (fast, small) = (scratch.join("fast"), scratch.join("small"));
    build(
        rules,
        &BuildOptions::quiet(fast.clone(), Selection::All, BuildPhase::All),
    )
    .unwrap();
    let opts = BuildOptions {
        form: Form::Small,
        ..BuildOptions::quiet(small.clone(), Selection::All, BuildPhase::All)
    };
    build(rules, &opts).unwrap();
    all_smallest(&small);
    let sectors = all_sectors(&fast);
    assert_eq!(all_sectors(&small), sectors);
    assert!(sectors.len() > 70, "{} files", sectors.len());
    let (a, b) = (
        Tablebase::open(&fast).unwrap(),
        Tablebase::open(&small).unwrap(),
    );
    for &s in &sectors {
        let want = a.sector_file(s).unwrap().read_all().unwrap();
        let got = true_codes(&b, s, b.sector_file(s).unwrap()).unwrap();
        assert!(want == got, "{s}: values differ");
    }
    assert!(bytes(&small) * 2 < bytes(&fast));
    same_files_as_repack(&fast, &small, &sectors, scratch.join("repacked"));
}

/// Each file of `sectors` in `small` (as `build --form small` left it, its
/// fill told by the build which slots a capture reaches) is byte for byte the
/// file `repack --profile archive` makes of `fast` (whose fill searches the
/// captures), into `out`.
fn same_files_as_repack(fast: &Path, small: &Path, sectors: &[Sector], out: PathBuf) {
    let tb = Tablebase::open(fast).unwrap();
    let opts = RepackOptions {
        out: Some(out.clone()),
        ..RepackOptions::smallest()
    };
    repack(fast, tb.index(), &opts, |_| {}).unwrap();
    for s in sectors {
        let name = s.file_name();
        let (a, b) = (
            std::fs::read(out.join(&name)),
            std::fs::read(small.join(&name)),
        );
        assert!(a.unwrap() == b.unwrap(), "{s}: the files differ");
    }
}

/// `build --form serving` leaves the serving profile's files, which answer every
/// probe as the fast form's.
#[test]
fn a_serving_form_build_probes_as_the_fast_build() {
    let scratch = Scratch::new("repack-a-serving-form-build");
    let dir = scratch.join("serving-build");
    let opts = BuildOptions {
        form: Form::Serving,
        ..BuildOptions::quiet(dir.clone(), Selection::All, BuildPhase::All)
    };
    build(rules(4), &opts).unwrap();
    let tb = Tablebase::open(&dir).unwrap();
    let serving = RepackOptions::serving();
    for s in tb.available_sectors() {
        let f = tb.sector_file(s).unwrap();
        assert!(is_repacked(f, &serving), "{s} is not in the serving form");
        assert!(!is_repacked(f, &RepackOptions::smallest()), "{s}");
    }
    let sectors = all_sectors(game4());
    assert_eq!(all_sectors(&dir), sectors);
    probes_equal(game4(), &dir, &sectors, STEP_SERVING, 97);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Checks the order in which `build --form small` recodes, in `dir` as a run
/// killed right after it recoded a file left it: a file's recoded form takes its
/// place only after every file that reads it as a child (a ply that captures
/// nothing or one that captures, but for a moving-phase file's other side, solved
/// and recoded with it) is recoded, in its place or beside it, so that recodes
/// read their children in the fast form. Returns the files left in the fast form.
fn recoded_after_readers(dir: &Path) -> Vec<Sector> {
    let tb = Tablebase::open(dir).unwrap();
    let smallest = RepackOptions::smallest();
    let sectors = tb.available_sectors();
    let small = |s: Sector| is_repacked(tb.sector_file(s).unwrap(), &smallest);
    let recoded = |s: Sector| small(s) || dir.join(format!("{}.recoded", s.file_name())).exists();
    for &reader in &sectors {
        let (quiet, capture) = reader.children();
        let children = capture
            .into_iter()
            .chain((!reader.is_moving()).then_some(quiet));
        for child in children.filter(|c| sectors.contains(c)) {
            assert!(
                !small(child) || recoded(reader),
                "{child} was recoded before {reader}, which reads it"
            );
        }
    }
    sectors.into_iter().filter(|&s| !small(s)).collect()
}

/// A `build --form small` killed mid-way (after a pair is solved, with files of the
/// fast form not yet recoded; right after a file is recoded beside its file, whose
/// recoded form is then damaged; right after a recoded form took its file's place,
/// twice) resumes: the next run keeps the intact recoded forms beside their files,
/// recodes the damaged one again and what is left, in an order where a file's
/// readers come first, and every probe equals the fast build's.
#[test]
fn a_killed_small_form_build_resumes() {
    let scratch = Scratch::new("repack-a-killed-small-form");
    use crate::common::program::{BIN, s, text};
    let dir = scratch.join("small-kill");
    let run = |abort: Option<&str>| {
        let mut cmd = Command::new(BIN);
        cmd.args([
            "build",
            "--quiet",
            "--rules",
            "standard-4",
            "--form",
            "small",
        ])
        .args(["--db", s(&dir)]);
        if let Some(stage) = abort {
            cmd.env("MILLBASE_TEST_ABORT_AFTER", stage);
        }
        cmd.output().unwrap()
    };
    for stage in [
        "solved:4-4",
        "beside:3-4",
        "beside:4-4",
        "recoded:3-4",
        "recoded:4-4",
    ] {
        let out = run(Some(stage));
        assert!(!out.status.success(), "{stage}: the build was not stopped");
        assert!(
            text(&out.stderr).contains(&format!("aborting after {stage}")),
            "{}",
            text(&out.stderr)
        );
        // Whatever has its final name is whole: fast or small.
        let tb = Tablebase::open(&dir).unwrap();
        for s in tb.available_sectors() {
            tb.sector_file(s).unwrap().verify_checksums().unwrap();
        }
        if let Some(name) = stage.strip_prefix("beside:") {
            let beside = dir.join(format!("{name}.mdb.recoded"));
            let intact = std::fs::read(&beside).unwrap();
            if name == "3-4" {
                // Damaged: the next run must not install it.
                let mut bytes = intact.clone();
                let at = bytes.len() / 2;
                bytes[at] ^= 0x10;
                std::fs::write(&beside, bytes).unwrap();
            } else {
                // Kept as it is by the next run (not written again: the same file).
                use std::os::unix::fs::MetadataExt;
                let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
                let before = ino(&beside);
                let out = run(Some(stage));
                assert!(text(&out.stderr).contains(stage), "{}", text(&out.stderr));
                assert_eq!(ino(&beside), before, "{stage}: recoded again");
                assert_eq!(std::fs::read(&beside).unwrap(), intact, "{stage}");
            }
        }
        if stage.starts_with("recoded:") {
            // Files are left in the fast form for the next run: the last
            // placement sectors solved, which read every other.
            let fast = recoded_after_readers(&dir);
            assert!(
                fast.contains(&Sector::parse("0-0-4-4").unwrap()),
                "{stage}: {fast:?}"
            );
        }
    }
    let out = run(None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    all_smallest(&dir);
    let sectors = all_sectors(game4());
    assert_eq!(all_sectors(&dir), sectors);
    probes_equal(game4(), &dir, &sectors, STEP_4, 1 << 20);
}

/// Whether slot `i` of `s` (true codes `truth`) is its own twin, neither lost in
/// 0 nor won, and left by no capturing ply: only the table knows its value.
fn only_the_table_knows(idx: &Index, s: Sector, truth: &[u16], i: usize) -> bool {
    let (k, l) = s.counts();
    let (own, opp) = idx.position(k, l, i as u64);
    let pos = s.position(own, opp);
    idx.index(own, opp) == i as u64
        && truth[i] != Value::Loss(0).code()
        && Value::from_code(truth[i]).wdl() != Wdl::Win
        && !pos.legal_plies(idx.rules()).iter().any(|p| p.removes())
}

/// `build --form small` on a disk too small for the fast form of the whole run
/// (`MILLBASE_DISK_LIMIT` caps the free space it assumes) says so and recodes
/// each file as soon as no solve reads it, reading small children: the files are
/// the smallest form still, and answer every probe as the fast form's.
#[test]
fn a_small_form_build_short_of_disk_recodes_as_soon_as_solved() {
    let scratch = Scratch::new("repack-small-form-short-of-disk");
    let dir = scratch.join("small-build");
    let out = Command::new(env!("CARGO_BIN_EXE_millbase"))
        .args(["build", "--rules", "standard-4", "--form", "small", "--db"])
        .arg(&dir)
        .env("MILLBASE_DISK_LIMIT", "1000")
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("would not fit the 0.0 GB free")
            && said.contains("recoded as soon as no solve reads it"),
        "{said}"
    );
    all_smallest(&dir);
    let sectors = all_sectors(game4());
    assert_eq!(all_sectors(&dir), sectors);
    let changed = probes_equal(game4(), &dir, &sectors, STEP_4, 17);
    assert!(changed > 100, "{changed} don't-cares exercised");
}
