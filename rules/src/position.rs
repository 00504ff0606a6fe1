//! Validated positions: pieces, side to move, hash; legal moves and playing them.

use crate::bitset::{Bits, Bitset, Wide};
use crate::geometry::{Geometry, Square};
use crate::grid;
use crate::huffing;
use crate::movegen::{self, Board, ListSink, Rules, dispatch};
use crate::moves::{Move, MoveList};
use crate::variant::{Color, Variant};
use crate::zobrist;
use std::fmt;

/// A man or a king of one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub king: bool,
}

/// The pieces as bitboards in the board's bit layout (see [`Geometry::bit`]),
/// for fast set-wise evaluation code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bitboards {
    /// Pieces of each side, indexed by [`Color::index`].
    pub pieces: [Wide; 2],
    /// Kings of both sides.
    pub kings: Wide,
}

impl Bitboards {
    /// A side's men.
    #[inline(always)]
    pub fn men(&self, color: Color) -> Wide {
        self.pieces[color.index()] & !self.kings
    }

    /// A side's kings.
    #[inline(always)]
    pub fn kings_of(&self, color: Color) -> Wide {
        self.pieces[color.index()] & self.kings
    }

    /// Empty dark squares.
    #[inline(always)]
    pub fn empty(&self, g: Geometry) -> Wide {
        g.valid() & !(self.pieces[0] | self.pieces[1])
    }
}

/// A placement that may or may not be legal, e.g. as read from a FEN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub variant: Variant,
    pub side_to_move: Color,
    /// Pieces by square; at most one per square.
    pub pieces: Vec<(Square, Piece)>,
}

/// Why a [`Setup`] is not a legal position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionError {
    /// A square index outside the board.
    SquareOffBoard(Square),
    /// Two pieces on one square (square number given).
    DuplicateSquare(u32),
    /// More pieces than the side starts with.
    TooManyPieces {
        color: Color,
        count: usize,
        max: usize,
    },
    /// A man on the row where it would already have been crowned (square number given).
    ManOnPromotionRow { color: Color, square: u32 },
    /// Bitboard bits that are not squares of the board (the mask of them given).
    BitsOffBoard(Wide),
    /// Offending pieces (huffing) given for a variant without huffing.
    OffendingWithoutHuffing,
    /// A king in a game without promotion (square number given).
    KingWithoutPromotion(u32),
    /// An offending square that holds no piece of the side that just moved
    /// (square number given).
    OffendingNotOpponent(u32),
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::SquareOffBoard(s) => write!(f, "square index {} is off the board", s.0),
            PositionError::DuplicateSquare(n) => write!(f, "square {n} is given twice"),
            PositionError::TooManyPieces { color, count, max } => write!(
                f,
                "{} has {count} pieces, more than the {max} a side starts with",
                color.name()
            ),
            PositionError::ManOnPromotionRow { color, square } => write!(
                f,
                "a {} man on square {square} stands on its own crowning row",
                color.name()
            ),
            PositionError::BitsOffBoard(bits) => {
                write!(f, "bitboard bits {bits:#x} are not squares of the board")
            }
            PositionError::KingWithoutPromotion(n) => {
                write!(f, "a king on square {n}, but this game has no kings")
            }
            PositionError::OffendingWithoutHuffing => {
                write!(f, "offending pieces are only part of a game with huffing")
            }
            PositionError::OffendingNotOpponent(n) => write!(
                f,
                "offending square {n} holds no piece of the side that just moved"
            ),
        }
    }
}

impl std::error::Error for PositionError {}

/// A legal position of some variant: where the pieces are and who is to move.
///
/// Game state that is not visible on the board (repetitions, the no-progress
/// counter) lives in [`crate::Game`].  Under huffing the pieces the side to
/// move may remove are part of the position: they change what may be played.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    variant: Variant,
    side: Color,
    /// Bits 0..64 of the bitboards in the variant's layout, by [`BoardSet`]
    /// index: black's pieces, white's pieces, kings, and (huffing) the pieces
    /// of the side that just moved which declined a capture and may be
    /// removed now.  Split from `high` so that a position of a 64-bit board
    /// stays small and is played with 64-bit operations.
    low: [u64; 4],
    /// Bits 64..80 of the same bitboards (only a 12x12 board has them).
    high: [u16; 4],
    hash: u64,
}

