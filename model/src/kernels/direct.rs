//! Direct 3x3 convolutions for inference on AVX-512 CPUs.
//!
//! The general path ([`super::layers::Unfold3x3`] then a `gemm` product)
//! copies every input value nine times and hands `gemm` a product only 32
//! columns wide, where its kernels run at about half of the cores' peak.
//! Here the boards are kept channels-last with a border of zero squares
//! ([`Padded`]), so the nine inputs of a window are plain offsets of one
//! pointer, and one output row of the board (8, 10 or 12 squares) times 32
//! output channels is accumulated in registers across all nine taps and
//! input channels before bias, residual and ReLU are applied and it is
//! stored once.  That is the shape of onnxruntime's MLAS direct
//! convolutions; it runs the convolutions of the 4x32 net near the FMA peak.
//!
//! [`Direct`] exists only where the CPU has AVX-512F (checked at run time),
//! so the kernels' `unsafe` target-feature code is reached only there.

/// Channels-last boards with a one-square border of zeros: position `p`,
/// padded square `(y, x)` (both `0..side`, `side = board + 2`), channel `c`
/// at `((p * side + y) * side + x) * channels + c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Padded {
    board: usize,
    side: usize,
}

impl Padded {
    pub(crate) fn new(board: usize) -> Padded {
        Padded {
            board,
            side: board + 2,
        }
    }

    pub(crate) fn board(&self) -> usize {
        self.board
    }

    pub(crate) fn side(&self) -> usize {
        self.side
    }

    /// Floats of `n` positions of `channels` channels.
    pub(crate) fn len(&self, n: usize, channels: usize) -> usize {
        n * self.side * self.side * channels
    }

    /// Zeros the border squares of `n` positions (the kernels write only the
    /// interior, so a buffer reused between calls keeps its border once set,
    /// but scratch buffers are shared with other nets and layouts).
    pub(crate) fn zero_border(&self, buf: &mut [f32], n: usize, channels: usize) {
        let (side, row) = (self.side, self.side * channels);
        for pos in buf[..self.len(n, channels)].chunks_exact_mut(side * row) {
            pos[..row].fill(0.0);
            pos[(side - 1) * row..].fill(0.0);
            for y in 1..side - 1 {
                let r = &mut pos[y * row..(y + 1) * row];
                r[..channels].fill(0.0);
                r[row - channels..].fill(0.0);
            }
        }
    }

    /// `n` positions of `[planes, board, board]` input planes, padded and
    /// channels-last, into `out` (border included).
    pub(crate) fn pad_planes(&self, inputs: &[f32], planes: usize, out: &mut [f32]) {
        let area = self.board * self.board;
        let n = inputs.len() / (planes * area);
        self.zero_border(out, n, planes);
        let pos_len = self.len(1, planes);
        for (p, src) in inputs.chunks_exact(planes * area).enumerate() {
            let dst = &mut out[p * pos_len..(p + 1) * pos_len];
            for sq in 0..area {
                let (y, x) = (sq / self.board + 1, sq % self.board + 1);
                let at = (y * self.side + x) * planes;
                for c in 0..planes {
                    dst[at + c] = src[c * area + sq];
                }
            }
        }
    }

    /// The interior squares of `n` padded positions as `[n * area, channels]` rows.
    pub(crate) fn interior_rows(&self, x: &[f32], n: usize, channels: usize, out: &mut [f32]) {
        let b = self.board;
        let row = b * channels;
        let mut k = 0;
        for p in 0..n {
            for y in 1..=b {
                let from = ((p * self.side + y) * self.side + 1) * channels;
                out[k..k + row].copy_from_slice(&x[from..from + row]);
                k += row;
            }
        }
    }
}

/// What is applied to the sums of a convolution before they are stored.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Finish<'a> {
    /// `relu(sum + bias)`.
    Relu,
    /// `relu(sum + bias + skip)`, `skip` padded like the output.
    SkipRelu(&'a [f32]),
}

/// Proof that this CPU runs the AVX-512 kernels, for boards the kernels
/// know (8x8, 10x10 and 12x12: a row of 12 squares by 32 channels is 24 of
/// the 32 vector registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Direct {
    padded: Padded,
}

impl Direct {
    /// The kernels for a `board x board` board, if this CPU and board allow them.
    pub(crate) fn detect(board: usize) -> Option<Direct> {
        #[cfg(target_arch = "x86_64")]
        if matches!(board, 8 | 10 | 12) && std::arch::is_x86_feature_detected!("avx512f") {
            return Some(Direct {
                padded: Padded::new(board),
            });
        }
        let _ = board;
        None
    }

    pub(crate) fn padded(&self) -> Padded {
        self.padded
    }

