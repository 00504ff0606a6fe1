//! Match runner: colour-swapped pairs, PDN that replays, reproducible with a seed.

use tammi_evaluator::matchplay::{MatchConfig, run_match};
use tammi_rules::{Variant, read_pdn};
use tammi_search::PlayerSpec;
use tammi_search::openings::{OpeningSource, load_openings};

fn config(threads: usize, max_plies: Option<usize>) -> MatchConfig {
    MatchConfig {
        variant: Variant::English,
        a: "random".parse::<PlayerSpec>().unwrap(),
        b: "alphabeta:depth=1".parse::<PlayerSpec>().unwrap(),
        pairs: 12,
        openings: load_openings(Variant::English, &OpeningSource::Ballot, 0, 1).unwrap(),
        threads,
        seed: 42,
        max_plies,
        sprt: None,
    }
}

#[test]
fn pairs_swap_colours_and_pdn_replays_to_the_recorded_result() {
    let r = run_match(&config(2, None), |_| {}).unwrap();
    assert_eq!(r.games.len(), 24);
    assert_eq!(r.wdl.games(), 24);
    assert_eq!(r.pairs.pairs(), 12);
    for pair in r.games.chunks(2) {
        assert_eq!(pair[0].pair, pair[1].pair);
        assert_eq!(pair[0].opening, pair[1].opening);
        assert_ne!(pair[0].a_color, pair[1].a_color);
    }
    for g in &r.games {
        let games = read_pdn(&g.pdn, Variant::English).unwrap();
        assert_eq!(games.len(), 1);
        let replayed = &games[0];
        let outcome = replayed.game.outcome().expect("games end by the rules");
        assert_eq!(outcome.reason.name(), g.reason);
        let a_color = if g.a_color == "black" {
            tammi_rules::Color::Black
        } else {
            tammi_rules::Color::White
        };
        assert_eq!(outcome.score_for(a_color), g.a_score);
        assert_eq!(
            replayed.result.as_deref(),
            Some(tammi_rules::result_token(Variant::English, outcome.winner))
        );
        assert_eq!(replayed.stated_winner(), Some(outcome.winner));
        assert_eq!(replayed.game.ply(), g.plies);
    }
    // The one-ply searcher beats random almost always.
    assert!(r.score < 0.2, "{}", r.score);
}

#[test]
fn same_seed_same_games() {
    let x = run_match(&config(1, None), |_| {}).unwrap();
    let y = run_match(&config(2, None), |_| {}).unwrap();
    let moves = |r: &tammi_evaluator::matchplay::MatchResult| -> Vec<String> {
        r.games.iter().map(|g| g.pdn.clone()).collect()
    };
    assert_eq!(moves(&x), moves(&y));
}

#[test]
fn ply_cap_is_reported_as_adjudication() {
    let r = run_match(&config(2, Some(10)), |_| {}).unwrap();
    assert_eq!(r.adjudicated, 24);
    assert_eq!(r.wdl.draws, 24);
    assert!(
        r.games
            .iter()
            .all(|g| g.reason == "adjudicated" && g.pdn.contains("Termination"))
    );
}

#[test]
fn deeper_alpha_beta_beats_shallower_in_every_new_variant() {
    // Issue 16's bar for each new variant: depth 4 beats depth 2 by more than
    // 60% over 100 games from the variant's standard openings (4 random
    // plies).  Measured 2026-12-02 with seed 1: czech 78.5%, portuguese
    // 77.5%, thai 83.5%, the give-away games 70.0-78.0%; 2026-12-03:
    // finnish:huffing 96.0%, canadian 95.0%.  Issue 17's games, the same
    // bar, measured 2026-12-03: turkish 80.0%, gothic 66.0%, dameo 89.0%,
    // konane 87.0%, alquerque 66.5%.
    for v in [
        Variant::Czech,
        Variant::Portuguese,
        Variant::Thai,
        Variant::EnglishGiveaway,
        Variant::FinnishGiveaway,
        Variant::RussianGiveaway,
        Variant::InternationalGiveaway,
        Variant::FinnishHuffing,
        Variant::Canadian,
        Variant::Turkish,
        Variant::Gothic,
        Variant::Dameo,
        Variant::Konane,
        Variant::Alquerque,
    ] {
        let cfg = MatchConfig {
            variant: v,
            a: "alphabeta:depth=4".parse::<PlayerSpec>().unwrap(),
            b: "alphabeta:depth=2".parse::<PlayerSpec>().unwrap(),
            pairs: 50,
            openings: load_openings(v, &OpeningSource::Standard, 50, 1).unwrap(),
            threads: 2,
            seed: 1,
            max_plies: None,
            sprt: None,
        };
        let r = run_match(&cfg, |_| {}).unwrap();
        assert_eq!(r.wdl.games(), 100);
        assert!(r.score > 0.6, "{v}: {:?} = {:.3}", r.wdl, r.score);
    }
}

#[test]
fn search_plays_corner_and_one_way_far_better_than_chance() {
    // Issue 38's games.  Depth 4 does not beat depth 2 by 60% in them
    // (measured 2026-12-05, seed 1, 100 games: corner 55.5%, one-way 50.0%):
    // they are games of long tempo counts that the handcrafted evaluation
    // does not see within a few plies (one-way: depth 16 70%, depth 24 82.5%
    // against depth 2; VARIANTS.md), so the bar here is against random play.
    for v in [Variant::Corner, Variant::OneWay] {
        let cfg = MatchConfig {
            variant: v,
            a: "alphabeta:depth=4".parse::<PlayerSpec>().unwrap(),
            b: "random".parse::<PlayerSpec>().unwrap(),
            pairs: 20,
            openings: load_openings(v, &OpeningSource::Standard, 20, 1).unwrap(),
            threads: 2,
            seed: 1,
            max_plies: None,
            sprt: None,
        };
        let r = run_match(&cfg, |_| {}).unwrap();
        assert_eq!(r.wdl.games(), 40);
        assert!(r.score >= 0.85, "{v}: {:?} = {:.3}", r.wdl, r.score);
    }
}
