//! Perft tables from the starting positions (RULES.md §6.5 and published figures).

use std::collections::HashMap;
use tammi_rules::{PerftMode, Position, Variant, perft};

fn check(variant: Variant, expected: &[u64], mode: PerftMode) {
    let start = Position::start(variant);
    for (i, &n) in expected.iter().enumerate() {
        let depth = i as u32 + 1;
        assert_eq!(perft(&start, depth, mode), n, "{variant} perft({depth})");
    }
}

#[test]
fn english_to_depth_8() {
    check(
        Variant::English,
        &[7, 49, 302, 1469, 7361, 36768, 179740, 845931],
        PerftMode::Paths,
    );
}

#[test]
fn italian_to_depth_8() {
    check(
        Variant::Italian,
        &[7, 49, 302, 1469, 7361, 36473, 177532, 828783],
        PerftMode::Paths,
    );
}

#[test]
fn international_to_depth_6() {
    check(
        Variant::International,
        &[9, 81, 658, 4265, 27117, 167140],
        PerftMode::Paths,
    );
}

#[test]
fn russian_to_depth_7() {
    check(
        Variant::Russian,
        &[7, 49, 302, 1469, 7482, 37986, 190146],
        PerftMode::Paths,
    );
}

#[test]
fn brazilian_to_depth_7() {
    check(
        Variant::Brazilian,
        &[7, 49, 302, 1469, 7473, 37628, 187302],
        PerftMode::Paths,
    );
}

#[test]
fn finnish_to_depth_8_equals_english() {
    // RULES.md §6.5: folk tammi differs from English only in its kings, and
    // the first kings appear at ply 8 without having moved yet.
    check(
        Variant::Finnish,
        &[7, 49, 302, 1469, 7361, 36768, 179740, 845931],
        PerftMode::Paths,
    );
}

#[test]
fn czech_to_depth_9() {
    // English figures to depth 8 (white moves first on a symmetric start;
    // the first kings appear at ply 8 and have not moved), then the flying
    // kings and the priority rule change the count.  Depth 7 is cross-checked
    // by the reference generator (tests/reference.rs).
    check(
        Variant::Czech,
        &[7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963673],
        PerftMode::Paths,
    );
}

#[test]
fn portuguese_to_depth_9() {
    // Equal to Italian to depth 8: both take the most pieces, and no king
    // has moved yet.
    check(
        Variant::Portuguese,
        &[7, 49, 302, 1469, 7361, 36473, 177532, 828783, 3860866],
        PerftMode::Paths,
    );
}

#[test]
fn thai_to_depth_8() {
    check(
        Variant::Thai,
        &[7, 49, 392, 3136, 26592, 218695, 1820189, 14533014],
        PerftMode::Paths,
    );
}

#[test]
fn canadian_to_depth_7() {
    // Cross-checked by the reference generator to depth 6
    // (tests/reference.rs, `reference_reproduces_canadian_perft_6`).
    let expected = [11, 121, 1222, 10053, 79049, 584100, 4369366];
    check(Variant::Canadian, &expected, PerftMode::Paths);
    check(Variant::Canadian, &expected, PerftMode::Unique);
}

#[test]
fn corner_to_depth_11() {
    // Issue 38's start [Interp]: the armies face each other across the empty
    // long diagonal, so nearly every first move walks into a forced capture.
    // Depth 7 is cross-checked by the reference generator (tests/reference.rs).
    let expected = [6, 6, 14, 39, 78, 240, 804, 2768, 11209, 45164, 195382];
    check(Variant::Corner, &expected, PerftMode::Paths);
}

#[test]
fn one_way_to_depth_11() {
    // Czech start, men only forward-right; cross-checked to depth 7 by the
    // reference generator (tests/reference.rs).
    let expected = [
        4, 16, 61, 200, 639, 1953, 5850, 17060, 49071, 140549, 398607,
    ];
    check(Variant::OneWay, &expected, PerftMode::Paths);
}

#[test]
fn finnish_huffing_to_depth_8() {
    // Cross-checked to depth 6 by the reference generator (tests/reference.rs).
    let expected = [7, 49, 379, 2949, 25534, 218661, 1968811, 17714645];
    check(Variant::FinnishHuffing, &expected, PerftMode::Paths);
    check(Variant::FinnishHuffing, &expected, PerftMode::Unique);
}