    /// Whether a 3x3 convolution to `outputs` channels runs here.
    pub(crate) fn supports(outputs: usize) -> bool {
        outputs > 0 && outputs.is_multiple_of(16)
    }

    /// `out = finish(conv3x3(x) + bias)` over `n` padded positions: `x` has
    /// `inputs` channels, `out` `outputs` ([`Direct::supports`]); `weight` is
    /// row-major `[9 * inputs, outputs]`, row `(ky * 3 + kx) * inputs + i`.
    /// Writes the interior of `out` only.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn conv3x3(
        &self,
        n: usize,
        inputs: usize,
        outputs: usize,
        weight: &[f32],
        bias: &[f32],
        x: &[f32],
        out: &mut [f32],
        finish: Finish<'_>,
    ) {
        let p = self.padded;
        assert!(Direct::supports(outputs) && inputs > 0);
        assert!(weight.len() == 9 * inputs * outputs && bias.len() == outputs);
        assert!(x.len() >= p.len(n, inputs) && out.len() >= p.len(n, outputs));
        if let Finish::SkipRelu(skip) = finish {
            assert!(skip.len() >= p.len(n, outputs));
        }
        #[cfg(target_arch = "x86_64")]
        {
            let shape = avx512::Shape {
                n,
                side: p.side,
                inputs,
                outputs,
            };
            // SAFETY: a `Direct` exists only where AVX-512F was detected, and
            // the asserts above bound every offset the kernels read or write.
            unsafe {
                match p.board {
                    8 => avx512::conv3x3::<8>(shape, weight, bias, x, out, finish),
                    10 => avx512::conv3x3::<10>(shape, weight, bias, x, out, finish),
                    _ => avx512::conv3x3::<12>(shape, weight, bias, x, out, finish),
                }
            }
        }
    }
}

impl Direct {
    /// `out[r, j] = Σ_k x[r, k] w[k, j]` for `rows` rows and `cols` columns
    /// (a multiple of 16), each matrix row-major with its own row stride
    /// (`ldx`, `ldw`, `ldo`), so a caller can work on a band of columns.
    /// The fully connected layers' product: `gemm`'s path for a few rows
    /// reads the weight more slowly than the cores can use it.
    ///
    /// # Safety
    /// `x` must hold `rows` rows of `k` values `ldx` apart, `w` `k` rows of
    /// `cols` values `ldw` apart and `out` `rows` rows of `cols` values
    /// `ldo` apart, and nothing else may access those output values meanwhile.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn dense(
        &self,
        rows: usize,
        k: usize,
        cols: usize,
        x: *const f32,
        ldx: usize,
        w: *const f32,
        ldw: usize,
        out: *mut f32,
        ldo: usize,
    ) {
        debug_assert!(cols.is_multiple_of(16));
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX-512F is there (a `Direct` exists); the caller bounds the buffers.
        unsafe {
            avx512::dense(rows, k, cols, x, ldx, w, ldw, out, ldo)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (rows, k, cols, x, ldx, w, ldw, out, ldo);
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::needless_range_loop)] // indices into fixed register arrays
mod avx512 {
    use super::Finish;
    use std::arch::x86_64::*;

