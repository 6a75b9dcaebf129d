"""Benchmark: a TREC-scale campaign (Robust04-shaped) through `riskreport run`, cold and warm.

Generates, seeded, 110 runs x 250 topics x 1,000 documents (27.5M run lines) and graded qrels
with spam labels (−2) in a temporary folder (or reuses `--data DIR`), then runs

    riskreport run --collection DIR --measure ERR@20 --alpha 0 1 ... 20 -p bootstrap_samples 10000

in a child process twice: cold (empty evaluation cache) and warm (cache filled). Prints per phase:
the runner's own (`params.json` `phases_s`: evaluate = parse + check + evaluate in parallel, execute =
kernel start + every cell, export = HTML) and the slowest notebook cells (papermill's per-cell
durations); the peak memory of the whole process tree (sampled sum of RSS over the CLI, its
evaluation workers, the kernel and its figure writer; and the largest single process from
`getrusage(RUSAGE_CHILDREN)`). Then, in this process, parse alone and the risk and inference
functions the template calls, and ir_measures' Perl gdeval provider in a plain loop, run by run,
on a subset of the runs (the full loop takes far too long; the ratio is extrapolated per run and
says so) against riskreport's evaluation of the same files. Not collected by the test run.

    python tests/benchmarks/bench_campaign.py [--data DIR] [--runs 110] [--topics 250] [--depth 1000]
                                              [--perl-runs 3] [--skip-run]

Targets on 2 cores: cold < 60 s, warm < 15 s, peak memory < 2 GiB, evaluation ≥ 10x faster than
the gdeval provider's plain loop.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ALPHAS = [str(a) for a in range(21)]
SAMPLES = 10_000
MEASURE = "ERR@20"


# ------------------------------------------------------------------------------------------ data


def _write_run(args) -> None:
    root, r, topics, depth, seed = args
    rng = np.random.default_rng([seed, r])
    grades = _grades(topics, seed)
    skill = 0.3 + 1.5 * rng.random()
    pool = grades.shape[1]
    lines = []
    for t in range(topics):
        score = skill * np.maximum(grades[t], 0) * rng.gamma(1.0, 1.0) + rng.normal(0, 1.0, pool)
        top = np.argpartition(-score, depth - 1)[:depth]
        top = top[np.argsort(-score[top], kind="stable")]
        values = np.round(score[top] + 10, 3)  # 3 decimals: some ties, as real runs
        lines += [
            f"{301 + t} Q0 FT{t:03d}-{d:05d} {k} {v:.3f} r{r:03d}\n"
            for k, (d, v) in enumerate(zip(top.tolist(), values.tolist()), start=1)
        ]
    Path(root, "runs", f"r{r:03d}.run").write_text("".join(lines))


def _grades(topics: int, seed: int, pool: int = 3000) -> np.ndarray:
    """Per topic and candidate document: −1 unjudged, else the grade (−2 spam, 0, 1, 2)."""
    rng = np.random.default_rng(seed)
    grades = rng.choice([-2, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2], size=(topics, pool))
    grades[rng.random((topics, pool)) > 0.4] = -1  # 40% of the pool judged (~1,200 per topic)
    grades[:, 0] = 2  # every topic has a relevant document
    return grades


def make_collection(root: Path, runs: int, topics: int, depth: int, seed: int = 2004) -> Path:
    (root / "runs").mkdir(parents=True, exist_ok=True)
    grades = _grades(topics, seed)
    with open(root / "qrels.robust.txt", "w") as handle:
        for t in range(topics):
            handle.writelines(
                f"{301 + t} 0 FT{t:03d}-{d:05d} {grades[t, d]}\n" for d in np.flatnonzero(grades[t] != -1)
            )
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(_write_run, [(str(root), r, topics, depth, seed) for r in range(runs)]))
    (root / "collection.toml").write_text(
        'title = "Robust04-shaped campaign (synthetic)"\nmeasure = "ERR@20"\nbaseline = "r000"\n'
    )
    return root


# ------------------------------------------------------------------------------------------ measuring


class TreeMemory:
    """Peak of the summed RSS of a process and all its descendants, sampled every 50 ms from /proc."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(_rss(p) for p in _tree(self.pid)))
            time.sleep(0.05)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def riskreport_run(data: Path, out: Path, cache: Path) -> dict:
    env = {**os.environ, "RISKREPORT_CACHE": str(cache)}
    command = [
        sys.executable,
        "-m",
        "riskreport",
        "run",
        "--collection",
        str(data),
        "--measure",
        MEASURE,
        "--alpha",
        *ALPHAS,
        "-p",
        "bootstrap_samples",
        str(SAMPLES),
        "--out",
        str(out),
        "--quiet",
    ]
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    memory = TreeMemory(child.pid)
    if child.wait() != 0:
        raise SystemExit(f"riskreport run failed ({child.returncode})")
    wall = time.perf_counter() - started
    record = json.loads((out / "params.json").read_text())
    notebook = json.loads((out / "report.ipynb").read_text())
    cells = sorted(
        (
            (c["metadata"].get("papermill", {}).get("duration") or 0.0, i, _first_line(c))
            for i, c in enumerate(notebook["cells"])
            if c["cell_type"] == "code"
        ),
        reverse=True,
    )
    return {
        "wall": wall,
        "phases": record.get("phases_s", {}),
        "tree_peak": memory.stop(),
        "cells": cells[:6],
        "html_mb": (out / "report.html").stat().st_size / 2**20,
    }


