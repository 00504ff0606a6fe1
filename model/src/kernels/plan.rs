//! The one description of the policy-value net that tammi's CPU kernels read.
//!
//! [`NetPlan::read`] copies a burn [`PolicyValueNet`] into plain layers in the
//! kernels' layout, once: convolutions as row-major `[k² * inputs, outputs]`
//! weights (row `(ky * k + kx) * inputs + i`), and the fully connected layers
//! after a convolution with their rows reordered to the kernels'
//! channels-last features (`square * channels + c`).  The inference kernels
//! ([`super::infer`]) fold its batch norms into the convolutions; the
//! training kernels ([`super::train`]) run it forward and backward, use a
//! copy as their gradient accumulators, and hand the gradients back to burn
//! keyed by the parameters' ids ([`NetPlan::gradients`]).  This module is
//! the only place that knows both the burn net's fields and the kernels'
//! layout.
//!
//! Reading checks that the kernels implement every option of every layer
//! (square 1x1 or 3x3 kernels, stride and dilation 1, one group, padding that
//! keeps the board size) and that the plan covers every parameter of the
//! net.  A net the kernels would run wrong is an error
//! ([`ModelError::UnsupportedNet`]), never a silent fallback.

use super::layers::{Dense, floats, reorder_rows};
use crate::ModelError;
use crate::net::{ConvBn, PolicyValueNet, ResNetBody};
use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::nn::{BatchNorm, Linear, PaddingConfig2d};
use burn::optim::GradientsParams;
use burn::prelude::*;
use std::collections::HashSet;

/// Batch norm's affine parameters and running statistics.
#[derive(Clone, Debug)]
pub(crate) struct Norm {
    pub(crate) gamma: Vec<f32>,
    pub(crate) beta: Vec<f32>,
    pub(crate) running_mean: Vec<f32>,
    pub(crate) running_var: Vec<f32>,
    pub(crate) epsilon: f32,
    pub(crate) gamma_id: ParamId,
    pub(crate) beta_id: ParamId,
}

/// A square convolution (1x1 or 3x3, output the size of the input, stride 1)
/// followed by its batch norm, or with a bias in nets without normalisation.
#[derive(Clone, Debug)]
pub(crate) struct ConvLayer {
    pub(crate) kernel: usize,
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
    /// Row-major `[kernel² * inputs, outputs]`, row `(ky * kernel + kx) * inputs + i`.
    pub(crate) weight: Vec<f32>,
    pub(crate) weight_id: ParamId,
    /// Nets without normalisation only.
    pub(crate) bias: Option<Vec<f32>>,
    pub(crate) bias_id: Option<ParamId>,
    pub(crate) norm: Option<Norm>,
}

/// One residual block: `relu(scale * b(relu(a(x))) + x)`.
#[derive(Clone, Debug)]
pub(crate) struct ResidualBlock {
    pub(crate) a: ConvLayer,
    pub(crate) b: ConvLayer,
    /// SkipInit's learned branch scale (nets without normalisation); 1 when `None`.
    pub(crate) scale: Option<f32>,
    pub(crate) scale_id: Option<ParamId>,
}

/// The ResNet body and the convolutional parts of its heads.
#[derive(Clone, Debug)]
pub(crate) struct ResNetPlan {
    pub(crate) stem: ConvLayer,
    pub(crate) blocks: Vec<ResidualBlock>,
    pub(crate) policy_conv: ConvLayer,
    pub(crate) policy_head: PolicyHeadPlan,
    pub(crate) value_conv: ConvLayer,
}

/// The last layer of a ResNet's policy head.
#[derive(Clone, Debug)]
pub(crate) enum PolicyHeadPlan {
    /// A fully connected layer, rows in the channels-last order of
    /// `policy_conv`'s output.
    Dense(Dense),
    /// A 1x1 convolution with bias (no norm) to the policy planes, and for
    /// each policy index its place in that output laid out channels-last
    /// (`cell * planes + plane`, [`crate::PolicyPlanes::channels_last`]).
    Conv { out: ConvLayer, gather: Vec<u32> },
}

impl ResNetPlan {
    /// Policy entries the head writes.
    pub(crate) fn policy_size(&self) -> usize {
        match &self.policy_head {
            PolicyHeadPlan::Dense(d) => d.outputs,
            PolicyHeadPlan::Conv { gather, .. } => gather.len(),
        }
    }

