//! Self-play on many machines: `tammi worker` processes write games into the
//! run directory, and a trainer with `[external] enabled = true` takes them
//! in.  The run directory on shared storage is the only thing they share; no
//! file locks are needed, only renames within one directory.
//!
//! ```text
//! RUN/workers/ID/
//!   status.json            the worker's heartbeat (host, pid, games, rate, last seen)
//!   chunk-NNNNNN/          games played with one model, numbered per worker:
//!     .start.json          written first: the model generation and seed of the chunk
//!                          (a chunk ends early, after a finished game, when the
//!                          run accepts a newer model: workers switch between games)
//!     shard-*.bin, .pdn    as in a generation directory (crate::generate)
//!     .pending/            finished games not yet in a shard
//!     .done.json           written last: the chunk is complete and can be trained on
//! RUN/external/gen-NNNN.json  the chunks a generation took in (its manifest)
//! ```
//!
//! Each worker has a directory of its own, so two workers never write the
//! same file whatever their ids' timing; a shard's full name
//! (`workers/ID/chunk-N/shard-A-B.bin`) says who played it.  A worker killed
//! at any moment loses only its unfinished games: its finished ones are in
//! `.pending/` or in shards, and restarted with the same id it resumes the
//! incomplete chunk (same model, same numbering) and then numbers on.
//!
//! Exactly once: a chunk becomes visible to the trainer only through its
//! `.done.json`, and it is taken in by the first manifest written after that;
//! a manifest lists every chunk it takes, so the union of manifests says
//! which games trained which generation, and no chunk is in two.  Staleness:
//! a chunk played with model generation `g` when the trainer's accepted
//! model is `a` is stale if `g + max_model_lag < a`; stale chunks are listed
//! in the manifest as such, counted per worker, kept on disk and not
//! trained on.

use crate::config::RunConfig;
use crate::generate::{ShardDir, play_generation_until, verify_generation};
use crate::replay::ReplayBuffer;
use crate::rundir::{RunDir, RunError, RunState, gen_name, io_err, read_json, write_json};
use crate::{Observer, Stage, derive_seed};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tammi_model::load_evaluator;
use tammi_selfplay::ShardOrigin;

const MODEL_FILE: &str = ".start.json";
const DONE_FILE: &str = ".done.json";
const STATUS_FILE: &str = "status.json";

/// Where the workers of a run write.
pub fn workers_dir(run: &RunDir) -> PathBuf {
    run.root.join("workers")
}

/// Where the manifests of a run are.
pub fn manifests_dir(run: &RunDir) -> PathBuf {
    run.root.join("external")
}

fn manifest_path(run: &RunDir, generation: u64) -> PathBuf {
    manifests_dir(run).join(format!("{}.json", gen_name(generation)))
}

fn chunk_name(seq: u64) -> String {
    format!("chunk-{seq:06}")
}

fn parse_chunk(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("chunk-")?;
    (digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Checks a worker id: 1 to 64 of `A-Z a-z 0-9 _ - .`, not starting with a
/// dot (it names a directory on every file system the workers share).
pub fn check_worker_id(id: &str) -> Result<(), RunError> {
    let ok = (1..=64).contains(&id.len())
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(RunError::Refused(format!(
            "worker id {id:?}: use 1 to 64 letters, digits, '_', '-' or '.', not starting with '.'"
        )))
    }
}

/// The default worker id: host name and process id (unique while both live;
/// give `--id` to resume a worker's numbering after a restart).
pub fn default_worker_id() -> String {
    let host = host_name();
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{host}-{}", std::process::id())
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into())
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `.start.json` of a chunk: what it is played with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkStart {
    /// Generation of the accepted model the chunk's games are played with.
    pub model_generation: u64,
    /// Games the chunk is to hold.
    pub games: u64,
    /// Seed of its games.
    pub seed: u64,
}

/// `.done.json` of a chunk: it is complete.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkDone {
    pub model_generation: u64,
    /// Games in its shards.
    pub games: u64,
    /// Positions (training samples) in them.
    pub positions: u64,
    /// When it was completed (seconds since 1970).
    pub finished_unix: f64,
}

