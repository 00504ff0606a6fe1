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

pub use file::{CARD_FILE, EvalCard, KIND, WEIGHTS_FILE};

use crate::alphabeta::MAX_PLY;
use crate::eval::Evaluation;
use tammi_rules::{Color, Move, Position, Variant, Wide};

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
        Ok(NnueNet {
            variant,
            squares,
            width,
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

    #[inline]
    fn feature(&self, perspective: Color, color: Color, king: bool, square: usize) -> usize {
        feature_index(self.squares, perspective, color, king, square)
    }

    /// Adds (`sign` 1) or removes (-1) the pieces of `bits` to both accumulators.
    #[inline]
    fn apply(&self, acc: &mut [Vec<f32>; 2], pos_bits: PieceBits, sign: f32) {
        let g = self.variant.geometry();
        for (color, king, mut bits) in pos_bits.groups() {
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let square = g.square(bit).0 as usize;
                for p in [Color::Black, Color::White] {
                    let f = self.feature(p, color, king, square);
                    let row = &self.w1[f * self.width..(f + 1) * self.width];
                    for (a, w) in acc[p.index()].iter_mut().zip(row) {
                        *a += sign * w;
                    }
                }
            }
        }
    }

    /// Both perspectives' accumulators of `pos`, from nothing.
    pub fn refresh(&self, pos: &Position, acc: &mut [Vec<f32>; 2]) {
        for a in acc.iter_mut() {
            a.clear();
            a.extend_from_slice(&self.b1);
        }
        self.apply(acc, PieceBits::of(pos), 1.0);
    }

    /// The output for the side to move, from its accumulators: hundredths
    /// of a man.
    pub fn output(&self, acc: &[Vec<f32>; 2], side: Color, scratch: &mut Scratch) -> i32 {
        let h = self.width;
        let input = &mut scratch.input;
        for (i, a) in acc[side.index()]
            .iter()
            .chain(acc[side.opponent().index()].iter())
            .enumerate()
        {
            input[i] = a.clamp(0.0, 1.0);
        }
        for (j, out) in scratch.l2.iter_mut().enumerate() {
            let row = &self.w2[j * 2 * h..(j + 1) * 2 * h];
            *out = (dot(row, &input[..2 * h]) + self.b2[j]).clamp(0.0, 1.0);
        }
        for (j, out) in scratch.l3.iter_mut().enumerate() {
            let row = &self.w3[j * HIDDEN..(j + 1) * HIDDEN];
            *out = (dot(row, &scratch.l2) + self.b3[j]).clamp(0.0, 1.0);
        }
        let v = dot(&self.w4, &scratch.l3) + self.b4;
        // Well inside the search's table-win bound.
        (v * self.scale).clamp(-9_000.0, 9_000.0).round() as i32
    }

    /// The score of a position from nothing (no accumulator kept): what an
    /// incremental evaluation must equal.
    pub fn evaluate_full(&self, pos: &Position) -> i32 {
        let mut acc = [Vec::new(), Vec::new()];
        self.refresh(pos, &mut acc);
        self.output(&acc, pos.side_to_move(), &mut Scratch::new(self.width))
    }
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

/// Buffers of the small layers, allocated once per evaluation.
#[derive(Clone, Debug)]
pub struct Scratch {
    input: Vec<f32>,
    l2: [f32; HIDDEN],
    l3: [f32; HIDDEN],
}

impl Scratch {
    pub fn new(width: usize) -> Scratch {
        Scratch {
            input: vec![0.0; 2 * width],
            l2: [0.0; HIDDEN],
            l3: [0.0; HIDDEN],
        }
    }
}

/// The network as alpha-beta's evaluation: accumulators by ply, updated
/// from each move's added and removed pieces.
#[derive(Clone, Debug)]
pub struct NnueEval {
    net: std::sync::Arc<NnueNet>,
    /// Accumulators of both perspectives at each ply, allocated once.
    stack: Vec<[Vec<f32>; 2]>,
    scratch: Scratch,
}

impl NnueEval {
    pub fn new(net: std::sync::Arc<NnueNet>) -> NnueEval {
        let width = net.width();
        NnueEval {
            stack: (0..=MAX_PLY)
                .map(|_| [vec![0.0; width], vec![0.0; width]])
                .collect(),
            scratch: Scratch::new(width),
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
        if ply + 1 >= self.stack.len() {
            return;
        }
        let (before, after) = self.stack.split_at_mut(ply + 1);
        let (from, to) = (&before[ply], &mut after[0]);
        for p in 0..2 {
            to[p].copy_from_slice(&from[p]);
        }
        let (old, new) = (PieceBits::of(parent), PieceBits::of(child));
        self.net.apply(to, old.minus(new), -1.0);
        self.net.apply(to, new.minus(old), 1.0);
    }

    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        if ply >= self.stack.len() {
            return self.net.evaluate_full(pos);
        }
        self.net
            .output(&self.stack[ply], pos.side_to_move(), &mut self.scratch)
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
    /// A learned network.
    Learned(std::sync::Arc<NnueNet>),
}

impl EvalChoice {
    /// A fresh evaluation for one searcher (a learned one gets its own
    /// accumulators; the weights are shared).
    pub fn leaf(&self) -> LeafEval {
        match self {
            EvalChoice::Handcrafted => LeafEval::Handcrafted,
            EvalChoice::Material => LeafEval::Material,
            EvalChoice::Learned(net) => LeafEval::Learned(Box::new(NnueEval::new(net.clone()))),
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
}

impl Evaluation for LeafEval {
    #[inline]
    fn set_root(&mut self, root: &Position) {
        if let LeafEval::Learned(e) = self {
            e.set_root(root);
        }
    }

    #[inline]
    fn on_move(&mut self, parent: &Position, mv: &Move, child: &Position, ply: usize) {
        if let LeafEval::Learned(e) = self {
            e.on_move(parent, mv, child, ply);
        }
    }

    #[inline]
    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        match self {
            LeafEval::Handcrafted => crate::eval::evaluate(pos),
            LeafEval::Material => crate::eval::material(pos),
            LeafEval::Learned(e) => e.evaluate(pos, ply),
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
