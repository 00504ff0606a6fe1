//! A learned evaluation for alpha-beta (issue 36, first part): a small
//! network whose wide first layer is kept as an accumulator and updated
//! move by move, in the line of Stockfish's NNUE and GuiNN Checkers.
//!
//! # Inputs
//!
//! Sparse: for each of the two perspectives (each side's view of the board,
//! the second turned by 180 degrees so both see their men move up), one
//! feature per (own or theirs, man or king, playable square): `4 * S`
//! features for a board of `S` playable squares.  A position has one active
//! feature per piece in each perspective.
//!
//! # Layers
//!
//! `accumulator[p] = b1 + sum of W1[f]` over the active features `f` of
//! perspective `p` (`H` wide); then `[acc[side to move], acc[other]]`
//! clipped to `[0, 1]` (`2H`) -> `L2` (32, clipped) -> `L3` (32, clipped)
//! -> one output, the value for the side to move, read as hundredths of a
//! man times [`NnueNet::scale`].
//!
//! The accumulators live on a stack by ply: [`NnueEval`] computes ply 0 in
//! full at [`Evaluation::set_root`], and each [`Evaluation::on_move`] copies
//! the parent's and applies the pieces the move removed and added (a capture
//! removes several, a promotion swaps a man for a king, a huffing removal
//! takes a piece before the move), so a leaf costs the two small layers and
//! no allocation.
//!
//! On disk a network is a model directory of its own kind ([`EvalCard`]).

mod file;
mod quant;

pub use file::{CARD_FILE, EvalCard, KIND, WEIGHTS_FILE};
pub use quant::{ACC_SCALE, QuantEval, QuantNet};

use crate::alphabeta::MAX_PLY;
use crate::eval::Evaluation;
use tammi_rules::{Color, Move, Position, Variant, Wide};

/// Bits of a board's square set ([`Wide`]).
const BITS: usize = Wide::BITS as usize;

/// Width of the two small layers after the accumulator.
pub const HIDDEN: usize = 32;

/// The network's weights, in f32.
#[derive(Clone, Debug, PartialEq)]
pub struct NnueNet {
    variant: Variant,
    /// Playable squares of the variant's board.
    squares: usize,
    /// Accumulator width `H`.
    width: usize,
    /// `4 * squares` rows of `width`: the first layer, by feature.
    w1: Vec<f32>,
    b1: Vec<f32>,
    /// `HIDDEN` rows of `2 * width`.
    w2: Vec<f32>,
    b2: Vec<f32>,
    /// `HIDDEN` rows of `HIDDEN`.
    w3: Vec<f32>,
    b3: Vec<f32>,
    /// `HIDDEN` weights of the output.
    w4: Vec<f32>,
    /// `w2` and `w3` by input (`2 * width` and `HIDDEN` rows of `HIDDEN`):
    /// the layout the forward pass reads, one input's weights to every
    /// output in a row, so a zero input (most are, after the clip) is skipped.
    w2_by_input: Vec<[f32; HIDDEN]>,
    w3_by_input: Vec<[f32; HIDDEN]>,
    /// The first-layer row of a piece, by `(2 * colour + king) * 128 + bit`:
    /// its feature in the black and in the white perspective, times the
    /// width (looked up per piece a move adds or removes).
    rows_of_bit: Vec<[u32; 2]>,
    b4: f32,
    /// Hundredths of a man per unit of output.
    scale: f32,
}

/// Why a network's parts do not make a network.
#[derive(Debug, thiserror::Error)]
#[error("bad search-evaluation network: {0}")]
pub struct NnueError(pub String);

/// The parts of a network, as stored (row-major, see [`NnueNet`]'s fields).
#[derive(Clone, Debug, Default)]
pub struct NnueParts {
    pub w1: Vec<f32>,
    pub b1: Vec<f32>,
    pub w2: Vec<f32>,
    pub b2: Vec<f32>,
    pub w3: Vec<f32>,
    pub b3: Vec<f32>,
    pub w4: Vec<f32>,
    pub b4: f32,
    pub scale: f32,
}

impl NnueNet {
    /// Features of one perspective for a variant: own and their men and kings
    /// on each playable square.
    pub fn features(variant: Variant) -> usize {
        4 * variant.geometry().squares()
    }

