"""Presentation helpers for templates: header, tables on the page and as CSV, figure captions.

Templates call these so that notebooks hold prose and layout, not formulas. Every string
that comes from input files (system, topic and collection names) is HTML-escaped. A template
holds one `Page`: its figure numbers, where its tables go, and what the runner already knows.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from riskreport.errors import ParameterError
from riskreport.io.provenance import file_hashes, inputs_digest, remember_digests
from riskreport.measures.params import ReportParameters
from riskreport.render.pages.changes import since_section
from riskreport.render.pages.nondeterministic import (
    VERDICT_STYLES,
    instance_tests_summary,
    mixed_summary,
    nondeterministic_methods,
    variance_components,
)
from riskreport.render.pages.report_text import GUIDE, choice_notes, header, methods_paragraph
from riskreport.render.plotting import figure_store
from riskreport.render.plotting.drawing import PendingFigure, figure_of
from riskreport.render.plotting.figures import FigureWriter
from riskreport.render.tabular.campaign import (
    CAMPAIGN_ROWS,
    figure_note,
    figure_systems,
    flagged_by_alpha,
    flagged_list,
    scaled_table,
)
from riskreport.render.tabular.csv_writer import CSV_FLOAT, table_file, write_csv
from riskreport.render.tabular.html import (
    FAST_HTML_CELLS,
    HTML,
    WHOLE_ROWS,
    _alpha_label,
    _plain_table_html,
    _short_p,
    _signed,
    format_p,
    interactive,
    note,
    omitted,
    side_by_side,
    significance_marks,
    styled,
    styler_html,
)
from riskreport.render.tabular.latex_tables import (
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
from riskreport.render.tabular.tables import (
    PAGE_ROWS,
    VERDICT_ANCHOR,
    VERDICT_COLOURS,
    _by_verdict,
    _key,
    _methods_count,
    back_link,
    baselines_note,
    ci_wide,
    collection_overview,
    flagged,
    for_baseline,
    interval_verdicts,
    risk_counts,
    risk_wide,
    tests_wide,
    verdict_matrix,
)
from riskreport.stats.changes import Changes
from riskreport.stats.rankings import riskiest_first
from riskreport.stats.risk import MIN_TOPIC_DELTA, standing_out

CONTEXT_KEYS = (
    "tables_dir",
    "inputs_sha256",
    "workers",
    "chosen",
    "file_digests",
    "figure_formats",
    "previous",
    "generated_utc",
)


# The report's parts, importable from here as before (templates use report.<name>)
__all__ = [
    "CSV_FLOAT",
    "FAST_HTML_CELLS",
    "GUIDE",
    "HTML",
    "PAGE_ROWS",
    "VERDICT_ANCHOR",
    "VERDICT_COLOURS",
    "VERDICT_STYLES",
    "WHOLE_ROWS",
    "CAMPAIGN_ROWS",
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
    "choice_notes",
    "ci_wide",
    "collection_overview",
    "effectiveness_latex",
    "figure_note",
    "figure_systems",
    "flagged",
    "flagged_by_alpha",
    "flagged_list",
    "for_baseline",
    "format_p",
    "georisk_latex",
    "header",
    "instance_tests_summary",
    "interactive",
    "interval_verdicts",
    "methods_paragraph",
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
    "write_csv",
]


class Page:
    """One report page as a template builds it: figure numbers, the tables folder, the input digest, threads.

    `context` is the template's `context` parameter. `riskreport run` passes the report's own
    `tables_dir`, the `inputs_sha256` of the files it hashed while planning (and `file_digests`, each
    file's digest with its signature, so the kernel does not hash them again), the `workers`
    (threads) a bootstrap may use, which of `baseline` and `measure` it `chosen` by default, and the
    `figure_formats` to write (`figures.check_formats`: PNG alone unless SVG or PDF are asked for), and the
    report's one time stamp `generated_utc` (its folder's name and provenance give the same; by hand: now);
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
        self.generated_utc = context.get("generated_utc")  # the report's time stamp (its folder's); by hand: now
        remember_digests(context.get("file_digests") or [])  # input files the runner hashed: not again
        self.previous = context.get("previous")  # the report folder to compare with (`since`), or None
        self.figures_dir = self.tables_dir.parent / "figures"
        self.figures = 0
        self._writer = FigureWriter(formats=context.get("figure_formats"), draw_elsewhere=self.workers > 1)
        self._drawn: list[tuple[str, Path, bytes]] = []  # figures of an analysis to keep (`finish`)
        self._drawing: list[tuple[PendingFigure, str | None, Path]] = []  # drawn in the background (`show`)
        self._last_png = b""
        self.campaign = False  # set by `header`: more challengers than a table shows whole (`WHOLE_ROWS`)

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
        scaled: bool = False,
    ) -> HTML:
        """Title block: collection and parameters, a "how to read this report" box, the table of contents slot.

        `credible_level`: a page of credible intervals (Bayesian) shows their level instead of a significance level.

        `significance` replaces the box's sentence on ▲/▼ (e.g. `significance.rule_text(...)`);
        `notes` are further lines of the box (e.g. how the baseline was chosen); `points` replaces the
        box's standard lines after `guide` (marks, colours, tables) for a page that uses other marks; `scaled`: the
        page sizes its tables and figures with `table` and `show(..., main=False)`, and the box says so at a
        campaign's scale.
        """
        digest = self.inputs_sha256 or inputs_digest(file_hashes(params.collection.files()))
        self.campaign = scaled and len(params.challengers) > WHOLE_ROWS  # a learning-to-rank page has none
        return header(
            params,
            digest,
            title,
            convention,
            guide,
            significance,
            notes,
            points,
            credible_level,
            self.generated_utc,
            campaign=self.campaign,
        )

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

        import matplotlib.pyplot as plt

        fig = figure_of(figure)
        caption = self.caption(text)
        png = self._writer.submit(
            fig, self.figures_dir / f"{self.figures}-{slug}", f"Figure {self.figures}: {slug}", text
        )
        plt.close(fig)
        self._last_png = png  # the page's copy, kept by `show` for the next report
        return self._embedded(png, caption, text, collapsed)

    def _embedded(self, png: bytes, caption: HTML, text: str, collapsed: bool, number: int | None = None) -> HTML:
        import base64

        number = self.figures if number is None else number
        data = base64.b64encode(png).decode("ascii")
        body = (
            f"<img src='data:image/png;base64,{data}' style='max-width:100%' alt='Figure {number}'/>" + caption.markup
        )  # the caption follows; no names in attributes
        if collapsed:
            body = (
                f"<details class='rr-detail'><summary>Figure {number}: {html.escape(text[:90])}"
                f"{'…' if len(text) > 90 else ''}</summary>{body}</details>"
            )
        return HTML(body)

    def show(self, analysis, name: str, collapsed: bool = False, main: bool = True) -> HTML:
        """`figure` for one of an analysis's figures (`riskreport.analyse(...).figure(name)`) with its caption; at a
        campaign's scale (`campaign`) a figure that is not `main` is one click away (collapsed)."""
        fold = collapsed or (self.campaign and not main)
        text = analysis.caption(name)
        key = figure_store.figure_key(analysis, name, self.figures + 1, text, self._writer.formats)
        kept = figure_store.load(key) if key else None
        if kept is None and self._writer.free() and hasattr(analysis, "figure_job"):  # the other core draws it
            caption, number, job = self.caption(text), self.figures, analysis.figure_job(name)
            stem, title = self.figures_dir / f"{number}-{name}", f"Figure {number}: {name}"
            pending = PendingFigure(
                self._writer.draw(job, stem, title, text),
                lambda png: self._embedded(png, caption, text, fold, number),
                lambda: self._writer.submit_closed(job(), stem, title, text),  # the process failed: drawn here
            )
            self._drawing.append((pending, key, stem.with_suffix(".png")))
            return pending  # type: ignore[return-value]  # shown as HTML once drawn
        if kept is None:
            shown = self.figure(analysis.figure(name), text, name, collapsed=fold)
            if key:
                self._drawn.append((key, self.figures_dir / f"{self.figures}-{name}.png", self._last_png))
            return shown
        caption = self.caption(text)  # drawn by an earlier report of the same content: its PNGs, byte for byte
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        (self.figures_dir / f"{self.figures}-{name}.png").write_bytes(kept[0])
        return self._embedded(kept[1], caption, text, fold)

    def table(self, table, flagged: list[str] | None = None, summary: str | None = None, main: bool = True) -> HTML:
        """A table on this page, sized to its scale: `render.campaign.scaled_table` (at a campaign's, `main` tables
        paged at 5 rows, flagged rows first; the others one click away with their row and flagged counts)."""
        return scaled_table(table, self.campaign, flagged, summary, main)

    def finish(self) -> list[Path]:
        """Wait until every figure's files are in `figures/` (call once, at the end of the notebook); keep the
        figures of an analysis drawn here for the next report of the same content (`render.figure_store`); fill in
        the figures drawn in the background."""
        drawing, self._drawing = self._drawing, []
        for pending, key, path in drawing:
            pending.fill()
            self._drawn += [(key, path, pending.png)] if key else []
        written = self._writer.wait()
        drawn, self._drawn = self._drawn, []
        for key, path, page in drawn:
            figure_store.keep(key, path, page)
        return written

    def save_latex(self, latex: str, name: str) -> Path:
        """Write a LaTeX table (`latex.latex_table(...)`) as `<tables_dir>/<name>.tex`."""
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        path = self.tables_dir / f"{name}.tex"
        path.write_text(latex, encoding="utf-8")
        return path

    def since(self, changes: Changes | None, convention: str = "standard") -> HTML:
        """The "Since <previous report>" section (`render.changes.since_section`), its table written to
        tables/changes.csv; nothing without a previous report (`changes` None: `context["previous"]` unset)."""
        if changes is not None:
            self.save_table(changes.table, "changes")
        return since_section(changes, convention)

    def save_table(self, table: pd.DataFrame, name: str) -> Path:
        """Write a tidy table as `<tables_dir>/<name>.csv` (numbers at full precision; the per-topic table
        gzip-compressed, `topics.csv.gz`: `csv_writer.table_file`)."""
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        path = self.tables_dir / table_file(name)
        write_csv(table, path)
        return path


