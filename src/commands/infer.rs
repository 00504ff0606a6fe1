//! `tammi infer`: the network's raw outputs for one position: W/D/L and the
//! policy over the legal moves.

use super::{CliError, CliResult, PositionArgs};
use std::path::{Path, PathBuf};
use tammi_model::{DeviceChoice, EvalRequest, Evaluator, Model, NetConfig};
use tammi_rules::{Game, move_text, to_fen};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Model directory (weights + card.json); without it a freshly initialised net is used.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Seed of the freshly initialised net (without --model).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Config file whose [model] section shapes the fresh net (without --model; default: built-in defaults).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Backend: flex (CPU), wgpu or cuda (the last two only when compiled in).
    #[arg(long, default_value = "flex")]
    pub backend: DeviceChoice,
    /// Print `{"variant", "fen", "wdl", "value", "moves_left", "policy"}` as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The `[model]` section of a config file (the whole file is checked).
pub fn model_config(path: &Path) -> Result<NetConfig, CliError> {
    Ok(super::config::load_config(path)?.model)
}

pub fn run(args: &Args) -> CliResult {
    let pos = args.position.position()?;
    let variant = pos.variant();
    let backend = args.backend;
    let model = match &args.model {
        Some(dir) => {
            if args.config.is_some() {
                return Err(CliError(
                    "--config shapes a fresh net; it cannot be used with --model".into(),
                ));
            }
            Model::load(dir, variant, backend)?
        }
        None => {
            let cfg = match &args.config {
                Some(p) => model_config(p)?,
                None => NetConfig::default(),
            };
            Model::new(variant, &cfg, args.seed, backend)?
        }
    };
    // The no-progress and repetition counters of the position reached by --play.
    let game = {
        let start = match &args.position.fen {
            None => tammi_rules::Position::start(variant),
            Some(f) => tammi_rules::parse_fen(variant, f)?,
        };
        let mut g = Game::from_position(start);
        for text in args.position.play.iter().flat_map(|s| s.split_whitespace()) {
            g.play_text(text)?;
        }
        g
    };
    let moves = pos.legal_moves();
    let req = EvalRequest {
        position: &pos,
        moves: &moves,
        no_progress: game.no_progress_plies(),
        repetitions: game.repetition_count() as u32,
    };
    let mut out = Vec::new();
    model.evaluator().evaluate(&[req], &mut out)?;
    let r = &out[0];
    let mut policy: Vec<(String, f32)> = moves
        .iter()
        .map(|m| move_text(variant, m))
        .zip(r.policy.iter().copied())
        .collect();
    policy.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if args.json {
        let out = serde_json::json!({
            "variant": variant.name(),
            "fen": to_fen(&pos),
            "model": args.model.as_ref().map(|p| p.display().to_string()),
            "wdl": {"win": r.wdl[0], "draw": r.wdl[1], "loss": r.wdl[2]},
            "value": r.value(),
            "moves_left": r.moves_left,
            "policy": policy.iter().map(|(m, p)| serde_json::json!({"move": m, "p": p})).collect::<Vec<_>>(),
        });
        outln!("{out}");
    } else {
        outln!(
            "wdl {:.4} {:.4} {:.4} value {:+.4} (side to move)",
            r.wdl[0],
            r.wdl[1],
            r.wdl[2],
            r.value()
        );
        if let Some(m) = r.moves_left {
            outln!("moves_left {m:.1}");
        }
        for (m, p) in policy {
            outln!("{m} {p:.4}");
        }
    }
    Ok(())
}