    /// Weights of the head's last layer (a shape check).
    pub(crate) fn policy_weights(&self) -> usize {
        match &self.policy_head {
            PolicyHeadPlan::Dense(d) => d.weight.len(),
            PolicyHeadPlan::Conv { out, .. } => out.weight.len(),
        }
    }

    /// The dense policy layer, if the head has one.
    #[cfg(test)]
    pub(crate) fn policy_dense(&self) -> Option<&Dense> {
        match &self.policy_head {
            PolicyHeadPlan::Dense(d) => Some(d),
            PolicyHeadPlan::Conv { .. } => None,
        }
    }
}

/// The perceptron body and its policy layer.
#[derive(Clone, Debug)]
pub(crate) struct MlpPlan {
    pub(crate) layers: Vec<Dense>,
    pub(crate) policy_fc: Dense,
}

/// The body of the net (one of the two kinds of [`crate::NetKind`]).
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Body {
    Resnet(ResNetPlan),
    Mlp(MlpPlan),
}

/// Every layer of a policy-value net, in the kernels' layout (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct NetPlan {
    pub(crate) body: Body,
    /// For a ResNet, rows in the channels-last order of `value_conv`'s output.
    pub(crate) value_fc1: Dense,
    pub(crate) value_fc2: Dense,
    pub(crate) moves_left_fc: Option<Dense>,
    /// Squares of the board.
    pub(crate) area: usize,
}

/// The ids of every float tensor of a module (parameters and running
/// statistics), with their paths in the module.
#[derive(Default)]
struct TensorIds {
    path: Vec<String>,
    found: Vec<(String, ParamId)>,
}

impl ModuleVisitor for TensorIds {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        self.found.push((self.path.join("."), param.id));
    }
}

fn tensor_ids<M: Module>(module: &M) -> Vec<(String, ParamId)> {
    let mut ids = TensorIds::default();
    module.visit(&mut ids);
    ids.found
}

fn unsupported(what: impl Into<String>) -> ModelError {
    ModelError::UnsupportedNet(what.into())
}

/// Reads the burn net, remembering which tensors it has read.
struct Reader {
    area: usize,
    covered: HashSet<ParamId>,
}

impl Reader {
    fn cover<M: Module>(&mut self, module: &M) {
        self.covered
            .extend(tensor_ids(module).into_iter().map(|(_, id)| id));
    }

    fn dense(&mut self, l: &Linear, channels_last: Option<usize>) -> Result<Dense, ModelError> {
        self.cover(l);
        let w = l.weight.val();
        let [inputs, outputs] = w.dims();
        let mut weight = floats(w)?;
        if let Some(channels) = channels_last {
            if inputs != channels * self.area {
                return Err(unsupported(format!(
                    "a layer after a {channels}-channel convolution takes {inputs} inputs, not {}",
                    channels * self.area
                )));
            }
            weight = reorder_rows(&weight, outputs, channels, self.area, false);
        }
        let bias = match &l.bias {
            Some(b) => floats(b.val())?,
            None => vec![0.0; outputs],
        };
        Ok(Dense {
            inputs,
            outputs,
            weight,
            bias,
            weight_id: Some(l.weight.id),
            bias_id: l.bias.as_ref().map(|b| b.id),
        })
    }

    fn norm(&mut self, bn: &BatchNorm) -> Result<Norm, ModelError> {
        self.cover(bn);
        Ok(Norm {
            gamma: floats(bn.gamma.val())?,
            beta: floats(bn.beta.val())?,
            running_mean: floats(bn.running_mean.value())?,
            running_var: floats(bn.running_var.value())?,
            epsilon: bn.epsilon as f32,
            gamma_id: bn.gamma.id,
            beta_id: bn.beta.id,
        })
    }

