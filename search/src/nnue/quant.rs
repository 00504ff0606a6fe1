//! The network in integers for the search: the first layer and its
//! accumulators in i16 (scaled by [`ACC_SCALE`]), the second layer's
//! weights in i16 multiplied in pairs into i32 (`vpmaddwd` on AVX2), the
//! last two small layers in f32 as before.  Half the bytes per accumulator
//! and per weight, twice the lanes per instruction.
//!
//! A net whose weights would overflow i16 accumulators stays in f32
//! ([`QuantNet::new`] says so by returning `None`).

use super::{HIDDEN, NnueNet, PieceBits, apply_rows, dot, layer, push_accumulators};
use crate::alphabeta::MAX_PLY;
use crate::eval::Evaluation;
use std::sync::Arc;
use tammi_rules::{Color, Move, Position};

/// One unit of a (clipped) accumulator: 1.0 is 127.
pub const ACC_SCALE: f32 = 127.0;

/// The quantised network (built from an f32 one, which keeps the small layers).
#[derive(Clone, Debug)]
pub struct QuantNet {
    net: Arc<NnueNet>,
    w1: Vec<i16>,
    b1: Vec<i16>,
    /// Second-layer weights by input pair, interleaved for `vpmaddwd`:
    /// `[w(2p, j), w(2p + 1, j)]` for each output `j`.
    w2_pairs: Vec<[i16; 2 * HIDDEN]>,
    /// The i32 sums of the second layer times this are the f32 ones.
    w2_unit: f32,
}

impl QuantNet {
    /// The network in integers, or `None` when it does not fit: an odd
    /// width, or first-layer sums that could leave i16.
    pub fn new(net: Arc<NnueNet>) -> Option<QuantNet> {
        let w = net.width;
        if w % 2 == 1 {
            return None;
        }
        // The largest accumulator any position can reach: the bias plus the
        // largest weights of as many pieces as the board holds.
        let pieces = net.variant.geometry().squares();
        for c in 0..w {
            let mut col: Vec<f32> = (0..net.w1.len() / w)
                .map(|f| net.w1[f * w + c].abs())
                .collect();
            col.sort_by(|a, b| b.total_cmp(a));
            let bound = net.b1[c].abs() + col.iter().take(pieces).sum::<f32>();
            if bound * ACC_SCALE > f32::from(i16::MAX) {
                return None;
            }
        }
        let q = |x: f32| (x * ACC_SCALE).round() as i16;
        let max_w2 = net.w2.iter().fold(0.0f32, |m, x| m.max(x.abs())).max(1e-6);
        // i16 weights, and i32 sums of 2w products of at most 127 x weight.
        let scale = (f32::from(i16::MAX) / max_w2)
            .min(i32::MAX as f32 / (ACC_SCALE * max_w2 * 2.0 * w as f32) * 0.99);
        let w2_pairs = (0..w)
            .map(|p| {
                std::array::from_fn(|k| {
                    let (input, output) = (2 * p + k % 2, k / 2);
                    (net.w2[output * 2 * w + input] * scale).round() as i16
                })
            })
            .collect();
        Some(QuantNet {
            w1: net.w1.iter().map(|&x| q(x)).collect(),
            b1: net.b1.iter().map(|&x| q(x)).collect(),
            w2_pairs,
            w2_unit: 1.0 / (ACC_SCALE * scale),
            net,
        })
    }

    /// The f32 network it was made from.
    pub fn net(&self) -> &NnueNet {
        &self.net
    }

    /// Both perspectives' accumulators of `pos`, from nothing.
    pub fn refresh(&self, pos: &Position, acc: &mut [Vec<i16>; 2]) {
        for a in acc.iter_mut() {
            a.clear();
            a.extend_from_slice(&self.b1);
        }
        apply_rows::<i16, true>(&self.net, &self.w1, acc, PieceBits::of(pos));
    }