/// A worker's heartbeat, `workers/ID/status.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerStatus {
    pub id: String,
    pub host: String,
    pub pid: u32,
    /// Model generation it plays with now.
    pub model_generation: u64,
    /// Games this process finished.
    pub games: u64,
    /// Its games per second since it started.
    pub games_per_second: f64,
    /// When it started and when it last wrote this (seconds since 1970).
    pub started_unix: f64,
    pub last_seen_unix: f64,
    /// "playing", "waiting for the run", or "stopped: ...".
    pub state: String,
}

/// One chunk as a manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ChunkRef {
    pub worker: String,
    pub chunk: u64,
    pub model_generation: u64,
    pub games: u64,
    pub positions: u64,
}

/// `external/gen-NNNN.json`: the chunks a generation took in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub generation: u64,
    /// The accepted model when the chunks were taken in.
    pub accepted: u64,
    /// Chunks trained on.
    pub fresh: Vec<ChunkRef>,
    /// Chunks too old to train on (see the module's staleness rule).
    pub stale: Vec<ChunkRef>,
    /// For each worker, the first chunk not taken in by this manifest or an
    /// earlier one.  A worker completes its chunks in order, so what is
    /// taken is always a prefix, and the next intake looks only past it
    /// (its cost grows with the new chunks, not with the run).
    #[serde(default)]
    pub next_chunk: BTreeMap<String, u64>,
}

impl Manifest {
    /// Games trained on.
    pub fn games(&self) -> u64 {
        self.fresh.iter().map(|c| c.games).sum()
    }
}

/// Games of `chunks` per worker, by id.
pub fn games_by_worker(chunks: &[ChunkRef]) -> BTreeMap<&str, u64> {
    let mut by = BTreeMap::new();
    for c in chunks {
        *by.entry(c.worker.as_str()).or_default() += c.games;
    }
    by
}