    fn conv(&mut self, cb: &ConvBn) -> Result<ConvLayer, ModelError> {
        let c = &cb.conv;
        self.cover(c);
        let w = c.weight.val();
        let [outputs, inputs, kh, kw] = w.dims();
        if kh != kw || !(kh == 1 || kh == 3) {
            return Err(unsupported(format!(
                "{kh}x{kw} convolution (the kernels run 1x1 and 3x3)"
            )));
        }
        if c.stride != [1, 1] || c.dilation != [1, 1] || c.groups != 1 {
            return Err(unsupported(format!(
                "convolution with stride {:?}, dilation {:?}, {} groups (the kernels run \
                 stride 1, dilation 1, one group)",
                c.stride, c.dilation, c.groups
            )));
        }
        let keeps_size = match (&c.padding, kh) {
            (PaddingConfig2d::Valid, 1) | (PaddingConfig2d::Same, _) => true,
            (PaddingConfig2d::Explicit(t, l, b, r), _) => [*t, *l, *b, *r] == [kh / 2; 4],
            _ => false,
        };
        if !keeps_size {
            return Err(unsupported(format!(
                "{kh}x{kh} convolution with padding {:?} (the kernels keep the board size)",
                c.padding
            )));
        }
        let norm = cb.bn.as_ref().map(|bn| self.norm(bn)).transpose()?;
        if norm.is_some() && c.bias.is_some() {
            return Err(unsupported(
                "a convolution with both a bias and batch norm (the norm has the bias)",
            ));
        }
        let w = floats(w)?;
        let area = kh * kw;
        let mut weight = vec![0.0; w.len()];
        for o in 0..outputs {
            for i in 0..inputs {
                for kk in 0..area {
                    weight[(kk * inputs + i) * outputs + o] = w[(o * inputs + i) * area + kk];
                }
            }
        }
        Ok(ConvLayer {
            kernel: kh,
            inputs,
            outputs,
            weight,
            weight_id: c.weight.id,
            bias: c.bias.as_ref().map(|b| floats(b.val())).transpose()?,
            bias_id: c.bias.as_ref().map(|b| b.id),
            norm,
        })
    }

    fn resnet(&mut self, r: &ResNetBody) -> Result<ResNetPlan, ModelError> {
        let stem = self.conv(&r.stem)?;
        let mut blocks = Vec::with_capacity(r.blocks.len());
        for b in &r.blocks {
            let (a, bb) = (self.conv(&b.a)?, self.conv(&b.b)?);
            if b.skip_scale.is_some() && bb.norm.is_some() {
                return Err(unsupported(
                    "a residual block with both a branch scale and batch norm",
                ));
            }
            if let Some(s) = &b.skip_scale {
                self.cover(s);
            }
            let scale = match &b.skip_scale {
                Some(s) => Some(
                    floats(s.val())?
                        .first()
                        .copied()
                        .ok_or_else(|| unsupported("an empty residual branch scale"))?,
                ),
                None => None,
            };
            blocks.push(ResidualBlock {
                a,
                b: bb,
                scale,
                scale_id: b.skip_scale.as_ref().map(|s| s.id),
            });
        }
        let width = stem.outputs;
        let chained = blocks
            .iter()
            .all(|b| b.a.inputs == width && b.a.outputs == b.b.inputs && b.b.outputs == width);
        if !chained {
            return Err(unsupported(
                "residual blocks whose widths differ from the stem's",
            ));
        }
        let policy_conv = self.conv(&r.policy_conv)?;
        let value_conv = self.conv(&r.value_conv)?;
        if policy_conv.kernel != 1 || value_conv.kernel != 1 {
            return Err(unsupported("head convolutions other than 1x1"));
        }
        let policy_head = match (&r.policy_fc, &r.policy_out, &r.policy_planes) {
            (Some(fc), None, _) => {
                PolicyHeadPlan::Dense(self.dense(fc, Some(policy_conv.outputs))?)
            }
            (None, Some(out), Some(planes)) => {
                let out = self.conv(out)?;
                if out.kernel != 1 || out.norm.is_some() || out.inputs != policy_conv.outputs {
                    return Err(unsupported(
                        "a policy output layer other than a 1x1 convolution with bias \
                         after the policy convolution",
                    ));
                }
                if out.outputs != planes.planes || planes.area != self.area {
                    return Err(unsupported(format!(
                        "a policy output of {} planes for a map of {} planes of {} cells",
                        out.outputs, planes.planes, planes.area
                    )));
                }
                PolicyHeadPlan::Conv {
                    out,
                    gather: planes.channels_last(),
                }
            }
            _ => {
                return Err(unsupported(
                    "a policy head that is neither dense nor convolutional",
                ));
            }
        };
        Ok(ResNetPlan {
            stem,
            blocks,
            policy_conv,
            policy_head,
            value_conv,
        })
    }
}

