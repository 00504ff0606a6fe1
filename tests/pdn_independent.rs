//! English PDN written by tammi, replayed by an independent reader
//! (pydraughts, through `scripts/pdn_check.py`): every move must be legal on
//! its board and every stated result must be the one its board reaches
//! (`1-0`: Black, the side that moves first, has won).
//!
//! pydraughts is a Python package (`pip install pydraughts`); `.ci/run`
//! installs it and sets `TAMMI_REQUIRE_PYDRAUGHTS`, so in CI a missing
//! reader is a failure.  Elsewhere the test says it was skipped.

mod common;
use common::tammi;
mod pydraughts;
use std::path::Path;

/// Runs the checker on `files`: its exit code and output.
fn check(files: &[&Path]) -> (i32, String) {
    pydraughts::run_script("scripts/pdn_check.py", files)
}

/// `(games, black wins, white wins, draws, failed)` summed over the checker's summary lines.
fn totals(text: &str) -> [u64; 5] {
    let mut t = [0u64; 5];
    for line in text
        .lines()
        .filter(|l| l.contains("replayed by pydraughts"))
    {
        let numbers: Vec<u64> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        // "... N games ..., B won by Black (1-0), W by White (0-1), D drawn; F failed"
        let n = numbers.len();
        let [games, black, _, _, white, _, _, draws, failed] = numbers[n - 9..] else {
            panic!("unexpected summary: {line}")
        };
        for (k, v) in [games, black, white, draws, failed].into_iter().enumerate() {
            t[k] += v;
        }
    }
    t
}

/// `tammi match` of `a` against `b`, its games written to `pdn`.
fn play_match(a: &str, b: &str, games: &str, seed: &str, pdn: &Path) {
    let (code, _, err) = tammi(&[
        "match",
        "--a",
        a,
        "--b",
        b,
        "--games",
        games,
        "--threads",
        "1",
        "--seed",
        seed,
        "--pdn",
        pdn.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn match_and_selfplay_pdn_replay_in_pydraughts_with_the_stated_results() {
    if !pydraughts::required_or_skipped() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let strong = dir.path().join("strong.pdn");
    let even = dir.path().join("even.pdn");
    let shards = dir.path().join("shards");
    // Wins for both colours: a searching player against a random one, colours swapped.
    play_match("alphabeta:depth=3", "random", "8", "5", &strong);
    // Equal players: draws (repetition, the move rule or the ply cap) too.
    play_match("alphabeta:depth=2", "alphabeta:depth=2", "4", "6", &even);
    // Self-play games, as the trainer writes them.
    let (code, _, err) = tammi(&[
        "selfplay",
        "--config",
        "configs/tiny.toml",
        "--games",
        "8",
        "--out",
        shards.to_str().unwrap(),
        "--seed",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let selfplay = shards.join("shard-s2-00000.pdn");

    let (code, text) = check(&[&strong, &even, &selfplay]);
    assert_eq!(code, 0, "{text}");
    let [games, black, white, _, failed] = totals(&text);
    assert_eq!((games, failed), (20, 0), "{text}");
    assert!(black > 0 && white > 0, "wins for both colours: {text}");

    // The checker can fail: a game whose stated winner is swapped is caught.
    let pdn = std::fs::read_to_string(&strong).unwrap();
    let swapped = if pdn.contains("[Result \"1-0\"]") {
        pdn.replacen("[Result \"1-0\"]", "[Result \"0-1\"]", 1)
    } else {
        pdn.replacen("[Result \"0-1\"]", "[Result \"1-0\"]", 1)
    };
    let bad = dir.path().join("swapped.pdn");
    std::fs::write(&bad, swapped).unwrap();
    let (code, text) = check(&[&bad]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("pydraughts finds"), "{text}");
}
