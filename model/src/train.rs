//! One optimizer step at a time, behind plain-Rust batches.
//!
//! The loss is `policy + value_weight * value + moves_left_weight * moves_left`:
//! policy is the cross-entropy between the target distribution over the policy
//! index space and the softmax of the policy logits (illegal indices have
//! target 0), value the cross-entropy of the W/D/L target with the W/D/L
//! softmax, moves-left the squared error of the head against plies left /
//! [`crate::MOVES_LEFT_SCALE`].  The optimizer is AdamW.
//!
//! The gradients come from burn's autodiff, or, for ResNets on the `flex` CPU
//! backend, from tammi's own training kernels ([`TrainingEngine`]); burn's
//! AdamW applies them either way.

use crate::encoding::{Encoding, policy_index};
use crate::kernels::KernelTrainer;
use crate::loss::{Losses, PolicySoftmax, TrainConfig};
use crate::model::Model;
use crate::net::{MOVES_LEFT_SCALE, PolicyValueNet};
use crate::{DeviceChoice, ModelError, NetConfig};
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use burn::store::{BurnpackStore, ModuleSnapshot};
use burn::tensor::Bytes;
use burn::tensor::activation::log_softmax;
use tammi_rules::{Move, Position, Variant};

/// Added to an illegal move's logit when the policy loss runs over the legal
/// moves: its softmax weight underflows to zero.
const ILLEGAL_LOGIT_OFFSET: f32 = -1e4;

/// A batch of training samples, encoded: inputs, dense policy targets, W/D/L
/// targets and (optionally) plies left.
#[derive(Clone, Debug)]
pub struct TrainBatch {
    pub(crate) encoding: Encoding,
    pub(crate) inputs: Vec<f32>,
    pub(crate) policy: Vec<f32>,
    pub(crate) wdl: Vec<f32>,
    pub(crate) moves_left: Vec<f32>,
    /// The policy indices of each sample's legal moves, sample after sample
    /// (`legal_ends[i]` is where sample `i`'s end).
    pub(crate) legal: Vec<u32>,
    pub(crate) legal_ends: Vec<u32>,
    pub(crate) len: usize,
}

impl TrainBatch {
    /// An empty batch for a variant.
    pub fn new(variant: Variant) -> TrainBatch {
        TrainBatch {
            encoding: Encoding::new(variant),
            inputs: Vec::new(),
            policy: Vec::new(),
            wdl: Vec::new(),
            moves_left: Vec::new(),
            legal: Vec::new(),
            legal_ends: Vec::new(),
            len: 0,
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch has no sample.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded inputs, [`Encoding::input_len`] floats per sample, in
    /// order: what the trainer feeds the net (for checks and tools).
    pub fn inputs(&self) -> &[f32] {
        &self.inputs
    }

    /// The policy targets, [`Encoding::policy_size`] floats per sample, in order.
    pub fn policy_targets(&self) -> &[f32] {
        &self.policy
    }

    /// The policy indices of sample `i`'s legal moves.
    pub(crate) fn legal_indices(&self, i: usize) -> &[u32] {
        let start = if i == 0 {
            0
        } else {
            self.legal_ends[i - 1] as usize
        };
        &self.legal[start..self.legal_ends[i] as usize]
    }

    /// An additive mask for the policy logits: 0 at each sample's legal
    /// moves, a large negative number elsewhere (finite, so that a zero
    /// target times its log-probability stays zero).
    fn illegal_offsets(&self) -> Vec<f32> {
        let p = self.encoding.policy_size();
        let mut mask = vec![ILLEGAL_LOGIT_OFFSET; self.len * p];
        for (i, row) in mask.chunks_exact_mut(p).enumerate() {
            for &k in self.legal_indices(i) {
                row[k as usize] = 0.0;
            }
        }
        mask
    }

    /// Removes every sample, keeping the buffers.
    pub fn clear(&mut self) {
        self.inputs.clear();
        self.policy.clear();
        self.wdl.clear();
        self.moves_left.clear();
        self.legal.clear();
        self.legal_ends.clear();
        self.len = 0;
    }

    /// Adds one sample: a position with its game state, its legal moves with
    /// a target probability each (summed into shared policy indices), the
    /// W/D/L target for the side to move, and plies left if known (every
    /// sample of a batch must have it, or none).
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        position: &Position,
        no_progress: u16,
        repetitions: u32,
        moves: &[Move],
        move_targets: &[f32],
        wdl: [f32; 3],
        moves_left: Option<f32>,
    ) -> Result<(), ModelError> {
        if moves.len() != move_targets.len() {
            return Err(ModelError::BadInput(format!(
                "{} moves but {} move targets",
                moves.len(),
                move_targets.len()
            )));
        }
        if self.len > 0 && moves_left.is_some() == self.moves_left.is_empty() {
            return Err(ModelError::BadInput(
                "moves-left targets must be given for every sample of a batch or for none".into(),
            ));
        }
        let start = self.inputs.len();
        self.inputs.resize(start + self.encoding.input_len(), 0.0);
        if let Err(e) = self.encoding.encode_into(
            position,
            no_progress,
            repetitions,
            &mut self.inputs[start..],
        ) {
            self.inputs.truncate(start);
            return Err(e);
        }
        let p = self.encoding.policy_size();
        let base = self.policy.len();
        self.policy.resize(base + p, 0.0);
        for (m, &t) in moves.iter().zip(move_targets) {
            let index = policy_index(position, m);
            self.policy[base + index] += t;
            self.legal.push(index as u32);
        }
        self.legal_ends.push(self.legal.len() as u32);
        self.wdl.extend_from_slice(&wdl);
        if let Some(m) = moves_left {
            self.moves_left.push(m);
        }
        self.len += 1;
        Ok(())
    }
}

/// What a training checkpoint holds beyond the model itself: the weights
/// with their parameter identities and the optimizer's moments (AdamW's
/// running averages are keyed by parameter identity, which safetensors files
/// do not keep).  Both are burnpack bytes; store them next to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainerState {
    pub net: Vec<u8>,
    pub optimizer: Vec<u8>,
}

