"""How an `Analysis` shows itself: its figures by name with their captions, a compact summary in Jupyter
(`_repr_html_`) and a readable `repr` in a terminal. A mixin of `riskreport.run.api.analysis.Analysis`."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from riskreport.render.plotting.drawing import FigureJob


class AnalysisDisplay:
    """Figures, captions and rich display of an `Analysis` (which provides the tables and parameters used here)."""

    if TYPE_CHECKING:  # every table and option of the Analysis this is mixed into

        def __getattr__(self, name: str) -> Any: ...

    # ---- figures ------------------------------------------------------------------------------
    @property
    def figure_names(self) -> list[str]:
        """The figures of this report, in the report's order."""
        return [slug for slug, _, wanted in self._figures() if wanted]

    def figure(self, name: str, baseline: str | None = None):
        """One of the report's figures as a matplotlib Figure (`figure_names`), against `baseline` (None: the
        first). Closed in pyplot, so Jupyter shows the returned figure once, not a second time at the cell's end."""
        import matplotlib.pyplot as plt

        fig = self.figure_job(name, baseline)()
        plt.close(fig)
        return fig

    def figure_job(self, name: str, baseline: str | None = None):
        """The figure `name` as data (`render.drawing.FigureJob`: its plot function and the tables it draws), to
        draw here (call it) or in another process; `figure` draws it."""
        view = self.against(baseline)
        for slug, job, wanted in view._figures():
            if slug == name and wanted:
                return job()
        from riskreport.errors import UnknownNameError

        raise UnknownNameError("figure", name, self.figure_names)

    def caption(self, name: str, baseline: str | None = None) -> str:
        """The caption of a figure as the report prints it (against `baseline`; None: the first)."""
        return self.against(baseline)._captions()[name]

    def _figures(self) -> list[tuple[str, Callable[[], FigureJob], bool]]:
        """(name, the figure's job, shown in this report) of every figure, in the report's order."""
        from riskreport.render.plotting import plots
        from riskreport.render.plotting.drawing import FigureJob as Job
        from riskreport.stats.risk import deltas, smooth_value, to_convention

        p, conv = self.params, self.convention

        def topic_deltas():
            return deltas(self.matrix, p.baseline).loc[self.figure_challengers].stack().rename("delta").reset_index()

        def intervals():
            from riskreport.render.pages.report import for_baseline

            shown = self.figure_challengers
            ci = for_baseline(self.boot, p.baseline)
            ci = ci[(ci["method"] == "bca") & (ci["level"] == min(self.ci_levels)) & ci["system"].isin(shown)]
            ci = ci.drop(columns="verdict").merge(
                self.main_summary[["system", "alpha", "verdict"]], on=["system", "alpha"]
            )
            return Job(plots.ci_by_alpha, (to_convention(ci, conv), p.baseline, p.measure, conv))

        def geo_fine():
            from riskreport.stats.pools import figure_pool

            fine = figure_pool(
                self.pool, self.figure_challengers, p.baseline, np.linspace(0, max(p.alphas), 21), p.measure
            )
            return Job(plots.georisk_by_alpha, (to_convention(fine, conv), p.measure, conv), {"palette": self.palette})

        def only_shown(table):
            return table[table["system"].isin(self.figure_challengers)]

        def trisk():
            shown = to_convention(only_shown(self.fine), conv)
            return Job(
                plots.trisk_by_alpha, (shown, self.critical, p.baseline, p.measure, conv), {"palette": self.palette}
            )

        def urisk():
            shown = to_convention(only_shown(self.main_risk), conv)
            return Job(plots.urisk_by_alpha, (shown, p.baseline, p.measure, conv), {"palette": self.palette})

        def topic_tj():
            shown = to_convention(only_shown(self.selected_topics), conv)
            return Job(plots.topic_tj, (shown, self.critical, p.baseline, p.measure, conv))

        return [
            ("topic-deltas", lambda: Job(plots.topic_deltas, (topic_deltas(), p.baseline, p.measure)), True),
            (
                "delta-heatmap",
                lambda: Job(plots.delta_heatmap, (topic_deltas(), p.baseline, p.measure, self.figure_challengers)),
                True,
            ),
            ("delta-boxplots", lambda: Job(plots.delta_boxplots, (topic_deltas(), p.baseline, p.measure)), True),
            ("trisk-alpha", trisk, True),
            ("urisk-alpha", urisk, True),
            (
                "value-functions",
                lambda: Job(plots.value_functions, (p.alphas, smooth_value)),
                bool(self.smooth_overlay),
            ),
            ("topic-tj", topic_tj, True),
            ("georisk-alpha", geo_fine, True),
            ("ci-alpha", intervals, True),
            ("bootstrap-focus", self._focus_job, True),
            (
                "diagnostics",
                lambda: Job(plots.diagnostics_by_alpha, (only_shown(self.diagnostics), self.palette)),
                True,
            ),
            (
                "mixed-forest",
                lambda: Job(plots.forest, (to_convention(only_shown(self.mixed), conv), p.baseline, p.measure)),
                True,
            ),
        ]

    def _focus_job(self):
        from riskreport.render.pages.report import for_baseline
        from riskreport.render.plotting import plots
        from riskreport.render.plotting.drawing import FigureJob
        from riskreport.stats.inference import bootstrap_distribution

        p, focus, top, level = self.params, self.focus, max(self.params.alphas), min(self.ci_levels)
        means = bootstrap_distribution(
            self.matrix, p.baseline, focus, top, samples=self.bootstrap_samples, seed=self.seed
        )
        chosen = for_baseline(self.boot, p.baseline)
        chosen = chosen[(chosen["system"] == focus) & (chosen["alpha"] == top) & (chosen["level"] == level)]
        risk = self.main_risk
        theta = risk.loc[(risk["system"] == focus) & (risk["alpha"] == top), "urisk"].iloc[0]
        title = f"{focus}: bootstrap URisk at α = {top:g} with the {level:g} intervals"
        return FigureJob(plots.bootstrap_focus, (means, chosen, theta, title, len(self.scores.topics)))

    def _captions(self) -> dict[str, str]:
        from riskreport.stats.risk import MIN_TOPIC_DELTA

        p, top = self.params, max(self.params.alphas)
        return {
            "topic-deltas": f"Per-topic differences Δ = challenger − {p.baseline} of {p.measure}, each panel sorted "
            "from the largest win (green, above 0) to the largest loss (orange, below 0).",
            "delta-heatmap": f"Δ {p.measure} per challenger (rows, riskiest first) and topic (columns, largest summed "
            "loss first): orange cells are the topics that carry the risk, green cells the wins.",
            "delta-boxplots": "Box plots of the same differences: the box spans the middle half of the topics, whiskers "
            "reach 1.5 × IQR, dots beyond them are outlying topics; left of 0 is a loss.",
            "trisk-alpha": f"TRisk against α (41-point grid up to {top:g}); between the dashed ±t lines the difference "
            "from the baseline is not significant before adjustment (Dinçer et al. 2014, Fig. 1); the "
            "verdicts use the adjusted p-values.",
            "urisk-alpha": "URisk against α: the steeper a line falls, the larger the challenger's losses.",
            "value-functions": "The linear value functions l_α of the grid and the smooth s(Δ) of thesis Eq. 3.6.",
            "topic-tj": "TJ_i per topic at the selected α, riskiest challenger first; a bar is coloured where the topic "
            "stands out: beyond the dashed ±t lines and a loss (orange) or gain (green) of |Δ| ≥ "
            f"{MIN_TOPIC_DELTA:g} (exploratory, unadjusted).",
            "georisk-alpha": "GeoRisk against α over the baseline pool (Dinçer et al. 2016, Fig. 3); the baseline is "
            "the thick black line: a line that falls faster than the others belongs to a system whose "
            "losses are larger than the pool leads one to expect.",
            "ci-alpha": f"BCa {min(self.ci_levels):g} intervals of URisk per α, coloured by the report's verdict "
            "(orange risk, green reward, grey inconclusive); an interval off 0 in grey is a method "
            "disagreement.",
            "bootstrap-focus": f"Left: the bootstrap distribution of {self.focus}'s URisk at α = {top:g} with the five "
            "intervals beneath it (Benham's thesis, Fig. 3.9). Right: standardised bootstrap means "
            "against Student t quantiles; points off the line show skew.",
            "diagnostics": "Skewness (below 0: a long loss tail), excess kurtosis and the Shapiro–Wilk p-value of the "
            "risk-adjusted differences against α.",
            "mixed-forest": f"System effects of the mixed model against {p.baseline} with their CIs, one colour per α; "
            "left of 0 is worse than the baseline.",
        }

    # ---- display ------------------------------------------------------------------------------
    def _headline(self) -> list[str]:
        """One line per baseline: at the largest α, which challengers are a significant risk or reward."""
        summary = self._shown_summary()
        top = summary[summary["alpha"] == summary["alpha"].max()]
        lines = []
        for baseline, part in top.groupby("baseline", sort=False):
            risky = part.loc[part["verdict"] == "risk", "system"].tolist()
            better = part.loc[part["verdict"] == "reward", "system"].tolist()
            lines.append(
                f"against {baseline} at α = {part['alpha'].iloc[0]:g}: {len(risky)} risk "
                f"({_names(risky)}), {len(better)} reward ({_names(better)}), "
                f"{len(part) - len(risky) - len(better)} inconclusive"
            )
        return lines

    def _shown_summary(self) -> pd.DataFrame:
        """The rule's verdicts, riskiest first: computed, or (a loaded report) read from its verdicts and risk tables."""
        if self.record is None or not {"verdicts", "risk"} <= set(self._loaded):
            return self.summary
        from riskreport.stats.significance import risk_order, verdict_summary, with_urisk

        summary = with_urisk(verdict_summary(self._loaded["verdicts"]), self._loaded["risk"])
        order = {s: i for i, s in enumerate(risk_order(summary))}
        first = {b: i for i, b in enumerate(dict.fromkeys(self._loaded["risk"]["baseline"]))}
        return summary.sort_values(
            ["baseline", "alpha", "system"],
            key=lambda c: c.map(order) if c.name == "system" else c.map(first) if c.name == "baseline" else c,
        ).reset_index(drop=True)

    def __repr__(self) -> str:
        p = self.params
        lines = [
            f"<Analysis: {p.collection.title} — {p.measure}, {len(p.systems)} systems, "
            f"baseline{'s' if len(p.all_baselines) > 1 else ''} {', '.join(p.all_baselines)}, "
            f"α {', '.join(f'{a:g}' for a in p.alphas)}, {self.correction}-adjusted at {p.sig_level:g}>"
        ]
        lines += [f"  {line}" for line in self._headline()]
        lines.append(f"  tables: {', '.join(self.table_names)}")
        lines.append("  .table(name), .figure(name), .to_latex(name), .save(folder)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from riskreport.render.pages.report import verdict_matrix

        p = self.params
        summary = self._shown_summary()
        head = (
            f"<h3>Risk report: {html.escape(self.title or p.collection.title)}</h3><p>{html.escape(p.measure)}, "
            f"{len(p.systems)} systems, baseline{'s' if len(p.all_baselines) > 1 else ''} "
            f"<b>{html.escape(', '.join(p.all_baselines))}</b>, α {html.escape(', '.join(f'{a:g}' for a in p.alphas))}"
            f"; verdicts: two-sided paired t-test of the risk-adjusted differences, p "
            f"{html.escape(self.correction)}-adjusted, below {p.sig_level:g}.</p>"
        )
        headline = "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in self._headline()) + "</ul>"
        rest = (
            "<p><b>Tables</b> (<code>.table(name)</code>, <code>.to_latex(name)</code>): "
            + ", ".join(f"<code>{n}</code>" for n in self.table_names)
            + ". <b>Figures</b> (<code>.figure(name)</code>): "
            + ", ".join(f"<code>{n}</code>" for n in self.figure_names)
            + ". <code>.save(folder)</code> writes the report's folder.</p>"
        )
        matrix = verdict_matrix(summary, self.convention, caption="Verdict per challenger and α").markup
        return f"<div class='rr-analysis'>{head}{headline}{matrix}{rest}</div>"


def _names(systems: list[str], limit: int = 6) -> str:
    return ", ".join(systems[:limit]) + (f", … {len(systems) - limit} more" if len(systems) > limit else "") or "none"
