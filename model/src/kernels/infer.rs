//! tammi's own CPU inference kernels for the policy-value net.
//!
//! burn's `flex` backend runs every layer as separate passes (a convolution
//! by unfolding, then batch norm, then ReLU, each a new tensor), and one
//! forward pass of a small net does not keep two cores busy.  For inference
//! the net is a fixed function, so [`CpuNet`] turns the net's plan
//! ([`super::plan::NetPlan`]) once into a form that a CPU runs well:
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

use super::direct::{Direct, Finish};
use super::layers::{
    Dense, Unfold3x3, add_bias, add_bias_relu, add_bias_skip_relu, matmul, run_shares, sized,
};
use super::plan::{Body as PlanBody, ConvLayer, NetPlan, PolicyHeadPlan};
use super::winograd::{self, WinogradScratch, WinogradWeights};
use crate::net::MOVES_LEFT_SCALE;
use rayon::prelude::*;
use std::cell::RefCell;

/// Bytes of unfolded convolution input per block of positions: small
/// enough to stay in a core's L2 cache, large enough for efficient products.
const BLOCK_BYTES: usize = 1 << 20;

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

impl Conv {
    /// `layer` with its batch norm (inference statistics) and a residual
    /// branch scale `scale` folded into its weight and bias.
    fn folded(layer: &ConvLayer, scale: f32) -> Conv {
        let outputs = layer.outputs;
        // Batch norm in inference: gamma * (x - mean) / sqrt(var + eps) + beta.
        let (factor, shift): (Vec<f32>, Vec<f32>) = match &layer.norm {
            Some(n) => {
                let factor: Vec<f32> = (0..outputs)
                    .map(|o| n.gamma[o] / (n.running_var[o] + n.epsilon).sqrt())
                    .collect();
                let shift = (0..outputs)
                    .map(|o| n.beta[o] - n.running_mean[o] * factor[o])
                    .collect();
                (factor, shift)
            }
            None => (vec![1.0; outputs], vec![0.0; outputs]),
        };
        let mut weight = layer.weight.clone();
        for row in weight.chunks_exact_mut(outputs) {
            for (w, f) in row.iter_mut().zip(&factor) {
                *w *= f * scale;
            }
        }
        let conv_bias = |o: usize| layer.bias.as_ref().map_or(0.0, |b| b[o]);
        let bias = (0..outputs)
            .map(|o| (conv_bias(o) * factor[o] + shift[o]) * scale)
            .collect();
        Conv {
            kernel: layer.kernel,
            inputs: layer.inputs,
            outputs,
            weight,
            bias,
        }
    }
}

/// A convolutional policy head's last layer, computed only where a policy
/// index reads it: each logit is the bias of its plane plus the dot product
/// of the origin square's features with the plane's weights (a few
/// multiply-adds per index instead of the whole `[squares, planes]` output).
#[derive(Clone, Debug)]
struct GatheredPolicy {
    /// Features per square (the policy convolution's channels).
    channels: usize,
    /// `[planes, channels]`: each plane's weights, contiguous.
    weight: Vec<f32>,
    bias: Vec<f32>,
    /// For each policy index: offset of its square's features in a
    /// position's channels-last features, and of its plane's weights.
    reads: Vec<(u32, u32)>,
}

impl GatheredPolicy {
    fn new(out: &ConvLayer, gather: &[u32]) -> GatheredPolicy {
        let (channels, planes) = (out.inputs, out.outputs);
        let mut weight = vec![0.0; planes * channels];
        for i in 0..channels {
            for p in 0..planes {
                weight[p * channels + i] = out.weight[i * planes + p];
            }
        }
        let reads = gather
            .iter()
            .map(|&g| {
                let (cell, plane) = (g as usize / planes, g as usize % planes);
                ((cell * channels) as u32, (plane * channels) as u32)
            })
            .collect();
        GatheredPolicy {
            channels,
            weight,
            bias: out.bias.clone().unwrap_or_else(|| vec![0.0; planes]),
            reads,
        }
    }

    /// Logits of `n` positions (`policy` is `n * reads.len()`) from their
    /// features (`n * area * channels`, channels-last).
    fn apply(&self, n: usize, features: &[f32], policy: &mut [f32]) {
        let per_position = features.len() / n.max(1);
        let c = self.channels;
        policy
            .par_chunks_mut(self.reads.len())
            .zip(features.par_chunks(per_position))
            .for_each(|(logits, f)| {
                for (l, &(at, w)) in logits.iter_mut().zip(&self.reads) {
                    let (at, w) = (at as usize, w as usize);
                    let x = &f[at..at + c];
                    let wt = &self.weight[w..w + c];
                    let dot: f32 = x.iter().zip(wt).map(|(a, b)| a * b).sum();
                    *l = dot + self.bias[w / c];
                }
            });
    }
}

