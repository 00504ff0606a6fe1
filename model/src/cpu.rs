//! tammi's own CPU inference kernels for the policy-value net.
//!
//! burn's `flex` backend runs every layer as separate passes (a convolution
//! by unfolding, then batch norm, then ReLU, each a new tensor), and one
//! forward pass of a small net does not keep two cores busy.  For inference
//! the net is a fixed function, so [`CpuNet`] copies its weights once into a
//! form that a CPU runs well:
//!
//! - batch norm folded into the convolution before it (and the SkipInit
//!   scale of a normalisation-free block into its second convolution);
//! - activations channels-last, one row of channels per square, so a 3x3
//!   convolution is one unfolding copy plus one matrix product
//!   `[positions * squares, 9 * in] x [9 * in, out]` on the `gemm` crate's
//!   AVX2 / AVX-512 kernels, with bias, residual add and ReLU in one pass after it;
//! - the batch split across rayon's threads, each with its own scratch
//!   buffers that are reused from call to call (no allocation per call once warm).
//!
//! The outputs equal burn's forward pass up to float rounding (tested in this
//! module and in `tests/cpu_kernels.rs` on a trained model).

use crate::ModelError;
use crate::net::{ConvBn, MOVES_LEFT_SCALE, PolicyValueNet};
use burn::module::Param;
use burn::nn::Linear;
use burn::prelude::*;
use rayon::prelude::*;
use std::cell::RefCell;

/// Bytes of unfolded convolution input per block of positions: small
/// enough to stay in a core's L2 cache, large enough for efficient products.
const BLOCK_BYTES: usize = 1 << 20;

/// Marks an off-board neighbour in [`CpuNet`]'s neighbour table.
const OFF_BOARD: u32 = u32::MAX;

/// A fully connected layer `y = x W + b`, `W` row-major `[inputs, outputs]`
/// (or the gradients of one).
#[derive(Clone, Debug)]
pub(crate) struct Dense {
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
    pub(crate) weight: Vec<f32>,
    pub(crate) bias: Vec<f32>,
}

/// A square convolution (kernel 1 or 3, "same" padding, stride 1) with its
/// batch norm folded in.  `weight` is row-major `[kernel² * inputs, outputs]`,
/// row `(ky * kernel + kx) * inputs + i`.
#[derive(Clone, Debug)]
struct Conv {
    kernel: usize,
    inputs: usize,
    outputs: usize,
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// One residual block: `relu(b(relu(a(x))) + x)`.
#[derive(Clone, Debug)]
struct Block {
    a: Conv,
    b: Conv,
}

/// The body of the net and the parts of its heads that depend on the body.
/// (One per net, so the variants' size difference costs nothing.)
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
enum Body {
    Resnet {
        stem: Conv,
        blocks: Vec<Block>,
        policy_conv: Conv,
        /// Rows permuted to the channels-last order of `policy_conv`'s output.
        policy_fc: Dense,
        value_conv: Conv,
    },
    Mlp {
        layers: Vec<Dense>,
        policy_fc: Dense,
    },
}

/// An inference-only copy of a [`PolicyValueNet`] that runs on tammi's own
/// CPU kernels (see the module docs).  Plain data: cheap to share between threads.
#[derive(Clone, Debug)]
pub(crate) struct CpuNet {
    planes: usize,
    area: usize,
    policy: usize,
    body: Body,
    /// Rows permuted like `policy_fc` for the ResNet's value features.
    value_fc1: Dense,
    value_fc2: Dense,
    moves_left_fc: Option<Dense>,
    /// Positions per block of [`CpuNet::forward_blocks`].
    block_positions: usize,
    unfold: Unfold3x3,
}

/// How to unfold each square's 3x3 window of a channels-last board into one
/// row of `9 * channels` values (the left operand of a convolution product).
#[derive(Clone, Debug)]
pub(crate) struct Unfold3x3 {
    area: usize,
    /// The runs of square `s` are `runs[run_start[s]..run_start[s + 1]]`.
    runs: Vec<Run>,
    run_start: Vec<usize>,
    /// Whether a square's window reaches off the board (its unfolded row
    /// starts zeroed).
    edge: Vec<bool>,
}

impl Unfold3x3 {
    /// The unfolding of a `board x board` board.
    pub(crate) fn new(board: usize) -> Unfold3x3 {
        let (runs, run_start, edge) = unfold_runs(board);
        Unfold3x3 {
            area: board * board,
            runs,
            run_start,
            edge,
        }
    }

