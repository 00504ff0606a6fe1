//! Scalars of a run (losses, rates, gating, Elo) written three ways: JSONL
//! and CSV in the run directory, readable with any tool, and TensorBoard
//! event files when the `tensorboard` feature is on (the default).
//!
//! Steps: training scalars use the optimizer step, per-generation scalars
//! the generation number.  A stage redone after a kill logs its scalars
//! again: every point is appended at once (a kill loses nothing), and at the
//! next [`Metrics::flush`] the JSONL and CSV files are rewritten with one
//! point per (tag, step), the last value logged.

use crate::rundir::{RunError, append_line, io_err, write_atomic};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One logged scalar.
#[derive(Clone, Debug, PartialEq)]
struct Point {
    time: f64,
    tag: String,
    step: u64,
    value: f64,
}

impl Point {
    fn json(&self) -> String {
        let value = if self.value.is_finite() {
            serde_json::json!(self.value)
        } else {
            serde_json::Value::Null
        };
        serde_json::json!({"time": self.time, "tag": self.tag, "step": self.step, "value": value})
            .to_string()
    }

    fn csv(&self) -> String {
        format!("{:.3},{},{},{}", self.time, self.tag, self.step, self.value)
    }
}

const CSV_HEADER: &str = "unix_time,tag,step,value";

/// Where scalars go.
pub struct Metrics {
    jsonl: PathBuf,
    csv: PathBuf,
    /// Every point, one per (tag, step), in order of first appearance.
    points: Vec<Point>,
    index: HashMap<(String, u64), usize>,
    /// A (tag, step) was logged twice since the files were last compacted.
    duplicated: bool,
    #[cfg(feature = "tensorboard")]
    tensorboard: Option<tensorboard_rs::summary_writer::SummaryWriter>,
}

fn unix_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Metrics {
    /// Opens the logs of a run (appending); `tensorboard_dir` is used when
    /// the feature is compiled in.
    pub fn open(jsonl: &Path, csv: &Path, tensorboard_dir: &Path) -> Result<Metrics, RunError> {
        if !csv.exists() {
            append_line(csv, CSV_HEADER)?;
        }
        #[cfg(not(feature = "tensorboard"))]
        let _ = tensorboard_dir;
        #[cfg(feature = "tensorboard")]
        let tensorboard = {
            // tensorboard-rs panics on I/O errors: create the directory here
            // so the common failure is a clear error instead.
            std::fs::create_dir_all(tensorboard_dir).map_err(io_err(tensorboard_dir))?;
            let dir = tensorboard_dir.to_path_buf();
            std::panic::catch_unwind(move || {
                tensorboard_rs::summary_writer::SummaryWriter::new(dir)
            })
            .ok()
        };
        #[cfg(not(feature = "tensorboard"))]
        let _ = io_err;
        let mut metrics = Metrics {
            jsonl: jsonl.to_path_buf(),
            csv: csv.to_path_buf(),
            points: Vec::new(),
            index: HashMap::new(),
            duplicated: false,
            #[cfg(feature = "tensorboard")]
            tensorboard,
        };
        if jsonl.exists() {
            for p in parse_points(&crate::rundir::read_log(jsonl)?) {
                metrics.remember(p);
            }
        }
        Ok(metrics)
    }

    fn remember(&mut self, p: Point) {
        match self.index.get(&(p.tag.clone(), p.step)) {
            Some(&i) => {
                self.points[i] = p;
                self.duplicated = true;
            }
            None => {
                self.index
                    .insert((p.tag.clone(), p.step), self.points.len());
                self.points.push(p);
            }
        }
    }

    /// Records one scalar.
    pub fn scalar(&mut self, tag: &str, step: u64, value: f64) -> Result<(), RunError> {
        let p = Point {
            time: unix_seconds(),
            tag: tag.to_string(),
            step,
            value,
        };
        append_line(&self.jsonl, &p.json())?;
        append_line(&self.csv, &p.csv())?;
        #[cfg(feature = "tensorboard")]
        if let Some(tb) = &mut self.tensorboard {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                tb.add_scalar(tag, value as f32, step as usize)
            }))
            .is_ok();
            if !ok {
                // The writer's thread died (disk full, directory removed): keep
                // the plain logs going without it.
                self.tensorboard = None;
            }
        }
        self.remember(p);
        Ok(())
    }

    /// Pushes buffered TensorBoard events to disk, and rewrites the JSONL and
    /// CSV logs (atomically) if a point was logged twice since the last time.
    pub fn flush(&mut self) -> Result<(), RunError> {
        #[cfg(feature = "tensorboard")]
        if let Some(tb) = &mut self.tensorboard {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tb.flush())).is_ok();
            if !ok {
                self.tensorboard = None;
            }
        }
        if self.duplicated {
            let mut jsonl = String::new();
            let mut csv = format!("{CSV_HEADER}\n");
            for p in &self.points {
                jsonl.push_str(&p.json());
                jsonl.push('\n');
                csv.push_str(&p.csv());
                csv.push('\n');
            }
            write_atomic(&self.jsonl, jsonl.as_bytes())?;
            write_atomic(&self.csv, csv.as_bytes())?;
            self.duplicated = false;
        }
        Ok(())
    }
}