    /// A network from its parts, each checked against the variant and width.
    pub fn from_parts(variant: Variant, width: usize, p: NnueParts) -> Result<NnueNet, NnueError> {
        let squares = variant.geometry().squares();
        let features = 4 * squares;
        let want = [
            ("w1", p.w1.len(), features * width),
            ("b1", p.b1.len(), width),
            ("w2", p.w2.len(), HIDDEN * 2 * width),
            ("b2", p.b2.len(), HIDDEN),
            ("w3", p.w3.len(), HIDDEN * HIDDEN),
            ("b3", p.b3.len(), HIDDEN),
            ("w4", p.w4.len(), HIDDEN),
        ];
        if width == 0 {
            return Err(NnueError("accumulator width 0".into()));
        }
        for (name, got, expected) in want {
            if got != expected {
                return Err(NnueError(format!(
                    "{name} holds {got} weights, a width-{width} net for {variant} needs {expected}"
                )));
            }
        }
        let finite = [&p.w1, &p.b1, &p.w2, &p.b2, &p.w3, &p.b3, &p.w4]
            .iter()
            .all(|v| v.iter().all(|x| x.is_finite()));
        if !(finite && p.b4.is_finite() && p.scale.is_finite() && p.scale > 0.0) {
            return Err(NnueError(
                "a weight is not a finite number (or the scale is not above 0)".into(),
            ));
        }
        let by_input = |w: &[f32], inputs: usize| -> Vec<[f32; HIDDEN]> {
            (0..inputs)
                .map(|i| std::array::from_fn(|j| w[j * inputs + i]))
                .collect()
        };
        let w2_by_input = by_input(&p.w2, 2 * width);
        let w3_by_input = by_input(&p.w3, HIDDEN);
        let g = variant.geometry();
        let mut rows_of_bit = vec![[0u32; 2]; 4 * BITS];
        for color in [Color::Black, Color::White] {
            for king in [false, true] {
                for square in 0..squares {
                    let bit = g.bit(tammi_rules::Square(square as u8));
                    let row = |p| (feature_index(squares, p, color, king, square) * width) as u32;
                    rows_of_bit[(2 * color.index() + usize::from(king)) * BITS + bit as usize] =
                        [row(Color::Black), row(Color::White)];
                }
            }
        }
        Ok(NnueNet {
            rows_of_bit,
            variant,
            squares,
            width,
            w2_by_input,
            w3_by_input,
            w1: p.w1,
            b1: p.b1,
            w2: p.w2,
            b2: p.b2,
            w3: p.w3,
            b3: p.b3,
            w4: p.w4,
            b4: p.b4,
            scale: p.scale,
        })
    }

