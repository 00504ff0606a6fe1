//! Engine moves and analysis for the page.
//!
//! A request names its player as a spec (`alphabeta:depth=8`,
//! `mcts:model=DIR,movetime=1s`, `random`).  The server bounds what a spec
//! may cost ([`MAX_MOVETIME`], [`MAX_HASH_MB`], a time cap on depth- and
//! simulation-limited searches), refuses paths outside its directories, and
//! runs at most `--searches` searches at once, each on a blocking thread so
//! the server keeps answering while they think.

use super::AppState;
use super::error::{ApiError, ApiResult, parse_body};
use super::game::{GameRequest, GameView, MoveView};
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tammi_model::{DeviceChoice, EvalRequest, Evaluator, load_evaluator};
use tammi_rules::{Game, Variant, move_text};
use tammi_search::PlayerSpec;
use tammi_search::player::{MctsPlayer, PlayerFactory, alphabeta_engine};

/// Longest search a request may ask for; depth- or simulation-limited
/// searches stop there too.
pub const MAX_MOVETIME: Duration = Duration::from_secs(30);
/// Largest alpha-beta hash table a request may ask for (MiB).
pub const MAX_HASH_MB: usize = 256;
/// How long a request waits for a free search slot before a 503.
const QUEUE_WAIT: Duration = Duration::from_secs(60);
/// Player factories and networks kept loaded (the oldest are dropped).
const CACHE_ENTRIES: usize = 8;

/// The server's search slots and what it keeps loaded between requests.
pub struct Engines {
    slots: Arc<tokio::sync::Semaphore>,
    factories: Mutex<HashMap<(String, Variant), Arc<PlayerFactory>>>,
    networks: Mutex<HashMap<(PathBuf, Variant), Arc<dyn Evaluator>>>,
}

impl Engines {
    pub fn new(searches: usize) -> Engines {
        Engines {
            slots: Arc::new(tokio::sync::Semaphore::new(searches)),
            factories: Mutex::new(HashMap::new()),
            networks: Mutex::new(HashMap::new()),
        }
    }

    /// Runs a search on a blocking thread once a slot is free.
    async fn run<T: Send + 'static>(
        &self,
        search: impl FnOnce() -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let permit = tokio::time::timeout(QUEUE_WAIT, self.slots.clone().acquire_owned())
            .await
            .map_err(|_| ApiError::busy("every search slot is busy; try again"))?
            .map_err(|_| ApiError::internal("search slots closed"))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            search()
        })
        .await
        .map_err(|e| ApiError::internal(format!("search failed: {e}")))?
    }

    /// The factory of a checked spec, loaded once.
    fn factory(&self, spec: &PlayerSpec, variant: Variant) -> ApiResult<Arc<PlayerFactory>> {
        let key = (spec.to_string(), variant);
        let mut cache = self.factories.lock().expect("no panic while locked");
        if let Some(f) = cache.get(&key) {
            return Ok(f.clone());
        }
        let f = Arc::new(
            PlayerFactory::new(spec, variant)
                .map_err(|e| ApiError::bad(format!("player {spec}: {e}")))?,
        );
        if cache.len() >= CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(key, f.clone());
        Ok(f)
    }

    /// The network of a model directory (already checked), loaded once.
    fn network(&self, dir: &Path, variant: Variant) -> ApiResult<Arc<dyn Evaluator>> {
        let key = (dir.to_path_buf(), variant);
        let mut cache = self.networks.lock().expect("no panic while locked");
        if let Some(n) = cache.get(&key) {
            return Ok(n.clone());
        }
        let n = load_evaluator(Some(dir), variant, DeviceChoice::Flex)
            .map_err(|e| ApiError::bad(format!("model {}: {e}", dir.display())))?;
        if cache.len() >= CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(key, n.clone());
        Ok(n)
    }
}