/// `w0 16, w1 24`: a tally of [`games_by_worker`] for a line or a table cell.
pub fn tally_text(by: &BTreeMap<&str, u64>) -> String {
    by.iter()
        .map(|(w, g)| format!("{w} {g}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn chunk_dir(run: &RunDir, worker: &str, chunk: u64) -> PathBuf {
    workers_dir(run).join(worker).join(chunk_name(chunk))
}

/// Every manifest of the run, in generation order.
pub fn read_manifests(run: &RunDir) -> Result<Vec<Manifest>, RunError> {
    let dir = manifests_dir(run);
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io_err(&dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io_err(&dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let generation = name
            .strip_prefix("gen-")
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| {
                RunError::Refused(format!(
                    "{}: not a manifest of this run (they are named gen-NNNN.json); move it out",
                    entry.path().display()
                ))
            })?;
        let m: Manifest = read_json(&entry.path())?;
        if m.generation != generation {
            return Err(RunError::Refused(format!(
                "{}: holds generation {} (a renamed manifest)",
                entry.path().display(),
                m.generation
            )));
        }
        out.push(m);
    }
    out.sort_by_key(|m| m.generation);
    Ok(out)
}

/// The ids of the workers that wrote into the run, sorted (their
/// directories under `workers/`).
fn worker_names(run: &RunDir) -> Result<Vec<String>, RunError> {
    let root = workers_dir(run);
    let entries = match std::fs::read_dir(&root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(&root)(e)),
    };
    let mut names = Vec::new();
    for w in entries {
        let w = w.map_err(io_err(&root))?;
        let name = w.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') && w.path().is_dir() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Completed chunks of every worker from `from[worker]` on (0 for a worker
/// not in it), in order, up to the first incomplete one.
fn new_done_chunks(
    run: &RunDir,
    from: &BTreeMap<String, u64>,
) -> Result<Vec<(String, u64, ChunkDone)>, RunError> {
    let mut out = Vec::new();
    for worker in worker_names(run)? {
        let mut chunk = from.get(&worker).copied().unwrap_or(0);
        loop {
            let done = chunk_dir(run, &worker, chunk).join(DONE_FILE);
            if !done.exists() {
                break;
            }
            out.push((worker.clone(), chunk, read_json(&done)?));
            chunk += 1;
        }
    }
    Ok(out)
}

/// Completed chunks of every worker: `(worker, chunk) -> done`.
fn done_chunks(run: &RunDir) -> Result<BTreeMap<(String, u64), ChunkDone>, RunError> {
    let mut out = BTreeMap::new();
    for worker in worker_names(run)? {
        let wdir = workers_dir(run).join(&worker);
        for c in std::fs::read_dir(&wdir).map_err(io_err(&wdir))? {
            let c = c.map_err(io_err(&wdir))?;
            let Some(chunk) = parse_chunk(&c.file_name().to_string_lossy()) else {
                continue;
            };
            let done = c.path().join(DONE_FILE);
            if done.exists() {
                out.insert((worker.clone(), chunk), read_json(&done)?);
            }
        }
    }
    Ok(out)
}

/// The trainer's self-play stage with external workers: waits until the
/// workers have completed chunks holding at least `games_per_generation`
/// fresh games not taken in before, then takes in every completed chunk
/// there is and writes the generation's manifest.  Returns it.
pub fn collect_generation(
    run: &RunDir,
    cfg: &RunConfig,
    state: &RunState,
    observer: &dyn Observer,
) -> Result<Manifest, RunError> {
    let generation = state.generation;
    let path = manifest_path(run, generation);
    if path.exists() {
        // Written before a kill: the stage is done.
        return read_json(&path);
    }
    let target = cfg.run.games_per_generation;
    let lag = cfg.external.max_model_lag;
    let poll = Duration::from_secs_f64(cfg.external.poll_seconds);
    let mut last_note = Instant::now();
    // Where the last intake stopped, per worker.
    let taken = match generation
        .checked_sub(1)
        .map(|g| manifest_path(run, g))
        .filter(|p| p.exists())
    {
        Some(p) => read_json::<Manifest>(&p)?.next_chunk,
        None => BTreeMap::new(),
    };
    loop {
        let mut manifest = Manifest {
            generation,
            accepted: state.accepted,
            fresh: Vec::new(),
            stale: Vec::new(),
            next_chunk: taken.clone(),
        };
        for (worker, chunk, done) in new_done_chunks(run, &taken)? {
            manifest.next_chunk.insert(worker.clone(), chunk + 1);
            let r = ChunkRef {
                worker,
                chunk,
                model_generation: done.model_generation,
                games: done.games,
                positions: done.positions,
            };
            if r.model_generation + lag < state.accepted {
                manifest.stale.push(r);
            } else {
                manifest.fresh.push(r);
            }
        }
        let fresh = manifest.games();
        observer.progress(
            fresh.min(target),
            target,
            &format!(
                "waiting for workers: {fresh} new games in {} chunks from {} workers{}; {}",
                manifest.fresh.len(),
                manifest
                    .fresh
                    .iter()
                    .map(|c| &c.worker)
                    .collect::<BTreeSet<_>>()
                    .len(),
                if manifest.stale.is_empty() {
                    String::new()
                } else {
                    format!(", {} stale chunks", manifest.stale.len())
                },
                liveness(&worker_statuses(run))
            ),
        );
        if fresh >= target {
            std::fs::create_dir_all(manifests_dir(run)).map_err(io_err(&manifests_dir(run)))?;
            write_json(&path, &manifest)?;
            return Ok(manifest);
        }
        if last_note.elapsed() > Duration::from_secs(300) {
            observer.line(&format!(
                "generation {generation} selfplay: still waiting for workers ({fresh} of \
                 {target} games; start some with `tammi worker --run {}`)",
                run.root.display()
            ));
            last_note = Instant::now();
        }
        std::thread::sleep(poll);
    }
}

/// Reads into `buffer` the fresh chunks of `generation`'s manifest, and
/// when the buffer is still empty (a trainer starting or resuming) those of
/// every earlier manifest first, in order.
pub fn scan_manifests(
    run: &RunDir,
    generation: u64,
    buffer: &mut ReplayBuffer,
) -> Result<(), RunError> {
    let manifests = if buffer.produced() == 0 {
        read_manifests(run)?
    } else {
        vec![read_json(&manifest_path(run, generation))?]
    };
    for m in manifests {
        if m.generation > generation {
            break;
        }
        for c in &m.fresh {
            buffer.scan(&chunk_dir(run, &c.worker, c.chunk))?;
        }
    }
    Ok(())
}

/// What [`verify_external`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExternalCheck {
    /// Completed chunks and their games.
    pub chunks: u64,
    pub games: u64,
    /// Of those, taken in by a manifest (fresh or stale).
    pub taken_chunks: u64,
    /// Games trained on, per worker.
    pub fresh_games: BTreeMap<String, u64>,
    /// Stale games per worker.
    pub stale_games: BTreeMap<String, u64>,
    /// Incomplete chunks (a worker stopped or still playing) and the
    /// finished games they hold so far (in shards or pending).
    pub incomplete_chunks: u64,
}

/// Checks the external side of a run: every chunk's shards hold exactly
/// the games their names say, a completed chunk holds the games its
/// `done.json` says, every manifest's chunks exist and are complete with
/// the same counts, no chunk is in two manifests, manifests exist for
/// generations up to the run's state only, and their games add up to the
/// `games` of `state.json`.
pub fn verify_external(run: &RunDir, state: &RunState) -> Result<ExternalCheck, RunError> {
    let mut check = ExternalCheck::default();
    let done = done_chunks(run)?;
    for name in worker_names(run)? {
        let wdir = workers_dir(run).join(&name);
        for c in std::fs::read_dir(&wdir).map_err(io_err(&wdir))? {
            let c = c.map_err(io_err(&wdir))?;
            let Some(seq) = parse_chunk(&c.file_name().to_string_lossy()) else {
                continue;
            };
            let games = verify_generation(ShardDir {
                path: &c.path(),
                origin: chunk_origin(state),
            })?;
            match done.get(&(name.clone(), seq)) {
                Some(d) if d.games != games => {
                    return Err(RunError::Refused(format!(
                        "{}: {games} games in its shards, its .done.json says {}",
                        c.path().display(),
                        d.games
                    )));
                }
                Some(_) => {
                    check.chunks += 1;
                    check.games += games;
                }
                None => check.incomplete_chunks += 1,
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut counted = 0;
    let manifests = read_manifests(run)?;
    for m in &manifests {
        if m.generation > state.generation {
            return Err(RunError::Refused(format!(
                "{}: a manifest for generation {} but state.json is at generation {}",
                manifest_path(run, m.generation).display(),
                m.generation,
                state.generation
            )));
        }
        // The current generation's manifest may be written while state.json
        // still says self-play (a kill between the two): its games are not
        // counted yet.
        if m.generation < state.generation || state.stage != Stage::Selfplay {
            counted += m.games();
        }
        for (c, fresh) in m
            .fresh
            .iter()
            .map(|c| (c, true))
            .chain(m.stale.iter().map(|c| (c, false)))
        {
            if !seen.insert((c.worker.clone(), c.chunk)) {
                return Err(RunError::Refused(format!(
                    "chunk {} of worker {} is in two manifests (the second: generation {})",
                    c.chunk, c.worker, m.generation
                )));
            }
            match done.get(&(c.worker.clone(), c.chunk)) {
                Some(d) if d.games == c.games && d.model_generation == c.model_generation => {}
                _ => {
                    return Err(RunError::Refused(format!(
                        "generation {}'s manifest lists chunk {} of worker {} ({} games), which \
                         is missing, incomplete or holds other games",
                        m.generation, c.chunk, c.worker, c.games
                    )));
                }
            }
            let tally = if fresh {
                &mut check.fresh_games
            } else {
                &mut check.stale_games
            };
            *tally.entry(c.worker.clone()).or_default() += c.games;
            check.taken_chunks += 1;
        }
    }
    // What was taken of each worker is the prefix the last manifest names.
    if let Some(last) = manifests.last() {
        for (worker, &next) in &last.next_chunk {
            let taken = seen.iter().filter(|(w, _)| w == worker).count() as u64;
            if taken != next || (0..next).any(|c| !seen.contains(&(worker.clone(), c))) {
                return Err(RunError::Refused(format!(
                    "the manifests take in {taken} chunks of worker {worker}, not its chunks \
                     0..{next} as generation {}'s manifest says",
                    last.generation
                )));
            }
        }
        if seen.iter().any(|(w, _)| !last.next_chunk.contains_key(w)) {
            return Err(RunError::Refused(format!(
                "generation {}'s manifest does not name every worker taken in before",
                last.generation
            )));
        }
    }
    if counted != state.games {
        return Err(RunError::Refused(format!(
            "the manifests of finished generations take in {counted} games, state.json counts \
             {} (a manifest was deleted or added)",
            state.games
        )));
    }
    Ok(check)
}

/// Limits of one `tammi worker` process.
#[derive(Clone, Debug, Default)]
pub struct WorkerOptions {
    /// Its id (see [`check_worker_id`]); the same id resumes its numbering.
    pub id: String,
    /// Stop after playing this many games (in this process).
    pub games: Option<u64>,
    /// Stop after this many hours.
    pub hours: Option<f64>,
    /// Self-play threads (default: the run's `selfplay.threads`).
    pub threads: Option<usize>,
    /// A worker started before its run exists (a cluster starts jobs in any
    /// order) waits this long for it.
    pub wait_for_run_seconds: f64,
    /// Stop once the trainer has finished this generation (checked between
    /// chunks), e.g. the run's generation limit.
    pub until_generation: Option<u64>,
}

/// What a worker did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerSummary {
    /// Games finished by this process.
    pub games: u64,
    /// Chunks it completed.
    pub chunks: u64,
}

/// Writes the heartbeat at most every two seconds (and always when asked).
struct Heartbeat {
    path: PathBuf,
    status: Mutex<(WorkerStatus, Instant)>,
    started: Instant,
}

impl Heartbeat {
    /// Whether the last write is older than `every`.
    fn due(&self, every: Duration) -> bool {
        self.status
            .lock()
            .expect("no panic while locked")
            .1
            .elapsed()
            >= every
    }

    fn update(&self, force: bool, f: impl FnOnce(&mut WorkerStatus)) -> Result<(), RunError> {
        let mut guard = self.status.lock().expect("no panic while locked");
        f(&mut guard.0);
        if force || guard.1.elapsed() > Duration::from_secs(2) {
            let secs = self.started.elapsed().as_secs_f64().max(1e-9);
            guard.0.games_per_second = guard.0.games as f64 / secs;
            guard.0.last_seen_unix = unix_now();
            guard.1 = Instant::now();
            write_json(&self.path, &guard.0)?;
        }
        Ok(())
    }
}

/// Forwards a chunk's progress to the worker's observer and counts games
/// into the heartbeat.
struct ChunkObserver<'a> {
    inner: &'a dyn Observer,
    heartbeat: &'a Heartbeat,
    before: u64,
    failure: Mutex<Option<RunError>>,
}

impl Observer for ChunkObserver<'_> {
    fn stage(&self, generation: u64, stage: Stage, total: u64, unit: &str) {
        self.inner.stage(generation, stage, total, unit);
    }
    fn progress(&self, done: u64, total: u64, message: &str) {
        self.inner.progress(done, total, message);
        let games_now = self.before + done;
        if let Err(e) = self
            .heartbeat
            .update(false, |s| s.games = s.games.max(games_now))
        {
            self.failure
                .lock()
                .expect("no panic while locked")
                .get_or_insert(e);
        }
    }
    fn line(&self, text: &str) {
        self.inner.line(text);
    }
}

/// Waits for the run to be created (a worker may start before its trainer).
fn wait_for_run(root: &Path, seconds: f64, observer: &dyn Observer) -> Result<(), RunError> {
    let run = RunDir::new(root);
    let started = Instant::now();
    let mut noted = false;
    while !run.exists() {
        if started.elapsed().as_secs_f64() >= seconds {
            return Err(RunError::Refused(format!(
                "{} holds no run after {seconds:.0} s of waiting (start it with `tammi train \
                 --config FILE --run {}`)",
                root.display(),
                root.display()
            )));
        }
        if !noted {
            observer.line(&format!(
                "waiting for the run {} to be created",
                root.display()
            ));
            noted = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Ok(())
}

/// The next chunk of a worker: the incomplete one to resume, or a new one.
fn next_chunk(dir: &Path) -> Result<(u64, Option<ChunkStart>), RunError> {
    let mut last = None;
    for c in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let c = c.map_err(io_err(dir))?;
        if let Some(seq) = parse_chunk(&c.file_name().to_string_lossy()) {
            last = last.max(Some(seq));
        }
    }
    let Some(seq) = last else {
        return Ok((0, None));
    };
    let chunk = dir.join(chunk_name(seq));
    if chunk.join(DONE_FILE).exists() {
        return Ok((seq + 1, None));
    }
    match tammi_files::read_text_limited(&chunk.join(MODEL_FILE), tammi_files::limits::JSON) {
        Ok(text) => match serde_json::from_str::<ChunkStart>(&text) {
            Ok(start) => Ok((seq, Some(start))),
            Err(e) => Err(RunError::Refused(format!(
                "{}: unreadable: {e}",
                chunk.join(MODEL_FILE).display()
            ))),
        },
        // Killed before .start.json was in place: the chunk holds no game yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((seq, None)),
        Err(e) => Err(io_err(&chunk.join(MODEL_FILE))(e)),
    }
}

/// A stable number for a worker id (FNV-1a), mixed into its seeds.
fn id_hash(id: &str) -> u64 {
    id.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// A self-play worker: plays chunks of games with the run's accepted model
/// (looked up again before each chunk) until a limit, writing them under
/// `workers/ID/`.  Resumes an incomplete chunk of the same id first.
pub fn run_worker(
    root: &Path,
    options: &WorkerOptions,
    observer: &dyn Observer,
) -> Result<WorkerSummary, RunError> {
    check_worker_id(&options.id)?;
    let run = RunDir::new(root);
    wait_for_run(root, options.wait_for_run_seconds, observer)?;
    let mut cfg = crate::run_config(root)?;
    if !cfg.external.enabled {
        return Err(RunError::Refused(format!(
            "{} plays its own self-play ([external] enabled = false in its config.toml): its \
             trainer would never read a worker's games",
            root.display()
        )));
    }
    if let Some(t) = options.threads {
        cfg.selfplay.threads = t.max(1);
    }
    let variant = cfg.variant();
    let dir = workers_dir(&run).join(&options.id);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let seed_base = derive_seed(&[cfg.run.seed, id_hash(&options.id), 0x3017]);
    let (setup, warning) = tammi_selfplay::run_setup(&cfg.selfplay, variant, seed_base)?;
    if let Some(w) = &warning {
        observer.line(w);
    }
    let heartbeat = Heartbeat {
        path: dir.join(STATUS_FILE),
        status: Mutex::new((
            WorkerStatus {
                id: options.id.clone(),
                host: host_name(),
                pid: std::process::id(),
                model_generation: 0,
                games: 0,
                games_per_second: 0.0,
                started_unix: unix_now(),
                last_seen_unix: unix_now(),
                state: "playing".into(),
            },
            Instant::now(),
        )),
        started: Instant::now(),
    };
    wait_for_previous(&heartbeat.path, &options.id, observer)?;
    heartbeat.update(true, |_| {})?;
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // The heartbeat goes on while a long game is played.
        scope.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                if heartbeat.due(HEARTBEAT) {
                    // A failed write shows at the next chunk's write.
                    let _ = heartbeat.update(true, |_| {});
                }
            }
        });
        let result = play_chunks(&WorkerRun {
            run: &run,
            cfg: &cfg,
            dir: &dir,
            seed_base,
            setup: &setup,
            options,
            heartbeat: &heartbeat,
            observer,
        });
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        result
    })
}