def _first_line(cell: dict) -> str:
    lines = [line for line in "".join(cell["source"]).splitlines() if line.strip() and not line.startswith("#")]
    return (lines[0] if lines else "")[:70]


def in_process(data: Path, runs: dict, cache: Path) -> dict:
    """Parse, then the risk and inference functions of the template, timed one by one in this process."""
    import riskreport as rr
    from riskreport.measures.evaluation import evaluate
    from riskreport.stats import pools

    alphas = [float(a) for a in ALPHAS]
    t = time.perf_counter()
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        rows = sum(pool.map(_parsed_rows, runs.values()))
    parse = time.perf_counter() - t
    os.environ["RISKREPORT_CACHE"] = str(cache)
    collection = rr.load_collection(str(data))
    matrix = evaluate(collection, MEASURE).matrix()
    baseline = matrix.index[0]
    times = {"parse (read_run, all runs, 2 processes)": parse}
    t = time.perf_counter()
    risk = rr.risk_table(matrix, baseline, alphas, MEASURE)
    rr.topic_risk(matrix, baseline, alphas, MEASURE)
    rr.risk_table(matrix, baseline, np.linspace(0, 20, 41), MEASURE)
    pools.pool_analysis(matrix, baseline, alphas, MEASURE)
    times["risk (URisk/TRisk, topics, ZRisk/GeoRisk, T*Risk)"] = time.perf_counter() - t
    for name, call in [
        (
            "inference: tests (t, sign, Wilcoxon, randomisation)",
            lambda: rr.inference.tests_table(matrix, baseline, alphas, MEASURE, samples=SAMPLES),
        ),
        (
            "inference: bootstrap CIs (5 methods, 2 levels)",
            lambda: rr.inference.bootstrap_table(
                matrix, baseline, alphas, MEASURE, samples=SAMPLES, workers=os.cpu_count()
            ),
        ),
        ("inference: Tukey HSD (all pairs)", lambda: rr.inference.tukey_hsd(matrix, baseline, alphas)),
        ("inference: mixed model", lambda: rr.mixed.mixed_systems(matrix, baseline, alphas, MEASURE)),
        ("inference: diagnostics", lambda: rr.inference.diagnostics_table(matrix, baseline, alphas)),
    ]:
        t = time.perf_counter()
        call()
        times[name] = time.perf_counter() - t
    assert len(risk) and rows
    return times


def _parsed_rows(path) -> int:
    from riskreport.io.trec import read_run

    return len(read_run(path))


