"""Benchmark: how fast a report starts and finishes, against papermill's own floor.

Side by side, alternating, `--repeat` times each (medians printed):

- `riskreport run` with no arguments (the demo collection, the `risk_report` template), cold: an
  empty evaluation cache, a new report folder;
- `papermill` executing a one-cell notebook that only imports what the template imports (numpy,
  matplotlib, seaborn, riskreport and its modules): Python start, papermill, a kernel, the imports
  and writing the notebook; the floor no report can go below.

With `--before DIR` (another checkout of riskreport, e.g. the main branch), that checkout's `riskreport run`
is timed in the same rotation, so a change is measured against what it changes on the same machine load.

Also prints the phases the runner records (`params.json` `phases_s`) and the CPU time (user + system)
of each command's whole process tree (CLI, kernel, figure writer: `getrusage(RUSAGE_CHILDREN)`):
on `cores` cores no command can finish in less than its CPU time / cores, which bounds the ratio
any scheduling can reach. Not collected by the test run.

    python tests/benchmarks/bench_startup.py [--repeat 3] [--before ../main]

Target: the demo report in at most 2.5x the import-only notebook. Every command runs in a new process with
an empty evaluation cache, from a temporary folder (so `python -m` imports the checkout named, not the
working directory's); the machine's load average is printed beside every run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMPORTS = (
    "import warnings\nimport numpy as np\nimport matplotlib.pyplot as plt\nimport seaborn as sns\n"
    "import riskreport as rr\nfrom riskreport import latex, plots, pools, report, significance\n"
)


def imports_notebook(path: Path, imports: str = IMPORTS) -> Path:
    """A one-cell notebook at `path` that only runs `imports`: the floor a report's notebook cannot go below."""
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(imports)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


def timed(command: list[str], env: dict, cwd: Path, stderr: int = subprocess.DEVNULL) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command's process tree, user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


ROOT = Path(__file__).resolve().parents[2]  # the checkout this benchmark belongs to


def run_report_timed(tree: Path, out: Path, env: dict, cwd: Path) -> tuple[float, float, dict]:
    """`riskreport run` of the checkout `tree` on the demo, cold: (wall s, CPU s, the phases it recorded)."""
    wall, cpu = timed(
        [sys.executable, "-m", "riskreport", "run", "--out", str(out), "--quiet"], {**env, "PYTHONPATH": str(tree)}, cwd
    )
    return wall, cpu, json.loads((out / "params.json").read_text()).get("phases_s", {})


def summary(name: str, walls: list[float], cpus: list[float], floor: float) -> None:
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"{name:<44} {wall:6.1f} s wall, {cpu:6.1f} s CPU (medians), ratio {wall / floor:.2f}x the floor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout of riskreport, timed in the same rotation")
    args = parser.parse_args()
    trees = {"demo report": ROOT, **({"demo report, --before": args.before.resolve()} if args.before else {})}
    walls: dict[str, list[float]] = {name: [] for name in ["floor", *trees]}
    cpus: dict[str, list[float]] = {name: [] for name in walls}
    phases: dict[str, list[dict]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        notebook = imports_notebook(tmp / "imports.ipynb")
        print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
        for i in range(args.repeat):
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            command = [sys.executable, "-m", "papermill", str(notebook), str(tmp / f"out-{i}.ipynb")]
            wall, cpu = timed(command + ["-k", "python3", "--no-progress-bar"], env, tmp)
            walls["floor"].append(wall)
            cpus["floor"].append(cpu)
            for n, (name, tree) in enumerate(trees.items()):
                cold = {**env, "RISKREPORT_CACHE": str(tmp / f"cache-{i}-{n}")}  # a new, empty cache
                wall, cpu, phase = run_report_timed(tree, tmp / f"report-{i}-{n}", cold, tmp)
                walls[name].append(wall)
                cpus[name].append(cpu)
                phases[name].append(phase)
            print(
                f"  run {i + 1}: "
                + ", ".join(f"{name} {times[-1]:.1f} s ({cpus[name][-1]:.1f} s CPU)" for name, times in walls.items())
                + f" (load average {os.getloadavg()[0]:.2f})"
            )
    floor = statistics.median(walls["floor"])
    print(
        f"papermill, imports-only notebook (the floor)  {floor:6.1f} s wall, {statistics.median(cpus['floor']):6.1f} s CPU"
    )
    for name in trees:
        summary(f"riskreport run, {name}, cold", walls[name], cpus[name], floor)
        for phase in ("evaluate", "execute", "export"):
            print(f"  {phase:<42} {statistics.median(p.get(phase, 0.0) for p in phases[name]):6.1f} s")
    cores = os.cpu_count() or 1
    cpu = statistics.median(cpus["demo report"])
    print(
        f"on {cores} cores the demo report cannot take less than {cpu / cores:.1f} s (its CPU time / cores), "
        f"{cpu / cores / floor:.2f}x the floor, however its work is scheduled"
    )
    ratio = statistics.median(walls["demo report"]) / floor
    print(f"ratio {ratio:.2f}x (target <= 2.5x); load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
