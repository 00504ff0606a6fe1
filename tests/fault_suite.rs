//! The fault suite: what a hostile new user does to tammi, case by case,
//! and the table of what came of it (issue 40).
//!
//! Every case runs the built binary (or talks to it over the Hub protocol,
//! DXP or HTTP) under a timeout and is judged one of: a clean error (exit 2,
//! one `error:` line naming what is wrong; a protocol error reply; a JSON
//! 4xx), an unclear error (refused, but not so: another exit code, several
//! lines, the wrong words), a panic (exit 101, "panicked", a signal), a
//! hang (past its timeout), wrongly accepted (it succeeded), or data
//! damaged (a file it was given changed, a device was replaced).  The test
//! fails on any case outside the first column.  The table:
//!
//! ```sh
//! cargo test --release --test fault_suite -- --nocapture
//! ```
//!
//! (also written to `target/tmp/fault-suite.md`).

mod common;
use common::{copy_tree, edit_json, flip_bytes};

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_tammi");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The longest any one case may take.
const CASE_TIMEOUT: Duration = Duration::from_secs(40);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Clean,
    Unclear,
    Panic,
    Hang,
    WronglyAccepted,
    Damaged,
}

struct Outcome {
    category: &'static str,
    case: String,
    verdict: Verdict,
    detail: String,
}

/// What a command-line case must do.
enum Expect {
    /// Exit 2 with one `error:` line containing this text (each part of
    /// it, where ` && ` joins several).
    Fails(String),
    /// Exit 0 (a device output that takes the bytes).
    Succeeds,
    /// A Hub session: exit 0, an `error` line for the bad line, and the
    /// session still answers `ping` with `pong` at the end.
    HubGoesOn,
}

struct Case {
    category: &'static str,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    /// Standard output into `/dev/full`.
    full_stdout: bool,
    expect: Expect,
    /// Files and directories that must be the same afterwards (devices must
    /// still be devices).
    watch: Vec<PathBuf>,
    /// What was done to the input, when the arguments do not say.
    label: Option<String>,
}

fn case(category: &'static str, args: &[&str], needle: &str) -> Case {
    Case {
        category,
        args: args.iter().map(|s| s.to_string()).collect(),
        stdin: None,
        full_stdout: false,
        expect: Expect::Fails(needle.into()),
        watch: Vec::new(),
        label: None,
    }
}

impl Case {
    fn watching(mut self, path: impl Into<PathBuf>) -> Case {
        self.watch.push(path.into());
        self
    }
    fn with_full_stdout(mut self) -> Case {
        self.full_stdout = true;
        self
    }
    fn labelled(mut self, label: &str) -> Case {
        self.label = Some(label.into());
        self
    }
    fn name(&self) -> String {
        let mut name = self.args.join(" ");
        if let Some(label) = &self.label {
            name = format!("{label}: {name}");
        }
        if let Some(input) = &self.stdin {
            let shown: String =
                String::from_utf8_lossy(&input[..input.len().min(60)]).replace('\n', "\\n");
            name += &format!(" <<< {shown}");
        }
        if self.full_stdout {
            name += " > /dev/full";
        }
        name
    }
}

/// A digest of a file or a directory tree (relative names, sizes, bytes);
/// a character device is `chardev`.
fn fingerprint(path: &Path) -> String {
    use std::hash::{Hash, Hasher};
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(m) = std::fs::metadata(path)
            && m.file_type().is_char_device()
        {
            return "chardev".into();
        }
    }
    let mut entries = Vec::new();
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        if dir.is_file() {
            out.push((String::new(), std::fs::read(dir).unwrap_or_default()));
            return;
        }
        let Ok(list) = std::fs::read_dir(dir) else {
            return;
        };
        for e in list.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap_or(&p).display().to_string();
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    walk(path, path, &mut entries);
    entries.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    entries.hash(&mut h);
    format!("{} files, {:016x}", entries.len(), h.finish())
}

/// Waits for a child up to `limit`; `None` (and the child killed) past it.
fn wait_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn run_case(c: &Case, scratch: &Path, id: usize) -> Outcome {
    let before: Vec<String> = c.watch.iter().map(|p| fingerprint(p)).collect();
    let out_path = scratch.join(format!("case-{id}.out"));
    let err_path = scratch.join(format!("case-{id}.err"));
    let stdout = if c.full_stdout {
        File::options()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
    } else {
        File::create(&out_path).unwrap()
    };
    let mut child = Command::new(BIN)
        .args(&c.args)
        .current_dir(ROOT)
        .stdin(if c.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(stdout)
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .expect("tammi starts");
    if let (Some(bytes), Some(mut pipe)) = (c.stdin.clone(), child.stdin.take()) {
        // In a thread: a process that stops reading must not block the suite.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let status = wait_within(&mut child, CASE_TIMEOUT);
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    let out = std::fs::read_to_string(&out_path).unwrap_or_default();
    let after: Vec<String> = c.watch.iter().map(|p| fingerprint(p)).collect();
    let (verdict, detail) = judge(c, status, &out, &err, before != after);
    Outcome {
        category: c.category,
        case: c.name(),
        verdict,
        detail,
    }
}

fn judge(
    c: &Case,
    status: Option<std::process::ExitStatus>,
    out: &str,
    err: &str,
    changed: bool,
) -> (Verdict, String) {
    let last = err.lines().last().unwrap_or("").to_string();
    let Some(status) = status else {
        return (Verdict::Hang, format!("killed after {CASE_TIMEOUT:?}"));
    };
    let code = status.code();
    if code.is_none() || code == Some(101) || err.contains("panicked") {
        return (Verdict::Panic, format!("{status}: {last}"));
    }
    if changed {
        return (Verdict::Damaged, format!("{status}: {last}"));
    }
    match &c.expect {
        Expect::Fails(needle) => {
            let lines = err.lines().count();
            if code == Some(0) {
                (Verdict::WronglyAccepted, format!("exit 0: {}", out.trim()))
            } else if code == Some(2)
                && lines == 1
                && last.starts_with("error: ")
                && needle.split(" && ").all(|part| last.contains(part))
            {
                (Verdict::Clean, last)
            } else {
                (
                    Verdict::Unclear,
                    format!("{status}, {lines} lines, wanted '{needle}': {err}"),
                )
            }
        }
        Expect::Succeeds => {
            if code == Some(0) {
                (Verdict::Clean, "exit 0".into())
            } else {
                (Verdict::Unclear, format!("{status}: {last}"))
            }
        }
        Expect::HubGoesOn => {
            let errors = out.lines().filter(|l| l.starts_with("error")).count();
            let pong = out.lines().last() == Some("pong");
            if code == Some(0) && errors == 1 && pong {
                let answer = out.lines().find(|l| l.starts_with("error")).unwrap_or("");
                (Verdict::Clean, answer.to_string())
            } else if errors == 0 && pong {
                (Verdict::WronglyAccepted, out.trim().to_string())
            } else {
                (
                    Verdict::Unclear,
                    format!("{status}, {errors} error lines: {out} {err}"),
                )
            }
        }
    }
}

/// Runs the cases on a few threads; outcomes in the cases' order.
fn run_all(cases: &[Case], scratch: &Path) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(c) = cases.get(i) else { break };
                    let o = run_case(c, scratch, i);
                    done.lock().unwrap().push((i, o));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, o)| o).collect()
}

