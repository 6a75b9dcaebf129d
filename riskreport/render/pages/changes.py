"""The "Since <previous report>" section at the top of a report: what changed since the previous report of the
same job (or the report named with `--compare-with`), from `stats.changes.Changes`.

Verdicts that changed come first and are always shown in full (they are what a reader of a scheduled report
looks for); inputs, parameters, systems and effectiveness means follow in one table. With nothing changed
the section is one line saying so.
"""

from __future__ import annotations

import html

import pandas as pd

from riskreport.render.tabular.html import HTML, _signed, interactive, styled
from riskreport.stats.changes import Changes

SINCE_ANCHOR = "since"  # the index links each job's changed verdicts to report.html#since
ARROWS = {"risk": "▼ risk", "reward": "▲ reward"}


def since_section(changes: Changes | None, convention: str = "standard") -> HTML:
    """The section's HTML (heading, one line of counts, the changed verdicts, the other changes); nothing
    without a previous report (`changes` None)."""
    if changes is None:
        return HTML("")
    when = f", finished {changes.finished.replace('T', ' ').replace('+00:00', '')} UTC" if changes.finished else ""
    title = f"Since {html.escape(changes.previous)}{html.escape(when)}"  # listed in the contents, as a markdown h2
    head = f'<h2 id="{SINCE_ANCHOR}">{title}<a class="anchor-link" href="#{SINCE_ANCHOR}">¶</a></h2>'
    if changes.empty:
        return HTML(
            f"<section class='rr-since'>{head}<p>Nothing changed since the previous report: the same input files, "
            "parameters and systems, every verdict as it was and no effectiveness mean moved by more than its "
            "standard error (tables/changes.csv is empty).</p></section>"
        )
    counts = "; ".join(f"{kind}: {n}" for kind, n in changes.counts.items())
    parts = [
        head,
        f"<p><strong>{changes.verdicts_changed} verdict(s) changed</strong> "
        f"({html.escape(counts)}; every row: tables/changes.csv).</p>",
    ]
    table = changes.table
    for row in table[table["change"] == "collection"].itertuples(index=False):
        parts.append(
            f"<p class='rr-collection-changed'><strong>Another collection:</strong> the previous report is of "
            f"collection <code>{html.escape(row.before)}</code>, this one of <code>{html.escape(row.after)}</code>; "
            "its inputs, systems and verdicts are compared all the same.</p>"
        )
    verdicts = table[table["change"] == "verdict"]
    if len(verdicts):
        parts.append(styled(_verdict_frame(verdicts, convention), precision=4).to_html())
    others = table[table["change"] != "verdict"]
    if len(others):
        parts.append(
            interactive(
                styled(_other_frame(others), precision=4),
                summary=f"Other changes ({len(others)}): collection, input files, parameters, systems, "
                "effectiveness means",
            )._repr_html_()
        )
    return HTML(f"<section class='rr-since'>{''.join(parts)}</section>")


def _verdict_frame(rows: pd.DataFrame, convention: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "challenger": rows["system"],
            "baseline": rows["baseline"],
            "α": rows["alpha"].map(lambda a: f"{a:g}"),
            "verdict": rows["before"].map(lambda v: ARROWS.get(v, v))
            + " → "
            + rows["after"].map(lambda v: ARROWS.get(v, v)),
            f"URisk before ({convention})": _signed(rows["urisk_before"], convention),
            f"URisk after ({convention})": _signed(rows["urisk_after"], convention),
            "TRisk before": _signed(rows["trisk_before"], convention),
            "TRisk after": _signed(rows["trisk_after"], convention),
        }
    ).reset_index(drop=True)


def _other_frame(rows: pd.DataFrame) -> pd.DataFrame:
    what = rows["name"].where(rows["name"] != "", rows["system"])
    mean = rows["mean_before"].notna()
    before = rows["before"].where(~mean, rows["mean_before"].map(lambda v: f"{v:.4f}"))
    after = rows["after"].where(~mean, rows["mean_after"].map(lambda v: f"{v:.4f}"))
    se = rows["se"].map(lambda v: "" if pd.isna(v) else f"± {v:.4f}")
    return pd.DataFrame(
        {"change": rows["change"], "what": what, "before": before, "after": after, "SE": se}
    ).reset_index(drop=True)
