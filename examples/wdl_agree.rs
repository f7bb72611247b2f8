//! Checks that two database directories of the same rules give the same win, draw or
//! loss on random positions of every sector: a WDL package (`millbase pack
//! --wdl-only`, derived sectors included: their results come from one ply of
//! search) against the directory it was packed from, or any two forms of a game.
//!
//! `cargo run --release --example wdl_agree -- DIR_A DIR_B [PER_SECTOR] [SEED]`
//!
//! Draws up to `PER_SECTOR` (default 200) random slots of every moving-phase
//! subspace and placement sector of the rules, probes each position in both
//! directories, and prints the positions compared per phase and every
//! disagreement; exits with status 1 if any position disagrees or a probe fails.
#[path = "common/sampling.rs"]
mod sampling;

use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: wdl_agree DIR_A DIR_B [PER_SECTOR] [SEED]");
        return ExitCode::from(2);
    }
    let number = |i: usize, default: u64| {
        args.get(i).map_or(Ok(default), |a| {
            a.parse::<u64>().map_err(|e| format!("{a}: {e}"))
        })
    };
    let (per_sector, seed) = match (number(2, 200), number(3, 1)) {
        (Ok(p), Ok(s)) => (p, s),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("wdl_agree: {e}");
            return ExitCode::from(2);
        }
    };
    let open = |dir: &String| Tablebase::open(dir).map_err(|e| format!("{dir}: {e}"));
    let (a, b) = match (open(&args[0]), open(&args[1])) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("wdl_agree: {e}");
            return ExitCode::from(2);
        }
    };
    if a.rules().fingerprint() != b.rules().fingerprint() {
        eprintln!(
            "wdl_agree: {} and {} hold other rules",
            a.rules().name,
            b.rules().name
        );
        return ExitCode::from(2);
    }
    let rules = a.rules();
    let n = rules.stones;
    let moving: Vec<Sector> = (3..=n)
        .flat_map(|k| (3..=n).map(move |l| Sector::moving(k, l)))
        .collect();
    let mut bad = 0u64;
    for (phase, sectors) in [
        ("moving phase", moving),
        ("placement phase", Sector::placement_sectors(rules)),
    ] {
        let (mut compared, mut files) = (0u64, 0usize);
        for s in sectors {
            let (k, l) = s.counts();
            if a.index().size(k, l) == 0 {
                continue;
            }
            files += 1;
            for (slot, pos, want) in sampling::sector(&a, s, per_sector, seed) {
                compared += 1;
                match b.probe_wdl(&pos) {
                    Ok(got) if got == want => {}
                    Ok(got) => {
                        bad += 1;
                        println!("{s} slot {slot}: {want:?} in A, {got:?} in B");
                    }
                    Err(e) => {
                        bad += 1;
                        println!("{s} slot {slot}: {want:?} in A, B fails: {e}");
                    }
                }
            }
        }
        println!("{phase}: {compared} positions of {files} sectors compared");
    }
    if bad == 0 {
        println!("every position agrees");
        ExitCode::SUCCESS
    } else {
        println!("{bad} positions disagree");
        ExitCode::FAILURE
    }
}
