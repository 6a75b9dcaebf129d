"""Presentation helpers for templates: header, tables on the page and as CSV, provenance.

Templates call these so that notebooks hold prose and layout, not formulas. Every string
that comes from input files (system, topic and collection names) is HTML-escaped.
"""
from __future__ import annotations

import hashlib
import html
import os
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import pandas as pd

from .evaluation import file_digest
from .params import ReportParameters

PACKAGES = ("riskreport", "ir_measures", "pytrec_eval-terrier", "numpy", "pandas", "scipy", "statsmodels",
            "matplotlib", "seaborn", "papermill", "nbconvert")


def tables_dir() -> Path:
    """Where templates write CSV tables: $RISKREPORT_TABLES, else ./tables."""
    return Path(os.environ.get("RISKREPORT_TABLES", "tables"))


def save_table(table: pd.DataFrame, name: str) -> Path:
    """Write a tidy table as `tables/<name>.csv` (numbers at full precision)."""
    folder = tables_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.csv"
    table.to_csv(path, index=False, float_format="%.10g")
    return path


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def file_hashes(paths) -> dict[str, str]:
    """SHA-256 of every input file, keyed by its path."""
    return {str(path): file_digest(path) for path in paths}


def provenance(params: ReportParameters) -> dict:
    """What produced the numbers: collection, input hashes, versions, time."""
    hashes = file_hashes(params.collection.files())
    combined = hashlib.sha256("".join(f"{k}={v}\n" for k, v in sorted(hashes.items())).encode()).hexdigest()
    return {"collection": str(params.collection.path), "inputs_sha256": combined, "files": hashes,
            "versions": package_versions(), "generated_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "python": sys.executable}


class HTML:
    """Minimal rich-display object (avoids importing IPython at module import)."""

    def __init__(self, markup: str):
        self.markup = markup

    def _repr_html_(self) -> str:
        return self.markup


def header(params: ReportParameters, title: str | None = None) -> HTML:
    """Title block: collection, parameters and provenance of the report."""
    prov = provenance(params)
    col = params.collection
    title = title or f"Risk report: {col.title}"
    rows = [("Collection", f"{col.title} ({col.path})"), ("Measure", params.measure),
            ("Baseline", params.baseline), ("α grid", ", ".join(f"{a:g}" for a in params.alphas)),
            ("Systems", f"{len(params.systems)}: " + ", ".join(params.systems)),
            ("Significance level", f"{params.sig_level:g}"),
            ("Inputs (SHA-256 of all files)", prov["inputs_sha256"][:16] + "…"),
            ("Versions", ", ".join(f"{k} {v}" for k, v in prov["versions"].items() if k in
                                   ("riskreport", "ir_measures", "python"))),
            ("Generated (UTC)", prov["generated_utc"])]
    body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                   f"{html.escape(str(v))}</td></tr>" for k, v in rows)
    description = f"<p>{html.escape(col.description)}</p>" if col.description else ""
    return HTML(f"<h1>{html.escape(title)}</h1>{description}<table>{body}</table>")


def note(text: str) -> HTML:
    """A short paragraph (escaped)."""
    return HTML(f"<p>{html.escape(text)}</p>")


def styled(table: pd.DataFrame, precision: int = 5, highlight: dict[str, str] | None = None,
           caption: str | None = None):
    """A pandas Styler: escaped text, fixed precision, optional best-value highlight per column.

    `highlight` maps a column to "max" or "min".
    """
    style = table.style.format(precision=precision, escape="html", na_rep="–").hide(axis="index")
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


def check_convention(convention: str) -> str:
    """The report's sign convention, checked: `standard` or `minus`."""
    from .errors import ParameterError
    from .risk import CONVENTIONS
    if convention not in CONVENTIONS:
        raise ParameterError(f"convention must be one of {', '.join(CONVENTIONS)}, got {convention!r}.")
    return convention
