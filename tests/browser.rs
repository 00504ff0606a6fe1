//! `tammi serve` in a real browser: headless Chromium driven over WebDriver
//! (chromedriver) by fantoccini.  One test plays a full game against
//! `alphabeta:depth=2` by clicking squares, with refused illegal clicks and a
//! multi-capture entered square by square; the other watches the dashboard
//! of a tiny run while it trains and sees its curves grow.
//!
//! Needs `chromium` and `chromedriver` (Debian: chromium, chromium-driver;
//! `.ci/run` installs them).  Without them the tests say they were skipped,
//! unless `TAMMI_REQUIRE_BROWSER` is set (CI), where they fail.  Screenshots
//! go to `$TAMMI_SCREENSHOTS` (default: `tammi-browser-shots` in the
//! temporary directory).

mod serve;

use fantoccini::{Client, ClientBuilder, Locator};
use serve::Server;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tammi_rules::{Game, Variant, result_token};

/// Where the browser and its driver are, if installed.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let find = |env: &str, names: &[&str]| -> Option<PathBuf> {
        if let Some(p) = std::env::var_os(env) {
            return Some(PathBuf::from(p));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .flat_map(|d| names.iter().map(move |n| d.join(n)))
            .find(|p| p.is_file())
    };
    let chromium = find(
        "TAMMI_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    )?;
    let driver = find("TAMMI_CHROMEDRIVER", &["chromedriver"])?;
    Some((chromium, driver))
}

fn required_or_skipped() -> Option<(PathBuf, PathBuf)> {
    let found = browser();
    if found.is_none() {
        assert!(
            std::env::var_os("TAMMI_REQUIRE_BROWSER").is_none(),
            "chromium and chromedriver are required here (TAMMI_REQUIRE_BROWSER is set)"
        );
        eprintln!(
            "skipped: chromium/chromedriver not installed (apt install chromium chromium-driver)"
        );
    }
    found
}

fn screenshot_dir() -> PathBuf {
    let dir = std::env::var_os("TAMMI_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("tammi-browser-shots"));
    std::fs::create_dir_all(&dir).expect("screenshot directory");
    dir
}

/// A chromedriver process on a free port, killed when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start(driver: &Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Driver { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn connect(chromium: &Path, driver: &Driver) -> Client {
    let profile = tempfile::tempdir().unwrap().keep();
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": chromium.to_str().unwrap(),
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--window-size=1400,1000",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("connect to chromedriver")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(screenshot_dir().join(name), png).unwrap();
}

/// Runs a script in the page and returns its value.
async fn js(c: &Client, script: &str) -> serde_json::Value {
    c.execute(script, vec![]).await.expect(script)
}

async fn click_square(c: &Client, n: u64) {
    c.find(Locator::Css(&format!("#board [data-square='{n}']")))
        .await
        .unwrap_or_else(|e| panic!("square {n}: {e}"))
        .click()
        .await
        .unwrap();
}

