//! Move generation for the games played on every square (or point) of a
//! board: Turkish draughts, Gothic checkers, Dameo, Konane and Alquerque.
//!
//! One generator serves them all.  It walks the lines of the board from a
//! neighbour table built at compile time from the [`Geometry`] (orthogonal
//! and diagonal lines on a full board, Alquerque's lines on its points), and
//! reads what each piece may do from the game's [`GridRules`]: directions as
//! bit sets, flying kings, majority capture, captured pieces removed at once
//! (Turkish), straight-line jumps with a free stop (Konane), line moves
//! (Dameo), opening removals (Konane).  The dark-square variants never come
//! here, so their bitboard generator keeps its speed.
//!
//! Directions are written for the side moving up the diagram (White):
//! `North` is forward.  Black's sets are the same turned upside down.

use crate::bitset::{Bits, Wide};
use crate::geometry::{Compass, Geometry, Layout, Square};
use crate::grid_rules::{Directions, GridRules};
use crate::movegen::{Board, Sink};
use crate::moves::{MAX_LANDINGS, Move, MoveList};
use crate::variant::{CapturePrecedence, Color, PromotionInCapture, RuleSet};

/// The neighbour table of a geometry: the square one step along each
/// direction, or [`NONE`].
struct Lines {
    next: [[u8; 8]; 64],
}

const NONE: u8 = u8::MAX;

const fn lines_of(g: Geometry) -> Lines {
    let mut next = [[NONE; 8]; 64];
    let mut s = 0;
    while s < g.squares() {
        let mut d = 0;
        while d < 8 {
            if let Some(t) = g.line_step(Square(s as u8), Compass::ALL[d]) {
                next[s][d] = t.0;
            }
            d += 1;
        }
        s += 1;
    }
    Lines { next }
}

static FULL_EIGHT_LINES: Lines = lines_of(Geometry::FULL_EIGHT);
static ALQUERQUE_LINES: Lines = lines_of(Geometry::ALQUERQUE);

fn lines(g: Geometry) -> &'static Lines {
    match g.layout {
        Layout::Alquerque => &ALQUERQUE_LINES,
        Layout::Full if g.size == 8 => &FULL_EIGHT_LINES,
        _ => unreachable!("no full-board game is played on {g:?}"),
    }
}

/// The rules of a full-board variant (which must have them).
fn grid_rules(rs: &RuleSet) -> &GridRules {
    rs.grid.as_ref().expect("a full-board variant")
}

/// The removals the side to move may make now, if the game opens with
/// removals and is still in its opening (Konane: a full board, or a board
/// with one hole; no later position has fewer than two holes).  The side
/// to move is not consulted, so the rule reads the same with colours swapped
/// (the first removal squares are symmetric under a half turn).
fn removals(rs: &RuleSet, b: &Board<Wide>) -> Option<u64> {
    let gr = grid_rules(rs);
    if gr.first_removals == 0 {
        return None;
    }
    let g = rs.geometry;
    let all = g.valid() as u64;
    let occupied = (b.us | b.them) as u64;
    let holes = all & !occupied;
    if holes == 0 {
        return Some(gr.first_removals & b.us as u64);
    }
    if holes.count_ones() == 1 {
        let hole = Square(holes.trailing_zeros() as u8);
        let l = lines(g);
        let mut next_to = 0u64;
        for dir in Compass::ALL {
            let t = l.next[hole.0 as usize][dir as usize];
            if dir.orthogonal() && t != NONE {
                next_to |= 1 << t;
            }
        }
        return Some(next_to & b.us as u64);
    }
    None
}

/// Writes every legal move of a full-board position into `list` (cleared first).
pub(crate) fn legal_moves(rs: &RuleSet, b: &Board<Wide>, list: &mut MoveList) {
    list.clear();
    if let Some(squares) = removals(rs, b) {
        for bit in Bits(squares) {
            list.push(Move::removal(rs.geometry, bit));
        }
        return;
    }
    let mut sink = crate::movegen::ListSink { list, best: 0 };
    generate(rs, b, &mut sink);
}

