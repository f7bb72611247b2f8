//! The slot transforms: a code split into its WDL trit and its half distance, packed
//! into the raw bytes of a block before compression and read back from them.

use super::header::{DepthEntries, Encoding};
use byteorder::{ByteOrder, LittleEndian as LE};

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
        Encoding::HalfU8 | Encoding::DepthModel => out.extend(halves.map(|h| h as u8)),
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
        // One byte an entry: a byte copied, not a slice (the common case, and
        // what a cold full-value probe waits for).
        let mut stored = packed.iter();
        for (t, slot) in trits.iter().zip(out.iter_mut()) {
            if entries.has(*t) {
                *slot = *stored.next()?;
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
    while i < range.end {
        let byte = *data.get(i / 5).ok_or(i)?;
        let trits = TRITS.get(byte as usize).ok_or(i)?;
        let stop = range.end.min((i / 5 + 1) * 5);
        out.extend_from_slice(&trits[i % 5..i % 5 + (stop - i)]);
        i = stop;
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
        Encoding::HalfU8 | Encoding::DepthModel => data.get(i).map(|&b| b as u16),
        _ => data.get(2 * i..2 * i + 2).map(LE::read_u16),
    }
}
