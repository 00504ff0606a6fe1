//! How well a network's value head knows the endgame: its W/D/L on a fixed,
//! seeded sample of endgame-table positions against their exact results.
//!
//! The sample spreads over piece counts: each position draws a piece count
//! (2 to the tables' most) uniformly, then one of the slices of that count
//! (both sides with at least one piece) uniformly, then an index of the
//! slice uniformly (holes and positions without a legal move are drawn
//! again).  Positions are in the tables' frame, Black to move; the network
//! sees every position from the side to move, so this loses nothing.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use tammi_egdb::index::Indexer;
use tammi_egdb::{Egdb, Material, Wdl};
use tammi_model::{EvalRequest, EvalResult, Evaluator, ModelError};
use tammi_rules::{Move, Position};

/// Positions the trainer checks each generation when the run has tables.
pub const DEFAULT_POSITIONS: usize = 2000;

/// Positions per evaluator call.
const BATCH: usize = 256;

/// One table position with its legal moves and exact value.
#[derive(Clone, Debug, PartialEq)]
pub struct TablePosition {
    pub position: Position,
    pub moves: Vec<Move>,
    /// The exact result for the side to move.
    pub wdl: Wdl,
}

/// Draws `n` table positions (fewer only if the tables hold too few
/// positions with a legal move), the same ones for the same tables and seed.
pub fn sample_table_positions(egdb: &Egdb, n: usize, seed: u64) -> Vec<TablePosition> {
    let variant = egdb.variant();
    let geometry = variant.geometry();
    // Slices grouped by piece count, smallest first.
    let mut groups: Vec<(u32, Vec<Material>)> = Vec::new();
    for s in egdb.stats() {
        let m = s.material;
        let sides = [m.men[0] + m.kings[0], m.men[1] + m.kings[1]];
        if m.pieces() < 2 || sides.contains(&0) || s.counts.positions() == 0 {
            continue;
        }
        match groups.iter_mut().find(|(p, _)| *p == m.pieces()) {
            Some((_, g)) => g.push(m),
            None => groups.push((m.pieces(), vec![m])),
        }
    }
    groups.sort_by_key(|(p, _)| *p);
    let mut out = Vec::with_capacity(n);
    if groups.is_empty() {
        return out;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut attempts = 0usize;
    let limit = n.saturating_mul(200).max(1000);
    while out.len() < n && attempts < limit {
        attempts += 1;
        let (_, slices) = &groups[rng.random_range(0..groups.len())];
        let material = slices[rng.random_range(0..slices.len())];
        let indexer = Indexer::new(geometry, material);
        let Some(dense) = indexer.unrank(rng.random_range(0..indexer.size())) else {
            continue; // a hole
        };
        let Ok(position) = dense.to_position(variant) else {
            continue;
        };
        let Some(wdl) = egdb.probe(&position) else {
            continue;
        };
        let moves = position.legal_moves().to_vec();
        if moves.is_empty() {
            continue; // over by the rules: no network is asked about it
        }
        out.push(TablePosition {
            position,
            moves,
            wdl,
        });
    }
    out
}

/// A network's value head against the tables.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ValueAccuracy {
    /// Positions evaluated.
    pub positions: usize,
    /// Share of positions where the most probable of win, draw and loss
    /// (the first of equals, in that order) is the exact result.
    pub accuracy: f64,
    /// Mean absolute error of the expected value (win - loss) against the
    /// exact value (+1, 0, -1).
    pub mae: f64,
    /// Positions by exact result: `[win, draw, loss]` for the side to move.
    pub exact: [usize; 3],
    /// Of those, the ones the network got right.
    pub correct: [usize; 3],
}

fn class(w: Wdl) -> usize {
    match w {
        Wdl::Win => 0,
        Wdl::Draw => 1,
        Wdl::Loss => 2,
    }
}

/// The index of the largest of `[win, draw, loss]` (the first of equals).
fn argmax(wdl: [f32; 3]) -> usize {
    let mut best = 0;
    for i in 1..3 {
        if wdl[i] > wdl[best] {
            best = i;
        }
    }
    best
}

