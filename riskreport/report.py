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

from .errors import ParameterError
from .params import ReportParameters
from .provenance import file_hashes, inputs_digest, package_versions

CONTEXT_KEYS = ("tables_dir", "inputs_sha256", "workers")


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
    `tables_dir`, the `inputs_sha256` of the files it hashed while planning, and the `workers`
    (threads) a bootstrap may use; run by hand (None), tables go to ./tables, the inputs are
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
        self.figures = 0

    def header(self, params: ReportParameters, title: str | None = None, convention: str = "standard",
               guide: str | None = None) -> HTML:
        """Title block: collection and parameters, a "how to read this report" box, the table of contents slot."""
        digest = self.inputs_sha256 or inputs_digest(file_hashes(params.collection.files()))
        return header(params, digest, title, convention, guide)

    def caption(self, text: str) -> HTML:
        """The next numbered figure caption of this page."""
        self.figures += 1
        return HTML(f"<p class='rr-caption'><strong>Figure {self.figures}.</strong> {html.escape(text)}</p>")

    def save_table(self, table: pd.DataFrame, name: str) -> Path:
        """Write a tidy table as `<tables_dir>/<name>.csv` (numbers at full precision)."""
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        path = self.tables_dir / f"{name}.csv"
        table.to_csv(path, index=False, float_format="%.10g")
        return path


def header(params: ReportParameters, inputs_sha256: str, title: str | None = None, convention: str = "standard",
           guide: str | None = None) -> HTML:
    """Title block of a report on `params` whose input files have the digest `inputs_sha256` (`Page.header`)."""
    col = params.collection
    versions = package_versions()
    title = title or f"Risk report: {col.title}"
    shown = ", ".join(params.systems[:20]) + (f", … ({len(params.systems) - 20} more)" if len(params.systems) > 20 else "")
    rows = [("Collection", f"{col.title} ({col.path})"), ("Measure", params.measure),
            ("Baseline", params.baseline), ("α grid", ", ".join(f"{a:g}" for a in params.alphas)),
            ("Systems", f"{len(params.systems)}: {shown}"),
            ("Significance level", f"{params.sig_level:g}"),
            ("Inputs (SHA-256 of all files)", inputs_sha256[:16] + "…"),
            ("Versions", ", ".join(f"{k} {v}" for k, v in versions.items() if k in
                                   ("riskreport", "ir_measures", "python"))),
            ("Generated (UTC)", datetime.now(timezone.utc).isoformat(timespec="seconds"))]
    body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                   f"{html.escape(str(v))}</td></tr>" for k, v in rows)
    description = f"<p>{html.escape(col.description)}</p>" if col.description else ""
    points = [guide or GUIDE.get(convention, GUIDE["standard"]),
              "▲ and ▼ mark a challenger significantly better or worse than the baseline after the "
              "multiple-comparison correction; green cells are rewards, orange cells risks, unmarked cells "
              "inconclusive; the best value of a column is in bold.",
              "Each section opens with a “How to read this” line; figures are numbered, with a caption "
              "beneath, and their axes say which direction is a loss.",
              "Tables on this page are rounded and may be summarised; every number is in the report's "
              "tables/*.csv at full precision. Provenance (input hashes, versions, parameters, run time) "
              "is at the end of the page."]
    guide_html = ("<div class='rr-howto'><h3>How to read this report</h3><ul>"
                  + "".join(f"<li>{html.escape(point)}</li>" for point in points) + "</ul></div>")
    return HTML(f"<h1>{html.escape(title)}</h1>{description}<table>{body}</table>{guide_html}"
                f'<div class="rr-toc-slot"></div>')


def figure_systems(risk: pd.DataFrame, limit: int) -> list[str]:
    """The challengers drawn in figures: all of them, or the `limit` with the lowest URisk at the largest α."""
    at_max = risk[risk["alpha"] == risk["alpha"].max()].sort_values(["urisk", "system"])
    systems = at_max["system"].tolist()
    return systems if len(systems) <= limit else systems[:limit]


