//! The network's input encoding and its move <-> policy-index mapping.
//!
//! Both are a contract shared by self-play, training, evaluation and export, so
//! they are versioned by [`ENCODING_VERSION`]: change either and bump it, and
//! checkpoints made with the old one refuse to load.
//!
//! # Side-to-move perspective
//!
//! Everything is seen from the side to move.  [`Color::Black`] starts at the top
//! of the diagram and moves down; when [`Color::White`] is to move the board is
//! turned half a turn (dense square `s` becomes `N - 1 - s`, `N` dark squares)
//! and the colours are swapped, so the side to move always moves "down" the
//! tensor.  A position and its [`Position::colour_flipped`] mirror therefore
//! encode identically, and their moves map to the same policy indices.
//!
//! # Input planes
//!
//! The input of one position is `[PLANES, n, n]` floats for an `n x n` board
//! (8x8 or 10x10), row-major, row 0 = the top of the perspective board; light
//! squares are always 0.
//!
//! | plane | content |
//! |---|---|
//! | 0 | own men (1.0 where one stands) |
//! | 1 | own kings |
//! | 2 | opponent men |
//! | 3 | opponent kings |
//! | 4 | 1.0 on every dark square (marks the board edge for zero-padded convolutions) |
//! | 5 | no-progress counter: `min(plies, L) / L` on every dark square, `L` = the variant's no-progress limit (100 plies where it has none) |
//! | 6 | repetitions: `min(count, 2) / 2` on every dark square (0 = first occurrence) |
//! | 7 | huffing variants only: the opponent's offending pieces, which the side to move may remove |
//!
//! # Policy layout
//!
//! `index = from * S + to`, with `from` and `to` the move's origin and final
//! square as dense perspective indices and `S` the number of dark squares, so
//! the policy has `S * S` entries: 1024 on 8x8, 2500 on 10x10.
//!
//! Under huffing capturing is optional, so a flying king's simple move and
//! its capture may share origin and destination: captures there take a second
//! block, `S * S + from * S + to`, and the policy has `2 * S * S` entries.  A
//! removal maps to `s * S + s` for the removed piece's square `s`: it holds an
//! opponent's piece, so no move of the side to move has that index there.
//!
//! Simple moves and single captures never share an index (one move per origin and destination).
//! Multi-captures with the same origin and destination but another path or
//! another captured set do; they are merged deterministically: the index's
//! probability is shared equally among the legal moves that map to it (see
//! [`crate::Evaluator`]), and a training target for the index is the sum of the
//! targets of those moves.  A king's capture may end on its own origin square
//! (`from == to`); that index exists too.

use crate::ModelError;
use tammi_rules::{Color, Geometry, Move, Position, Square, Variant};

/// Version of the input encoding and policy layout described in this module.
pub const ENCODING_VERSION: u32 = 1;

/// Number of input planes per position (one more, [`HUFFING_PLANE`], in
/// variants with huffing).
pub const PLANES: usize = 7;

/// The plane of the offending pieces in variants with huffing.
pub const HUFFING_PLANE: usize = 7;

/// No-progress limit used to scale plane 5 for variants without such a rule.
const DEFAULT_NO_PROGRESS_SCALE: u16 = 100;

/// Encoder for one variant: input shape and the policy size.
///
/// Cheap to copy; holds no buffers.  [`Encoding::encode_into`] writes into the
/// caller's buffer, so encoding a batch allocates nothing per position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoding {
    variant: Variant,
    geometry: Geometry,
    no_progress_scale: u16,
}

impl Encoding {
    /// The encoding of a variant's positions.
    pub fn new(variant: Variant) -> Encoding {
        let scale = variant
            .rules()
            .no_progress_plies
            .filter(|&l| l > 0)
            .unwrap_or(DEFAULT_NO_PROGRESS_SCALE);
        Encoding {
            variant,
            geometry: variant.geometry(),
            no_progress_scale: scale,
        }
    }

    /// The variant encoded.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The `L` of plane 5: the no-progress counter is divided by it.
    pub fn no_progress_scale(&self) -> u16 {
        self.no_progress_scale
    }

    /// Number of input planes: [`PLANES`], plus one under huffing.
    pub fn planes(&self) -> usize {
        PLANES + self.variant.huffing() as usize
    }

    /// Rows of each plane (the board's side length).
    pub fn rows(&self) -> usize {
        self.geometry.size as usize
    }

    /// Columns of each plane (the board's side length).
    pub fn cols(&self) -> usize {
        self.geometry.size as usize
    }

