//! The machine's memory, as the builder meets it: the time of one random read that
//! depends on the one before it, and of streaming reads, in arrays of several
//! sizes.
//!
//! ```text
//! cargo run --release --example memory_latency -- [MIB ...]
//! ```
//!
//! The solve of a large pair or sector looks up cells anywhere in gigabytes of
//! memory, and its rate follows the machine's memory latency more than its clock:
//! two machines of one kind that run `perft` at the same speed may differ twice
//! in the time of a build. Run this beside a timing to say which machine it came
//! from (`docs/BENCHMARKS.md`, "The machine"). Each array (default 4, 64 and 1,024
//! MiB) is backed by huge pages where the kernel gives them, as the builder's are.
//! Stop other work first: a second process's misses share the memory bus.

use std::hint::black_box;
use std::time::Instant;

/// Dependent reads timed per array.
const CHASE: usize = 20_000_000;

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes in MiB"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![4, 64, 1024]
    } else {
        sizes
    };
    println!(
        "{:>9} {:>16} {:>16}",
        "MiB", "random read, ns", "stream, GB/s"
    );
    for mib in sizes {
        let (latency, stream) = measure(mib << 20);
        println!("{mib:>9} {latency:>16.1} {stream:>16.2}");
    }
}

/// The mean time of a dependent random read, and the streaming read rate, over an
/// array of `bytes`.
fn measure(bytes: usize) -> (f64, f64) {
    let n = (bytes / 8).max(2);
    let next = cycle(n);
    let start = Instant::now();
    let mut at = 0u64;
    for _ in 0..CHASE {
        at = next[at as usize];
    }
    black_box(at);
    let latency = start.elapsed().as_secs_f64() / CHASE as f64 * 1e9;
    let start = Instant::now();
    let sum = next.iter().fold(0u64, |s, &x| s.wrapping_add(x));
    black_box(sum);
    let stream = (n * 8) as f64 / start.elapsed().as_secs_f64() / 1e9;
    (latency, stream)
}

/// One cycle through all `n` entries in a random order (Sattolo's shuffle): each
/// entry holds the index of the next, so no read can start before the one before
/// it ends.
fn cycle(n: usize) -> Vec<u64> {
    let mut order: Vec<u64> = millbase::memory::zeroed_huge(n);
    for (i, o) in order.iter_mut().enumerate() {
        *o = i as u64;
    }
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..n).rev() {
        // xorshift64*: any fair-enough generator will do.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let j = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) % i as u64) as usize;
        order.swap(i, j);
    }
    let mut next: Vec<u64> = millbase::memory::zeroed_huge(n);
    for w in 0..n {
        next[order[w] as usize] = order[(w + 1) % n];
    }
    next
}
