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

import json
import os
import shutil
import tempfile
import time
import warnings
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError, ParameterError
from riskreport.run.analysis_display import AnalysisDisplay

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
TEMPLATE = "risk_report"
TABLES = (
    "verdicts",
    "effectiveness",
    "effectiveness_measures",
    "risk",
    "topics",
    "georisk",
    "tstar",
    "bootstrap",
    "tests",
    "tukey",
    "mixed_systems",
)
LATEX = ("effectiveness", "effectiveness_measures", "risk", "georisk", "bootstrap")
TEXT_COLUMNS = {
    "system",
    "baseline",
    "measure",
    "topic",
    "method",
    "kind",
    "verdict",
    "test",
    "correction",
    "reference",
    "system_a",
    "system_b",
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

    `collection`: a collection name, folder or score table; or give `runs` (with `qrels`) or per-topic
    `scores` in any shape `riskreport.io.inputs.collection_from` reads (PyTerrier frames, ranx Runs, a
    folder of TREC runs, a long frame or matrix, trec_eval/ir_measures/pytrec_eval output; qrels from a
    file or an ir_datasets id). `qrels` alone replaces the qrels of `collection`'s runs. `baseline` may
    be a list: several baselines corrected as one family. `options` are the `risk_report` template's
    other parameters (`sig_level`, `seed`, `correction`, `bootstrap_samples`, `ci_levels`, ...).
    """
    from riskreport.io.inputs import collection_from, with_qrels

    if runs is not None or scores is not None:
        collection = collection_from(
            runs=runs,
            qrels=qrels,
            scores=scores,
            measure=measure,
            baseline=baseline if isinstance(baseline, str) else None,
            alphas=alphas,
        )
    elif qrels is not None:
        collection = with_qrels(collection, qrels)
    unknown = sorted(set(options) - set(OPTION_DEFAULTS))
    if unknown:
        raise ParameterError(
            f"analyse: unknown option(s) {', '.join(unknown)}; expected some of {', '.join(OPTION_DEFAULTS)}."
        )
    from riskreport.measures.params import check_report_options, resolve_parameters

    settings = {**OPTION_DEFAULTS, **options}
    params = resolve_parameters(
        collection, measure=measure, baseline=baseline, alphas=alphas, systems=systems, sig_level=settings["sig_level"]
    )
    check_report_options(
        {k: v for k, v in settings.items() if k not in ("sig_level", "title", "pool", "smooth_overlay")}, params
    )
    return Analysis(params, settings, workers=workers, systems=systems)


class Analysis(AnalysisDisplay):
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
    @cached_property
    def scores(self):
        from riskreport.measures.evaluation import CollectionWarning, evaluate

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CollectionWarning)  # shown in the collection overview instead
            return evaluate(self.params.collection, self.params.measure, self.params.systems)

    @cached_property
    def matrix(self) -> pd.DataFrame:
        return self.scores.matrix()

    @cached_property
    def risk(self) -> pd.DataFrame:
        from riskreport.stats.risk import risk_table

        p = self.params
        return risk_table(
            self.matrix, p.all_baselines, p.alphas, p.measure, sig_level=p.sig_level, correction=self.correction
        )

    @cached_property
    def tests(self) -> pd.DataFrame:
        from riskreport.stats.inference import tests_table

        p = self.params
        return tests_table(
            self.matrix,
            p.all_baselines,
            p.alphas,
            p.measure,
            correction=self.correction,
            samples=self.bootstrap_samples,
            seed=self.seed,
        )

    @cached_property
    def boot(self) -> pd.DataFrame:
        from riskreport.stats.inference import bootstrap_table

        p = self.params
        return bootstrap_table(
            self.matrix,
            p.all_baselines,
            p.alphas,
            p.measure,
            levels=self.ci_levels,
            samples=self.bootstrap_samples,
            seed=self.seed,
            correction=self.correction,
            workers=self.workers,
        )

    @cached_property
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
        from riskreport.render.report import for_baseline

        return for_baseline(self.risk, self.params.baseline)

    @cached_property
    def main_summary(self) -> pd.DataFrame:
        from riskreport.render.report import for_baseline

        return for_baseline(self.summary, self.params.baseline)

    @cached_property
    def figure_challengers(self) -> list[str]:
        from riskreport.render.report import figure_systems

        return figure_systems(self.main_risk, self.max_figure_systems)

    @cached_property
    def palette(self):
        from riskreport.render import plots

        return plots.Palette([*self.figure_challengers, self.params.baseline], self.params.baseline)

    @cached_property
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

    @cached_property
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

    @cached_property
    def topics(self) -> pd.DataFrame:
        from riskreport.stats.risk import topic_risk

        p = self.params
        return topic_risk(
            self.matrix,
            p.all_baselines,
            sorted(set(p.alphas) | set(self.topic_alphas_used)),
            p.measure,
            sig_level=p.sig_level,
        )

    @cached_property
    def selected_topics(self) -> pd.DataFrame:
        """The exploratory topic analysis against the first baseline at the selected α."""
        from riskreport.render.report import for_baseline

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
        matrix = evaluate(p.collection, p.measure, choose_systems(pool, p.known, "pool")[0]).matrix() if pool else None
        return pool_analysis(self.matrix, p.baseline, p.alphas, p.measure, matrix, baselines=p.all_baselines)

    @cached_property
    def tukey(self) -> pd.DataFrame:
        from riskreport.stats.inference import tukey_hsd

        p = self.params
        return tukey_hsd(self.matrix, p.baseline, p.alphas, p.sig_level)

    @cached_property
    def diagnostics(self) -> pd.DataFrame:
        from riskreport.stats.inference import diagnostics_table

        return diagnostics_table(self.matrix, self.params.baseline, self.params.alphas)

    @cached_property
    def mixed(self) -> pd.DataFrame:
        from riskreport.stats.mixed import mixed_systems

        p = self.params
        return mixed_systems(self.matrix, p.baseline, p.alphas, p.measure, correction=self.correction)

    @cached_property
    def focus(self) -> str:
        from riskreport.render.report import riskiest

        return self.focus_system or riskiest(self.main_risk)

    # ---- tables -------------------------------------------------------------------------------
    @property
    def table_names(self) -> list[str]:
        """The tables of this report, in the report's order (`effectiveness_measures` only with `measures`)."""
        if self.record is not None:  # loaded: the tables the folder holds
            return [n for n in TABLES if n in self._loaded]
        return [n for n in TABLES if n != "effectiveness_measures" or self.measures]

    def table(self, name: str) -> pd.DataFrame:
        """One table as `riskreport run` writes it to tables/<name>.csv (a copy)."""
        if name not in self.table_names:
            from riskreport.errors import UnknownNameError

            raise UnknownNameError("table", name, self.table_names)
        if name not in self._loaded:
            self._loaded[name] = self._compute(name)
        return self._loaded[name].copy()

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """name → table, every table of the report (each computed once)."""
        return {name: self.table(name) for name in self.table_names}

    def _compute(self, name: str) -> pd.DataFrame:
        from riskreport.stats import inference, mixed, risk

        columns = {
            "effectiveness": ["system", "measure", "mean", "median", "sd", "n_topics"],
            "risk": risk.RISK_COLUMNS,
            "topics": risk.TOPIC_COLUMNS,
            "georisk": risk.GEORISK_COLUMNS,
            "tstar": risk.TSTAR_COLUMNS,
            "bootstrap": inference.BOOTSTRAP_COLUMNS,
            "tests": inference.TEST_COLUMNS,
            "mixed_systems": mixed.SYSTEM_EFFECT_COLUMNS,
        }
        source = {
            "verdicts": lambda: self.verdicts,
            "effectiveness": lambda: self.effectiveness,
            "effectiveness_measures": lambda: self.multi,
            "risk": lambda: self.risk,
            "topics": lambda: self.topics,
            "georisk": lambda: self.pool.geo,
            "tstar": lambda: self.pool.tstar,
            "bootstrap": lambda: self.boot,
            "tests": lambda: self.tests,
            "tukey": lambda: self.tukey,
            "mixed_systems": lambda: self.mixed,
        }[name]()
        return (source[columns[name]] if name in columns else source).reset_index(drop=True)

    def to_latex(self, name: str) -> str:
        """The LaTeX (booktabs) table `riskreport run` writes to tables/<name>.tex."""
        from riskreport.render import latex, report

        p, correction = self.params, self.correction
        builders = {
            "effectiveness": lambda: report.effectiveness_latex(self.effectiveness, p, correction),
            "effectiveness_measures": lambda: report.multi_measure_latex(self.multi, p, correction),
            "risk": lambda: report.risk_latex(self.main_risk, self.main_summary, p, correction),
            "georisk": lambda: report.georisk_latex(self.pool, p),
            "bootstrap": lambda: report.bootstrap_latex(
                report.for_baseline(self.boot, p.baseline), self.main_summary, p
            ),
        }
        names = [n for n in LATEX if n != "effectiveness_measures" or self.measures]
        if name not in names:
            from riskreport.errors import UnknownNameError

            raise UnknownNameError("LaTeX table", name, names)
        return latex.latex_table(**builders[name]())

    # ---- save and load ------------------------------------------------------------------------
    def save(self, folder: str | os.PathLike, *, force: bool = False, figure_formats=None) -> Path:
        """Write the report's folder as `riskreport run --out folder` does (tables/*.csv and *.tex, figures/,
        params.json), atomically: built in a temporary folder and moved into place when complete. The same
        refusal rules: a new or empty folder, or a previous report; with `force` any folder, where only
        riskreport's own files are replaced. `figure_formats` as `run_report`'s (None: PNG alone)."""
        from riskreport.io.files import collisions, list_files, plan_destination, umask
        from riskreport.run import runner

        started = time.time()
        plan = runner.plan_report(TEMPLATE, parameters=_plain(self.parameters), figure_formats=figure_formats)
        destination = plan_destination(folder, force=force)
        work = Path(tempfile.mkdtemp(prefix=f".tmp-{destination.final.name}-", dir=destination.build_in))
        try:
            os.chmod(work, 0o777 & ~umask())
            self._write(work, plan.record["figure_formats"])
            runner._write_params(work, plan, started, status="ok", job=None, files=list_files(work) + ["params.json"])
            clash = collisions(work, destination)
            if clash:
                raise ParameterError(
                    f"{destination.final}: saving would overwrite {', '.join(clash[:5])}, which "
                    "riskreport did not write; force never replaces files it did not write."
                )
            runner._move_into_place(work, destination)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return destination.final

    def _write(self, work: Path, figure_formats: list[str]) -> None:
        from riskreport.render.figures import FigureWriter
        from riskreport.render.report import write_csv

        tables = work / "tables"
        tables.mkdir()
        for name in self.table_names:
            write_csv(self.table(name), tables / f"{name}.csv")
        for name in (n for n in LATEX if n in self.table_names):
            (tables / f"{name}.tex").write_text(self.to_latex(name), encoding="utf-8")
        import matplotlib.pyplot as plt

        writer, captions = FigureWriter(background=False, formats=figure_formats), self._captions()
        for number, name in enumerate(self.figure_names, 1):
            fig = self.figure(name)
            writer.submit(fig, work / "figures" / f"{number}-{name}", f"Figure {number}: {name}", captions[name])
            plt.close(fig)
        writer.wait()

    @classmethod
    def load(cls, folder: str | os.PathLike) -> Analysis:
        """A saved report (by `save` or `riskreport run`) with its parameters and tables as written."""
        folder = Path(folder)
        try:
            record = json.loads((folder / "params.json").read_text(encoding="utf-8"))
            given = dict(record["parameters"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise InputFormatError(
                folder / "params.json",
                f"not a saved report ({type(error).__name__}: {error})",
                expected="the params.json that riskreport run or Analysis.save writes",
            ) from None
        from riskreport.measures.params import resolve_parameters

        baseline = given.pop("baselines", None) or given.pop("baseline", None)
        given.pop("baseline", None)
        given.pop("context", None)
        systems = given.pop("systems", None)
        params = resolve_parameters(
            given.pop("collection"),
            measure=given.pop("measure"),
            baseline=baseline,
            alphas=given.pop("alphas"),
            systems=systems,
            sig_level=given.get("sig_level", 0.05),
        )
        options = {**OPTION_DEFAULTS, **{k: v for k, v in given.items() if k in OPTION_DEFAULTS}}
        tables = {
            path.stem: read_table(path) for path in sorted((folder / "tables").glob("*.csv")) if path.stem in TABLES
        }
        return cls(params, options, tables=tables, record=record, systems=systems)


def read_table(path: Path) -> pd.DataFrame:
    """A table as `write_csv` wrote it: text columns as text (a system named `NA` stays `NA`), numbers as numbers."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in table.columns:
        if column in TEXT_COLUMNS:
            continue
        values = table[column]
        if set(values) <= {"True", "False"} and len(values):
            table[column] = values == "True"
        else:
            table[column] = pd.to_numeric(values.replace("", np.nan))
    return table


def _plain(parameters: dict) -> dict:
    """Parameters as the runner checks them (lists, not tuples; no None for a list-typed value it can default)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in parameters.items() if v is not None}
