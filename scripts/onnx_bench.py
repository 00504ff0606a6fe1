#!/usr/bin/env python3
"""tammi's inference against onnxruntime on the same network, side by side.

    python3 -m venv ~/.cache/tammi-onnx-venv && ~/.cache/tammi-onnx-venv/bin/pip install onnxruntime numpy
    ~/.cache/tammi-onnx-venv/bin/python scripts/onnx_bench.py --tammi target/release/tammi \\
        --model models/english-default --batches 1,32,128 --threads 2

exports the model with `tammi export`, then alternates, round by round,
`tammi bench nn --model M --inference-only` (tammi's full path: encoding the
positions, the forward pass, the policy over the legal moves) with
onnxruntime's raw forward pass of the exported file (`intra_op_num_threads`
= --threads, sequential execution, all graph optimisations), each for
--seconds per batch size.  It prints positions/s of both (the median over
the rounds, and the range), the ratio of the medians, tammi / onnxruntime,
and the median of the rounds' own ratios (each round measures both within
seconds, so that one is the least moved by a machine whose speed drifts).

--profile also runs onnxruntime's profiler at the largest batch and prints
its time per operator type, for comparison with tammi's layers.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort


def session(path, threads, profile_prefix=None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def inputs(card, batch, seed):
    """Sparse 0/1 planes like real encodings (the speed does not depend on the values)."""
    shape = [batch] + [d for d in card["inputs"][0]["shape"][1:]]
    rng = np.random.default_rng(seed)
    return (rng.random(shape) < 0.1).astype(np.float32)


def ort_rate(sess, name, x, seconds):
    sess.run(None, {name: x})  # warm-up
    calls, start = 0, time.perf_counter()
    while calls < 2 or time.perf_counter() - start < seconds:
        sess.run(None, {name: x})
        calls += 1
    return calls * x.shape[0] / (time.perf_counter() - start)


def tammi_rates(args, variant):
    env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads))
    if args.before_model_flag:
        # A tammi older than `bench nn --model`: the same net from the model's
        # config (random weights: the same work), training rows ignored.
        which = ["--config", str(args.model / "config.toml")]
    else:
        which = ["--model", str(args.model), "--inference-only"]
    cmd = [args.tammi, "bench", "nn", *which, "--variant", variant,
           "--batches", args.batches, "--seconds", str(args.seconds), "--json"]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return {row["batch"]: row["positions_per_second"] for row in json.loads(out) if row["what"] == "inference"}


def profile(sess_path, card, batch, threads, calls, workdir):
    sess = session(sess_path, threads, profile_prefix=str(pathlib.Path(workdir) / "ort"))
    name = card["inputs"][0]["name"]
    x = inputs(card, batch, 0)
    for _ in range(calls):
        sess.run(None, {name: x})
    events = json.loads(pathlib.Path(sess.end_profiling()).read_text())
    by_op = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            op = e["args"].get("op_name", "?")
            by_op[op] = by_op.get(op, 0) + e["dur"]
    total = sum(by_op.values())
    print(f"\nonnxruntime profile, batch {batch}, {calls} calls: time per operator type")
    for op, us in sorted(by_op.items(), key=lambda kv: -kv[1]):
        print(f"  {op:<24} {us / calls:9.1f} us/call  {100 * us / total:5.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tammi", default="target/release/tammi", help="tammi binary")
    ap.add_argument("--model", default="models/english-default", type=pathlib.Path)
    ap.add_argument("--batches", default="1,32,128")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=2.0, help="per batch size and engine, each round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--before-model-flag", action="store_true",
                    help="the tammi binary predates `bench nn --model` (measure the model's config instead)")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    if args.rounds < 1 or args.threads < 1 or args.seconds <= 0 or not batches or min(batches) < 1:
        sys.exit("--rounds, --threads, --seconds and the batch sizes must be positive")
    variant = json.loads((args.model / "card.json").read_text())["variant"]

    with tempfile.TemporaryDirectory() as tmp:
        onnx = pathlib.Path(tmp) / "net.onnx"
        subprocess.run([args.tammi, "export", "--model", str(args.model), "--out", str(onnx)],
                       check=True, capture_output=True)
        card = json.loads(onnx.with_name(onnx.name + ".card.json").read_text())
        sess = session(onnx, args.threads)
        name = card["inputs"][0]["name"]
        xs = {b: inputs(card, b, b) for b in batches}
        tammi = {b: [] for b in batches}
        onnxrt = {b: [] for b in batches}
        for r in range(args.rounds):
            for b, pps in tammi_rates(args, variant).items():
                tammi[b].append(pps)
            for b in batches:
                onnxrt[b].append(ort_rate(sess, name, xs[b], args.seconds))
            print(f"round {r + 1}/{args.rounds}: " + ", ".join(
                f"batch {b} {tammi[b][-1]:.0f} / {onnxrt[b][-1]:.0f}" for b in batches), file=sys.stderr)
        if args.profile:
            profile(onnx, card, max(batches), args.threads, 200, tmp)

    print(f"\n{args.model} ({variant}), {args.threads} threads, {args.rounds} rounds of {args.seconds} s, "
          f"onnxruntime {ort.__version__}")
    print("| batch | tammi positions/s (full path) | onnxruntime positions/s (raw forward) "
          "| tammi / onnxruntime | same-round ratios: median (range) |")
    print("|---:|---:|---:|---:|---:|")
    rows = []
    for b in batches:
        t, o = statistics.median(tammi[b]), statistics.median(onnxrt[b])
        # Each round measures both within seconds: the paired ratio is the
        # estimate least moved by the machine's drift.
        paired = [x / y for x, y in zip(tammi[b], onnxrt[b])]
        print(f"| {b} | {t:,.0f} ({min(tammi[b]):,.0f}–{max(tammi[b]):,.0f}) "
              f"| {o:,.0f} ({min(onnxrt[b]):,.0f}–{max(onnxrt[b]):,.0f}) | {t / o:.2f}× "
              f"| {statistics.median(paired):.2f}× ({min(paired):.2f}–{max(paired):.2f}) |")
        rows.append({"batch": b, "tammi": tammi[b], "onnxruntime": onnxrt[b], "ratio": t / o,
                     "paired_ratios": paired})
    if args.json:
        path = pathlib.Path(args.json)
        tmp_path = path.with_name(path.name + ".tmp")
        tmp_path.write_text(json.dumps({"model": str(args.model), "threads": args.threads,
                                        "onnxruntime": ort.__version__, "rows": rows}, indent=1))
        tmp_path.replace(path)


if __name__ == "__main__":
    main()
