"""Presentation helpers for templates: header, tables on the page and as CSV, figure captions.

Templates call these so that notebooks hold prose and layout, not formulas. Every string
that comes from input files (system, topic and collection names) is HTML-escaped. A template
holds one `Page`: its figure numbers, where its tables go, and what the runner already knows.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from riskreport.errors import ParameterError
from riskreport.io.provenance import file_hashes, inputs_digest, package_versions, remember_digests
from riskreport.measures.params import ReportParameters
from riskreport.render.figures import FigureWriter
from riskreport.render.html import (
    HTML,
    _alpha_label,
    _short_p,
    _signed,
    format_p,
    note,
    omitted,
    significance_marks,
    styled,
)
from riskreport.render.latex_tables import (
    _legend,
    _mark_frame,
    bootstrap_latex,
    effectiveness_latex,
    georisk_latex,
    multi_measure_latex,
    multi_measure_styled,
    risk_latex,
    tex_label,
)
from riskreport.render.nondeterministic import (
    VERDICT_STYLES,
    instance_tests_summary,
    mixed_summary,
    nondeterministic_methods,
    variance_components,
)
from riskreport.render.tables import (
    FAST_HTML_CELLS,
    PAGE_ROWS,
    VERDICT_ANCHOR,
    VERDICT_COLOURS,
    _by_verdict,
    _key,
    _methods_count,
    _plain_table_html,
    back_link,
    baselines_note,
    ci_wide,
    for_baseline,
    interactive,
    interval_verdicts,
    risk_counts,
    risk_wide,
    side_by_side,
    styler_html,
    tests_wide,
    verdict_matrix,
)
from riskreport.stats.rankings import riskiest_first

CONTEXT_KEYS = ("tables_dir", "inputs_sha256", "workers", "chosen", "file_digests", "figure_formats")

# The report's parts, importable from here as before (templates use report.<name>)
__all__ = [
    "FAST_HTML_CELLS",
    "HTML",
    "PAGE_ROWS",
    "VERDICT_ANCHOR",
    "VERDICT_COLOURS",
    "VERDICT_STYLES",
    "_alpha_label",
    "_by_verdict",
    "_key",
    "_legend",
    "_mark_frame",
    "_methods_count",
    "_plain_table_html",
    "_short_p",
    "_signed",
    "back_link",
    "baselines_note",
    "bootstrap_latex",
    "ci_wide",
    "effectiveness_latex",
    "for_baseline",
    "format_p",
    "georisk_latex",
    "instance_tests_summary",
    "interactive",
    "interval_verdicts",
    "mixed_summary",
    "multi_measure_latex",
    "multi_measure_styled",
    "nondeterministic_methods",
    "note",
    "omitted",
    "risk_counts",
    "risk_latex",
    "risk_wide",
    "side_by_side",
    "significance_marks",
    "styled",
    "styler_html",
    "tests_wide",
    "tex_label",
    "variance_components",
    "verdict_matrix",
]


GUIDE = {
    "standard": "Δ is the per-topic difference challenger − baseline. Every risk measure is in the standard "
    "convention: higher is better, and a negative URisk, TRisk or ZRisk means the challenger loses "
    "to the baseline once each loss weighs 1 + α.",
    "minus": "Δ is the per-topic difference challenger − baseline. The risk measures are shown in the minus "
    "convention of Benham's thesis: positive values are risk (the challenger loses once each loss weighs "
    "r = 1 + α), lower is better. The CSV tables keep the standard convention.",
}


class Page:
    """One report page as a template builds it: figure numbers, the tables folder, the input digest, threads.

    `context` is the template's `context` parameter. `riskreport run` passes the report's own
    `tables_dir`, the `inputs_sha256` of the files it hashed while planning (and `file_digests`, each
    file's digest with its signature, so the kernel does not hash them again), the `workers`
    (threads) a bootstrap may use, which of `baseline` and `measure` it `chosen` by default, and the
    `figure_formats` to write (`figures.check_formats`: PNG alone unless SVG or PDF are asked for);
    run by hand (None), tables go to ./tables, the inputs are
    hashed here, one thread is used and figures are PNG files. Figures are numbered from 1 on each page.
    """

    def __init__(self, context: dict | None = None):
        context = dict(context or {})
        unknown = sorted(set(context) - set(CONTEXT_KEYS))
        if unknown:
            raise ParameterError(f"context has unknown keys {unknown}; expected some of {', '.join(CONTEXT_KEYS)}.")
        self.tables_dir = Path(context.get("tables_dir") or "tables")
        self.inputs_sha256 = context.get("inputs_sha256")
        self.workers = int(context.get("workers") or 1)
        self.chosen = set(context.get("chosen") or [])
        remember_digests(context.get("file_digests") or [])  # input files the runner hashed: not again
        self.figures_dir = self.tables_dir.parent / "figures"
        self.figures = 0
        self._writer = FigureWriter(formats=context.get("figure_formats"))

    def header(
        self,
        params: ReportParameters,
        title: str | None = None,
        convention: str = "standard",
        guide: str | None = None,
        significance: str | None = None,
        notes: list[str] | None = None,
        points: list[str] | None = None,
        credible_level: float | None = None,
    ) -> HTML:
        """Title block: collection and parameters, a "how to read this report" box, the table of contents slot.

        `credible_level`: a page of credible intervals (Bayesian) shows their level instead of a significance level.

        `significance` replaces the box's sentence on ▲/▼ (e.g. `significance.rule_text(...)`);
        `notes` are further lines of the box (e.g. how the baseline was chosen); `points` replaces the
        box's standard lines after `guide` (marks, colours, tables) for a page that uses other marks.
        """
        digest = self.inputs_sha256 or inputs_digest(file_hashes(params.collection.files()))
        return header(params, digest, title, convention, guide, significance, notes, points, credible_level)

    def choices(self, params: ReportParameters, baseline: str | None, measure: str | None) -> list[str]:
        """`choice_notes` for the template's `baseline` and `measure` parameters: a value counts as given
        when the template received it and `riskreport run` did not choose it (`context["chosen"]`)."""
        return choice_notes(
            params,
            baseline_given=baseline is not None and "baseline" not in self.chosen,
            measure_given=measure is not None and "measure" not in self.chosen,
        )

    def caption(self, text: str) -> HTML:
        """The next numbered figure caption of this page."""
        self.figures += 1
        return HTML(f"<p class='rr-caption'><strong>Figure {self.figures}.</strong> {html.escape(text)}</p>")

    def figure(self, figure, text: str, slug: str, collapsed: bool = False) -> HTML:
        """The figure for the page, numbered and captioned: a PNG at 100 dpi embedded, inside a collapsed `<details>`
        when `collapsed`; and for papers `figures/<n>-<slug>.png` at 200 dpi (with `.svg` and `.pdf`, written in the
        background until `finish()`, when the context's `figure_formats` asks for them; the caption in each file's
        metadata). The figure is closed.
        `figure`: a Figure, an Axes, an array of Axes or a seaborn grid.
        """
        import base64

        import matplotlib.pyplot as plt

        fig = _figure_of(figure)
        caption = self.caption(text)
        png = self._writer.submit(
            fig, self.figures_dir / f"{self.figures}-{slug}", f"Figure {self.figures}: {slug}", text
        )
        plt.close(fig)
        data = base64.b64encode(png).decode("ascii")
        body = (
            f"<img src='data:image/png;base64,{data}' style='max-width:100%' "
            f"alt='Figure {self.figures}'/>" + caption.markup
        )  # the caption follows; no names in attributes
        if collapsed:
            body = (
                f"<details class='rr-detail'><summary>Figure {self.figures}: {html.escape(text[:90])}"
                f"{'…' if len(text) > 90 else ''}</summary>{body}</details>"
            )
        return HTML(body)

    def show(self, analysis, name: str, collapsed: bool = False) -> HTML:
        """`figure` for one of an analysis's figures (`riskreport.analyse(...).figure(name)`) with its caption."""
        return self.figure(analysis.figure(name), analysis.caption(name), name, collapsed=collapsed)

    def finish(self) -> list[Path]:
        """Wait until every figure's files are in `figures/` (call once, at the end of the notebook)."""
        return self._writer.wait()

    def save_latex(self, latex: str, name: str) -> Path:
        """Write a LaTeX table (`latex.latex_table(...)`) as `<tables_dir>/<name>.tex`."""
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        path = self.tables_dir / f"{name}.tex"
        path.write_text(latex, encoding="utf-8")
        return path

    def save_table(self, table: pd.DataFrame, name: str) -> Path:
        """Write a tidy table as `<tables_dir>/<name>.csv` (numbers at full precision)."""
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        path = self.tables_dir / f"{name}.csv"
        write_csv(table, path)
        return path


CSV_FLOAT = "%.10g"


def write_csv(table: pd.DataFrame, path: Path) -> Path:
    """`table.to_csv(path, index=False, float_format=CSV_FLOAT)`, byte for byte, several times faster.

    pandas formats every float in Python one call at a time; here each column's distinct values are
    formatted once (α, Δ and system names repeat across a long table) and rows are joined as text.
    Columns of other kinds than float, int, bool and text fall back to pandas.
    """
    columns = [_csv_column(table[c]) for c in table.columns] if table.shape[1] > 1 else [None]
    if any(c is None for c in columns):
        table.to_csv(path, index=False, float_format=CSV_FLOAT)
        return path
    header = ",".join(_csv_quoted([str(c) for c in table.columns]))
    rows = map(",".join, zip(*columns))
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(header + "\n")
        for line in rows:
            handle.write(line + "\n")
    return path


def _csv_column(column: pd.Series) -> list[str] | None:
    """The CSV text of each value of a column (as pandas writes it), or None for a kind pandas must write."""
    import numpy as np

    kind = column.dtype.kind
    if kind not in "fiubO" and not pd.api.types.is_string_dtype(column.dtype):
        return None
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    values = list(uniques)
    if kind == "f":
        text = [CSV_FLOAT % v for v in values]
    elif kind in "iub":
        text = [str(v) for v in values]
    elif all(isinstance(v, str) for v in values):
        text = _csv_quoted(values)
    else:  # text mixed with numbers or other objects
        return None
    return np.asarray(text + [""], dtype=object)[codes].tolist()  # code −1 (missing): empty


def _csv_quoted(values: list[str]) -> list[str]:
    """Quote as the csv module's QUOTE_MINIMAL does (pandas' default): fields holding , " \r or \n."""
    return ['"' + v.replace('"', '""') + '"' if any(ch in v for ch in ',"\r\n') else v for v in values]


def _figure_of(obj):
    """The matplotlib Figure behind a Figure, Axes, array of Axes or seaborn grid."""
    import numpy as np

    if hasattr(obj, "savefig") and not hasattr(obj, "axes_dict"):
        return obj
    if hasattr(obj, "figure"):
        return obj.figure
    return np.asarray(obj).flat[0].figure


def header(
    params: ReportParameters,
    inputs_sha256: str,
    title: str | None = None,
    convention: str = "standard",
    guide: str | None = None,
    significance: str | None = None,
    notes: list[str] | None = None,
    points: list[str] | None = None,
    credible_level: float | None = None,
) -> HTML:
    """Title block of a report on `params` whose input files have the digest `inputs_sha256` (`Page.header`)."""
    col = params.collection
    versions = package_versions()
    title = title or f"Risk report: {col.title}"
    shown = ", ".join(params.systems[:20]) + (
        f", … ({len(params.systems) - 20} more)" if len(params.systems) > 20 else ""
    )
    rows = [
        ("Collection", f"{col.title} ({col.path})"),
        ("Measure", params.measure),
        ("Baselines" if len(params.all_baselines) > 1 else "Baseline", ", ".join(params.all_baselines)),
        ("α grid", ", ".join(f"{a:g}" for a in params.alphas)),
        ("Systems", f"{len(params.systems)}: {shown}"),
        ("Significance level", f"{params.sig_level:g}")
        if credible_level is None
        else ("Credible-interval level", f"{credible_level:g} (equal-tailed posterior intervals)"),
        ("Inputs (SHA-256 of all files)", inputs_sha256[:16] + "…"),
        (
            "Versions",
            ", ".join(f"{k} {v}" for k, v in versions.items() if k in ("riskreport", "ir_measures", "python")),
        ),
        ("Generated (UTC)", datetime.now(timezone.utc).isoformat(timespec="seconds")),
    ]
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
        f"{html.escape(str(v))}</td></tr>"
        for k, v in rows
    )
    description = f"<p>{html.escape(col.description)}</p>" if col.description else ""
    standard = [
        (
            significance
            or "▲ and ▼ mark a challenger significantly better or worse than the baseline after "
            "the multiple-comparison correction."
        )
        + " Green cells are rewards, orange cells risks, unmarked "
        "cells inconclusive; the best value of a column is in bold.",
        *(notes or []),
        "Each section opens with a “How to read this” line; figures are numbered, with a caption "
        "beneath, and their axes say which direction is a loss.",
        "Long tables are paged: click a column header to sort, type in the search box to filter; detail "
        "tables are collapsed (click their title to open them). "
        "Tables on this page are rounded and may be summarised; every number is in the report's "
        "tables/*.csv at full precision. Provenance (input hashes, versions, parameters, run time) "
        "is at the end of the page.",
    ]
    points = [guide or GUIDE.get(convention, GUIDE["standard"])] + (
        standard if points is None else [*(notes or []), *points]
    )
    guide_html = (
        "<div class='rr-howto'><h3>How to read this report</h3><ul>"
        + "".join(f"<li>{html.escape(point)}</li>" for point in points)
        + "</ul></div>"
    )
    return HTML(
        f'<h1>{html.escape(title)}</h1>{description}<table>{body}</table>{guide_html}<div class="rr-toc-slot"></div>'
    )


