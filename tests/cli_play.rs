//! `tammi play --line`: a scripted full game against alpha-beta ends with the right result line.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use tammi_rules::{Game, Variant, sorted_texts};

fn play_scripted(variant: Variant, side: &str) -> (Game, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args([
            "play",
            "--line",
            "--variant",
            variant.name(),
            "--player",
            "alphabeta:depth=2",
            "--side",
            side,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut game = Game::start(variant);
    let first = variant.rules().first_to_move;
    let me = if side == "first" {
        first
    } else {
        first.opponent()
    };
    let result = loop {
        if game.outcome().is_none() && game.position().side_to_move() == me {
            // Our side plays the last legal move in sorted order: legal, deterministic, weak.
            let text = sorted_texts(variant, game.legal_moves()).pop().unwrap();
            game.play_text(&text).unwrap();
            writeln!(stdin, "{text}").unwrap();
            stdin.flush().unwrap();
            continue;
        }
        let line = lines.next().expect("the engine answers").unwrap();
        if line.starts_with("result") {
            break line;
        }
        game.play_text(&line)
            .unwrap_or_else(|e| panic!("engine reply {line:?}: {e}"));
    };
    drop(stdin);
    assert!(child.wait().unwrap().success());
    (game, result)
}

#[test]
fn a_full_scripted_game_ends_with_the_right_result_line() {
    // English, and issue 38's games in coordinates.
    let games = [
        (Variant::English, 10),
        (Variant::Corner, 4),
        (Variant::OneWay, 4),
    ];
    for (variant, min_plies) in games {
        for side in ["first", "second"] {
            check_scripted_game(variant, side, min_plies);
        }
    }
}

fn check_scripted_game(variant: Variant, side: &str, min_plies: usize) {
    let (game, result) = play_scripted(variant, side);
    let o = game
        .outcome()
        .expect("the game is over when the result line comes");
    assert_eq!(
        result,
        format!("result {} {}", o.winner_name(), o.reason.name())
    );
    assert!(
        game.ply() > min_plies,
        "{variant} {side}: {} plies",
        game.ply()
    );
}

/// `tammi play --line` against alpha-beta depth 2, fed `input` then EOF.
fn play_lines(input: &[u8]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(["play", "--line", "--player", "alphabeta:depth=2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(input).unwrap();
            c.wait_with_output()
        })
        .unwrap()
}

#[test]
fn an_illegal_line_is_one_error_line_and_exit_2() {
    let out = play_lines(b"11-16\n13-17\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("illegal move '13-17'"), "{err}");
    // The engine's reply to the legal first move came before the error.
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
}

#[test]
fn input_ending_mid_game_is_an_error_not_a_silent_stop() {
    let out = play_lines(b"11-15\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("input ended at ply 2"), "{err}");
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
}
