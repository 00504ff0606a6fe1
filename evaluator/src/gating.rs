//! Gating: should a candidate network replace the current best?
//!
//! The candidate plays the best on balanced openings in colour-swapped pairs
//! under an SPRT (H0: candidate no better than `elo0`, H1: at least `elo1`).
//! The SPRT's decision stands when it reaches one; if the game budget runs out
//! first, the candidate is accepted only if its score is at least
//! `accept_score` — the fallback the trainer needs so that every generation
//! ends with a decision.

use crate::matchplay::{MatchConfig, MatchError, MatchResult, run_match};
use crate::stats::{Sprt, SprtDecision};
use tammi_rules::Variant;
use tammi_search::openings::Opening;
use tammi_search::spec::PlayerSpec;

/// How a gate is run.
#[derive(Clone)]
pub struct GateConfig {
    pub variant: Variant,
    pub openings: Vec<Opening>,
    /// Most game pairs to play.
    pub max_pairs: usize,
    pub sprt: Sprt,
    /// Score needed to accept when the SPRT has not decided.
    pub accept_score: f64,
    pub threads: usize,
    pub seed: u64,
    pub max_plies: Option<usize>,
}

/// The gate's decision with its numbers.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GateResult {
    pub accepted: bool,
    /// Why: `sprt-h1`, `sprt-h0`, `score` or `budget`.
    pub reason: String,
    pub result: MatchResult,
}

/// Plays `candidate` against `best` and decides.
pub fn gate(
    candidate: &PlayerSpec,
    best: &PlayerSpec,
    cfg: &GateConfig,
    progress: impl Fn(&crate::matchplay::MatchProgress) + Sync,
) -> Result<GateResult, MatchError> {
    let match_cfg = MatchConfig {
        variant: cfg.variant,
        a: candidate.clone(),
        b: best.clone(),
        pairs: cfg.max_pairs,
        openings: cfg.openings.clone(),
        threads: cfg.threads,
        seed: cfg.seed,
        max_plies: cfg.max_plies,
        sprt: Some(cfg.sprt),
    };
    let mut result = run_match(&match_cfg, progress)?;
    for g in &mut result.games {
        g.pdn.clear();
    }
    let (accepted, reason) = match result.sprt {
        Some(SprtDecision::AcceptH1) => (true, "sprt-h1"),
        Some(SprtDecision::AcceptH0) => (false, "sprt-h0"),
        _ if result.score >= cfg.accept_score => (true, "score"),
        _ => (false, "budget"),
    };
    Ok(GateResult {
        accepted,
        reason: reason.to_string(),
        result,
    })
}