impl NetPlan {
    /// The plan of `net` for a `board x board` board: an error when the
    /// kernels do not implement one of its layers' options or do not cover
    /// all of its parameters (naming what they miss).
    pub(crate) fn read(net: &PolicyValueNet, board: usize) -> Result<NetPlan, ModelError> {
        let mut reader = Reader {
            area: board * board,
            covered: HashSet::new(),
        };
        let (body, value_channels) = match (&net.resnet, &net.mlp) {
            (Some(r), _) => {
                let plan = reader.resnet(r)?;
                let channels = plan.value_conv.outputs;
                (Body::Resnet(plan), Some(channels))
            }
            (None, Some(m)) => {
                let layers = m
                    .layers
                    .iter()
                    .map(|l| reader.dense(l, None))
                    .collect::<Result<_, _>>()?;
                let policy_fc = reader.dense(&m.policy_fc, None)?;
                (Body::Mlp(MlpPlan { layers, policy_fc }), None)
            }
            (None, None) => return Err(unsupported("the net has no body")),
        };
        let plan = NetPlan {
            body,
            value_fc1: reader.dense(&net.value_fc1, value_channels)?,
            value_fc2: reader.dense(&net.value_fc2, None)?,
            moves_left_fc: net
                .moves_left_fc
                .as_ref()
                .map(|l| reader.dense(l, None))
                .transpose()?,
            area: reader.area,
        };
        let missed: Vec<String> = tensor_ids(net)
            .into_iter()
            .filter(|(_, id)| !reader.covered.contains(id))
            .map(|(path, _)| path)
            .collect();
        if !missed.is_empty() {
            return Err(unsupported(format!(
                "{} of the net's tensors are not in the kernels' plan: {}",
                missed.len(),
                missed.join(", ")
            )));
        }
        Ok(plan)
    }

    /// The ResNet body, if the net is one.
    pub(crate) fn resnet(&self) -> Option<&ResNetPlan> {
        match &self.body {
            Body::Resnet(r) => Some(r),
            Body::Mlp(_) => None,
        }
    }

    /// This plan read as gradients (the training kernels keep their
    /// gradients in a copy of the plan), as burn tensors on `device` keyed by
    /// the net's parameter ids.  The moves-left head is left out unless
    /// `moves_left` (a batch without moves-left targets gives it no gradient,
    /// as with burn's autodiff); batch norm's running statistics are not
    /// parameters and have none.
    pub(crate) fn gradients(&self, device: &Device, moves_left: bool) -> GradientsParams {
        let mut grads = GradientsParams::new();
        let vector =
            |v: &[f32]| Tensor::<1>::from_data(TensorData::new(v.to_vec(), [v.len()]), device);
        let conv = |grads: &mut GradientsParams, c: &ConvLayer| {
            let kk_all = c.kernel * c.kernel;
            let mut w = vec![0.0; c.weight.len()];
            for o in 0..c.outputs {
                for i in 0..c.inputs {
                    for kk in 0..kk_all {
                        w[(o * c.inputs + i) * kk_all + kk] =
                            c.weight[(kk * c.inputs + i) * c.outputs + o];
                    }
                }
            }
            let shape = [c.outputs, c.inputs, c.kernel, c.kernel];
            grads.register(
                c.weight_id,
                Tensor::<4>::from_data(TensorData::new(w, shape), device),
            );
            if let (Some(b), Some(id)) = (&c.bias, c.bias_id) {
                grads.register(id, vector(b));
            }
            if let Some(n) = &c.norm {
                grads.register(n.gamma_id, vector(&n.gamma));
                grads.register(n.beta_id, vector(&n.beta));
            }
        };
        let area = self.area;
        let dense = |grads: &mut GradientsParams, l: &Dense, channels_last: Option<usize>| {
            let w = match channels_last {
                Some(c) => reorder_rows(&l.weight, l.outputs, c, area, true),
                None => l.weight.clone(),
            };
            if let Some(id) = l.weight_id {
                let w = Tensor::<2>::from_data(TensorData::new(w, [l.inputs, l.outputs]), device);
                grads.register(id, w);
            }
            if let Some(id) = l.bias_id {
                grads.register(id, vector(&l.bias));
            }
        };
        let value_channels = match &self.body {
            Body::Resnet(r) => {
                conv(&mut grads, &r.stem);
                for b in &r.blocks {
                    conv(&mut grads, &b.a);
                    conv(&mut grads, &b.b);
                    if let (Some(s), Some(id)) = (b.scale, b.scale_id) {
                        grads.register(id, vector(&[s]));
                    }
                }
                conv(&mut grads, &r.policy_conv);
                conv(&mut grads, &r.value_conv);
                match &r.policy_head {
                    PolicyHeadPlan::Dense(d) => dense(&mut grads, d, Some(r.policy_conv.outputs)),
                    PolicyHeadPlan::Conv { out, .. } => conv(&mut grads, out),
                }
                Some(r.value_conv.outputs)
            }
            Body::Mlp(m) => {
                for l in &m.layers {
                    dense(&mut grads, l, None);
                }
                dense(&mut grads, &m.policy_fc, None);
                None
            }
        };
        dense(&mut grads, &self.value_fc1, value_channels);
        dense(&mut grads, &self.value_fc2, None);
        if let (Some(l), true) = (&self.moves_left_fc, moves_left) {
            dense(&mut grads, l, None);
        }
        grads
    }
}