/// Waits until a script returns true.
async fn wait_for(c: &Client, script: &str, limit: Duration) {
    let started = Instant::now();
    loop {
        if js(c, script).await == serde_json::Value::Bool(true) {
            return;
        }
        assert!(started.elapsed() < limit, "timed out waiting for: {script}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn ply(c: &Client) -> u64 {
    js(
        c,
        "return Number(document.getElementById('board').dataset.ply)",
    )
    .await
    .as_u64()
    .unwrap()
}

async fn text_of(c: &Client, id: &str) -> String {
    c.find(Locator::Id(id)).await.unwrap().text().await.unwrap()
}

/// The page is ready for a click: a position is drawn and nothing is pending.
const IDLE: &str = "return typeof S !== 'undefined' && S.view !== null && !S.thinking \
    && document.querySelector('#board [data-square]') !== null";

#[test]
fn a_full_game_against_alpha_beta_by_clicks() {
    let Some((chromium, driver_path)) = required_or_skipped() else {
        return;
    };
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/english-default");
    let server = Server::start(&["--model", model.to_str().unwrap()]);
    let driver = Driver::start(&driver_path);
    runtime().block_on(async {
        let c = connect(&chromium, &driver).await;
        c.goto(&format!("{}/", server.url)).await.unwrap();
        wait_for(&c, IDLE, Duration::from_secs(20)).await;
        // The opponent: alpha-beta depth 2, playing White.
        c.find(Locator::Css("#opponent option[value='ab2']"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert_eq!(
            js(&c, "return document.getElementById('spec').value").await,
            "alphabeta:depth=2"
        );

        // Illegal clicks are refused and change nothing: a man with no
        // move, an empty square, a destination no move reaches.
        for clicks in [&[1u64][..], &[15], &[11, 20]] {
            for &n in clicks {
                click_square(&c, n).await;
            }
            let class = js(&c, "return document.getElementById('message').className").await;
            assert!(class.as_str().unwrap().contains("refused"), "{clicks:?}: {class}");
            assert_eq!(ply(&c).await, 0, "{clicks:?} changed the game");
            // Clear a selection left by a refused second click.
            js(&c, "S.selected = []; render(); return true").await;
        }

        // A double capture, entered square by square: 10x17x26 takes 14 and 22.
        let fen = c.find(Locator::Id("fen")).await.unwrap();
        fen.clear().await.unwrap();
        fen.send_keys("B:W14,15,22:B10").await.unwrap();
        c.find(Locator::Id("set-fen")).await.unwrap().click().await.unwrap();
        wait_for(&c, "return S.view.fen.startsWith('B:W14,15,22')", Duration::from_secs(10)).await;
        click_square(&c, 10).await;
        click_square(&c, 17).await;
        assert_eq!(ply(&c).await, 0, "the capture is not complete at 17");
        let targets = js(
            &c,
            "return [...document.querySelectorAll('#board .target')].map(e => Number(e.dataset.square))",
        )
        .await;
        assert_eq!(targets, serde_json::json!([26]), "the only way on from 17");
        click_square(&c, 26).await;
        wait_for(&c, "return S.moves.length >= 1", Duration::from_secs(10)).await;
        assert_eq!(js(&c, "return S.moves[0]").await, "10x17x26");
        let left = js(
            &c,
            "return [14, 22].map(n => document.querySelector(`#board [data-square='${n}'] .piece`) === null)",
        )
        .await;
        assert_eq!(left, serde_json::json!([true, true]), "both captured men are gone");
        shot(&c, "board-multicapture.png").await;

        // A full game from the start: the human side (Black) clicks the
        // first legal move each turn, the engine answers.
        c.find(Locator::Id("new-game")).await.unwrap().click().await.unwrap();
        wait_for(&c, "return S.moves.length === 0 && S.view.ply === 0", Duration::from_secs(10)).await;
        let started = Instant::now();
        loop {
            wait_for(&c, IDLE, Duration::from_secs(60)).await;
            let state = js(&c, "return {over: S.view.outcome !== null, side: S.view.side_to_move, \
                 path: S.view.legal.length ? S.view.legal[0].path : [], ply: S.moves.length}")
                .await;
            if state["over"] == true {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(600), "the game did not end");
            if state["side"] != "black" {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            let before = state["ply"].as_u64().unwrap();
            if before == 12 {
                // Mid-game analysis: the network's arrows on the board, MCTS
                // visits and the alpha-beta line beside it.
                c.find(Locator::Id("analyse")).await.unwrap().click().await.unwrap();
                wait_for(&c, "return S.analysis !== null", Duration::from_secs(60)).await;
                let shown = js(
                    &c,
                    "return {arrows: document.querySelectorAll('#board svg.overlay .arrow').length, \
                     mcts: document.querySelectorAll('#analysis table.mcts tbody tr').length, \
                     pv: document.querySelector('#analysis .pv').textContent.length}",
                )
                .await;
                assert!(shown["arrows"].as_u64() > Some(0), "{shown}");
                assert!(shown["mcts"].as_u64() > Some(0), "{shown}");
                assert!(shown["pv"].as_u64() > Some(0), "{shown}");
                shot(&c, "board-analysis.png").await;
            }
            for n in state["path"].as_array().unwrap() {
                click_square(&c, n.as_u64().unwrap()).await;
            }
            wait_for(
                &c,
                &format!("return S.moves.length > {before} || S.view.outcome !== null"),
                Duration::from_secs(20),
            )
            .await;
        }
        // Analysis of the final position draws the network's view.
        c.find(Locator::Id("analyse")).await.unwrap().click().await.unwrap();
        wait_for(&c, "return S.analysis !== null", Duration::from_secs(30)).await;

        // The moves on the page are a legal game whose result the page shows.
        let moves: Vec<String> =
            serde_json::from_value(js(&c, "return S.moves").await).unwrap();
        let mut game = Game::start(Variant::English);
        for m in &moves {
            game.play_text(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        }
        let outcome = game.outcome().expect("the rules end the game too");
        let shown = js(&c, "return document.getElementById('status').dataset.result").await;
        assert_eq!(shown, result_token(Variant::English, outcome.winner));
        assert!(text_of(&c, "status").await.starts_with("Game over"));
        assert!(moves.len() > 10, "{moves:?}");
        shot(&c, "board-final.png").await;

        // Saved as PDN, the page's game reads back with the same moves.
        c.find(Locator::Id("save-pdn")).await.unwrap().click().await.unwrap();
        wait_for(
            &c,
            "return document.getElementById('pdn-text').value.length > 0",
            Duration::from_secs(10),
        )
        .await;
        let pdn = js(&c, "return document.getElementById('pdn-text').value").await;
        let games = tammi_rules::read_pdn(pdn.as_str().unwrap(), Variant::English).unwrap();
        assert_eq!(games[0].game.moves().count(), moves.len());

        // Loaded from a file, the game is stepped through from its start.
        let file = tempfile::Builder::new().suffix(".pdn").tempfile().unwrap();
        std::fs::write(file.path(), pdn.as_str().unwrap()).unwrap();
        c.find(Locator::Id("pdn-file"))
            .await
            .unwrap()
            .send_keys(file.path().to_str().unwrap())
            .await
            .unwrap();
        wait_for(
            &c,
            &format!("return S.moves.length === {} && S.cursor === 0 && S.view.ply === 0", moves.len()),
            Duration::from_secs(10),
        )
        .await;
        for _ in 0..3 {
            c.find(Locator::Id("forward")).await.unwrap().click().await.unwrap();
        }
        wait_for(&c, "return S.view.ply === 3", Duration::from_secs(10)).await;
        let mut third = Game::start(Variant::English);
        for m in &moves[..3] {
            third.play_text(m).unwrap();
        }
        assert_eq!(
            js(&c, "return S.view.fen").await,
            tammi_rules::to_fen(third.position())
        );
        assert_eq!(text_of(&c, "cursor").await, format!("3 / {}", moves.len()));
        c.close().await.unwrap();
    });
}

#[test]
fn the_dashboard_follows_a_training_run() {
    let Some((chromium, driver_path)) = required_or_skipped() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = tammi_trainer::RunConfig::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml"),
    )
    .unwrap();
    cfg.run.games_per_generation = 24;
    cfg.run.generations = 4;
    cfg.train.window.min_positions = 1000;
    cfg.train.steps_per_generation = 40;
    cfg.train.log_every = 4;
    cfg.gating.pairs = 2;
    cfg.ladder.every = 1;
    cfg.ladder.depths = vec![1];
    cfg.ladder.pairs = 1;
    let config = dir.path().join("dash.toml");
    std::fs::write(&config, cfg.to_toml()).unwrap();
    let run = dir.path().join("run");
    let mut trainer = Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(["train", "--config", config.to_str().unwrap(), "--run"])
        .arg(&run)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !run.join("state.json").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let server = Server::start(&["--run", run.to_str().unwrap()]);
    let driver = Driver::start(&driver_path);
    runtime().block_on(async {
        let c = connect(&chromium, &driver).await;
        c.goto(&format!("{}/dashboard", server.url)).await.unwrap();
        wait_for(
            &c,
            "return document.getElementById('run-state').dataset.running === 'true'",
            Duration::from_secs(30),
        )
        .await;
        let points = "Number(document.getElementById('chart-loss').dataset.points || 0)";
        wait_for(
            &c,
            &format!("return {points} > 0"),
            Duration::from_secs(600),
        )
        .await;
        let first = js(&c, &format!("return {points}")).await.as_u64().unwrap();
        shot(&c, "dashboard-first.png").await;
        // The curves grow while the run trains on, without a reload.
        wait_for(
            &c,
            &format!("return {points} > {first}"),
            Duration::from_secs(600),
        )
        .await;
        let stage = js(
            &c,
            "return document.getElementById('progress-text').dataset.stage",
        )
        .await;
        assert!(
            ["selfplay", "train", "gate", "ladder"].contains(&stage.as_str().unwrap_or("")),
            "{stage}"
        );
        // The gating table fills once a generation has been gated.
        wait_for(
            &c,
            "return Number(document.getElementById('gating').dataset.rows || 0) > 0",
            Duration::from_secs(600),
        )
        .await;
        shot(&c, "dashboard.png").await;
        c.close().await.unwrap();
    });
    let _ = trainer.kill();
    let _ = trainer.wait();
}
