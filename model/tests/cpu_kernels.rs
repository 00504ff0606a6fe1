//! tammi's CPU kernels against burn's forward pass on the trained model
//! shipped in `models/english-default` (real weights and batch-norm statistics).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use tammi_model::{
    DeviceChoice, EvalRequest, EvalResult, Evaluator, InferenceEngine, Model, NetEvaluator,
};
use tammi_rules::{Game, Move, Position, Variant};

struct Sample {
    position: Position,
    moves: Vec<Move>,
    no_progress: u16,
    repetitions: u32,
}

fn random_positions(want: usize, seed: u64) -> Vec<Sample> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(want);
    while out.len() < want {
        let mut g = Game::start(Variant::English);
        while g.outcome().is_none() && out.len() < want && g.ply() < 150 {
            let moves = g.legal_moves().to_vec();
            out.push(Sample {
                position: *g.position(),
                moves: moves.clone(),
                no_progress: g.no_progress_plies(),
                repetitions: g.repetition_count() as u32,
            });
            g.play(&moves[rng.random_range(0..moves.len())]).unwrap();
        }
    }
    out
}

fn requests(samples: &[Sample]) -> Vec<EvalRequest<'_>> {
    samples
        .iter()
        .map(|s| EvalRequest {
            position: &s.position,
            moves: &s.moves,
            no_progress: s.no_progress,
            repetitions: s.repetitions,
        })
        .collect()
}

fn evaluate(ev: &NetEvaluator, reqs: &[EvalRequest<'_>]) -> Vec<EvalResult> {
    let mut out = Vec::new();
    ev.evaluate(reqs, &mut out).unwrap();
    out
}

/// Largest difference between two lists of results (policy and W/D/L).
fn max_diff(a: &[EvalResult], b: &[EvalResult]) -> f32 {
    assert_eq!(a.len(), b.len());
    let mut d = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.policy.len(), y.policy.len());
        for (p, q) in x
            .policy
            .iter()
            .zip(&y.policy)
            .chain(x.wdl.iter().zip(&y.wdl))
        {
            d = d.max((p - q).abs());
        }
    }
    d
}

fn trained_model() -> Model {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/english-default");
    Model::load(&dir, Variant::English, DeviceChoice::Flex).unwrap()
}

#[test]
fn kernels_match_burn_on_the_trained_model() {
    let model = trained_model();
    let kernels = model.evaluator();
    assert_eq!(kernels.engine(), InferenceEngine::Kernels);
    let burn = kernels.clone().with_engine(InferenceEngine::Burn).unwrap();
    assert_eq!(burn.engine(), InferenceEngine::Burn);
    let samples = random_positions(300, 11);
    let reqs = requests(&samples);
    let (k, b) = (evaluate(&kernels, &reqs), evaluate(&burn, &reqs));
    let d = max_diff(&k, &b);
    assert!(d < 2e-5, "kernels and burn differ by {d}");
    // The trained net is not uniform: the comparison has something to compare.
    assert!(b.iter().any(|r| r.wdl[0] > 0.5 || r.wdl[2] > 0.5));
    assert!(b.iter().any(|r| r.policy.iter().any(|&p| p > 0.6)));
}

#[test]
fn kernels_give_the_same_answer_whatever_the_batch_split_and_callers() {
    let ev = trained_model().evaluator();
    let samples = random_positions(97, 5);
    let reqs = requests(&samples);
    let whole = evaluate(&ev, &reqs);
    let one_by_one: Vec<EvalResult> = reqs
        .iter()
        .flat_map(|r| evaluate(&ev, std::slice::from_ref(r)))
        .collect();
    assert!(max_diff(&whole, &one_by_one) < 1e-5);
    // Two threads at once, each evaluating the whole batch.
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| evaluate(&ev, &reqs));
        let b = s.spawn(|| evaluate(&ev, &reqs));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert!(max_diff(&a, &whole) < 1e-6 && max_diff(&b, &whole) < 1e-6);
    // And from inside rayon's pool, as self-play calls it.
    let c: Vec<Vec<EvalResult>> = rayon_scope_eval(&ev, &reqs);
    for r in &c {
        assert!(max_diff(r, &whole) < 1e-6);
    }
}

fn rayon_scope_eval(ev: &NetEvaluator, reqs: &[EvalRequest<'_>]) -> Vec<Vec<EvalResult>> {
    let mut out = vec![Vec::new(), Vec::new()];
    let (x, y) = out.split_at_mut(1);
    rayon::join(|| x[0] = evaluate(ev, reqs), || y[0] = evaluate(ev, reqs));
    out
}
