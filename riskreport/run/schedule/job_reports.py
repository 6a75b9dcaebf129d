"""The folder of one batch job's reports: its latest complete report (`last_success`), why the job runs again
(`why_run`), keeping only the newest reports (`prune`) and clearing what killed runs left behind."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from riskreport.measures.evaluation import Progress
from riskreport.render.plotting.figures import DEFAULT_FORMATS
from riskreport.run.report.runner import ReportPlan, job_folder
from riskreport.run.schedule.jobs import Job


def last_success(reports_dir: Path, job: str) -> dict | None:
    """params.json of the job's latest complete report (what `latest` points at), if any."""
    params = job_folder(reports_dir, job) / "latest" / "params.json"
    try:
        record = json.loads(params.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("status") == "ok" else None


def why_run(plan: ReportPlan, previous: dict | None) -> str:
    """What changed since the last complete report: the reason a job is run."""
    if previous is None:
        return "no complete report yet"
    reasons = []
    if previous.get("template_sha256") != plan.record["template_sha256"]:
        reasons.append("template changed")
    old = (previous.get("collection") or {}).get("files_sha256") or {}
    new = plan.record["collection"]["files_sha256"]
    files = sorted(Path(f).name for f in set(old) | set(new) if old.get(f) != new.get(f))
    if files:
        reasons.append("input files changed: " + ", ".join(files[:3]) + (", ..." if len(files) > 3 else ""))
    old_parameters = previous.get("parameters") or {}
    changed = sorted(
        k for k in set(old_parameters) | set(plan.effective) if old_parameters.get(k) != plan.effective.get(k)
    )
    if changed:
        reasons.append("parameters changed: " + ", ".join(changed))
    versions = sorted(k for k, v in plan.record["versions"].items() if (previous.get("versions") or {}).get(k) != v)
    if versions:
        reasons.append("versions changed: " + ", ".join(versions))
    if previous.get("show_code") != plan.record["show_code"]:
        reasons.append("show_code changed")
    if (previous.get("figure_formats") or list(DEFAULT_FORMATS)) != plan.record["figure_formats"]:
        reasons.append("figure_formats changed")
    return "; ".join(reasons) or "fingerprint changed"


def prune(folder: Path, keep: int) -> list[Path]:
    """Delete all but the `keep` newest complete and the `keep` newest failed reports in `folder`.

    The report `latest` points at is never deleted. Returns the deleted folders.
    """
    latest = (folder / "latest").resolve() if (folder / "latest").is_symlink() else None
    by_status: dict[str, list[tuple[str, Path]]] = {}
    for params in folder.glob("*/params.json"):
        report = params.parent
        if report.is_symlink() or report.name.startswith("."):
            continue
        try:
            record = json.loads(params.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        by_status.setdefault(record.get("status"), []).append((record.get("finished_utc") or "", report))
    doomed = [
        report
        for reports in by_status.values()
        for _, report in sorted(reports, key=lambda r: (r[0], r[1].name), reverse=True)[keep:]
        if report.resolve() != latest
    ]
    for report in doomed:  # renamed away first: the index never lists a half-deleted report
        trash = Path(tempfile.mkdtemp(prefix=f".old-{report.name}-", dir=folder))
        os.replace(report, trash / report.name)
        shutil.rmtree(trash, ignore_errors=True)
    return doomed


def prune_job(reports: Path, job_list: list[Job], name: str, say: Progress) -> None:
    job = next(j for j in job_list if j.name == name)
    if job.keep is not None:
        deleted = prune(job_folder(reports, name), job.keep)
        if deleted:
            say(f"{name}: keep = {job.keep}, deleted {', '.join(p.name for p in deleted)}")


def clear_leftovers(folder: Path) -> None:
    """Remove what killed runs of this job left behind (hidden build, trash and link folders).

    Safe because the batch lock is held: no other process writes into a job's folder.
    """
    if not folder.is_dir():
        return
    for leftover in folder.iterdir():
        if leftover.name.startswith((".tmp-", ".old-", ".latest-")):
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
