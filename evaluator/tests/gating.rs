//! The gate accepts a clearly stronger candidate and rejects a weaker one.

use tammi_evaluator::gating::{GateConfig, gate};
use tammi_evaluator::stats::Sprt;
use tammi_rules::Variant;
use tammi_search::PlayerSpec;
use tammi_search::openings::{OpeningSource, load_openings};

fn config() -> GateConfig {
    GateConfig {
        variant: Variant::English,
        openings: load_openings(Variant::English, &OpeningSource::Ballot, 0, 1).unwrap(),
        max_pairs: 60,
        sprt: Sprt {
            elo0: 0.0,
            elo1: 50.0,
            alpha: 0.05,
            beta: 0.05,
        },
        accept_score: 0.55,
        threads: 2,
        seed: 3,
        max_plies: None,
    }
}

#[test]
fn stronger_candidate_is_accepted_weaker_rejected() {
    let strong: PlayerSpec = "alphabeta:depth=5".parse().unwrap();
    let weak: PlayerSpec = "alphabeta:depth=1".parse().unwrap();
    let up = gate(&strong, &weak, &config(), |_| {}).unwrap();
    assert!(up.accepted, "{:?} {:?}", up.reason, up.result.wdl);
    assert_eq!(up.reason, "sprt-h1");
    // The SPRT stops well before the budget.
    assert!(up.result.wdl.games() < 120, "{}", up.result.wdl.games());
    let down = gate(&weak, &strong, &config(), |_| {}).unwrap();
    assert!(!down.accepted);
    assert_eq!(down.reason, "sprt-h0");
}

#[test]
fn openings_deck_is_what_the_docs_say() {
    let deck = load_openings(Variant::English, &OpeningSource::Ballot, 0, 1).unwrap();
    assert_eq!(deck.len(), 174);
    assert!(deck.iter().all(|o| o.moves.len() == 3));
    // One per resulting position.
    let mut hashes: Vec<u64> = deck
        .iter()
        .map(|o| o.game(Variant::English).unwrap().position().hash())
        .collect();
    hashes.sort();
    hashes.dedup();
    assert_eq!(hashes.len(), 174);
    assert!(load_openings(Variant::Italian, &OpeningSource::Ballot, 0, 1).is_err());
}

#[test]
fn standard_openings_are_the_deck_in_english_and_four_random_plies_elsewhere() {
    let standard: OpeningSource = "standard".parse().unwrap();
    let english = load_openings(Variant::English, &standard, 0, 1).unwrap();
    assert_eq!(english.len(), 174);
    for v in [Variant::Czech, Variant::Thai, Variant::International] {
        let openings = load_openings(v, &standard, 30, 7).unwrap();
        assert_eq!(openings.len(), 30, "{v}");
        assert!(openings.iter().all(|o| o.moves.len() == 4), "{v}");
        assert!(openings.iter().all(|o| o.game(v).is_ok()), "{v}");
    }
}
