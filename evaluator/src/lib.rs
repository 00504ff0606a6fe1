//! Judging players: matches on balanced openings with colours swapped,
//! gating of a candidate against the accepted model, Elo with intervals and
//! SPRT, rating lists and charts.  The players and their searches live in
//! [`tammi_search`]; this crate only plays them against each other.

pub mod chart;
pub mod gating;
pub mod matchplay;
pub mod rating;
pub mod stats;

pub use matchplay::MatchError;
