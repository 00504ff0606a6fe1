//! Player specifications as written on the command line: `random`,
//! `alphabeta:depth=6`, `alphabeta:movetime=100ms`, `mcts:model=PATH,sims=200`
//! (`alphabeta:eval=DIR,movetime=200ms` scores leaves with a learned
//! evaluation; `backend=cuda` runs its network on a GPU build's backend; `solve=20000`
//! proves wins with alpha-beta before each MCTS search; `cpuct=2.5,fpu=0.4` set
//! an MCTS player's tree policy; `forced=on` plays forced moves inside its
//! tree without evaluating them).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;
use tammi_model::DeviceChoice;

/// A player, as named by a spec string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// Uniformly random legal moves.
    Random,
    /// The alpha-beta baseline with a depth and/or time limit.
    AlphaBeta {
        depth: Option<u32>,
        movetime: Option<Duration>,
        /// Transposition table size in MiB.
        hash_mb: usize,
        /// Endgame table directory (`egdb=DIR`), if the search uses tables.
        egdb: Option<PathBuf>,
        /// A learned evaluation's model directory (`eval=DIR`, a card of
        /// kind `search-eval`) scoring the leaves instead of the handcrafted
        /// evaluation; `eval=material` scores material only.
        eval: Option<PathBuf>,
        /// Runs a learned evaluation in f32 (`quant=f32`) instead of the
        /// default integers (`quant=int16`; a net that does not fit stays f32).
        eval_f32: bool,
    },
    /// A network through MCTS, by simulations or time (needs the self-play layer).
    Mcts {
        model: Option<PathBuf>,
        sims: Option<u32>,
        movetime: Option<Duration>,
        /// Endgame table directory (`egdb=DIR`): search positions in the
        /// tables take their exact value.
        egdb: Option<PathBuf>,
        /// Leaves evaluated together (`batch=N`, with virtual loss; 1 = one
        /// at a time): the network's batched path is about twice as fast per
        /// position on the CPU, so a timed search sees more positions.
        batch: u32,
        /// The backend the network runs on (`backend=flex|wgpu|cuda`).
        backend: DeviceChoice,
        /// Nodes of the alpha-beta proof search run before each move
        /// (`solve=N`): a win it proves is played outright (see
        /// [`crate::proof`]); `None` searches with MCTS alone.
        solve: Option<u64>,
        /// PUCT exploration constant (`cpuct=F`), if not match play's
        /// default ([`crate::SearchParams::for_matches`]): how far the search
        /// looks past the moves the network and the values so far prefer.
        cpuct: Option<SearchConstant>,
        /// First-play urgency reduction (`fpu=F`), if not the default: how
        /// much worse than its parent an unvisited move is assumed to be.
        fpu: Option<SearchConstant>,
        /// Forced moves played inside the tree without an evaluation
        /// (`forced=on`) or evaluated like any leaf (`forced=off`), if not
        /// match play's default ([`crate::SearchParams::forced_extension`]).
        forced: Option<bool>,
        /// Temperature of the network's priors in the tree (`ptemp=F`, above
        /// 0), if not match play's default
        /// ([`crate::MATCH_POLICY_TEMPERATURE`]):
        /// [`crate::SearchParams::policy_temperature`].
        ptemp: Option<SearchConstant>,
        /// How much less a draw is worth to this player than the game says,
        /// and how much more to its opponent (`contempt=F`, 0 to 1), if not
        /// 0: [`crate::SearchParams::contempt`].
        contempt: Option<SearchConstant>,
    },
}

/// A finite, non-negative constant of an MCTS player's spec (`cpuct=2.5`):
/// never NaN, so specs holding one still compare as values.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct SearchConstant(f32);

impl Eq for SearchConstant {}

impl SearchConstant {
    /// Largest constant a spec takes: far past any useful setting, small
    /// enough that no product in the search overflows.
    pub const MAX: f32 = 100.0;

    /// The constant, or `None` when it is not finite or outside `0..=MAX`.
    pub fn new(value: f32) -> Option<SearchConstant> {
        (value.is_finite() && (0.0..=Self::MAX).contains(&value)).then_some(SearchConstant(value))
    }

    /// Its value.
    pub fn get(self) -> f32 {
        self.0
    }
}

impl fmt::Display for SearchConstant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Largest alpha-beta transposition table (`hash=`), in MiB: more than any
/// search here fills, and small enough to be allocated on a laptop.
pub const MAX_HASH_MB: u32 = 4096;

/// Largest proof search of an MCTS player (`solve=`), in nodes: tens of
/// seconds of alpha-beta on one core, beyond any sensible time per move.
pub const MAX_SOLVE_NODES: u32 = 100_000_000;

/// Leaves per network call of an MCTS player unless its spec says otherwise.
pub const DEFAULT_MCTS_BATCH: u32 = 8;

