//! Batched evaluation behind a plain-Rust interface.
//!
//! **Value convention** (shared by all of tammi's search code): `wdl` is
//! `[win, draw, loss]` for the *side to move* of the evaluated position, and
//! [`EvalResult::value`] is `win - loss` in `[-1, 1]`, also for the side to move.

use crate::encoding::{Encoding, policy_indices};
use crate::kernels::{CpuNet, NetPlan};
use crate::net::{MOVES_LEFT_SCALE, PolicyValueNet};
use crate::{ModelError, NetConfig};
use burn::prelude::*;
use burn::tensor::activation::softmax;
use std::cell::RefCell;
use std::sync::Arc;
use tammi_rules::{Move, Position, Variant};

/// One position to evaluate, with its legal moves and the game state the
/// encoding needs.
#[derive(Clone, Copy, Debug)]
pub struct EvalRequest<'a> {
    /// The position; its variant must be the evaluator's.
    pub position: &'a Position,
    /// Its legal moves; the result's policy follows this order.
    pub moves: &'a [Move],
    /// Plies since the last man move or capture ([`tammi_rules::Game::no_progress_plies`]).
    pub no_progress: u16,
    /// How often the position occurred before ([`tammi_rules::Game::repetition_count`]).
    pub repetitions: u32,
}

/// What an evaluator says about one position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalResult {
    /// Probability of each legal move, in the order of the request's moves;
    /// sums to 1 (empty when there are no legal moves).
    pub policy: Vec<f32>,
    /// `[win, draw, loss]` for the side to move; sums to 1.
    pub wdl: [f32; 3],
    /// Predicted plies left in the game, when the net has a moves-left head.
    pub moves_left: Option<f32>,
}

impl EvalResult {
    /// Scalar value for the side to move: `win - loss`, in `[-1, 1]`.
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }
}

/// Evaluates batches of positions.  Implementations are thread-safe: several
/// self-play threads may call [`Evaluator::evaluate`] at once.
pub trait Evaluator: Send + Sync {
    /// The variant whose positions this evaluator understands.
    fn variant(&self) -> Variant;

