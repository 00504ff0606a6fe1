//! A model's lineage: the legs of training that made it, each a run on one
//! machine (from scratch, or continued from the previous leg's model with
//! `tammi train --from`), and their totals.  Kept in the model card so a
//! model directory says how much training it holds and where it was done.

use serde::{Deserialize, Serialize};

/// One leg: a run that trained the model further, on one machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Leg {
    /// The machine, in words (CPU model and threads; the backend).
    pub machine: String,
    /// `git describe` of the tammi that ran the leg.
    pub commit: String,
    /// When the leg's run directory was created, UTC, RFC 3339.
    pub started: String,
    /// Training hours of the leg (self-play, training, gating; the ladder,
    /// a measurement, left out).
    pub hours: f64,
    /// First and last generation the leg played.
    pub generations: [u64; 2],
    /// Self-play games the leg played.
    pub games: u64,
    /// Optimizer steps of the model at the leg's end (over all legs).
    pub steps: u64,
    /// What the leg did differently, in words: config keys changed from the
    /// previous leg's, new optimizer moments, a count estimated (empty when
    /// nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The legs of a model's training, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lineage {
    pub legs: Vec<Leg>,
    /// Sum of the legs' hours.
    pub total_hours: f64,
    /// Sum of the legs' games.
    pub total_games: u64,
    /// The last leg's last generation.
    pub generations: u64,
}

impl Lineage {
    /// The lineage with `leg` appended and the totals recomputed.
    pub fn with_leg(&self, leg: Leg) -> Lineage {
        let mut legs = self.legs.clone();
        legs.push(leg);
        Lineage::from_legs(legs)
    }

    /// A lineage of these legs, with their totals.
    pub fn from_legs(legs: Vec<Leg>) -> Lineage {
        Lineage {
            total_hours: legs.iter().map(|l| l.hours).sum(),
            total_games: legs.iter().map(|l| l.games).sum(),
            generations: legs.last().map_or(0, |l| l.generations[1]),
            legs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leg(hours: f64, generations: [u64; 2], games: u64) -> Leg {
        Leg {
            machine: "test".into(),
            commit: "abc".into(),
            started: "2026-12-05T00:00:00Z".into(),
            hours,
            generations,
            games,
            steps: 0,
            notes: Vec::new(),
        }
    }

    #[test]
    fn totals_follow_the_legs() {
        let l = Lineage::from_legs(vec![leg(1.0, [1, 133], 17_024)]);
        let l = l.with_leg(leg(2.0, [134, 400], 30_000));
        assert_eq!(l.legs.len(), 2);
        assert!((l.total_hours - 3.0).abs() < 1e-12);
        assert_eq!(l.total_games, 47_024);
        assert_eq!(l.generations, 400);
        let text = serde_json::to_string(&l).unwrap();
        assert_eq!(serde_json::from_str::<Lineage>(&text).unwrap(), l);
    }
}