/// How often a worker's heartbeat is written while it plays.
const HEARTBEAT: Duration = Duration::from_secs(10);
/// A heartbeat older than this belongs to a worker that is gone.
const HEARTBEAT_STALE: Duration = Duration::from_secs(30);

/// Waits until no other live process uses worker id `id`: one on this host
/// is live if its pid is; one elsewhere if its heartbeat is fresher than
/// [`HEARTBEAT_STALE`].  Refused if it stays live for two such periods.
fn wait_for_previous(path: &Path, id: &str, observer: &dyn Observer) -> Result<(), RunError> {
    let started = Instant::now();
    let mut noted = false;
    loop {
        let Ok(prev) = read_json::<WorkerStatus>(path) else {
            return Ok(());
        };
        let me = (prev.host == host_name()) && prev.pid == std::process::id();
        let live = !me
            && !prev.state.starts_with("stopped")
            && if prev.host == host_name() {
                crate::rundir::process_alive(&prev.pid.to_string())
            } else {
                seconds_since(&prev) < HEARTBEAT_STALE.as_secs_f64()
            };
        if !live {
            return Ok(());
        }
        if started.elapsed() > 2 * HEARTBEAT_STALE {
            return Err(RunError::Refused(format!(
                "worker id {id} is in use by process {} on {} (heard from {:.0} s ago); give \
                 this worker another --id",
                prev.pid,
                prev.host,
                seconds_since(&prev)
            )));
        }
        if !noted {
            observer.line(&format!(
                "worker id {id} was last used by process {} on {}: waiting for it to stop",
                prev.pid, prev.host
            ));
            noted = true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A worker at work: its run and config, its own directory, the seed its
/// chunks derive from, the self-play setup, its options, heartbeat and observer.
#[derive(Clone, Copy)]
struct WorkerRun<'a> {
    run: &'a RunDir,
    cfg: &'a RunConfig,
    dir: &'a Path,
    seed_base: u64,
    setup: &'a tammi_selfplay::RunSetup,
    options: &'a WorkerOptions,
    heartbeat: &'a Heartbeat,
    observer: &'a dyn Observer,
}

/// The chunk loop of [`run_worker`].
fn play_chunks(w: &WorkerRun<'_>) -> Result<WorkerSummary, RunError> {
    let WorkerRun {
        run,
        cfg,
        dir,
        seed_base,
        setup,
        options,
        heartbeat,
        observer,
    } = *w;
    let variant = cfg.variant();
    let backend = cfg.backend();
    let started = Instant::now();
    let mut summary = WorkerSummary::default();
    loop {
        if options.games.is_some_and(|n| summary.games >= n) {
            break;
        }
        if options
            .hours
            .is_some_and(|h| started.elapsed().as_secs_f64() >= h * 3600.0)
        {
            break;
        }
        let state: RunState = read_json(&run.state())?;
        if options
            .until_generation
            .is_some_and(|g| state.generation > g)
        {
            break;
        }
        let (seq, resumed) = next_chunk(dir)?;
        let chunk = dir.join(chunk_name(seq));
        let start = match resumed {
            Some(start) => start,
            None => {
                let left = options
                    .games
                    .map_or(u64::MAX, |n| n.saturating_sub(summary.games));
                let start = ChunkStart {
                    model_generation: state.accepted,
                    games: cfg.external.chunk_games.min(left),
                    seed: derive_seed(&[seed_base, seq]),
                };
                std::fs::create_dir_all(&chunk).map_err(io_err(&chunk))?;
                write_json(&chunk.join(MODEL_FILE), &start)?;
                start
            }
        };
        let uniform = start.model_generation == 0 && cfg.run.uniform_first_generation;
        let evaluator = load_evaluator(
            (!uniform)
                .then(|| run.model(start.model_generation))
                .as_deref(),
            variant,
            backend,
        )?;
        heartbeat.update(true, |s| {
            s.model_generation = start.model_generation;
            s.state = "playing".into();
        })?;
        observer.stage(
            start.model_generation,
            Stage::Selfplay,
            start.games,
            "games",
        );
        let chunk_observer = ChunkObserver {
            inner: observer,
            heartbeat,
            before: summary.games,
            failure: Mutex::new(None),
        };
        // A newer accepted model ends the chunk at the next finished game.
        let superseded = || {
            read_json::<RunState>(&run.state()).is_ok_and(|s| s.accepted != start.model_generation)
        };
        let played = play_generation_until(
            ShardDir {
                path: &chunk,
                origin: chunk_origin(&state),
            },
            evaluator.as_ref(),
            &cfg.selfplay,
            setup,
            start.games,
            start.seed,
            &chunk_observer,
            &superseded,
        )?;
        if let Some(e) = chunk_observer
            .failure
            .into_inner()
            .expect("no panic while locked")
        {
            return Err(e);
        }
        let positions = chunk_positions(&chunk)?;
        write_json(
            &chunk.join(DONE_FILE),
            &ChunkDone {
                model_generation: start.model_generation,
                games: played.games,
                positions,
                finished_unix: unix_now(),
            },
        )?;
        summary.games += played.played;
        summary.chunks += 1;
        heartbeat.update(true, |s| s.games = summary.games)?;
        observer.line(&format!(
            "worker {} chunk {seq}: {} games with {} ({} played now, {:.2} games/s)",
            options.id,
            played.games,
            gen_name(start.model_generation),
            played.played,
            played.stats.games_per_second()
        ));
    }
    heartbeat.update(true, |s| {
        s.games = summary.games;
        s.state = "stopped: limit reached".into();
    })?;
    Ok(summary)
}

/// Samples in a chunk's shards.
fn chunk_positions(dir: &Path) -> Result<u64, RunError> {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let path = entry.map_err(io_err(dir))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with("shard-") && name.ends_with(".bin") {
            let shard = tammi_selfplay::read_shard(&path)?;
            n += shard
                .games
                .iter()
                .map(|g| g.samples.len() as u64)
                .sum::<u64>();
        }
    }
    Ok(n)
}

/// The origin of a worker's chunk shards: the run, no generation yet (the
/// generation that takes a chunk in is in its manifest).
fn chunk_origin(state: &RunState) -> ShardOrigin {
    ShardOrigin {
        run: state.run_id,
        generation: 0,
    }
}

/// Every worker's heartbeat, by id (unreadable ones are skipped).
pub fn worker_statuses(run: &RunDir) -> Vec<WorkerStatus> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(workers_dir(run)) {
        for e in entries.flatten() {
            if let Ok(s) = read_json::<WorkerStatus>(&e.path().join(STATUS_FILE)) {
                out.push(s);
            }
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// One phrase on the workers' heartbeats: how many are live (heard from in
/// the last [`HEARTBEAT_STALE`] and playing), their games per second
/// together, and the oldest heartbeat among them.
pub fn liveness(statuses: &[WorkerStatus]) -> String {
    let live: Vec<&WorkerStatus> = statuses
        .iter()
        .filter(|s| s.state == "playing" && seconds_since(s) < HEARTBEAT_STALE.as_secs_f64())
        .collect();
    let rate: f64 = live.iter().map(|s| s.games_per_second).sum();
    let oldest = live.iter().map(|s| seconds_since(s)).fold(0.0, f64::max);
    format!(
        "{} of {} workers live, {rate:.2} games/s together, oldest heartbeat {oldest:.0} s ago",
        live.len(),
        statuses.len()
    )
}

/// Seconds since a worker was last heard from.
pub fn seconds_since(status: &WorkerStatus) -> f64 {
    (unix_now() - status.last_seen_unix).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_parse_back() {
        assert_eq!(parse_chunk(&chunk_name(42)), Some(42));
        assert_eq!(parse_chunk("chunk-42"), None);
        assert_eq!(parse_chunk("chunk-00004x"), None);
        assert_eq!(parse_chunk(".chunk-000001"), None);
    }

    #[test]
    fn worker_ids_are_checked() {
        for good in ["task-0", "node17.cluster_3", "a"] {
            assert!(check_worker_id(good).is_ok(), "{good}");
        }
        for bad in ["", ".hidden", "a/b", "..", "x y", &"z".repeat(65)] {
            assert!(check_worker_id(bad).is_err(), "{bad:?}");
        }
        assert!(check_worker_id(&default_worker_id()).is_ok());
    }

    #[test]
    fn liveness_counts_playing_workers_heard_from_recently() {
        let now = unix_now();
        let status = |id: &str, ago: f64, state: &str, rate: f64| WorkerStatus {
            id: id.into(),
            host: "h".into(),
            pid: 1,
            model_generation: 3,
            games: 10,
            games_per_second: rate,
            started_unix: now - 100.0,
            last_seen_unix: now - ago,
            state: state.into(),
        };
        let all = [
            status("a", 1.0, "playing", 1.5),
            status("b", 12.0, "playing", 0.5),
            status("c", 300.0, "playing", 9.0),
            status("d", 1.0, "stopped: limit reached", 9.0),
        ];
        assert_eq!(
            liveness(&all),
            "2 of 4 workers live, 2.00 games/s together, oldest heartbeat 12 s ago"
        );
    }

    #[test]
    fn id_hash_is_stable_and_tells_ids_apart() {
        assert_eq!(id_hash("task-0"), id_hash("task-0"));
        assert_ne!(id_hash("task-0"), id_hash("task-1"));
    }
}