/// Parses a spec and bounds it: paths inside the server's directories,
/// searches capped in time and memory.
pub fn checked_spec(app: &AppState, text: &str) -> ApiResult<PlayerSpec> {
    let mut spec: PlayerSpec = text
        .parse()
        .map_err(|e| ApiError::bad(format!("player '{text}': {e}")))?;
    let cap = |t: &mut Option<Duration>| {
        *t = Some(t.map_or(MAX_MOVETIME, |t| t.min(MAX_MOVETIME)));
    };
    match &mut spec {
        PlayerSpec::Random => {}
        PlayerSpec::AlphaBeta {
            movetime,
            hash_mb,
            egdb,
            eval,
            ..
        } => {
            cap(movetime);
            *hash_mb = (*hash_mb).min(MAX_HASH_MB);
            if let Some(dir) = egdb {
                *dir = app.roots.check("egdb", dir)?;
            }
            if let Some(dir) = eval {
                *dir = app.roots.check("eval", dir)?;
            }
        }
        PlayerSpec::Mcts {
            model,
            movetime,
            egdb,
            ..
        } => {
            cap(movetime);
            if let Some(dir) = model {
                *dir = app.roots.check("model", dir)?;
            }
            if let Some(dir) = egdb {
                *dir = app.roots.check("egdb", dir)?;
            }
        }
    }
    Ok(spec)
}