/// Number of legal moves of a full-board position (capture paths counted separately).
pub(crate) fn count(rs: &RuleSet, b: &Board<Wide>) -> u64 {
    if let Some(squares) = removals(rs, b) {
        return squares.count_ones() as u64;
    }
    if counts_by_shifts(rs) {
        return straight_jump_count(b.us as u64, b.them as u64);
    }
    let mut sink = crate::movegen::CountSink { count: 0, best: 0 };
    generate(rs, b, &mut sink);
    sink.count
}

/// Whether the moves are Konane's on the 8x8 board: men only, every move a
/// jump along a row or column, several in one straight line with a stop
/// allowed after each, and no precedence among captures.  Then every stop is
/// a move of its own and the number of moves follows from shifted bitboards
/// ([`straight_jump_count`]), which alpha-beta's mobility evaluation calls
/// twice a node.
fn counts_by_shifts(rs: &RuleSet) -> bool {
    let gr = grid_rules(rs);
    let orthogonal = Directions::ORTHOGONAL.0;
    rs.geometry == Geometry::FULL_EIGHT
        && rs.precedence == CapturePrecedence::Free
        && gr.straight_jumps
        && gr.optional_continuation
        && !gr.promotion
        && gr.man_steps.0 == 0
        && gr.man_jumps.0 == orthogonal
        && gr.man_jumps_after.0 == orthogonal
}

/// Number of straight-line jump moves of `us` over `them` on the full 8x8
/// board (square = row * 8 + column), every stop counted: for each
/// direction, the men with a jump of one, two, three ... legs.
fn straight_jump_count(us: u64, them: u64) -> u64 {
    const FIRST_COLUMN: u64 = 0x0101_0101_0101_0101;
    const LAST_COLUMN: u64 = FIRST_COLUMN << 7;
    let empty = !(us | them);
    // The squares whose neighbour one step along a direction is in `x`.
    let before: [fn(u64) -> u64; 4] = [
        |x| (x >> 1) & !LAST_COLUMN,  // east: the next column
        |x| (x << 1) & !FIRST_COLUMN, // west
        |x| x >> 8,                   // south: the next row
        |x| x << 8,                   // north
    ];
    let mut count = 0u64;
    for step in before {
        // Leg k: the square 2k-1 steps on holds an opponent, 2k steps on is empty.
        let mut over = step(them);
        let mut onto = step(step(empty));
        let mut movers = us & over & onto;
        while movers != 0 {
            count += movers.count_ones() as u64;
            over = step(step(over));
            onto = step(step(onto));
            movers &= over & onto;
        }
    }
    count
}

/// Generates the legal moves after the opening into a sink: captures
/// (compulsory, filtered by precedence), else steps.
fn generate<S: Sink>(rs: &RuleSet, b: &Board<Wide>, sink: &mut S) {
    let g = rs.geometry;
    let gr = grid_rules(rs);
    let mut walker = Generator {
        rs,
        gr,
        lines: lines(g),
        g,
        us: b.us as u64,
        them: b.them as u64,
        kings: b.kings as u64,
        promo_row: if b.side == Color::White {
            g.top_rows(1) as u64
        } else {
            g.bottom_rows(1) as u64
        },
        man_steps: gr.man_steps.for_side(b.side == Color::Black),
        man_jumps: gr.man_jumps.for_side(b.side == Color::Black),
        man_jumps_after: gr.man_jumps_after.for_side(b.side == Color::Black),
        path: [0; MAX_LANDINGS],
        sink,
        found: false,
        origin_king: false,
    };
    for from in Bits(walker.us) {
        walker.captures_from(from);
    }
    if !walker.found {
        for from in Bits(walker.us) {
            walker.steps_from(from);
        }
    }
}

