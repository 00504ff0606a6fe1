//! Fitting the search evaluation to labelled positions with burn: AdamW on
//! the squared error between the predicted expected score and the target,
//! epochs over a shuffled training split, a validation loss after each.

use super::data::{Batch, EvalData};
use super::network::EvalNetwork;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use tammi_search::nnue::{NnueError, NnueNet};

/// How a fit runs (the `[fit]` section of a search-eval config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FitConfig {
    /// Passes over the training positions.
    pub epochs: u32,
    /// Positions per optimizer step.
    pub batch: usize,
    /// AdamW learning rate (the last epoch runs at a tenth of it).
    pub learning_rate: f64,
    /// AdamW weight decay.
    pub weight_decay: f32,
    /// Weight of the game result in the target; the rest is the searched value.
    pub result_weight: f32,
}

impl Default for FitConfig {
    fn default() -> Self {
        FitConfig {
            epochs: 10,
            batch: 256,
            learning_rate: 1e-3,
            weight_decay: 1e-5,
            result_weight: 0.5,
        }
    }
}

impl FitConfig {
    /// A config that can run: positive sizes and rates, weights in [0, 1].
    pub fn check(&self) -> Result<(), String> {
        if self.epochs == 0 || self.batch == 0 {
            return Err("fit.epochs and fit.batch must be at least 1".into());
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(format!(
                "fit.learning_rate {} must be positive",
                self.learning_rate
            ));
        }
        if !(0.0..=1.0).contains(&self.result_weight) {
            return Err(format!(
                "fit.result_weight {} must be in [0, 1]",
                self.result_weight
            ));
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return Err(format!(
                "fit.weight_decay {} must be 0 or more",
                self.weight_decay
            ));
        }
        Ok(())
    }
}

/// One epoch's losses (mean squared error in expected score).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochLoss {
    pub epoch: u32,
    pub train: f64,
    /// On the held-out positions; `None` without any.
    pub validation: Option<f64>,
    /// The validation loss against the game results alone (how well the net
    /// predicts outcomes, whatever the mix it was trained on).
    pub validation_result: Option<f64>,
    pub seconds: f64,
}

fn tensor(v: &[f32], rows: usize, cols: usize, device: &Device) -> Tensor<2> {
    Tensor::<2>::from_data(TensorData::new(v.to_vec(), [rows, cols]), device)
}

/// Mean squared error of `net` on `indices` against targets with `result_weight`.
pub fn loss_on(
    net: &EvalNetwork,
    data: &EvalData,
    indices: &[usize],
    result_weight: f32,
    device: &Device,
) -> Option<f64> {
    if indices.is_empty() {
        return None;
    }
    let f = NnueNet::features(data.variant());
    let mut batch = Batch::default();
    let mut sum = 0.0;
    for chunk in indices.chunks(4096) {
        data.batch(chunk, result_weight, &mut batch);
        let p = net.predict(
            tensor(&batch.stm, batch.len, f, device),
            tensor(&batch.other, batch.len, f, device),
        );
        let t = tensor(&batch.target, batch.len, 1, device);
        let e: f64 = (p - t).powf_scalar(2.0).sum().into_scalar::<f32>() as f64;
        sum += e;
    }
    Some(sum / indices.len() as f64)
}

/// Trains `start` on `data` and returns the new network with each epoch's
/// losses; `progress(epoch, step, steps)` is told how far it got.
pub fn fit(
    start: &NnueNet,
    data: &EvalData,
    cfg: &FitConfig,
    seed: u64,
    progress: &mut dyn FnMut(u32, usize, usize),
) -> Result<(NnueNet, Vec<EpochLoss>), NnueError> {
    let device = Device::flex().autodiff();
    let plain = Device::flex();
    let mut net = EvalNetwork::from_net(start, &device).train();
    let mut optim = AdamWConfig::new()
        .with_weight_decay(cfg.weight_decay)
        .init();
    let (mut train, valid) = data.split();
    let f = NnueNet::features(data.variant());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut batch = Batch::default();
    let mut log = Vec::new();
    let steps = train.len().div_ceil(cfg.batch);
    for epoch in 1..=cfg.epochs {
        let t0 = Instant::now();
        train.shuffle(&mut rng);
        let lr = if epoch == cfg.epochs && cfg.epochs > 1 {
            cfg.learning_rate / 10.0
        } else {
            cfg.learning_rate
        };
        let (mut sum, mut n) = (0.0, 0usize);
        for (step, chunk) in train.chunks(cfg.batch).enumerate() {
            data.batch(chunk, cfg.result_weight, &mut batch);
            let p = net.predict(
                tensor(&batch.stm, batch.len, f, &device),
                tensor(&batch.other, batch.len, f, &device),
            );
            let t = tensor(&batch.target, batch.len, 1, &device);
            let loss = (p - t).powf_scalar(2.0).mean();
            sum += loss.clone().into_scalar::<f32>() as f64 * chunk.len() as f64;
            n += chunk.len();
            let grads = GradientsParams::from_grads(loss.backward(), &net);
            net = optim.step(lr, net, grads);
            if step % 16 == 0 {
                progress(epoch, step, steps);
            }
        }
        let inference = net.valid();
        log.push(EpochLoss {
            epoch,
            train: if n > 0 { sum / n as f64 } else { 0.0 },
            validation: loss_on(&inference, data, &valid, cfg.result_weight, &plain),
            validation_result: loss_on(&inference, data, &valid, 1.0, &plain),
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    let out = net.valid().to_net(start.variant(), start.scale())?;
    Ok((out, log))
}
