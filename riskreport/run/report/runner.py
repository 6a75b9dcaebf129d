"""Execute a template with papermill and export it to standalone HTML with nbconvert.

`plan_report` checks a report's parameters and hashes its inputs (the fingerprint a batch
compares to skip unchanged jobs); `build_report` executes a plan. A report is built in a
temporary folder beside its destination and renamed into place only when it is complete:
a failing run never overwrites a good report, and the `latest` link always points at a
complete one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from riskreport.errors import ReportExecutionError
from riskreport.io.collection import PROJECT_ROOT
from riskreport.io.files import (
    Destination,
    DestinationError,
    DiskFullError,
    collisions,
    disk_problem,
    ensure_folder,
    failed_file,
    list_files,
    plan_destination,
    umask,
)
from riskreport.io.processes import Interrupted, deferred_signals
from riskreport.measures.evaluation import Progress
from riskreport.render.pages.export import export_html, prepare
from riskreport.run.folders.changes import job_previous, previous_of
from riskreport.run.folders.gate import check_gate, enforce_gate, parse_gate
from riskreport.run.folders.index import write_index
from riskreport.run.folders.place import move_into_place, point_latest
from riskreport.run.folders.summary import SUMMARY, write_summary
from riskreport.run.report.execute import KERNEL_NAME, _execute, _Limit
from riskreport.run.report.params_file import generated_at
from riskreport.run.report.params_file import write_params as _write_params
from riskreport.run.report.plan import (
    ReportPlan,
    _context,
    check_timeout,
    fingerprint,
    list_files_given,
    plan_report,
    prewarm,
)
from riskreport.run.report.templates import (
    CONTEXT,
    FILE_PARAMETERS,
    Template,
    _literal,
    coerce_parameter,
    find_template,
    installed_templates,
    list_templates,
    load_template,
    template_dirs,
)

__all__ = [
    "CONTEXT",
    "FILE_PARAMETERS",
    "KERNEL_NAME",
    "PROJECT_ROOT",
    "ReportPlan",
    "Template",
    "_literal",
    "build_report",
    "check_timeout",
    "coerce_parameter",
    "find_template",
    "fingerprint",
    "installed_templates",
    "job_folder",
    "list_files_given",
    "list_templates",
    "load_template",
    "plan_report",
    "prewarm",
    "report_parent",
    "run_report",
    "template_dirs",
]  # with what the runner's parts offer (templates, plan, execute)


def run_report(
    template: str = "risk_report",
    *,
    collection: str | None = None,
    baseline: str | None = None,
    alphas: list[float] | None = None,
    measure: str | None = None,
    parameters: dict | None = None,
    out: str | os.PathLike | None = None,
    reports_dir: str | os.PathLike = "reports",
    show_code: bool = False,
    progress: Progress | None = None,
    job: str | None = None,
    update_index: bool = True,
    force: bool = False,
    workers: int | None = None,
    timeout: float | None = None,
    figure_formats: str | list[str] | None = None,
    compare_with: str | os.PathLike | None = None,
    fail_on: str | None = None,
    fail_on_systems: list[str] | None = None,
) -> Path:
    """Execute `template` on a collection and write a complete report folder; return its path.

    The folder holds `report.html`, `report.ipynb`, `params.json` and `tables/*.csv`.
    Without `out` it is `reports/<collection>/<template>/<UTC timestamp>/` (for a batch job,
    `reports/jobs/<job>/<UTC timestamp>/`), the `latest` link beside it points at it, and
    `reports/index.html` is regenerated unless `update_index=False`. An existing `out` folder
    that is neither empty nor a previous report is refused unless `force` (which still replaces
    only riskreport's own files). `workers` is the number of threads the template may use (its
    bootstrap); None: one per core. `timeout` is the time limit of the whole report in seconds (None: none):
    when it is reached the kernel is stopped and `ReportTimeoutError` names the cell that was running
    (`build_report`). `figure_formats`: the formats of the report's `figures/` files, some of png, svg and pdf
    (a list or "png,pdf"); None: PNG alone (the page embeds every figure whatever the formats).
    `compare_with`: a report folder whose changes since the report lists ("Since …", tables/changes.csv).
    `fail_on` ("risk", "risk@5") and `fail_on_systems`: the risk gate (`gate.parse_gate`); the report is
    written, then `gate.RiskGateError` names each risky (challenger, baseline, α) and the folder.
    """
    started = time.time()
    timeout = check_timeout(timeout)
    gate = parse_gate(fail_on, fail_on_systems)
    plan = plan_report(
        template,
        collection=collection,
        baseline=baseline,
        alphas=alphas,
        measure=measure,
        parameters=parameters,
        show_code=show_code,
        figure_formats=figure_formats,
    )
    check_gate(gate, plan.params.systems, plan.params.alphas, plan.template)
    folder = build_report(
        plan,
        out=out,
        reports_dir=reports_dir,
        progress=progress,
        job=job,
        update_index=update_index,
        started=started,
        force=force,
        workers=workers,
        timeout=timeout,
        compare_with=compare_with,
    )
    enforce_gate(gate, folder)
    return folder


def job_folder(reports_dir: str | os.PathLike, job: str) -> Path:
    """Where a batch job's reports go: `<reports>/jobs/<job>/` (stamped folders and `latest`)."""
    return (Path(reports_dir) / "jobs" / job).resolve()


