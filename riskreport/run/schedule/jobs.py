"""The jobs file of `riskreport batch`: its [[job]] and [defaults] tables read and checked (each error names
the file, the job and the key), and the result of a job."""

from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from riskreport.errors import InputFormatError, ParameterError, RiskReportError, UnknownNameError
from riskreport.measures.params import is_system_file
from riskreport.render.plotting.figures import check_formats
from riskreport.run.folders.gate import alpha_outside, parse_gate
from riskreport.run.report.runner import FILE_PARAMETERS, check_timeout, coerce_parameter, find_template

JOB_KEYS = (
    "name",
    "template",
    "keep",
    "show_code",
    "timeout",
    "qrels",
    "figure_formats",
    "fail_on",
    "fail_on_systems",
    "on_change",
    "on_change_timeout",
)
ON_CHANGE_TIMEOUT = 60.0  # seconds an on_change command may take by default

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


JOB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


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
    timeout: float | None = None  # seconds its report may take (None: the batch's `timeout`, if any)
    figure_formats: tuple[str, ...] | None = None  # formats of its figures/ files (None: PNG alone)
    fail_on: str | None = None  # the job's risk gate: "risk" or "risk@ALPHA" (`gate.parse_gate`)
    fail_on_systems: tuple[str, ...] = ()  # the challengers it gates (empty: all)
    on_change: tuple[str, ...] = ()  # command run after a report whose verdicts changed, + the summary's path
    on_change_timeout: float = ON_CHANGE_TIMEOUT
    verdicts: bool = True  # its template writes verdicts (`templates.Template.verdicts`): a gate can judge it


@dataclass
class JobResult:
    """Outcome of one job: ok, failed (a template cell failed), timeout (its report reached its time limit),
    error, skipped, run (dry run), or interrupted (the batch was stopped while the job ran)."""

    name: str
    status: str
    duration_s: float | None = None
    report: str | None = None  # report folder: the new one, the failed one, or the latest (skipped)
    message: str = ""
    changes: int | None = None  # verdicts changed since the job's previous report (None: no comparison)
    gate: list[str] = field(default_factory=list)  # the risk gate's lines (`gate.offenders`)


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
            raise JobFileError(
                f"{path}: unknown top-level key {key!r} (expected a [defaults] table and [[job]] entries)."
            )
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
            raise JobFileError(
                f"{path}: job name {job.name!r} is used twice (jobs {first} and {number}); "
                "names must be unique, they name the report folders."
            )
        jobs.append(job)
    return jobs


def _load_job(path: Path, number: int, defaults: dict, entry: dict) -> Job:
    name = entry.get("name")
    if not isinstance(name, str) or not JOB_NAME.fullmatch(name):
        raise JobFileError(
            f"{path}, job {number}: key 'name' must be a name of letters, digits, '.', '_' or '-' "
            f"(it names the folder reports/jobs/<name>), got {name!r}."
        )
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
    figure_formats = merged.pop("figure_formats", None)
    if figure_formats is not None:
        try:
            figure_formats = check_formats(figure_formats, "expected")
        except ParameterError as error:
            raise bad("figure_formats", str(error).removeprefix("expected: ")) from None
    qrels = merged.pop("qrels", None)
    hooks = _hooks(merged, bad)
    if (hooks["fail_on"] is not None or hooks["fail_on_systems"]) and not tpl.verdicts:
        key = "fail_on" if hooks["fail_on"] is not None else "fail_on_systems"
        raise bad(
            key,
            f"template {tpl.name!r} writes no verdicts (no tables/verdicts.csv), so the risk gate could never judge "
            "its reports; remove the key or gate a risk_report job.",
        )
    timeout = merged.pop("timeout", None)
    try:
        timeout = check_timeout(timeout, "expected")
    except ParameterError:
        raise bad(
            "timeout", f"expected a time limit in seconds, a number > 0 (e.g. timeout = 3600), got {timeout!r}."
        ) from None
    parameters = {}
    for key, value in merged.items():
        if key not in tpl.parameters:
            known = list(JOB_KEYS) + list(tpl.parameters)
            close = difflib.get_close_matches(key, known, n=1)
            raise bad(
                key,
                "unknown key"
                + (f"; did you mean {close[0]!r}?" if close else ".")
                + f" Expected {', '.join(JOB_KEYS)} or a parameter of template {tpl.name!r}: "
                f"{', '.join(tpl.parameters)}.",
            )
        if key == "collection" and isinstance(value, str) and (value.startswith((".", "~")) or "/" in value):
            value = str((path.parent / Path(value).expanduser()).resolve())
        elif (
            key in FILE_PARAMETERS
            and isinstance(value, str)
            and (is_system_file(value) or (path.parent / Path(value).expanduser()).is_file())
        ):
            value = str((path.parent / Path(value).expanduser()).resolve())  # a file named relative to the jobs file
        try:
            parameters[key] = coerce_parameter(tpl, key, value)
        except (ParameterError, UnknownNameError, InputFormatError) as error:
            raise bad(key, str(error)) from None
    if qrels is not None:
        parameters["collection"] = _with_qrels(path, parameters.get("collection", "demo"), qrels, bad)
    job = Job(name, template, parameters, keep, show_code, timeout, figure_formats, **hooks, verdicts=tpl.verdicts)
    gate = parse_gate(job.fail_on)
    problem = gate and gate.alpha is not None and alpha_outside(gate, job_grid(job), "the job's grid")
    if problem:
        raise bad("fail_on", f"{problem}; gate an α of its grid, or add this α to its alphas.")
    return job


