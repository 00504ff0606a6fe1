//! The settings of MCTS: how the tree is searched and the move chosen, apart
//! from how games are generated (threads, shards, resignation, tables),
//! which self-play keeps in its own config.

use serde::{Deserialize, Serialize};

/// How the root move is chosen and what the policy target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootSelection {
    /// AlphaZero: PUCT everywhere, Dirichlet noise at the root, the move drawn
    /// from the visit counts with the temperature schedule, the visit
    /// distribution as policy target.
    Puct,
    /// Gumbel AlphaZero (Danihelka et al., 2022): Gumbel-top-k sampling of
    /// root candidates, sequential halving over the simulation budget, the
    /// completed-Q improved policy as target.  Sound with small budgets.
    Gumbel,
}

/// What MCTS reads: the tree policy, root noise and the move choice.  The
/// defaults are self-play's; [`SearchParams::for_matches`] gives match play's.
/// In config files these are keys of the `[selfplay]` section.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchParams {
    /// `puct` or `gumbel`.
    pub root_selection: RootSelection,
    /// PUCT exploration constant.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's
    /// network value minus this times the square root of the visited
    /// children's prior mass.
    pub fpu_reduction: f32,
    /// Dirichlet noise concentration at the root (PUCT only).
    pub dirichlet_alpha: f32,
    /// Share of the root priors replaced by Dirichlet noise (PUCT only; 0 = none).
    pub dirichlet_fraction: f32,
    /// Temperature of the move choice during the first `temperature_plies` plies (PUCT only).
    pub temperature: f32,
    /// Plies played with `temperature`.
    pub temperature_plies: u32,
    /// Temperature after that (0 = the most visited move).
    pub final_temperature: f32,
    /// Keep the subtree of the played move for the next search.
    pub tree_reuse: bool,
    /// Gumbel: root moves considered (k of Gumbel-top-k).
    pub gumbel_considered: u32,
    /// Gumbel: `c_visit` of the sigma transform of Q values.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of the sigma transform of Q values.
    pub gumbel_c_scale: f32,
    /// What a draw is worth in the search's choices, to whichever side is to
    /// move, in units where a win is 1 and a loss -1: 0 is the game's own
    /// value; below 0 both sides avoid draws (draw aversion, a symmetric
    /// contempt), which keeps self-play of drawish games from settling into
    /// repetitions that teach the value head nothing.  The recorded W/D/L
    /// (value targets) stay the game's; only move choice and the improved
    /// policy see this.  In `[-1, 1]`.
    pub draw_value: f32,
    /// How much less than [`SearchParams::draw_value`] a draw is worth to
    /// the side the search plays for (the root's side to move), and how much
    /// more to its opponent: above 0 the player avoids draws it could
    /// take and looks for lines where its opponent cannot hold one, as a
    /// chess engine's contempt does against a weaker opponent.  Only move
    /// choice sees it.  0 in self-play, where both sides are the same net.
    /// In `[0, 1]`.
    pub contempt: f32,
    /// A node with exactly one legal move (a forced capture, mostly) is
    /// expanded without asking the evaluator, and the walk goes on to its
    /// child: the forced reply is played inside the tree, so the network
    /// call values the position past it, with the exchange settled, and no
    /// call is spent on a node whose only choice is known.  Off = every
    /// leaf is evaluated, forced or not.  On in match play
    /// ([`SearchParams::for_matches`]: +49 Elo at 200 ms a move head to head,
    /// level against alpha-beta); off in self-play until measured there.
    pub forced_extension: bool,
    /// Temperature of the network's move priors as the tree reads them:
    /// each prior is raised to `1 / T` and the node's priors renormalised
    /// (a softmax of the policy logits divided by `T`).  Above 1 the search
    /// spends more visits on moves the network rates low (Leela Chess Zero
    /// plays with 1.36); 1 reads the priors as the network gives them.  Match play
    /// reads [`MATCH_POLICY_TEMPERATURE`] (`ptemp=F` in a player spec
    /// replaces it); self-play keeps 1, what its policy targets assume.
    pub policy_temperature: f32,
}

impl Default for SearchParams {
    fn default() -> SearchParams {
        SearchParams {
            root_selection: RootSelection::Gumbel,
            c_puct: 1.5,
            fpu_reduction: 0.25,
            dirichlet_alpha: 1.0,
            dirichlet_fraction: 0.25,
            temperature: 1.0,
            temperature_plies: 12,
            final_temperature: 0.0,
            tree_reuse: true,
            gumbel_considered: 8,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            draw_value: 0.0,
            contempt: 0.0,
            forced_extension: false,
            policy_temperature: 1.0,
        }
    }
}

