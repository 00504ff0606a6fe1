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
    /// Which policy entries the policy loss's softmax runs over.  A config
    /// without the key keeps [`PolicySoftmax::All`], what runs trained with
    /// before the key existed; the presets choose `legal`.
    pub policy_softmax: PolicySoftmax,
}

/// The entries the policy loss normalises over.
///
/// Search only ever asks the net for the probabilities of legal moves,
/// renormalised over them.  Trained over every index, a small net first
/// learns how often each index is legal at all and only later which move is
/// good when it is, so moves that are legal in few positions (optional
/// captures and removals under huffing) come out far below their targets and
/// search stops looking at them (issue 38).  Over the legal moves the loss
/// asks for exactly what search uses, as Leela Chess Zero's does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicySoftmax {
    /// Every index of the policy vector (AlphaZero's formulation): the net
    /// must also learn to give illegal indices nothing.
    #[default]
    All,
    /// The sample's legal moves only; illegal indices get no gradient.
    Legal,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            weight_decay: 1e-4,
            value_weight: 1.0,
            moves_left_weight: 0.1,
            policy_softmax: PolicySoftmax::All,
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
