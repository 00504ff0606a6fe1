//! `RUN/live.json`: what a running `tammi train` is doing right now, for
//! readers in other processes (`tammi serve`'s run dashboard).
//!
//! The trainer's [`Observer`] calls are passed on unchanged to the display
//! and also kept in a [`LiveStatus`], written atomically (temporary file +
//! rename) when a stage starts, when a summary line or a status arrives, and
//! otherwise at most every [`WRITE_EVERY`], so a reader never sees half a file
//! and the hot loops do not wait on the disk.

use crate::Observer;
use crate::rundir::{RunDir, RunError, Stage, read_json, write_json};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often progress alone rewrites the file.
pub const WRITE_EVERY: Duration = Duration::from_millis(250);
/// Summary lines kept in the file (the newest last).
pub const KEEP_LINES: usize = 30;

/// The state of a training process, as `live.json` holds it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveStatus {
    /// Process id of the trainer.
    pub pid: u32,
    /// Whether the trainer was running when the file was written (false once it stopped).
    pub running: bool,
    /// Unix time of the process start and of this write, in seconds.
    pub started: f64,
    pub updated: f64,
    /// Generation and stage in progress (`None` before the first stage).
    pub generation: Option<u64>,
    pub stage: Option<Stage>,
    /// Units done of the stage's total (games, steps), and their name.
    pub done: u64,
    pub total: u64,
    pub unit: String,
    /// The stage's latest progress message.
    pub message: String,
    /// The latest gating and ladder results, as the terminal shows them.
    pub gate: String,
    pub ladder: String,
    /// The latest summary lines (one per finished stage).
    pub lines: Vec<String>,
    /// Why the trainer stopped, once it has.
    pub stopped: Option<String>,
}

/// Reads a run's `live.json`; `None` when no trainer has written one.
pub fn read_live(run: &RunDir) -> Result<Option<LiveStatus>, RunError> {
    let path = run.live();
    if !path.exists() {
        return Ok(None);
    }
    read_json(&path).map(Some)
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// An observer that keeps `live.json` up to date and passes every call on.
pub struct LiveFile<'a> {
    inner: &'a dyn Observer,
    path: std::path::PathBuf,
    state: Mutex<(LiveStatus, Option<Instant>)>,
    /// Held while the file is written.
    file: Mutex<()>,
}

impl<'a> LiveFile<'a> {
    /// Starts the file for a trainer process of the run at `root`.
    pub fn new(root: &Path, inner: &'a dyn Observer) -> LiveFile<'a> {
        let now = unix_now();
        let status = LiveStatus {
            pid: std::process::id(),
            running: true,
            started: now,
            updated: now,
            ..LiveStatus::default()
        };
        let live = LiveFile {
            inner,
            path: RunDir::new(root).live(),
            state: Mutex::new((status, None)),
            file: Mutex::new(()),
        };
        live.write(true);
        live
    }

    /// Marks the trainer stopped (with why) and writes the file a last time.
    pub fn finish(&self, why: &str) {
        {
            let mut s = self.state.lock().expect("no panic while locked");
            s.0.running = false;
            s.0.stopped = Some(why.to_string());
        }
        self.write(true);
    }

    /// Writes the file if `force` or the last write is old enough.  A failed
    /// write is not an error of the run: the dashboard is only a view.
    ///
    /// The file is written under its own lock, taken before the state is
    /// copied (so writes land in order), never under the state's lock: a
    /// worker thread reporting progress never waits on the disk, and skips
    /// the write when another thread is writing.
    fn write(&self, force: bool) {
        let _file = if force {
            self.file.lock().expect("no panic while locked")
        } else {
            match self.file.try_lock() {
                Ok(guard) => guard,
                Err(_) => return,
            }
        };
        let snapshot = {
            let mut s = self.state.lock().expect("no panic while locked");
            if !force && s.1.is_some_and(|t| t.elapsed() < WRITE_EVERY) {
                return;
            }
            s.0.updated = unix_now();
            s.1 = Some(Instant::now());
            s.0.clone()
        };
        let _ = write_json(&self.path, &snapshot);
    }

    fn update(&self, force: bool, f: impl FnOnce(&mut LiveStatus)) {
        f(&mut self.state.lock().expect("no panic while locked").0);
        self.write(force);
    }
}

impl Observer for LiveFile<'_> {
    fn stage(&self, generation: u64, stage: Stage, total: u64, unit: &str) {
        self.inner.stage(generation, stage, total, unit);
        self.update(true, |s| {
            s.generation = Some(generation);
            s.stage = Some(stage);
            (s.done, s.total) = (0, total);
            s.unit = unit.to_string();
            s.message.clear();
        });
    }
    fn progress(&self, done: u64, total: u64, message: &str) {
        self.inner.progress(done, total, message);
        self.update(false, |s| {
            (s.done, s.total) = (done, total);
            if s.message != message {
                s.message = message.to_string();
            }
        });
    }
    fn line(&self, text: &str) {
        self.inner.line(text);
        self.update(true, |s| {
            s.lines.push(text.to_string());
            if s.lines.len() > KEEP_LINES {
                s.lines.remove(0);
            }
        });
    }
    fn status(&self, kind: &str, text: &str) {
        self.inner.status(kind, text);
        self.update(true, |s| match kind {
            "gate" => s.gate = text.to_string(),
            "ladder" => s.ladder = text.to_string(),
            _ => {}
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Silent;

    #[test]
    fn the_file_follows_stages_lines_and_the_stop() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let live = LiveFile::new(dir.path(), &Silent);
        let s = read_live(&run).unwrap().unwrap();
        assert!(s.running);
        assert_eq!(s.pid, std::process::id());
        assert_eq!(s.stage, None);

        live.stage(3, Stage::Train, 150, "steps");
        let s = read_live(&run).unwrap().unwrap();
        assert_eq!(
            (s.generation, s.stage, s.total, s.unit.as_str()),
            (Some(3), Some(Stage::Train), 150, "steps")
        );

        for k in 0..KEEP_LINES + 5 {
            live.line(&format!("line {k}"));
        }
        live.status("gate", "accepted 60%");
        let s = read_live(&run).unwrap().unwrap();
        assert_eq!(s.lines.len(), KEEP_LINES);
        assert_eq!(s.lines.last().unwrap(), &format!("line {}", KEEP_LINES + 4));
        assert_eq!(s.gate, "accepted 60%");

        live.finish("generation limit reached");
        let s = read_live(&run).unwrap().unwrap();
        assert!(!s.running);
        assert_eq!(s.stopped.as_deref(), Some("generation limit reached"));
    }

    #[test]
    fn progress_is_written_at_most_every_interval_but_kept() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let live = LiveFile::new(dir.path(), &Silent);
        live.stage(1, Stage::Selfplay, 10, "games");
        live.progress(1, 10, "a");
        // Within the interval of the stage's write: the file still says 0.
        assert_eq!(read_live(&run).unwrap().unwrap().done, 0);
        std::thread::sleep(WRITE_EVERY + Duration::from_millis(20));
        live.progress(7, 10, "b");
        let s = read_live(&run).unwrap().unwrap();
        assert_eq!((s.done, s.message.as_str()), (7, "b"));
    }

    #[test]
    fn no_file_reads_as_none_and_a_damaged_one_as_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        assert_eq!(read_live(&run).unwrap(), None);
        std::fs::write(run.live(), "{half").unwrap();
        assert!(read_live(&run).is_err());
    }
}
