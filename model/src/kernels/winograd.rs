//! Winograd F(2x2, 3x3) convolutions for inference on AVX-512 CPUs.
//!
//! A 3x3 convolution computed directly costs 9 multiply-adds per input
//! channel, output channel and square.  Winograd's minimal filtering
//! computes each 2x2 block of outputs from a 4x4 block of inputs with 16
//! products instead of 36: the input tiles and the weights are transformed
//! (`V = Bᵀ d B`, `U = G g Gᵀ`), multiplied element by element over the 16
//! positions of the tile (16 small matrix products over the channels), and
//! transformed back (`Y = Aᵀ M A`).  On the 8x8 (10x10, 12x12) boards the
//! tiles cover the board exactly, so the body's convolutions do 2.25 times
//! fewer multiply-adds; the transforms are a few additions per value.  The
//! result equals the direct convolution up to float rounding (tested
//! against the definition below and against burn in [`super::infer`]).

use super::direct::{Direct, Finish};

/// Positions of a 4x4 tile: the 16 products of the method.
const TILE: usize = 16;

/// The weights of one 3x3 convolution in the transformed domain:
/// `u[(e * inputs + i) * outputs + o]` for tile position `e`.
#[derive(Clone, Debug)]
pub(crate) struct WinogradWeights {
    inputs: usize,
    outputs: usize,
    u: Vec<f32>,
}

impl WinogradWeights {
    /// `U = G g Gᵀ` of every (input, output) kernel of `weight`, row-major
    /// `[9 * inputs, outputs]` with row `(ky * 3 + kx) * inputs + i`.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn new(weight: &[f32], inputs: usize, outputs: usize) -> WinogradWeights {
        assert_eq!(weight.len(), 9 * inputs * outputs);
        const G: [[f64; 3]; 4] = [
            [1.0, 0.0, 0.0],
            [0.5, 0.5, 0.5],
            [0.5, -0.5, 0.5],
            [0.0, 0.0, 1.0],
        ];
        let mut u = vec![0.0; TILE * inputs * outputs];
        for i in 0..inputs {
            for o in 0..outputs {
                let g = |ky: usize, kx: usize| {
                    weight[((ky * 3 + kx) * inputs + i) * outputs + o] as f64
                };
                for a in 0..4 {
                    for b in 0..4 {
                        let mut sum = 0.0;
                        for ky in 0..3 {
                            for kx in 0..3 {
                                sum += G[a][ky] * g(ky, kx) * G[b][kx];
                            }
                        }
                        u[((a * 4 + b) * inputs + i) * outputs + o] = sum as f32;
                    }
                }
            }
        }
        WinogradWeights { inputs, outputs, u }
    }
}

/// Working memory of [`conv3x3`], kept between calls.
#[derive(Default)]
pub(crate) struct WinogradScratch {
    v: Vec<f32>,
    m: Vec<f32>,
}

/// Whether a convolution from `inputs` to `outputs` channels runs here:
/// the residual blocks' shape (as many outputs as inputs) at the widths the
/// kernels are compiled for, so that every offset is a constant.
pub(crate) fn supports(inputs: usize, outputs: usize) -> bool {
    inputs == outputs && matches!(inputs, 16 | 32 | 48 | 64 | 128)
}

