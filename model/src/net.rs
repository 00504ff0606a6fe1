//! The burn network: a residual conv net or a small MLP with a policy head, a
//! win/draw/loss value head and an optional moves-left head.
//!
//! Private to the crate: other crates see [`crate::Model`] and
//! [`crate::Evaluator`], never burn types.

use crate::config::{NetConfig, NetKind, NetNorm, PolicyHead};
use crate::encoding::PolicyPlanes;
use burn::module::Param;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::prelude::*;
use burn::tensor::activation::relu;

/// Scale of the moves-left head: the head's raw output times this is plies.
pub const MOVES_LEFT_SCALE: f32 = 100.0;

/// Everything needed to build a [`PolicyValueNet`]: the net's shape plus the
/// input and output sizes that the variant fixes.
#[derive(Config, Debug)]
pub struct PolicyValueNetConfig {
    /// Body and head sizes.
    pub net: NetConfig,
    /// Input planes per position.
    pub planes: usize,
    /// Board side length (rows = columns).
    pub board: usize,
    /// Policy entries.
    pub policy: usize,
    /// The variant's map from policy indices to the output planes of a
    /// convolutional policy head; required when the net has one.
    pub policy_planes: Option<PolicyPlanes>,
}

/// A convolution followed by batch norm (no bias: the norm has one), or a
/// convolution with bias when the net has no normalisation.
#[derive(Module, Debug)]
pub struct ConvBn {
    pub(crate) conv: Conv2d,
    pub(crate) bn: Option<BatchNorm>,
}

impl ConvBn {
    fn new(inp: usize, out: usize, kernel: usize, norm: NetNorm, device: &Device) -> ConvBn {
        let pad = if kernel == 1 {
            PaddingConfig2d::Valid
        } else {
            PaddingConfig2d::Same
        };
        let batch = norm == NetNorm::Batch;
        ConvBn {
            conv: Conv2dConfig::new([inp, out], [kernel, kernel])
                .with_padding(pad)
                .with_bias(!batch)
                .init(device),
            bn: batch.then(|| BatchNormConfig::new(out).init(device)),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let y = self.conv.forward(x);
        match &self.bn {
            Some(bn) => bn.forward(y),
            None => y,
        }
    }
}

/// Two 3x3 convolutions with a skip connection; without normalisation the
/// branch is scaled by a learned scalar that starts at 0.
#[derive(Module, Debug)]
pub struct ResBlock {
    pub(crate) a: ConvBn,
    pub(crate) b: ConvBn,
    pub(crate) skip_scale: Option<Param<Tensor<1>>>,
}

impl ResBlock {
    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let y = relu(self.a.forward(x.clone()));
        let branch = self.b.forward(y);
        match &self.skip_scale {
            None => relu(branch + x),
            Some(s) => relu(branch * s.val().reshape([1, 1, 1, 1]) + x),
        }
    }
}

/// The ResNet body and the convolutional parts of its heads.  The policy
/// head ends in `policy_fc` (dense head) or in `policy_out`, a 1x1
/// convolution to the planes of `policy_planes` (convolutional head).
#[derive(Module, Debug)]
pub struct ResNetBody {
    pub(crate) stem: ConvBn,
    pub(crate) blocks: Vec<ResBlock>,
    pub(crate) policy_conv: ConvBn,
    pub(crate) policy_fc: Option<Linear>,
    pub(crate) policy_out: Option<ConvBn>,
    pub(crate) value_conv: ConvBn,
    #[module(skip)]
    pub(crate) policy_planes: Option<PolicyPlanes>,
}

impl ResNetBody {
    /// Policy logits `[batch, policy]` from the policy convolution's output.
    fn policy_logits(&self, p: Tensor<4>) -> Tensor<2> {
        match (&self.policy_fc, &self.policy_out, &self.policy_planes) {
            (Some(fc), _, _) => fc.forward(p.flatten::<2>(1, 3)),
            (None, Some(out), Some(planes)) => {
                let device = p.device();
                let logits = out.forward(p).flatten::<2>(1, 3);
                let index: Vec<i64> = planes.channels_first().into_iter().map(i64::from).collect();
                let len = index.len();
                let index = Tensor::<1, Int>::from_data(TensorData::new(index, [len]), &device);
                logits.select(1, index)
            }
            _ => unreachable!("a ResNet always has one policy head"),
        }
    }
}

/// The MLP body and its policy layer.
#[derive(Module, Debug)]
pub struct MlpBody {
    pub(crate) layers: Vec<Linear>,
    pub(crate) policy_fc: Linear,
}

