//! The learning-rate schedule: linear warm-up, then constant, a cosine decay
//! to a floor, or an inverse-square-root decay.  A function of the global
//! step only (never of wall time), so a resumed run continues on the same
//! curve and the same seed gives the same weights.

use crate::config::{LrDecay, TrainSection};

/// Learning rate at optimizer step `step` (0-based, counted over the whole run).
pub fn learning_rate(cfg: &TrainSection, step: u64) -> f64 {
    let peak = cfg.learning_rate;
    if step < cfg.warmup_steps {
        return peak * (step + 1) as f64 / cfg.warmup_steps as f64;
    }
    if cfg.decay_steps == 0 {
        return peak;
    }
    let floor = peak * cfg.final_lr_fraction;
    let past = (step - cfg.warmup_steps) as f64;
    let d = cfg.decay_steps as f64;
    match cfg.decay {
        LrDecay::Cosine => {
            let t = (past / d).min(1.0);
            floor + (peak - floor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
        }
        LrDecay::InverseSqrt => (peak * (d / (d + past)).sqrt()).max(floor),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_then_cosine_to_the_floor() {
        let cfg = TrainSection {
            learning_rate: 1e-3,
            warmup_steps: 10,
            decay_steps: 100,
            final_lr_fraction: 0.1,
            ..TrainSection::default()
        };
        assert!((learning_rate(&cfg, 0) - 1e-4).abs() < 1e-12);
        assert!((learning_rate(&cfg, 9) - 1e-3).abs() < 1e-12);
        assert!((learning_rate(&cfg, 10) - 1e-3).abs() < 1e-12);
        assert!((learning_rate(&cfg, 60) - 5.5e-4).abs() < 1e-9);
        assert!((learning_rate(&cfg, 110) - 1e-4).abs() < 1e-12);
        assert!((learning_rate(&cfg, 10_000) - 1e-4).abs() < 1e-12);
        let constant = TrainSection {
            decay_steps: 0,
            ..cfg
        };
        assert_eq!(learning_rate(&constant, 5000), 1e-3);
    }

    #[test]
    fn inverse_sqrt_halves_after_three_time_constants_and_stops_at_the_floor() {
        let cfg = TrainSection {
            learning_rate: 2e-3,
            warmup_steps: 100,
            decay_steps: 1000,
            decay: LrDecay::InverseSqrt,
            final_lr_fraction: 0.1,
            ..TrainSection::default()
        };
        assert!((learning_rate(&cfg, 100) - 2e-3).abs() < 1e-12);
        assert!((learning_rate(&cfg, 3100) - 1e-3).abs() < 1e-12);
        assert!(learning_rate(&cfg, 1100) < learning_rate(&cfg, 600));
        // sqrt(1000 / 100000) = 0.1: the floor from there on.
        assert!((learning_rate(&cfg, 100_100) - 2e-4).abs() < 1e-12);
        assert!((learning_rate(&cfg, 10_000_000) - 2e-4).abs() < 1e-12);
    }
}
