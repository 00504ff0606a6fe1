//! `tammi ratings`: a rating list from match results (JSON lines written by `tammi match --results`).

use super::{CliError, CliResult};
use std::path::PathBuf;
use tammi_evaluator::chart::rating_chart;
use tammi_evaluator::matchplay::MatchSummary;
use tammi_evaluator::rating::{PairResult, rate};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// JSON-lines files of match results (`tammi match --results FILE`).
    #[arg(long, required = true, num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// The player fixed at 0 Elo.
    #[arg(long, default_value = "random")]
    pub anchor: String,
    /// Directory for ratings.json, ratings.md and ratings.png.
    #[arg(long)]
    pub out: PathBuf,
}

/// Reads match results: one [`MatchSummary`] per line.
pub fn read_results(paths: &[PathBuf]) -> Result<Vec<PairResult>, CliError> {
    let mut out = Vec::new();
    for path in paths {
        let text = tammi_files::read_text_limited(path, tammi_files::limits::RESULTS)
            .map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
        if text.trim().is_empty() {
            return Err(CliError(format!(
                "{} holds no match results (written by `tammi match --results FILE`)",
                path.display()
            )));
        }
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let bad = |what: &str| CliError(format!("{} line {}: {what}", path.display(), i + 1));
            let m: MatchSummary = serde_json::from_str(line)
                .map_err(|e| bad(&format!("not a match result ({e})")))?;
            out.push(PairResult {
                a: m.a,
                b: m.b,
                games: f64::from(m.wdl.games()),
                score: f64::from(m.wdl.wins) + f64::from(m.wdl.draws) / 2.0,
            });
        }
    }
    Ok(out)
}

pub fn run(args: &Args) -> CliResult {
    let results = read_results(&args.results)?;
    let list = rate(&results, &args.anchor)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError(format!("cannot create {}: {e}", args.out.display())))?;
    let json = serde_json::to_string_pretty(&list).map_err(|e| CliError(e.to_string()))?;
    super::write_atomic(&args.out.join("ratings.json"), json.as_bytes())?;
    let md = list.markdown();
    super::write_atomic(&args.out.join("ratings.md"), md.as_bytes())?;
    let png = args.out.join("ratings.png");
    let labelled = tammi_files::write_via(&png, |tmp| -> Result<bool, CliError> {
        Ok(rating_chart(&list, tmp)?)
    })?;
    out!("{md}");
    if !labelled {
        eprintln!("note: no TrueType font found (set TAMMI_FONT); ratings.png has no labels");
    }
    Ok(())
}
