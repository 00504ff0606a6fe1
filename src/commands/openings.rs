//! `tammi openings`: build a deck of balanced openings by alpha-beta search.

use super::{CliError, CliResult};
use std::io::Write;
use tammi_rules::Variant;
use tammi_search::openings::balanced_openings;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Length of each opening in plies.
    #[arg(long, default_value_t = 3)]
    pub plies: u32,
    /// Alpha-beta depth used to score each opening.
    #[arg(long, default_value_t = 16)]
    pub depth: u32,
    /// Keep openings scored within this many hundredths of a man of equality.
    #[arg(long, default_value_t = 60)]
    pub margin: i32,
    /// Output file (written atomically); standard output if absent.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

pub fn run(args: &Args) -> CliResult {
    if !(1..=8).contains(&args.plies) || !(1..=40).contains(&args.depth) {
        return Err(CliError("--plies must be 1..=8 and --depth 1..=40".into()));
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("valid template"),
    );
    bar.set_message("scoring openings");
    let found = balanced_openings(args.variant, args.plies, args.depth, args.margin, |i, n| {
        bar.set_length(n as u64);
        bar.set_position(i as u64);
    });
    bar.finish_and_clear();
    let mut text = format!(
        "# {} openings of {} plies, scored within +-{} (1/100 man, first mover's view) by\n\
         # alpha-beta depth {}; one per resulting position. Built by:\n\
         #   tammi openings --variant {} --plies {} --depth {} --margin {}\n\
         # Each line: the moves, then the score as a comment.\n",
        found.len(),
        args.plies,
        args.margin,
        args.depth,
        args.variant,
        args.plies,
        args.depth,
        args.margin
    );
    for (opening, score) in &found {
        text.push_str(&format!("{opening}  # {score:+}\n"));
    }
    match &args.out {
        None => {
            std::io::stdout().write_all(text.as_bytes())?;
        }
        Some(path) => super::write_atomic(path, text.as_bytes())?,
    }
    Ok(())
}