/// The last layer of the policy head.
#[derive(Clone, Debug)]
enum PolicyOut {
    /// Rows permuted to the channels-last order of the features.
    Dense(Dense),
    Gathered(GatheredPolicy),
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
        policy_out: PolicyOut,
        value_conv: Conv,
    },
    Mlp {
        layers: Vec<Dense>,
        policy_fc: Dense,
    },
}

/// An inference-only copy of a policy-value net that runs on tammi's own
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
    /// The AVX-512 direct convolutions, where the CPU and the net allow them
    /// (the body's 3x3 convolutions; the heads stay on `gemm`).
    direct: Option<Direct>,
    /// The residual blocks' convolutions in Winograd's form, for the direct
    /// path (`a` then `b` of each block; empty when it is not taken).
    winograd: Vec<[WinogradWeights; 2]>,
}

/// Where a forward pass writes the results of some positions: the inputs
/// of the policy layer (`features` per position; the layer runs once over
/// the whole batch, [`Dense::apply_by_columns`]), W/D/L (3 each) and moves
/// left (1 each, or empty when the net has no such head).
struct Outputs<'a> {
    features: &'a mut [f32],
    wdl: &'a mut [f32],
    moves_left: &'a mut [f32],
}

impl<'a> Outputs<'a> {
    /// The outputs of the first `n` positions, and of the rest.
    fn split(self, n: usize, features: usize) -> (Outputs<'a>, Outputs<'a>) {
        let (p, p_rest) = self
            .features
            .split_at_mut((n * features).min(self.features.len()));
        let (w, w_rest) = self.wdl.split_at_mut((n * 3).min(self.wdl.len()));
        let (m, m_rest) = self.moves_left.split_at_mut(n.min(self.moves_left.len()));
        let first = Outputs {
            features: p,
            wdl: w,
            moves_left: m,
        };
        let rest = Outputs {
            features: p_rest,
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
    value_features: Vec<f32>,
    hidden: Vec<f32>,
    wdl_logits: Vec<f32>,
    /// Padded boards of the direct convolutions.
    padded_input: Vec<f32>,
    padded: [Vec<f32>; 3],
    winograd: WinogradScratch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
    /// The policy layer's inputs of a whole batch, on the calling thread.
    static FEATURES: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

impl CpuNet {
    /// The kernels' form of `plan` (batch norm in inference mode) for a
    /// board of `board x board` squares, `planes` input planes and `policy` outputs.
    pub(crate) fn new(plan: &NetPlan, planes: usize, board: usize, policy: usize) -> CpuNet {
        let area = board * board;
        let body = match &plan.body {
            PlanBody::Resnet(r) => Body::Resnet {
                stem: Conv::folded(&r.stem, 1.0),
                blocks: r
                    .blocks
                    .iter()
                    .map(|b| Block {
                        a: Conv::folded(&b.a, 1.0),
                        b: Conv::folded(&b.b, b.scale.unwrap_or(1.0)),
                    })
                    .collect(),
                policy_conv: Conv::folded(&r.policy_conv, 1.0),
                policy_out: match &r.policy_head {
                    PolicyHeadPlan::Dense(d) => PolicyOut::Dense(d.clone()),
                    PolicyHeadPlan::Conv { out, gather } => {
                        PolicyOut::Gathered(GatheredPolicy::new(out, gather))
                    }
                },
                value_conv: Conv::folded(&r.value_conv, 1.0),
            },
            PlanBody::Mlp(m) => Body::Mlp {
                layers: m.layers.clone(),
                policy_fc: m.policy_fc.clone(),
            },
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
        let direct = match &body {
            Body::Resnet { stem, blocks, .. } => {
                let convs = std::iter::once(stem).chain(blocks.iter().flat_map(|b| [&b.a, &b.b]));
                let fits = convs.into_iter().all(|c| {
                    c.kernel == 3 && Direct::supports(c.outputs) && c.outputs == stem.outputs
                });
                Direct::detect(board).filter(|_| fits)
            }
            Body::Mlp { .. } => None,
        };
        let winograd = match (&body, direct) {
            (Body::Resnet { blocks, .. }, Some(_))
                if blocks.iter().all(|b| {
                    winograd::supports(b.a.inputs, b.a.outputs)
                        && winograd::supports(b.b.inputs, b.b.outputs)
                }) =>
            {
                blocks
                    .iter()
                    .map(|b| {
                        [&b.a, &b.b].map(|c| WinogradWeights::new(&c.weight, c.inputs, c.outputs))
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        CpuNet {
            direct,
            winograd,
            block_positions,
            planes,
            area,
            policy,
            body,
            value_fc1: plan.value_fc1.clone(),
            value_fc2: plan.value_fc2.clone(),
            moves_left_fc: plan.moves_left_fc.clone(),
            unfold: Unfold3x3::new(board),
        }
    }

    /// The same net on the general path only (unfolding and `gemm`), for
    /// comparing the two paths.
    #[cfg(test)]
    pub(crate) fn without_direct(mut self) -> CpuNet {
        self.direct = None;
        self.winograd.clear();
        self
    }

    /// The same net with direct convolutions only (no Winograd), for
    /// comparing the paths.
    #[cfg(test)]
    pub(crate) fn without_winograd(mut self) -> CpuNet {
        self.winograd.clear();
        self
    }

    /// Whether the forward pass uses the AVX-512 direct convolutions.
    #[cfg(test)]
    pub(crate) fn uses_direct_convolutions(&self) -> bool {
        self.direct.is_some()
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
        FEATURES.with(|f| match f.try_borrow_mut() {
            Ok(mut f) => self.forward_with(inputs, n, policy, wdl, moves_left, &mut f),
            // Only if a caller nests evaluations on one thread.
            Err(_) => self.forward_with(inputs, n, policy, wdl, moves_left, &mut Vec::new()),
        });
    }

    /// [`CpuNet::forward`] with a buffer for the policy layer's inputs.
    fn forward_with(
        &self,
        inputs: &[f32],
        n: usize,
        policy: &mut [f32],
        wdl: &mut [f32],
        moves_left: &mut [f32],
        features: &mut Vec<f32>,
    ) {
        let in_len = self.planes * self.area;
        let per_position = self.policy_features();
        let features = sized(features, n * per_position);
        // One share of the batch per thread for everything but the policy layer.
        let per = n.div_ceil(rayon::current_num_threads()).max(1);
        let mut shares = Vec::with_capacity(n.div_ceil(per));
        let mut rest = Outputs {
            features: &mut *features,
            wdl,
            moves_left,
        };
        for inp in inputs.chunks(per * in_len) {
            let (share, r) = rest.split(inp.len() / in_len, per_position);
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
        run_shares(shares, run);
        match &self.body {
            Body::Resnet {
                policy_out: PolicyOut::Gathered(g),
                ..
            } => g.apply(n, features, policy),
            Body::Resnet {
                policy_out: PolicyOut::Dense(fc),
                ..
            }
            | Body::Mlp { policy_fc: fc, .. } => {
                fc.apply_by_columns(n, features, policy, self.direct.as_ref())
            }
        }
    }

    /// Floats per position of the policy layer's input.
    fn policy_features(&self) -> usize {
        match &self.body {
            Body::Resnet {
                policy_out: PolicyOut::Dense(fc),
                ..
            }
            | Body::Mlp { policy_fc: fc, .. } => fc.inputs,
            Body::Resnet {
                policy_out: PolicyOut::Gathered(g),
                ..
            } => self.area * g.channels,
        }
    }

    /// The forward pass of one thread's positions, a few at a time so that
    /// the unfolded convolution input stays in this core's cache.
    fn forward_blocks(&self, inputs: &[f32], out: Outputs<'_>, s: &mut Scratch) {
        let in_len = self.planes * self.area;
        let mut rest = out;
        for inp in inputs.chunks(self.block_positions * in_len) {
            let (block, r) = rest.split(inp.len() / in_len, self.policy_features());
            self.forward_chunk(inp, block, s);
            rest = r;
        }
    }

    /// The forward pass of a block of positions on this thread.
    fn forward_chunk(&self, inputs: &[f32], out: Outputs<'_>, s: &mut Scratch) {
        let Outputs {
            features,
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
            value_features,
            hidden,
            wdl_logits,
            padded_input,
            padded,
            winograd: wino_scratch,
        } = s;
        let value_in: &[f32] = match &self.body {
            Body::Resnet {
                stem,
                blocks,
                policy_conv,
                value_conv,
                ..
            } => {
                let rows = n * self.area;
                let cur: &[f32] = if let Some(d) = &self.direct {
                    let pd = d.padded();
                    let c = stem.outputs;
                    let input = sized(padded_input, pd.len(n, self.planes));
                    pd.pad_planes(inputs, self.planes, input);
                    let [mut cur, mid, mut other] = padded.each_mut().map(|b| {
                        let b = sized(b, pd.len(n, c));
                        pd.zero_border(b, n, c);
                        b
                    });
                    let conv = |l: &Conv, x: &[f32], out: &mut [f32], f: Finish<'_>| {
                        d.conv3x3(n, l.inputs, l.outputs, &l.weight, &l.bias, x, out, f)
                    };
                    conv(stem, input, cur, Finish::Relu);
                    for (k, b) in blocks.iter().enumerate() {
                        if let Some([wa, wb]) = self.winograd.get(k) {
                            let ws = &mut *wino_scratch;
                            winograd::conv3x3(d, n, wa, &b.a.bias, cur, mid, Finish::Relu, ws);
                            winograd::conv3x3(
                                d,
                                n,
                                wb,
                                &b.b.bias,
                                mid,
                                other,
                                Finish::SkipRelu(cur),
                                ws,
                            );
                        } else {
                            conv(&b.a, cur, mid, Finish::Relu);
                            conv(&b.b, mid, other, Finish::SkipRelu(cur));
                        }
                        std::mem::swap(&mut cur, &mut other);
                    }
                    let body_out = sized(x, rows * c);
                    pd.interior_rows(cur, n, c, body_out);
                    body_out
                } else {
                    self.general_body(inputs, n, stem, blocks, x, y, t, cols)
                };
                self.conv(policy_conv, rows, cur, cols, features);
                add_bias_relu(features, &policy_conv.bias);
                let vf = sized(value_features, rows * value_conv.outputs);
                self.conv(value_conv, rows, cur, cols, vf);
                add_bias_relu(vf, &value_conv.bias);
                vf
            }
            Body::Mlp { layers, .. } => {
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
                features.copy_from_slice(&cur[..n * width]);
                &cur[..n * width]
            }
        };
        self.heads(n, value_in, hidden, wdl_logits, wdl, moves_left);
    }

    /// The ResNet body on the general path: unfolding and `gemm` products.
    #[allow(clippy::too_many_arguments)]
    fn general_body<'s>(
        &self,
        inputs: &[f32],
        n: usize,
        stem: &Conv,
        blocks: &[Block],
        x: &'s mut Vec<f32>,
        y: &'s mut Vec<f32>,
        t: &mut Vec<f32>,
        cols: &mut Vec<f32>,
    ) -> &'s [f32] {
        let in_len = self.planes * self.area;
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
        cur
    }

    /// The value head (and moves-left head) from the value features.
    fn heads(
        &self,
        n: usize,
        value_in: &[f32],
        hidden: &mut Vec<f32>,
        wdl_logits: &mut Vec<f32>,
        wdl: &mut [f32],
        moves_left: &mut [f32],
    ) {
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
    use crate::kernels::layers::floats;
    use crate::net::{ConvBn, PolicyValueNet, PolicyValueNetConfig};
    use crate::{NetConfig, NetNorm};
    use burn::module::{Param, RunningState};
    use burn::prelude::*;
    use burn::tensor::Distribution;

    /// A net whose batch-norm statistics, affine terms and block scales are
    /// random (a fresh net has mean 0, variance 1, scale 0: too easy a test).
    /// Seeded, under the lock that keeps other threads' seeding out, so a
    /// test sees the same net on every run.
    pub(crate) fn random_net(
        net: &NetConfig,
        board: usize,
        policy: usize,
        device: &Device,
    ) -> PolicyValueNet {
        random_net_with_planes(net, 7, board, policy, device)
    }

    /// [`random_net`] for an input of `planes` planes (8 under huffing).
    pub(crate) fn random_net_with_planes(
        net: &NetConfig,
        planes: usize,
        board: usize,
        policy: usize,
        device: &Device,
    ) -> PolicyValueNet {
        random_net_from(
            &PolicyValueNetConfig::new(net.clone(), planes, board, policy),
            device,
        )
    }

    /// [`random_net`] for a variant's encoding (and, with a convolutional
    /// policy head, its policy planes).
    pub(crate) fn random_variant_net(
        net: &NetConfig,
        variant: tammi_rules::Variant,
        device: &Device,
    ) -> PolicyValueNet {
        random_net_from(&crate::model::net_build_config(variant, net), device)
    }

    fn random_net_from(config: &PolicyValueNetConfig, device: &Device) -> PolicyValueNet {
        let (planes, board, policy) = (config.planes, config.board, config.policy);
        let _guard = crate::model::INIT_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        device.seed(0x7a11 + (board * 31 + policy) as u64);
        let mut pv = config.init(device);
        // Parameters initialise lazily: materialise them while the seed holds.
        let _ = pv.forward(Tensor::<4>::zeros([1, planes, board, board], device));
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
        let pv = random_net(net, board, policy, &Device::flex());
        compare_net(&pv, net, 7, board, policy, batch);
    }

    fn compare_net(
        pv: &PolicyValueNet,
        net: &NetConfig,
        planes: usize,
        board: usize,
        policy: usize,
        batch: usize,
    ) {
        let device = Device::flex();
        let cpu = CpuNet::new(&NetPlan::read(pv, board).unwrap(), planes, board, policy);
        let len = planes * board * board;
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
            TensorData::new(inputs.clone(), [batch, planes, board, board]),
            &device,
        );
        let out = pv.forward(x);
        let want_policy = floats(out.policy).unwrap();
        let want_wdl = floats(burn::tensor::activation::softmax(out.wdl, 1)).unwrap();
        let want_moves_left = out.moves_left.map(|m| {
            floats(m)
                .unwrap()
                .iter()
                .map(|x| (x * MOVES_LEFT_SCALE).max(0.0))
                .collect::<Vec<f32>>()
        });
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
        // Both paths where this CPU has the direct convolutions.
        let paths = if cpu.uses_direct_convolutions() {
            vec![
                cpu.clone(),
                cpu.clone().without_winograd(),
                cpu.without_direct(),
            ]
        } else {
            vec![cpu]
        };
        for cpu in paths {
            let direct = cpu.uses_direct_convolutions();
            let mut policy_out = vec![0.0; batch * policy];
            let mut wdl = vec![0.0; batch * 3];
            let mut ml = vec![0.0; if cpu.has_moves_left() { batch } else { 0 }];
            cpu.forward(&inputs, &mut policy_out, &mut wdl, &mut ml);
            let dp = max_diff(&policy_out, &want_policy);
            assert!(
                dp <= 1e-4 * scale,
                "{net:?} (direct {direct}): policy logits differ by {dp} (scale {scale})"
            );
            let dw = max_diff(&wdl, &want_wdl);
            assert!(
                dw <= 1e-5,
                "{net:?} (direct {direct}): W/D/L differs by {dw}"
            );
            if let Some(want) = &want_moves_left {
                let dm = max_diff(&ml, want);
                assert!(
                    dm <= 1e-3,
                    "{net:?} (direct {direct}): moves left differs by {dm}"
                );
            }
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
        // 32 and 48 channels: the direct convolutions' two register shapes.
        compare(&NetConfig::resnet(2, 32), 8, 1024, 3);
        compare(&NetConfig::resnet(1, 48), 8, 1024, 2);
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
        compare(&NetConfig::resnet(1, 32), 10, 2500, 2);
        compare(&NetConfig::mlp(2, 32), 8, 1024, 9);
        let net = NetConfig {
            moves_left_head: true,
            ..NetConfig::mlp(1, 16)
        };
        compare(&net, 10, 2500, 4);
    }

    /// Canadian's 12x12 board (72 playable squares, 72 x 72 policy indices),
    /// where the direct and Winograd kernels run as on the smaller boards.
    #[test]
    fn canadian_board_matches_burn() {
        compare(&NetConfig::resnet(1, 32), 12, 5184, 3);
        compare(&NetConfig::resnet(1, 16), 12, 5184, 1);
    }

    /// The convolutional policy head (logits read from its planes where a
    /// policy index points) against burn's full convolution and gather.
    #[test]
    fn convolutional_policy_head_matches_burn() {
        use tammi_rules::Variant;
        for (variant, net, batch) in [
            (Variant::English, NetConfig::resnet(2, 32), 5),
            (Variant::Canadian, NetConfig::resnet(1, 16), 3),
            (Variant::FinnishHuffing, NetConfig::resnet(1, 8), 4),
            (
                Variant::Turkish,
                NetConfig {
                    norm: NetNorm::None,
                    ..NetConfig::resnet(1, 8)
                },
                2,
            ),
        ] {
            let net = NetConfig {
                policy_head: crate::PolicyHead::Conv,
                ..net
            };
            let pv = random_variant_net(&net, variant, &Device::flex());
            let e = crate::Encoding::new(variant);
            compare_net(&pv, &net, e.planes(), e.rows(), e.policy_size(), batch);
        }
    }
}
