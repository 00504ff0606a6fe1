//! `tammi match`: two players, balanced openings, honest statistics.

use super::{CliError, CliResult};
use std::path::PathBuf;
use tammi_evaluator::matchplay::{MatchConfig, MatchResult, run_match};
use tammi_evaluator::stats::Sprt;
use tammi_rules::Variant;
use tammi_search::PlayerSpec;
use tammi_search::openings::{OpeningSource, load_openings};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// First player, e.g. alphabeta:depth=6.
    #[arg(long)]
    pub a: PlayerSpec,
    /// Second player, e.g. random.
    #[arg(long)]
    pub b: PlayerSpec,
    /// Variant, e.g. english, international, finnish:huffing or canadian (README lists all; corner and one-way are [Interp]: their start and men's moves are interpreted, VARIANTS.md).
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Number of games (even: each opening is played twice, colours swapped).
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// Openings: standard (the English deck; 4 random plies in other
    /// variants), ballot (English deck), random:K (K random plies), or a file.
    #[arg(long, default_value = "standard")]
    pub openings: String,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Adjudicate a draw after this many plies (reported separately); off by default.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_plies: Option<u32>,
    /// Stop early by SPRT: elo0,elo1,alpha,beta (e.g. 0,30,0.05,0.05).
    #[arg(long, value_name = "ELO0,ELO1,ALPHA,BETA")]
    pub sprt: Option<String>,
    /// Append the result (without games) as one JSON line to this file, for `tammi ratings`.
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Write every game to this PDN file.
    #[arg(long)]
    pub pdn: Option<PathBuf>,
    /// Print the result as JSON (games included with --pdn only as a file).
    #[arg(long)]
    pub json: bool,
}

fn parse_sprt(s: &str) -> Result<Sprt, CliError> {
    let v: Vec<f64> = s
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            CliError(format!(
                "--sprt needs four numbers elo0,elo1,alpha,beta, not '{s}'"
            ))
        })?;
    let [elo0, elo1, alpha, beta] = v[..] else {
        return Err(CliError(format!(
            "--sprt needs four numbers elo0,elo1,alpha,beta, not '{s}'"
        )));
    };
    let sprt = Sprt {
        elo0,
        elo1,
        alpha,
        beta,
    };
    sprt.validate()
        .map_err(|e| CliError(format!("--sprt {s}: {e}")))?;
    Ok(sprt)
}

/// Human-readable summary lines.
pub fn summary(r: &MatchResult) -> String {
    let w = r.wdl;
    let mut s = format!(
        "{} vs {} ({}): {} games, +{} ={} -{}\n",
        r.a,
        r.b,
        r.variant,
        w.games(),
        w.wins,
        w.draws,
        w.losses
    );
    s += &format!(
        "score {:.1}% [{:.1}%, {:.1}%] (95%, from {} game pairs)\n",
        100.0 * r.score,
        100.0 * r.score_interval.0,
        100.0 * r.score_interval.1,
        r.pairs.pairs()
    );
    let elo = |e: Option<f64>, inf: &str| e.map_or(inf.to_string(), |e| format!("{e:+.0}"));
    s += &format!(
        "elo {} [{}, {}]  LOS {:.1}%\n",
        elo(r.elo, if r.score > 0.5 { "+inf" } else { "-inf" }),
        elo(r.elo_interval.0, "-inf"),
        elo(r.elo_interval.1, "+inf"),
        100.0 * r.los
    );
    if r.adjudicated > 0 {
        s += &format!(
            "adjudicated by ply cap: {} games (counted as draws)\n",
            r.adjudicated
        );
    }
    if let Some(d) = r.sprt {
        s += &format!("sprt: {d:?}\n");
    }
    s
}

pub fn run(args: &Args) -> CliResult {
    if args.games < 2 || !args.games.is_multiple_of(2) {
        return Err(CliError(format!(
            "--games must be even and at least 2, not {}",
            args.games
        )));
    }
    if args.threads == 0 || args.threads > 256 {
        return Err(CliError("--threads must be between 1 and 256".into()));
    }
    let source: OpeningSource = args.openings.parse()?;
    let openings = load_openings(args.variant, &source, args.games / 2, args.seed)?;
    let cfg = MatchConfig {
        variant: args.variant,
        a: args.a.clone(),
        b: args.b.clone(),
        pairs: args.games / 2,
        openings,
        threads: args.threads,
        seed: args.seed,
        max_plies: args.max_plies.map(|n| n as usize),
        sprt: args.sprt.as_deref().map(parse_sprt).transpose()?,
    };
    let bar = super::progress_bar(args.games as u64, "games");
    let result = run_match(&cfg, |p| {
        bar.set_position(p.games_done as u64);
        bar.set_message(format!(
            "+{} ={} -{}",
            p.wdl.wins, p.wdl.draws, p.wdl.losses
        ));
    })?;
    bar.finish_and_clear();
    if let Some(path) = &args.pdn {
        super::write_atomic(path, result.pdn().as_bytes())?;
    }
    if let Some(path) = &args.results {
        let line = serde_json::to_string(&result.summary).map_err(|e| CliError(e.to_string()))?;
        let mut text = match tammi_files::read_text_limited(path, tammi_files::limits::RESULTS) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(CliError(format!("cannot read {}: {e}", path.display()))),
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&line);
        text.push('\n');
        super::write_atomic(path, text.as_bytes())?;
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string(&result).map_err(|e| CliError(e.to_string()))?
        );
    } else {
        out!("{}", summary(&result));
    }
    Ok(())
}
