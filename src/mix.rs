//! splitmix64, the one pseudo-random mixer of the crate: reproducible choices from a
//! seed (random best plies, the arena's openings), hashing of cache keys and the
//! tests' generators.

/// splitmix64's finaliser: a well-mixed 64-bit function of `x` (a bijection).
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `x` scaled to `0..n` without division (the high half of `x * n`), for picking
/// one of `n` items from a mixed number.
#[inline]
pub fn below(x: u64, n: u64) -> u64 {
    ((x as u128 * n as u128) >> 64) as u64
}

/// A small deterministic generator: the splitmix64 sequence from a seed.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next number of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        let x = self.0;
        self.0 = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix64(x)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        below(self.next_u64(), n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_the_splitmix64_sequence() {
        // The first outputs of splitmix64 from seed 0 (Vigna's reference values).
        let mut g = SplitMix(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        for n in [1, 2, 3, 1000] {
            for _ in 0..100 {
                assert!(g.below(n) < n);
            }
        }
    }
}
