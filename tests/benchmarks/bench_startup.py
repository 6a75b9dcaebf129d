"""Benchmark: how fast a report starts and finishes, against papermill's own floor.

Side by side, alternating, `--repeat` times each (medians printed):

- `riskreport run` with no arguments (the demo collection, the `risk_report` template), cold: an
  empty evaluation cache, a new report folder;
- `papermill` executing a one-cell notebook that only imports what the template imports (numpy,
  matplotlib, seaborn, riskreport and its modules): Python start, papermill, a kernel, the imports
  and writing the notebook; the floor no report can go below.

Also prints the phases the runner records (`params.json` `phases_s`) and the CPU time (user + system)
of each command's whole process tree (CLI, kernel, figure writer: `getrusage(RUSAGE_CHILDREN)`):
on `cores` cores no command can finish in less than its CPU time / cores, which bounds the ratio
any scheduling can reach. Not collected by the test run.

    python tests/benchmarks/bench_startup.py [--repeat 3]

Target: the demo report in under 2x the import-only notebook.
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


def imports_notebook(path: Path) -> Path:
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(IMPORTS)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


def timed(command: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command's process tree, user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    report_times, floor_times, phases, report_cpu, floor_cpu = [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        notebook = imports_notebook(tmp / "imports.ipynb")
        print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
        for i in range(args.repeat):
            env = {**os.environ, "RISKREPORT_CACHE": str(tmp / f"cache-{i}")}  # cold: a new, empty cache
            wall, cpu = timed(
                [
                    sys.executable,
                    "-m",
                    "papermill",
                    str(notebook),
                    str(tmp / f"out-{i}.ipynb"),
                    "-k",
                    "python3",
                    "--no-progress-bar",
                ],
                env,
            )
            floor_times.append(wall)
            floor_cpu.append(cpu)
            out = tmp / f"report-{i}"
            wall, cpu = timed([sys.executable, "-m", "riskreport", "run", "--out", str(out), "--quiet"], env)
            report_times.append(wall)
            report_cpu.append(cpu)
            phases.append(json.loads((out / "params.json").read_text()).get("phases_s", {}))
            print(
                f"  run {i + 1}: imports-only notebook {floor_times[-1]:.1f} s, demo report {report_times[-1]:.1f} s "
                f"(load average {os.getloadavg()[0]:.2f})"
            )
    floor, report = statistics.median(floor_times), statistics.median(report_times)
    print(f"papermill, imports-only notebook (median of {args.repeat})  {floor:6.1f} s")
    print(f"riskreport run, demo report, cold (median)          {report:6.1f} s")
    for phase in ("evaluate", "execute", "export"):
        print(f"  {phase:<48} {statistics.median(p.get(phase, 0.0) for p in phases):6.1f} s")
    cores = os.cpu_count() or 1
    cpu, floor_c = statistics.median(report_cpu), statistics.median(floor_cpu)
    print(f"CPU time, whole process tree (median): demo report {cpu:.1f} s, imports-only notebook {floor_c:.1f} s")
    print(
        f"  on {cores} cores the demo report cannot take less than {cpu / cores:.1f} s, "
        f"{cpu / cores / floor:.2f}x the imports-only notebook, however its work is scheduled"
    )
    print(f"ratio {report / floor:.2f}x (target < 2x); load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