/// Index of a bitboard in [`Position`]'s `low` and `high` (the pieces of a
/// side are at its [`Color::index`]).
type BoardSet = usize;
const KINGS: BoardSet = 2;
const OFFENDING: BoardSet = 3;

/// The start position of a variant, built at compile time: men on the
/// `setup_rows` nearest rows of each side, the rules' first mover to move.
const fn start_of(variant: Variant) -> Position {
    let rs = variant.rules();
    let pieces = rs.start_pieces();
    let mut hash = match rs.first_to_move {
        Color::White => zobrist::WHITE_TO_MOVE,
        Color::Black => 0,
    };
    let mut color = 0;
    while color < 2 {
        let mut bits = pieces[color];
        while bits != 0 {
            hash ^= zobrist::PIECE_KEYS[color * 2][bits.trailing_zeros() as usize];
            bits &= bits - 1;
        }
        color += 1;
    }
    Position {
        variant,
        side: rs.first_to_move,
        low: [pieces[0] as u64, pieces[1] as u64, 0, 0],
        high: [(pieces[0] >> 64) as u16, (pieces[1] >> 64) as u16, 0, 0],
        hash,
    }
}

/// [`Position::start`] of every variant, indexed by discriminant.
const STARTS: [Position; Variant::ALL.len()] = {
    let mut table = [start_of(Variant::English); Variant::ALL.len()];
    let mut i = 0;
    while i < Variant::ALL.len() {
        table[Variant::ALL[i] as usize] = start_of(Variant::ALL[i]);
        i += 1;
    }
    table
};

/// The error of a checked [`Position::play`]: the move is not legal here.
/// (Printed in the variant's notation: its `Display` lives in `notation`.)
#[derive(Clone, Debug)]
pub struct IllegalMove {
    /// The move that was refused.
    pub mv: Move,
    /// The position, unchanged (boxed: errors are rare, and an unboxed one
    /// would make every `Result` of `play` as large as both).
    pub position: Box<Position>,
}

impl std::error::Error for IllegalMove {}

impl Position {
    /// A bitboard, all bits.
    #[inline(always)]
    fn get(&self, i: BoardSet) -> Wide {
        self.low[i] as Wide | (self.high[i] as Wide) << 64
    }

    /// A bitboard in the board's own width (the caller knows it fits).
    #[inline(always)]
    fn get_as<B: Bitset>(&self, i: BoardSet) -> B {
        B::narrow(self.get(i))
    }

    #[inline(always)]
    fn set(&mut self, i: BoardSet, bits: Wide) {
        self.low[i] = bits as u64;
        self.high[i] = (bits >> 64) as u16;
    }

    #[inline(always)]
    fn set_as<B: Bitset>(&mut self, i: BoardSet, bits: B) {
        self.set(i, bits.wide());
    }

    /// The standard starting position of a variant.
    pub fn start(variant: Variant) -> Position {
        STARTS[variant as usize]
    }

    /// Builds a position from a setup, checking that it could occur in play.
    pub fn from_setup(setup: &Setup) -> Result<Position, PositionError> {
        let variant = setup.variant;
        let g = variant.geometry();
        let mut pieces: [Wide; 2] = [0; 2];
        let mut kings: Wide = 0;
        for &(sq, piece) in &setup.pieces {
            if sq.0 as usize >= g.squares() {
                return Err(PositionError::SquareOffBoard(sq));
            }
            let bit = 1 << g.bit(sq);
            if (pieces[0] | pieces[1]) & bit != 0 {
                return Err(PositionError::DuplicateSquare(variant.square_number(sq)));
            }
            pieces[piece.color.index()] |= bit;
            if piece.king {
                if !variant.rules().promotes() {
                    return Err(PositionError::KingWithoutPromotion(
                        variant.square_number(sq),
                    ));
                }
                kings |= bit;
            } else {
                if variant.rules().crown_row(piece.color) & bit != 0 {
                    return Err(PositionError::ManOnPromotionRow {
                        color: piece.color,
                        square: variant.square_number(sq),
                    });
                }
            }
        }
        let max = variant.rules().max_pieces();
        for color in [Color::Black, Color::White] {
            let count = pieces[color.index()].count_ones() as usize;
            if count > max {
                return Err(PositionError::TooManyPieces { color, count, max });
            }
        }
        Ok(Position::from_bitboards(
            variant,
            setup.side_to_move,
            pieces,
            kings,
        ))
    }

