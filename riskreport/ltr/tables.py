"""The result tables of a risk-sensitive learning-to-rank experiment: the layouts of Dinçer, Macdonald &
Ounis SIGIR 2014 (Table 3) and SIGIR 2016 (Table 7), from a systems x queries NDCG@k matrix.

Per learner, against a baseline: mean NDCG@k; Reward = FReward = mean max(0, Δ) and Risk = FRisk =
mean max(0, −Δ) (Wang et al. 2012); Reward/Risk (2016) or Risk/Reward (2014); Wins, Losses and W/L
(2016) or Loss/Win (2014); "L>20%": queries where the learner loses more than 20 % of the
baseline's NDCG (baseline > 0). Against several learned baselines the 2016 paper macro-averages:
each measure against each baseline, then the mean over baselines.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats.risk import risk_table

PAPER_2016 = ["ndcg", "reward_risk", "wl", "wins", "losses", "loss20"]
PAPER_2014 = ["ndcg", "risk", "reward", "risk_reward", "wins", "losses", "lw", "loss20"]
LABELS = {
    "ndcg": "nDCG@{k}",
    "reward": "Reward",
    "risk": "Risk",
    "reward_risk": "Reward/Risk",
    "risk_reward": "Risk/Reward",
    "wins": "Wins",
    "losses": "Losses",
    "wl": "W/L",
    "lw": "Loss/Win",
    "loss20": "L>20%",
}


def score_matrix(per_fold: list[dict[str, np.ndarray]], query_ids: list[np.ndarray]) -> pd.DataFrame:
    """Systems x queries NDCG matrix over the test queries of every fold (each query is tested in one fold);
    queries without a relevant document (NaN) are dropped, as topics without relevant documents are."""
    frames = [pd.DataFrame(scores, index=[str(q) for q in ids]).T for scores, ids in zip(per_fold, query_ids)]
    matrix = pd.concat(frames, axis=1)
    matrix = matrix.loc[:, matrix.notna().all(axis=0)]
    matrix.columns.name, matrix.index.name = "topic", "system"
    return matrix


def against(matrix: pd.DataFrame, baseline: str, learners: list[str], k: int = 10) -> pd.DataFrame:
    """Every paper column of each learner against one baseline (tidy: learner, baseline, columns…)."""
    risk = risk_table(matrix.loc[[baseline, *learners]], baseline, [0.0], f"nDCG@{k}")
    base = matrix.loc[baseline]
    table = pd.DataFrame(
        {
            "learner": risk["system"],
            "baseline": baseline,
            "ndcg": matrix.loc[learners].mean(axis=1).to_numpy(),
            "reward": risk["freward"].to_numpy(),
            "risk": risk["frisk"].to_numpy(),
            "wins": risk["wins"].to_numpy(),
            "losses": risk["losses"].to_numpy(),
            "loss20": risk["loss20"].to_numpy(),
        }
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        table["reward_risk"] = table["reward"] / table["risk"]
        table["risk_reward"] = table["risk"] / table["reward"]
        table["wl"] = table["wins"] / table["losses"]
        table["lw"] = table["losses"] / table["wins"]
    table["baseline_ndcg"] = float(base.mean())
    return table


def paper_table(
    matrix: pd.DataFrame, single: str, learned: list[str], learners: list[str], layout: str = "2016", k: int = 10
) -> pd.DataFrame:
    """Learners (rows) x columns of the 2016 Table 7 or 2014 Table 3 layout: against the single (BM25-like)
    baseline and, when there are learned baselines, macro-averaged against them (a column group each)."""
    columns = PAPER_2016 if layout == "2016" else PAPER_2014
    groups = {f"vs {single}": against(matrix, single, learners, k).set_index("learner")[columns]}
    if learned:
        parts = [against(matrix, b, learners, k).set_index("learner")[columns] for b in learned]
        macro = sum(parts) / len(parts)
        macro["ndcg"] = parts[0]["ndcg"]
        groups[f"macro-average vs {', '.join(learned)}"] = macro
    table = pd.concat(groups, axis=1)
    table.columns = pd.MultiIndex.from_tuples([(g, LABELS[c].format(k=k)) for g, c in table.columns])
    table.index.name = "learner"
    return table


def compare_losses(
    matrix: pd.DataFrame, single: str, learners: list[str], reference: str = "LambdaMART", k: int = 10
) -> pd.DataFrame:
    """The papers' finding in numbers: each learner's L>20% and NDCG@k against `single`, and their change from
    `reference` (LambdaMART): fewer large losses at a similar NDCG is what risk-sensitive learning is for."""
    table = against(matrix, single, [reference, *[x for x in learners if x != reference]], k).set_index("learner")
    out = table[["ndcg", "loss20", "losses", "wins"]].copy()
    out["ndcg_change_pct"] = 100 * (out["ndcg"] / out.loc[reference, "ndcg"] - 1)
    out["loss20_change"] = out["loss20"] - out.loc[reference, "loss20"]
    return out.reset_index()


def fold_losses(
    matrix: pd.DataFrame, single: str, learners: list[str], fold_of: pd.Series, reference: str = "LambdaMART"
) -> pd.DataFrame:
    """L>20% against `single` of every learner on each fold's test queries, their mean and standard deviation over
    the folds, and the number of folds where the learner has fewer such losses than `reference` (the spread of the
    finding: a difference that holds on most folds is not the luck of one)."""
    base = matrix.loc[single]
    large = (base > 0) & (matrix.loc[learners].rsub(base, axis=1).div(base.where(base > 0), axis=1) > 0.2)
    folds = fold_of.reindex(matrix.columns)
    table = large.T.groupby(folds.to_numpy(), sort=False).sum().T
    out = table.copy()
    out["mean"], out["sd"] = table.mean(axis=1), table.std(axis=1, ddof=1)
    if reference in table.index:
        out["folds_fewer"] = (table < table.loc[reference]).sum(axis=1)
    out.index.name = "learner"
    return out.reset_index()


def topic_deltas(matrix: pd.DataFrame, baseline: str, learners: list[str]) -> pd.DataFrame:
    """Tidy per-query Δ = learner − baseline (`system, topic, delta`), for the per-topic figures."""
    delta = matrix.loc[learners] - matrix.loc[baseline]
    return delta.stack().rename("delta").reset_index().rename(columns={"level_0": "system"})


def fold_table(folds: pd.DataFrame) -> pd.DataFrame:
    """Queries and documents per fold and split, and the seconds spent training its learners."""
    return folds.rename(columns=lambda c: c.replace("_", " "))


def flat(table: pd.DataFrame) -> pd.DataFrame:
    """A paper table with its two-level columns joined (`vs feature 110: NDCG@10`), for CSV."""
    out = table.copy()
    out.columns = [f"{group}: {column}" for group, column in table.columns]
    return out.reset_index()


def risk_against_baselines(experiment, alphas: list[float], sig_level: float = 0.05, k: int = 10) -> pd.DataFrame:
    """URisk, TRisk (with verdicts), wins, losses and L>20% of every learner against every baseline, at every α."""
    baselines = [experiment.single, *experiment.learned, *experiment.runs]
    parts = [
        risk_table(experiment.matrix.loc[[b, *experiment.learners]], b, alphas, f"nDCG@{k}", sig_level)
        for b in baselines
    ]
    return pd.concat(parts, ignore_index=True)


def learner_tests(experiment, reference: str = "LambdaMART", seed: int = 2026, samples: int = 10_000) -> pd.DataFrame:
    """Paired tests (t, sign, Wilcoxon, randomisation; Holm across learners) of every learner against `reference`."""
    from ..stats.inference import tests_table

    if reference not in experiment.learners or len(experiment.learners) < 2:
        return pd.DataFrame(columns=["system", "baseline", "test", "statistic", "p_value", "p_adjusted"])
    rows = [reference, *[x for x in experiment.learners if x != reference]]
    table = tests_table(experiment.matrix.loc[rows], reference, [0.0], samples=samples, seed=seed)
    return table[["system", "baseline", "test", "statistic", "p_value", "p_adjusted"]]


def setting_note(params, experiment) -> str | None:
    """Which defaults were scaled to the data, to what, and why (`params.scaled_min_data`, `params.held_out_queries`);
    None when every value was given (on the command line or in `letor.toml`)."""
    folds = experiment.folds
    parts = []
    if params.min_data_in_leaf is None and "min_data_in_leaf" in folds:
        parts.append(
            "min_data_in_leaf was not given (nor in letor.toml), so it was scaled to the data: "
            f"{_per_fold(folds, 'min_data_in_leaf')} documents per leaf, the 2016 paper's 1500 at most, and at most the "
            f"learners' training documents / (2 × {params.leaves} leaves), so that a tree of {params.leaves} leaves "
            "can grow and LightGBM has features it can split."
        )
    if params.learned and params.held_out is None and "held_out_queries" in folds:
        parts.append(
            f"The learned baselines were learned on {_per_fold(folds, 'held_out_queries')} held-out training queries "
            "(the 2016 paper's 20 % of them, at most its 2,000 queries; the parameter held_out sets another share), "
            "the learners on the rest."
        )
    return " ".join(parts) or None


def _per_fold(folds: pd.DataFrame, column: str) -> str:
    values = folds[column].astype(int)
    if values.nunique() == 1:
        return f"{values.iloc[0]:,}" + (" on every fold" if len(values) > 1 else "")
    return ", ".join(f"{v:,} ({fold})" for fold, v in zip(folds["fold"], values))


def too_few_queries(
    matrix: pd.DataFrame,
    learners: list[str],
    reference: str = "LambdaMART",
    sig_level: float = 0.05,
    power: float = 0.8,
    relative: float = 0.01,
    measure: str = "nDCG@10",
) -> str | None:
    """A note when the test queries are too few to tell the learners apart, else None.

    The smallest difference of mean effectiveness that a paired test at `sig_level` detects with probability
    `power` is (z_{1−a/2} + z_power) · sd / √n (Cohen 1988, normal approximation), sd that of the per-query
    differences from `reference` (the median over learners). The papers' risk-sensitive learners stay within about
    1 % of LambdaMART's NDCG (Dinçer, Macdonald & Ounis 2014, 2016); when that detectable difference exceeds
    `relative` of the reference's mean, the differences between learners in the tables are within noise."""
    from scipy.stats import norm

    others = [x for x in learners if x != reference]
    if reference not in learners or reference not in matrix.index or not others or matrix.shape[1] < 2:
        return None
    n = matrix.shape[1]
    sd = float(np.median([(matrix.loc[x] - matrix.loc[reference]).std(ddof=1) for x in others]))
    mean = float(matrix.loc[reference].mean())
    z = norm.ppf(1 - sig_level / 2) + norm.ppf(power)
    detectable = z * sd / np.sqrt(n)
    if not np.isfinite(detectable) or mean <= 0 or detectable <= relative * mean:
        return None
    needed = int(np.ceil((z * sd / (relative * mean)) ** 2))
    return (
        f"{n} test queries are too few to tell these learners apart: a paired test at level {sig_level:g} detects "
        f"(with {100 * power:.0f} % power) only differences in mean {measure} from {reference} of at least {detectable:.3f} "
        f"({100 * detectable / mean:.1f} % of its {mean:.3f}), while the papers' risk-sensitive learners differ from "
        f"LambdaMART by about {100 * relative:g} %; about {needed:,} test queries would detect that. Read the differences "
        "between learners below as indications, not findings."
    )
