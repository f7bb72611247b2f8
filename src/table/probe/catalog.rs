//! The sectors a directory of some rules may hold, numbered: a [`super::Tablebase`]
//! keeps a slot for each (its file, where the file is), found by this number.

use crate::rules::Rules;
use crate::table::sector::Sector;
use std::sync::Mutex;

/// The sectors a directory of some rules may hold, numbered, with the rules'
/// fingerprint: what every opening of a directory of these rules needs, worked out
/// once per program (a cold probe opens the directory first).
pub(super) struct Catalog {
    rules: &'static Rules,
    /// [`Rules::fingerprint`].
    pub(super) fingerprint: u64,
    /// Per `(k, l, hk, hl)` (each in `0..=stones`, read as digits of base
    /// `stones + 1`), the sector's number, or [`Catalog::NONE`] for a sector the
    /// rules do not have.
    number: Vec<u16>,
    /// The sectors by number, sorted.
    pub(super) sectors: Vec<Sector>,
}

impl Catalog {
    const NONE: u16 = u16::MAX;

    /// The catalog of `rules`, worked out on first use and kept for the
    /// program's life.
    pub(super) fn of(rules: &'static Rules) -> &'static Catalog {
        static KNOWN: Mutex<Vec<&'static Catalog>> = Mutex::new(Vec::new());
        let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = known.iter().find(|c| std::ptr::eq(c.rules, rules)) {
            return c;
        }
        let c: &'static Catalog = Box::leak(Box::new(Catalog::new(rules)));
        known.push(c);
        c
    }

    fn new(rules: &'static Rules) -> Catalog {
        let n = rules.stones;
        let base = n as usize + 1;
        let mut number = vec![Catalog::NONE; base.pow(4)];
        let mut sectors = Vec::new();
        for (i, number) in number.iter_mut().enumerate() {
            let [k, l, hk, hl] =
                [i / base.pow(3), i / base.pow(2), i / base, i].map(|d| (d % base) as u8);
            let s = Sector { k, l, hk, hl };
            let wanted = if s.is_moving() {
                k >= 3 && l >= 3
            } else {
                s.is_valid(rules)
            };
            if wanted {
                *number = sectors.len() as u16;
                sectors.push(s);
            }
        }
        Catalog {
            rules,
            fingerprint: rules.fingerprint(),
            number,
            sectors,
        }
    }

    /// The number of sector `s`, if the rules have it.
    pub(super) fn number(&self, s: Sector) -> Option<usize> {
        let n = self.rules.stones;
        if s.k > n || s.l > n || s.hk > n || s.hl > n {
            return None;
        }
        let base = n as usize + 1;
        let [k, l, hk, hl] = [s.k, s.l, s.hk, s.hl].map(usize::from);
        let i = self.number[((k * base + l) * base + hk) * base + hl];
        (i != Catalog::NONE).then_some(i as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sector a build of the rules writes has a number, the numbers are
    /// the sectors' places in a sorted list, and counts beyond the rules' have
    /// none.
    #[test]
    fn the_sectors_of_every_rule_set_are_numbered_in_order() {
        for name in Rules::names() {
            let rules = Rules::by_name(name).unwrap();
            let c = Catalog::of(rules);
            assert!(std::ptr::eq(c, Catalog::of(rules)), "{name}: built once");
            assert_eq!(c.fingerprint, rules.fingerprint());
            assert!(c.sectors.windows(2).all(|w| w[0] < w[1]), "{name}");
            for (i, &s) in c.sectors.iter().enumerate() {
                assert_eq!(c.number(s), Some(i), "{name} {s}");
            }
            let n = rules.stones;
            let moving = (3..=n).flat_map(|k| (3..=n).map(move |l| Sector::moving(k, l)));
            for s in moving.chain(Sector::placement_sectors(rules)) {
                assert!(c.number(s).is_some(), "{name} {s}");
            }
            for s in [Sector::moving(n + 1, 3), Sector::moving(2, 3)] {
                assert_eq!(c.number(s), None, "{name} {s}");
            }
        }
    }
}
