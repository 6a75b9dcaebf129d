"""Benchmark: how soon `riskreport run` says a usage error (a misspelt template, an unknown baseline or collection,
a gate on a template without verdicts, a --junit folder), against the same commands of another checkout.

Each command runs in a new process (`python -m riskreport`, the checkout put first on PYTHONPATH), alternating
between the checkouts, `--repeat` times; medians of the wall and CPU seconds (user + system of the process) are
printed beside the load average. Also lists the heavy modules (scipy, pandas, papermill, statsmodels) each
command imported before it answered (`python -X importtime`).

    python tests/benchmarks/bench_usage_errors.py [--repeat 5] [--before DIR]

`--before DIR`: another checkout (e.g. `git archive <commit> | tar -x -C DIR`). Target: every error in at most
1 s of wall time on an idle machine. Not collected by the test run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy", "pandas", "papermill", "statsmodels")
COMMANDS = {
    "misspelt template": ["run", "nosuchtemplate"],
    "unknown baseline": ["run", "-b", "nosuch"],
    "unknown collection": ["run", "-c", "nosuchcollection"],
    "gate without verdicts": ["run", "nondeterministic", "--fail-on", "risk"],
    "--junit a folder": ["run", "--junit", "/tmp"],
    "--fail-on riskk": ["run", "--fail-on", "riskk"],
}


def timed(tree: Path, args: list[str]) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "riskreport", *args], env=env, capture_output=True, cwd="/tmp")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def heavy_imports(tree: Path, args: list[str]) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "riskreport", *args], env=env, capture_output=True, text=True
    )
    names = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return [m for m in HEAVY if m in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another checkout to time side by side")
    options = parser.parse_args()
    trees = {"this checkout": ROOT, **({"before": options.before.resolve()} if options.before else {})}
    print(
        f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}, "
        f"{os.cpu_count()} cores"
    )
    for name, args in COMMANDS.items():
        walls: dict[str, list[float]] = {t: [] for t in trees}
        cpus: dict[str, list[float]] = {t: [] for t in trees}
        for _ in range(options.repeat):
            for label, tree in trees.items():
                wall, cpu = timed(tree, args)
                walls[label].append(wall)
                cpus[label].append(cpu)
        cells = [
            f"{label}: {statistics.median(walls[label]):.2f} s wall, {statistics.median(cpus[label]):.2f} s CPU, "
            f"imports {', '.join(heavy_imports(tree, args)) or 'none of them'}"
            for label, tree in trees.items()
        ]
        print(f"{name:<22} " + " | ".join(cells))
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
