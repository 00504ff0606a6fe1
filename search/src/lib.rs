//! Every search of tammi, in one place for self-play, matches and analysis.
//!
//! - [`mcts`]: Monte Carlo tree search over one game (PUCT with first-play
//!   urgency and root Dirichlet noise, or the Gumbel AlphaZero root with
//!   sequential halving), driven one leaf at a time so callers can batch the
//!   leaves of many games; configured by [`SearchParams`].
//! - [`alphabeta`]: iterative-deepening alpha-beta with a transposition
//!   table ([`tt`]), capture extension and endgame tables, scoring leaves
//!   with an [`eval::Evaluation`] (the handcrafted one by default).
//! - [`proof`]: a node-bounded proof search that plays only proven wins.
//! - [`player`] and [`spec`]: the [`Player`](player::Player) trait, the
//!   players (random, alpha-beta, MCTS) and the spec strings that name them
//!   (`alphabeta:depth=8`, `mcts:model=DIR,sims=400`).
//! - [`openings`]: the opening decks matches and self-play start from.
//!
//! **Value convention**: every W/D/L is `[win, draw, loss]` for the side to
//! move of the position it belongs to, as in [`tammi_model::Evaluator`];
//! alpha-beta scores are likewise from the side to move's point of view.
//!
//! ```
//! use rand::SeedableRng;
//! use tammi_model::UniformEvaluator;
//! use tammi_rules::{Game, Variant};
//! use tammi_search::{MoveBudget, Search, SearchParams};
//! let game = Game::start(Variant::English);
//! let mut search = Search::new(&SearchParams::default());
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
//! let budget = MoveBudget { simulations: 32, explore: false };
//! let d = search
//!     .think(&game, &UniformEvaluator::new(Variant::English), budget, None, &mut rng)
//!     .unwrap();
//! assert!(game.legal_moves().contains(&d.mv));
//! assert!((d.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
//! ```

pub mod alphabeta;
pub mod eval;
pub mod mcts;
pub mod nnue;
mod noise;
pub mod openings;
mod params;
pub mod player;
pub mod proof;
pub mod spec;
pub mod tt;

pub use alphabeta::{AlphaBeta, MATE, SearchLimits, SearchOptions, SearchResult, TABLE_WIN};
pub use eval::{Evaluation, Handcrafted};
pub use mcts::{Decision, MoveBudget, Search, Step, flip_wdl};
pub use params::{MATCH_POLICY_TEMPERATURE, ParamError, RootSelection, SearchParams};
pub use player::{MoveInfo, Player, PlayerError};
pub use spec::{PlayerSpec, SearchConstant, SpecError};
