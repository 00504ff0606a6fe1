//! Gating (candidate against the accepted model) and the ladder (accepted
//! model against alpha-beta at fixed depths), with their JSONL records and
//! the ladder chart.

use crate::config::RunConfig;
use crate::openings;
use crate::rundir::{RunDir, RunError, append_line, gen_name, io_err};
use crate::{Observer, derive_seed};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tammi_evaluator::chart::{Series, line_chart};
use tammi_evaluator::gating::{GateConfig, gate};
use tammi_evaluator::matchplay::{MatchConfig, MatchProgress, run_match};
use tammi_evaluator::stats::{Wdl, elo_from_score};
use tammi_model::DeviceChoice;
use tammi_search::PlayerSpec;
use tammi_search::spec::DEFAULT_MCTS_BATCH;

/// One line of `eval/gating.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateRecord {
    pub generation: u64,
    pub candidate: String,
    pub best: String,
    pub accepted: bool,
    pub reason: String,
    /// The candidate's wins, draws and losses.
    #[serde(flatten)]
    pub wdl: Wdl,
    pub score: f64,
    pub elo: Option<f64>,
    pub seconds: f64,
}

/// One line of `eval/ladder.jsonl`: the accepted model against one depth.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LadderRecord {
    /// Generation that produced the model.
    pub model_generation: u64,
    /// Generation of the run when it was played.
    pub generation: u64,
    /// Hours the run had spent in self-play, training and gating (earlier
    /// ladders excluded) when the ladder started.
    pub hours: f64,
    pub opponent: String,
    pub depth: u32,
    pub model_player: String,
    /// The model's wins, draws and losses.
    #[serde(flatten)]
    pub wdl: Wdl,
    pub score: f64,
    pub elo: Option<f64>,
    pub elo_low: Option<f64>,
    pub elo_high: Option<f64>,
    pub seconds: f64,
}

/// An MCTS player of a run's model on the run's backend; `batch` leaves per
/// network call.
fn mcts(
    model: &Path,
    sims: Option<u32>,
    movetime: Option<Duration>,
    batch: u32,
    backend: DeviceChoice,
) -> PlayerSpec {
    PlayerSpec::Mcts {
        model: Some(model.to_path_buf()),
        sims,
        movetime,
        egdb: None,
        batch,
        backend,
        solve: None,
        cpuct: None,
        fpu: None,
        forced: None,
        ptemp: None,
        contempt: None,
    }
}

fn progress_of(observer: &dyn Observer) -> impl Fn(&MatchProgress) + Sync + '_ {
    move |p: &MatchProgress| {
        observer.progress(
            p.games_done as u64,
            p.games_total as u64,
            &format!(
                "+{} ={} -{} ({:.1}%)",
                p.wdl.wins,
                p.wdl.draws,
                p.wdl.losses,
                100.0 * p.wdl.score()
            ),
        )
    }
}