def figure_note(shown: list[str], total: int) -> HTML:
    """Says when figures show only some systems."""
    if len(shown) >= total:
        return HTML("")
    return note(f"Figures show the {len(shown)} riskiest of the {total} challengers (lowest URisk at the largest α); "
                "tables and CSVs cover all of them.")


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
    from .trec import read_qrels
    col = params.collection
    rows = [("systems in the report", len(params.systems)), ("topics (with ≥ 1 relevant document)", len(scores.topics))]
    if col.qrels is not None:
        qrels = read_qrels(col.qrels)
        rows += [("judgments", len(qrels)), ("relevant judgments (relevance > 0)", int((qrels["relevance"] > 0).sum())),
                 ("judged topics without relevant documents (excluded)",
                  qrels["query_id"].nunique() - len(scores.topics))]
    rows += [("system–topic pairs missing from runs (scored 0)", len(scores.missing)),
             ("run topics absent from the qrels (dropped)", len(scores.extra))]
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


def risk_summary(risk: pd.DataFrame, convention: str = "standard", caption: str | None = None):
    """Risk table per α for the page: URisk, TRisk, p, verdict mark, wins/losses, FRisk/FReward, losses > 20%.

    `risk` is `risk.risk_table(...)` (standard convention); shown in `convention`.
    """
    from .risk import to_convention
    shown = to_convention(risk, convention)
    shown["sig"] = shown["verdict"].map({"risk": "▼ risk", "reward": "▲ reward", "undefined": "n/a"}).fillna("")
    columns = ["system"] + (["r"] if convention == "minus" else []) + [
        "alpha", "urisk", "trisk", "p_value", "sig", "wins", "losses", "ties", "frisk", "freward", "risk_reward",
        "loss20"]
    style = styled(shown[columns].rename(columns={"loss20": "losses > 20%", "risk_reward": "FRisk/FReward"}),
                   caption=caption)
    return style.apply(lambda column: ["background-color: #fde0d2" if v == "▼ risk" else
                                       "background-color: #d9f0e3" if v == "▲ reward" else "" for v in column],
                       subset=["sig"])


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
    at_max = risk[risk["alpha"] == risk["alpha"].max()]
    return str(at_max.sort_values(["urisk", "system"]).iloc[0]["system"])


def ci_summary(boot: pd.DataFrame, method: str = "bca", convention: str = "standard", caption: str | None = None):
    """CI table per α: the `method` interval and verdict at every level, and the other methods' verdicts."""
    from .risk import to_convention
    shown = to_convention(boot, convention)
    main = shown[shown["method"] == method]
    wide = main.pivot_table(index=["system", "alpha"], columns="level", values=["ci_low", "ci_high"], aggfunc="first")
    wide.columns = [f"{'low' if name == 'ci_low' else 'high'} {level:g}" for name, level in wide.columns]
    wide = wide[sorted(wide.columns, key=lambda c: (float(c.split()[1]), c.split()[0] != "low"))]
    verdict = main.pivot_table(index=["system", "alpha"], columns="level", values="verdict", aggfunc="first")
    verdict.columns = [f"verdict {level:g}" for level in verdict.columns]
    first = shown["level"].min()
    others = shown[(shown["method"] != method) & (shown["level"] == first)].pivot_table(
        index=["system", "alpha"], columns="method", values="verdict", aggfunc="first")
    others.columns = [f"{m} ({first:g})" for m in others.columns]
    table = wide.join(verdict).join(others).reset_index().sort_values(["alpha", "system"])
    style = styled(table, caption=caption)
    marks = {"risk": "background-color: #fde0d2", "reward": "background-color: #d9f0e3"}
    verdict_columns = [c for c in table.columns if c.startswith("verdict") or c.endswith(f"({first:g})")]
    return style.map(lambda v: marks.get(v, ""), subset=verdict_columns)


