//! tammi's own CPU training kernels for the ResNet policy-value net.
//!
//! burn-flex's autodiff spends most of a training step outside the
//! arithmetic: unfolding and re-folding convolutions tensor by tensor,
//! zero-filled temporaries, separate passes for batch norm and ReLU.
//! [`KernelTrainer`] computes the loss and every parameter gradient of a batch
//! itself, on the net's plan ([`super::plan`]), in the layout of the inference kernels:
//! activations channels-last, a 3x3 convolution as one unfolding plus one
//! `gemm` product, its weight gradient as `unfold(x)ᵀ · dz` and its input
//! gradient as the same convolution of `dz` with the kernel flipped.
//!
//! Only the gradients are computed here.  burn's AdamW applies them to the
//! burn net, so the optimizer state, checkpoints and resume stay exactly
//! burn's.  Batch norm normalises with the batch's own statistics, as burn
//! does in training, and the running averages are updated the way burn does.
//!
//! The work is split into fixed chunks of [`CHUNK_POSITIONS`] positions that
//! rayon's threads share; sums across chunks are added in chunk order, so a
//! batch gives the same gradients whatever the thread count.  The losses and
//! gradients equal burn autodiff's up to float rounding (tests below and in
//! `tests/net.rs`).

use super::layers::{Dense, Unfold3x3, View, gemm_views, sized};
use super::plan::{ConvLayer, NetPlan, PolicyHeadPlan, ResNetPlan, batch_norms};
use crate::ModelError;
use crate::loss::{Losses, PolicySoftmax, TrainConfig};
use crate::net::{MOVES_LEFT_SCALE, PolicyValueNet};
use burn::optim::GradientsParams;
use burn::prelude::*;
use rayon::prelude::*;
use std::cell::RefCell;

/// Positions per chunk of work: 1,024 rows of an 8x8 board, whose unfolded
/// 32-channel input (1.2 MB) about fits a core's L2 cache.
const CHUNK_POSITIONS: usize = 16;

