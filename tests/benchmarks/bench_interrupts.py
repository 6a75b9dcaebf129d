"""Benchmark: how fast an interrupt or a time limit ends a report.

`--repeat` times each (medians, min and max printed), on a template whose last cell sleeps for ever
and the tiny collection of the tests:

- Ctrl-C on `riskreport run`: SIGINT to the CLI's process group while the cell runs; seconds
  from the signal to the CLI's exit (the kernel killed, the build folder removed);
- SIGTERM on `riskreport batch` of two such jobs (`--jobs 2`): seconds from the signal to exit;
- `run_report(timeout=T)`: seconds from the deadline (T after the call) to the call's return with
  `ReportTimeoutError` (the kernel stopped, papermill's notebook saved, the failed report's HTML
  exported and the folder kept).

Not collected by the test run.

    python tests/benchmarks/bench_interrupts.py [--repeat 5] [--timeout 8]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import write_qrels, write_run  # noqa: E402
from test_interrupts import FOREVER, write_template  # noqa: E402

CLI = [sys.executable, "-m", "riskreport"]


def collection(root: Path) -> Path:
    write_qrels(root / "qrels.txt", [(t, f"{t}-r", 1) for t in "1234"])
    for system in ("base", "other"):
        write_run(root / "runs" / f"{system}.run", [(t, f"{t}-r", 1.0) for t in "1234"])
    (root / "collection.toml").write_text('measure = "P@2"\nbaseline = "base"\n')
    return root


def wait_for(condition, seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("the command did not get going")
        time.sleep(0.05)


def signal_to_exit(args: list[str], cwd: Path, ready, signum: int, group: bool) -> float:
    process = subprocess.Popen(
        CLI + args, cwd=cwd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for(ready)
    time.sleep(1.0)
    (os.killpg if group else os.kill)(process.pid, signum)
    sent = time.monotonic()
    process.wait(120)
    assert process.returncode == 128 + signum, process.returncode
    return time.monotonic() - sent


def timeout_overshoot(template: Path, tiny: Path, out: Path, limit: float) -> float:
    from riskreport.errors import ReportTimeoutError
    from riskreport.run.report.runner import run_report

    started = time.monotonic()
    try:
        run_report(str(template), collection=str(tiny), parameters={"pause": FOREVER}, out=out, timeout=limit)
    except ReportTimeoutError:
        return time.monotonic() - started - limit
    raise AssertionError("no timeout")


def summary(name: str, values: list[float]) -> None:
    print(
        f"{name:<44} median {statistics.median(values):5.2f} s  (min {min(values):.2f}, max {max(values):.2f}, "
        f"n={len(values)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=8.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.environ["RISKREPORT_CACHE"] = str(root / "cache")
        template = write_template(root / "templates" / "sleeper.ipynb")
        tiny = collection(root / "tiny")
        jobs = root / "jobs.toml"
        jobs.write_text(
            f'[defaults]\ntemplate = "{template}"\ncollection = "{tiny}"\npause = {FOREVER}\n\n'
            '[[job]]\nname = "one"\n\n[[job]]\nname = "two"\n'
        )
        sigint, sigterm, overshoot = [], [], []
        for n in range(options.repeat):
            run = [
                "run",
                str(template),
                "--collection",
                str(tiny),
                "--out",
                str(root / f"out{n}"),
                "-q",
                "-p",
                "pause",
                str(FOREVER),
            ]
            sigint.append(
                signal_to_exit(
                    run, root, lambda: bool(list(root.glob(".tmp-*/report.ipynb"))), signal.SIGINT, group=True
                )
            )
            batch = ["batch", str(jobs), "--reports", str(root / "reports"), "--jobs", "2", "-q"]
            sigterm.append(
                signal_to_exit(
                    batch,
                    root,
                    lambda: len(list(root.glob("reports/jobs/*/.tmp-*/report.ipynb"))) == 2,
                    signal.SIGTERM,
                    group=False,
                )
            )
            overshoot.append(timeout_overshoot(template, tiny, root / f"limited{n}", options.timeout))
        summary("Ctrl-C on run: signal -> exit", sigint)
        summary("SIGTERM on a batch of 2 jobs: signal -> exit", sigterm)
        summary(f"run_report(timeout={options.timeout:g}): deadline -> return", overshoot)


if __name__ == "__main__":
    main()
