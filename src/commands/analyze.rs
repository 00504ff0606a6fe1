//! `tammi analyze`: search one position with a player and print what it found.

use super::{CliError, CliResult, PositionArgs};
use tammi_evaluator::{AlphaBeta, PlayerSpec, SearchLimits, SearchOptions};
use tammi_rules::{Game, move_text};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Player spec, e.g. alphabeta:depth=12 or alphabeta:movetime=1s.
    #[arg(long, default_value = "alphabeta:movetime=1s")]
    pub player: PlayerSpec,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> CliResult {
    let pos = args.position.position()?;
    let game = Game::from_position(pos);
    let PlayerSpec::AlphaBeta {
        depth,
        movetime,
        hash_mb,
    } = args.player.clone()
    else {
        return Err(CliError(format!(
            "analyze supports alphabeta players for now, not '{}'",
            args.player
        )));
    };
    let mut engine = AlphaBeta::new(SearchOptions {
        tt_megabytes: hash_mb,
        ..Default::default()
    });
    let r = engine.search(
        &game,
        &SearchLimits {
            depth,
            movetime,
            nodes: None,
        },
    );
    let v = pos.variant();
    let best = r.best.map(|m| move_text(v, &m));
    let pv: Vec<String> = r.pv.iter().map(|m| move_text(v, m)).collect();
    if args.json {
        let out = serde_json::json!({
            "best": best, "score": r.score, "pv": pv, "depth": r.depth,
            "nodes": r.nodes, "seconds": r.elapsed.as_secs_f64(), "nps": r.nps() as u64,
        });
        println!("{out}");
    } else {
        println!(
            "best {}",
            best.as_deref().unwrap_or("(none: no legal move)")
        );
        println!("score {}", r.score);
        println!("pv {}", pv.join(" "));
        println!("depth {}", r.depth);
        println!("nodes {}", r.nodes);
        println!("seconds {:.3}", r.elapsed.as_secs_f64());
        println!("nps {}", r.nps() as u64);
    }
    Ok(())
}