#[test]
fn giveaway_games_move_as_their_base_games() {
    for v in Variant::ALL {
        let base = v.base();
        assert_eq!(v.rules().giveaway || v.rules().huffing, v != base, "{v}");
        if !v.rules().giveaway {
            continue;
        }
        let (a, b) = (Position::start(v), Position::start(base));
        assert_eq!(
            perft(&a, 6, PerftMode::Paths),
            perft(&b, 6, PerftMode::Paths),
            "{v}"
        );
    }
}

#[test]
fn unique_equals_paths_where_no_loops_are_possible() {
    let start = Position::start(Variant::English);
    for d in 1..=7 {
        assert_eq!(
            perft(&start, d, PerftMode::Unique),
            perft(&start, d, PerftMode::Paths)
        );
    }
}

#[test]
#[ignore = "slow: about 5 s in release"]
fn english_perft_12() {
    let start = Position::start(Variant::English);
    assert_eq!(perft(&start, 12, PerftMode::Paths), 388_623_673);
}

#[test]
#[ignore = "slow: tens of seconds in release"]
fn international_perft_9_unique() {
    let start = Position::start(Variant::International);
    assert_eq!(perft(&start, 9, PerftMode::Unique), 41_022_423);
}

#[test]
#[ignore = "slow"]
fn international_perft_9_paths() {
    let start = Position::start(Variant::International);
    assert_eq!(perft(&start, 9, PerftMode::Paths), 41_022_614);
}

// The full-board games (grid.rs).  Each table is cross-checked by the
// independent reference generator of tests/grid_reference.rs (Turkish,
// Konane and Alquerque to depth 6, Gothic to depth 5, Dameo to depth 4);
// Turkish also by a Python reference to depth 6 and by pydraughts to depth 4
// (issue-17 rules research, §1.7).

#[test]
fn turkish_to_depth_6() {
    check(
        Variant::Turkish,
        &[8, 64, 708, 7538, 85090, 931312],
        PerftMode::Paths,
    );
}

#[test]
fn gothic_to_depth_6() {
    check(
        Variant::Gothic,
        &[22, 484, 12892, 343396, 10043928, 291892948],
        PerftMode::Paths,
    );
}

#[test]
fn dameo_to_depth_5() {
    check(
        Variant::Dameo,
        &[52, 2704, 135930, 6253934, 275931640],
        PerftMode::Paths,
    );
}

/// Perft with the counts of positions met before reused (positions by
/// their 64-bit hash and remaining depth): the same generator on every
/// distinct position, without walking transposed subtrees twice.  Dameo's
/// men step forward in any order, so the tree to depth 6 (11.3 billion
/// leaves, 132 s walked in full) has few distinct positions.
fn perft_transposed(pos: &Position, depth: u32, seen: &mut HashMap<(u64, u32), u64>) -> u64 {
    if depth <= 2 {
        return perft(pos, depth, PerftMode::Paths);
    }
    if let Some(&n) = seen.get(&(pos.hash(), depth)) {
        return n;
    }
    let mut total = 0;
    for m in pos.legal_moves().iter() {
        total += perft_transposed(&pos.play(m).unwrap(), depth - 1, seen);
    }
    seen.insert((pos.hash(), depth), total);
    total
}

#[test]
fn dameo_to_depth_6_through_transpositions() {
    let start = Position::start(Variant::Dameo);
    let mut seen = HashMap::new();
    // The first five agree with the plain walk above; depth 6 was counted
    // by it once (`tammi perft --variant dameo --depth 6`, 132 s).
    assert_eq!(perft_transposed(&start, 5, &mut seen), 275_931_640);
    assert_eq!(perft_transposed(&start, 6, &mut seen), 11_335_872_822);
}

#[test]
fn konane_to_depth_6() {
    // Two removals by Black, then White's next to the hole, then jumps.
    check(
        Variant::Konane,
        &[4, 12, 28, 172, 892, 7124],
        PerftMode::Paths,
    );
}

#[test]
fn alquerque_to_depth_6() {
    check(Variant::Alquerque, &[4, 5, 6, 12, 27, 97], PerftMode::Paths);
}
