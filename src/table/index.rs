//! Indexing of moving-phase positions within a subspace `k-l` (`k` stones for the
//! side to move, `l` for the opponent), reduced by the board symmetries.
//!
//! A slot is `class(own) * C(n-k, l) + rank(opp)`: the symmetry class of the side to
//! move's stones (16 symmetries on the standard board) times the colex rank of the
//! opponent's stones packed into the `n-k` empty points (BMI2 `pext`). When the
//! class representative is fixed by some symmetries (a non-trivial stabilizer), the
//! opponent set is canonicalised under them too, so every position class has exactly
//! one *canonical* slot; the other slots of such classes are *duplicates*, which the
//! builder fills with their canonical twin's value so that any slot answers.
//!
//! Index and un-index are a few table look-ups: the class of a set comes from a table
//! addressed by the set's colex rank, itself one look-up per 6-bit chunk of the points
//! (four on the standard board).

use crate::rules::{Bits, Rules};
use std::sync::OnceLock;

/// Binomial coefficients `C(n, k)` for `n, k <= 32`.
pub fn binomial(n: u32, k: u32) -> u64 {
    if k > n {
        0
    } else {
        binomials()[n as usize][k as usize]
    }
}

/// The table of [`binomial`], `t[n][k]` for `k <= n <= 32` (0 above the diagonal),
/// built on first use: loops that look up many coefficients take it once.
#[inline]
fn binomials() -> &'static [[u64; 33]; 33] {
    static TABLE: OnceLock<[[u64; 33]; 33]> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = [[0u64; 33]; 33];
        for n in 0..33 {
            t[n][0] = 1;
            for k in 1..=n {
                t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0 };
            }
        }
        t
    })
}

/// Packs the bits of `x` selected by `mask` into the low bits. Uses the BMI2
/// instruction where the CPU has it (detected once at run time, so one binary runs
/// on every x86-64), the portable loop elsewhere.
#[inline]
pub fn pext(x: Bits, mask: Bits) -> Bits {
    #[cfg(target_arch = "x86_64")]
    if has_bmi2() {
        // SAFETY: the CPU has BMI2.
        return unsafe { pext_bmi2(x, mask) };
    }
    pext_portable(x, mask)
}

/// Spreads the low bits of `x` onto the bits of `mask` (inverse of [`pext`]).
#[inline]
pub fn pdep(x: Bits, mask: Bits) -> Bits {
    #[cfg(target_arch = "x86_64")]
    if has_bmi2() {
        // SAFETY: the CPU has BMI2.
        return unsafe { pdep_bmi2(x, mask) };
    }
    pdep_portable(x, mask)
}

/// Whether the CPU has BMI2: known at compile time when the target has it, else
/// detected on the first call and remembered (one relaxed load per call after).
/// Setting the environment variable `MILLBASE_NO_BMI2` (to anything) makes a
/// binary not compiled for BMI2 take the portable path.
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn has_bmi2() -> bool {
    #[cfg(target_feature = "bmi2")]
    {
        true
    }
    #[cfg(not(target_feature = "bmi2"))]
    {
        use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
        static STATE: AtomicU8 = AtomicU8::new(0);
        #[cold]
        fn detect() -> bool {
            // `MILLBASE_NO_BMI2` takes the portable path, as on CPUs without the
            // instructions (and on ARM64), to measure it.
            let yes = std::is_x86_feature_detected!("bmi2")
                && std::env::var_os("MILLBASE_NO_BMI2").is_none();
            STATE.store(1 + yes as u8, Relaxed);
            yes
        }
        match STATE.load(Relaxed) {
            2 => true,
            1 => false,
            _ => detect(),
        }
    }
}

