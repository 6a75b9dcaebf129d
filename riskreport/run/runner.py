"""Execute a template with papermill and export it to standalone HTML with nbconvert.

`plan_report` checks a report's parameters and hashes its inputs (the fingerprint a batch
compares to skip unchanged jobs); `build_report` executes a plan. A report is built in a
temporary folder beside its destination and renamed into place only when it is complete:
a failing run never overwrites a good report, and the `latest` link always points at a
complete one.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from riskreport.errors import (
    ParameterError,
    ReportExecutionError,
    ReportTimeoutError,
    RiskReportError,
    UnknownNameError,
)
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
    merge_into,
    plan_destination,
    umask,
)
from riskreport.io.letor import read_run_scores
from riskreport.io.processes import Interrupted, deferred_signals, kill_group
from riskreport.io.provenance import file_hashes, inputs_digest, known_digests, package_versions
from riskreport.io.trec import read_rank_gains, read_system_list
from riskreport.ltr.params import LetorParameters
from riskreport.measures.evaluation import Progress, evaluate_runs, judged_measure
from riskreport.measures.params import ReportParameters, check_report_options, is_system_file, resolve_parameters
from riskreport.render.export import export_html
from riskreport.run.index import write_index

KERNEL_NAME = "riskreport-python"
# parameters that may name an input file, with the reader that checks it: the file is hashed with the collection's
FILE_PARAMETERS = {"systems": read_system_list, "pool": read_system_list, "rank_gains": read_rank_gains,
                   "run_scores": read_run_scores}
CONTEXT = "context"   # the template parameter the runner sets (report.Page): not the user's, not in the fingerprint


@dataclass(frozen=True)
class Template:
    name: str
    path: Path
    parameters: dict  # name -> {"default": str, "type": str, "help": str}
    description: str
    instances: bool = False  # notebook metadata riskreport.instances: the template reads non-deterministic systems
    letor: bool = False      # notebook metadata riskreport.letor: `collection` is a LETOR data folder (riskreport.ltr)
    origin: str = "given as a path"  # where it was found: "installed", "$RISKREPORT_TEMPLATES", "given as a path"


def template_dirs() -> list[tuple[Path, str]]:
    """Folders a bare template name is looked up in, first match wins: `$RISKREPORT_TEMPLATES`, then
    the installed templates.

    The working directory is deliberately not searched: a `templates/` folder that anyone could
    write to must not replace the installed templates (templates are code). A template there
    runs when given as a path (`riskreport run templates/my.ipynb`).
    """
    dirs = [(Path(p), "$RISKREPORT_TEMPLATES") for p in os.environ.get("RISKREPORT_TEMPLATES", "").split(os.pathsep)
            if p]
    dirs.append((installed_templates(), "installed"))
    out: list[tuple[Path, str]] = []
    for folder, origin in dirs:
        if folder.is_dir() and folder.resolve() not in [o.resolve() for o, _ in out]:
            out.append((folder, origin))
    return out


def installed_templates() -> Path:
    """The built-in templates: `riskreport/templates` of an installed package (the wheel maps the repository's
    top-level templates/ there), else the checkout's templates/ (where analysts edit them)."""
    shipped = Path(__file__).resolve().parents[1] / "templates"
    return shipped if shipped.is_dir() else PROJECT_ROOT / "templates"


def list_templates() -> list[Template]:
    seen: dict[str, Template] = {}
    for folder, origin in template_dirs():
        for path in sorted(folder.glob("*.ipynb")):
            if path.stem not in seen:
                seen[path.stem] = load_template(path, origin)
    return list(seen.values())