/// How a [`Trainer`] computes the gradients of a step.  Either way burn's
/// AdamW applies them, so checkpoints and resume do not depend on the choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrainingEngine {
    /// tammi's CPU training kernels: ResNets on the `flex` backend (the
    /// default there; several times faster than burn's autodiff on a CPU).
    Kernels,
    /// burn's autodiff: every net and backend.
    Burn,
}

/// A model being trained: the network on the autodiff device plus the
/// optimizer state, and the CPU kernels when they compute the gradients.
pub struct Trainer {
    net: PolicyValueNet,
    kernels: Option<Box<KernelTrainer>>,
    /// The plain device under the autodiff one: where gradients live.
    grad_device: Device,
    optim: ModuleOptimizer,
    config: TrainConfig,
    variant: Variant,
    net_config: NetConfig,
    device: Device,
    backend: DeviceChoice,
    steps: u64,
    parent: Option<String>,
}

impl Trainer {
    /// Starts training from a model's weights (its step count carries on),
    /// with the CPU kernels for a ResNet on the `flex` backend and burn's
    /// autodiff elsewhere.  A ResNet the kernels cannot train in full is an
    /// error ([`ModelError::UnsupportedNet`]), not a quiet switch of engine:
    /// ask for [`TrainingEngine::Burn`] with [`Trainer::with_engine`] to
    /// train it with autodiff.
    pub fn new(model: &Model, config: TrainConfig) -> Result<Trainer, ModelError> {
        Trainer::with_engine(model, config, Trainer::default_engine(model))
    }

    /// The kernels for a ResNet on the `flex` backend, burn's autodiff otherwise.
    fn default_engine(model: &Model) -> TrainingEngine {
        if model.backend() == DeviceChoice::Flex && model.net().resnet.is_some() {
            TrainingEngine::Kernels
        } else {
            TrainingEngine::Burn
        }
    }

    /// Starts training with a given engine; the kernels need a ResNet on the
    /// `flex` backend.
    pub fn with_engine(
        model: &Model,
        config: TrainConfig,
        engine: TrainingEngine,
    ) -> Result<Trainer, ModelError> {
        if engine == TrainingEngine::Burn {
            return Ok(Trainer::burn(model, config));
        }
        if Trainer::default_engine(model) != TrainingEngine::Kernels {
            return Err(ModelError::BadInput(
                "the CPU training kernels need a ResNet on the flex backend".into(),
            ));
        }
        let e = Encoding::new(model.variant());
        let kernels = KernelTrainer::new(model.net(), e.planes(), e.rows())?;
        Ok(Trainer {
            kernels: Some(Box::new(kernels)),
            ..Trainer::burn(model, config)
        })
    }

