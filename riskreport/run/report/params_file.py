"""params.json of a report folder: the plan's record (template, parameters, input hashes, versions, fingerprint)
with what the run added (job, status, error, duration, finish time, files, phases, the report compared with)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path

from riskreport.run.report.plan import ReportPlan


def generated_at(started: float) -> datetime:
    """A report's one time stamp (its folder's name, the page's header and provenance, params.json's
    `generated_utc`): when its run started, to the second, in UTC."""
    return datetime.fromtimestamp(int(started), timezone.utc)


def write_params(
    work: Path,
    plan: ReportPlan,
    started: float,
    status: str,
    job: str | None,
    error: str | None = None,
    files: list[str] | None = None,
    phases: dict | None = None,
    previous: dict | None = None,
) -> dict:
    """Write params.json; `files` lists what the report folder holds (what riskreport may replace later),
    `phases` the seconds spent evaluating runs, executing the notebook and exporting the HTML, `previous`
    the report it was compared with (`changes.previous_of`)."""
    record = {
        **plan.record,
        "job": job,
        "status": status,
        **({"error": error} if error else {}),
        "fingerprint": plan.fingerprint,
        "generated_utc": generated_at(started).isoformat(),
        "duration_s": round(time.time() - started, 3),
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **({"files": sorted(set(files))} if files is not None else {}),
        **({"phases_s": {k: round(v, 3) for k, v in phases.items()}} if phases else {}),
        **({"previous": previous} if previous else {}),
    }
    (work / "params.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record