def find_template(spec: str | os.PathLike) -> Template:
    """A template by name (see `template_dirs`) or by path (anything ending in .ipynb or holding a '/')."""
    text = str(spec)
    path = Path(text).expanduser()
    if path.suffix == ".ipynb" or os.sep in text or "/" in text:
        if not path.is_file():
            raise RiskReportError(f"Template file {path} does not exist (give a template name, or the path of "
                                  "an .ipynb file).")
        return load_template(path)
    for template in list_templates():
        if template.name == text:
            return template
    local = Path.cwd() / "templates" / f"{text}.ipynb"
    hint = ("Give a template by name (an installed template or one in $RISKREPORT_TEMPLATES) or by path to an "
            ".ipynb file.")
    if local.is_file():
        hint += (f" {local} is not used for a bare name, since templates are code and the working directory "
                 f"may be shared: run it as templates/{text}.ipynb, or add its folder to $RISKREPORT_TEMPLATES.")
    raise UnknownNameError("template", text, [t.name for t in list_templates()], hint=hint)


def load_template(path: Path, origin: str = "given as a path") -> Template:
    import nbformat
    import papermill

    try:
        notebook = nbformat.read(path, as_version=4)
        parameters = papermill.inspect_notebook(str(path))
    except Exception as error:  # noqa: BLE001 - nbformat/papermill raise many kinds for a broken notebook
        raise RiskReportError(f"{path}: not a readable notebook template ({error})") from None
    params = {name: {"default": p["default"], "type": p["inferred_type_name"], "help": p["help"]}
              for name, p in parameters.items()}
    description = next((c.source.strip().splitlines()[0].lstrip("# ").strip() for c in notebook.cells
                        if c.cell_type == "markdown" and c.source.strip()), "")
    flags = notebook.metadata.get("riskreport", {})
    return Template(path.stem, path.resolve(), params, description, instances=bool(flags.get("instances", False)),
                    origin=origin, letor=bool(flags.get("letor", False)))


def coerce_parameter(template: Template, name: str, value):
    """Check a user-given parameter against the template's declaration; return the typed value.

    Text values (from the CLI or a job file) are read as Python literals where the declared
    type is not `str`; only plain data (numbers, text, booleans, None, lists, dicts) passes.
    `systems` and `pool` also take the path of a file listing systems (`params.choose_systems`),
    `rank_gains` the path of a per-rank gains table: read here (errors name the file and line) and
    passed on as an absolute path.
    """
    if name not in template.parameters:
        raise UnknownNameError("parameter", name, list(template.parameters),
                               hint=f"(parameters of template {template.name!r})")
    declared = template.parameters[name]["type"].replace(" ", "")
    optional = declared.startswith("Optional[") and declared.endswith("]")
    base = declared[len("Optional["):-1] if optional else declared
    kind = base.split("[", 1)[0].lower()
    if name in FILE_PARAMETERS and kind in ("list", "str") and is_system_file(value):
        path = Path(value).expanduser().resolve()   # the kernel runs in the report's build folder: an absolute path
        FILE_PARAMETERS[name](path)                  # a format error now, naming the file and line
        return str(path)
    if isinstance(value, str) and kind != "str":
        value = _literal(value, default=value)
    if value is None and (optional or kind == "none"):
        return None
    if kind == "str" and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    accepted = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,), "list": (list, tuple),
                "dict": (dict,)}.get(kind)
    if accepted and (not isinstance(value, accepted) or (kind in ("int", "float") and isinstance(value, bool))):
        raise ParameterError(f"Parameter {name!r} of template {template.name!r} expects {declared}, "
                             f"got {value!r} ({type(value).__name__}).")
    if isinstance(value, tuple):
        value = list(value)
    if kind == "list" and base.lower() in ("list[float]", "list[int]", "list[str]"):
        item = {"list[float]": (int, float), "list[int]": (int,), "list[str]": (str,)}[base.lower()]
        if not all(isinstance(v, item) and not isinstance(v, bool) for v in value):
            raise ParameterError(f"Parameter {name!r} expects {declared}, got {value!r}.")
    if not _is_plain_data(value):
        raise ParameterError(f"Parameter {name!r}: only numbers, strings, booleans, None and lists/dicts of them "
                             f"are allowed, got {type(value).__name__}.")
    return value