// ---------------------------------------------------------------- cases

fn argument_cases() -> Vec<Case> {
    const C: &str = "arguments";
    let mut cases = Vec::new();
    for cmd in [
        &["moves"][..],
        &["analyze"],
        &["match"],
        &["ratings"],
        &["openings"],
        &["play"],
        &["hub"],
        &["serve"],
        &["dxp"],
        &["perft"],
        &["infer"],
        &["selfplay"],
        &["train"],
        &["worker"],
        &["export"],
        &["egdb", "build"],
        &["bench", "nn"],
    ] {
        let mut args = cmd.to_vec();
        args.push("--no-such-flag");
        cases.push(case(C, &args, "--no-such-flag"));
    }
    let bad: &[(&[&str], &str)] = &[
        (&["no-such-command"], "no-such-command"),
        (
            &[
                "egdb",
                "build",
                "--variant",
                "konane",
                "--pieces",
                "2",
                "--out",
                "/nonexistent/t",
            ],
            "full-board",
        ),
        (
            &["egdb", "build", "--pieces", "0", "--out", "/nonexistent/t"],
            "0 pieces",
        ),
        (
            &["match", "--a", "random", "--b", "random", "--games", "0"],
            "--games",
        ),
        (
            &["match", "--a", "random", "--b", "random", "--games", "-3"],
            "-3",
        ),
        (
            &["match", "--a", "random", "--b", "random", "--games", "abc"],
            "--games",
        ),
        (
            &["match", "--a", "random", "--b", "random", "--threads", "0"],
            "--threads",
        ),
        (
            &[
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--max-plies",
                "0",
            ],
            "--max-plies",
        ),
        (
            &[
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--max-plies",
                "100001",
            ],
            "--max-plies",
        ),
        (&["match", "--a", "random"], "--b"),
        (&["perft", "--depth", "0"], "--depth"),
        (&["perft", "--depth", "31"], "--depth"),
        (&["perft", "--depth", "x"], "--depth"),
        (&["moves", "--variant", "chess"], "chess"),
        (&["analyze", "--variant", "go"], "go"),
        (
            &["train", "--run", "/nonexistent/run", "--hours", "nan"],
            "--hours",
        ),
        (
            &["train", "--run", "/nonexistent/run", "--hours=-1"],
            "--hours",
        ),
        (
            &["train", "--run", "/nonexistent/run", "--generations", "0"],
            "--generations",
        ),
        (&["train", "--run", "/nonexistent/run"], "/nonexistent/run"),
        (&["serve", "--searches", "0"], "--searches"),
        (&["serve", "--searches", "99999999999"], "--searches"),
        (&["serve", "--read-timeout", "0"], "--read-timeout"),
        (&["serve", "--read-timeout", "nan"], "--read-timeout"),
        (&["serve", "--addr", "nowhere"], "--addr"),
        (&["dxp"], "--listen"),
        (&["dxp", "--listen", "70000"], "--listen"),
        (&["hub", "--player", "nonsense"], "nonsense"),
        (&["play", "--player", "nonsense"], "nonsense"),
        (&["bench", "nn", "--callers", "100000"], "callers"),
        (
            &[
                "export",
                "--model",
                "models/english-default",
                "--format",
                "tflite",
                "--out",
                "x",
            ],
            "tflite",
        ),
        (
            &[
                "worker",
                "--run",
                "/nonexistent/run",
                "--wait-for-run",
                "0.5",
            ],
            "/nonexistent/run",
        ),
        (
            &["worker", "--run", "/nonexistent/run", "--wait-for-run=-1"],
            "--wait-for-run",
        ),
        (
            &[
                "ratings",
                "--results",
                "/nonexistent/r.jsonl",
                "--out",
                "/nonexistent/o",
            ],
            "/nonexistent/r.jsonl",
        ),
    ];
    for (args, needle) in bad {
        cases.push(case(C, args, needle));
    }
    cases
}

fn spec_cases() -> Vec<Case> {
    let specs: &[(&str, &str)] = &[
        ("", "unknown player"),
        ("minimax", "minimax"),
        ("ALPHABETA:depth=1", "ALPHABETA"),
        ("alphabeta", "depth=N or movetime=T"),
        ("alphabeta:", "depth=N or movetime=T"),
        ("alphabeta:depth", "key=value"),
        ("alphabeta:depth=", "depth"),
        ("alphabeta:depth=0", "depth"),
        ("alphabeta:depth=101", "depth"),
        ("alphabeta:depth=-1", "depth"),
        ("alphabeta:depth=1e9", "depth"),
        ("alphabeta:depth=2,depth=3", "given twice"),
        ("alphabeta:depth=2,,", "empty item"),
        ("alphabeta:movetime=0ms", "duration"),
        ("alphabeta:movetime=1e-300s", "duration"),
        ("alphabeta:movetime=1e308s", "duration"),
        ("alphabeta:movetime=18446744073709551616ms", "duration"),
        ("alphabeta:movetime=abc", "duration"),
        ("alphabeta:movetime=10", "duration"),
        ("alphabeta:depth=4,hash=65536", "hash"),
        ("alphabeta:depth=4,hash=-1", "hash"),
        ("alphabeta:colour=red", "colour"),
        ("alphabeta:depth=2,egdb=", "egdb"),
        ("alphabeta:depth=2,eval=", "eval"),
        (
            "alphabeta:depth=2,eval=/nonexistent/net",
            "/nonexistent/net",
        ),
        ("mcts:sims=0", "sims"),
        ("mcts:sims=abc", "sims"),
        ("mcts:sims=99999999999", "sims"),
        ("mcts:sims=8,batch=100000", "batch"),
        ("mcts:sims=8,backend=tpu", "tpu"),
        ("mcts:movetime=nan", "duration"),
        ("mcts:sims=8,cpuct=-1", "cpuct"),
        ("mcts:sims=8,ptemp=0", "ptemp"),
        ("mcts:sims=8,contempt=2", "contempt"),
        ("mcts:model=/nonexistent", "sims=N or movetime=T"),
        ("mcts:sims=8,model=/nonexistent/model", "/nonexistent/model"),
        ("random:seed=x", "seed"),
    ];
    specs
        .iter()
        .map(|(spec, needle)| case("player specs", &["analyze", "--player", spec], needle))
        .collect()
}

