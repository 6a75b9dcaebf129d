"""riskreport: risk-sensitive evaluation reports for IR test collections.

Every challenger of the demo collection against its baseline, URisk and TRisk at two α
(losses weigh 1 + α; higher is better):

>>> import riskreport as rr
>>> p = rr.resolve_parameters("demo", measure="nDCG@10", alphas=[0, 5])
>>> matrix = rr.evaluate(p.collection, p.measure, p.systems).matrix()        # systems x topics
>>> risk = rr.risk_table(matrix, p.baseline, p.alphas, p.measure)
>>> print(risk.loc[risk["system"] == "risky-llm", ["system", "alpha", "urisk", "p_value", "p_adjusted", "verdict"]]
...       .round(4).to_string(index=False))
   system  alpha   urisk  p_value  p_adjusted      verdict
risky-llm    0.0  0.1416   0.0387      0.1161 inconclusive
risky-llm    5.0 -0.5537   0.0380      0.1898 inconclusive

It wins on average and loses badly once losses weigh six times as much, yet neither is significant once
the p-value is adjusted across the 10 challengers (Holm): `verdict` is the report's rule, the same as in its
verdicts.csv (`correction="none"` for each comparison alone). API misuse is the project's error, never a
bare KeyError:

>>> rr.risk_table(matrix.T, p.baseline, p.alphas)
Traceback (most recent call last):
...
riskreport.errors.UnknownNameError: Unknown baseline 'bm25'. ... The matrix looks transposed: rows must be systems and columns topics (use matrix.T).

A whole report is one call, `rr.run_report("risk_report", collection="demo")` (papermill and
nbconvert; the folder it wrote is returned), and a jobs file one more, `rr.run_batch("jobs.toml")`.
"""
import importlib as _importlib
from importlib import util as _util
from importlib import metadata as _metadata

from .errors import InputFormatError, ParameterError, ReportExecutionError, RiskReportError, UnknownNameError

# Everything else is imported on first use (PEP 562): `riskreport run` then starts without scipy.stats,
# statsmodels or matplotlib, which only the report's kernel needs. `rr.risk_table` works as before.
_LAZY = {
    "run_batch": "batch", "Collection": "collection", "load_collection": "collection",
    "adjust_pvalues": "corrections", "effectiveness_table": "effectiveness", "TopicScores": "evaluation",
    "evaluate": "evaluation", "judged_fraction": "evaluation", "InstanceScores": "instances",
    "evaluate_instances": "instances", "MixedFit": "mixed", "fit_pair": "mixed", "mixed_table": "mixed",
    "ReportParameters": "params", "check_report_options": "params", "resolve_parameters": "params",
    "choose_systems": "params",
    "rank_agreement": "rankings", "run_report": "runner",
    **{name: "risk" for name in ("deltas", "georisk", "georisk_table", "risk_adjusted", "risk_adjusted_scores",
                                 "risk_table", "smooth_value", "to_convention", "topic_risk", "trisk", "tstar_table",
                                 "urisk", "zrisk", "zrisk_single")},
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("_") and _util.find_spec(f"{__name__}.{name}") is not None:
        return _importlib.import_module(f".{name}", __name__)           # a submodule: rr.inference, rr.evaluation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


try:
    __version__ = _metadata.version("riskreport")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.1.0"

__all__ = [
    # entry points
    "run_report", "run_batch",
    # collections, parameters, scores
    "Collection", "load_collection", "resolve_parameters", "ReportParameters", "check_report_options", "choose_systems",
    "evaluate",
    "judged_fraction", "TopicScores", "evaluate_instances", "InstanceScores",
    # measures and statistics
    "effectiveness_table", "adjust_pvalues", "deltas", "risk_adjusted", "urisk", "trisk", "risk_table", "topic_risk",
    "tstar_table", "zrisk", "georisk", "georisk_table", "zrisk_single", "risk_adjusted_scores", "smooth_value",
    "rank_agreement", "to_convention", "MixedFit", "fit_pair", "mixed_table",
    # modules
    "inference", "instances", "mixed", "pools", "rankings", "risk", "significance",
    # errors
    "RiskReportError", "InputFormatError", "UnknownNameError", "ParameterError", "ReportExecutionError",
]