    /// Floats per position: `planes * rows * cols`.
    pub fn input_len(&self) -> usize {
        self.planes() * self.rows() * self.cols()
    }

    /// Number of policy entries: `S * S` for `S` dark squares (twice that under huffing).
    pub fn policy_size(&self) -> usize {
        policy_size(self.variant)
    }

    /// Writes the input planes of a position into `out` (exactly
    /// [`Encoding::input_len`] floats; every entry is overwritten).
    ///
    /// `no_progress` is the game's plies since the last man move or capture,
    /// `repetitions` how often the position occurred before (0 = first time),
    /// as [`tammi_rules::Game::no_progress_plies`] and
    /// [`tammi_rules::Game::repetition_count`] give them.
    pub fn encode_into(
        &self,
        pos: &Position,
        no_progress: u16,
        repetitions: u32,
        out: &mut [f32],
    ) -> Result<(), ModelError> {
        if pos.variant() != self.variant {
            return Err(ModelError::VariantMismatch {
                expected: self.variant,
                found: pos.variant(),
            });
        }
        if out.len() != self.input_len() {
            return Err(ModelError::BadInput(format!(
                "encode buffer has {} floats, the encoding needs {}",
                out.len(),
                self.input_len()
            )));
        }
        out.fill(0.0);
        let n = self.rows();
        let area = n * n;
        let me = pos.side_to_move();
        let them = me.opponent();
        let g = self.geometry;
        let mut put = |plane: usize, sq: Square| {
            let (r, c) = g.row_col(Square(perspective(g, me, sq) as u8));
            out[plane * area + r as usize * n + c as usize] = 1.0;
        };
        pos.men(me).for_each(|s| put(0, s));
        pos.kings(me).for_each(|s| put(1, s));
        pos.men(them).for_each(|s| put(2, s));
        pos.kings(them).for_each(|s| put(3, s));
        pos.offending().for_each(|s| put(HUFFING_PLANE, s));
        let np =
            f32::from(no_progress.min(self.no_progress_scale)) / f32::from(self.no_progress_scale);
        let rep = repetitions.min(2) as f32 / 2.0;
        for s in 0..g.squares() {
            let (r, c) = g.row_col(Square(s as u8));
            let at = r as usize * n + c as usize;
            out[4 * area + at] = 1.0;
            out[5 * area + at] = np;
            out[6 * area + at] = rep;
        }
        Ok(())
    }

    /// The policy index of a move of `pos` (see the module docs for the layout).
    ///
    /// The move is assumed to belong to `pos`; any move of the same board size
    /// gives an index below [`Encoding::policy_size`].
    pub fn policy_index(&self, pos: &Position, mv: &Move) -> usize {
        policy_index(pos, mv)
    }
}

/// Dense square index seen from `side`: unchanged for black, turned half a turn for white.
#[inline]
pub fn perspective(g: Geometry, side: Color, sq: Square) -> usize {
    match side {
        Color::Black => sq.0 as usize,
        Color::White => g.squares() - 1 - sq.0 as usize,
    }
}

/// Number of policy entries of a variant (1024 on 8x8, 2500 on 10x10;
/// doubled under huffing, where captures have a block of their own).
pub fn policy_size(variant: Variant) -> usize {
    let s = variant.geometry().squares();
    s * s * (1 + variant.huffing() as usize)
}

/// Where each policy index reads its logit in a convolutional policy head
/// (`[model] policy_head = "conv"`): one output plane per move offset,
/// read at the move's origin square.
///
/// The offsets are every `(rows, columns)` step from one playable square to
/// another of the board, in a fixed order (rows first, both ascending), so
/// the map is a pure function of the variant.  Policy index `from * S + to`
/// reads plane `offset(to - from)` at the origin's cell; under huffing the
/// capture block has planes of its own after the first block's.  Two
/// indices never read the same place: the head is a reparametrisation of the
/// same policy layout, with one small set of weights shared by every origin.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PolicyPlanes {
    /// Output planes of the head's last convolution.
    pub planes: usize,
    /// Cells of each plane (`n * n`, light squares included).
    pub area: usize,
    /// For each policy index: the origin's cell (`row * n + col`) and the plane.
    pub entries: Vec<(u32, u32)>,
}