    /// A network with small random weights (tests, and the start of training).
    pub fn random(variant: Variant, width: usize, seed: u64) -> NnueNet {
        let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize, spread: f32| -> Vec<f32> {
            (0..n)
                .map(|_| {
                    // splitmix64: enough for weights, no dependency.
                    state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                    let mut z = state;
                    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                    z ^= z >> 31;
                    ((z >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * spread
                })
                .collect()
        };
        let features = Self::features(variant);
        let parts = NnueParts {
            w1: next(features * width, 0.1),
            b1: next(width, 0.1),
            w2: next(HIDDEN * 2 * width, 1.0 / (2.0 * width as f32).sqrt()),
            b2: next(HIDDEN, 0.1),
            w3: next(HIDDEN * HIDDEN, 1.0 / (HIDDEN as f32).sqrt()),
            b3: next(HIDDEN, 0.1),
            w4: next(HIDDEN, 1.0 / (HIDDEN as f32).sqrt()),
            b4: 0.0,
            scale: 100.0,
        };
        NnueNet::from_parts(variant, width, parts).expect("sizes match by construction")
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The accumulator width `H`.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Hundredths of a man per unit of output.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Both perspectives' accumulators of `pos`, from nothing.
    pub fn refresh(&self, pos: &Position, acc: &mut [Vec<f32>; 2]) {
        for a in acc.iter_mut() {
            a.clear();
            a.extend_from_slice(&self.b1);
        }
        apply_rows::<f32, true>(self, &self.w1, acc, PieceBits::of(pos));
    }

    /// The output for the side to move, from its accumulators: hundredths
    /// of a man.  Each layer adds every clipped input times its row of
    /// weights to all outputs at once ([`layer`]).
    pub fn output(&self, acc: &[Vec<f32>; 2], side: Color) -> i32 {
        let h = self.width;
        let mut l2: [f32; HIDDEN] = self.b2[..].try_into().expect("HIDDEN biases");
        layer(&mut l2, &acc[side.index()], &self.w2_by_input[..h]);
        layer(
            &mut l2,
            &acc[side.opponent().index()],
            &self.w2_by_input[h..],
        );
        let mut l3: [f32; HIDDEN] = self.b3[..].try_into().expect("HIDDEN biases");
        layer(&mut l3, &l2, &self.w3_by_input);
        for x in &mut l3 {
            *x = x.clamp(0.0, 1.0);
        }
        let v = dot(&self.w4, &l3) + self.b4;
        // Well inside the search's table-win bound.
        (v * self.scale).clamp(-9_000.0, 9_000.0).round() as i32
    }

    /// The score of a position from nothing (no accumulator kept): what an
    /// incremental evaluation must equal.
    pub fn evaluate_full(&self, pos: &Position) -> i32 {
        let mut acc = [Vec::new(), Vec::new()];
        self.refresh(pos, &mut acc);
        self.output(&acc, pos.side_to_move())
    }
}

/// Adds (`ADD` true) or removes the first-layer rows (`w1`, f32 or its
/// i16 copy) of the pieces of `bits` to both accumulators.
#[inline]
fn apply_rows<T, const ADD: bool>(
    net: &NnueNet,
    w1: &[T],
    acc: &mut [Vec<T>; 2],
    pos_bits: PieceBits,
) where
    T: Copy + std::ops::AddAssign + std::ops::SubAssign,
{
    let w = net.width;
    for (group, mut bits) in pos_bits.sets.iter().flatten().copied().enumerate() {
        while bits != 0 {
            let bit = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let rows = net.rows_of_bit[group * BITS + bit];
            for (a, &r) in acc.iter_mut().zip(&rows) {
                let row = &w1[r as usize..r as usize + w];
                if ADD {
                    a.iter_mut().zip(row).for_each(|(a, &w)| *a += w);
                } else {
                    a.iter_mut().zip(row).for_each(|(a, &w)| *a -= w);
                }
            }
        }
    }
}

/// Derives the accumulators of ply `ply + 1` from those of `ply` after the
/// move `parent` -> `child`: only the rows of pieces that left or arrived
/// change (a capture removes several, a promotion swaps one). Beyond the
/// stack's depth nothing is kept: evaluation there recomputes in full.
#[inline]
fn push_accumulators<T>(
    net: &NnueNet,
    w1: &[T],
    stack: &mut [[Vec<T>; 2]],
    parent: &Position,
    child: &Position,
    ply: usize,
) where
    T: Copy + std::ops::AddAssign + std::ops::SubAssign,
{
    if ply + 1 >= stack.len() {
        return;
    }
    let (before, after) = stack.split_at_mut(ply + 1);
    let (from, to) = (&before[ply], &mut after[0]);
    for p in 0..2 {
        to[p].copy_from_slice(&from[p]);
    }
    let (old, new) = (PieceBits::of(parent), PieceBits::of(child));
    apply_rows::<T, false>(net, w1, to, old.minus(new));
    apply_rows::<T, true>(net, w1, to, new.minus(old));
}

/// The feature of a piece (`color`, king or not, on playable `square` of a
/// board of `squares`) seen from `perspective`: the second perspective sees
/// the board turned by 180 degrees.
#[inline]
fn feature_index(
    squares: usize,
    perspective: Color,
    color: Color,
    king: bool,
    square: usize,
) -> usize {
    let square = if perspective == Color::Black {
        square
    } else {
        squares - 1 - square
    };
    let kind = 2 * usize::from(color != perspective) + usize::from(king);
    kind * squares + square
}

/// The active features of `pos` seen from `perspective`, one per piece,
/// appended to `out`: what a trainer feeds the first layer (the network
/// sums `W1` over exactly these rows).
pub fn active_features(pos: &Position, perspective: Color, out: &mut Vec<u16>) {
    let g = pos.variant().geometry();
    let squares = g.squares();
    for (color, king, mut bits) in PieceBits::of(pos).groups() {
        while bits != 0 {
            let bit = bits.trailing_zeros();
            bits &= bits - 1;
            let square = g.square(bit).0 as usize;
            out.push(feature_index(squares, perspective, color, king, square) as u16);
        }
    }
}

/// `out += sum over i of clip(inputs[i]) * rows[i]`, clipping to [0, 1]:
/// one dense layer of `HIDDEN` outputs, read input by input.  With AVX2 and
/// FMA (tammi's x86-64 builds target x86-64-v3) the outputs stay in four
/// 8-lane registers for the whole layer; LLVM does not find that on its own
/// (it unrolls the 32 outputs into scalar code).
#[inline]
fn layer(out: &mut [f32; HIDDEN], inputs: &[f32], rows: &[[f32; HIDDEN]]) {
    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    ))]
    {
        use std::arch::x86_64::*;
        const _: () = assert!(HIDDEN == 32, "four registers of 8 lanes");
        // SAFETY: AVX2 and FMA are enabled at compile time (the cfg above);
        // every load and store is one of the four 8-float quarters of a
        // 32-float array (`out` or a row), so none leaves its array.
        unsafe {
            let p = out.as_mut_ptr();
            // Two sets of accumulators, for even and odd inputs: each FMA
            // waits on the one before it in its register, so two independent
            // chains keep the FMA units busy.
            let mut even = [
                _mm256_loadu_ps(p),
                _mm256_loadu_ps(p.add(8)),
                _mm256_loadu_ps(p.add(16)),
                _mm256_loadu_ps(p.add(24)),
            ];
            let mut odd = [_mm256_setzero_ps(); 4];
            let mut pairs = inputs.chunks_exact(2).zip(rows.chunks_exact(2));
            for (x, r) in &mut pairs {
                let (x0, x1) = (
                    _mm256_set1_ps(x[0].clamp(0.0, 1.0)),
                    _mm256_set1_ps(x[1].clamp(0.0, 1.0)),
                );
                let (r0, r1) = (r[0].as_ptr(), r[1].as_ptr());
                for k in 0..4 {
                    even[k] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(r0.add(8 * k)), even[k]);
                    odd[k] = _mm256_fmadd_ps(x1, _mm256_loadu_ps(r1.add(8 * k)), odd[k]);
                }
            }
            if inputs.len() % 2 == 1 && inputs.len() <= rows.len() {
                let i = inputs.len() - 1;
                let x = _mm256_set1_ps(inputs[i].clamp(0.0, 1.0));
                let r = rows[i].as_ptr();
                for (k, a) in even.iter_mut().enumerate() {
                    *a = _mm256_fmadd_ps(x, _mm256_loadu_ps(r.add(8 * k)), *a);
                }
            }
            for k in 0..4 {
                _mm256_storeu_ps(p.add(8 * k), _mm256_add_ps(even[k], odd[k]));
            }
        }
    }
    #[cfg(not(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    )))]
    for (&x, row) in inputs.iter().zip(rows) {
        let x = x.clamp(0.0, 1.0);
        for (o, w) in out.iter_mut().zip(row) {
            *o += x * w;
        }
    }
}

