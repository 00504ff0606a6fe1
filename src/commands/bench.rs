//! `tammi bench`: speed tests.  `tammi bench nn --config C` measures the
//! network: inference positions/s by batch size, parallel callers, and a
//! training-step rate.  `tammi bench value --model M` measures a model's
//! value head against the endgame tables instead.

use super::{CliError, CliResult, NetArgs};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tammi_model::{
    EvalRequest, EvalResult, Evaluator, InferenceEngine, Model, NetConfig, NetEvaluator,
    TrainBatch, TrainConfig, Trainer, TrainingEngine,
};
use tammi_rules::{Game, Variant};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Network speed: inference by batch size, parallel callers, training steps.
    Nn(NnArgs),
    /// Self-play speed (simulations/s, positions/s) next to the raw network rate.
    Selfplay(SelfplayArgs),
    /// Value-head accuracy on random endgame-table positions (exact results).
    Value(ValueArgs),
}

#[derive(clap::Args, Debug)]
pub struct ValueArgs {
    /// Model directory (weights + card.json) whose value head is checked.
    #[arg(long)]
    pub model: PathBuf,
    /// Endgame table directory (default: tables/<variant>, as `tammi egdb build` writes it).
    #[arg(long)]
    pub egdb: Option<PathBuf>,
    /// Table positions sampled (spread over 2 to the tables' most pieces).
    #[arg(long, default_value_t = tammi_trainer::endgame::DEFAULT_POSITIONS)]
    pub positions: usize,
    /// Seed of the sample (the same seed and tables: the same positions).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub net: NetArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct SelfplayArgs {
    /// Config file: [model] shapes the fresh net (without --model), [selfplay] the search and workers.
    #[arg(long)]
    pub config: PathBuf,
    /// Model directory to measure instead of a fresh net.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Use the uniform evaluator (measures the search alone).
    #[arg(long)]
    pub uniform: bool,
    /// Worker threads (overrides the config; sizes rayon's pool unless RAYON_NUM_THREADS is set).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seconds of self-play measured (after `--warmup` seconds); the raw network gets as long.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Seconds of self-play before measuring.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    #[command(flatten)]
    pub net: NetArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct NnArgs {
    /// Config file; its [model] section is the net measured (default: built-in defaults).
    #[arg(long, conflicts_with = "model")]
    pub config: Option<PathBuf>,
    /// Model directory whose net is measured (its weights, e.g. the one
    /// `tammi export` turned into ONNX for `scripts/onnx_bench.py`).
    #[arg(long)]
    pub model: Option<PathBuf>,
    #[command(flatten)]
    pub net: NetArgs,
    /// Measure inference by batch size only (no parallel callers, no training).
    #[arg(long)]
    pub inference_only: bool,
    /// Engine for inference and training: `kernels` (tammi's CPU kernels, the
    /// default on flex) or `burn` (burn's forward pass and autodiff, the default
    /// on GPU backends and for nets the kernels do not train).
    #[arg(long, value_parser = ["kernels", "burn"])]
    pub engine: Option<String>,
    /// Seconds spent on each measurement.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Batch sizes for inference, comma-separated.
    #[arg(long, default_value = "1,8,32,128,512", value_delimiter = ',')]
    pub batches: Vec<usize>,
    /// Batch size of the training steps.
    #[arg(long, default_value_t = 256)]
    pub train_batch: usize,
    /// Callers for the parallel measurement (default: rayon's thread count).
    #[arg(long)]
    pub callers: Option<usize>,
    /// Batch size of each parallel caller.
    #[arg(long, default_value_t = 32)]
    pub caller_batch: usize,
    /// Print the rows as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> CliResult {
    match &args.what {
        What::Nn(a) => run_nn(a),
        What::Selfplay(a) => run_selfplay_bench(a),
        What::Value(a) => run_value_bench(a),
    }
}

/// Positions of varied games, with their game state.
fn sample_games(v: Variant, n: usize) -> Vec<Game> {
    let mut out = Vec::with_capacity(n);
    let mut g = Game::start(v);
    let mut k = 0usize;
    while out.len() < n {
        if g.outcome().is_some() || g.ply() > 60 {
            g = Game::start(v);
            k += 1;
        }
        out.push(g.clone());
        let moves = g.legal_moves();
        let m = moves[(k * 3 + g.ply() * 5) % moves.len()];
        g.play(&m)
            .map_err(|e| e.to_string())
            .expect("a legal move plays");
    }
    out
}

fn requests(games: &[Game]) -> Vec<EvalRequest<'_>> {
    games
        .iter()
        .map(|g| EvalRequest {
            position: g.position(),
            moves: g.legal_moves(),
            no_progress: g.no_progress_plies(),
            repetitions: g.repetition_count() as u32,
        })
        .collect()
}

