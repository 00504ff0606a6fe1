//! Scalars of a run (losses, rates, gating, Elo) written three ways: JSONL
//! and CSV in the run directory, readable with any tool, and TensorBoard
//! event files when the `tensorboard` feature is on (the default).
//!
//! Steps: training scalars use the optimizer step, per-generation scalars
//! the generation number.  A stage redone after a kill logs its scalars
//! again; readers take the last value of a (tag, step).

use crate::rundir::{RunError, append_line, io_err};
use std::path::{Path, PathBuf};

/// Where scalars go.
pub struct Metrics {
    jsonl: PathBuf,
    csv: PathBuf,
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
            append_line(csv, "unix_time,tag,step,value")?;
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
        Ok(Metrics {
            jsonl: jsonl.to_path_buf(),
            csv: csv.to_path_buf(),
            #[cfg(feature = "tensorboard")]
            tensorboard,
        })
    }

    /// Records one scalar.
    pub fn scalar(&mut self, tag: &str, step: u64, value: f64) -> Result<(), RunError> {
        let time = unix_seconds();
        let value_json = if value.is_finite() {
            serde_json::json!(value)
        } else {
            serde_json::Value::Null
        };
        let line = serde_json::json!({"time": time, "tag": tag, "step": step, "value": value_json});
        append_line(&self.jsonl, &line.to_string())?;
        append_line(&self.csv, &format!("{time:.3},{tag},{step},{value}"))?;
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
        Ok(())
    }

    /// Pushes buffered TensorBoard events to disk.
    pub fn flush(&mut self) {
        #[cfg(feature = "tensorboard")]
        if let Some(tb) = &mut self.tensorboard {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tb.flush())).is_ok();
            if !ok {
                self.tensorboard = None;
            }
        }
    }
}

/// Reads the JSONL log back: `(tag, step, value)`, the last value of each
/// (tag, step), in order of first appearance.
pub fn read_metrics(path: &Path) -> Result<Vec<(String, u64, f64)>, RunError> {
    let text = crate::rundir::read_log(path)?;
    let mut out: Vec<(String, u64, f64)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for line in text.lines() {
        // A line cut by a kill is skipped.
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(tag), Some(step)) = (v["tag"].as_str(), v["step"].as_u64()) else {
            continue;
        };
        let value = v["value"].as_f64().unwrap_or(f64::NAN);
        match index.get(&(tag.to_string(), step)) {
            Some(&i) => out[i] = (tag.to_string(), step, value),
            None => {
                index.insert((tag.to_string(), step), out.len());
                out.push((tag.to_string(), step, value));
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
        m.flush();
        let back = read_metrics(&j).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[0], ("loss/total".to_string(), 1, 2.25));
        assert_eq!(back[1], ("loss/total".to_string(), 2, 2.0));
        assert!(back[2].2.is_nan());
        let csv = std::fs::read_to_string(&c).unwrap();
        assert_eq!(csv.lines().count(), 5);
        assert!(csv.starts_with("unix_time,tag,step,value\n"));
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
            m.flush();
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
