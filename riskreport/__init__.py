"""riskreport: risk-sensitive evaluation reports for IR test collections.

>>> import riskreport as rr
>>> p = rr.resolve_parameters("demo")                      # doctest: +SKIP
>>> scores = rr.evaluate(p.collection, p.measure)          # doctest: +SKIP
>>> rr.risk_table(scores.matrix(), p.baseline, p.alphas)  # doctest: +SKIP
"""
from importlib import metadata as _metadata

from .collection import Collection, load_collection
from .corrections import adjust_pvalues
from .effectiveness import effectiveness_table
from . import inference, risk
from .errors import InputFormatError, ParameterError, ReportExecutionError, RiskReportError, UnknownNameError
from .evaluation import TopicScores, evaluate, judged_fraction
from .params import ReportParameters, check_report_options, resolve_parameters
from . import instances, mixed  # non-deterministic systems (SPEC §5)
from .instances import InstanceScores, evaluate_instances
from .mixed import MixedFit, fit_pair, mixed_table
from .risk import (deltas, georisk, georisk_table, rank_agreement, risk_adjusted, risk_adjusted_scores, risk_table,
                   smooth_value, to_convention, topic_risk, trisk, tstar_table, urisk, zrisk, zrisk_single)

try:
    __version__ = _metadata.version("riskreport")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.1.0"

__all__ = ["Collection", "load_collection", "evaluate", "judged_fraction", "TopicScores", "resolve_parameters",
           "ReportParameters", "check_report_options", "effectiveness_table", "adjust_pvalues", "deltas", "risk_adjusted", "urisk",
           "trisk", "risk_table", "topic_risk", "tstar_table", "zrisk", "georisk", "georisk_table", "zrisk_single",
           "risk_adjusted_scores", "smooth_value", "rank_agreement", "to_convention", "RiskReportError", "InputFormatError", "UnknownNameError", "ParameterError",
           "ReportExecutionError"]
__all__ += ["inference", "risk", "instances", "mixed", "InstanceScores", "evaluate_instances", "MixedFit", "fit_pair", "mixed_table"]
