"""Scale check: a 250-topic, 300-run synthetic collection through the full risk_report template.

Generates the collection (graded qrels, 300 runs of 20 documents per topic) in a temporary
folder, runs `riskreport run` on it in a child process with a cold evaluation cache, and prints
the wall time, the peak memory of the whole process tree (max RSS of the largest process:
the CLI, its evaluation workers or the notebook kernel) and the size of report.html.

    python tests/benchmarks/bench_scale.py [--runs 300] [--topics 250] [--depth 20]

Targets: peak memory < 4 GiB; report.html < 20 MB.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def make_collection(root: Path, runs: int, topics: int, depth: int, seed: int = 5) -> Path:
    """Qrels with 60 judged documents per topic; runs whose quality varies by system and topic."""
    rng = np.random.default_rng(seed)
    docs = 400
    grades = rng.choice([0, 0, 0, 1, 1, 2, 3], size=(topics, docs))
    grades[:, 0] = 3  # every topic has a relevant document
    judged = np.zeros((topics, docs), dtype=bool)
    judged[:, :60] = True
    with open(root / "qrels.txt", "w") as handle:
        for t in range(topics):
            handle.writelines(f"{t + 1} 0 D{d:04d} {grades[t, d]}\n" for d in np.nonzero(judged[t])[0])
    (root / "runs").mkdir()
    skill = rng.normal(1.0, 0.4, runs)
    for r in range(runs):
        lines = []
        for t in range(topics):
            score = grades[t] * max(skill[r] + rng.normal(0, 0.5), 0) + rng.normal(0, 1.0, docs)
            top = np.argsort(-score)[:depth]
            lines += [f"{t + 1} Q0 D{d:04d} {k + 1} {depth - k} run{r}\n" for k, d in enumerate(top)]
        (root / "runs" / f"sys{r:03d}.run").write_text("".join(lines))
    (root / "collection.toml").write_text(
        'title = "Scale test (synthetic)"\nmeasure = "nDCG@10"\nbaseline = "sys000"\nalphas = [0, 1, 2, 5, 10]\n'
    )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--topics", type=int, default=250)
    parser.add_argument("--depth", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        (root / "scale").mkdir()
        collection = make_collection(root / "scale", args.runs, args.topics, args.depth)
        print(
            f"generated {args.runs} runs x {args.topics} topics x {args.depth} documents in "
            f"{time.perf_counter() - started:.1f} s; {os.cpu_count()} cores"
        )
        env = {**os.environ, "RISKREPORT_CACHE": str(root / "cache")}
        started = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "riskreport",
                "run",
                "--collection",
                str(collection),
                "--quiet",
                "--out",
                str(root / "report"),
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            print(done.stderr)
            raise SystemExit(done.returncode)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size = (root / "report" / "report.html").stat().st_size / 1e6
    print(
        f"riskreport run: {seconds:.1f} s; peak memory (largest process) {peak:.0f} MB (target < 4096 MB); "
        f"report.html {size:.1f} MB (target < 20 MB)"
    )


if __name__ == "__main__":
    main()
