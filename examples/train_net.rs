//! Trains the engine's network evaluation (`src/search/engine/net.rs`) on exact
//! values from the databases: `tools/train-net.sh` runs both steps and writes the
//! weights to `src/search/engine/net_weights.bin` (little-endian `f32`s,
//! `Net::to_le_bytes`) and the fit's report to the documentation of
//! `src/search/engine/net_weights.rs`, which reads the weights when the program is
//! compiled.
//!
//! ```text
//! cargo run --release --example train_net -- sample DB OUT.bin [GAMES] [PER_SECTOR] [SEED]
//! cargo run --release --example train_net -- train IN.bin OUT.rs [EPOCHS] [SEED]
//! (writes OUT.rs and, beside it, the weights OUT.bin)
//! ```
//!
//! `sample` draws positions two ways and writes each with its exact win/draw/loss:
//! - from `GAMES` games (default 40,000) played from the start, where each ply keeps
//!   the position's value with probability 3/4 (chosen at random among the plies
//!   that do) and is a random legal ply otherwise: the positions of play and of
//!   the search trees around it, every ply of the placement phase and up to 40
//!   plies of the moving phase;
//! - `PER_SECTOR` (default 2,000) uniform random positions of every sector, for
//!   the rest of the space.
//!
//! Positions are kept once (first come). `train` holds out one position in ten (by
//! a hash of the position), fits the network with Adam on the cross-entropy of its
//! logit against the result (1, 1/2, 0), each position under a random board
//! symmetry each epoch, and compares the held-out error and win/draw/loss accuracy
//! with the `tuned` linear evaluation's, overall, by source and by ply.

#[path = "common/sampling.rs"]
mod sampling;
#[path = "common/scale.rs"]
mod scale;

use millbase::mix::{SplitMix, splitmix64};
use millbase::rules::position::{Color, Position};
use millbase::search::engine::eval::{Eval, named};
use millbase::search::engine::net::{HIDDEN, INPUTS, Inputs, Net, TERM_BASE, inputs};
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use millbase::{Rules, Wdl};
use rayon::prelude::*;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::time::Instant;

/// The start of a samples file (then a byte: the stones per side of the game).
const MAGIC: &[u8] = b"millbase net samples 1\n";
/// Bytes of one stored sample.
const RECORD: usize = 12;
/// Plies of the moving phase played in a sampled game.
const MOVING_PLIES: usize = 40;

/// Where a sample came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Game = 0,
    Sector = 1,
}

/// One stored position with its exact value.
#[derive(Clone, Copy)]
struct Sample {
    board: [u32; 2],
    hand: [u8; 2],
    to_move: Color,
    /// 0 (loss), 1 (draw) or 2 (win) for the side to move.
    wdl: u8,
    source: Source,
}

impl Sample {
    fn position(&self) -> Position {
        Position {
            board: self.board,
            hand: self.hand,
            to_move: self.to_move,
            pending_removal: false,
        }
    }
    fn key(&self) -> u64 {
        splitmix64(
            (self.board[0] as u64) << 32
                ^ self.board[1] as u64
                ^ (self.hand[0] as u64) << 58
                ^ (self.hand[1] as u64) << 53
                ^ (self.to_move.index() as u64) << 63,
        )
    }
    fn held_out(&self) -> bool {
        self.key().is_multiple_of(10)
    }
    fn target(&self) -> f32 {
        self.wdl as f32 / 2.0
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.board[0].to_le_bytes());
        out.extend_from_slice(&self.board[1].to_le_bytes());
        out.extend_from_slice(&[
            self.hand[0],
            self.hand[1],
            self.to_move.index() as u8 | (self.source as u8) << 1,
            self.wdl,
        ]);
    }
    fn read(b: &[u8]) -> Sample {
        let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Sample {
            board: [word(0), word(4)],
            hand: [b[8], b[9]],
            to_move: if b[10] & 1 == 0 {
                Color::White
            } else {
                Color::Black
            },
            source: if b[10] & 2 == 0 {
                Source::Game
            } else {
                Source::Sector
            },
            wdl: b[11],
        }
    }
}

fn wdl_code(w: Wdl) -> u8 {
    match w {
        Wdl::Loss => 0,
        Wdl::Draw => 1,
        Wdl::Win => 2,
    }
}

