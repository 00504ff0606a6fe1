//! Static evaluation for alpha-beta: the [`Evaluation`] trait every
//! evaluation implements, and the handcrafted one ([`Handcrafted`]): terms
//! and weights for English checkers, material and advancement on the grid
//! games, material only for the other variants.
//!
//! Scores are in hundredths of a man, from the side to move's point of view
//! (positive = good for the side to move), the convention of the whole search.

use tammi_rules::{Bitboards, Color, Direction, Geometry, Move, Position, Square, Variant};

/// What alpha-beta scores its leaves with.
///
/// The search tells the evaluation about every move it makes, by ply, so an
/// evaluation may keep state per ply and update it move by move instead of
/// reading the whole position at each leaf (a learned evaluation's first
/// layer, kept as an accumulator, is the case in point).  The search copies
/// positions rather than undoing moves, so state for `ply + 1` is simply
/// overwritten by the next move made at `ply`.  A stateless evaluation
/// implements [`Evaluation::evaluate`] alone.
pub trait Evaluation: Send {
    /// A search starts at `root` (ply 0).
    #[inline]
    fn set_root(&mut self, root: &Position) {
        let _ = root;
    }

    /// The search made `mv` in `parent`, at `ply`, reaching `child` at `ply + 1`.
    #[inline]
    fn on_move(&mut self, parent: &Position, mv: &Move, child: &Position, ply: usize) {
        let _ = (parent, mv, child, ply);
    }

    /// The score of `pos`, reached at `ply`, for its side to move, in
    /// hundredths of a man; well inside `±TABLE_BOUND`.
    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32;
}

/// The handcrafted evaluation of each variant ([`evaluate`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Handcrafted;

impl Evaluation for Handcrafted {
    #[inline]
    fn evaluate(&mut self, pos: &Position, _ply: usize) -> i32 {
        evaluate(pos)
    }
}

/// The terms of the English evaluation and their weights, in one place.
#[derive(Clone, Copy, Debug)]
pub struct EnglishWeights {
    /// A man: the unit.
    pub man: i32,
    /// A king: worth more than a man (moves both ways), less than two.
    pub king: i32,
    /// Each man still on its own back row: guards the crowning squares.
    pub back_rank: i32,
    /// Both "bridge" squares held (black 1 and 3, white 30 and 32): the classic
    /// back-rank guard that stops a lone enemy man from crowning.
    pub bridge: i32,
    /// A piece on one of the four centre squares (14, 15, 18, 19).
    pub centre: i32,
    /// A piece on the squares around them (10, 11, 22, 23).
    pub near_centre: i32,
    /// Per row a man has advanced, scaled up as pieces come off (tempo matters
    /// in the endgame, a solid back in the opening).
    pub advance_endgame: i32,
    /// Per available simple move (mobility).
    pub mobility: i32,
    /// A man whose forward cone holds no enemy piece: it will crown.  Minus
    /// `runaway_per_row` for every row still to go.
    pub runaway: i32,
    pub runaway_per_row: i32,
    /// A king on a square of the double corner or centre rather than the edge.
    pub king_edge: i32,
    /// When ahead in material, per piece traded off (trade when ahead).
    pub trade_down: i32,
}

/// Default weights (hand-tuned, see `tests/strength.rs` and BENCHMARKS.md).
pub const ENGLISH_WEIGHTS: EnglishWeights = EnglishWeights {
    man: 100,
    king: 140,
    back_rank: 5,
    bridge: 8,
    centre: 6,
    near_centre: 3,
    advance_endgame: 3,
    mobility: 2,
    runaway: 40,
    runaway_per_row: 6,
    king_edge: 6,
    trade_down: 2,
};

const G: Geometry = Geometry::EIGHT;

const fn mask_of(numbers: &[u8]) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < numbers.len() {
        m |= 1 << G.bit(Square(numbers[i] - 1));
        i += 1;
    }
    m
}

const CENTRE: u64 = mask_of(&[14, 15, 18, 19]);
const NEAR_CENTRE: u64 = mask_of(&[10, 11, 22, 23]);
const BRIDGE: [u64; 2] = [mask_of(&[1, 3]), mask_of(&[30, 32])];
const BACK_ROW: [u64; 2] = [G.top_rows(1) as u64, G.bottom_rows(1) as u64];
/// Edge squares (columns a and h, rows 1 and 8).
const EDGE: u64 = mask_of(&[1, 2, 3, 4, 5, 12, 13, 20, 21, 28, 29, 30, 31, 32]);