/// Why a spec string was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// Parses `100ms`, `2s`, `1.5s`: from 1 ms to a million seconds.
pub fn parse_duration(s: &str) -> Result<Duration, SpecError> {
    let bad = || {
        SpecError(format!(
            "bad duration '{s}' (expected e.g. 100ms or 2s, from 1ms to 1000000s)"
        ))
    };
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(bad());
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !v.is_finite() || v * scale < 1e-3 || v * scale > 1e6 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(v * scale))
}

/// `on` or `off`.
fn parse_switch(key: &str, v: &str) -> Result<bool, SpecError> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(SpecError(format!("{key} must be on or off, not '{v}'"))),
    }
}

fn parse_constant(key: &str, v: &str) -> Result<SearchConstant, SpecError> {
    v.parse::<f32>()
        .ok()
        .and_then(SearchConstant::new)
        .ok_or_else(|| {
            SpecError(format!(
                "{key} must be a number from 0 to {}, not '{v}'",
                SearchConstant::MAX
            ))
        })
}

/// A contempt: a constant as [`parse_constant`] takes, at most 1.
fn parse_contempt(key: &str, v: &str) -> Result<SearchConstant, SpecError> {
    parse_constant(key, v)
        .ok()
        .filter(|c| c.get() <= 1.0)
        .ok_or_else(|| SpecError(format!("{key} must be a number from 0 to 1, not '{v}'")))
}

/// A temperature: a constant as [`parse_constant`] takes, above 0.
fn parse_temperature(key: &str, v: &str) -> Result<SearchConstant, SpecError> {
    parse_constant(key, v)
        .ok()
        .filter(|t| t.get() > 0.0)
        .ok_or_else(|| {
            SpecError(format!(
                "{key} must be a number above 0 and at most {}, not '{v}'",
                SearchConstant::MAX
            ))
        })
}

fn parse_u32(key: &str, v: &str, max: u32) -> Result<u32, SpecError> {
    match v.parse::<u32>() {
        Ok(n) if n >= 1 && n <= max => Ok(n),
        _ => Err(SpecError(format!(
            "{key} must be a whole number from 1 to {max}, not '{v}'"
        ))),
    }
}

/// The keys both searching players take: `movetime=T` and `egdb=DIR`.
/// Returns whether `key` was one of them.
fn search_key(
    key: &str,
    value: &str,
    movetime: &mut Option<Duration>,
    egdb: &mut Option<PathBuf>,
) -> Result<bool, SpecError> {
    match key {
        "movetime" => *movetime = Some(parse_duration(value)?),
        "egdb" if value.is_empty() => {
            return Err(SpecError("egdb needs a table directory (egdb=DIR)".into()));
        }
        "egdb" => *egdb = Some(PathBuf::from(value)),
        _ => return Ok(false),
    }
    Ok(true)
}

/// A searching player needs a budget: its own (`what`, given or not) or a
/// time per move.
fn require_budget(
    kind: &str,
    what: &str,
    given: bool,
    movetime: Option<Duration>,
) -> Result<(), SpecError> {
    if !given && movetime.is_none() {
        return Err(SpecError(format!("{kind} needs {what} or movetime=T")));
    }
    Ok(())
}

