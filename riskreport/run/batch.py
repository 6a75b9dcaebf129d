"""Batch runs: the jobs of a TOML file, run in parallel processes, unchanged jobs skipped.

    [defaults]                  # any job key except name
    collection = "demo"
    keep = 5                    # keep the 5 newest reports of each job
    timeout = 3600              # seconds a job's report may take; then it is stopped, recorded as timed out

    [[job]]
    name = "demo-ndcg10"        # reports/jobs/<name>/<UTC stamp>/ and reports/jobs/<name>/latest
    measure = "nDCG@10"

A job's keys are `name`, `template` (default risk_report), `keep`, `show_code`, `timeout`, `qrels` (a qrels
file or an ir_datasets id joined to the runs of the job's collection), and any parameter of its template
(`collection`, `baseline`, `alphas`, `measure`, `systems`, ...).
A job whose fingerprint (template, effective parameters, input files, package versions; see
`runner.fingerprint`) equals that of its latest complete report is skipped unless forced.

>>> result = run_batch("examples/jobs.toml", reports_dir="reports")   # doctest: +SKIP
>>> print(result.table())                                              # doctest: +SKIP
"""
from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from riskreport.errors import (
    InputFormatError,
    ParameterError,
    ReportExecutionError,
    ReportTimeoutError,
    RiskReportError,
    UnknownNameError,
)
from riskreport.io.files import ensure_folder, write_atomic
from riskreport.io.processes import Interrupted, exit_with_parent, ignore_interrupts, raise_on_signals
from riskreport.measures.evaluation import Progress
from riskreport.measures.params import is_system_file
from riskreport.run.index import LOGS, write_index
from riskreport.run.lock import locked
from riskreport.run.runner import (
    FILE_PARAMETERS,
    ReportPlan,
    check_timeout,
    coerce_parameter,
    find_template,
    job_folder,
    plan_report,
    prewarm,
    run_report,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

JOB_KEYS = ("name", "template", "keep", "show_code", "timeout", "qrels")
JOB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
BATCH_LOCK = ".lock"
STOP_GRACE = 20.0   # seconds an interrupted batch waits for its running jobs to stop (Dask) before it lets go


class JobFileError(RiskReportError):
    """A jobs file that cannot be read or does not follow its format."""


@dataclass(frozen=True)
class Job:
    """One job of a jobs file, checked: template found, parameters of the declared types."""

    name: str
    template: str
    parameters: dict
    keep: int | None = None
    show_code: bool = False
    timeout: float | None = None   # seconds its report may take (None: the batch's `timeout`, if any)


@dataclass
class JobResult:
    """Outcome of one job: ok, failed (a template cell failed), timeout (its report reached its time limit),
    error, skipped, run (dry run), or interrupted (the batch was stopped while the job ran)."""

    name: str
    status: str
    duration_s: float | None = None
    report: str | None = None      # report folder: the new one, the failed one, or the latest (skipped)
    message: str = ""


@dataclass
class BatchResult:
    results: list[JobResult]
    log: Path | None = None
    index: Path | None = None
    dry_run: bool = False

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


# ---- the jobs file ---------------------------------------------------------------------------

def load_jobs(path: str | os.PathLike) -> list[Job]:
    """Read and check a jobs file; raise `JobFileError` naming the file, job, key and expectation."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JobFileError(f"{path}: no such jobs file.") from None
    except (OSError, UnicodeDecodeError) as error:
        raise JobFileError(f"{path}: cannot read the jobs file ({error}).") from None
    except tomllib.TOMLDecodeError as error:
        raise JobFileError(f"{path}: not valid TOML: {error}.") from None
    for key in data:
        if key not in ("defaults", "job"):
            raise JobFileError(f"{path}: unknown top-level key {key!r} (expected a [defaults] table and "
                               "[[job]] entries).")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise JobFileError(f"{path}: 'defaults' must be a table ([defaults]), got {type(defaults).__name__}.")
    if "name" in defaults:
        raise JobFileError(f"{path}, [defaults]: key 'name' is not allowed there (each [[job]] names itself).")
    entries = data.get("job")
    if isinstance(entries, dict):
        raise JobFileError(f"{path}: write each job as [[job]] (an array of tables), not [job].")
    if not entries or not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise JobFileError(f"{path}: no jobs (expected one or more [[job]] entries, each with a name).")
    jobs: list[Job] = []
    for number, entry in enumerate(entries, start=1):
        job = _load_job(path, number, defaults, entry)
        if job.name in [j.name for j in jobs]:
            first = [j.name for j in jobs].index(job.name) + 1
            raise JobFileError(f"{path}: job name {job.name!r} is used twice (jobs {first} and {number}); "
                               "names must be unique, they name the report folders.")
        jobs.append(job)
    return jobs


def _load_job(path: Path, number: int, defaults: dict, entry: dict) -> Job:
    name = entry.get("name")
    if not isinstance(name, str) or not JOB_NAME.fullmatch(name):
        raise JobFileError(f"{path}, job {number}: key 'name' must be a name of letters, digits, '.', '_' or '-' "
                           f"(it names the folder reports/jobs/<name>), got {name!r}.")
    where = f"{path}, job {name!r}"
    merged = {**defaults, **entry}
    del merged["name"]

    def bad(key: str, problem: str) -> JobFileError:
        origin = " (from [defaults])" if key in defaults and key not in entry else ""
        return JobFileError(f"{where}, key {key!r}{origin}: {problem}")

    template = merged.pop("template", "risk_report")
    if not isinstance(template, str) or not template:
        raise bad("template", f"expected a template name or a path to an .ipynb file, got {template!r}.")
    if template.endswith(".ipynb") or "/" in template:
        template = str((path.parent / Path(template).expanduser()).resolve())
    try:
        tpl = find_template(template)
    except RiskReportError as error:
        raise bad("template", str(error)) from None
    keep = merged.pop("keep", None)
    if keep is not None and (not isinstance(keep, int) or isinstance(keep, bool) or keep < 1):
        raise bad("keep", f"expected a whole number ≥ 1 (reports of the job to keep), got {keep!r}.")
    show_code = merged.pop("show_code", False)
    if not isinstance(show_code, bool):
        raise bad("show_code", f"expected true or false, got {show_code!r}.")
    qrels = merged.pop("qrels", None)
    timeout = merged.pop("timeout", None)
    try:
        timeout = check_timeout(timeout, "expected")
    except ParameterError:
        raise bad("timeout", f"expected a time limit in seconds, a number > 0 (e.g. timeout = 3600), "
                             f"got {timeout!r}.") from None
    parameters = {}
    for key, value in merged.items():
        if key not in tpl.parameters:
            known = list(JOB_KEYS) + list(tpl.parameters)
            close = difflib.get_close_matches(key, known, n=1)
            raise bad(key, "unknown key" + (f"; did you mean {close[0]!r}?" if close else ".") +
                      f" Expected {', '.join(JOB_KEYS)} or a parameter of template {tpl.name!r}: "
                      f"{', '.join(tpl.parameters)}.")
        if key == "collection" and isinstance(value, str) and (value.startswith((".", "~")) or "/" in value):
            value = str((path.parent / Path(value).expanduser()).resolve())
        elif key in FILE_PARAMETERS and isinstance(value, str) and (
                is_system_file(value) or (path.parent / Path(value).expanduser()).is_file()):
            value = str((path.parent / Path(value).expanduser()).resolve())    # a file named relative to the jobs file
        try:
            parameters[key] = coerce_parameter(tpl, key, value)
        except (ParameterError, UnknownNameError, InputFormatError) as error:
            raise bad(key, str(error)) from None
    if qrels is not None:
        parameters["collection"] = _with_qrels(path, parameters.get("collection", "demo"), qrels, bad)
    return Job(name, template, parameters, keep, show_code, timeout)


def _with_qrels(path: Path, collection: str, qrels, bad) -> str:
    """A job's `qrels` (a file relative to the jobs file, or an ir_datasets id) joined to its collection's runs."""
    from riskreport.io.inputs import with_qrels
    if not isinstance(qrels, str) or not qrels:
        raise bad("qrels", f"expected a qrels file or an ir_datasets id (irds:<id>), got {qrels!r}.")
    local = path.parent / Path(qrels).expanduser()
    try:
        return with_qrels(collection, str(local.resolve()) if local.is_file() else qrels)
    except RiskReportError as error:
        raise bad("qrels", str(error)) from None


# ---- planning: run or skip -------------------------------------------------------------------

def last_success(reports_dir: Path, job: str) -> dict | None:
    """params.json of the job's latest complete report (what `latest` points at), if any."""
    params = job_folder(reports_dir, job) / "latest" / "params.json"
    try:
        record = json.loads(params.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("status") == "ok" else None


def why_run(plan: ReportPlan, previous: dict | None) -> str:
    """What changed since the last complete report: the reason a job is run."""
    if previous is None:
        return "no complete report yet"
    reasons = []
    if previous.get("template_sha256") != plan.record["template_sha256"]:
        reasons.append("template changed")
    old = (previous.get("collection") or {}).get("files_sha256") or {}
    new = plan.record["collection"]["files_sha256"]
    files = sorted(Path(f).name for f in set(old) | set(new) if old.get(f) != new.get(f))
    if files:
        reasons.append("input files changed: " + ", ".join(files[:3]) + (", ..." if len(files) > 3 else ""))
    old_parameters = previous.get("parameters") or {}
    changed = sorted(k for k in set(old_parameters) | set(plan.effective)
                     if old_parameters.get(k) != plan.effective.get(k))
    if changed:
        reasons.append("parameters changed: " + ", ".join(changed))
    versions = sorted(k for k, v in plan.record["versions"].items() if (previous.get("versions") or {}).get(k) != v)
    if versions:
        reasons.append("versions changed: " + ", ".join(versions))
    if previous.get("show_code") != plan.record["show_code"]:
        reasons.append("show_code changed")
    return "; ".join(reasons) or "fingerprint changed"


# ---- the batch -------------------------------------------------------------------------------

def run_batch(jobs_file: str | os.PathLike, *, reports_dir: str | os.PathLike = "reports", jobs: int | None = None,
              force: bool = False, dry_run: bool = False, executor: str = "local", scheduler: str | None = None,
              wait: float = 0.0, progress: Progress | None = None, timeout: float | None = None) -> BatchResult:
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
    """
    say = progress or (lambda message: None)
    timeout = check_timeout(timeout, "run_batch(timeout=...)")
    job_list = [job if job.timeout is not None or timeout is None else _with_timeout(job, timeout)
                for job in load_jobs(jobs_file)]
    reports = Path(reports_dir).resolve()
    if executor == "dask":
        _check_dask(scheduler)
    elif executor != "local":
        raise RiskReportError(f"Unknown executor {executor!r}; expected local or dask.")
    if dry_run:
        return BatchResult([_decide(job, reports, force, say)[0] for job in job_list], dry_run=True)
    ensure_folder(reports, "--reports")
    with locked(reports / BATCH_LOCK, wait=wait, owner={"jobs": str(Path(jobs_file).resolve())}, on_wait=say,
                what=f"The reports folder {reports}",
                hint="Another batch is writing there; pass --wait [SECONDS] to wait for it."):
        log = _log_file(reports)
        tell = _Log(log, None, echo=say)
        tell(f"batch {Path(jobs_file).resolve()}: {len(job_list)} job(s), reports in {reports}, "
             f"executor {executor}{f' ({scheduler})' if scheduler else ''}")
        results: dict[str, JobResult] = {}
        try:
            with _connect(scheduler) if executor == "dask" else nullcontext() as client:
                results, todo = _prepare(job_list, reports, force, log, tell, evaluate=executor == "local")
                _run_jobs(todo, results, job_list, reports, jobs, client, tell)
        except KeyboardInterrupt as error:
            raise _interrupted(error, Path(jobs_file), job_list, results, reports, log, tell) from None
        for job in job_list:
            _clear_leftovers(job_folder(reports, job.name))    # e.g. of an attempt lost with its Dask worker
            if results[job.name].status == "skipped":
                _prune_job(reports, job_list, job.name, tell)
        _write_summary(log, [results[job.name] for job in job_list])
        batch = BatchResult([results[job.name] for job in job_list], log=log, index=write_index(reports))
        _Log(log, None)("summary\n" + batch.table())
        return batch


def _with_timeout(job: Job, timeout: float) -> Job:
    from dataclasses import replace
    return replace(job, timeout=timeout)


def _interrupted(error: KeyboardInterrupt, jobs_file: Path, job_list: list[Job], results: dict[str, JobResult],
                 reports: Path, log: Path, tell: Progress) -> Interrupted:
    """After an interrupt (the workers already stopped): no build folder left, the batch's log, summary and index
    say which jobs finished and which were stopped; the `Interrupted` to raise, its line saying all that."""
    interrupt = error if isinstance(error, Interrupted) else Interrupted()
    stopped = [job.name for job in job_list if job.name not in results or results[job.name].status == "run"]
    for name in stopped:
        results[name] = JobResult(name, "interrupted", message=f"stopped by {interrupt.signal_name}; its previous "
                                                               "report is untouched")
    for job in job_list:
        _clear_leftovers(job_folder(reports, job.name))
    finished = len(job_list) - len(stopped)
    tell(f"interrupted ({interrupt.signal_name}): {len(stopped)} job(s) stopped, {finished} done before")
    try:
        _write_summary(log, [results[job.name] for job in job_list])
        write_index(reports)
    except OSError:        # the interrupt is what to report; the next batch rewrites both
        pass
    names = ", ".join(stopped[:5]) + (", ..." if len(stopped) > 5 else "")
    return Interrupted(interrupt.signum, f"batch {jobs_file}: {len(stopped)} job(s) stopped ({names}), {finished} "
                                         f"finished before; their previous reports are untouched, no build folder "
                                         f"is left in {reports / 'jobs'}; log {_shown(log)}")


def _run_jobs(todo: list[tuple[Job, dict]], results: dict[str, JobResult], job_list: list[Job], reports: Path,
              jobs: int | None, client, tell: Progress) -> None:
    """Run the jobs to run (locally, or on the Dask `client`); prune and re-index as each finishes."""
    if todo:
        tell(f"running {len(todo)} job(s) " + ("on the Dask cluster" if client else
                                               f"in {_processes(jobs, len(todo))} process(es)"))
        outcomes = _dask(todo, client, jobs, tell) if client else _local(todo, jobs)
        try:
            for done, result in enumerate(outcomes, start=1):
                results[result.name] = result
                detail = _shown(Path(result.report) / "report.html") if result.status == "ok" and result.report else \
                    result.message
                duration = f"{result.duration_s:.1f} s" if result.duration_s is not None else ""
                tell(f"[{done}/{len(todo)}] {result.status:<6} {result.name}  {duration}  {detail}")
                _prune_job(reports, job_list, result.name, tell)
                write_index(reports)
        finally:
            outcomes.close()     # interrupted here rather than in the pool: its workers are stopped all the same


def _prepare(job_list: list[Job], reports: Path, force: bool, log: Path, tell: _Log,
             evaluate: bool) -> tuple[dict[str, JobResult], list[tuple[Job, dict]]]:
    """Decide each job (skip, run, error); with `evaluate`, evaluate the runs of those to run here, once."""
    results: dict[str, JobResult] = {}
    todo: list[tuple[Job, dict]] = []
    for job in job_list:
        _clear_leftovers(job_folder(reports, job.name))
        result, plan = _decide(job, reports, force, tell)
        if result.status != "run" or plan is None:
            results[job.name] = result
            continue
        if evaluate:                              # with every core, before the jobs compete for them
            job_log = _Log(log, job.name, echo=tell.echo)
            try:
                with _logged_warnings(job_log):
                    prewarm(plan.params, _Log(log, job.name), plan.template.instances)
            except Exception as error:   # noqa: BLE001 - a job's bad input must not stop the batch
                results[job.name] = JobResult(job.name, "error", message=_describe(error))
                job_log(f"error: {results[job.name].message}")
                continue
        todo.append((job, _spec(job, plan, reports, log)))
    return results, todo


def _decide(job: Job, reports: Path, force: bool, say: Progress) -> tuple[JobResult, ReportPlan | None]:
    try:
        with _logged_warnings(lambda message: say(f"{job.name}: {message}")):
            plan = plan_report(job.template, parameters=job.parameters, show_code=job.show_code)
    except Exception as error:   # noqa: BLE001 - reported per job
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
    return {"name": job.name, "template": str(plan.template.path),
            "parameters": {**job.parameters, "collection": plan.effective["collection"]},
            "show_code": job.show_code, "reports_dir": str(reports), "log": str(log), "timeout": job.timeout}


def execute_job(spec: dict) -> dict:
    """Build one job's report (in a worker process); return a `JobResult` as a dict."""
    started = time.time()
    log = _Log(Path(spec["log"]), spec["name"])
    log(f"started in process {os.getpid()}")
    try:
        with _logged_warnings(log):
            folder = run_report(spec["template"], parameters=spec["parameters"], reports_dir=spec["reports_dir"],
                                show_code=spec["show_code"], progress=log, job=spec["name"], update_index=False,
                                workers=spec.get("workers", 1), timeout=spec.get("timeout"))
        result = JobResult(spec["name"], "ok", report=str(folder))
    except KeyboardInterrupt as error:   # its kernel is stopped and its build folder removed (`build_report`)
        log(f"interrupted: {error}")
        raise
    except ReportTimeoutError as error:
        result = JobResult(spec["name"], "timeout", report=str(error.kept) if error.kept else None,
                           message=error.reason)
    except ReportExecutionError as error:
        result = JobResult(spec["name"], "failed", report=str(error.kept) if error.kept else None,
                           message=error.reason)
    except Exception as error:   # noqa: BLE001 - a job's failure is its result, not the batch's
        log(traceback.format_exc().rstrip())
        result = JobResult(spec["name"], "error", message=_describe(error))
    result.duration_s = round(time.time() - started, 3)
    log(f"{result.status} in {result.duration_s:.1f} s" + (f": {result.message}" if result.message else ""))
    return asdict(result)


def _processes(jobs: int | None, todo: int) -> int:
    return max(1, min(jobs or os.cpu_count() or 1, todo))


_IN_JOB: list[bool] = [False]     # in a worker process: whether a job is running


def _init_worker() -> None:
    """A worker process of a local batch. It ends with the batch process (`exit_with_parent`), however the batch
    dies; Ctrl-C, which the terminal sends to every process of the group, is left to the batch, which stops its
    workers with SIGTERM (`_stop_workers`); SIGTERM during a job stops the job's kernel and removes its build
    folder before the worker exits, and ends an idle worker at once."""
    exit_with_parent()
    raise_on_signals(busy=lambda: _IN_JOB[0])
    ignore_interrupts()


def _pool_job(spec: dict) -> dict:
    """`execute_job` in a worker of `_local`; an interrupted job ends its worker (the batch is stopping)."""
    _IN_JOB[0] = True
    try:
        return execute_job(spec)
    except KeyboardInterrupt as error:
        os._exit(getattr(error, "exit_code", 130))
    finally:
        _IN_JOB[0] = False


def _local(todo: list[tuple[Job, dict]], jobs: int | None) -> Generator[JobResult, None, None]:
    """Jobs in a pool of worker processes; the cores are shared out, so threads do not multiply with processes.

    Each worker ends with the batch process (`exit_with_parent`), however the batch dies; when the
    batch is interrupted its workers are stopped, each after cleaning up its job (`_stop_workers`).
    """
    processes = _processes(jobs, len(todo))
    workers = max(1, (os.cpu_count() or 1) // processes)
    with ProcessPoolExecutor(max_workers=processes, initializer=_init_worker) as pool:
        futures = {pool.submit(_pool_job, {**spec, "workers": workers}): job.name for job, spec in todo}
        try:
            for future in as_completed(futures):
                yield _collect(futures[future], future.result)
        except BaseException:      # an interrupt, or the generator closed early (GeneratorExit)
            _stop_workers(pool)
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _stop_workers(pool: ProcessPoolExecutor, grace: float = 10.0) -> None:
    """SIGTERM every worker of `pool` and wait for them: each stops its kernel and removes its build folder.
    One still alive after `grace` seconds is killed (its kernel then ends with it, `exit_with_parent`)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())    # the pool's own record of them
    for process in processes:
        if process.is_alive():
            process.terminate()
    end = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, end - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join(2.0)
            time.sleep(1.0)   # its kernel and the kernel's figure writer notice within 0.5 s each


def _check_dask(scheduler: str | None) -> str:
    """The scheduler's address, once Dask distributed is known to be installed."""
    import importlib.util
    if importlib.util.find_spec("distributed") is None:
        raise RiskReportError("--executor dask needs Dask distributed: pip install 'riskreport[dask]'.")
    if not scheduler:
        raise RiskReportError("--executor dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786).")
    return scheduler


@contextmanager
def _connect(scheduler: str | None):
    """A Dask client of the cluster at `scheduler`, or a clear error."""
    scheduler = _check_dask(scheduler)
    from distributed import Client
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as error:
        raise RiskReportError(f"Cannot reach the Dask scheduler at {scheduler!r}: {error}") from None
    with client:
        yield client


def _dask(todo: list[tuple[Job, dict]], client, limit: int | None, say: Progress) -> Generator[JobResult, None, None]:
    """Jobs on a Dask cluster, each in a fresh Python process on its worker.

    The collections, templates and the reports folder must be at the same paths on the workers.
    A job whose task fails for want of a worker (its worker died: `KilledWorker` once the scheduler
    gives up rescheduling it, a lost connection, ...) is submitted once more; a second such failure
    is the job's result, `error`, with the reason. An interrupt cancels what is still queued and
    stops the jobs running on workers (a Dask `Event` their tasks watch: each job's process gets
    SIGTERM, ends its kernel and removes its build folder) before the batch lets go of its lock.
    """
    from distributed import Event
    from distributed import as_completed as dask_completed
    from distributed import wait as dask_wait
    stop = f"riskreport-stop-{os.urandom(6).hex()}"
    pending = [(job, {**spec, "stop": stop}) for job, spec in todo]
    names: dict[str, tuple[Job, dict]] = {}
    retried: dict[str, str] = {}      # job name -> why its first attempt was lost
    running = dask_completed()

    def submit(job: Job, spec: dict) -> None:
        key = f"riskreport-{job.name}-{os.urandom(4).hex()}"
        future = client.submit(execute_job_isolated, spec, pure=False, key=key)
        names[future.key] = (job, spec)
        running.add(future)

    for _ in range(min(limit or len(pending), len(pending))):
        submit(*pending.pop(0))
    try:
        for future in running:
            job, spec = names[future.key]
            try:
                result = JobResult(**future.result())
            except Exception as error:   # noqa: BLE001 - the task did not return (the job's own failures do)
                if _lost(error) and job.name not in retried:
                    retried[job.name] = _describe(error)
                    say(f"{job.name}: its Dask worker was lost ({retried[job.name]}); running it again")
                    submit(job, spec)
                    continue
                result = JobResult(job.name, "error", message=(
                    f"its Dask worker was lost twice: first {retried[job.name]}, then {_describe(error)}"
                    if _lost(error) else f"its Dask task failed: {_describe(error)}"))
            if job.name in retried and result.status != "error":
                again = f"run again after its Dask worker was lost ({retried[job.name]})"
                result.message = "; ".join(m for m in (result.message, again) if m)
            yield result
            if pending:
                submit(*pending.pop(0))
    except BaseException:
        futures = list(running.futures)
        Event(stop, client=client).set()
        dask_wait(futures, timeout=STOP_GRACE)       # each running job cleans up
        client.cancel(futures)
        raise


def _lost(error: Exception) -> bool:
    """Whether a task's exception says its worker went away (not that the task raised)."""
    from distributed import KilledWorker
    return isinstance(error, (KilledWorker, OSError)) or type(error).__name__ == "CancelledError"


def execute_job_isolated(spec: dict) -> dict:
    """`execute_job` in a fresh interpreter: Dask runs tasks in threads, papermill needs its own process.

    When the batch sets the Dask event `spec["stop"]` (it was interrupted), the job's process gets
    SIGTERM: it stops its kernel and removes its build folder.
    """
    process = subprocess.Popen([sys.executable, "-m", "riskreport.run.batch"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = _stop_event(spec.get("stop"))
    given: str | None = json.dumps(spec)
    while True:
        try:
            stdout, stderr = process.communicate(given, timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            given = None                     # sent; communicate goes on where it was
            if stop is not None and process.returncode is None and stop.is_set():
                process.terminate()
    try:
        return json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = " ".join(stderr.strip().splitlines()[-3:])
        return asdict(JobResult(spec["name"], "error", message=f"worker process exited with {process.returncode}: "
                                                                 f"{tail}"))


def _stop_event(name: str | None):
    """The Dask event a batch sets to stop its running jobs (None outside a Dask task)."""
    if not name:
        return None
    try:
        from distributed import Event
        return Event(name)
    except (ImportError, ValueError):      # ValueError: no Dask client here (the task was not run by Dask)
        return None


def _collect(name: str, get: Callable[[], dict]) -> JobResult:
    try:
        return JobResult(**get())
    except Exception as error:   # noqa: BLE001 - e.g. a worker process killed by the OOM killer
        return JobResult(name, "error", message=f"worker failed: {_describe(error)}")


@contextmanager
def _logged_warnings(say: Progress) -> Iterator[None]:
    """Warnings (e.g. run topics absent from the qrels) go to the batch log, once each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            yield
        finally:
            for message in dict.fromkeys(str(w.message) for w in caught):
                say(f"warning: {message}")


def _describe(error: BaseException) -> str:
    return str(error) if isinstance(error, RiskReportError) else f"{type(error).__name__}: {error}"


# ---- housekeeping ----------------------------------------------------------------------------

def prune(folder: Path, keep: int) -> list[Path]:
    """Delete all but the `keep` newest complete and the `keep` newest failed reports in `folder`.

    The report `latest` points at is never deleted. Returns the deleted folders.
    """
    latest = (folder / "latest").resolve() if (folder / "latest").is_symlink() else None
    by_status: dict[str, list[tuple[str, Path]]] = {}
    for params in folder.glob("*/params.json"):
        report = params.parent
        if report.is_symlink() or report.name.startswith("."):
            continue
        try:
            record = json.loads(params.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        by_status.setdefault(record.get("status"), []).append((record.get("finished_utc") or "", report))
    doomed = [report for reports in by_status.values()
              for _, report in sorted(reports, key=lambda r: (r[0], r[1].name), reverse=True)[keep:]
              if report.resolve() != latest]
    for report in doomed:   # renamed away first: the index never lists a half-deleted report
        trash = Path(tempfile.mkdtemp(prefix=f".old-{report.name}-", dir=folder))
        os.replace(report, trash / report.name)
        shutil.rmtree(trash, ignore_errors=True)
    return doomed


def _prune_job(reports: Path, job_list: list[Job], name: str, say: Progress) -> None:
    job = next(j for j in job_list if j.name == name)
    if job.keep is not None:
        deleted = prune(job_folder(reports, name), job.keep)
        if deleted:
            say(f"{name}: keep = {job.keep}, deleted {', '.join(p.name for p in deleted)}")


def _clear_leftovers(folder: Path) -> None:
    """Remove what killed runs of this job left behind (hidden build, trash and link folders).

    Safe because the batch lock is held: no other process writes into a job's folder.
    """
    if not folder.is_dir():
        return
    for leftover in folder.iterdir():
        if leftover.name.startswith((".tmp-", ".old-", ".latest-")):
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)


def _write_summary(log: Path, results: list[JobResult]) -> None:
    """`logs/batch-<stamp>.json` beside the log: every job of the batch with its status, for the index."""
    summary = {"log": log.name, "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "jobs": [asdict(r) for r in results]}
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


@dataclass
class _Log:
    """Appends timestamped lines to the batch log (from any process); optionally echoes them."""

    path: Path
    job: str | None
    echo: Progress | None = field(default=None, repr=False)

    def __call__(self, message: str) -> None:
        stamp = datetime.now(timezone.utc).strftime("%H:%M:%S")
        prefix = f"[{self.job}] " if self.job else ""
        with open(self.path, "a", encoding="utf-8") as out:   # O_APPEND: whole lines from parallel writers
            out.write(f"{stamp} {prefix}{message}\n")
        if self.echo:
            self.echo(prefix + message)


def _worker_main() -> int:
    """`python -m riskreport.run.batch`: one job spec (JSON) on stdin, its result (JSON) on stdout.

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
