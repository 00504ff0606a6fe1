//! tammi's own CPU kernels for the policy-value net: one plan of the net's
//! layers read from burn ([`plan`]), run forward for inference ([`infer`])
//! and forward and backward for training ([`train`]) on shared building
//! blocks ([`layers`]), with direct and Winograd convolutions for AVX-512 CPUs ([`direct`],
//! [`winograd`]).  burn types stop at the plan: the kernels see plain
//! `f32` buffers.

pub(crate) mod direct;
pub(crate) mod infer;
pub(crate) mod layers;
pub(crate) mod plan;
pub(crate) mod train;
pub(crate) mod winograd;

pub(crate) use infer::CpuNet;
pub(crate) use plan::NetPlan;
pub(crate) use train::KernelTrainer;
