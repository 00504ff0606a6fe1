//! `tammi dxp --listen` driven by an independent client: pydraughts'
//! `DXPEngine` (through `scripts/dxp_check.py`) plays a full game of
//! international draughts against tammi, pydraughts choosing its own moves,
//! once with tammi white and once black; the script checks every tammi move
//! on pydraughts' board and tammi's result line against that board.
//!
//! `.ci/run` installs pydraughts and sets `TAMMI_REQUIRE_PYDRAUGHTS`, so in
//! CI a missing client is a failure; elsewhere the test says it was skipped.

mod pydraughts;

#[test]
fn pydraughts_dxp_client_plays_full_games_against_tammi_dxp() {
    if !pydraughts::required_or_skipped() {
        return;
    }
    let tammi = env!("CARGO_BIN_EXE_tammi");
    for (seed, side) in [("1", "white"), ("2", "black")] {
        let (code, text) = pydraughts::run_script(
            "scripts/dxp_check.py",
            &[tammi, "alphabeta:depth=2", seed, side, "400"],
        );
        assert_eq!(code, 0, "seed {seed}, tammi {side}: {text}");
        let summary = text
            .lines()
            .find(|l| l.starts_with("dxp game replayed by pydraughts"))
            .unwrap_or_else(|| panic!("no summary: {text}"));
        assert!(summary.contains("all legal"), "{summary}");
        // A depth-2 search beats random moves; a draw or loss means a broken bridge.
        assert!(
            summary.ends_with(&format!("result: {side} (tammi)")),
            "{summary}"
        );
        let won = if side == "white" {
            "'game 1: 1-0"
        } else {
            "'game 1: 0-1"
        };
        assert!(summary.contains(won), "{summary}");
    }
}