/// Runs `f` (which handles `per_call` positions) until `seconds` pass; positions/s.
fn rate(seconds: f64, per_call: usize, mut f: impl FnMut() -> CliResult) -> Result<f64, CliError> {
    f()?; // warm-up
    let t = Instant::now();
    let mut calls = 0usize;
    while calls < 2 || t.elapsed() < Duration::from_secs_f64(seconds) {
        f()?;
        calls += 1;
    }
    Ok((calls * per_call) as f64 / t.elapsed().as_secs_f64())
}

fn parallel_rate(
    ev: &NetEvaluator,
    games: &[Game],
    callers: usize,
    seconds: f64,
    use_rayon: bool,
) -> Result<f64, CliError> {
    let reqs = requests(games);
    let deadline = Duration::from_secs_f64(seconds);
    let t = Instant::now();
    let work = |_: usize| -> Result<usize, String> {
        let mut out: Vec<EvalResult> = Vec::new();
        let mut done = 0;
        while t.elapsed() < deadline {
            ev.evaluate(&reqs, &mut out).map_err(|e| e.to_string())?;
            done += reqs.len();
        }
        Ok(done)
    };
    let results: Vec<Result<usize, String>> = if use_rayon {
        use rayon::prelude::*;
        (0..callers).into_par_iter().map(work).collect()
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..callers).map(|i| s.spawn(move || work(i))).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("caller thread panicked".into()))
                })
                .collect()
        })
    };
    let mut total = 0;
    for r in results {
        total += r.map_err(CliError)?;
    }
    Ok(total as f64 / t.elapsed().as_secs_f64())
}

fn run_nn(a: &NnArgs) -> CliResult {
    if !(a.seconds > 0.0 && a.seconds <= 600.0) {
        return Err(CliError(format!(
            "--seconds must be in (0, 600], not {}",
            a.seconds
        )));
    }
    if a.batches
        .iter()
        .chain([&a.train_batch, &a.caller_batch])
        .any(|&b| b == 0 || b > 8192)
    {
        return Err(CliError("batch sizes must be between 1 and 8192".into()));
    }
    if a.callers.is_some_and(|c| c == 0 || c > 256) {
        return Err(CliError("--callers must be between 1 and 256".into()));
    }
    let backend = a.net.backend;
    let v = a.net.variant;
    let model = match (&a.model, &a.config) {
        (Some(dir), _) => Model::load(dir, v, backend)?,
        (None, Some(p)) => Model::new(v, &super::infer::model_config(p)?, 1, backend)?,
        (None, None) => Model::new(v, &NetConfig::default(), 1, backend)?,
    };
    let cfg = model.net_config().clone();
    let enc = model.encoding();
    let flops = cfg.flops_per_position(enc.rows(), enc.planes(), enc.policy_size());
    let ev = match a.engine.as_deref() {
        Some("burn") => model.evaluator().with_engine(InferenceEngine::Burn)?,
        Some(_) => model.evaluator().with_engine(InferenceEngine::Kernels)?,
        None => model.evaluator(),
    };
    let max_batch = a
        .batches
        .iter()
        .copied()
        .max()
        .unwrap_or(1)
        .max(a.train_batch);
    let games = sample_games(v, max_batch);
    let mut rows = Vec::new();
    let mut emit = |what: &str, batch: usize, pps: f64, flop_mult: f64| {
        let gflops = pps * flops * flop_mult / 1e9;
        if a.json {
            rows.push(serde_json::json!({
                "what": what, "batch": batch, "positions_per_second": pps, "gflops": gflops,
            }));
        } else {
            outln!("{what:<18} batch {batch:>4}  {pps:>10.0} positions/s  {gflops:>7.1} GFLOP/s");
        }
    };
    if !a.json {
        let shape = match cfg.kind {
            tammi_model::NetKind::Resnet => format!("resnet {}x{}", cfg.blocks, cfg.channels),
            tammi_model::NetKind::Mlp => format!("mlp {}x{}", cfg.layers, cfg.hidden),
        };
        outln!(
            "net {shape} ({} params, {:.2} MFLOP/position forward), {} on {}, inference by {}, rayon threads {}",
            model.num_params(),
            flops / 1e6,
            v,
            backend,
            match ev.engine() {
                InferenceEngine::Kernels => "tammi's CPU kernels",
                InferenceEngine::Burn => "burn",
            },
            rayon::current_num_threads()
        );
    }
    let mut out = Vec::new();
    for &b in &a.batches {
        let reqs = requests(&games[..b]);
        let pps = rate(a.seconds, b, || Ok(ev.evaluate(&reqs, &mut out)?))?;
        emit("inference", b, pps, 1.0);
    }
    if a.inference_only {
        if a.json {
            outln!("{}", serde_json::Value::Array(rows));
        }
        return Ok(());
    }
    let callers = a.callers.unwrap_or_else(rayon::current_num_threads).max(1);
    let cb = &games[..a.caller_batch];
    let pps = parallel_rate(&ev, cb, callers, a.seconds, true)?;
    emit(&format!("rayon x{callers}"), a.caller_batch, pps, 1.0);
    let pps = parallel_rate(&ev, cb, callers, a.seconds, false)?;
    emit(&format!("threads x{callers}"), a.caller_batch, pps, 1.0);

    let mut batch = TrainBatch::new(v);
    for g in &games[..a.train_batch] {
        let n = g.legal_moves().len();
        let targets = vec![1.0 / n as f32; n];
        let ml = cfg.moves_left_head.then_some(50.0);
        batch.push(
            g.position(),
            g.no_progress_plies(),
            g.repetition_count() as u32,
            g.legal_moves(),
            &targets,
            [0.3, 0.4, 0.3],
            ml,
        )?;
    }
    let mut trainer = match a.engine.as_deref() {
        Some("burn") => Trainer::with_engine(&model, TrainConfig::default(), TrainingEngine::Burn)?,
        Some(_) => Trainer::with_engine(&model, TrainConfig::default(), TrainingEngine::Kernels)?,
        None => Trainer::new(&model, TrainConfig::default())?,
    };
    if !a.json {
        outln!(
            "training by {}",
            match trainer.engine() {
                TrainingEngine::Kernels => "tammi's CPU kernels (gradients) and burn's AdamW",
                TrainingEngine::Burn => "burn autodiff and AdamW",
            }
        );
    }
    let pps = rate(a.seconds, a.train_batch, || {
        trainer.step(&batch, 1e-4)?;
        Ok(())
    })?;
    // Backward is about twice the forward's work.
    emit("training", a.train_batch, pps, 3.0);
    if a.json {
        outln!("{}", serde_json::Value::Array(rows));
    }
    Ok(())
}