impl FromStr for PlayerSpec {
    type Err = SpecError;
    fn from_str(text: &str) -> Result<Self, SpecError> {
        let text = text.trim();
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let mut pairs = Vec::new();
        // `random` and `random:` take no keys; anywhere else an empty item
        // (`depth=2,,`) is a slip worth saying, not something to skip.
        let items = rest.split(',').map(str::trim);
        for item in items.filter(|_| !rest.trim().is_empty()) {
            if item.is_empty() {
                return Err(SpecError(format!(
                    "empty item in player spec '{text}' (items are key=value, separated by one comma)"
                )));
            }
            let (k, v) = item.split_once('=').ok_or_else(|| {
                SpecError(format!("expected key=value in player spec, got '{item}'"))
            })?;
            let k = k.trim();
            if pairs.iter().any(|&(seen, _)| seen == k) {
                return Err(SpecError(format!(
                    "key '{k}' given twice in player spec '{text}'"
                )));
            }
            pairs.push((k, v.trim()));
        }
        let unknown = |k: &str, known: &str| {
            SpecError(format!(
                "unknown key '{k}' for player '{kind}' (known: {known})"
            ))
        };
        match kind {
            "random" => match pairs.first() {
                Some((k, _)) => Err(unknown(k, "none")),
                None => Ok(PlayerSpec::Random),
            },
            "alphabeta" => {
                let (mut depth, mut movetime, mut hash_mb, mut egdb) = (None, None, 32, None);
                let mut eval = None;
                let mut eval_f32 = false;
                for (k, v) in pairs {
                    if search_key(k, v, &mut movetime, &mut egdb)? {
                        continue;
                    }
                    match k {
                        "depth" => depth = Some(parse_u32(k, v, 100)?),
                        "hash" => hash_mb = parse_u32(k, v, MAX_HASH_MB)? as usize,
                        "eval" if v.is_empty() => {
                            return Err(SpecError(
                                "eval needs a model directory (eval=DIR)".into(),
                            ));
                        }
                        "eval" => eval = Some(PathBuf::from(v)),
                        "quant" => {
                            eval_f32 = match v {
                                "f32" => true,
                                "int16" => false,
                                _ => {
                                    return Err(SpecError(format!(
                                        "quant must be int16 or f32, not '{v}'"
                                    )));
                                }
                            }
                        }
                        _ => return Err(unknown(k, "depth, movetime, hash, egdb, eval, quant")),
                    }
                }
                require_budget("alphabeta", "depth=N", depth.is_some(), movetime)?;
                Ok(PlayerSpec::AlphaBeta {
                    depth,
                    movetime,
                    hash_mb,
                    egdb,
                    eval,
                    eval_f32,
                })
            }
            "mcts" => {
                let (mut model, mut sims, mut movetime, mut egdb) = (None, None, None, None);
                let mut batch = DEFAULT_MCTS_BATCH;
                let mut backend = DeviceChoice::default();
                let (mut solve, mut cpuct, mut fpu, mut forced) = (None, None, None, None);
                let (mut ptemp, mut contempt) = (None, None);
                for (k, v) in pairs {
                    if search_key(k, v, &mut movetime, &mut egdb)? {
                        continue;
                    }
                    match k {
                        "model" => model = Some(PathBuf::from(v)),
                        "sims" => sims = Some(parse_u32(k, v, 10_000_000)?),
                        "batch" => batch = parse_u32(k, v, 256)?,
                        "solve" => solve = Some(u64::from(parse_u32(k, v, MAX_SOLVE_NODES)?)),
                        "cpuct" => cpuct = Some(parse_constant(k, v)?),
                        "fpu" => fpu = Some(parse_constant(k, v)?),
                        "forced" => forced = Some(parse_switch(k, v)?),
                        "ptemp" => ptemp = Some(parse_temperature(k, v)?),
                        "contempt" => contempt = Some(parse_contempt(k, v)?),
                        "backend" => {
                            backend = v
                                .parse()
                                .map_err(|e: tammi_model::ModelError| SpecError(e.to_string()))?
                        }
                        _ => {
                            return Err(unknown(
                                k,
                                "model, sims, movetime, egdb, batch, backend, solve, cpuct, fpu, forced, ptemp, contempt",
                            ));
                        }
                    }
                }
                require_budget("mcts", "sims=N", sims.is_some(), movetime)?;
                Ok(PlayerSpec::Mcts {
                    model,
                    sims,
                    movetime,
                    egdb,
                    batch,
                    backend,
                    solve,
                    cpuct,
                    fpu,
                    forced,
                    ptemp,
                    contempt,
                })
            }
            _ => Err(SpecError(format!(
                "unknown player '{kind}' (known: random, alphabeta, mcts)"
            ))),
        }
    }
}

impl fmt::Display for PlayerSpec {
    /// The spec as it parses back: `kind:key=value,...`, keys at their
    /// defaults left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, parts): (&str, Vec<Option<String>>) = match self {
            PlayerSpec::Random => return write!(f, "random"),
            PlayerSpec::AlphaBeta {
                depth,
                movetime,
                egdb,
                eval,
                eval_f32,
                ..
            } => (
                "alphabeta",
                vec![
                    eval.as_ref().map(|m| format!("eval={}", m.display())),
                    eval_f32.then(|| "quant=f32".to_string()),
                    depth.map(|d| format!("depth={d}")),
                    movetime_part(movetime),
                    egdb_part(egdb),
                ],
            ),
            PlayerSpec::Mcts {
                model,
                sims,
                movetime,
                egdb,
                batch,
                backend,
                solve,
                cpuct,
                fpu,
                forced,
                ptemp,
                contempt,
            } => (
                "mcts",
                vec![
                    model.as_ref().map(|m| format!("model={}", m.display())),
                    sims.map(|s| format!("sims={s}")),
                    movetime_part(movetime),
                    egdb_part(egdb),
                    (*batch != DEFAULT_MCTS_BATCH).then(|| format!("batch={batch}")),
                    (*backend != DeviceChoice::default()).then(|| format!("backend={backend}")),
                    solve.map(|n| format!("solve={n}")),
                    cpuct.map(|c| format!("cpuct={c}")),
                    fpu.map(|c| format!("fpu={c}")),
                    forced.map(|on| format!("forced={}", if on { "on" } else { "off" })),
                    ptemp.map(|t| format!("ptemp={t}")),
                    contempt.map(|c| format!("contempt={c}")),
                ],
            ),
        };
        let parts: Vec<String> = parts.into_iter().flatten().collect();
        write!(f, "{kind}:{}", parts.join(","))
    }
}