/// Forward cone of each square for each colour: every square a man there
/// could reach on its way to crowning (a triangle widening by one column per row).
const fn cones() -> [[u64; 64]; 2] {
    let mut out = [[0u64; 64]; 2];
    let mut s = 0;
    while s < 32 {
        let (r, c) = G.row_col(Square(s as u8));
        let bit = G.bit(Square(s as u8)) as usize;
        let mut color = 0;
        while color < 2 {
            let mut m = 0u64;
            let mut k = 1i32;
            while k < 8 {
                let row = if color == 0 {
                    r as i32 + k
                } else {
                    r as i32 - k
                };
                let mut dc = -k;
                while dc <= k {
                    if let Some(sq) = G.at(row, c as i32 + dc) {
                        m |= 1 << G.bit(sq);
                    }
                    dc += 1;
                }
                k += 1;
            }
            out[color][bit] = m;
            color += 1;
        }
        s += 1;
    }
    out
}

const CONES: [[u64; 64]; 2] = cones();

/// Rows to go to the crowning row for a man of `color` on a bit.
#[inline(always)]
fn rows_to_go(color: Color, bit: u32) -> i32 {
    let row = G.square(bit).0 as i32 / 4;
    match color {
        Color::Black => 7 - row,
        Color::White => row,
    }
}

/// The English board in its 64-bit layout (the rules core hands out 128-bit
/// bitboards, wide enough for every board).
struct Board64 {
    pieces: [u64; 2],
    kings: u64,
}

impl Board64 {
    fn of(b: Bitboards) -> Board64 {
        Board64 {
            pieces: [b.pieces[0] as u64, b.pieces[1] as u64],
            kings: b.kings as u64,
        }
    }

    #[inline(always)]
    fn men(&self, color: Color) -> u64 {
        self.pieces[color.index()] & !self.kings
    }

    #[inline(always)]
    fn kings_of(&self, color: Color) -> u64 {
        self.pieces[color.index()] & self.kings
    }
}

/// One diagonal step of an English bitboard.
#[inline(always)]
fn step(bb: u64, dir: Direction) -> u64 {
    G.step(u128::from(bb), dir) as u64
}

/// Simple moves available to a side (set-wise, ignoring capture obligations).
#[inline(always)]
fn mobility(b: &Board64, color: Color, empty: u64) -> i32 {
    let (f0, f1) = match color {
        Color::Black => (Direction::DownLeft, Direction::DownRight),
        Color::White => (Direction::UpLeft, Direction::UpRight),
    };
    let men = b.men(color);
    let kings = b.kings_of(color);
    let mut n = (step(men, f0) & empty).count_ones() + (step(men, f1) & empty).count_ones();
    if kings != 0 {
        for d in Direction::ALL {
            n += (step(kings, d) & empty).count_ones();
        }
    }
    n as i32
}

/// One side's score (not yet relative to the side to move).
#[inline(always)]
fn side_score(b: &Board64, color: Color, w: &EnglishWeights, endgame: i32, empty: u64) -> i32 {
    let c = color.index();
    let them = b.pieces[1 - c];
    let men = b.men(color);
    let kings = b.kings_of(color);
    let pieces = men | kings;
    let mut s = men.count_ones() as i32 * w.man + kings.count_ones() as i32 * w.king;
    // The back rank matters while the opponent still has men to crown.
    if b.men(color.opponent()) != 0 {
        s += (men & BACK_ROW[c]).count_ones() as i32 * w.back_rank;
        if men & BRIDGE[c] == BRIDGE[c] {
            s += w.bridge;
        }
    }
    s += (pieces & CENTRE).count_ones() as i32 * w.centre;
    s += (pieces & NEAR_CENTRE).count_ones() as i32 * w.near_centre;
    s -= (kings & EDGE).count_ones() as i32 * w.king_edge;
    s += mobility(b, color, empty) * w.mobility;
    let mut m = men;
    while m != 0 {
        let bit = m.trailing_zeros();
        m &= m - 1;
        let to_go = rows_to_go(color, bit);
        s += (7 - to_go) * w.advance_endgame * endgame / 24;
        if CONES[c][bit as usize] & them == 0 {
            s += (w.runaway - to_go * w.runaway_per_row).max(0);
        }
    }
    s
}

