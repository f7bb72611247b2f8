//! What finding a sector's don't-cares costs: the slots a capturing ply reaches,
//! found by probing the children's files (what `millbase repack` does) and from
//! the children's codes in memory (what `millbase build --form small` does, as
//! it holds them right after the solve), timed on one sector of a built
//! directory, and checked to be the same set.
//!
//! ```text
//! cargo run --release --example freedom_cost -- DB SECTOR
//! ```

use millbase::table::pack::dontcare::{
    Fill, capture_children, capture_free_slots, fill_values_allowing,
};
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, sector] = args.as_slice() else {
        eprintln!("usage: freedom_cost DB SECTOR");
        std::process::exit(2);
    };
    let tb = Tablebase::open(db).unwrap_or_else(|e| panic!("{db}: {e}"));
    let idx = tb.index();
    let s = Sector::parse(sector).unwrap_or_else(|| panic!("bad sector {sector}"));
    let file = tb.sector_file(s).expect("the sector's file");
    let truth = file.read_all().expect("a file of the fast form");
    let start = Instant::now();
    let children: Vec<(Sector, Vec<u16>)> = capture_children(idx.rules(), s)
        .into_iter()
        .map(|c| (c, tb.sector_file(c).unwrap().read_all().unwrap()))
        .collect();
    let read = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let known = capture_free_slots(idx, s, &truth, Fill::Model, |c| {
        children
            .iter()
            .find(|(x, _)| *x == c)
            .map(|(_, codes)| codes.as_slice())
    });
    let in_memory = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut codes = truth.clone();
    let (_, _, free) = fill_values_allowing(&tb, s, &mut codes, None).unwrap();
    let probed = start.elapsed().as_secs_f64();
    println!(
        "{s}: {} slots; children read {read:.1} s; in memory {in_memory:.1} s; probed {probed:.1} s; same: {}",
        truth.len(),
        known == free
    );
}
