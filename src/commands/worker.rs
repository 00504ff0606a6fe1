//! `tammi worker`: a self-play worker of a run on shared storage (another
//! machine, a cluster job), for a trainer with `[external] enabled = true`.
//! Logs one line per finished chunk (and a progress line a minute) on
//! stdout, which suits a batch system's log file.

use super::CliResult;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;
use tammi_trainer::intake::{WorkerOptions, default_worker_id, run_worker};
use tammi_trainer::{Observer, Stage};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The run directory (shared with the trainer and the other workers).
    #[arg(long)]
    pub run: PathBuf,
    /// Stop after playing this many games.
    #[arg(long)]
    pub games: Option<u64>,
    /// Stop after this many hours (checked between chunks).
    #[arg(long)]
    pub hours: Option<f64>,
    /// Worker id: names its directory RUN/workers/ID; the same id continues
    /// its numbering after a restart (default: HOST-PID).
    #[arg(long)]
    pub id: Option<String>,
    /// Self-play threads (default: the run's selfplay.threads).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seconds to wait for the run to be created (a cluster may start
    /// workers before the trainer).
    #[arg(long, default_value_t = 600.0)]
    pub wait_for_run: f64,
    /// Stop once the trainer has finished this generation.
    #[arg(long)]
    pub until_generation: Option<u64>,
}

/// Lines with the elapsed time; progress at most once a minute.
struct LogObserver {
    started: Instant,
    last_progress: Mutex<Instant>,
}

impl LogObserver {
    fn print(&self, text: &str) {
        outln!(
            "[{:>7.1} min] {text}",
            self.started.elapsed().as_secs_f64() / 60.0
        );
    }
}

impl Observer for LogObserver {
    fn stage(&self, _generation: u64, _stage: Stage, _total: u64, _unit: &str) {}
    fn progress(&self, done: u64, total: u64, message: &str) {
        let mut last = self.last_progress.lock().expect("no panic while locked");
        if last.elapsed().as_secs() >= 60 {
            *last = Instant::now();
            drop(last);
            self.print(&format!("chunk {done}/{total} games: {message}"));
        }
    }
    fn line(&self, text: &str) {
        self.print(text);
    }
}

pub fn run(args: &Args) -> CliResult {
    if let Some(h) = args.hours
        && !(h.is_finite() && h > 0.0)
    {
        return Err(super::CliError(format!(
            "--hours must be a number of hours above 0, not {h}"
        )));
    }
    if !(args.wait_for_run.is_finite() && args.wait_for_run >= 0.0) {
        return Err(super::CliError(format!(
            "--wait-for-run must be 0 or more seconds, not {}",
            args.wait_for_run
        )));
    }
    if args.games == Some(0) {
        return Err(super::CliError("--games must be at least 1".into()));
    }
    if args.threads == Some(0) {
        return Err(super::CliError("--threads must be at least 1".into()));
    }
    let id = args.id.clone().unwrap_or_else(default_worker_id);
    if let Some(t) = args.threads {
        super::selfplay::size_rayon_pool(t);
    }
    let observer = LogObserver {
        started: Instant::now(),
        last_progress: Mutex::new(Instant::now()),
    };
    observer.print(&format!("worker {id} on run {}", args.run.display()));
    let options = WorkerOptions {
        id: id.clone(),
        games: args.games,
        hours: args.hours,
        threads: args.threads,
        wait_for_run_seconds: args.wait_for_run,
        until_generation: args.until_generation,
    };
    let s = run_worker(&args.run, &options, &observer)?;
    outln!(
        "worker {id} stopped: {} games in {} chunks",
        s.games,
        s.chunks
    );
    Ok(())
}
