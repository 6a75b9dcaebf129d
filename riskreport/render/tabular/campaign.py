"""What a report page shows at a campaign's scale (more challengers than a table shows whole, `WHOLE_ROWS`):
every challenger a verdict flags named in a few lines (`flagged_list`), and tables sized to the page
(`scaled_table`, `report.Page.table`). A demo-sized page shows every table whole and every figure open."""

from __future__ import annotations

import html

import pandas as pd

from riskreport.render.tabular.html import HTML, WHOLE_ROWS, _alpha_label, interactive, note, styled, styler_html
from riskreport.render.tabular.tables import _key
from riskreport.stats.rankings import riskiest_first

__all__ = ["CAMPAIGN_ROWS", "WHOLE_ROWS", "flagged_by_alpha", "flagged_list", "scaled_table"]


def flagged_by_alpha(
    summary: pd.DataFrame, verdicts: pd.DataFrame | None = None, convention: str = "standard"
) -> pd.DataFrame:
    """Every challenger a verdict flags, once per kind: columns `baseline, kind, flagged_by, alpha, system`, where
    `alpha` is the smallest α at which it is so flagged and `flagged_by` is `rule` (the report's rule: ▼ risk,
    ▲ reward) or `most methods` (more than half of the methods of `verdicts`, `significance.report_verdicts`' first
    table, say risk or reward, and the rule never says so at any α). Riskiest first within each α (the summary's
    order)."""
    order = {s: i for i, s in enumerate(dict.fromkeys(summary["system"]))}
    key = _key(summary, summary)
    hits = [summary.loc[summary["verdict"].isin(["risk", "reward"]), [*key, "verdict"]].assign(flagged_by="rule")]
    if verdicts is not None and len(verdicts):
        counted = verdicts.assign(risk=verdicts["verdict"] == "risk", reward=verdicts["verdict"] == "reward")
        counts = counted.groupby(key, sort=False).agg(
            risk=("risk", "sum"), reward=("reward", "sum"), n=("risk", "size")
        )
        counts = counts.join(summary.set_index(key)["verdict"].rename("rule")).reset_index()
        for kind in ("risk", "reward"):
            most = counts[(2 * counts[kind] > counts["n"]) & (counts["rule"] != kind)]
            hits.append(most[key].assign(verdict=kind, flagged_by="most methods"))
    table = pd.concat(hits, ignore_index=True).rename(columns={"verdict": "kind"})
    if "baseline" not in table:
        table["baseline"] = ""
    first = table.sort_values("alpha", kind="stable").drop_duplicates(["baseline", "kind", "flagged_by", "system"])
    by_rule = first[first["flagged_by"] == "rule"].set_index(["baseline", "kind", "system"]).index
    first = first[
        (first["flagged_by"] == "rule") | ~first.set_index(["baseline", "kind", "system"]).index.isin(by_rule)
    ]
    first = first.assign(rank=first["system"].map(order))
    by = ["baseline", "flagged_by", "kind", "alpha", "rank"]
    ordered = first.sort_values(by, key=lambda c: c.map(_KIND_ORDER) if c.name in ("kind", "flagged_by") else c)
    return ordered[["baseline", "kind", "flagged_by", "alpha", "system"]].reset_index(drop=True)


_KIND_ORDER = {"risk": 0, "reward": 1, "rule": 0, "most methods": 1}


def flagged_list(summary: pd.DataFrame, verdicts: pd.DataFrame | None = None, convention: str = "standard") -> HTML:
    """Which challengers are flagged, and from which α, in a few lines that need no click whatever the number of
    systems (`flagged_by_alpha`): a line per kind and smallest α, e.g. "▼ risk from α = 5 (21): a, b, c", each
    challenger named once per kind; then those that most methods flag where the rule does not."""
    table = flagged_by_alpha(summary, verdicts, convention)
    total = summary["system"].nunique()
    several = summary["baseline"].nunique() > 1 if "baseline" in summary else False
    items = []
    for (baseline, by), part in table.groupby(["baseline", "flagged_by"], sort=False):
        against = f" against {html.escape(str(baseline))}" if several else ""
        lines = []
        for (kind, alpha), names in part.groupby(["kind", "alpha"], sort=False)["system"]:
            mark = "▼" if kind == "risk" else "▲"
            lines.append(
                f"<li>{mark} <b>{kind}</b> from {html.escape(_alpha_label(alpha, convention))} ({len(names)}): "
                f"{html.escape(', '.join(map(str, names)))}</li>"
            )
        flagged = part["system"].nunique()
        head = (
            f"Flagged by the report's rule{against}: {flagged} of {total} challengers, each at the smallest α where"
            " it is flagged (every α: the matrix below)"
            if by == "rule"
            else f"Flagged by most methods at some α, never by the rule{against}: {flagged} of {total} challengers"
        )
        items.append(f"<p class='rr-flagged-head'>{head}</p><ul class='rr-flagged'>{''.join(lines)}</ul>")
    if table.empty:
        items.append(f"<p class='rr-flagged-head'>No challenger of {total} is flagged by any verdict.</p>")
    return HTML("<div class='rr-flagged-list'>" + "".join(items) + "</div>")


CAMPAIGN_ROWS = 5  # rows a page of a table shows at a campaign's scale (`scaled_table`): a 107-run page < 8,000 px


def scaled_table(
    table, campaign: bool, flagged: list[str] | None = None, summary: str | None = None, main: bool = True
) -> HTML:
    """A table (DataFrame or Styler) for a page of a demo's or a campaign's scale (`report.Page.table`). At a demo's
    scale whole up to `WHOLE_ROWS` rows, else paged with its `flagged` rows first (`interactive`). At a campaign's
    a `main` table pages at `CAMPAIGN_ROWS` rows, flagged rows first; any other table longer than that is one click
    away, its summary line saying how many rows it holds and how many are flagged (first when opened); a table of
    at most `CAMPAIGN_ROWS` rows and no flagged rows (one row per α) is shown as it is. `summary`: the table is
    collapsed under this line in any case."""
    data = table.data if hasattr(table, "data") else table
    if not campaign:
        return interactive(table, summary=summary, flagged=flagged)
    if summary is None and len(data) <= CAMPAIGN_ROWS and not flagged:
        return HTML(
            f"<div class='rr-small-table'>{styler_html(table if hasattr(table, 'data') else styled(table))}</div>"
        )
    if summary is None and not main and len(data) > CAMPAIGN_ROWS:
        names = {str(v) for v in data.iloc[:, 0]} if data.shape[1] else set()
        held = [s for s in dict.fromkeys(flagged or []) if s in names]
        caption = html.unescape(getattr(table, "caption", None) or "Table")
        summary = f"{caption} ({len(data)} rows" + (f"; the {len(held)} flagged first)" if held else ")")
    return interactive(table, page_size=CAMPAIGN_ROWS, summary=summary, flagged=flagged)


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
