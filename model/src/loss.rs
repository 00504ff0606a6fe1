//! What a training step optimises and reports: the loss weights
//! ([`TrainConfig`]) and the losses of one step ([`Losses`]).  Both the burn
//! trainer and the CPU training kernels read and write these.

use serde::{Deserialize, Serialize};

/// Optimizer and loss settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// AdamW decoupled weight decay.
    pub weight_decay: f32,
    /// Weight of the W/D/L loss relative to the policy loss.
    pub value_weight: f32,
    /// Weight of the moves-left loss (ignored without the head).
    pub moves_left_weight: f32,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            weight_decay: 1e-4,
            value_weight: 1.0,
            moves_left_weight: 0.1,
        }
    }
}

/// Losses of one step (means over the batch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Losses {
    pub total: f32,
    pub policy: f32,
    pub value: f32,
    pub moves_left: f32,
    /// Mean entropy (nats) of the net's policy over the policy index space:
    /// falls as the policy sharpens.
    pub policy_entropy: f32,
    /// Share of samples whose most likely W/D/L class is the target's.
    pub value_accuracy: f32,
}
