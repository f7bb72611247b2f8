//! The slot transforms: a code split into its WDL trit and its half distance, packed
//! into the raw bytes of a block before compression and read back from them.

use super::header::{DepthEntries, Encoding};
use byteorder::{ByteOrder, LittleEndian as LE};

/// The slots of eight trits (0, 1 or 2, one a byte of `word`, little-endian)
/// that have a depth entry: bit 7 of each such slot's byte set, every other bit
/// clear. Eight slots at a time, no branch on a trit.
#[inline]
fn entry_bits(entries: DepthEntries, word: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Bit 7 set in each byte of `v` that is zero (exactly those: no carry
    // crosses a byte, since every byte's low seven bits plus 0x7f fit).
    let zero = |v: u64| !(((v & LOW7).wrapping_add(LOW7)) | v | LOW7);
    match entries {
        DepthEntries::Every => HIGH,
        DepthEntries::Decisive => !zero(word) & HIGH,
        DepthEntries::Losses => zero(word ^ 0x0202_0202_0202_0202),
    }
}

/// The trits (0, 1 or 2) as words of eight, the last padded with draws.
#[inline]
fn trit_words(trits: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let words = trits.chunks_exact(8);
    let rest = words.remainder();
    let last = (!rest.is_empty()).then(|| {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        u64::from_le_bytes(w)
    });
    words
        .map(|c| u64::from_le_bytes(c.try_into().expect("eight bytes")))
        .chain(last)
}

/// How many of `trits` (each 0, 1 or 2) have a depth entry ([`DepthEntries::has`]),
/// eight at a time.
pub(super) fn count_entries(entries: DepthEntries, trits: &[u8]) -> usize {
    if entries == DepthEntries::Every {
        return trits.len();
    }
    trit_words(trits).fold(0usize, |n, w| {
        n.wrapping_add(entry_bits(entries, w).count_ones() as usize)
    })
}

/// The trit of a code: 0 draw, 1 win, 2 loss.
#[inline]
pub(super) fn trit(code: u16) -> u8 {
    if code == 0 {
        0
    } else if code.is_multiple_of(2) {
        1 // distance = code - 1 is odd: a win
    } else {
        2
    }
}

/// `TRITS[b][i]`: the `i`-th trit of the byte `b` (`b < 243`).
static TRITS: [[u8; 5]; 243] = {
    let mut t = [[0u8; 5]; 243];
    let mut b = 0;
    while b < 243 {
        let mut v = b;
        let mut i = 0;
        while i < 5 {
            t[b][i] = (v % 3) as u8;
            v /= 3;
            i += 1;
        }
        b += 1;
    }
    t
};

/// Trits (0 draw, 1 win, 2 loss) packed five to a byte ([`Encoding::Trits5`]).
pub(super) fn trits5(trits: impl ExactSizeIterator<Item = u8>, out: &mut Vec<u8>) {
    let mut byte = [0u8; 5];
    let n = trits.len();
    for (i, t) in trits.enumerate() {
        byte[i % 5] = t;
        if i % 5 == 4 || i + 1 == n {
            out.push(byte[..=i % 5].iter().rev().fold(0u8, |acc, &t| acc * 3 + t));
        }
    }
}

pub(super) fn pack_wdl(codes: &[u16], encoding: Encoding, out: &mut Vec<u8>) {
    out.clear();
    match encoding {
        Encoding::Trits5 | Encoding::Model => trits5(codes.iter().map(|&c| trit(c)), out),
        Encoding::Bits2 => out.extend(codes.chunks(4).map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |acc, (i, &code)| acc | trit(code) << (2 * i))
        })),
        _ => unreachable!("not a WDL encoding"),
    }
}

/// `distance / 2` of a code, 0 for a draw.
#[inline]
pub(super) fn half(code: u16) -> u16 {
    if code == 0 { 0 } else { (code - 1) / 2 }
}

/// Packs the half distances of the slots of `codes` that have an entry, in slot
/// order (see [`DepthEntries`]).
pub(super) fn pack_depth(
    codes: &[u16],
    encoding: Encoding,
    entries: DepthEntries,
    out: &mut Vec<u8>,
) {
    out.clear();
    let halves = codes
        .iter()
        .filter(|&&c| entries.has(trit(c)))
        .map(|&c| half(c));
    match encoding {
        Encoding::HalfU8 | Encoding::DepthModel | Encoding::DepthRefined => {
            out.extend(halves.map(|h| h as u8))
        }
        Encoding::HalfU16 => halves.for_each(|h| out.extend_from_slice(&h.to_le_bytes())),
        _ => unreachable!("not a depth encoding"),
    }
}

