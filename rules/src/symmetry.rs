//! Board symmetries under which a variant's rules do not change, for
//! augmenting training data (AlphaGo Zero trained on the 8 symmetries of Go).
//!
//! A symmetry here maps squares of the board to squares, keeps every piece's
//! colour and the side to move, and must map the legal moves of any position
//! onto the legal moves of the mapped position, so that the value of a
//! position and its move probabilities carry over.  Which ones hold is a
//! property of the variant ([`Variant::symmetries`]); the rules tests check
//! the claim on random positions of every variant.

use crate::Variant;
use crate::bitset::{Bits, Wide};
use crate::geometry::{Geometry, Layout, Square};
use crate::moves::Move;
use crate::position::Position;

/// A map of the square board onto itself (rows counted from the top).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symmetry {
    /// Every square stays.
    Identity,
    /// Files mirrored, left to right (`a` <-> `h` on 8x8).
    MirrorFiles,
    /// Half a turn: the square at row `r`, column `c` goes to `n-1-r, n-1-c`.
    Rotate180,
    /// Rows and columns swapped (the main diagonal stays).
    Transpose,
    /// Mirrored in the other diagonal: `r, c` goes to `n-1-c, n-1-r`.
    AntiTranspose,
}

impl Symmetry {
    /// The image of a square of `g`.
    #[inline]
    pub fn map(self, g: Geometry, sq: Square) -> Square {
        let (r, c) = g.row_col(sq);
        let last = g.size as u32 - 1;
        let (r, c) = match self {
            Symmetry::Identity => (r, c),
            Symmetry::MirrorFiles => (r, last - c),
            Symmetry::Rotate180 => (last - r, last - c),
            Symmetry::Transpose => (c, r),
            Symmetry::AntiTranspose => (last - c, last - r),
        };
        g.at(r as i32, c as i32)
            .expect("a variant's symmetries keep its squares on the board")
    }

    /// The image of a bit index of `g`'s bitboards.
    #[inline]
    fn map_bit(self, g: Geometry, bit: u32) -> u32 {
        g.bit(self.map(g, g.square(bit)))
    }

    /// The image of a bitboard of `g`.
    fn map_bits(self, g: Geometry, bb: Wide) -> Wide {
        Bits(bb).fold(0, |acc, b| acc | (1 as Wide) << self.map_bit(g, b))
    }
}

impl Variant {
    /// The board symmetries under which this variant's rules hold, the
    /// identity first.  Dark-square boards have none but the identity (a
    /// mirror puts the pieces on light squares, and men move one way).
    /// Full boards where men move forward keep left-right mirroring;
    /// Konane, whose rules are the same in every direction, keeps the four
    /// maps of the square that leave each colour on its own squares of the
    /// checkered start (a quarter turn would swap them).
    pub fn symmetries(self) -> &'static [Symmetry] {
        use Symmetry::*;
        match self.geometry().layout {
            Layout::Dark => &[Identity],
            _ if self == Variant::Konane => &[Identity, Rotate180, Transpose, AntiTranspose],
            _ => &[Identity, MirrorFiles],
        }
    }
}

impl Position {
    /// The position with every piece moved to its image under `s`; the side
    /// to move stays.  `s` should be one of the variant's
    /// [`Variant::symmetries`] for the result to be a position of the same
    /// game value.
    pub fn transformed(&self, s: Symmetry) -> Position {
        if s == Symmetry::Identity {
            return *self;
        }
        let g = self.geometry();
        let bb = self.bitboards();
        let image = Position::from_bitboards(
            self.variant(),
            self.side_to_move(),
            [s.map_bits(g, bb.pieces[0]), s.map_bits(g, bb.pieces[1])],
            s.map_bits(g, bb.kings),
        );
        let offending: Vec<Square> = self.offending().map(|q| s.map(g, q)).collect();
        if offending.is_empty() {
            return image;
        }
        image
            .with_offending(&offending)
            .expect("the images of offending pieces are the side's pieces")
    }
}

impl Move {
    /// The move with every square moved to its image under `s`: the move
    /// of [`Position::transformed`] that corresponds to this one.
    pub fn transformed(&self, s: Symmetry) -> Move {
        let g = self.geometry();
        let from = s.map_bit(g, self.origin_bit());
        if self.is_removal() {
            return Move::removal(g, from);
        }
        let mut landings = [0u8; crate::moves::MAX_LANDINGS];
        let len = self.landings().len();
        for (out, sq) in landings.iter_mut().zip(self.landings()) {
            *out = g.bit(s.map(g, sq)) as u8;
        }
        if self.takes_piece() {
            Move::capture(
                g,
                from,
                &landings[..len],
                s.map_bits(g, self.captured_bits()),
                self.promotes(),
            )
        } else {
            Move::simple(g, from, u32::from(landings[0]), self.promotes())
        }
    }
}