    /// See [`super::Direct::dense`]: 8 rows by 32 columns in registers, or
    /// one row by up to 128 columns (enough independent sums to hide the
    /// multiply-add latency), the weight band reused across the row blocks.
    ///
    /// # Safety
    /// As for [`super::Direct::dense`]; AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn dense(
        rows: usize,
        k: usize,
        cols: usize,
        x: *const f32,
        ldx: usize,
        w: *const f32,
        ldw: usize,
        out: *mut f32,
        ldo: usize,
    ) {
        let mut j = 0;
        // SAFETY (all calls): offsets inside the caller's bounds.
        unsafe {
            while j < cols {
                // Wider bands only for fewer than 8 rows (the 1-row kernel).
                let band = (cols - j).min(if rows >= 8 { 32 } else { 128 });
                let mut r = 0;
                while r + 8 <= rows {
                    match band {
                        32 => dense_block::<8, 2>(
                            k,
                            x.add(r * ldx),
                            ldx,
                            w.add(j),
                            ldw,
                            out.add(r * ldo + j),
                            ldo,
                        ),
                        _ => dense_block::<8, 1>(
                            k,
                            x.add(r * ldx),
                            ldx,
                            w.add(j),
                            ldw,
                            out.add(r * ldo + j),
                            ldo,
                        ),
                    }
                    r += 8;
                }
                while r < rows {
                    let (xr, o) = (x.add(r * ldx), out.add(r * ldo + j));
                    let mut c = 0;
                    while c < band {
                        let wc = w.add(j + c);
                        match band - c {
                            128.. => dense_block::<1, 8>(k, xr, ldx, wc, ldw, o.add(c), ldo),
                            64.. => dense_block::<1, 4>(k, xr, ldx, wc, ldw, o.add(c), ldo),
                            32.. => dense_block::<1, 2>(k, xr, ldx, wc, ldw, o.add(c), ldo),
                            _ => dense_block::<1, 1>(k, xr, ldx, wc, ldw, o.add(c), ldo),
                        }
                        c += match band - c {
                            128.. => 128,
                            64.. => 64,
                            32.. => 32,
                            _ => 16,
                        };
                    }
                    r += 1;
                }
                j += band;
            }
        }
    }

    /// `R` rows by `16 * V` columns of [`dense`].
    ///
    /// # Safety
    /// As for [`dense`].
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn dense_block<const R: usize, const V: usize>(
        k: usize,
        x: *const f32,
        ldx: usize,
        w: *const f32,
        ldw: usize,
        out: *mut f32,
        ldo: usize,
    ) {
        let mut acc = [[_mm512_setzero_ps(); V]; R];
        // SAFETY: rows 0..R of x and out, rows 0..k of w, columns 0..16V.
        unsafe {
            for i in 0..k {
                let wi = w.add(i * ldw);
                let wv: [__m512; V] = std::array::from_fn(|v| _mm512_loadu_ps(wi.add(16 * v)));
                for (r, a) in acc.iter_mut().enumerate() {
                    let xs = _mm512_set1_ps(*x.add(r * ldx + i));
                    for v in 0..V {
                        a[v] = _mm512_fmadd_ps(xs, wv[v], a[v]);
                    }
                }
            }
            for (r, a) in acc.iter().enumerate() {
                for (v, value) in a.iter().enumerate() {
                    _mm512_storeu_ps(out.add(r * ldo + 16 * v), *value);
                }
            }
        }
    }

    #[derive(Clone, Copy)]
    pub(super) struct Shape {
        pub(super) n: usize,
        pub(super) side: usize,
        pub(super) inputs: usize,
        pub(super) outputs: usize,
    }

    /// Every output row of every position, 32 output channels at a time
    /// (then 16 for a remainder).
    ///
    /// # Safety
    /// AVX-512F must be available; the buffers must hold `n` padded
    /// positions of their channels (checked by the caller).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn conv3x3<const B: usize>(
        s: Shape,
        weight: &[f32],
        bias: &[f32],
        x: &[f32],
        out: &mut [f32],
        finish: Finish<'_>,
    ) {
        let skip = match finish {
            Finish::Relu => None,
            Finish::SkipRelu(k) => Some(k.as_ptr()),
        };
        let (x, out, weight, bias) = (x.as_ptr(), out.as_mut_ptr(), weight.as_ptr(), bias.as_ptr());
        for p in 0..s.n {
            for y in 0..B {
                let mut o = 0;
                // SAFETY (both): as for this function.
                while o + 32 <= s.outputs {
                    match s.inputs {
                        32 => unsafe { row::<B, 2, 32>(s, p, y, o, weight, bias, x, out, skip) },
                        _ => unsafe { row::<B, 2, 0>(s, p, y, o, weight, bias, x, out, skip) },
                    }
                    o += 32;
                }
                if o < s.outputs {
                    unsafe { row::<B, 1, 0>(s, p, y, o, weight, bias, x, out, skip) };
                }
            }
        }
    }

    /// Output row `y` of position `p`, channels `o..o + 16 * V`: `B * V`
    /// accumulators in registers over the 9 taps and every input channel.
    /// `C` is the number of input channels when known at compile time (the
    /// common width: every load then has a constant offset), 0 otherwise.
    ///
    /// # Safety
    /// As for [`conv3x3`].
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    #[inline]
    unsafe fn row<const B: usize, const V: usize, const C: usize>(
        s: Shape,
        p: usize,
        y: usize,
        o: usize,
        weight: *const f32,
        bias: *const f32,
        x: *const f32,
        out: *mut f32,
        skip: Option<*const f32>,
    ) {
        let cin = if C == 0 { s.inputs } else { C };
        let (cout, side) = (s.outputs, s.side);
        let mut acc = [[_mm512_setzero_ps(); V]; B];
        // SAFETY (whole body): offsets stay inside position `p`'s padded
        // board (rows y..y + 2 of 0..side, columns 0..B + 1), the weight's
        // 9 * cin rows and the bias, which the caller's asserts bound.
        unsafe {
            let pos_in = x.add(p * side * side * cin);
            for ky in 0..3 {
                for kx in 0..3 {
                    let src = pos_in.add(((y + ky) * side + kx) * cin);
                    let w = weight.add((ky * 3 + kx) * cin * cout + o);
                    for i in 0..cin {
                        let wi = w.add(i * cout);
                        let wv: [__m512; V] =
                            std::array::from_fn(|v| _mm512_loadu_ps(wi.add(16 * v)));
                        for (sq, a) in acc.iter_mut().enumerate() {
                            let xs = _mm512_set1_ps(*src.add(sq * cin + i));
                            for v in 0..V {
                                a[v] = _mm512_fmadd_ps(xs, wv[v], a[v]);
                            }
                        }
                    }
                }
            }
            let zero = _mm512_setzero_ps();
            let first = (p * side + y + 1) * side + 1;
            for (sq, a) in acc.iter().enumerate() {
                let at = (first + sq) * cout + o;
                for v in 0..V {
                    let mut r = _mm512_add_ps(a[v], _mm512_loadu_ps(bias.add(o + 16 * v)));
                    if let Some(k) = skip {
                        r = _mm512_add_ps(r, _mm512_loadu_ps(k.add(at + 16 * v)));
                    }
                    _mm512_storeu_ps(out.add(at + 16 * v), _mm512_max_ps(r, zero));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_round_trips_and_borders_are_zero() {
        let (board, planes, n) = (8, 3, 2);
        let area = board * board;
        let inputs: Vec<f32> = (0..n * planes * area).map(|i| i as f32 + 1.0).collect();
        let p = Padded::new(board);
        let mut padded = vec![7.0; p.len(n, planes)];
        p.pad_planes(&inputs, planes, &mut padded);
        // Sum over the border: zero; over the interior: every input once.
        let total: f32 = padded.iter().sum();
        assert_eq!(total, inputs.iter().sum::<f32>());
        let mut rows = vec![0.0; n * area * planes];
        p.interior_rows(&padded, n, planes, &mut rows);
        for pos in 0..n {
            for sq in 0..area {
                for c in 0..planes {
                    assert_eq!(
                        rows[(pos * area + sq) * planes + c],
                        inputs[(pos * planes + c) * area + sq]
                    );
                }
            }
        }
    }

    /// The kernels against a plain loop over the definition, with the
    /// residual, a 16-channel remainder and every board.
    #[test]
    fn direct_convolution_matches_the_definition() {
        let cases = [
            (8, 7, 32),
            (8, 32, 48),
            (10, 5, 16),
            (10, 16, 64),
            (12, 7, 32),
            (12, 32, 48),
        ];
        for (board, cin, cout) in cases {
            let Some(d) = Direct::detect(board) else {
                eprintln!("no AVX-512F here: the direct kernels are not tested");
                return;
            };
            let p = d.padded();
            let n = 3;
            let area = board * board;
            let val = |i: usize, salt: u64| {
                let h = (i as u64 ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                (h % 2001) as f32 / 1000.0 - 1.0
            };
            let planes: Vec<f32> = (0..n * cin * area).map(|i| val(i, 1)).collect();
            let weight: Vec<f32> = (0..9 * cin * cout).map(|i| val(i, 2)).collect();
            let bias: Vec<f32> = (0..cout).map(|i| val(i, 3)).collect();
            let skip_planes: Vec<f32> = (0..n * cout * area).map(|i| val(i, 4)).collect();
            let mut x = vec![0.0; p.len(n, cin)];
            p.pad_planes(&planes, cin, &mut x);
            let mut skip = vec![0.0; p.len(n, cout)];
            p.pad_planes(&skip_planes, cout, &mut skip);
            for with_skip in [false, true] {
                let mut out = vec![f32::NAN; p.len(n, cout)];
                p.zero_border(&mut out, n, cout);
                let finish = if with_skip {
                    Finish::SkipRelu(&skip)
                } else {
                    Finish::Relu
                };
                d.conv3x3(n, cin, cout, &weight, &bias, &x, &mut out, finish);
                let mut rows = vec![0.0; n * area * cout];
                p.interior_rows(&out, n, cout, &mut rows);
                for pos in 0..n {
                    for sq in 0..area {
                        let (y, xx) = ((sq / board) as isize, (sq % board) as isize);
                        for o in 0..cout {
                            let mut sum = bias[o];
                            for ky in 0..3 {
                                for kx in 0..3 {
                                    let (ny, nx) = (y + ky as isize - 1, xx + kx as isize - 1);
                                    if !(0..board as isize).contains(&ny)
                                        || !(0..board as isize).contains(&nx)
                                    {
                                        continue;
                                    }
                                    let nsq = ny as usize * board + nx as usize;
                                    for i in 0..cin {
                                        sum += planes[(pos * cin + i) * area + nsq]
                                            * weight[((ky * 3 + kx) * cin + i) * cout + o];
                                    }
                                }
                            }
                            if with_skip {
                                sum += skip_planes[(pos * cout + o) * area + sq];
                            }
                            let want = sum.max(0.0);
                            let got = rows[(pos * area + sq) * cout + o];
                            assert!(
                                (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                                "board {board}, {cin}->{cout}, skip {with_skip}: {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
    }
}
