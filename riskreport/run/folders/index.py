"""The reports index: `index.json` and `index.html` at the top of a reports folder.

Both are rebuilt from the `params.json` of every report folder (`<collection>/<template>/<stamp>/`
of `riskreport run`, `jobs/<job>/<stamp>/` of `riskreport batch`), under a lock so that
concurrent writers cannot interleave, and renamed into place so that a reader never sees half
a file. Hidden folders (reports still being built) are not listed. Every name on the page
comes from files and is HTML-escaped.
"""

from __future__ import annotations

import html
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from riskreport.io.files import write_atomic
from riskreport.run.folders.index_jobs import (
    JOBS_STYLE,
    findings,
    found_cell,
    gate_mark,
    history,
    render_changed,
    sparkline,
)
from riskreport.run.folders.lock import locked

INDEX_LOCK = ".index.lock"
LOGS = "logs"


def collect_reports(reports_dir: str | os.PathLike) -> list[dict]:
    """One entry per report folder (complete or failed), newest first."""
    root = Path(reports_dir)
    entries = []
    for params_file in root.glob("*/*/*/params.json"):
        folder = params_file.parent
        relative = folder.relative_to(root)
        if folder.is_symlink() or any(part.startswith(".") for part in relative.parts):
            continue
        try:
            record = json.loads(params_file.read_text(encoding="utf-8"))
            entries.append(_entry(record, folder, relative))
        except (OSError, ValueError, AttributeError, TypeError):
            continue  # not a report folder of ours
    return sorted(entries, key=lambda e: (e["finished_utc"] or "", e["path"]), reverse=True)


def _entry(record: dict, folder: Path, relative: Path) -> dict:
    parameters = record.get("parameters") or {}
    latest = folder.parent / "latest"
    report = folder / "report.html"
    return {
        "job": record.get("job"),
        "collection": (record.get("collection") or {}).get("name"),
        "template": record.get("template"),
        "baseline": parameters.get("baseline"),
        "measure": parameters.get("measure"),
        "alphas": parameters.get("alphas"),
        "finished_utc": record.get("finished_utc"),
        "duration_s": record.get("duration_s"),
        "status": record.get("status", "unknown"),
        "error": record.get("error"),
        "latest": latest.is_symlink() and latest.resolve() == folder.resolve(),
        "path": relative.as_posix(),
        "report": (relative / report.name).as_posix() if report.is_file() else None,
        "fingerprint": record.get("fingerprint"),
        **findings(folder),
    }


def last_batch(root: Path) -> dict | None:
    """Every job of the newest batch with its status there, and the job's latest complete report.

    A job that failed (even before its template started) shows as failed, its error beside it,
    while its last good report stays linked and is marked as older than that run.
    """
    summaries = sorted((root / LOGS).glob("batch-*.json"))
    if not summaries:
        return None
    try:
        summary = json.loads(summaries[-1].read_text(encoding="utf-8"))
        jobs = summary["jobs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(jobs, list):
        return None
    entries = []
    for job in jobs:
        if not isinstance(job, dict) or not isinstance(job.get("name"), str):
            continue
        latest = root / "jobs" / job["name"] / "latest"
        good = None
        if latest.is_symlink() and (latest.resolve() / "params.json").is_file():
            try:
                record = json.loads((latest.resolve() / "params.json").read_text(encoding="utf-8"))
                good = {
                    "path": latest.resolve().relative_to(root.resolve()).as_posix(),
                    "finished_utc": record.get("finished_utc"),
                }
                good.update(findings(latest.resolve()))
            except (OSError, ValueError, AttributeError):
                good = None
        entries.append(
            {
                "job": job["name"],
                "changes": job.get("changes"),
                "status": job.get("status"),
                "message": job.get("message") or "",
                "duration_s": job.get("duration_s"),
                "latest_ok": good,
                "older": job.get("status") not in ("ok", "skipped"),
                "gate": [str(line) for line in job["gate"]] if isinstance(job.get("gate"), list) else [],
            }
        )
    return {"finished_utc": summary.get("finished_utc"), "log": f"{LOGS}/{summary.get('log')}", "jobs": entries}


def write_index(reports_dir: str | os.PathLike) -> Path:
    """Rebuild `index.json` and `index.html` of a reports folder atomically; return the HTML path."""
    root = Path(reports_dir)
    root.mkdir(parents=True, exist_ok=True)
    with locked(root / INDEX_LOCK):
        index: dict[str, Any] = {
            "generated_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "reports": collect_reports(root),
        }
        logs = sorted((root / LOGS).glob("batch-*.log"))
        index["last_batch_log"] = logs[-1].relative_to(root).as_posix() if logs else None
        index["last_batch"] = last_batch(root)
        index["history"] = history(index["reports"])
        write_atomic(root / "index.json", json.dumps(index, indent=2) + "\n")
        write_atomic(root / "index.html", render_html(index))
    return root / "index.html"


STYLE = (
    """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; font-size: 14px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap; }
th { background: #f3f3f3; }
td.num { text-align: right; }
.ok, .skipped { color: #1a7f37; font-weight: 600; }
.failed, .timeout, .interrupted { color: #c62828; font-weight: 600; }
.latest { background: #e8f4ea; border-radius: 3px; padding: 0 4px; font-size: 12px; }
.muted { color: #777; }
.error { color: #c62828; font-weight: normal; font-size: 12px; white-space: normal; max-width: 28em; }
"""
    + JOBS_STYLE
)


def render_html(index: dict) -> str:
    """The index page: one row per report, newest first; every value escaped."""
    e = lambda value: html.escape("" if value is None else str(value))  # noqa: E731
    rows = []
    for r in index["reports"]:
        link = f"<a href='{e(quote(r['report']))}'>report</a>" if r["report"] else "<span class='muted'>–</span>"
        link += f" <a class='muted' href='{e(quote(r['path'] + '/params.json'))}'>params</a>"
        when = _when(r["finished_utc"])
        badge = " <span class='latest'>latest</span>" if r["latest"] else ""
        if r.get("error"):
            badge += f"<div class='error'>{e(_shorten(r['error']))}</div>"
        rows.append(
            f"<tr><td>{e(when)}</td><td>{e(r['job']) or '<span class=muted>–</span>'}</td>"
            f"<td>{e(r['collection'])}</td><td>{e(r['template'])}</td><td>{e(r['baseline'])}</td>"
            f"<td>{e(r['measure'])}</td><td>{e(_alphas(r['alphas']))}</td>"
            f"<td class='num'>{e(_duration(r['duration_s']))}</td>"
            f"<td class='{e(r['status'])}'>{e(r['status'])}{badge}</td><td>{found_cell(r.get('found'), compact=True)}</td>"
            f"<td>{render_changed(r.get('changed'), r['path'] if r['report'] else None)}</td><td>{link}</td></tr>"
        )
    counts: dict[str, int] = {}
    for r in index["reports"]:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = ", ".join(f"{n} {e(status)}" for status, n in sorted(counts.items())) or "no reports yet"
    batch = _render_batch(index.get("last_batch"), e, index.get("history") or {})
    log = (
        f" Last batch log: <a href='{e(quote(index['last_batch_log']))}'>{e(index['last_batch_log'])}</a>."
        if index.get("last_batch_log")
        else ""
    )
    head = (
        "<tr><th>finished (UTC)</th><th>job</th><th>collection</th><th>template</th><th>baseline</th>"
        "<th>measure</th><th>α grid</th><th>duration</th><th>status</th><th title='challengers at risk, rewarded, inconclusive at the largest α'>found</th>"
        "<th>changed</th><th>link</th></tr>"
    )
    n = len(index["reports"])
    listing = f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    if n > ALL_OPEN:  # many jobs' histories: the per-job table above is the page, every report one click away
        listing = f"<details><summary>All reports ({n}), newest first</summary>{listing}</details>"
    else:
        listing = f"<h2>All reports</h2>{listing}"
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>riskreport: reports</title>"
        f"<style>{STYLE}</style></head><body><h1>Reports</h1>"
        f"<p>{len(index['reports'])} report(s): {summary}. "
        f"Generated {e(_when(index['generated_utc']))} UTC.{log}</p>{batch}"
        f"{listing}</body></html>\n"
    )