    /// Evaluates every request; `out` is resized to `batch.len()` and its
    /// entries overwritten (their vectors are reused, so a caller that keeps
    /// `out` between calls avoids allocating).
    fn evaluate(
        &self,
        batch: &[EvalRequest<'_>],
        out: &mut Vec<EvalResult>,
    ) -> Result<(), ModelError>;
}

fn check_variant(variant: Variant, batch: &[EvalRequest<'_>]) -> Result<(), ModelError> {
    match batch.iter().find(|r| r.position.variant() != variant) {
        Some(r) => Err(ModelError::VariantMismatch {
            expected: variant,
            found: r.position.variant(),
        }),
        None => Ok(()),
    }
}

/// Uniform policy and a fixed W/D/L: the "network" of the first generation,
/// before any model is trained, and a cheap stand-in for tests.
#[derive(Clone, Copy, Debug)]
pub struct UniformEvaluator {
    variant: Variant,
    wdl: [f32; 3],
}

impl UniformEvaluator {
    /// Uniform policy and W/D/L `[1/3, 1/3, 1/3]` (value 0, no false confidence).
    pub fn new(variant: Variant) -> UniformEvaluator {
        UniformEvaluator {
            variant,
            wdl: [1.0 / 3.0; 3],
        }
    }

    /// The same with a chosen W/D/L (normalised to sum to 1; must be
    /// non-negative with a positive sum).
    pub fn with_wdl(variant: Variant, wdl: [f32; 3]) -> Result<UniformEvaluator, ModelError> {
        let sum: f32 = wdl.iter().sum();
        if wdl.iter().any(|x| !x.is_finite() || *x < 0.0) || sum <= 0.0 {
            return Err(ModelError::BadInput(format!(
                "W/D/L must be non-negative with a positive sum, not {wdl:?}"
            )));
        }
        Ok(UniformEvaluator {
            variant,
            wdl: wdl.map(|x| x / sum),
        })
    }
}

impl Evaluator for UniformEvaluator {
    fn variant(&self) -> Variant {
        self.variant
    }

    fn evaluate(
        &self,
        batch: &[EvalRequest<'_>],
        out: &mut Vec<EvalResult>,
    ) -> Result<(), ModelError> {
        check_variant(self.variant, batch)?;
        out.resize_with(batch.len(), EvalResult::default);
        for (r, o) in batch.iter().zip(out.iter_mut()) {
            let n = r.moves.len();
            o.policy.clear();
            o.policy.resize(n, 1.0 / n as f32);
            o.wdl = self.wdl;
            o.moves_left = None;
        }
        Ok(())
    }
}

/// Outputs of [`NetEvaluator::forward_raw`] for `n` positions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawOutput {
    /// Policy logits, `n * policy_size` (over the whole index space).
    pub policy: Vec<f32>,
    /// W/D/L probabilities, `n * 3`.
    pub wdl: Vec<f32>,
    /// Moves left in plies, `n`, when the net has the head.
    pub moves_left: Option<Vec<f32>>,
}

/// Which code runs a [`NetEvaluator`]'s forward passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InferenceEngine {
    /// tammi's own CPU kernels (batch norm folded, one matrix product per
    /// convolution, batch split across rayon's threads): the default on the
    /// `flex` CPU backend, several times faster there (BENCHMARKS.md).
    Kernels,
    /// burn's forward pass on the model's backend: the default on GPU
    /// backends, and the reference the kernels are tested against.
    Burn,
}

/// The network behind the [`Evaluator`] interface.  Cheap to clone (weights
/// are shared); obtain one from [`crate::Model::evaluator`].
///
/// One call runs one forward pass over the whole batch, split across rayon's
/// threads; calling it from several threads at once is safe and, for small
/// batches, keeps every core busy (see BENCHMARKS.md).
#[derive(Clone, Debug)]
pub struct NetEvaluator {
    net: PolicyValueNet,
    encoding: Encoding,
    device: Device,
    net_config: NetConfig,
    kernels: Option<Arc<CpuNet>>,
}

impl NetEvaluator {
    pub(crate) fn new(
        net: PolicyValueNet,
        encoding: Encoding,
        device: Device,
        net_config: NetConfig,
    ) -> NetEvaluator {
        NetEvaluator {
            net,
            encoding,
            device,
            net_config,
            kernels: None,
        }
    }

    /// The same evaluator running on `engine`.  Switching to the CPU kernels
    /// copies the weights once (from any backend).
    pub fn with_engine(mut self, engine: InferenceEngine) -> Result<NetEvaluator, ModelError> {
        self.kernels = match engine {
            InferenceEngine::Burn => None,
            InferenceEngine::Kernels => {
                let e = &self.encoding;
                let plan = NetPlan::read(&self.net, e.rows())?;
                Some(Arc::new(CpuNet::new(
                    &plan,
                    e.planes(),
                    e.rows(),
                    e.policy_size(),
                )))
            }
        };
        Ok(self)
    }

    /// The engine that runs this evaluator's forward passes.
    pub fn engine(&self) -> InferenceEngine {
        match self.kernels {
            Some(_) => InferenceEngine::Kernels,
            None => InferenceEngine::Burn,
        }
    }

    /// The net's shape.
    pub fn net_config(&self) -> &NetConfig {
        &self.net_config
    }

    /// Raw forward pass over already encoded inputs (`n * input_len` floats,
    /// `[n, planes, rows, cols]` row-major).  For benchmarks and exporters
    /// that check outputs.
    pub fn forward_raw(&self, inputs: &[f32]) -> Result<RawOutput, ModelError> {
        let mut raw = RawOutput::default();
        self.forward_into(inputs, &mut raw)?;
        Ok(raw)
    }

