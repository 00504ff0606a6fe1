//! `tammi.Player` and `tammi.match`: the CLI's players from the same spec
//! strings, and matches on balanced openings with their statistics.  Every
//! search runs with the GIL released, so Python threads play in parallel.

use crate::errors::{player_error, runtime_error, value_error};
use crate::game::{PyGame, PyMove, variant_named};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Mutex;
use std::time::Instant;
use tammi_evaluator::matchplay::{MatchConfig, MatchResult, run_match};
use tammi_rules::{Game, Variant};
use tammi_search::PlayerSpec;
use tammi_search::alphabeta::{AlphaBeta, SearchLimits};
use tammi_search::mcts::Decision;
use tammi_search::nnue::LeafEval;
use tammi_search::openings::{OpeningSource, load_openings};
use tammi_search::player::{MctsPlayer, Player, PlayerError, PlayerFactory, alphabeta_engine};

/// What a spec needs in one variant: its player, and what analysis uses
/// (the alpha-beta engine for the principal variation, the MCTS search for
/// the visits), made on first use.
struct Seat {
    player: Box<dyn Player>,
    engine: Option<(AlphaBeta<LeafEval>, SearchLimits)>,
    mcts: Option<MctsPlayer>,
}

/// A player made from a spec string, as the CLI's `--a`/`--player` take:
/// `random`, `alphabeta:depth=8`, `alphabeta:movetime=200ms,eval=DIR`,
/// `mcts:model=DIR,movetime=200ms`, ...  It plays any variant; its model,
/// tables and evaluation load once per variant.
#[pyclass(module = "tammi", name = "Player")]
pub struct PyPlayer {
    spec: PlayerSpec,
    seed: u64,
    seats: Mutex<HashMap<Variant, Seat>>,
}

impl PyPlayer {
    fn seat<'a>(
        &self,
        seats: &'a mut HashMap<Variant, Seat>,
        variant: Variant,
    ) -> Result<&'a mut Seat, PlayerError> {
        Ok(match seats.entry(variant) {
            Entry::Occupied(seat) => seat.into_mut(),
            Entry::Vacant(slot) => slot.insert(Seat {
                player: PlayerFactory::new(&self.spec, variant)?.make(self.seed),
                engine: None,
                mcts: None,
            }),
        })
    }
}

/// What `analyze` found, before it becomes a dict.
enum Analysis {
    AlphaBeta(tammi_search::alphabeta::SearchResult),
    Mcts(Decision),
    Other(tammi_rules::Move, tammi_search::player::MoveInfo),
}

#[pymethods]
impl PyPlayer {
    /// A player from `spec`; `seed` makes its random choices reproducible.
    /// With `variant`, its model and tables load now (else on first use).
    /// A bad spec is a `ValueError`, a missing or damaged model an `OSError`.
    #[new]
    #[pyo3(signature = (spec, seed = 1, variant = None))]
    fn py_new(spec: &str, seed: u64, variant: Option<&str>) -> PyResult<PyPlayer> {
        let spec: PlayerSpec = spec.parse().map_err(value_error)?;
        let player = PyPlayer {
            spec,
            seed,
            seats: Mutex::new(HashMap::new()),
        };
        if let Some(v) = variant {
            let v = variant_named(v)?;
            let mut seats = player.seats.lock().expect("no panic while locked");
            player.seat(&mut seats, v).map_err(player_error)?;
        }
        Ok(player)
    }

    /// The spec, written out in full.
    #[getter]
    fn spec(&self) -> String {
        self.spec.to_string()
    }

    /// The move this player plays in `game` (the search runs without the
    /// GIL); a finished game is a `ValueError`.
    fn best_move(&self, py: Python<'_>, game: &PyGame) -> PyResult<PyMove> {
        let g: Game = game.game.clone();
        let variant = game.variant_of();
        if let Some(o) = g.outcome() {
            return Err(value_error(format!("the game is over ({o})")));
        }
        let (mv, _) = py
            .detach(|| {
                let mut seats = self.seats.lock().expect("no panic while locked");
                let seat = self.seat(&mut seats, variant)?;
                seat.player.choose(&g)
            })
            .map_err(player_error)?;
        Ok(PyMove::new(mv, variant))
    }

