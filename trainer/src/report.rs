//! A run's story in Markdown: state, accepted models, gating and the ladder
//! (Elo against each alpha-beta depth over the hours), from the run
//! directory's own records.

use crate::evaluate::{bounded_elo, read_gates, read_ladder};
use crate::rundir::{RunDir, RunError, RunInfo, RunState, gen_name, read_json};
use std::fmt::Write;
use std::path::Path;

fn elo_text(elo: Option<f64>, score: f64) -> String {
    match elo {
        Some(e) => format!("{e:+.0}"),
        None if score >= 1.0 => "+inf".into(),
        None => "-inf".into(),
    }
}

/// The report of the run in `root`.
pub fn report(root: &Path) -> Result<String, RunError> {
    let run = RunDir::new(root);
    let info = run.check_compatible()?;
    let RunInfo {
        tammi_version,
        git_revision,
        created,
        ..
    } = info;
    let state: RunState = read_json(&run.state())?;
    let mut md = String::new();
    let hours = state.seconds / 3600.0;
    let training_hours = (state.seconds - state.ladder_seconds) / 3600.0;
    let _ = writeln!(md, "# Run {}\n", root.display());
    let _ = writeln!(
        md,
        "Started {created} with tammi {tammi_version} ({git_revision}). At generation {} \
         (next stage: {}); accepted model {}; {} self-play games; {hours:.2} h in all, of \
         which {training_hours:.2} h self-play, training and gating and {:.2} h ladder.\n",
        state.generation,
        state.stage,
        gen_name(state.accepted),
        state.games,
        state.ladder_seconds / 3600.0
    );
    workers_section(&run, &mut md)?;
    let gates = read_gates(&run.eval().join("gating.jsonl"))?;
    if !gates.is_empty() {
        let _ = writeln!(md, "## Gating\n");
        let _ = writeln!(
            md,
            "| generation | candidate vs best | W/D/L | score | Elo | decision |\n|---|---|---|---|---|---|"
        );
        for g in &gates {
            let _ = writeln!(
                md,
                "| {} | {} vs {} | {}/{}/{} | {:.1}% | {} | {} ({}) |",
                g.generation,
                g.candidate,
                g.best,
                g.wdl.wins,
                g.wdl.draws,
                g.wdl.losses,
                100.0 * g.score,
                elo_text(g.elo, g.score),
                if g.accepted { "accepted" } else { "rejected" },
                g.reason
            );
        }
        let _ = writeln!(md);
    }
    let ladder = read_ladder(&run.eval().join("ladder.jsonl"))?;
    if !ladder.is_empty() {
        let mut depths: Vec<u32> = ladder.iter().map(|r| r.depth).collect();
        depths.sort();
        depths.dedup();
        let mut models: Vec<(u64, f64)> = ladder
            .iter()
            .map(|r| (r.model_generation, r.hours))
            .collect();
        models.dedup_by_key(|m| m.0);
        let _ = writeln!(
            md,
            "## Ladder: score (Elo) of the accepted model against alpha-beta\n\nModel player: {}. \
             Hours: self-play, training and gating before the ladder was played.\n",
            ladder[0].model_player
        );
        let head: Vec<String> = depths.iter().map(|d| format!("depth {d}")).collect();
        let _ = writeln!(md, "| model | hours | {} |", head.join(" | "));
        let _ = writeln!(md, "|---|---|{}", "---|".repeat(depths.len()));
        for (generation, h) in models {
            let cells: Vec<String> = depths
                .iter()
                .map(|&d| {
                    ladder
                        .iter()
                        .find(|r| r.model_generation == generation && r.depth == d)
                        .map_or("".into(), |r| {
                            format!(
                                "{:.0}% ({}; {}/{}/{})",
                                100.0 * r.score,
                                format_args!("{:+.0}", bounded_elo(r.score, r.wdl.games())),
                                r.wdl.wins,
                                r.wdl.draws,
                                r.wdl.losses
                            )
                        })
                })
                .collect();
            let _ = writeln!(
                md,
                "| {} | {h:.2} | {} |",
                gen_name(generation),
                cells.join(" | ")
            );
        }
        let _ = writeln!(
            md,
            "\nElo in brackets is computed from the score pulled half a game in from 0% and \
             100%, so it stays finite; W/D/L from the model's side."
        );
    }
    Ok(md)
}

/// Live workers (their heartbeats) and the games each one gave each
/// generation, for a run with external self-play.
fn workers_section(run: &RunDir, md: &mut String) -> Result<(), RunError> {
    let statuses = crate::intake::worker_statuses(run);
    let manifests = crate::intake::read_manifests(run)?;
    if statuses.is_empty() && manifests.is_empty() {
        return Ok(());
    }
    let _ = writeln!(
        md,
        "## Workers\n\n{}.\n\n| worker | host | pid | state | model | games | games/s | last heard |\n\
         |---|---|---|---|---|---|---|---|",
        crate::intake::liveness(&statuses)
    );
    for s in &statuses {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {:.3} | {:.0} s ago |",
            s.id,
            s.host,
            s.pid,
            s.state,
            gen_name(s.model_generation),
            s.games,
            s.games_per_second,
            crate::intake::seconds_since(s)
        );
    }
    if !manifests.is_empty() {
        let _ = writeln!(
            md,
            "\n| generation | trained on (games by worker) | stale (dropped) |\n|---|---|---|"
        );
        for m in &manifests {
            let tally = |chunks| crate::intake::tally_text(&crate::intake::games_by_worker(chunks));
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                m.generation,
                tally(&m.fresh),
                tally(&m.stale)
            );
        }
    }
    let _ = writeln!(md);
    Ok(())
}
