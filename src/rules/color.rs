//! The two sides.

/// A side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Moves first.
    White = 0,
    /// Moves second.
    Black = 1,
}

impl Color {
    /// The other side.
    pub fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for White, 1 for Black.
    pub fn index(self) -> usize {
        self as usize
    }

    /// This side's element of `pair` (indexed by [`Color::index`]), chosen without
    /// indexing memory: a position kept in registers stays there.
    #[inline]
    pub fn pick<T: Copy>(self, pair: [T; 2]) -> T {
        match self {
            Color::White => pair[0],
            Color::Black => pair[1],
        }
    }

    /// This side's `mine` and the other's `theirs`, in the order of
    /// [`Color::index`].
    #[inline]
    pub fn order<T>(self, mine: T, theirs: T) -> [T; 2] {
        match self {
            Color::White => [mine, theirs],
            Color::Black => [theirs, mine],
        }
    }

    /// `white` or `black`.
    pub fn name(self) -> &'static str {
        ["white", "black"][self.index()]
    }
}
