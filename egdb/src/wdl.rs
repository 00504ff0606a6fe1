//! The value of a table position: win, draw or loss for the side to move.

use std::fmt;

/// The game-theoretic value of a position from the side to move's point of
/// view, with perfect play by both sides (the no-progress draw rule aside).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Wdl {
    Loss,
    Draw,
    Win,
}

impl Wdl {
    /// The same result seen by the other side.
    pub const fn flip(self) -> Wdl {
        match self {
            Wdl::Loss => Wdl::Win,
            Wdl::Draw => Wdl::Draw,
            Wdl::Win => Wdl::Loss,
        }
    }

    /// +1 for a win, 0 for a draw, -1 for a loss (the search's value convention).
    pub const fn value(self) -> f32 {
        match self {
            Wdl::Loss => -1.0,
            Wdl::Draw => 0.0,
            Wdl::Win => 1.0,
        }
    }

    /// `win`, `draw` or `loss`.
    pub const fn name(self) -> &'static str {
        match self {
            Wdl::Loss => "loss",
            Wdl::Draw => "draw",
            Wdl::Win => "win",
        }
    }
}

impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Two-bit codes of the on-disk format.
pub(crate) mod code {
    use super::Wdl;
    pub const DRAW: u8 = 0;
    pub const WIN: u8 = 1;
    pub const LOSS: u8 = 2;
    /// An index that names no position (two men on one square).
    pub const HOLE: u8 = 3;

    #[cfg(test)]
    pub const fn encode(w: Wdl) -> u8 {
        match w {
            Wdl::Draw => DRAW,
            Wdl::Win => WIN,
            Wdl::Loss => LOSS,
        }
    }

    pub const fn decode(c: u8) -> Option<Wdl> {
        match c {
            DRAW => Some(Wdl::Draw),
            WIN => Some(Wdl::Win),
            LOSS => Some(Wdl::Loss),
            _ => None,
        }
    }

    /// The code of entry `i` in a packed array (four entries a byte).
    #[inline(always)]
    pub fn get(packed: &[u8], i: usize) -> u8 {
        (packed[i >> 2] >> ((i & 3) * 2)) & 3
    }

    /// Packs codes four to a byte.
    pub fn pack(codes: impl ExactSizeIterator<Item = u8>) -> Vec<u8> {
        let mut out = vec![0u8; codes.len().div_ceil(4)];
        for (i, c) in codes.enumerate() {
            out[i >> 2] |= (c & 3) << ((i & 3) * 2);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_pack() {
        for w in [Wdl::Loss, Wdl::Draw, Wdl::Win] {
            assert_eq!(code::decode(code::encode(w)), Some(w));
            assert_eq!(w.flip().flip(), w);
            assert_eq!(w.flip().value(), -w.value());
        }
        assert_eq!(code::decode(code::HOLE), None);
        let codes = [1u8, 2, 3, 0, 2];
        let packed = code::pack(codes.iter().copied());
        assert_eq!(packed.len(), 2);
        for (i, &c) in codes.iter().enumerate() {
            assert_eq!(code::get(&packed, i), c);
        }
    }
}
