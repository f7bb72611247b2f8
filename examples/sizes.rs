//! Prints the index size of every subspace pair of a rule set (default `standard`), in
//! build order, then of every placement sector, by ply, and of the files that may
//! reach a full board (what `build --reuse` solves again):
//! `cargo run --release --example sizes [RULES]`.
use millbase::rules::Rules;
use millbase::table::build::{Selection, may_fill, plan, subspaces};
use millbase::table::index::Index;
use millbase::table::sector::Sector;

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "standard".into());
    let rules = match Rules::parse(&name) {
        Ok(rules) => rules,
        Err(e) => {
            eprintln!("sizes: {e}");
            std::process::exit(2);
        }
    };
    let idx = Index::for_rules(rules);
    let mut total = 0u64;
    for pair in plan(idx.rules(), Selection::All).expect("valid plan") {
        let n: u64 = subspaces(pair).iter().map(|&(a, b)| idx.size(a, b)).sum();
        total += n;
        println!("{}-{}: {n}", pair.0, pair.1);
    }
    println!("moving phase: {total} slots");
    let sectors = Sector::placement_sectors(idx.rules());
    let size = |s: &Sector| idx.size(s.k as u32, s.l as u32);
    let last = sectors
        .iter()
        .map(|s| s.ply(idx.rules()))
        .max()
        .unwrap_or(0);
    for ply in (0..=last).rev() {
        let at: Vec<&Sector> = sectors
            .iter()
            .filter(|s| s.ply(idx.rules()) == ply)
            .collect();
        let slots: u64 = at.iter().map(|s| size(s)).sum();
        let Some(largest) = at.iter().max_by_key(|s| size(s)) else {
            continue;
        };
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
    // What a full board can change: the files `build --reuse` solves again.
    let fill: Vec<Sector> = plan(idx.rules(), Selection::All)
        .expect("valid plan")
        .iter()
        .flat_map(|&p| subspaces(p))
        .map(|(a, b)| Sector::moving(a as u8, b as u8))
        .chain(sectors.iter().copied())
        .filter(|&s| may_fill(idx.rules(), s))
        .collect();
    println!(
        "may reach a full board: {} files, {} slots",
        fill.len(),
        fill.iter().map(size).sum::<u64>()
    );
}