    /// Unfolds `rows` squares (whole positions) of `x`, `channels` values
    /// each, into `out` (`rows * 9 * channels` values).
    pub(crate) fn apply(&self, channels: usize, rows: usize, x: &[f32], out: &mut [f32]) {
        let width = 9 * channels;
        assert!(rows % self.area == 0 && x.len() >= rows * channels && out.len() >= rows * width);
        for (r, dst) in out[..rows * width].chunks_exact_mut(width).enumerate() {
            let sq = r % self.area;
            let base = r - sq;
            if self.edge[sq] {
                dst.fill(0.0);
            }
            for run in &self.runs[self.run_start[sq]..self.run_start[sq + 1]] {
                let (to, from, len) = (
                    run.kernel * channels,
                    (base + run.square) * channels,
                    run.len * channels,
                );
                dst[to..to + len].copy_from_slice(&x[from..from + len]);
            }
        }
    }
}

/// Neighbours that lie side by side on the board are side by side in a
/// channels-last buffer too, so a window row of up to three squares is one copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    /// First kernel position `ky * 3 + kx` filled.
    kernel: usize,
    /// First source square.
    square: usize,
    /// Squares copied.
    len: usize,
}

/// For each square and each of the 9 kernel positions, the neighbouring
/// square or [`OFF_BOARD`]; entry `square * 9 + ky * 3 + kx`.
fn neighbour_table(board: usize) -> Vec<u32> {
    let mut table = Vec::with_capacity(board * board * 9);
    let on = |v: isize| (0..board as isize).contains(&v);
    for sq in 0..board * board {
        let (y, x) = ((sq / board) as isize, (sq % board) as isize);
        for dy in -1..=1 {
            for dx in -1..=1 {
                let (ny, nx) = (y + dy, x + dx);
                table.push(if on(ny) && on(nx) {
                    (ny as usize * board + nx as usize) as u32
                } else {
                    OFF_BOARD
                });
            }
        }
    }
    table
}

/// The copies that unfold each square's 3x3 window (see [`Run`]).
fn unfold_runs(board: usize) -> (Vec<Run>, Vec<usize>, Vec<bool>) {
    let table = neighbour_table(board);
    let (mut runs, mut start, mut edge) = (Vec::<Run>::new(), vec![0], Vec::new());
    for window in table.chunks_exact(9) {
        edge.push(window.contains(&OFF_BOARD));
        let first = runs.len();
        for (k, &nb) in window.iter().enumerate() {
            if nb == OFF_BOARD {
                continue;
            }
            let nb = nb as usize;
            match runs[first..].last_mut() {
                // Same kernel row, next kernel column, next source square.
                Some(r) if k % 3 != 0 && r.kernel + r.len == k && r.square + r.len == nb => {
                    r.len += 1
                }
                _ => runs.push(Run {
                    kernel: k,
                    square: nb,
                    len: 1,
                }),
            }
        }
        start.push(runs.len());
    }
    (runs, start, edge)
}

/// Where a forward pass writes the results of some positions: policy logits
/// (`policy` per position), W/D/L (3 each) and moves left (1 each, or empty
/// when the net has no such head).
struct Outputs<'a> {
    policy: &'a mut [f32],
    wdl: &'a mut [f32],
    moves_left: &'a mut [f32],
}

impl<'a> Outputs<'a> {
    /// The outputs of the first `n` positions, and of the rest.
    fn split(self, n: usize, policy: usize) -> (Outputs<'a>, Outputs<'a>) {
        let (p, p_rest) = self
            .policy
            .split_at_mut((n * policy).min(self.policy.len()));
        let (w, w_rest) = self.wdl.split_at_mut((n * 3).min(self.wdl.len()));
        let (m, m_rest) = self.moves_left.split_at_mut(n.min(self.moves_left.len()));
        let first = Outputs {
            policy: p,
            wdl: w,
            moves_left: m,
        };
        let rest = Outputs {
            policy: p_rest,
            wdl: w_rest,
            moves_left: m_rest,
        };
        (first, rest)
    }
}