    /// Searches `game`'s position and returns what was found: `best` (a
    /// Move), `score` (alpha-beta: hundredths of a man; MCTS: 100 x (win -
    /// loss)), `depth`, `nodes`, `seconds`, and `pv` (alpha-beta's principal
    /// variation) or `wdl` and `visits` (MCTS: `[(move, visits, q)]` per
    /// legal move).
    fn analyze<'py>(&self, py: Python<'py>, game: &PyGame) -> PyResult<Bound<'py, PyDict>> {
        let g: Game = game.game.clone();
        let variant = game.variant_of();
        if let Some(o) = g.outcome() {
            return Err(value_error(format!("the game is over ({o})")));
        }
        let spec = self.spec.clone();
        let seed = self.seed;
        let started = Instant::now();
        let analysis = py
            .detach(|| -> Result<Analysis, PlayerError> {
                let mut seats = self.seats.lock().expect("no panic while locked");
                let seat = self.seat(&mut seats, variant)?;
                if matches!(spec, PlayerSpec::AlphaBeta { .. }) {
                    if seat.engine.is_none() {
                        seat.engine = alphabeta_engine(&spec, variant)?;
                    }
                    let (engine, limits) = seat.engine.as_mut().expect("an alphabeta spec");
                    return Ok(Analysis::AlphaBeta(engine.search(&g, limits)));
                }
                if matches!(spec, PlayerSpec::Mcts { .. }) {
                    if seat.mcts.is_none() {
                        seat.mcts = PlayerFactory::new(&spec, variant)?.make_mcts(seed);
                    }
                    let mcts = seat.mcts.as_mut().expect("an mcts spec");
                    return Ok(Analysis::Mcts(mcts.think(&g)?));
                }
                let (mv, info) = seat.player.choose(&g)?;
                Ok(Analysis::Other(mv, info))
            })
            .map_err(player_error)?;
        let seconds = started.elapsed().as_secs_f64();
        let d = PyDict::new(py);
        let wrap = |m: tammi_rules::Move| PyMove::new(m, variant);
        match analysis {
            Analysis::AlphaBeta(r) => {
                d.set_item("best", r.best.map(wrap))?;
                d.set_item("score", r.score)?;
                d.set_item("pv", r.pv.iter().map(|m| wrap(*m)).collect::<Vec<_>>())?;
                d.set_item("depth", r.depth)?;
                d.set_item("nodes", r.nodes)?;
            }
            Analysis::Mcts(dec) => {
                d.set_item("best", wrap(dec.mv))?;
                d.set_item("score", (dec.value() * 100.0).round() as i32)?;
                d.set_item("wdl", dec.root_wdl.to_vec())?;
                d.set_item("nodes", dec.root_visits)?;
                let moves = g.legal_moves();
                let visits: Vec<(PyMove, u32, Option<f32>)> = moves
                    .iter()
                    .zip(dec.visits.iter().zip(dec.q.iter()))
                    .map(|(m, (v, q))| (wrap(*m), *v, *q))
                    .collect();
                d.set_item("visits", visits)?;
            }
            Analysis::Other(mv, info) => {
                d.set_item("best", wrap(mv))?;
                d.set_item("score", info.score)?;
                d.set_item("depth", info.depth)?;
                d.set_item("nodes", info.nodes)?;
            }
        }
        d.set_item("seconds", seconds)?;
        Ok(d)
    }

    /// Forgets what the player kept from the last game (its search trees and
    /// hash tables), as before a new game of a match.
    fn new_game(&self) {
        let mut seats = self.seats.lock().expect("no panic while locked");
        for seat in seats.values_mut() {
            seat.player.new_game();
            seat.engine = None;
            if let Some(m) = &mut seat.mcts {
                m.new_game();
            }
        }
    }

    fn __repr__(&self) -> String {
        format!("Player('{}')", self.spec)
    }
}

/// The result of a match, from the first player's (A's) point of view.
#[pyclass(module = "tammi", name = "MatchResult", frozen)]
pub struct PyMatchResult {
    result: MatchResult,
}

