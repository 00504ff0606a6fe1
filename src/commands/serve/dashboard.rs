//! The run dashboard's data, read from the run directory on every request
//! (the trainer writes it; the server only reads): live stage and
//! progress, the metrics' curves, the gating table and the ladder.

use super::AppState;
use super::error::{ApiError, ApiResult};
use axum::Json;
use axum::extract::State;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use tammi_trainer::evaluate::{bounded_elo, read_gates, read_ladder};
use tammi_trainer::live::read_live;
use tammi_trainer::metrics::read_metrics;
use tammi_trainer::{RunDir, RunState};

fn run_dir(app: &AppState) -> ApiResult<RunDir> {
    app.roots
        .run
        .as_ref()
        .map(|r| RunDir::new(r))
        .ok_or_else(|| ApiError::not_found("no run is served (start tammi serve with --run DIR)"))
}

fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::internal(e.to_string())
}

/// Whether a process of this machine is alive.
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// `GET /api/run/status`: the run's state and, while a trainer runs, its
/// stage and progress.
pub async fn status(State(app): State<Arc<AppState>>) -> ApiResult<Json<serde_json::Value>> {
    let run = run_dir(&app)?;
    let state: RunState = tammi_trainer::rundir::read_json(&run.state()).map_err(internal)?;
    let live = read_live(&run).map_err(internal)?;
    let running = live
        .as_ref()
        .is_some_and(|l| l.running && process_alive(l.pid));
    Ok(Json(serde_json::json!({
        "run": run.root.display().to_string(),
        "state": state,
        "running": running,
        "live": live,
    })))
}

/// `GET /api/run/metrics`: every scalar series, `{tag: [[step, value], …]}`
/// (a value that is not finite is `null`).
pub async fn metrics(State(app): State<Arc<AppState>>) -> ApiResult<Json<serde_json::Value>> {
    let run = run_dir(&app)?;
    let mut series: BTreeMap<String, Vec<(u64, Option<f64>)>> = BTreeMap::new();
    for (tag, step, value) in read_metrics(&run.metrics_jsonl()).map_err(internal)? {
        series
            .entry(tag)
            .or_default()
            .push((step, value.is_finite().then_some(value)));
    }
    for points in series.values_mut() {
        points.sort_by_key(|p| p.0);
    }
    Ok(Json(serde_json::json!({ "series": series })))
}

fn eval_file(run: &RunDir, name: &str) -> PathBuf {
    run.eval().join(name)
}

/// `GET /api/run/gating`: one row per gated generation.
pub async fn gating(State(app): State<Arc<AppState>>) -> ApiResult<Json<serde_json::Value>> {
    let run = run_dir(&app)?;
    let gates = read_gates(&eval_file(&run, "gating.jsonl")).map_err(internal)?;
    Ok(Json(serde_json::json!({ "gates": gates })))
}

/// `GET /api/run/ladder`: Elo against each alpha-beta depth over the
/// run's hours (bounded at 0% and 100%, as the run's own chart draws it).
pub async fn ladder(State(app): State<Arc<AppState>>) -> ApiResult<Json<serde_json::Value>> {
    let run = run_dir(&app)?;
    let records = read_ladder(&eval_file(&run, "ladder.jsonl")).map_err(internal)?;
    let mut by_depth: BTreeMap<u32, Vec<serde_json::Value>> = BTreeMap::new();
    for r in &records {
        let games = r.wdl.games();
        by_depth
            .entry(r.depth)
            .or_default()
            .push(serde_json::json!({
                "hours": r.hours,
                "generation": r.model_generation,
                "score": r.score,
                "games": games,
                "elo": bounded_elo(r.score, games),
                "elo_low": r.elo_low,
                "elo_high": r.elo_high,
            }));
    }
    let depths: Vec<serde_json::Value> = by_depth
        .into_iter()
        .map(|(depth, points)| serde_json::json!({"depth": depth, "points": points}))
        .collect();
    Ok(Json(serde_json::json!({ "depths": depths })))
}