/// Handcrafted evaluation of an English position, from the side to move's view.
pub fn english(pos: &Position, w: &EnglishWeights) -> i32 {
    let b = Board64::of(pos.bitboards());
    let empty = G.valid() as u64 & !(b.pieces[0] | b.pieces[1]);
    let total = (b.pieces[0] | b.pieces[1]).count_ones() as i32;
    // 0 with all 24 pieces on the board, 24 with none.
    let endgame = 24 - total.min(24);
    let black = side_score(&b, Color::Black, w, endgame, empty);
    let white = side_score(&b, Color::White, w, endgame, empty);
    let mut score = black - white;

    let (bm, bk) = (
        b.men(Color::Black).count_ones(),
        b.kings_of(Color::Black).count_ones(),
    );
    let (wm, wk) = (
        b.men(Color::White).count_ones(),
        b.kings_of(Color::White).count_ones(),
    );
    let (bn, wn) = ((bm + bk) as i32, (wm + wk) as i32);
    // Trade down when ahead: the same lead is worth more with fewer pieces left.
    if bn != wn {
        score += (bn - wn).signum() * (24 - total) * w.trade_down;
    }
    // Level material with few pieces and kings on both sides is usually a draw.
    if bn == wn && bn <= 3 && bk > 0 && wk > 0 {
        score /= 8;
    }
    match pos.side_to_move() {
        Color::Black => score,
        Color::White => -score,
    }
}

/// Material only (men 100, kings 300 with flying kings, else 150), from the
/// side to move's view; in a give-away game, where the side that runs out of
/// pieces wins, the material of the other side counts instead.
pub fn material(pos: &Position) -> i32 {
    let rules = pos.variant().rules();
    let king = if rules.flying_kings { 300 } else { 150 };
    let us = pos.side_to_move();
    let (um, uk) = pos.count(us);
    let (tm, tk) = pos.count(us.opponent());
    let ours = (um as i32 - tm as i32) * 100 + (uk as i32 - tk as i32) * king;
    if rules.giveaway { -ours } else { ours }
}

/// The full-board games.  Konane (no kings, every move a jump, whoever
/// cannot move loses): mobility alone, 10 per move more than the opponent
/// has (material only counts jumps already made).  The others: material,
/// and where men are crowned, 4 per row a man has advanced.
pub fn grid(pos: &Position) -> i32 {
    let us = pos.side_to_move();
    if !pos.variant().has_quiet_moves() {
        let mobility =
            pos.count_legal_moves_for(us) as i32 - pos.count_legal_moves_for(us.opponent()) as i32;
        return 10 * mobility;
    }
    let mut score = material(pos);
    if pos.variant().rules().promotes() {
        let g = pos.geometry();
        let last = g.size as i32 - 1;
        let advanced = |color: Color| -> i32 {
            pos.men(color)
                .map(|sq| {
                    let row = g.row_col(sq).0 as i32;
                    match color {
                        Color::Black => row,
                        Color::White => last - row,
                    }
                })
                .sum()
        };
        score += 4 * (advanced(us) - advanced(us.opponent()));
    }
    score
}

/// The evaluation used for a variant.
pub fn evaluate(pos: &Position) -> i32 {
    match pos.variant() {
        Variant::English => english(pos, &ENGLISH_WEIGHTS),
        v if v.on_grid() => grid(pos),
        _ => material(pos),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tammi_rules::parse_fen;

    fn eval(fen: &str) -> i32 {
        evaluate(&parse_fen(Variant::English, fen).unwrap())
    }

    #[test]
    fn start_is_balanced_and_symmetric() {
        let start = Position::start(Variant::English);
        let e = evaluate(&start);
        // Black to move at the start; the position is symmetric, so 0.
        assert_eq!(e, 0);
        let flipped = start.colour_flipped();
        assert_eq!(evaluate(&flipped), 0);
    }

    #[test]
    fn colour_flip_negates_nothing_but_perspective() {
        for fen in ["B:W18,K30,22:B1,5,K9", "W:W21,22,23:B9,K14", "B:WK5:B28,K1"] {
            let p = parse_fen(Variant::English, fen).unwrap();
            assert_eq!(evaluate(&p), evaluate(&p.colour_flipped()), "{fen}");
        }
    }

    #[test]
    fn more_material_is_better() {
        assert!(eval("B:W21,22:B1,2,3") > 50);
        assert!(eval("W:W21,22:B1,2,3") < -50);
        // A king beats a man.
        assert!(eval("B:W21:BK10") > eval("B:W21:B10"));
    }

    #[test]
    fn runaway_man_is_rewarded() {
        // Black man on 25 with nothing in front: will crown.
        let free = eval("B:W5,6:B25,1");
        let blocked = eval("B:W5,29:B25,1");
        assert!(free > blocked, "{free} vs {blocked}");
    }

    #[test]
    fn level_kings_endgame_is_near_draw() {
        let e = eval("B:WK20,K24:BK1,K5");
        assert!(e.abs() < 10, "{e}");
    }
}
