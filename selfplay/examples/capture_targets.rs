//! How much of self-play's policy targets goes to captures and removals
//! where they are legal, against their share of the legal moves (issue 38's
//! huffing diagnosis): one line per directory of shards.
//!
//!     cargo run --release -p tammi-selfplay --example capture_targets -- RUN/selfplay/gen-0001 ...

use std::path::Path;
use tammi_selfplay::{Sample, read_shard, shard_files_below};

/// Sums over the samples where some move is of a kind.
#[derive(Default)]
struct Share {
    positions: usize,
    target: f64,
    uniform: f64,
    played: usize,
}

impl Share {
    fn add(&mut self, s: &Sample, kind: impl Fn(usize) -> bool) {
        let of_kind: Vec<usize> = (0..s.moves.len()).filter(|&i| kind(i)).collect();
        if of_kind.is_empty() {
            return;
        }
        self.positions += 1;
        self.target += of_kind.iter().map(|&i| f64::from(s.policy[i])).sum::<f64>();
        self.uniform += of_kind.len() as f64 / s.moves.len() as f64;
        self.played += usize::from(of_kind.contains(&s.played));
    }

    fn line(&self, name: &str) -> String {
        let n = self.positions.max(1) as f64;
        format!(
            "{name} in {} positions: target mass {:.3} (share of the legal moves {:.3}), played {:.3}",
            self.positions,
            self.target / n,
            self.uniform / n,
            self.played as f64 / n
        )
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    if dirs.is_empty() {
        return Err("usage: capture_targets SHARD_DIR...".into());
    }
    for dir in dirs {
        let (mut captures, mut removals) = (Share::default(), Share::default());
        for file in shard_files_below(Path::new(&dir))? {
            for game in read_shard(&file)?.games {
                for s in &game.samples {
                    captures.add(s, |i| s.moves[i].is_capture() && !s.moves[i].is_removal());
                    removals.add(s, |i| s.moves[i].is_removal());
                }
            }
        }
        println!(
            "{dir}: {}; {}",
            captures.line("captures"),
            removals.line("removals")
        );
    }
    Ok(())
}