#[pymethods]
impl PyMatchResult {
    #[getter]
    fn a(&self) -> String {
        self.result.a.clone()
    }
    #[getter]
    fn b(&self) -> String {
        self.result.b.clone()
    }
    #[getter]
    fn variant(&self) -> String {
        self.result.variant.clone()
    }
    #[getter]
    fn wins(&self) -> u32 {
        self.result.wdl.wins
    }
    #[getter]
    fn draws(&self) -> u32 {
        self.result.wdl.draws
    }
    #[getter]
    fn losses(&self) -> u32 {
        self.result.wdl.losses
    }
    #[getter]
    fn games(&self) -> u32 {
        self.result.wdl.games()
    }
    /// A's score, (wins + draws / 2) / games.
    #[getter]
    fn score(&self) -> f64 {
        self.result.score
    }
    /// The score's 95% interval (from the game pairs, as `tammi match`).
    #[getter]
    fn score_interval(&self) -> (f64, f64) {
        self.result.score_interval
    }
    /// A's Elo difference; `None` when infinite (0% or 100%).
    #[getter]
    fn elo(&self) -> Option<f64> {
        self.result.elo
    }
    /// The Elo difference's 95% interval (`None` for an infinite end).
    #[getter]
    fn elo_interval(&self) -> (Option<f64>, Option<f64>) {
        self.result.elo_interval
    }
    /// Likelihood of superiority of A.
    #[getter]
    fn los(&self) -> f64 {
        self.result.los
    }
    /// Games ended by `max_plies` rather than the rules.
    #[getter]
    fn adjudicated(&self) -> u32 {
        self.result.adjudicated
    }
    /// Every game as one PDN text.
    #[getter]
    fn pdn(&self) -> String {
        self.result.pdn()
    }
    /// One dict per game: pair, leg, opening, A's colour and score, how it
    /// ended, plies, and its PDN.
    fn game_records<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.result
            .games
            .iter()
            .map(|g| {
                let d = PyDict::new(py);
                d.set_item("pair", g.pair)?;
                d.set_item("leg", g.leg)?;
                d.set_item("opening", &g.opening)?;
                d.set_item("a_color", &g.a_color)?;
                d.set_item("a_score", g.a_score)?;
                d.set_item("reason", &g.reason)?;
                d.set_item("plies", g.plies)?;
                d.set_item("pdn", &g.pdn)?;
                Ok(d)
            })
            .collect()
    }
    fn __repr__(&self) -> String {
        let r = &self.result;
        let (lo, hi) = r.score_interval;
        format!(
            "MatchResult({} vs {}: +{} ={} -{}, score {:.1}% [{:.1}, {:.1}])",
            r.a,
            r.b,
            r.wdl.wins,
            r.wdl.draws,
            r.wdl.losses,
            100.0 * r.score,
            100.0 * lo,
            100.0 * hi
        )
    }
}

/// Plays `games` games between the specs `a` and `b` on balanced openings,
/// each opening twice with colours swapped (`openings`: `standard`,
/// `ballot`, `random:K` or a file, as `tammi match`), `threads` at once,
/// without the GIL.  Returns a `MatchResult` (W/D/L, score and Elo with
/// their 95% intervals, the games as PDN).
#[pyfunction]
#[pyo3(name = "match", signature = (a, b, games = 100, openings = "standard", threads = 2, seed = 1, variant = "english", max_plies = None))]
#[allow(clippy::too_many_arguments)]
pub fn play_match(
    py: Python<'_>,
    a: &str,
    b: &str,
    games: usize,
    openings: &str,
    threads: usize,
    seed: u64,
    variant: &str,
    max_plies: Option<usize>,
) -> PyResult<PyMatchResult> {
    let variant = variant_named(variant)?;
    let a: PlayerSpec = a.parse().map_err(value_error)?;
    let b: PlayerSpec = b.parse().map_err(value_error)?;
    if games < 2 || !games.is_multiple_of(2) {
        return Err(value_error(format!(
            "games must be even and at least 2 (each opening is played twice), not {games}"
        )));
    }
    let source: OpeningSource = openings.parse().map_err(value_error)?;
    let openings =
        load_openings(variant, &source, games / 2, seed).map_err(crate::errors::os_or_value)?;
    let cfg = MatchConfig {
        variant,
        a,
        b,
        pairs: games / 2,
        openings,
        threads: threads.max(1),
        seed,
        max_plies,
        sprt: None,
    };
    let result = py.detach(|| run_match(&cfg, |_| {})).map_err(|e| match e {
        tammi_evaluator::MatchError::Player(p) => player_error(p),
        other => runtime_error(other),
    })?;
    Ok(PyMatchResult { result })
}
