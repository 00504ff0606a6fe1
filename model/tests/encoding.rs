//! The encoding contract over thousands of random positions of every variant.

use std::collections::HashMap;
use tammi_model::{Encoding, policy_index, policy_indices, policy_size};
use tammi_rules::{Game, Move, Position, Square, Variant};

/// Small deterministic generator (SplitMix64), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Positions (with no-progress and repetition counters) from random games.
fn random_positions(v: Variant, want: usize, seed: u64) -> Vec<(Position, u16, u32)> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(want);
    while out.len() < want {
        let mut g = Game::start(v);
        for _ in 0..300 {
            if g.outcome().is_some() {
                break;
            }
            out.push((
                *g.position(),
                g.no_progress_plies(),
                g.repetition_count() as u32,
            ));
            let moves = g.legal_moves();
            let m = moves[rng.below(moves.len())];
            g.play(&m).unwrap();
        }
    }
    out
}

fn mirrored(v: Variant, sq: Square) -> Square {
    Square((v.geometry().squares() - 1 - sq.0 as usize) as u8)
}

/// The move of the colour-flipped position that mirrors `m`.
fn mirror_move(v: Variant, flipped: &Position, m: &Move) -> Move {
    let want_from = mirrored(v, m.from());
    let want_path: Vec<Square> = m.landings().map(|s| mirrored(v, s)).collect();
    *flipped
        .legal_moves()
        .iter()
        .find(|f| f.from() == want_from && f.landings().collect::<Vec<_>>() == want_path)
        .expect("mirrored move is legal in the flipped position")
}

#[test]
fn every_legal_move_maps_to_a_valid_index_and_only_multi_captures_share() {
    let mut report = Vec::new();
    for v in Variant::ALL {
        let positions = random_positions(v, 3000, 0x7a11 + v as u64);
        let size = policy_size(v);
        let (mut moves_seen, mut shared_moves, mut positions_with_sharing) =
            (0usize, 0usize, 0usize);
        let mut idx = Vec::new();
        let mut shares = Vec::new();
        for (pos, _, _) in &positions {
            let moves = pos.legal_moves();
            let mut by_index: HashMap<usize, Vec<&Move>> = HashMap::new();
            for m in moves.iter() {
                let i = policy_index(pos, m);
                assert!(i < size, "{v} {pos:?} {m:?} -> {i}");
                by_index.entry(i).or_default().push(m);
            }
            let mut any = false;
            for group in by_index.values().filter(|g| g.len() > 1) {
                // The documented collision: captures with the same origin and
                // destination but other paths or captured sets.
                for m in group {
                    assert!(
                        m.is_capture(),
                        "{v} {pos:?}: simple move shares an index: {group:?}"
                    );
                    assert!(m.from() == group[0].from() && m.to() == group[0].to());
                }
                shared_moves += group.len();
                any = true;
            }
            positions_with_sharing += usize::from(any);
            moves_seen += moves.len();
            // policy_indices agrees and counts the shares.
            policy_indices(pos, &moves, &mut idx, &mut shares);
            for (k, m) in moves.iter().enumerate() {
                assert_eq!(idx[k] as usize, policy_index(pos, m));
                assert_eq!(shares[k] as usize, by_index[&(idx[k] as usize)].len());
            }
        }
        report.push(format!(
            "{v}: {} positions, {moves_seen} legal moves, {shared_moves} moves share an index, in {positions_with_sharing} positions",
            positions.len()
        ));
    }
    // Visible with --nocapture; the figures in model/README are from this output.
    for line in report {
        println!("{line}");
    }
}

#[test]
fn a_position_and_its_colour_flipped_mirror_encode_identically() {
    for v in Variant::ALL {
        let enc = Encoding::new(v);
        let mut a = vec![0.0; enc.input_len()];
        let mut b = vec![0.0; enc.input_len()];
        for (k, (pos, np, rep)) in random_positions(v, 1500, 0x5eed + v as u64)
            .iter()
            .enumerate()
        {
            let flipped = pos.colour_flipped();
            enc.encode_into(pos, *np, *rep, &mut a).unwrap();
            enc.encode_into(&flipped, *np, *rep, &mut b).unwrap();
            assert_eq!(a, b, "{v} {pos:?}");
            // Moves map to the same indices; check a sample to keep the test fast.
            if k % 5 == 0 {
                for m in pos.legal_moves().iter() {
                    let fm = mirror_move(v, &flipped, m);
                    assert_eq!(
                        policy_index(pos, m),
                        policy_index(&flipped, &fm),
                        "{v} {pos:?} {m:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn different_positions_encode_differently() {
    // Piece planes are a faithful picture: distinct positions of one side to
    // move give distinct inputs.
    for v in Variant::ALL {
        let enc = Encoding::new(v);
        let mut seen: HashMap<Vec<u8>, Position> = HashMap::new();
        let mut buf = vec![0.0; enc.input_len()];
        for (pos, _, _) in random_positions(v, 1000, 0xd1ff + v as u64) {
            enc.encode_into(&pos, 0, 0, &mut buf).unwrap();
            let key: Vec<u8> = buf.iter().map(|&x| x as u8).collect();
            let key = [key, vec![pos.side_to_move() as u8]].concat();
            if let Some(prev) = seen.insert(key, pos) {
                assert_eq!(prev, pos, "{v}: two positions share an encoding");
            }
        }
    }
}
