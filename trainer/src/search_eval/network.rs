//! The search evaluation's network in burn, for training: the same function
//! as [`tammi_search::nnue::NnueNet`] (which runs it inside alpha-beta),
//! with the first layer applied to dense multi-hot inputs.  Weights move
//! between the two as [`NnueParts`].

use burn::module::Param;
use burn::prelude::*;
use burn::tensor::activation::sigmoid;
use tammi_rules::Variant;
use tammi_search::nnue::{HIDDEN, NnueError, NnueNet, NnueParts};

/// The layers, laid out for `x.matmul(w)`: every weight is `[inputs, outputs]`.
#[derive(Module, Debug)]
pub struct EvalNetwork {
    w1: Param<Tensor<2>>,
    b1: Param<Tensor<1>>,
    w2: Param<Tensor<2>>,
    b2: Param<Tensor<1>>,
    w3: Param<Tensor<2>>,
    b3: Param<Tensor<1>>,
    w4: Param<Tensor<2>>,
    b4: Param<Tensor<1>>,
}

/// `rows x cols` row-major turned into `cols x rows`.
fn transpose(v: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; v.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = v[r * cols + c];
        }
    }
    out
}

fn param2(v: Vec<f32>, shape: [usize; 2], device: &Device) -> Param<Tensor<2>> {
    Param::from_tensor(Tensor::<2>::from_data(TensorData::new(v, shape), device))
}

fn param1(v: Vec<f32>, device: &Device) -> Param<Tensor<1>> {
    let n = v.len();
    Param::from_tensor(Tensor::<1>::from_data(TensorData::new(v, [n]), device))
}

fn values<const D: usize>(p: &Param<Tensor<D>>) -> Vec<f32> {
    p.val()
        .into_data()
        .try_into_vec_as::<f32>()
        .expect("float tensors hold f32")
}

impl EvalNetwork {
    /// The burn network holding `net`'s weights, on `device`.
    pub fn from_net(net: &NnueNet, device: &Device) -> EvalNetwork {
        let (f, h) = (NnueNet::features(net.variant()), net.width());
        let p = net.parts();
        EvalNetwork {
            w1: param2(p.w1, [f, h], device),
            b1: param1(p.b1, device),
            w2: param2(transpose(&p.w2, HIDDEN, 2 * h), [2 * h, HIDDEN], device),
            b2: param1(p.b2, device),
            w3: param2(transpose(&p.w3, HIDDEN, HIDDEN), [HIDDEN, HIDDEN], device),
            b3: param1(p.b3, device),
            w4: param2(p.w4, [HIDDEN, 1], device),
            b4: param1(vec![p.b4], device),
        }
    }

    /// The weights back as the search's network (checked like any loaded one).
    pub fn to_net(&self, variant: Variant, scale: f32) -> Result<NnueNet, NnueError> {
        let h = self.b1.val().dims()[0];
        let parts = NnueParts {
            w1: values(&self.w1),
            b1: values(&self.b1),
            w2: transpose(&values(&self.w2), 2 * h, HIDDEN),
            b2: values(&self.b2),
            w3: transpose(&values(&self.w3), HIDDEN, HIDDEN),
            b3: values(&self.b3),
            w4: values(&self.w4),
            b4: values(&self.b4)[0],
            scale,
        };
        NnueNet::from_parts(variant, h, parts)
    }

    /// The raw output for a batch (`[n, 1]`): the side to move's value in
    /// logit units (the search reads it times the net's scale).
    pub fn forward(&self, stm: Tensor<2>, other: Tensor<2>) -> Tensor<2> {
        let h = self.b1.val().dims()[0];
        let b1 = self.b1.val().reshape([1, h]);
        let w1 = self.w1.val();
        let a = stm.matmul(w1.clone()) + b1.clone();
        let b = other.matmul(w1) + b1;
        let x = Tensor::cat(vec![a, b], 1).clamp(0.0, 1.0);
        let x = (x.matmul(self.w2.val()) + self.b2.val().reshape([1, HIDDEN])).clamp(0.0, 1.0);
        let x = (x.matmul(self.w3.val()) + self.b3.val().reshape([1, HIDDEN])).clamp(0.0, 1.0);
        x.matmul(self.w4.val()) + self.b4.val().reshape([1, 1])
    }

    /// The predicted expected score (`sigmoid` of the output), `[n, 1]`.
    pub fn predict(&self, stm: Tensor<2>, other: Tensor<2>) -> Tensor<2> {
        sigmoid(self.forward(stm, other))
    }
}