fn config_cases(dir: &Path) -> Vec<Case> {
    let snippets: &[(&str, &[u8], &str)] = &[
        ("not-toml", b"[[[ not toml", "not-toml"),
        (
            "unclosed-section",
            b"[selfplay\nsimulations = 8\n",
            "unclosed-section",
        ),
        (
            "unknown-section",
            b"[selfplays]\nsimulations = 8\n",
            "selfplays",
        ),
        (
            "unknown-key",
            b"[selfplay]\nno_such_key = 1\n",
            "no_such_key",
        ),
        (
            "string-for-number",
            b"[selfplay]\nsimulations = \"many\"\n",
            "simulations",
        ),
        (
            "zero-simulations",
            b"[selfplay]\nsimulations = 0\n",
            "simulations",
        ),
        (
            "negative-simulations",
            b"[selfplay]\nsimulations = -5\n",
            "simulations",
        ),
        (
            "resign-above-one",
            b"[selfplay]\nresign_value = 5.0\n",
            "resign_value",
        ),
        ("zero-threads", b"[selfplay]\nthreads = 0\n", "threads"),
        (
            "zero-max-plies",
            b"[selfplay]\nmax_plies = 0\n",
            "max_plies",
        ),
        (
            "zero-shard",
            b"[selfplay]\ngames_per_shard = 0\n",
            "games_per_shard",
        ),
        (
            "duplicate-key",
            b"[selfplay]\nsimulations = 8\nsimulations = 9\n",
            "duplicate-key",
        ),
        (
            "not-utf8",
            b"[selfplay]\nsimulations = \xff\xfe\n",
            "not-utf8",
        ),
    ];
    let train_only: &[(&str, &[u8], &str)] = &[
        ("too-many-blocks", b"[model]\nblocks = 65\n", "blocks"),
        ("huge-channels", b"[model]\nchannels = 100000\n", "channels"),
        ("zero-batch", b"[train]\nbatch_size = 0\n", "batch_size"),
        (
            "zero-games",
            b"[run]\ngames_per_generation = 0\n",
            "games_per_generation",
        ),
        ("chess", b"[run]\nvariant = \"chess\"\n", "chess"),
        (
            "generations-as-text",
            b"[run]\ngenerations = \"3\"\n",
            "generations",
        ),
    ];
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, bytes).unwrap();
        path.to_string_lossy().into_owned()
    };
    let out = dir.join("never-written").to_string_lossy().into_owned();
    let mut cases = Vec::new();
    for (name, bytes, needle) in snippets {
        let path = write(name, bytes);
        cases.push(case(
            "configs",
            &["selfplay", "--config", &path, "--games", "1", "--out", &out],
            needle,
        ));
        cases.push(case(
            "configs",
            &["train", "--config", &path, "--run", &out],
            needle,
        ));
    }
    for (name, bytes, needle) in train_only {
        let path = write(name, bytes);
        cases.push(case(
            "configs",
            &["train", "--config", &path, "--run", &out],
            needle,
        ));
    }
    let folder = dir.to_string_lossy().into_owned();
    cases.push(case(
        "configs",
        &["train", "--config", &folder, "--run", &out],
        &folder,
    ));
    cases.push(case(
        "configs",
        &["train", "--config", "/nonexistent/c.toml", "--run", &out],
        "/nonexistent/c.toml",
    ));
    cases
}

fn position_cases() -> Vec<Case> {
    let fens: &[(&str, &str, &str)] = &[
        ("english", "", "FEN"),
        ("english", "garbage", "garbage"),
        ("english", "W:W33:B1", "33"),
        ("english", "W:W0:B1", "0"),
        ("english", "W:W1,1:B2", "1"),
        ("english", "W:W1:B1", "1"),
        ("english", "X:W1:B2", "X"),
        ("english", "W:WK:B2", "K"),
        ("english", "W:W5-:B2", "5-"),
        ("english", "W:W5:B2:Q", "Q"),
        ("international", "W:W51:B1", "51"),
        ("finnish:huffing", "W:W14:B15:H", "W:W14:B15:H"),
        ("finnish:huffing", "W:W14:B15:H15,15", "twice"),
    ];
    let mut cases = Vec::new();
    for (variant, fen, needle) in fens {
        cases.push(case(
            "positions",
            &["moves", "--variant", variant, "--fen", fen],
            needle,
        ));
    }
    for (fen, needle) in [("garbage", "garbage"), ("W:W33:B1", "square 33")] {
        cases.push(case(
            "positions",
            &["perft", "--depth", "2", "--fen", fen],
            needle,
        ));
        cases.push(case(
            "positions",
            &["analyze", "--player", "alphabeta:depth=1", "--fen", fen],
            needle,
        ));
    }
    cases.push(case(
        "positions",
        &[
            "infer",
            "--model",
            "models/english-default",
            "--fen",
            "garbage",
        ],
        "garbage",
    ));
    cases
}