/// Plays the candidate of `generation` against the accepted model.
pub fn gate_generation(
    run: &RunDir,
    cfg: &RunConfig,
    generation: u64,
    accepted: u64,
    observer: &dyn Observer,
) -> Result<GateRecord, RunError> {
    let variant = cfg.variant();
    let g = &cfg.gating;
    let seed = derive_seed(&[cfg.run.seed, generation, 0x6A7E]);
    let mut deck = openings::deck(variant, "gating.openings", &g.openings, g.pairs, seed)?;
    // A different slice of the deck each generation.
    let shift = (generation as usize * g.pairs) % deck.len();
    deck.rotate_left(shift);
    // One leaf at a time: gates search few simulations, where virtual loss
    // would change the search most.
    let backend = cfg.backend();
    let candidate = mcts(
        &run.candidate(generation),
        Some(g.simulations),
        None,
        1,
        backend,
    );
    let best = mcts(&run.model(accepted), Some(g.simulations), None, 1, backend);
    let gate_cfg = GateConfig {
        variant,
        openings: deck,
        max_pairs: g.pairs,
        sprt: g.sprt(),
        accept_score: g.accept_score,
        threads: cfg.run.match_threads,
        seed,
        max_plies: Some(g.max_plies),
    };
    let start = Instant::now();
    let result = gate(&candidate, &best, &gate_cfg, progress_of(observer)).map_err(|source| {
        RunError::Match {
            stage: "gating",
            source,
        }
    })?;
    Ok(GateRecord {
        generation,
        candidate: gen_name(generation),
        best: gen_name(accepted),
        accepted: result.accepted,
        reason: result.reason,
        wdl: result.result.wdl,
        score: result.result.score,
        elo: result.result.elo,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Plays the accepted model against every ladder depth.
pub fn play_ladder(
    run: &RunDir,
    cfg: &RunConfig,
    generation: u64,
    accepted: u64,
    hours: f64,
    observer: &dyn Observer,
) -> Result<Vec<LadderRecord>, RunError> {
    let variant = cfg.variant();
    let l = &cfg.ladder;
    let seed = derive_seed(&[cfg.run.seed, 0x1ADD]);
    let deck = openings::deck(variant, "ladder.openings", &l.openings, l.pairs, seed)?;
    let backend = cfg.backend();
    let model = if l.simulations > 0 {
        mcts(
            &run.model(accepted),
            Some(l.simulations),
            None,
            DEFAULT_MCTS_BATCH,
            backend,
        )
    } else {
        mcts(
            &run.model(accepted),
            None,
            Some(Duration::from_millis(l.movetime_ms)),
            DEFAULT_MCTS_BATCH,
            backend,
        )
    };
    let mut out = Vec::new();
    for &depth in &l.depths {
        let opponent = PlayerSpec::AlphaBeta {
            depth: Some(depth),
            movetime: None,
            hash_mb: 16,
            egdb: None,
            eval: None,
            eval_f32: false,
        };
        let match_cfg = MatchConfig {
            variant,
            a: model.clone(),
            b: opponent.clone(),
            pairs: l.pairs,
            openings: deck.clone(),
            threads: cfg.run.match_threads,
            seed: derive_seed(&[seed, depth as u64]),
            max_plies: Some(l.max_plies),
            sprt: None,
        };
        let start = Instant::now();
        let r = run_match(&match_cfg, progress_of(observer)).map_err(|source| RunError::Match {
            stage: "ladder",
            source,
        })?;
        out.push(LadderRecord {
            model_generation: accepted,
            generation,
            hours,
            opponent: opponent.to_string(),
            depth,
            model_player: model_label(&model),
            wdl: r.wdl,
            score: r.score,
            elo: r.elo,
            elo_low: r.elo_interval.0,
            elo_high: r.elo_interval.1,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    Ok(out)
}

/// The player spec without its path (the path is the run's business).
fn model_label(spec: &PlayerSpec) -> String {
    match spec {
        PlayerSpec::Mcts { sims, movetime, .. } => match (sims, movetime) {
            (Some(s), _) => format!("mcts:sims={s}"),
            (None, Some(t)) => format!("mcts:movetime={}ms", t.as_millis()),
            _ => "mcts".into(),
        },
        other => other.to_string(),
    }
}

/// Appends records to a JSONL file.
pub fn append_records<T: Serialize>(path: &Path, records: &[T]) -> Result<(), RunError> {
    let parent = path.parent().expect("eval files have a parent");
    std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    for r in records {
        append_line(path, &serde_json::to_string(r).expect("records serialise"))?;
    }
    Ok(())
}

/// Reads the gating log: the last record of each generation.
pub fn read_gates(path: &Path) -> Result<Vec<GateRecord>, RunError> {
    let text = crate::rundir::read_log(path)?;
    let mut out: Vec<GateRecord> = Vec::new();
    for line in text.lines() {
        if let Ok(r) = serde_json::from_str::<GateRecord>(line) {
            // A gate redone after a kill: the last record counts.
            out.retain(|o| o.generation != r.generation);
            out.push(r);
        }
    }
    Ok(out)
}

/// Reads the ladder log: the last record of each (model generation, depth).
pub fn read_ladder(path: &Path) -> Result<Vec<LadderRecord>, RunError> {
    let text = crate::rundir::read_log(path)?;
    let mut out: Vec<LadderRecord> = Vec::new();
    for line in text.lines() {
        let Ok(r) = serde_json::from_str::<LadderRecord>(line) else {
            continue;
        };
        out.retain(|o| !(o.model_generation == r.model_generation && o.depth == r.depth));
        out.push(r);
    }
    Ok(out)
}

/// Elo against an opponent from a score, finite even at 0% and 100% (the
/// score is pulled half a game in from the ends).
pub fn bounded_elo(score: f64, games: u32) -> f64 {
    let n = games.max(1) as f64;
    elo_from_score(score.clamp(0.5 / n, 1.0 - 0.5 / n))
}

/// Draws `eval/ladder.png`: Elo against each depth over the run's hours.
/// Returns the path, or `None` when there is nothing to draw.
pub fn ladder_chart(run: &RunDir) -> Result<Option<PathBuf>, RunError> {
    let records = read_ladder(&run.eval().join("ladder.jsonl"))?;
    if records.is_empty() {
        return Ok(None);
    }
    let mut depths: Vec<u32> = records.iter().map(|r| r.depth).collect();
    depths.sort();
    depths.dedup();
    let series: Vec<Series> = depths
        .iter()
        .map(|&d| Series {
            label: format!("vs alpha-beta depth {d}"),
            points: records
                .iter()
                .filter(|r| r.depth == d)
                .map(|r| (r.hours, bounded_elo(r.score, r.wdl.games())))
                .collect(),
        })
        .collect();
    let path = run.eval().join("ladder.png");
    tammi_files::write_via(&path, |tmp| -> Result<(), RunError> {
        line_chart(
            &series,
            "Accepted model against alpha-beta",
            "hours of self-play, training and gating",
            "Elo difference",
            tmp,
        )?;
        Ok(())
    })?;
    Ok(Some(path))
}