/// Expands a block of depth entries (see [`pack_depth`]): one entry per slot of
/// `trits`, taken in order from `packed` for the slots that have one, 0 for the
/// others; `None` if `packed` holds another number of entries.
pub(super) fn expand_depth(
    encoding: Encoding,
    entries: DepthEntries,
    trits: &[u8],
    packed: &[u8],
) -> Option<Vec<u8>> {
    let width = encoding.raw_len(1) as usize;
    let mut out = vec![0u8; trits.len() * width];
    if width == 1 {
        // One byte an entry (the common case, and what a cold full-value probe
        // waits for): the slots with an entry found eight at a time, without a
        // branch on each slot's trit (as unpredictable as the results), and
        // only those written, in order. The entries must all be used.
        if entries == DepthEntries::Every {
            return (packed.len() == trits.len()).then(|| packed.to_vec());
        }
        let mut stored = packed.iter();
        for (w, word) in trit_words(trits).enumerate() {
            let mut bits = entry_bits(entries, word);
            while bits != 0 {
                let at = w * 8 + (bits.trailing_zeros() / 8) as usize;
                *out.get_mut(at)? = *stored.next()?;
                bits &= bits - 1;
            }
        }
        return stored.next().is_none().then_some(out);
    }
    let mut stored = packed.chunks_exact(width);
    for (t, slot) in trits.iter().zip(out.chunks_exact_mut(width)) {
        if entries.has(*t) {
            slot.copy_from_slice(stored.next()?);
        }
    }
    (stored.next().is_none() && stored.remainder().is_empty()).then_some(out)
}

/// The code of a slot from its trit and its stored half distance (a draw's is 0).
#[inline]
pub(super) fn combine(trit: u8, half: u16) -> Option<u16> {
    match trit {
        0 => (half == 0).then_some(0),
        // A win in n = 2h + 1 plies has code n + 1; a loss in n = 2h, code n + 1.
        1 => half.checked_mul(2)?.checked_add(2),
        2 => half.checked_mul(2)?.checked_add(1),
        _ => None,
    }
}

/// The byte of a decompressed WDL block that holds slot `i`'s trit.
#[inline]
pub(super) fn byte_of_trit(encoding: Encoding, i: usize) -> usize {
    match encoding {
        Encoding::Trits5 | Encoding::Model => i / 5,
        _ => i / 4,
    }
}

/// Appends the trits of the slots `range` of a decompressed WDL block to `out`,
/// five at a time from a trits5 block; `Err(i)` with the first slot `i` whose
/// trit is past the block's end or in a byte no packing writes (the trits
/// before it appended).
pub(super) fn extend_trits(
    encoding: Encoding,
    data: &[u8],
    range: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) -> Result<(), usize> {
    if !matches!(encoding, Encoding::Trits5 | Encoding::Model) {
        for i in range {
            out.push(trit_at(encoding, data, i).ok_or(i)?);
        }
        return Ok(());
    }
    let mut i = range.start;
    // A partial first byte, then whole bytes (five trits a fixed-size copy), then
    // a partial last byte.
    let partial = |i: usize, out: &mut Vec<u8>| -> Result<usize, usize> {
        let byte = *data.get(i / 5).ok_or(i)?;
        let trits = TRITS.get(byte as usize).ok_or(i)?;
        let stop = range.end.min((i / 5 + 1) * 5);
        out.extend_from_slice(&trits[i % 5..i % 5 + (stop - i)]);
        Ok(stop)
    };
    if !i.is_multiple_of(5) && i < range.end {
        i = partial(i, out)?;
    }
    let whole = (range.end - i) / 5;
    if whole > 0 {
        let first = i / 5;
        let bytes = data.get(first..).unwrap_or_default();
        let bytes = &bytes[..whole.min(bytes.len())];
        out.reserve(whole * 5);
        for (k, &byte) in bytes.iter().enumerate() {
            let trits: &[u8; 5] = TRITS.get(byte as usize).ok_or(i + 5 * k)?;
            out.extend_from_slice(trits);
        }
        if bytes.len() < whole {
            return Err(i + 5 * bytes.len());
        }
        i += whole * 5;
    }
    if i < range.end {
        partial(i, out)?;
    }
    Ok(())
}

/// The trit of slot `i` of a decompressed WDL block (`None` past its end or for
/// a byte no packing writes).
#[inline]
pub(super) fn trit_at(encoding: Encoding, data: &[u8], i: usize) -> Option<u8> {
    trit_in(encoding, *data.get(byte_of_trit(encoding, i))?, i)
}

/// The trit of slot `i` from the byte that holds it ([`byte_of_trit`]).
#[inline]
pub(super) fn trit_in(encoding: Encoding, byte: u8, i: usize) -> Option<u8> {
    match encoding {
        Encoding::Trits5 | Encoding::Model => TRITS.get(byte as usize).map(|t| t[i % 5]),
        _ => {
            let t = byte >> (2 * (i % 4)) & 3;
            (t < 3).then_some(t)
        }
    }
}

/// The half distance of slot `i` of a decompressed depth block.
#[inline]
pub(super) fn half_at(encoding: Encoding, data: &[u8], i: usize) -> Option<u16> {
    match encoding {
        Encoding::HalfU8 | Encoding::DepthModel | Encoding::DepthRefined => {
            data.get(i).map(|&b| b as u16)
        }
        _ => data.get(2 * i..2 * i + 2).map(LE::read_u16),
    }
}
