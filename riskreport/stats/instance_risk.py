"""Per-instance risk and significance of non-deterministic systems against the baseline (Jayasinghe et al. 2014,
Table 1; docs/measures/nondeterministic.md): how often one instance alone is significant, URisk and TRisk of every
instance, and how often an instance's verdict differs from the pooled system's. `riskreport.stats.instances`,
which reads the instances' scores, exports these too."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from riskreport.errors import RiskReportError
from riskreport.stats.risk import risk_table

INSTANCE_COLUMNS = ["system", "instance", "measure", "alpha", "urisk", "trisk", "p_value", "significant"]
_BASELINE_ROW = "\x00baseline"  # row label of the baseline in per-instance matrices (never an instance name)


def _instances_vs_baseline(scores: pd.DataFrame, system: str, baseline: str) -> pd.DataFrame:
    """Rows = the system's instances, plus the baseline (its per-topic mean over instances) last."""
    pivot = scores[scores["system"].isin([system, baseline])].pivot_table(
        index=["system", "instance"], columns="topic", values="score", sort=False
    )
    topics = list(dict.fromkeys(scores["topic"]))
    pivot = pivot.reindex(columns=topics)
    if pivot.isna().any().any():
        raise RiskReportError(
            f"{system} vs {baseline}: per-instance comparisons need every instance scored on every topic"
        )
    matrix = pivot.loc[system].copy()
    matrix.loc[_BASELINE_ROW] = pivot.loc[baseline].mean(axis=0)
    return matrix


def single_instance_tests(
    scores: pd.DataFrame, baseline: str, levels: Sequence[float] = (0.05, 0.10), systems: Sequence[str] | None = None
) -> pd.DataFrame:
    """How often a single instance, t-tested against the baseline, is significant (Jayasinghe et al. 2014, Table 1).

    Each instance of a system is compared with the baseline over the topics (two-sided
    paired t-test, c − 1 df); a non-deterministic baseline enters as its per-topic mean over
    instances. Columns: `system, baseline, instances, effect_min, effect_max` (range of the
    instances' mean differences), per level `share_p<level>` and, at the first level,
    `better_p<level>`/`worse_p<level>` (counts of significant wins and losses).
    """
    names = [a for a in (systems or dict.fromkeys(scores["system"])) if a != baseline]
    rows = []
    for system in names:
        matrix = _instances_vs_baseline(scores, system, baseline)
        result = risk_table(matrix, _BASELINE_ROW, [0.0])
        effect, p = result["urisk"].to_numpy(), result["p_value"].to_numpy()
        row = {
            "system": system,
            "baseline": baseline,
            "instances": len(result),
            "effect_min": effect.min(),
            "effect_max": effect.max(),
        }
        for level in levels:
            row[f"share_p{_label(level)}"] = float(np.mean(np.nan_to_num(p, nan=1.0) < level))
        first = _label(levels[0])
        row[f"better_p{first}"] = int(((p < levels[0]) & (effect > 0)).sum())
        row[f"worse_p{first}"] = int(((p < levels[0]) & (effect < 0)).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def _label(level: float) -> str:
    """0.05 -> '05', 0.1 -> '10' (column names `share_p05`, `share_p10`)."""
    return f"{round(level * 100):02d}"


def instance_risk(
    scores: pd.DataFrame,
    baseline: str,
    alphas: Sequence[float],
    measure: str = "",
    sig_level: float = 0.05,
    systems: Sequence[str] | None = None,
) -> pd.DataFrame:
    """URisk and TRisk of every instance against the baseline at each α (Wang et al. 2012; Dinçer et al. 2014).

    `riskreport.stats.risk.risk_table` on a matrix whose rows are the system's instances; a
    non-deterministic baseline enters as its per-topic mean over instances. Columns
    `INSTANCE_COLUMNS` (`significant`: p < sig_level) + `verdict` (risk, reward, inconclusive,
    undefined; each instance on its own, unadjusted; see `risk_agreement` for the pooled system).
    """
    names = [a for a in (systems or dict.fromkeys(scores["system"])) if a != baseline]
    parts = []
    for system in names:
        table = risk_table(
            _instances_vs_baseline(scores, system, baseline),
            _BASELINE_ROW,
            alphas,
            measure,
            sig_level,
            correction="none",
        )
        parts.append(table.rename(columns={"system": "instance"}).assign(system=system))
    if not parts:
        return pd.DataFrame(columns=INSTANCE_COLUMNS + ["verdict"])
    table = pd.concat(parts, ignore_index=True)
    table["significant"] = table["p_value"].fillna(1.0) < sig_level
    return table[INSTANCE_COLUMNS + ["verdict"]].sort_values(["system", "alpha"], kind="stable").reset_index(drop=True)


def risk_agreement(
    scores: pd.DataFrame,
    baseline: str,
    alphas: Sequence[float],
    measure: str = "",
    sig_level: float = 0.05,
    systems: Sequence[str] | None = None,
) -> pd.DataFrame:
    """How often the single-instance risk verdict differs from the pooled one, per system and α.

    The pooled system is the per-topic mean over the system's instances; its URisk, TRisk and
    verdict come from `risk_table` against the same baseline. Columns: `system, alpha,
    instances, pooled_urisk, pooled_trisk, pooled_verdict, risk, reward, inconclusive,
    share_differs` (share of instances whose verdict is not the pooled verdict).
    """
    per_instance = instance_risk(scores, baseline, alphas, measure, sig_level, systems)
    rows = []
    for (system, alpha), group in per_instance.groupby(["system", "alpha"], sort=False):
        matrix = _instances_vs_baseline(scores, system, baseline)
        pooled_matrix = pd.DataFrame(
            [matrix.drop(index=_BASELINE_ROW).mean(axis=0), matrix.loc[_BASELINE_ROW]], index=[system, _BASELINE_ROW]
        )
        pooled = risk_table(pooled_matrix, _BASELINE_ROW, [alpha], measure, sig_level).iloc[0]
        counts = group["verdict"].value_counts()
        rows.append(
            {
                "system": system,
                "alpha": alpha,
                "instances": len(group),
                "pooled_urisk": pooled["urisk"],
                "pooled_trisk": pooled["trisk"],
                "pooled_verdict": pooled["verdict"],
                **{v: int(counts.get(v, 0)) for v in ("risk", "reward", "inconclusive")},
                "share_differs": float((group["verdict"] != pooled["verdict"]).mean()),
            }
        )
    return pd.DataFrame(rows)
