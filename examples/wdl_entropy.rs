//! How few bits the WDL section could take: the entropy of win/draw/loss per slot,
//! alone and given contexts a decoder can compute from the position, measured on
//! samples of a real database (the storage issue's question "which predictor?",
//! asked before any coder is written).
//!
//! ```text
//! cargo run --release --example wdl_entropy -- DB SECTOR... [--runs N] [--run-len L] [--random M] [--seed S] [--halve-at H]
//! ```
//!
//! Per sector it samples `N` runs (default 128) of `L` contiguous slots (default
//! 4,096), at random places in slot order, so that the previous slot's value is a
//! meaningful context, and `M` (default 50,000) single random slots. For every
//! sampled slot it reads the stored result (the file must hold true results, as
//! `millbase build` writes them), computes features of the position (mills,
//! mobility, blocked stones, threats, the best result of a capturing ply, the
//! results of the earlier neighbours in the same class: see `feat`) and asks
//! the crate's own don't-care rule ([`millbase::table::pack::dontcare::wdl_freedom`]) what the
//! slot could store in a WDL section with don't-cares.
//!
//! It prints, in bits per slot:
//! - what the file spends on WDL today (the WDL section's bytes over its slots);
//! - per context (a tuple of features, possibly with the previous slots' results
//!   in slot order), with the number of context values seen:
//!   - `plug-in`: the empirical conditional entropy `H(WDL | context)` over the
//!     runs, which flatters many contexts (it is fitted to the sample);
//!   - `KT`: the code length of an adaptive model run sequentially over the runs
//!     (Krichevsky–Trofimov counts per context value, `(n_s + 1/2) / (n + 3/2)`),
//!     what an adaptive arithmetic coder sharing one model over the sector would
//!     spend, learning cost included;
//!   - `KT dec`: the same with a context's counts halved whenever they reach
//!     `H` (default 256), so that the model follows local statistics;
//!   - `KT/run`: `KT` with the counts reset at each run, as a coder that adapts
//!     within one block of `L` slots only would spend;
//!   - `f0 plug`, `f0 KT`, `f0 dec`: don't-cares and duplicates cost nothing and
//!     teach the model nothing: the entropy over the other slots times their
//!     share. A lower bound only: a slot's freedom depends on its true result, so
//!     no decoder knows which slots are free;
//!   - `fill dc`: what a decoder that does not know which slots are free gets: at
//!     a free slot the encoder stores the allowed result the model (`KT dec`)
//!     finds most likely and pays for it, so the model and the previous-slot
//!     context see stored values (the neighbour context sees true results, as a
//!     decoder that raises each decoded slot by its captures would);
//!   - `rand pl`, `rand KT`: the plug-in and `KT` figures over the lone random
//!     slots, a check that the runs are representative (`-` for contexts with the
//!     previous slot, which a lone slot does not have);
//! - the time the neighbour context takes per slot on one thread, what a decoder
//!   would pay for it.
//!
//! The contexts with `capture` need the results of the capturing plies (probes into
//! smaller sectors, as the don't-care rule's probe makes them anyway); the others
//! need the position only.

use feat::*;
use millbase::mix::SplitMix;
use millbase::rules::position::points;
use millbase::rules::value::Wdl;
use millbase::search::engine::eval::features;
use millbase::table::pack::dontcare::{Freedom, wdl_freedom};
use millbase::table::probe::{ProbeError, Tablebase};
use millbase::table::sector::Sector;
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::Instant;