fn file_input_cases(dir: &Path) -> Vec<Case> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_string_lossy().into_owned()
    };
    let mut cases = Vec::new();
    let openings: &[(&str, &[u8])] = &[
        ("garbage.txt", b"this is not an opening\n"),
        ("illegal.txt", b"11-15 11-15 11-15\n"),
        ("empty.txt", b""),
        ("binary.txt", b"\xff\xfe\x00\x01"),
        ("capture-missed.txt", b"11-15 23-19 15x24\n"),
    ];
    for (name, bytes) in openings {
        let path = write(name, bytes);
        cases.push(case(
            "input files",
            &[
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--games",
                "2",
                "--openings",
                &path,
            ],
            name,
        ));
    }
    let results: &[(&str, &[u8])] = &[
        ("results-garbage.jsonl", b"{not json}\n"),
        ("results-empty.jsonl", b""),
        ("results-cut.jsonl", b"{\"a\": \"random\", \"b\":"),
        ("results-binary.jsonl", b"\xff\xfe\x00"),
    ];
    let out = dir.join("ratings-out").to_string_lossy().into_owned();
    for (name, bytes) in results {
        let path = write(name, bytes);
        cases.push(case(
            "input files",
            &["ratings", "--results", &path, "--out", &out],
            name,
        ));
    }
    let folder = dir.to_string_lossy().into_owned();
    cases.push(case(
        "input files",
        &[
            "match",
            "--a",
            "random",
            "--b",
            "random",
            "--openings",
            &folder,
        ],
        &folder,
    ));
    cases
}

