//! Fits the engine's evaluation weights to exact values from the databases (a
//! Texel-style fit): `tools/tune-eval.sh` runs it and writes `src/search/engine/tuned.rs`.
//!
//! ```text
//! cargo run --release --example tune_eval -- DB [PER_SECTOR] [OUT.rs]
//! ```
//!
//! Samples up to `PER_SECTOR` (default 20,000) random positions of every sector in
//! `DB` (moving-phase subspaces and placement sectors alike, at most a quarter of a
//! sector's slots), skips positions where the game is over, and takes each one's
//! exact win/draw/loss as the target (1, 1/2, 0). The evaluation is linear in its
//! terms (`engine::eval::terms`), so the model is `sigmoid(w . terms / K)`: first
//! `K` is fitted for the shipped weights, then the weights are fitted with `K` held
//! (Adam on the mean squared error, a little L2 pull towards the shipped weights
//! for terms the data says little about). One position in ten (by a hash of its
//! sector and slot) is held out; the report gives the mean squared error and the
//! win/draw/loss accuracy (thresholds chosen on the training set) of both weight
//! sets on the held-out positions, overall, by the phase of the side to move, and
//! for placement positions by ply (stones placed so far, from the sector).

#[path = "common/sampling.rs"]
mod sampling;
#[path = "common/scale.rs"]
mod scale;

use millbase::mix::splitmix64;
use millbase::search::engine::eval::{
    SidePhase, TERMS, TERMS_PER_PHASE, WEIGHTS, Weights, flatten, side_phase, terms,
};
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use millbase::{Rules, Wdl};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::time::Instant;

/// One training position.
struct Sample {
    terms: [i8; TERMS],
    /// 0 (loss), 1 (draw) or 2 (win) for the side to move.
    wdl: u8,
    phase: SidePhase,
    /// The placement ply of the sector (stones placed so far), `None` in the moving
    /// phase.
    ply: Option<u32>,
    held_out: bool,
}

impl Sample {
    fn target(&self) -> f64 {
        self.wdl as f64 / 2.0
    }
    fn score(&self, w: &[f64; TERMS]) -> f64 {
        self.terms.iter().zip(w).map(|(&t, w)| t as f64 * w).sum()
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Random positions of sector `s` with their exact values.
fn sample_sector(tb: &Tablebase, s: Sector, per_sector: u64) -> Vec<Sample> {
    let rules = tb.rules();
    let size = tb.index().size(s.counts().0, s.counts().1);
    sampling::sector(tb, s, per_sector, 0)
        .into_iter()
        .map(|(slot, pos, wdl)| Sample {
            terms: terms(rules, &pos).map(|v| v.clamp(i8::MIN as i32, i8::MAX as i32) as i8),
            wdl: match wdl {
                Wdl::Loss => 0,
                Wdl::Draw => 1,
                Wdl::Win => 2,
            },
            phase: side_phase(rules, &pos, pos.to_move),
            ply: (!s.is_moving()).then(|| s.ply(rules)),
            held_out: splitmix64(slot ^ (size << 20) ^ (s.hk as u64) << 60).is_multiple_of(10),
        })
        .collect()
}

/// Mean squared error of `sigmoid(score / k)` against the targets.
fn mse<'a>(samples: impl Iterator<Item = &'a Sample>, w: &[f64; TERMS], k: f64) -> f64 {
    let (sum, n) = samples.fold((0.0, 0usize), |(s, n), x| {
        let e = sigmoid(x.score(w) / k) - x.target();
        (s + e * e, n + 1)
    });
    sum / n.max(1) as f64
}

/// The scale `K` minimising the training error of `w`.
fn fit_scale(train: &[&Sample], w: &[f64; TERMS]) -> f64 {
    scale::fit(|k| mse(train.iter().copied(), w, k))
}

/// Adam on the training error with `k` held; `prior` pulls weakly.
fn fit_weights(train: &[&Sample], start: &[f64; TERMS], k: f64, epochs: usize) -> [f64; TERMS] {
    let prior = *start;
    let mut w = *start;
    let (mut m, mut v) = ([0f64; TERMS], [0f64; TERMS]);
    let (lr, b1, b2, l2) = (0.5, 0.9, 0.999, 1e-9);
    for epoch in 1..=epochs {
        let grad = train
            .par_iter()
            .fold(
                || [0f64; TERMS],
                |mut g, x| {
                    let p = sigmoid(x.score(&w) / k);
                    let d = 2.0 * (p - x.target()) * p * (1.0 - p) / k;
                    for (g, &t) in g.iter_mut().zip(&x.terms) {
                        *g += d * t as f64;
                    }
                    g
                },
            )
            .reduce(
                || [0f64; TERMS],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                    a
                },
            );
        let n = train.len() as f64;
        for i in 0..TERMS {
            let g = grad[i] / n + 2.0 * l2 * (w[i] - prior[i]);
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            v[i] = b2 * v[i] + (1.0 - b2) * g * g;
            let mh = m[i] / (1.0 - b1.powi(epoch as i32));
            let vh = v[i] / (1.0 - b2.powi(epoch as i32));
            w[i] -= lr * mh / (vh.sqrt() + 1e-12);
        }
    }
    w
}