/// The features of a slot's position, each a small number (an index into
/// [`Slot::f`]); [`RADIX`] gives how many values each takes.
mod feat {
    /// Closed mills of the side to move (at most 3 counted).
    pub const OWN_CLOSED: usize = 0;
    /// Closed mills of the opponent.
    pub const OPP_CLOSED: usize = 1;
    /// Open mills (two stones and an empty point) of the side to move.
    pub const OWN_OPEN: usize = 2;
    /// Open mills of the opponent.
    pub const OPP_OPEN: usize = 3;
    /// Open mills the side to move can close with its next ply.
    pub const OWN_CLOSABLE: usize = 4;
    /// Open mills the opponent could close with its next ply.
    pub const OPP_CLOSABLE: usize = 5;
    /// Mobility of the side to move (moves to adjacent empty points), bucketed.
    pub const OWN_MOBILITY: usize = 6;
    /// Mobility of the opponent, bucketed.
    pub const OPP_MOBILITY: usize = 7;
    /// Stones of the side to move with no empty neighbour (at most 4 counted).
    pub const OWN_BLOCKED: usize = 8;
    /// Blocked stones of the opponent.
    pub const OPP_BLOCKED: usize = 9;
    /// The side to move has a capturing ply (closes a mill now).
    pub const CAPTURE_EXISTS: usize = 10;
    /// The side to move has no legal ply (it has lost).
    pub const NO_MOVE: usize = 11;
    /// The best result of a capturing ply: 0 none, 1 loss, 2 draw, 3 win.
    pub const CAPTURE: usize = 12;
    /// The results of the *earlier neighbours*: the positions with the same stones
    /// of the side to move and one opponent stone slid to an adjacent empty point
    /// whose slot comes earlier in the same class (decoded already by a coder whose
    /// blocks hold whole classes): `9 w + 3 d + l` for `w` wins, `d` draws and `l`
    /// losses among them, each counted up to 2.
    pub const NEIGHBOURS: usize = 13;
    /// Number of features.
    pub const COUNT: usize = 14;
}

/// Values each feature takes.
const RADIX: [u64; feat::COUNT] = [4, 4, 4, 4, 4, 4, 8, 8, 5, 5, 2, 2, 4, 27];

/// Results as symbols: the file's trits (0 draw, 1 win, 2 loss).
fn symbol(w: Wdl) -> u8 {
    match w {
        Wdl::Draw => 0,
        Wdl::Win => 1,
        Wdl::Loss => 2,
    }
}

/// How good a symbol is for the side to move: loss 0, draw 1, win 2.
fn goodness(sym: u8) -> u8 {
    [1, 2, 0][sym as usize]
}

/// A sampled slot: its stored (true) result, what the don't-care rule lets it
/// store, and its features.
#[derive(Clone, Copy)]
struct Slot {
    sym: u8,
    freedom: Freedom,
    f: [u8; feat::COUNT],
}

impl Slot {
    /// Whether the encoder may store `sym` here.
    fn allows(&self, sym: u8) -> bool {
        match self.freedom {
            Freedom::Fixed => sym == self.sym,
            Freedom::AtMost => goodness(sym) <= goodness(self.sym),
            Freedom::Any => true,
        }
    }
}

/// Mobility buckets: 0, 1, 2, 3-4, 5-6, 7-9, 10-13, 14 and more.
fn mobility_bucket(m: i32) -> u8 {
    match m {
        ..=2 => m.max(0) as u8,
        3..=4 => 3,
        5..=6 => 4,
        7..=9 => 5,
        10..=13 => 6,
        _ => 7,
    }
}

/// The [`feat::NEIGHBOURS`] context of slot `slot` of sector `s`.
fn neighbours(tb: &Tablebase, s: Sector, slot: u64) -> Result<u8, ProbeError> {
    let rules = tb.rules();
    let idx = tb.index();
    let (k, l) = s.counts();
    let file = tb.sector_file(s)?;
    let (own, opp) = idx.position(k, l, slot);
    let class_start = slot - slot % idx.per_class(k, l);
    let empty = rules.all() & !(own | opp);
    let mut near = [0u8; 3];
    for p in points(opp) {
        for q in points(rules.adjacency[p as usize] & empty) {
            let n = idx.index(own, opp ^ (1 << p) ^ (1 << q));
            if (class_start..slot).contains(&n) {
                let c = &mut near[symbol(file.wdl(n)?) as usize];
                *c = (*c + 1).min(2);
            }
        }
    }
    Ok(9 * near[1] + 3 * near[0] + near[2])
}