def report_parent(plan: ReportPlan, reports_dir: str | os.PathLike = "reports", job: str | None = None) -> Path:
    """The folder that holds the stamped reports (and `latest`) of a plan or a batch job."""
    if job is not None:
        return job_folder(reports_dir, job)
    return (Path(reports_dir) / plan.params.collection.name / plan.template.name).resolve()


def build_report(
    plan: ReportPlan,
    *,
    out: str | os.PathLike | None = None,
    reports_dir: str | os.PathLike = "reports",
    progress: Progress | None = None,
    job: str | None = None,
    update_index: bool = True,
    started: float | None = None,
    force: bool = False,
    workers: int | None = None,
    timeout: float | None = None,
    compare_with: str | os.PathLike | None = None,
) -> Path:
    """Execute a planned report in a temporary folder and move it into place when complete.

    With `out`, the report goes into that folder: a new or empty one, a previous report, or,
    with `force`, any folder, where only riskreport's own files are replaced (`files.plan_destination`).
    Destinations are checked before anything runs; a full disk removes the temporary folder and
    raises `DiskFullError`, leaving the previous report and `latest` as they were.

    `timeout`: seconds the whole report may take from `started` (evaluation and execution of the
    template; the export of a finished notebook is not cut short). When they run out the kernel
    is stopped and the report is kept as failed (`failed-<name>`, outputs up to the cell that was
    running), as a failing cell would be: `ReportTimeoutError`. An interrupt (KeyboardInterrupt,
    `processes.Interrupted`) stops the kernel, removes the build folder and is raised again with
    a line saying what was left as it was.

    `compare_with`: as `run_report`'s; a batch job compares with the report its `latest` points at (params.json
    `previous`). summary.json is written beside params.json.
    """
    previous = previous_of(compare_with)  # a folder that is no report is refused before anything is made
    say = progress or (lambda message: None)
    started = time.time() if started is None else started
    generated = generated_at(started)  # the one time stamp: folder, header, footer
    tpl, params = plan.template, plan.params
    made: list[Path] = []  # folders made for this report: removed again if an interrupt or a failure leaves them empty
    if out is not None:
        destination = plan_destination(out, force=force)
    else:
        made = _missing(report_parent(plan, reports_dir, job))
        ensure_folder(Path(reports_dir), "--reports")
        parent = ensure_folder(report_parent(plan, reports_dir, job), "--reports")
        destination = Destination(_unique(parent / generated.strftime("%Y%m%dT%H%M%SZ")), "new", parent)
        if previous is None and job is not None:
            previous = job_previous(parent, say)
    final = destination.final
    say(
        f"template {tpl.name}: {tpl.path} ({tpl.origin}); collection {params.collection.name}, "
        f"measure {params.measure}, baseline {params.baseline}, α {params.alphas}"
    )
    if destination.kept:
        say(f"--out {final}: keeping {len(destination.kept)} file(s) riskreport did not write")
    phases: dict[str, float] = {}  # seconds per phase, recorded in params.json (`phases_s`)
    clock = time.perf_counter()
    try:
        prewarm(params, say, tpl.instances)
    except BaseException as error:
        _remove_empty(made)
        if isinstance(error, KeyboardInterrupt):
            raise Interrupted.of(
                error, _untouched(final, out is None, "stopped while the runs were evaluated")
            ) from None
        raise
    phases["evaluate"] = time.perf_counter() - clock
    limit = None if timeout is None else _Limit(timeout, started)

    work = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=destination.build_in))
    index = update_index and out is None
    writing = work / "report.ipynb"  # what a full disk interrupts, for the error message
    moved = False
    preparing = threading.Thread(  # nbconvert imported while the kernel runs, on a core it leaves idle
        target=prepare, args=(plan.record["show_code"],), daemon=True, name="riskreport-export-prepare"
    )
    try:
        os.chmod(work, 0o777 & ~umask())
        preparing.start()
        try:
            clock = time.perf_counter()
            context = _context(plan, work, workers, previous, generated.isoformat())
            _execute(tpl, {**plan.effective, **context}, work, say, limit)
            phases["execute"] = time.perf_counter() - clock
        except ReportExecutionError as error:
            if disk_problem(error) is None:
                failed = _keep_failed(work, plan, error, final, destination, out is not None, started, job)
                if index:
                    _index(reports_dir, say)
                raise type(error)(error.reason, kept=failed) from None
            raise
        writing = work / "params.json"
        record = _write_params(work, plan, started, status="ok", job=job, previous=previous)
        writing = work / "report.html"
        clock = time.perf_counter()
        preparing.join()
        _export(work, plan.record["show_code"], record)
        phases["export"] = time.perf_counter() - clock
        writing = work / "params.json"
        files = [*list_files(work), "params.json", SUMMARY]
        record = _write_params(work, plan, started, "ok", job, files=files, phases=phases, previous=previous)
        writing = work / SUMMARY
        write_summary(work, record)
        writing = final
        clash = collisions(work, destination)
        if clash:
            raise DestinationError(
                f"--out {final}: the report would overwrite {', '.join(clash[:5])}, which "
                "riskreport did not write; --force never replaces files it did not write. "
                "Move them away or choose another folder."
            )
        with deferred_signals():  # the previous report is renamed away, the new one in, 'latest' moved: all
            move_into_place(work, destination)
            moved = True
            if out is None:
                point_latest(final.parent / "latest", final)
    except BaseException as error:
        shutil.rmtree(work, ignore_errors=True)
        _remove_empty(made)
        if isinstance(error, KeyboardInterrupt) and moved:
            raise Interrupted.of(
                error, f"report {final} was complete and is in place; the index was not updated"
            ) from None
        if isinstance(error, KeyboardInterrupt):
            raise Interrupted.of(
                error, _untouched(final, out is None, f"nothing left in {work.parent} (build folder removed)")
            ) from None
        problem = disk_problem(error) if isinstance(error, Exception) else None
        if problem is not None:
            raise DiskFullError(
                f"{problem} while writing {failed_file(error) or writing} (the report's build "
                f"folder, now removed). Nothing of {final} was written: the previous report "
                "and 'latest' are untouched; free some space (or raise the file-size limit) "
                "and run again."
            ) from None
        raise
    if index:
        _index(reports_dir, say)
    if (final / "log.txt").is_file():
        say(f"the libraries' warnings and messages (kept off the page): {final / 'log.txt'}")
    say(f"report written in {time.time() - started:.1f} s: {final / 'report.html'}")
    return final


