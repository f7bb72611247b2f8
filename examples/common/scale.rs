//! The sigmoid scale of an evaluation, shared by the examples that fit one
//! (`tune_eval`, `train_net`).

/// The scale `K` in 1 to 2,000 minimising `error(K)` (golden-section search on
/// log K; `error` should have one minimum there).
pub fn fit(error: impl Fn(f64) -> f64) -> f64 {
    let f = |lk: f64| error(lk.exp());
    let (mut a, mut b) = (1f64.ln(), 2000f64.ln());
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let (c, d) = (b - g * (b - a), a + g * (b - a));
        if f(c) < f(d) {
            b = d;
        } else {
            a = c;
        }
    }
    ((a + b) / 2.0).exp()
}