/// The sampled slot `slot` of sector `s`.
fn sample(tb: &Tablebase, s: Sector, slot: u64) -> Result<Slot, ProbeError> {
    let rules = tb.rules();
    let idx = tb.index();
    let (k, l) = s.counts();
    let truth = tb.sector_file(s)?.wdl(slot)?;
    let freedom = wdl_freedom(tb, s, slot, truth)?;
    let (own, opp) = idx.position(k, l, slot);
    let pos = s.position(own, opp);
    let me = features(rules, &pos, pos.to_move);
    let them = features(rules, &pos, pos.to_move.other());
    let plies = pos.legal_plies(rules);
    let mut capture = 0u8;
    for &ply in plies.iter().filter(|p| p.removes()) {
        let w = tb.ply_wdl(&pos.after(rules, ply))?;
        capture = capture.max(1 + goodness(symbol(w)));
    }
    let clamp = |x: i32, max: u8| x.clamp(0, max as i32) as u8;
    let mut f = [0u8; feat::COUNT];
    f[feat::OWN_CLOSED] = clamp(me.closed, 3);
    f[feat::OPP_CLOSED] = clamp(them.closed, 3);
    f[feat::OWN_OPEN] = clamp(me.open, 3);
    f[feat::OPP_OPEN] = clamp(them.open, 3);
    f[feat::OWN_CLOSABLE] = clamp(me.closable, 3);
    f[feat::OPP_CLOSABLE] = clamp(them.closable, 3);
    f[feat::OWN_MOBILITY] = mobility_bucket(me.mobility);
    f[feat::OPP_MOBILITY] = mobility_bucket(them.mobility);
    f[feat::OWN_BLOCKED] = clamp(me.blocked, 4);
    f[feat::OPP_BLOCKED] = clamp(them.blocked, 4);
    f[feat::CAPTURE_EXISTS] = (capture > 0) as u8;
    f[feat::NO_MOVE] = plies.is_empty() as u8;
    f[feat::CAPTURE] = capture;
    f[feat::NEIGHBOURS] = neighbours(tb, s, slot)?;
    Ok(Slot {
        sym: symbol(truth),
        freedom,
        f,
    })
}

/// A candidate context: some features, and how many previous slots' results (in
/// slot order, within a run) it also looks at.
struct Context {
    name: &'static str,
    features: &'static [usize],
    prev: usize,
}

/// Closable mills and mobility of both sides.
const CM: &[usize] = &[OWN_CLOSABLE, OPP_CLOSABLE, OWN_MOBILITY, OPP_MOBILITY];

/// The capture result, closable mills and mobility.
const CAP_CM: &[usize] = &[
    CAPTURE,
    OWN_CLOSABLE,
    OPP_CLOSABLE,
    OWN_MOBILITY,
    OPP_MOBILITY,
];

/// The earlier neighbours, closable mills and mobility.
const NB_CM: &[usize] = &[
    NEIGHBOURS,
    OWN_CLOSABLE,
    OPP_CLOSABLE,
    OWN_MOBILITY,
    OPP_MOBILITY,
];

/// The earlier neighbours, the capture result, closable mills and mobility.
const NB_CAP_CM: &[usize] = &[
    NEIGHBOURS,
    CAPTURE,
    OWN_CLOSABLE,
    OPP_CLOSABLE,
    OWN_MOBILITY,
    OPP_MOBILITY,
];

/// Every feature but the neighbours: the position's own features, then the
/// capture result (the last but one feature).
const POSITION_CAP: &[usize] = &{
    let mut all = [0; feat::COUNT - 1];
    let mut i = 0;
    while i < all.len() {
        all[i] = i;
        i += 1;
    }
    all
};

/// Every feature but the capture result (which costs probes) and the neighbours.
const POSITION: &[usize] = POSITION_CAP.split_at(CAPTURE).0;

/// A context of `features` and `prev` previous results, called `name`.
const fn ctx(name: &'static str, features: &'static [usize], prev: usize) -> Context {
    Context {
        name,
        features,
        prev,
    }
}

