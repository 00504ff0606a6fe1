//! `tammi egdb`: build, probe, verify and summarise endgame tables.

use super::{CliError, CliResult, PositionArgs, progress_bar};
use std::path::PathBuf;
use std::time::Instant;
use tammi_egdb::{BuildEvent, BuildOptions, Egdb, build, default_dir, verify};
use tammi_rules::{Variant, move_text, to_fen};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: EgdbCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum EgdbCommand {
    /// Build win/draw/loss tables by retrograde analysis (resumes a killed build).
    Build(BuildArgs),
    /// The tables' value (and distance, best move) of one position.
    Probe(ProbeArgs),
    /// Re-check every position against its successors; exit 1 on any mismatch.
    Verify(DirArgs),
    /// Positions and wins/draws/losses per slice and per number of pieces.
    Stats(DirArgs),
}

#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// Variant of the tables (8x8 games only; README lists the variants).
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Most pieces on the board (both sides together), 1 to 8.
    #[arg(long, default_value_t = 5)]
    pub pieces: u32,
    /// Output directory (default: tables/<variant>).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Table directory (default: tables/<variant>).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Print `{"fen", "wdl", "distance", "best"}` as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct DirArgs {
    /// Table directory (default: tables/<variant>).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Variant whose default directory to use when --dir is not given.
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

impl DirArgs {
    fn dir(&self) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(|| default_dir(self.variant))
    }
}

pub fn run(args: &Args) -> CliResult {
    match &args.command {
        EgdbCommand::Build(a) => run_build(a),
        EgdbCommand::Probe(a) => run_probe(a),
        EgdbCommand::Verify(a) => run_verify(a),
        EgdbCommand::Stats(a) => run_stats(a),
    }
}

fn run_build(args: &BuildArgs) -> CliResult {
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| default_dir(args.variant));
    let bar = progress_bar(0, "indices");
    let start = Instant::now();
    let built = std::sync::Mutex::new((0usize, 0usize));
    let egdb = build(
        &BuildOptions {
            variant: args.variant,
            pieces: args.pieces,
            dir: dir.clone(),
        },
        &|event| match event {
            BuildEvent::Started { slices, indices } => {
                bar.set_length(indices);
                bar.set_message(format!("{slices} slices"));
            }
            BuildEvent::Slice(r) => {
                if r.resumed {
                    // Already on disk: not part of this run's speed.
                    bar.set_length(bar.length().unwrap_or(0).saturating_sub(r.indices));
                    built.lock().unwrap().1 += 1;
                } else {
                    bar.inc(r.indices);
                    built.lock().unwrap().0 += 1;
                }
                bar.set_message(r.material.to_string());
            }
        },
    )?;
    bar.finish_and_clear();
    let (new, kept) = *built.lock().unwrap();
    outln!(
        "built {new} slices, kept {kept} already complete, in {:.1} s: {}",
        start.elapsed().as_secs_f64(),
        dir.display()
    );
    print_totals(&egdb);
    Ok(())
}

fn print_totals(egdb: &Egdb) {
    let mut rows: Vec<[u64; 4]> = vec![[0; 4]; egdb.max_pieces() as usize];
    for s in egdb.stats() {
        let r = &mut rows[s.material.pieces() as usize - 1];
        r[0] += s.counts.positions();
        r[1] += s.counts.wins;
        r[2] += s.counts.draws;
        r[3] += s.counts.losses;
    }
    outln!("pieces positions wins draws losses (side to move's view, Black to move)");
    for (i, r) in rows.iter().enumerate() {
        outln!("{} {} {} {} {}", i + 1, r[0], r[1], r[2], r[3]);
    }
}

fn run_probe(args: &ProbeArgs) -> CliResult {
    let pos = args.position.position()?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| default_dir(pos.variant()));
    let egdb = Egdb::open(&dir)?;
    let fen = to_fen(&pos);
    let Some(wdl) = egdb.probe(&pos) else {
        return Err(CliError(format!(
            "{fen} is not in the tables of {} (they hold {} positions of up to {} pieces)",
            dir.display(),
            egdb.variant(),
            egdb.max_pieces()
        )));
    };
    let distance = egdb.distance(&pos);
    let best = egdb
        .best_move(&pos)
        .map(|m| move_text(pos.variant(), &m.mv));
    if args.json {
        let out = serde_json::json!({
            "fen": fen, "wdl": wdl.name(), "distance": distance, "best": best,
        });
        outln!("{out}");
    } else {
        let mut line = wdl.name().to_string();
        if let Some(d) = distance {
            line += &format!(" distance {d}");
        }
        if let Some(b) = best {
            line += &format!(" best {b}");
        }
        outln!("{line}");
    }
    Ok(())
}

fn run_verify(args: &DirArgs) -> CliResult {
    let dir = args.dir();
    let egdb = Egdb::open(&dir)?;
    let total: u64 = egdb.stats().iter().map(|s| s.indices).sum();
    let bar = progress_bar(total, "indices");
    let start = Instant::now();
    let report = verify(&egdb, &|m, n| {
        bar.inc(n);
        bar.set_message(m.to_string());
    });
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    if args.json {
        let out = serde_json::json!({
            "dir": dir, "slices": report.slices, "positions": report.positions,
            "distances_checked": report.distances_checked,
            "mismatches": report.mismatch_count, "passed": report.passed(),
            "seconds": seconds,
            "examples": report.mismatches.iter().map(|m| serde_json::json!({
                "slice": m.material.file_stem(), "index": m.index, "fen": m.fen, "problem": m.problem,
            })).collect::<Vec<_>>(),
        });
        outln!("{out}");
    } else {
        for m in &report.mismatches {
            outln!(
                "MISMATCH {} #{} {}: {}",
                m.material,
                m.index,
                m.fen,
                m.problem
            );
        }
        outln!(
            "{} slices, {} positions ({} distances) checked in {seconds:.1} s: {}",
            report.slices,
            report.positions,
            report.distances_checked,
            if report.passed() {
                "all consistent".to_string()
            } else {
                format!("{} mismatches", report.mismatch_count)
            }
        );
    }
    if report.passed() {
        Ok(())
    } else {
        Err(CliError(format!(
            "verification failed: {} positions do not follow from their successors",
            report.mismatch_count
        )))
    }
}

fn run_stats(args: &DirArgs) -> CliResult {
    let egdb = Egdb::open(args.dir())?;
    let stats = egdb.stats();
    if args.json {
        let rows: Vec<_> = stats
            .iter()
            .map(|s| {
                serde_json::json!({
                    "slice": s.material.file_stem(), "pieces": s.material.pieces(),
                    "indices": s.indices, "positions": s.counts.positions(),
                    "wins": s.counts.wins, "draws": s.counts.draws, "losses": s.counts.losses,
                    "max_distance": s.max_distance,
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(rows));
        return Ok(());
    }
    outln!("slice positions wins draws losses max_distance");
    for s in &stats {
        outln!(
            "{} {} {} {} {} {}",
            s.material.file_stem(),
            s.counts.positions(),
            s.counts.wins,
            s.counts.draws,
            s.counts.losses,
            s.max_distance
        );
    }
    print_totals(&egdb);
    Ok(())
}