/// Evaluates `set` in batches and compares the W/D/L with the exact results
/// (no game history: no-progress and repetition counters are 0).
pub fn value_accuracy(
    evaluator: &dyn Evaluator,
    set: &[TablePosition],
) -> Result<ValueAccuracy, ModelError> {
    let mut r = ValueAccuracy {
        positions: set.len(),
        ..ValueAccuracy::default()
    };
    let mut out: Vec<EvalResult> = Vec::new();
    let mut abs_error = 0.0f64;
    for chunk in set.chunks(BATCH) {
        let reqs: Vec<EvalRequest<'_>> = chunk
            .iter()
            .map(|t| EvalRequest {
                position: &t.position,
                moves: &t.moves,
                no_progress: 0,
                repetitions: 0,
            })
            .collect();
        evaluator.evaluate(&reqs, &mut out)?;
        for (t, o) in chunk.iter().zip(&out) {
            let c = class(t.wdl);
            r.exact[c] += 1;
            r.correct[c] += (argmax(o.wdl) == c) as usize;
            abs_error += (o.value() as f64 - t.wdl.value() as f64).abs();
        }
    }
    if r.positions > 0 {
        r.accuracy = r.correct.iter().sum::<usize>() as f64 / r.positions as f64;
        r.mae = abs_error / r.positions as f64;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tammi_model::UniformEvaluator;
    use tammi_rules::Variant;

    /// Says what a fixed table of answers says, by position.
    struct Oracle {
        answers: Vec<(Position, [f32; 3])>,
    }

    impl Evaluator for Oracle {
        fn variant(&self) -> Variant {
            Variant::English
        }
        fn evaluate(
            &self,
            batch: &[EvalRequest<'_>],
            out: &mut Vec<EvalResult>,
        ) -> Result<(), ModelError> {
            UniformEvaluator::new(Variant::English).evaluate(batch, out)?;
            for (r, o) in batch.iter().zip(out.iter_mut()) {
                o.wdl = self
                    .answers
                    .iter()
                    .find(|(p, _)| p == r.position)
                    .map(|a| a.1)
                    .expect("asked about a known position");
            }
            Ok(())
        }
    }

    fn pos(fen: &str) -> TablePosition {
        let position = tammi_rules::parse_fen(Variant::English, fen).unwrap();
        TablePosition {
            moves: position.legal_moves().to_vec(),
            position,
            wdl: Wdl::Draw,
        }
    }

    #[test]
    fn accuracy_and_error_of_a_known_evaluator() {
        let mut set = vec![
            pos("B:WK14:BK1,K6"),
            pos("B:WK14:BK1"),
            pos("B:WK14,K20:BK1"),
        ];
        set[0].wdl = Wdl::Win;
        set[1].wdl = Wdl::Draw;
        set[2].wdl = Wdl::Loss;
        let answers = vec![
            // Right, value 0.6 (error 0.4).
            (set[0].position, [0.7, 0.2, 0.1]),
            // Wrong (says win), value 0.5 (error 0.5).
            (set[1].position, [0.6, 0.3, 0.1]),
            // Right, value -1 (error 0).
            (set[2].position, [0.0, 0.0, 1.0]),
        ];
        let r = value_accuracy(&Oracle { answers }, &set).unwrap();
        assert_eq!(r.positions, 3);
        assert_eq!(r.exact, [1, 1, 1]);
        assert_eq!(r.correct, [1, 0, 1]);
        assert!((r.accuracy - 2.0 / 3.0).abs() < 1e-9, "{r:?}");
        assert!((r.mae - 0.3).abs() < 1e-6, "{r:?}");
        // Ties go to win: the uniform evaluator is right on wins only.
        let u = value_accuracy(&UniformEvaluator::new(Variant::English), &set).unwrap();
        assert_eq!(u.correct, [1, 0, 0]);
        assert!((u.mae - 2.0 / 3.0).abs() < 1e-6, "{u:?}");
        // Nothing to check: zeros, not NaN.
        let e = value_accuracy(&UniformEvaluator::new(Variant::English), &[]).unwrap();
        assert_eq!(e, ValueAccuracy::default());
    }

    #[test]
    fn samples_are_seeded_spread_and_exact() {
        let dir = tempfile::tempdir().unwrap();
        tammi_egdb::build(
            &tammi_egdb::BuildOptions {
                variant: Variant::English,
                pieces: 3,
                dir: dir.path().to_path_buf(),
            },
            &|_| {},
        )
        .unwrap();
        let egdb = Egdb::open(dir.path()).unwrap();
        let a = sample_table_positions(&egdb, 300, 5);
        assert_eq!(a.len(), 300);
        assert_eq!(a, sample_table_positions(&egdb, 300, 5));
        assert_ne!(a, sample_table_positions(&egdb, 300, 6));
        let mut by_pieces = [0usize; 4];
        let mut by_result = [0usize; 3];
        for t in &a {
            let bb = t.position.bitboards();
            by_pieces[(bb.pieces[0] | bb.pieces[1]).count_ones() as usize] += 1;
            by_result[class(t.wdl)] += 1;
            assert_eq!(egdb.probe(&t.position), Some(t.wdl));
            assert_eq!(t.moves, t.position.legal_moves().to_vec());
            assert!(!t.moves.is_empty());
        }
        // Two and three pieces, each about half.
        assert_eq!(by_pieces[0] + by_pieces[1], 0);
        assert!(by_pieces[2] > 100 && by_pieces[3] > 100, "{by_pieces:?}");
        // All three results occur.
        assert!(by_result.iter().all(|&c| c > 0), "{by_result:?}");
    }
}