fn movetime_part(movetime: &Option<Duration>) -> Option<String> {
    movetime.map(|t| format!("movetime={}ms", t.as_millis()))
}

fn egdb_part(egdb: &Option<PathBuf>) -> Option<String> {
    egdb.as_ref().map(|dir| format!("egdb={}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        assert_eq!("random".parse::<PlayerSpec>().unwrap(), PlayerSpec::Random);
        assert_eq!(
            "alphabeta:depth=6".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::AlphaBeta {
                depth: Some(6),
                movetime: None,
                hash_mb: 32,
                egdb: None,
                eval: None,
                eval_f32: false,
            }
        );
        assert_eq!(
            "alphabeta:movetime=100ms".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::AlphaBeta {
                depth: None,
                movetime: Some(Duration::from_millis(100)),
                hash_mb: 32,
                egdb: None,
                eval: None,
                eval_f32: false,
            }
        );
        assert!(matches!(
            "mcts:model=models/x,sims=200"
                .parse::<PlayerSpec>()
                .unwrap(),
            PlayerSpec::Mcts {
                sims: Some(200),
                ..
            }
        ));
        for s in [
            "alphabeta:depth=6",
            "alphabeta:movetime=250ms",
            "alphabeta:depth=6,egdb=tables/english",
            "alphabeta:eval=models/english-ab,movetime=200ms",
            "alphabeta:eval=models/english-ab,quant=f32,depth=6",
            "random",
            "mcts:sims=5",
            "mcts:sims=5,egdb=tables/english",
            "mcts:movetime=200ms,batch=1",
            "mcts:model=m,sims=8,backend=cuda",
            "mcts:model=m,sims=32,solve=20000",
            "mcts:model=m,movetime=200ms,cpuct=2.5,fpu=0",
            "mcts:sims=8,fpu=0.4",
            "mcts:sims=8,forced=on",
            "mcts:model=m,movetime=200ms,cpuct=2,forced=off",
            "mcts:model=m,movetime=200ms,ptemp=1.4",
            "mcts:model=m,movetime=100ms,ptemp=2,contempt=0.3",
            "alphabeta:movetime=1ms",
        ] {
            assert_eq!(s.parse::<PlayerSpec>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn refuses_bad_specs() {
        for bad in [
            "alphabeta:depht=6",
            "alphabeta",
            "alphabeta:depth=0",
            "alphabeta:depth=x",
            "alphabeta:movetime=10",
            "random:depth=2",
            "mcts:model=x",
            "chess",
            "alphabeta:depth",
            "alphabeta:depth=6,egdb=",
            "mcts:sims=5,batch=0",
            "alphabeta:depth=6,hash=65536",
            "mcts:sims=5,batch=257",
            "mcts:sims=5,backend=tpu",
            "mcts:sims=5,solve=0",
            "mcts:sims=5,solve=-3",
            "mcts:sims=5,solve=100000001",
            "alphabeta:movetime=1e-300s",
            "alphabeta:movetime=0.5ms",
            "alphabeta:movetime=0ms",
            "alphabeta:movetime=1e7s",
            "alphabeta:depth=2,depth=3",
            "mcts:sims=5,sims=6",
            "alphabeta:depth=2,,",
            "alphabeta:,depth=2",
            "alphabeta:depth=2,eval=",
            "alphabeta:eval=m",
            "alphabeta:depth=2,eval=m,quant=int8",
            "mcts:sims=5,cpuct=-1",
            "mcts:sims=5,cpuct=nan",
            "mcts:sims=5,cpuct=inf",
            "mcts:sims=5,fpu=101",
            "mcts:sims=5,forced=yes",
            "mcts:sims=5,forced=",
            "alphabeta:depth=2,forced=on",
            "mcts:sims=5,fpu=",
            "alphabeta:depth=2,cpuct=2",
            "mcts:sims=5,ptemp=0",
            "mcts:sims=5,ptemp=-1",
            "mcts:sims=5,ptemp=nan",
            "mcts:sims=5,ptemp=",
            "alphabeta:depth=2,ptemp=1.2",
            "mcts:sims=5,contempt=1.5",
            "mcts:sims=5,contempt=-0.2",
            "mcts:sims=5,contempt=nan",
            "alphabeta:depth=2,contempt=0.1",
        ] {
            assert!(bad.parse::<PlayerSpec>().is_err(), "{bad}");
        }
    }
}
