//! Memory: large arrays backed by huge pages, prefetching, and what the system has
//! to give.
//!
//! The builder reads and writes gigabyte arrays at random; with 4 KiB pages nearly
//! every access also misses the TLB. Transparent huge pages (2 MiB) are requested with
//! `madvise` before the array is first touched.

/// A zeroed vector of `n` elements whose pages the kernel is asked to back with huge
/// pages (Linux; elsewhere a plain vector).
pub fn zeroed_huge<T: Copy + Default>(n: usize) -> Vec<T> {
    let v = vec![T::default(); n];
    advise_huge(&v);
    v
}

/// Asks for huge pages under `v` (a hint; failures are ignored).
pub fn advise_huge<T>(v: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + std::mem::size_of_val(v);
        let aligned = start.next_multiple_of(HUGE);
        if end > aligned + HUGE {
            // SAFETY: the range lies inside the allocation of `v`; MADV_HUGEPAGE only
            // changes how the kernel backs the pages, never their contents.
            unsafe {
                libc::madvise(
                    aligned as *mut libc::c_void,
                    end - aligned,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
}

#[cfg_attr(not(any(feature = "build", feature = "engine")), allow(dead_code))]
fn read_kib(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Memory available to new allocations, bytes (Linux), if known.
#[cfg_attr(not(any(feature = "build", feature = "engine")), allow(dead_code))]
pub fn available() -> Option<u64> {
    read_kib("/proc/meminfo", "MemAvailable:")
}

/// The process's resident-memory high-water mark, bytes (Linux; 0 if unknown).
#[cfg_attr(not(feature = "build"), allow(dead_code))]
pub fn peak_rss() -> u64 {
    read_kib("/proc/self/status", "VmHWM:").unwrap_or(0)
}

/// Asks the CPU to bring the cache line of `p` into the caches (a hint: no effect
/// on results; nothing on other architectures).
#[inline]
pub(crate) fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    prefetch_hinted::<{ core::arch::x86_64::_MM_HINT_T0 }, T>(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// As [`prefetch`], for a line read once and not again soon: brought close to the
/// processor without displacing the lines that are (the index's tables, the
/// cache's block entries).
#[inline]
pub(crate) fn prefetch_once<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    prefetch_hinted::<{ core::arch::x86_64::_MM_HINT_NTA }, T>(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn prefetch_hinted<const HINT: i32, T>(p: &T) {
    // SAFETY: prefetching is a hint; any address is allowed.
    unsafe { core::arch::x86_64::_mm_prefetch::<HINT>(p as *const T as *const i8) }
}

/// A size or count a user typed that this machine cannot honour: too large for the
/// memory there is, too many threads, or zero. Its message names the option, the
/// value and the most the machine takes ("--table-mib 17592186044416 is more than
/// the 23.4 GiB of memory available; give at most 23961").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeError(String);

impl std::fmt::Display for SizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SizeError {}

impl From<SizeError> for String {
    fn from(e: SizeError) -> String {
        e.0
    }
}

/// `option` and `value` as a user wrote them: `--threads 5`, `hash=5`.
fn typed(option: &str, value: u64) -> String {
    if option.ends_with('=') {
        format!("{option}{value}")
    } else {
        format!("{option} {value}")
    }
}

/// The fewest threads [`thread_limit`] allows, whatever the cores.
const THREAD_FLOOR: usize = 64;

/// The most worker threads any thread option accepts: four per core, at least 64.
/// More than that only slows a run down (each thread has its own stack and scratch
/// space, and they take turns on the same cores).
pub fn thread_limit() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_mul(4).max(THREAD_FLOOR)
}

/// Checks a table size in MiB that a user typed (`option` names it in the error:
/// `--table-mib`, `hash=`, `Hash`): at least 1, and no more than the memory
/// available now (or, where that is unknown, than an address space can hold).
/// Returns the size as a `usize`.
pub fn check_mib(option: &str, mib: u64) -> Result<usize, SizeError> {
    if mib == 0 {
        return Err(SizeError(format!(
            "{}: give at least 1 (MiB)",
            typed(option, 0)
        )));
    }
    // An allocation may not exceed isize::MAX bytes.
    let most_addressable = isize::MAX as u64 >> 20;
    let (most, what) = match available() {
        Some(bytes) => (
            (bytes >> 20).min(most_addressable),
            format!(
                "the {:.1} GiB of memory available",
                bytes as f64 / (1u64 << 30) as f64
            ),
        ),
        None => (most_addressable, "what one allocation can hold".to_string()),
    };
    if mib > most {
        return Err(SizeError(format!(
            "{} is more than {what}; give at most {}",
            typed(option, mib),
            most.max(1)
        )));
    }
    usize::try_from(mib).map_err(|_| SizeError(format!("{} is too large", typed(option, mib))))
}

/// Checks a thread count that a user typed (`option` names it in the error): 1 to
/// `most` (a caller's own cap, or [`thread_limit`]).
pub fn check_threads(option: &str, threads: u64, most: usize) -> Result<usize, SizeError> {
    if threads == 0 {
        return Err(SizeError(format!("{}: give at least 1", typed(option, 0))));
    }
    match usize::try_from(threads) {
        Ok(n) if n <= most => Ok(n),
        _ => Err(SizeError(format!(
            "{} is more threads than this machine runs usefully; give at most {most}",
            typed(option, threads)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_memory_are_errors_naming_the_option() {
        for mib in [u64::MAX, 1 << 44, 1_000_000_000] {
            let e = check_mib("--table-mib", mib).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--table-mib {mib} is more than")),
                "{e}"
            );
            assert!(e.contains("give at most"), "{e}");
        }
        assert!(
            check_mib("hash=", 0)
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
        assert_eq!(check_mib("hash=", 1), Ok(1));
    }

    #[test]
    fn thread_counts_are_capped() {
        let most = thread_limit();
        assert!(most >= THREAD_FLOOR);
        assert_eq!(check_threads("--threads", 2, most), Ok(2));
        for n in [0, most as u64 + 1, u64::MAX] {
            let e = check_threads("--threads", n, most).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--threads {n}")), "{e}");
        }
    }
}
