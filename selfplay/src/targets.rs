//! Value targets that blend the game's outcome with the searches' values of
//! the moves that followed (KataGo's short-term value targets, folded into
//! the one W/D/L target of the net).
//!
//! The outcome of a self-play game is a noisy target for its early positions:
//! one blunder 80 plies later flips it, and a drawn game says "draw" about a
//! position one side was winning.  The root searches along the game know
//! better in the short run.  For a horizon of `h` plies (`l = 1 - 1/h`), the
//! short-term value of ply `i` is the exponentially weighted average of the
//! searched values of plies `i, i+1, ...`, with the weight left past the end
//! of the game on the outcome:
//!
//! `T_i = (1 - l) * q_i + l * T_{i+1}` (from ply `i`'s side to move), `T_n = z`.
//!
//! The training target is `(1 - w) * z + w * T`.  Plies without a search
//! (forced moves) pass their successor's value on unchanged.
//!
//! A game cut at `max_plies` has no outcome: the cut is a time limit of
//! self-play, not a result of the rules.  Counting it a draw teaches the
//! value head that long games are drawn, which in a game whose early
//! self-play mostly runs into the cut (Gothic) makes every position look
//! drawn.  With `truncated = "bootstrap"` its `z` is the last search's value
//! instead (a time limit is bootstrapped, not terminal: Pardo et al., "Time
//! Limits in Reinforcement Learning", 2018).

use crate::record::{GameEnd, Sample};
use serde::{Deserialize, Serialize};
use tammi_search::flip_wdl;

/// The outcome target `z` of a game cut at `max_plies`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Truncated {
    /// A draw, as the game is recorded.
    #[default]
    Draw,
    /// The last search's W/D/L, from each ply's side to move.
    Bootstrap,
}

/// How the value target of a sample is made (`weight` 0: the outcome alone);
/// `[train.value_target]` of a config.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ValueTargets {
    /// Share of the short-term value in the target, in `[0, 1]`.
    pub weight: f32,
    /// Horizon of the short-term value in plies (>= 1; 1 = the ply's own
    /// search value).
    pub horizon: f32,
    /// The outcome of a game cut at `max_plies`: `"draw"` or `"bootstrap"`.
    pub truncated: Truncated,
}

impl Default for ValueTargets {
    fn default() -> ValueTargets {
        ValueTargets {
            weight: 0.0,
            horizon: 1.0,
            truncated: Truncated::Draw,
        }
    }
}

impl ValueTargets {
    /// Rewrites the value target (`result`) of every sample of one game,
    /// given in order, whose `result` holds the game's outcome, and which
    /// ended by `end`.
    pub fn apply(&self, samples: &mut [Sample], end: GameEnd) {
        if end == GameEnd::MaxPlies && self.truncated == Truncated::Bootstrap {
            bootstrap_outcome(samples);
        }
        if self.weight <= 0.0 {
            return;
        }
        let short = short_term_values(samples, self.horizon);
        let w = self.weight.min(1.0);
        for (s, t) in samples.iter_mut().zip(short) {
            for (r, t) in s.result.iter_mut().zip(t) {
                *r = (1.0 - w) * *r + w * t;
            }
        }
    }
}

/// Replaces every sample's outcome by the last searched ply's root W/D/L,
/// seen from the sample's side to move; unchanged when no ply was searched.
fn bootstrap_outcome(samples: &mut [Sample]) {
    let Some(last) = samples.iter().rev().find(|s| s.root_visits > 0) else {
        return;
    };
    let (side, wdl) = (last.position.side_to_move(), last.root_wdl);
    for s in samples.iter_mut() {
        s.result = if s.position.side_to_move() == side {
            wdl
        } else {
            flip_wdl(wdl)
        };
    }
}

