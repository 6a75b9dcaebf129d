"""The report's one significance rule, and how every other method compares with it.

The rule (`RULE`): at each α, a challenger is a significant **risk** (worse than the baseline
once losses weigh 1 + α) or **reward** when the two-sided paired t-test of its risk-adjusted
differences — TRisk, Dinçer, Macdonald & Ounis 2014, Eq. 10 — has a p-value below the
significance level *after* adjusting across the challengers at that α with the report's
correction; otherwise it is **inconclusive** (**undefined** when TRisk is, SE = 0). At α = 0 this
is the paired t-test on Δ of the effectiveness table, so its marks and the risk marks agree.

Every mark, colour and verdict of a report reads from `verdicts`; the other tests (sign,
Wilcoxon, randomisation; adjusted the same way) and the bootstrap intervals (at one level) are
listed beside the rule, and `verdict_summary` says where they disagree. Sign convention: standard.

>>> import riskreport as rr
>>> p = rr.resolve_parameters("demo", measure="nDCG@10", alphas=[0, 10])
>>> matrix = rr.evaluate(p.collection, p.measure, p.systems).matrix()
>>> risk = rr.risk_table(matrix, p.baseline, p.alphas)
>>> tests = rr.inference.tests_table(matrix, p.baseline, p.alphas, samples=2000)
>>> summary = verdict_summary(verdicts(tests))
>>> summary.loc[summary["system"] == "risky-llm", ["alpha", "verdict"]].to_string(index=False)
' alpha      verdict\\n   0.0 inconclusive\\n  10.0         risk'
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from riskreport.stats.rankings import riskiest_first
from riskreport.stats.risk import rule_verdicts

RULE = "t"
KEY = ["system", "baseline", "alpha"]  # one verdict per challenger, baseline and α
MARKS = {"risk": "▼", "reward": "▲"}
VERDICT_COLUMNS = [
    "system",
    "baseline",
    "alpha",
    "method",
    "kind",
    "statistic",
    "p_adjusted",
    "ci_low",
    "ci_high",
    "verdict",
]
SUMMARY_COLUMNS = [
    "system",
    "baseline",
    "alpha",
    "urisk",
    "trisk",
    "p_adjusted",
    "verdict",
    "agree",
    "methods",
    "disagree",
]


def rule_text(correction: str, sig_level: float) -> str:
    """The rule in one sentence, as the page states it."""
    adjusted = "unadjusted" if correction == "none" else f"adjusted across the challengers at each α ({correction})"
    return (
        f"▼ risk and ▲ reward mean that the two-sided paired t-test of the risk-adjusted differences (TRisk) "
        f"has a p-value below {sig_level:g}, {adjusted}; every mark, colour and verdict on this page follows "
        "this one rule, and the other tests and the bootstrap intervals are shown beside it, with their "
        "disagreements named."
    )


def verdicts(
    tests: pd.DataFrame, boot: pd.DataFrame | None = None, sig_level: float = 0.05, level: float | None = None
) -> pd.DataFrame:
    """Tidy verdicts per challenger, α and method (columns `VERDICT_COLUMNS`).

    `tests` is `inference.tests_table` (adjusted p-values), `boot` `inference.bootstrap_table` (its
    intervals at `level`, default the smallest). A significant test's verdict points where its own
    statistic does (`tests["direction"]`, `inference.statistic_direction`): the sign test's wins against
    its losses, Wilcoxon's W⁺ against W⁻, the mean for the t and randomisation tests, so a test whose
    statistic does not change with α never changes direction with α. An interval's verdict is where
    it lies against 0. The rule's rows have `method == RULE`. Rows are per baseline too (`KEY`): a
    report may have several.
    """
    t = tests.copy()
    t["verdict"] = rule_verdicts(t["direction"], t["p_adjusted"], sig_level)
    parts = [t.rename(columns={"test": "method"}).assign(kind="test", ci_low=np.nan, ci_high=np.nan)]
    if boot is not None and len(boot):
        level = float(boot["level"].min()) if level is None else level
        b = boot[boot["level"] == level]
        parts.append(b.assign(kind=f"interval {level:g}", statistic=np.nan, p_adjusted=np.nan))
    table = pd.concat([part[VERDICT_COLUMNS] for part in parts], ignore_index=True)
    return table


def verdict_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per challenger and α: URisk, TRisk, the rule's adjusted p and verdict, and the agreement.

    `agree`/`methods`: how many methods (the rule among them) reach the rule's verdict; `disagree`: the
    others, as `method: verdict` (e.g. `bca: risk`). Where the rule is undefined (SE = 0) no method can
    agree with it: `agree`/`methods` then count the other methods that are inconclusive (they find no
    difference either), and `disagree` names those that are not. Columns `SUMMARY_COLUMNS`.
    """
    rule = table[table["method"] == RULE].set_index(KEY)
    others = table[table["method"] != RULE].merge(rule["verdict"].rename("rule").reset_index(), on=KEY)
    undefined = others["rule"] == "undefined"
    others["same"] = others["verdict"] == others["rule"].where(~undefined, "inconclusive")
    grouped = others.groupby(KEY, sort=False)
    differing = others[~others["same"]]
    disagree = (
        (differing["method"] + ": " + differing["verdict"])
        .groupby([differing[k] for k in KEY], sort=False)
        .agg("; ".join)
    )
    itself = (~grouped["rule"].first().eq("undefined")).astype(int)  # the rule counts itself when it has a verdict
    agreement = pd.DataFrame({"agree": grouped["same"].sum().astype(int) + itself, "methods": grouped.size() + itself})
    agreement["disagree"] = disagree.reindex(agreement.index).fillna("")
    summary = rule[["statistic", "p_adjusted", "verdict"]].rename(columns={"statistic": "trisk"}).join(agreement)
    defined = summary["verdict"] != "undefined"
    summary["agree"] = summary["agree"].fillna(defined.astype(int)).astype(int)
    summary["methods"] = summary["methods"].fillna(defined.astype(int)).astype(int)
    summary["disagree"] = summary["disagree"].fillna("")
    return summary.reset_index()


