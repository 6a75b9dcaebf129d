"""Benchmark: riskreport's cached, parallel evaluation against a plain ir_measures loop.

Generates 100 runs x 50 topics x 1000 documents (5M run lines) in a temporary folder and
prints, side by side in one process: a plain single-process ir_measures loop over the files,
riskreport cold (empty cache: parse, check, evaluate in parallel) and warm (cached), plus a
cold `riskreport run` on the demo collection. Not collected by the test run.

    python tests/benchmarks/bench_evaluate.py [--runs 100] [--measure nDCG@10]

Targets: cold <= 1.0x the plain loop; warm <= 1 s. The demo report's own target (under 2x a notebook that
only imports the template's libraries) is measured side by side by bench_startup.py; this prints its time only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ir_measures
import numpy as np

from riskreport.measures.evaluation import evaluate_runs


def make_collection(root: Path, n_runs: int, n_topics: int, depth: int, seed: int = 7) -> tuple[Path, dict]:
    rng = np.random.default_rng(seed)
    n_docs = 5000
    qrels = root / "qrels.txt"
    with open(qrels, "w") as handle:
        for topic in range(1, n_topics + 1):
            judged = rng.choice(n_docs, 300, replace=False)
            grades = rng.choice([0, 0, 0, 1, 2, 3], 300)
            handle.writelines(f"{topic} 0 D{d:05d} {g}\n" for d, g in zip(judged, grades))
    runs = {}
    ranks = np.arange(1, depth + 1)
    for r in range(n_runs):
        path = root / "runs" / f"sys{r:03d}.run"
        path.parent.mkdir(exist_ok=True)
        lines = []
        for topic in range(1, n_topics + 1):
            docs = rng.choice(n_docs, depth, replace=False)
            scores = np.sort(rng.random(depth))[::-1] * 10
            lines += [f"{topic} Q0 D{d:05d} {k} {s:.6f} tag\n" for d, k, s in zip(docs, ranks, scores)]
        path.write_text("".join(lines))
        runs[f"sys{r:03d}"] = path
    return qrels, runs


def plain_loop(qrels: Path, runs: dict, measure: str) -> float:
    started = time.perf_counter()
    evaluator = ir_measures.evaluator(
        [ir_measures.parse_measure(measure)], list(ir_measures.read_trec_qrels(str(qrels)))
    )
    for path in runs.values():
        list(evaluator.iter_calc(ir_measures.read_trec_run(str(path))))
    return time.perf_counter() - started


def ours(qrels: Path, runs: dict, measure: str, cache: Path) -> float:
    started = time.perf_counter()
    evaluate_runs(qrels, runs, [measure], cache_dir=cache)
    return time.perf_counter() - started


def demo_report(cache: Path) -> float:
    env = {**os.environ, "RISKREPORT_CACHE": str(cache)}
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "riskreport", "run", "--quiet", "--out", f"{out}/report"],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--measure", default="nDCG@10")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        qrels, runs = make_collection(root, args.runs, args.topics, args.depth)
        lines = args.runs * args.topics * args.depth
        print(
            f"generated {args.runs} runs x {args.topics} topics x {args.depth} docs = {lines:,} lines "
            f"in {time.perf_counter() - t:.1f} s; {os.cpu_count()} cores; measure {args.measure}"
        )
        plain = plain_loop(qrels, runs, args.measure)
        cold = ours(qrels, runs, args.measure, root / "cache")
        warm = ours(qrels, runs, args.measure, root / "cache")
        demo = demo_report(root / "demo-cache")
    print(f"{'plain ir_measures loop (1 process)':<40} {plain:8.2f} s   1.00x")
    print(f"{'riskreport cold (empty cache)':<40} {cold:8.2f} s   {cold / plain:.2f}x of plain   (target <= 1.0x)")
    print(f"{'riskreport warm (cached)':<40} {warm:8.2f} s   {warm / plain:.3f}x of plain   (target <= 1 s)")
    print(f"{'riskreport run on the demo, cold':<40} {demo:8.2f} s   (its target: bench_startup.py)")


if __name__ == "__main__":
    main()