/// Per-thread working memory, grown on demand and kept between calls.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    y: Vec<f32>,
    t: Vec<f32>,
    cols: Vec<f32>,
    policy_features: Vec<f32>,
    value_features: Vec<f32>,
    hidden: Vec<f32>,
    wdl_logits: Vec<f32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// `v` resized to `len` (contents unspecified), without shrinking its allocation.
pub(crate) fn sized(v: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if v.len() < len {
        v.resize(len, 0.0);
    }
    &mut v[..len]
}

pub(crate) fn floats<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, ModelError> {
    t.into_data()
        .try_into_vec::<f32>()
        .map_err(|e| ModelError::Backend(format!("reading weights: {e:?}")))
}

pub(crate) fn dense_from(l: &Linear) -> Result<Dense, ModelError> {
    let w = l.weight.val();
    let [inputs, outputs] = w.dims();
    let bias = match &l.bias {
        Some(b) => floats(b.val())?,
        None => vec![0.0; outputs],
    };
    Ok(Dense {
        inputs,
        outputs,
        weight: floats(w)?,
        bias,
    })
}

/// The same layer for inputs whose features come channels-last
/// (`square * channels + c`) instead of burn's channel-major flatten
/// (`c * area + square`).
fn channels_last_rows(d: Dense, channels: usize, area: usize) -> Dense {
    let weight = reorder_rows(&d.weight, d.outputs, channels, area, false);
    Dense { weight, ..d }
}

/// Reorders the rows of a `[channels * area, outputs]` weight between burn's
/// channel-major feature order (`c * area + square`) and the kernels'
/// channels-last order (`square * channels + c`); `to_burn` picks the direction.
pub(crate) fn reorder_rows(
    weight: &[f32],
    outputs: usize,
    channels: usize,
    area: usize,
    to_burn: bool,
) -> Vec<f32> {
    let mut out = vec![0.0; weight.len()];
    for c in 0..channels {
        for sq in 0..area {
            let burn_row = (c * area + sq) * outputs;
            let last_row = (sq * channels + c) * outputs;
            let (from, to) = if to_burn {
                (last_row, burn_row)
            } else {
                (burn_row, last_row)
            };
            out[to..to + outputs].copy_from_slice(&weight[from..from + outputs]);
        }
    }
    out
}

/// A convolution's weight in the kernels' layout, row-major `[k² * inputs,
/// outputs]` with row `(ky * k + kx) * inputs + i`, and its `(k, inputs,
/// outputs)`; only 1x1 and 3x3 kernels.
pub(crate) fn kernel_layout_weight(
    cb: &ConvBn,
) -> Result<(Vec<f32>, usize, usize, usize), ModelError> {
    let w = cb.conv.weight.val();
    let [outputs, inputs, kh, kw] = w.dims();
    if kh != kw || !(kh == 1 || kh == 3) {
        return Err(ModelError::Backend(format!(
            "CPU kernels support 1x1 and 3x3 convolutions, not {kh}x{kw}"
        )));
    }
    let w = floats(w)?;
    let area = kh * kw;
    let mut weight = vec![0.0; w.len()];
    for o in 0..outputs {
        for i in 0..inputs {
            for kk in 0..area {
                weight[(kk * inputs + i) * outputs + o] = w[(o * inputs + i) * area + kk];
            }
        }
    }
    Ok((weight, kh, inputs, outputs))
}