fn sample_of(pos: &Position, wdl: Wdl, source: Source) -> Sample {
    Sample {
        board: pos.board,
        hand: pos.hand,
        to_move: pos.to_move,
        wdl: wdl_code(wdl),
        source,
    }
}

/// The positions of one game from the start (see the module's text).
fn game_samples(tb: &Tablebase, seed: u64) -> Vec<Sample> {
    let rules = tb.rules();
    let mut mix = SplitMix(splitmix64(seed ^ 0x6a09_e667_f3bc_c909));
    let mut pos = Position::start(rules);
    let mut out = Vec::new();
    for _ in 0..2 * rules.stones as usize + MOVING_PLIES {
        if pos.is_over(rules) {
            break;
        }
        let moves = tb.moves_wdl(&pos).expect("the database covers the game");
        let Some(&(_, value)) = moves.first() else {
            break;
        };
        out.push(sample_of(&pos, value, Source::Game));
        let keep = moves.iter().take_while(|m| m.1 == value).count();
        let choice = if mix.below(4) == 0 {
            mix.below(moves.len() as u64)
        } else {
            mix.below(keep as u64)
        };
        pos = pos.after(rules, moves[choice as usize].0);
    }
    out
}

/// Uniform random positions of sector `s` where the game goes on.
fn sector_samples(tb: &Tablebase, s: Sector, per_sector: u64, seed: u64) -> Vec<Sample> {
    sampling::sector(tb, s, per_sector, seed)
        .into_iter()
        .map(|(_, pos, wdl)| sample_of(&pos, wdl, Source::Sector))
        .collect()
}

/// The optional numeric argument `i` of `rest`, or `default`.
fn number_arg(rest: &[String], i: usize, default: u64) -> u64 {
    rest.get(i).map_or(default, |a| {
        a.parse()
            .unwrap_or_else(|_| panic!("argument '{a}': write a number"))
    })
}

fn sample(args: &[String]) {
    let [db, out, rest @ ..] = args else {
        panic!("usage: train_net sample DB OUT.bin [GAMES] [PER_SECTOR] [SEED]");
    };
    let arg = |i: usize, default: u64| number_arg(rest, i, default);
    let (games, per_sector, seed) = (arg(0, 40_000), arg(1, 2_000), arg(2, 1));
    let start = Instant::now();
    let tb = Tablebase::open(db).expect("a database directory");
    let rules = tb.rules();
    // The games read blocks all over the database: keep many decompressed.
    tb.set_cache_limit(8 << 30);
    assert!(tb.has_placement(), "{db} has no placement sectors");
    let from_games: Vec<Vec<Sample>> = (0..games)
        .into_par_iter()
        .map(|g| game_samples(&tb, splitmix64(seed.wrapping_mul(1 << 40) ^ g)))
        .collect();
    eprintln!(
        "{games} games played, {:.0} s",
        start.elapsed().as_secs_f64()
    );
    let from_sectors: Vec<Vec<Sample>> = tb
        .available_sectors()
        .into_par_iter()
        .map(|s| sector_samples(&tb, s, per_sector, seed))
        .collect();
    let mut seen = HashSet::new();
    let mut bytes = Vec::new();
    let mut count = [0usize; 2];
    for s in from_games.iter().chain(&from_sectors).flatten() {
        if seen.insert(s.key()) {
            s.write(&mut bytes);
            count[s.source as usize] += 1;
        }
    }
    let mut file = MAGIC.to_vec();
    file.push(rules.stones);
    file.extend_from_slice(&bytes);
    std::fs::write(out, &file).expect("writing the samples");
    eprintln!(
        "{} positions from games, {} from {} sectors, written to {out}; {:.0} s",
        count[0],
        count[1],
        from_sectors.len(),
        start.elapsed().as_secs_f64()
    );
}

/// The samples of a file `sample` wrote, and the rules of their game.
fn read_samples(path: &str) -> (&'static Rules, Vec<Sample>) {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .expect("reading the samples");
    let body = bytes
        .strip_prefix(MAGIC)
        .expect("a file written by train_net sample");
    let rules = Rules::with_stones(body[0]);
    (
        rules,
        body[1..].chunks_exact(RECORD).map(Sample::read).collect(),
    )
}

