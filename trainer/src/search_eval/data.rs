//! Training positions for the search evaluation: every position of a set
//! of games, deduplicated, with two labels (the game's result and the
//! search's value, both as an expected score for the side to move) and the
//! network's sparse inputs.

use std::collections::HashMap;
use tammi_rules::{Position, Variant};
use tammi_search::nnue::{NnueNet, active_features};
use tammi_selfplay::GameRecord;

/// Which positions of a game become training positions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection {
    /// Leave out positions where the side to move must capture: alpha-beta
    /// extends the search through captures, so its evaluation never sees them.
    pub skip_captures: bool,
    /// Percent of positions (by hash, so a position is always on the same
    /// side) held out for validation.
    pub validation_percent: u32,
}

/// Deduplicated positions with their labels, split into training and
/// validation by hash.
#[derive(Clone, Debug)]
pub struct EvalData {
    variant: Variant,
    /// Features of one perspective ([`NnueNet::features`]).
    features: usize,
    /// Where each position's features start in `stm` and `other`.
    offsets: Vec<u32>,
    /// Active features of the side to move's perspective, all positions.
    stm: Vec<u16>,
    /// Active features of the other perspective.
    other: Vec<u16>,
    /// Sum of the result labels and of the search labels, and the count.
    result_sum: Vec<f32>,
    search_sum: Vec<f32>,
    count: Vec<u32>,
    by_hash: HashMap<u64, u32>,
    validation: Vec<bool>,
    selection: Selection,
    /// Positions seen (before deduplication) and skipped as captures.
    seen: u64,
    skipped: u64,
}

/// One batch of the network's inputs, dense multi-hot (what burn's matmul takes).
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub len: usize,
    /// `len` rows of `features`: the side to move's perspective.
    pub stm: Vec<f32>,
    /// The other perspective.
    pub other: Vec<f32>,
    /// The target expected score for the side to move, in [0, 1].
    pub target: Vec<f32>,
}

/// An expected score in [0, 1] from a `[win, draw, loss]`.
fn expected(wdl: [f32; 3]) -> f32 {
    (wdl[0] + 0.5 * wdl[1]).clamp(0.0, 1.0)
}

impl EvalData {
    pub fn new(variant: Variant, selection: Selection) -> EvalData {
        EvalData {
            variant,
            features: NnueNet::features(variant),
            offsets: vec![0],
            stm: Vec::new(),
            other: Vec::new(),
            result_sum: Vec::new(),
            search_sum: Vec::new(),
            count: Vec::new(),
            by_hash: HashMap::new(),
            validation: Vec::new(),
            selection,
            seen: 0,
            skipped: 0,
        }
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Distinct positions held.
    pub fn len(&self) -> usize {
        self.count.len()
    }

    pub fn is_empty(&self) -> bool {
        self.count.is_empty()
    }

    /// Positions offered (before deduplication) and those skipped as captures.
    pub fn seen_and_skipped(&self) -> (u64, u64) {
        (self.seen, self.skipped)
    }

    /// Indices of the training and the validation positions.
    pub fn split(&self) -> (Vec<usize>, Vec<usize>) {
        let (mut train, mut valid) = (Vec::new(), Vec::new());
        for (i, &v) in self.validation.iter().enumerate() {
            if v { &mut valid } else { &mut train }.push(i);
        }
        (train, valid)
    }

    /// Adds a position with its result and search labels (expected scores
    /// for its side to move); a position seen before averages its labels.
    pub fn add(&mut self, pos: &Position, result: f32, search: f32) {
        self.seen += 1;
        if self.selection.skip_captures && pos.must_capture() {
            self.skipped += 1;
            return;
        }
        let hash = pos.hash();
        let i = match self.by_hash.get(&hash) {
            Some(&i) => i as usize,
            None => {
                let stm = pos.side_to_move();
                active_features(pos, stm, &mut self.stm);
                active_features(pos, stm.opponent(), &mut self.other);
                self.offsets.push(self.stm.len() as u32);
                self.result_sum.push(0.0);
                self.search_sum.push(0.0);
                self.count.push(0);
                // The hash's high bits pick the split: independent of the
                // low bits a table would use.
                self.validation
                    .push((hash >> 40) % 100 < u64::from(self.selection.validation_percent));
                let i = self.count.len() - 1;
                self.by_hash.insert(hash, i as u32);
                i
            }
        };
        self.result_sum[i] += result;
        self.search_sum[i] += search;
        self.count[i] += 1;
    }

    /// Adds every position of a game where a move was searched: its result
    /// for the side to move, and the searched value where the record has one
    /// (the result otherwise).
    pub fn add_game(&mut self, game: &GameRecord) {
        for s in &game.samples {
            let result = expected(s.result);
            let searched = s.root_wdl.iter().sum::<f32>() > 0.5;
            let search = if searched {
                expected(s.root_wdl)
            } else {
                result
            };
            self.add(&s.position, result, search);
        }
    }

    /// The target of position `i`: `result_weight` of the mean result, the
    /// rest of the mean searched value.
    pub fn target(&self, i: usize, result_weight: f32) -> f32 {
        let n = self.count[i] as f32;
        (result_weight * self.result_sum[i] + (1.0 - result_weight) * self.search_sum[i]) / n
    }

    /// The active features of position `i`: side to move's, then the other's.
    pub fn features_of(&self, i: usize) -> (&[u16], &[u16]) {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        (&self.stm[a..b], &self.other[a..b])
    }

    /// Fills `batch` with the positions `indices`.
    pub fn batch(&self, indices: &[usize], result_weight: f32, batch: &mut Batch) {
        let f = self.features;
        batch.len = indices.len();
        for v in [&mut batch.stm, &mut batch.other] {
            v.clear();
            v.resize(indices.len() * f, 0.0);
        }
        batch.target.clear();
        for (row, &i) in indices.iter().enumerate() {
            let (stm, other) = self.features_of(i);
            for &x in stm {
                batch.stm[row * f + x as usize] = 1.0;
            }
            for &x in other {
                batch.other[row * f + x as usize] = 1.0;
            }
            batch.target.push(self.target(i, result_weight));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tammi_rules::Game;

    #[test]
    fn duplicates_average_and_captures_are_skipped_when_asked() {
        let sel = Selection {
            skip_captures: true,
            validation_percent: 0,
        };
        let mut data = EvalData::new(Variant::English, sel);
        let start = *Game::start(Variant::English).position();
        data.add(&start, 1.0, 0.5);
        data.add(&start, 0.0, 0.5);
        assert_eq!(data.len(), 1);
        assert!((data.target(0, 1.0) - 0.5).abs() < 1e-6);
        assert!((data.target(0, 0.0) - 0.5).abs() < 1e-6);
        let (stm, other) = data.features_of(0);
        assert_eq!((stm.len(), other.len()), (24, 24));
        // Black 11-15, White 24-19, Black 15x24 pending: a capture.
        let mut g = Game::start(Variant::English);
        for m in ["11-15", "24-19"] {
            g.play_text(m).unwrap();
        }
        assert!(g.position().must_capture());
        data.add(g.position(), 1.0, 1.0);
        assert_eq!(data.len(), 1);
        assert_eq!(data.seen_and_skipped(), (3, 1));
        let mut batch = Batch::default();
        data.batch(&[0], 0.5, &mut batch);
        assert_eq!(batch.stm.iter().sum::<f32>(), 24.0);
        assert_eq!(batch.target, vec![0.5]);
    }
}