impl PolicyPlanes {
    /// The map of a variant's policy layout.
    pub fn new(variant: Variant) -> PolicyPlanes {
        let g = variant.geometry();
        let n = g.size as i32;
        let s = g.squares();
        let cell = |sq: usize| {
            let (r, c) = g.row_col(Square(sq as u8));
            (r as i32, c as i32)
        };
        let cells: Vec<(i32, i32)> = (0..s).map(cell).collect();
        let mut offsets: Vec<(i32, i32)> = cells
            .iter()
            .flat_map(|&(fr, fc)| cells.iter().map(move |&(tr, tc)| (tr - fr, tc - fc)))
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        let span = (2 * n - 1) as usize;
        let mut plane_of = vec![u32::MAX; span * span];
        let key = |(dr, dc): (i32, i32)| (dr + n - 1) as usize * span + (dc + n - 1) as usize;
        for (p, &o) in offsets.iter().enumerate() {
            plane_of[key(o)] = p as u32;
        }
        let per_block = offsets.len();
        let blocks = 1 + variant.huffing() as usize;
        let mut entries = Vec::with_capacity(blocks * s * s);
        for block in 0..blocks {
            for &(fr, fc) in &cells {
                let origin = (fr * n + fc) as u32;
                for &(tr, tc) in &cells {
                    let plane = plane_of[key((tr - fr, tc - fc))] as usize + block * per_block;
                    entries.push((origin, plane as u32));
                }
            }
        }
        PolicyPlanes {
            planes: per_block * blocks,
            area: (n * n) as usize,
            entries,
        }
    }

    /// For each policy index, its place in the head's output laid out
    /// `[planes, n, n]` (burn's and ONNX's channels-first order).
    pub fn channels_first(&self) -> Vec<u32> {
        let area = self.area as u32;
        self.entries.iter().map(|&(c, p)| p * area + c).collect()
    }

    /// For each policy index, its place in the head's output laid out
    /// `[n, n, planes]` (the CPU kernels' channels-last order).
    pub fn channels_last(&self) -> Vec<u32> {
        let planes = self.planes as u32;
        self.entries.iter().map(|&(c, p)| c * planes + p).collect()
    }
}

/// The policy index of a move of `pos`: `from * S + to` in perspective
/// squares, plus `S * S` for a capture under huffing.
#[inline]
pub fn policy_index(pos: &Position, mv: &Move) -> usize {
    let g = pos.geometry();
    let side = pos.side_to_move();
    let s = g.squares();
    let block = if mv.is_capture() && pos.variant().huffing() {
        s * s
    } else {
        0
    };
    block + perspective(g, side, mv.from()) * s + perspective(g, side, mv.to())
}