    /// [`NetEvaluator::forward_raw`] into existing vectors (the CPU kernels
    /// reuse their allocations; burn's path replaces them).
    fn forward_into(&self, inputs: &[f32], raw: &mut RawOutput) -> Result<(), ModelError> {
        let len = self.encoding.input_len();
        if inputs.is_empty() || !inputs.len().is_multiple_of(len) {
            return Err(ModelError::BadInput(format!(
                "{} input floats is not a positive multiple of {len}",
                inputs.len()
            )));
        }
        let n = inputs.len() / len;
        if let Some(k) = &self.kernels {
            raw.policy.resize(n * self.encoding.policy_size(), 0.0);
            raw.wdl.resize(n * 3, 0.0);
            let mut moves_left = raw.moves_left.take().unwrap_or_default();
            moves_left.resize(if k.has_moves_left() { n } else { 0 }, 0.0);
            k.forward(inputs, &mut raw.policy, &mut raw.wdl, &mut moves_left);
            raw.moves_left = k.has_moves_left().then_some(moves_left);
            return Ok(());
        }
        let e = &self.encoding;
        let x = Tensor::<4>::from_data(
            TensorData::new(inputs.to_vec(), [n, e.planes(), e.rows(), e.cols()]),
            &self.device,
        );
        let out = self.net.forward(x);
        let to_vec = |t: Tensor<2>| -> Result<Vec<f32>, ModelError> {
            t.into_data()
                .try_into_vec::<f32>()
                .map_err(|e| ModelError::Backend(format!("reading net output: {e:?}")))
        };
        raw.policy = to_vec(out.policy)?;
        raw.wdl = to_vec(softmax(out.wdl, 1))?;
        raw.moves_left = match out.moves_left {
            Some(m) => Some(
                to_vec(m)?
                    .into_iter()
                    .map(|x| (x * MOVES_LEFT_SCALE).max(0.0))
                    .collect(),
            ),
            None => None,
        };
        Ok(())
    }
}

/// One thread's buffers for [`NetEvaluator::evaluate`], kept between calls
/// so that evaluating a batch allocates nothing once they have grown.
#[derive(Default)]
struct EvalBuffers {
    inputs: Vec<f32>,
    raw: RawOutput,
    idx: Vec<u32>,
    shares: Vec<u32>,
}

thread_local! {
    static EVAL_BUFFERS: RefCell<EvalBuffers> = RefCell::new(EvalBuffers::default());
}

impl NetEvaluator {
    fn evaluate_with(
        &self,
        batch: &[EvalRequest<'_>],
        out: &mut [EvalResult],
        buf: &mut EvalBuffers,
    ) -> Result<(), ModelError> {
        let len = self.encoding.input_len();
        buf.inputs.resize(batch.len() * len, 0.0);
        for (r, chunk) in batch.iter().zip(buf.inputs.chunks_exact_mut(len)) {
            self.encoding
                .encode_into(r.position, r.no_progress, r.repetitions, chunk)?;
        }
        self.forward_into(&buf.inputs, &mut buf.raw)?;
        let RawOutput {
            policy: logits,
            wdl,
            moves_left,
        } = &buf.raw;
        let p = self.encoding.policy_size();
        for (i, (r, o)) in batch.iter().zip(out.iter_mut()).enumerate() {
            policy_indices(r.position, r.moves, &mut buf.idx, &mut buf.shares);
            legal_softmax(
                &logits[i * p..(i + 1) * p],
                &buf.idx,
                &buf.shares,
                &mut o.policy,
            );
            o.wdl = [wdl[3 * i], wdl[3 * i + 1], wdl[3 * i + 2]];
            o.moves_left = moves_left.as_ref().map(|m| m[i]);
        }
        Ok(())
    }
}

impl Evaluator for NetEvaluator {
    fn variant(&self) -> Variant {
        self.encoding.variant()
    }