def _missing(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, deepest first."""
    folder = Path(folder).absolute()
    return [f for f in [folder, *folder.parents] if not f.exists()]


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a report made that it left empty (a first run interrupted), deepest first."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # not empty (a kept failed-* report, another run's files) or already gone
            return


def _untouched(final: Path, stamped: bool, detail: str) -> str:
    """The line an interrupted report ends with: what was stopped and what was left as it was."""
    kept = "'latest' and the previous reports are untouched" if stamped else "the previous report there is untouched"
    return f"report {final} not written, {detail}; {kept}"


def _keep_failed(
    work: Path,
    plan: ReportPlan,
    error: ReportExecutionError,
    final: Path,
    destination: Destination,
    explicit: bool,
    started: float,
    job: str | None,
) -> Path:
    """Keep a failed build as `failed-<name>` beside the report (its code shown, to find the failing cell)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = final.parent if destination.build_in == final else destination.build_in
    failed = _unique(folder / f"failed-{final.name if explicit else stamp}")
    record = _write_params(work, plan, started, status="failed", job=job, error=error.reason)
    try:
        _export(work, True, record)
    except Exception as export_error:  # noqa: BLE001 - the notebook is kept even if it cannot be exported
        if disk_problem(export_error):
            raise
    _write_params(
        work, plan, started, status="failed", job=job, error=error.reason, files=list_files(work) + ["params.json"]
    )
    os.replace(work, failed)
    return failed


def _index(reports_dir: str | os.PathLike, say: Progress) -> None:
    """Rebuild the reports index; a failure to do so is said, not raised (the report itself is complete)."""
    try:
        write_index(reports_dir)
    except OSError as error:
        say(f"warning: the reports index in {reports_dir} was not updated: {error}")


def _export(work: Path, show_code: bool, record: dict) -> None:
    notebook = work / "report.ipynb"
    if notebook.exists():
        export_html(notebook, work / "report.html", show_code=show_code, provenance=record, log=work / "log.txt")


def _unique(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate
