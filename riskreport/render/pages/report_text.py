"""The prose of a report built from its parameters and results: the title block with its "how to read this report"
box (`header`), the notes on which baseline and measure were chosen (`choice_notes`), and the methods paragraph."""

from __future__ import annotations

import html
from datetime import datetime, timezone

import pandas as pd

from riskreport.io.provenance import package_versions
from riskreport.measures.params import ReportParameters
from riskreport.render.tabular.html import HTML

GUIDE = {
    "standard": "Δ is the per-topic difference challenger − baseline. Every risk measure is in the standard "
    "convention: higher is better, and a negative URisk, TRisk or ZRisk means the challenger loses "
    "to the baseline once each loss weighs 1 + α.",
    "minus": "Δ is the per-topic difference challenger − baseline. The risk measures are shown in the minus "
    "convention of Benham's thesis: positive values are risk (the challenger loses once each loss weighs "
    "r = 1 + α), lower is better. The CSV tables keep the standard convention.",
}


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
    generated_utc: str | None = None,
    campaign: bool = False,
) -> HTML:
    """Title block of a report on `params` whose input files have the digest `inputs_sha256` (`Page.header`);
    `generated_utc`: the report's time stamp (as its folder's name and provenance say; None: now)."""
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
        ("Generated (UTC)", generated_utc or datetime.now(timezone.utc).isoformat(timespec="seconds")),
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
        (
            "With this many challengers, every one a verdict flags is named above the verdict matrix; the main "
            "tables show 5 rows a page, the flagged systems first, and the other tables and most figures are "
            "collapsed, their titles saying how many rows they hold: "
            if campaign
            else "Tables of up to 25 rows are shown whole, longer ones paged with the systems a verdict flags on the "
            "first page; a few detail tables are collapsed: "
        )
        + "click a column header to sort, type in the search box to filter, click a collapsed title to open it "
        "(a printout opens everything). "
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
        defined = summary[summary["verdict"] != "undefined"]  # where the rule is n/a no method agrees with it
        cells = len(defined)
        split = defined["disagree"] != ""
        bca = defined["disagree"].str.contains(r"\bbca: ", regex=True)
        undefined = len(summary) - cells
        agreement = (
            f" In this report every method agrees with the rule in {cells - int(split.sum())} of {cells} "
            "challenger–α cells"
            + (f" where the rule is defined ({undefined} are n/a, SE = 0)" if undefined else "")
            + f"; BCa disagrees in {int(bca.sum())}"
            + (f" ({', '.join(sorted(set(defined.loc[bca, 'system'])))[:300]})" if bca.any() else "")
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
        elif params.measure in score_table_measures(col, params.table):
            why = f"the one measure of {col.scores_file().name}"
        else:
            why = "riskreport's default; choose another with --measure"
        notes.append(f"No measure was given: {params.measure} is {why}.")
    return notes
