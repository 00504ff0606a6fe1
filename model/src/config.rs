//! The network's shape as plain data: the `[model]` section of the TOML configs.

use crate::ModelError;
use serde::{Deserialize, Serialize};

/// Which body the network has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetKind {
    /// A residual convolutional net: a 3x3 stem, `blocks` residual blocks of
    /// two 3x3 convolutions with `channels` channels, batch norm and ReLU.
    Resnet,
    /// A small multi-layer perceptron over the flattened planes: `layers`
    /// fully connected layers of `hidden` units (fast; for tests and tiny runs).
    Mlp,
}

/// Normalisation inside the ResNet body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetNorm {
    /// Batch norm after every convolution (AlphaZero, Leela).
    Batch,
    /// No normalisation: convolutions with bias, and each residual branch
    /// scaled by a learned scalar that starts at 0 (SkipInit), so every block
    /// starts as the identity and training is stable without batch norm.
    /// Far fewer tensor operations per forward and backward pass, which is
    /// what a small net on a CPU is limited by (see BENCHMARKS.md).
    None,
}

/// How a ResNet turns its policy features into move logits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyHead {
    /// AlphaGo Zero's head: a fully connected layer from every square's
    /// `policy_channels` features to every policy index.  Its size grows
    /// with the fourth power of the board side (6 M weights on 12x12).
    #[default]
    Dense,
    /// AlphaZero chess's and Leela's head: a 1x1 convolution from the
    /// `policy_channels` features to one plane per move step, each policy
    /// index read at its origin square ([`crate::PolicyPlanes`]).  The same
    /// few thousand weights serve every square, whatever the board.
    Conv,
}

/// Shape of the policy-value network (the `[model]` section of a config file).
///
/// Unknown keys are an error; every key has a default, so `[model]` may be
/// empty.  The defaults are the default CPU net (a 4-block, 32-channel ResNet).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetConfig {
    /// `resnet` or `mlp`.
    pub kind: NetKind,
    /// Residual blocks (resnet).
    pub blocks: usize,
    /// Channels of every convolution in the body (resnet).
    pub channels: usize,
    /// Fully connected layers of the body (mlp).
    pub layers: usize,
    /// Units of each body layer (mlp) and of the value head's hidden layer (both kinds).
    pub hidden: usize,
    /// Channels of the policy head's 1x1 convolution (resnet).
    pub policy_channels: usize,
    /// `dense` or `conv` (resnet; see [`PolicyHead`]).  Models made before
    /// the key existed have the dense head, its default.
    pub policy_head: PolicyHead,
    /// Channels of the value head's 1x1 convolution (resnet).
    pub value_channels: usize,
    /// Whether the net has a moves-left head (predicts the plies left in the game).
    pub moves_left_head: bool,
    /// Normalisation of the ResNet body: `batch` or `none` (see [`NetNorm`]).
    pub norm: NetNorm,
}

impl Default for NetConfig {
    fn default() -> NetConfig {
        NetConfig {
            kind: NetKind::Resnet,
            blocks: 4,
            channels: 32,
            layers: 2,
            hidden: 128,
            policy_channels: 8,
            policy_head: PolicyHead::Dense,
            value_channels: 4,
            moves_left_head: false,
            norm: NetNorm::Batch,
        }
    }
}

impl NetConfig {
    /// A ResNet with `blocks` blocks of `channels` channels, other keys default.
    pub fn resnet(blocks: usize, channels: usize) -> NetConfig {
        NetConfig {
            blocks,
            channels,
            ..NetConfig::default()
        }
    }

    /// An MLP with `layers` layers of `hidden` units, other keys default.
    pub fn mlp(layers: usize, hidden: usize) -> NetConfig {
        NetConfig {
            kind: NetKind::Mlp,
            layers,
            hidden,
            ..NetConfig::default()
        }
    }

    /// Checks that every size is usable (positive, and not absurdly large).
    pub fn validate(&self) -> Result<(), ModelError> {
        let check = |name: &str, v: usize, lo: usize, hi: usize| {
            if v < lo || v > hi {
                Err(ModelError::BadConfig(format!(
                    "model.{name} must be between {lo} and {hi}, not {v}"
                )))
            } else {
                Ok(())
            }
        };
        match self.kind {
            NetKind::Resnet => {
                check("blocks", self.blocks, 0, 64)?;
                check("channels", self.channels, 1, 1024)?;
                check("policy_channels", self.policy_channels, 1, 256)?;
                check("value_channels", self.value_channels, 1, 256)?;
            }
            NetKind::Mlp => {
                check("layers", self.layers, 1, 16)?;
                if self.policy_head == PolicyHead::Conv {
                    return Err(ModelError::BadConfig(
                        "model.policy_head = \"conv\" needs kind = \"resnet\" (an MLP has no squares to convolve)".into(),
                    ));
                }
            }
        }
        check("hidden", self.hidden, 1, 8192)
    }

    /// Multiply-adds of one forward pass for a board of `n x n` with
    /// `policy` outputs (a convolutional policy head is counted at the
    /// policy entries it computes, as the CPU kernels do), counted as 2 FLOPs each (batch norm, ReLU and
    /// softmax are left out: they are a few percent at most).
    pub fn flops_per_position(&self, n: usize, planes: usize, policy: usize) -> f64 {
        let area = (n * n) as f64;
        let c = self.channels as f64;
        let h = self.hidden as f64;
        let macs = match self.kind {
            NetKind::Resnet => {
                let stem = area * planes as f64 * c * 9.0;
                let body = self.blocks as f64 * 2.0 * area * c * c * 9.0;
                let pc = self.policy_channels as f64;
                let vc = self.value_channels as f64;
                let policy_out = match self.policy_head {
                    PolicyHead::Dense => area * pc * policy as f64,
                    PolicyHead::Conv => pc * policy as f64,
                };
                let policy_head = area * c * pc + policy_out;
                let value_head = area * c * vc + area * vc * h + h * 3.0;
                stem + body + policy_head + value_head
            }
            NetKind::Mlp => {
                let input = area * planes as f64;
                let body = input * h + (self.layers as f64 - 1.0) * h * h;
                body + h * policy as f64 + h * h + h * 3.0
            }
        };
        2.0 * macs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_round_trip_json() {
        let c = NetConfig::default();
        c.validate().unwrap();
        let s = serde_json::to_string(&c).unwrap();
        let back: NetConfig = serde_json::from_str(&s).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn unknown_keys_and_bad_sizes_are_errors() {
        assert!(serde_json::from_str::<NetConfig>(r#"{"chanels": 3}"#).is_err());
        assert!(serde_json::from_str::<NetConfig>(r#"{"kind": "transformer"}"#).is_err());
        let mut c = NetConfig::resnet(2, 0);
        assert!(c.validate().is_err());
        c.channels = 8;
        assert!(c.validate().is_ok());
        let partial: NetConfig = serde_json::from_str(r#"{"kind": "mlp", "hidden": 64}"#).unwrap();
        assert_eq!(partial.kind, NetKind::Mlp);
        assert_eq!(partial.layers, NetConfig::default().layers);
    }

    #[test]
    fn flops_grow_with_width() {
        let a = NetConfig::resnet(4, 32).flops_per_position(8, 7, 1024);
        let b = NetConfig::resnet(6, 64).flops_per_position(8, 7, 1024);
        assert!(b > 3.0 * a, "{a} {b}");
        // 4x32 body alone: 8 convs of 64*32*32*9 MACs = 4.7 MFLOP.
        assert!(a > 4.7e6 && a < 2e7, "{a}");
    }
}
