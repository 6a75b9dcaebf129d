"""What a batch does with a job's report once it is in place: count the verdicts that changed since the job's
previous report, run the job's `on_change` command when some did, and apply the risk gate (`gate`).

`on_change` is a command (a list: program and arguments, no shell) from the jobs file, run as the user who runs
the batch, with the report's summary.json as its last argument, in the jobs file's folder, within
`on_change_timeout` seconds. Its failure (status, time limit, missing program) is logged and does not fail
the batch: the report is complete either way.

The command runs in a session (and process group) of its own, and is done when the whole group has ended (what
it started in the background too); at its time limit the whole group is stopped (SIGTERM, then SIGKILL), so
nothing it started outlives it. What it prints goes to temporary files, not pipes
(a chatty or stuck child cannot block it), and only its tail (`HOOK_TAIL` bytes) reaches the log.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from riskreport.measures.evaluation import Progress
from riskreport.run.folders.gate import Gate, offenders, parse_gate
from riskreport.run.folders.summary import SUMMARY, read_summary
from riskreport.run.schedule.jobs import Job, JobResult


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


HOOK_TAIL = 2048  # bytes of a failing hook's output that reach the log (its end, where the error usually is)
STOP_GRACE = 2.0  # seconds a hook's process group has between SIGTERM and SIGKILL


def run_hook(job: Job, summary: Path, cwd: Path, say: Progress) -> bool:
    """Run the job's `on_change` command with `summary` as its last argument; say how it went; True if it
    exited with status 0. It is done when its whole process group is (what it started in the background too),
    or at `on_change_timeout`, when the group is stopped."""
    command = [*job.on_change, str(summary)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(
                command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
            )
        except OSError as error:
            say(f"{job.name}: warning: on_change {command[0]} could not be run: {error.strerror or error}")
            return False
        try:
            status = _wait_group(process, job.on_change_timeout)
        except BaseException:  # an interrupt: the hook goes with the batch
            stop_group(process)
            raise
        if status is None:
            stop_group(process)
            say(
                f"{job.name}: warning: on_change {command[0]} stopped after {job.on_change_timeout:g} s "
                "(on_change_timeout), with every process it started"
            )
            return False
        if status != 0:
            say(f"{job.name}: warning: on_change {command[0]} exited with {status}: {_tail(err) or _tail(out)}")
            return False
    say(f"{job.name}: on_change {command[0]} done ({summary})")
    return True


def _wait_group(process: subprocess.Popen, limit: float) -> int | None:
    """The exit status of `process` once every process of its group has ended; None if `limit` seconds pass first."""
    deadline = time.monotonic() + limit
    try:
        status = process.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    while group_members(process.pid):
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.1)
    return status


def stop_group(process: subprocess.Popen) -> None:
    """SIGTERM the process group `process` leads, SIGKILL what is left after `STOP_GRACE` seconds; reap it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:  # the whole group is gone
            break
        end = time.monotonic() + STOP_GRACE
        while time.monotonic() < end and group_members(process.pid):
            time.sleep(0.05)
        if not group_members(process.pid):
            break
    try:
        process.wait(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        pass


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group `pgid`: from /proc where there is one, else whether
    `killpg(pgid, 0)` finds any (zombies count then)."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").is_file():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # gone meanwhile
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def _tail(handle) -> str:
    """The last `HOOK_TAIL` bytes a hook wrote to `handle`, as one line ('…' first when cut)."""
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - HOOK_TAIL))
    text = " ".join(handle.read().decode("utf-8", errors="replace").split())
    return ("…" + text) if size > HOOK_TAIL and text else text


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