def tests_summary(tests: pd.DataFrame, sig_level: float, caption: str | None = None):
    """Adjusted p-values per challenger, α and test; significant cells marked."""
    wide = tests.pivot_table(index=["system", "alpha"], columns="test", values="p_adjusted", aggfunc="first")
    wide = wide[[t for t in ("t", "sign", "wilcoxon", "randomisation") if t in wide.columns]].reset_index()
    wide = wide.sort_values(["alpha", "system"])
    tests_columns = [c for c in wide.columns if c not in ("system", "alpha")]
    style = styled(wide.rename(columns={c: f"p_{c}" for c in tests_columns}), caption=caption)
    return style.map(lambda v: "font-weight: bold; background-color: #fff3b0" if isinstance(v, float) and v < sig_level
                     else "", subset=[f"p_{c}" for c in tests_columns])


def methods_paragraph(correction: str, levels, samples: int, seed: int, sig_level: float, n_challengers: int,
                      n_topics: int, diagnostics: pd.DataFrame) -> HTML:
    """The "methods" paragraph: which test and correction the report used, and why (thesis Fig. 3.8 logic).

    `diagnostics` is `inference.diagnostics_table(...)`: how many challenger–α combinations are skewed.
    """
    skewed, total = int((diagnostics["skewness"].abs() > 1).sum()), len(diagnostics)
    names = {"holm": "Holm's step-down method", "bonferroni": "the Bonferroni correction",
             "bh": "the Benjamini–Hochberg false discovery rate procedure", "none": "no correction"}
    widened = (f" Under Bonferroni each interval's level is widened to 1 − (1 − level)/{n_challengers}."
               if correction == "bonferroni" else "")
    text = (f"The comparisons are paired: every challenger and the baseline are scored on the same {n_topics} topics, "
            f"so each analysis works on per-topic differences. After risk adjustment (losses weighted by 1 + α) these "
            f"differences are asymmetric — {skewed} of {total} challenger–α combinations have |skewness| > 1 — so "
            f"symmetric procedures (the t interval, and the Wilcoxon signed-rank test, which assumes a symmetric "
            f"distribution of differences) can mislead as α grows. The verdicts of this report therefore rest on "
            f"bias-corrected and accelerated (BCa) bootstrap intervals of URisk ({samples:,} resamples, seed {seed}, "
            f"levels {', '.join(f'{lv:g}' for lv in levels)}), which adapt to skew; the t, sign, Wilcoxon and "
            f"randomisation tests are reported alongside. p-values are adjusted across the {n_challengers} "
            f"challengers with {names[correction]} at significance level {sig_level:g}.{widened} "
            f"A verdict is 'risk' when the interval lies entirely below 0, 'reward' when entirely above, "
            f"and 'inconclusive' otherwise.")
    return HTML(f"<p>{html.escape(text)}</p>")


# Non-deterministic systems (templates/nondeterministic.ipynb; riskreport.mixed)

VERDICT_STYLES = {"equivalent": "background-color: #d9f0e3", "better": "background-color: #b7e1c4",
                  "not_worse": "background-color: #eef6e8", "worse": "background-color: #fde0d2",
                  "risk": "background-color: #fde0d2", "reward": "background-color: #d9f0e3"}


def mixed_summary(mixed: pd.DataFrame, sig_level: float, caption: str | None = None):
    """The mixed model's system effects for the page: effect, SE, both intervals, p, verdict, fitting method.

    `mixed` is `riskreport.mixed.mixed_table(...)` (standard convention: > 0 is better).
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
    """Single-instance paired t-tests per system (from `riskreport.instances.single_instance_tests`), shares as %."""
    shares = [c for c in tests.columns if c.startswith("share_p")]
    shown = tests.rename(columns={c: f"significant at {int(c[7:]) / 100:g}" for c in shares})
    return styled(shown, caption=caption).format("{:.0%}", subset=[f"significant at {int(c[7:]) / 100:g}"
                                                                    for c in shares])


def nondeterministic_methods(mixed: pd.DataFrame, baseline: str, measure: str, sig_level: float) -> HTML:
    """The methods paragraph of the non-deterministic template (Jayasinghe et al. 2014; SPEC §5)."""
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
