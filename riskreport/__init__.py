"""riskreport: risk-sensitive evaluation reports for IR test collections.

Every challenger of the demo collection against its baseline, URisk and TRisk at two α
(losses weigh 1 + α; higher is better):

>>> import riskreport as rr
>>> p = rr.resolve_parameters("demo", measure="nDCG@10", alphas=[0, 10])
>>> matrix = rr.evaluate(p.collection, p.measure, p.systems).matrix()        # systems x topics
>>> risk = rr.risk_table(matrix, p.baseline, p.alphas, p.measure)
>>> print(risk.loc[risk["system"] == "risky-llm", ["system", "alpha", "urisk", "p_value", "p_adjusted", "verdict"]]
...       .round(4).to_string(index=False))
   system  alpha   urisk  p_value  p_adjusted      verdict
risky-llm    0.0  0.1137   0.1136      0.3407 inconclusive
risky-llm   10.0 -1.4780   0.0044      0.0267         risk

It wins on average, not significantly, and once losses weigh eleven times as much it is a significant risk,
even with the p-value adjusted across the 10 challengers (Holm): `verdict` is the report's rule, the same as in
its verdicts.csv (`correction="none"` for each comparison alone). API misuse is the project's error, never a
bare KeyError:

>>> rr.risk_table(matrix.T, p.baseline, p.alphas)
Traceback (most recent call last):
...
riskreport.errors.UnknownNameError: Unknown baseline 'bm25'. ... The matrix looks transposed: rows must be systems and columns topics (use matrix.T).

The same report as one object, every table computed once on first use, is `a = rr.analyse("demo")`:
`a.table("risk")`, `a.figure("urisk-alpha")`, `a.to_latex("risk")`, `a.save(folder)`, and in Jupyter a
summary of its verdicts. A whole HTML report is one call, `rr.run_report("risk_report", collection="demo")`
(papermill and nbconvert; the folder it wrote is returned), and a jobs file one more, `rr.run_batch("jobs.toml")`.
"""

import importlib as _importlib
from importlib import metadata as _metadata
from importlib import util as _util

from riskreport.errors import (
    InputFormatError,
    ParameterError,
    ReportExecutionError,
    ReportTimeoutError,
    RiskReportError,
    UnknownNameError,
)
from riskreport.short_names import short_module

# Everything else is imported on first use (PEP 562): `riskreport run` then starts without scipy.stats,
# statsmodels or matplotlib, which only the report's kernel needs. `rr.risk_table` works as before.
_LAZY = {
    "run_batch": "run.schedule.batch",
    "run_report": "run.report.runner",
    "analyse": "run.api.analysis",
    "Analysis": "run.api.analysis",
    "Collection": "io.collection",
    "load_collection": "io.collection",
    "adjust_pvalues": "stats.corrections",
    "effectiveness_table": "stats.effectiveness",
    "TopicScores": "measures.evaluation",
    "evaluate": "measures.evaluation",
    "judged_fraction": "measures.evaluation",
    "InstanceScores": "stats.instances",
    "evaluate_instances": "stats.instances",
    "MixedFit": "stats.mixed",
    "fit_pair": "stats.mixed",
    "mixed_table": "stats.mixed",
    "ReportParameters": "measures.params",
    "check_report_options": "measures.params",
    "resolve_parameters": "measures.params",
    "choose_systems": "measures.params",
    "rank_agreement": "stats.rankings",
    "read_letor": "io.letor",
    "load_letor_folder": "io.letor",
    "make_objective": "ltr.objectives",
    "RiskGateError": "run.folders.gate",
    "changes_table": "stats.changes",
    "read_summary": "run.folders.summary",
    **{
        name: "stats.risk"
        for name in (
            "deltas",
            "georisk",
            "georisk_table",
            "risk_adjusted",
            "risk_adjusted_scores",
            "risk_table",
            "smooth_value",
            "to_convention",
            "topic_risk",
            "trisk",
            "tstar_table",
            "urisk",
            "zrisk",
            "zrisk_single",
        )
    },
}
# Short module names for notebooks and templates (`from riskreport import report, plots`, `rr.inference`):
# where each module lives in the layered package (io -> measures -> stats/bayes -> render -> run).
MODULES = {
    **{m: f"io.{m}" for m in ("trec", "collection", "files", "provenance", "demo", "demo_model", "cache")},
    **{
        m: f"measures.{m}"
        for m in ("evaluation", "measure_names", "topics", "run_files", "gdeval", "ranked", "rbp", "judged", "params")
    },
    **{
        m: f"stats.{m}"
        for m in (
            "risk",
            "inference",
            "bootstrap",
            "corrections",
            "significance",
            "mixed",
            "reml",
            "rankings",
            "pools",
            "effectiveness",
            "instances",
        )
    },
    **{m: f"render.pages.{m}" for m in ("report", "export")},
    **{m: f"render.plotting.{m}" for m in ("plots", "palette", "plot_layout", "instance_plots", "figures")},
    **{m: f"render.tabular.{m}" for m in ("latex",)},
    **{m: f"run.report.{m}" for m in ("runner", "problems")},
    **{m: f"run.schedule.{m}" for m in ("batch",)},
    **{m: f"run.cli.{m}" for m in ("authoring", "parameter_cell", "inline_statistics", "scaffold")},
    **{m: f"run.folders.{m}" for m in ("lock", "index")},
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in MODULES:
        return short_module(__name__, MODULES, name)
    if not name.startswith("_") and _util.find_spec(f"{__name__}.{name}") is not None:
        return _importlib.import_module(f".{name}", __name__)  # a sub-package: rr.bayes, rr.stats
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


try:
    __version__ = _metadata.version("riskreport")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.1.0"

__all__ = [
    # entry points
    "run_report",
    "run_batch",
    "analyse",
    "Analysis",
    # collections, parameters, scores
    "Collection",
    "load_collection",
    "resolve_parameters",
    "ReportParameters",
    "check_report_options",
    "choose_systems",
    "evaluate",
    "judged_fraction",
    "TopicScores",
    "evaluate_instances",
    "InstanceScores",
    # measures and statistics
    "effectiveness_table",
    "adjust_pvalues",
    "deltas",
    "risk_adjusted",
    "urisk",
    "trisk",
    "risk_table",
    "topic_risk",
    "tstar_table",
    "zrisk",
    "georisk",
    "georisk_table",
    "zrisk_single",
    "risk_adjusted_scores",
    "smooth_value",
    "rank_agreement",
    "to_convention",
    "changes_table",
    "read_summary",
    "MixedFit",
    "fit_pair",
    "mixed_table",
    # learning to rank
    "read_letor",
    "load_letor_folder",
    "make_objective",
    # modules
    "inference",
    "instances",
    "mixed",
    "pools",
    "rankings",
    "risk",
    "significance",
    # errors
    "RiskReportError",
    "InputFormatError",
    "UnknownNameError",
    "ParameterError",
    "ReportExecutionError",
    "ReportTimeoutError",
    "RiskGateError",
]
