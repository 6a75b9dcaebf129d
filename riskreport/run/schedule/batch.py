"""Batch runs: the jobs of a TOML file, run in parallel processes, unchanged jobs skipped.

    [defaults]                  # any job key except name
    collection = "demo"
    keep = 5                    # keep the 5 newest reports of each job
    timeout = 3600              # seconds a job's report may take; then it is stopped, recorded as timed out

    [[job]]
    name = "demo-ndcg10"        # reports/jobs/<name>/<UTC stamp>/ and reports/jobs/<name>/latest
    measure = "nDCG@10"

A job's keys are `name`, `template` (default risk_report), `keep`, `show_code`, `timeout`, `qrels` (a qrels
file or an ir_datasets id joined to the runs of the job's collection), `figure_formats` (e.g. ["png", "pdf"];
default PNG alone), and any parameter of its template
(`collection`, `baseline`, `alphas`, `measure`, `systems`, ...).
A job whose fingerprint (template, effective parameters, input files, package versions; see
`runner.fingerprint`) equals that of its latest complete report is skipped unless forced.

>>> result = run_batch("examples/jobs.toml", reports_dir="reports")   # doctest: +SKIP
>>> print(result.table())                                              # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from riskreport.errors import RiskReportError
from riskreport.io.files import ensure_folder, write_atomic
from riskreport.io.processes import Interrupted, exit_with_parent, raise_on_signals
from riskreport.measures.evaluation import Progress
from riskreport.run.folders.gate import parse_gate
from riskreport.run.folders.index import LOGS, write_index
from riskreport.run.folders.lock import locked
from riskreport.run.report.runner import ReportPlan, check_timeout, job_folder, plan_report, prewarm
from riskreport.run.schedule.executors import (
    _check_dask,
    _connect,
    _dask,
    _describe,
    _local,
    _Log,
    _logged_warnings,
    _processes,
    execute_job,
)
from riskreport.run.schedule.hooks import after_job, gate_job
from riskreport.run.schedule.job_reports import clear_leftovers, last_success, prune, prune_job, why_run
from riskreport.run.schedule.jobs import Job, JobFileError, JobResult, _with_timeout, check_batch_gate, load_jobs

__all__ = ["BatchResult", "Job", "JobFileError", "JobResult", "load_jobs", "prune", "run_batch"]  # jobs file: run.jobs


BATCH_LOCK = ".lock"


@dataclass
class BatchResult:
    results: list[JobResult]
    log: Path | None = None
    index: Path | None = None
    dry_run: bool = False

    @property
    def gate(self) -> list[str]:
        """The risk gate's lines, every job's (`--fail-on`, a job's `fail_on`): one per offending verdict."""
        return [line for r in self.results for line in r.gate]

    @property
    def ok(self) -> bool:
        return all(r.status in ("ok", "skipped", "run") for r in self.results)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        return counts

    def table(self) -> str:
        """The summary table: one line per job, then the totals."""
        width = max([len(r.name) for r in self.results] + [3])
        lines = [f"{'job':<{width}}  {'status':<8}  {'time':>7}  report / reason"]
        for r in self.results:
            duration = f"{r.duration_s:.1f} s" if r.duration_s is not None else "–"
            where = _shown(Path(r.report) / "report.html") if r.report else ""
            detail = "  ".join(part for part in (where, r.message) if part)
            lines.append(f"{r.name:<{width}}  {r.status:<8}  {duration:>7}  {detail}")
        totals = ", ".join(f"{n} {status}" for status, n in self.counts().items())
        tail = f"{len(self.results)} job(s): {totals}" + (" (dry run, nothing written)" if self.dry_run else "")
        if self.index:
            tail += f"; index {_shown(self.index)}"
        if self.log:
            tail += f"; log {_shown(self.log)}"
        return "\n".join(lines + [tail])


def _shown(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_batch(
    jobs_file: str | os.PathLike,
    *,
    reports_dir: str | os.PathLike = "reports",
    jobs: int | None = None,
    force: bool = False,
    dry_run: bool = False,
    executor: str = "local",
    scheduler: str | None = None,
    wait: float = 0.0,
    progress: Progress | None = None,
    timeout: float | None = None,
    fail_on: str | None = None,
    fail_on_systems: list[str] | None = None,
) -> BatchResult:
    """Run the jobs of `jobs_file` into `reports_dir`; return one result per job, in file order.

    Jobs run in `jobs` processes (default: one per core), or on the Dask cluster at `scheduler`
    with `executor="dask"`. The reports folder is locked for the whole batch (`wait` seconds
    for another batch to finish, then `LockedError`). A failing job does not stop the others.
    `timeout` is the time limit in seconds of each report whose job (or the file's [defaults])
    sets none; a job that reaches its limit is stopped and recorded as `timeout`. A worker of a
    Dask cluster that dies during a job has the job run again once, on another worker.

    An interrupt (KeyboardInterrupt, or SIGTERM with `processes.raise_on_signals`) stops the
    running jobs (kernels ended, build folders removed, previous reports untouched), records them
    as interrupted in the log and the index, and is raised again as `processes.Interrupted`.

    `fail_on`, `fail_on_systems`: the risk gate (`gate.parse_gate`) applied to every job's report (a skipped
    job's latest), besides each job's own `fail_on`; its lines are `BatchResult.gate`. A job whose verdicts
    changed since its previous report runs its `on_change` command (`schedule.hooks`).
    """
    say = progress or (lambda message: None)
    timeout = check_timeout(timeout, "run_batch(timeout=...)")
    gate = parse_gate(fail_on, fail_on_systems)
    job_list = [
        job if job.timeout is not None or timeout is None else _with_timeout(job, timeout)
        for job in load_jobs(jobs_file)
    ]
    check_batch_gate(jobs_file, job_list, gate)
    reports = Path(reports_dir).resolve()
    if executor == "dask":
        _check_dask(scheduler)
    elif executor != "local":
        raise RiskReportError(f"Unknown executor {executor!r}; expected local or dask.")
    if dry_run:
        return BatchResult([_decide(job, reports, force, say)[0] for job in job_list], dry_run=True)
    ensure_folder(reports, "--reports")
    with locked(
        reports / BATCH_LOCK,
        wait=wait,
        owner={"jobs": str(Path(jobs_file).resolve())},
        on_wait=say,
        what=f"The reports folder {reports}",
        hint="Another batch is writing there; pass --wait [SECONDS] to wait for it.",
    ):
        log = _log_file(reports)
        tell = _Log(log, None, echo=say)
        tell(
            f"batch {Path(jobs_file).resolve()}: {len(job_list)} job(s), reports in {reports}, "
            f"executor {executor}{f' ({scheduler})' if scheduler else ''}"
        )
        results: dict[str, JobResult] = {}
        try:
            with _connect(scheduler) if executor == "dask" else nullcontext() as client:
                results, todo = _prepare(job_list, reports, force, log, tell, evaluate=executor == "local")
                _run_jobs(todo, results, job_list, reports, jobs, client, tell, Path(jobs_file))
        except KeyboardInterrupt as error:
            raise _interrupted(error, Path(jobs_file), job_list, results, reports, log, tell) from None
        for job in job_list:
            clear_leftovers(job_folder(reports, job.name))  # e.g. of an attempt lost with its Dask worker
            if results[job.name].status == "skipped":
                prune_job(reports, job_list, job.name, tell)
            gate_job(job, results[job.name], gate, tell)
            for line in results[job.name].gate:  # on stderr from the command line, at the end; here in the log
                _Log(log, None)(f"gate: {line}")
        _write_summary(log, [results[job.name] for job in job_list])
        batch = BatchResult([results[job.name] for job in job_list], log=log, index=write_index(reports))
        _Log(log, None)("summary\n" + batch.table())
        return batch


def _interrupted(
    error: KeyboardInterrupt,
    jobs_file: Path,
    job_list: list[Job],
    results: dict[str, JobResult],
    reports: Path,
    log: Path,
    tell: Progress,
) -> Interrupted:
    """After an interrupt (the workers already stopped): no build folder left, the batch's log, summary and index
    say which jobs finished and which were stopped; the `Interrupted` to raise, its line saying all that."""
    interrupt = error if isinstance(error, Interrupted) else Interrupted()
    stopped = [job.name for job in job_list if job.name not in results or results[job.name].status == "run"]
    for name in stopped:
        results[name] = JobResult(
            name, "interrupted", message=f"stopped by {interrupt.signal_name}; its previous report is untouched"
        )
    for job in job_list:
        clear_leftovers(job_folder(reports, job.name))
    finished = len(job_list) - len(stopped)
    tell(f"interrupted ({interrupt.signal_name}): {len(stopped)} job(s) stopped, {finished} done before")
    try:
        _write_summary(log, [results[job.name] for job in job_list])
        write_index(reports)
    except OSError:  # the interrupt is what to report; the next batch rewrites both
        pass
    names = ", ".join(stopped[:5]) + (", ..." if len(stopped) > 5 else "")
    return Interrupted(
        interrupt.signum,
        f"batch {jobs_file}: {len(stopped)} job(s) stopped ({names}), {finished} "
        f"finished before; their previous reports are untouched, no build folder "
        f"is left in {reports / 'jobs'}; log {_shown(log)}",
    )


def _run_jobs(
    todo: list[tuple[Job, dict]],
    results: dict[str, JobResult],
    job_list: list[Job],
    reports: Path,
    jobs: int | None,
    client,
    tell: Progress,
    jobs_file: Path,
) -> None:
    """Run the jobs to run (locally, or on the Dask `client`); count its changed verdicts (and run its
    `on_change`), prune and re-index as each finishes."""
    if todo:
        tell(
            f"running {len(todo)} job(s) "
            + ("on the Dask cluster" if client else f"in {_processes(jobs, len(todo))} process(es)")
        )
        outcomes = _dask(todo, client, jobs, tell) if client else _local(todo, jobs)
        try:
            for done, result in enumerate(outcomes, start=1):
                results[result.name] = result
                job = next(j for j in job_list if j.name == result.name)
                after_job(job, result, jobs_file, tell)
                detail = (
                    _shown(Path(result.report) / "report.html")
                    if result.status == "ok" and result.report
                    else result.message
                )
                duration = f"{result.duration_s:.1f} s" if result.duration_s is not None else ""
                tell(f"[{done}/{len(todo)}] {result.status:<6} {result.name}  {duration}  {detail}")
                prune_job(reports, job_list, result.name, tell)
                write_index(reports)
        finally:
            outcomes.close()  # interrupted here rather than in the pool: its workers are stopped all the same


def _prepare(
    job_list: list[Job], reports: Path, force: bool, log: Path, tell: _Log, evaluate: bool
) -> tuple[dict[str, JobResult], list[tuple[Job, dict]]]:
    """Decide each job (skip, run, error); with `evaluate`, evaluate the runs of those to run here, once."""
    results: dict[str, JobResult] = {}
    todo: list[tuple[Job, dict]] = []
    for job in job_list:
        clear_leftovers(job_folder(reports, job.name))
        result, plan = _decide(job, reports, force, tell)
        if result.status != "run" or plan is None:
            results[job.name] = result
            continue
        if evaluate:  # with every core, before the jobs compete for them
            job_log = _Log(log, job.name, echo=tell.echo)
            try:
                with _logged_warnings(job_log):
                    prewarm(plan.params, _Log(log, job.name), plan.template.instances)
            except Exception as error:  # noqa: BLE001 - a job's bad input must not stop the batch
                results[job.name] = JobResult(job.name, "error", message=_describe(error))
                job_log(f"error: {results[job.name].message}")
                continue
        todo.append((job, _spec(job, plan, reports, log)))
    return results, todo


def _decide(job: Job, reports: Path, force: bool, say: Progress) -> tuple[JobResult, ReportPlan | None]:
    try:
        with _logged_warnings(lambda message: say(f"{job.name}: {message}")):
            plan = plan_report(
                job.template, parameters=job.parameters, show_code=job.show_code, figure_formats=job.figure_formats
            )
    except Exception as error:  # noqa: BLE001 - reported per job
        say(f"{job.name}: error: {_describe(error)}")
        return JobResult(job.name, "error", message=_describe(error)), None
    previous = last_success(reports, job.name)
    latest = str(job_folder(reports, job.name) / "latest")
    if previous is not None and previous.get("fingerprint") == plan.fingerprint and not force:
        message = f"unchanged since {previous.get('finished_utc', '?')}"
        say(f"{job.name}: skipped, {message}")
        return JobResult(job.name, "skipped", report=latest, message=message), plan
    reason = "forced" if force else why_run(plan, previous)
    say(f"{job.name}: to run ({reason})")
    return JobResult(job.name, "run", message=reason), plan


def _spec(job: Job, plan: ReportPlan, reports: Path, log: Path) -> dict:
    """Everything a worker needs, as plain data (it may run on another machine with the same paths)."""
    return {
        "name": job.name,
        "template": str(plan.template.path),
        "parameters": {**job.parameters, "collection": plan.effective["collection"]},
        "show_code": job.show_code,
        "figure_formats": job.figure_formats,
        "reports_dir": str(reports),
        "log": str(log),
        "timeout": job.timeout,
    }


def _write_summary(log: Path, results: list[JobResult]) -> None:
    """`logs/batch-<stamp>.json` beside the log: every job of the batch with its status, for the index."""
    summary = {
        "log": log.name,
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "jobs": [asdict(r) for r in results],
    }
    write_atomic(log.with_suffix(".json"), json.dumps(summary, indent=2) + "\n")


def _log_file(reports: Path) -> Path:
    folder = reports / LOGS
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path, n = folder / f"batch-{stamp}.log", 1
    while path.exists():
        n += 1
        path = folder / f"batch-{stamp}-{n}.log"
    path.touch()
    return path


def _worker_main() -> int:
    """`python -m riskreport.run.schedule.batch`: one job spec (JSON) on stdin, its result (JSON) on stdout.

    It ends with the Dask worker that started it (a killed worker leaves no job running unseen,
    whose report would race the retry's); SIGTERM stops its kernel and removes its build folder.
    """
    exit_with_parent()
    raise_on_signals()
    spec = json.loads(sys.stdin.read())
    try:
        print(json.dumps(execute_job(spec)), flush=True)
    except Interrupted as error:
        return error.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(_worker_main())
