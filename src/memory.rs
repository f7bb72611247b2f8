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
