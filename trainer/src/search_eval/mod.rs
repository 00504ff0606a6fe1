//! The learned evaluation inside alpha-beta (issue 36): its training data,
//! its network in burn, the fit, the bootstrap games and the recipe that
//! runs them all from an empty run directory.
//!
//! - [`data`]: positions from shards, deduplicated, with result and search labels.
//! - [`network`]: the burn network, weight for weight the search's [`tammi_search::nnue::NnueNet`].
//! - [`fit`]: AdamW epochs with a validation split.
//! - [`games`]: alpha-beta with the learned evaluation against itself.
//! - [`config`] and [`recipe`]: `tammi train-eval`.

pub mod config;
pub mod data;
pub mod fit;
pub mod games;
pub mod network;
pub mod recipe;

pub use config::SearchEvalConfig;
pub use recipe::{RecipeObserver, build, create};
