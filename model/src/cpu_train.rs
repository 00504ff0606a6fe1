//! tammi's own CPU training kernels for the ResNet policy-value net.
//!
//! burn-flex's autodiff spends most of a training step outside the
//! arithmetic: unfolding and re-folding convolutions tensor by tensor,
//! zero-filled temporaries, separate passes for batch norm and ReLU.
//! [`KernelTrainer`] computes the loss and every parameter gradient of a batch
//! itself, in the layout of the inference kernels ([`crate::cpu`]):
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

use crate::ModelError;
use crate::cpu::{
    Dense, Unfold3x3, View, dense_from, floats, gemm_views, kernel_layout_weight, reorder_rows,
    sized,
};
use crate::net::{ConvBn, MOVES_LEFT_SCALE, PolicyValueNet, ResNetBody};
use crate::train::{Losses, TrainConfig};
use burn::nn::Linear;
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

/// A convolution and its batch norm (or bias), or their gradients, in the
/// kernels' layout: `weight` is row-major `[kernel² * inputs, outputs]`, row
/// `(ky * kernel + kx) * inputs + i`.
#[derive(Clone, Debug)]
struct ConvParams {
    kernel: usize,
    inputs: usize,
    outputs: usize,
    weight: Vec<f32>,
    /// The convolution's bias (nets without normalisation).
    bias: Option<Vec<f32>>,
    /// Batch norm's scale and shift.
    gamma: Option<Vec<f32>>,
    beta: Option<Vec<f32>>,
    epsilon: f32,
}

