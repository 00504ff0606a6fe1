//! `tammi serve`: a board in the browser to play and analyse with any
//! player, PDN in and out, and a live dashboard of a training run.
//!
//! The page (HTML, JavaScript and CSS embedded in the binary: no build step,
//! no CDN, works offline) talks to a JSON API under `/api` that is stateless:
//! every request names the game as a variant, a start FEN and the moves
//! played, and the server replays them through the rules core.  So a page
//! can be reloaded, several pages can share one server, and nothing is lost
//! when the server restarts.
//!
//! - [`game`]: the game requests and views (legal moves, play a move, PDN);
//! - [`engine`]: engine moves and analysis (network, MCTS, alpha-beta), with
//!   the limits a server puts on them;
//! - [`dashboard`]: the run's live status, metrics, gating and ladder;
//! - [`access`]: which directories the server may read;
//! - [`assets`]: the embedded page; [`error`]: the API's error replies;
//! - [`conn`]: connections bounded in size and time, refusals in JSON.

mod access;
mod assets;
mod conn;
mod dashboard;
mod engine;
mod error;
mod game;

use super::{CliError, CliResult};
use access::Roots;
use axum::Router;
use axum::routing::{get, post};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tammi_rules::Variant;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Model directory for the network's analysis and for `mcts:model=…`
    /// players (the newest accepted model of --run otherwise).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Run directory of `tammi train` to show on the dashboard (/dashboard).
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// A learned evaluation for alpha-beta (`tammi train-eval`'s model): an
    /// engine choice on the page (`alphabeta:eval=DIR`).
    #[arg(long)]
    pub eval: Option<PathBuf>,
    /// Variant of a new game on the page (every variant can be chosen there).
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Address to listen on; port 0 picks a free port (printed at start).
    /// Binds to localhost unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Searches that may run at the same time (each uses one core).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub searches: u16,
    /// Seconds a client has to send a request's head, and again its body,
    /// before the server answers 408 and closes the connection.
    #[arg(long, default_value_t = 10.0, value_parser = read_timeout)]
    pub read_timeout: f64,
}

/// `--read-timeout`: seconds, above 0 and at most an hour.
fn read_timeout(text: &str) -> Result<f64, String> {
    let s: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if s.is_finite() && s > 0.0 && s <= 3600.0 {
        Ok(s)
    } else {
        Err(format!("{text} is not between 0 and 3600 seconds"))
    }
}

/// What every request handler shares.
pub struct AppState {
    pub default_variant: Variant,
    pub roots: Roots,
    pub engines: engine::Engines,
}

/// The routes of the page and of the API, with the body limits and JSON
/// errors of [`conn`].
pub fn router(state: Arc<AppState>, limits: conn::Limits) -> Router {
    Router::new()
        .route("/", get(assets::board_page))
        .route("/dashboard", get(assets::dashboard_page))
        .route("/assets/{file}", get(assets::asset))
        .route("/api/info", get(engine::info))
        .route("/api/legal", post(game::legal))
        .route("/api/play", post(game::play))
        .route("/api/opening", post(game::opening))
        .route("/api/engine", post(engine::engine_move))
        .route("/api/evaluate", post(engine::evaluate))
        .route("/api/pdn/load", post(game::pdn_load))
        .route("/api/pdn/save", post(game::pdn_save))
        .route("/api/run/status", get(dashboard::status))
        .route("/api/run/metrics", get(dashboard::metrics))
        .route("/api/run/gating", get(dashboard::gating))
        .route("/api/run/ladder", get(dashboard::ladder))
        .fallback(error::not_found)
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(
            limits,
            conn::bounded_body,
        ))
        .layer(axum::middleware::from_fn(conn::json_errors))
}

pub fn run(args: &Args) -> CliResult {
    let roots = Roots::new(
        args.model.as_deref(),
        args.run.as_deref(),
        args.eval.as_deref(),
    )?;
    let state = Arc::new(AppState {
        default_variant: args.variant,
        engines: engine::Engines::new(usize::from(args.searches)),
        roots,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| CliError(format!("cannot start the server's runtime: {e}")))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .map_err(|e| CliError(format!("cannot listen on {}: {e}", args.addr)))?;
        let addr = listener.local_addr()?;
        outln!("tammi serve: listening on http://{addr}/ (dashboard: http://{addr}/dashboard)");
        if !addr.ip().is_loopback() {
            eprintln!("warning: {addr} is reachable from other machines; the API has no login");
        }
        let limits = conn::Limits::with_read_timeout(Duration::from_secs_f64(args.read_timeout));
        conn::serve(listener, router(state, limits), limits)
            .await
            .map_err(|e| CliError(format!("server: {e}")))
    })
}
