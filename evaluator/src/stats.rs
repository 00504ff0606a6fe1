//! Match statistics: score and Elo with 95% intervals, likelihood of
//! superiority, and the sequential probability ratio test.
//!
//! Games are played in pairs (each opening twice, colours swapped), so the
//! intervals are computed from the pairs' scores (the pentanomial model):
//! the two games of a pair share an opening and are not independent, and
//! treating them as independent would understate or overstate the spread.

/// Elo difference for an expected score in (0, 1).
pub fn elo_from_score(score: f64) -> f64 {
    let s = score.clamp(1e-9, 1.0 - 1e-9);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Expected score for an Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Standard normal cumulative distribution.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Complementary error function (Numerical Recipes' erfc, relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Wilson's 95% score interval for a proportion `p` observed over `n` trials.
pub fn wilson(p: f64, n: f64) -> (f64, f64) {
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// 1.96: the two-sided 95% quantile of the normal distribution.
pub const Z95: f64 = 1.959_963_985;

/// Win/draw/loss counts from one player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Wdl {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

impl Wdl {
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Counts one game from its score (1 win, 1/2 draw, 0 loss).
    pub fn add(&mut self, score: f64) {
        if score > 0.75 {
            self.wins += 1;
        } else if score < 0.25 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }

    /// Mean score per game (win 1, draw 1/2), 0.5 with no games.
    pub fn score(&self) -> f64 {
        let n = self.games();
        if n == 0 {
            0.5
        } else {
            (self.wins as f64 + 0.5 * self.draws as f64) / n as f64
        }
    }

    /// Likelihood of superiority: the probability that the player is the
    /// stronger one, from wins and losses (draws carry no information).
    pub fn los(&self) -> f64 {
        let decisive = (self.wins + self.losses) as f64;
        if decisive == 0.0 {
            0.5
        } else {
            normal_cdf((self.wins as f64 - self.losses as f64) / decisive.sqrt())
        }
    }

    /// Score interval at 95% treating games as independent (trinomial model).
    pub fn score_interval(&self) -> (f64, f64) {
        let n = self.games() as f64;
        if n == 0.0 {
            return (0.0, 1.0);
        }
        let mu = self.score();
        let var = (self.wins as f64 * (1.0 - mu).powi(2)
            + self.draws as f64 * (0.5 - mu).powi(2)
            + self.losses as f64 * mu.powi(2))
            / n;
        let half = Z95 * (var / n).sqrt();
        ((mu - half).max(0.0), (mu + half).min(1.0))
    }
}

/// Scores of game pairs: counts of pair totals 0, 1/2, 1, 3/2, 2 (pentanomial).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PairCounts(pub [u32; 5]);

impl PairCounts {
    /// Adds a pair from its two game scores (each 0, 0.5 or 1).
    pub fn add(&mut self, first: f64, second: f64) {
        let idx = ((first + second) * 2.0).round() as usize;
        self.0[idx.min(4)] += 1;
    }

    pub fn pairs(&self) -> u32 {
        self.0.iter().sum()
    }

    /// Mean score per game and the variance of a pair's mean score.
    fn mean_var(&self) -> (f64, f64) {
        let n = self.pairs() as f64;
        if n == 0.0 {
            return (0.5, 0.25);
        }
        let values = [0.0, 0.25, 0.5, 0.75, 1.0];
        let mu: f64 = self
            .0
            .iter()
            .zip(values)
            .map(|(&c, v)| c as f64 * v)
            .sum::<f64>()
            / n;
        let var: f64 = self
            .0
            .iter()
            .zip(values)
            .map(|(&c, v)| c as f64 * (v - mu).powi(2))
            .sum::<f64>()
            / n;
        (mu, var)
    }

    /// Mean score per game.
    pub fn score(&self) -> f64 {
        self.mean_var().0
    }

    /// 95% interval of the mean score.
    pub fn score_interval(&self) -> (f64, f64) {
        let n = self.pairs() as f64;
        if n == 0.0 {
            return (0.0, 1.0);
        }
        let (mu, var) = self.mean_var();
        if var == 0.0 {
            // Every pair scored the same (e.g. all wins): the normal
            // approximation collapses, so use Wilson's interval over the games.
            return wilson(mu, 2.0 * n);
        }
        let half = Z95 * (var / n).sqrt();
        ((mu - half).max(0.0), (mu + half).min(1.0))
    }

    /// Elo difference and its 95% interval (from the score interval); `None`
    /// where a value is infinite (a score of 0% or 100%).
    pub fn elo(&self) -> (Option<f64>, Option<f64>, Option<f64>) {
        let finite = |s: f64| (s > 0.0 && s < 1.0).then(|| elo_from_score(s));
        let (lo, hi) = self.score_interval();
        (finite(self.score()), finite(lo), finite(hi))
    }
}

/// Parameters of a sequential probability ratio test between two Elo hypotheses.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// The state of an SPRT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SprtDecision {
    /// H1 (elo >= elo1) accepted.
    AcceptH1,
    /// H0 (elo <= elo0) accepted.
    AcceptH0,
    Continue,
}

impl Sprt {
    /// Checks the hypotheses and error rates: finite `elo0 < elo1`, and
    /// `alpha`, `beta` strictly between 0 and 0.5.  The error says which is off.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.elo0.is_finite() && self.elo1.is_finite() && self.elo0 < self.elo1) {
            return Err(format!(
                "elo1 ({}) must be a number above elo0 ({})",
                self.elo1, self.elo0
            ));
        }
        for (name, x) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(x > 0.0 && x < 0.5) {
                return Err(format!("{name} ({x}) must be between 0 and 0.5"));
            }
        }
        Ok(())
    }

    /// Log-likelihood ratio bounds (lower, upper).
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// Generalised SPRT log-likelihood ratio of the pair results, with the
    /// normal approximation of the pair-score distribution.
    pub fn llr(&self, pairs: &PairCounts) -> f64 {
        let n = pairs.pairs() as f64;
        if n < 2.0 {
            return 0.0;
        }
        let (mu, var) = pairs.mean_var();
        if var <= 0.0 {
            return 0.0;
        }
        let (s0, s1) = (score_from_elo(self.elo0), score_from_elo(self.elo1));
        n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)
    }

    /// Decision after the given pairs.
    pub fn decide(&self, pairs: &PairCounts) -> SprtDecision {
        let llr = self.llr(pairs);
        let (lo, hi) = self.bounds();
        if llr >= hi {
            SprtDecision::AcceptH1
        } else if llr <= lo {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elo_of_known_scores() {
        assert!((elo_from_score(0.75) - 190.85).abs() < 0.01);
        assert!(elo_from_score(0.5).abs() < 1e-9);
        assert!((elo_from_score(0.25) + 190.85).abs() < 0.01);
        assert!((score_from_elo(190.848) - 0.75).abs() < 1e-4);
        assert!((normal_cdf(1.959_963_985) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
    }

    #[test]
    fn trinomial_hand_checked() {
        // 10 wins, 20 draws, 10 losses: mean 0.5; per-game variance
        // (10*0.25 + 20*0 + 10*0.25)/40 = 0.125; s.e. = sqrt(0.125/40) = 0.0559;
        // interval 0.5 +- 1.96*0.0559 = [0.3904, 0.6096].
        let w = Wdl {
            wins: 10,
            draws: 20,
            losses: 10,
        };
        let (lo, hi) = w.score_interval();
        assert!(
            (lo - 0.3904).abs() < 1e-3 && (hi - 0.6096).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert!((w.los() - 0.5).abs() < 1e-6);
        // 30 wins, 10 draws, 0 losses: 0.875.
        let w = Wdl {
            wins: 30,
            draws: 10,
            losses: 0,
        };
        assert!((w.score() - 0.875).abs() < 1e-12);
        assert!(w.los() > 0.999);
    }

    #[test]
    fn pentanomial_interval() {
        // 10 pairs, all 1.5/2: mean 0.75, no spread.
        let mut p = PairCounts::default();
        for _ in 0..10 {
            p.add(1.0, 0.5);
        }
        let (e, lo, hi) = p.elo();
        let (e, lo, hi) = (e.unwrap(), lo.unwrap(), hi.unwrap());
        // No spread between pairs: Wilson's interval over 20 games at 75%.
        let (wlo, whi) = wilson(0.75, 20.0);
        assert!((e - 190.85).abs() < 0.01);
        assert!((lo - elo_from_score(wlo)).abs() < 1e-6 && (hi - elo_from_score(whi)).abs() < 1e-6);
        let mut all = PairCounts::default();
        for _ in 0..20 {
            all.add(1.0, 1.0);
        }
        // 40 wins in 40 games: infinite Elo, but a finite lower bound
        // (Wilson: 40 / (40 + 1.96^2) = 0.9124).
        let (e, lo, hi) = all.elo();
        assert_eq!((e, hi), (None, None));
        assert!((score_from_elo(lo.unwrap()) - 0.9124).abs() < 1e-3);
        // Pairs 2/2 and 0/2 alternately: mean 0.5, variance 0.25.
        let mut p = PairCounts::default();
        for _ in 0..8 {
            p.add(1.0, 1.0);
            p.add(0.0, 0.0);
        }
        let (lo, hi) = p.score_interval();
        let half = Z95 * (0.25f64 / 16.0).sqrt();
        assert!((lo - (0.5 - half)).abs() < 1e-9 && (hi - (0.5 + half)).abs() < 1e-9);
    }

    /// Simulated pairs from a player of known Elo against an equal field.
    fn simulate(elo: f64, draw_rate: f64, seed: u64, sprt: &Sprt) -> SprtDecision {
        let mut state = seed | 1;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let s = score_from_elo(elo);
        // P(win) - P(loss) = 2s - 1 with the given draw rate.
        let win = s - draw_rate / 2.0;
        let mut pairs = PairCounts::default();
        let mut game = || {
            let u = uniform();
            if u < win {
                1.0
            } else if u < win + draw_rate {
                0.5
            } else {
                0.0
            }
        };
        for _ in 0..200_000 {
            let (a, b) = (game(), game());
            pairs.add(a, b);
            match sprt.decide(&pairs) {
                SprtDecision::Continue => {}
                d => return d,
            }
        }
        SprtDecision::Continue
    }

    #[test]
    fn sprt_decides_right_on_simulated_players() {
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 30.0,
            alpha: 0.05,
            beta: 0.05,
        };
        let mut right = 0;
        for seed in 1..=40u64 {
            right += (simulate(60.0, 0.4, seed * 7919, &sprt) == SprtDecision::AcceptH1) as u32;
            right += (simulate(-30.0, 0.4, seed * 104_729, &sprt) == SprtDecision::AcceptH0) as u32;
        }
        // With alpha = beta = 5% and true values well outside [elo0, elo1], nearly all are right.
        assert!(right >= 76, "{right}/80 right");
    }
}