/// `out = finish(conv3x3(x) + bias)` over `n` padded positions, like
/// [`Direct::conv3x3`] (same layouts; [`supports`] the channels).
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv3x3(
    direct: &Direct,
    n: usize,
    w: &WinogradWeights,
    bias: &[f32],
    x: &[f32],
    out: &mut [f32],
    finish: Finish<'_>,
    scratch: &mut WinogradScratch,
) {
    let p = direct.padded();
    let c = w.inputs;
    assert!(supports(w.inputs, w.outputs) && bias.len() == c && p.board().is_multiple_of(2));
    assert!(x.len() >= p.len(n, c) && out.len() >= p.len(n, c));
    if let Finish::SkipRelu(skip) = finish {
        assert!(skip.len() >= p.len(n, c));
    }
    let half = p.board() / 2;
    let tiles = half * half;
    let v = super::layers::sized(&mut scratch.v, TILE * tiles * c);
    let m = super::layers::sized(&mut scratch.m, TILE * tiles * c);
    let shape = Shape {
        side: p.side(),
        half,
    };
    let one = p.len(1, c);
    for pos in 0..n {
        let at = pos * one;
        let skip = match finish {
            Finish::Relu => None,
            Finish::SkipRelu(k) => Some(&k[at..at + one]),
        };
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Direct` exists only where AVX-512F was detected; the
        // slices are bounded by the asserts above (one position each, the
        // scratch sized for its tiles) and checked again by the kernels.
        unsafe {
            let (x, out) = (&x[at..at + one], &mut out[at..at + one]);
            match c {
                16 => avx512::tile_pass::<16>(shape, &w.u, bias, x, v, m, skip, out),
                32 => avx512::tile_pass::<32>(shape, &w.u, bias, x, v, m, skip, out),
                48 => avx512::tile_pass::<48>(shape, &w.u, bias, x, v, m, skip, out),
                64 => avx512::tile_pass::<64>(shape, &w.u, bias, x, v, m, skip, out),
                _ => avx512::tile_pass::<128>(shape, &w.u, bias, x, v, m, skip, out),
            }
        }
    }
}

/// The sizes the kernels work with.
#[derive(Clone, Copy)]
struct Shape {
    /// Padded board side.
    side: usize,
    /// Tiles per board row.
    half: usize,
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::needless_range_loop)] // indices into fixed register arrays
mod avx512 {
    use super::{Shape, TILE};
    use std::arch::x86_64::*;

    /// One position: the input transform, the 16 products and the output
    /// transform, `C` channels in and out.  The transformed tiles are kept
    /// tile by tile (`v[(t * 16 + e) * C + i]`, `m` likewise) so that each
    /// tile's 16 values are one block at constant offsets.
    ///
    /// # Safety
    /// AVX-512F; `x`, `skip` and `out` one padded position of `C` channels,
    /// `u` `16 * C * C`, `bias` `C`, `v` and `m` `16 * tiles * C` (asserted).
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn tile_pass<const C: usize>(
        s: Shape,
        u: &[f32],
        bias: &[f32],
        x: &[f32],
        v: &mut [f32],
        m: &mut [f32],
        skip: Option<&[f32]>,
        out: &mut [f32],
    ) {
        let tiles = s.half * s.half;
        let len = s.side * s.side * C;
        assert!(x.len() >= len && out.len() >= len && skip.is_none_or(|k| k.len() >= len));
        assert!(u.len() >= TILE * C * C && bias.len() >= C);
        assert!(v.len() >= TILE * tiles * C && m.len() >= TILE * tiles * C);
        // SAFETY: the asserts above bound every offset below.
        unsafe {
            input_transform::<C>(s, x.as_ptr(), v.as_mut_ptr());
            for e in 0..TILE {
                let (u, v, m) = (
                    u.as_ptr().add(e * C * C),
                    v.as_ptr().add(e * C),
                    m.as_mut_ptr().add(e * C),
                );
                let mut t = 0;
                while t + 8 <= tiles {
                    block::<C, 8>(u, v.add(t * TILE * C), m.add(t * TILE * C));
                    t += 8;
                }
                while t < tiles {
                    block::<C, 1>(u, v.add(t * TILE * C), m.add(t * TILE * C));
                    t += 1;
                }
            }
            output_transform::<C>(
                s,
                m.as_ptr(),
                bias.as_ptr(),
                skip.map(|k| k.as_ptr()),
                out.as_mut_ptr(),
            );
        }
    }

    /// `V = Bᵀ d B` of every tile, 16 channels at a time.
    ///
    /// # Safety
    /// As for [`tile_pass`].
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn input_transform<const C: usize>(s: Shape, x: *const f32, v: *mut f32) {
        for ty in 0..s.half {
            for tx in 0..s.half {
                let t = ty * s.half + tx;
                // SAFETY: rows 2ty..2ty + 4 and columns 2tx..2tx + 4 of the
                // padded board; tile t of v.
                unsafe {
                    let src = x.add((2 * ty * s.side + 2 * tx) * C);
                    let dst = v.add(t * TILE * C);
                    for i in (0..C).step_by(16) {
                        // d B, row by row: columns d0 - d2, d1 + d2, d2 - d1, d1 - d3.
                        let mut r = [[_mm512_setzero_ps(); 4]; 4];
                        for (a, row) in r.iter_mut().enumerate() {
                            let at = |b: usize| _mm512_loadu_ps(src.add((a * s.side + b) * C + i));
                            let (d0, d1, d2, d3) = (at(0), at(1), at(2), at(3));
                            *row = [
                                _mm512_sub_ps(d0, d2),
                                _mm512_add_ps(d1, d2),
                                _mm512_sub_ps(d2, d1),
                                _mm512_sub_ps(d1, d3),
                            ];
                        }
                        // Bᵀ (d B): the same over the rows.
                        for b in 0..4 {
                            let col = [
                                _mm512_sub_ps(r[0][b], r[2][b]),
                                _mm512_add_ps(r[1][b], r[2][b]),
                                _mm512_sub_ps(r[2][b], r[1][b]),
                                _mm512_sub_ps(r[1][b], r[3][b]),
                            ];
                            for (a, value) in col.into_iter().enumerate() {
                                _mm512_storeu_ps(dst.add((a * 4 + b) * C + i), value);
                            }
                        }
                    }
                }
            }
        }
    }

    /// `R` tiles of one tile position: `m[r] = v[r] U`, rows `16 * C` apart,
    /// 32 (or a last 16) output channels in registers at a time.
    ///
    /// # Safety
    /// As for [`tile_pass`]; `v` and `m` point at `R` tiles' entries.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn block<const C: usize, const R: usize>(u: *const f32, v: *const f32, m: *mut f32) {
        let mut o = 0;
        while o < C {
            let two = o + 32 <= C;
            let mut acc = [[_mm512_setzero_ps(); 2]; R];
            // SAFETY: rows 0..R of v (C each, 16 * C apart), columns
            // o..o + 32 (or 16) of u and m.
            unsafe {
                for i in 0..C {
                    let ui = u.add(i * C + o);
                    let w0 = _mm512_loadu_ps(ui);
                    let w1 = if two { _mm512_loadu_ps(ui.add(16)) } else { w0 };
                    for (r, a) in acc.iter_mut().enumerate() {
                        let x = _mm512_set1_ps(*v.add(r * TILE * C + i));
                        a[0] = _mm512_fmadd_ps(x, w0, a[0]);
                        if two {
                            a[1] = _mm512_fmadd_ps(x, w1, a[1]);
                        }
                    }
                }
                for (r, a) in acc.iter().enumerate() {
                    _mm512_storeu_ps(m.add(r * TILE * C + o), a[0]);
                    if two {
                        _mm512_storeu_ps(m.add(r * TILE * C + o + 16), a[1]);
                    }
                }
            }
            o += if two { 32 } else { 16 };
        }
    }

    /// `Y = Aᵀ M A` of every tile, plus bias (and skip), ReLU, into the
    /// interior of `out`.
    ///
    /// # Safety
    /// As for [`tile_pass`].
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn output_transform<const C: usize>(
        s: Shape,
        m: *const f32,
        bias: *const f32,
        skip: Option<*const f32>,
        out: *mut f32,
    ) {
        let zero = _mm512_setzero_ps();
        for ty in 0..s.half {
            for tx in 0..s.half {
                let t = ty * s.half + tx;
                // SAFETY: tile t of m; output squares in the padded board's interior.
                unsafe {
                    let src = m.add(t * TILE * C);
                    let first = ((2 * ty + 1) * s.side + 2 * tx + 1) * C;
                    for o in (0..C).step_by(16) {
                        let mm = |a: usize, b: usize| _mm512_loadu_ps(src.add((a * 4 + b) * C + o));
                        // Aᵀ M: rows m0 + m1 + m2 and m1 - m2 - m3.
                        let mut sr = [[_mm512_setzero_ps(); 4]; 2];
                        for b in 0..4 {
                            let (m0, m1, m2, m3) = (mm(0, b), mm(1, b), mm(2, b), mm(3, b));
                            sr[0][b] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
                            sr[1][b] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
                        }
                        let bv = _mm512_loadu_ps(bias.add(o));
                        for (r, row) in sr.iter().enumerate() {
                            let y = [
                                _mm512_add_ps(_mm512_add_ps(row[0], row[1]), row[2]),
                                _mm512_sub_ps(_mm512_sub_ps(row[1], row[2]), row[3]),
                            ];
                            for (c, value) in y.into_iter().enumerate() {
                                let at = first + (r * s.side + c) * C + o;
                                let mut sum = _mm512_add_ps(value, bv);
                                if let Some(k) = skip {
                                    sum = _mm512_add_ps(sum, _mm512_loadu_ps(k.add(at)));
                                }
                                _mm512_storeu_ps(out.add(at), _mm512_max_ps(sum, zero));
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Winograd's form against the direct kernels (themselves tested
    /// against the definition): every board, a 16-channel remainder, the residual.
    #[test]
    fn winograd_matches_the_direct_convolution() {
        let cases = [
            (8, 32, 32),
            (8, 48, 48),
            (10, 16, 16),
            (10, 64, 64),
            (12, 32, 32),
        ];
        for (board, cin, cout) in cases {
            let Some(d) = Direct::detect(board) else {
                eprintln!("no AVX-512F here: the Winograd kernels are not tested");
                return;
            };
            let p = d.padded();
            let n = 3;
            let val = |i: usize, salt: u64| {
                let h = (i as u64 ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                (h % 2001) as f32 / 1000.0 - 1.0
            };
            let area = board * board;
            let planes: Vec<f32> = (0..n * cin * area).map(|i| val(i, 5)).collect();
            let weight: Vec<f32> = (0..9 * cin * cout).map(|i| val(i, 6) * 0.3).collect();
            let bias: Vec<f32> = (0..cout).map(|i| val(i, 7)).collect();
            let skip_planes: Vec<f32> = (0..n * cout * area).map(|i| val(i, 8)).collect();
            let mut x = vec![0.0; p.len(n, cin)];
            p.pad_planes(&planes, cin, &mut x);
            let mut skip = vec![0.0; p.len(n, cout)];
            p.pad_planes(&skip_planes, cout, &mut skip);
            let w = WinogradWeights::new(&weight, cin, cout);
            let mut scratch = WinogradScratch::default();
            for finish in [Finish::Relu, Finish::SkipRelu(&skip)] {
                let mut want = vec![0.0; p.len(n, cout)];
                d.conv3x3(n, cin, cout, &weight, &bias, &x, &mut want, finish);
                let mut got = vec![0.0; p.len(n, cout)];
                conv3x3(&d, n, &w, &bias, &x, &mut got, finish, &mut scratch);
                let worst = got
                    .iter()
                    .zip(&want)
                    .map(|(g, w)| (g - w).abs() / (1.0 + w.abs()))
                    .fold(0.0f32, f32::max);
                assert!(
                    worst <= 1e-4,
                    "board {board}, {cin}->{cout}: off by {worst}"
                );
                assert!(want.iter().any(|&v| v > 0.5), "a trivial test");
            }
        }
    }
}
