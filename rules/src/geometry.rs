//! Board geometry: how the playing squares of an `n x n` board map to bits.
//!
//! Two layouts: the dark squares only ([`Layout::Dark`], the draughts family
//! proper) and every square ([`Layout::Full`], Turkish, Gothic, Dameo,
//! Konane, and Alquerque's points).  On a full board square and bit are the
//! same index and the lines between squares are data ([`Geometry::line_step`],
//! `grid.rs`); the rest of this page is about the dark layout.
//!
//! Squares are indexed densely, row by row from the top of the diagram,
//! left to right (`Square(0)` is the top-left playing square).  Every dark board uses
//! the same colouring: on even rows (counting the top row as 0) the dark squares
//! are in odd columns, so the bottom-left corner is dark.  This is the English
//! and FMJD layout; variants with another numbering (Italian) translate at
//! the notation layer.
//!
//! In a bitboard, each pair of rows is followed by one unused "ghost" bit, so a
//! diagonal step is a constant shift for every square: `+H` / `+H+1` going
//! down, `-(H+1)` / `-H` going up, where `H` is the number of dark squares per
//! row.  Steps that leave the board land on a ghost bit or outside the mask.

use crate::bitset::Wide;

/// A dark square, indexed densely from the top-left (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Square(pub u8);

/// One of the four diagonal directions, seen on the diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Direction {
    DownLeft = 0,
    DownRight = 1,
    UpLeft = 2,
    UpRight = 3,
}

impl Direction {
    /// All four directions.
    pub const ALL: [Direction; 4] = [
        Direction::DownLeft,
        Direction::DownRight,
        Direction::UpLeft,
        Direction::UpRight,
    ];
}

/// Which squares of the board are played on, and how they are joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// The dark squares, joined diagonally (the draughts family).
    Dark,
    /// Every square, joined orthogonally and diagonally (Turkish, Gothic,
    /// Dameo, Konane: the rules say which lines a piece uses).
    Full,
    /// Every point of a grid, joined orthogonally everywhere and diagonally
    /// only through the points whose row plus column is even (Alquerque's
    /// board of lines).
    Alquerque,
}

/// The shape of a board: its side length and bit layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// Rows (and columns) of the board.
    pub size: u8,
    /// Which squares are played on.
    pub layout: Layout,
}

/// One of the eight directions of a full board, seen on the diagram
/// (`North` is up, towards row 0).  Index order: clockwise from north.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Compass {
    North = 0,
    NorthEast = 1,
    East = 2,
    SouthEast = 3,
    South = 4,
    SouthWest = 5,
    West = 6,
    NorthWest = 7,
}

impl Compass {
    /// All eight directions, in index order.
    pub const ALL: [Compass; 8] = [
        Compass::North,
        Compass::NorthEast,
        Compass::East,
        Compass::SouthEast,
        Compass::South,
        Compass::SouthWest,
        Compass::West,
        Compass::NorthWest,
    ];

    /// Row and column change of one step.
    pub const fn delta(self) -> (i32, i32) {
        match self {
            Compass::North => (-1, 0),
            Compass::NorthEast => (-1, 1),
            Compass::East => (0, 1),
            Compass::SouthEast => (1, 1),
            Compass::South => (1, 0),
            Compass::SouthWest => (1, -1),
            Compass::West => (0, -1),
            Compass::NorthWest => (-1, -1),
        }
    }

    /// Whether the direction is along a row or column.
    pub const fn orthogonal(self) -> bool {
        (self as u8).is_multiple_of(2)
    }
}

impl Geometry {
    /// The 8x8 board (32 dark squares).
    pub const EIGHT: Geometry = Geometry::dark(8);
    /// The 10x10 board (50 dark squares).
    pub const TEN: Geometry = Geometry::dark(10);
    /// The 12x12 board (72 dark squares; its layout needs 78 bits).
    pub const TWELVE: Geometry = Geometry::dark(12);
    /// The 8x8 board with all 64 squares in play.
    pub const FULL_EIGHT: Geometry = Geometry {
        size: 8,
        layout: Layout::Full,
    };
    /// Alquerque's 5x5 board of points and lines.
    pub const ALQUERQUE: Geometry = Geometry {
        size: 5,
        layout: Layout::Alquerque,
    };

    /// The dark squares of an `size x size` board.
    pub const fn dark(size: u8) -> Geometry {
        Geometry {
            size,
            layout: Layout::Dark,
        }
    }

    /// Whether only the dark squares are played on.
    pub const fn is_dark(self) -> bool {
        matches!(self.layout, Layout::Dark)
    }

    /// Playing squares per row.
    pub const fn per_row(self) -> u32 {
        if self.is_dark() {
            self.size as u32 / 2
        } else {
            self.size as u32
        }
    }

    /// Number of playing squares.
    pub const fn squares(self) -> usize {
        self.size as usize * self.per_row() as usize
    }

    /// Bits used by one pair of rows, ghost bit included.
    const fn stride(self) -> u32 {
        2 * self.per_row() + 1
    }

    /// Bit index of a square.
    pub const fn bit(self, sq: Square) -> u32 {
        let s = sq.0 as u32;
        if self.is_dark() {
            s + s / (2 * self.per_row())
        } else {
            s
        }
    }

    /// Square at a bit index (the bit must be a valid square bit).
    pub const fn square(self, bit: u32) -> Square {
        if self.is_dark() {
            Square((bit - bit / self.stride()) as u8)
        } else {
            Square(bit as u8)
        }
    }

