"""Presentation helpers for templates: header, tables on the page and as CSV, figure captions.

Templates call these so that notebooks hold prose and layout, not formulas. Every string
that comes from input files (system, topic and collection names) is HTML-escaped. A template
holds one `Page`: its figure numbers, where its tables go, and what the runner already knows.
"""
from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from riskreport.errors import ParameterError
from riskreport.io.provenance import file_hashes, inputs_digest, package_versions, remember_digests
from riskreport.measures.params import ReportParameters
from riskreport.render.figures import FigureWriter
from riskreport.stats.rankings import riskiest_first

CONTEXT_KEYS = ("tables_dir", "inputs_sha256", "workers", "chosen", "file_digests")


class HTML:
    """Minimal rich-display object (avoids importing IPython at module import)."""

    def __init__(self, markup: str):
        self.markup = markup

    def _repr_html_(self) -> str:
        return self.markup


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
    (threads) a bootstrap may use, and which of `baseline` and `measure` it `chosen` by default;
    run by hand (None), tables go to ./tables, the inputs are
    hashed here and one thread is used. Figures are numbered from 1 on each page.
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
        remember_digests(context.get("file_digests") or [])      # input files the runner hashed: not again
        self.figures_dir = self.tables_dir.parent / "figures"
        self.figures = 0
        self._writer = FigureWriter()

    def header(self, params: ReportParameters, title: str | None = None, convention: str = "standard",
               guide: str | None = None, significance: str | None = None, notes: list[str] | None = None,
               points: list[str] | None = None, credible_level: float | None = None) -> HTML:
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
        return choice_notes(params, baseline_given=baseline is not None and "baseline" not in self.chosen,
                            measure_given=measure is not None and "measure" not in self.chosen)

    def caption(self, text: str) -> HTML:
        """The next numbered figure caption of this page."""
        self.figures += 1
        return HTML(f"<p class='rr-caption'><strong>Figure {self.figures}.</strong> {html.escape(text)}</p>")

    def figure(self, figure, text: str, slug: str, collapsed: bool = False) -> HTML:
        """The figure for the page, numbered and captioned: a PNG at 100 dpi embedded, inside a collapsed `<details>`
        when `collapsed`; and for papers `figures/<n>-<slug>.{svg,pdf,png}` (PNG at 200 dpi, the caption in each
        file's metadata), written in the background until `finish()`. The figure is closed.
        `figure`: a Figure, an Axes, an array of Axes or a seaborn grid.
        """
        import base64

        import matplotlib.pyplot as plt
        fig = _figure_of(figure)
        caption = self.caption(text)
        png = self._writer.submit(fig, self.figures_dir / f"{self.figures}-{slug}", f"Figure {self.figures}: {slug}",
                                  text)
        plt.close(fig)
        data = base64.b64encode(png).decode("ascii")
        body = (f"<img src='data:image/png;base64,{data}' style='max-width:100%' "
                f"alt='Figure {self.figures}'/>" + caption.markup)   # the caption follows; no names in attributes
        if collapsed:
            body = (f"<details class='rr-detail'><summary>Figure {self.figures}: {html.escape(text[:90])}"
                    f"{'…' if len(text) > 90 else ''}</summary>{body}</details>")
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
    else:                                           # text mixed with numbers or other objects
        return None
    return np.asarray(text + [""], dtype=object)[codes].tolist()        # code −1 (missing): empty


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


def header(params: ReportParameters, inputs_sha256: str, title: str | None = None, convention: str = "standard",
           guide: str | None = None, significance: str | None = None, notes: list[str] | None = None,
           points: list[str] | None = None, credible_level: float | None = None) -> HTML:
    """Title block of a report on `params` whose input files have the digest `inputs_sha256` (`Page.header`)."""
    col = params.collection
    versions = package_versions()
    title = title or f"Risk report: {col.title}"
    shown = ", ".join(params.systems[:20]) + (f", … ({len(params.systems) - 20} more)" if len(params.systems) > 20 else "")
    rows = [("Collection", f"{col.title} ({col.path})"), ("Measure", params.measure),
            ("Baselines" if len(params.all_baselines) > 1 else "Baseline", ", ".join(params.all_baselines)), ("α grid", ", ".join(f"{a:g}" for a in params.alphas)),
            ("Systems", f"{len(params.systems)}: {shown}"),
            ("Significance level", f"{params.sig_level:g}") if credible_level is None else
            ("Credible-interval level", f"{credible_level:g} (equal-tailed posterior intervals)"),
            ("Inputs (SHA-256 of all files)", inputs_sha256[:16] + "…"),
            ("Versions", ", ".join(f"{k} {v}" for k, v in versions.items() if k in
                                   ("riskreport", "ir_measures", "python"))),
            ("Generated (UTC)", datetime.now(timezone.utc).isoformat(timespec="seconds"))]
    body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                   f"{html.escape(str(v))}</td></tr>" for k, v in rows)
    description = f"<p>{html.escape(col.description)}</p>" if col.description else ""
    standard = [(significance or "▲ and ▼ mark a challenger significantly better or worse than the baseline after "
               "the multiple-comparison correction.") + " Green cells are rewards, orange cells risks, unmarked "
              "cells inconclusive; the best value of a column is in bold.",
              *(notes or []),
              "Each section opens with a “How to read this” line; figures are numbered, with a caption "
              "beneath, and their axes say which direction is a loss.",
              "Long tables are paged: click a column header to sort, type in the search box to filter; detail "
              "tables are collapsed (click their title to open them). "
              "Tables on this page are rounded and may be summarised; every number is in the report's "
              "tables/*.csv at full precision. Provenance (input hashes, versions, parameters, run time) "
              "is at the end of the page."]
    points = [guide or GUIDE.get(convention, GUIDE["standard"])] + (standard if points is None else
                                                                     [*(notes or []), *points])
    guide_html = ("<div class='rr-howto'><h3>How to read this report</h3><ul>"
                  + "".join(f"<li>{html.escape(point)}</li>" for point in points) + "</ul></div>")
    return HTML(f"<h1>{html.escape(title)}</h1>{description}<table>{body}</table>{guide_html}"
                f'<div class="rr-toc-slot"></div>')


