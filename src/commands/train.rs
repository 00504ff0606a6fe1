//! `tammi train`: the generation loop over a run directory, with a progress
//! display on a terminal and one summary line per stage on stdout.

use super::{CliError, CliResult};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;
use tammi_trainer::{Observer, RunDir, RunOptions, Stage, create_run, run_config, train};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Config file; needed to start a run, optional (and checked) when continuing one.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Run directory: created with --config, continued where it stopped otherwise.
    #[arg(long)]
    pub run: PathBuf,
    /// Run only this stage of the current generation (selfplay, train, gate, ladder), then stop.
    #[arg(long)]
    pub only: Option<Stage>,
    /// Stop after this generation (overrides [run] generations).
    #[arg(long)]
    pub generations: Option<u64>,
    /// Stop once the run has spent this many hours in all (overrides [run] max_hours).
    #[arg(long)]
    pub hours: Option<f64>,
    /// Print the run's report (gating, ladder, time) as Markdown, redraw its chart, and exit.
    #[arg(long)]
    pub report: bool,
    /// Start the run from a model directory saved with --save-model: its
    /// weights, trainer state (AdamW moments, step), config, generation and
    /// lineage, so training goes on where that run stopped.  With --config,
    /// only keys that cannot change what is learned may differ (hours,
    /// threads, backend, tables, ladder), and they are said.
    #[arg(long, value_name = "MODEL_DIR", conflicts_with_all = ["save_model", "report", "verify", "only"])]
    pub from: Option<PathBuf>,
    /// With --from: continue a model saved without its trainer state, with
    /// new AdamW moments from its weights (recorded in its lineage).
    #[arg(long, requires = "from")]
    pub new_optimizer: bool,
    /// Save the run as it stood after its last finished generation (the
    /// accepted model, its trainer state, config and lineage) to this new
    /// directory, for `--from` on any machine, and exit.
    #[arg(long, value_name = "MODEL_DIR", conflicts_with_all = ["report", "verify", "only"])]
    pub save_model: Option<PathBuf>,
    /// Check the run directory without changing it and exit: state.json
    /// against the generations, checkpoints and models it names (and none
    /// later), and the games against their records (shards, worker chunks,
    /// manifests); prints what it holds.  (Checkpoint and model contents are
    /// checked when a stage loads them.)
    #[arg(long)]
    pub verify: bool,
}

/// The terminal display: a bar per stage, summary lines above it.
pub(crate) struct Display {
    bar: Mutex<Option<ProgressBar>>,
    started: Instant,
    /// Last gate and ladder results, shown on the bar.
    latest: Mutex<(String, String)>,
}

impl Display {
    pub(crate) fn new() -> Display {
        Display {
            bar: Mutex::new(None),
            started: Instant::now(),
            latest: Mutex::new((String::new(), String::new())),
        }
    }

    /// A bar of `total` units for a stage that is not a generation's.
    pub(crate) fn start_bar(&self, name: &str, total: u64, unit: &str) {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{elapsed_precise}} {name:<10} [{{bar:25}}] {{pos}}/{{len}} {unit} (eta {{eta}}) {{msg}}"
            ))
            .expect("valid template"),
        );
        if let Some(old) = self.bar.lock().expect("no panic while locked").replace(bar) {
            old.finish_and_clear();
        }
    }

    /// Clears the bar at the end.
    pub(crate) fn finish(&self) {
        if let Some(bar) = self.bar.lock().expect("no panic while locked").take() {
            bar.finish_and_clear();
        }
    }
}

impl Observer for Display {
    fn stage(&self, generation: u64, stage: Stage, total: u64, unit: &str) {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{elapsed_precise}} gen {generation} {stage:<8} [{{bar:25}}] {{pos}}/{{len}} {unit} \
                 (eta {{eta}}) {{msg}}"
            ))
            .expect("valid template"),
        );
        if let Some(old) = self.bar.lock().expect("no panic while locked").replace(bar) {
            old.finish_and_clear();
        }
    }
    fn progress(&self, done: u64, total: u64, message: &str) {
        if let Some(bar) = &*self.bar.lock().expect("no panic while locked") {
            bar.set_length(total);
            bar.set_position(done);
            let latest = self.latest.lock().expect("no panic while locked");
            let mut msg = message.to_string();
            if !latest.0.is_empty() {
                msg += &format!(" | gate: {}", latest.0);
            }
            if !latest.1.is_empty() {
                msg += &format!(" | ladder: {}", latest.1);
            }
            bar.set_message(msg);
        }
    }
    fn status(&self, kind: &str, text: &str) {
        let mut latest = self.latest.lock().expect("no panic while locked");
        match kind {
            "gate" => latest.0 = text.to_string(),
            "ladder" => latest.1 = text.to_string(),
            _ => {}
        }
    }
    fn line(&self, text: &str) {
        let line = format!(
            "[{:>7.1} min] {text}",
            self.started.elapsed().as_secs_f64() / 60.0
        );
        match &*self.bar.lock().expect("no panic while locked") {
            // Printed above the bar on a terminal; plain stdout otherwise.
            Some(bar) if !bar.is_hidden() => bar.println(line),
            _ => outln!("{line}"),
        }
    }
}

