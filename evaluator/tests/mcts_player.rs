//! Network players through MCTS: they play legal games, beat random, and a
//! bad model path is a clear error.

use tammi_evaluator::matchplay::{MatchConfig, run_match};
use tammi_model::{DeviceChoice, Model, NetConfig};
use tammi_rules::{Game, Variant};
use tammi_search::PlayerSpec;
use tammi_search::openings::{OpeningSource, load_openings};
use tammi_search::player::make_player;

fn match_config(a: &str, b: &str, pairs: usize) -> MatchConfig {
    MatchConfig {
        variant: Variant::English,
        a: a.parse::<PlayerSpec>().unwrap(),
        b: b.parse::<PlayerSpec>().unwrap(),
        pairs,
        openings: load_openings(Variant::English, &OpeningSource::Ballot, 0, 1).unwrap(),
        threads: 2,
        seed: 5,
        max_plies: None,
        sprt: None,
    }
}

#[test]
fn uniform_mcts_beats_random() {
    let r = run_match(&match_config("mcts:sims=200", "random", 10), |_| {}).unwrap();
    assert_eq!(r.wdl.games(), 20);
    assert!(r.score >= 0.75, "{:?}", r.wdl);
}

#[test]
fn a_saved_model_plays_through_mcts_and_bad_paths_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net");
    Model::new(
        Variant::English,
        &NetConfig::mlp(1, 16),
        3,
        DeviceChoice::Flex,
    )
    .unwrap()
    .save(&path)
    .unwrap();
    let spec = format!("mcts:model={},sims=16", path.display());
    let r = run_match(&match_config(&spec, "random", 2), |_| {}).unwrap();
    assert_eq!(r.wdl.games(), 4);
    assert!(r.games.iter().all(|g| g.reason != "adjudicated"));
    // The player reports its value and visits.
    let mut p = make_player(&spec.parse().unwrap(), Variant::English, 1).unwrap();
    let game = Game::start(Variant::English);
    let (m, info) = p.choose(&game).unwrap();
    assert!(game.legal_moves().contains(&m));
    assert!(info.nodes.unwrap() >= 16);
    // A missing model, or a model of another variant, is an error, not a panic.
    let missing: PlayerSpec = "mcts:model=/nonexistent/net,sims=4".parse().unwrap();
    let err = make_player(&missing, Variant::English, 1).err().unwrap();
    assert!(!err.to_string().is_empty());
    assert!(make_player(&spec.parse().unwrap(), Variant::Russian, 1).is_err());
    // The spec's backend is the one the net runs on: a GPU backend that this
    // build lacks is refused, never silently replaced by the CPU.
    if !DeviceChoice::Cuda.compiled_in() {
        let cuda: PlayerSpec = format!("{spec},backend=cuda").parse().unwrap();
        let err = make_player(&cuda, Variant::English, 1)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("cuda"), "{err}");
        let e = run_match(&match_config(&cuda.to_string(), "random", 1), |_| {})
            .err()
            .unwrap();
        assert!(e.to_string().contains("cuda"), "{e}");
    }
}

#[test]
fn an_evaluator_failure_is_an_error_not_a_silent_move() {
    use std::sync::Arc;
    use tammi_model::UniformEvaluator;
    use tammi_search::player::{MctsPlayer, Player};
    // An evaluator for another variant fails on every English position.
    let mut p = MctsPlayer::new(
        Arc::new(UniformEvaluator::new(Variant::Russian)),
        Some(8),
        None,
        1,
        "broken".into(),
    );
    let err = p.choose(&Game::start(Variant::English)).unwrap_err();
    assert!(err.to_string().starts_with("broken:"), "{err}");
}