/// A search setting out of range: the key and what it must be.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key} {why}")]
pub struct ParamError {
    /// The setting's name, as in the config file.
    pub key: &'static str,
    /// What its value must be.
    pub why: &'static str,
}

/// The policy temperature of match play: the English campaign's net
/// (`models/english-default`) rates too few moves, and reading its priors at 2
/// (BENCHMARKS.md, "The network's priors at a temperature") scored 14 to 20
/// points more against alpha-beta at 2,000 simulations a move than at 1.
pub const MATCH_POLICY_TEMPERATURE: f32 = 2.0;

impl SearchParams {
    /// Match play: PUCT, no noise, the most visited move, tree reuse, forced
    /// moves played inside the tree, the priors at
    /// [`MATCH_POLICY_TEMPERATURE`].
    pub fn for_matches() -> SearchParams {
        SearchParams {
            forced_extension: true,
            policy_temperature: MATCH_POLICY_TEMPERATURE,
            root_selection: RootSelection::Puct,
            dirichlet_fraction: 0.0,
            temperature: 0.0,
            temperature_plies: 0,
            final_temperature: 0.0,
            tree_reuse: true,
            ..SearchParams::default()
        }
    }

    /// Checks every value's range, naming the first bad key.
    pub fn validate(&self) -> Result<(), ParamError> {
        let bad = |key, why| Err(ParamError { key, why });
        let non_negative = |x: f32| x.is_finite() && x >= 0.0;
        let unit = |x: f32| x.is_finite() && (0.0..=1.0).contains(&x);
        if !non_negative(self.c_puct) {
            return bad("c_puct", "must be a finite number >= 0");
        }
        if !(self.policy_temperature.is_finite() && self.policy_temperature > 0.0) {
            return bad("policy_temperature", "must be a finite number > 0");
        }
        if !non_negative(self.fpu_reduction) {
            return bad("fpu_reduction", "must be a finite number >= 0");
        }
        if !(self.dirichlet_alpha.is_finite() && self.dirichlet_alpha > 0.0) {
            return bad("dirichlet_alpha", "must be a finite number > 0");
        }
        if !unit(self.dirichlet_fraction) {
            return bad("dirichlet_fraction", "must be between 0 and 1");
        }
        if !non_negative(self.temperature) {
            return bad("temperature", "must be a finite number >= 0");
        }
        if !non_negative(self.final_temperature) {
            return bad("final_temperature", "must be a finite number >= 0");
        }
        if self.gumbel_considered < 1 {
            return bad("gumbel_considered", "must be at least 1");
        }
        if !non_negative(self.gumbel_c_visit) {
            return bad("gumbel_c_visit", "must be a finite number >= 0");
        }
        if !non_negative(self.gumbel_c_scale) {
            return bad("gumbel_c_scale", "must be a finite number >= 0");
        }
        if !(self.draw_value.is_finite() && (-1.0..=1.0).contains(&self.draw_value)) {
            return bad("draw_value", "must be between -1 and 1");
        }
        if !unit(self.contempt) {
            return bad("contempt", "must be between 0 and 1");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_match_settings_are_valid_and_ranges_are_checked() {
        SearchParams::default().validate().unwrap();
        SearchParams::for_matches().validate().unwrap();
        let p = SearchParams {
            dirichlet_fraction: 1.5,
            ..SearchParams::default()
        };
        assert_eq!(p.validate().unwrap_err().key, "dirichlet_fraction");
        let p = SearchParams {
            c_puct: f32::NAN,
            ..SearchParams::default()
        };
        assert_eq!(p.validate().unwrap_err().key, "c_puct");
        for bad_draw in [-1.5, 2.0, f32::NAN] {
            let p = SearchParams {
                draw_value: bad_draw,
                ..SearchParams::default()
            };
            assert_eq!(p.validate().unwrap_err().key, "draw_value");
        }
        for bad_contempt in [-0.1, 1.5, f32::NAN] {
            let p = SearchParams {
                contempt: bad_contempt,
                ..SearchParams::for_matches()
            };
            assert_eq!(p.validate().unwrap_err().key, "contempt");
        }
    }
}
