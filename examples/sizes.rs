//! Prints the index size of every subspace pair of the standard game, in build order,
//! then of every placement sector, by ply: `cargo run --release --example sizes`.
use millbase::table::build::{Selection, plan, subspaces};
use millbase::table::index::Index;
use millbase::table::sector::Sector;

fn main() {
    let idx = Index::standard();
    let mut total = 0u64;
    for pair in plan(idx.rules(), Selection::All).expect("valid plan") {
        let n: u64 = subspaces(pair).iter().map(|&(a, b)| idx.size(a, b)).sum();
        total += n;
        println!("{}-{}: {n}", pair.0, pair.1);
    }
    println!("moving phase: {total} slots");
    let sectors = Sector::placement_sectors(idx.rules());
    let size = |s: &Sector| idx.size(s.k as u32, s.l as u32);
    for ply in (0..18).rev() {
        let at: Vec<&Sector> = sectors
            .iter()
            .filter(|s| s.ply(idx.rules()) == ply)
            .collect();
        let slots: u64 = at.iter().map(|s| size(s)).sum();
        let largest = at.iter().max_by_key(|s| size(s)).expect("a sector per ply");
        println!(
            "ply {ply:>2}: {:>3} sectors, {slots:>13} slots, largest {largest} ({})",
            at.len(),
            size(largest)
        );
    }
    let placement: u64 = sectors.iter().map(size).sum();
    println!(
        "placement phase: {} sectors, {placement} slots; whole game {} slots",
        sectors.len(),
        placement + total
    );
}
