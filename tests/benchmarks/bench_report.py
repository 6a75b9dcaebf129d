"""Benchmark (issue 40): the main job side by side in one run, against papermill's own floor.

In one rotation, each command in a new process:

- **bare**: papermill executing a one-cell notebook that only imports numpy, pandas, scipy.stats,
  statsmodels, matplotlib, seaborn, ir_measures and riskreport (Python start, papermill, a kernel, the
  imports, writing the notebook): the floor no report can go below;
- **demo cold / warm**: `riskreport run` with no arguments (the demo collection, the `risk_report`
  template), first with an empty riskreport cache (evaluations, stored tables and figures), then with it filled;
- **campaign cold / warm**: the Robust04-shaped campaign of `bench_campaign.py` (110 runs x 250 topics
  x 1,000 documents, ERR@20, α = 0..20, B = 10,000), first with an empty cache, then with it filled.

Prints wall and CPU seconds (CPU of the whole process tree: CLI, evaluation workers, kernel), the runner's
phases (`params.json` `phases_s`), the ten slowest notebook cells of each report (papermill's per-cell
durations) and the load average beside every figure. With `--before DIR` (another checkout, e.g. a
`git worktree` of an older main) the demo and the campaign of that checkout are timed in the same rotation,
so a change is measured against what it changes under the same load. Not collected by the test run.

    python tests/benchmarks/bench_report.py [--data DIR] [--repeat 1] [--before DIR] [--skip-campaign]

Targets (issue 40, 2 cores, idle): demo ≤ 2x bare; campaign cold ≤ 20 s, warm ≤ 10 s. On a loaded machine
compare the CPU seconds and the ratios of one rotation, not the wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_startup as startup  # noqa: E402
from bench_campaign import ALPHAS, MEASURE, SAMPLES, make_collection  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]  # the checkout this benchmark belongs to
IMPORTS = (
    "import numpy\nimport pandas\nimport scipy.stats\nimport statsmodels.api\nimport matplotlib.pyplot\n"
    "import seaborn\nimport ir_measures\nimport riskreport\n"
)


def imports_notebook(path: Path) -> Path:
    return startup.imports_notebook(path, IMPORTS)


def timed(command: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command's process tree); a failing command's stderr is kept for its error."""
    return startup.timed(command, env, cwd, stderr=subprocess.PIPE)


def slowest_cells(notebook: Path, count: int = 10) -> list[tuple[float, int, str]]:
    """(seconds, cell index, first line) of the `count` slowest code cells of an executed notebook."""
    cells = json.loads(notebook.read_text())["cells"]
    timed_cells = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        lines = [line for line in "".join(cell["source"]).splitlines() if line.strip() and not line.startswith("#")]
        seconds = cell["metadata"].get("papermill", {}).get("duration") or 0.0
        timed_cells.append((seconds, index, (lines[0] if lines else "")[:72]))
    return sorted(timed_cells, reverse=True)[:count]


class Runner:
    """Runs the commands of one checkout and keeps what each took."""

    def __init__(self, tmp: Path):
        self.tmp, self.results = tmp, {}

    def record(self, name: str, wall: float, cpu: float, out: Path | None = None) -> None:
        entry = self.results.setdefault(name, {"wall": [], "cpu": [], "load": [], "phases": {}, "cells": []})
        entry["wall"].append(wall)
        entry["cpu"].append(cpu)
        entry["load"].append(os.getloadavg()[0])
        if out is not None:
            entry["phases"] = json.loads((out / "params.json").read_text()).get("phases_s", {})
            entry["cells"] = slowest_cells(out / "report.ipynb")
        print(f"    {name:<34} {wall:6.1f} s wall {cpu:6.1f} s CPU (load average {os.getloadavg()[0]:.2f})", flush=True)

    def bare(self, i: int) -> None:
        notebook = imports_notebook(self.tmp / "imports.ipynb")
        command = [sys.executable, "-m", "papermill", str(notebook), str(self.tmp / f"bare-{i}.ipynb")]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.record("bare papermill", *timed([*command, "-k", "python3", "--no-progress-bar"], env, self.tmp))

    def report(self, name: str, tree: Path, cache: Path, out: Path, arguments: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree), "RISKREPORT_CACHE": str(cache)}
        command = [sys.executable, "-m", "riskreport", "run", *arguments, "--out", str(out), "--quiet"]
        self.record(name, *timed(command, env, self.tmp), out)


def campaign_arguments(data: Path) -> list[str]:
    return [
        "--collection",
        str(data),
        "--measure",
        MEASURE,
        "--alpha",
        *ALPHAS,
        "-p",
        "bootstrap_samples",
        str(SAMPLES),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="the generated campaign (made here when absent)")
    parser.add_argument("--repeat", type=int, default=1, help="rotations (medians printed)")
    parser.add_argument("--before", type=Path, help="another checkout of riskreport, timed in the same rotation")
    parser.add_argument("--skip-campaign", action="store_true")
    args = parser.parse_args()
    trees = {"": ROOT, **({" (before)": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = args.data or tmp / "campaign"
        if not args.skip_campaign and not (data / "collection.toml").exists():
            make_collection(data, 110, 250, 1000)
        print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}; checkout {ROOT}")
        runner = Runner(tmp)
        for i in range(args.repeat):
            print(f"  rotation {i + 1}:")
            runner.bare(i)
            for suffix, tree in trees.items():
                tag = f"{i}{suffix.strip(' ()')}"
                for kind in ("cold", "warm"):  # the first report of a machine, then every later one
                    out = tmp / f"demo-{kind}-{tag}"
                    runner.report(f"demo {kind}{suffix}", tree, tmp / f"cache-demo-{tag}", out, [])
                if args.skip_campaign:
                    continue
                cache = tmp / f"cache-campaign-{tag}"
                for kind in ("cold", "warm"):
                    out = tmp / f"campaign-{kind}-{tag}"
                    runner.report(f"campaign {kind}{suffix}", tree, cache, out, campaign_arguments(data))
        results = runner.results
        bare = statistics.median(results["bare papermill"]["wall"])
        print()
        print(f"{'':<34} {'wall s':>7} {'CPU s':>7} {'x bare':>7}  runner phases (evaluate, execute, export)")
        for name, entry in results.items():
            wall = statistics.median(entry["wall"])
            phases = ", ".join(f"{entry['phases'].get(k, 0):.1f}" for k in ("evaluate", "execute", "export"))
            print(
                f"{name:<34} {wall:7.1f} {statistics.median(entry['cpu']):7.1f} {wall / bare:7.2f}  "
                f"{phases if entry['phases'] else ''}"
            )
        for name, entry in results.items():
            if entry["cells"]:
                print(f"ten slowest cells, {name} (last rotation):")
                for seconds, index, line in entry["cells"]:
                    print(f"  {seconds:6.2f} s  cell {index:>2}  {line}")
        print(
            "goals (2 cores, idle): demo <= 2x bare, campaign cold <= 20 s, warm <= 10 s; "
            f"load average (1, 5, 15 min) at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}"
        )


if __name__ == "__main__":
    main()
