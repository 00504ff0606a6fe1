//! The openings a run uses: the decks of the gate and the ladder, and the
//! positions self-play games may start from (`selfplay.openings`).  All of
//! them are loaded once at the start of a run ([`check`]), so a setting that
//! cannot work for the run's variant (`ballot` for italian) is refused
//! before any work.

use crate::config::RunConfig;
use crate::rundir::RunError;
use tammi_evaluator::openings::{Opening, OpeningError, OpeningSource, load_openings};
use tammi_rules::{Position, Variant};
use tammi_selfplay::SelfPlayConfig;

/// How many openings `selfplay.openings = "random:K"` draws (from the run's seed).
pub const RANDOM_SELFPLAY_OPENINGS: usize = 1024;

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

/// The positions after each opening of `selfplay.openings` (none when it is
/// empty): where a share `selfplay.opening_fraction` of the games start.
pub fn selfplay_starts(
    cfg: &SelfPlayConfig,
    variant: Variant,
    seed: u64,
) -> Result<Vec<Position>, RunError> {
    if cfg.openings.is_empty() {
        return Ok(Vec::new());
    }
    let key = "selfplay.openings";
    let openings = deck(variant, key, &cfg.openings, RANDOM_SELFPLAY_OPENINGS, seed)?;
    openings
        .iter()
        .map(|o| {
            o.game(variant)
                .map(|g| *g.position())
                .map_err(|source| RunError::Openings {
                    setting: format!("{key} = {:?}", cfg.openings),
                    source: Box::new(source),
                })
        })
        .collect()
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
    selfplay_starts(&cfg.selfplay, variant, seed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selfplay(openings: &str) -> SelfPlayConfig {
        SelfPlayConfig {
            openings: openings.into(),
            ..SelfPlayConfig::default()
        }
    }

    #[test]
    fn selfplay_starts_come_from_the_setting() {
        let english = Variant::English;
        assert!(
            selfplay_starts(&selfplay(""), english, 1)
                .unwrap()
                .is_empty()
        );
        // The deck: every opening, three plies in (White to move).
        let ballot = selfplay_starts(&selfplay("ballot"), english, 1).unwrap();
        let deck = deck(english, "k", "ballot", 0, 1).unwrap();
        assert_eq!(ballot.len(), deck.len());
        assert!(ballot.len() > 100);
        assert!(
            ballot
                .iter()
                .all(|p| p.side_to_move() == tammi_rules::Color::White)
        );
        // Random openings: distinct positions two plies in, the same for one seed.
        let random = selfplay_starts(&selfplay("random:2"), english, 7).unwrap();
        assert!((2..=49).contains(&random.len()), "{}", random.len());
        let mut distinct = random.clone();
        distinct.sort_by_key(tammi_rules::to_fen);
        distinct.dedup();
        assert_eq!(distinct.len(), random.len());
        assert_eq!(
            selfplay_starts(&selfplay("random:2"), english, 7).unwrap(),
            random
        );
    }

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