pub fn run(args: &Args) -> CliResult {
    if args.report {
        out!("{}", tammi_trainer::report::report(&args.run)?);
        if let Some(chart) =
            tammi_trainer::evaluate::ladder_chart(&tammi_trainer::RunDir::new(&args.run))?
        {
            outln!("\nChart: {}", chart.display());
        }
        return Ok(());
    }
    if args.verify {
        return verify(args);
    }
    if let Some(dest) = &args.save_model {
        let machine = tammi_trainer::handoff::this_machine();
        let h = tammi_trainer::handoff::save_model(&args.run, dest, &machine)?;
        outln!(
            "saved {} at generation {} (model gen-{:04}, trainer {}): {} games, {:.2} training \
             hours over all legs; continue it with `tammi train --run NEW --from {}`",
            dest.display(),
            h.generation,
            h.accepted,
            h.trainer
                .map_or("state not saved".into(), |t| format!("gen-{t:04}")),
            h.games,
            h.seconds / 3600.0,
            dest.display()
        );
        return Ok(());
    }
    if args.generations == Some(0) {
        return Err(CliError(
            "--generations must be at least 1 (leave it out for no limit)".into(),
        ));
    }
    if let Some(h) = args.hours
        && !(h.is_finite() && h > 0.0)
    {
        return Err(CliError(format!(
            "--hours must be a number of hours above 0, not {h} (leave it out for no limit)"
        )));
    }
    let state = args.run.join("state.json");
    if let Some(from) = &args.from {
        let given = match &args.config {
            Some(path) => Some(super::config::load_config(path)?),
            None => None,
        };
        let s = tammi_trainer::handoff::create_from(
            &args.run,
            from,
            given.as_ref(),
            args.new_optimizer,
        )?;
        outln!(
            "started run {} from {} at generation {} ({} games, {:.2} training hours before); \
             its first generation plays {} games to refill the replay window",
            args.run.display(),
            from.display(),
            s.handoff.generation + 1,
            s.handoff.games,
            s.handoff.seconds / 3600.0,
            s.refill_games
        );
        for c in &s.changes {
            outln!("config changed from the model's: {c}");
        }
        if args.new_optimizer {
            outln!("new AdamW moments from the model's weights (recorded in its lineage)");
        }
    } else if state.exists() {
        let existing = run_config(&args.run)?;
        if let Some(path) = &args.config {
            let given = super::config::load_config(path)?;
            if given != existing {
                return Err(CliError(format!(
                    "{} was started with another config (see {}); continue it without \
                     --config, or start a new run directory",
                    args.run.display(),
                    args.run.join("config.toml").display()
                )));
            }
        }
    } else {
        let Some(path) = &args.config else {
            RunDir::new(&args.run).check_free_for_new_run()?;
            return Err(CliError(format!(
                "{} holds no run; start one with --config FILE",
                args.run.display()
            )));
        };
        let cfg = super::config::load_config(path)?;
        create_run(&args.run, &cfg)?;
        outln!("started run {} from {}", args.run.display(), path.display());
    }
    let cfg = run_config(&args.run)?;
    super::selfplay::size_rayon_pool(cfg.selfplay.threads.max(cfg.run.match_threads));
    let display = Display::new();
    let options = RunOptions {
        only: args.only,
        generations: args.generations,
        max_hours: args.hours,
    };
    let stopped = train(&args.run, &options, &display);
    display.finish();
    let stopped = stopped?;
    outln!(
        "stopped: {stopped}; continue with `tammi train --run {}`",
        args.run.display()
    );
    Ok(())
}

/// `--verify`: the run's games checked against every record of them.
fn verify(args: &Args) -> CliResult {
    let cfg = run_config(&args.run)?;
    let run = RunDir::new(&args.run);
    let state: tammi_trainer::RunState = tammi_trainer::rundir::read_json(&run.state())?;
    tammi_trainer::run::check_resume_inputs(&run, &cfg, &state)?;
    if cfg.external.enabled {
        let c = tammi_trainer::intake::verify_external(&run, &state)?;
        let fresh: u64 = c.fresh_games.values().sum();
        let stale: u64 = c.stale_games.values().sum();
        outln!(
            "ok: {} complete chunks with {} games ({} taken in: {fresh} games trained on, \
             {stale} stale), {} incomplete chunks; state.json counts {} games at generation {}",
            c.chunks,
            c.games,
            c.taken_chunks,
            c.incomplete_chunks,
            state.games,
            state.generation
        );
        for (w, g) in &c.fresh_games {
            outln!("worker {w}: {g} games trained on");
        }
        for (w, g) in &c.stale_games {
            outln!("worker {w}: {g} stale games");
        }
    } else {
        tammi_trainer::generate::verify_run_shards(&run, cfg.run.games_per_generation, &state)?;
        outln!(
            "ok: {} games in the shards of finished generations, as state.json counts, at \
             generation {}",
            state.games,
            state.generation
        );
    }
    Ok(())
}
