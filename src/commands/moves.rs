//! `tammi moves`: every legal move of a position, one per line, sorted by square numbers.

use super::{CliResult, PositionArgs};
use tammi_rules::{sorted_texts, to_fen};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Print `{"variant", "fen", "moves"}` as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> CliResult {
    let pos = args.position.position()?;
    let moves = sorted_texts(pos.variant(), &pos.legal_moves());
    if args.json {
        let out = serde_json::json!({
            "variant": pos.variant().name(),
            "fen": to_fen(&pos),
            "moves": moves,
        });
        outln!("{out}");
    } else {
        for m in moves {
            outln!("{m}");
        }
    }
    Ok(())
}
