//! Tests of the `tammi` binary: `moves` and `perft` output, and one-line
//! errors with exit code 2 on bad input.

use std::process::{Command, Output};

fn tammi(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(args)
        .output()
        .expect("run tammi")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// Runs successfully and returns stdout.
fn ok(args: &[&str]) -> String {
    let o = tammi(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: stderr {}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{args:?}: stderr {}", stderr(&o));
    stdout(&o)
}

/// Fails with exit code 2 and exactly one non-empty line on stderr, no panic.
fn fails(args: &[&str]) -> String {
    let o = tammi(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: stderr {err:?}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(!err.contains("RUST_BACKTRACE"), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: stderr {err:?}");
    assert!(!lines[0].trim().is_empty(), "{args:?}");
    assert!(stdout(&o).is_empty(), "{args:?}: stdout {}", stdout(&o));
    lines[0].to_string()
}

#[test]
fn moves_of_the_start_position() {
    let expected = "9-13\n9-14\n10-14\n10-15\n11-15\n11-16\n12-16\n";
    assert_eq!(ok(&["moves"]), expected);
    assert_eq!(ok(&["moves", "--variant", "english"]), expected);
    assert_eq!(
        ok(&["moves", "--variant", "english", "--fen", "B:W21-32:B1-12"]),
        expected
    );
    assert_eq!(
        ok(&["moves", "--variant", "italian"]),
        "21-17\n21-18\n22-18\n22-19\n23-19\n23-20\n24-20\n"
    );
    let intl = ok(&["moves", "--variant", "international"]);
    assert_eq!(
        intl,
        "31-26\n31-27\n32-27\n32-28\n33-28\n33-29\n34-29\n34-30\n35-30\n"
    );
}

#[test]
fn moves_of_e3_and_after_play() {
    assert_eq!(
        ok(&["moves", "--fen", "B:W14,15,22:B10"]),
        "10x17x26\n10x19\n"
    );
    // Blocked side: no moves, empty output, success.
    assert_eq!(ok(&["moves", "--fen", "B:W17,22:B13"]), "");
    // --play applies moves first (short form accepted).
    assert_eq!(
        ok(&["moves", "--fen", "B:W14,15,22:B10", "--play", "10x26"]),
        "15-10\n15-11\n"
    );
    let after = ok(&["moves", "--play", "11-15 23-19"]);
    assert!(after.lines().any(|l| l == "15-18"), "{after}");
    let lines: Vec<&str> = after.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort_by_key(|l| {
        l.split(['-', 'x'])
            .map(|n| n.parse::<u32>().unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(lines, sorted);
}

#[test]
fn moves_json() {
    let out = ok(&["moves", "--json", "--fen", "B:W14,15,22:B10"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(out.trim().lines().count(), 1);
    assert_eq!(
        v,
        serde_json::json!({
            "variant": "english",
            "fen": "B:W14,15,22:B10",
            "moves": ["10x17x26", "10x19"],
        })
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["moves", "--json", "--variant", "russian"])).unwrap();
    assert_eq!(v["variant"], "russian");
    assert_eq!(
        v["fen"],
        "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
    );
    assert_eq!(v["moves"].as_array().unwrap().len(), 7);
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["moves", "--json", "--fen", "B:W17,22:B13"])).unwrap();
    assert_eq!(v["moves"], serde_json::json!([]));
}

#[test]
fn corner_start_position_as_printed_by_moves_json() {
    // Issue 38's start [Interp], in coordinates: the FEN lists white's men
    // then black's, each side's twelve squares once.
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["moves", "--json", "--variant", "corner"])).unwrap();
    let fen = v["fen"].as_str().unwrap();
    let mut parts = fen.split(':');
    assert_eq!(parts.next(), Some("W"));
    fn sorted(list: &str, separator: char) -> Vec<String> {
        let mut v: Vec<String> = list.split(separator).map(str::to_string).collect();
        v.sort_unstable();
        v
    }
    let side =
        |part: Option<&str>, tag: char| sorted(part.unwrap().strip_prefix(tag).unwrap(), ',');
    assert_eq!(
        side(parts.next(), 'W'),
        sorted("c1 e1 g1 d2 f2 h2 e3 g3 f4 h4 g5 h6", ' ')
    );
    assert_eq!(
        side(parts.next(), 'B'),
        sorted("a3 b4 c5 d6 e7 f8 a5 b6 c7 d8 a7 b8", ' ')
    );
    assert_eq!(
        v["moves"],
        serde_json::json!(["h6-g7", "g5-f6", "f4-e5", "e3-d4", "d2-c3", "c1-b2"])
    );
    // One-way: the Czech start, and only the four forward-right steps.
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["moves", "--json", "--variant", "one-way"])).unwrap();
    let mut moves: Vec<String> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    moves.sort();
    assert_eq!(moves, ["a3-b4", "c3-d4", "e3-f4", "g3-h4"]);
}

fn perft_lines(out: &str) -> Vec<(u32, u64, f64, u64)> {
    out.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 4, "{l:?}");
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn perft_lines_and_counts() {
    let expected = [7u64, 49, 302, 1469, 7361, 36768];
    for unique in [false, true] {
        let mut args = vec!["perft", "--depth", "6"];
        if unique {
            args.push("--unique");
        }
        let rows = perft_lines(&ok(&args));
        assert_eq!(rows.len(), 6);
        for (i, &(d, nodes, secs, _nps)) in rows.iter().enumerate() {
            assert_eq!(d, i as u32 + 1);
            assert_eq!(nodes, expected[i], "unique={unique} depth {d}");
            assert!(secs >= 0.0);
        }
    }
    let rows = perft_lines(&ok(&["perft", "--variant", "italian", "--depth", "6"]));
    assert_eq!(rows[5].1, 36473);
}

#[test]
fn every_variant_name_and_alias_works_through_moves_perft_and_match() {
    // Start moves and perft(4) as the rules crate's perft tables give them.
    let cases: [(&str, usize, u64); 19] = [
        ("english", 7, 1469),
        ("italian", 7, 1469),
        ("international", 9, 4265),
        ("russian", 7, 1469),
        ("brazilian", 7, 1469),
        ("finnish", 7, 1469),
        ("czech", 7, 1469),
        ("portuguese", 7, 1469),
        ("thai", 7, 3136),
        ("english-giveaway", 7, 1469),
        ("finnish-giveaway", 7, 1469),
        ("russian-giveaway", 7, 1469),
        ("international-giveaway", 9, 4265),
        ("anti", 7, 1469),
        ("poddavki", 7, 1469),
        ("antidraughts", 9, 4265),
        ("corner", 6, 39),
        ("one-way", 4, 200),
        ("oneway", 4, 200),
    ];
    for (name, moves, perft4) in cases {
        let listed = ok(&["moves", "--variant", name]);
        assert_eq!(listed.lines().count(), moves, "{name}: {listed}");
        let rows = perft_lines(&ok(&["perft", "--variant", name, "--depth", "4"]));
        assert_eq!(rows[3].1, perft4, "{name}");
    }
    // A match in a variant without an opening deck starts from random plies.
    let out = ok(&[
        "match",
        "--variant",
        "thai",
        "--a",
        "alphabeta:depth=2",
        "--b",
        "random",
        "--games",
        "2",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim().lines().last().unwrap()).unwrap();
    assert_eq!(v["variant"], "thai", "{out}");
    assert_eq!(v["games"].as_array().map(Vec::len), Some(2), "{out}");
}

#[test]
fn perft_unique_merges_paths() {
    // The king ring: two paths, one result.
    let fen = ["--fen", "W:WK10:B14,15,22,23"];
    let paths = perft_lines(&ok(&["perft", "--depth", "1", fen[0], fen[1]]));
    let unique = perft_lines(&ok(&["perft", "--depth", "1", "--unique", fen[0], fen[1]]));
    assert_eq!(paths[0].1, 2);
    assert_eq!(unique[0].1, 1);
}

#[test]
fn perft_json() {
    let out = ok(&["perft", "--depth", "3", "--json", "--variant", "brazilian"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for (i, (row, n)) in rows.iter().zip([7u64, 49, 302]).enumerate() {
        let obj = row.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["depth", "nodes", "nps", "seconds"]);
        assert_eq!(row["depth"], i as u64 + 1);
        assert_eq!(row["nodes"], n);
        assert!(row["seconds"].as_f64().unwrap() >= 0.0);
        assert!(row["nps"].is_u64());
    }
}

#[test]
fn bad_fen_is_one_line_exit_2() {
    for fen in [
        "B:W2x:B1",       // bad square token
        "B:W21,21:B1",    // duplicate square
        "B:W21:B21",      // duplicate across colours
        "B:W33:B1",       // out of range
        "B:W0:B1",        // zero
        "B:W5-20:B21-28", // too many white pieces
        "B:W1:B12",       // white man on its own crowning row
        "B:W21:B30",      // black man on its own crowning row
        "X:W21:B1",       // unknown side letter
        "B:W21",          // malformed
        "",               // empty
        "B:Q21:B1",       // bad section
    ] {
        let line = fails(&["moves", "--fen", fen]);
        assert!(line.to_lowercase().contains("error"), "{fen}: {line}");
        fails(&["perft", "--depth", "2", "--fen", fen]);
    }
    // Light squares do not exist in the numbering: 51 on 10x10, 33 on 8x8.
    fails(&["moves", "--variant", "international", "--fen", "W:W51:B1"]);
    fails(&["moves", "--variant", "russian", "--fen", "W:W33:B1"]);
}

#[test]
fn bad_variant_and_moves_are_one_line_exit_2() {
    let line = fails(&["moves", "--variant", "chess"]);
    assert!(line.contains("chess"), "{line}");
    fails(&["perft", "--variant", "chess", "--depth", "1"]);

    let line = fails(&["moves", "--play", "9-17"]);
    assert!(line.contains("9-17"), "{line}");
    assert!(line.contains("9-13"), "legal moves listed: {line}");

    let line = fails(&["moves", "--fen", "W:WK10:B14,15,22,23", "--play", "10x10"]);
    assert!(line.contains("ambiguous"), "{line}");
    assert!(
        line.contains("10x17x26x19x10") && line.contains("10x19x26x17x10"),
        "{line}"
    );

    fails(&["moves", "--play", "banana"]);
    fails(&["perft", "--depth", "0"]);
    fails(&["perft", "--depth", "31"]);
    fails(&["perft", "--depth", "many"]);
    fails(&["perft"]);
    fails(&["frobnicate"]);
}

#[test]
fn help_and_version_succeed() {
    let out = ok(&["--help"]);
    assert!(out.contains("moves") && out.contains("perft"), "{out}");
    assert!(ok(&["moves", "--help"]).contains("--fen"));
    assert!(ok(&["--version"]).starts_with("tammi "));
}

#[test]
fn missing_argument_is_named_on_one_line() {
    let err = fails(&["perft"]);
    assert!(err.contains("--depth"), "{err}");
}

#[test]
fn separators_must_match_the_kind_of_move() {
    // 9-13 is a simple move; written as a capture it is refused.
    let err = fails(&["moves", "--play", "9x13"]);
    assert!(err.contains("illegal move '9x13'"), "{err}");
    // And a capture written with '-' is refused too.
    let err = fails(&["moves", "--fen", "B:W14,15,22:B10", "--play", "10-19"]);
    assert!(err.contains("illegal"), "{err}");
    // Mixed separators are malformed.
    let err = fails(&["moves", "--fen", "B:W14,15,22:B10", "--play", "10x17-26"]);
    assert!(err.contains("malformed"), "{err}");
}

#[test]
fn analyze_finds_the_only_winning_capture() {
    // Black to move must capture; 10x17x26 wins everything except the man on 15.
    let out = ok(&[
        "analyze",
        "--fen",
        "B:W14,15,22:B10",
        "--player",
        "alphabeta:depth=6",
    ]);
    assert!(out.lines().any(|l| l == "best 10x17x26"), "{out}");
    let err = fails(&["analyze", "--player", "alphabeta:dpth=6"]);
    assert!(err.contains("unknown key 'dpth'"), "{err}");
}

#[test]
fn match_json_results_and_ratings() {
    let dir = std::env::temp_dir().join(format!("tammi-cli-match-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let results = dir.join("results.jsonl");
    let pdn = dir.join("games.pdn");
    let r = results.to_str().unwrap();
    let out = ok(&[
        "match",
        "--a",
        "alphabeta:depth=2",
        "--b",
        "random",
        "--games",
        "4",
        "--threads",
        "2",
        "--json",
        "--results",
        r,
        "--pdn",
        pdn.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let w = &v["wdl"];
    let total =
        w["wins"].as_u64().unwrap() + w["draws"].as_u64().unwrap() + w["losses"].as_u64().unwrap();
    assert_eq!(total, 4);
    assert_eq!(v["games"].as_array().unwrap().len(), 4);
    assert!(
        v["games"][0].get("pdn").is_none(),
        "PDN goes to --pdn, not JSON"
    );
    assert_eq!(
        std::fs::read_to_string(&pdn)
            .unwrap()
            .matches("[Event")
            .count(),
        4
    );
    ok(&[
        "match",
        "--a",
        "alphabeta:depth=1",
        "--b",
        "random",
        "--games",
        "2",
        "--results",
        r,
    ]);
    let lines = std::fs::read_to_string(&results).unwrap();
    assert_eq!(lines.lines().count(), 2);
    // Each line is one typed match summary, without the games.
    for line in lines.lines() {
        let m: tammi_evaluator::matchplay::MatchSummary = serde_json::from_str(line).unwrap();
        assert!(m.wdl.games() > 0);
        assert!(!line.contains("\"games\""), "{line}");
    }
    let table = ok(&[
        "ratings",
        "--results",
        r,
        "--anchor",
        "random",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(table.contains("alphabeta:depth=2"), "{table}");
    for f in ["ratings.json", "ratings.md", "ratings.png"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    std::fs::write(dir.join("bad.jsonl"), "{\"a\": 1}\n").unwrap();
    fails(&[
        "ratings",
        "--results",
        dir.join("bad.jsonl").to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn match_bad_input_is_one_line_exit_2() {
    for args in [
        &[
            "match",
            "--a",
            "alphabeta:depth=2",
            "--b",
            "random",
            "--games",
            "3",
        ][..],
        &[
            "match",
            "--a",
            "alphabeta:depth=2",
            "--b",
            "random",
            "--openings",
            "random:0",
        ],
        &[
            "match",
            "--a",
            "alphabeta:depth=2",
            "--b",
            "random",
            "--sprt",
            "1,2",
        ],
        &["match", "--a", "chess", "--b", "random"],
        &[
            "match",
            "--a",
            "random",
            "--b",
            "random",
            "--openings",
            "/nonexistent/file",
        ],
        &[
            "match",
            "--a",
            "random",
            "--b",
            "random",
            "--variant",
            "italian",
            "--openings",
            "ballot",
        ],
        &["moves", "--variant", "anti-checkers"],
        &[
            "match",
            "--a",
            "mcts:model=/nonexistent,sims=4",
            "--b",
            "random",
            "--games",
            "2",
        ],
    ] {
        fails(args);
    }
}

/// `bench nn` (through the trainer's whole-file config) checks every
/// section; `tammi selfplay`, which needs no trainer, checks the file, its
/// section names and `[selfplay]`, and leaves the other sections alone.
#[test]
fn config_errors_are_refused_by_the_commands_that_read_them() {
    let dir = std::env::temp_dir().join(format!("tammi-cli-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        ("bad-model.toml", "[model]\nblocks = \"x\"\n", "[model]"),
        (
            "bad-selfplay.toml",
            "[selfplay]\nsimulations = -3\n",
            "[selfplay]",
        ),
        ("typo.toml", "[modle]\nblocks = 2\n", "unknown section"),
        ("garbage.toml", "not toml [[[", "TOML parse error"),
    ];
    for (name, text, expect) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        let out = dir.join(format!("out-{name}"));
        let err = fails(&["bench", "nn", "--config", p]);
        assert!(err.contains(expect), "{name}: {err}");
        if name == "bad-model.toml" {
            continue;
        }
        let err = fails(&[
            "selfplay",
            "--config",
            p,
            "--games",
            "1",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(err.contains(expect), "{name}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tammi selfplay` plays the game its config's `[run] variant` names (a
/// run's own config plays the run's game), unless `--variant` names another;
/// a config naming no game it knows is refused.
#[test]
fn selfplay_plays_the_config_s_game_unless_told_another() {
    let dir =
        std::env::temp_dir().join(format!("tammi-cli-selfplay-variant-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("italian.toml");
    std::fs::write(
        &config,
        "[selfplay]\nsimulations = 4\nthreads = 1\n\n[run]\nvariant = \"italian\"\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let game_type = |out: &str, extra: &[&str]| {
        let shards = dir.join(out);
        let mut args = vec!["selfplay", "--config", config, "--games", "1", "--out"];
        args.push(shards.to_str().unwrap());
        args.extend_from_slice(extra);
        let o = tammi(&args);
        assert_eq!(o.status.code(), Some(0), "stderr {}", stderr(&o));
        let pdn = std::fs::read_to_string(shards.join("shard-s0-00000.pdn")).unwrap();
        let tag = pdn
            .lines()
            .find(|l| l.starts_with("[GameType "))
            .unwrap_or("");
        tag.to_string()
    };
    let italian = tammi_rules::Variant::Italian.pdn_game_type();
    let english = tammi_rules::Variant::English.pdn_game_type();
    assert_eq!(
        game_type("config", &[]),
        format!("[GameType \"{italian}\"]")
    );
    assert_eq!(
        game_type("told", &["--variant", "english"]),
        format!("[GameType \"{english}\"]")
    );
    let bad = dir.join("unknown.toml");
    std::fs::write(&bad, "[run]\nvariant = \"chess\"\n").unwrap();
    let out = dir.join("refused");
    let err = fails(&[
        "selfplay",
        "--config",
        bad.to_str().unwrap(),
        "--games",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(err.contains("[run] variant"), "{err}");
    assert!(!out.exists(), "nothing is written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    use std::process::Stdio;
    // perft prints a line per depth; the reader goes away at once.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(["perft", "--depth", "8"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tammi");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "stderr: {err}");
    assert!(!out.status.success() || err.is_empty(), "stderr: {err}");
}
