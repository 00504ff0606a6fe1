//! The board symmetries a variant claims (`Variant::symmetries`, used to
//! augment training data) really leave its rules unchanged: on positions of
//! random playouts, the legal moves of the mapped position are exactly the
//! mapped legal moves, and the mapped game ends the same way.

use proptest::prelude::*;
use std::collections::HashSet;
use tammi_rules::{Game, Move, Position, Symmetry, Variant};

/// Plays `choices` as indices into the legal moves (modulo their number)
/// from the start of `variant`, returning the positions passed through.
fn playout(variant: Variant, choices: &[usize]) -> Vec<Position> {
    let mut game = Game::start(variant);
    let mut seen = vec![*game.position()];
    for &c in choices {
        if game.outcome().is_some() {
            break;
        }
        let moves = game.legal_moves();
        let m = moves[c % moves.len()];
        game.play(&m).unwrap();
        seen.push(*game.position());
    }
    seen
}

fn check(pos: &Position, s: Symmetry) -> Result<(), TestCaseError> {
    let image = pos.transformed(s);
    prop_assert_eq!(image.transformed(s), *pos, "{:?} is its own inverse", s);
    let mapped: HashSet<Move> = pos.legal_moves().iter().map(|m| m.transformed(s)).collect();
    let moves: HashSet<Move> = image.legal_moves().iter().copied().collect();
    prop_assert_eq!(moves, mapped, "{:?} of {}", s, pos);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_claimed_symmetry_maps_legal_moves_onto_legal_moves(
        v in 0..Variant::ALL.len(),
        choices in proptest::collection::vec(0usize..1000, 0..120),
    ) {
        let variant = Variant::ALL[v];
        for pos in playout(variant, &choices) {
            for &s in variant.symmetries() {
                check(&pos, s)?;
            }
        }
    }
}

#[test]
fn the_claimed_symmetries_per_board() {
    use Symmetry::*;
    assert_eq!(Variant::English.symmetries(), &[Identity]);
    assert_eq!(Variant::International.symmetries(), &[Identity]);
    assert_eq!(Variant::Turkish.symmetries(), &[Identity, MirrorFiles]);
    assert_eq!(Variant::Alquerque.symmetries(), &[Identity, MirrorFiles]);
    assert_eq!(
        Variant::Konane.symmetries(),
        &[Identity, Rotate180, Transpose, AntiTranspose]
    );
}

/// The test above can fail: a symmetry a variant does not have (a mirror of
/// the dark-square board, a quarter turn of Turkish, where men move forward)
/// breaks the correspondence somewhere along a playout.
#[test]
fn a_symmetry_the_rules_lack_is_caught() {
    let turkish = playout(Variant::Turkish, &[3, 1, 4, 1, 5, 9, 2, 6]);
    let broken = turkish.iter().any(|p| {
        let image = p.transformed(Symmetry::Transpose);
        let mapped: HashSet<Move> = p
            .legal_moves()
            .iter()
            .map(|m| m.transformed(Symmetry::Transpose))
            .collect();
        let moves: HashSet<Move> = image.legal_moves().iter().copied().collect();
        mapped != moves
    });
    assert!(broken);
}
