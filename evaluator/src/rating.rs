//! Rating lists: maximum-likelihood Elo over every pair of players that met,
//! with 95% intervals, anchored on one player.
//!
//! The model is Bradley–Terry on the Elo scale (a draw counts as half a win
//! and half a loss).  To keep ratings finite when a player won or lost every
//! game against someone, each pair that met gets one virtual drawn game; with
//! hundreds of real games this moves ratings by a few points at most, and it
//! says so in the output.  Intervals come from the inverse of the observed
//! information (the Hessian of the log-likelihood) with the anchor held fixed,
//! so they are intervals relative to the anchor.

use crate::stats::Z95;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Games between two players: `score` is the first player's points.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairResult {
    pub a: String,
    pub b: String,
    pub games: f64,
    pub score: f64,
}

/// One player's rating.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Rating {
    pub player: String,
    pub elo: f64,
    /// Half-width of the 95% interval (0 for the anchor).
    pub interval: f64,
    pub games: f64,
    /// Points scored over all games (draws count one half).
    pub score: f64,
}

/// A computed rating list.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RatingList {
    pub anchor: String,
    /// Sorted by rating, best first.
    pub ratings: Vec<Rating>,
    /// Virtual drawn games added per pair that met.
    pub prior_draws_per_pair: f64,
}

/// Why ratings could not be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RatingError(pub String);

const K: f64 = std::f64::consts::LN_10 / 400.0;
const PRIOR_DRAWS: f64 = 1.0;

fn expected(diff: f64) -> f64 {
    1.0 / (1.0 + (-K * diff).exp())
}

/// Solves `m x = v` by Gaussian elimination with partial pivoting; `None` if singular.
fn solve(mut m: Vec<Vec<f64>>, mut v: Vec<f64>) -> Option<Vec<f64>> {
    let n = v.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        v.swap(col, pivot);
        for row in col + 1..n {
            let f = m[row][col] / m[col][col];
            let (upper, lower) = m.split_at_mut(row);
            for (x, p) in lower[0][col..].iter_mut().zip(&upper[col][col..]) {
                *x -= f * p;
            }
            v[row] -= f * v[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| m[row][k] * x[k]).sum();
        x[row] = (v[row] - s) / m[row][row];
    }
    Some(x)
}

