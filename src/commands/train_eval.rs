//! `tammi train-eval`: the learned evaluation for alpha-beta from nothing
//! (MCTS self-play, a first fit, bootstrap rounds), in one resumable run
//! directory; see `tammi_trainer::search_eval::recipe`.

use super::train::Display;
use super::{CliError, CliResult};
use std::path::PathBuf;
use tammi_rules::Variant;
use tammi_trainer::Observer;
use tammi_trainer::search_eval::{RecipeObserver, build, create};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Config file (e.g. configs/search-eval.toml); needed to start a run,
    /// left out to continue one.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Run directory: created with --config, continued where it stopped otherwise.
    #[arg(long)]
    pub run: PathBuf,
    /// Variant to learn (with --config; overrides the config's `[run] variant`
    /// and its MCTS run's): the inputs are sized from its board.
    #[arg(long)]
    pub variant: Option<Variant>,
}

impl RecipeObserver for Display {
    fn stage(&self, name: &str, total: u64, unit: &str) {
        self.start_bar(name, total, unit);
    }
    fn progress(&self, done: u64, total: u64, message: &str) {
        Observer::progress(self, done, total, message);
    }
    fn line(&self, text: &str) {
        Observer::line(self, text);
    }
    fn mcts(&self) -> &dyn Observer {
        self
    }
}

pub fn run(args: &Args) -> CliResult {
    match &args.config {
        Some(config) => {
            create(&args.run, config, args.variant)?;
            outln!(
                "started search-eval run {} from {}",
                args.run.display(),
                config.display()
            );
        }
        None if !args.run.join("config.toml").exists() => {
            return Err(CliError(format!(
                "{} holds no search-eval run; start one with --config FILE",
                args.run.display()
            )));
        }
        None if args.variant.is_some() => {
            return Err(CliError(
                "--variant is given with --config, when a run starts (a run keeps its variant)"
                    .into(),
            ));
        }
        None => {}
    }
    let display = Display::new();
    let model = build(&args.run, &display);
    display.finish();
    let model = model?;
    outln!(
        "finished: the evaluation is {} (play it with alphabeta:eval={},movetime=200ms)",
        model.display(),
        model.display()
    );
    Ok(())
}
