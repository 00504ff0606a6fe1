//! The learning-rate schedule: linear warm-up, then constant or a cosine
//! decay to a floor.  A function of the global step only, so a resumed run
//! continues on the same curve.

use crate::config::TrainSection;

/// Learning rate at optimizer step `step` (0-based, counted over the whole run).
pub fn learning_rate(cfg: &TrainSection, step: u64) -> f64 {
    let peak = cfg.learning_rate;
    if step < cfg.warmup_steps {
        return peak * (step + 1) as f64 / cfg.warmup_steps as f64;
    }
    if cfg.decay_steps == 0 {
        return peak;
    }
    let t = ((step - cfg.warmup_steps) as f64 / cfg.decay_steps as f64).min(1.0);
    let floor = peak * cfg.final_lr_fraction;
    floor + (peak - floor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
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
}
