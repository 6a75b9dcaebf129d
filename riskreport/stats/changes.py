"""What changed between two risk reports: inputs, parameters, systems, verdicts and effectiveness means.

A pure function of two reports' tables (`changes_table`): the rule's verdict per challenger, baseline and α
(with URisk and TRisk, `rule_summary` of a report's verdicts and risk tables), the effectiveness table, the
SHA-256 of the input files, the effective parameters and the collection's name. It returns one tidy row per change
(`CHANGE_COLUMNS`), in the order a reader wants them: what went in (collection, input files, parameters, systems), then
what came out (verdicts that changed, means that moved by more than their standard error sd/√n of the later
report). The verdicts are the report's one rule (`significance.RULE`), so a change here is a change of a mark
on the page.

>>> import pandas as pd
>>> before = pd.DataFrame({"system": ["a"], "baseline": ["b"], "alpha": [5.0], "urisk": [-0.01], "trisk": [-1.0],
...                        "verdict": ["inconclusive"]})
>>> after = before.assign(urisk=-0.05, trisk=-3.2, verdict="risk")
>>> changes_table(before, after)[["change", "system", "alpha", "before", "after"]].to_dict("records")
[{'change': 'verdict', 'system': 'a', 'alpha': 5.0, 'before': 'inconclusive', 'after': 'risk'}]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np
import pandas as pd

from riskreport.stats.significance import KEY, RULE

CHANGE_COLUMNS = [
    "change",  # collection, input, parameter, system added, system removed, verdict, effectiveness
    "name",  # the input file (its path in the collection) or parameter (input, parameter rows); "collection"
    "system",
    "baseline",
    "alpha",
    "before",  # the verdict, the collection, the file's SHA-256 (first 12 digits) or the parameter's value; empty when absent
    "after",
    "urisk_before",
    "urisk_after",
    "trisk_before",
    "trisk_after",
    "mean_before",
    "mean_after",
    "se",  # standard error of the later mean, sd/√n: an effectiveness row moved by more than this
]
ORDER = ("collection", "input", "parameter", "system added", "system removed", "verdict", "effectiveness")
RULE_COLUMNS = [*KEY, "urisk", "trisk", "verdict"]


@dataclass(frozen=True)
class Changes:
    """The changes since a previous report: the tidy `table` (`CHANGE_COLUMNS`), the `previous` report's name
    (its folder) and when it was `finished` (ISO 8601, UTC), and the `counts` of rows per kind of change."""

    table: pd.DataFrame
    previous: str
    finished: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def verdicts_changed(self) -> int:
        return self.counts.get("verdict", 0)

    @property
    def empty(self) -> bool:
        return not len(self.table)


def rule_summary(verdicts: pd.DataFrame, risk: pd.DataFrame) -> pd.DataFrame:
    """The rule's verdict per challenger, baseline and α with URisk and TRisk (`RULE_COLUMNS`), from a report's
    verdicts table (tables/verdicts.csv; the rule's rows carry TRisk as `statistic`) and risk table."""
    rule = verdicts.loc[verdicts["method"] == RULE, [*KEY, "statistic", "verdict"]].rename(
        columns={"statistic": "trisk"}
    )
    merged = rule.merge(_keyed(risk)[[*KEY, "urisk"]], on=KEY, how="left") if len(risk) else rule.assign(urisk=np.nan)
    return _keyed(merged)[RULE_COLUMNS].reset_index(drop=True)


def changes_table(
    verdicts_before: pd.DataFrame,
    verdicts_after: pd.DataFrame,
    effectiveness_before: pd.DataFrame | None = None,
    effectiveness_after: pd.DataFrame | None = None,
    files_before: dict[str, str] | None = None,
    files_after: dict[str, str] | None = None,
    parameters_before: dict | None = None,
    parameters_after: dict | None = None,
    collection_before: str | None = None,
    collection_after: str | None = None,
) -> pd.DataFrame:
    """Every change from one report to the next, one row each (`CHANGE_COLUMNS`), in `ORDER`.

    `verdicts_*`: `rule_summary` tables (system, baseline, alpha, urisk, trisk, verdict). A verdict row is a
    (challenger, baseline, α) present in both with a different verdict; systems present in one report only are
    `system added`/`system removed` (challengers and baselines alike). `effectiveness_*`: the effectiveness
    tables (system, mean, sd, n_topics); a system whose mean moved by more than its later standard error
    sd/√n is an `effectiveness` row. `files_*`: input file → SHA-256 (params.json's `files_sha256`), the
    file named by its path in the collection (`runs/a.run`, `instances/x/1.run.gz`), compared by file name when
    the paths differ and the names are unique (a collection moved). `parameters_*`: the effective parameters
    (params.json's `parameters`); `context` is ignored. `collection_*`: the collections' names; reports of two
    collections are a `collection` row first. Nothing changed: an empty table with these columns.
    """
    rows: list[dict] = []
    if collection_before is not None and collection_after is not None and collection_before != collection_after:
        rows.append(
            {"change": "collection", "name": "collection", "before": collection_before, "after": collection_after}
        )
    rows += _file_rows(files_before or {}, files_after or {})
    rows += _parameter_rows(parameters_before or {}, parameters_after or {})
    before, after = _keyed(verdicts_before), _keyed(verdicts_after)
    systems_before = _systems(before, effectiveness_before)
    systems_after = _systems(after, effectiveness_after)
    rows += [{"change": "system added", "system": s} for s in sorted(systems_after - systems_before)]
    rows += [{"change": "system removed", "system": s} for s in sorted(systems_before - systems_after)]
    rows += _verdict_rows(before, after)
    rows += _effectiveness_rows(effectiveness_before, effectiveness_after)
    table = pd.DataFrame(rows, columns=CHANGE_COLUMNS)
    for column in ("name", "system", "baseline", "before", "after"):
        table[column] = table[column].astype(object).where(table[column].notna(), "").astype(str)
    return table.reset_index(drop=True)


def _keyed(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with α as floats rounded to 9 digits, so that 5 and 5.0 (and a CSV's round trip) match."""
    return table.assign(alpha=pd.to_numeric(table["alpha"]).astype(float).round(9), system=table["system"].astype(str))


def _systems(verdicts: pd.DataFrame, effectiveness: pd.DataFrame | None) -> set[str]:
    names = set(verdicts["system"]) | set(verdicts["baseline"].astype(str))
    if effectiveness is not None and len(effectiveness):
        names |= set(effectiveness["system"].astype(str))
    return names


def _verdict_rows(before: pd.DataFrame, after: pd.DataFrame) -> list[dict]:
    both = before[RULE_COLUMNS].merge(after[RULE_COLUMNS], on=KEY, suffixes=("_before", "_after"))
    changed = both[both["verdict_before"] != both["verdict_after"]].sort_values(["baseline", "system", "alpha"])
    return [
        {
            "change": "verdict",
            "system": row.system,
            "baseline": row.baseline,
            "alpha": row.alpha,
            "before": row.verdict_before,
            "after": row.verdict_after,
            "urisk_before": row.urisk_before,
            "urisk_after": row.urisk_after,
            "trisk_before": row.trisk_before,
            "trisk_after": row.trisk_after,
        }
        for row in changed.itertuples(index=False)
    ]


def _effectiveness_rows(before: pd.DataFrame | None, after: pd.DataFrame | None) -> list[dict]:
    if before is None or after is None or not len(before) or not len(after):
        return []
    columns = ["system", "mean", "sd", "n_topics"]
    before, after = (t[columns].astype({"system": str}).drop_duplicates("system") for t in (before, after))
    both = before.merge(after, on="system")
    both["se"] = both["sd_y"] / np.sqrt(both["n_topics_y"])
    moved = both[(both["mean_y"] - both["mean_x"]).abs() > both["se"]].sort_values("system")
    return [
        {"change": "effectiveness", "system": r.system, "mean_before": r.mean_x, "mean_after": r.mean_y, "se": r.se}
        for r in moved.itertuples(index=False)
    ]


def _file_rows(before: dict[str, str], after: dict[str, str]) -> list[dict]:
    if set(before) != set(after):  # moved or renamed: compare by file name where the names are unique
        by_name = lambda files: {PurePath(p).name: h for p, h in files.items()}  # noqa: E731
        if len(by_name(before)) == len(before) and len(by_name(after)) == len(after):
            before, after = by_name(before), by_name(after)
    return [
        {"change": "input", "name": str(path), "before": before.get(path, "")[:12], "after": after.get(path, "")[:12]}
        for path in sorted(set(before) | set(after))
        if before.get(path) != after.get(path)
    ]


def _parameter_rows(before: dict, after: dict) -> list[dict]:
    names = sorted((set(before) | set(after)) - {"context", "collection"})
    return [
        {"change": "parameter", "name": name, "before": _text(before.get(name)), "after": _text(after.get(name))}
        for name in names
        if before.get(name) != after.get(name)
    ]


def _text(value) -> str:
    return "" if value is None else str(value)


def count_changes(table: pd.DataFrame) -> dict[str, int]:
    """Rows per kind of change, in `ORDER` (kinds without rows left out)."""
    counts = table["change"].value_counts()
    return {kind: int(counts[kind]) for kind in ORDER if kind in counts}
