//! The standard game's placement sectors against the opening search, on random
//! placement positions of every ply, many after captures. It needs the full database
//! (both phases, about 10 GB and hours to build), so it is ignored by default; run it
//! with the directory in `MILLBASE_DB`:
//!
//! ```sh
//! MILLBASE_DB=db cargo test --release --test standard_tables -- --ignored --nocapture
//! ```

use crate::common::Rng as Mix;
use millbase::search::opening::{Opening, OpeningOptions};
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use millbase::{Position, Rules};
use std::path::PathBuf;
use std::time::Instant;

#[test]
#[ignore = "needs the full standard database in MILLBASE_DB"]
fn standard_placement_tables_equal_the_opening_search() {
    let dir =
        PathBuf::from(std::env::var("MILLBASE_DB").expect("set MILLBASE_DB to the full database"));
    let tb = Tablebase::open(&dir).unwrap();
    let rules = Rules::standard();
    assert!(std::ptr::eq(tb.rules(), rules));
    let mut search = Opening::new(
        &tb,
        OpeningOptions {
            table_mib: 1024,
            parallel: true,
            use_tables: false,
        },
    )
    .unwrap();
    // Per ply: how many positions to check. Early plies search long (the empty board
    // about a minute), late ones in milliseconds.
    let wanted = |ply: usize| {
        if ply < 6 {
            2
        } else if ply < 10 {
            10
        } else {
            60
        }
    };
    let mut mix = Mix::new(2026);
    let (mut per_ply, mut captures) = ([0u32; 18], 0);
    for ply in (0..18).rev() {
        while per_ply[ply] < wanted(ply) {
            let mut pos = Position::start(rules);
            let mut ok = true;
            while (2 * rules.stones - pos.hand[0] - pos.hand[1]) as usize != ply
                || pos.pending_removal
            {
                let legal = pos.legal_plies(rules);
                if legal.is_empty() || pos.hand == [0, 0] {
                    ok = false;
                    break;
                }
                // Prefer mills now and then, so that captures in placement are common.
                let mills: Vec<_> = legal.iter().copied().filter(|p| p.removes()).collect();
                let ply = if !mills.is_empty() && mix.below(2) == 0 {
                    mills[mix.below(mills.len())]
                } else {
                    legal[mix.below(legal.len())]
                };
                pos.make(rules, ply);
            }
            if !ok || pos.is_over(rules) || !tb.covers(&pos) {
                continue;
            }
            let t = Instant::now();
            let table = tb.probe(&pos).unwrap();
            let searched = search.value(&pos).unwrap();
            let capture = pos.board[0].count_ones() + pos.board[1].count_ones() < ply as u32;
            captures += capture as u32;
            eprintln!(
                "ply {ply:>2} {} {}: table {table}, search {searched} ({:.2} s)",
                Sector::of(&pos),
                if capture { "after captures" } else { "" },
                t.elapsed().as_secs_f64()
            );
            assert_eq!(table, searched, "{pos:?}");
            per_ply[ply] += 1;
        }
    }
    eprintln!("checked per ply {per_ply:?}, {captures} after captures");
    assert!(captures > 20);
}