ALL_OPEN = 100  # more reports than this: the table of all reports is folded


def _render_batch(batch: dict | None, e, histories: dict) -> str:
    """The 'Last batch' table: one row per job of the newest batch, its status, its latest good report, what that
    report found, the verdicts changed since the job's previous report, and the job's history figure."""
    if not batch or not batch.get("jobs"):
        return ""
    rows = []
    for job in batch["jobs"]:
        good = job.get("latest_ok")
        if good:
            link = f"<a href='{e(quote(good['path'] + '/report.html'))}'>report</a> {e(_when(good['finished_utc']))}"
            if job["older"]:
                link += " <span class='muted'>(older: the last run did not produce a report)</span>"
        else:
            link = "<span class='muted'>no complete report</span>"
        status = _job_status(job)
        message = f"<div class='error'>{e(_shorten(job['message']))}</div>" if job["older"] and job["message"] else ""
        message += gate_mark(job.get("gate") or [])
        rows.append(
            f"<tr><td>{e(job['job'])}</td><td class='{e(status)}'>{e(status)}{message}</td>"
            f"<td class='num'>{e(_duration(job.get('duration_s')))}</td><td>{link}</td>"
            f"<td>{found_cell((good or {}).get('found'))}</td>"
            f"<td>{render_changed((good or {}).get('changed'), (good or {}).get('path'))}</td>"
            f"<td>{sparkline(histories.get(job['job']) or [])}</td></tr>"
        )
    counts: dict[str, int] = {}
    for job in batch["jobs"]:
        counts[_job_status(job)] = counts.get(_job_status(job), 0) + 1
    tally = ", ".join(f"{n} {e(status)}" for status, n in sorted(counts.items()))
    return (
        f"<h2>Last batch</h2><p>{len(batch['jobs'])} job(s): {tally}. "
        f"Finished {e(_when(batch.get('finished_utc')))} UTC "
        f"(<a href='{e(quote(batch['log']))}'>log</a>).</p><p class='muted'>found: challengers ▼ at risk, ▲ "
        "rewarded and ○ inconclusive at the largest α of the job's latest complete report; ⛔ gate: the job's report "
        "tripped the risk gate (--fail-on, its fail_on; hover for its lines); verdicts changed: since "
        "the job's previous report (a link to that report's section); history: challengers at risk in each report "
        "of the job, oldest left (hover for the date), then how many now and the number of reports.</p><table><thead><tr><th>job</th><th>status</th>"
        f"<th>duration</th><th>latest complete report</th><th>found</th><th>verdicts changed</th><th>history</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _job_status(job: dict) -> str:
    """A job's status as the index shows it: an error before the template started is a failure too."""
    return "failed" if job["status"] in ("failed", "error") else str(job["status"])


def _when(iso: str | None) -> str:
    return (iso or "").replace("T", " ").replace("+00:00", "")


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _alphas(alphas) -> str:
    try:
        return ", ".join(f"{float(a):g}" for a in alphas)
    except (TypeError, ValueError):
        return str(alphas)


def _duration(seconds) -> str:
    return f"{seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