fn output_cases(dir: &Path) -> Vec<Case> {
    const C: &str = "outputs";
    let model = "models/english-default";
    let mut cases = Vec::new();
    for args in [
        &["moves"][..],
        &["moves", "--json"],
        &["perft", "--depth", "3"],
        &["analyze", "--player", "alphabeta:depth=2"],
        &["match", "--a", "random", "--b", "random", "--games", "2"],
        &["infer", "--model", model],
        &["--help"],
        &["--version"],
        &["match", "--help"],
        &["play", "--player", "random"],
        &["analyze", "--player", "mcts:sims=8"],
        &[
            "bench",
            "nn",
            "--config",
            "configs/tiny.toml",
            "--seconds",
            "0.05",
            "--batches",
            "1",
        ],
    ] {
        cases.push(case(C, args, "standard output").with_full_stdout());
    }
    let shards = dir
        .join("full-stdout-shards")
        .to_string_lossy()
        .into_owned();
    let onnx = dir.join("full-stdout.onnx").to_string_lossy().into_owned();
    for args in [
        &[
            "selfplay",
            "--config",
            "configs/tiny.toml",
            "--games",
            "2",
            "--out",
            &shards,
        ][..],
        &["export", "--model", model, "--out", &onnx],
    ] {
        cases.push(case(C, args, "standard output").with_full_stdout());
    }
    let m = |out: &str| {
        vec![
            "match", "--a", "random", "--b", "random", "--games", "2", "--pdn", out,
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let o = |out: &str| {
        ["openings", "--plies", "1", "--depth", "2", "--out", out]
            .map(String::from)
            .to_vec()
    };
    let e = |out: &str| {
        [
            "export",
            "--model",
            "models/english-default",
            "--format",
            "safetensors",
            "--out",
            out,
        ]
        .map(String::from)
        .to_vec()
    };
    let folder = dir.join("a-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, b"keep me").unwrap();
    let under_file = file.join("x").to_string_lossy().into_owned();
    let folder_s = folder.to_string_lossy().into_owned();
    for make in [m, o, e] {
        let args = make("/dev/full");
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cases.push(case(C, &refs, "/dev/full").watching("/dev/full"));
        let args = make(&folder_s);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cases.push(case(C, &refs, &folder_s).watching(&folder));
        let args = make(&under_file);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cases.push(case(C, &refs, "a-file").watching(&file));
    }
    for make in [m, o] {
        let args = make("/dev/null");
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut c = case(C, &refs, "").watching("/dev/null");
        c.expect = Expect::Succeeds;
        cases.push(c);
    }
    cases
}

fn endless_cases(dir: &Path) -> Vec<Case> {
    const C: &str = "endless inputs";
    let out = dir.join("endless-out").to_string_lossy().into_owned();
    let mut cases = vec![
        case(
            C,
            &[
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--openings",
                "/dev/zero",
            ],
            "larger than",
        ),
        case(
            C,
            &[
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--results",
                "/dev/zero",
            ],
            "larger than",
        ),
        case(
            C,
            &["ratings", "--results", "/dev/zero", "--out", &out],
            "larger than",
        ),
        case(
            C,
            &[
                "selfplay",
                "--config",
                "/dev/zero",
                "--games",
                "1",
                "--out",
                &out,
            ],
            "larger than",
        ),
        case(
            C,
            &["train", "--config", "/dev/zero", "--run", &out],
            "larger than",
        ),
        case(
            C,
            &[
                "infer",
                "--model",
                "models/english-default",
                "--fen",
                &"W".repeat(100_000),
            ],
            "FEN",
        ),
    ];
    // A Hub line without an end: refused at the line limit, the session goes on.
    let mut hub = case(C, &["hub", "--player", "alphabeta:depth=1"], "");
    let mut line = vec![b'x'; 2 << 20];
    line.extend_from_slice(b"\nping\nquit\n");
    hub.stdin = Some(line);
    hub.expect = Expect::HubGoesOn;
    cases.push(hub);
    cases
}

/// A finished one-generation run to damage copies of.
fn base_run(dir: &Path) -> PathBuf {
    let mut cfg =
        tammi_trainer::RunConfig::load(&Path::new(ROOT).join("configs/tiny.toml")).unwrap();
    cfg.gating.enabled = false;
    cfg.ladder.every = 0;
    cfg.run.generations = 1;
    cfg.run.games_per_generation = 64;
    cfg.selfplay.games_per_shard = 32;
    cfg.train.steps_per_generation = 20;
    let config = dir.join("quick.toml");
    std::fs::write(&config, cfg.to_toml()).unwrap();
    let base = dir.join("base-run");
    let out = Command::new(BIN)
        .args(["train", "--config"])
        .arg(&config)
        .arg("--run")
        .arg(&base)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    base
}

type Damage = Box<dyn Fn(&Path)>;

fn run_cases(dir: &Path) -> Vec<Case> {
    let base = base_run(dir);
    let shard = |a: u64, b: u64| format!("selfplay/gen-0001/shard-{a:06}-{b:06}.bin");
    let damages: Vec<(&str, Damage, String)> = vec![
        (
            "first shard deleted",
            Box::new(move |r| std::fs::remove_file(r.join(shard(0, 31))).unwrap()),
            shard(32, 63),
        ),
        (
            "last shard deleted",
            Box::new(move |r| std::fs::remove_file(r.join(shard(32, 63))).unwrap()),
            "selfplay/gen-0001".into(),
        ),
        (
            "shard copied under the next range",
            Box::new(move |r| {
                std::fs::copy(r.join(shard(0, 31)), r.join(shard(64, 95))).unwrap();
            }),
            shard(64, 95),
        ),
        (
            "shard renamed",
            Box::new(move |r| {
                std::fs::rename(r.join(shard(32, 63)), r.join(shard(40, 71))).unwrap()
            }),
            shard(40, 71),
        ),
        (
            "foreign file among shards",
            Box::new(|r| std::fs::write(r.join("selfplay/gen-0001/notes.bin"), b"x").unwrap()),
            "notes.bin".into(),
        ),
        (
            "byte flipped in a shard",
            Box::new(move |r| flip_bytes(&r.join(shard(0, 31)), 1)),
            format!("{} && checksum mismatch", shard(0, 31)),
        ),
        (
            "shard truncated",
            Box::new(move |r| {
                let p = r.join(shard(0, 31));
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() / 2]).unwrap();
            }),
            shard(0, 31),
        ),
        (
            "shard emptied",
            Box::new(move |r| std::fs::write(r.join(shard(32, 63)), b"").unwrap()),
            shard(32, 63),
        ),
        (
            "shard of generation 1 copied into generation 2",
            Box::new(move |r| {
                std::fs::create_dir_all(r.join("selfplay/gen-0002")).unwrap();
                std::fs::copy(
                    r.join(shard(0, 31)),
                    r.join("selfplay/gen-0002/shard-000000-000031.bin"),
                )
                .unwrap();
            }),
            "gen-0002/shard-000000-000031.bin".into(),
        ),
        (
            "byte flipped in optimizer state",
            Box::new(|r| flip_bytes(&r.join("checkpoints/gen-0001/optimizer.bpk"), 1)),
            "checkpoints/gen-0001/optimizer.bpk && corrupt".into(),
        ),
        (
            "bytes flipped in trainer net",
            Box::new(|r| flip_bytes(&r.join("checkpoints/gen-0001/trainer-net.bpk"), 16)),
            "checkpoints/gen-0001/trainer-net.bpk && corrupt".into(),
        ),
        (
            "trainer checkpoint deleted",
            Box::new(|r| std::fs::remove_dir_all(r.join("checkpoints/gen-0001")).unwrap()),
            "gen-0001".into(),
        ),
        (
            "byte flipped in accepted model",
            Box::new(|r| flip_bytes(&r.join("models/gen-0001/weights.safetensors"), 1)),
            "models/gen-0001 && corrupt".into(),
        ),
        (
            "accepted model's card garbage",
            Box::new(|r| std::fs::write(r.join("models/gen-0001/card.json"), b"{").unwrap()),
            "models/gen-0001".into(),
        ),
        (
            "state.json accepted: 5",
            Box::new(|r| edit_json(&r.join("state.json"), "accepted", serde_json::json!(5))),
            "state.json".into(),
        ),
        (
            "state.json stage gate without checkpoint",
            Box::new(|r| {
                edit_json(&r.join("state.json"), "stage", serde_json::json!("gate"));
                edit_json(
                    &r.join("state.json"),
                    "trainer_checkpoint",
                    serde_json::Value::Null,
                );
            }),
            "state.json".into(),
        ),
        (
            "state.json generation 999",
            Box::new(|r| edit_json(&r.join("state.json"), "generation", serde_json::json!(999))),
            "state.json".into(),
        ),
        (
            "state.json of another run",
            Box::new(|r| edit_json(&r.join("state.json"), "run_id", serde_json::json!(12345))),
            shard(0, 31),
        ),
        (
            "state.json garbage",
            Box::new(|r| std::fs::write(r.join("state.json"), b"{\"generation\": tw").unwrap()),
            "state.json".into(),
        ),
        (
            "state.json games 5000",
            Box::new(|r| edit_json(&r.join("state.json"), "games", serde_json::json!(5000))),
            "5000".into(),
        ),
        (
            "config.toml emptied",
            Box::new(|r| std::fs::write(r.join("config.toml"), b"").unwrap()),
            "config.toml".into(),
        ),
        (
            "config.toml blocks changed",
            Box::new(|r| {
                let p = r.join("config.toml");
                let t = std::fs::read_to_string(&p)
                    .unwrap()
                    .replace("blocks = 2", "blocks = 3");
                std::fs::write(&p, t).unwrap();
            }),
            "model.blocks".into(),
        ),
        (
            "run.json of a future format",
            Box::new(|r| edit_json(&r.join("run.json"), "run_format", serde_json::json!(99))),
            "format 99".into(),
        ),
    ];
    let mut cases = Vec::new();
    for (i, (what, damage, named)) in damages.iter().enumerate() {
        // A copy for each command: the cases run side by side.
        for verify in [false, true] {
            let copy = dir.join(format!("run-{i}-{verify}"));
            copy_tree(&base, &copy);
            damage(&copy);
            let run = copy.to_string_lossy().into_owned();
            let mut args = vec!["train", "--run", run.as_str()];
            if verify {
                args.push("--verify");
            }
            cases.push(
                case("run directories", &args, named)
                    .watching(&copy)
                    .labelled(what),
            );
        }
    }
    cases
}

fn model_cases(dir: &Path) -> Vec<Case> {
    let good = Path::new(ROOT).join("models/english-default");
    let damages: Vec<(&str, Damage, &str)> = vec![
        (
            "weights flipped",
            Box::new(|m| flip_bytes(&m.join("weights.safetensors"), 16)),
            "corrupt",
        ),
        (
            "weights truncated",
            Box::new(|m| {
                let p = m.join("weights.safetensors");
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() / 3]).unwrap();
            }),
            "weights",
        ),
        (
            "weights emptied",
            Box::new(|m| std::fs::write(m.join("weights.safetensors"), b"").unwrap()),
            "weights",
        ),
        (
            "weights deleted",
            Box::new(|m| std::fs::remove_file(m.join("weights.safetensors")).unwrap()),
            "weights",
        ),
        (
            "card deleted",
            Box::new(|m| std::fs::remove_file(m.join("card.json")).unwrap()),
            "card.json",
        ),
        (
            "card garbage",
            Box::new(|m| std::fs::write(m.join("card.json"), b"{\"variant\":").unwrap()),
            "card",
        ),
        (
            "card of another variant",
            Box::new(|m| {
                edit_json(
                    &m.join("card.json"),
                    "variant",
                    serde_json::json!("international"),
                )
            }),
            "international",
        ),
    ];
    let mut cases = Vec::new();
    for (i, (what, damage, needle)) in damages.iter().enumerate() {
        let copy = dir.join(format!("model-{i}"));
        copy_tree(&good, &copy);
        damage(&copy);
        let m = copy.to_string_lossy().into_owned();
        let spec = format!("mcts:model={m},sims=8");
        let out = dir
            .join(format!("model-{i}.onnx"))
            .to_string_lossy()
            .into_owned();
        for args in [
            vec!["infer", "--model", m.as_str()],
            vec!["export", "--model", m.as_str(), "--out", out.as_str()],
            vec!["analyze", "--player", spec.as_str()],
        ] {
            cases.push(
                case("model files", &args, needle)
                    .watching(&copy)
                    .labelled(what),
            );
        }
    }
    cases
}

