//! tammi's legal moves against an independent move generator (pydraughts,
//! through `scripts/movegen_check.py`) on positions of random games: the
//! give-away game on international rules (pydraughts' antidraughts), and
//! international, Russian, Brazilian, English and Turkish draughts.  At every
//! game that ends because the side to move has no move, pydraughts' winner must
//! be the side the variant's rules name (in antidraughts, the side that cannot
//! move).
//!
//! pydraughts is a Python package; `.ci/run` installs it and sets
//! `TAMMI_REQUIRE_PYDRAUGHTS`, so in CI a missing generator is a failure.
//! Elsewhere the test says it was skipped.

mod pydraughts;

/// Runs the checker on `positions` positions of `variant`: exit code and output.
fn check(variant: &str, positions: u32, seed: u32) -> (i32, String) {
    pydraughts::run_script(
        "scripts/movegen_check.py",
        &[
            env!("CARGO_BIN_EXE_tammi").to_string(),
            variant.to_string(),
            positions.to_string(),
            seed.to_string(),
        ],
    )
}

/// The numbers of the checker's summary line: positions, games, positions
/// with captures, games ended without a legal move.
fn summary(text: &str) -> [u64; 4] {
    let line = text
        .lines()
        .find(|l| l.starts_with("movegen_check "))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    [n[0], n[1], n[2], n[3]]
}

#[test]
fn legal_moves_and_no_move_winners_agree_with_pydraughts() {
    if !pydraughts::required_or_skipped() {
        return;
    }
    for (variant, seed) in [
        ("international-giveaway", 11),
        ("international", 12),
        ("russian", 13),
        ("brazilian", 14),
        ("english", 15),
    ] {
        let (code, text) = check(variant, 400, seed);
        assert_eq!(code, 0, "{variant}: {text}");
        let [positions, _games, captures, no_move_ends] = summary(&text);
        assert_eq!(positions, 400, "{text}");
        // The comparison meant something: captures came up, and games ended
        // by the rule under test.
        assert!(captures >= 40, "{text}");
        assert!(no_move_ends >= 2, "{text}");
    }
}

#[test]
fn turkish_legal_moves_and_no_move_winners_agree_with_pydraughts() {
    // Turkish on all 64 squares, in coordinates.  pydraughts 0.6.7 lets a
    // quiet king move pass through occupied squares; the checker leaves out
    // exactly those moves and counts them (issue-17 rules research, §2).
    if !pydraughts::required_or_skipped() {
        return;
    }
    let (code, text) = check("turkish", 400, 16);
    assert_eq!(code, 0, "{text}");
    let [positions, _games, captures, no_move_ends] = summary(&text);
    assert_eq!(positions, 400, "{text}");
    assert!(captures >= 40, "{text}");
    assert!(no_move_ends >= 2, "{text}");
    assert!(
        text.contains("pydraughts king moves through occupied squares left out"),
        "{text}"
    );
}

#[test]
fn the_checker_catches_a_generator_that_disagrees() {
    if !pydraughts::available() {
        return;
    }
    // Russian rules (free choice among captures) checked against pydraughts'
    // Brazilian (most pieces): the checker must find a position where they
    // differ, so agreement above is not a rubber stamp.
    let (code, err) = pydraughts::run_script(
        "scripts/movegen_check.py",
        &[
            env!("CARGO_BIN_EXE_tammi"),
            "russian",
            "3000",
            "13",
            "brazilian",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("tammi [") && err.contains("pydraughts ["),
        "{err}"
    );
}