    fn burn(model: &Model, config: TrainConfig) -> Trainer {
        let device = model.device().clone().autodiff();
        Trainer {
            grad_device: model.device().clone(),
            net: model.net().clone().fork(&device).train(),
            kernels: None,
            optim: AdamWConfig::new()
                .with_weight_decay(config.weight_decay)
                .init(),
            config,
            variant: model.variant(),
            net_config: model.net_config().clone(),
            device,
            backend: model.backend(),
            steps: model.training_step(),
            parent: model.parent().map(str::to_string),
        }
    }

    /// The engine that computes this trainer's gradients.
    pub fn engine(&self) -> TrainingEngine {
        if self.kernels.is_some() {
            TrainingEngine::Kernels
        } else {
            TrainingEngine::Burn
        }
    }

    /// Continues training where a checkpoint left off: `model` gives the
    /// variant, net shape, step count and backend, `state` the weights and
    /// optimizer moments, so the next step is the one the saved trainer
    /// would have taken.
    pub fn resume(
        model: &Model,
        state: &TrainerState,
        config: TrainConfig,
    ) -> Result<Trainer, ModelError> {
        Trainer::resume_with_engine(model, state, config, Trainer::default_engine(model))
    }

    /// [`Trainer::resume`] with a given engine (the checkpoint does not
    /// depend on the engine that wrote it).
    pub fn resume_with_engine(
        model: &Model,
        state: &TrainerState,
        config: TrainConfig,
        engine: TrainingEngine,
    ) -> Result<Trainer, ModelError> {
        let bad = |what: &str, e: String| {
            ModelError::BadInput(format!("training checkpoint: unreadable {what}: {e}"))
        };
        let mut net = model.net().clone();
        let mut store = BurnpackStore::from_bytes(Some(Bytes::from_bytes_vec(state.net.clone())));
        net.load_from(&mut store)
            .map_err(|e| bad("weights", e.to_string()))?;
        let mut trainer = Trainer::with_engine(model, config, engine)?;
        trainer.net = net.fork(&trainer.device).train();
        let optim = AdamWConfig::new()
            .with_weight_decay(trainer.config.weight_decay)
            .init();
        trainer.optim = optim
            .from_bytes(Bytes::from_bytes_vec(state.optimizer.clone()))
            .map_err(|e| bad("optimizer state", e.to_string()))?;
        Ok(trainer)
    }

    /// The state a checkpoint needs to [`Trainer::resume`] exactly.
    pub fn state(&self) -> Result<TrainerState, ModelError> {
        let fail = |e: String| ModelError::Backend(format!("serialising trainer state: {e}"));
        let mut store = BurnpackStore::from_bytes(None).clear_metadata();
        self.net
            .valid()
            .save_into(&mut store)
            .map_err(|e| fail(e.to_string()))?;
        let net = store.get_bytes().map_err(|e| fail(e.to_string()))?.to_vec();
        let optimizer = self
            .optim
            .into_bytes()
            .map_err(|e| fail(e.to_string()))?
            .to_vec();
        Ok(TrainerState { net, optimizer })
    }

    /// Optimizer steps taken (including those of the starting model).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// One optimizer step on a batch with learning rate `lr`.
    pub fn step(&mut self, batch: &TrainBatch, lr: f64) -> Result<Losses, ModelError> {
        if batch.encoding.variant() != self.variant {
            return Err(ModelError::VariantMismatch {
                expected: self.variant,
                found: batch.encoding.variant(),
            });
        }
        if batch.is_empty() {
            return Err(ModelError::BadInput("empty training batch".into()));
        }
        if !(lr.is_finite() && lr > 0.0) {
            return Err(ModelError::BadInput(format!(
                "learning rate {lr} must be positive"
            )));
        }
        if let Some(kernels) = &mut self.kernels {
            return Trainer::kernel_step(
                kernels,
                &mut self.net,
                &mut self.optim,
                &self.grad_device,
                &self.config,
                batch,
                lr,
            )
            .inspect(|_| self.steps += 1);
        }
        let (total, losses) = burn_losses(&self.net, batch, &self.device, &self.config)?;
        let grads = GradientsParams::from_grads(total.backward(), &self.net);
        self.net = self.optim.step(lr, self.net.clone(), grads);
        self.steps += 1;
        Ok(losses)
    }