/// The win/draw/loss predicted by `score` with draw band `(-t, t)`.
fn class(score: f64, t: f64) -> u8 {
    if score > t {
        2
    } else if score < -t {
        0
    } else {
        1
    }
}

/// The draw band maximising training accuracy.
fn fit_band(train: &[&Sample], w: &[f64; TERMS]) -> f64 {
    let scores: Vec<(f64, u8)> = train.iter().map(|x| (x.score(w), x.wdl)).collect();
    (0..=400)
        .map(|i| i as f64 * 2.5)
        .max_by_key(|&t| scores.iter().filter(|&&(s, c)| class(s, t) == c).count())
        .unwrap_or(0.0)
}

fn accuracy<'a>(samples: impl Iterator<Item = &'a Sample>, w: &[f64; TERMS], t: f64) -> f64 {
    let (hit, n) = samples.fold((0usize, 0usize), |(h, n), x| {
        (h + (class(x.score(w), t) == x.wdl) as usize, n + 1)
    });
    hit as f64 / n.max(1) as f64
}

/// A row of the report: its name and which samples it takes.
type Group = (String, Box<dyn Fn(&Sample) -> bool>);

/// The report's rows: all, placing (then each placement ply of a game with
/// `stones` per side), moving, flying.
fn groups(stones: u32) -> Vec<Group> {
    let phase =
        |p: SidePhase| Box::new(move |x: &Sample| x.phase == p) as Box<dyn Fn(&Sample) -> bool>;
    let mut rows: Vec<Group> = vec![
        ("all".into(), Box::new(|_: &Sample| true)),
        ("placing".into(), phase(SidePhase::Placing)),
    ];
    for ply in 0..2 * stones {
        rows.push((
            format!("  ply {ply}"),
            Box::new(move |x: &Sample| x.ply == Some(ply)),
        ));
    }
    rows.push(("moving".into(), phase(SidePhase::Moving)));
    rows.push(("flying".into(), phase(SidePhase::Flying)));
    rows
}

/// Stones per side of the rules of `tb`.
fn rules_stones(tb: &Tablebase) -> u32 {
    tb.rules().stones as u32
}

fn rounded(w: &[f64; TERMS]) -> [Weights; 3] {
    std::array::from_fn(|p| {
        Weights::from_array(std::array::from_fn(|i| {
            w[p * TERMS_PER_PHASE + i].round() as i32
        }))
    })
}

