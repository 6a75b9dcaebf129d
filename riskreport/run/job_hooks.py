"""What a batch does with a job's report once it is in place: count the verdicts that changed since the job's
previous report, run the job's `on_change` command when some did, and apply the risk gate (`gate`).

`on_change` is a command (a list: program and arguments, no shell) from the jobs file, run as the user who runs
the batch, with the report's summary.json as its last argument, in the jobs file's folder, within
`on_change_timeout` seconds. Its failure (status, time limit, missing program) is logged and does not fail
the batch: the report is complete either way.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from riskreport.measures.evaluation import Progress
from riskreport.run.gate import Gate, offenders, parse_gate
from riskreport.run.jobs import Job, JobResult
from riskreport.run.summary import SUMMARY, read_summary


def after_job(job: Job, result: JobResult, jobs_file: Path, say: Progress) -> None:
    """Record in `result` the verdicts changed since the job's previous report; run `on_change` when some did."""
    if result.status != "ok" or not result.report:
        return
    summary = read_summary(result.report)
    changes = (summary or {}).get("changes")
    if changes is None:
        return
    result.changes = int(changes.get("verdicts_changed") or 0)
    result.message = f"{result.changes} verdict(s) changed since {changes.get('previous')}"
    if result.changes and job.on_change:
        run_hook(job, Path(result.report) / SUMMARY, jobs_file.parent, say)


def run_hook(job: Job, summary: Path, cwd: Path, say: Progress) -> bool:
    """Run the job's `on_change` command with `summary` as its last argument; say how it went; True if it
    exited with status 0."""
    command = [*job.on_change, str(summary)]
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=job.on_change_timeout, check=False
        )
    except subprocess.TimeoutExpired:
        say(
            f"{job.name}: warning: on_change {command[0]} stopped after {job.on_change_timeout:g} s (on_change_timeout)"
        )
        return False
    except OSError as error:
        say(f"{job.name}: warning: on_change {command[0]} could not be run: {error.strerror or error}")
        return False
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        say(f"{job.name}: warning: on_change {command[0]} exited with {done.returncode}: {tail}")
        return False
    say(f"{job.name}: on_change {command[0]} done ({summary})")
    return True


def gate_job(job: Job, result: JobResult, gate: Gate | None, say: Progress) -> None:
    """The lines of the job's gate and the batch's (`--fail-on`) for its report (new, or the latest when skipped);
    a gated system the report does not have is said (a misspelt name must not pass the gate unseen)."""
    gates = [g for g in (parse_gate(job.fail_on, job.fail_on_systems), gate) if g is not None]
    if not gates or result.status not in ("ok", "skipped") or not result.report:
        return
    summary = read_summary(result.report) or {}
    if not summary.get("verdicts"):
        say(f"{job.name}: warning: the risk gate does not apply (its report has no verdicts: no tables/verdicts.csv)")
        return
    known = {v["system"] for v in summary["verdicts"]}
    for name in sorted({s for g in gates for s in g.systems} - known):
        say(f"{job.name}: warning: the gated system {name!r} is not a challenger of this report")
    lines = [line for g in gates for line in offenders(g, summary)]
    result.gate = [f"{job.name}: {line}" for line in dict.fromkeys(lines)]