/// A learned evaluation's model directory (issue 36), damaged in every way
/// a download or an edit can, given to a player spec and to `export`; and
/// `train-eval` started wrongly.
fn search_eval_cases(dir: &Path) -> Vec<Case> {
    let good = dir.join("eval-good");
    tammi_search::nnue::NnueNet::random(tammi_rules::Variant::English, 16, 1)
        .save(&good)
        .unwrap();
    let damages: Vec<(&str, Damage, &str)> = vec![
        (
            "weights flipped",
            Box::new(|m| flip_bytes(&m.join("weights.safetensors"), 40)),
            "corrupt",
        ),
        (
            "weights truncated",
            Box::new(|m| {
                let p = m.join("weights.safetensors");
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() / 2]).unwrap();
            }),
            "weights",
        ),
        (
            "weights deleted",
            Box::new(|m| std::fs::remove_file(m.join("weights.safetensors")).unwrap()),
            "weights",
        ),
        (
            "card deleted",
            Box::new(|m| std::fs::remove_file(m.join("card.json")).unwrap()),
            "card.json",
        ),
        (
            "card of an MCTS model",
            Box::new(|m| {
                edit_json(
                    &m.join("card.json"),
                    "kind",
                    serde_json::json!("policy-value"),
                )
            }),
            "kind",
        ),
        (
            "card of another variant",
            Box::new(|m| {
                edit_json(
                    &m.join("card.json"),
                    "variant",
                    serde_json::json!("international"),
                )
            }),
            "international",
        ),
        (
            "card of another width",
            Box::new(|m| edit_json(&m.join("card.json"), "width", serde_json::json!(32))),
            "w1",
        ),
    ];
    let mut cases = Vec::new();
    for (i, (what, damage, needle)) in damages.iter().enumerate() {
        let copy = dir.join(format!("eval-{i}"));
        copy_tree(&good, &copy);
        damage(&copy);
        let m = copy.to_string_lossy().into_owned();
        let spec = format!("alphabeta:eval={m},depth=2");
        let out = dir
            .join(format!("eval-{i}.safetensors"))
            .to_string_lossy()
            .into_owned();
        for args in [
            vec!["analyze", "--player", spec.as_str()],
            vec![
                "match",
                "--a",
                spec.as_str(),
                "--b",
                "random",
                "--games",
                "2",
            ],
            vec![
                "export",
                "--model",
                m.as_str(),
                "--format",
                "safetensors",
                "--out",
                out.as_str(),
            ],
        ] {
            cases.push(
                case("model files", &args, needle)
                    .watching(&copy)
                    .labelled(what),
            );
        }
    }
    // An MCTS model where a search evaluation belongs, and the reverse.
    let mcts = Path::new(ROOT).join("models/english-default");
    let mcts = mcts.to_string_lossy().into_owned();
    let g = good.to_string_lossy().into_owned();
    let as_eval = format!("alphabeta:eval={mcts},depth=2");
    let as_mcts = format!("mcts:model={g},sims=8");
    cases.push(
        case(
            "model files",
            &["analyze", "--player", &as_eval],
            "search-eval",
        )
        .labelled("MCTS model as eval"),
    );
    cases.push(
        case("model files", &["analyze", "--player", &as_mcts], "card")
            .labelled("eval as MCTS model"),
    );
    let onnx = dir.join("eval.onnx").to_string_lossy().into_owned();
    cases.push(
        case(
            "model files",
            &["export", "--model", &g, "--out", &onnx],
            "safetensors",
        )
        .labelled("eval exported as ONNX"),
    );
    // train-eval started wrongly.
    let cfg = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let bad_key = cfg("se-bad-key.toml", "[net]\nwidht = 64\n");
    let bad_width = cfg("se-bad-width.toml", "[net]\nwidth = 0\n");
    let missing_mcts = cfg(
        "se-missing.toml",
        "[selfplay]\nconfig = \"no-such.toml\"\nhours = 0.1\n",
    );
    let full = dir.join("se-full");
    std::fs::create_dir_all(&full).unwrap();
    std::fs::write(full.join("notes.txt"), "mine").unwrap();
    let run = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let full_s = full.to_string_lossy().into_owned();
    let fresh = cfg("se-fresh.toml", "[selfplay]\nhours = 0.0\n");
    for (args, needle) in [
        (
            vec!["train-eval", "--run", run("se-none").as_str()],
            "--config".to_string(),
        ),
        (
            vec![
                "train-eval",
                "--config",
                bad_key.as_str(),
                "--run",
                run("se-1").as_str(),
            ],
            "widht".into(),
        ),
        (
            vec![
                "train-eval",
                "--config",
                bad_width.as_str(),
                "--run",
                run("se-2").as_str(),
            ],
            "net.width".into(),
        ),
        (
            vec![
                "train-eval",
                "--config",
                missing_mcts.as_str(),
                "--run",
                run("se-3").as_str(),
            ],
            "no-such.toml".into(),
        ),
        (
            vec![
                "train-eval",
                "--config",
                fresh.as_str(),
                "--run",
                full_s.as_str(),
            ],
            "not empty".into(),
        ),
    ] {
        let mut c = case("run directories", &args, &needle).labelled("train-eval");
        if args.contains(&full_s.as_str()) {
            c = c.watching(&full);
        }
        cases.push(c);
    }
    cases
}