/// The points of a JSONL log, in file order; a line cut by a kill is skipped.
fn parse_points(text: &str) -> Vec<Point> {
    text.lines()
        .filter_map(|line| {
            let v = serde_json::from_str::<serde_json::Value>(line).ok()?;
            Some(Point {
                time: v["time"].as_f64().unwrap_or(0.0),
                tag: v["tag"].as_str()?.to_string(),
                step: v["step"].as_u64()?,
                value: v["value"].as_f64().unwrap_or(f64::NAN),
            })
        })
        .collect()
}

/// Reads the JSONL log back: `(tag, step, value)`, the last value of each
/// (tag, step), in order of first appearance.
pub fn read_metrics(path: &Path) -> Result<Vec<(String, u64, f64)>, RunError> {
    let text = crate::rundir::read_log(path)?;
    let mut out: Vec<(String, u64, f64)> = Vec::new();
    let mut index = HashMap::new();
    for p in parse_points(&text) {
        match index.get(&(p.tag.clone(), p.step)) {
            Some(&i) => out[i] = (p.tag, p.step, p.value),
            None => {
                index.insert((p.tag.clone(), p.step), out.len());
                out.push((p.tag, p.step, p.value));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_back_last_value_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (j, c) = (dir.path().join("m.jsonl"), dir.path().join("m.csv"));
        let mut m = Metrics::open(&j, &c, &dir.path().join("tb")).unwrap();
        m.scalar("loss/total", 1, 2.5).unwrap();
        m.scalar("loss/total", 2, 2.0).unwrap();
        m.scalar("loss/total", 1, 2.25).unwrap();
        m.scalar("lr", 1, f64::NAN).unwrap();
        // Before a flush, every point logged is on disk.
        assert_eq!(std::fs::read_to_string(&j).unwrap().lines().count(), 4);
        m.flush().unwrap();
        let back = read_metrics(&j).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[0], ("loss/total".to_string(), 1, 2.25));
        assert_eq!(back[1], ("loss/total".to_string(), 2, 2.0));
        assert!(back[2].2.is_nan());
        let csv = std::fs::read_to_string(&c).unwrap();
        assert_eq!(csv.lines().count(), 4, "{csv}");
        assert!(csv.starts_with("unix_time,tag,step,value\n"));
        assert_eq!(std::fs::read_to_string(&j).unwrap().lines().count(), 3);
    }

    #[test]
    fn a_stage_redone_after_a_resume_leaves_one_point_per_step() {
        let dir = tempfile::tempdir().unwrap();
        let (j, c) = (dir.path().join("m.jsonl"), dir.path().join("m.csv"));
        {
            let mut m = Metrics::open(&j, &c, &dir.path().join("tb")).unwrap();
            for step in 1..=3 {
                m.scalar("loss/total", step, 3.0 - step as f64).unwrap();
            }
            m.flush().unwrap();
            // Killed mid-stage: steps 4 and 5 logged, no flush.
            m.scalar("loss/total", 4, 9.0).unwrap();
            m.scalar("loss/total", 5, 9.0).unwrap();
        }
        // The resumed run redoes the stage from step 4.
        let mut m = Metrics::open(&j, &c, &dir.path().join("tb")).unwrap();
        for step in 4..=6 {
            m.scalar("loss/total", step, 0.5).unwrap();
        }
        m.flush().unwrap();
        let jsonl = std::fs::read_to_string(&j).unwrap();
        assert_eq!(jsonl.lines().count(), 6, "{jsonl}");
        let steps: Vec<u64> = read_metrics(&j).unwrap().iter().map(|p| p.1).collect();
        assert_eq!(steps, [1, 2, 3, 4, 5, 6]);
        assert!(read_metrics(&j).unwrap()[3..].iter().all(|p| p.2 == 0.5));
        let csv = std::fs::read_to_string(&c).unwrap();
        assert_eq!(csv.lines().count(), 7, "{csv}");
    }

    #[cfg(feature = "tensorboard")]
    #[test]
    fn tensorboard_event_file_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let tb = dir.path().join("tb");
        {
            let mut m =
                Metrics::open(&dir.path().join("m.jsonl"), &dir.path().join("m.csv"), &tb).unwrap();
            for i in 0..10 {
                m.scalar("loss/total", i, 1.0 / (i + 1) as f64).unwrap();
            }
            m.flush().unwrap();
        }
        let files: Vec<_> = std::fs::read_dir(&tb).unwrap().collect();
        assert_eq!(files.len(), 1);
        let path = files[0].as_ref().unwrap().path();
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("events.out.tfevents.")
        );
        // TFRecord framing: 8-byte length, 4-byte crc, data, 4-byte crc.
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > 10 * 16, "{} bytes", bytes.len());
        let first = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        assert!(first > 0 && first + 16 <= bytes.len());
        assert!(bytes.windows(10).any(|w| w == b"loss/total"));
    }
}