def job_grid(job: Job) -> list[float] | None:
    """The α grid of a job's reports as the report will resolve it (its `alphas`, else its collection's default,
    else the default grid); None when that cannot be told before the report is planned (e.g. no such collection,
    whose error the job then reports)."""
    from riskreport.io.collection import load_collection
    from riskreport.measures.params import DEFAULT_ALPHAS
    from riskreport.run.report.templates import template_path
    from riskreport.run.report.usage import collection_default

    if job.parameters.get("alphas") is not None:
        return list(job.parameters["alphas"])
    try:
        default = collection_default(template_path(job.template)[0])
        collection = load_collection(job.parameters.get("collection") or default or "demo")
    except (RiskReportError, OSError):
        return None
    return list(collection.default_alphas or DEFAULT_ALPHAS)


def check_batch_gate(path: str | os.PathLike, jobs: list[Job], gate) -> None:
    """Refuse the batch's gate (`--fail-on`, a `gate.Gate`) when no job can be gated (no template writes
    verdicts) or its α is outside the grid of a job it gates, before any job runs (as `run` refuses it)."""
    if gate is None:
        return
    gated = [job for job in jobs if job.verdicts]
    if not gated:
        raise ParameterError(
            f"--fail-on: no job of {path} writes verdicts (no template writes tables/verdicts.csv), so the risk "
            "gate could never judge them."
        )
    for job in gated if gate.alpha is not None else ():
        problem = alpha_outside(gate, job_grid(job), f"the grid of job {job.name!r}")
        if problem:
            raise ParameterError(f"--fail-on risk@{gate.alpha:g}: {problem} ({path}).")


def _hooks(merged: dict, bad) -> dict:
    """A job's `fail_on`, `fail_on_systems`, `on_change` and `on_change_timeout`, checked (removed from `merged`)."""
    fail_on = merged.pop("fail_on", None)
    systems = merged.pop("fail_on_systems", [])
    if not isinstance(systems, list) or not all(isinstance(s, str) and s for s in systems):
        raise bad("fail_on_systems", f'expected a list of system ids, e.g. ["weak-ql"], got {systems!r}.')
    try:
        parse_gate(fail_on, systems, "expected")
    except ParameterError:
        raise bad(
            "fail_on", f'expected "risk" (any α) or "risk@ALPHA" (one α, e.g. "risk@5"), got {fail_on!r}.'
        ) from None
    command = merged.pop("on_change", [])
    if not isinstance(command, list) or not all(isinstance(c, str) and c for c in command):
        raise bad(
            "on_change",
            f'expected a command as a list of strings, e.g. ["notify-send", "riskreport"], got {command!r}.',
        )
    limit = merged.pop("on_change_timeout", ON_CHANGE_TIMEOUT)
    try:
        limit = check_timeout(limit, "expected")
    except ParameterError:
        raise bad("on_change_timeout", f"expected a time limit in seconds, a number > 0, got {limit!r}.") from None
    return {
        "fail_on": fail_on,
        "fail_on_systems": tuple(systems),
        "on_change": tuple(command),
        "on_change_timeout": float(limit or ON_CHANGE_TIMEOUT),
    }


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


def _with_timeout(job: Job, timeout: float) -> Job:
    from dataclasses import replace

    return replace(job, timeout=timeout)
