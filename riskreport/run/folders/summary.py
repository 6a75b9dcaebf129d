"""`summary.json`: what a report found, for machines (CI, dashboards, the index, notification hooks).

Every report folder holds one, written with params.json. Its schema is versioned (`SCHEMA_VERSION`) and
shipped as a JSON Schema (`SCHEMA_FILE`, riskreport/run/folders/summary.schema.json; docs/reports.md describes each
field): the report (template, job, status, time, collection), its effective parameters, the rule's verdict
per (challenger, baseline, α) with URisk, TRisk and the adjusted p-value, the headline (challengers at risk,
rewarded and inconclusive at the largest α) and the changes since the previous report (None without one).
A template without a verdicts table (e.g. bayesian_risk) has no verdicts and no headline.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd

from riskreport.io.files import write_atomic
from riskreport.io.provenance import inputs_digest

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("summary.schema.json")
SUMMARY = "summary.json"
HEADLINE = ("risk", "reward", "inconclusive")


def build_summary(folder: Path, record: dict) -> dict:
    """The summary of the report in `folder` (its tables/*.csv) whose params.json record is `record`."""
    from riskreport.run.folders.saved_tables import read_table

    tables = folder / "tables"
    verdicts = _verdict_rows(tables, read_table) if record.get("status") == "ok" else []
    changes_file = tables / "changes.csv"
    changes = read_changes(changes_file) if changes_file.is_file() and record.get("previous") else None
    collection = record.get("collection") or {}
    return {
        "schema_version": SCHEMA_VERSION,
        "report": {
            "template": record.get("template"),
            "job": record.get("job"),
            "status": record.get("status"),
            "finished_utc": record.get("finished_utc"),
            "collection": collection.get("name"),
            "inputs_sha256": inputs_digest(collection["files_sha256"]) if collection.get("files_sha256") else None,
            "html": "report.html",
        },
        "parameters": {k: v for k, v in (record.get("parameters") or {}).items() if k != "context"},
        "verdicts": verdicts,
        "headline": headline(verdicts),
        "changes": None if changes is None else _changes(changes, record["previous"]),
    }


def write_summary(folder: Path, record: dict) -> Path:
    """Write `folder/summary.json` (atomically) and return its path."""
    path = folder / SUMMARY
    write_atomic(path, json.dumps(build_summary(folder, record), indent=2, allow_nan=False) + "\n")
    return path


def read_summary(folder: str | os.PathLike) -> dict | None:
    """A report folder's summary.json, or None when it has none (an older report) or it cannot be read."""
    try:
        summary = json.loads((Path(folder) / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return summary if isinstance(summary, dict) and summary.get("schema_version") == SCHEMA_VERSION else None


def headline(verdicts: list[dict]) -> dict | None:
    """Challengers at risk, rewarded and inconclusive at the largest α: a challenger is at risk when its verdict
    is risk against any baseline, rewarded when reward against one and risk against none, else inconclusive."""
    if not verdicts:
        return None
    alpha = max(v["alpha"] for v in verdicts)
    found: dict[str, str] = {}
    for v in (v for v in verdicts if v["alpha"] == alpha):
        now = found.get(v["system"], "inconclusive")
        if v["verdict"] == "risk" or (v["verdict"] == "reward" and now != "risk"):
            now = v["verdict"]
        found[v["system"]] = now
    return {"alpha": alpha, **{kind: sorted(s for s, verdict in found.items() if verdict == kind) for kind in HEADLINE}}


def _verdict_rows(tables: Path, read_table) -> list[dict]:
    from riskreport.stats.significance import RULE

    if not (tables / "verdicts.csv").is_file():
        return []
    table = read_table(tables / "verdicts.csv")
    rule = table[table["method"] == RULE]
    risk_file = tables / "risk.csv"
    if risk_file.is_file():
        risk = read_table(risk_file)[["system", "baseline", "alpha", "urisk"]]
        rule = rule.merge(risk, on=["system", "baseline", "alpha"], how="left")
    else:
        rule = rule.assign(urisk=math.nan)
    return [
        {
            "system": str(r.system),
            "baseline": str(r.baseline),
            "alpha": float(r.alpha),
            "verdict": str(r.verdict),
            "urisk": _number(r.urisk),
            "trisk": _number(r.statistic),
            "p_adjusted": _number(r.p_adjusted),
        }
        for r in rule.itertuples(index=False)
    ]


def read_changes(path: Path) -> pd.DataFrame:
    """tables/changes.csv as written: text columns as text, the numbers (α, URisk, TRisk, means) as numbers."""
    from riskreport.stats.changes import CHANGE_COLUMNS

    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    text = {"change", "name", "system", "baseline", "before", "after"}
    for column in (c for c in CHANGE_COLUMNS if c not in text and c in table):
        table[column] = pd.to_numeric(table[column].replace("", math.nan))
    return table


def _changes(table: pd.DataFrame, previous: dict) -> dict:
    from riskreport.stats.changes import count_changes

    rows = [
        {k: (_number(v) if isinstance(v, float) else v) for k, v in row.items()} for row in table.to_dict("records")
    ]
    counts = count_changes(table) if len(table) else {}
    return {
        "previous": previous.get("name"),
        "previous_folder": previous.get("folder"),
        "previous_finished_utc": previous.get("finished_utc"),
        "verdicts_changed": counts.get("verdict", 0),
        "counts": counts,
        "rows": rows,
    }


def _number(value) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