def figure_systems(risk: pd.DataFrame, limit: int) -> list[str]:
    """The challengers drawn in figures: all of them, or the `limit` with the lowest URisk at the largest α."""
    return riskiest_first(risk)[:limit]


def figure_note(shown: list[str], total: int) -> HTML:
    """Says when figures show only some systems."""
    if len(shown) >= total:
        return HTML("")
    return note(
        f"Figures show the {len(shown)} riskiest of the {total} challengers (lowest URisk at the largest α); "
        "tables and CSVs cover all of them."
    )


def collection_overview(params: ReportParameters, scores, judged: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables: the collection in numbers, and per system its source, missing topics and judged fraction."""
    from riskreport.io.trec import read_qrels

    col = params.collection
    topics = "topics (with ≥ 1 relevant document)" if col.qrels is not None else "topics (scored in the table)"
    rows = [("systems in the report", len(params.systems)), (topics, len(scores.topics))]
    if col.qrels is not None:
        qrels = read_qrels(col.qrels)
        rows += [
            ("judgments", len(qrels)),
            ("relevant judgments (relevance > 0)", int((qrels["relevance"] > 0).sum())),
            ("judged topics without relevant documents (excluded)", qrels["query_id"].nunique() - len(scores.topics)),
        ]
    rows += [("system–topic pairs missing from runs (scored 0)", len(scores.missing))]
    if col.qrels is not None:
        rows += [("run topics absent from the qrels (dropped)", len(scores.extra))]
    overview = pd.DataFrame(rows, columns=["item", "value"])
    missing = scores.missing.groupby("system")["topic"].agg(lambda t: ", ".join(t))
    per_system = pd.DataFrame({"system": params.systems})
    per_system["role"] = ["baseline" if s == params.baseline else "challenger" for s in params.systems]
    per_system["missing topics (scored 0)"] = per_system["system"].map(missing).fillna("")
    if not judged.empty:
        per_system[f"judged fraction ({judged['measure'].iloc[0]})"] = per_system["system"].map(
            judged.set_index("system")["judged"]
        )
    return overview, per_system


def significant_topics(topics: pd.DataFrame) -> pd.DataFrame:
    """Per system and α, the topics flagged as significant losses and gains (from `risk.topic_risk`)."""
    flagged = topics[topics["flag"] != ""]
    if flagged.empty:
        return pd.DataFrame(columns=["system", "alpha", "significant losses (topics)", "significant gains (topics)"])
    grouped = flagged.groupby(["system", "alpha", "flag"], sort=False)["topic"].agg(", ".join).unstack("flag")
    grouped = grouped.reindex(columns=["loss", "gain"]).fillna("")
    return grouped.rename(
        columns={"loss": "significant losses (topics)", "gain": "significant gains (topics)"}
    ).reset_index()


def riskiest(risk: pd.DataFrame) -> str:
    """The challenger with the lowest URisk at the largest α (the default focus system)."""
    return str(riskiest_first(risk)[0])


def methods_paragraph(
    correction: str,
    levels,
    samples: int,
    seed: int,
    sig_level: float,
    n_challengers: int,
    n_topics: int,
    diagnostics: pd.DataFrame,
    summary: pd.DataFrame | None = None,
    baselines: int = 1,
) -> HTML:
    """The "methods" paragraph: the report's significance rule, the correction, and what the data show.

    `diagnostics` is `inference.diagnostics_table(...)` (how many challenger–α combinations are
    skewed); `summary` is `significance.report_verdicts(...)[1]` (where the methods disagree with the rule).
    """
    skewed, total = int((diagnostics["skewness"].abs() > 1).sum()), len(diagnostics)
    family = (
        f"the {n_challengers} challengers"
        if baselines < 2
        else f"the {n_challengers} comparisons of its {baselines} baselines with every other system (one family)"
    )
    names = {
        "holm": "Holm's step-down method",
        "bonferroni": "the Bonferroni correction",
        "bh": "the Benjamini–Hochberg false discovery rate procedure",
        "none": "no correction",
    }
    widened = (
        f" Under Bonferroni each interval's level is widened to 1 − (1 − level)/{n_challengers}."
        if correction == "bonferroni"
        else " The bootstrap intervals are not widened for the number of "
        "challengers, so they can call significant what the adjusted rule does not."
    )
    shape = (
        f"After risk adjustment (losses weighted by 1 + α) the differences are asymmetric in {skewed} of {total} "
        "challenger–α combinations (|skewness| > 1), where symmetric procedures (the t interval and test, and "
        "the Wilcoxon test, which assumes symmetric differences) and BCa can part ways."
        if skewed
        else f"None of the {total} challenger–α combinations is strongly skewed (|skewness| > 1), so the "
        "t-based rule and the bootstrap intervals should mostly agree."
    )
    agreement = ""
    if summary is not None and len(summary):
        cells = len(summary)
        split = summary["disagree"] != ""
        bca = summary["disagree"].str.contains(r"\bbca: ", regex=True)
        agreement = (
            f" In this report every method agrees with the rule in {cells - int(split.sum())} of {cells} "
            f"challenger–α cells; BCa disagrees in {int(bca.sum())}"
            + (f" ({', '.join(sorted(set(summary.loc[bca, 'system'])))[:300]})" if bca.any() else "")
            + ". Each disagreement is named next to its verdict in the verdict matrix; neither side is "
            "declared right: read them as a verdict that depends on the method."
        )
    text = (
        f"The comparisons are paired: every challenger and the baseline are scored on the same {n_topics} topics, "
        f"so each analysis works on per-topic differences. One rule decides every mark, colour and verdict: "
        f"the two-sided paired t-test of the risk-adjusted differences (its statistic is TRisk), with p-values "
        f"adjusted across {family} at each α with {names[correction]}, at significance "
        f"level {sig_level:g}. {shape} The sign, Wilcoxon and randomisation tests (adjusted the same way) and five "
        f"bootstrap intervals of URisk ({samples:,} resamples, seed {seed}, levels "
        f"{', '.join(f'{lv:g}' for lv in levels)}; an interval's own verdict is risk when it lies entirely below "
        f"0 and reward when entirely above) are reported beside the rule.{widened}{agreement}"
    )
    return HTML(f"<p>{html.escape(text)}</p>")


def choice_notes(params: ReportParameters, baseline_given: bool, measure_given: bool) -> list[str]:
    """Lines for the how-to box saying which baseline and measure the report chose, and why, when none was given."""
    from riskreport.measures.evaluation import SCORE, canonical_measure, score_table_measures

    col = params.collection
    notes = []
    if not baseline_given:
        why = (
            "the collection's default (collection.toml)"
            if col.default_baseline == params.baseline
            else "the first system of the collection in alphabetical order, for want of a default: pass --baseline "
            "(or set `baseline` in collection.toml) to compare against the system you mean"
        )
        notes.append(f"No baseline was given: {params.baseline} is {why}.")
    if not measure_given:
        if col.default_measure and canonical_measure(col.default_measure) == params.measure:
            why = "the collection's default (collection.toml)"
        elif params.measure == SCORE:
            why = (
                f"the label of the values of {col.scores_file().name}, which has no `measure` column: name the measure "
                "with --measure (e.g. --measure 'RBP(p=0.8)') or a `measure` column, and the report will use it"
            )
        elif params.measure in score_table_measures(col):
            why = f"the one measure of {col.scores_file().name}"
        else:
            why = "riskreport's default; choose another with --measure"
        notes.append(f"No measure was given: {params.measure} is {why}.")
    return notes
