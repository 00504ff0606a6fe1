//! Positions to table indices and back.
//!
//! Tables store positions in a frame where the side to move is index 0 and
//! moves down the board like Black; a position with White to move is turned
//! half a turn with the colours swapped first (every variant tammi builds
//! tables for treats both sides alike).  Squares are the dense square numbers
//! of [`tammi_rules::Geometry`] (0 = top left), so nothing here assumes the
//! 8x8 board.
//!
//! Index scheme 1, for a slice of [`Material`] `m`:
//! `((men0 * C1 + men1) * K0 + kings0) * K1 + kings1`, where `men0` is the
//! colex rank of the mover's men among the squares they can stand on (all but
//! the bottom row), `men1` that of the opponent's men among theirs (all but
//! the top row), and the kings are ranked among the squares the men (and the
//! mover's kings) leave free.  The two sets of men are ranked independently,
//! so an index whose men share a square is a hole: it names no position and
//! is stored as such (a few per cent of a slice, bought for an index that is a
//! plain product and needs no tables).

use crate::material::Material;
use tammi_rules::{Bitboards, Color, Geometry, Position, PositionError, Variant};

/// Largest number of pieces of one kind in a slice that the binomial table covers.
const MAX_K: usize = 12;

const fn binomials() -> [[u64; MAX_K + 1]; 65] {
    let mut t = [[0u64; MAX_K + 1]; 65];
    let mut n = 0;
    while n <= 64 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= MAX_K {
            t[n][k] = if n == 0 {
                0
            } else {
                t[n - 1][k - 1] + t[n - 1][k]
            };
            k += 1;
        }
        n += 1;
    }
    t
}

/// `BINOMIAL[n][k]` = n choose k.
static BINOMIAL: [[u64; MAX_K + 1]; 65] = binomials();

#[inline(always)]
fn choose(n: u32, k: u32) -> u64 {
    BINOMIAL[n as usize][k as usize]
}

/// Colex rank of a set of squares: the sum of C(s_j, j) over its members in
/// increasing order (j from 1).
#[inline(always)]
fn rank_set(mut set: u64) -> u64 {
    let mut r = 0;
    let mut j = 1;
    while set != 0 {
        let s = set.trailing_zeros();
        r += choose(s, j);
        set &= set - 1;
        j += 1;
    }
    r
}

/// The set of `k` squares below `universe` whose colex rank is `r`.
#[inline(always)]
fn unrank_set(mut r: u64, k: u32, universe: u32) -> u64 {
    let mut set = 0;
    let mut s = universe;
    for j in (1..=k).rev() {
        s -= 1;
        while choose(s, j) > r {
            s -= 1;
        }
        set |= 1 << s;
        r -= choose(s, j);
    }
    set
}

/// Renumbers the members of `set` as if the squares of `occupied` were not there.
#[inline(always)]
fn squeeze(set: u64, occupied: u64) -> u64 {
    let mut out = 0;
    let mut rest = set;
    while rest != 0 {
        let s = rest.trailing_zeros();
        let below = occupied & ((1u64 << s) - 1);
        out |= 1 << (s - below.count_ones());
        rest &= rest - 1;
    }
    out
}

/// The inverse of [`squeeze`]: spreads `set` over the squares below `n` that
/// `occupied` leaves free.
#[inline(always)]
fn unsqueeze(set: u64, occupied: u64, n: u32) -> u64 {
    let free = !occupied & low_bits(n);
    let mut out = 0;
    let mut rest = set;
    while rest != 0 {
        let j = rest.trailing_zeros();
        // The j-th free square (0-based).
        let mut f = free;
        for _ in 0..j {
            f &= f - 1;
        }
        out |= f & f.wrapping_neg();
        rest &= rest - 1;
    }
    out
}

#[inline(always)]
const fn low_bits(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// A position in the tables' frame: the side to move is index 0 and moves
/// down; dense square masks (bit `s` = square `s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dense {
    pub men: [u64; 2],
    pub kings: [u64; 2],
}

