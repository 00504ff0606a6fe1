//! Moves with their full capture path, and a reusable move list.

use crate::bitset::{Bits, Wide};
use crate::geometry::{Geometry, Square};

/// Most landing squares one move can have.  A capture takes one piece per hop,
/// so this bounds captures at 30 pieces: as many as a side has on 12x12, more
/// than on 8x8 (12) or 10x10 (20).
pub const MAX_LANDINGS: usize = 30;

/// A legal move: origin, every landing square in order, and the captured pieces.
///
/// A simple move has one landing and no capture.  A *removal* (huffing,
/// RULES.md §4.3) has no landing: it takes the opponent's piece on its
/// origin square off the board, and the same side then moves again.  Two captures with the same
/// origin, destination and captured set but different paths are different
/// moves.  Squares are stored as bit indices of the board's layout; the
/// accessors return [`Square`]s.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    /// Captured bits 0..64 of the board layout.
    captured: u64,
    /// Captured bits 64..80 (only a 12x12 board has them).
    captured_high: u16,
    from: u8,
    len: u8,
    promotes: bool,
    geometry: Geometry,
    path: [u8; MAX_LANDINGS],
}

impl Move {
    #[inline(always)]
    pub(crate) fn simple(g: Geometry, from: u32, to: u32, promotes: bool) -> Move {
        let mut path = [0; MAX_LANDINGS];
        path[0] = to as u8;
        Move {
            captured: 0,
            captured_high: 0,
            from: from as u8,
            len: 1,
            promotes,
            geometry: g,
            path,
        }
    }

    #[inline(always)]
    pub(crate) fn capture(
        g: Geometry,
        from: u32,
        landings: &[u8],
        captured: Wide,
        promotes: bool,
    ) -> Move {
        let mut path = [0; MAX_LANDINGS];
        path[..landings.len()].copy_from_slice(landings);
        Move {
            captured: captured as u64,
            captured_high: (captured >> 64) as u16,
            from: from as u8,
            len: landings.len() as u8,
            promotes,
            geometry: g,
            path,
        }
    }

    /// A removal of the opponent's piece on `bit` (huffing).
    #[inline(always)]
    pub(crate) fn removal(g: Geometry, bit: u32) -> Move {
        let captured: Wide = 1 << bit;
        let mut path = [0; MAX_LANDINGS];
        path[0] = bit as u8;
        Move {
            captured: captured as u64,
            captured_high: (captured >> 64) as u16,
            from: bit as u8,
            len: 0,
            promotes: false,
            geometry: g,
            path,
        }
    }

    /// Whether this is a removal (huffing): a piece of the opponent taken off
    /// the board on [`Move::from`], after which the same side moves again.
    #[inline(always)]
    pub fn is_removal(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Origin square.
    pub fn from(&self) -> Square {
        self.geometry().square(self.from as u32)
    }

    /// Final square (a removal's own square).
    pub fn to(&self) -> Square {
        self.geometry().square(self.dest_bit())
    }

    /// Every landing square in order (one for a simple move, none for a removal).
    pub fn landings(&self) -> impl ExactSizeIterator<Item = Square> + '_ {
        let g = self.geometry();
        self.path[..self.len as usize]
            .iter()
            .map(move |&b| g.square(b as u32))
    }

    /// Captured squares, in increasing order.
    pub fn captured(&self) -> impl Iterator<Item = Square> + '_ {
        let g = self.geometry();
        Bits(self.captured_bits()).map(move |b| g.square(b))
    }

    /// Number of pieces captured.
    pub fn captured_count(&self) -> u32 {
        self.captured.count_ones() + self.captured_high.count_ones()
    }

    /// Whether the move captures (a piece moving over its victims; a
    /// removal takes a piece too but is not a capture).
    pub fn is_capture(&self) -> bool {
        self.takes_piece() && self.len != 0
    }

    /// Whether the move takes a piece off the board: a capture or a removal.
    pub fn takes_piece(&self) -> bool {
        self.captured != 0 || self.captured_high != 0
    }

    /// Whether a man is crowned by this move.
    pub fn promotes(&self) -> bool {
        self.promotes
    }

    /// A cheap, non-zero 32-bit identifier of the move within its position
    /// (origin, destination and captured set), for killer and hash tables.
    /// Two capture paths with the same origin, destination and captured set
    /// share it; so do nothing else in practice.
    #[inline(always)]
    pub fn compact_id(&self) -> u32 {
        let cap = (self.captured ^ (self.captured_high as u64).rotate_left(29))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((cap >> 48) as u32) << 16 | (self.from as u32) << 8 | self.dest_bit() | 0x8000_0000
    }

    #[inline(always)]
    pub(crate) fn origin_bit(&self) -> u32 {
        self.from as u32
    }

    #[inline(always)]
    pub(crate) fn dest_bit(&self) -> u32 {
        // A removal keeps its own square in `path[0]`.
        self.path[(self.len as usize).saturating_sub(1)] as u32
    }

    #[inline(always)]
    pub(crate) fn captured_bits(&self) -> Wide {
        self.captured as Wide | (self.captured_high as Wide) << 64
    }
}

impl std::fmt::Debug for Move {
    /// Squares numbered 1.. row by row from the top left, as in English,
    /// Russian, Brazilian and International notation (a move does not know
    /// its variant; Italian numbers differ, see `notation::move_text`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_removal() {
            return write!(f, "Move(x{})", self.from().0 as u32 + 1);
        }
        write!(f, "Move({}", self.from().0 as u32 + 1)?;
        let sep = if self.is_capture() { 'x' } else { '-' };
        for s in self.landings() {
            write!(f, "{sep}{}", s.0 as u32 + 1)?;
        }
        write!(f, ")")
    }
}

/// A list of moves that keeps its storage between uses, so generating into it
/// in a search loop does not allocate once it has grown.
#[derive(Clone, Debug, Default)]
pub struct MoveList {
    moves: Vec<Move>,
}

impl MoveList {
    /// An empty list with room for typical positions.
    pub fn new() -> MoveList {
        MoveList {
            moves: Vec::with_capacity(64),
        }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, m: Move) {
        self.moves.push(m);
    }

    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.moves.clear();
    }

    /// The moves as a slice.
    pub fn as_slice(&self) -> &[Move] {
        &self.moves
    }

    /// The moves, taken out of the list.
    pub fn into_vec(self) -> Vec<Move> {
        self.moves
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves
    }
}

impl std::ops::DerefMut for MoveList {
    /// Mutable access for reordering (search move ordering); the moves stay legal.
    fn deref_mut(&mut self) -> &mut [Move] {
        &mut self.moves
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.moves.iter()
    }
}
