//! Self-play of tammi: Monte Carlo tree search with batched leaf evaluation
//! across many concurrent games per worker thread, writing versioned
//! training shards.
//!
//! - [`Search`]: MCTS over one game (PUCT with first-play urgency and root
//!   Dirichlet noise, or the Gumbel AlphaZero root with sequential halving),
//!   driven one leaf at a time so callers can batch leaves of many games.
//! - [`run_selfplay`]: workers (rayon tasks), each advancing
//!   `games_per_thread` games and evaluating their leaves together, with
//!   playout-cap randomization and optional resignation.
//! - [`open_tables`]: the endgame tables of `selfplay.egdb`; with them a
//!   game ends as soon as its position is in the tables (with the exact
//!   result as every sample's outcome target, [`GameEnd::Tables`]) and search
//!   leaves in them are terminal with their exact value.
//! - [`write_shard`] / [`read_shard`]: the training data, one file per batch
//!   of games, checksummed, versioned, written atomically, verified by replay.
//!
//! **Value convention**: every W/D/L here is `[win, draw, loss]` for the side
//! to move of the position it belongs to, as in [`tammi_model::Evaluator`];
//! see [`mcts`] for how it is backed up.
//!
//! ```
//! use rand::SeedableRng;
//! use tammi_model::UniformEvaluator;
//! use tammi_rules::{Game, Variant};
//! use tammi_selfplay::{MoveBudget, Search, SelfPlayConfig};
//! let game = Game::start(Variant::English);
//! let mut search = Search::new(&SelfPlayConfig::default());
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
//! let budget = MoveBudget { simulations: 32, explore: false };
//! let d = search
//!     .think(&game, &UniformEvaluator::new(Variant::English), budget, None, &mut rng)
//!     .unwrap();
//! assert!(game.legal_moves().contains(&d.mv));
//! assert!((d.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
//! ```

mod config;
pub mod mcts;
mod noise;
mod record;
mod shard;
mod tables;
mod targets;
mod worker;

pub use config::{ConfigError, RootSelection, SelfPlayConfig};
pub use mcts::{Decision, MoveBudget, Search, Step, flip_wdl};
pub use record::{GameEnd, GameRecord, Sample};
pub use shard::{
    SHARD_MAGIC, SHARD_VERSION, Shard, ShardError, decode_shard, encode_shard, read_shard,
    write_atomic, write_games, write_shard,
};
pub use tables::{EGDB_AUTO, OpenedTables, TablesSetting, open_tables};
pub use targets::{ValueTargets, short_term_values};
pub use worker::{Event, RunSetup, RunStats, SelfPlayError, Sink, run_selfplay};