    fn evaluate(
        &self,
        batch: &[EvalRequest<'_>],
        out: &mut Vec<EvalResult>,
    ) -> Result<(), ModelError> {
        check_variant(self.encoding.variant(), batch)?;
        out.resize_with(batch.len(), EvalResult::default);
        if batch.is_empty() {
            return Ok(());
        }
        EVAL_BUFFERS.with(|b| match b.try_borrow_mut() {
            Ok(mut b) => self.evaluate_with(batch, out, &mut b),
            // Only if a caller nests evaluations on one thread.
            Err(_) => self.evaluate_with(batch, out, &mut EvalBuffers::default()),
        })
    }
}

/// Softmax of `logits` over the distinct indices in `idx`, each index's
/// probability then shared equally among the `shares` moves that map to it.
fn legal_softmax(logits: &[f32], idx: &[u32], shares: &[u32], out: &mut Vec<f32>) {
    out.clear();
    if idx.is_empty() {
        return;
    }
    let max = idx
        .iter()
        .map(|&i| logits[i as usize])
        .fold(f32::NEG_INFINITY, f32::max);
    // Each distinct index counts once: a move's weight is exp(logit) / shares,
    // so the moves of one index together weigh exp(logit).
    out.extend(
        idx.iter()
            .zip(shares)
            .map(|(&i, &s)| (logits[i as usize] - max).exp() / s as f32),
    );
    let sum: f32 = out.iter().sum();
    if sum.is_finite() && sum > 0.0 {
        out.iter_mut().for_each(|x| *x /= sum);
    } else {
        // NaN or infinite logits: fall back to uniform rather than propagate garbage.
        let n = out.len() as f32;
        out.iter_mut().for_each(|x| *x = 1.0 / n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_softmax_ignores_illegal_and_shares_merged_indices() {
        let logits = [0.0, 5.0, 1.0, 100.0];
        let mut out = Vec::new();
        // Index 3 (logit 100) is not legal; index 1 is shared by two moves.
        legal_softmax(&logits, &[0, 1, 1, 2], &[1, 2, 2, 1], &mut out);
        let s: f32 = out.iter().sum();
        assert!((s - 1.0).abs() < 1e-6);
        assert_eq!(out[1], out[2]);
        let e = [1.0f32, 5f32.exp(), 1f32.exp()];
        let z: f32 = e.iter().sum();
        assert!((out[0] - 1.0 / z).abs() < 1e-6);
        assert!((out[1] - e[1] / z / 2.0).abs() < 1e-6);
        legal_softmax(&logits, &[], &[], &mut out);
        assert!(out.is_empty());
        legal_softmax(&[f32::NAN, 0.0], &[0, 1], &[1, 1], &mut out);
        assert_eq!(out, vec![0.5, 0.5]);
    }

    #[test]
    fn uniform_evaluator_is_uniform_and_checks_variant() {
        let pos = Position::start(Variant::English);
        let moves = pos.legal_moves();
        let req = EvalRequest {
            position: &pos,
            moves: &moves,
            no_progress: 0,
            repetitions: 0,
        };
        let e = UniformEvaluator::new(Variant::English);
        let mut out = Vec::new();
        e.evaluate(&[req, req], &mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].policy.len(), 7);
        assert!((out[0].policy.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(out[0].value().abs() < 1e-6);
        let other = UniformEvaluator::new(Variant::International);
        assert!(other.evaluate(&[req], &mut out).is_err());
        assert!(UniformEvaluator::with_wdl(Variant::English, [0.0, 0.0, 0.0]).is_err());
        let d = UniformEvaluator::with_wdl(Variant::English, [0.0, 2.0, 0.0]).unwrap();
        d.evaluate(&[req], &mut out).unwrap();
        assert_eq!(out[0].wdl, [0.0, 1.0, 0.0]);
    }
}