fn conv_from(cb: &ConvBn, branch_scale: Option<&Param<Tensor<1>>>) -> Result<Conv, ModelError> {
    let (mut weight, k, inputs, outputs) = kernel_layout_weight(cb)?;
    let conv_bias = match &cb.conv.bias {
        Some(b) => floats(b.val())?,
        None => vec![0.0; outputs],
    };
    // Batch norm in inference: gamma * (x - mean) / sqrt(var + eps) + beta.
    let (scale, shift) = match &cb.bn {
        Some(bn) => {
            let gamma = floats(bn.gamma.val())?;
            let beta = floats(bn.beta.val())?;
            let mean = floats(bn.running_mean.value())?;
            let var = floats(bn.running_var.value())?;
            let scale: Vec<f32> = (0..outputs)
                .map(|o| gamma[o] / (var[o] + bn.epsilon as f32).sqrt())
                .collect();
            let shift = (0..outputs).map(|o| beta[o] - mean[o] * scale[o]).collect();
            (scale, shift)
        }
        None => (vec![1.0; outputs], vec![0.0; outputs]),
    };
    let s = match branch_scale {
        Some(p) => floats(p.val())?[0],
        None => 1.0,
    };
    for row in weight.chunks_exact_mut(outputs) {
        for (w, sc) in row.iter_mut().zip(&scale) {
            *w *= sc * s;
        }
    }
    let bias = (0..outputs)
        .map(|o| (conv_bias[o] * scale[o] + shift[o]) * s)
        .collect();
    Ok(Conv {
        kernel: k,
        inputs,
        outputs,
        weight,
        bias,
    })
}

/// A read-only matrix: element `(i, j)` is `data[i * row_stride + j * col_stride]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a> {
    pub(crate) data: &'a [f32],
    pub(crate) row_stride: usize,
    pub(crate) col_stride: usize,
}

