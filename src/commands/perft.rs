//! `tammi perft`: leaf counts for depths 1..=d with time and speed.

use super::{CliError, CliResult, PositionArgs};
use std::time::Instant;
use tammi_rules::{PerftMode, perft};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Deepest ply to count (1..=30).
    #[arg(long)]
    pub depth: u32,
    /// Count distinct (origin, destination, captured set) moves instead of capture paths.
    #[arg(long)]
    pub unique: bool,
    /// Print `[{"depth", "nodes", "seconds", "nps"}]` as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> CliResult {
    if args.depth == 0 || args.depth > 30 {
        return Err(CliError(format!(
            "--depth must be between 1 and 30, not {}",
            args.depth
        )));
    }
    let pos = args.position.position()?;
    let mode = if args.unique {
        PerftMode::Unique
    } else {
        PerftMode::Paths
    };
    let mut rows = Vec::new();
    for depth in 1..=args.depth {
        let t = Instant::now();
        let nodes = perft(&pos, depth, mode);
        let seconds = t.elapsed().as_secs_f64();
        let nps = if seconds > 0.0 {
            (nodes as f64 / seconds) as u64
        } else {
            0
        };
        if args.json {
            rows.push(serde_json::json!({
                "depth": depth, "nodes": nodes, "seconds": seconds, "nps": nps,
            }));
        } else {
            outln!("{depth} {nodes} {seconds:.6} {nps}");
        }
    }
    if args.json {
        outln!("{}", serde_json::Value::Array(rows));
    }
    Ok(())
}