def figure_systems(risk: pd.DataFrame, limit: int) -> list[str]:
    """The challengers drawn in figures: all of them, or the `limit` with the lowest URisk at the largest α."""
    return riskiest_first(risk)[:limit]


def figure_note(shown: list[str], total: int) -> HTML:
    """Says when figures show only some systems."""
    if len(shown) >= total:
        return HTML("")
    return note(f"Figures show the {len(shown)} riskiest of the {total} challengers (lowest URisk at the largest α); "
                "tables and CSVs cover all of them.")


def omitted(text: str) -> HTML:
    """Why a section has nothing to show; the exported page then leaves that section (and its contents entry) out."""
    return HTML(f"<p class='rr-omit-section'>{html.escape(text)}</p>")


def note(text: str) -> HTML:
    """A short paragraph (escaped)."""
    return HTML(f"<p>{html.escape(text)}</p>")


def styled(table: pd.DataFrame, precision: int = 5, highlight: dict[str, str] | None = None,
           caption: str | None = None):
    """A pandas Styler: escaped text, fixed precision, optional best-value highlight per column.

    `highlight` maps a column to "max" or "min".
    """
    style = (table.style.format(precision=precision, escape="html", na_rep="–")
             .format_index(escape="html", axis=1).hide(axis="index"))
    grid_columns = [c for c in table.columns if c in ("alpha", "r")]
    if grid_columns:
        style = style.format("{:g}", subset=grid_columns)
    p_columns = [c for c in table.columns if str(c).startswith("p_") and pd.api.types.is_numeric_dtype(table[c])]
    if p_columns:
        style = style.format(format_p, subset=p_columns, na_rep="–")
    text = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
    if text:
        style = style.set_properties(subset=text, **{"text-align": "left"})
    for column, how in (highlight or {}).items():
        if column in table:
            style = (style.highlight_max if how == "max" else style.highlight_min)(
                subset=[column], props="font-weight: bold; background-color: #e8f4ea")
    if caption:
        style = style.set_caption(html.escape(caption))
    return style


