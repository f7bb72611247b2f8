//! Prints the index size of every subspace pair of the standard game, in build order.
use millbase::build::{Selection, plan, subspaces};
use millbase::index::Index;

fn main() {
    let idx = Index::standard();
    let mut total = 0u64;
    for pair in plan(idx.rules(), Selection::All).expect("valid plan") {
        let n: u64 = subspaces(pair).iter().map(|&(a, b)| idx.size(a, b)).sum();
        total += n;
        println!("{}-{}: {n}", pair.0, pair.1);
    }
    println!("total slots: {total}");
}