    /// Builds a position from bitboards in the variant's layout, with the
    /// same checks as [`Position::from_setup`] but without allocating (for
    /// code that enumerates positions, such as endgame-table builders).
    pub fn from_bitboards_checked(
        variant: Variant,
        side: Color,
        bb: Bitboards,
    ) -> Result<Position, PositionError> {
        let g = variant.geometry();
        let all = bb.pieces[0] | bb.pieces[1];
        let off = (all | bb.kings) & !g.valid();
        if off != 0 {
            return Err(PositionError::BitsOffBoard(off));
        }
        let both = bb.pieces[0] & bb.pieces[1];
        if both != 0 {
            let sq = g.square(both.trailing_zeros());
            return Err(PositionError::DuplicateSquare(variant.square_number(sq)));
        }
        if bb.kings & !all != 0 {
            return Err(PositionError::BitsOffBoard(bb.kings & !all));
        }
        let rules = variant.rules();
        if bb.kings != 0 && !rules.promotes() {
            let square = variant.square_number(g.square(bb.kings.trailing_zeros()));
            return Err(PositionError::KingWithoutPromotion(square));
        }
        for color in [Color::Black, Color::White] {
            let bad = bb.men(color) & rules.crown_row(color);
            if bad != 0 {
                let square = variant.square_number(g.square(bad.trailing_zeros()));
                return Err(PositionError::ManOnPromotionRow { color, square });
            }
            let count = bb.pieces[color.index()].count_ones() as usize;
            let max = rules.max_pieces();
            if count > max {
                return Err(PositionError::TooManyPieces { color, count, max });
            }
        }
        Ok(Position::from_bitboards(variant, side, bb.pieces, bb.kings))
    }

    pub(crate) fn from_bitboards(
        variant: Variant,
        side: Color,
        pieces: [Wide; 2],
        kings: Wide,
    ) -> Position {
        let mut p = Position {
            variant,
            side,
            low: [0; 4],
            high: [0; 4],
            hash: 0,
        };
        p.set(0, pieces[0]);
        p.set(1, pieces[1]);
        p.set(KINGS, kings);
        p.hash = p.compute_hash();
        p
    }

    /// The hash computed from scratch (the stored one is kept incrementally).
    fn compute_hash(&self) -> u64 {
        let mut h = if self.side == Color::White {
            zobrist::WHITE_TO_MOVE
        } else {
            0
        };
        for color in 0..2 {
            for b in Bits(self.get(color)) {
                h ^= zobrist::piece(color, self.get(KINGS) & (1 << b) != 0, b);
            }
        }
        h ^ zobrist::offending(self.get(OFFENDING))
    }

    /// The same position with the given pieces of the side that just moved
    /// marked offending (huffing; see [`Position::offending`]).  An empty
    /// list is accepted by every variant.
    pub fn with_offending(&self, squares: &[Square]) -> Result<Position, PositionError> {
        let g = self.geometry();
        let mut bits: Wide = 0;
        for &sq in squares {
            if sq.0 as usize >= g.squares() {
                return Err(PositionError::SquareOffBoard(sq));
            }
            if !self.variant.huffing() {
                return Err(PositionError::OffendingWithoutHuffing);
            }
            let bit = 1 << g.bit(sq);
            if self.get(self.side.opponent().index()) & bit == 0 {
                return Err(PositionError::OffendingNotOpponent(
                    self.variant.square_number(sq),
                ));
            }
            bits |= bit;
        }
        let mut p = *self;
        p.set(OFFENDING, bits);
        p.hash = p.compute_hash();
        Ok(p)
    }