/// The contexts measured, simplest first.
const CONTEXTS: &[Context] = &[
    ctx("none (order 0)", &[], 0),
    ctx("closed mills", &[OWN_CLOSED, OPP_CLOSED], 0),
    ctx("open mills", &[OWN_OPEN, OPP_OPEN], 0),
    ctx("closable mills", &[OWN_CLOSABLE, OPP_CLOSABLE], 0),
    ctx("mobility", &[OWN_MOBILITY, OPP_MOBILITY], 0),
    ctx("blocked stones", &[OWN_BLOCKED, OPP_BLOCKED], 0),
    ctx("capture exists, no move", &[CAPTURE_EXISTS, NO_MOVE], 0),
    ctx("capture result", &[CAPTURE], 0),
    ctx("closable+mobility", CM, 0),
    ctx(
        "closable+mobility+blocked",
        &[
            OWN_CLOSABLE,
            OPP_CLOSABLE,
            OWN_MOBILITY,
            OPP_MOBILITY,
            OWN_BLOCKED,
            OPP_BLOCKED,
            NO_MOVE,
        ],
        0,
    ),
    ctx("all position features", POSITION, 0),
    ctx("prev", &[], 1),
    ctx("prev 2", &[], 2),
    ctx("closable+mobility, prev", CM, 1),
    ctx("all position features, prev", POSITION, 1),
    ctx("capture result, prev", &[CAPTURE], 1),
    ctx("capture+closable+mobility", CAP_CM, 0),
    ctx("capture+closable+mobility, prev", CAP_CM, 1),
    ctx("neighbours", &[NEIGHBOURS], 0),
    ctx("neighbours, prev", &[NEIGHBOURS], 1),
    ctx("neighbours+closable+mobility, prev", NB_CM, 1),
    ctx("neighbours+capture, prev", &[NEIGHBOURS, CAPTURE], 1),
    ctx("neighbours+capture+closable+mob., prev", NB_CAP_CM, 1),
    ctx("capture+all features, prev", POSITION_CAP, 1),
];

impl Context {
    /// The context value of `slot`, whose run's previous symbols are `history`
    /// (most recent last; 3 stands for "before the run").
    fn value(&self, slot: &Slot, history: [u8; 2]) -> u64 {
        let mut v = self
            .features
            .iter()
            .fold(0u64, |v, &i| v * RADIX[i] + slot.f[i] as u64);
        for &h in history.iter().rev().take(self.prev) {
            v = v * 4 + h as u64;
        }
        v
    }
}

/// How free slots are treated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Every slot coded with its true result.
    All,
    /// Free slots (don't-cares, duplicates) cost nothing and teach the model
    /// nothing; the history holds true results.
    FreeZero,
    /// Free slots store the allowed result the model finds most likely, and are
    /// coded like the others.
    Fill,
}

/// Counts of the three symbols per context value: the plug-in entropy at the end,
/// and the adaptive (KT) code length along the way. With a `limit`, a context's
/// counts are halved whenever their sum reaches it, so the model follows local
/// statistics (as the adaptive coders of context-mixing compressors do); the
/// plug-in entropy is then meaningless.
struct Model {
    counts: HashMap<u64, [u32; 3]>,
    kt_bits: f64,
    limit: u32,
}

impl Model {
    /// An empty model whose counts are halved at `limit`.
    fn new(limit: u32) -> Model {
        Model {
            counts: HashMap::new(),
            kt_bits: 0.0,
            limit,
        }
    }

    /// The KT code length of `sym` in context `ctx` before it is counted.
    fn cost(c: &[u32; 3], sym: u8) -> f64 {
        let n: u32 = c.iter().sum();
        -((c[sym as usize] as f64 + 0.5) / (n as f64 + 1.5)).log2()
    }

    /// Codes `sym` in context `ctx`: pays its KT code length, then counts it.
    fn code(&mut self, ctx: u64, sym: u8) {
        let c = self.counts.entry(ctx).or_default();
        self.kt_bits += Model::cost(c, sym);
        c[sym as usize] += 1;
        if c.iter().sum::<u32>() >= self.limit {
            for x in c {
                *x = x.div_ceil(2);
            }
        }
    }

    /// The allowed symbol that context `ctx` finds most likely.
    fn likeliest(&self, ctx: u64, slot: &Slot) -> u8 {
        let c = self.counts.get(&ctx).copied().unwrap_or_default();
        // Ties (a context not seen yet) go to the true result, so that a fresh
        // context does not learn a result the slot merely allows.
        (0..3u8)
            .filter(|&s| slot.allows(s))
            .max_by_key(|&s| (c[s as usize], s == slot.sym))
            .expect("a slot allows its true result")
    }