/// The short-term value `T_i` of every sample of one game (see the module
/// documentation), each for its own side to move.
pub fn short_term_values(samples: &[Sample], horizon: f32) -> Vec<[f32; 3]> {
    let keep = 1.0 - 1.0 / horizon.max(1.0);
    let mut out = vec![[0.0f32; 3]; samples.len()];
    let mut next: Option<[f32; 3]> = None;
    for i in (0..samples.len()).rev() {
        let s = &samples[i];
        let side = s.position.side_to_move();
        let later = match next {
            None => s.result,
            Some(t) if samples[i + 1].position.side_to_move() == side => t,
            Some(t) => flip_wdl(t),
        };
        let t = if s.root_visits == 0 {
            later
        } else {
            let mut t = [0.0; 3];
            for k in 0..3 {
                t[k] = (1.0 - keep) * s.root_wdl[k] + keep * later[k];
            }
            t
        };
        out[i] = t;
        next = Some(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tammi_rules::{Game, Variant};

    /// A hand-made game: the first `values.len()` plies of a fixed line from
    /// the start, with the given root values (`None` = a forced move) and
    /// `outcome` for the side to move at ply 0 (Black).
    fn game(values: &[Option<[f32; 3]>], outcome: [f32; 3]) -> Vec<Sample> {
        let mut g = Game::start(Variant::English);
        let mut out = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let moves = g.legal_moves().to_vec();
            let result = if i % 2 == 0 {
                outcome
            } else {
                flip_wdl(outcome)
            };
            out.push(Sample {
                position: *g.position(),
                no_progress: g.no_progress_plies(),
                repetitions: 0,
                policy: vec![1.0 / moves.len() as f32; moves.len()],
                moves: moves.clone(),
                played: 0,
                result,
                moves_left: (values.len() - i) as u32,
                full_search: true,
                root_visits: if v.is_some() { 10 } else { 0 },
                root_wdl: v.unwrap_or([0.0; 3]),
            });
            g.play(&moves[0]).unwrap();
        }
        out
    }

    fn close(a: [f32; 3], b: [f32; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    #[test]
    fn short_term_values_average_later_searches_by_hand() {
        // Horizon 2: l = 1/2.  Outcome: Black (ply 0's side) loses.
        let q0 = [0.6, 0.3, 0.1];
        let q1 = [0.2, 0.2, 0.6]; // White to move at ply 1
        let q2 = [0.5, 0.5, 0.0];
        let z0 = [0.0, 0.0, 1.0];
        let s = game(&[Some(q0), Some(q1), Some(q2)], z0);
        let t = short_term_values(&s, 2.0);
        // T2 = q2/2 + z2/2, z2 = z0 (Black to move again).
        let t2 = [0.25, 0.25, 0.5];
        assert!(close(t[2], t2), "{:?}", t[2]);
        // T1 = q1/2 + flip(T2)/2.
        let t1 = [0.35, 0.225, 0.425];
        assert!(close(t[1], t1), "{:?}", t[1]);
        // T0 = q0/2 + flip(T1)/2.
        let t0 = [0.5125, 0.2625, 0.225];
        assert!(close(t[0], t0), "{:?}", t[0]);
        for x in &t {
            assert!((x.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn horizon_one_is_the_search_value_and_forced_moves_pass_theirs_on() {
        let q0 = [0.6, 0.3, 0.1];
        let q2 = [0.1, 0.1, 0.8];
        let s = game(&[Some(q0), None, Some(q2)], [1.0, 0.0, 0.0]);
        let t = short_term_values(&s, 1.0);
        assert!(close(t[0], q0));
        // The forced ply 1 (White to move) takes ply 2's value, flipped.
        assert!(close(t[1], flip_wdl(q2)));
        assert!(close(t[2], q2));
        // A long horizon keeps mostly the outcome.
        let t = short_term_values(&s, 1e4);
        assert!(
            t[0].iter()
                .zip([1.0, 0.0, 0.0])
                .all(|(a, b)| (a - b).abs() < 1e-3),
            "{:?}",
            t[0]
        );
    }

    #[test]
    fn targets_blend_outcome_and_short_term_value() {
        let q = [0.5, 0.5, 0.0];
        let mut s = game(&[Some(q)], [0.0, 1.0, 0.0]);
        let untouched = s.clone();
        ValueTargets::default().apply(&mut s, GameEnd::MaxPlies);
        assert_eq!(s, untouched);
        ValueTargets {
            weight: 0.5,
            horizon: 1.0,
            ..ValueTargets::default()
        }
        .apply(&mut s, GameEnd::MaxPlies);
        // 0.5 * draw + 0.5 * q.
        assert!(close(s[0].result, [0.25, 0.75, 0.0]), "{:?}", s[0].result);
    }

    #[test]
    fn a_truncated_game_bootstraps_its_outcome_from_the_last_search() {
        // Three plies, the last one forced: the last search is ply 1's
        // (White to move), [0.7, 0.2, 0.1] for White.
        let q1 = [0.7, 0.2, 0.1];
        let draw = [0.0, 1.0, 0.0];
        let made = || game(&[Some([0.3, 0.4, 0.3]), Some(q1), None], draw);
        let bootstrap = ValueTargets {
            truncated: Truncated::Bootstrap,
            ..ValueTargets::default()
        };
        let mut s = made();
        bootstrap.apply(&mut s, GameEnd::MaxPlies);
        assert!(close(s[1].result, q1), "{:?}", s[1].result);
        // Black's plies take White's value flipped.
        assert!(close(s[0].result, flip_wdl(q1)) && close(s[2].result, flip_wdl(q1)));
        // A game the rules ended keeps its outcome; so does the default.
        for (targets, end) in [
            (
                bootstrap,
                GameEnd::Rules(tammi_rules::EndReason::Repetition),
            ),
            (ValueTargets::default(), GameEnd::MaxPlies),
        ] {
            let mut s = made();
            targets.apply(&mut s, end);
            assert!(s.iter().all(|x| x.result == draw), "{end:?}");
        }
        // With the short-term blend, the bootstrapped z is what is blended.
        let mut s = made();
        ValueTargets {
            weight: 0.5,
            horizon: 1.0,
            truncated: Truncated::Bootstrap,
        }
        .apply(&mut s, GameEnd::MaxPlies);
        assert!(close(s[1].result, q1), "{:?}", s[1].result);
    }
}