impl Dense {
    /// Its material signature.
    pub fn material(&self) -> Material {
        Material {
            men: [
                self.men[0].count_ones() as u8,
                self.men[1].count_ones() as u8,
            ],
            kings: [
                self.kings[0].count_ones() as u8,
                self.kings[1].count_ones() as u8,
            ],
        }
    }

    /// Every occupied square.
    #[inline(always)]
    pub fn occupied(&self) -> u64 {
        self.men[0] | self.men[1] | self.kings[0] | self.kings[1]
    }

    /// The same position seen by the other side (board turned, colours
    /// swapped), i.e. with the opponent to move.
    #[inline(always)]
    pub fn flipped(&self, squares: u32) -> Dense {
        let turn = |x: u64| x.reverse_bits() >> (64 - squares);
        Dense {
            men: [turn(self.men[1]), turn(self.men[0])],
            kings: [turn(self.kings[1]), turn(self.kings[0])],
        }
    }

    /// The tables' frame of a position.
    #[inline]
    pub fn of(pos: &Position) -> Dense {
        let g = pos.geometry();
        let bb = pos.bitboards();
        let side = pos.side_to_move();
        // Tables exist for 8x8 boards only, whose layout fits 64 bits.
        let dense = |x: u128| to_dense(g, x as u64);
        let d = Dense {
            men: [dense(bb.men(Color::Black)), dense(bb.men(Color::White))],
            kings: [
                dense(bb.kings_of(Color::Black)),
                dense(bb.kings_of(Color::White)),
            ],
        };
        match side {
            Color::Black => d,
            Color::White => d.flipped(g.squares() as u32),
        }
    }

    /// The position with Black (index 0) to move.
    pub fn to_position(&self, variant: Variant) -> Result<Position, PositionError> {
        let g = variant.geometry();
        let layout = |x: u64| u128::from(from_dense(g, x));
        let bb = Bitboards {
            pieces: [
                layout(self.men[0] | self.kings[0]),
                layout(self.men[1] | self.kings[1]),
            ],
            kings: layout(self.kings[0] | self.kings[1]),
        };
        Position::from_bitboards_checked(variant, Color::Black, bb)
    }
}

/// Dense square mask of a bitboard in the rules' layout (which leaves a ghost
/// bit after every two rows).
#[inline(always)]
pub fn to_dense(g: Geometry, bb: u64) -> u64 {
    let pair = 2 * g.per_row();
    let mut out = 0;
    for k in 0..g.size as u32 / 2 {
        out |= ((bb >> (k * (pair + 1))) & low_bits(pair)) << (k * pair);
    }
    out
}

/// The rules' layout of a dense square mask.
#[inline(always)]
pub fn from_dense(g: Geometry, dense: u64) -> u64 {
    let pair = 2 * g.per_row();
    let mut out = 0;
    for k in 0..g.size as u32 / 2 {
        out |= ((dense >> (k * pair)) & low_bits(pair)) << (k * (pair + 1));
    }
    out
}

/// Ranks and unranks the positions of one slice.
#[derive(Clone, Copy, Debug)]
pub struct Indexer {
    material: Material,
    squares: u32,
    per_row: u32,
    /// Ranks of the opponent's men, of the mover's kings, of the opponent's kings.
    men1: u64,
    kings0: u64,
    kings1: u64,
    size: u64,
}

impl Indexer {
    /// The indexer of a slice on a board.
    pub fn new(g: Geometry, material: Material) -> Indexer {
        let n = g.squares() as u32;
        let h = g.per_row();
        let [m0, m1] = material.men.map(u32::from);
        let [k0, k1] = material.kings.map(u32::from);
        let men_squares = n - h;
        let men0 = choose(men_squares, m0);
        let men1 = choose(men_squares, m1);
        let free = n.saturating_sub(m0 + m1);
        let kings0 = choose(free, k0);
        let kings1 = choose(free.saturating_sub(k0), k1);
        Indexer {
            material,
            squares: n,
            per_row: h,
            men1,
            kings0,
            kings1,
            size: men0 * men1 * kings0 * kings1,
        }
    }

    /// The slice's signature.
    pub fn material(&self) -> Material {
        self.material
    }

