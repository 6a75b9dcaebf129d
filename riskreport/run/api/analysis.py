"""One result object for notebooks, scripts and the `risk_report` template: `analyse(...)` → `Analysis`.

`Analysis` holds the inputs and parameters of a risk report and computes each of its tables once, on
first use. `tables` are exactly the tables `riskreport run` writes (same names, same columns); the
`risk_report` template arranges this object's tables, figures and captions with prose, so the command
line, the API and the notebook give the same numbers by construction.

>>> import riskreport as rr
>>> a = rr.analyse("demo", measure="nDCG@10", alphas=[0, 5], bootstrap_samples=500)   # doctest: +SKIP
>>> a.table("verdicts").query("method == 't'").head()                               # doctest: +SKIP
>>> a.save("reports/my-demo")                                                       # doctest: +SKIP
>>> rr.Analysis.load("reports/my-demo").table("risk")                               # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from riskreport.errors import ParameterError, RiskReportError
from riskreport.run.api.display import AnalysisDisplay
from riskreport.run.api.files import TEMPLATE, AnalysisFiles, read_saved
from riskreport.run.api.tables import LATEX, TABLES, AnalysisTables, _shared
from riskreport.run.folders.saved_tables import TEXT_COLUMNS, read_table

if TYPE_CHECKING:
    from riskreport.stats.changes import Changes

__all__ = ["LATEX", "OPTION_DEFAULTS", "TABLES", "TEMPLATE", "TEXT_COLUMNS", "Analysis", "analyse", "read_table"]

OPTION_DEFAULTS = {
    "sig_level": 0.05,
    "seed": 2026,
    "title": None,
    "convention": "standard",
    "topic_alphas": None,
    "pool": None,
    "smooth_overlay": False,
    "ci_levels": [0.95, 0.999],
    "correction": "holm",
    "bootstrap_samples": 10_000,
    "focus_system": None,
    "other_measures": None,
    "measures": None,
    "max_figure_systems": 12,
}


def analyse(
    collection="demo",
    *,
    baseline: str | list[str] | None = None,
    measure: str | None = None,
    alphas=None,
    systems=None,
    runs=None,
    qrels=None,
    scores=None,
    workers: int = 1,
    **options,
) -> Analysis:
    """The risk report of `collection` as one object (computed on first use), with the report's parameters.

    `collection`: a collection name, folder or score table; or the inputs themselves: a run frame
    (PyTerrier, `qid, docno`), a ranx Run or a mapping with `qrels` are `runs`, any other frame or
    mapping is `scores`. Or give `runs` (with `qrels`) or per-topic `scores` in any shape `riskreport.io.inputs.collection_from` reads (PyTerrier frames, ranx Runs, a
    folder of TREC runs, a long frame or matrix, trec_eval/ir_measures/pytrec_eval output; qrels from a
    file or an ir_datasets id). `qrels` alone replaces the qrels of `collection`'s runs. `baseline` may
    be a list: several baselines corrected as one family. `options` are the `risk_report` template's
    other parameters (`sig_level`, `seed`, `correction`, `bootstrap_samples`, `ci_levels`, ...).
    """
    from riskreport.io.collection_data import read_collection
    from riskreport.io.inputs import analysed_collection
    from riskreport.measures.params import parameters_from
    from riskreport.measures.report_options import check_report_options

    unknown = sorted(set(options) - set(OPTION_DEFAULTS))
    if unknown:
        raise ParameterError(
            f"analyse: unknown option(s) {', '.join(unknown)}; expected some of {', '.join(OPTION_DEFAULTS)}."
        )
    settings = {**OPTION_DEFAULTS, **options}
    # One pass: the inputs loaded and read once (io), the parameters resolved from that (measures), then used as they are
    collection, settings["title"] = analysed_collection(
        collection, runs, qrels, scores, measure=measure, baseline=baseline, alphas=alphas, title=settings["title"]
    )
    data = read_collection(collection)
    params = parameters_from(
        data, measure=measure, baseline=baseline, alphas=alphas, systems=systems, sig_level=settings["sig_level"]
    )
    check_report_options(
        {k: v for k, v in settings.items() if k not in ("sig_level", "title", "pool", "smooth_overlay")}, params
    )
    return Analysis(params, settings, workers=workers, systems=systems)


class Analysis(AnalysisTables, AnalysisFiles, AnalysisDisplay):
    """A risk report as an object: its parameters, its tables (computed once, on first use), figures and LaTeX.

    `tables` is name → tidy DataFrame, exactly the tables `riskreport run` writes to tables/*.csv;
    `table(name)`, `figure(name)`, `to_latex(name)`; in Jupyter a compact summary; `save(folder)`
    writes the folder `riskreport run` writes (tables, figures, params.json); `Analysis.load(folder)`
    reads one back (also a folder `riskreport run` wrote).
    """

    def __init__(
        self,
        params,
        options: dict,
        workers: int = 1,
        tables: dict | None = None,
        record: dict | None = None,
        systems=None,
    ):
        self.params, self.options, self.workers = params, dict(options), max(1, int(workers))
        self.systems_given = list(systems) if isinstance(systems, (list, tuple)) else systems  # None: all
        self._loaded = dict(tables or {})
        self.record = record
        self.folder: Path | None = None  # the report folder it was loaded from (`load`)
        self._family: Analysis | None = None  # the analysis this is a view of, against another baseline
        self._views: dict[str, Analysis] = {}

    def against(self, baseline: str | None) -> Analysis:
        """This analysis seen against one of its baselines: figures, captions, LaTeX and the `main_*` tables
        against `baseline`, from the same family-wide tables and verdicts (computed once; None: the first)."""
        p = self.params
        if baseline is None or baseline == p.baseline:
            return self
        if baseline not in p.all_baselines:
            from riskreport.errors import UnknownNameError

            raise UnknownNameError("baseline", baseline, p.all_baselines, hint="(the baselines of this analysis)")
        if baseline not in self._views:
            order = [baseline, *(b for b in p.all_baselines if b != baseline)]
            view = type(self)(dataclasses.replace(p, baseline=baseline, baselines=order), self.options, self.workers)
            view.systems_given, view.record, view._loaded, view._family = (
                self.systems_given,
                self.record,
                self._loaded,
                self,
            )
            self._views[baseline] = view
        return self._views[baseline]

    # ---- parameters ---------------------------------------------------------------------------
    @property
    def parameters(self) -> dict:
        """The report's parameters as the `risk_report` template takes them (what params.json records)."""
        p = self.params
        several = len(p.all_baselines) > 1
        systems = p.extra["systems_file"] if p.extra.get("systems_file") else self.systems_given
        return {
            "collection": str(p.collection.location),
            "baseline": p.baseline,
            "baselines": p.all_baselines if several else None,
            "alphas": p.alphas,
            "measure": p.measure,
            "systems": systems,
            **self.options,
        }

    def __getattr__(self, name):  # options read as attributes: a.correction, a.seed
        options = self.__dict__.get("options", {})
        if name in options:
            return options[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- what the tables are computed from ----------------------------------------------------
    @_shared
    def scores(self):
        from riskreport.measures.evaluation import CollectionWarning, evaluate

        gone = self.params.extra.get("gone")
        if gone:  # loaded without its inputs: the saved tables are all there is
            raise RiskReportError(
                f"{gone} no longer exists (a cleared cache, or another machine): this analysis holds the tables "
                f"it was saved with ({', '.join(self.table_names)}); figures and LaTeX need the scores: analyse "
                "the inputs again."
            )

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CollectionWarning)  # shown in the collection overview instead
            p = self.params
            return evaluate(p.collection, p.measure, p.systems, table=p.table)

    @_shared
    def matrix(self) -> pd.DataFrame:
        return self.scores.matrix()

    @_shared
    def risk(self) -> pd.DataFrame:
        from riskreport.stats.risk import risk_table

        p = self.params
        return self._kept(
            "risk",
            lambda: risk_table(
                self.matrix, p.all_baselines, p.alphas, p.measure, sig_level=p.sig_level, correction=self.correction
            ),
            sig_level=p.sig_level,
            correction=self.correction,
        )

    @_shared
    def tests(self) -> pd.DataFrame:
        from riskreport.stats.inference import tests_table

        p = self.params
        options = {"correction": self.correction, "samples": self.bootstrap_samples, "seed": self.seed}
        return self._kept(
            "tests", lambda: tests_table(self.matrix, p.all_baselines, p.alphas, p.measure, **options), **options
        )

    @_shared
    def boot(self) -> pd.DataFrame:
        from riskreport.stats.inference import bootstrap_table

        p = self.params
        options = {"levels": self.ci_levels, "samples": self.bootstrap_samples, "seed": self.seed}
        options["correction"] = self.correction
        return self._kept(
            "bootstrap",
            lambda: bootstrap_table(self.matrix, p.all_baselines, p.alphas, p.measure, **options, workers=self.workers),
            **options,
        )

    @_shared
    def _verdicts(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        from riskreport.stats.significance import report_verdicts

        return report_verdicts(self.risk, self.tests, self.boot, self.params.sig_level)

    @property
    def verdicts(self) -> pd.DataFrame:
        """Every method's verdict per challenger, baseline and α (tables/verdicts.csv)."""
        return self._verdicts[0]

    @property
    def summary(self) -> pd.DataFrame:
        """The rule's verdict per challenger, baseline and α, riskiest first, with the methods' agreement."""
        return self._verdicts[1]

    @cached_property
    def main_risk(self) -> pd.DataFrame:
        from riskreport.render.pages.report import for_baseline

        return for_baseline(self.risk, self.params.baseline)

    @cached_property
    def main_summary(self) -> pd.DataFrame:
        from riskreport.render.pages.report import for_baseline

        return for_baseline(self.summary, self.params.baseline)

    @cached_property
    def figure_challengers(self) -> list[str]:
        from riskreport.render.pages.report import figure_systems

        return figure_systems(self.main_risk, self.max_figure_systems)

    @cached_property
    def palette(self):
        from riskreport.render.plotting import plots

        return plots.Palette([*self.figure_challengers, self.params.baseline], self.params.baseline)

    @_shared
    def judged(self) -> pd.DataFrame:
        from riskreport.measures.evaluation import judged_fraction

        return judged_fraction(self.params.collection, self.params.measure, self.params.systems)

    @cached_property
    def effectiveness(self) -> pd.DataFrame:
        from riskreport.stats.effectiveness import effectiveness_table

        p = self.params
        return effectiveness_table(
            self.matrix, p.baseline, p.measure, correction=self.correction, baselines=p.all_baselines
        )

    @cached_property
    def multi(self) -> pd.DataFrame | None:
        if not self.measures:
            return None
        from riskreport.stats.effectiveness import multi_measure_table

        p = self.params
        return multi_measure_table(p.collection, self.measures, p.systems, p.baseline, self.correction)

    @_shared
    def critical(self) -> float:
        from riskreport.stats.risk import t_critical

        return t_critical(self.params.sig_level, len(self.scores.topics))

    @cached_property
    def fine(self) -> pd.DataFrame:
        """URisk and TRisk against the first baseline on a 41-point α grid (the TRisk-against-α figure)."""
        from riskreport.stats.risk import risk_table

        p = self.params
        return risk_table(
            self.matrix,
            p.baseline,
            np.linspace(0, max(p.alphas), 41).tolist(),
            p.measure,
            sig_level=p.sig_level,
            correction=self.correction,
        )

    @cached_property
    def topic_alphas_used(self) -> list[float]:
        from riskreport.measures.params import check_alphas

        return check_alphas(self.topic_alphas) if self.topic_alphas is not None else [max(self.params.alphas)]

    @_shared
    def topics(self) -> pd.DataFrame:
        from riskreport.stats.risk import topic_risk

        p = self.params
        grid = sorted(set(p.alphas) | set(self.topic_alphas_used))  # not stored: fast, and 46 MB for a campaign
        return topic_risk(self.matrix, p.all_baselines, grid, p.measure, sig_level=p.sig_level)

    @cached_property
    def selected_topics(self) -> pd.DataFrame:
        """The exploratory topic analysis against the first baseline at the selected α."""
        from riskreport.render.pages.report import for_baseline

        chosen = for_baseline(self.topics, self.params.baseline)
        return chosen[chosen["alpha"].isin(self.topic_alphas_used)]

    @cached_property
    def pool(self):
        """ZRisk, GeoRisk and T*Risk over the pool (`riskreport.stats.pools.PoolAnalysis`)."""
        from riskreport.measures.evaluation import evaluate
        from riskreport.measures.params import choose_systems
        from riskreport.stats.pools import pool_analysis

        p = self.params
        pool = self.options["pool"]
        pooled = choose_systems(pool, p.known, "pool")[0] if pool else None
        matrix = evaluate(p.collection, p.measure, pooled, table=p.table).matrix() if pool else None
        return pool_analysis(self.matrix, p.baseline, p.alphas, p.measure, matrix, baselines=p.all_baselines)

    @cached_property
    def tukey(self) -> pd.DataFrame:
        from riskreport.stats.inference import tukey_hsd

        p = self.params
        return tukey_hsd(self.matrix, p.baseline, p.alphas, p.sig_level)  # not stored: fast with scipy's cached values

    @cached_property
    def diagnostics(self) -> pd.DataFrame:
        from riskreport.stats.inference import diagnostics_table

        p = self.params
        compute = lambda: diagnostics_table(self.matrix, p.baseline, p.alphas)  # noqa: E731
        return self._kept("diagnostics", compute, baseline=p.baseline)

    @cached_property
    def mixed(self) -> pd.DataFrame:
        from riskreport.stats.mixed import mixed_systems

        p = self.params
        compute = lambda: mixed_systems(self.matrix, p.baseline, p.alphas, p.measure, correction=self.correction)  # noqa: E731
        return self._kept("mixed_systems", compute, baseline=p.baseline, correction=self.correction)

    @cached_property
    def focus(self) -> str:
        from riskreport.render.pages.report import riskiest

        return self.focus_system or riskiest(self.main_risk)

    def compare(self, other: Analysis | str | os.PathLike) -> Changes:
        """What changed since `other` (an earlier `Analysis`, or a report folder): input files, parameters,
        systems added and removed, every (challenger, baseline, α) whose verdict changed (with URisk and TRisk
        before and after) and effectiveness means that moved by more than their standard error
        (`stats.changes.changes_table`; `.table` is what a report writes to tables/changes.csv)."""
        from riskreport.run.folders.changes import analysis_side, compare, saved_side

        before = analysis_side(other) if isinstance(other, Analysis) else saved_side(other)
        return compare(before, analysis_side(self))

    @classmethod
    def load(cls, folder: str | os.PathLike) -> Analysis:
        """A saved report (by `save` or `riskreport run`) with its parameters and tables as written."""
        record, params, given, tables, systems = read_saved(folder)
        options = {**OPTION_DEFAULTS, **{k: v for k, v in given.items() if k in OPTION_DEFAULTS}}
        analysis = cls(params, options, tables=tables, record=record, systems=systems)
        analysis.folder = Path(folder)
        return analysis