/// The policy indices of `moves` (legal moves of `pos`, in order), written into
/// `out` (cleared first), plus how many of the moves share each one's index.
///
/// `shares[i]` is the number of moves in `moves` with the same index as
/// `moves[i]` (1 when it has its own).  The evaluator divides an index's
/// probability by it; a trainer sums the targets of moves sharing an index.
pub fn policy_indices(pos: &Position, moves: &[Move], out: &mut Vec<u32>, shares: &mut Vec<u32>) {
    out.clear();
    shares.clear();
    out.extend(moves.iter().map(|m| policy_index(pos, m) as u32));
    // Move lists are short (rarely above 40), so a quadratic count is cheapest.
    shares.extend(
        out.iter()
            .map(|&i| out.iter().filter(|&&j| j == i).count() as u32),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use tammi_rules::parse_fen;

    #[test]
    fn start_position_planes_count_pieces() {
        for v in Variant::ALL {
            let enc = Encoding::new(v);
            let pos = Position::start(v);
            let mut buf = vec![f32::NAN; enc.input_len()];
            enc.encode_into(&pos, 0, 0, &mut buf).unwrap();
            let area = enc.rows() * enc.cols();
            let sum = |p: usize| buf[p * area..(p + 1) * area].iter().sum::<f32>();
            let (men, _) = pos.count(pos.side_to_move());
            assert_eq!(sum(0) as u32, men, "{v}");
            assert_eq!(sum(1), 0.0);
            assert_eq!(sum(2) as u32, pos.count(pos.side_to_move().opponent()).0);
            assert_eq!(sum(4) as usize, v.geometry().squares());
            assert!(buf.iter().all(|x| x.is_finite()));
        }
    }

    #[test]
    fn own_men_sit_at_the_top_of_the_perspective_board() {
        // Whoever is to move, their men start in the top half after the
        // flip (Konane starts on a full board: no half is anyone's; corner
        // checkers' men fill diagonals that reach into the far half).
        let halves = |v: &Variant| !matches!(v, Variant::Konane | Variant::Corner);
        for v in Variant::ALL.into_iter().filter(halves) {
            let enc = Encoding::new(v);
            let pos = Position::start(v);
            let mut buf = vec![0.0; enc.input_len()];
            enc.encode_into(&pos, 0, 0, &mut buf).unwrap();
            let n = enc.cols();
            let top_half_own: f32 = buf[0..n * n.div_ceil(2)].iter().sum();
            let (men, _) = pos.count(pos.side_to_move());
            assert_eq!(top_half_own as u32, men, "{v}");
        }
    }

    #[test]
    fn counters_are_scaled_and_clamped() {
        let v = Variant::English;
        let enc = Encoding::new(v);
        let pos = parse_fen(v, "B:W21,22,K30:B1,2,K5").unwrap();
        let mut buf = vec![0.0; enc.input_len()];
        let area = 64;
        let dark = Geometry::EIGHT.row_col(Square(0));
        let at = dark.0 as usize * 8 + dark.1 as usize;
        enc.encode_into(&pos, 1000, 9, &mut buf).unwrap();
        assert_eq!(buf[5 * area + at], 1.0);
        assert_eq!(buf[6 * area + at], 1.0);
        enc.encode_into(&pos, 0, 1, &mut buf).unwrap();
        assert_eq!(buf[5 * area + at], 0.0);
        assert_eq!(buf[6 * area + at], 0.5);
        // Light squares stay empty.
        assert_eq!(buf[4 * area], 0.0);
    }

    #[test]
    fn wrong_buffer_or_variant_is_an_error() {
        let enc = Encoding::new(Variant::English);
        let mut short = vec![0.0; 10];
        assert!(matches!(
            enc.encode_into(&Position::start(Variant::English), 0, 0, &mut short),
            Err(ModelError::BadInput(_))
        ));
        let mut buf = vec![0.0; enc.input_len()];
        assert!(matches!(
            enc.encode_into(&Position::start(Variant::International), 0, 0, &mut buf),
            Err(ModelError::VariantMismatch { .. })
        ));
    }

    #[test]
    fn policy_planes_are_a_one_to_one_map_of_the_policy() {
        for v in Variant::ALL {
            let map = PolicyPlanes::new(v);
            assert_eq!(map.entries.len(), policy_size(v), "{v}");
            let mut seen = map.channels_last();
            assert!(seen.iter().all(|&i| (i as usize) < map.planes * map.area));
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), policy_size(v), "{v}: two indices share a place");
        }
        // 8x8 dark squares: the 113 steps (dr, dc) with dr + dc even and
        // |dr|, |dc| <= 7, less (7, -7) and (-7, 7), which would join the
        // two corners of the light long diagonal.
        assert_eq!(PolicyPlanes::new(Variant::English).planes, 111);
        // Huffing doubles the planes for the capture block.
        assert_eq!(
            PolicyPlanes::new(Variant::FinnishHuffing).planes,
            2 * PolicyPlanes::new(Variant::Finnish).planes
        );
    }

    #[test]
    fn moves_with_the_same_step_read_the_same_plane() {
        // English, Black to move: 9-13 and 10-14 are both one step down-left
        // (or both down-right), from different origins.
        let v = Variant::English;
        let pos = Position::start(v);
        let map = PolicyPlanes::new(v);
        let moves = pos.legal_moves();
        let plane = |m: &Move| map.entries[policy_index(&pos, m)].1;
        let cell = |m: &Move| map.entries[policy_index(&pos, m)].0;
        let g = v.geometry();
        for a in moves.iter() {
            for b in moves.iter() {
                let step = |m: &Move| {
                    let (fr, fc) =
                        g.row_col(Square(perspective(g, pos.side_to_move(), m.from()) as u8));
                    let (tr, tc) =
                        g.row_col(Square(perspective(g, pos.side_to_move(), m.to()) as u8));
                    (tr as i32 - fr as i32, tc as i32 - fc as i32)
                };
                assert_eq!(step(a) == step(b), plane(a) == plane(b), "{a:?} {b:?}");
                assert_eq!(a.from() == b.from(), cell(a) == cell(b));
            }
        }
    }

    #[test]
    fn policy_sizes() {
        assert_eq!(policy_size(Variant::English), 1024);
        assert_eq!(policy_size(Variant::International), 2500);
        assert_eq!(Encoding::new(Variant::Russian).policy_size(), 1024);
    }
}
