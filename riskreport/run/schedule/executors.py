"""Where a batch's jobs run: a pool of local processes or a Dask cluster, each job in a process of its own
that ends with its parent; a lost Dask worker reruns its job once; interrupted jobs stop their kernels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from riskreport.errors import ReportExecutionError, ReportTimeoutError, RiskReportError
from riskreport.io.processes import exit_with_parent, ignore_interrupts, raise_on_signals
from riskreport.measures.evaluation import Progress
from riskreport.run.report.executor_options import check_dask_address
from riskreport.run.report.runner import run_report
from riskreport.run.schedule.jobs import Job, JobResult

STOP_GRACE = 20.0  # seconds an interrupted batch waits for its running jobs to stop (Dask) before it lets go


def execute_job(spec: dict) -> dict:
    """Build one job's report (in a worker process); return a `JobResult` as a dict."""
    started = time.time()
    log = _Log(Path(spec["log"]), spec["name"])
    log(f"started in process {os.getpid()}")
    try:
        with _logged_warnings(log):
            folder = run_report(
                spec["template"],
                parameters=spec["parameters"],
                reports_dir=spec["reports_dir"],
                show_code=spec["show_code"],
                progress=log,
                job=spec["name"],
                update_index=False,
                workers=spec.get("workers", 1),
                timeout=spec.get("timeout"),
                figure_formats=spec.get("figure_formats"),
            )
        result = JobResult(spec["name"], "ok", report=str(folder))
    except KeyboardInterrupt as error:  # its kernel is stopped and its build folder removed (`build_report`)
        log(f"interrupted: {error}")
        raise
    except ReportTimeoutError as error:
        result = JobResult(
            spec["name"], "timeout", report=str(error.kept) if error.kept else None, message=error.reason
        )
    except ReportExecutionError as error:
        result = JobResult(spec["name"], "failed", report=str(error.kept) if error.kept else None, message=error.reason)
    except Exception as error:  # noqa: BLE001 - a job's failure is its result, not the batch's
        log(traceback.format_exc().rstrip())
        result = JobResult(spec["name"], "error", message=_describe(error))
    result.duration_s = round(time.time() - started, 3)
    log(f"{result.status} in {result.duration_s:.1f} s" + (f": {result.message}" if result.message else ""))
    return asdict(result)


def _processes(jobs: int | None, todo: int) -> int:
    return max(1, min(jobs or os.cpu_count() or 1, todo))


_IN_JOB: list[bool] = [False]  # in a worker process: whether a job is running


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
        except BaseException:  # an interrupt, or the generator closed early (GeneratorExit)
            _stop_workers(pool)
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _stop_workers(pool: ProcessPoolExecutor, grace: float = 10.0) -> None:
    """SIGTERM every worker of `pool` and wait for them: each stops its kernel and removes its build folder.
    One still alive after `grace` seconds is killed (its kernel then ends with it, `exit_with_parent`)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the pool's own record of them
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
            time.sleep(1.0)  # its kernel and the kernel's figure writer notice within 0.5 s each


def _check_dask(scheduler: str | None) -> str:
    """The scheduler's address, once Dask distributed is known to be installed."""
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise RiskReportError("--executor dask needs Dask distributed: pip install 'riskreport[dask]'.")
    if not scheduler:
        raise RiskReportError("--executor dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786).")
    return check_dask_address(scheduler, "--scheduler")


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
    retried: dict[str, str] = {}  # job name -> why its first attempt was lost
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
            except Exception as error:  # noqa: BLE001 - the task did not return (the job's own failures do)
                if _lost(error) and job.name not in retried:
                    retried[job.name] = _describe(error)
                    say(f"{job.name}: its Dask worker was lost ({retried[job.name]}); running it again")
                    submit(job, spec)
                    continue
                result = JobResult(
                    job.name,
                    "error",
                    message=(
                        f"its Dask worker was lost twice: first {retried[job.name]}, then {_describe(error)}"
                        if _lost(error)
                        else f"its Dask task failed: {_describe(error)}"
                    ),
                )
            if job.name in retried and result.status != "error":
                again = f"run again after its Dask worker was lost ({retried[job.name]})"
                result.message = "; ".join(m for m in (result.message, again) if m)
            yield result
            if pending:
                submit(*pending.pop(0))
    except BaseException:
        futures = list(running.futures)
        Event(stop, client=client).set()
        dask_wait(futures, timeout=STOP_GRACE)  # each running job cleans up
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
    process = subprocess.Popen(
        [sys.executable, "-m", "riskreport.run.schedule.batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stop = _stop_event(spec.get("stop"))
    given: str | None = json.dumps(spec)
    while True:
        try:
            stdout, stderr = process.communicate(given, timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            given = None  # sent; communicate goes on where it was
            if stop is not None and process.returncode is None and stop.is_set():
                process.terminate()
    try:
        return json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = " ".join(stderr.strip().splitlines()[-3:])
        return asdict(
            JobResult(spec["name"], "error", message=f"worker process exited with {process.returncode}: {tail}")
        )


def _stop_event(name: str | None):
    """The Dask event a batch sets to stop its running jobs (None outside a Dask task)."""
    if not name:
        return None
    try:
        from distributed import Event

        return Event(name)
    except (ImportError, ValueError):  # ValueError: no Dask client here (the task was not run by Dask)
        return None


def _collect(name: str, get: Callable[[], dict]) -> JobResult:
    try:
        return JobResult(**get())
    except Exception as error:  # noqa: BLE001 - e.g. a worker process killed by the OOM killer
        return JobResult(name, "error", message=f"worker failed: {_describe(error)}")


def _describe(error: BaseException) -> str:
    return str(error) if isinstance(error, RiskReportError) else f"{type(error).__name__}: {error}"


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


@dataclass
class _Log:
    """Appends timestamped lines to the batch log (from any process); optionally echoes them."""

    path: Path
    job: str | None
    echo: Progress | None = field(default=None, repr=False)

    def __call__(self, message: str) -> None:
        stamp = datetime.now(timezone.utc).strftime("%H:%M:%S")
        prefix = f"[{self.job}] " if self.job else ""
        with open(self.path, "a", encoding="utf-8") as out:  # O_APPEND: whole lines from parallel writers
            out.write(f"{stamp} {prefix}{message}\n")
        if self.echo:
            self.echo(prefix + message)