/// Maximum-likelihood ratings of every player in `results`, the anchor at 0.
pub fn rate(results: &[PairResult], anchor: &str) -> Result<RatingList, RatingError> {
    let mut names: Vec<String> = results
        .iter()
        .flat_map(|r| [r.a.clone(), r.b.clone()])
        .collect();
    names.sort();
    names.dedup();
    let index: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let Some(&anchor_idx) = index.get(anchor) else {
        return Err(RatingError(format!("anchor '{anchor}' played no games")));
    };
    let n = names.len();
    // Aggregate games and points per ordered pair (i < j).
    let mut games = vec![vec![0.0; n]; n];
    let mut points = vec![vec![0.0; n]; n];
    for r in results {
        if r.games <= 0.0 || r.score < 0.0 || r.score > r.games || r.a == r.b {
            return Err(RatingError(format!(
                "bad result {} vs {}: {} of {}",
                r.a, r.b, r.score, r.games
            )));
        }
        let (i, j) = (index[r.a.as_str()], index[r.b.as_str()]);
        games[i][j] += r.games;
        games[j][i] += r.games;
        points[i][j] += r.score;
        points[j][i] += r.games - r.score;
    }
    for i in 0..n {
        for j in 0..n {
            if i != j && games[i][j] > 0.0 {
                games[i][j] += PRIOR_DRAWS;
                points[i][j] += PRIOR_DRAWS / 2.0;
            }
        }
    }
    // Connectivity: every player must be linked to the anchor.
    let mut seen = vec![false; n];
    let mut stack = vec![anchor_idx];
    seen[anchor_idx] = true;
    while let Some(i) = stack.pop() {
        for j in 0..n {
            if games[i][j] > 0.0 && !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(RatingError(format!(
            "player '{}' has no chain of games to the anchor '{anchor}'",
            names[i]
        )));
    }
    let free: Vec<usize> = (0..n).filter(|&i| i != anchor_idx).collect();
    let mut r = vec![0.0; n];
    let hessian = |r: &[f64]| {
        let mut h = vec![vec![0.0; free.len()]; free.len()];
        for (a, &i) in free.iter().enumerate() {
            for j in 0..n {
                if games[i][j] > 0.0 {
                    let p = expected(r[i] - r[j]);
                    let w = K * K * games[i][j] * p * (1.0 - p);
                    h[a][a] += w;
                    if let Some(b) = free.iter().position(|&f| f == j) {
                        h[a][b] -= w;
                    }
                }
            }
        }
        h
    };
    for _ in 0..100 {
        let grad: Vec<f64> = free
            .iter()
            .map(|&i| {
                K * (0..n)
                    .filter(|&j| games[i][j] > 0.0)
                    .map(|j| points[i][j] - games[i][j] * expected(r[i] - r[j]))
                    .sum::<f64>()
            })
            .collect();
        let step = solve(hessian(&r), grad.clone())
            .ok_or_else(|| RatingError("rating system is singular".into()))?;
        let mut biggest: f64 = 0.0;
        for (a, &i) in free.iter().enumerate() {
            let s = step[a].clamp(-400.0, 400.0);
            r[i] += s;
            biggest = biggest.max(s.abs());
        }
        if biggest < 1e-6 {
            break;
        }
    }
    // Standard errors from the inverse information matrix.
    let h = hessian(&r);
    let mut var = vec![0.0; n];
    for (a, &i) in free.iter().enumerate() {
        let mut e = vec![0.0; free.len()];
        e[a] = 1.0;
        let col =
            solve(h.clone(), e).ok_or_else(|| RatingError("rating system is singular".into()))?;
        var[i] = col[a];
    }
    let mut ratings: Vec<Rating> = (0..n)
        .map(|i| Rating {
            player: names[i].clone(),
            elo: r[i],
            interval: Z95 * var[i].max(0.0).sqrt(),
            games: (0..n).map(|j| games[i][j]).sum::<f64>()
                - PRIOR_DRAWS * (0..n).filter(|&j| games[i][j] > 0.0).count() as f64,
            score: (0..n).map(|j| points[i][j]).sum::<f64>()
                - PRIOR_DRAWS / 2.0 * (0..n).filter(|&j| games[i][j] > 0.0).count() as f64,
        })
        .collect();
    ratings.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    Ok(RatingList {
        anchor: anchor.to_string(),
        ratings,
        prior_draws_per_pair: PRIOR_DRAWS,
    })
}

impl RatingList {
    /// A markdown table.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "| rank | player | Elo | 95% | games | score |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for (i, r) in self.ratings.iter().enumerate() {
            let pct = if r.games > 0.0 {
                100.0 * r.score / r.games
            } else {
                0.0
            };
            let _ = writeln!(
                s,
                "| {} | {} | {:+.0} | ±{:.0} | {} | {:.1}% |",
                i + 1,
                r.player,
                r.elo,
                r.interval,
                r.games,
                pct
            );
        }
        let _ = writeln!(
            s,
            "\nAnchor: {} = 0. Maximum-likelihood Elo; {} virtual draw per pair that met keeps perfect scores finite.",
            self.anchor, self.prior_draws_per_pair
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(a: &str, b: &str, games: f64, score: f64) -> PairResult {
        PairResult {
            a: a.into(),
            b: b.into(),
            games,
            score,
        }
    }

    #[test]
    fn two_players_match_the_closed_form() {
        // 1000 games at 75%: +191 Elo, shifted slightly toward 0 by the virtual draw.
        let list = rate(&[pr("x", "anchor", 1000.0, 750.0)], "anchor").unwrap();
        let x = list.ratings.iter().find(|r| r.player == "x").unwrap();
        let expected = crate::stats::elo_from_score(750.5 / 1001.0);
        assert!((x.elo - expected).abs() < 0.01, "{} vs {expected}", x.elo);
        // Interval: 1.96 / sqrt(I), I = k^2 n p (1-p).
        let p = 750.5 / 1001.0;
        let se = 1.0 / (K * K * 1001.0 * p * (1.0 - p)).sqrt();
        assert!((x.interval - Z95 * se).abs() < 0.01);
        assert_eq!(x.games, 1000.0);
        assert_eq!(x.score, 750.0);
    }

    #[test]
    fn transitive_chain_and_perfect_scores_stay_finite() {
        let list = rate(
            &[
                pr("b", "a", 200.0, 150.0),
                pr("c", "b", 200.0, 150.0),
                pr("c", "a", 100.0, 100.0),
            ],
            "a",
        )
        .unwrap();
        let elo = |n: &str| list.ratings.iter().find(|r| r.player == n).unwrap().elo;
        assert_eq!(list.ratings[0].player, "c");
        assert!(elo("b") > 150.0 && elo("b") < 250.0, "{}", elo("b"));
        assert!(elo("c") > elo("b") + 150.0 && elo("c").is_finite());
        assert_eq!(elo("a"), 0.0);
    }

    #[test]
    fn disconnected_or_unknown_anchor_is_an_error() {
        assert!(rate(&[pr("a", "b", 10.0, 5.0), pr("c", "d", 10.0, 5.0)], "a").is_err());
        assert!(rate(&[pr("a", "b", 10.0, 5.0)], "z").is_err());
        assert!(rate(&[pr("a", "b", 10.0, 11.0)], "a").is_err());
    }
}
