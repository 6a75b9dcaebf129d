"""The tables of an `Analysis` by name: which tables a report has, how each is computed from the `Analysis`'s
results with the columns `riskreport run` writes, and their LaTeX. A mixin of `riskreport.run.api.analysis.Analysis`."""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd

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


def table_columns() -> dict[str, list[str]]:
    """The columns of the report's tables of a fixed shape (tables/<name>.csv), by name."""
    from riskreport.stats import inference, mixed, risk

    return {
        "verdicts": ["system", "baseline", "alpha", "method", "verdict"],
        "effectiveness": ["system", "measure", "mean", "median", "sd", "n_topics"],
        "risk": risk.RISK_COLUMNS,
        "topics": risk.TOPIC_COLUMNS,
        "georisk": risk.GEORISK_COLUMNS,
        "tstar": risk.TSTAR_COLUMNS,
        "bootstrap": inference.BOOTSTRAP_COLUMNS,
        "tests": inference.TEST_COLUMNS,
        "mixed_systems": mixed.SYSTEM_EFFECT_COLUMNS,
    }


def _shared(compute):
    """A result over every baseline of the family, computed once: a view `against` another baseline reads its
    analysis's (the risk, tests, intervals and verdicts do not depend on which baseline comes first)."""

    def get(self):
        family = self.__dict__.get("_family")
        return getattr(family, compute.__name__) if family is not None else compute(self)

    get.__name__, get.__doc__ = compute.__name__, compute.__doc__
    return cached_property(get)


class AnalysisTables:
    """The tables of an `Analysis` (which provides the results and parameters used here)."""

    if TYPE_CHECKING:  # every result and option of the Analysis this is mixed into

        def __getattr__(self, name: str) -> Any: ...

    @_shared
    def matrix_sha256(self) -> str:
        """SHA-256 of the score matrix (values, systems, topics): what the stored tables are keyed by."""
        from riskreport.run.api.store import matrix_digest

        return matrix_digest(self.matrix)

    def _kept(self, name: str, compute, **parts) -> pd.DataFrame:
        """`compute()`, or the table stored for these scores, baselines, α, measure and `parts` (options) by an
        earlier report (`riskreport.run.api.store`: a warm campaign reads its bootstrap and tests back)."""
        from riskreport.run.api.store import stored

        p = self.params
        scope = {"matrix": self.matrix_sha256, "baselines": p.all_baselines, "alphas": p.alphas, "measure": p.measure}
        return stored(name, {**scope, **parts}, compute)

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
        columns = table_columns()
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
        return (source[columns[name]] if name in columns and name != "verdicts" else source).reset_index(drop=True)

    def to_latex(self, name: str, baseline: str | None = None) -> str:
        """The LaTeX (booktabs) table `riskreport run` writes to tables/<name>.tex, against `baseline` (None: the
        first; the effectiveness and GeoRisk tables' Δ and tests are against it too)."""
        from riskreport.render.pages import report
        from riskreport.render.tabular import latex

        if baseline is not None and baseline != self.params.baseline:
            return self.against(baseline).to_latex(name)
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
        table = builders[name]()
        if self._family is not None:  # against another baseline: a label of its own beside the first's
            table["label"] = f"{table['label']}:{re.sub(r'[^A-Za-z0-9.-]+', '-', p.baseline)}"
        return latex.latex_table(**table)