/// A dot product in 16 independent lanes, so that the compiler keeps it in
/// SIMD registers (a plain `sum()` of f32 products must add in order and
/// stays scalar).
#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut acc = [0.0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The pieces of a position by colour and kind, as bitboards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PieceBits {
    /// Men and kings of Black, then of White.
    sets: [[Wide; 2]; 2],
}

impl PieceBits {
    fn of(pos: &Position) -> PieceBits {
        let b = pos.bitboards();
        let split = |c: usize| [b.pieces[c] & !b.kings, b.pieces[c] & b.kings];
        PieceBits {
            sets: [split(0), split(1)],
        }
    }

    /// What is in `self` and not in `other`.
    fn minus(self, other: PieceBits) -> PieceBits {
        let mut out = self;
        for c in 0..2 {
            for k in 0..2 {
                out.sets[c][k] &= !other.sets[c][k];
            }
        }
        out
    }

    fn groups(self) -> impl Iterator<Item = (Color, bool, Wide)> {
        [Color::Black, Color::White].into_iter().flat_map(move |c| {
            [false, true]
                .into_iter()
                .map(move |k| (c, k, self.sets[c.index()][usize::from(k)]))
        })
    }
}

/// The network as alpha-beta's evaluation: accumulators by ply, updated
/// from each move's added and removed pieces.
#[derive(Clone, Debug)]
pub struct NnueEval {
    net: std::sync::Arc<NnueNet>,
    /// Accumulators of both perspectives at each ply, allocated once.
    stack: Vec<[Vec<f32>; 2]>,
}

impl NnueEval {
    pub fn new(net: std::sync::Arc<NnueNet>) -> NnueEval {
        let width = net.width();
        NnueEval {
            stack: (0..=MAX_PLY)
                .map(|_| [vec![0.0; width], vec![0.0; width]])
                .collect(),
            net,
        }
    }

    pub fn net(&self) -> &NnueNet {
        &self.net
    }
}

impl Evaluation for NnueEval {
    fn set_root(&mut self, root: &Position) {
        self.net.refresh(root, &mut self.stack[0]);
    }

    fn on_move(&mut self, parent: &Position, _mv: &Move, child: &Position, ply: usize) {
        push_accumulators(&self.net, &self.net.w1, &mut self.stack, parent, child, ply);
    }

    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        if ply >= self.stack.len() {
            return self.net.evaluate_full(pos);
        }
        self.net.output(&self.stack[ply], pos.side_to_move())
    }
}