def evaluation_ratio(data: Path, runs: dict, subset: int, cache: Path) -> tuple[float, float, float]:
    """(seconds per run: Perl gdeval provider's plain loop, riskreport cold in parallel; their ratio)."""
    import ir_measures

    from riskreport.measures.evaluation import evaluate_runs

    qrels = data / "qrels.robust.txt"
    names = list(runs)[:subset]
    started = time.perf_counter()
    evaluator = ir_measures.gdeval.evaluator(
        [ir_measures.parse_measure(MEASURE)], list(ir_measures.read_trec_qrels(str(qrels)))
    )
    for name in names:
        list(evaluator.iter_calc(ir_measures.read_trec_run(str(runs[name]))))
    perl = (time.perf_counter() - started) / len(names)
    started = time.perf_counter()
    evaluate_runs(qrels, runs, [MEASURE], cache_dir=cache)
    ours = (time.perf_counter() - started) / len(runs)
    return perl, ours, perl / ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="reuse (or create) the generated collection here")
    parser.add_argument("--runs", type=int, default=110)
    parser.add_argument("--topics", type=int, default=250)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--perl-runs", type=int, default=3, help="runs of the Perl gdeval loop (extrapolated)")
    parser.add_argument("--skip-run", action="store_true", help="only the in-process phases and the ratio")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = args.data or tmp / "campaign"
        if not (data / "collection.toml").exists():
            t = time.perf_counter()
            make_collection(data, args.runs, args.topics, args.depth)
            print(
                f"generated {args.runs} runs x {args.topics} topics x {args.depth} documents in "
                f"{time.perf_counter() - t:.0f} s: {data}"
            )
        runs = {p.name.split(".")[0]: p for p in sorted((data / "runs").iterdir())}
        print(
            f"{len(runs)} runs, {sum(p.stat().st_size for p in runs.values()) / 2**30:.2f} GiB; "
            f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}"
        )
        results = {}
        if not args.skip_run:
            cache = tmp / "cache"
            for label in ("cold", "warm"):
                results[label] = riskreport_run(data, tmp / f"report-{label}", cache)
                print(f"{label}: {results[label]['wall']:.1f} s, load average {os.getloadavg()[0]:.2f}")
        phases = in_process(data, runs, tmp / "cache")
        perl, ours, ratio = evaluation_ratio(data, runs, args.perl_runs, tmp / "ratio-cache")
        load = os.getloadavg()
    print()
    if results:
        print(f"{'riskreport run (end to end)':<52} {'cold':>8} {'warm':>8}")
        for phase in ("evaluate", "execute", "export"):
            print(
                f"  {phase:<50} {results['cold']['phases'].get(phase, 0):8.1f} {results['warm']['phases'].get(phase, 0):8.1f}"
            )
        print(
            f"  {'total wall time (targets: cold < 60 s, warm < 15 s)':<50} {results['cold']['wall']:8.1f} "
            f"{results['warm']['wall']:8.1f}"
        )
        for label in ("cold", "warm"):
            print(f"  peak memory {label}: process tree {results[label]['tree_peak'] / 2**30:.2f} GiB (target < 2 GiB)")
        print(
            f"  largest single process (RUSAGE_CHILDREN max RSS): "
            f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20:.2f} GiB; "
            f"report.html {results['cold']['html_mb']:.1f} MB"
        )
        print("  slowest notebook cells (warm run):")
        for seconds, index, line in results["warm"]["cells"]:
            print(f"    cell {index:>2} {seconds:6.1f} s  {line}")
    print("in this process, on the same collection (warm cache):")
    for name, seconds in phases.items():
        print(f"  {name:<60} {seconds:6.2f} s")
    print(
        f"evaluation: Perl gdeval provider's plain loop {perl:.2f} s/run (measured on {args.perl_runs} runs, "
        f"extrapolated to {len(runs)}: {perl * len(runs):.0f} s); riskreport cold {ours:.3f} s/run "
        f"({ours * len(runs):.1f} s): {ratio:.1f}x faster ({'≥' if ratio >= 10 else '<'} 10x)"
    )
    print(f"load average (1, 5, 15 min) at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