    /// One step on the CPU kernels: gradients from the kernels, the update
    /// from burn's AdamW.
    fn kernel_step(
        kernels: &mut KernelTrainer,
        net: &mut PolicyValueNet,
        optim: &mut ModuleOptimizer,
        device: &Device,
        config: &TrainConfig,
        batch: &TrainBatch,
        lr: f64,
    ) -> Result<Losses, ModelError> {
        kernels.load(net)?;
        let losses = kernels.forward_backward(
            batch.len,
            &batch.inputs,
            &batch.policy,
            &batch.wdl,
            &batch.moves_left,
            (&batch.legal, &batch.legal_ends),
            config,
        )?;
        check_finite(&losses)?;
        let grads = kernels.gradients(device);
        kernels.update_running_stats(net)?;
        *net = optim.step(lr, net.clone(), grads);
        Ok(losses)
    }

    /// The current weights as an inference model (training step recorded).
    pub fn model(&self) -> Result<Model, ModelError> {
        let net = self.net.valid();
        Model::from_parts(
            self.variant,
            self.net_config.clone(),
            self.steps,
            self.parent.clone(),
            net,
            self.backend,
        )
    }
}

/// An error for a loss that is not finite.
fn check_finite(losses: &Losses) -> Result<(), ModelError> {
    if losses.total.is_finite() {
        Ok(())
    } else {
        Err(ModelError::BadInput(format!(
            "loss is {} (targets must be finite probabilities)",
            losses.total
        )))
    }
}

/// The loss of a batch through burn's forward pass on `device` (see the
/// module docs), as a tensor to differentiate and as numbers.
pub(crate) fn burn_losses(
    net: &PolicyValueNet,
    batch: &TrainBatch,
    dev: &Device,
    config: &TrainConfig,
) -> Result<(Tensor<1>, Losses), ModelError> {
    let n = batch.len;
    let e = &batch.encoding;
    let x = Tensor::<4>::from_data(
        TensorData::new(batch.inputs.clone(), [n, e.planes(), e.rows(), e.cols()]),
        dev,
    );
    let tp = Tensor::<2>::from_data(
        TensorData::new(batch.policy.clone(), [n, e.policy_size()]),
        dev,
    );
    let tv = Tensor::<2>::from_data(TensorData::new(batch.wdl.clone(), [n, 3]), dev);
    let out = net.forward(x);
    let logits = match config.policy_softmax {
        PolicySoftmax::All => out.policy,
        PolicySoftmax::Legal => {
            let mask = Tensor::<2>::from_data(
                TensorData::new(batch.illegal_offsets(), [n, e.policy_size()]),
                dev,
            );
            out.policy + mask
        }
    };
    let log_p = log_softmax(logits, 1);
    let entropy = (log_p.clone().detach().exp() * log_p.clone().detach())
        .sum_dim(1)
        .mean()
        .neg();
    let accuracy = out
        .wdl
        .clone()
        .detach()
        .argmax(1)
        .equal(tv.clone().argmax(1))
        .float()
        .mean();
    let policy_loss = (tp * log_p).sum_dim(1).mean().neg();
    let value_loss = (tv * log_softmax(out.wdl, 1)).sum_dim(1).mean().neg();
    let mut total = policy_loss.clone() + value_loss.clone().mul_scalar(config.value_weight);
    let mut ml_loss = None;
    if let (Some(pred), false) = (out.moves_left, batch.moves_left.is_empty()) {
        let t = Tensor::<2>::from_data(
            TensorData::new(
                batch
                    .moves_left
                    .iter()
                    .map(|m| m / MOVES_LEFT_SCALE)
                    .collect::<Vec<_>>(),
                [n, 1],
            ),
            dev,
        );
        let l = (pred - t).powi_scalar(2).mean();
        total = total + l.clone().mul_scalar(config.moves_left_weight);
        ml_loss = Some(l);
    }
    let scalar = |t: Tensor<1>| -> f32 { t.into_scalar::<f32>() };
    let losses = Losses {
        total: scalar(total.clone().detach()),
        policy: scalar(policy_loss.detach()),
        value: scalar(value_loss.detach()),
        moves_left: ml_loss.map(|l| scalar(l.detach())).unwrap_or(0.0),
        policy_entropy: scalar(entropy),
        value_accuracy: scalar(accuracy),
    };
    check_finite(&losses)?;
    Ok((total, losses))
}
