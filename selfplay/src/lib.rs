//! Self-play of tammi: games played by MCTS ([`tammi_search::Search`]) with
//! batched leaf evaluation across many concurrent games per worker thread,
//! writing versioned training shards.
//!
//! - [`run_selfplay`]: workers (rayon tasks), each advancing
//!   `games_per_thread` games and evaluating their leaves together, with
//!   playout-cap randomization and optional resignation.
//! - [`run_setup`]: what a run needs before its first game, from the
//!   `[selfplay]` settings: the endgame tables ([`open_tables`]; with them a
//!   game ends as soon as its position is in the tables, with the exact
//!   result as every sample's outcome target, [`GameEnd::Tables`], and search
//!   leaves in them are terminal with their exact value) and the opening starts.
//! - [`write_shard`] / [`read_shard`]: the training data, one file per batch
//!   of games, checksummed, versioned, written atomically, verified by replay.
//!
//! **Value convention**: every W/D/L here is `[win, draw, loss]` for the side
//! to move of the position it belongs to, as in [`tammi_model::Evaluator`];
//! see [`tammi_search::mcts`] for how it is backed up.
//!
//! ```
//! use std::ops::ControlFlow;
//! use std::time::Duration;
//! use tammi_model::UniformEvaluator;
//! use tammi_rules::Variant;
//! use tammi_selfplay::{Event, RunSetup, SelfPlayConfig, run_selfplay};
//! let cfg = SelfPlayConfig { simulations: 8, threads: 1, games_per_thread: 2, ..SelfPlayConfig::default() };
//! let mut games = Vec::new();
//! let ev = UniformEvaluator::new(Variant::English);
//! run_selfplay(&ev, &cfg, &RunSetup::default(), 2, 1, Duration::from_secs(1), &mut |e, _| {
//!     if let Event::Game(g) = e {
//!         games.push(*g);
//!     }
//!     Ok(ControlFlow::Continue(()))
//! })
//! .unwrap();
//! assert_eq!(games.len(), 2);
//! ```

mod config;
mod record;
mod setup;
mod shard;
mod tables;
mod targets;
mod worker;

pub use config::{
    CONFIG_SECTIONS, ConfigError, RootSelection, SelfPlayConfig, check_sections, config_variant,
    one_line,
};
pub use record::{GameEnd, GameRecord, Sample, result_for};
pub use setup::{RANDOM_SELFPLAY_OPENINGS, run_setup, selfplay_openings, selfplay_starts};
pub use shard::{
    SHARD_MAGIC, SHARD_VERSION, Shard, ShardError, ShardOrigin, decode_shard, encode_shard,
    read_shard, shard_files_below, write_atomic, write_games, write_shard, write_shard_from,
};
pub use tables::{EGDB_AUTO, OpenedTables, TablesSetting, open_tables};
pub use targets::{Truncated, ValueTargets, short_term_values};
pub use worker::{Event, RunSetup, RunStats, SelfPlayError, Sink, run_selfplay};