/// The policy-value network.  Input `[batch, planes, n, n]`; outputs policy
/// logits `[batch, policy]`, W/D/L logits `[batch, 3]` and, with the head,
/// moves left `[batch, 1]` in units of [`MOVES_LEFT_SCALE`] plies.
#[derive(Module, Debug)]
pub struct PolicyValueNet {
    pub(crate) resnet: Option<ResNetBody>,
    pub(crate) mlp: Option<MlpBody>,
    pub(crate) value_fc1: Linear,
    pub(crate) value_fc2: Linear,
    pub(crate) moves_left_fc: Option<Linear>,
}

/// Raw outputs of one forward pass.
pub struct NetOutput {
    pub policy: Tensor<2>,
    pub wdl: Tensor<2>,
    pub moves_left: Option<Tensor<2>>,
}

impl PolicyValueNetConfig {
    /// A freshly initialised net on `device`.
    pub fn init(&self, device: &Device) -> PolicyValueNet {
        let c = &self.net;
        let area = self.board * self.board;
        let (resnet, mlp, value_in) = match c.kind {
            NetKind::Resnet => {
                let n = c.norm;
                let conv_head = c.policy_head == PolicyHead::Conv;
                let planes = conv_head.then(|| {
                    self.policy_planes
                        .clone()
                        .expect("a convolutional policy head needs the variant's policy planes")
                });
                let body = ResNetBody {
                    stem: ConvBn::new(self.planes, c.channels, 3, n, device),
                    blocks: (0..c.blocks)
                        .map(|_| ResBlock {
                            a: ConvBn::new(c.channels, c.channels, 3, n, device),
                            b: ConvBn::new(c.channels, c.channels, 3, n, device),
                            skip_scale: (n == NetNorm::None)
                                .then(|| Param::from_tensor(Tensor::zeros([1], device))),
                        })
                        .collect(),
                    policy_conv: ConvBn::new(c.channels, c.policy_channels, 1, n, device),
                    policy_fc: (!conv_head).then(|| {
                        LinearConfig::new(c.policy_channels * area, self.policy).init(device)
                    }),
                    // Logits: a bias and no normalisation, whatever the body has.
                    policy_out: planes.as_ref().map(|p| {
                        ConvBn::new(c.policy_channels, p.planes, 1, NetNorm::None, device)
                    }),
                    value_conv: ConvBn::new(c.channels, c.value_channels, 1, n, device),
                    policy_planes: planes,
                };
                (Some(body), None, c.value_channels * area)
            }
            NetKind::Mlp => {
                let input = self.planes * area;
                let layers = (0..c.layers)
                    .map(|i| {
                        let inp = if i == 0 { input } else { c.hidden };
                        LinearConfig::new(inp, c.hidden).init(device)
                    })
                    .collect();
                let body = MlpBody {
                    layers,
                    policy_fc: LinearConfig::new(c.hidden, self.policy).init(device),
                };
                (None, Some(body), c.hidden)
            }
        };
        PolicyValueNet {
            resnet,
            mlp,
            value_fc1: LinearConfig::new(value_in, c.hidden).init(device),
            value_fc2: LinearConfig::new(c.hidden, 3).init(device),
            moves_left_fc: c
                .moves_left_head
                .then(|| LinearConfig::new(c.hidden, 1).init(device)),
        }
    }
}

impl PolicyValueNet {
    /// One forward pass over a batch of encoded positions.
    pub fn forward(&self, input: Tensor<4>) -> NetOutput {
        let (policy, value_features) = if let Some(r) = &self.resnet {
            let mut x = relu(r.stem.forward(input));
            for b in &r.blocks {
                x = b.forward(x);
            }
            let p = relu(r.policy_conv.forward(x.clone()));
            let v = relu(r.value_conv.forward(x)).flatten::<2>(1, 3);
            (r.policy_logits(p), v)
        } else if let Some(m) = &self.mlp {
            let mut x: Tensor<2> = input.flatten::<2>(1, 3);
            for l in &m.layers {
                x = relu(l.forward(x));
            }
            (m.policy_fc.forward(x.clone()), x)
        } else {
            unreachable!("a PolicyValueNet always has a body")
        };
        let h = relu(self.value_fc1.forward(value_features));
        let moves_left = self.moves_left_fc.as_ref().map(|l| l.forward(h.clone()));
        NetOutput {
            policy,
            wdl: self.value_fc2.forward(h),
            moves_left,
        }
    }
}
