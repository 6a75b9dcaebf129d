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
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .collection import PROJECT_ROOT
from .errors import ParameterError, ReportExecutionError, RiskReportError, UnknownNameError
from .evaluation import Progress, evaluate_runs, judged_measure
from .export import export_html
from .index import write_index
from .params import check_report_options, ReportParameters, resolve_parameters
from .provenance import file_hashes, inputs_digest, package_versions

KERNEL_NAME = "riskreport-python"
CONTEXT = "context"   # the template parameter the runner sets (report.Page): not the user's, not in the fingerprint


@dataclass(frozen=True)
class Template:
    name: str
    path: Path
    parameters: dict  # name -> {"default": str, "type": str, "help": str}
    description: str
    instances: bool = False  # notebook metadata riskreport.instances: the template reads non-deterministic systems


def template_dirs() -> list[Path]:
    dirs = [Path(p) for p in os.environ.get("RISKREPORT_TEMPLATES", "").split(os.pathsep) if p]
    dirs += [Path.cwd() / "templates", PROJECT_ROOT / "templates"]
    out: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [o.resolve() for o in out]:
            out.append(d)
    return out


def list_templates() -> list[Template]:
    seen: dict[str, Template] = {}
    for folder in template_dirs():
        for path in sorted(folder.glob("*.ipynb")):
            if path.stem not in seen:
                seen[path.stem] = load_template(path)
    return list(seen.values())


def find_template(spec: str | os.PathLike) -> Template:
    path = Path(spec)
    if path.suffix == ".ipynb" and path.is_file():
        return load_template(path)
    for template in list_templates():
        if template.name == str(spec):
            return template
    raise UnknownNameError("template", str(spec), [t.name for t in list_templates()],
                           hint="Give a template by name (templates/<name>.ipynb) or by path to an .ipynb file.")


def load_template(path: Path) -> Template:
    import nbformat
    import papermill

    try:
        notebook = nbformat.read(path, as_version=4)
        parameters = papermill.inspect_notebook(str(path))
    except Exception as error:  # nbformat/papermill raise many kinds for a broken notebook
        raise RiskReportError(f"{path}: not a readable notebook template ({error})") from None
    params = {name: {"default": p["default"], "type": p["inferred_type_name"], "help": p["help"]}
              for name, p in parameters.items()}
    description = next((c.source.strip().splitlines()[0].lstrip("# ").strip() for c in notebook.cells
                        if c.cell_type == "markdown" and c.source.strip()), "")
    instances = bool(notebook.metadata.get("riskreport", {}).get("instances", False))
    return Template(path.stem, path.resolve(), params, description, instances)


def coerce_parameter(template: Template, name: str, value):
    """Check a user-given parameter against the template's declaration; return the typed value.

    Text values (from the CLI or a job file) are read as Python literals where the declared
    type is not `str`; only plain data (numbers, text, booleans, None, lists, dicts) passes.
    """
    if name not in template.parameters:
        raise UnknownNameError("parameter", name, list(template.parameters),
                               hint=f"(parameters of template {template.name!r})")
    declared = template.parameters[name]["type"].replace(" ", "")
    optional = declared.startswith("Optional[") and declared.endswith("]")
    base = declared[len("Optional["):-1] if optional else declared
    kind = base.split("[", 1)[0].lower()
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
    params: ReportParameters
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
                             "files_sha256": file_hashes(params.collection.files())},
              "template_sha256": file_hashes([tpl.path])[str(tpl.path)], "versions": package_versions(),
              "show_code": bool(show_code)}
    return ReportPlan(tpl, params, effective, record, fingerprint(record))


def run_report(template: str = "risk_report", *, collection: str | None = None, baseline: str | None = None,
               alphas: list[float] | None = None, measure: str | None = None, parameters: dict | None = None,
               out: str | os.PathLike | None = None, reports_dir: str | os.PathLike = "reports",
               show_code: bool = False, progress: Progress | None = None, job: str | None = None,
               update_index: bool = True, workers: int | None = None) -> Path:
    """Execute `template` on a collection and write a complete report folder; return its path.

    The folder holds `report.html`, `report.ipynb`, `params.json` and `tables/*.csv`.
    Without `out` it is `reports/<collection>/<template>/<UTC timestamp>/` (for a batch job,
    `reports/jobs/<job>/<UTC timestamp>/`), the `latest` link beside it points at it, and
    `reports/index.html` is regenerated unless `update_index=False`. `workers` is the number of
    threads the template may use (its bootstrap); None: one per core.
    """
    started = time.time()
    plan = plan_report(template, collection=collection, baseline=baseline, alphas=alphas, measure=measure,
                       parameters=parameters, show_code=show_code)
    return build_report(plan, out=out, reports_dir=reports_dir, progress=progress, job=job,
                        update_index=update_index, started=started, workers=workers)


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
                 started: float | None = None, workers: int | None = None) -> Path:
    """Execute a planned report in a temporary folder and rename it into place when complete."""
    say = progress or (lambda message: None)
    started = time.time() if started is None else started
    tpl, params = plan.template, plan.params
    say(f"template {tpl.name}, collection {params.collection.name}, measure {params.measure}, "
        f"baseline {params.baseline}, α {params.alphas}")
    prewarm(params, say, tpl.instances)

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if out is not None:
        final = Path(out).resolve()
        parent = final.parent
    else:
        parent = report_parent(plan, reports_dir, job)
        final = _unique(parent / stamp)
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".tmp-{final.name}-", dir=parent))
    os.chmod(work, 0o777 & ~_umask())
    index = update_index and out is None
    try:
        _execute(tpl, {**plan.effective, **_context(plan, work, workers)}, work, say)
    except ReportExecutionError as error:
        failed = _unique(parent / f"failed-{final.name if out is not None else stamp}")
        record = _write_params(work, plan, started, status="failed", job=job, error=str(error))
        _export(work, True, record)        # a failed report shows its code, so the failing cell can be found
        os.replace(work, failed)
        if index:
            write_index(reports_dir)
        raise ReportExecutionError(str(error), kept=failed) from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    try:
        record = _write_params(work, plan, started, status="ok", job=job)
        _export(work, plan.record["show_code"], record)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    _move_into_place(work, final)
    if out is None:
        _point_latest(parent / "latest", final)
    if index:
        write_index(reports_dir)
    say(f"report written in {time.time() - started:.1f} s: {final / 'report.html'}")
    return final