fn hub_cases() -> Vec<Case> {
    let lines: &[&[u8]] = &[
        b"level move-time=1e308",
        b"level time=1e300",
        b"level move-time=18446744073709551616",
        b"level move-time=-1",
        b"level move-time=nan",
        b"level depth=0",
        b"level depth=101",
        b"level depth=abc",
        b"\xff\xfe level depth=2",
        b"pos moves=32x28",
        b"pos moves=99-99",
        b"pos pos=garbage",
        b"pos pos=Wxxxxxxxxx",
        b"no-such-command",
    ];
    lines
        .iter()
        .map(|line| {
            let mut c = case(
                "hub protocol",
                &["hub", "--player", "alphabeta:depth=1"],
                "",
            );
            let mut input = line.to_vec();
            input.extend_from_slice(b"\nping\nquit\n");
            c.stdin = Some(input);
            c.expect = Expect::HubGoesOn;
            c
        })
        .collect()
}

// ------------------------------------------------------- DXP and HTTP

/// A listening process and the address it named on its first stderr line.
fn listen(args: &[&str], prefix: &str) -> (Child, String, BufReader<std::process::ChildStderr>) {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(ROOT)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // `serve` names its address on stdout, `dxp` on stderr.
    if prefix.starts_with("dxp") {
        err.read_line(&mut line).unwrap();
    } else {
        out.read_line(&mut line).unwrap();
    }
    let addr = line
        .trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("no address in {line}"))
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    std::thread::spawn(move || {
        let mut sink = String::new();
        let _ = out.read_to_string(&mut sink);
    });
    (child, addr, err)
}

fn dxp_cases() -> Vec<Outcome> {
    let (mut child, addr, mut err) = listen(
        &["dxp", "--listen", "0", "--player", "alphabeta:depth=1"],
        "dxp: listening on ",
    );
    let messages: &[(&str, &[u8])] = &[
        ("unknown kind Q", b"Qhello\0"),
        ("text that is not DXP", b"hello, engine\0"),
        ("GAMEREQ cut short", b"R01\0"),
        ("GAMEREQ of version 99", b"R99test peer                       W000000A\0"),
        ("GAMEREQ with an empty board", b"R01test peer                       W000000BWeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\0"),
        ("GAMEREQ with a man on its crowning row", b"R01test peer                       W000000BWweeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeez\0"),
        ("MOVE before any game", b"M0000464100\0"),
        ("bytes without a NUL", &[0xff; 4096]),
        ("GAMEACC from the initiator", b"Asomeone                         0\0"),
        ("GAMEEND code 9", b"E91\0"),
    ];
    let mut outcomes = Vec::new();
    for (what, bytes) in messages {
        let verdict = (|| {
            let mut s = TcpStream::connect(&addr).ok()?;
            s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
            let _ = s.write_all(bytes);
            // Messages until tammi's CHAT saying why (a refused game keeps
            // the connection open for the next GAMEREQ), or the end.
            let mut reader = BufReader::new(s);
            let mut seen = Vec::new();
            loop {
                let mut msg = Vec::new();
                match reader.read_until(0, &mut msg) {
                    Ok(0) => break,
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&msg)
                            .trim_end_matches('\0')
                            .to_string();
                        let chat = text.starts_with("Ctammi: ");
                        seen.push(text);
                        if chat {
                            break;
                        }
                    }
                    Err(_) => {
                        return Some((
                            Verdict::Hang,
                            format!("no reason given within 20 s: {seen:?}"),
                        ));
                    }
                }
            }
            let clean = seen.last().is_some_and(|m| m.starts_with("Ctammi: "));
            Some((
                if clean {
                    Verdict::Clean
                } else {
                    Verdict::Unclear
                },
                seen.join(" | "),
            ))
        })()
        .unwrap_or((Verdict::Hang, "could not connect".into()));
        outcomes.push(Outcome {
            category: "dxp protocol",
            case: what.to_string(),
            verdict: verdict.0,
            detail: verdict.1,
        });
    }
    // The listener lives on: it still accepts a connection, then is stopped.
    let alive = TcpStream::connect(&addr).is_ok() && child.try_wait().ok().flatten().is_none();
    let _ = child.kill();
    let _ = child.wait();
    let mut log = String::new();
    let _ = err.read_to_string(&mut log);
    if !alive || log.contains("panicked") {
        for o in &mut outcomes {
            o.verdict = Verdict::Panic;
            o.detail = format!("the listener died: {log}");
        }
    }
    outcomes
}