fn run_selfplay_bench(a: &SelfplayArgs) -> CliResult {
    use super::selfplay::{selfplay_config, size_rayon_pool};
    use std::ops::ControlFlow;
    use tammi_selfplay::{RunStats, run_selfplay};
    for (name, v) in [("--seconds", a.seconds), ("--warmup", a.warmup)] {
        if !(v.is_finite() && (0.0..=600.0).contains(&v)) || (name == "--seconds" && v == 0.0) {
            return Err(CliError(format!("{name} must be in (0, 600], not {v}")));
        }
    }
    let mut cfg = selfplay_config(&a.config)?;
    if let Some(t) = a.threads {
        cfg.threads = t;
        cfg.validate()?;
    }
    size_rayon_pool(cfg.threads);
    let backend = a.net.backend;
    let model = match (&a.model, a.uniform) {
        (_, true) => None,
        (Some(dir), false) => Some(Model::load(dir, a.net.variant, backend)?),
        (None, false) => Some(Model::new(
            a.net.variant,
            &super::infer::model_config(&a.config)?,
            1,
            backend,
        )?),
    };
    let uniform = tammi_model::UniformEvaluator::new(a.net.variant);
    let net = model.as_ref().map(|m| m.evaluator());
    let ev: &dyn Evaluator = match &net {
        Some(n) => n,
        None => &uniform,
    };
    let warm = Duration::from_secs_f64(a.warmup);
    let end = Duration::from_secs_f64(a.warmup + a.seconds);
    let mut first: Option<RunStats> = None;
    let mut last = RunStats::default();
    let finished = run_selfplay(
        ev,
        &cfg,
        &super::selfplay::run_setup(&cfg, a.net.variant, 1)?,
        u64::MAX,
        1,
        Duration::from_millis(50),
        &mut |_, s| {
            if first.is_none() && s.elapsed >= warm {
                first = Some(s.clone());
            }
            last = s.clone();
            Ok(if s.elapsed >= end {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            })
        },
    )
    .map_err(|e| CliError(e.to_string()))?;
    let f = first.unwrap_or_default();
    let dt = (last.elapsed - f.elapsed).as_secs_f64().max(1e-9);
    let rate = |x: u64, y: u64| (x - y) as f64 / dt;
    let sims = rate(last.simulations, f.simulations);
    let evals = rate(last.evaluations, f.evaluations);
    let positions = rate(last.positions, f.positions);
    let batches = last.batches - f.batches;
    let mean_batch = (last.evaluations - f.evaluations) as f64 / batches.max(1) as f64;
    let raw = match &net {
        Some(n) => {
            let games = sample_games(a.net.variant, cfg.batch_size);
            Some(parallel_rate(n, &games, finished.workers, a.seconds, true)?)
        }
        None => None,
    };
    if a.json {
        outln!(
            "{}",
            serde_json::json!({
                "workers": finished.workers,
                "rayon_threads": rayon::current_num_threads(),
                "games_per_thread": cfg.games_per_thread,
                "batch_size": cfg.batch_size,
                "root_selection": format!("{:?}", cfg.root_selection).to_lowercase(),
                "simulations_per_move": cfg.simulations,
                "seconds": dt,
                "simulations_per_second": sims,
                "evaluations_per_second": evals,
                "positions_per_second": positions,
                "mean_batch": mean_batch,
                "games_finished": last.games - f.games,
                "raw_network_per_second": raw,
            })
        );
    } else {
        outln!(
            "self-play: {} worker(s), rayon threads {}, {} games/worker, batch {}, {:?} {} sims/move, measured {:.1}s",
            finished.workers,
            rayon::current_num_threads(),
            cfg.games_per_thread,
            cfg.batch_size,
            cfg.root_selection,
            cfg.simulations,
            dt
        );
        outln!("simulations/s      {sims:>10.0}");
        outln!("evaluations/s      {evals:>10.0}  (mean batch {mean_batch:.1})");
        outln!(
            "positions/s        {positions:>10.0}  ({} games finished)",
            last.games - f.games
        );
        if let Some(r) = raw {
            outln!(
                "raw network/s      {r:>10.0}  ({} rayon callers x batch {}); simulations/s = {:.2} x raw",
                finished.workers,
                cfg.batch_size,
                sims / r
            );
        }
    }
    Ok(())
}