    /// The empirical conditional entropy, in bits summed over the coded slots.
    fn plug_in_bits(&self) -> f64 {
        self.counts
            .values()
            .map(|c| {
                let n: u32 = c.iter().sum();
                c.iter()
                    .filter(|&&x| x > 0)
                    .map(|&x| x as f64 * (n as f64 / x as f64).log2())
                    .sum::<f64>()
            })
            .sum()
    }
}

/// Bits a context costs over `runs`: plug-in and KT totals, and the number of
/// context values seen. `reset` starts a fresh model at each run (KT only);
/// `limit` is the model's (see [`Model`]).
fn measure(
    ctx: &Context,
    runs: &[Vec<Slot>],
    mode: Mode,
    reset: bool,
    limit: u32,
) -> (f64, f64, usize) {
    let mut model = Model::new(limit);
    let mut kt = 0.0;
    let mut seen = 0;
    for run in runs {
        if reset {
            kt += model.kt_bits;
            seen = seen.max(model.counts.len());
            model = Model::new(limit);
        }
        let mut history = [3u8; 2];
        for slot in run {
            let c = ctx.value(slot, history);
            let stored = match (mode, slot.freedom) {
                (Mode::All, _) | (_, Freedom::Fixed) => {
                    model.code(c, slot.sym);
                    slot.sym
                }
                (Mode::FreeZero, _) => slot.sym,
                (Mode::Fill, _) => {
                    let s = model.likeliest(c, slot);
                    model.code(c, s);
                    s
                }
            };
            history = [history[1], stored];
        }
    }
    if reset {
        (f64::NAN, kt + model.kt_bits, seen.max(model.counts.len()))
    } else {
        (model.plug_in_bits(), model.kt_bits, model.counts.len())
    }
}

/// Options of the command line.
struct Options {
    dir: String,
    sectors: Vec<Sector>,
    runs: u64,
    run_len: u64,
    random: u64,
    seed: u64,
    halve_at: u32,
}

fn parse_args() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut o = Options {
        dir: args.next().ok_or("no database directory")?,
        sectors: Vec::new(),
        runs: 128,
        run_len: 4096,
        random: 50_000,
        seed: 1,
        halve_at: 256,
    };
    while let Some(a) = args.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or(format!("{name} wants a number"))
        };
        match a.as_str() {
            "--runs" => o.runs = number("--runs")?,
            "--run-len" => o.run_len = number("--run-len")?.max(1),
            "--random" => o.random = number("--random")?,
            "--seed" => o.seed = number("--seed")?,
            "--halve-at" => o.halve_at = number("--halve-at")?.clamp(2, u32::MAX as u64) as u32,
            name => o
                .sectors
                .push(Sector::parse(name).ok_or(format!("{name}: not a sector"))?),
        }
    }
    if o.sectors.is_empty() {
        return Err("no sector".into());
    }
    Ok(o)
}

/// The sampled runs of sector `s`: `runs` runs of `len` contiguous slots at random
/// places (sorted), and `random` lone slots, each a run of one.
fn sample_slots(o: &Options, s: Sector, size: u64) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let mut mix = SplitMix(o.seed ^ (s.k as u64) << 8 ^ (s.l as u64) << 16);
    let len = o.run_len.min(size);
    let mut starts: Vec<u64> = (0..o.runs).map(|_| mix.below(size - len + 1)).collect();
    starts.sort_unstable();
    let runs = starts.iter().map(|&a| (a..a + len).collect()).collect();
    let mut lone: Vec<u64> = (0..o.random).map(|_| mix.below(size)).collect();
    lone.sort_unstable();
    (runs, lone.into_iter().map(|x| vec![x]).collect())
}

/// The sampled slots of `runs`, computed in parallel.
fn collect(tb: &Tablebase, s: Sector, runs: &[Vec<u64>]) -> Result<Vec<Vec<Slot>>, ProbeError> {
    runs.par_iter()
        .map(|run| run.iter().map(|&i| sample(tb, s, i)).collect())
        .collect()
}

