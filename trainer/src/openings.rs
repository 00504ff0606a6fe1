//! The openings a run uses: the decks of the gate and the ladder, and the
//! positions self-play games may start from (`selfplay.openings`, loaded by
//! [`tammi_selfplay::run_setup`]).  All of them are loaded once at the start
//! of a run ([`check`]), so a setting that cannot work for the run's variant
//! (`ballot` for italian) is refused before any work.

use crate::config::RunConfig;
use crate::rundir::RunError;
use tammi_rules::Variant;
use tammi_search::openings::{Opening, OpeningError, OpeningSource, load_openings};

/// The openings of one setting (`key` = `value`, e.g. `ladder.openings =
/// "ballot"`): a deck is used whole, random openings are `count` drawn from `seed`.
pub fn deck(
    variant: Variant,
    key: &str,
    value: &str,
    count: usize,
    seed: u64,
) -> Result<Vec<Opening>, RunError> {
    let named = |source: OpeningError| RunError::Openings {
        setting: format!("{key} = {value:?}"),
        source: Box::new(source),
    };
    let source: OpeningSource = value.parse().map_err(named)?;
    load_openings(variant, &source, count, seed).map_err(named)
}

/// Loads every opening setting the run will use, refusing the first that
/// does not work for its variant.
pub fn check(cfg: &RunConfig) -> Result<(), RunError> {
    let variant = cfg.variant();
    let seed = cfg.run.seed;
    if cfg.gating.enabled {
        let g = &cfg.gating;
        deck(variant, "gating.openings", &g.openings, g.pairs, seed)?;
    }
    if cfg.ladder.every > 0 {
        let l = &cfg.ladder;
        deck(variant, "ladder.openings", &l.openings, l.pairs, seed)?;
    }
    tammi_selfplay::selfplay_starts(&cfg.selfplay, variant, seed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_that_cannot_work_is_refused_at_the_start_naming_it() {
        let mut cfg = RunConfig::default();
        cfg.run.variant = Variant::Italian;
        cfg.ladder.every = 0;
        cfg.gating.enabled = false;
        cfg.selfplay.openings = "ballot".into();
        let e = check(&cfg).unwrap_err().to_string();
        assert!(
            e.contains("selfplay.openings = \"ballot\"") && e.contains("no ballot deck"),
            "{e}"
        );
        cfg.selfplay.openings = "random:3".into();
        check(&cfg).unwrap();
        cfg.selfplay.openings = "/no/such/openings.txt".into();
        let e = check(&cfg).unwrap_err().to_string();
        assert!(e.contains("cannot read openings file"), "{e}");
    }
}
