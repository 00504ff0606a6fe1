//! `tammi bench`: speed tests.  `tammi bench nn --config C` measures the
//! network: inference positions/s by batch size, parallel callers, and a
//! training-step rate.

use super::{CliError, CliResult};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tammi_model::{
    DeviceChoice, EvalRequest, EvalResult, Evaluator, Model, NetConfig, NetEvaluator, TrainBatch,
    TrainConfig, Trainer,
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
}

#[derive(clap::Args, Debug)]
pub struct NnArgs {
    /// Config file; its [model] section is the net measured (default: built-in defaults).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Variant whose board and policy size the net is built for.
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Backend: flex (CPU), wgpu or cuda (the last two only when compiled in).
    #[arg(long, default_value = "flex")]
    pub backend: String,
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
    let cfg: NetConfig = match &a.config {
        Some(p) => super::infer::model_config(p)?,
        None => NetConfig::default(),
    };
    let backend: DeviceChoice = a.backend.parse()?;
    let v = a.variant;
    let model = Model::new(v, &cfg, 1, backend)?;
    let enc = model.encoding();
    let flops = cfg.flops_per_position(enc.rows(), enc.planes(), enc.policy_size());
    let ev = model.evaluator();
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
            println!("{what:<18} batch {batch:>4}  {pps:>10.0} positions/s  {gflops:>7.1} GFLOP/s");
        }
    };
    if !a.json {
        let shape = match cfg.kind {
            tammi_model::NetKind::Resnet => format!("resnet {}x{}", cfg.blocks, cfg.channels),
            tammi_model::NetKind::Mlp => format!("mlp {}x{}", cfg.layers, cfg.hidden),
        };
        println!(
            "net {shape} ({} params, {:.2} MFLOP/position forward), {} on {}, rayon threads {}",
            model.num_params(),
            flops / 1e6,
            v,
            backend,
            rayon::current_num_threads()
        );
    }
    let mut out = Vec::new();
    for &b in &a.batches {
        let reqs = requests(&games[..b]);
        let pps = rate(a.seconds, b, || Ok(ev.evaluate(&reqs, &mut out)?))?;
        emit("inference", b, pps, 1.0);
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
    let mut trainer = Trainer::new(&model, TrainConfig::default());
    let pps = rate(a.seconds, a.train_batch, || {
        trainer.step(&batch, 1e-4)?;
        Ok(())
    })?;
    // Backward is about twice the forward's work.
    emit("training", a.train_batch, pps, 3.0);
    if a.json {
        println!("{}", serde_json::Value::Array(rows));
    }
    Ok(())
}