    /// The output for the side to move, in hundredths of a man.
    pub fn output(&self, acc: &[Vec<i16>; 2], side: Color) -> i32 {
        let half = self.net.width / 2;
        let mut sums = [0i32; HIDDEN];
        pair_layer(&mut sums, &acc[side.index()], &self.w2_pairs[..half]);
        pair_layer(
            &mut sums,
            &acc[side.opponent().index()],
            &self.w2_pairs[half..],
        );
        let mut l2 = [0.0f32; HIDDEN];
        for ((o, s), b) in l2.iter_mut().zip(sums).zip(&self.net.b2) {
            *o = s as f32 * self.w2_unit + b;
        }
        let mut l3: [f32; HIDDEN] = self.net.b3[..].try_into().expect("HIDDEN biases");
        layer(&mut l3, &l2, &self.net.w3_by_input);
        for x in &mut l3 {
            *x = x.clamp(0.0, 1.0);
        }
        let v = dot(&self.net.w4, &l3) + self.net.b4;
        (v * self.net.scale).clamp(-9_000.0, 9_000.0).round() as i32
    }

    /// The score of a position from nothing.
    pub fn evaluate_full(&self, pos: &Position) -> i32 {
        let mut acc = [Vec::new(), Vec::new()];
        self.refresh(pos, &mut acc);
        self.output(&acc, pos.side_to_move())
    }
}

/// `sums[j] += sum over pairs p of clip(x[2p]) w(2p, j) + clip(x[2p+1]) w(2p+1, j)`,
/// inputs clipped to [0, 127].
#[inline]
fn pair_layer(sums: &mut [i32; HIDDEN], inputs: &[i16], pairs: &[[i16; 2 * HIDDEN]]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        use std::arch::x86_64::*;
        const _: () = assert!(HIDDEN == 32, "four registers of 8 lanes");
        // SAFETY: AVX2 is enabled at compile time (the cfg above); each load
        // is one of the four 32-byte quarters of a 64-element i16 row, each
        // store one of the four 8-lane quarters of `sums`.
        unsafe {
            let s = sums.as_mut_ptr() as *mut __m256i;
            let mut acc = [
                _mm256_loadu_si256(s),
                _mm256_loadu_si256(s.add(1)),
                _mm256_loadu_si256(s.add(2)),
                _mm256_loadu_si256(s.add(3)),
            ];
            for (x, row) in inputs.chunks_exact(2).zip(pairs) {
                let x0 = x[0].clamp(0, 127) as u32;
                let x1 = x[1].clamp(0, 127) as u32;
                let x = _mm256_set1_epi32((x1 << 16 | x0) as i32);
                let r = row.as_ptr() as *const __m256i;
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_add_epi32(*a, _mm256_madd_epi16(x, _mm256_loadu_si256(r.add(k))));
                }
            }
            for (k, a) in acc.iter().enumerate() {
                _mm256_storeu_si256(s.add(k), *a);
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    for (x, row) in inputs.chunks_exact(2).zip(pairs) {
        let (x0, x1) = (i32::from(x[0].clamp(0, 127)), i32::from(x[1].clamp(0, 127)));
        for (j, s) in sums.iter_mut().enumerate() {
            *s += x0 * i32::from(row[2 * j]) + x1 * i32::from(row[2 * j + 1]);
        }
    }
}

/// The quantised network as alpha-beta's evaluation (see [`super::NnueEval`]).
#[derive(Clone, Debug)]
pub struct QuantEval {
    net: Arc<QuantNet>,
    stack: Vec<[Vec<i16>; 2]>,
}

impl QuantEval {
    pub fn new(net: Arc<QuantNet>) -> QuantEval {
        let width = net.net.width;
        QuantEval {
            stack: (0..=MAX_PLY)
                .map(|_| [vec![0; width], vec![0; width]])
                .collect(),
            net,
        }
    }
}

impl Evaluation for QuantEval {
    fn set_root(&mut self, root: &Position) {
        self.net.refresh(root, &mut self.stack[0]);
    }

    fn on_move(&mut self, parent: &Position, _mv: &Move, child: &Position, ply: usize) {
        push_accumulators(
            &self.net.net,
            &self.net.w1,
            &mut self.stack,
            parent,
            child,
            ply,
        );
    }

    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        if ply >= self.stack.len() {
            return self.net.evaluate_full(pos);
        }
        self.net.output(&self.stack[ply], pos.side_to_move())
    }
}