def _literal(text: str, default=None):
    import ast
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return default


def prewarm(params: ReportParameters, say: Progress, instances: bool = False) -> None:
    """Evaluate (or find cached) every run once, in parallel, with progress, before the kernel starts."""
    runs = {s: params.collection.runs[s] for s in params.systems if s in params.collection.runs}
    if instances:
        runs.update(params.collection.instance_runs(params.systems))
    if runs:
        evaluate_runs(params.collection.qrels, runs, [params.measure, judged_measure(params.measure)],
                      progress=say)


def _context(plan: ReportPlan, work: Path, workers: int | None) -> dict:
    """The `context` parameter of a template that declares it (`report.Page`): what the kernel need not redo."""
    if CONTEXT not in plan.template.parameters:
        return {}
    return {CONTEXT: {"tables_dir": str(work / "tables"), "workers": workers or os.cpu_count() or 1,
                      "inputs_sha256": inputs_digest(plan.record["collection"]["files_sha256"])}}


def _execute(tpl: Template, parameters: dict, work: Path, say: Progress) -> None:
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    output = work / "report.ipynb"
    say(f"executing {tpl.path.name} ({len(nbformat.read(tpl.path, as_version=4).cells)} cells)")
    failure = None
    try:                           # the kernel's environment is the kernelspec's: this process's os.environ is left alone
        papermill.execute_notebook(str(tpl.path), str(output), parameters=parameters, kernel_name=KERNEL_NAME,
                                   kernel_manager_class=_kernel_manager(_kernelspec()), cwd=str(work),
                                   progress_bar=False, log_output=False, report_mode=False)
    except PapermillExecutionError as error:
        failure = error
    except Exception as error:  # kernel died, could not start, ...
        failure = error
    if failure is not None:
        if isinstance(failure, PapermillExecutionError):
            message = (f"Cell {failure.exec_count} of template {tpl.name!r} failed: "
                       f"{failure.ename}: {failure.evalue}")
        else:
            message = f"Template {tpl.name!r} could not be executed: {type(failure).__name__}: {failure}"
        raise ReportExecutionError(message)


def _kernelspec() -> Path:
    """A private kernelspec that runs this very Python, whatever kernels the user has installed."""
    owner = os.getuid() if hasattr(os, "getuid") else 0
    interpreter = hashlib.sha256(sys.executable.encode()).hexdigest()[:12]   # one spec per environment
    home = Path(tempfile.gettempdir()) / f"riskreport-kernels-{owner}-{interpreter}"
    spec_dir = home / "kernels" / KERNEL_NAME
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                     "--IPKernelApp.log_level=CRITICAL"],
            "display_name": "riskreport (Python)", "language": "python",
            "env": {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}}
    spec_file = spec_dir / "kernel.json"
    if not spec_file.is_file() or json.loads(spec_file.read_text()) != spec:
        spec_dir.mkdir(parents=True, exist_ok=True)
        tmp = spec_dir / f"kernel.json.{os.getpid()}"
        tmp.write_text(json.dumps(spec))
        os.replace(tmp, spec_file)
    return home


def _kernel_manager(home: Path):
    """A kernel manager class that finds the private kernelspec in `home` (instead of setting JUPYTER_PATH)."""
    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from traitlets import default

    class Manager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _private_specs(self):
            return KernelSpecManager(kernel_dirs=[str(home / "kernels")])

    return Manager


def _write_params(work: Path, plan: ReportPlan, started: float, status: str, job: str | None,
                  error: str | None = None) -> dict:
    record = {**plan.record, "job": job, "status": status, **({"error": error} if error else {}),
              "fingerprint": plan.fingerprint,
              "duration_s": round(time.time() - started, 3),
              "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    (work / "params.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def _export(work: Path, show_code: bool, record: dict) -> None:
    notebook = work / "report.ipynb"
    if notebook.exists():
        export_html(notebook, work / "report.html", show_code=show_code, provenance=record)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _unique(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def _move_into_place(work: Path, final: Path) -> None:
    if final.exists():
        old = Path(tempfile.mkdtemp(prefix=f".old-{final.name}-", dir=final.parent))
        os.replace(final, old / final.name)
        os.replace(work, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(work, final)


def _point_latest(link: Path, target: Path) -> None:
    tmp = link.with_name(f".latest-{os.getpid()}")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(target.name)
    os.replace(tmp, link)
