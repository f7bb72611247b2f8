//! Compares two database directories by what their files hold, not by their bytes:
//! every `.mdb` file of the first directory is opened in both, every slot's code
//! decoded (`read_all`; in a file with don't-cares or loss-only depths, through the
//! probe's rule), and the codes compared. Files of different format versions or
//! flags (version 1, decisive-only depths, the small form of `millbase build --form
//! small` or `millbase repack`) compare equal when every value is.
//! The check behind "the new builder writes the same values" when the reference
//! directory was written in an older format.
//!
//! `cargo run --release --example same_values -- DIR_A DIR_B`
//!
//! Prints one line per file and a total; exits with status 1 if any file differs or
//! is missing from the second directory.
use millbase::table::format::{Expect, SubspaceFile};
use millbase::table::pack::repack::true_codes;
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use std::path::{Path, PathBuf};

/// Every slot's true code of the file at `path`: as stored, or through the probe's
/// rule in a file with don't-cares or loss-only depths (the directory's other files
/// answering for its children).
fn codes(path: &Path) -> Result<Vec<u16>, String> {
    let file = SubspaceFile::open(path, &Expect::any()).map_err(|e| e.to_string())?;
    if !file.value_dont_cares() && !file.loss_depths() {
        return file.read_all().map_err(|e| e.to_string());
    }
    let dir = path.parent().ok_or("a file in a directory")?;
    let tb = Tablebase::open(dir).map_err(|e| e.to_string())?;
    let h = file.header();
    let sector = Sector {
        k: h.meta.k as u8,
        l: h.meta.l as u8,
        hk: h.meta.hands[0],
        hl: h.meta.hands[1],
    };
    true_codes(&tb, sector, &file).map_err(|e| e.to_string())
}

/// The first slot where the two files' codes differ, and how many slots differ.
fn differences(a: &[u16], b: &[u16]) -> Option<(usize, usize)> {
    let first = a.iter().zip(b).position(|(x, y)| x != y)?;
    let count = a.iter().zip(b).filter(|(x, y)| x != y).count();
    Some((first, count))
}

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [a, b] = args.as_slice() else {
        eprintln!("usage: same_values DIR_A DIR_B");
        std::process::exit(2);
    };
    let mut names: Vec<PathBuf> = match std::fs::read_dir(a) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "mdb"))
            .collect(),
        Err(e) => {
            eprintln!("cannot read {}: {e}", a.display());
            std::process::exit(2);
        }
    };
    names.sort();
    let (mut same, mut bad, mut slots) = (0, 0, 0u64);
    for path in &names {
        let name = path.file_name().expect("a file name");
        let other = b.join(name);
        let outcome = match (codes(path), codes(&other)) {
            (Ok(x), Ok(y)) if x.len() != y.len() => {
                Err(format!("{} against {} slots", x.len(), y.len()))
            }
            (Ok(x), Ok(y)) => match differences(&x, &y) {
                None => {
                    slots += x.len() as u64;
                    Ok(x.len())
                }
                Some((first, count)) => Err(format!("{count} slots differ, the first at {first}")),
            },
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        match outcome {
            Ok(n) => {
                same += 1;
                println!("{}: same, {n} slots", name.to_string_lossy());
            }
            Err(e) => {
                bad += 1;
                println!("{}: DIFFERENT: {e}", name.to_string_lossy());
            }
        }
    }
    println!("{same} files the same ({slots} slots), {bad} different or unreadable");
    if bad > 0 || same == 0 {
        std::process::exit(1);
    }
}