/// The BMI2 `pext` instruction. Inline assembly, so that it inlines into code
/// compiled for any x86-64 (a `#[target_feature]` function would not).
///
/// # Safety
/// The CPU must have BMI2.
#[cfg(target_arch = "x86_64")]
#[inline]
pub unsafe fn pext_bmi2(x: Bits, mask: Bits) -> Bits {
    let out: Bits;
    // SAFETY: the caller guarantees BMI2; the instruction touches registers only.
    unsafe {
        core::arch::asm!(
            "pext {out:e}, {x:e}, {mask:e}",
            x = in(reg) x,
            mask = in(reg) mask,
            out = lateout(reg) out,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    out
}

/// The BMI2 `pdep` instruction (see [`pext_bmi2`]).
///
/// # Safety
/// The CPU must have BMI2.
#[cfg(target_arch = "x86_64")]
#[inline]
pub unsafe fn pdep_bmi2(x: Bits, mask: Bits) -> Bits {
    let out: Bits;
    // SAFETY: the caller guarantees BMI2; the instruction touches registers only.
    unsafe {
        core::arch::asm!(
            "pdep {out:e}, {x:e}, {mask:e}",
            x = in(reg) x,
            mask = in(reg) mask,
            out = lateout(reg) out,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    out
}

/// [`pext`] without BMI2: one step per bit of `x` inside `mask` (a set of stones is
/// smaller than the empty points it is ranked among), each placed at the number of
/// mask bits below it.
#[inline]
pub fn pext_portable(x: Bits, mask: Bits) -> Bits {
    let (mut out, mut rest) = (0, x & mask);
    while rest != 0 {
        let low = rest & rest.wrapping_neg();
        out |= 1 << (mask & (low - 1)).count_ones();
        rest &= rest - 1;
    }
    out
}

/// [`pdep`] without BMI2: one step per bit of `mask`, without a branch on `x`.
#[inline]
pub fn pdep_portable(x: Bits, mask: Bits) -> Bits {
    let (mut out, mut bit, mut m) = (0, 0, mask);
    while m != 0 {
        let low = m & m.wrapping_neg();
        out |= low & ((x >> bit) & 1).wrapping_neg();
        bit += 1;
        m &= m - 1;
    }
    out
}

/// The next larger set with the same number of points (Gosper's hack): enumerates
/// the `k`-subsets in colex order, which is increasing numeric order.
#[inline]
pub fn next_subset(x: Bits) -> Bits {
    let c = x & x.wrapping_neg();
    let r = x.wrapping_add(c);
    (((r ^ x) >> 2) / c) | r
}

/// The smallest set of `k` points.
pub fn first_subset(k: u32) -> Bits {
    if k == 0 { 0 } else { u32::MAX >> (32 - k) }
}

/// Bits of a set looked up at once by [`ColexRank`]: six, so that the rows a rank
/// touches (one per count of points below, per chunk) stay in the L1 cache beside
/// the symmetry tables; byte chunks made the ranks of the builder's capture
/// children wait on L2.
const CHUNK_BITS: usize = 6;

/// Colex rank of a set among the sets of its size: one table look-up per chunk of
/// [`CHUNK_BITS`] points (four on the standard board).
struct ColexRank {
    /// `table[chunk][points below][value]`.
    table: Vec<[[u32; 1 << CHUNK_BITS]; 33]>,
}

impl ColexRank {
    fn new(points: usize) -> ColexRank {
        let chunks = points.div_ceil(CHUNK_BITS);
        let mut table = vec![[[0u32; 1 << CHUNK_BITS]; 33]; chunks];
        for (chunk, t) in table.iter_mut().enumerate() {
            for (below, row) in t.iter_mut().enumerate() {
                for (v, slot) in row.iter_mut().enumerate() {
                    let mut seen = below as u32;
                    let mut sum = 0u64;
                    for b in 0..CHUNK_BITS {
                        if v >> b & 1 == 1 {
                            seen += 1;
                            sum += binomial((chunk * CHUNK_BITS + b) as u32, seen);
                        }
                    }
                    *slot = sum.min(u32::MAX as u64) as u32;
                }
            }
        }
        ColexRank { table }
    }

    #[inline]
    fn rank(&self, set: Bits) -> u32 {
        let mut below = 0usize;
        let mut r = 0;
        for (chunk, t) in self.table.iter().enumerate() {
            let v = (set >> (CHUNK_BITS * chunk) & ((1 << CHUNK_BITS) - 1)) as usize;
            r += t[below][v];
            below += v.count_ones() as usize;
        }
        r
    }
}

/// The colex unrank: the `k`-subset of `n` points with rank `r`. Walks the points
/// down from the top once, so it costs at most `n` table look-ups.
pub fn unrank(mut r: u64, k: u32, n: u32) -> Bits {
    let t = binomials();
    let mut set = 0;
    let mut p = n as usize;
    for i in (1..=k as usize).rev() {
        p -= 1;
        // `t[p][i]` is 0 for `p < i`, so the walk stops at `p = i - 1` at the latest.
        while t[p][i] > r {
            p -= 1;
        }
        r -= t[p][i];
        set |= 1 << p;
    }
    set
}

/// Everything about the symmetry class of a side-to-move set that indexing needs.
#[derive(Clone, Copy, Debug)]
pub struct Canon {
    /// Stones in the set.
    pub k: u32,
    /// Class number within sets of `k` stones.
    pub class: u32,
    /// A symmetry mapping the set to the representative.
    pub sym: u8,
    /// The representative (the numerically smallest image).
    pub rep: Bits,
    /// Non-identity symmetries fixing the representative, as a bit mask.
    pub stab: u16,
}

/// Index tables for one rule set's board.
pub struct Index {
    rules: &'static Rules,
    colex: ColexRank,
    /// Per `k`, the tables of sets of `k` points, built on first use (a program
    /// that reads a few files builds only theirs).
    tables: Vec<OnceLock<Tables>>,
    /// Per `k`, the classes counted by chunks of colex ranks, if given
    /// ([`Index::install_class_counts`]): what lets a fresh process index its first
    /// few positions without building the tables.
    counts: Vec<OnceLock<ClassCounts>>,
    /// Per `k`, how many sets [`Index::canon`] has classed from the counts; past
    /// [`COUNTED_CANONS`] it builds the tables.
    counted: Vec<std::sync::atomic::AtomicU32>,
    /// Per subspace `k-l` (at `k * (stones + 1) + l`), the opponent's `l`-sets of
    /// the points a `k`-set leaves free, packed, in colex order: [`unrank`] as one
    /// look-up, for the layers, which place every position they take. Built on
    /// first use.
    unranks: Vec<OnceLock<Vec<Bits>>>,
}

/// The most sets an unrank table ([`Index::unranked`]) holds (16 MiB): every
/// subspace of a board of 24 points has fewer.
const MOST_UNRANKS: u64 = 1 << 22;

/// Colex ranks per chunk of [`ClassCounts`]: 2^8. A set's class number is the
/// count before its chunk plus the representatives in the chunk before it, each
/// found by trying the symmetries on it (a few microseconds for a chunk).
pub const CLASS_CHUNK_BITS: u32 = 8;

/// How many sets of one size [`Index::canon`] classes from the counts before it
/// builds the tables instead: a probe or a ply's children need a few, a search or
/// a build millions.
const COUNTED_CANONS: u32 = 256;

/// The classes of the sets of one size, counted by chunks of colex ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassCounts {
    /// Per chunk `j`, the classes whose representative's colex rank is below
    /// `j << CLASS_CHUNK_BITS`.
    pub before: Vec<u32>,
    /// The number of classes.
    pub total: u32,
}

/// The index tables of the sets of one number of points.
struct Tables {
    /// `class << 4 | sym` by colex rank of the set.
    lookup: Vec<u32>,
    /// Class representatives.
    reps: Vec<Bits>,
    /// Stabilizer masks (identity excluded) of the representatives.
    stabs: Vec<u16>,
}

impl Tables {
    /// The class of a `k`-set whose look-up entry is `e`.
    #[inline]
    fn canon(&self, k: u32, e: u32) -> Canon {
        let class = e >> 4;
        Canon {
            k,
            class,
            sym: (e & 15) as u8,
            rep: self.reps[class as usize],
            stab: self.stabs[class as usize],
        }
    }

    /// The tables of the `k`-sets of `rules`' board, one orbit at a time: walking
    /// the sets in colex order (numeric order of their bits), the first set of an
    /// orbit not yet seen is its smallest, the class's representative; its images
    /// under every symmetry are the orbit, and each image's symmetry to the
    /// representative is the smallest inverse of one that makes it. About one map
    /// and one rank a set, where trying every symmetry on every set costs fifteen.
    fn new(rules: &'static Rules, colex: &ColexRank, k: u32) -> Tables {
        const UNSEEN: u32 = u32::MAX;
        let n = rules.points() as u32;
        let count = binomial(n, k) as usize;
        let inverse: Vec<u32> = (0..rules.symmetries.len())
            .map(|s| rules.inverse(s) as u32)
            .collect();
        let mut look = vec![UNSEEN; count];
        let (mut rep_k, mut stab_k) = (vec![], vec![]);
        let mut set = first_subset(k);
        for rank in 0..count {
            if look[rank] == UNSEEN {
                let class = (rep_k.len() as u32) << 4;
                let mut stab = 0u16;
                for (s, &back) in inverse.iter().enumerate() {
                    let img = rules.map(s, set);
                    if img == set && s > 0 {
                        stab |= 1 << s;
                    }
                    let entry = &mut look[colex.rank(img) as usize];
                    if *entry == UNSEEN || back < *entry & 15 {
                        *entry = class | back;
                    }
                }
                rep_k.push(set);
                stab_k.push(stab);
            }
            if rank + 1 < count {
                set = next_subset(set);
            }
        }
        Tables {
            lookup: look,
            reps: rep_k,
            stabs: stab_k,
        }
    }
}

impl Index {
    /// The index of the standard board, built on first use.
    pub fn standard() -> &'static Index {
        static STANDARD: OnceLock<Index> = OnceLock::new();
        STANDARD.get_or_init(|| Index::new(Rules::standard()))
    }

    /// The index of `rules`, built on first use and kept for the program's life.
    pub fn for_rules(rules: &'static Rules) -> &'static Index {
        static OTHERS: std::sync::Mutex<Vec<&'static Index>> = std::sync::Mutex::new(Vec::new());
        if std::ptr::eq(rules, Rules::standard()) {
            return Index::standard();
        }
        let mut others = OTHERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = others.iter().find(|i| std::ptr::eq(i.rules, rules)) {
            return i;
        }
        let i: &'static Index = Box::leak(Box::new(Index::new(rules)));
        others.push(i);
        i
    }

    /// Builds the tables for `rules` (sets of up to `rules.stones` points).
    pub fn new(rules: &'static Rules) -> Index {
        assert!(
            rules.symmetries.len() <= 16,
            "symmetry numbers must fit 4 bits"
        );
        let colex = ColexRank::new(rules.points());
        let tables = (0..=rules.stones).map(|_| OnceLock::new()).collect();
        let counts = (0..=rules.stones).map(|_| OnceLock::new()).collect();
        let counted = (0..=rules.stones).map(|_| Default::default()).collect();
        let stones = rules.stones as usize + 1;
        let unranks = (0..stones * stones).map(|_| OnceLock::new()).collect();
        Index {
            rules,
            colex,
            tables,
            counts,
            counted,
            unranks,
        }
    }

    /// The tables of `k`-sets, built now if not yet.
    #[inline]
    fn tables(&self, k: u32) -> &Tables {
        self.tables[k as usize].get_or_init(|| Tables::new(self.rules, &self.colex, k))
    }

    /// The rules these tables are for.
    pub fn rules(&self) -> &'static Rules {
        self.rules
    }

    /// Number of symmetry classes of sets of `k` points.
    pub fn classes(&self, k: u32) -> u64 {
        match (self.tables[k as usize].get(), self.counts[k as usize].get()) {
            (None, Some(c)) => c.total as u64,
            _ => self.tables(k).reps.len() as u64,
        }
    }

    /// Whether the classes of the `k`-sets are known: their tables built or their
    /// counts given.
    pub fn has_classes(&self, k: u32) -> bool {
        let k = k as usize;
        self.tables[k].get().is_some() || self.counts[k].get().is_some()
    }

    /// The classes of the `k`-sets counted by chunks of colex ranks, from the
    /// tables: what [`Index::install_class_counts`] takes.
    pub fn class_counts(&self, k: u32) -> ClassCounts {
        let reps = &self.tables(k).reps;
        let chunks = binomial(self.rules.points() as u32, k).div_ceil(1 << CLASS_CHUNK_BITS);
        let mut before = vec![0u32; chunks as usize];
        // Representatives are in colex order: count those of each chunk, then sum.
        for &r in reps {
            let chunk = (self.colex.rank(r) >> CLASS_CHUNK_BITS) as usize;
            if let Some(next) = before.get_mut(chunk + 1) {
                *next += 1;
            }
        }
        for j in 1..before.len() {
            before[j] += before[j - 1];
        }
        ClassCounts {
            before,
            total: reps.len() as u32,
        }
    }

    /// Gives the index the class counts of the `k`-sets (read from a database
    /// directory, which writes them with its files), so that a process can class
    /// its first sets without building the tables. Refused if they cannot be those
    /// of the board (their shape: a chunk for every 2^8 sets, counts from 0 that
    /// grow by at most a chunk's sets, up to the total); counts already given or
    /// tables already built are kept.
    pub fn install_class_counts(&self, k: u32, counts: ClassCounts) -> Result<(), String> {
        let sets = binomial(self.rules.points() as u32, k);
        let chunk = 1u64 << CLASS_CHUNK_BITS;
        let b = &counts.before;
        let well_formed = k <= self.rules.stones as u32
            && b.len() as u64 == sets.div_ceil(chunk)
            && b.first() == Some(&0)
            && b.windows(2)
                .all(|w| w[0] <= w[1] && (w[1] - w[0]) as u64 <= chunk)
            && b.last()
                .is_some_and(|&l| l <= counts.total && (counts.total - l) as u64 <= chunk)
            && counts.total as u64 <= sets;
        if !well_formed {
            return Err(format!(
                "class counts of {k}-sets that do not fit the board"
            ));
        }
        if self.tables[k as usize].get().is_none() {
            let _ = self.counts[k as usize].set(counts);
        }
        Ok(())
    }

    /// Opponent placements per class: `C(n - k, l)`.
    pub fn per_class(&self, k: u32, l: u32) -> u64 {
        binomial(self.rules.points() as u32 - k, l)
    }

    /// Slots in subspace `k-l`.
    pub fn size(&self, k: u32, l: u32) -> u64 {
        self.classes(k) * self.per_class(k, l)
    }

    /// The class of the side to move's stones.
    #[inline]
    pub fn canon(&self, own: Bits) -> Canon {
        let k = own.count_ones();
        let Some(t) = self.tables[k as usize].get() else {
            return self.canon_cold(own);
        };
        t.canon(k, t.lookup[self.colex.rank(own) as usize])
    }

    /// [`Index::canon`] before the tables of `own`'s size are built: from the class
    /// counts, if given and not used [`COUNTED_CANONS`] times yet (the least image
    /// under the symmetries, the first symmetry giving it, its stabilizer, and its
    /// class counted from the nearer end of its chunk), else from the tables,
    /// built now.
    #[cold]
    fn canon_cold(&self, own: Bits) -> Canon {
        use std::sync::atomic::Ordering::Relaxed;
        let k = own.count_ones();
        let counts = self.counts[k as usize]
            .get()
            .filter(|_| self.counted[k as usize].fetch_add(1, Relaxed) < COUNTED_CANONS);
        match counts {
            Some(counts) => self.canon_counted(own, counts),
            None => {
                self.tables(k);
                self.canon(own)
            }
        }
    }

    /// [`Index::canon`] of `own` from the class counts of its size.
    fn canon_counted(&self, own: Bits, counts: &ClassCounts) -> Canon {
        let k = own.count_ones();
        let syms = self.rules.symmetries.len();
        let (mut rep, mut sym) = (own, 0);
        for s in 1..syms {
            let img = self.rules.map(s, own);
            if img < rep {
                (rep, sym) = (img, s);
            }
        }
        let stab = (1..syms)
            .filter(|&s| self.rules.map(s, rep) == rep)
            .fold(0u16, |m, s| m | 1 << s);
        let is_rep = |set: Bits| (1..syms).all(|s| self.rules.map(s, set) >= set);
        // The representatives of `from`'s chunk from `from` on, up to rank `to`.
        let reps_up_to = |mut set: Bits, from: u64, to: u64| {
            let mut reps = 0;
            for _ in from..to {
                reps += is_rep(set) as u32;
                set = next_subset(set);
            }
            reps
        };
        let n = self.rules.points() as u32;
        let rank = self.colex.rank(rep) as u64;
        let chunk = (rank >> CLASS_CHUNK_BITS) as usize;
        let start = (chunk as u64) << CLASS_CHUNK_BITS;
        let end = (start + (1 << CLASS_CHUNK_BITS)).min(binomial(n, k));
        // Counted from the nearer end of the chunk: half a chunk at most.
        let class = if rank - start <= end - rank {
            counts.before[chunk] + reps_up_to(unrank(start, k, n), start, rank)
        } else {
            // The classes before the next chunk, less those from `rep` on.
            let next = counts.before.get(chunk + 1).copied();
            let next = next.unwrap_or(counts.total);
            next.saturating_sub(reps_up_to(rep, rank, end))
        };
        Canon {
            k,
            class,
            sym: sym as u8,
            rep,
            stab,
        }
    }

    /// Starts fetching what [`Index::canon`] of `own` looks up first (a hint:
    /// nothing waits). The look-up table is megabytes; a caller about to index
    /// many sets asks for all of their entries first.
    #[inline]
    pub fn prefetch_canon(&self, own: Bits) {
        let k = own.count_ones();
        if let Some(e) = (self.tables.get(k as usize))
            .and_then(|t| t.get())
            .and_then(|t| t.lookup.get(self.colex.rank(own) as usize))
        {
            crate::memory::prefetch(e);
        }
    }

    /// The slot of the opponent set `opp` given the class of the side to move's set.
    #[inline]
    pub fn slot(&self, c: &Canon, opp: Bits) -> u64 {
        self.slot_of_image(c, self.rules.map(c.sym as usize, opp))
    }

    /// As [`Index::slot`], given the opponent set already mapped by `c.sym` (callers
    /// that vary one point of the set map the rest once).
    #[inline]
    pub fn slot_of_image(&self, c: &Canon, o: Bits) -> u64 {
        let l = o.count_ones();
        if c.rep == 0
            && let Some(t) = self.tables.get(l as usize).and_then(OnceLock::get)
        {
            // Every symmetry fixes the empty set, so the least image of `o` is its
            // own class's representative (colex order is the order of the sets as
            // numbers), found without trying the symmetries one by one (which the
            // lines below do where the tables of `l`-sets are not built).
            let rep = t.reps[(t.lookup[self.colex.rank(o) as usize] >> 4) as usize];
            return c.class as u64 * self.per_class(c.k, l) + self.colex.rank(rep) as u64;
        }
        let free = self.rules.all() & !c.rep;
        let least = self.least_image(c.stab, o);
        c.class as u64 * self.per_class(c.k, l) + self.colex.rank(pext(least, free)) as u64
    }

    /// The numerically least image of `o` under the symmetries `stab` (and the
    /// identity), which fix a representative that `o` avoids: the image of least
    /// colex rank among the points the representative leaves free, since every
    /// image avoids it too, `pext` keeps the order of the sets it packs, and colex
    /// order is the order of the sets as numbers. One map per symmetry, one rank.
    #[inline]
    fn least_image(&self, mut stab: u16, o: Bits) -> Bits {
        let mut least = o;
        while stab != 0 {
            let s = stab.trailing_zeros() as usize;
            stab &= stab - 1;
            least = least.min(self.rules.map(s, o));
        }
        least
    }

    /// The colex rank of `set` among the sets of its size of the points `rep` leaves
    /// free (`set` must avoid `rep`): a slot within the class block of `rep`, before
    /// any least over its stabilizer.
    #[inline]
    pub fn rank_among(&self, set: Bits, rep: Bits) -> u64 {
        self.colex.rank(pext(set, self.rules.all() & !rep)) as u64
    }

    /// The canonical slot of the position with `own` for the side to move and `opp`
    /// for the opponent, in subspace `popcount(own)-popcount(opp)`.
    #[inline]
    pub fn index(&self, own: Bits, opp: Bits) -> u64 {
        self.slot(&self.canon(own), opp)
    }

    /// [`Index::index`] of the positions with each of `movers` (sets of one size)
    /// for the side to move and `opp` for the opponent, into `out`. The classes
    /// are looked up in stages, every set's table entry fetched before any is
    /// read: in tables of megabytes each look-up is a cache miss, and one at a time
    /// they wait in turn.
    ///
    /// Panics if `out` is shorter than `movers`, or `movers` are not all of one size.
    pub fn index_all(&self, movers: &[Bits], opp: Bits, out: &mut [u64]) {
        const AT_ONCE: usize = 64;
        assert!(out.len() >= movers.len(), "a slot for every set");
        let Some(&first) = movers.first() else { return };
        let k = first.count_ones();
        let Some(t) = self.tables[k as usize].get() else {
            for (slot, &m) in out.iter_mut().zip(movers) {
                *slot = self.index(m, opp);
            }
            return;
        };
        for (movers, out) in movers.chunks(AT_ONCE).zip(out.chunks_mut(AT_ONCE)) {
            let mut entries = [0u32; AT_ONCE];
            for (e, &m) in entries.iter_mut().zip(movers) {
                assert_eq!(m.count_ones(), k, "sets of one size");
                *e = self.colex.rank(m);
                crate::memory::prefetch(&t.lookup[*e as usize]);
            }
            for e in &mut entries[..movers.len()] {
                *e = t.lookup[*e as usize];
                let class = (*e >> 4) as usize;
                crate::memory::prefetch(&t.reps[class]);
                crate::memory::prefetch(&t.stabs[class]);
            }
            for (slot, &e) in out.iter_mut().zip(&entries[..movers.len()]) {
                *slot = self.slot(&t.canon(k, e), opp);
            }
        }
    }

    /// A raw position `(own, opp)` of slot `idx` of subspace `k-l`. For a duplicate
    /// slot this is a position of the class whose canonical slot is elsewhere.
    pub fn position(&self, k: u32, l: u32, idx: u64) -> (Bits, Bits) {
        let (own, opp, _) = self.position_with_stab(k, l, idx);
        (own, opp)
    }

    /// [`Index::position`] of slot `idx` of subspace `k-l`, with the stabilizer
    /// of its class's representative (what [`Index::class`] gives of it).
    #[inline]
    pub fn position_with_stab(&self, k: u32, l: u32, idx: u64) -> (Bits, Bits, u16) {
        let per = self.per_class(k, l);
        let (class, r) = (idx / per, idx % per);
        let tables = self.tables(k);
        let rep = tables.reps[class as usize];
        let free = self.rules.all() & !rep;
        let opp = pdep(self.unranked(k, l, r), free);
        (rep, opp, tables.stabs[class as usize])
    }

    /// The `l`-set of colex rank `r` among the points a `k`-set leaves free, packed:
    /// [`unrank`], looked up in a table of subspace `k-l` built on first use.
    #[inline]
    fn unranked(&self, k: u32, l: u32, r: u64) -> Bits {
        let n = self.rules.points() as u32 - k;
        let sets = binomial(n, l);
        if sets > MOST_UNRANKS {
            return unrank(r, l, n);
        }
        let at = k as usize * (self.rules.stones as usize + 1) + l as usize;
        let table = self.unranks[at].get_or_init(|| {
            let mut set = first_subset(l);
            (0..sets)
                .map(|_| {
                    let this = set;
                    if set != 0 {
                        set = next_subset(set);
                    }
                    this
                })
                .collect()
        });
        table[r as usize]
    }

    /// The canonical slot of slot `idx` of subspace `k-l` ([`Index::index`] of
    /// its [`Index::position`]): `idx` itself unless it is a duplicate. Only a
    /// class whose representative some symmetry fixes has duplicates; their
    /// canonical twin holds the least image of the opponent's stones.
    pub fn twin(&self, k: u32, l: u32, idx: u64) -> u64 {
        let per = self.per_class(k, l);
        let (class, r) = (idx / per, idx % per);
        let tables = self.tables(k);
        let stab = tables.stabs[class as usize];
        if stab == 0 {
            return idx;
        }
        let free = self.rules.all() & !tables.reps[class as usize];
        let opp = pdep(self.unranked(k, l, r), free);
        class * per + self.colex.rank(pext(self.least_image(stab, opp), free)) as u64
    }

    /// Whether the opponent set `opp` is the least of its images under the
    /// symmetries `stab` that fix the representative of the side to move's class
    /// (`opp` avoids it): the position of that representative and `opp` is then in
    /// its canonical slot, else in a duplicate.
    #[inline]
    pub fn is_least(&self, stab: u16, opp: Bits) -> bool {
        self.least_image(stab, opp) == opp
    }

    /// The positions of slots `range` of subspace `k-l`, in slot order, as
    /// [`Index::position`] gives them: each found from the one before (the next
    /// set in colex order, or the next class's first) instead of from its number.
    /// For walks over many slots in order.
    pub fn positions(
        &self,
        k: u32,
        l: u32,
        range: std::ops::Range<u64>,
    ) -> impl Iterator<Item = (Bits, Bits)> + '_ {
        self.walk_slots::<false>(k, l, range)
            .map(|(own, opp, _)| (own, opp))
    }

    /// [`Index::positions`], each position with its *twin*: the canonical slot
    /// of the position ([`Index::index`] of it), the slot itself unless it is a
    /// duplicate. A slot's rank in its class is its twin's unless a symmetry
    /// fixing the class's representative maps its opponent stones to a lower
    /// rank, so a slot of a class that no symmetry but the identity fixes (most
    /// classes) is its own twin without a look-up.
    pub fn positions_with_twins(
        &self,
        k: u32,
        l: u32,
        range: std::ops::Range<u64>,
    ) -> impl Iterator<Item = (Bits, Bits, u64)> + '_ {
        self.walk_slots::<true>(k, l, range)
    }

    /// The walk of [`Index::positions`] and [`Index::positions_with_twins`]: each
    /// slot's position and, if `TWINS`, its twin (else the slot itself).
    fn walk_slots<const TWINS: bool>(
        &self,
        k: u32,
        l: u32,
        range: std::ops::Range<u64>,
    ) -> impl Iterator<Item = (Bits, Bits, u64)> + '_ {
        let per = self.per_class(k, l);
        let tables = self.tables(k);
        let all = self.rules.all();
        let (mut class, mut r) = (range.start / per, range.start % per);
        // A class past the last (an empty range at the end) has neither.
        let of_class = move |class: u64| {
            let c = class as usize;
            let rep = tables.reps.get(c).copied().unwrap_or(0);
            (rep, tables.stabs.get(c).copied().unwrap_or(0), all & !rep)
        };
        let (mut rep, mut stab, mut free) = of_class(class);
        let mut set = unrank(r, l, free.count_ones());
        range.map(move |slot| {
            let opp = pdep(set, free);
            let mut twin = slot;
            if TWINS {
                // As [`Index::slot_of_image`] with the representative's own class
                // (its symmetry the identity): the rank of the least image over the
                // stabilizer, the slot's own unless that image is another set.
                let least = self.least_image(stab, opp);
                if least != opp {
                    twin = slot - (r - self.colex.rank(pext(least, free)) as u64);
                }
            }
            let here = (rep, opp, twin);
            r += 1;
            if r < per {
                set = next_subset(set);
            } else {
                (class, r) = (class + 1, 0);
                (rep, stab, free) = of_class(class);
                set = first_subset(l);
            }
            here
        })
    }

    /// The representative and stabilizer of class `class` of `k`-sets.
    pub fn class(&self, k: u32, class: u64) -> (Bits, u16) {
        (
            self.tables(k).reps[class as usize],
            self.tables(k).stabs[class as usize],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index tables of the `k`-sets the plain way: each set's least image under
    /// every symmetry (the first symmetry giving it), the representatives those
    /// sets that are their own least image, a class its representative's number.
    fn tables_by_every_symmetry(rules: &'static Rules, k: u32) -> (Vec<u32>, Vec<Bits>, Vec<u16>) {
        let syms = rules.symmetries.len();
        let count = binomial(rules.points() as u32, k) as usize;
        let mut sets = vec![first_subset(k)];
        while sets.len() < count {
            sets.push(next_subset(sets[sets.len() - 1]));
        }
        let least = |set| (0..syms).map(|s| (rules.map(s, set), s)).min().unwrap();
        let reps: Vec<Bits> = sets.iter().copied().filter(|&s| least(s).0 == s).collect();
        let stabs = reps
            .iter()
            .map(|&r| {
                (1..syms)
                    .filter(|&s| rules.map(s, r) == r)
                    .fold(0u16, |m, s| m | 1 << s)
            })
            .collect();
        let lookup = sets
            .iter()
            .map(|&set| {
                let (rep, sym) = least(set);
                (reps.binary_search(&rep).unwrap() as u32) << 4 | sym as u32
            })
            .collect();
        (lookup, reps, stabs)
    }

    /// Classing a set from the class counts gives what the tables give: every
    /// set up to 5 points and a sample of the larger, on the three boards; the
    /// counts survive a round trip through `install_class_counts`, which refuses
    /// counts of another shape; a fresh index classes its first sets from them
    /// and then builds its tables.
    #[test]
    fn sets_classed_from_the_counts_are_classed_as_by_the_tables() {
        let mut r = 0x1234_5678_9abc_def0u64;
        for name in ["standard", "morabaraba", "six"] {
            let rules = Rules::by_name(name).unwrap();
            let built = Index::for_rules(rules);
            let n = rules.points() as u32;
            for k in 0..=rules.stones as u32 {
                let counts = built.class_counts(k);
                let fresh = Index::new(rules);
                fresh.install_class_counts(k, counts.clone()).unwrap();
                assert_eq!(fresh.classes(k), built.classes(k), "{name} {k}");
                let sets = binomial(n, k);
                let sample: Vec<Bits> = if sets <= 50_000 {
                    let mut set = first_subset(k);
                    (0..sets)
                        .map(|i| {
                            let s = set;
                            if i + 1 < sets {
                                set = next_subset(set);
                            }
                            s
                        })
                        .collect()
                } else {
                    (0..3000)
                        .map(|_| {
                            r = crate::mix::splitmix64(r);
                            unrank(r % sets, k, n)
                        })
                        .collect()
                };
                for &set in &sample {
                    let (a, b) = (fresh.canon_counted(set, &counts), built.canon(set));
                    let same = (a.k, a.class, a.sym, a.rep, a.stab)
                        == (b.k, b.class, b.sym, b.rep, b.stab);
                    assert!(same, "{name} {k} {set:#x}: {a:?} against {b:?}");
                }
                // Through `canon`: the counts first, then the tables.
                for &set in sample.iter().cycle().take(2 * COUNTED_CANONS as usize) {
                    assert_eq!(fresh.canon(set).class, built.canon(set).class);
                }
                assert!(fresh.tables[k as usize].get().is_some(), "{name} {k}");
                // Counts that cannot be the board's are refused.
                let mut bad = counts.clone();
                bad.before.push(counts.total);
                assert!(Index::new(rules).install_class_counts(k, bad).is_err());
                if counts.before.len() > 1 {
                    let mut bad = counts.clone();
                    bad.before[1] += 1 << CLASS_CHUNK_BITS;
                    assert!(Index::new(rules).install_class_counts(k, bad).is_err());
                }
            }
        }
    }

    #[test]
    fn the_orbit_walk_builds_the_tables_of_every_symmetry_tried() {
        for name in ["standard", "morabaraba", "six"] {
            let rules = Rules::by_name(name).unwrap();
            let colex = ColexRank::new(rules.points());
            let most = (rules.points() as u32 / 2).min(9);
            for k in 0..=most {
                let tables = Tables::new(rules, &colex, k);
                let (lookup, reps, stabs) = tables_by_every_symmetry(rules, k);
                assert!(tables.lookup == lookup, "{name}, {k} stones: lookup");
                assert_eq!(tables.reps, reps, "{name}, {k} stones: reps");
                assert_eq!(tables.stabs, stabs, "{name}, {k} stones: stabs");
            }
        }
    }

    #[test]
    fn positions_in_order_are_those_of_their_slots() {
        let idx = Index::for_rules(Rules::standard());
        let mut rng = crate::mix::SplitMix(5);
        let mut duplicates = 0;
        for (k, l) in [(3, 3), (0, 4), (5, 0), (7, 8), (9, 9), (2, 9)] {
            let size = idx.size(k, l);
            // Across class boundaries, from the start, up to the end.
            let per = idx.per_class(k, l);
            let starts = [
                0,
                per.saturating_sub(3),
                size.saturating_sub(700),
                rng.below(size),
            ];
            for start in starts {
                let range = start..(start + 700).min(size);
                let walked: Vec<_> = idx.positions(k, l, range.clone()).collect();
                let direct: Vec<_> = range.clone().map(|i| idx.position(k, l, i)).collect();
                assert_eq!(walked, direct, "{k}-{l} from {start}");
                let twins: Vec<_> = idx.positions_with_twins(k, l, range.clone()).collect();
                let indexed: Vec<_> = (direct.iter())
                    .map(|&(own, opp)| (own, opp, idx.index(own, opp)))
                    .collect();
                assert_eq!(twins, indexed, "{k}-{l} from {start}: twins");
                duplicates += (range.zip(&twins)).filter(|(i, t)| *i != t.2).count();
            }
        }
        // Twins other than the slot itself were compared too.
        assert!(duplicates > 0);
    }

    /// The slots found in stages by `index_all` are those of `index`, before the
    /// tables of the movers' size are built and after.
    #[test]
    fn index_all_is_index_of_each() {
        let idx = Index::new(Rules::standard());
        let mut rng = crate::mix::SplitMix(7);
        for round in 0..2 {
            for k in 1..=9u32 {
                let free = !0u32 >> 8;
                let opp = pdep(unrank(rng.below(binomial(24, 3)), 3, 24), free);
                let left = free & !opp;
                let movers: Vec<Bits> = (0..100)
                    .map(|_| pdep(unrank(rng.below(binomial(21, k)), k, 21), left))
                    .collect();
                let mut out = vec![0; movers.len()];
                idx.index_all(&movers, opp, &mut out);
                let each: Vec<u64> = movers.iter().map(|&m| idx.index(m, opp)).collect();
                assert_eq!(out, each, "round {round}, {k} stones");
            }
        }
    }

    /// The unrank tables give what [`unrank`] computes, for every subspace of the
    /// six-point board and a spread of ranks of every one of the standard board's.
    #[test]
    fn unrank_tables_are_the_unrank() {
        for (name, step) in [("six", 1), ("standard", 7919)] {
            let idx = Index::new(Rules::by_name(name).unwrap());
            let n = idx.rules().points() as u32;
            let stones = idx.rules().stones as u32;
            for k in 0..=stones {
                for l in 0..=stones {
                    let sets = binomial(n - k, l);
                    for r in (0..sets).step_by(step).chain([sets - 1]) {
                        assert_eq!(
                            idx.unranked(k, l, r),
                            unrank(r, l, n - k),
                            "{name} {k}-{l} {r}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn binomials_and_colex() {
        assert_eq!(binomial(24, 9), 1_307_504);
        let c = ColexRank::new(24);
        let mut set = first_subset(4);
        for r in 0..binomial(24, 4) {
            assert_eq!(c.rank(set) as u64, r);
            assert_eq!(unrank(r, 4, 24), set);
            set = next_subset(set);
        }
    }

    #[test]
    fn pext_pdep_invert() {
        for (x, m) in [(0b1011u32, 0xf0f0u32), (0xffffff, 0x123456), (5, 7)] {
            assert_eq!(pext(pdep(x, m), m), x & ((1 << m.count_ones()) - 1));
            assert_eq!(
                pext_portable(pdep_portable(x, m), m),
                x & ((1 << m.count_ones()) - 1)
            );
        }
    }

    /// The portable path against the instruction, on many random inputs (and the
    /// dispatching functions against both); without BMI2 the portable path is
    /// checked against a plain bit-by-bit reference.
    #[test]
    fn portable_pext_pdep_match_hardware() {
        fn reference_pext(x: u32, m: u32) -> u32 {
            let mut out = 0;
            let mut k = 0;
            for i in 0..32 {
                if m >> i & 1 == 1 {
                    out |= (x >> i & 1) << k;
                    k += 1;
                }
            }
            out
        }
        fn reference_pdep(x: u32, m: u32) -> u32 {
            let mut out = 0;
            let mut k = 0;
            for i in 0..32 {
                if m >> i & 1 == 1 {
                    out |= (x >> k & 1) << i;
                    k += 1;
                }
            }
            out
        }
        let mut s = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 32) as u32
        };
        #[cfg(target_arch = "x86_64")]
        let hardware = has_bmi2();
        #[cfg(not(target_arch = "x86_64"))]
        let hardware = false;
        for i in 0..200_000 {
            let (x, mut m) = (next(), next());
            // Also sparse and 24-bit masks, as the index uses them.
            if i % 3 == 1 {
                m &= next();
            } else if i % 3 == 2 {
                m &= 0xff_ffff;
            }
            let (e, d) = (pext_portable(x, m), pdep_portable(x, m));
            assert_eq!(e, reference_pext(x, m), "pext {x:#x} {m:#x}");
            assert_eq!(d, reference_pdep(x, m), "pdep {x:#x} {m:#x}");
            assert_eq!((pext(x, m), pdep(x, m)), (e, d));
            #[cfg(target_arch = "x86_64")]
            if hardware {
                // SAFETY: checked above.
                let hw = unsafe { (pext_bmi2(x, m), pdep_bmi2(x, m)) };
                assert_eq!(hw, (e, d), "{x:#x} {m:#x}");
            }
        }
        eprintln!("pext/pdep checked against the BMI2 instructions: {hardware}");
    }

    #[test]
    fn class_counts_match_burnside() {
        // Number of classes of k-sets under the 16 symmetries, by Burnside's lemma.
        let idx = Index::standard();
        let r = idx.rules();
        for k in 1..=9 {
            let mut fixed = 0u64;
            for s in 0..16 {
                let mut set = first_subset(k);
                for _ in 0..binomial(24, k) {
                    fixed += (r.map(s, set) == set) as u64;
                    set = next_subset(set);
                }
            }
            assert_eq!(idx.classes(k), fixed / 16, "k={k}");
        }
    }

    #[test]
    fn index_is_a_class_invariant_and_round_trips() {
        let idx = Index::standard();
        let r = idx.rules();
        let (k, l) = (4, 3);
        let mut seen = 0;
        for i in (0..idx.size(k, l)).step_by(97) {
            let (own, opp) = idx.position(k, l, i);
            assert_eq!(own & opp, 0);
            let canonical = idx.index(own, opp);
            for s in 0..16 {
                assert_eq!(idx.index(r.map(s, own), r.map(s, opp)), canonical);
            }
            seen += (canonical == i) as u32;
        }
        assert!(seen > 0);
    }

    /// In a class whose representative some symmetry fixes, the canonical slot of
    /// a position is the least colex rank, among the points the representative
    /// leaves free, of the opponent set's images under the stabilizer, taken here
    /// one by one as the definition says (the index ranks the least image only);
    /// [`Index::twin`] and [`Index::is_least`] agree with [`Index::index`].
    #[test]
    fn slots_of_symmetric_classes_are_the_least_rank_of_the_images() {
        for rules in [Rules::standard(), Rules::by_name("morabaraba").unwrap()] {
            let idx = Index::for_rules(rules);
            for (k, l) in [(3, 4), (4, 4), (6, 5)] {
                let per = idx.per_class(k, l);
                let (mut checked, mut duplicates) = (0, 0);
                for class in 0..idx.classes(k) {
                    let (rep, stab) = idx.class(k, class);
                    if stab == 0 {
                        continue;
                    }
                    let free = rules.all() & !rep;
                    for r in (0..per).step_by(5) {
                        let slot = class * per + r;
                        let (own, opp) = idx.position(k, l, slot);
                        let least = (0..rules.symmetries.len())
                            .filter(|&s| s == 0 || stab >> s & 1 == 1)
                            .map(|s| idx.colex.rank(pext(rules.map(s, opp), free)))
                            .min()
                            .unwrap();
                        let canonical = class * per + least as u64;
                        assert_eq!(idx.index(own, opp), canonical, "{k}-{l} slot {slot}");
                        assert_eq!(idx.twin(k, l, slot), canonical, "{k}-{l} slot {slot}");
                        assert_eq!(idx.is_least(stab, opp), canonical == slot);
                        checked += 1;
                        duplicates += (canonical != slot) as u32;
                    }
                }
                assert!(
                    checked > 100 && duplicates > 10,
                    "{k}-{l}: {checked}, {duplicates}"
                );
            }
        }
    }

    /// With no stone of the side to move on the board (the empty board's children)
    /// every symmetry fixes its set, and the slot of an opponent set is the least
    /// colex rank of its sixteen images, taken here one by one as the definition
    /// says (the index finds it through the class table). Every seventh opponent
    /// set of every size, with the standard board's nine and twelve stones a side.
    #[test]
    fn slots_beside_an_empty_set_are_the_least_image() {
        for rules in [Rules::standard(), Rules::with_stones(12)] {
            let idx = Index::for_rules(rules);
            let empty = idx.canon(0);
            assert_eq!((empty.rep, empty.stab.count_ones()), (0, 15));
            let n = rules.points() as u32;
            for l in 0..=rules.stones as u32 {
                for r in (0..binomial(n, l)).step_by(7) {
                    let set = unrank(r, l, n);
                    let least = (0..rules.symmetries.len())
                        .map(|s| idx.colex.rank(rules.map(s, set)))
                        .min()
                        .unwrap();
                    let slot = empty.class as u64 * idx.per_class(0, l) + least as u64;
                    assert_eq!(idx.slot(&empty, set), slot, "{l} stones, rank {r}");
                }
            }
        }
    }
}
