//! What self-play needs before its first game, from the `[selfplay]`
//! settings: the endgame tables (`selfplay.egdb`) and the positions games
//! may start from (`selfplay.openings`).  Both are loaded once, so a setting
//! that cannot work for the variant is refused before any game is played.

use crate::config::SelfPlayConfig;
use crate::tables::open_tables;
use crate::worker::{RunSetup, SelfPlayError};
use tammi_rules::{Position, Variant};
use tammi_search::openings::{Opening, OpeningSource, load_openings};

/// How many openings `selfplay.openings = "random:K"` draws (from the run's seed).
pub const RANDOM_SELFPLAY_OPENINGS: usize = 1024;

/// The setup of a run of self-play: tables opened, starts loaded (random
/// ones drawn from `seed`), and a one-line warning for the caller to show
/// when `selfplay.egdb = "auto"` found no tables.
pub fn run_setup(
    cfg: &SelfPlayConfig,
    variant: Variant,
    seed: u64,
) -> Result<(RunSetup, Option<String>), SelfPlayError> {
    let tables = open_tables(&cfg.egdb, variant)?;
    let setup = RunSetup {
        tables: tables.egdb,
        start: None,
        openings: selfplay_starts(cfg, variant, seed)?,
    };
    Ok((setup, tables.warning))
}

/// The openings of `selfplay.openings` (none when it is empty).
pub fn selfplay_openings(
    cfg: &SelfPlayConfig,
    variant: Variant,
    seed: u64,
) -> Result<Vec<Opening>, SelfPlayError> {
    if cfg.openings.is_empty() {
        return Ok(Vec::new());
    }
    let named = |source| SelfPlayError::Openings {
        setting: format!("selfplay.openings = {:?}", cfg.openings),
        source: Box::new(source),
    };
    let source: OpeningSource = cfg.openings.parse().map_err(named)?;
    load_openings(variant, &source, RANDOM_SELFPLAY_OPENINGS, seed).map_err(named)
}

/// The positions after each opening of `selfplay.openings` (none when it is
/// empty): where a share `selfplay.opening_fraction` of the games start.
pub fn selfplay_starts(
    cfg: &SelfPlayConfig,
    variant: Variant,
    seed: u64,
) -> Result<Vec<Position>, SelfPlayError> {
    selfplay_openings(cfg, variant, seed)?
        .iter()
        .map(|o| {
            o.game(variant)
                .map(|g| *g.position())
                .map_err(|source| SelfPlayError::Openings {
                    setting: format!("selfplay.openings = {:?}", cfg.openings),
                    source: Box::new(source),
                })
        })
        .collect()
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
        let deck = load_openings(english, &OpeningSource::Ballot, 0, 1).unwrap();
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
    fn a_setting_that_cannot_work_is_refused_naming_it() {
        let e = run_setup(&selfplay("ballot"), Variant::Italian, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("selfplay.openings = \"ballot\"") && e.contains("no ballot deck"),
            "{e}"
        );
        run_setup(&selfplay("random:3"), Variant::Italian, 1).unwrap();
        let e = run_setup(&selfplay("/no/such/openings.txt"), Variant::English, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read openings file"), "{e}");
    }
}