/// The batch norms of a ResNet's convolutions in the training kernels' order
/// (stem, each block's two, the policy head's, the value head's); `None` for
/// a convolution without one.
pub(crate) fn batch_norms(r: &ResNetBody) -> Vec<Option<&BatchNorm>> {
    let mut norms = vec![r.stem.bn.as_ref()];
    for b in &r.blocks {
        norms.push(b.a.bn.as_ref());
        norms.push(b.b.bn.as_ref());
    }
    norms.push(r.policy_conv.bn.as_ref());
    norms.push(r.value_conv.bn.as_ref());
    norms
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::PolicyValueNetConfig;
    use crate::{NetConfig, NetNorm};

    fn net(config: &NetConfig) -> PolicyValueNet {
        PolicyValueNetConfig::new(config.clone(), 7, 8, 1024).init(&Device::flex())
    }

    fn refused(net: &PolicyValueNet, what: &str) {
        match NetPlan::read(net, 8) {
            Err(ModelError::UnsupportedNet(msg)) => {
                assert!(msg.contains(what), "{msg:?} does not mention {what:?}")
            }
            other => panic!("expected an unsupported-net error, got {other:?}"),
        }
    }

    #[test]
    fn the_default_nets_are_covered_in_full() {
        for config in [
            NetConfig::resnet(2, 16),
            NetConfig {
                norm: NetNorm::None,
                moves_left_head: true,
                ..NetConfig::resnet(1, 8)
            },
            NetConfig::mlp(2, 32),
        ] {
            let plan = NetPlan::read(&net(&config), 8).unwrap();
            assert_eq!(
                plan.resnet().is_some(),
                config.kind == crate::NetKind::Resnet
            );
        }
    }

    #[test]
    fn layer_options_the_kernels_lack_are_errors() {
        let config = NetConfig::resnet(1, 8);
        let mut n = net(&config);
        n.resnet.as_mut().unwrap().blocks[0].a.conv.dilation = [2, 2];
        refused(&n, "dilation [2, 2]");
        let mut n = net(&config);
        n.resnet.as_mut().unwrap().stem.conv.stride = [2, 2];
        refused(&n, "stride [2, 2]");
        let mut n = net(&config);
        n.resnet.as_mut().unwrap().blocks[0].b.conv.padding = PaddingConfig2d::Valid;
        refused(&n, "padding Valid");
    }

    #[test]
    fn parameters_outside_the_plan_are_named() {
        // A ResNet that also carries a perceptron body: the kernels would
        // train the one and silently leave the other's weights alone.
        let mut n = net(&NetConfig::resnet(1, 8));
        n.mlp = net(&NetConfig::mlp(1, 16)).mlp;
        refused(&n, "mlp.layers.0");
    }
}
