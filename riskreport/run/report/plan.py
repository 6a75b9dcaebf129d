"""Planning a report: every parameter resolved against its template and collection, every input hashed (the
fingerprint a batch compares to skip unchanged jobs), and the runs evaluated before a kernel starts."""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from riskreport.errors import ParameterError
from riskreport.io.collection import load_collection
from riskreport.io.collection_data import read_collection
from riskreport.io.provenance import file_hashes, inputs_digest, known_digests, package_versions
from riskreport.ltr.params import LetorParameters
from riskreport.measures.evaluation import Progress, evaluate_runs, judged_measure
from riskreport.measures.params import ReportParameters, parameters_from
from riskreport.measures.report_options import check_report_options
from riskreport.render.plotting.figures import DEFAULT_FORMATS, check_formats
from riskreport.run.report.executor_options import check_executor_options
from riskreport.run.report.templates import (
    CONTEXT,
    FILE_PARAMETERS,
    Template,
    _literal,
    coerce_parameter,
    find_template,
)


@dataclass(frozen=True)
class ReportPlan:
    """What a report will be built from, every default resolved and every input hashed.

    `record` holds what params.json stores about the inputs (template and file hashes,
    parameters, package versions); `fingerprint` is their digest: equal fingerprints mean
    the same report would be produced again.
    """

    template: Template
    params: ReportParameters | LetorParameters  # the report's resolved parameters (LETOR templates: the latter)
    effective: dict
    record: dict
    fingerprint: str


def fingerprint(record: dict) -> str:
    """SHA-256 of the template, effective parameters, input files and package versions of a report.

    `record` is a params.json (or `ReportPlan.record`); a params.json written before `show_code`
    was recorded yields a digest that matches no plan, so that report is built again. Figure formats
    other than the default (PNG alone) count too; the default leaves the digest as it was before they
    were recorded.
    """
    inputs = {key: record.get(key) for key in ("template_sha256", "parameters", "versions", "show_code")}
    inputs["files_sha256"] = (record.get("collection") or {}).get("files_sha256")
    formats = record.get("figure_formats") or list(DEFAULT_FORMATS)
    if list(formats) != list(DEFAULT_FORMATS):
        inputs["figure_formats"] = list(formats)
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()


def plan_report(
    template: str | os.PathLike = "risk_report",
    *,
    collection: str | None = None,
    baseline: str | None = None,
    alphas: list[float] | None = None,
    measure: str | None = None,
    parameters: dict | None = None,
    show_code: bool = False,
    figure_formats=None,
) -> ReportPlan:
    """Check the parameters of a report against its template and collection; hash its inputs.
    `figure_formats`: the formats of `figures/` (`figures.check_formats`; None: PNG alone)."""
    formats = check_formats(figure_formats)
    tpl = find_template(template)
    if CONTEXT in (parameters or {}):
        raise ParameterError(
            f"Parameter {CONTEXT!r} is set by riskreport run (the report's tables folder, input "
            "hashes and threads); give it only when running the notebook by hand."
        )
    given = {name: coerce_parameter(tpl, name, value) for name, value in (parameters or {}).items()}
    for name, value in (("collection", collection), ("baseline", baseline), ("alphas", alphas), ("measure", measure)):
        if value is not None:
            given[name] = coerce_parameter(tpl, name, value)
    if "collection" not in given:
        default = tpl.parameters.get("collection", {}).get("default", "None")
        given["collection"] = _literal(default) or "demo"
    if tpl.letor:
        return _plan_letor(tpl, given, show_code, formats)
    several = given.get("baselines") if "baselines" in tpl.parameters else None  # every one checked now, not in a cell
    # One pass: the collection loaded and its files read once (io), the parameters resolved from them (measures).
    data = read_collection(load_collection(given["collection"]))
    params = parameters_from(
        data,
        measure=given.get("measure"),
        baseline=several or given.get("baseline"),
        alphas=given.get("alphas"),
        systems=given.get("systems"),
        sig_level=given.get("sig_level", 0.05),
        instances=tpl.instances,
    )
    defaults = {name: _literal(spec["default"], default=spec["default"]) for name, spec in tpl.parameters.items()}
    effective = {
        **defaults,
        **given,
        "collection": str(params.collection.location),
        "measure": params.measure,
        "baseline": params.baseline,
        "alphas": params.alphas,
    }
    effective = {k: v for k, v in effective.items() if k in tpl.parameters and k != CONTEXT}
    check_report_options(effective, params)
    check_executor_options(effective)
    return _plan(tpl, params, effective, given, show_code, chosen=("baseline", "measure"), formats=formats)