/// The parameters as one vector: w1 (input-major), b1, w2, b2.
const W1: usize = 0;
const B1: usize = INPUTS * HIDDEN;
const W2: usize = B1 + HIDDEN;
const B2: usize = W2 + HIDDEN;
const PARAMS: usize = B2 + 1;

fn to_net(p: &[f32], scale: f32) -> Net {
    Net {
        w1: std::array::from_fn(|i| std::array::from_fn(|j| p[W1 + i * HIDDEN + j])),
        b1: std::array::from_fn(|j| p[B1 + j]),
        w2: std::array::from_fn(|j| p[W2 + j]),
        b2: p[B2],
        scale,
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Adds the gradient of the cross-entropy at `x` to `g`; the loss.
fn backprop(p: &[f32], x: &Inputs, target: f32, g: &mut [f32]) -> f32 {
    let mut h = [0f32; HIDDEN];
    h.copy_from_slice(&p[B1..B1 + HIDDEN]);
    let dense: Vec<(usize, f32)> = x
        .dense
        .iter()
        .enumerate()
        .filter(|(_, v)| **v != 0.0)
        .map(|(t, &v)| (TERM_BASE + t, v))
        .collect();
    let active = x.active[..x.len].iter().map(|&i| (i as usize, 1.0));
    let all: Vec<(usize, f32)> = active.chain(dense).collect();
    for &(i, v) in &all {
        for (j, h) in h.iter_mut().enumerate() {
            *h += v * p[W1 + i * HIDDEN + j];
        }
    }
    let z = p[B2] + (0..HIDDEN).map(|j| h[j].max(0.0) * p[W2 + j]).sum::<f32>();
    let y = sigmoid(z);
    let d = y - target;
    g[B2] += d;
    let mut dh = [0f32; HIDDEN];
    for j in 0..HIDDEN {
        if h[j] > 0.0 {
            g[W2 + j] += d * h[j];
            dh[j] = d * p[W2 + j];
        }
    }
    for j in 0..HIDDEN {
        g[B1 + j] += dh[j];
    }
    for &(i, v) in &all {
        for j in 0..HIDDEN {
            g[W1 + i * HIDDEN + j] += v * dh[j];
        }
    }
    let eps = 1e-6;
    -(target * (y + eps).ln() + (1.0 - target) * (1.0 - y + eps).ln())
}

/// The inputs of `s` seen under board symmetry `sym`.
fn inputs_under(rules: &Rules, s: &Sample, sym: usize) -> Inputs {
    let mut pos = s.position();
    pos.board = pos.board.map(|b| rules.map(sym, b));
    inputs(rules, &pos)
}

/// The win/draw/loss predicted by `score` with draw band `(-t, t)`.
fn class(score: f32, t: f32) -> u8 {
    if score > t {
        2
    } else if score < -t {
        0
    } else {
        1
    }
}

/// The draw band (in logits) maximising accuracy over `scored`.
fn fit_band(scored: &[(f32, u8)]) -> f32 {
    (0..=300)
        .map(|i| i as f32 * 0.02)
        .max_by_key(|&t| scored.iter().filter(|&&(s, c)| class(s, t) == c).count())
        .unwrap_or(0.0)
}

/// The scale (centi-stones per logit) that fits `eval`'s scores best to `samples`
/// (least squared error).
fn fit_scale(rules: &Rules, eval: &Eval, samples: &[&Sample]) -> f32 {
    let scores: Vec<(f32, f32)> = samples
        .par_iter()
        .map(|s| (eval.evaluate(rules, &s.position()) as f32, s.target()))
        .collect();
    scale::fit(|k| {
        scores
            .iter()
            .map(|&(x, t)| (sigmoid(x / k as f32) - t).powi(2) as f64)
            .sum()
    }) as f32
}

/// A row of the report: its name and which samples it takes.
type Group = (String, Box<dyn Fn(&Sample) -> bool>);

fn placement_ply(rules: &Rules, s: &Sample) -> Option<u32> {
    let placed = 2 * rules.stones as u32 - s.hand[0] as u32 - s.hand[1] as u32;
    (s.hand != [0, 0]).then_some(placed)
}

fn groups(rules: &'static Rules) -> Vec<Group> {
    let mut rows: Vec<Group> = vec![
        ("all".into(), Box::new(|_: &Sample| true)),
        (
            "from games".into(),
            Box::new(|s: &Sample| s.source == Source::Game),
        ),
        (
            "from sectors".into(),
            Box::new(|s: &Sample| s.source == Source::Sector),
        ),
        (
            "games, placing".into(),
            Box::new(move |s: &Sample| {
                s.source == Source::Game && placement_ply(rules, s).is_some()
            }),
        ),
    ];
    for ply in (0..2 * rules.stones as u32).step_by(2) {
        rows.push((
            format!("  plies {ply}-{}", ply + 1),
            Box::new(move |s: &Sample| {
                s.source == Source::Game
                    && placement_ply(rules, s).is_some_and(|p| p / 2 == ply / 2)
            }),
        ));
    }
    rows.push((
        "games, moving".into(),
        Box::new(move |s: &Sample| s.source == Source::Game && placement_ply(rules, s).is_none()),
    ));
    rows
}

fn train(args: &[String]) {
    let [input, out, rest @ ..] = args else {
        panic!("usage: train_net train IN.bin OUT.rs [EPOCHS] [SEED]");
    };
    let arg = |i: usize, default: u64| number_arg(rest, i, default);
    let (epochs, seed) = (arg(0, 12) as usize, arg(1, 1));
    let start = Instant::now();
    let (rules, samples) = read_samples(input);
    let (held, train): (Vec<&Sample>, Vec<&Sample>) = samples.iter().partition(|s| s.held_out());
    eprintln!(
        "{} samples: {} to train on, {} held out",
        samples.len(),
        train.len(),
        held.len()
    );
    let tuned = named("tuned").expect("the tuned weights").1;
    let scale = fit_scale(rules, &tuned, &train);
    eprintln!("scale of the tuned weights: {scale:.1} centi-stones per logit");

    let mut mix = SplitMix(splitmix64(seed));
    let mut p = vec![0f32; PARAMS];
    // He-style initialisation of the hidden layer; small output weights.
    for w in &mut p[W1..B1] {
        *w = (mix.below(1 << 24) as f32 / (1 << 24) as f32 - 0.5) * 2.0 * (3.0 / 24.0f32).sqrt();
    }
    for w in &mut p[W2..B2] {
        *w = (mix.below(1 << 24) as f32 / (1 << 24) as f32 - 0.5) * 0.2;
    }
    let (mut m, mut v) = (vec![0f32; PARAMS], vec![0f32; PARAMS]);
    let (b1, b2, batch) = (0.9f32, 0.999f32, 1024usize);
    let mut order: Vec<usize> = (0..train.len()).collect();
    let mut step = 0i32;
    let total_steps = (epochs * train.len().div_ceil(batch)) as f32;
    for epoch in 0..epochs {
        for i in (1..order.len()).rev() {
            order.swap(i, mix.below(i as u64 + 1) as usize);
        }
        let mut loss = 0.0f64;
        for chunk in order.chunks(batch) {
            let syms: Vec<usize> = chunk
                .iter()
                .map(|_| mix.below(rules.symmetries.len() as u64) as usize)
                .collect();
            let (g, l) = chunk
                .par_chunks(chunk.len().div_ceil(2).max(1))
                .zip(syms.par_chunks(chunk.len().div_ceil(2).max(1)))
                .map(|(idx, sy)| {
                    let mut g = vec![0f32; PARAMS];
                    let mut l = 0.0f64;
                    for (&i, &sym) in idx.iter().zip(sy) {
                        let s = train[i];
                        l += backprop(&p, &inputs_under(rules, s, sym), s.target(), &mut g) as f64;
                    }
                    (g, l)
                })
                .reduce(
                    || (vec![0f32; PARAMS], 0.0),
                    |(mut a, la), (b, lb)| {
                        a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                        (a, la + lb)
                    },
                );
            loss += l;
            step += 1;
            // Learning rate: 3e-3, cosine down to a tenth.
            let frac = step as f32 / total_steps;
            let lr = 3e-3 * (0.1 + 0.9 * 0.5 * (1.0 + (std::f32::consts::PI * frac).cos()));
            let n = chunk.len() as f32;
            for k in 0..PARAMS {
                let gk = g[k] / n;
                m[k] = b1 * m[k] + (1.0 - b1) * gk;
                v[k] = b2 * v[k] + (1.0 - b2) * gk * gk;
                let mh = m[k] / (1.0 - b1.powi(step));
                let vh = v[k] / (1.0 - b2.powi(step));
                p[k] -= lr * mh / (vh.sqrt() + 1e-8);
            }
        }
        eprintln!(
            "epoch {}: training loss {:.4}, {:.0} s",
            epoch + 1,
            loss / train.len() as f64,
            start.elapsed().as_secs_f64()
        );
    }
    let net = to_net(&p, scale);
    let report = report(rules, &net, &tuned, scale, &train, &held);
    eprint!("{report}");
    let mut text = String::new();
    writeln!(
        text,
        "//! The network evaluation's parameters (`super::net`): generated by\n\
         //! `tools/train-net.sh` (`examples/train_net.rs`); do not edit by hand. The fit:\n\
         //!\n//! ```text"
    )
    .unwrap();
    writeln!(
        text,
        "//! {} positions ({} held out), {epochs} epochs, seed {seed}, {:.0} s",
        samples.len(),
        held.len(),
        start.elapsed().as_secs_f64()
    )
    .unwrap();
    for line in report.lines() {
        writeln!(text, "//! {line}").unwrap();
    }
    writeln!(text, "//! ```\n").unwrap();
    // The rest of the module, from the file the weights go into.
    let current = include_str!("../src/search/engine/net_weights.rs");
    let start = current
        .find("\nuse ")
        .expect("net_weights.rs: its code after the documentation");
    let rest = &current[start + 1..];
    text.push_str(rest);
    let weights = std::path::Path::new(out).with_extension("bin");
    std::fs::write(&weights, net.to_le_bytes()).expect("writing the weights");
    std::fs::File::create(out)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .expect("writing the weights' module");
    eprintln!("written to {} and {out}", weights.display());
}

/// Held-out error and accuracy of the network against the tuned weights.
fn report(
    rules: &'static Rules,
    net: &Net,
    tuned: &Eval,
    scale: f32,
    train: &[&Sample],
    held: &[&Sample],
) -> String {
    let logits = |set: &[&Sample]| -> Vec<(f32, f32)> {
        set.par_iter()
            .map(|s| {
                let pos = s.position();
                (
                    tuned.evaluate(rules, &pos) as f32 / scale,
                    net.logit(&inputs(rules, &pos)),
                )
            })
            .collect()
    };
    let (lt, lh) = (logits(train), logits(held));
    let band = |pick: fn(&(f32, f32)) -> f32| {
        let scored: Vec<(f32, u8)> = lt
            .iter()
            .zip(train)
            .map(|(l, s)| (pick(l), s.wdl))
            .collect();
        fit_band(&scored)
    };
    let (bt, bn) = (band(|l| l.0), band(|l| l.1));
    let mut text = String::new();
    writeln!(
        text,
        "held out                    MSE  accuracy      MSE  accuracy\n\
         \x20                         tuned weights      network"
    )
    .unwrap();
    for (name, take) in groups(rules) {
        let rows: Vec<(&(f32, f32), &&Sample)> =
            lh.iter().zip(held).filter(|(_, s)| take(s)).collect();
        if rows.is_empty() {
            continue;
        }
        let n = rows.len() as f32;
        let stat = |pick: fn(&(f32, f32)) -> f32, band: f32| {
            let mse = rows
                .iter()
                .map(|(l, s)| (sigmoid(pick(l)) - s.target()).powi(2))
                .sum::<f32>()
                / n;
            let hit = rows
                .iter()
                .filter(|(l, s)| class(pick(l), band) == s.wdl)
                .count();
            (mse, 100.0 * hit as f32 / n)
        };
        let (mt, at) = stat(|l| l.0, bt);
        let (mn, an) = stat(|l| l.1, bn);
        writeln!(
            text,
            "{:<24}{mt:>7.4}{at:>9.1}%{mn:>9.4}{an:>9.1}%",
            format!("{name} ({})", rows.len())
        )
        .unwrap();
    }
    writeln!(
        text,
        "draw band (logits): tuned +-{bt:.2}, network +-{bn:.2}; scale {scale:.1} centi-stones per logit"
    )
    .unwrap();
    text
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("sample") => sample(&args[1..]),
        Some("train") => train(&args[1..]),
        _ => {
            eprintln!("usage: train_net sample DB OUT.bin ... | train_net train IN.bin OUT.rs ...")
        }
    }
}
