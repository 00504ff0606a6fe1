//! Players and their evaluation: the classical alpha-beta baseline with a
//! handcrafted evaluation, and (with later layers) matches, Elo and gating.

pub mod alphabeta;
pub mod chart;
pub mod eval;
pub mod gating;
pub mod matchplay;
pub mod openings;
pub mod player;
pub mod proof;
pub mod rating;
pub mod spec;
pub mod stats;
pub mod tt;

pub use alphabeta::{AlphaBeta, MATE, SearchLimits, SearchOptions, SearchResult, TABLE_WIN};
pub use matchplay::MatchError;
pub use player::PlayerError;
pub use spec::{PlayerSpec, SpecError};