impl<'a> View<'a> {
    /// A dense row-major matrix of `cols` columns.
    pub(crate) fn rows(data: &'a [f32], cols: usize) -> View<'a> {
        View {
            data,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The transpose of this matrix (no copy).
    pub(crate) fn t(self) -> View<'a> {
        View {
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    fn holds(&self, rows: usize, cols: usize) -> bool {
        rows == 0
            || cols == 0
            || (rows - 1) * self.row_stride + (cols - 1) * self.col_stride < self.data.len()
    }
}

/// `dst[m, n] = lhs[m, k] x rhs[k, n]`, or `dst += ...` with `accumulate`;
/// `dst` is dense row-major.  `parallel` lets gemm split the product across
/// rayon's threads (it never splits the `k` sum, so results do not depend on
/// the thread count).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_views(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    accumulate: bool,
    lhs: View<'_>,
    rhs: View<'_>,
    parallel: bool,
) {
    assert!(dst.len() >= m * n && lhs.holds(m, k) && rhs.holds(k, n));
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst[..m * n].fill(0.0);
        }
        return;
    }
    let parallelism = if parallel && rayon::current_num_threads() > 1 {
        gemm::Parallelism::Rayon(rayon::current_num_threads())
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: the assert above bounds every element the product reads or
    // writes (the largest index of each matrix is inside its slice); `dst`
    // does not alias the inputs (a `&mut` slice beside two `&` slices).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.data.as_ptr(),
            lhs.col_stride as isize,
            lhs.row_stride as isize,
            rhs.data.as_ptr(),
            rhs.col_stride as isize,
            rhs.row_stride as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// `dst[m, n] = lhs[m, k] x rhs[k, n]`, all row-major and dense.
fn matmul(m: usize, k: usize, n: usize, lhs: &[f32], rhs: &[f32], dst: &mut [f32]) {
    let (lhs, rhs) = (View::rows(lhs, k), View::rows(rhs, n));
    gemm_views(m, n, k, dst, false, lhs, rhs, false);
}

/// `out = relu(out + bias)` row by row (`bias` has one entry per column).
fn add_bias_relu(out: &mut [f32], bias: &[f32]) {
    for row in out.chunks_exact_mut(bias.len()) {
        for (o, b) in row.iter_mut().zip(bias) {
            *o = (*o + b).max(0.0);
        }
    }
}

/// `out = out + bias` row by row.
fn add_bias(out: &mut [f32], bias: &[f32]) {
    for row in out.chunks_exact_mut(bias.len()) {
        for (o, b) in row.iter_mut().zip(bias) {
            *o += b;
        }
    }
}

/// `out = relu(out + bias + skip)` row by row.
fn add_bias_skip_relu(out: &mut [f32], bias: &[f32], skip: &[f32]) {
    let n = bias.len();
    for (row, s) in out.chunks_exact_mut(n).zip(skip.chunks_exact(n)) {
        for ((o, b), s) in row.iter_mut().zip(bias).zip(s) {
            *o = (*o + b + s).max(0.0);
        }
    }
}

impl Dense {
    /// `out[rows, outputs] = x[rows, inputs] W` (no bias yet).
    fn apply(&self, rows: usize, x: &[f32], out: &mut [f32]) {
        matmul(rows, self.inputs, self.outputs, x, &self.weight, out);
    }
}

impl CpuNet {
    /// Copies `net`'s weights (batch norm in inference mode) for a board of
    /// `board x board` squares, `planes` input planes and `policy` outputs.
    pub(crate) fn new(
        net: &PolicyValueNet,
        planes: usize,
        board: usize,
        policy: usize,
    ) -> Result<CpuNet, ModelError> {
        let area = board * board;
        let (body, value_fc1) = if let Some(r) = &net.resnet {
            let policy_conv = conv_from(&r.policy_conv, None)?;
            let value_conv = conv_from(&r.value_conv, None)?;
            let policy_fc =
                channels_last_rows(dense_from(&r.policy_fc)?, policy_conv.outputs, area);
            let value_fc1 =
                channels_last_rows(dense_from(&net.value_fc1)?, value_conv.outputs, area);
            let blocks = r
                .blocks
                .iter()
                .map(|b| {
                    Ok(Block {
                        a: conv_from(&b.a, None)?,
                        b: conv_from(&b.b, b.skip_scale.as_ref())?,
                    })
                })
                .collect::<Result<Vec<_>, ModelError>>()?;
            let body = Body::Resnet {
                stem: conv_from(&r.stem, None)?,
                blocks,
                policy_conv,
                policy_fc,
                value_conv,
            };
            (body, value_fc1)
        } else if let Some(m) = &net.mlp {
            let layers = m.layers.iter().map(dense_from).collect::<Result<_, _>>()?;
            let body = Body::Mlp {
                layers,
                policy_fc: dense_from(&m.policy_fc)?,
            };
            (body, dense_from(&net.value_fc1)?)
        } else {
            return Err(ModelError::Backend("the net has no body".into()));
        };
        // The largest per-position working buffer: the unfolded input of the
        // widest 3x3 convolution, or an MLP's widest layer.
        let floats_per_position = match &body {
            Body::Resnet { stem, blocks, .. } => {
                let widest = blocks.iter().map(|b| b.a.inputs.max(b.b.inputs));
                area * 9 * widest.fold(stem.inputs, usize::max)
            }
            Body::Mlp { layers, .. } => {
                let widest = layers.iter().map(|l| l.inputs.max(l.outputs));
                widest.fold(policy, usize::max)
            }
        };
        let bytes_per_position = (floats_per_position * 4).max(1);
        let block_positions = (BLOCK_BYTES / bytes_per_position).clamp(1, 256);
        Ok(CpuNet {
            block_positions,
            planes,
            area,
            policy,
            body,
            value_fc1,
            value_fc2: dense_from(&net.value_fc2)?,
            moves_left_fc: net.moves_left_fc.as_ref().map(dense_from).transpose()?,
            unfold: Unfold3x3::new(board),
        })
    }

    /// Whether the net has a moves-left head.
    pub(crate) fn has_moves_left(&self) -> bool {
        self.moves_left_fc.is_some()
    }

    /// Forward pass over `n` encoded positions (`inputs` = `n * planes *
    /// area` floats, `[n, planes, rows, cols]`), writing policy logits
    /// (`n * policy`), W/D/L probabilities (`n * 3`) and, with the head,
    /// moves left in plies (`n`; untouched otherwise).  The batch is split
    /// across rayon's threads.
    pub(crate) fn forward(
        &self,
        inputs: &[f32],
        policy: &mut [f32],
        wdl: &mut [f32],
        moves_left: &mut [f32],
    ) {
        let in_len = self.planes * self.area;
        let n = inputs.len() / in_len;
        assert!(
            inputs.len() == n * in_len && policy.len() == n * self.policy && wdl.len() == n * 3
        );
        if n == 0 {
            return;
        }
        if self.has_moves_left() {
            assert_eq!(moves_left.len(), n);
        }
        // One share of the batch per thread.
        let per = n.div_ceil(rayon::current_num_threads()).max(1);
        let mut shares = Vec::with_capacity(n.div_ceil(per));
        let mut rest = Outputs {
            policy,
            wdl,
            moves_left,
        };
        for inp in inputs.chunks(per * in_len) {
            let (share, r) = rest.split(inp.len() / in_len, self.policy);
            shares.push((inp, share));
            rest = r;
        }
        let run = |(inp, out): (&[f32], Outputs<'_>)| {
            SCRATCH.with(|s| match s.try_borrow_mut() {
                Ok(mut s) => self.forward_blocks(inp, out, &mut s),
                // Only if a caller nests evaluations on one thread.
                Err(_) => self.forward_blocks(inp, out, &mut Scratch::default()),
            });
        };
        if shares.len() == 1 {
            shares.into_iter().for_each(run);
        } else {
            shares.into_par_iter().for_each(run);
        }
    }

    /// The forward pass of one thread's positions, a few at a time so that
    /// the unfolded convolution input stays in this core's cache.
    fn forward_blocks(&self, inputs: &[f32], out: Outputs<'_>, s: &mut Scratch) {
        let in_len = self.planes * self.area;
        let mut rest = out;
        for inp in inputs.chunks(self.block_positions * in_len) {
            let (block, r) = rest.split(inp.len() / in_len, self.policy);
            self.forward_chunk(inp, block, s);
            rest = r;
        }
    }

    /// The forward pass of a block of positions on this thread.
    fn forward_chunk(&self, inputs: &[f32], out: Outputs<'_>, s: &mut Scratch) {
        let Outputs {
            policy,
            wdl,
            moves_left,
        } = out;
        let in_len = self.planes * self.area;
        let n = inputs.len() / in_len;
        let Scratch {
            x,
            y,
            t,
            cols,
            policy_features,
            value_features,
            hidden,
            wdl_logits,
        } = s;
        let value_in: &[f32] = match &self.body {
            Body::Resnet {
                stem,
                blocks,
                policy_conv,
                policy_fc,
                value_conv,
            } => {
                let rows = n * self.area;
                // Channels-last copy of the input planes.
                let x0 = sized(x, rows * self.planes);
                for (p, planes) in inputs.chunks_exact(in_len).enumerate() {
                    for c in 0..self.planes {
                        for sq in 0..self.area {
                            x0[(p * self.area + sq) * self.planes + c] = planes[c * self.area + sq];
                        }
                    }
                }
                let mut cur = sized(y, rows * stem.outputs);
                self.conv(stem, rows, x0, cols, cur);
                add_bias_relu(cur, &stem.bias);
                let mut other = sized(x, rows * stem.outputs);
                for b in blocks {
                    let mid = sized(t, rows * b.a.outputs);
                    self.conv(&b.a, rows, cur, cols, mid);
                    add_bias_relu(mid, &b.a.bias);
                    self.conv(&b.b, rows, mid, cols, other);
                    add_bias_skip_relu(other, &b.b.bias, cur);
                    std::mem::swap(&mut cur, &mut other);
                }
                let pf = sized(policy_features, rows * policy_conv.outputs);
                self.conv(policy_conv, rows, cur, cols, pf);
                add_bias_relu(pf, &policy_conv.bias);
                policy_fc.apply(n, pf, policy);
                add_bias(policy, &policy_fc.bias);
                let vf = sized(value_features, rows * value_conv.outputs);
                self.conv(value_conv, rows, cur, cols, vf);
                add_bias_relu(vf, &value_conv.bias);
                vf
            }
            Body::Mlp { layers, policy_fc } => {
                let mut width = in_len;
                sized(x, n * width).copy_from_slice(inputs);
                let (mut cur, mut next) = (x, y);
                for l in layers {
                    let out = sized(next, n * l.outputs);
                    l.apply(n, &cur[..n * width], out);
                    add_bias_relu(out, &l.bias);
                    width = l.outputs;
                    std::mem::swap(&mut cur, &mut next);
                }
                let features: &Vec<f32> = cur;
                policy_fc.apply(n, &features[..n * width], policy);
                add_bias(policy, &policy_fc.bias);
                &features[..n * width]
            }
        };
        let h = sized(hidden, n * self.value_fc1.outputs);
        self.value_fc1.apply(n, value_in, h);
        add_bias_relu(h, &self.value_fc1.bias);
        let logits = sized(wdl_logits, n * 3);
        self.value_fc2.apply(n, h, logits);
        add_bias(logits, &self.value_fc2.bias);
        for (l, p) in logits.chunks_exact(3).zip(wdl.chunks_exact_mut(3)) {
            let max = l[0].max(l[1]).max(l[2]);
            let e = [(l[0] - max).exp(), (l[1] - max).exp(), (l[2] - max).exp()];
            let sum = e[0] + e[1] + e[2];
            for k in 0..3 {
                p[k] = e[k] / sum;
            }
        }
        if let Some(fc) = &self.moves_left_fc {
            fc.apply(n, h, moves_left);
            for m in moves_left.iter_mut() {
                *m = ((*m + fc.bias[0]) * MOVES_LEFT_SCALE).max(0.0);
            }
        }
    }

    /// `out = conv(x)` without bias (`rows` squares of `conv.inputs` channels).
    fn conv(&self, conv: &Conv, rows: usize, x: &[f32], cols: &mut Vec<f32>, out: &mut [f32]) {
        let cin = conv.inputs;
        if conv.kernel == 1 {
            matmul(rows, cin, conv.outputs, &x[..rows * cin], &conv.weight, out);
            return;
        }
        let width = 9 * cin;
        let unfolded = sized(cols, rows * width);
        self.unfold.apply(cin, rows, x, unfolded);
        matmul(rows, width, conv.outputs, unfolded, &conv.weight, out);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::net::PolicyValueNetConfig;
    use crate::{NetConfig, NetNorm};
    use burn::module::RunningState;
    use burn::tensor::Distribution;

    /// A net whose batch-norm statistics, affine terms and block scales are
    /// random (a fresh net has mean 0, variance 1, scale 0: too easy a test).
    pub(crate) fn random_net(
        net: &NetConfig,
        board: usize,
        policy: usize,
        device: &Device,
    ) -> PolicyValueNet {
        let mut pv = PolicyValueNetConfig::new(net.clone(), 7, board, policy).init(device);
        let rand = |n: usize, lo: f64, hi: f64| {
            Tensor::<1>::random([n], Distribution::Uniform(lo, hi), device)
        };
        let shake = |cb: &mut ConvBn| {
            if let Some(bn) = &mut cb.bn {
                let n = bn.gamma.val().dims()[0];
                bn.gamma = Param::from_tensor(rand(n, 0.5, 1.5));
                bn.beta = Param::from_tensor(rand(n, -0.5, 0.5));
                bn.running_mean = RunningState::new(rand(n, -0.5, 0.5));
                bn.running_var = RunningState::new(rand(n, 0.5, 2.0));
            }
        };
        if let Some(r) = &mut pv.resnet {
            shake(&mut r.stem);
            shake(&mut r.policy_conv);
            shake(&mut r.value_conv);
            for b in &mut r.blocks {
                shake(&mut b.a);
                shake(&mut b.b);
                if b.skip_scale.is_some() {
                    b.skip_scale = Some(Param::from_tensor(rand(1, 0.3, 0.9)));
                }
            }
        }
        pv
    }

    fn compare(net: &NetConfig, board: usize, policy: usize, batch: usize) {
        let device = Device::flex();
        let pv = random_net(net, board, policy, &device);
        let cpu = CpuNet::new(&pv, 7, board, policy).unwrap();
        let len = 7 * board * board;
        // Sparse 0/1 planes like real encodings, plus a dense scalar plane.
        let inputs: Vec<f32> = (0..batch * len)
            .map(|i| {
                let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59;
                if (i % len) / (board * board) == 6 {
                    0.3
                } else if h < 6 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let x = Tensor::<4>::from_data(
            TensorData::new(inputs.clone(), [batch, 7, board, board]),
            &device,
        );
        let out = pv.forward(x);
        let want_policy = floats(out.policy).unwrap();
        let want_wdl = floats(burn::tensor::activation::softmax(out.wdl, 1)).unwrap();
        let mut policy_out = vec![0.0; batch * policy];
        let mut wdl = vec![0.0; batch * 3];
        let mut ml = vec![0.0; if cpu.has_moves_left() { batch } else { 0 }];
        cpu.forward(&inputs, &mut policy_out, &mut wdl, &mut ml);
        let max_diff = |a: &[f32], b: &[f32]| {
            assert_eq!(a.len(), b.len());
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0f32, f32::max)
        };
        let scale = want_policy
            .iter()
            .fold(0.0f32, |m, x| m.max(x.abs()))
            .max(1.0);
        let dp = max_diff(&policy_out, &want_policy);
        assert!(
            dp <= 1e-4 * scale,
            "{net:?}: policy logits differ by {dp} (scale {scale})"
        );
        let dw = max_diff(&wdl, &want_wdl);
        assert!(dw <= 1e-5, "{net:?}: W/D/L differs by {dw}");
        if let Some(m) = out.moves_left {
            let want: Vec<f32> = floats(m)
                .unwrap()
                .iter()
                .map(|x| (x * MOVES_LEFT_SCALE).max(0.0))
                .collect();
            let dm = max_diff(&ml, &want);
            assert!(dm <= 1e-3, "{net:?}: moves left differs by {dm}");
        }
        // Not trivially equal: the positions get different outputs.  (The
        // policy logits, not W/D/L: a fresh value head is nearly uniform, so
        // its outputs may differ by less than any fixed tolerance.)
        let first = &want_policy[..policy];
        assert!(
            want_policy
                .chunks(policy)
                .any(|p| max_diff(p, first) > 1e-3 * scale)
                || batch == 1,
            "{net:?}: every position gets the same policy"
        );
    }

    #[test]
    fn resnet_with_batch_norm_matches_burn() {
        compare(&NetConfig::resnet(2, 16), 8, 1024, 5);
        compare(&NetConfig::resnet(1, 8), 8, 1024, 1);
    }

    #[test]
    fn resnet_without_norm_and_with_moves_left_matches_burn() {
        let net = NetConfig {
            norm: NetNorm::None,
            moves_left_head: true,
            ..NetConfig::resnet(2, 12)
        };
        compare(&net, 8, 1024, 7);
    }

    #[test]
    fn international_board_and_mlp_match_burn() {
        compare(&NetConfig::resnet(1, 8), 10, 2500, 3);
        compare(&NetConfig::mlp(2, 32), 8, 1024, 9);
        let net = NetConfig {
            moves_left_head: true,
            ..NetConfig::mlp(1, 16)
        };
        compare(&net, 10, 2500, 4);
    }

    #[test]
    fn neighbour_table_and_runs_cover_the_3x3_window() {
        let table = neighbour_table(8);
        // Corner a1 (square 0): only right, up and diagonal neighbours exist.
        let o = OFF_BOARD;
        assert_eq!(table[..9], [o, o, o, o, 0, 1, o, 8, 9]);
        // An inner square sees all nine.
        assert_eq!(table[27 * 9..28 * 9], [18, 19, 20, 26, 27, 28, 34, 35, 36]);
        let (runs, start, edge) = unfold_runs(8);
        // Inner squares: one run per kernel row; corners two runs of two.
        assert_eq!(start[28] - start[27], 3);
        assert_eq!(
            runs[start[0]..start[1]],
            [
                Run {
                    kernel: 4,
                    square: 0,
                    len: 2
                },
                Run {
                    kernel: 7,
                    square: 8,
                    len: 2
                }
            ]
        );
        assert!(edge[0] && !edge[27] && edge[7] && edge[56]);
        // Every on-board neighbour is copied exactly once, to its kernel slot.
        for sq in 0..64 {
            let mut filled = [OFF_BOARD; 9];
            for r in &runs[start[sq]..start[sq + 1]] {
                for i in 0..r.len {
                    assert_eq!(filled[r.kernel + i], OFF_BOARD);
                    filled[r.kernel + i] = (r.square + i) as u32;
                }
            }
            assert_eq!(filled[..], table[sq * 9..sq * 9 + 9], "square {sq}");
        }
    }
}