/// Every trainable parameter of a ResNet, or its gradient.
#[derive(Clone, Debug)]
struct Params {
    /// Stem, then each block's two convolutions, then the policy and the
    /// value head's 1x1 convolutions.
    convs: Vec<ConvParams>,
    /// Each block's SkipInit scale (nets without normalisation).
    scales: Vec<Option<f32>>,
    /// Rows permuted to channels-last features (`square * channels + c`).
    policy_fc: Dense,
    /// Rows permuted like `policy_fc`.
    value_fc1: Dense,
    value_fc2: Dense,
    moves_left_fc: Option<Dense>,
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

/// Activations and gradient buffers, kept between steps.
#[derive(Default)]
struct Workspace {
    input: Vec<f32>,
    traces: Vec<ConvTrace>,
    policy_logits: Vec<f32>,
    hidden: Vec<f32>,
    wdl_logits: Vec<f32>,
    moves_left: Vec<f32>,
    d_policy: Vec<f32>,
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
    area: usize,
    unfold: Unfold3x3,
    params: Params,
    grads: Params,
    ws: Workspace,
    /// Whether the last batch trained the moves-left head.
    trained_moves_left: bool,
}

/// The ResNet's convolutions in [`Params::convs`] order.
fn convs_of(r: &ResNetBody) -> Vec<&ConvBn> {
    let mut convs = vec![&r.stem];
    for b in &r.blocks {
        convs.push(&b.a);
        convs.push(&b.b);
    }
    convs.push(&r.policy_conv);
    convs.push(&r.value_conv);
    convs
}

fn resnet(net: &PolicyValueNet) -> Result<&ResNetBody, ModelError> {
    net.resnet
        .as_ref()
        .ok_or_else(|| ModelError::Backend("the CPU training kernels need a ResNet".into()))
}

fn conv_params(cb: &ConvBn) -> Result<ConvParams, ModelError> {
    let (weight, k, inputs, outputs) = kernel_layout_weight(cb)?;
    let bias = cb.conv.bias.as_ref().map(|b| floats(b.val())).transpose()?;
    let (gamma, beta, epsilon) = match &cb.bn {
        Some(bn) => (
            Some(floats(bn.gamma.val())?),
            Some(floats(bn.beta.val())?),
            bn.epsilon as f32,
        ),
        None => (None, None, 0.0),
    };
    Ok(ConvParams {
        kernel: k,
        inputs,
        outputs,
        weight,
        bias,
        gamma,
        beta,
        epsilon,
    })
}

/// burn's layout `[outputs, inputs, k, k]` of a kernel-layout weight.
fn burn_conv_weight(c: &ConvParams) -> Vec<f32> {
    let kk_all = c.kernel * c.kernel;
    let mut w = vec![0.0; c.weight.len()];
    for o in 0..c.outputs {
        for i in 0..c.inputs {
            for kk in 0..kk_all {
                w[(o * c.inputs + i) * kk_all + kk] = c.weight[(kk * c.inputs + i) * c.outputs + o];
            }
        }
    }
    w
}

fn dense_params(l: &Linear, channels_last: Option<(usize, usize)>) -> Result<Dense, ModelError> {
    let d = dense_from(l)?;
    Ok(match channels_last {
        Some((channels, area)) => Dense {
            weight: reorder_rows(&d.weight, d.outputs, channels, area, false),
            ..d
        },
        None => d,
    })
}

impl Params {
    fn from_net(net: &PolicyValueNet, area: usize) -> Result<Params, ModelError> {
        let r = resnet(net)?;
        let convs = convs_of(r)
            .into_iter()
            .map(conv_params)
            .collect::<Result<Vec<_>, _>>()?;
        let scales = r
            .blocks
            .iter()
            .map(|b| {
                b.skip_scale
                    .as_ref()
                    .map(|s| floats(s.val()).map(|v| v[0]))
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let pc = r.policy_conv.conv.weight.dims()[0];
        let vc = r.value_conv.conv.weight.dims()[0];
        Ok(Params {
            convs,
            scales,
            policy_fc: dense_params(&r.policy_fc, Some((pc, area)))?,
            value_fc1: dense_params(&net.value_fc1, Some((vc, area)))?,
            value_fc2: dense_params(&net.value_fc2, None)?,
            moves_left_fc: net
                .moves_left_fc
                .as_ref()
                .map(|l| dense_params(l, None))
                .transpose()?,
        })
    }

    fn blocks(&self) -> usize {
        self.scales.len()
    }
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
    /// input planes.
    pub(crate) fn new(
        net: &PolicyValueNet,
        planes: usize,
        board: usize,
    ) -> Result<KernelTrainer, ModelError> {
        let area = board * board;
        let params = Params::from_net(net, area)?;
        let traces = (0..params.convs.len())
            .map(|_| ConvTrace::default())
            .collect();
        Ok(KernelTrainer {
            planes,
            area,
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
        let params = Params::from_net(net, self.area)?;
        if params.convs.len() != self.params.convs.len()
            || params.policy_fc.weight.len() != self.params.policy_fc.weight.len()
        {
            return Err(ModelError::Backend(
                "the net changed shape under the training kernels".into(),
            ));
        }
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
    pub(crate) fn forward_backward(
        &mut self,
        n: usize,
        inputs: &[f32],
        policy_targets: &[f32],
        wdl_targets: &[f32],
        moves_left_targets: &[f32],
        config: &TrainConfig,
    ) -> Result<Losses, ModelError> {
        let policy = self.params.policy_fc.outputs;
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
        let losses = self.output_gradients(n, policy_targets, wdl_targets, ml, config);
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
        let p = &self.params;
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
        let blocks = p.blocks();
        let unfold = &self.unfold;
        let (stem, rest) = ws.traces.split_first_mut().expect("a stem");
        conv_layer_forward(unfold, &p.convs[0], &ws.input, rows, chunk_rows, stem, None);
        let mut prev: &ConvTrace = stem;
        let (block_traces, head_traces) = rest.split_at_mut(2 * blocks);
        for (i, pair) in block_traces.chunks_exact_mut(2).enumerate() {
            let (ta, tb) = pair.split_at_mut(1);
            let (ta, tb) = (&mut ta[0], &mut tb[0]);
            conv_layer_forward(
                unfold,
                &p.convs[1 + 2 * i],
                &prev.out,
                rows,
                chunk_rows,
                ta,
                None,
            );
            let skip = Skip {
                input: &prev.out,
                scale: p.scales[i],
            };
            conv_layer_forward(
                unfold,
                &p.convs[2 + 2 * i],
                &ta.out,
                rows,
                chunk_rows,
                tb,
                Some(skip),
            );
            prev = tb;
        }
        let body = &prev.out;
        let (tp, tv) = head_traces.split_at_mut(1);
        let ip = 1 + 2 * blocks;
        conv_layer_forward(
            unfold,
            &p.convs[ip],
            body,
            rows,
            chunk_rows,
            &mut tp[0],
            None,
        );
        conv_layer_forward(
            unfold,
            &p.convs[ip + 1],
            body,
            rows,
            chunk_rows,
            &mut tv[0],
            None,
        );
        let pf = &tp[0].out;
        let vf = &tv[0].out;
        dense_forward(&p.policy_fc, n, pf, &mut ws.policy_logits, false);
        dense_forward(&p.value_fc1, n, vf, &mut ws.hidden, true);
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
        config: &TrainConfig,
    ) -> Losses {
        let policy = self.params.policy_fc.outputs;
        let ws = &mut self.ws;
        let inv_n = 1.0 / n as f32;
        // Policy: cross-entropy with the softmax; per row (loss, entropy).
        let d_policy = sized(&mut ws.d_policy, n * policy);
        let per_row: Vec<(f64, f64)> = d_policy
            .par_chunks_mut(policy * CHUNK_POSITIONS)
            .zip(ws.policy_logits[..n * policy].par_chunks(policy * CHUNK_POSITIONS))
            .zip(policy_targets.par_chunks(policy * CHUNK_POSITIONS))
            .flat_map_iter(|((d, l), t)| {
                d.chunks_exact_mut(policy)
                    .zip(l.chunks_exact(policy))
                    .zip(t.chunks_exact(policy))
                    .map(|((d, l), t)| softmax_cross_entropy(l, t, d, inv_n))
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
        let g = &mut self.grads;
        let ws = &mut self.ws;
        let blocks = p.blocks();
        let ip = 1 + 2 * blocks;
        let width = p.convs[0].outputs;
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
            &mut g.value_fc2,
            n,
            &ws.hidden,
            &ws.d_wdl,
            d_hidden,
            false,
        );
        if let (Some(fc), Some(gfc), true) = (
            &p.moves_left_fc,
            &mut g.moves_left_fc,
            self.trained_moves_left,
        ) {
            dense_backward(fc, gfc, n, &ws.hidden, &ws.d_moves_left, d_hidden, true);
        }
        relu_mask(&mut d_hidden[..n * p.value_fc1.outputs], &ws.hidden);
        let (body_traces, head_traces) = ws.traces.split_at_mut(ip);
        let body_out = &body_traces[ip - 1].out[..rows * width];
        let d_body = sized(&mut ws.d_body, rows * width);
        // The heads' 1x1 convolutions; their input gradients add up in d_body.
        let (tp, tv) = (&head_traces[0], &head_traces[1]);
        let d_head = &mut ws.d_head;
        dense_backward(
            &p.value_fc1,
            &mut g.value_fc1,
            n,
            &tv.out,
            d_hidden,
            d_head,
            false,
        );
        let dv = &mut d_head[..rows * p.convs[ip + 1].outputs];
        relu_mask(dv, &tv.out);
        let (c, gc) = (&p.convs[ip + 1], &mut g.convs[ip + 1]);
        bw.conv_layer(c, gc, tv, body_out, dv, Some((&mut *d_body, false)));
        dense_backward(
            &p.policy_fc,
            &mut g.policy_fc,
            n,
            &tp.out,
            &ws.d_policy,
            d_head,
            false,
        );
        let dp = &mut d_head[..rows * p.convs[ip].outputs];
        relu_mask(dp, &tp.out);
        let (c, gc) = (&p.convs[ip], &mut g.convs[ip]);
        bw.conv_layer(c, gc, tp, body_out, dp, Some((&mut *d_body, true)));
        // Residual blocks, last first; d_body holds the gradient with
        // respect to the block's output.
        for i in (0..blocks).rev() {
            let (ia, ib) = (1 + 2 * i, 2 + 2 * i);
            let (ta, tb) = (&body_traces[ia], &body_traces[ib]);
            let block_in = &body_traces[ia - 1].out[..rows * width];
            // Through the final ReLU; this is also the skip path's gradient.
            relu_mask(d_body, &tb.out);
            let db = sized(&mut ws.d_branch, rows * width);
            match p.scales[i] {
                Some(s) => {
                    // out = relu(s * branch + x): the branch is `pre` (no norm).
                    let ds: f64 = d_body
                        .iter()
                        .zip(&tb.pre)
                        .map(|(&d, &y)| f64::from(d) * f64::from(y))
                        .sum();
                    g.scales[i] = Some(ds as f32);
                    for (o, &d) in db.iter_mut().zip(d_body.iter()) {
                        *o = d * s;
                    }
                }
                None => db.copy_from_slice(d_body),
            }
            let d_mid = sized(&mut ws.d_mid, rows * p.convs[ia].outputs);
            let (c, gc) = (&p.convs[ib], &mut g.convs[ib]);
            bw.conv_layer(c, gc, tb, &ta.out, db, Some((&mut *d_mid, false)));
            relu_mask(d_mid, &ta.out);
            let (c, gc) = (&p.convs[ia], &mut g.convs[ia]);
            bw.conv_layer(c, gc, ta, block_in, d_mid, Some((&mut *d_body, true)));
        }
        relu_mask(d_body, &body_traces[0].out);
        let (c, gc) = (&p.convs[0], &mut g.convs[0]);
        bw.conv_layer(c, gc, &body_traces[0], &ws.input, d_body, None);
    }

    /// The gradients of the last [`KernelTrainer::forward_backward`] as
    /// burn tensors on `device`, keyed by `net`'s parameters (the net the
    /// weights were loaded from).  The moves-left head gets none when the
    /// batch had no moves-left targets, as with burn's autodiff.
    pub(crate) fn gradients(
        &self,
        net: &PolicyValueNet,
        device: &Device,
    ) -> Result<GradientsParams, ModelError> {
        let r = resnet(net)?;
        let g = &self.grads;
        let mut grads = GradientsParams::new();
        let vector =
            |v: &[f32]| Tensor::<1>::from_data(TensorData::new(v.to_vec(), [v.len()]), device);
        for (cb, gc) in convs_of(r).into_iter().zip(&g.convs) {
            let shape = [gc.outputs, gc.inputs, gc.kernel, gc.kernel];
            let w = Tensor::<4>::from_data(TensorData::new(burn_conv_weight(gc), shape), device);
            grads.register(cb.conv.weight.id, w);
            if let (Some(b), Some(gb)) = (&cb.conv.bias, &gc.bias) {
                grads.register(b.id, vector(gb));
            }
            if let (Some(bn), Some(gg), Some(gb)) = (&cb.bn, &gc.gamma, &gc.beta) {
                grads.register(bn.gamma.id, vector(gg));
                grads.register(bn.beta.id, vector(gb));
            }
        }
        for (b, s) in r.blocks.iter().zip(&g.scales) {
            if let (Some(param), Some(s)) = (&b.skip_scale, s) {
                grads.register(param.id, vector(&[*s]));
            }
        }
        let area = self.area;
        let pc = r.policy_conv.conv.weight.dims()[0];
        let vc = r.value_conv.conv.weight.dims()[0];
        let mut dense = |l: &Linear, gl: &Dense, channels_last: Option<usize>| {
            let w = match channels_last {
                Some(c) => reorder_rows(&gl.weight, gl.outputs, c, area, true),
                None => gl.weight.clone(),
            };
            let w = Tensor::<2>::from_data(TensorData::new(w, [gl.inputs, gl.outputs]), device);
            grads.register(l.weight.id, w);
            if let Some(b) = &l.bias {
                grads.register(b.id, vector(&gl.bias));
            }
        };
        dense(&r.policy_fc, &g.policy_fc, Some(pc));
        dense(&net.value_fc1, &g.value_fc1, Some(vc));
        dense(&net.value_fc2, &g.value_fc2, None);
        if let (Some(l), Some(gl), true) = (
            &net.moves_left_fc,
            &g.moves_left_fc,
            self.trained_moves_left,
        ) {
            dense(l, gl, None);
        }
        Ok(grads)
    }

    /// Moves `net`'s batch-norm running averages toward the last batch's
    /// statistics, as a burn training forward pass does.
    pub(crate) fn update_running_stats(&self, net: &PolicyValueNet) -> Result<(), ModelError> {
        let r = resnet(net)?;
        for (cb, t) in convs_of(r).into_iter().zip(&self.ws.traces) {
            let Some(bn) = &cb.bn else { continue };
            let m = bn.momentum as f32;
            for (state, batch) in [(&bn.running_mean, &t.mean), (&bn.running_var, &t.var)] {
                let old = state.value_sync();
                let device = old.device();
                let new: Vec<f32> = floats(old)?
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
    c: &ConvParams,
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
    let (a, b): (Vec<f32>, Vec<f32>) = match (&c.gamma, &c.beta) {
        (Some(gamma), Some(beta)) => {
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
                .map(|&v| (1.0 / (v + f64::from(c.epsilon)).sqrt()) as f32)
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
            (gamma.clone(), beta.clone())
        }
        _ => {
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
        c: &ConvParams,
        g: &mut ConvParams,
        t: &ConvTrace,
        x: &[f32],
        d: &mut [f32],
        dx: Option<(&mut [f32], bool)>,
    ) {
        let (unfold, chunk_rows) = (self.unfold, self.chunk_rows);
        let (cin, cout, k) = (c.inputs, c.outputs, c.kernel);
        let rows = d.len() / cout;
        let xhat = &t.pre[..rows * cout];
        match &c.gamma {
            Some(gamma) => {
                let d_beta = column_sums(d, d, cout, chunk_rows, |v, _, _| f64::from(v));
                let d_gamma = column_sums(d, xhat, cout, chunk_rows, |v, xh, _| {
                    f64::from(v) * f64::from(xh)
                });
                let inv_count = 1.0 / rows as f64;
                let mean_d: Vec<f32> = d_beta.iter().map(|s| (s * inv_count) as f32).collect();
                let mean_dx: Vec<f32> = d_gamma.iter().map(|s| (s * inv_count) as f32).collect();
                let scale: Vec<f32> = (0..cout).map(|j| gamma[j] * t.inv_std[j]).collect();
                d.par_chunks_mut(chunk_rows * cout)
                    .zip(xhat.par_chunks(chunk_rows * cout))
                    .for_each(|(dc, xc)| {
                        for (dr, xr) in dc.chunks_exact_mut(cout).zip(xc.chunks_exact(cout)) {
                            for j in 0..cout {
                                dr[j] = scale[j] * (dr[j] - mean_d[j] - xr[j] * mean_dx[j]);
                            }
                        }
                    });
                g.gamma = Some(d_gamma.iter().map(|&v| v as f32).collect());
                g.beta = Some(d_beta.iter().map(|&v| v as f32).collect());
            }
            None => {
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
    use crate::cpu::tests::random_net;
    use crate::encoding::Encoding;
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

    /// Compares the gradients of two `GradientsParams` parameter by parameter.
    struct CompareGrads<'a> {
        want: &'a GradientsParams,
        got: &'a GradientsParams,
        compared: usize,
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
            assert!(
                diff <= 2e-3 * scale.max(1e-4),
                "gradient of {:?} (shape {:?}) differs by {diff} (largest {scale})",
                param.id,
                param.val().dims()
            );
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
    /// the kernels and from burn's autodiff.
    fn compare(net: &NetConfig, variant: Variant, n: usize, moves_left: bool) {
        let device = Device::flex();
        let e = Encoding::new(variant);
        let pv = random_net(net, e.rows(), e.policy_size(), &device);
        let batch = random_batch(variant, n, moves_left, n as u64);
        let config = TrainConfig {
            weight_decay: 0.0,
            value_weight: 0.7,
            moves_left_weight: 0.3,
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
                &config,
            )
            .unwrap();
        close(want.total, got.total, "total loss");
        close(want.policy, got.policy, "policy loss");
        close(want.value, got.value, "value loss");
        close(want.moves_left, got.moves_left, "moves-left loss");
        close(want.policy_entropy, got.policy_entropy, "entropy");
        assert_eq!(want.value_accuracy, got.value_accuracy);
        let grads = k.gradients(&kernel_net, &device).unwrap();
        let mut cmp = CompareGrads {
            want: &burn_grads,
            got: &grads,
            compared: 0,
        };
        kernel_net.visit(&mut cmp);
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
        for (ca, cb) in convs_of(ra).into_iter().zip(convs_of(rb)) {
            if let (Some(x), Some(y)) = (&ca.bn, &cb.bn) {
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
    fn international_board_matches_burn() {
        compare(&NetConfig::resnet(1, 8), Variant::International, 6, false);
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
                        &TrainConfig::default(),
                    )
                    .unwrap();
                (
                    l,
                    k.grads.convs[1].weight.clone(),
                    k.grads.policy_fc.weight.clone(),
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