fn http_cases() -> Vec<Outcome> {
    let (mut child, addr, _err) = listen(
        &["serve", "--addr", "127.0.0.1:0", "--read-timeout", "1"],
        "tammi serve: listening on http://",
    );
    let long_uri = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(9000));
    let big_header = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX: {}\r\n\r\n",
        "a".repeat(20000)
    );
    let many_headers = format!(
        "GET / HTTP/1.1\r\n{}\r\n",
        (0..80).map(|i| format!("X{i}: a\r\n")).collect::<String>()
    );
    let post = |path: &str, body: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let requests: Vec<(&str, String, u16)> = vec![
        (
            "wrong method",
            "DELETE /api/legal HTTP/1.1\r\nHost: x\r\n\r\n".into(),
            405,
        ),
        (
            "GET on a POST endpoint",
            "GET /api/play HTTP/1.1\r\nHost: x\r\n\r\n".into(),
            405,
        ),
        (
            "unknown route",
            "GET /api/nothing HTTP/1.1\r\nHost: x\r\n\r\n".into(),
            404,
        ),
        (
            "path traversal",
            "GET /assets/..%2f..%2fetc%2fpasswd HTTP/1.1\r\nHost: x\r\n\r\n".into(),
            404,
        ),
        (
            "huge Content-Length",
            "POST /api/legal HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999\r\n\r\n{".into(),
            413,
        ),
        (
            "unfinished body",
            "POST /api/legal HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"va".into(),
            408,
        ),
        (
            "unfinished head",
            "POST /api/legal HTTP/1.1\r\nHost: x\r\n".into(),
            408,
        ),
        ("URI of 9000 bytes", long_uri, 414),
        ("header of 20000 bytes", big_header, 431),
        ("80 headers", many_headers, 431),
        ("not HTTP", "hello\r\n\r\n".into(), 400),
        ("binary head", "\u{1}\u{2}\r\n\r\n".into(), 400),
        ("body not JSON", post("/api/legal", "{not json"), 400),
        (
            "body of the wrong shape",
            post("/api/play", "[1, 2, 3]"),
            400,
        ),
        (
            "unknown variant",
            post("/api/legal", "{\"variant\": \"chess\"}"),
            400,
        ),
        (
            "bad FEN",
            post("/api/legal", "{\"fen\": \"W:W33:B1\"}"),
            400,
        ),
        (
            "illegal move",
            post("/api/play", "{\"moves\": [], \"move\": \"9-18\"}"),
            422,
        ),
        (
            "an illegal move in the game's moves",
            post("/api/legal", "{\"moves\": [\"9-18\"]}"),
            422,
        ),
        (
            "opening index past the deck",
            post("/api/opening", "{\"index\": 99999}"),
            400,
        ),
        (
            "engine spec nonsense",
            post("/api/engine", "{\"player\": \"minimax\"}"),
            400,
        ),
        (
            "engine hash beyond the spec's limit",
            post(
                "/api/engine",
                "{\"player\": \"alphabeta:depth=4,hash=65536\"}",
            ),
            400,
        ),
        (
            "PDN garbage",
            post(
                "/api/pdn/load",
                "{\"text\": \"[Event \\\"x\\\"]\\n1. 99-99 *\"}",
            ),
            400,
        ),
        (
            "unknown field",
            post("/api/legal", "{\"varient\": \"english\"}"),
            400,
        ),
    ];
    let mut outcomes = Vec::new();
    for (what, raw, want) in requests {
        let (verdict, detail) = (|| {
            let mut s = TcpStream::connect(&addr).ok()?;
            s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
            let _ = s.write_all(raw.as_bytes());
            let mut reply = Vec::new();
            let t = Instant::now();
            let _ = s.read_to_end(&mut reply);
            if t.elapsed() >= Duration::from_secs(20) {
                return Some((Verdict::Hang, "no reply within 20 s".into()));
            }
            let text = String::from_utf8_lossy(&reply).into_owned();
            let status: u16 = text
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
            let json = serde_json::from_str::<serde_json::Value>(body)
                .ok()
                .and_then(|v| v["error"].as_str().map(String::from));
            Some(if (200..300).contains(&status) {
                (Verdict::WronglyAccepted, text)
            } else if status == want && json.is_some() {
                (Verdict::Clean, format!("{status} {}", json.unwrap()))
            } else {
                (Verdict::Unclear, format!("wanted {want} in JSON: {text}"))
            })
        })()
        .unwrap_or((Verdict::Hang, "could not connect".into()));
        outcomes.push(Outcome {
            category: "http (serve)",
            case: what.to_string(),
            verdict,
            detail,
        });
    }
    let alive = child.try_wait().ok().flatten().is_none() && TcpStream::connect(&addr).is_ok();
    let _ = child.kill();
    let _ = child.wait();
    if !alive {
        for o in &mut outcomes {
            o.verdict = Verdict::Panic;
            o.detail = "the server died".into();
        }
    }
    outcomes
}

// ---------------------------------------------------------------- table

fn table(outcomes: &[Outcome], seconds: f64) -> String {
    let mut rows: Vec<(&str, [usize; 7])> = Vec::new();
    for o in outcomes {
        if rows.last().is_none_or(|(c, _)| *c != o.category) {
            rows.push((o.category, [0; 7]));
        }
        let row = &mut rows.last_mut().unwrap().1;
        row[0] += 1;
        row[1 + o.verdict as usize] += 1;
    }
    let mut totals = [0; 7];
    let mut text = String::from(
        "| category | cases | clean errors | unclear errors | panics | hangs | wrongly accepted | data damaged |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut merged: BTreeMap<&str, usize> = BTreeMap::new();
    for (c, row) in &rows {
        *merged.entry(c).or_default() += 1;
        for (t, v) in totals.iter_mut().zip(row) {
            *t += v;
        }
        text += &format!(
            "| {c} | {} |\n",
            row.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    text += &format!(
        "| **all** | {} |\n\n{} cases in {seconds:.0} s\n",
        totals
            .iter()
            .map(|v| format!("**{v}**"))
            .collect::<Vec<_>>()
            .join(" | "),
        outcomes.len()
    );
    text
}

#[test]
fn the_fault_suite_finds_only_clean_errors() {
    let t = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut cases = Vec::new();
    cases.extend(argument_cases());
    cases.extend(spec_cases());
    cases.extend(config_cases(dir.path()));
    cases.extend(position_cases());
    cases.extend(file_input_cases(dir.path()));
    cases.extend(output_cases(dir.path()));
    cases.extend(endless_cases(dir.path()));
    cases.extend(run_cases(dir.path()));
    cases.extend(model_cases(dir.path()));
    cases.extend(search_eval_cases(dir.path()));
    cases.extend(hub_cases());
    let mut outcomes = run_all(&cases, &scratch);
    outcomes.extend(dxp_cases());
    outcomes.extend(http_cases());
    let text = table(&outcomes, t.elapsed().as_secs_f64());
    println!("{text}");
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("fault-suite.md"),
        &text,
    );
    let bad: Vec<String> = outcomes
        .iter()
        .filter(|o| o.verdict != Verdict::Clean)
        .map(|o| {
            format!(
                "[{}] {:?}: {}\n    {}",
                o.category, o.verdict, o.case, o.detail
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {} cases:\n{}",
        bad.len(),
        outcomes.len(),
        bad.join("\n")
    );
    assert!(outcomes.len() >= 150, "{} cases", outcomes.len());
    assert!(
        t.elapsed() < Duration::from_secs(180),
        "the suite took {:?}",
        t.elapsed()
    );
}