thread_local! {
    /// Per-thread buffer for unfolded convolution input.
    static COLS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// What the forward pass keeps of one convolution for the backward pass.
#[derive(Default)]
struct ConvTrace {
    /// With batch norm the normalised output `x̂`; without, conv + bias.
    pre: Vec<f32>,
    /// The layer's output after its activation (for a block's second
    /// convolution: after the skip connection and ReLU).
    out: Vec<f32>,
    /// Batch statistics (biased variance, as burn's running averages use).
    mean: Vec<f32>,
    var: Vec<f32>,
    inv_std: Vec<f32>,
}

/// One residual block's traces.
#[derive(Default)]
struct BlockTrace {
    a: ConvTrace,
    b: ConvTrace,
}

/// Every convolution's trace, laid out like [`ResNetPlan`].
#[derive(Default)]
struct Traces {
    stem: ConvTrace,
    blocks: Vec<BlockTrace>,
    policy: ConvTrace,
    value: ConvTrace,
    /// A convolutional policy head's output layer (its `pre` holds the
    /// logit planes); not in [`Traces::in_order`]: it has no batch norm.
    policy_out: ConvTrace,
}

impl Traces {
    /// In the order of [`batch_norms`].
    fn in_order(&self) -> Vec<&ConvTrace> {
        let mut traces = vec![&self.stem];
        for b in &self.blocks {
            traces.push(&b.a);
            traces.push(&b.b);
        }
        traces.push(&self.policy);
        traces.push(&self.value);
        traces
    }
}

/// Activations and gradient buffers, kept between steps.
#[derive(Default)]
struct Workspace {
    input: Vec<f32>,
    traces: Traces,
    policy_logits: Vec<f32>,
    hidden: Vec<f32>,
    wdl_logits: Vec<f32>,
    moves_left: Vec<f32>,
    d_policy: Vec<f32>,
    /// A convolutional policy head's gradient on its logit planes.
    d_planes: Vec<f32>,
    d_wdl: Vec<f32>,
    d_moves_left: Vec<f32>,
    d_hidden: Vec<f32>,
    d_head: Vec<f32>,
    d_body: Vec<f32>,
    d_mid: Vec<f32>,
    d_branch: Vec<f32>,
    partials: Vec<f32>,
    flipped: Vec<f32>,
}

/// Computes losses and gradients of training batches for one ResNet shape
/// (see the module docs).  Its copy of the weights is refreshed from the burn
/// net before each step with [`KernelTrainer::load`].
pub(crate) struct KernelTrainer {
    planes: usize,
    board: usize,
    area: usize,
    unfold: Unfold3x3,
    /// The net's plan; always a ResNet (checked by [`KernelTrainer::new`]).
    params: NetPlan,
    /// The gradients, in a plan of the same shape.
    grads: NetPlan,
    ws: Workspace,
    /// Whether the last batch trained the moves-left head.
    trained_moves_left: bool,
}

/// The ResNet of a plan that [`KernelTrainer::new`] accepted.
fn resnet(plan: &NetPlan) -> &ResNetPlan {
    plan.resnet()
        .expect("KernelTrainer::new accepts ResNet plans only")
}

/// Per-column sums of `f(row_a[j], row_b[j], j)` over the rows of `a` and
/// `b` (`columns` wide, row-major), chunk by chunk in parallel and added in
/// chunk order.
fn column_sums(
    a: &[f32],
    b: &[f32],
    columns: usize,
    chunk_rows: usize,
    f: impl Fn(f32, f32, usize) -> f64 + Sync,
) -> Vec<f64> {
    let partial: Vec<Vec<f64>> = a
        .par_chunks(chunk_rows * columns)
        .zip(b.par_chunks(chunk_rows * columns))
        .map(|(a, b)| {
            let mut s = vec![0.0f64; columns];
            for (ra, rb) in a.chunks_exact(columns).zip(b.chunks_exact(columns)) {
                for j in 0..columns {
                    s[j] += f(ra[j], rb[j], j);
                }
            }
            s
        })
        .collect();
    let mut sums = vec![0.0f64; columns];
    for p in partial {
        for (s, v) in sums.iter_mut().zip(p) {
            *s += v;
        }
    }
    sums
}

impl KernelTrainer {
    /// Kernels for `net` (a ResNet) on a `board x board` board with `planes`
    /// input planes: an error for a net the kernels cannot train.
    pub(crate) fn new(
        net: &PolicyValueNet,
        planes: usize,
        board: usize,
    ) -> Result<KernelTrainer, ModelError> {
        let params = NetPlan::read(net, board)?;
        let Some(r) = params.resnet() else {
            return Err(ModelError::UnsupportedNet(
                "the training kernels run ResNets, not perceptrons".into(),
            ));
        };
        let traces = Traces {
            blocks: r.blocks.iter().map(|_| BlockTrace::default()).collect(),
            ..Traces::default()
        };
        Ok(KernelTrainer {
            planes,
            board,
            area: board * board,
            unfold: Unfold3x3::new(board),
            grads: params.clone(),
            params,
            ws: Workspace {
                traces,
                ..Workspace::default()
            },
            trained_moves_left: false,
        })
    }

    /// Refreshes the weights from `net` (same shape as at [`KernelTrainer::new`]).
    pub(crate) fn load(&mut self, net: &PolicyValueNet) -> Result<(), ModelError> {
        let params = NetPlan::read(net, self.board)?;
        let same_shape = match (params.resnet(), self.params.resnet()) {
            (Some(new), Some(old)) => {
                new.blocks.len() == old.blocks.len()
                    && new.policy_weights() == old.policy_weights()
                    && new.stem.weight.len() == old.stem.weight.len()
            }
            _ => false,
        };
        if !same_shape {
            return Err(ModelError::Backend(
                "the net changed shape under the training kernels".into(),
            ));
        }
        // The gradients take the ids of the net just read (burn keys them
        // by parameter id); backward overwrites every value.
        self.grads = params.clone();
        self.params = params;
        Ok(())
    }

    fn chunk_rows(&self) -> usize {
        CHUNK_POSITIONS * self.area
    }

    /// Loss and gradients of one batch of `n` samples: `inputs` as encoded
    /// (`[n, planes, rows, cols]`), dense policy targets, W/D/L targets and
    /// plies left (empty, or one per sample).  The gradients stay inside
    /// until [`KernelTrainer::gradients`].
    /// `legal` holds each sample's legal policy indices one sample after
    /// another, sample `i`'s ending at `legal_ends[i]`; they are read only
    /// when `config.policy_softmax` is `Legal`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn forward_backward(
        &mut self,
        n: usize,
        inputs: &[f32],
        policy_targets: &[f32],
        wdl_targets: &[f32],
        moves_left_targets: &[f32],
        (legal, legal_ends): (&[u32], &[u32]),
        config: &TrainConfig,
    ) -> Result<Losses, ModelError> {
        let policy = resnet(&self.params).policy_size();
        if n == 0
            || inputs.len() != n * self.planes * self.area
            || policy_targets.len() != n * policy
            || wdl_targets.len() != n * 3
            || !(moves_left_targets.is_empty() || moves_left_targets.len() == n)
        {
            return Err(ModelError::BadInput(
                "training batch sizes do not match the net".into(),
            ));
        }
        self.forward(n, inputs);
        let ml = if self.params.moves_left_fc.is_some() && !moves_left_targets.is_empty() {
            Some(moves_left_targets)
        } else {
            None
        };
        self.trained_moves_left = ml.is_some();
        let legal = (legal, legal_ends);
        let losses = self.output_gradients(n, policy_targets, wdl_targets, ml, legal, config);
        if losses.total.is_finite() {
            self.backward(n);
        }
        Ok(losses)
    }

    /// The forward pass with batch statistics, keeping what backward needs.
    fn forward(&mut self, n: usize, inputs: &[f32]) {
        let (area, planes) = (self.area, self.planes);
        let rows = n * area;
        let chunk_rows = self.chunk_rows();
        let r = resnet(&self.params);
        let ws = &mut self.ws;
        let x0 = sized(&mut ws.input, rows * planes);
        x0.par_chunks_mut(CHUNK_POSITIONS * area * planes)
            .zip(inputs.par_chunks(CHUNK_POSITIONS * area * planes))
            .for_each(|(dst, src)| {
                for (pos, pl) in src.chunks_exact(area * planes).enumerate() {
                    for c in 0..planes {
                        for sq in 0..area {
                            dst[(pos * area + sq) * planes + c] = pl[c * area + sq];
                        }
                    }
                }
            });
        let u = &self.unfold;
        let traces = &mut ws.traces;
        conv_layer_forward(
            u,
            &r.stem,
            &ws.input,
            rows,
            chunk_rows,
            &mut traces.stem,
            None,
        );
        let mut prev: &ConvTrace = &traces.stem;
        for (block, t) in r.blocks.iter().zip(traces.blocks.iter_mut()) {
            conv_layer_forward(u, &block.a, &prev.out, rows, chunk_rows, &mut t.a, None);
            let skip = Skip {
                input: &prev.out,
                scale: block.scale,
            };
            conv_layer_forward(
                u,
                &block.b,
                &t.a.out,
                rows,
                chunk_rows,
                &mut t.b,
                Some(skip),
            );
            prev = &t.b;
        }
        let body = &prev.out;
        let Traces {
            policy: tp,
            value: tv,
            policy_out: to,
            ..
        } = traces;
        conv_layer_forward(u, &r.policy_conv, body, rows, chunk_rows, tp, None);
        conv_layer_forward(u, &r.value_conv, body, rows, chunk_rows, tv, None);
        let p = &self.params;
        match &r.policy_head {
            PolicyHeadPlan::Dense(fc) => {
                dense_forward(fc, n, &tp.out, &mut ws.policy_logits, false)
            }
            PolicyHeadPlan::Conv { out, gather } => {
                conv_layer_forward(u, out, &tp.out, rows, chunk_rows, to, None);
                let planes = &to.pre[..rows * out.outputs];
                let logits = sized(&mut ws.policy_logits, n * gather.len());
                let per_position = self.area * out.outputs;
                for (l, pl) in logits
                    .chunks_exact_mut(gather.len())
                    .zip(planes.chunks_exact(per_position))
                {
                    for (v, &g) in l.iter_mut().zip(gather) {
                        *v = pl[g as usize];
                    }
                }
            }
        }
        dense_forward(&p.value_fc1, n, &tv.out, &mut ws.hidden, true);
        dense_forward(&p.value_fc2, n, &ws.hidden, &mut ws.wdl_logits, false);
        if let Some(fc) = &p.moves_left_fc {
            dense_forward(fc, n, &ws.hidden, &mut ws.moves_left, false);
        }
    }

    /// Losses of the forward pass just run, and the gradient of the total
    /// loss with respect to every head output.
    fn output_gradients(
        &mut self,
        n: usize,
        policy_targets: &[f32],
        wdl_targets: &[f32],
        moves_left_targets: Option<&[f32]>,
        (legal, legal_ends): (&[u32], &[u32]),
        config: &TrainConfig,
    ) -> Losses {
        let policy = resnet(&self.params).policy_size();
        let ws = &mut self.ws;
        let inv_n = 1.0 / n as f32;
        // Policy: cross-entropy with the softmax; per row (loss, entropy).
        let d_policy = sized(&mut ws.d_policy, n * policy);
        let over_legal = config.policy_softmax == PolicySoftmax::Legal && legal_ends.len() == n;
        let row_legal = |i: usize| {
            let start = if i == 0 {
                0
            } else {
                legal_ends[i - 1] as usize
            };
            &legal[start..legal_ends[i] as usize]
        };
        let per_row: Vec<(f64, f64)> = d_policy
            .par_chunks_mut(policy * CHUNK_POSITIONS)
            .zip(ws.policy_logits[..n * policy].par_chunks(policy * CHUNK_POSITIONS))
            .zip(policy_targets.par_chunks(policy * CHUNK_POSITIONS))
            .enumerate()
            .flat_map_iter(|(chunk, ((d, l), t))| {
                d.chunks_exact_mut(policy)
                    .zip(l.chunks_exact(policy))
                    .zip(t.chunks_exact(policy))
                    .enumerate()
                    .map(|(j, ((d, l), t))| {
                        let row = chunk * CHUNK_POSITIONS + j;
                        match over_legal.then(|| row_legal(row)) {
                            Some(moves) if !moves.is_empty() => {
                                legal_softmax_cross_entropy(l, t, moves, d, inv_n)
                            }
                            _ => softmax_cross_entropy(l, t, d, inv_n),
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let (mut policy_loss, mut entropy) = (0.0f64, 0.0f64);
        for (l, e) in per_row {
            policy_loss += l;
            entropy += e;
        }
        // W/D/L: cross-entropy with the softmax, and accuracy.
        let d_wdl = sized(&mut ws.d_wdl, n * 3);
        let (mut value_loss, mut correct) = (0.0f64, 0usize);
        let vw = config.value_weight;
        for ((d, l), t) in d_wdl
            .chunks_exact_mut(3)
            .zip(ws.wdl_logits.chunks_exact(3))
            .zip(wdl_targets.chunks_exact(3))
        {
            let (loss, _) = softmax_cross_entropy(l, t, d, inv_n * vw);
            value_loss += loss;
            correct += usize::from(first_max(l) == first_max(t));
        }
        // Moves left: squared error of the raw head against plies / scale.
        let mut ml_loss = 0.0f64;
        if let Some(targets) = moves_left_targets {
            let d = sized(&mut ws.d_moves_left, n);
            let w = config.moves_left_weight;
            for ((d, &pred), &t) in d.iter_mut().zip(&ws.moves_left).zip(targets) {
                let err = pred - t / MOVES_LEFT_SCALE;
                ml_loss += f64::from(err * err);
                *d = 2.0 * err * inv_n * w;
            }
        }
        let nf = n as f64;
        let (policy_loss, value_loss, ml_loss) = (policy_loss / nf, value_loss / nf, ml_loss / nf);
        let mut total = policy_loss + value_loss * f64::from(config.value_weight);
        if moves_left_targets.is_some() {
            total += ml_loss * f64::from(config.moves_left_weight);
        }
        Losses {
            total: total as f32,
            policy: policy_loss as f32,
            value: value_loss as f32,
            moves_left: ml_loss as f32,
            policy_entropy: (entropy / nf) as f32,
            value_accuracy: (correct as f64 / nf) as f32,
        }
    }

    /// Back-propagates the head gradients of [`Self::output_gradients`]
    /// into `self.grads`.
    fn backward(&mut self, n: usize) {
        let rows = n * self.area;
        let cr = self.chunk_rows();
        let unfold = &self.unfold;
        let p = &self.params;
        let r = resnet(p);
        let (g_heads, g) = split_heads(&mut self.grads);
        let ws = &mut self.ws;
        let traces = &ws.traces;
        let width = r.stem.outputs;
        let mut bw = Backward {
            unfold,
            chunk_rows: cr,
            partials: &mut ws.partials,
            flipped: &mut ws.flipped,
        };
        // Value head: fc2 (and moves left), the hidden ReLU, fc1.
        let d_hidden = &mut ws.d_hidden;
        dense_backward(
            &p.value_fc2,
            g_heads.value_fc2,
            n,
            &ws.hidden,
            &ws.d_wdl,
            d_hidden,
            false,
        );
        if let (Some(fc), Some(gfc), true) = (
            &p.moves_left_fc,
            g_heads.moves_left_fc.as_mut(),
            self.trained_moves_left,
        ) {
            dense_backward(fc, gfc, n, &ws.hidden, &ws.d_moves_left, d_hidden, true);
        }
        relu_mask(&mut d_hidden[..n * p.value_fc1.outputs], &ws.hidden);
        let body_out = match traces.blocks.last() {
            Some(last) => &last.b.out[..rows * width],
            None => &traces.stem.out[..rows * width],
        };
        let d_body = sized(&mut ws.d_body, rows * width);
        // The heads' 1x1 convolutions; their input gradients add up in d_body.
        let (tp, tv) = (&traces.policy, &traces.value);
        let d_head = &mut ws.d_head;
        dense_backward(
            &p.value_fc1,
            g_heads.value_fc1,
            n,
            &tv.out,
            d_hidden,
            d_head,
            false,
        );
        let dv = &mut d_head[..rows * r.value_conv.outputs];
        relu_mask(dv, &tv.out);
        let (c, gc) = (&r.value_conv, &mut g.value_conv);
        bw.conv_layer(c, gc, tv, body_out, dv, Some((&mut *d_body, false)));
        match (&r.policy_head, &mut g.policy_head) {
            (PolicyHeadPlan::Dense(fc), PolicyHeadPlan::Dense(gfc)) => {
                dense_backward(fc, gfc, n, &tp.out, &ws.d_policy, d_head, false)
            }
            (PolicyHeadPlan::Conv { out, gather }, PolicyHeadPlan::Conv { out: g_out, .. }) => {
                // The gather's gradient: each logit's back to its place
                // (no two indices share one), zero where none reads.
                let per_position = self.area * out.outputs;
                let d_planes = sized(&mut ws.d_planes, rows * out.outputs);
                d_planes.fill(0.0);
                for (dp, dl) in d_planes
                    .chunks_exact_mut(per_position)
                    .zip(ws.d_policy.chunks_exact(gather.len()))
                {
                    for (&g, &d) in gather.iter().zip(dl) {
                        dp[g as usize] = d;
                    }
                }
                let d_in = sized(&mut *d_head, rows * r.policy_conv.outputs);
                let to = &traces.policy_out;
                bw.conv_layer(out, g_out, to, &tp.out, d_planes, Some((d_in, false)));
            }
            _ => unreachable!("the gradients are a copy of the plan"),
        }
        let dp = &mut d_head[..rows * r.policy_conv.outputs];
        relu_mask(dp, &tp.out);
        let (c, gc) = (&r.policy_conv, &mut g.policy_conv);
        bw.conv_layer(c, gc, tp, body_out, dp, Some((&mut *d_body, true)));
        // Residual blocks, last first; d_body holds the gradient with
        // respect to the block's output.
        for i in (0..r.blocks.len()).rev() {
            let (block, gb, t) = (&r.blocks[i], &mut g.blocks[i], &traces.blocks[i]);
            let block_in = match i {
                0 => &traces.stem.out[..rows * width],
                _ => &traces.blocks[i - 1].b.out[..rows * width],
            };
            // Through the final ReLU; this is also the skip path's gradient.
            relu_mask(d_body, &t.b.out);
            let db = sized(&mut ws.d_branch, rows * width);
            match block.scale {
                Some(s) => {
                    // out = relu(s * branch + x): the branch is `pre` (no norm).
                    let ds: f64 = d_body
                        .iter()
                        .zip(&t.b.pre)
                        .map(|(&d, &y)| f64::from(d) * f64::from(y))
                        .sum();
                    gb.scale = Some(ds as f32);
                    for (o, &d) in db.iter_mut().zip(d_body.iter()) {
                        *o = d * s;
                    }
                }
                None => db.copy_from_slice(d_body),
            }
            let d_mid = sized(&mut ws.d_mid, rows * block.a.outputs);
            bw.conv_layer(
                &block.b,
                &mut gb.b,
                &t.b,
                &t.a.out,
                db,
                Some((&mut *d_mid, false)),
            );
            relu_mask(d_mid, &t.a.out);
            let dx = Some((&mut *d_body, true));
            bw.conv_layer(&block.a, &mut gb.a, &t.a, block_in, d_mid, dx);
        }
        relu_mask(d_body, &traces.stem.out);
        bw.conv_layer(&r.stem, &mut g.stem, &traces.stem, &ws.input, d_body, None);
    }

    /// The gradients of the last [`KernelTrainer::forward_backward`] as
    /// burn tensors on `device`, keyed by the parameters of the net the
    /// weights were loaded from.  The moves-left head gets none when the
    /// batch had no moves-left targets, as with burn's autodiff.
    pub(crate) fn gradients(&self, device: &Device) -> GradientsParams {
        self.grads.gradients(device, self.trained_moves_left)
    }

    /// Moves `net`'s batch-norm running averages toward the last batch's
    /// statistics, as a burn training forward pass does.
    pub(crate) fn update_running_stats(&self, net: &PolicyValueNet) -> Result<(), ModelError> {
        let Some(r) = &net.resnet else {
            return Err(ModelError::Backend(
                "the net changed shape under the training kernels".into(),
            ));
        };
        let norms = batch_norms(r);
        let traces = self.ws.traces.in_order();
        if norms.len() != traces.len() {
            return Err(ModelError::Backend(
                "the net changed shape under the training kernels".into(),
            ));
        }
        for (bn, t) in norms.into_iter().zip(traces) {
            let Some(bn) = bn else { continue };
            let m = bn.momentum as f32;
            for (state, batch) in [(&bn.running_mean, &t.mean), (&bn.running_var, &t.var)] {
                let old = state.value_sync();
                let device = old.device();
                let new: Vec<f32> = super::layers::floats(old)?
                    .iter()
                    .zip(batch)
                    .map(|(&o, &b)| o * (1.0 - m) + b * m)
                    .collect();
                let len = new.len();
                state.update(Tensor::<1>::from_data(TensorData::new(new, [len]), &device));
            }
        }
        Ok(())
    }
}

/// The heads outside the body of a gradient plan, and the ResNet body,
/// borrowed apart so that the backward pass can write both.
fn split_heads(plan: &mut NetPlan) -> (Heads<'_>, &mut ResNetPlan) {
    let NetPlan {
        body,
        value_fc1,
        value_fc2,
        moves_left_fc,
        ..
    } = plan;
    let r = match body {
        super::plan::Body::Resnet(r) => r,
        super::plan::Body::Mlp(_) => unreachable!("KernelTrainer::new accepts ResNet plans only"),
    };
    let heads = Heads {
        value_fc1,
        value_fc2,
        moves_left_fc,
    };
    (heads, r)
}

/// The value and moves-left layers of a gradient plan.
struct Heads<'a> {
    value_fc1: &'a mut Dense,
    value_fc2: &'a mut Dense,
    moves_left_fc: &'a mut Option<Dense>,
}

/// What every layer's backward pass shares: the unfolding, the chunk size
/// and scratch buffers.
struct Backward<'a> {
    unfold: &'a Unfold3x3,
    chunk_rows: usize,
    /// Per-chunk partial weight gradients.
    partials: &'a mut Vec<f32>,
    /// A 3x3 kernel flipped for the input gradient.
    flipped: &'a mut Vec<f32>,
}

/// The skip connection of a block's second convolution:
/// `out = relu(scale * y + input)`.
struct Skip<'a> {
    input: &'a [f32],
    scale: Option<f32>,
}

/// `out (+)= conv(x)` without bias over `rows` squares, chunk by chunk in parallel.
#[allow(clippy::too_many_arguments)]
fn conv_product(
    unfold: &Unfold3x3,
    kernel: usize,
    inputs: usize,
    outputs: usize,
    weight: &[f32],
    x: &[f32],
    chunk_rows: usize,
    out: &mut [f32],
    accumulate: bool,
) {
    let rows = out.len() / outputs;
    out.par_chunks_mut(chunk_rows * outputs)
        .zip(x[..rows * inputs].par_chunks(chunk_rows * inputs))
        .for_each(|(o, xi)| {
            let r = xi.len() / inputs;
            if kernel == 1 {
                let (lhs, rhs) = (View::rows(xi, inputs), View::rows(weight, outputs));
                gemm_views(r, outputs, inputs, o, accumulate, lhs, rhs, false);
                return;
            }
            COLS.with(|cols| {
                let mut cols = cols.borrow_mut();
                let u = sized(&mut cols, r * 9 * inputs);
                unfold.apply(inputs, r, xi, u);
                let (lhs, rhs) = (View::rows(u, 9 * inputs), View::rows(weight, outputs));
                gemm_views(r, outputs, 9 * inputs, o, accumulate, lhs, rhs, false);
            });
        });
}

/// One convolution layer forward: product, batch norm with the batch's
/// statistics (or bias), then ReLU (after the skip connection, if any).
fn conv_layer_forward(
    unfold: &Unfold3x3,
    c: &ConvLayer,
    x: &[f32],
    rows: usize,
    chunk_rows: usize,
    t: &mut ConvTrace,
    skip: Option<Skip<'_>>,
) {
    let cout = c.outputs;
    let pre = sized(&mut t.pre, rows * cout);
    conv_product(
        unfold, c.kernel, c.inputs, cout, &c.weight, x, chunk_rows, pre, false,
    );
    // y = a * pre + b per channel: batch norm's normalisation and affine
    // step, or the bias.
    let (a, b): (Vec<f32>, Vec<f32>) = match &c.norm {
        Some(norm) => {
            let inv_count = 1.0 / rows as f64;
            let sums = column_sums(pre, pre, cout, chunk_rows, |v, _, _| f64::from(v));
            let mean: Vec<f64> = sums.iter().map(|s| s * inv_count).collect();
            let sq = column_sums(pre, pre, cout, chunk_rows, |v, _, j| {
                let d = f64::from(v) - mean[j];
                d * d
            });
            let var: Vec<f64> = sq.iter().map(|s| s * inv_count).collect();
            t.mean = mean.iter().map(|&m| m as f32).collect();
            t.var = var.iter().map(|&v| v as f32).collect();
            t.inv_std = var
                .iter()
                .map(|&v| (1.0 / (v + f64::from(norm.epsilon)).sqrt()) as f32)
                .collect();
            // pre becomes x̂ = (z - mean) * inv_std below.
            let shift: Vec<f32> = (0..cout).map(|j| -t.mean[j] * t.inv_std[j]).collect();
            pre.par_chunks_mut(chunk_rows * cout).for_each(|chunk| {
                for row in chunk.chunks_exact_mut(cout) {
                    for j in 0..cout {
                        row[j] = row[j] * t.inv_std[j] + shift[j];
                    }
                }
            });
            (norm.gamma.clone(), norm.beta.clone())
        }
        None => {
            let bias = c.bias.clone().unwrap_or_else(|| vec![0.0; cout]);
            pre.par_chunks_mut(chunk_rows * cout).for_each(|chunk| {
                for row in chunk.chunks_exact_mut(cout) {
                    for (v, b) in row.iter_mut().zip(&bias) {
                        *v += b;
                    }
                }
            });
            (vec![1.0; cout], vec![0.0; cout])
        }
    };
    let out = sized(&mut t.out, rows * cout);
    let pre: &[f32] = pre;
    match skip {
        None => out
            .par_chunks_mut(chunk_rows * cout)
            .zip(pre.par_chunks(chunk_rows * cout))
            .for_each(|(o, p)| {
                for (or, pr) in o.chunks_exact_mut(cout).zip(p.chunks_exact(cout)) {
                    for j in 0..cout {
                        or[j] = (a[j] * pr[j] + b[j]).max(0.0);
                    }
                }
            }),
        Some(Skip { input, scale }) => {
            let s = scale.unwrap_or(1.0);
            out.par_chunks_mut(chunk_rows * cout)
                .zip(pre.par_chunks(chunk_rows * cout))
                .zip(input[..rows * cout].par_chunks(chunk_rows * cout))
                .for_each(|((o, p), x)| {
                    let rows = o.chunks_exact_mut(cout).zip(p.chunks_exact(cout));
                    for ((or, pr), xr) in rows.zip(x.chunks_exact(cout)) {
                        for j in 0..cout {
                            or[j] = (s * (a[j] * pr[j] + b[j]) + xr[j]).max(0.0);
                        }
                    }
                })
        }
    }
}

impl Backward<'_> {
    /// One convolution layer backward.  `d` is the gradient with respect to
    /// the layer's output before its activation; it is turned in place into
    /// the gradient of the convolution's product.  Writes the layer's
    /// parameter gradients to `g` and, when asked, the gradient with respect
    /// to its input `x` to `dx` (added when the flag is set).
    fn conv_layer(
        &mut self,
        c: &ConvLayer,
        g: &mut ConvLayer,
        t: &ConvTrace,
        x: &[f32],
        d: &mut [f32],
        dx: Option<(&mut [f32], bool)>,
    ) {
        let (unfold, chunk_rows) = (self.unfold, self.chunk_rows);
        let (cin, cout, k) = (c.inputs, c.outputs, c.kernel);
        let rows = d.len() / cout;
        let xhat = &t.pre[..rows * cout];
        match (&c.norm, &mut g.norm) {
            (Some(norm), Some(g_norm)) => {
                let d_beta = column_sums(d, d, cout, chunk_rows, |v, _, _| f64::from(v));
                let d_gamma = column_sums(d, xhat, cout, chunk_rows, |v, xh, _| {
                    f64::from(v) * f64::from(xh)
                });
                let inv_count = 1.0 / rows as f64;
                let mean_d: Vec<f32> = d_beta.iter().map(|s| (s * inv_count) as f32).collect();
                let mean_dx: Vec<f32> = d_gamma.iter().map(|s| (s * inv_count) as f32).collect();
                let scale: Vec<f32> = (0..cout).map(|j| norm.gamma[j] * t.inv_std[j]).collect();
                d.par_chunks_mut(chunk_rows * cout)
                    .zip(xhat.par_chunks(chunk_rows * cout))
                    .for_each(|(dc, xc)| {
                        for (dr, xr) in dc.chunks_exact_mut(cout).zip(xc.chunks_exact(cout)) {
                            for j in 0..cout {
                                dr[j] = scale[j] * (dr[j] - mean_d[j] - xr[j] * mean_dx[j]);
                            }
                        }
                    });
                g_norm.gamma = d_gamma.iter().map(|&v| v as f32).collect();
                g_norm.beta = d_beta.iter().map(|&v| v as f32).collect();
            }
            _ => {
                let d_bias = column_sums(d, d, cout, chunk_rows, |v, _, _| f64::from(v));
                g.bias = Some(d_bias.iter().map(|&v| v as f32).collect());
            }
        }
        let dz: &[f32] = d;
        // Weight gradient: the sum over chunks of unfold(x)ᵀ · dz.
        let wlen = k * k * cin * cout;
        let chunks = rows.div_ceil(chunk_rows);
        let partials = sized(self.partials, chunks * wlen);
        partials
            .par_chunks_mut(wlen)
            .zip(x[..rows * cin].par_chunks(chunk_rows * cin))
            .zip(dz.par_chunks(chunk_rows * cout))
            .for_each(|((pw, xi), di)| {
                let r = xi.len() / cin;
                let rhs = View::rows(di, cout);
                if k == 1 {
                    gemm_views(cin, cout, r, pw, false, View::rows(xi, cin).t(), rhs, false);
                    return;
                }
                COLS.with(|cols| {
                    let mut cols = cols.borrow_mut();
                    let u = sized(&mut cols, r * 9 * cin);
                    unfold.apply(cin, r, xi, u);
                    gemm_views(
                        9 * cin,
                        cout,
                        r,
                        pw,
                        false,
                        View::rows(u, 9 * cin).t(),
                        rhs,
                        false,
                    );
                });
            });
        let (first, rest) = partials.split_at(wlen);
        g.weight.copy_from_slice(first);
        for p in rest.chunks_exact(wlen) {
            for (w, v) in g.weight.iter_mut().zip(p) {
                *w += v;
            }
        }
        // Input gradient: dz · Wᵀ, for a 3x3 kernel the convolution of dz with
        // the kernel flipped and its inputs and outputs swapped.
        let Some((dx, accumulate)) = dx else { return };
        if k == 1 {
            dx[..rows * cin]
                .par_chunks_mut(chunk_rows * cin)
                .zip(dz.par_chunks(chunk_rows * cout))
                .for_each(|(o, di)| {
                    let r = di.len() / cout;
                    let (lhs, rhs) = (View::rows(di, cout), View::rows(&c.weight, cout).t());
                    gemm_views(r, cin, cout, o, accumulate, lhs, rhs, false);
                });
            return;
        }
        let flipped = sized(self.flipped, wlen);
        for kk in 0..9 {
            for o in 0..cout {
                for i in 0..cin {
                    flipped[(kk * cout + o) * cin + i] = c.weight[((8 - kk) * cin + i) * cout + o];
                }
            }
        }
        conv_product(
            unfold,
            3,
            cout,
            cin,
            flipped,
            dz,
            chunk_rows,
            &mut dx[..rows * cin],
            accumulate,
        );
    }
}

/// `out = x W + b` over `n` rows (ReLU'd with `relu`).
fn dense_forward(l: &Dense, n: usize, x: &[f32], out: &mut Vec<f32>, relu: bool) {
    let out = sized(out, n * l.outputs);
    let (lhs, rhs) = (
        View::rows(&x[..n * l.inputs], l.inputs),
        View::rows(&l.weight, l.outputs),
    );
    gemm_views(n, l.outputs, l.inputs, out, false, lhs, rhs, true);
    for row in out.chunks_exact_mut(l.outputs) {
        for (v, b) in row.iter_mut().zip(&l.bias) {
            *v = if relu { (*v + b).max(0.0) } else { *v + b };
        }
    }
}

/// Gradients of `y = x W + b` given `dy`: weight and bias into `g`, and
/// `dx = dy Wᵀ` into `dx` (added to what is there with `accumulate`).
fn dense_backward(
    l: &Dense,
    g: &mut Dense,
    n: usize,
    x: &[f32],
    dy: &[f32],
    dx: &mut Vec<f32>,
    accumulate: bool,
) {
    let (inp, outp) = (l.inputs, l.outputs);
    let x = View::rows(&x[..n * inp], inp);
    let dyv = View::rows(&dy[..n * outp], outp);
    gemm_views(inp, outp, n, &mut g.weight, false, x.t(), dyv, true);
    g.bias.iter_mut().for_each(|b| *b = 0.0);
    for row in dy[..n * outp].chunks_exact(outp) {
        for (b, v) in g.bias.iter_mut().zip(row) {
            *b += v;
        }
    }
    let dx = sized(dx, n * inp);
    gemm_views(
        n,
        inp,
        outp,
        dx,
        accumulate,
        dyv,
        View::rows(&l.weight, outp).t(),
        true,
    );
}

/// Zeroes the gradient where a ReLU's output was not positive.
fn relu_mask(d: &mut [f32], out: &[f32]) {
    for (d, &o) in d.iter_mut().zip(out) {
        if o <= 0.0 {
            *d = 0.0;
        }
    }
}

/// Cross-entropy `-Σ t log softmax(l)` of one row, with its gradient
/// `scale * (softmax(l) Σt - t)` written to `d`; returns (loss, entropy of
/// the softmax).
fn softmax_cross_entropy(l: &[f32], t: &[f32], d: &mut [f32], scale: f32) -> (f64, f64) {
    let max = l.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let sum: f32 = l.iter().map(|&v| (v - max).exp()).sum();
    let lse = max + sum.ln();
    let t_sum: f32 = t.iter().sum();
    let (mut loss, mut entropy) = (0.0f64, 0.0f64);
    for ((d, &lv), &tv) in d.iter_mut().zip(l).zip(t) {
        let log_p = lv - lse;
        let p = log_p.exp();
        loss -= f64::from(tv * log_p);
        entropy -= f64::from(p * log_p);
        *d = scale * (p * t_sum - tv);
    }
    (loss, entropy)
}

/// [`softmax_cross_entropy`] with the softmax over the entries `legal`
/// only (an index may repeat: moves sharing it); every other entry gets no
/// gradient.  Returns (loss, entropy of the legal softmax).
fn legal_softmax_cross_entropy(
    l: &[f32],
    t: &[f32],
    legal: &[u32],
    d: &mut [f32],
    scale: f32,
) -> (f64, f64) {
    // `d` marks the legal entries while the sums are taken: 1.0 = legal,
    // 2.0 = counted.  A gradient is `scale * (p - t)` with `scale <= 1`, so
    // it never equals a mark.
    const LEGAL: f32 = 1.0;
    const COUNTED: f32 = 2.0;
    d.fill(0.0);
    let mut max = f32::NEG_INFINITY;
    for &k in legal {
        d[k as usize] = LEGAL;
        max = max.max(l[k as usize]);
    }
    let (mut sum, mut t_sum) = (0.0f32, 0.0f32);
    for &k in legal {
        let k = k as usize;
        if d[k] == LEGAL {
            d[k] = COUNTED;
            sum += (l[k] - max).exp();
            t_sum += t[k];
        }
    }
    let lse = max + sum.ln();
    let (mut loss, mut entropy) = (0.0f64, 0.0f64);
    for &k in legal {
        let k = k as usize;
        if d[k] != COUNTED {
            continue; // a repeated index, already done
        }
        let log_p = l[k] - lse;
        let p = log_p.exp();
        loss -= f64::from(t[k] * log_p);
        entropy -= f64::from(p * log_p);
        d[k] = scale * (p * t_sum - t[k]);
    }
    (loss, entropy)
}

/// Index of the first largest value.
fn first_max(v: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Encoding;
    use crate::kernels::infer::tests::{random_net, random_variant_net};
    use crate::kernels::layers::floats;
    use crate::train::{TrainBatch, burn_losses};
    use crate::{NetConfig, NetNorm};
    use burn::module::{Module, ModuleVisitor, Param};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use tammi_rules::{Position, Variant};

    /// `n` samples from random games, with random move targets, W/D/L
    /// targets (some soft) and plies left.
    fn random_batch(variant: Variant, n: usize, moves_left: bool, seed: u64) -> TrainBatch {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut batch = TrainBatch::new(variant);
        let mut pos = Position::start(variant);
        while batch.len() < n {
            let moves = pos.legal_moves();
            if moves.is_empty() || rng.random_bool(0.03) {
                pos = Position::start(variant);
                continue;
            }
            let mut targets: Vec<f32> = moves.iter().map(|_| rng.random::<f32>()).collect();
            let sum: f32 = targets.iter().sum();
            targets.iter_mut().for_each(|t| *t /= sum);
            let wdl = match rng.random_range(0..4) {
                0 => [1.0, 0.0, 0.0],
                1 => [0.0, 1.0, 0.0],
                2 => [0.0, 0.0, 1.0],
                _ => [0.2, 0.5, 0.3],
            };
            let ml = moves_left.then(|| rng.random_range(0.0..150.0f32));
            let np = rng.random_range(0..30);
            batch
                .push(&pos, np, rng.random_range(0..3), &moves, &targets, wdl, ml)
                .unwrap();
            let m = moves[rng.random_range(0..moves.len())];
            pos.play_unchecked(&m);
        }
        batch
    }

    /// Compares the gradients of two `GradientsParams` parameter by parameter;
    /// the first parameter that differs is kept in `failure`.
    struct CompareGrads<'a> {
        want: &'a GradientsParams,
        got: &'a GradientsParams,
        compared: usize,
        failure: Option<String>,
    }

    impl ModuleVisitor for CompareGrads<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let (want, got) = match (self.want.get::<D>(param.id), self.got.get::<D>(param.id)) {
                (None, None) => return,
                (Some(w), Some(g)) => (floats(w).unwrap(), floats(g).unwrap()),
                (w, g) => panic!(
                    "parameter {:?} of shape {:?}: burn has a gradient: {}, kernels: {}",
                    param.id,
                    param.val().dims(),
                    w.is_some(),
                    g.is_some()
                ),
            };
            assert_eq!(want.len(), got.len());
            let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let diff = want
                .iter()
                .zip(&got)
                .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
            if diff > 2e-3 * scale.max(1e-4) && self.failure.is_none() {
                self.failure = Some(format!(
                    "gradient of {:?} (shape {:?}) differs by {diff} (largest {scale})",
                    param.id,
                    param.val().dims()
                ));
            }
            self.compared += 1;
        }
    }

    fn close(a: f32, b: f32, what: &str) {
        assert!(
            (a - b).abs() <= 1e-4 * a.abs().max(1.0),
            "{what}: burn {a}, kernels {b}"
        );
    }

    /// Loss, every gradient and the running statistics of one batch, from
    /// the kernels and from burn's autodiff, on a random net.
    ///
    /// On about one random net in 200 the gradients of the first layers
    /// differ by a few percent, the same way on every rerun of that net
    /// (each side is deterministic): identical patches of empty squares give
    /// many equal pre-activations, and where those fall within rounding of
    /// zero the two implementations' ReLUs take different sides for all of
    /// them at once.  Such a net is redrawn; an error in the kernels fails on
    /// every net, so the test fails when three nets in a row disagree.
    fn compare(net: &NetConfig, variant: Variant, n: usize, moves_left: bool) {
        compare_with(net, variant, n, moves_left, PolicySoftmax::All);
    }

    fn compare_with(
        net: &NetConfig,
        variant: Variant,
        n: usize,
        moves_left: bool,
        policy_softmax: PolicySoftmax,
    ) {
        let mut failures = Vec::new();
        for _ in 0..3 {
            match compare_once(net, variant, n, moves_left, policy_softmax) {
                Ok(()) => return,
                Err(e) => failures.push(e),
            }
        }
        panic!("gradients differ from burn's on three random nets: {failures:#?}");
    }

    fn compare_once(
        net: &NetConfig,
        variant: Variant,
        n: usize,
        moves_left: bool,
        policy_softmax: PolicySoftmax,
    ) -> Result<(), String> {
        let device = Device::flex();
        let e = Encoding::new(variant);
        let pv = random_variant_net(net, variant, &device);
        let batch = random_batch(variant, n, moves_left, n as u64);
        let config = TrainConfig {
            weight_decay: 0.0,
            value_weight: 0.7,
            moves_left_weight: 0.3,
            policy_softmax,
        };
        let ad = device.clone().autodiff();
        let burn_net = pv.valid().fork(&ad).train();
        let (total, want) = burn_losses(&burn_net, &batch, &ad, &config).unwrap();
        let burn_grads = GradientsParams::from_grads(total.backward(), &burn_net);

        let kernel_net = pv.valid();
        let mut k = KernelTrainer::new(&kernel_net, e.planes(), e.rows()).unwrap();
        let got = k
            .forward_backward(
                n,
                &batch.inputs,
                &batch.policy,
                &batch.wdl,
                &batch.moves_left,
                (&batch.legal, &batch.legal_ends),
                &config,
            )
            .unwrap();
        close(want.total, got.total, "total loss");
        close(want.policy, got.policy, "policy loss");
        close(want.value, got.value, "value loss");
        close(want.moves_left, got.moves_left, "moves-left loss");
        close(want.policy_entropy, got.policy_entropy, "entropy");
        assert_eq!(want.value_accuracy, got.value_accuracy);
        let grads = k.gradients(&device);
        let mut cmp = CompareGrads {
            want: &burn_grads,
            got: &grads,
            compared: 0,
            failure: None,
        };
        kernel_net.visit(&mut cmp);
        if let Some(failure) = cmp.failure {
            return Err(failure);
        }
        assert_eq!(
            cmp.compared,
            grads.len(),
            "every kernel gradient was compared"
        );
        assert!(cmp.compared > 10);

        // Running statistics move the same way.
        k.update_running_stats(&kernel_net).unwrap();
        let (a, b) = (burn_net.valid(), kernel_net.valid());
        let (ra, rb) = (a.resnet.as_ref().unwrap(), b.resnet.as_ref().unwrap());
        for (x, y) in batch_norms(ra).into_iter().zip(batch_norms(rb)) {
            if let (Some(x), Some(y)) = (x, y) {
                for (s, t) in [
                    (&x.running_mean, &y.running_mean),
                    (&x.running_var, &y.running_var),
                ] {
                    let (s, t) = (floats(s.value()).unwrap(), floats(t.value()).unwrap());
                    for (u, v) in s.iter().zip(&t) {
                        assert!(
                            (u - v).abs() <= 1e-4 * u.abs().max(1.0),
                            "running stats {u} vs {v}"
                        );
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn batch_norm_resnet_gradients_match_burn() {
        // 21 positions: one full chunk and a partial one.
        compare(&NetConfig::resnet(2, 8), Variant::English, 21, false);
    }

    #[test]
    fn normalisation_free_resnet_with_moves_left_matches_burn() {
        let net = NetConfig {
            norm: NetNorm::None,
            moves_left_head: true,
            ..NetConfig::resnet(2, 8)
        };
        compare(&net, Variant::English, 19, true);
    }

    #[test]
    fn moves_left_head_without_targets_gets_no_gradient() {
        let net = NetConfig {
            moves_left_head: true,
            ..NetConfig::resnet(1, 8)
        };
        compare(&net, Variant::English, 9, false);
        compare(&net, Variant::English, 9, true);
    }

    #[test]
    fn policy_loss_over_the_legal_moves_matches_burn() {
        // Huffing: captures and removals share the policy with quiet moves.
        let net = NetConfig::resnet(2, 8);
        compare_with(&net, Variant::English, 21, false, PolicySoftmax::Legal);
        compare_with(
            &net,
            Variant::FinnishHuffing,
            13,
            false,
            PolicySoftmax::Legal,
        );
    }

    #[test]
    fn international_board_matches_burn() {
        compare(&NetConfig::resnet(1, 8), Variant::International, 6, false);
    }

    #[test]
    fn convolutional_policy_head_gradients_match_burn() {
        let conv = |net: NetConfig| NetConfig {
            policy_head: crate::PolicyHead::Conv,
            ..net
        };
        compare(&conv(NetConfig::resnet(2, 8)), Variant::English, 21, false);
        let free = NetConfig {
            norm: NetNorm::None,
            ..NetConfig::resnet(1, 8)
        };
        compare(&conv(free), Variant::Canadian, 3, false);
        // Huffing: the capture block's planes, and the legal-move softmax.
        compare_with(
            &conv(NetConfig::resnet(1, 8)),
            Variant::FinnishHuffing,
            7,
            false,
            PolicySoftmax::Legal,
        );
    }

    #[test]
    fn a_net_the_kernels_cannot_train_is_an_error_not_a_fallback() {
        let e = Encoding::new(Variant::English);
        let device = Device::flex();
        let mut pv = random_net(&NetConfig::resnet(1, 8), e.rows(), e.policy_size(), &device);
        pv.resnet.as_mut().unwrap().stem.conv.dilation = [2, 2];
        let err = KernelTrainer::new(&pv, e.planes(), e.rows()).err();
        assert!(
            matches!(&err, Some(ModelError::UnsupportedNet(m)) if m.contains("dilation")),
            "{err:?}"
        );
        let mlp = random_net(&NetConfig::mlp(1, 16), e.rows(), e.policy_size(), &device);
        let err = KernelTrainer::new(&mlp, e.planes(), e.rows()).err();
        assert!(
            matches!(err, Some(ModelError::UnsupportedNet(_))),
            "{err:?}"
        );
    }

    #[test]
    fn gradients_do_not_depend_on_the_thread_count() {
        let device = Device::flex();
        let e = Encoding::new(Variant::English);
        let pv = random_net(
            &NetConfig::resnet(2, 16),
            e.rows(),
            e.policy_size(),
            &device,
        );
        let batch = random_batch(Variant::English, 40, false, 3);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut k = KernelTrainer::new(&pv, e.planes(), e.rows()).unwrap();
                let l = k
                    .forward_backward(
                        40,
                        &batch.inputs,
                        &batch.policy,
                        &batch.wdl,
                        &[],
                        (&batch.legal, &batch.legal_ends),
                        &TrainConfig::default(),
                    )
                    .unwrap();
                (
                    l,
                    resnet(&k.grads).blocks[0].a.weight.clone(),
                    resnet(&k.grads).policy_dense().unwrap().weight.clone(),
                )
            })
        };
        let one = run(1);
        let three = run(3);
        assert_eq!(one.0, three.0);
        assert!(one.1 == three.1 && one.2 == three.2, "gradients differ");
        assert!(one.1.iter().any(|&g| g != 0.0));
    }
}
