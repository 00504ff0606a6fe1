//! `tammi serve`'s JSON API, over HTTP against the real server process:
//! every endpoint, its answers checked against the rules core, and bad
//! input (malformed JSON and FEN, illegal moves, unknown players and
//! variants, paths outside the served directories) answered with a 4xx and
//! a message, never a crash.

mod serve;

use serde_json::{Value, json};
use serve::Server;
use std::path::{Path, PathBuf};
use tammi_rules::{Game, Variant, move_text};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// `(status, body)` of a request; any status, never an error.
fn call(server: &Server, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let url = format!("{}{path}", server.url);
    let req = ureq::request(method, &url).set("Content-Type", "application/json");
    let reply = match body {
        Some(b) => req.send_string(b),
        None => req.call(),
    };
    let response = match reply {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{method} {path}: {e}"),
    };
    let status = response.status();
    let text = response.into_string().expect("body");
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {text}"));
    (status, value)
}

fn post(server: &Server, path: &str, body: Value) -> (u16, Value) {
    call(server, "POST", path, Some(&body.to_string()))
}

fn error_of(reply: &(u16, Value)) -> String {
    reply.1["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error message in {}", reply.1))
        .to_string()
}

#[test]
fn game_endpoints_follow_the_rules_and_refuse_bad_input() {
    let server = Server::start(&[]);
    let (status, info) = call(&server, "GET", "/api/info", None);
    assert_eq!(status, 200);
    assert_eq!(info["default_variant"], "english");
    let names: Vec<&str> = info["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), Variant::ALL.len());
    assert!(names.contains(&"international"));
    assert!(info["model"].is_null());

    // Legal moves: the start, and a position with a double capture.
    let (status, view) = post(&server, "/api/legal", json!({}));
    assert_eq!(status, 200);
    assert_eq!(view["legal"].as_array().unwrap().len(), 7);
    assert_eq!(view["pieces"].as_array().unwrap().len(), 24);
    let (_, view) = post(
        &server,
        "/api/legal",
        json!({"fen": "B:W14,15,22:B10", "moves": []}),
    );
    let legal = view["legal"].as_array().unwrap();
    assert_eq!(legal[0]["path"], json!([10, 17, 26]));
    assert_eq!(legal[0]["captured"], json!([14, 22]));
    // International: 10x10, 50 squares, White first.
    let (_, view) = post(&server, "/api/legal", json!({"variant": "international"}));
    assert_eq!(view["size"], 10);
    assert_eq!(view["squares"].as_array().unwrap().len(), 50);
    assert_eq!(view["side_to_move"], "white");

    // Playing moves, legal and not.
    let (status, view) = post(
        &server,
        "/api/play",
        json!({"moves": ["11-15"], "move": "23-19"}),
    );
    assert_eq!(status, 200);
    assert_eq!(view["moves"], json!(["11-15", "23-19"]));
    assert_eq!(view["ply"], 2);
    let r = post(&server, "/api/play", json!({"move": "11-17"}));
    assert_eq!(r.0, 422);
    assert!(error_of(&r).contains("illegal move '11-17'"), "{}", r.1);
    let r = post(&server, "/api/play", json!({"move": "eleven"}));
    assert_eq!(r.0, 422);
    let r = post(&server, "/api/legal", json!({"moves": ["11-15", "9-13"]}));
    assert_eq!(r.0, 422);
    assert!(error_of(&r).starts_with("move 2 (9-13)"), "{}", r.1);

    // Malformed input: FEN, variant, JSON, unknown fields, wrong types.
    let r = post(&server, "/api/legal", json!({"fen": "B:W33:B1"}));
    assert_eq!(r.0, 400);
    assert!(error_of(&r).starts_with("FEN"), "{}", r.1);
    let r = post(&server, "/api/legal", json!({"fen": "hello"}));
    assert_eq!(r.0, 400);
    let r = post(&server, "/api/legal", json!({"variant": "chess"}));
    assert_eq!(r.0, 400);
    assert!(error_of(&r).contains("unknown variant 'chess'"));
    let r = call(&server, "POST", "/api/legal", Some("{not json"));
    assert_eq!(r.0, 400);
    assert!(error_of(&r).starts_with("request body"));
    let r = post(&server, "/api/legal", json!({"moves": "11-15"}));
    assert_eq!(r.0, 400);
    let r = post(&server, "/api/legal", json!({"fne": "B:W1:B2"}));
    assert_eq!(r.0, 400);
    assert!(error_of(&r).contains("unknown field"), "{}", r.1);

    // A finished game: outcome shown, no more moves.
    let (_, view) = post(
        &server,
        "/api/legal",
        json!({"fen": "B:W14:B10", "moves": ["10x17"]}),
    );
    assert_eq!(view["outcome"]["result"], "1-0");
    assert_eq!(view["outcome"]["winner"], "black");
    let r = post(
        &server,
        "/api/play",
        json!({"fen": "B:W14:B10", "moves": ["10x17"], "move": "17-21"}),
    );
    assert_eq!(r.0, 422);

    // Huffing: a removal is a move of its own (x15), after which the same
    // side moves again; the 12x12 board is served like the others.
    let (status, view) = post(
        &server,
        "/api/play",
        json!({"variant": "finnish:huffing", "fen": "W:W14:B15:H15", "move": "x15"}),
    );
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["side_to_move"], "white", "{view}");
    assert!(
        view["legal"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["text"] != "x15")
    );
    let (status, view) = post(&server, "/api/legal", json!({"variant": "canadian"}));
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["legal"].as_array().unwrap().len(), 11);
    // Issue 38's games, in coordinates: corner checkers' first move walks
    // into a forced capture; one-way men have one step each.
    let (status, view) = post(
        &server,
        "/api/play",
        json!({"variant": "corner", "move": "h6-g7"}),
    );
    assert_eq!(status, 200, "{view}");
    let texts = |view: &serde_json::Value| -> Vec<String> {
        view["legal"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(texts(&view), ["f8xh6"]);
    let (status, view) = post(&server, "/api/legal", json!({"variant": "one-way"}));
    assert_eq!(status, 200, "{view}");
    let mut first = texts(&view);
    first.sort();
    assert_eq!(first, ["a3-b4", "c3-d4", "e3-f4", "g3-h4"]);

    // Openings: the English ballot deck, random plies elsewhere.
    let (status, o) = post(&server, "/api/opening", json!({"index": 5}));
    assert_eq!(status, 200);
    assert_eq!(
        (o["kind"].as_str(), o["moves"].as_array().unwrap().len()),
        (Some("ballot"), 3)
    );
    assert_eq!(o["index"], 5);
    // Past the deck: refused, not wrapped round to another opening.
    let (status, e) = post(&server, "/api/opening", json!({"index": 99999}));
    assert_eq!(status, 400, "{e}");
    assert!(e["error"].as_str().unwrap().contains("99999"), "{e}");
    // No index: the server draws one inside the deck and says which.
    let (status, o) = post(&server, "/api/opening", json!({}));
    assert_eq!(status, 200, "{o}");
    assert!(o["index"].as_u64().unwrap() < 200, "{o}");
    let (_, o) = post(
        &server,
        "/api/opening",
        json!({"variant": "russian", "index": 5}),
    );
    assert_eq!(o["moves"].as_array().unwrap().len(), 4);

    // PDN out and back in.
    let (status, saved) = post(
        &server,
        "/api/pdn/save",
        json!({"moves": ["11-15", "23-19", "8-11"], "black": "me", "white": "alphabeta:depth=2"}),
    );
    assert_eq!(status, 200);
    let pdn = saved["pdn"].as_str().unwrap();
    assert!(pdn.contains("[White \"alphabeta:depth=2\"]"), "{pdn}");
    let (status, loaded) = post(&server, "/api/pdn/load", json!({"text": pdn}));
    assert_eq!(status, 200);
    assert_eq!(
        loaded["games"][0]["moves"],
        json!(["11-15", "23-19", "8-11"])
    );
    let r = post(
        &server,
        "/api/pdn/load",
        json!({"text": "1. 11-15 23-19 2. 11-16 *"}),
    );
    assert_eq!(r.0, 400);
    assert!(error_of(&r).starts_with("PDN"), "{}", r.1);
    let r = post(&server, "/api/pdn/load", json!({"text": ""}));
    assert_eq!(r.0, 400);

    // Without --run there is no dashboard data; unknown routes are 404 too.
    let r = call(&server, "GET", "/api/run/status", None);
    assert_eq!(r.0, 404);
    assert!(error_of(&r).contains("--run"));
    let r = call(&server, "GET", "/api/nothing", None);
    assert_eq!(r.0, 404);
    let r = call(&server, "GET", "/assets/../../etc/passwd", None);
    assert_eq!(r.0, 404);
    // The page and its files are served.
    let page = ureq::get(&format!("{}/", server.url)).call().unwrap();
    assert!(page.into_string().unwrap().contains("/assets/board.js"));
    let js = ureq::get(&format!("{}/assets/board.js", server.url))
        .call()
        .unwrap();
    assert!(js.content_type().contains("javascript"));
}

#[test]
fn engine_moves_are_legal_and_players_are_checked() {
    let model = repo("models/english-default");
    let server = Server::start(&["--model", model.to_str().unwrap()]);
    let start = Game::start(Variant::English);
    let legal: Vec<String> = start
        .legal_moves()
        .iter()
        .map(|m| move_text(Variant::English, m))
        .collect();

    let (status, r) = post(
        &server,
        "/api/engine",
        json!({"player": "alphabeta:depth=2"}),
    );
    assert_eq!(status, 200, "{r}");
    let mv = r["move"]["text"].as_str().unwrap();
    assert!(legal.iter().any(|m| m == mv), "{mv} not in {legal:?}");
    assert_eq!(r["state"]["moves"], json!([mv]));
    assert_eq!(r["depth"], 2);

    let spec = format!("mcts:model={},sims=40", model.display());
    let (status, r) = post(&server, "/api/engine", json!({"player": spec}));
    assert_eq!(status, 200, "{r}");
    assert!(
        legal
            .iter()
            .any(|m| m == r["move"]["text"].as_str().unwrap())
    );

    // Unknown players, bad specs, models outside the served directory.
    let r = post(&server, "/api/engine", json!({"player": "deep-blue"}));
    assert_eq!(r.0, 400);
    assert!(error_of(&r).contains("player 'deep-blue'"), "{}", r.1);
    let r = post(
        &server,
        "/api/engine",
        json!({"player": "alphabeta:depth=zero"}),
    );
    assert_eq!(r.0, 400);
    let r = post(
        &server,
        "/api/engine",
        json!({"player": "mcts:model=/etc,sims=10"}),
    );
    assert_eq!(r.0, 403);
    assert!(error_of(&r).contains("outside the directories"), "{}", r.1);
    let escape = format!("mcts:model={}/../..,sims=10", model.display());
    let r = post(&server, "/api/engine", json!({"player": escape}));
    assert_eq!(r.0, 403);
    let r = post(
        &server,
        "/api/engine",
        json!({"player": "alphabeta:depth=3,egdb=/tmp"}),
    );
    assert_eq!(r.0, 403);
    let r = post(&server, "/api/engine", json!({"moves": ["11-15"]}));
    assert_eq!(r.0, 400, "a missing player is a bad request");
    let r = post(
        &server,
        "/api/engine",
        json!({"fen": "B:W14:B10", "moves": ["10x17"], "player": "random"}),
    );
    assert_eq!(r.0, 422, "no engine move in a finished game");
}

#[test]
fn analysis_gives_the_network_mcts_and_alpha_beta_views() {
    let model = repo("models/english-default");
    let server = Server::start(&["--model", model.to_str().unwrap()]);
    let (status, info) = call(&server, "GET", "/api/info", None);
    assert_eq!(status, 200);
    assert!(info["model"].as_str().unwrap().ends_with("english-default"));

    let (status, a) = post(
        &server,
        "/api/evaluate",
        json!({"moves": ["11-15"], "mcts_sims": 64, "alphabeta": "alphabeta:depth=6"}),
    );
    assert_eq!(status, 200, "{a}");
    let mut game = Game::start(Variant::English);
    game.play_text("11-15").unwrap();
    let n = game.legal_moves().len();

    let net = &a["network"];
    let wdl: f64 = net["wdl"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .sum();
    assert!((wdl - 1.0).abs() < 1e-4, "{net}");
    let policy = net["policy"].as_array().unwrap();
    assert_eq!(policy.len(), n);
    let total: f64 = policy.iter().map(|r| r["p"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-3);
    assert!(
        policy[0]["p"].as_f64() >= policy[n - 1]["p"].as_f64(),
        "sorted by probability"
    );

    let mcts = &a["mcts"];
    let rows = mcts["moves"].as_array().unwrap();
    assert_eq!(rows.len(), n);
    let visits: u64 = rows.iter().map(|r| r["visits"].as_u64().unwrap()).sum();
    assert!(
        visits >= 60 && visits <= mcts["simulations"].as_u64().unwrap(),
        "{mcts}"
    );
    assert_eq!(
        mcts["best"], rows[0]["move"]["text"],
        "the most visited move is played"
    );
    assert!(
        rows[0]["q"]
            .as_f64()
            .is_some_and(|q| (-1.0..=1.0).contains(&q))
    );

    let ab = &a["alphabeta"];
    assert_eq!(ab["depth"], 6);
    let pv = ab["pv"].as_array().unwrap();
    assert!(!pv.is_empty());
    assert_eq!(pv[0], ab["best"]["text"]);
    // The principal variation is a line of legal moves from the position.
    let mut line = game.clone();
    for m in pv {
        line.play_text(m.as_str().unwrap()).unwrap();
    }

    let r = post(&server, "/api/evaluate", json!({"alphabeta": "random"}));
    assert_eq!(r.0, 400);
    let r = post(&server, "/api/evaluate", json!({"mcts_sims": 10_000_000}));
    assert_eq!(r.0, 400);
}

#[test]
fn the_run_endpoints_read_the_run_directory() {
    use tammi_trainer::RunState;
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path();
    let state = RunState {
        generation: 3,
        accepted: 2,
        games: 256,
        ..RunState::new()
    };
    std::fs::write(
        run.join("state.json"),
        serde_json::to_string(&state).unwrap(),
    )
    .unwrap();
    std::fs::create_dir_all(run.join("eval")).unwrap();
    let metrics = [
        r#"{"time":1.0,"tag":"loss/total","step":10,"value":3.5}"#,
        r#"{"time":2.0,"tag":"loss/total","step":20,"value":3.1}"#,
        r#"{"time":2.0,"tag":"loss/policy","step":20,"value":null}"#,
    ];
    std::fs::write(run.join("metrics.jsonl"), metrics.join("\n") + "\n").unwrap();
    let gate = r#"{"generation":2,"candidate":"gen-0002","best":"gen-0001","accepted":true,"reason":"sprt","wins":12,"draws":4,"losses":4,"score":0.7,"elo":147.0,"seconds":9.5}"#;
    std::fs::write(run.join("eval/gating.jsonl"), format!("{gate}\n")).unwrap();
    let ladder = r#"{"model_generation":2,"generation":2,"hours":0.1,"opponent":"alphabeta:depth=2","depth":2,"model_player":"mcts","wins":8,"draws":0,"losses":0,"score":1.0,"elo":null,"elo_low":null,"elo_high":null,"seconds":3.0}"#;
    std::fs::write(run.join("eval/ladder.jsonl"), format!("{ladder}\n")).unwrap();

    let server = Server::start(&["--run", run.to_str().unwrap()]);
    let (status, st) = call(&server, "GET", "/api/run/status", None);
    assert_eq!(status, 200, "{st}");
    assert_eq!(st["state"]["generation"], 3);
    assert_eq!(st["running"], false);
    assert!(st["live"].is_null());
    let (_, m) = call(&server, "GET", "/api/run/metrics", None);
    assert_eq!(m["series"]["loss/total"], json!([[10, 3.5], [20, 3.1]]));
    assert_eq!(m["series"]["loss/policy"], json!([[20, null]]));
    let (_, g) = call(&server, "GET", "/api/run/gating", None);
    assert_eq!(g["gates"][0]["wins"], 12);
    assert_eq!(g["gates"][0]["accepted"], true);
    let (_, l) = call(&server, "GET", "/api/run/ladder", None);
    let point = &l["depths"][0]["points"][0];
    assert_eq!(l["depths"][0]["depth"], 2);
    // 8 of 8 is bounded to a finite Elo, as the run's chart draws it.
    assert!(point["elo"].as_f64().is_some_and(|e| e > 300.0), "{l}");
    // The analysis model of a run is its accepted model.
    let (_, info) = call(&server, "GET", "/api/info", None);
    assert!(
        info["model"].as_str().unwrap().ends_with("models/gen-0002"),
        "{info}"
    );
    // A damaged live.json is a server error with a message, not a crash.
    std::fs::write(run.join("live.json"), "{").unwrap();
    let r = call(&server, "GET", "/api/run/status", None);
    assert_eq!(r.0, 500);
    assert!(error_of(&r).contains("live.json"), "{}", r.1);
}

#[test]
fn bad_command_lines_are_one_line_errors() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args([
            "serve",
            "--model",
            "/no/such/model",
            "--addr",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: --model /no/such/model"), "{err}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(["serve", "--addr", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn garbage_bodies_get_a_4xx_on_every_endpoint_and_the_server_lives_on() {
    let server = Server::start(&[]);
    let endpoints = [
        "/api/legal",
        "/api/play",
        "/api/engine",
        "/api/evaluate",
        "/api/opening",
        "/api/pdn/load",
        "/api/pdn/save",
    ];
    let bodies = [
        "",
        "null",
        "[]",
        "42",
        "{\"moves\": [1, 2]}",
        "{\"fen\": 5}",
        "{\"variant\": \"english\", \"moves\": [\"11-15\"], \"move\": 7}",
        "{\"moves\": [\"\u{0}\"], \"move\": \"\", \"player\": \"\", \"text\": \"[\"}",
        "{\"moves\": [\"999999999999999999999-1\"], \"move\": \"1x\", \"player\": \"mcts:sims=0\", \"text\": \"1. *\"}",
    ];
    for endpoint in endpoints {
        for body in bodies {
            let (status, reply) = call(&server, "POST", endpoint, Some(body));
            assert!(
                (400..500).contains(&status),
                "{endpoint} {body:?}: {status} {reply}"
            );
            assert!(reply["error"].is_string(), "{endpoint} {body:?}: {reply}");
        }
    }
    // Bytes that are not UTF-8 at all.
    let url = format!("{}/api/legal", server.url);
    let bad = ureq::post(&url).send_bytes(&[0xff, 0xfe, 0x00, 0x80]);
    assert!(matches!(bad, Err(ureq::Error::Status(400, _))));
    let (status, _) = call(&server, "GET", "/api/info", None);
    assert_eq!(status, 200, "the server still answers");
}