/// `GET /api/info`: version, variants, the model and run being served.
pub async fn info(State(app): State<Arc<AppState>>) -> ApiResult<Json<serde_json::Value>> {
    let model = app.roots.analysis_model()?;
    let variants: Vec<serde_json::Value> = Variant::ALL
        .iter()
        .map(|v| serde_json::json!({"name": v.name(), "size": v.geometry().size}))
        .collect();
    Ok(Json(serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "variants": variants,
        "default_variant": app.default_variant.name(),
        "model": model.map(|m| m.display().to_string()),
        "run": app.roots.run.as_ref().map(|r| r.display().to_string()),
        "eval": app.roots.eval.as_ref().map(|(given, _)| given.display().to_string()),
        "max_movetime_ms": MAX_MOVETIME.as_millis() as u64,
    })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EngineRequest {
    #[serde(flatten)]
    game: GameRequest,
    /// Player spec, e.g. `alphabeta:depth=6`.
    player: String,
    /// Seed of the player's random choices.
    #[serde(default)]
    seed: u64,
}

/// `POST /api/engine`: the player's move in the game, and the game after it.
pub async fn engine_move(
    State(app): State<Arc<AppState>>,
    body: Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    let req: EngineRequest = parse_body(&body)?;
    let mut game = req.game.replay(app.default_variant)?;
    if game.outcome().is_some() {
        return Err(ApiError::unplayable("the game is over"));
    }
    let spec = checked_spec(&app, &req.player)?;
    let variant = game.position().variant();
    let factory = app.engines.factory(&spec, variant)?;
    let seed = req.seed;
    let (game, m, info, secs) = app
        .engines
        .run(move || {
            let mut player = factory.make(seed);
            let t = Instant::now();
            let (m, info) = player
                .choose(&game)
                .map_err(|e| ApiError::internal(e.to_string()))?;
            let secs = t.elapsed().as_secs_f64();
            game.play(&m)
                .map_err(|e| ApiError::internal(format!("the engine's move: {e}")))?;
            Ok((game, m, info, secs))
        })
        .await?;
    Ok(Json(serde_json::json!({
        "move": MoveView::of(variant, &m),
        "player": req.player.trim(),
        "score": info.score,
        "depth": info.depth,
        "nodes": info.nodes,
        "seconds": secs,
        "state": GameView::of(&game),
    })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EvaluateRequest {
    #[serde(flatten)]
    game: GameRequest,
    /// The network's W/D/L and policy (needs a model).
    #[serde(default = "yes")]
    network: bool,
    /// MCTS with the network: simulations (0 or absent: none).
    #[serde(default)]
    mcts_sims: u32,
    /// An alpha-beta spec to search with (absent: none).
    alphabeta: Option<String>,
}

fn yes() -> bool {
    true
}

/// Most MCTS simulations an analysis may ask for.
pub const MAX_ANALYSIS_SIMS: u32 = 100_000;

/// `POST /api/evaluate`: the network's W/D/L and move probabilities, MCTS
/// visits and values, and an alpha-beta score with its principal variation.
pub async fn evaluate(
    State(app): State<Arc<AppState>>,
    body: Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    let req: EvaluateRequest = parse_body(&body)?;
    let game = req.game.replay(app.default_variant)?;
    let variant = game.position().variant();
    if req.mcts_sims > MAX_ANALYSIS_SIMS {
        return Err(ApiError::bad(format!(
            "mcts_sims {}: at most {MAX_ANALYSIS_SIMS}",
            req.mcts_sims
        )));
    }
    let alphabeta = match &req.alphabeta {
        None => None,
        Some(text) => match checked_spec(&app, text)? {
            spec @ PlayerSpec::AlphaBeta { .. } => Some((text.trim().to_string(), spec)),
            other => {
                return Err(ApiError::bad(format!(
                    "alphabeta: '{other}' is not an alpha-beta spec"
                )));
            }
        },
    };
    let model = app.roots.analysis_model()?;
    let network = match (&model, req.network || req.mcts_sims > 0) {
        (Some(dir), true) => Some(app.engines.network(dir, variant)?),
        _ => None,
    };
    let over = game.outcome().is_some();
    let sims = req.mcts_sims;
    let want_network = req.network;
    let model_name = model.map(|m| m.display().to_string());
    app.engines
        .run(move || {
            let net = match (&network, want_network) {
                (Some(n), true) => Some(network_view(n.as_ref(), &game)?),
                _ => None,
            };
            let mcts = match &network {
                Some(n) if sims > 0 && !over => Some(mcts_view(n.clone(), &game, sims)?),
                _ => None,
            };
            let ab = match alphabeta {
                Some((text, spec)) if !over => Some(alphabeta_view(&text, &spec, &game)?),
                _ => None,
            };
            Ok(Json(serde_json::json!({
                "model": model_name,
                "network": net,
                "mcts": mcts,
                "alphabeta": ab,
            })))
        })
        .await
}

fn network_view(net: &dyn Evaluator, game: &Game) -> ApiResult<serde_json::Value> {
    let pos = game.position();
    let variant = pos.variant();
    let moves = pos.legal_moves();
    let req = EvalRequest {
        position: pos,
        moves: &moves,
        no_progress: game.no_progress_plies(),
        repetitions: game.repetition_count() as u32,
    };
    let mut out = Vec::new();
    net.evaluate(&[req], &mut out)
        .map_err(|e| ApiError::internal(format!("network: {e}")))?;
    let r = &out[0];
    let mut policy: Vec<serde_json::Value> = moves
        .iter()
        .zip(&r.policy)
        .map(|(m, p)| serde_json::json!({"move": MoveView::of(variant, m), "p": p}))
        .collect();
    policy.sort_by(|a, b| {
        b["p"]
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&a["p"].as_f64().unwrap_or(0.0))
    });
    Ok(serde_json::json!({
        "wdl": r.wdl,
        "value": r.value(),
        "moves_left": r.moves_left,
        "policy": policy,
    }))
}

fn mcts_view(net: Arc<dyn Evaluator>, game: &Game, sims: u32) -> ApiResult<serde_json::Value> {
    let variant = game.position().variant();
    let mut player =
        MctsPlayer::new(net, Some(sims), Some(MAX_MOVETIME), 1, "analysis".into()).with_batch(8);
    let d = player
        .think(game)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let moves = game.position().legal_moves();
    let mut rows: Vec<serde_json::Value> = moves
        .iter()
        .enumerate()
        .map(|(k, m)| {
            serde_json::json!({
                "move": MoveView::of(variant, m),
                "visits": d.visits[k],
                "q": d.q[k],
                "policy": d.policy[k],
            })
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r["visits"].as_u64().unwrap_or(0)));
    Ok(serde_json::json!({
        "simulations": d.root_visits,
        "wdl": d.root_wdl,
        "value": d.value(),
        "best": move_text(variant, &d.mv),
        "moves": rows,
    }))
}

/// An alpha-beta search of the position; `text` is the spec as the request gave it.
fn alphabeta_view(text: &str, spec: &PlayerSpec, game: &Game) -> ApiResult<serde_json::Value> {
    let variant = game.position().variant();
    let (mut engine, limits) = alphabeta_engine(spec, variant)
        .map_err(|e| ApiError::bad(e.to_string()))?
        .ok_or_else(|| ApiError::bad("not an alpha-beta spec"))?;
    let r = engine.search(game, &limits);
    Ok(serde_json::json!({
        "spec": text,
        "best": r.best.map(|m| MoveView::of(variant, &m)),
        "score": r.score,
        "pv": r.pv.iter().map(|m| move_text(variant, m)).collect::<Vec<_>>(),
        "depth": r.depth,
        "nodes": r.nodes,
        "seconds": r.elapsed.as_secs_f64(),
    }))
}
