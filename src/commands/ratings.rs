//! `tammi ratings`: a rating list from match results (JSON lines written by `tammi match --results`).

use super::{CliError, CliResult};
use std::path::PathBuf;
use tammi_evaluator::chart::rating_chart;
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

/// Reads match results; each line holds `a`, `b` and `wdl` (A's wins, draws, losses).
pub fn read_results(paths: &[PathBuf]) -> Result<Vec<PairResult>, CliError> {
    let mut out = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let bad = |what: &str| CliError(format!("{} line {}: {what}", path.display(), i + 1));
            let v: serde_json::Value =
                serde_json::from_str(line).map_err(|e| bad(&format!("not JSON ({e})")))?;
            let name = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
            let count = |k: &str| v.get("wdl").and_then(|w| w.get(k)).and_then(|x| x.as_f64());
            let (Some(a), Some(b), Some(w), Some(d), Some(l)) = (
                name("a"),
                name("b"),
                count("wins"),
                count("draws"),
                count("losses"),
            ) else {
                return Err(bad("expected a, b and wdl {wins, draws, losses}"));
            };
            out.push(PairResult {
                a,
                b,
                games: w + d + l,
                score: w + d / 2.0,
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
    let tmp = args.out.join(".ratings.png.tmp.png");
    let labelled = rating_chart(&list, &tmp)?;
    std::fs::rename(&tmp, &png)?;
    out!("{md}");
    if !labelled {
        eprintln!("note: no TrueType font found (set TAMMI_FONT); ratings.png has no labels");
    }
    Ok(())
}
