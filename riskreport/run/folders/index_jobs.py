"""What the reports index says each report and job found: the headline of a report's summary.json (challengers
at risk, rewarded and inconclusive at its largest α), the verdicts changed since the job's previous report
(linked to the report's "Since …" section), and a small history figure per job (inline SVG: challengers at
risk in each of its reports, oldest left). Sized for 50 jobs × 100 reports: one row per job, a figure of
at most `HISTORY` bars."""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import quote

from riskreport.run.folders.summary import read_summary

HISTORY = 100  # reports per job in its history figure (the newest)
JOBS_STYLE = """
.found .risk { color: #c62828; font-weight: 600; }
.found .reward { color: #1a7f37; font-weight: 600; }
.changed { color: #b35900; font-weight: 600; }
.gate { color: #fff; background: #c62828; border-radius: 3px; padding: 0 4px; font-size: 12px; font-weight: 600; }
svg.history { vertical-align: middle; }
details > summary { cursor: pointer; font-size: 1.2em; font-weight: 600; margin: 1em 0 0.5em; }
"""


def findings(folder: Path) -> dict:
    """`found` (counts at the largest α, or None: no summary.json or no verdicts) and `changed` (verdicts changed
    since the previous report, None without a comparison) of the report in `folder`."""
    summary = read_summary(folder) or {}
    headline = summary.get("headline")
    found = None
    if isinstance(headline, dict):
        found = {
            "alpha": headline.get("alpha"),
            **{k: len(headline.get(k) or []) for k in ("risk", "reward", "inconclusive")},
        }
    changes = summary.get("changes")
    return {"found": found, "changed": changes.get("verdicts_changed") if isinstance(changes, dict) else None}


def history(reports: list[dict]) -> dict[str, list[list]]:
    """Per job, its complete reports with findings, oldest first (the newest `HISTORY`): [finished, at risk, path]."""
    jobs: dict[str, list[list]] = {}
    for r in sorted(reports, key=lambda r: (r["finished_utc"] or "", r["path"])):
        if r.get("job") and r.get("status") == "ok" and r.get("found"):
            jobs.setdefault(r["job"], []).append([r["finished_utc"], r["found"]["risk"], r["path"]])
    return {job: points[-HISTORY:] for job, points in jobs.items()}


def found_cell(found: dict | None, compact: bool = False) -> str:
    """'2 ▼ risk · 1 ▲ reward · 7 ○ (α 10)' (○: inconclusive; escaped HTML), or a dash; `compact`: '2 ▼ · 1 ▲ · 7 ○'."""
    if not found:
        return "<span class='muted'>–</span>"
    alpha = found.get("alpha")
    at = f" <span class='muted'>(α {alpha:g})</span>" if isinstance(alpha, (int, float)) else ""
    if compact:
        return (
            f"<span class='found' title='at risk, rewarded, inconclusive at α = {alpha}'>"
            f"<span class='{'risk' if found['risk'] else 'muted'}'>{found['risk']} ▼</span> · "
            f"<span class='{'reward' if found['reward'] else 'muted'}'>{found['reward']} ▲</span> · "
            f"{found['inconclusive']} ○</span>"
        )
    return (
        f"<span class='found'><span class='{'risk' if found['risk'] else 'muted'}'>{found['risk']} ▼ risk</span> · "
        f"<span class='{'reward' if found['reward'] else 'muted'}'>{found['reward']} ▲ reward</span> · "
        f"{found['inconclusive']} ○{at}</span>"
    )


def gate_mark(lines: list[str]) -> str:
    """The mark of a job whose report tripped the risk gate: '⛔ gate: 2 risk' (its lines as the tooltip)."""
    if not lines:
        return ""
    tip = html.escape("\n".join(lines), quote=True)
    return f" <span class='gate' title='{tip}'>⛔ gate: {len(lines)} risk</span>"


def render_changed(changed: int | None, path: str | None) -> str:
    """Verdicts changed since the previous report, linked to the report's "Since …" section."""
    if changed is None or path is None:
        return "<span class='muted'>–</span>"
    if not changed:
        return "<span class='muted'>none</span>"
    return f"<a class='changed' href='{html.escape(quote(path + '/report.html'))}#since'>{changed} changed</a>"


def sparkline(points: list[list], height: int = 22) -> str:
    """An inline SVG of bars, one per report (oldest left), as tall as its challengers at risk (red; a grey tick
    for none), each with a tooltip; the newest report's bar is darker. At most 200 px wide."""
    if not points:
        return "<span class='muted'>–</span>"
    width = max(1, min(8, 200 // len(points) - 1))
    top = max(max(p[1] for p in points), 1)
    bars = []
    for n, (finished, risky, _) in enumerate(points):
        h = max(round((height - 2) * risky / top), 1 if risky else 0)
        colour = ("#8e0000" if n == len(points) - 1 else "#e57373") if risky else "#bbb"
        y, bar = (height - h, h) if risky else (height - 1, 1)
        when = html.escape((finished or "").replace("T", " ").replace("+00:00", ""))
        bars.append(
            f"<rect x='{n * (width + 1)}' y='{y}' width='{width}' height='{bar}' fill='{colour}'>"
            f"<title>{when}: {risky} at risk</title></rect>"
        )
    total = len(points) * (width + 1)
    label = f"challengers at risk in the last {len(points)} report(s): {', '.join(str(p[1]) for p in points[-5:])} (newest last)"
    return (
        f"<svg class='history' role='img' aria-label='{html.escape(label)}' width='{total}' height='{height}' "
        f"viewBox='0 0 {total} {height}'>{''.join(bars)}</svg> "
        f"<span class='muted'>{points[-1][1]} now · {len(points)}</span>"
    )