struct Generator<'a, S> {
    rs: &'a RuleSet,
    gr: &'a GridRules,
    lines: &'static Lines,
    g: Geometry,
    us: u64,
    them: u64,
    kings: u64,
    /// The far row of the side to move.
    promo_row: u64,
    man_steps: Directions,
    man_jumps: Directions,
    man_jumps_after: Directions,
    path: [u8; MAX_LANDINGS],
    sink: &'a mut S,
    /// Whether a capture was found (steps are then not legal).
    found: bool,
    /// Whether the capturing piece was a king when the move began.
    origin_king: bool,
}

impl<S: Sink> Generator<'_, S> {
    #[inline(always)]
    fn step(&self, sq: u32, dir: usize) -> Option<u32> {
        let t = self.lines.next[sq as usize][dir];
        (t != NONE).then_some(t as u32)
    }

    fn is_king(&self, sq: u32) -> bool {
        self.kings & (1 << sq) != 0
    }

    /// The non-capturing moves of the piece on `from`.
    fn steps_from(&mut self, from: u32) {
        let occupied = self.us | self.them;
        if self.is_king(from) {
            for dir in 0..8 {
                if !self.gr.king_steps.has(Compass::ALL[dir]) {
                    continue;
                }
                let mut at = from;
                while let Some(t) = self.step(at, dir) {
                    if occupied & (1 << t) != 0 {
                        break;
                    }
                    self.sink.simple(self.g, from, t, false);
                    if !self.rs.flying_kings {
                        break;
                    }
                    at = t;
                }
            }
            return;
        }
        if self.gr.no_steps_on_far_row && self.promo_row & (1 << from) != 0 {
            return;
        }
        let men = self.us & !self.kings;
        for dir in 0..8 {
            if !self.man_steps.has(Compass::ALL[dir]) {
                continue;
            }
            let Some(mut t) = self.step(from, dir) else {
                continue;
            };
            if self.gr.line_moves {
                // Over the unbroken line of our men in front, if any.
                while men & (1 << t) != 0 {
                    match self.step(t, dir) {
                        Some(n) => t = n,
                        None => break,
                    }
                }
            }
            if occupied & (1 << t) == 0 {
                let promotes = self.gr.promotion && self.promo_row & (1 << t) != 0;
                self.sink.simple(self.g, from, t, promotes);
            }
        }
    }

    /// Every capture sequence of the piece on `from`.
    fn captures_from(&mut self, from: u32) {
        let king = self.is_king(from);
        self.origin_king = king;
        let occupied = (self.us | self.them) & !(1 << from);
        self.jumps(from, from, king, occupied, 0, 0, None);
    }

    /// Extends a capture sequence that stands on `at` after `n` jumps,
    /// having taken `captured`; `occupied` is the board as the piece now
    /// sees it.  Returns whether any jump was possible from here.
    #[allow(clippy::too_many_arguments)]
    fn jumps(
        &mut self,
        from: u32,
        at: u32,
        king: bool,
        occupied: u64,
        captured: u64,
        n: usize,
        last: Option<usize>,
    ) -> bool {
        if n == MAX_LANDINGS {
            return false;
        }
        let dirs = match (king, n) {
            (true, _) => self.gr.king_jumps,
            (false, 0) => self.man_jumps,
            (false, _) => self.man_jumps_after,
        };
        let flying = king && self.rs.flying_kings;
        let mut any = false;
        for dir in 0..8 {
            if !dirs.has(Compass::ALL[dir]) {
                continue;
            }
            if let Some(l) = last {
                if self.gr.straight_jumps && l != dir {
                    continue;
                }
                if self.gr.no_reversal && (l + 4) % 8 == dir {
                    continue;
                }
            }
            // The piece to take: the next one along the line.
            let Some(mut victim) = self.step(at, dir) else {
                continue;
            };
            if flying {
                while occupied & (1 << victim) == 0 {
                    match self.step(victim, dir) {
                        Some(n) => victim = n,
                        None => break,
                    }
                }
            }
            let vbit = 1u64 << victim;
            if self.them & vbit == 0 || captured & vbit != 0 || occupied & vbit == 0 {
                continue;
            }
            if !self.rs.man_captures_king && !king && self.kings & vbit != 0 {
                continue;
            }
            let taken = captured | vbit;
            let board = if self.rs.removed_during_capture {
                occupied & !vbit
            } else {
                occupied
            };
            let mut land = self.step(victim, dir);
            while let Some(to) = land {
                if occupied & (1 << to) != 0 {
                    break;
                }
                any = true;
                self.path[n] = to as u8;
                let reaches_row = !king && self.gr.promotion && self.promo_row & (1 << to) != 0;
                let (go_on, king_now) = match (reaches_row, self.rs.promotion_in_capture) {
                    (true, PromotionInCapture::EndsMove) => (false, false),
                    (true, PromotionInCapture::ContinuesAsKing) => (true, true),
                    _ => (true, king),
                };
                let more = go_on && self.jumps(from, to, king_now, board, taken, n + 1, Some(dir));
                if !more || self.gr.optional_continuation {
                    // Crowned on the way (`ContinuesAsKing`) or where it
                    // stops; a king that started as one is not "promoted".
                    let promotes = !self.origin_king && (king_now || reaches_row);
                    self.emit(from, n + 1, taken, promotes);
                }
                if !flying {
                    break;
                }
                land = self.step(to, dir);
            }
        }
        any
    }

    fn emit(&mut self, from: u32, len: usize, captured: u64, promotes: bool) {
        self.found = true;
        let score = match self.rs.precedence {
            CapturePrecedence::Free => 0,
            _ => captured.count_ones() as u64,
        };
        self.sink.capture(
            self.g,
            self.rs.precedence,
            from,
            &self.path[..len],
            captured as Wide,
            promotes,
            score,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn konane_counts_by_shifts_as_the_walk_counts() {
        let rs = crate::Variant::Konane.rules();
        assert!(counts_by_shifts(&rs));
        for other in [
            crate::Variant::Turkish,
            crate::Variant::Gothic,
            crate::Variant::Dameo,
        ] {
            assert!(!counts_by_shifts(&other.rules()), "{other}");
        }
        // Random boards of every density (Konane's own, one colour per
        // square parity, and any mixture), both sides to move.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut multi_leg = 0;
        for round in 0..20_000 {
            let holes = match round % 4 {
                0 => next() & next(),
                1 => next(),
                2 => next() | next(),
                _ => next() & next() & next(),
            };
            let light = 0xAA55_AA55_AA55_AA55u64;
            let colours = if round % 2 == 0 { light } else { next() };
            let (white, black) = (!holes & colours, !holes & !colours);
            for (us, them, side) in [(white, black, Color::White), (black, white, Color::Black)] {
                let b = Board {
                    us: us as Wide,
                    them: them as Wide,
                    kings: 0,
                    side,
                };
                let mut sink = crate::movegen::CountSink { count: 0, best: 0 };
                generate(&rs, &b, &mut sink);
                assert_eq!(
                    straight_jump_count(us, them),
                    sink.count,
                    "us {us:#018x} them {them:#018x}"
                );
                let mut list = MoveList::new();
                let mut list_sink = crate::movegen::ListSink {
                    list: &mut list,
                    best: 0,
                };
                generate(&rs, &b, &mut list_sink);
                multi_leg += list.iter().filter(|m| m.captured_count() >= 2).count();
            }
        }
        // The boards had multi-leg jumps to count, not only single ones.
        assert!(multi_leg > 1000, "{multi_leg}");
    }

    #[test]
    fn alquerque_diagonals_only_pass_through_even_points() {
        let g = Geometry::ALQUERQUE;
        // Point (0,0) has a diagonal; (0,1) has none.
        assert_eq!(g.line_step(Square(0), Compass::SouthEast), Some(Square(6)));
        assert_eq!(g.line_step(Square(1), Compass::SouthEast), None);
        assert_eq!(g.line_step(Square(1), Compass::South), Some(Square(6)));
        // The centre has all eight.
        let centre = Square(12);
        assert_eq!(
            Compass::ALL
                .iter()
                .filter(|&&d| g.line_step(centre, d).is_some())
                .count(),
            8
        );
    }
}