def _plan_letor(tpl: Template, given: dict, show_code: bool, formats: tuple[str, ...] = DEFAULT_FORMATS) -> ReportPlan:
    """`plan_report` for a learning-to-rank template: `collection` is a LETOR data folder (`riskreport.ltr.params`)."""
    from riskreport.ltr.params import check_relevant_files, resolve_ltr_parameters

    params = resolve_ltr_parameters(given["collection"], **{k: v for k, v in given.items() if k != "collection"})
    check_relevant_files(params)  # a file without a relevant document: its error now, not in a failed report
    defaults = {name: _literal(spec["default"], default=spec["default"]) for name, spec in tpl.parameters.items()}
    resolved = {
        "collection": str(params.collection.location),
        "folds": params.folds,
        "objectives": params.objectives,
        "alphas": params.alphas,
        "baseline": params.baseline,
        "learned_baselines": params.learned,
        "trees": params.trees,
        "leaves": params.leaves,
        "learning_rate": params.learning_rate,
        "min_data_in_leaf": params.min_data_grid[0] if len(params.min_data_grid) == 1 else None,
        "min_data_grid": params.min_data_grid if len(params.min_data_grid) > 1 else None,
    }
    effective = {k: v for k, v in {**defaults, **given, **resolved}.items() if k in tpl.parameters and k != CONTEXT}
    check_report_options(effective)
    return _plan(tpl, params, effective, given, show_code, chosen=("baseline",), formats=formats)


def list_files_given(given: dict) -> list[Path]:
    """The files listing systems among the parameters: inputs of the report, hashed with the collection's."""
    return [
        Path(given[name])
        for name in FILE_PARAMETERS
        if isinstance(given.get(name), str) and Path(given[name]).is_absolute()
    ]


def check_timeout(value, where: str = "timeout") -> float | None:
    """A report's time limit in seconds: None, or a finite number > 0; `ParameterError` naming `where` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ParameterError(f"{where}: expected a time limit in seconds, a number > 0 (e.g. 3600), got {value!r}.")
    return float(value)


def prewarm(params: ReportParameters | LetorParameters, say: Progress, instances: bool = False) -> None:
    """Evaluate (or find cached) every run once, in parallel, with progress, before the kernel starts.
    A learning-to-rank report has no runs to evaluate (its kernel trains and scores the learners)."""
    if not isinstance(params, ReportParameters):
        return
    runs = {s: params.collection.runs[s] for s in params.systems if s in params.collection.runs}
    if instances:
        runs.update(params.collection.instance_runs(params.systems))
    if runs:
        evaluate_runs(
            params.collection.qrels_file(), runs, [params.measure, judged_measure(params.measure)], progress=say
        )


def _context(
    plan: ReportPlan, work: Path, workers: int | None, previous: dict | None = None, generated_utc: str | None = None
) -> dict:
    """The `context` parameter of a template that declares it (`report.Page`): what the kernel need not redo,
    the `previous` report folder to compare with (`changes.previous_of`), if any, and the report's one time
    stamp (`generated_utc`: its folder's name, header and provenance)."""
    if CONTEXT not in plan.template.parameters:
        return {}
    return {
        CONTEXT: {
            "tables_dir": str(work / "tables"),
            "workers": workers or os.cpu_count() or 1,
            "inputs_sha256": inputs_digest(plan.record["collection"]["files_sha256"]),
            "chosen": plan.record["chosen"],
            "file_digests": known_digests(plan.record["collection"]["files_sha256"]),
            "figure_formats": plan.record.get("figure_formats", list(DEFAULT_FORMATS)),
            **({"previous": previous["folder"]} if previous else {}),
            **({"generated_utc": generated_utc} if generated_utc else {}),
        }
    }


def _plan(
    tpl: Template,
    params,
    effective: dict,
    given: dict,
    show_code: bool,
    chosen: tuple[str, ...],
    formats: tuple[str, ...] = DEFAULT_FORMATS,
) -> ReportPlan:
    """The plan of a report whose parameters are resolved: what params.json records about its inputs (template and
    file hashes, effective parameters, package versions, the defaults riskreport `chosen` for the user) and its
    fingerprint."""
    record = {
        "template": tpl.name,
        "template_path": str(tpl.path),
        "parameters": effective,
        "collection": {
            "name": params.collection.name,
            "path": str(params.collection.path),
            "files_sha256": file_hashes(params.collection.files() + list_files_given(given)),
        },
        "template_sha256": file_hashes([tpl.path])[str(tpl.path)],
        "versions": package_versions(),
        "show_code": bool(show_code),
        "figure_formats": list(formats),
        "chosen": [n for n in chosen if n not in given],
    }
    return ReportPlan(tpl, params, effective, record, fingerprint(record))
