//! Training of tammi.  So far: the replay buffer over self-play shards (a
//! sliding window that grows with the data, uniform sampling, and a cap on
//! training steps per new sample).  The generation loop (self-play -> train
//! -> gate), checkpoints with optimizer state and resume come next.

pub mod replay;

pub use replay::{ReplayBuffer, ReplayError, WindowConfig, allowed_steps};