fn rust_source(w: &[Weights; 3], report: &str) -> String {
    let names = ["Placing", "Moving", "Flying"];
    let mut s = String::from(
        "//! Evaluation weights fitted to exact values: generated by `tools/tune-eval.sh`\n\
         //! (`examples/tune_eval.rs`); do not edit by hand. The fit:\n//!\n//! ```text\n",
    );
    for line in report.lines() {
        let _ = writeln!(s, "//! {line}");
    }
    s.push_str("//! ```\n\nuse super::eval::Weights;\n\n");
    s.push_str("/// The fitted weights by [`super::eval::SidePhase`].\npub const TUNED: [Weights; 3] = [\n");
    for (name, w) in names.iter().zip(w) {
        let _ = writeln!(s, "    // {name}.");
        let _ = writeln!(s, "    Weights {{");
        let fields = [
            "stone", "hand", "mobility", "blocked", "closed", "open", "closable", "tempo",
        ];
        for (f, v) in fields.iter().zip(w.to_array()) {
            let _ = writeln!(s, "        {f}: {v},");
        }
        let _ = writeln!(s, "    }},");
    }
    s.push_str("];\n");
    s
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: tune_eval DB [PER_SECTOR] [OUT.rs]");
        std::process::exit(2);
    };
    let per_sector: u64 = args
        .get(1)
        .map_or(20_000, |a| a.parse().expect("PER_SECTOR"));
    let tb = Tablebase::open(dir).unwrap_or_else(|e| {
        eprintln!("{dir}: {e}");
        std::process::exit(1)
    });
    assert!(
        std::ptr::eq(tb.rules(), Rules::standard()),
        "the standard game only"
    );
    let t0 = Instant::now();
    let sectors = tb.available_sectors();
    let samples: Vec<Sample> = sectors
        .par_iter()
        .flat_map_iter(|&s| sample_sector(&tb, s, per_sector))
        .collect();
    let placing = sectors.iter().filter(|s| !s.is_moving()).count();
    let mut report = format!(
        "{} positions from {} sectors ({} placement, {} moving) of {dir}, {:.0} s\n",
        samples.len(),
        sectors.len(),
        placing,
        sectors.len() - placing,
        t0.elapsed().as_secs_f64()
    );
    let train: Vec<&Sample> = samples.iter().filter(|x| !x.held_out).collect();
    let test: Vec<&Sample> = samples.iter().filter(|x| x.held_out).collect();
    let shipped = flatten(&WEIGHTS).map(f64::from);
    let k = fit_scale(&train, &shipped);
    let fitted = fit_weights(&train, &shipped, k, 400);
    let tuned = rounded(&fitted);
    let tuned_f = flatten(&tuned).map(f64::from);
    let _ = writeln!(
        report,
        "scale K = {k:.1} centi-stones; held out: {} positions",
        test.len()
    );
    let _ = writeln!(
        report,
        "{:<22} {:>9} {:>9} {:>9} {:>9}",
        "held out", "MSE", "accuracy", "MSE", "accuracy"
    );
    let _ = writeln!(
        report,
        "{:<22} {:>19} {:>19}",
        "", "shipped weights", "fitted weights"
    );
    let (band_s, band_t) = (fit_band(&train, &shipped), fit_band(&train, &tuned_f));
    for (name, keep) in groups(rules_stones(&tb)) {
        let of = || test.iter().copied().filter(|x| keep(x));
        let n = of().count();
        if n == 0 && name.starts_with("  ") {
            continue;
        }
        let _ = writeln!(
            report,
            "{:<22} {:>9.4} {:>8.1}% {:>9.4} {:>8.1}%",
            format!("{name} ({n})"),
            mse(of(), &shipped, k),
            100.0 * accuracy(of(), &shipped, band_s),
            mse(of(), &tuned_f, k),
            100.0 * accuracy(of(), &tuned_f, band_t),
        );
    }
    let _ = writeln!(
        report,
        "draw band: shipped +-{band_s:.0}, fitted +-{band_t:.0} centi-stones"
    );
    print!("{report}");
    let source = rust_source(&tuned, &report);
    match args.get(2) {
        Some(out) => std::fs::write(out, source).expect("write the weights"),
        None => print!("{source}"),
    }
}
