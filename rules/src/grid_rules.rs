//! The rules of the full-board games as data: which directions men and
//! kings use, and the few rules that only these games have.  Read by the
//! full-board generator (`grid.rs`); the variants' constants live in
//! `variant.rs`.
//!
//! Directions are written for the side moving up the diagram (White):
//! `North` is forward.  Black's sets are the same turned upside down.

use crate::geometry::Compass;

/// A set of [`Compass`] directions, one bit per direction index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Directions(pub u8);

impl Directions {
    /// No direction.
    pub const NONE: Directions = Directions(0);
    /// Forward only (north for White).
    pub const FORWARD: Directions = Directions(1 << Compass::North as u8);
    /// Forward and the two sideways directions.
    pub const FORWARD_AND_SIDEWAYS: Directions =
        Directions(1 << Compass::North as u8 | 1 << Compass::East as u8 | 1 << Compass::West as u8);
    /// Forward and the two forward diagonals.
    pub const FORWARD_THREE: Directions = Directions(
        1 << Compass::North as u8 | 1 << Compass::NorthEast as u8 | 1 << Compass::NorthWest as u8,
    );
    /// The forward three and the two sideways directions.
    pub const FORWARD_FIVE: Directions = Directions(
        Directions::FORWARD_THREE.0 | 1 << Compass::East as u8 | 1 << Compass::West as u8,
    );
    /// The four orthogonal directions.
    pub const ORTHOGONAL: Directions = Directions(0b0101_0101);
    /// All eight directions.
    pub const ALL: Directions = Directions(0xFF);

    /// Whether the set holds `dir`.
    pub const fn has(self, dir: Compass) -> bool {
        self.0 & (1 << dir as u8) != 0
    }

    /// The set as seen by the side moving down the diagram (Black) when
    /// `down`: forward becomes south.
    pub const fn for_side(self, down: bool) -> Directions {
        match down {
            false => self,
            true => {
                let mut out = 0u8;
                let mut d = 0;
                while d < 8 {
                    if self.0 & (1 << d) != 0 {
                        out |= 1 << ((12 - d) % 8);
                    }
                    d += 1;
                }
                Directions(out)
            }
        }
    }
}

/// How the pieces of a full-board game move, beyond the shared flags of
/// [`RuleSet`] (`flying_kings`, `precedence`, `removed_during_capture`,
/// `promotion_in_capture`, `man_captures_king`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridRules {
    /// Where each side's pieces start: black's, then white's (bits are squares).
    pub start: [u64; 2],
    /// Directions a man steps one square in, to an empty square.
    pub man_steps: Directions,
    /// Directions a man captures in, jumping an adjacent enemy piece to the
    /// empty square right behind it.
    pub man_jumps: Directions,
    /// Directions of a man's second and later jumps in one move (Alquerque:
    /// any direction; elsewhere the same as `man_jumps`).
    pub man_jumps_after: Directions,
    /// Directions a king moves in (one square, or any distance with
    /// `flying_kings`).
    pub king_steps: Directions,
    /// Directions a king captures in (a flying king from any distance,
    /// landing on any empty square behind its victim).
    pub king_jumps: Directions,
    /// Men reaching the far row become kings (false: no promotion at all).
    pub promotion: bool,
    /// Dameo: a man at the rear of an unbroken line of its side's men may
    /// move, along one of its step directions, to the empty square in front
    /// of the line (the whole line advancing one square).
    pub line_moves: bool,
    /// Konane: all jumps of one turn go in one straight line.
    pub straight_jumps: bool,
    /// Konane: the player may stop after any jump of a sequence.
    pub optional_continuation: bool,
    /// A king may not turn back (180°) between two captures of a sequence
    /// (Turkish, where the first piece is already gone).
    pub no_reversal: bool,
    /// Konane's opening: on a full board the first player removes one of
    /// its own pieces from these squares, then the second player one of its
    /// own next to the hole.  Zero: no removals.
    pub first_removals: u64,
    /// A man on its far row makes no step at all, though it may still
    /// capture (Alquerque, where men are never crowned).
    pub no_steps_on_far_row: bool,
    /// One piece against one is a draw unless the side to move can capture
    /// (Turkish).
    pub lone_pieces_draw: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn black_sees_the_directions_upside_down() {
        let forward = Directions::FORWARD.for_side(true);
        assert!(forward.has(Compass::South));
        let three = Directions::FORWARD_THREE.for_side(true);
        assert_eq!(
            three,
            Directions(
                1 << Compass::South as u8
                    | 1 << Compass::SouthEast as u8
                    | 1 << Compass::SouthWest as u8
            )
        );
        assert_eq!(
            Directions::ORTHOGONAL.for_side(true),
            Directions::ORTHOGONAL
        );
    }
}