fn report(tb: &Tablebase, o: &Options, s: Sector) -> Result<(), ProbeError> {
    let t = Instant::now();
    let file = tb.sector_file(s)?;
    if file.wdl_dont_cares() {
        eprintln!("{s}: the file has WDL don't-cares; measure a directory with true results");
        std::process::exit(1);
    }
    let size = file.size();
    let (wdl_bytes, _) = file.section_bytes();
    let (run_slots, lone_slots) = sample_slots(o, s, size);
    let runs = collect(tb, s, &run_slots)?;
    let lone = collect(tb, s, &lone_slots)?;
    let n = runs.iter().map(Vec::len).sum::<usize>() as f64;
    let share = |f: &dyn Fn(&Slot) -> bool| {
        100.0 * runs.iter().flatten().filter(|x| f(x)).count() as f64 / n
    };
    println!(
        "{s}: {size} slots; file WDL {:.4} bit/slot; sample {} runs of {} + {} lone slots ({:.0} s)",
        wdl_bytes as f64 * 8.0 / size as f64,
        runs.len(),
        runs.first().map_or(0, Vec::len),
        lone.len(),
        t.elapsed().as_secs_f64()
    );
    println!(
        "  runs: win {:.1}%, draw {:.1}%, loss {:.1}%; duplicates {:.1}%, WDL don't-cares {:.1}%",
        share(&|x| x.sym == 1),
        share(&|x| x.sym == 0),
        share(&|x| x.sym == 2),
        share(&|x| x.freedom == Freedom::Any),
        share(&|x| x.freedom == Freedom::AtMost),
    );
    println!(
        "  {:<40} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "context",
        "values",
        "plug-in",
        "KT",
        "KT dec",
        "KT/run",
        "f0 plug",
        "f0 KT",
        "f0 dec",
        "fill dc",
        "rand pl",
        "rand KT"
    );
    let nl = lone.len().max(1) as f64;
    let never = u32::MAX;
    for ctx in CONTEXTS {
        let (plug, kt, seen) = measure(ctx, &runs, Mode::All, false, never);
        let (_, kt_dec, _) = measure(ctx, &runs, Mode::All, false, o.halve_at);
        let (_, kt_run, _) = measure(ctx, &runs, Mode::All, true, never);
        let (f0_plug, f0_kt, _) = measure(ctx, &runs, Mode::FreeZero, false, never);
        let (_, f0_dec, _) = measure(ctx, &runs, Mode::FreeZero, false, o.halve_at);
        let (_, fill_dec, _) = measure(ctx, &runs, Mode::Fill, false, o.halve_at);
        let lone_cells = if ctx.prev == 0 {
            let (p, k, _) = measure(ctx, &lone, Mode::All, false, never);
            format!("{:>7.4} {:>7.4}", p / nl, k / nl)
        } else {
            format!("{:>7} {:>7}", "-", "-")
        };
        println!(
            "  {:<40} {seen:>6} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {lone_cells}",
            ctx.name,
            plug / n,
            kt / n,
            kt_dec / n,
            kt_run / n,
            f0_plug / n,
            f0_kt / n,
            f0_dec / n,
            fill_dec / n,
        );
    }
    // What a decoder would pay for the neighbour context (one thread, blocks cached).
    let timer = Instant::now();
    for &slot in run_slots.iter().flatten() {
        std::hint::black_box(neighbours(tb, s, slot)?);
    }
    println!(
        "  neighbour context: {:.0} ns per slot; ({:.0} s)",
        timer.elapsed().as_secs_f64() * 1e9 / n,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() {
    let o = parse_args().unwrap_or_else(|e| {
        eprintln!("error: {e}");
        eprintln!(
            "usage: wdl_entropy DB SECTOR... [--runs N] [--run-len L] [--random M] [--seed S] [--halve-at H]"
        );
        std::process::exit(2)
    });
    let tb = Tablebase::open(&o.dir).unwrap_or_else(|e| {
        eprintln!("error: {}: {e}", o.dir);
        std::process::exit(1)
    });
    for &s in &o.sectors {
        if let Err(e) = report(&tb, &o, s) {
            eprintln!("error: {s}: {e}");
            std::process::exit(1);
        }
    }
}