def significant_topics(topics: pd.DataFrame, critical: float, min_delta: float = MIN_TOPIC_DELTA) -> pd.DataFrame:
    """Per challenger and α, the topics that stand out as losses and gains by the rule of the topic figure
    (`risk.standing_out`: TJ_i beyond ±`critical`, Δ of the same sign and |Δ| ≥ `min_delta`), each with its Δ;
    riskiest challenger first (lowest URisk, the mean of x, at the largest α), those with none left out.
    `topics` is `risk.topic_risk`'s table (standard convention)."""
    columns = ["system", "alpha", "losses (topic: Δ)", "gains (topic: Δ)"]
    kind = standing_out(topics["delta"], topics["tj"], critical, min_delta)
    out = topics.assign(kind=kind)[kind != ""]
    if out.empty:
        return pd.DataFrame(columns=columns)
    out = out.assign(item=[f"{t}: {d:+.2f}" for t, d in zip(out["topic"], out["delta"])])
    grouped = out.groupby(["system", "alpha", "kind"], sort=False)["item"].agg(", ".join).unstack("kind")
    grouped = grouped.reindex(columns=["loss", "gain"]).fillna("").reset_index()
    grouped.columns = columns
    urisk = topics.groupby(["system", "alpha"])["x"].mean().rename("urisk").reset_index()
    order = {s: i for i, s in enumerate(riskiest_first(urisk))}
    return grouped.sort_values(["system", "alpha"], key=lambda c: c.map(order) if c.name == "system" else c)


def riskiest(risk: pd.DataFrame) -> str:
    """The challenger with the lowest URisk at the largest α (the default focus system)."""
    return str(riskiest_first(risk)[0])
