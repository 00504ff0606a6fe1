//! `tammi selfplay`: play games of self-play and write training shards.
//!
//! Shards go to `DIR/shard-s<seed>-<n>.bin`, each with the same games in PDN
//! beside it (`.pdn`), both written atomically.  Without `--model` the first
//! generation's evaluator is used: uniform policy, value 0.

use super::{CliError, CliResult};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tammi_model::{DeviceChoice, Evaluator, load_evaluator};
use tammi_rules::Variant;
use tammi_selfplay::{
    Event, GameRecord, RunSetup, RunStats, SelfPlayConfig, SelfPlayError, ShardOrigin,
    run_selfplay, write_games,
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Config file; its [selfplay] section sets search, games and workers.
    #[arg(long)]
    pub config: PathBuf,
    /// Model directory (weights + card.json); without it a uniform policy with value 0 plays.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Number of games to play.
    #[arg(long)]
    pub games: u64,
    /// Directory for the shards (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Worker threads (overrides the config; also sizes rayon's pool unless RAYON_NUM_THREADS is set).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seed of every random choice (game i uses a generator seeded from (seed, i)).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Variant (README lists all); without it the config's `[run] variant`, else english. A model's must match.
    #[arg(long)]
    pub variant: Option<Variant>,
    /// Backend: flex (CPU), wgpu or cuda (the last two only when compiled in).
    #[arg(long, default_value = "flex")]
    pub backend: DeviceChoice,
}

/// The `[selfplay]` section of a config file.
pub fn selfplay_config(path: &Path) -> Result<SelfPlayConfig, CliError> {
    Ok(SelfPlayConfig::load(path)?)
}

/// Refuses an output directory inside a training run (a directory above it
/// holds the run's `state.json` and `config.toml`): shards written there
/// would be mixed with the run's own and break its resume.
fn refuse_run_directory(out: &Path) -> Result<(), CliError> {
    let absolute =
        std::path::absolute(out).map_err(|e| CliError(format!("--out {}: {e}", out.display())))?;
    for dir in absolute.ancestors() {
        if dir.join("state.json").is_file() && dir.join("config.toml").is_file() {
            return Err(CliError(format!(
                "--out {} is inside the training run {}: its shards would be mixed with \
                 the run's; use a directory outside it",
                out.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The game to play: `--variant` when given, else the config's `[run]
/// variant` (a run's own `config.toml` plays its run's game), else English.
fn selfplay_variant(config: &Path, given: Option<Variant>) -> Result<Variant, CliError> {
    Ok(match given {
        Some(v) => v,
        None => tammi_selfplay::config_variant(config)?.unwrap_or(Variant::English),
    })
}

/// Sizes rayon's global pool to `threads` unless RAYON_NUM_THREADS says otherwise.
pub fn size_rayon_pool(threads: usize) {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        // Fails only if the pool already exists; then it keeps its size.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global();
    }
}

/// The run's setup: the endgame tables of `selfplay.egdb`, opened once (a
/// warning on stderr when "auto" finds none), and the starts of
/// `selfplay.openings` (random ones drawn from `seed`).
pub fn run_setup(cfg: &SelfPlayConfig, variant: Variant, seed: u64) -> Result<RunSetup, CliError> {
    let (setup, warning) = tammi_selfplay::run_setup(cfg, variant, seed)?;
    if let Some(w) = &warning {
        eprintln!("warning: {w}");
    }
    Ok(setup)
}

/// The evaluator: the model's net, or uniform before any model exists.
pub fn evaluator(
    model: Option<&Path>,
    variant: Variant,
    backend: DeviceChoice,
) -> Result<Arc<dyn Evaluator>, CliError> {
    Ok(load_evaluator(model, variant, backend)?)
}

fn status(s: &RunStats) -> String {
    format!(
        "{:.2} games/s, {:.0} positions/s, {:.0} sims/s, avg length {:.1}, B/W/D {}/{}/{}",
        s.games_per_second(),
        s.positions_per_second(),
        s.simulations_per_second(),
        s.average_length(),
        s.black_wins,
        s.white_wins,
        s.draws
    )
}

pub fn run(args: &Args) -> CliResult {
    let mut cfg = selfplay_config(&args.config)?;
    if let Some(t) = args.threads {
        cfg.threads = t;
        cfg.validate()?;
    }
    if args.games == 0 {
        return Err(CliError("--games must be at least 1".into()));
    }
    refuse_run_directory(&args.out)?;
    let variant = selfplay_variant(&args.config, args.variant)?;
    size_rayon_pool(cfg.threads);
    let ev = evaluator(args.model.as_deref(), variant, args.backend)?;
    let setup = run_setup(&cfg, variant, args.seed)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError(format!("{}: {e}", args.out.display())))?;
    let stem = |k: usize| format!("shard-s{}-{k:05}", args.seed);
    let name = |k: usize, ext: &str| args.out.join(format!("{}.{ext}", stem(k)));
    let shards = (args.games as usize).div_ceil(cfg.games_per_shard);
    for k in 0..shards {
        if name(k, "bin").exists() {
            return Err(CliError(format!(
                "{} exists already; use another --out or --seed",
                name(k, "bin").display()
            )));
        }
    }
    let bar = super::progress_bar(args.games, "games");
    let mut pending: Vec<GameRecord> = Vec::new();
    let mut written = 0usize;
    let flush = |games: &mut Vec<GameRecord>, k: usize| -> Result<(), SelfPlayError> {
        write_games(&args.out, &stem(k), variant, ShardOrigin::NONE, games)?;
        games.clear();
        Ok(())
    };
    let stats = run_selfplay(
        ev.as_ref(),
        &cfg,
        &setup,
        args.games,
        args.seed,
        Duration::from_millis(500),
        &mut |event, s| {
            if let Event::Game(g) = event {
                pending.push(*g);
                bar.inc(1);
                if pending.len() == cfg.games_per_shard {
                    flush(&mut pending, written)?;
                    written += 1;
                }
            }
            bar.set_message(status(s));
            Ok(ControlFlow::Continue(()))
        },
    )?;
    if !pending.is_empty() {
        flush(&mut pending, written)?;
        written += 1;
    }
    bar.finish_and_clear();
    outln!(
        "{} games in {:.1}s with {} worker(s): {}",
        stats.games,
        stats.elapsed.as_secs_f64(),
        stats.workers,
        status(&stats)
    );
    outln!(
        "{} positions, {} simulations, {} evaluations in {} batches (mean batch {:.1})",
        stats.positions,
        stats.simulations,
        stats.evaluations,
        stats.batches,
        stats.evaluations as f64 / stats.batches.max(1) as f64
    );
    if let Some(t) = &setup.tables {
        outln!(
            "{} games ended by the endgame tables in {}; {} search nodes valued by them",
            stats.adjudicated,
            t.dir().display(),
            stats.table_leaves
        );
    }
    if cfg.resign_value > -1.0 && stats.resign_disabled_games > 0 {
        outln!(
            "false resignations: {} of {} games without resignation",
            stats.false_resignations,
            stats.resign_disabled_games
        );
    }
    outln!("{written} shard(s) in {}", args.out.display());
    Ok(())
}