    /// The square one step from `sq` along a line of the board, if the
    /// board has that line (full boards; on dark boards only the diagonals).
    pub const fn line_step(self, sq: Square, dir: Compass) -> Option<Square> {
        let (r, c) = self.row_col(sq);
        let (dr, dc) = dir.delta();
        let joined = match self.layout {
            Layout::Dark => !dir.orthogonal(),
            Layout::Full => true,
            Layout::Alquerque => dir.orthogonal() || (r + c) % 2 == 0,
        };
        if joined {
            self.at(r as i32 + dr, c as i32 + dc)
        } else {
            None
        }
    }

    /// Mask of all valid square bits.
    pub const fn valid(self) -> Wide {
        let mut m: Wide = 0;
        let mut s = 0;
        while s < self.squares() {
            m |= 1 << self.bit(Square(s as u8));
            s += 1;
        }
        m
    }

    /// Mask of the squares on one row (0 = top).
    pub const fn row_mask(self, row: u32) -> Wide {
        let mut m: Wide = 0;
        let mut k = 0;
        while k < self.per_row() {
            m |= 1 << self.bit(Square((row * self.per_row() + k) as u8));
            k += 1;
        }
        m
    }

    /// Mask of the first `rows` rows from the top.
    pub const fn top_rows(self, rows: u32) -> Wide {
        let mut m: Wide = 0;
        let mut r = 0;
        while r < rows {
            m |= self.row_mask(r);
            r += 1;
        }
        m
    }

    /// Mask of the last `rows` rows (the bottom of the diagram).
    pub const fn bottom_rows(self, rows: u32) -> Wide {
        let mut m: Wide = 0;
        let mut r = 0;
        while r < rows {
            m |= self.row_mask(self.size as u32 - 1 - r);
            r += 1;
        }
        m
    }

    /// One diagonal step of every bit of a bitboard in this layout; bits that
    /// would leave the board vanish.  Direction order as in [`Direction::ALL`].
    #[inline(always)]
    pub const fn step(self, bb: Wide, dir: Direction) -> Wide {
        let h = self.per_row();
        let moved = match dir {
            Direction::DownLeft => bb << h,
            Direction::DownRight => bb << (h + 1),
            Direction::UpLeft => bb >> (h + 1),
            Direction::UpRight => bb >> h,
        };
        moved & self.valid()
    }

    /// Row (0 = top) and column (0 = left) of a square.
    pub const fn row_col(self, sq: Square) -> (u32, u32) {
        let s = sq.0 as u32;
        let row = s / self.per_row();
        let k = s % self.per_row();
        let col = if !self.is_dark() {
            k
        } else if row.is_multiple_of(2) {
            2 * k + 1
        } else {
            2 * k
        };
        (row, col)
    }

    /// The square at a row and column, if that is a playing square on the board.
    pub const fn at(self, row: i32, col: i32) -> Option<Square> {
        let n = self.size as i32;
        if row < 0 || col < 0 || row >= n || col >= n {
            return None;
        }
        if !self.is_dark() {
            return Some(Square((row * n + col) as u8));
        }
        if (row + col) % 2 == 0 {
            return None;
        }
        Some(Square((row * n / 2 + col / 2) as u8))
    }

    /// The diagonal neighbour of a square, if it is on the board.
    pub const fn neighbour(self, sq: Square, dir: Direction) -> Option<Square> {
        let (r, c) = self.row_col(sq);
        let (dr, dc) = match dir {
            Direction::DownLeft => (1, -1),
            Direction::DownRight => (1, 1),
            Direction::UpLeft => (-1, -1),
            Direction::UpRight => (-1, 1),
        };
        self.at(r as i32 + dr, c as i32 + dc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_square_round_trip_and_shifts_match_coordinates() {
        for g in [Geometry::EIGHT, Geometry::TEN, Geometry::TWELVE] {
            let h = g.per_row();
            for s in 0..g.squares() {
                let sq = Square(s as u8);
                let b = g.bit(sq);
                assert_eq!(g.square(b), sq);
                assert!(g.valid() & (1 << b) != 0);
                assert!(b < 128);
                // Shifts agree with row/column neighbours, and off-board steps leave the mask.
                let shifts: [i64; 4] = [h as i64, h as i64 + 1, -(h as i64 + 1), -(h as i64)];
                for (d, dir) in Direction::ALL.iter().enumerate() {
                    let t = b as i64 + shifts[d];
                    let on = (0..128).contains(&t) && g.valid() & (1 << t) != 0;
                    match g.neighbour(sq, *dir) {
                        Some(n) => {
                            assert!(on);
                            assert_eq!(g.square(t as u32), n)
                        }
                        None => assert!(!on, "{g:?} {s} {dir:?}"),
                    }
                }
            }
            assert_eq!(g.valid().count_ones() as usize, g.squares());
        }
    }

    #[test]
    fn corners_are_dark_at_bottom_left() {
        // English square 29 (index 28) is the bottom-left corner; FMJD 46 likewise.
        assert_eq!(Geometry::EIGHT.row_col(Square(28)), (7, 0));
        assert_eq!(Geometry::EIGHT.row_col(Square(3)), (0, 7));
        assert_eq!(Geometry::TEN.row_col(Square(45)), (9, 0));
        assert_eq!(Geometry::TEN.row_col(Square(0)), (0, 1));
    }
}