/// What `eval=` of an alpha-beta spec names for material only (men 100,
/// kings 150, or 300 where kings fly), the baseline a learned evaluation
/// must beat first.
pub const MATERIAL_EVAL: &str = "material";

/// Which evaluation an alpha-beta player searches with, loaded once and
/// shared by every player of a spec.
#[derive(Clone, Debug, Default)]
pub enum EvalChoice {
    /// The variant's handcrafted evaluation ([`crate::eval::evaluate`]).
    #[default]
    Handcrafted,
    /// Material only ([`crate::eval::material`]).
    Material,
    /// A learned network, in f32.
    Learned(std::sync::Arc<NnueNet>),
    /// A learned network in integers ([`QuantNet`]).
    Quantised(std::sync::Arc<QuantNet>),
}

impl EvalChoice {
    /// A fresh evaluation for one searcher (a learned one gets its own
    /// accumulators; the weights are shared).
    pub fn leaf(&self) -> LeafEval {
        match self {
            EvalChoice::Handcrafted => LeafEval::Handcrafted,
            EvalChoice::Material => LeafEval::Material,
            EvalChoice::Learned(net) => LeafEval::Learned(Box::new(NnueEval::new(net.clone()))),
            EvalChoice::Quantised(net) => {
                LeafEval::Quantised(Box::new(QuantEval::new(net.clone())))
            }
        }
    }
}

/// The evaluation an alpha-beta searcher scores its leaves with.  An enum
/// rather than a trait object, so the handcrafted search pays one
/// predictable branch per call and no indirection.
#[derive(Clone, Debug)]
pub enum LeafEval {
    Handcrafted,
    Material,
    Learned(Box<NnueEval>),
    Quantised(Box<QuantEval>),
}

impl Evaluation for LeafEval {
    #[inline]
    fn set_root(&mut self, root: &Position) {
        match self {
            LeafEval::Learned(e) => e.set_root(root),
            LeafEval::Quantised(e) => e.set_root(root),
            LeafEval::Handcrafted | LeafEval::Material => {}
        }
    }

    #[inline]
    fn on_move(&mut self, parent: &Position, mv: &Move, child: &Position, ply: usize) {
        match self {
            LeafEval::Learned(e) => e.on_move(parent, mv, child, ply),
            LeafEval::Quantised(e) => e.on_move(parent, mv, child, ply),
            LeafEval::Handcrafted | LeafEval::Material => {}
        }
    }

    #[inline]
    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        match self {
            LeafEval::Handcrafted => crate::eval::evaluate(pos),
            LeafEval::Material => crate::eval::material(pos),
            LeafEval::Learned(e) => e.evaluate(pos, ply),
            LeafEval::Quantised(e) => e.evaluate(pos, ply),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tammi_rules::Game;

    #[test]
    fn parts_of_the_wrong_size_or_not_finite_are_refused() {
        let net = NnueNet::random(Variant::English, 8, 1);
        let parts = |f: &dyn Fn(&mut NnueParts)| {
            let mut p = NnueParts {
                w1: net.w1.clone(),
                b1: net.b1.clone(),
                w2: net.w2.clone(),
                b2: net.b2.clone(),
                w3: net.w3.clone(),
                b3: net.b3.clone(),
                w4: net.w4.clone(),
                b4: net.b4,
                scale: net.scale,
            };
            f(&mut p);
            p
        };
        assert_eq!(
            NnueNet::from_parts(Variant::English, 8, parts(&|_| {})).unwrap(),
            net
        );
        let e = NnueNet::from_parts(Variant::International, 8, parts(&|_| {})).unwrap_err();
        assert!(e.to_string().contains("w1"), "{e}");
        let e = NnueNet::from_parts(
            Variant::English,
            8,
            parts(&|p| p.w2.pop().map(drop).unwrap()),
        )
        .unwrap_err();
        assert!(e.to_string().contains("w2"), "{e}");
        let e =
            NnueNet::from_parts(Variant::English, 8, parts(&|p| p.w3[5] = f32::NAN)).unwrap_err();
        assert!(e.to_string().contains("finite"), "{e}");
    }

    #[test]
    fn the_score_is_the_side_to_moves_and_turning_the_board_keeps_it() {
        // The start position seen by either side is the same position.
        let net = NnueNet::random(Variant::English, 16, 7);
        let start = Game::start(Variant::English);
        let black = net.evaluate_full(start.position());
        let flipped = tammi_rules::parse_fen(
            Variant::English,
            &tammi_rules::to_fen(start.position()).replacen('B', "W", 1),
        )
        .unwrap();
        let white = net.evaluate_full(&flipped);
        assert_eq!(black, white, "both sides see the same start");
    }
}
