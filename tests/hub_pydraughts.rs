//! `tammi hub` driven by an independent client: pydraughts' `HubEngine`
//! (through `scripts/hub_check.py`) plays a full game of international
//! draughts against tammi, pydraughts choosing its own moves; pydraughts
//! refuses any Hub move that is not legal on its board.
//!
//! `.ci/run` installs pydraughts and sets `TAMMI_REQUIRE_PYDRAUGHTS`, so in
//! CI a missing client is a failure; elsewhere the test says it was skipped.

mod pydraughts;

#[test]
fn pydraughts_plays_a_full_international_game_against_tammi_hub() {
    if !pydraughts::required_or_skipped() {
        return;
    }
    let tammi = env!("CARGO_BIN_EXE_tammi");
    for seed in ["1", "2"] {
        let (code, text) = pydraughts::run_script(
            "scripts/hub_check.py",
            &[tammi, "alphabeta:depth=2", seed, "400"],
        );
        assert_eq!(code, 0, "seed {seed}: {text}");
        let summary = text
            .lines()
            .find(|l| l.starts_with("hub game replayed by pydraughts"))
            .unwrap_or_else(|| panic!("no summary: {text}"));
        assert!(summary.contains("all legal"), "{summary}");
        // A depth-2 search beats random moves; a draw or loss means a broken bridge.
        assert!(summary.ends_with("result: white (tammi)"), "{summary}");
        let captures: u32 = summary
            .split('(')
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("captures count");
        assert!(captures > 0, "tammi never captured: {summary}");
    }
}

#[test]
fn bad_lines_get_an_error_line_and_the_session_goes_on() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(["hub", "--player", "alphabeta:depth=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tammi hub");
    let input =
        "hub\nflip\npos pos=Wxyz\nlevel depth=1\npos moves=\"32-28\"\ngo think\nping\nquit\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"wait"), "{text}");
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("error message="))
            .count(),
        2,
        "{text}"
    );
    assert!(lines.iter().any(|l| l.starts_with("done move=")), "{text}");
    assert_eq!(lines.last(), Some(&"pong"), "{text}");
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