fn run_value_bench(a: &ValueArgs) -> CliResult {
    use tammi_trainer::endgame::{sample_table_positions, value_accuracy};
    if !(1..=1_000_000).contains(&a.positions) {
        return Err(CliError(format!(
            "--positions must be between 1 and 1000000, not {}",
            a.positions
        )));
    }
    let dir = a
        .egdb
        .clone()
        .unwrap_or_else(|| tammi_egdb::default_dir(a.net.variant));
    let egdb = tammi_egdb::Egdb::open(&dir)?;
    if egdb.variant() != a.net.variant {
        return Err(CliError(format!(
            "{} holds {} tables, not {} (see --variant)",
            dir.display(),
            egdb.variant(),
            a.net.variant
        )));
    }
    let backend = a.net.backend;
    let model = Model::load(&a.model, a.net.variant, backend)?;
    let set = sample_table_positions(&egdb, a.positions, a.seed);
    if set.is_empty() {
        return Err(CliError(format!(
            "{}: the tables hold no position of 2 or more pieces with a legal move",
            dir.display()
        )));
    }
    let pieces = |t: &tammi_trainer::endgame::TablePosition| {
        let bb = t.position.bitboards();
        (bb.pieces[0] | bb.pieces[1]).count_ones()
    };
    let min = set.iter().map(pieces).min().unwrap_or(0);
    let max = set.iter().map(pieces).max().unwrap_or(0);
    let r = value_accuracy(&model.evaluator(), &set)?;
    if a.json {
        outln!(
            "{}",
            serde_json::json!({
                "model": a.model.display().to_string(),
                "egdb": dir.display().to_string(),
                "variant": a.net.variant.name(),
                "seed": a.seed,
                "min_pieces": min,
                "max_pieces": max,
                "positions": r.positions,
                "accuracy": r.accuracy,
                "mae": r.mae,
                "exact": {"win": r.exact[0], "draw": r.exact[1], "loss": r.exact[2]},
                "correct": {"win": r.correct[0], "draw": r.correct[1], "loss": r.correct[2]},
            })
        );
    } else {
        outln!(
            "value head of {} on {} endgame-table positions of {min} to {max} pieces from {} (seed {})",
            a.model.display(),
            r.positions,
            dir.display(),
            a.seed
        );
        let share = |i: usize| r.correct[i] as f64 / r.exact[i].max(1) as f64;
        outln!(
            "accuracy    {:.3}  (argmax of W/D/L = exact result; wins {:.3} of {}, draws {:.3} of {}, losses {:.3} of {})",
            r.accuracy,
            share(0),
            r.exact[0],
            share(1),
            r.exact[1],
            share(2),
            r.exact[2]
        );
        outln!(
            "mean error  {:.3}  (|win - loss - exact value|, exact value +1/0/-1)",
            r.mae
        );
    }
    Ok(())
}