    /// Number of indices (positions and holes).
    pub fn size(&self) -> usize {
        self.size as usize
    }

    /// The index of a position of this slice (in the tables' frame).
    #[inline]
    pub fn rank(&self, d: &Dense) -> usize {
        let men = d.men[0] | d.men[1];
        let r0 = rank_set(d.men[0]);
        let r1 = rank_set(d.men[1] >> self.per_row);
        let rk0 = rank_set(squeeze(d.kings[0], men));
        let rk1 = rank_set(squeeze(d.kings[1], men | d.kings[0]));
        (((r0 * self.men1 + r1) * self.kings0 + rk0) * self.kings1 + rk1) as usize
    }

    /// The position at an index, or `None` for a hole.
    #[inline]
    pub fn unrank(&self, index: usize) -> Option<Dense> {
        let mut i = index as u64;
        let rk1 = i % self.kings1;
        i /= self.kings1;
        let rk0 = i % self.kings0;
        i /= self.kings0;
        let r1 = i % self.men1;
        let r0 = i / self.men1;
        let [m0, m1] = self.material.men.map(u32::from);
        let [k0, k1] = self.material.kings.map(u32::from);
        let men_squares = self.squares - self.per_row;
        let men0 = unrank_set(r0, m0, men_squares);
        let men1 = unrank_set(r1, m1, men_squares) << self.per_row;
        if men0 & men1 != 0 {
            return None;
        }
        let men = men0 | men1;
        let n = self.squares;
        let kings0 = unsqueeze(unrank_set(rk0, k0, n - m0 - m1), men, n);
        let kings1 = unsqueeze(unrank_set(rk1, k1, n - m0 - m1 - k0), men | kings0, n);
        Some(Dense {
            men: [men0, men1],
            kings: [kings0, kings1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tammi_rules::parse_fen;

    #[test]
    fn sets_rank_densely() {
        let mut seen = vec![false; choose(10, 3) as usize];
        for set in 0u64..1024 {
            if set.count_ones() == 3 {
                let r = rank_set(set) as usize;
                assert!(!seen[r]);
                seen[r] = true;
                assert_eq!(unrank_set(r as u64, 3, 10), set);
            }
        }
        assert!(seen.iter().all(|&s| s));
        let occ = 0b1010_0110;
        for set in [0b1, 0b1000, 0b1_0001_0001] {
            let set = set & !occ;
            assert_eq!(unsqueeze(squeeze(set, occ), occ, 12), set);
        }
    }

    #[test]
    fn dense_layout_round_trips_on_both_boards() {
        for g in [Geometry::EIGHT, Geometry::TEN] {
            let dense = low_bits(g.squares() as u32);
            assert_eq!(u128::from(from_dense(g, dense)), g.valid());
            assert_eq!(to_dense(g, g.valid() as u64), dense);
            assert_eq!(to_dense(g, from_dense(g, 0b1011 << 7)), 0b1011 << 7);
        }
    }

    #[test]
    fn every_index_unranks_to_a_position_that_ranks_back() {
        let g = Geometry::EIGHT;
        let m = Material {
            men: [1, 1],
            kings: [1, 0],
        };
        let ix = Indexer::new(g, m);
        let mut holes = 0;
        for i in 0..ix.size() {
            match ix.unrank(i) {
                None => holes += 1,
                Some(d) => {
                    assert_eq!(d.material(), m);
                    assert_eq!(ix.rank(&d), i);
                    assert!(d.to_position(Variant::English).is_ok());
                }
            }
        }
        // The mover's man on one of the 24 squares both kinds of men may use.
        assert_eq!(holes, 24 * 30);
    }

    #[test]
    fn white_to_move_is_the_flipped_black_to_move() {
        let w = parse_fen(Variant::English, "W:W18,K30:B5,K12").unwrap();
        let b = parse_fen(Variant::English, "B:W28,K21:B15,K3").unwrap();
        assert_eq!(Dense::of(&w), Dense::of(&b));
        let d = Dense::of(&b);
        assert_eq!(d.to_position(Variant::English).unwrap(), b);
        assert_eq!(d.flipped(32).flipped(32), d);
    }
}
