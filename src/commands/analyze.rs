//! `tammi analyze`: search one position with a player and print what it found.

use super::{CliError, CliResult, PositionArgs};
use std::time::Instant;
use tammi_rules::{Game, move_text};
use tammi_search::PlayerSpec;
use tammi_search::player::{alphabeta_engine, make_player};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Player spec, e.g. alphabeta:depth=12, alphabeta:movetime=1s or
    /// mcts:model=PATH,sims=400 (MCTS scores are 100 x (win - loss) for the side to move).
    #[arg(long, default_value = "alphabeta:movetime=1s")]
    pub player: PlayerSpec,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> CliResult {
    let pos = args.position.position()?;
    let game = Game::from_position(pos);
    let Some((mut engine, limits)) = alphabeta_engine(&args.player, pos.variant())? else {
        return analyze_with_player(args, &game);
    };
    let uses_tables = matches!(&args.player, PlayerSpec::AlphaBeta { egdb: Some(_), .. });
    let r = engine.search(&game, &limits);
    let v = pos.variant();
    let best = r.best.map(|m| move_text(v, &m));
    let pv: Vec<String> = r.pv.iter().map(|m| move_text(v, m)).collect();
    if args.json {
        let out = serde_json::json!({
            "best": best, "score": r.score, "pv": pv, "depth": r.depth,
            "nodes": r.nodes, "table_hits": r.table_hits,
            "seconds": r.elapsed.as_secs_f64(), "nps": r.nps() as u64,
        });
        outln!("{out}");
    } else {
        outln!(
            "best {}",
            best.as_deref().unwrap_or("(none: no legal move)")
        );
        outln!("score {}", r.score);
        outln!("pv {}", pv.join(" "));
        outln!("depth {}", r.depth);
        outln!("nodes {}", r.nodes);
        if uses_tables {
            outln!("table_hits {}", r.table_hits);
        }
        outln!("seconds {:.3}", r.elapsed.as_secs_f64());
        outln!("nps {}", r.nps() as u64);
    }
    Ok(())
}

/// Players other than alpha-beta (random, MCTS): their move, value and visits.
fn analyze_with_player(args: &Args, game: &Game) -> CliResult {
    if game.outcome().is_some() {
        return Err(CliError("the position has no legal move".into()));
    }
    let v = game.position().variant();
    let mut player = make_player(&args.player, v, 1)?;
    let t = Instant::now();
    let (m, info) = player.choose(game)?;
    let secs = t.elapsed().as_secs_f64();
    let best = move_text(v, &m);
    if args.json {
        let out = serde_json::json!({
            "best": best, "score": info.score, "nodes": info.nodes, "seconds": secs,
        });
        outln!("{out}");
    } else {
        outln!("best {best}");
        if let Some(s) = info.score {
            outln!("score {s}");
        }
        if let Some(n) = info.nodes {
            outln!("nodes {n}");
        }
        outln!("seconds {secs:.3}");
    }
    Ok(())
}