def _is_plain_data(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, list):
        return all(_is_plain_data(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain_data(v) for k, v in value.items())
    return False


@dataclass(frozen=True)
class ReportPlan:
    """What a report will be built from, every default resolved and every input hashed.

    `record` holds what params.json stores about the inputs (template and file hashes,
    parameters, package versions); `fingerprint` is their digest: equal fingerprints mean
    the same report would be produced again.
    """

    template: Template
    params: ReportParameters | LetorParameters    # the report's resolved parameters (LETOR templates: the latter)
    effective: dict
    record: dict
    fingerprint: str


def fingerprint(record: dict) -> str:
    """SHA-256 of the template, effective parameters, input files and package versions of a report.

    `record` is a params.json (or `ReportPlan.record`); a params.json written before `show_code`
    was recorded yields a digest that matches no plan, so that report is built again.
    """
    inputs = {key: record.get(key) for key in ("template_sha256", "parameters", "versions", "show_code")}
    inputs["files_sha256"] = (record.get("collection") or {}).get("files_sha256")
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()


def plan_report(template: str | os.PathLike = "risk_report", *, collection: str | None = None,
                baseline: str | None = None, alphas: list[float] | None = None, measure: str | None = None,
                parameters: dict | None = None, show_code: bool = False) -> ReportPlan:
    """Check the parameters of a report against its template and collection; hash its inputs."""
    tpl = find_template(template)
    if CONTEXT in (parameters or {}):
        raise ParameterError(f"Parameter {CONTEXT!r} is set by riskreport run (the report's tables folder, input "
                             "hashes and threads); give it only when running the notebook by hand.")
    given = {name: coerce_parameter(tpl, name, value) for name, value in (parameters or {}).items()}
    for name, value in (("collection", collection), ("baseline", baseline), ("alphas", alphas), ("measure", measure)):
        if value is not None:
            given[name] = coerce_parameter(tpl, name, value)
    if "collection" not in given:
        default = tpl.parameters.get("collection", {}).get("default", "None")
        given["collection"] = _literal(default) or "demo"
    if tpl.letor:
        return _plan_letor(tpl, given, show_code)
    params = resolve_parameters(given["collection"], measure=given.get("measure"), baseline=given.get("baseline"),
                                alphas=given.get("alphas"), systems=given.get("systems"),
                                sig_level=given.get("sig_level", 0.05), instances=tpl.instances)
    defaults = {name: _literal(spec["default"], default=spec["default"]) for name, spec in tpl.parameters.items()}
    effective = {**defaults, **given, "collection": str(params.collection.location), "measure": params.measure,
                 "baseline": params.baseline, "alphas": params.alphas}
    effective = {k: v for k, v in effective.items() if k in tpl.parameters and k != CONTEXT}
    check_report_options(effective, params)
    record = {"template": tpl.name, "template_path": str(tpl.path), "parameters": effective,
              "collection": {"name": params.collection.name, "path": str(params.collection.path),
                             "files_sha256": file_hashes(params.collection.files() + list_files_given(given))},
              "template_sha256": file_hashes([tpl.path])[str(tpl.path)], "versions": package_versions(),
              "show_code": bool(show_code), "chosen": [n for n in ("baseline", "measure") if n not in given]}
    return ReportPlan(tpl, params, effective, record, fingerprint(record))


def _plan_letor(tpl: Template, given: dict, show_code: bool) -> ReportPlan:
    """`plan_report` for a learning-to-rank template: `collection` is a LETOR data folder (`riskreport.ltr.params`)."""
    from riskreport.ltr.params import resolve_ltr_parameters

    params = resolve_ltr_parameters(given["collection"], **{k: v for k, v in given.items() if k != "collection"})
    defaults = {name: _literal(spec["default"], default=spec["default"]) for name, spec in tpl.parameters.items()}
    resolved = {"collection": str(params.collection.location), "folds": params.folds, "objectives": params.objectives,
                "alphas": params.alphas, "baseline": params.baseline, "learned_baselines": params.learned,
                "trees": params.trees, "leaves": params.leaves, "learning_rate": params.learning_rate,
                "min_data_in_leaf": params.min_data_in_leaf}
    effective = {k: v for k, v in {**defaults, **given, **resolved}.items() if k in tpl.parameters and k != CONTEXT}
    check_report_options(effective)
    record = {"template": tpl.name, "template_path": str(tpl.path), "parameters": effective,
              "collection": {"name": params.collection.name, "path": str(params.collection.path),
                             "files_sha256": file_hashes(params.collection.files() + list_files_given(given))},
              "template_sha256": file_hashes([tpl.path])[str(tpl.path)], "versions": package_versions(),
              "show_code": bool(show_code), "chosen": [n for n in ("baseline",) if n not in given]}
    return ReportPlan(tpl, params, effective, record, fingerprint(record))


def list_files_given(given: dict) -> list[Path]:
    """The files listing systems among the parameters: inputs of the report, hashed with the collection's."""
    return [Path(given[name]) for name in FILE_PARAMETERS if isinstance(given.get(name), str) and
            Path(given[name]).is_absolute()]


def run_report(template: str = "risk_report", *, collection: str | None = None, baseline: str | None = None,
               alphas: list[float] | None = None, measure: str | None = None, parameters: dict | None = None,
               out: str | os.PathLike | None = None, reports_dir: str | os.PathLike = "reports",
               show_code: bool = False, progress: Progress | None = None, job: str | None = None,
               update_index: bool = True, force: bool = False, workers: int | None = None,
               timeout: float | None = None) -> Path:
    """Execute `template` on a collection and write a complete report folder; return its path.

    The folder holds `report.html`, `report.ipynb`, `params.json` and `tables/*.csv`.
    Without `out` it is `reports/<collection>/<template>/<UTC timestamp>/` (for a batch job,
    `reports/jobs/<job>/<UTC timestamp>/`), the `latest` link beside it points at it, and
    `reports/index.html` is regenerated unless `update_index=False`. An existing `out` folder
    that is neither empty nor a previous report is refused unless `force` (which still replaces
    only riskreport's own files). `workers` is the number of threads the template may use (its
    bootstrap); None: one per core. `timeout` is the time limit of the whole report in seconds (None: none):
    when it is reached the kernel is stopped and `ReportTimeoutError` names the cell that was running
    (`build_report`).
    """
    started = time.time()
    timeout = check_timeout(timeout)
    plan = plan_report(template, collection=collection, baseline=baseline, alphas=alphas, measure=measure,
                       parameters=parameters, show_code=show_code)
    return build_report(plan, out=out, reports_dir=reports_dir, progress=progress, job=job,
                        update_index=update_index, started=started, force=force, workers=workers, timeout=timeout)


def check_timeout(value, where: str = "timeout") -> float | None:
    """A report's time limit in seconds: None, or a finite number > 0; `ParameterError` naming `where` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ParameterError(f"{where}: expected a time limit in seconds, a number > 0 (e.g. 3600), got {value!r}.")
    return float(value)


def job_folder(reports_dir: str | os.PathLike, job: str) -> Path:
    """Where a batch job's reports go: `<reports>/jobs/<job>/` (stamped folders and `latest`)."""
    return (Path(reports_dir) / "jobs" / job).resolve()


def report_parent(plan: ReportPlan, reports_dir: str | os.PathLike = "reports", job: str | None = None) -> Path:
    """The folder that holds the stamped reports (and `latest`) of a plan or a batch job."""
    if job is not None:
        return job_folder(reports_dir, job)
    return (Path(reports_dir) / plan.params.collection.name / plan.template.name).resolve()


def build_report(plan: ReportPlan, *, out: str | os.PathLike | None = None, reports_dir: str | os.PathLike = "reports",
                 progress: Progress | None = None, job: str | None = None, update_index: bool = True,
                 started: float | None = None, force: bool = False, workers: int | None = None,
                 timeout: float | None = None) -> Path:
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
    """
    say = progress or (lambda message: None)
    started = time.time() if started is None else started
    tpl, params = plan.template, plan.params
    if out is not None:
        destination = plan_destination(out, force=force)
    else:
        ensure_folder(Path(reports_dir), "--reports")
        parent = ensure_folder(report_parent(plan, reports_dir, job), "--reports")
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        destination = Destination(_unique(parent / stamp), "new", parent)
    final = destination.final
    say(f"template {tpl.name}: {tpl.path} ({tpl.origin}); collection {params.collection.name}, "
        f"measure {params.measure}, baseline {params.baseline}, α {params.alphas}")
    if destination.kept:
        say(f"--out {final}: keeping {len(destination.kept)} file(s) riskreport did not write")
    phases: dict[str, float] = {}      # seconds per phase, recorded in params.json (`phases_s`)
    clock = time.perf_counter()
    try:
        prewarm(params, say, tpl.instances)
    except KeyboardInterrupt as error:
        raise Interrupted.of(error, _untouched(final, out is None, "stopped while the runs were evaluated")) from None
    phases["evaluate"] = time.perf_counter() - clock
    limit = None if timeout is None else _Limit(timeout, started)

    work = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=destination.build_in))
    index = update_index and out is None
    writing = work / "report.ipynb"     # what a full disk interrupts, for the error message
    moved = False
    try:
        os.chmod(work, 0o777 & ~umask())
        try:
            clock = time.perf_counter()
            _execute(tpl, {**plan.effective, **_context(plan, work, workers)}, work, say, limit)
            phases["execute"] = time.perf_counter() - clock
        except ReportExecutionError as error:
            if disk_problem(error) is None:
                failed = _keep_failed(work, plan, error, final, destination, out is not None, started, job)
                if index:
                    _index(reports_dir, say)
                raise type(error)(error.reason, kept=failed) from None
            raise
        writing = work / "params.json"
        record = _write_params(work, plan, started, status="ok", job=job)
        writing = work / "report.html"
        clock = time.perf_counter()
        _export(work, plan.record["show_code"], record)
        phases["export"] = time.perf_counter() - clock
        writing = work / "params.json"
        _write_params(work, plan, started, status="ok", job=job, files=list_files(work) + ["params.json"],
                      phases=phases)
        writing = final
        clash = collisions(work, destination)
        if clash:
            raise DestinationError(f"--out {final}: the report would overwrite {', '.join(clash[:5])}, which "
                                   "riskreport did not write; --force never replaces files it did not write. "
                                   "Move them away or choose another folder.")
        with deferred_signals():       # the previous report is renamed away, the new one in, 'latest' moved: all
            _move_into_place(work, destination)
            moved = True
            if out is None:
                _point_latest(final.parent / "latest", final)
    except BaseException as error:
        shutil.rmtree(work, ignore_errors=True)
        if isinstance(error, KeyboardInterrupt) and moved:
            raise Interrupted.of(error, f"report {final} was complete and is in place; the index was not "
                                        "updated") from None
        if isinstance(error, KeyboardInterrupt):
            raise Interrupted.of(error, _untouched(final, out is None, f"nothing left in {work.parent} (build "
                                                   "folder removed)")) from None
        problem = disk_problem(error) if isinstance(error, Exception) else None
        if problem is not None:
            raise DiskFullError(f"{problem} while writing {failed_file(error) or writing} (the report's build "
                                f"folder, now removed). Nothing of {final} was written: the previous report "
                                "and 'latest' are untouched; free some space (or raise the file-size limit) "
                                "and run again.") from None
        raise
    if index:
        _index(reports_dir, say)
    say(f"report written in {time.time() - started:.1f} s: {final / 'report.html'}")
    return final


def _untouched(final: Path, stamped: bool, detail: str) -> str:
    """The line an interrupted report ends with: what was stopped and what was left as it was."""
    kept = "'latest' and the previous reports are untouched" if stamped else "the previous report there is untouched"
    return f"report {final} not written, {detail}; {kept}"


def _keep_failed(work: Path, plan: ReportPlan, error: ReportExecutionError, final: Path, destination: Destination,
                 explicit: bool, started: float, job: str | None) -> Path:
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
    _write_params(work, plan, started, status="failed", job=job, error=error.reason,
                  files=list_files(work) + ["params.json"])
    os.replace(work, failed)
    return failed


def _index(reports_dir: str | os.PathLike, say: Progress) -> None:
    """Rebuild the reports index; a failure to do so is said, not raised (the report itself is complete)."""
    try:
        write_index(reports_dir)
    except OSError as error:
        say(f"warning: the reports index in {reports_dir} was not updated: {error}")


def _literal(text: str, default=None):
    import ast
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return default


def prewarm(params: ReportParameters | LetorParameters, say: Progress, instances: bool = False) -> None:
    """Evaluate (or find cached) every run once, in parallel, with progress, before the kernel starts.
    A learning-to-rank report has no runs to evaluate (its kernel trains and scores the learners)."""
    if not isinstance(params, ReportParameters):
        return
    runs = {s: params.collection.runs[s] for s in params.systems if s in params.collection.runs}
    if instances:
        runs.update(params.collection.instance_runs(params.systems))
    if runs:
        evaluate_runs(params.collection.qrels_file(), runs, [params.measure, judged_measure(params.measure)],
                      progress=say)


def _context(plan: ReportPlan, work: Path, workers: int | None) -> dict:
    """The `context` parameter of a template that declares it (`report.Page`): what the kernel need not redo."""
    if CONTEXT not in plan.template.parameters:
        return {}
    return {CONTEXT: {"tables_dir": str(work / "tables"), "workers": workers or os.cpu_count() or 1,
                      "inputs_sha256": inputs_digest(plan.record["collection"]["files_sha256"]),
                      "chosen": plan.record["chosen"],
                      "file_digests": known_digests(plan.record["collection"]["files_sha256"])}}


@dataclass(frozen=True)
class _Limit:
    """A report's time limit: `seconds` from `started` (a `time.time()`)."""

    seconds: float
    started: float

    def remaining(self) -> float:
        return self.seconds - (time.time() - self.started)


class _Watch:
    """What the supervisor of an execution knows: the kernels started, the cell running, why it stopped them."""

    def __init__(self):
        self.managers: list = []        # kernel managers (their provisioner knows the kernel's process group)
        self.nb = None                  # the notebook papermill executes (injected parameters included)
        self.cell: int | None = None    # index in `nb` of the cell that started last
        self.reason: str | None = None  # None, "timeout" or "interrupt"
        self.stopped: float | None = None   # when (time.time()) the kernels were first stopped

    def stop(self, reason: str) -> None:
        """Kill every kernel started (its whole process group: kernel, figure writer, their helpers)."""
        if self.reason is None:
            self.reason, self.stopped = reason, time.time()
            logging.getLogger("papermill").setLevel(logging.CRITICAL)   # "Kernel died ...": we say why ourselves
        for manager in self.managers:
            kill_group(getattr(manager.provisioner, "pgid", None))

    def wait(self, thread: threading.Thread, seconds: float) -> None:
        """Keep the kernels dead until papermill, seeing them gone, has saved the notebook and returned."""
        end = time.monotonic() + seconds
        while thread.is_alive() and time.monotonic() < end:
            self.stop(self.reason or "interrupt")     # a kernel that was still starting is killed too
            thread.join(0.2)

    def running_cell(self) -> str:
        """'cell 3 (`time.sleep(600)`)': the running cell, counted from the top of the template as written."""
        if self.nb is None or self.cell is None:
            return "the kernel, starting before any cell ran,"
        cells = self.nb.cells
        injected = [i for i, c in enumerate(cells) if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
        number = self.cell + 1 - sum(1 for i in injected if i < self.cell)
        line = next((line.strip() for line in cells[self.cell].source.splitlines() if line.strip()), "")
        return f"cell {number}" + (f" (`{line[:60]}{'…' if len(line) > 60 else ''}`)" if line else "")


def _execute(tpl: Template, parameters: dict, work: Path, say: Progress, limit: _Limit | None = None) -> None:
    """Execute the template into `work/report.ipynb`; `ReportExecutionError` if a cell fails or the kernel dies.

    papermill runs in a thread while this (the main) thread watches the clock and takes the
    signals: at the time limit, or on an interrupt, the kernel's process group is killed, papermill
    sees the kernel dead and saves the notebook as far as it got. (In the main thread nbclient would
    catch SIGINT and SIGTERM itself, and shut the kernel down by interrupting its cell: tracebacks.)
    """
    import nbformat

    jupyter = work / ".jupyter"       # kernelspec and connection file of this run, removed with it
    say(f"executing {tpl.path.name} ({len(nbformat.read(tpl.path, as_version=4).cells)} cells)")
    if limit is not None and limit.remaining() <= 0:
        raise ReportTimeoutError(f"Template {tpl.name!r} was not started: the report's time limit of "
                                 f"{limit.seconds:g} s was reached while its runs were evaluated "
                                 f"({time.time() - limit.started:.1f} s).")
    watch = _Watch()
    outcome: dict[str, BaseException] = {}      # {'error': what papermill raised}, filled by its thread
    thread = threading.Thread(target=_papermill, args=(tpl, parameters, work, watch, outcome), daemon=True,
                              name="riskreport-papermill")
    papermill_level = logging.getLogger("papermill").level
    try:
        thread.start()
        _supervise(thread, watch, limit)
    except BaseException:      # an interrupt: no kernel is left behind, papermill ends before the folder goes
        watch.stop("interrupt")
        watch.wait(thread, 5.0)
        raise
    finally:
        logging.getLogger("papermill").setLevel(papermill_level)
        shutil.rmtree(jupyter, ignore_errors=True)
    failure = outcome.get("error")
    if watch.reason == "timeout" and limit is not None and watch.stopped is not None:
        raise ReportTimeoutError(f"Template {tpl.name!r} reached the report's time limit of {limit.seconds:g} s: "
                                 f"{watch.running_cell()} was still running after the report had run "
                                 f"{watch.stopped - limit.started:.1f} s; its kernel was stopped.") from None
    if failure is not None:
        from papermill.exceptions import PapermillExecutionError
        if isinstance(failure, PapermillExecutionError):
            message = (f"Cell {failure.exec_count} of template {tpl.name!r} failed: "
                       f"{failure.ename}: {failure.evalue}")
        else:
            message = f"Template {tpl.name!r} could not be executed: {type(failure).__name__}: {failure}"
        raise ReportExecutionError(message) from failure


def _papermill(tpl: Template, parameters: dict, work: Path, watch: _Watch, outcome: dict) -> None:
    """papermill's run of the template (in the execution thread); an exception goes into `outcome`."""
    import asyncio

    import papermill
    from jupyter_core.utils import ensure_event_loop
    try:                           # the kernel's environment is the kernelspec's: this process's os.environ is left alone
        papermill.execute_notebook(str(tpl.path), str(work / "report.ipynb"), parameters=parameters,
                                   kernel_name=KERNEL_NAME, engine_name=_engine(),
                                   kernel_manager_class=_kernel_manager(_kernelspec(work / ".jupyter"), watch),
                                   cwd=str(work), progress_bar=False, log_output=False, report_mode=False,
                                   watch=watch)
    except BaseException as error:  # noqa: BLE001 - a cell failed, the kernel died or was stopped, ...
        outcome["error"] = error
    finally:        # the event loop nbclient made for this thread (jupyter_core's) would be left open
        ensure_event_loop().close()
        asyncio.set_event_loop(None)


def _supervise(thread: threading.Thread, watch: _Watch, limit: _Limit | None) -> None:
    """Wait for the execution thread; at the time limit, stop its kernel and wait for papermill to save."""
    while thread.is_alive():
        remaining = math.inf if limit is None else limit.remaining()
        if remaining <= 0:
            watch.stop("timeout")
            watch.wait(thread, 30.0)
            return
        thread.join(min(0.25, remaining))


def _engine() -> str:
    """papermill's nbclient engine, saving the notebook once at the end (also when a cell fails or the kernel
    dies) instead of at the start and end of every cell: at campaign scale the notebook grows to ~15 MB and
    those ~70 writes took seconds. Registered once per process as `riskreport`."""
    from papermill.engines import NBClientEngine, papermill_engines

    class SaveAtEnd(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, watch: _Watch | None = None, **kwargs):
            path, nb_man.output_path = nb_man.output_path, None
            if watch is not None:            # the supervisor names the running cell if it must stop the kernel
                watch.nb, start = nb_man.nb, nb_man.cell_start

                def cell_start(cell, cell_index=None, **options):
                    watch.cell = cell_index
                    return start(cell, cell_index, **options)

                nb_man.cell_start = cell_start
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            finally:
                nb_man.output_path = path    # `notebook_complete` (papermill calls it in `finally`) saves

    if "riskreport" not in papermill_engines._engines:
        papermill_engines.register("riskreport", SaveAtEnd)
    return "riskreport"


def _kernelspec(home: Path) -> Path:
    """A private kernelspec under `home` that runs this very Python, whatever kernels the user has installed.

    The kernel is started through `riskreport.run.kernel`, which ends the kernel when the process
    that started it dies (however it dies), so no kernel outlives a killed run.
    """
    spec_dir = home / "kernels" / KERNEL_NAME
    spec = {"argv": [sys.executable, "-m", "riskreport.run.kernel", "-f", "{connection_file}",
                     "--IPKernelApp.log_level=CRITICAL"],
            "display_name": "riskreport (Python)", "language": "python",
            "env": {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}}
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    (home / "runtime").mkdir(exist_ok=True)
    return home


def _kernel_manager(home: Path, watch: _Watch | None = None):
    """A kernel manager class that finds the private kernelspec in `home` (instead of setting JUPYTER_PATH)
    and writes the kernel's connection file there too (not into the system's temporary folder); each
    manager made is listed in `watch` (whose supervisor may have to kill its kernel)."""
    import uuid

    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from traitlets import default

    class Manager(AsyncKernelManager):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            if watch is not None:
                watch.managers.append(self)

        @default("kernel_spec_manager")
        def _private_specs(self):
            return KernelSpecManager(kernel_dirs=[str(home / "kernels")])

        @default("connection_file")
        def _private_connection_file(self):
            return str(home / "runtime" / f"kernel-{uuid.uuid4()}.json")

    return Manager


def _write_params(work: Path, plan: ReportPlan, started: float, status: str, job: str | None,
                  error: str | None = None, files: list[str] | None = None, phases: dict | None = None) -> dict:
    """Write params.json; `files` lists what the report folder holds (what riskreport may replace later),
    `phases` the seconds spent evaluating runs, executing the notebook and exporting the HTML."""
    record = {**plan.record, "job": job, "status": status, **({"error": error} if error else {}),
              "fingerprint": plan.fingerprint,
              "duration_s": round(time.time() - started, 3),
              "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              **({"files": sorted(set(files))} if files is not None else {}),
              **({"phases_s": {k: round(v, 3) for k, v in phases.items()}} if phases else {})}
    (work / "params.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def _export(work: Path, show_code: bool, record: dict) -> None:
    notebook = work / "report.ipynb"
    if notebook.exists():
        export_html(notebook, work / "report.html", show_code=show_code, provenance=record)


def _unique(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def _move_into_place(work: Path, destination: Destination) -> None:
    final = destination.final
    if destination.mode == "merge":
        merge_into(work, final)
    elif final.exists() and any(final.iterdir()):   # a previous report holding only its own files
        old = Path(tempfile.mkdtemp(prefix=f".old-{final.name}-", dir=final.parent))
        os.replace(final, old / final.name)
        os.replace(work, final)
        shutil.rmtree(old, ignore_errors=True)
    else:                                            # new, or an empty folder (rename replaces it)
        os.replace(work, final)


def _point_latest(link: Path, target: Path) -> None:
    tmp = link.with_name(f".latest-{os.getpid()}")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(target.name)
    os.replace(tmp, link)
