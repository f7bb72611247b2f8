//! The binary coder the model-coded sections share (the WDL model of
//! [`super::model`] and the depth model of `depth_model`): a range coder
//! ([`Encoder`], [`Decoder`]) driven by adaptive probabilities ([`Model`]), and the
//! prior a model starts each block from, as counted, stored and read.

/// Probabilities are of a bit being 0, in units of 2^-16.
pub(super) const ONE: u32 = 1 << 16;

/// The least and greatest probability a node takes.
pub(super) const P_MIN: u32 = 48;

pub(super) const P_MAX: u32 = ONE - P_MIN;

/// A node's adaptation count stops here: its rate stays `1 / (LIMIT + 1.5)`.
const LIMIT: u32 = 255;

/// The count a node whose context the prior saw starts with.
const PRIOR_COUNT: u32 = 12;

/// The zstd level of the stored prior.
const PRIOR_LEVEL: i32 = 19;

/// `RATE[n] = 2^16 / (n + 1.5)`: the adaptation step of a node seen `n` times.
static RATE: [u32; LIMIT as usize + 1] = {
    let mut t = [0u32; LIMIT as usize + 1];
    let mut n = 0;
    while n <= LIMIT as usize {
        t[n] = (2 * ONE) / (2 * n as u32 + 3);
        n += 1;
    }
    t
};

/// The adaptive probabilities of every node, each `p | n << 16` (`p` the
/// probability of a 0 bit, `n` how often the node adapted, up to `LIMIT`, 255).
#[derive(Clone)]
pub struct Model {
    pub(super) nodes: Vec<u32>,
}

impl Model {
    /// The model every block starts from, given the stored prior (one `u16` per
    /// node, 0 where the sample never saw the context).
    pub fn from_prior(prior: &[u16]) -> Model {
        let nodes = prior
            .iter()
            .map(|&p| match p {
                0 => ONE / 2,
                p => (p as u32).clamp(P_MIN, P_MAX) | PRIOR_COUNT << 16,
            })
            .collect();
        Model { nodes }
    }

    /// Node `i`'s probability of a 0 bit, then adapts it to `bit`.
    #[inline]
    pub(super) fn adapt(&mut self, i: usize, bit: bool) -> u32 {
        let s = self.nodes[i];
        let (p, n) = (s & 0xFFFF, s >> 16);
        let rate = RATE[n as usize];
        let q = if bit {
            p - ((p * rate) >> 16)
        } else {
            p + (((ONE - p) * rate) >> 16)
        };
        self.nodes[i] = q.clamp(P_MIN, P_MAX) | (n + 1).min(LIMIT) << 16;
        p
    }
}

/// The range encoder (carry-propagating, 32-bit range, bytes out).
pub(super) struct Encoder {
    low: u64,
    range: u32,
    cache: u8,
    pending: u64,
    out: Vec<u8>,
}

impl Encoder {
    pub(super) fn new() -> Encoder {
        Encoder {
            low: 0,
            range: u32::MAX,
            cache: 0,
            pending: 1,
            out: Vec::new(),
        }
    }

    /// Codes `bit` with probability `p0` (of a 0) in units of 2^-16.
    #[inline]
    pub(super) fn bit(&mut self, p0: u32, bit: bool) {
        let bound = (self.range >> 16) * p0;
        if bit {
            self.low += bound as u64;
            self.range -= bound;
        } else {
            self.range = bound;
        }
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.shift_low();
        }
    }

    fn shift_low(&mut self) {
        if self.low < 0xFF00_0000 || self.low >= 1 << 32 {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.cache;
            while self.pending > 0 {
                self.out.push(byte.wrapping_add(carry));
                byte = 0xFF;
                self.pending -= 1;
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.pending += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
}

/// The range decoder matching [`Encoder`]. Past the end of its input it reads
/// zeros (a damaged block is caught by its checksum before it is decoded).
pub(super) struct Decoder<'a> {
    code: u32,
    range: u32,
    src: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    pub(super) fn new(src: &'a [u8]) -> Decoder<'a> {
        let mut d = Decoder {
            code: 0,
            range: u32::MAX,
            src,
            at: 0,
        };
        for _ in 0..5 {
            d.code = d.code << 8 | d.byte() as u32;
        }
        d
    }

    #[inline]
    fn byte(&mut self) -> u8 {
        let b = self.src.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    #[inline]
    pub(super) fn bit(&mut self, p0: u32) -> bool {
        let bound = (self.range >> 16) * p0;
        let bit = self.code >= bound;
        if bit {
            self.code -= bound;
            self.range -= bound;
        } else {
            self.range = bound;
        }
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.code = self.code << 8 | self.byte() as u32;
        }
        bit
    }
}

/// Each node's probability of a 0 bit from its counts of 0 and 1 bits, 0 where
/// there are none (a stored prior).
pub(super) fn prior_of_counts(counts: &[[u32; 2]]) -> Vec<u16> {
    counts
        .iter()
        .map(|&[zero, one]| {
            if zero + one == 0 {
                return 0;
            }
            let p = (zero as f64 + 0.4) / ((zero + one) as f64 + 0.8);
            ((p * ONE as f64).round() as u32).clamp(P_MIN, P_MAX) as u16
        })
        .collect()
}

/// The prior as stored: little-endian `u16`s, zstd-compressed.
pub fn store_prior(prior: &[u16]) -> std::io::Result<Vec<u8>> {
    let raw: Vec<u8> = prior.iter().flat_map(|p| p.to_le_bytes()).collect();
    zstd::bulk::compress(&raw, PRIOR_LEVEL)
}

/// A prior of `nodes` probabilities from its stored bytes, or why they are not one.
pub(super) fn load_prior_of(stored: &[u8], nodes: usize) -> Result<Vec<u16>, String> {
    let raw = zstd::bulk::decompress(stored, 2 * nodes).map_err(|e| e.to_string())?;
    if raw.len() != 2 * nodes {
        return Err(format!(
            "the model's prior holds {} bytes, {} expected",
            raw.len(),
            2 * nodes
        ));
    }
    Ok(raw
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::SplitMix;

    #[test]
    fn coder_round_trips_skewed_and_random_bits() {
        let mut rng = SplitMix(7);
        let probs: Vec<u32> = (0..5000)
            .map(|i| [100, 32768, 65000, 48, 65488][i % 5])
            .collect();
        let bits: Vec<bool> = probs
            .iter()
            .map(|&p| (rng.next_u64() % ONE as u64) as u32 >= p)
            .collect();
        let mut enc = Encoder::new();
        for (&p, &b) in probs.iter().zip(&bits) {
            enc.bit(p, b);
        }
        let out = enc.finish();
        let mut dec = Decoder::new(&out);
        for (&p, &b) in probs.iter().zip(&bits) {
            assert_eq!(dec.bit(p), b);
        }
    }
}