    /// Huffing: squares of the opponent's pieces that declined a capture on
    /// the last move, one of which the side to move may remove now (RULES.md
    /// §4.3).  Always empty without huffing.
    pub fn offending(&self) -> impl Iterator<Item = Square> + '_ {
        let g = self.geometry();
        Bits(self.get(OFFENDING)).map(move |b| g.square(b))
    }

    /// The setup of this position (for printing or editing).
    pub fn to_setup(&self) -> Setup {
        Setup {
            variant: self.variant,
            side_to_move: self.side,
            pieces: self.pieces_iter().collect(),
        }
    }

    /// The variant being played.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Board shape.
    pub fn geometry(&self) -> Geometry {
        self.variant.geometry()
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// Zobrist hash of pieces, side to move and offending set, kept up to date by `play`.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The pieces as bitboards.
    #[inline(always)]
    pub fn bitboards(&self) -> Bitboards {
        Bitboards {
            pieces: [self.get(0), self.get(1)],
            kings: self.get(KINGS),
        }
    }

    /// The piece on a square, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let g = self.geometry();
        if sq.0 as usize >= g.squares() {
            return None;
        }
        let bit = 1 << g.bit(sq);
        let king = self.get(KINGS) & bit != 0;
        if self.get(0) & bit != 0 {
            Some(Piece {
                color: Color::Black,
                king,
            })
        } else if self.get(1) & bit != 0 {
            Some(Piece {
                color: Color::White,
                king,
            })
        } else {
            None
        }
    }

    /// Every piece with its square, in square order.
    pub fn pieces_iter(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        let g = self.geometry();
        Bits(self.get(0) | self.get(1)).map(move |b| {
            let sq = g.square(b);
            (sq, self.piece_at(sq).expect("occupied bit"))
        })
    }

    /// Number of men and kings of a side.
    pub fn count(&self, color: Color) -> (u32, u32) {
        let p = self.get(color.index());
        (
            (p & !self.get(KINGS)).count_ones(),
            (p & self.get(KINGS)).count_ones(),
        )
    }

    /// Squares of a side's men.
    pub fn men(&self, color: Color) -> impl Iterator<Item = Square> + '_ {
        let g = self.geometry();
        Bits(self.get(color.index()) & !self.get(KINGS)).map(move |b| g.square(b))
    }

    /// Squares of a side's kings.
    pub fn kings(&self, color: Color) -> impl Iterator<Item = Square> + '_ {
        let g = self.geometry();
        Bits(self.get(color.index()) & self.get(KINGS)).map(move |b| g.square(b))
    }

    /// The pieces as the generator sees them, in any width that holds the board.
    #[inline(always)]
    pub(crate) fn board<B: Bitset>(&self) -> Board<B> {
        Board {
            us: self.get_as(self.side.index()),
            them: self.get_as(self.side.opponent().index()),
            kings: self.get_as(KINGS),
            side: self.side,
        }
    }

    /// [`Position::board`] in the widest integer.
    #[inline(always)]
    pub(crate) fn generator_board(&self) -> Board<Wide> {
        self.board()
    }

    /// Writes every legal move into `list` (cleared first).  Reusing one list
    /// avoids allocation in search loops.
    #[inline]
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        if self.variant.own_generator() {
            return self.own_legal_moves_into(list);
        }
        list.clear();
        let mut sink = ListSink { list, best: 0 };
        dispatch!(self.variant, R => movegen::generate::<R, _>(&self.board::<<R as Rules>::B>(), &mut sink));
    }

    /// [`Position::legal_moves_into`] for the variants with a generator of
    /// their own (huffing, full boards); kept out of line so that the
    /// dark-square path stays small.
    #[inline(never)]
    fn own_legal_moves_into(&self, list: &mut MoveList) {
        let b = self.generator_board();
        if self.variant.on_grid() {
            return grid::legal_moves(&self.variant.rules(), &b, list);
        }
        huffing::legal_moves(self.variant, &b, self.get(OFFENDING), list)
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list
    }

    /// Number of legal moves, without listing them (capture paths counted separately).
    #[inline]
    pub fn count_legal_moves(&self) -> u64 {
        if self.variant.own_generator() {
            let b = self.generator_board();
            if self.variant.on_grid() {
                return grid::count(&self.variant.rules(), &b);
            }
            return huffing::count(self.variant, &b, self.get(OFFENDING));
        }
        dispatch!(self.variant, R => movegen::count::<R>(&self.board::<<R as Rules>::B>()))
    }

    /// Number of legal moves `color` would have if it were to move here
    /// (a mobility measure for evaluation functions).
    #[inline]
    pub fn count_legal_moves_for(&self, color: Color) -> u64 {
        let mut b = self.generator_board();
        if color != self.side {
            b = Board {
                us: b.them,
                them: b.us,
                kings: b.kings,
                side: color,
            };
        }
        if self.variant.on_grid() {
            return grid::count(&self.variant.rules(), &b);
        }
        if self.variant.huffing() {
            let offending = if color == self.side {
                self.get(OFFENDING)
            } else {
                0
            };
            return huffing::count(self.variant, &b, offending);
        }
        dispatch!(self.variant, R => movegen::count::<R>(&b.narrow::<<R as Rules>::B>()))
    }

    /// Whether the side to move must capture (never under huffing, where
    /// capturing is optional).
    pub fn must_capture(&self) -> bool {
        if self.variant.huffing() {
            return false;
        }
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list.first().is_some_and(Move::is_capture)
    }

    /// Whether a move resets the no-progress counters: it takes a piece (a
    /// capture or a removal) or moves a man on (on full boards a man's
    /// sideways step, which can be undone, is not progress).
    pub fn is_irreversible(&self, m: &Move) -> bool {
        if m.takes_piece() {
            return true;
        }
        let man = self.get(KINGS) & (1 << m.origin_bit()) == 0;
        if !self.variant.on_grid() {
            return man;
        }
        // On full boards men may step sideways (Turkish, Gothic, Alquerque)
        // and back again: only a step to another row is progress.
        let g = self.geometry();
        man && g.row_col(m.from()).0 != g.row_col(m.to()).0
    }

    /// Plays a move after checking that it is legal.
    pub fn play(&self, m: &Move) -> Result<Position, IllegalMove> {
        if self.legal_moves().contains(m) {
            let mut next = *self;
            next.play_unchecked(m);
            Ok(next)
        } else {
            Err(IllegalMove {
                mv: *m,
                position: Box::new(*self),
            })
        }
    }

    /// Plays a move known to be legal in this position (from its move list).
    /// Playing anything else leaves an inconsistent position.
    #[inline]
    pub fn play_unchecked(&mut self, m: &Move) {
        if self.variant.own_generator() {
            return self.play_own(m);
        }
        self.play_on_board(m);
    }

    /// [`Position::play_unchecked`] for the variants with a generator of
    /// their own, out of line like [`Position::own_legal_moves_into`].
    #[inline(never)]
    fn play_own(&mut self, m: &Move) {
        if self.variant.huffing() {
            return self.play_huffing(m);
        }
        if m.is_removal() {
            return self.play_opening_removal(m);
        }
        self.play_on_board(m);
    }

    /// An opening removal (Konane): the side to move takes one of its own
    /// pieces off, and the turn passes.
    fn play_opening_removal(&mut self, m: &Move) {
        let us = self.side.index();
        let bit: Wide = 1 << m.origin_bit();
        let king = self.get(KINGS) & bit != 0;
        self.hash ^= zobrist::piece(us, king, m.origin_bit()) ^ zobrist::WHITE_TO_MOVE;
        self.set(us, self.get(us) & !bit);
        self.side = self.side.opponent();
    }

    /// [`Position::play_unchecked`] under huffing: a removal takes the piece
    /// and keeps the side to move; any other move clears the right to remove
    /// and leaves the mover's declined capturers offending.
    fn play_huffing(&mut self, m: &Move) {
        self.hash ^= zobrist::offending(self.get(OFFENDING));
        self.set(OFFENDING, 0);
        if m.is_removal() {
            let them = self.side.opponent().index();
            let bit: Wide = 1 << m.origin_bit();
            let king = self.get(KINGS) & bit != 0;
            self.hash ^= zobrist::piece(them, king, m.origin_bit());
            self.set(them, self.get(them) & !bit);
            self.set(KINGS, self.get(KINGS) & !bit);
            return;
        }
        let capturers = huffing::capturers(self.variant, &self.generator_board());
        self.play_on_board(m);
        self.set(OFFENDING, huffing::offenders_after(capturers, m));
        self.hash ^= zobrist::offending(self.get(OFFENDING));
    }

    /// Moves the pieces of an ordinary move and passes the turn, computing
    /// in the board's own integer width.
    #[inline(always)]
    fn play_on_board(&mut self, m: &Move) {
        if self.variant.wide_board() {
            self.play_in::<u128>(m)
        } else {
            self.play_in::<u64>(m)
        }
    }

    #[inline(always)]
    fn play_in<B: Bitset>(&mut self, m: &Move) {
        let us = self.side.index();
        let them = 1 - us;
        let from = m.origin_bit();
        let to = m.dest_bit();
        let (mut mine, mut theirs, mut kings) = (
            self.get_as::<B>(us),
            self.get_as::<B>(them),
            self.get_as::<B>(KINGS),
        );
        let (from_bit, to_bit) = (B::bit(from), B::bit(to));
        let was_king = !(kings & from_bit).is_empty();
        let is_king = was_king || m.promotes();
        // Captures first: where taken pieces leave the board at once (Thai)
        // a king may end its move on the square of a piece it took.
        let mut h = self.hash;
        let captured = B::narrow(m.captured_bits());
        if !captured.is_empty() {
            for b in Bits(captured) {
                h ^= zobrist::piece(them, !(kings & B::bit(b)).is_empty(), b);
            }
            theirs &= !captured;
            kings &= !captured;
        }
        mine = (mine & !from_bit) | to_bit;
        kings &= !from_bit;
        if is_king {
            kings |= to_bit;
        }
        h ^= zobrist::piece(us, was_king, from) ^ zobrist::piece(us, is_king, to);
        self.set_as(us, mine);
        self.set_as(them, theirs);
        self.set_as(KINGS, kings);
        self.hash = h ^ zobrist::WHITE_TO_MOVE;
        self.side = self.side.opponent();
    }

    /// The same position seen from the other side: the board turned half a
    /// turn and the colours swapped.  Only meaningful for variants whose two
    /// sides have the same rules (all current ones); the side to move swaps too.
    pub fn colour_flipped(&self) -> Position {
        let g = self.geometry();
        let flip = |bb: Wide| {
            let mut out: Wide = 0;
            for b in Bits(bb) {
                let sq = g.square(b);
                let mirrored = Square((g.squares() - 1 - sq.0 as usize) as u8);
                out |= 1 << g.bit(mirrored);
            }
            out
        };
        let mut p = Position::from_bitboards(
            self.variant,
            self.side.opponent(),
            [flip(self.get(1)), flip(self.get(0))],
            flip(self.get(KINGS)),
        );
        p.set(OFFENDING, flip(self.get(OFFENDING)));
        p.hash = p.compute_hash();
        p
    }
}