def collection_overview(params: ReportParameters, scores, judged: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables: the collection in numbers, and per system its source, missing topics and judged fraction."""
    from riskreport.io.trec import read_qrels
    col = params.collection
    topics = "topics (with ≥ 1 relevant document)" if col.qrels is not None else "topics (scored in the table)"
    rows = [("systems in the report", len(params.systems)), (topics, len(scores.topics))]
    if col.qrels is not None:
        qrels = read_qrels(col.qrels)
        rows += [("judgments", len(qrels)), ("relevant judgments (relevance > 0)", int((qrels["relevance"] > 0).sum())),
                 ("judged topics without relevant documents (excluded)",
                  qrels["query_id"].nunique() - len(scores.topics))]
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
            judged.set_index("system")["judged"])
    return overview, per_system


def format_p(p: float) -> str:
    """p-values: 4 decimals, or `< 0.0001`."""
    if p != p:
        return "–"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def significance_marks(table: pd.DataFrame, sig_level: float, p_column: str = "p_adjusted",
                       effect_column: str = "delta") -> pd.Series:
    """▲ significantly better, ▼ significantly worse than the baseline, '' otherwise."""
    significant = table[p_column] < sig_level
    return pd.Series(["▲" if s and e > 0 else "▼" if s and e < 0 else "" for s, e in
                      zip(significant, table[effect_column])], index=table.index)


def significant_topics(topics: pd.DataFrame) -> pd.DataFrame:
    """Per system and α, the topics flagged as significant losses and gains (from `risk.topic_risk`)."""
    flagged = topics[topics["flag"] != ""]
    if flagged.empty:
        return pd.DataFrame(columns=["system", "alpha", "significant losses (topics)", "significant gains (topics)"])
    grouped = flagged.groupby(["system", "alpha", "flag"], sort=False)["topic"].agg(", ".join).unstack("flag")
    grouped = grouped.reindex(columns=["loss", "gain"]).fillna("")
    return grouped.rename(columns={"loss": "significant losses (topics)", "gain": "significant gains (topics)"}) \
        .reset_index()


def riskiest(risk: pd.DataFrame) -> str:
    """The challenger with the lowest URisk at the largest α (the default focus system)."""
    return str(riskiest_first(risk)[0])


def methods_paragraph(correction: str, levels, samples: int, seed: int, sig_level: float, n_challengers: int,
                      n_topics: int, diagnostics: pd.DataFrame, summary: pd.DataFrame | None = None,
                      baselines: int = 1) -> HTML:
    """The "methods" paragraph: the report's significance rule, the correction, and what the data show.

    `diagnostics` is `inference.diagnostics_table(...)` (how many challenger–α combinations are
    skewed); `summary` is `significance.report_verdicts(...)[1]` (where the methods disagree with the rule).
    """
    skewed, total = int((diagnostics["skewness"].abs() > 1).sum()), len(diagnostics)
    family = (f"the {n_challengers} challengers" if baselines < 2 else
              f"the {n_challengers} comparisons of its {baselines} baselines with every other system (one family)")
    names = {"holm": "Holm's step-down method", "bonferroni": "the Bonferroni correction",
             "bh": "the Benjamini–Hochberg false discovery rate procedure", "none": "no correction"}
    widened = (f" Under Bonferroni each interval's level is widened to 1 − (1 − level)/{n_challengers}."
               if correction == "bonferroni" else " The bootstrap intervals are not widened for the number of "
               "challengers, so they can call significant what the adjusted rule does not.")
    shape = (f"After risk adjustment (losses weighted by 1 + α) the differences are asymmetric in {skewed} of {total} "
             "challenger–α combinations (|skewness| > 1), where symmetric procedures (the t interval and test, and "
             "the Wilcoxon test, which assumes symmetric differences) and BCa can part ways."
             if skewed else f"None of the {total} challenger–α combinations is strongly skewed (|skewness| > 1), so the "
             "t-based rule and the bootstrap intervals should mostly agree.")
    agreement = ""
    if summary is not None and len(summary):
        cells = len(summary)
        split = summary["disagree"] != ""
        bca = summary["disagree"].str.contains(r"\bbca: ", regex=True)
        agreement = (f" In this report every method agrees with the rule in {cells - int(split.sum())} of {cells} "
                     f"challenger–α cells; BCa disagrees in {int(bca.sum())}"
                     + (f" ({', '.join(sorted(set(summary.loc[bca, 'system'])))[:300]})" if bca.any() else "")
                     + ". Each disagreement is named next to its verdict in the verdict matrix; neither side is "
                     "declared right: read them as a verdict that depends on the method.")
    text = (f"The comparisons are paired: every challenger and the baseline are scored on the same {n_topics} topics, "
            f"so each analysis works on per-topic differences. One rule decides every mark, colour and verdict: "
            f"the two-sided paired t-test of the risk-adjusted differences (its statistic is TRisk), with p-values "
            f"adjusted across {family} at each α with {names[correction]}, at significance "
            f"level {sig_level:g}. {shape} The sign, Wilcoxon and randomisation tests (adjusted the same way) and five "
            f"bootstrap intervals of URisk ({samples:,} resamples, seed {seed}, levels "
            f"{', '.join(f'{lv:g}' for lv in levels)}; an interval's own verdict is risk when it lies entirely below "
            f"0 and reward when entirely above) are reported beside the rule.{widened}{agreement}")
    return HTML(f"<p>{html.escape(text)}</p>")


# Verdicts, wide tables and interactive tables (issue 13)

VERDICT_COLOURS = {"risk": "background-color: #fde0d2", "reward": "background-color: #d9f0e3",
                   "undefined": "background-color: #eeeeee"}
VERDICT_ANCHOR = "verdict-matrix"


def interactive(table, page_size: int = 8, summary: str | None = None, open_: bool = False) -> HTML:
    """A table (DataFrame or Styler) the page makes sortable, searchable and paged (script in the nbconvert
    template, no network); inside a collapsed `<details>` titled `summary` when one is given."""
    markup = styler_html(table if hasattr(table, "to_html") and not isinstance(table, pd.DataFrame) else styled(table))
    body = f"<div class='rr-table' data-page='{int(page_size)}'>{markup}</div>"
    if summary is not None:
        body = (f"<details class='rr-detail'{' open' if open_ else ''}><summary>{html.escape(summary)}</summary>"
                f"{body}</details>")
    return HTML(body)


FAST_HTML_CELLS = 5_000     # Stylers with more cells than this are written by `styler_html`'s own loop


def styler_html(style) -> str:
    """`style.to_html()`, the same markup, written in one loop for a large table with a plain layout (hidden
    index, one header row, no table styles, classes or tooltips): pandas' template costs ~0.1 ms a cell."""
    data = style.data
    try:
        plain = (data.size > FAST_HTML_CELLS and all(style.hide_index_) and not any(style.hide_columns_)
                 and data.columns.nlevels == 1 and not style.hidden_rows
                 and not style.hidden_columns and not style.table_styles and not style.table_attributes
                 and not style.cell_context and style.tooltips is None and not style.concatenated
                 and isinstance(style.caption, (str, type(None))) and style.cell_ids)
        if plain:
            return _plain_table_html(style, data)
    except (AttributeError, KeyError, TypeError):        # pandas' Styler internals moved: its own, slower, writer
        pass
    return style.to_html()


def _plain_table_html(style, data: pd.DataFrame) -> str:
    style._compute()
    uid, rows, cols = style.uuid, data.shape[0], data.shape[1]
    groups: dict[tuple, list[str]] = {}
    for (r, c), props in sorted(style.ctx.items()):
        if props:
            groups.setdefault(tuple(props), []).append(f"row{r}_col{c}")
    css = "".join(", ".join(f"#T_{uid}_{sel}" for sel in selectors) + " {\n"
                  + "".join(f"  {prop}: {value};\n" for prop, value in props) + "}\n"
                  for props, selectors in groups.items())
    head = "".join(f'      <th id="T_{uid}_level0_col{c}" class="col_heading level0 col{c}" >'
                   f"{style._display_funcs_columns[(0, c)](name)}</th>\n" for c, name in enumerate(data.columns))
    columns = [data.iloc[:, c].tolist() for c in range(cols)]
    funcs = style._display_funcs
    body = []
    for r in range(rows):
        cells = "".join(f'      <td id="T_{uid}_row{r}_col{c}" class="data row{r} col{c}" >'
                        f"{funcs[(r, c)](columns[c][r])}</td>\n" for c in range(cols))
        body.append(f"    <tr>\n{cells}    </tr>\n")
    caption = f"  <caption>{style.caption}</caption>\n" if style.caption else ""
    return (f'<style type="text/css">\n{css}</style>\n<table id="T_{uid}">\n{caption}  <thead>\n    <tr>\n{head}'
            f"    </tr>\n  </thead>\n  <tbody>\n{''.join(body)}  </tbody>\n</table>\n")


def side_by_side(*parts: HTML) -> HTML:
    """Figures (from `Page.figure`) next to each other, each scaled to its share of the page width."""
    return HTML("<div class='rr-figures'>" + "".join(f"<div class='rr-figure'>{part.markup}</div>" for part in parts)
                + "</div>")


def back_link() -> HTML:
    """A line linking back to the verdict matrix at the top of the page."""
    return HTML(f"<p class='rr-note'><a href='#{VERDICT_ANCHOR}'>↑ verdicts per system and α</a> (the one "
                "significance rule of this report)</p>")


def _signed(values: pd.Series, convention: str) -> pd.Series:
    return -values if convention == "minus" else values


def _alpha_label(alpha: float, convention: str) -> str:
    return f"r = {alpha + 1:g}" if convention == "minus" else f"α = {alpha:g}"


PAGE_ROWS = 3_000   # above this, a table of every method's verdict shows only the rows that differ from the rule


def interval_verdicts(verdicts: pd.DataFrame, summary: pd.DataFrame, limit: int = PAGE_ROWS) -> tuple[pd.DataFrame, str]:
    """The interval methods' own verdicts for the page, and a caption that says which rows are shown.

    `verdicts` is `significance.report_verdicts`' first table (`kind` test or interval), `summary` its
    second (the rule's verdict per challenger and α). Up to `limit` rows: all of them. Beyond (a campaign:
    110 systems × 21 α × 5 methods = 11,550 rows, 7 MB of page), only the rows whose verdict differs from
    the rule's, with the rule's verdict beside them; every row stays in `tables/verdicts.csv`.
    """
    intervals = verdicts[verdicts["kind"] != "test"].drop(columns=["kind", "statistic", "p_adjusted"])
    if len(intervals) <= limit:
        return intervals, "Every interval method at the first level, with its own verdict"
    key = _key(intervals, summary)
    rule = summary[[*key, "verdict"]].rename(columns={"verdict": "rule_verdict"})
    both = intervals.merge(rule, on=key, how="left")
    same = both["verdict"].replace("undefined", "inconclusive") == both["rule_verdict"].replace("undefined",
                                                                                                 "inconclusive")
    differs = both[~same]
    return differs, (f"Interval methods whose verdict differs from the report's: {len(differs):,} of "
                     f"{len(intervals):,} rows (every row: tables/verdicts.csv)")


def verdict_matrix(summary: pd.DataFrame, convention: str = "standard", caption: str | None = None) -> HTML:
    """Systems × α, each cell the rule's verdict with URisk and how many methods agree, coloured, riskiest first;
    with several baselines, one column group per baseline (its α beneath), each cell then shorter (▼/▲ mark).

    `summary` is `significance.report_verdicts(...)[1]` (already in risk order).
    """
    order = list(dict.fromkeys(summary["system"]))
    baselines = list(dict.fromkeys(summary["baseline"])) if "baseline" in summary else [None]
    several = len(baselines) > 1
    text = ({"risk": "▼", "reward": "▲", "inconclusive": "·", "undefined": "n/a"} if several else
            {"risk": "▼ risk", "reward": "▲ reward", "inconclusive": "inconclusive", "undefined": "n/a (SE = 0)"})
    cells = summary.assign(
        cell=[f"{text[v]} {u:+.4f} ({a}/{m})" for v, u, a, m in
              zip(summary["verdict"], _signed(summary["urisk"], convention), summary["agree"], summary["methods"])],
        label=[_alpha_label(a, convention) for a in summary["alpha"]])
    labels = [_alpha_label(a, convention) for a in sorted(summary["alpha"].unique())]
    columns = ["label"] if not several else ["baseline", "label"]
    grid = pd.MultiIndex.from_product([baselines, labels]) if several else labels
    wide = cells.pivot(index="system", columns=columns, values="cell").reindex(index=order, columns=grid)
    colours = cells.pivot(index="system", columns=columns, values="verdict").reindex(index=order, columns=grid)
    differing = summary[summary["disagree"] != ""].groupby("system", sort=False)
    disagree = ({system: _methods_count(g["disagree"]) for system, g in differing} if several else
                {system: "; ".join(f"{_alpha_label(a, convention)} {_by_verdict(d)}" for a, d in zip(g["alpha"],
                                                                                                       g["disagree"]))
                 for system, g in differing})
    notes = pd.Series(disagree, dtype=object).reindex(order).fillna("")
    wide = wide.fillna("—" if several else "")
    if several:
        wide[("", "methods that disagree")] = notes.to_numpy()
        wide.insert(0, ("", "system"), wide.index)
        wide.columns = pd.MultiIndex.from_tuples(wide.columns, names=["baseline", None])
        colours = colours.reindex(columns=wide.columns)
    else:
        wide["methods that disagree"] = notes
        wide = wide.reset_index()
        colours = colours.reset_index(drop=True).reindex(columns=wide.columns)
    wide = wide.reset_index(drop=True)
    colours = colours.reset_index(drop=True)
    colours.columns = wide.columns
    style = (wide.style.hide(axis="index").format(escape="html").format_index(escape="html", axis=1)
             .set_properties(**{"text-align": "left"})
             .apply(lambda frame: colours.reindex(columns=frame.columns)
                    .map(lambda v: VERDICT_COLOURS.get(v, "") if isinstance(v, str) else ""), axis=None))
    if several:                                            # one line per cell: 100 systems stay one screen each
        style = style.set_properties(subset=list(wide.columns[1:-1]), **{"white-space": "nowrap"})
    if caption:
        style = style.set_caption(html.escape(caption))
    kind = " rr-verdict-groups" if several else ""
    return HTML(f"<div id='{VERDICT_ANCHOR}' class='rr-verdict-matrix{kind}'>" + interactive(style, page_size=12).markup
                + "</div>")


def for_baseline(table: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The rows of a report table (risk, tests, bootstrap, topics, verdicts) against one `baseline`."""
    return table[table["baseline"] == baseline].reset_index(drop=True) if "baseline" in table else table


def baselines_note(baselines: list[str], n_systems: int) -> HTML:
    """What a report with several baselines shows, and that its verdicts are corrected as one family."""
    if len(baselines) < 2:
        return HTML("")
    family = len(baselines) * (n_systems - 1)
    return note(f"This report compares every system with {len(baselines)} baselines ({', '.join(baselines)}): "
                f"the verdict matrix has one column group per baseline. The p-values are adjusted across the whole "
                f"family of {family} comparisons at each α (every baseline against every other system), so each "
                f"verdict accounts for every comparison in this report. The risk table is shown per baseline; the "
                f"other sections compare with the first baseline, {baselines[0]}, and every table in tables/*.csv "
                "holds every baseline (column `baseline`).")


def _key(table: pd.DataFrame, summary: pd.DataFrame) -> list[str]:
    """The columns that identify a verdict in both tables: system and α, and the baseline when both have it."""
    return ["system", "baseline", "alpha"] if "baseline" in table and "baseline" in summary else ["system", "alpha"]


def _methods_count(disagreements: pd.Series) -> str:
    """`randomisation ×5, sign ×2`: in how many of a system's cells (baseline × α) each method disagrees with
    the rule (a matrix with several baselines; each cell's methods are in tables/verdicts.csv)."""
    counts: dict[str, int] = {}
    for text in disagreements:
        for item in text.split("; "):
            method = item.partition(": ")[0]
            counts[method] = counts.get(method, 0) + 1
    return ", ".join(f"{m} ×{n}" for m, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _by_verdict(disagree: str) -> str:
    """`sign: risk; bca: risk; wilcoxon: reward` -> `risk: sign bca; reward: wilcoxon`; more than two methods
    with one verdict are counted (`risk: 5 methods`); every method's verdict is in tables/verdicts.csv."""
    groups: dict[str, list[str]] = {}
    for item in disagree.split("; "):
        method, _, verdict = item.partition(": ")
        groups.setdefault(verdict, []).append(method)
    return ", ".join(f"{verdict}: {' '.join(methods) if len(methods) <= 2 else f'{len(methods)} methods'}"
                     for verdict, methods in groups.items())


def risk_wide(risk: pd.DataFrame, summary: pd.DataFrame, convention: str = "standard", caption: str | None = None):
    """URisk and TRisk per system (rows, riskiest first) and α (columns), with the rule's adjusted p and mark.

    TRisk to 2 decimals: five α fit a 1400 px page; the values that do not change with α are in `risk_counts`."""
    order = list(dict.fromkeys(summary["system"]))
    key = _key(risk, summary)
    merged = risk.drop(columns=["verdict", "p_adjusted"], errors="ignore").merge(
        summary[[*key, "p_adjusted", "verdict"]], on=key)
    merged["urisk"] = _signed(merged["urisk"], convention)
    merged["trisk"] = _signed(merged["trisk"], convention)
    merged["mark"] = merged["verdict"].map({"risk": " ▼", "reward": " ▲"}).fillna("")
    parts = []
    for alpha, at in merged.groupby("alpha", sort=True):
        label = _alpha_label(alpha, convention)
        at = at.set_index("system").reindex(order)
        parts.append(pd.DataFrame({f"URisk {label}": [f"{u:+.4f}{m}" for u, m in zip(at["urisk"], at["mark"])],
                                   f"TRisk {label}": at["trisk"], f"p_adj {label}": at["p_adjusted"]}, index=order))
    wide = pd.concat(parts, axis=1).rename_axis("system").reset_index()
    verdict = merged.pivot(index="system", columns="alpha", values="verdict").reindex(order)
    style = styled(wide, precision=4, caption=caption).format(
        "{:+.2f}", subset=[c for c in wide.columns if c.startswith("TRisk")], na_rep="–")
    for alpha in verdict.columns:
        column = f"URisk {_alpha_label(alpha, convention)}"
        colours = verdict[alpha].map(lambda v: VERDICT_COLOURS.get(v, "")).tolist()
        style = style.apply(lambda _, c=colours: c, subset=[column])
    return style


def risk_counts(risk: pd.DataFrame, summary: pd.DataFrame, caption: str | None = None):
    """What does not change with α, per system (rows, riskiest first): wins, losses, ties, FRisk, FReward,
    FRisk/FReward and losses > 20% (the companion of `risk_wide`)."""
    order = list(dict.fromkeys(summary["system"]))
    once = risk.drop_duplicates("system").set_index("system").reindex(order)[
        ["wins", "losses", "ties", "frisk", "freward", "risk_reward", "loss20"]].rename(
        columns={"risk_reward": "FRisk/FReward", "loss20": "losses > 20%", "frisk": "FRisk", "freward": "FReward"})
    return styled(once.rename_axis("system").reset_index(), precision=4, caption=caption)


def ci_wide(boot: pd.DataFrame, summary: pd.DataFrame, method: str = "bca", convention: str = "standard",
            caption: str | None = None):
    """The `method` interval of URisk at each level per system (rows, riskiest first) and α (columns), its own
    verdict beside it, and ≠ where that verdict differs from the report's rule (no colour: colours are the rule's)."""
    from riskreport.stats.risk import to_convention
    order = list(dict.fromkeys(summary["system"]))
    shown = to_convention(boot[boot["method"] == method], convention)
    rule = summary.set_index(["system", "alpha"])["verdict"]
    shown = shown.assign(rule=rule.reindex(pd.MultiIndex.from_frame(shown[["system", "alpha"]])).to_numpy())
    same = (shown["verdict"] == shown["rule"]) | ((shown["verdict"] == "inconclusive") & (shown["rule"] == "undefined"))
    shown["cell"] = [f"[{lo:+.4f}, {hi:+.4f}] {v}{'' if s else ' ≠'}" for lo, hi, v, s in
                     zip(shown["ci_low"], shown["ci_high"], shown["verdict"], same)]
    shown["label"] = [f"{_alpha_label(a, convention)}, {lv:g}" for a, lv in zip(shown["alpha"], shown["level"])]
    labels = list(dict.fromkeys(shown.sort_values(["alpha", "level"])["label"]))
    wide = shown.pivot(index="system", columns="label", values="cell").reindex(index=order, columns=labels)
    return styled(wide.rename_axis("system").reset_index(), caption=caption)


def _short_p(p: float) -> str:
    """A p-value in a wide table: 3 decimals, or `<.001`."""
    return "–" if p != p else "<.001" if p < 1e-3 else f"{p:.3f}"


def tests_wide(tests: pd.DataFrame, summary: pd.DataFrame, sig_level: float, convention: str = "standard",
               caption: str | None = None):
    """Adjusted p-values per system (rows, riskiest first), α and test (columns; `rand.`: the randomisation test);
    the t-test column is the rule (coloured by its verdict), the other tests' p-values below the level are bold."""
    order = list(dict.fromkeys(summary["system"]))
    short = {"randomisation": "rand."}          # column headers narrow enough for 5 α on a 1400 px page
    tests = tests.assign(label=[f"{short.get(t, t)} {_alpha_label(a, convention)}" for t, a in
                                zip(tests["test"], tests["alpha"])])
    ranked = {t: i for i, t in enumerate(("t", "sign", "wilcoxon", "randomisation"))}
    labels = list(dict.fromkeys(tests.sort_values(["alpha", "test"], key=lambda c: c.map(ranked) if c.name == "test"
                                                  else c)["label"]))
    wide = tests.pivot(index="system", columns="label", values="p_adjusted").reindex(index=order, columns=labels)
    wide.columns = [f"p_{c}" for c in wide.columns]
    table = wide.rename_axis("system").reset_index()
    style = styled(table, caption=caption).format(_short_p, subset=list(table.columns[1:]), na_rep="–")  # 1400 px
    verdict = summary.set_index(["system", "alpha"])["verdict"]
    for alpha in sorted(tests["alpha"].unique()):
        column = f"p_t {_alpha_label(alpha, convention)}"
        colours = [VERDICT_COLOURS.get(verdict.get((s, alpha), ""), "") for s in table["system"]]
        style = style.apply(lambda _, c=colours: c, subset=[column])
    others = [c for c in table.columns if c.startswith("p_") and not c.startswith("p_t ")]
    return style.map(lambda v: "font-weight: bold" if isinstance(v, float) and v < sig_level else "", subset=others)


# Non-deterministic systems (templates/nondeterministic.ipynb; riskreport.stats.mixed)

VERDICT_STYLES = {"equivalent": "background-color: #d9f0e3", "better": "background-color: #b7e1c4",
                  "not_worse": "background-color: #eef6e8", "worse": "background-color: #fde0d2",
                  "risk": "background-color: #fde0d2", "reward": "background-color: #d9f0e3"}


def mixed_summary(mixed: pd.DataFrame, sig_level: float, caption: str | None = None):
    """The mixed model's system effects for the page: effect, SE, both intervals, p, verdict, fitting method.

    `mixed` is `riskreport.stats.mixed.mixed_table(...)` (standard convention: > 0 is better).
    """
    interval = lambda low, high: [f"[{a:+.4f}, {b:+.4f}]" for a, b in zip(low, high)]  # noqa: E731
    table = pd.DataFrame({
        "system": mixed["system"], "instances": mixed["n_instances"], "effect": mixed["effect"],
        "se": mixed["se"], f"{100 * (1 - sig_level):g}% CI": interval(mixed["ci_low"], mixed["ci_high"]),
        "p_value": mixed["p_value"],
        f"{100 * (1 - 2 * sig_level):g}% CI (equivalence)": interval(mixed["tost_low"], mixed["tost_high"]),
        "δ0": mixed["delta0"], "verdict": mixed["verdict"], "method": mixed["method"]})
    return styled(table, caption=caption).format("{:g}", subset=["δ0"]).map(
        lambda v: VERDICT_STYLES.get(v, ""), subset=["verdict"])


def variance_components(mixed: pd.DataFrame, caption: str | None = None):
    """Variance components of the mixed model per system, and each one's share of their sum."""
    names = {"topic": "topic", "instance": "instance", "topic_system": "topic × system", "residual": "residual"}
    table = pd.DataFrame({"system": mixed["system"]})
    for key, name in names.items():
        table[f"σ² {name}"] = mixed[f"var_{key}"]
    for key, name in names.items():
        table[f"share {name}"] = mixed[f"share_{key}"]
    shares = [c for c in table.columns if c.startswith("share")]
    return styled(table, precision=6, caption=caption).format("{:.1%}", subset=shares, na_rep="–")


def instance_tests_summary(tests: pd.DataFrame, caption: str | None = None):
    """Single-instance paired t-tests per system (from `riskreport.stats.instances.single_instance_tests`), shares as %."""
    shares = [c for c in tests.columns if c.startswith("share_p")]
    shown = tests.rename(columns={c: f"significant at {int(c[7:]) / 100:g}" for c in shares})
    return styled(shown, caption=caption).format("{:.0%}", subset=[f"significant at {int(c[7:]) / 100:g}"
                                                                    for c in shares])


def nondeterministic_methods(mixed: pd.DataFrame, baseline: str, measure: str, sig_level: float) -> HTML:
    """The methods paragraph of the non-deterministic template (Jayasinghe et al. 2014; docs/measures/nondeterministic.md)."""
    df = sorted(set(int(d) for d in mixed["df"]))
    methods = sorted(set(mixed["method"]))
    delta0 = float(mixed["delta0"].iloc[0]) if len(mixed) else float("nan")
    text = (
        f"Each system is compared with the baseline {baseline} on {measure} under the linear mixed-effects model "
        "of Jayasinghe et al. (SIGIR 2014): score = γ + system + instance + topic + topic × system + residual, "
        "with the system a fixed effect and the others random, instances nested in their system and crossed "
        "with topics. A deterministic system (a single run) has no instance effect: its instance variance is 0. "
        "The variance components are estimated by restricted maximum likelihood (REML): exactly, through the "
        "orthogonal strata of the design, when every instance of both systems has a score on every topic "
        "('balanced REML', which agrees with statsmodels MixedLM to 1e-4), and with statsmodels MixedLM otherwise. "
        f"Fitting method(s) used here: {', '.join(methods)}. The effect is the difference of the system means "
        f"(> 0: better than the baseline); its p-value and intervals use Student's t with n_topics − 1 = "
        f"{', '.join(map(str, df))} degrees of freedom. Equivalence is tested with two one-sided tests at level "
        f"{sig_level:g} for the margin δ0 = {delta0:g}: 'equivalent' when the {100 * (1 - 2 * sig_level):g}% "
        "interval lies inside (−δ0, δ0); otherwise 'better' or 'worse' when the "
        f"{100 * (1 - sig_level):g}% interval lies entirely above or below 0; otherwise 'not worse' when the "
        f"{100 * (1 - 2 * sig_level):g}% interval's lower end is above −δ0 (non-inferiority); otherwise "
        "'inconclusive'. A lack of significance is never read as equivalence. The single-instance analyses compare "
        "each instance with the baseline (its per-topic mean over instances when the baseline has several): "
        "paired t-tests over topics, and URisk/TRisk at every α; the pooled system is the per-topic mean over an "
        "system's instances.")
    return HTML(f"<p>{html.escape(text)}</p>")


# Choices the report made, LaTeX tables and the multi-measure table (issue 13)

def choice_notes(params: ReportParameters, baseline_given: bool, measure_given: bool) -> list[str]:
    """Lines for the how-to box saying which baseline and measure the report chose, and why, when none was given."""
    from riskreport.measures.evaluation import SCORE, canonical_measure, score_table_measures
    col = params.collection
    notes = []
    if not baseline_given:
        why = ("the collection's default (collection.toml)" if col.default_baseline == params.baseline else
               "the first system of the collection in alphabetical order, for want of a default: pass --baseline "
               "(or set `baseline` in collection.toml) to compare against the system you mean")
        notes.append(f"No baseline was given: {params.baseline} is {why}.")
    if not measure_given:
        if col.default_measure and canonical_measure(col.default_measure) == params.measure:
            why = "the collection's default (collection.toml)"
        elif params.measure == SCORE:
            why = (f"the label of the values of {col.scores_file().name}, which has no `measure` column: name the measure "
                   "with --measure (e.g. --measure 'RBP(p=0.8)') or a `measure` column, and the report will use it")
        elif params.measure in score_table_measures(col):
            why = f"the one measure of {col.scores_file().name}"
        else:
            why = "riskreport's default; choose another with --measure"
        notes.append(f"No measure was given: {params.measure} is {why}.")
    return notes


def _mark_frame(table: pd.DataFrame, column: str, verdicts: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({column: verdicts.map({"risk": "▼", "reward": "▲"}).fillna("").to_numpy()}, index=table.index)


def _legend(params: ReportParameters, correction: str) -> str:
    adjusted = "unadjusted" if correction == "none" else f"{correction}-adjusted across the challengers"
    return (f"▲/▼: significantly better/worse than {params.baseline} (two-sided paired t-test on the risk-adjusted "
            f"differences, p < {params.sig_level:g}, {adjusted}).")


def tex_label(params: ReportParameters, name: str) -> str:
    """`tab:<collection>:<name>`: labels of two reports' tables do not clash in one paper."""
    return f"tab:{re.sub(r'[^A-Za-z0-9.-]+', '-', params.collection.name)}:{name}"


def effectiveness_latex(effectiveness: pd.DataFrame, params: ReportParameters, correction: str) -> dict:
    """Arguments of `latex.latex_table` for the effectiveness table (marks: the rule at α = 0)."""
    table = effectiveness.sort_values("mean", ascending=False)[["system", "mean", "median", "sd", "delta"]] \
        .rename(columns={"delta": "Δ"}).reset_index(drop=True)
    ordered = effectiveness.sort_values("mean", ascending=False).reset_index(drop=True)
    verdict = pd.Series(["reward" if m == "▲" else "risk" if m == "▼" else "" for m in
                         significance_marks(ordered, params.sig_level)])
    return dict(table=table, caption=f"{params.measure} per system; Δ against {params.baseline}.",
                label=tex_label(params, "effectiveness"), best={"mean": "max", "median": "max"},
                marks=_mark_frame(table, "mean", verdict), legend=_legend(params, correction))


def risk_latex(risk: pd.DataFrame, summary: pd.DataFrame, params: ReportParameters, correction: str) -> dict:
    """Arguments of `latex.latex_table` for URisk and TRisk per α (rows riskiest first, marks from the rule)."""
    order = list(dict.fromkeys(summary["system"]))
    alphas = sorted(risk["alpha"].unique())
    urisk = risk.pivot(index="system", columns="alpha", values="urisk").reindex(order)
    trisk = risk.pivot(index="system", columns="alpha", values="trisk").reindex(order)
    verdict = summary.pivot(index="system", columns="alpha", values="verdict").reindex(order)
    table = pd.concat([urisk.rename(columns=lambda a: f"α={a:g}"),
                       trisk.rename(columns=lambda a: f"α={a:g} ")], axis=1).rename_axis("system").reset_index()
    marks = pd.DataFrame({f"α={a:g}": verdict[a].map({"risk": "▼", "reward": "▲"}).fillna("").to_numpy()
                          for a in alphas}, index=table.index)
    return dict(table=table, caption=f"URisk and TRisk of {params.measure} against {params.baseline} per α "
                f"(higher is better).", label=tex_label(params, "risk"), best={f"α={a:g}": "max" for a in alphas},
                marks=marks, legend=_legend(params, correction),
                column_groups=[("", 1), ("URisk", len(alphas)), ("TRisk", len(alphas))])


def georisk_latex(analysis, params: ReportParameters) -> dict:
    """Arguments of `latex.latex_table` for GeoRisk per α over the pool (best first)."""
    wide = analysis.geo.pivot(index="system", columns="alpha", values="georisk")
    means = analysis.geo.drop_duplicates("system").set_index("system")["mean"]
    top = wide.columns.max()
    wide = wide.sort_values(top, ascending=False)
    table = pd.concat([means.reindex(wide.index).rename("mean"), wide.rename(columns=lambda a: f"α={a:g}")],
                      axis=1).rename_axis("system").reset_index()
    return dict(table=table, caption=f"GeoRisk of {params.measure} over a pool of {len(analysis.matrix)} systems "
                "(Dinçer et al. 2016; higher is better).", label=tex_label(params, "georisk"),
                best={c: "max" for c in table.columns if c != "system"},
                column_groups=[("", 2), ("GeoRisk", len(wide.columns))])


def bootstrap_latex(boot: pd.DataFrame, summary: pd.DataFrame, params: ReportParameters, method: str = "bca") -> dict:
    """Arguments of `latex.latex_table` for the `method` intervals at the first level per α; marks from the rule,
    † where the interval's own verdict differs."""
    order = list(dict.fromkeys(summary["system"]))
    level = boot["level"].min()
    part = boot[(boot["method"] == method) & (boot["level"] == level)]
    part = part.merge(summary[["system", "alpha", "verdict"]].rename(columns={"verdict": "rule"}), on=["system", "alpha"])
    part = part.assign(cell=[f"[{lo:.4f}, {hi:.4f}]" for lo, hi in zip(part["ci_low"], part["ci_high"])],
                       mark=[{"risk": "▼", "reward": "▲"}.get(r, "") +
                             ("" if v == r or (v == "inconclusive" and r == "undefined") else "†")
                             for v, r in zip(part["verdict"], part["rule"])])
    cells = part.pivot(index="system", columns="alpha", values="cell").reindex(order)
    marks = part.pivot(index="system", columns="alpha", values="mark").reindex(order)
    table = cells.rename(columns=lambda a: f"α={a:g}").rename_axis("system").reset_index()
    mark_frame = marks.rename(columns=lambda a: f"α={a:g}").reset_index(drop=True).fillna("")
    return dict(table=table, caption=f"{'BCa' if method == 'bca' else method} {level:g} intervals of URisk "
                f"of {params.measure} against {params.baseline} per α.", label=tex_label(params, "bootstrap"), marks=mark_frame,
                legend="▲/▼: the report's verdict (paired t-test, adjusted); †: the interval's own verdict differs.")


def multi_measure_styled(multi: pd.DataFrame, sig_level: float, caption: str | None = None):
    """Mean per system (rows) and measure (columns) with ▲/▼ against the baseline (the rule at α = 0)."""
    marked = multi.assign(cell=[f"{m:.4f}{' ▲' if p < sig_level and d > 0 else ' ▼' if p < sig_level and d < 0 else ''}"
                                for m, d, p in zip(multi["mean"], multi["delta"], multi["p_adjusted"])])
    wide = marked.pivot(index="system", columns="measure", values="cell")
    wide = wide.reindex(index=list(dict.fromkeys(multi["system"])), columns=list(dict.fromkeys(multi["measure"])))
    return styled(wide.rename_axis("system").reset_index().rename_axis(None, axis=1), caption=caption)


def multi_measure_latex(multi: pd.DataFrame, params: ReportParameters, correction: str) -> dict:
    """Arguments of `latex.latex_table` for the multi-measure table: one column group (mean, Δ) per measure."""
    measures = list(dict.fromkeys(multi["measure"]))
    systems = list(dict.fromkeys(multi["system"]))
    columns, marks = {}, {}
    for i, measure in enumerate(measures):
        part = multi[multi["measure"] == measure].set_index("system").reindex(systems)
        space = " " * i                       # column names must differ; the group header names the measure
        columns[f"mean{space}"] = part["mean"].to_numpy()
        columns[f"Δ{space}"] = part["delta"].to_numpy()
        marks[f"mean{space}"] = ["▲" if p < params.sig_level and d > 0 else "▼" if p < params.sig_level and d < 0
                                 else "" for d, p in zip(part["delta"], part["p_adjusted"])]
    table = pd.DataFrame({"system": systems, **columns})
    return dict(table=table, caption=f"Mean effectiveness per measure; Δ against {params.baseline}.",
                label=tex_label(params, "measures"), best={c: "max" for c in columns if c.startswith("mean")},
                marks=pd.DataFrame(marks, index=table.index), legend=_legend(params, correction),
                column_groups=[("", 1)] + [(m, 2) for m in measures])