def with_urisk(summary: pd.DataFrame, risk: pd.DataFrame) -> pd.DataFrame:
    """`summary` with each challenger's URisk at each α (from `risk.risk_table`), columns `SUMMARY_COLUMNS`."""
    out = summary.drop(columns="urisk", errors="ignore").merge(risk[[*KEY, "urisk"]], on=KEY, how="left")
    return out[SUMMARY_COLUMNS]


def risk_order(summary: pd.DataFrame) -> list[str]:
    """Challengers from the riskiest to the safest: by URisk at the largest α (its mean over the baselines when
    there are several; a baseline compared with the others only counts those comparisons), then by id."""
    mean = summary.groupby(["system", "alpha"], sort=False)["urisk"].mean().reset_index()
    return riskiest_first(mean)


def marks(summary: pd.DataFrame) -> pd.Series:
    """▼ / ▲ / '' per row of a summary (the rule's verdict)."""
    return summary["verdict"].map(MARKS).fillna("")


def report_verdicts(
    risk: pd.DataFrame, tests: pd.DataFrame, boot: pd.DataFrame | None = None, sig_level: float = 0.05
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What a report needs: the tidy per-method `verdicts` and their summary with URisk, riskiest first."""
    table = verdicts(tests, boot, sig_level)
    summary = with_urisk(verdict_summary(table), risk)
    order = {s: i for i, s in enumerate(risk_order(summary))}
    first = {b: i for i, b in enumerate(dict.fromkeys(risk["baseline"]))}
    summary = summary.sort_values(
        ["baseline", "alpha", "system"],
        key=lambda c: c.map(order) if c.name == "system" else c.map(first) if c.name == "baseline" else c,
    )
    return table, summary.reset_index(drop=True)