impl fmt::Display for Position {
    /// The board as a diagram, top row first: `b`/`w` men, `B`/`W` kings, `.`
    /// empty dark squares, as the variant's diagrams show it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = self.geometry();
        let n = g.size as i32;
        // Italian and Portuguese diagrams are the mirror image of the stored (English) layout.
        let mirrored = self.variant.mirrored_board();
        for row in 0..n {
            for col in 0..n {
                let stored_col = if mirrored { n - 1 - col } else { col };
                let c = match g.at(row, stored_col) {
                    None => ' ',
                    Some(sq) => match self.piece_at(sq) {
                        None => '.',
                        Some(Piece {
                            color: Color::Black,
                            king: false,
                        }) => 'b',
                        Some(Piece {
                            color: Color::Black,
                            king: true,
                        }) => 'B',
                        Some(Piece {
                            color: Color::White,
                            king: false,
                        }) => 'w',
                        Some(Piece {
                            color: Color::White,
                            king: true,
                        }) => 'W',
                    },
                };
                write!(f, "{c}")?;
                if col + 1 < n {
                    write!(f, " ")?;
                }
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fen::parse_fen;

    #[test]
    fn compile_time_start_positions_equal_the_ones_built_at_run_time() {
        for v in Variant::ALL {
            let built = parse_fen(v, &v.start_fen()).unwrap();
            assert_eq!(Position::start(v), built, "{v}");
            assert_eq!(Position::start(v).hash(), built.hash(), "{v}");
        }
    }

    #[test]
    fn from_bitboards_checked_round_trips_and_refuses_bad_boards() {
        let p = parse_fen(Variant::English, "W:W18,K30:B5,K12").unwrap();
        let q =
            Position::from_bitboards_checked(p.variant(), p.side_to_move(), p.bitboards()).unwrap();
        assert_eq!(p, q);
        assert_eq!(p.hash(), q.hash());

        let g = Geometry::EIGHT;
        let bit = |n: u8| 1 << g.bit(Square(n - 1));
        let check = |pieces: [Wide; 2], kings: Wide| {
            Position::from_bitboards_checked(
                Variant::English,
                Color::Black,
                Bitboards { pieces, kings },
            )
        };
        assert_eq!(
            check([bit(5), bit(5)], 0),
            Err(PositionError::DuplicateSquare(5))
        );
        assert!(matches!(
            check([1 << 8, 0], 0),
            Err(PositionError::BitsOffBoard(_))
        ));
        assert!(matches!(
            check([bit(5), 0], bit(6)),
            Err(PositionError::BitsOffBoard(_))
        ));
        assert_eq!(
            check([bit(30), 0], 0),
            Err(PositionError::ManOnPromotionRow {
                color: Color::Black,
                square: 30
            })
        );
        assert!(check([bit(30), 0], bit(30)).is_ok());
    }
}
