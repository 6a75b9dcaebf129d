"""Non-deterministic systems: the mixed-effects model of Jayasinghe et al. (SIGIR 2014; docs/measures/nondeterministic.md).

For a system l (the challenger or the baseline), instance m (nested in l) and topic n:

    y_lmn = γ + a_l + s_m + t_n + (at)_ln + ε_lmn

with the system effect a fixed and instance s, topic t, topic × system (at) and residual ε
random (variances σ²_instance, σ²_topic, σ²_topic_system, σ²_residual). A deterministic
system has one instance and no instance effect (its instance variance is 0): its single run
enters as one instance, and σ²_instance is estimated from the other system's instances.
Fitted by REML. The effect is a_challenger − a_baseline (standard convention: > 0 means the
challenger is better); its p-value and intervals use Student t with n_topics − 1 df.

Reference fit: statsmodels `MixedLM` with `vc_formula` for the crossed effects (`fit_mixedlm`).
Fast path (`fit_balanced`) for complete designs, every instance of both systems scored on the same topics:
exact REML through the orthogonal strata of the design (`riskreport.stats.reml`).
Both paths give the same estimates and SEs (|difference| ≤ 1e-4, tests/test_mixed.py); an
incomplete design is fitted with MixedLM and the `method`/`note` columns say so.

>>> scores = riskreport.stats.instances.evaluate_instances("demo", "nDCG@10")   # doctest: +SKIP
>>> mixed_table(scores.scores, "bm25", "nDCG@10", delta0=0.01)            # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from riskreport.errors import ParameterError, RiskReportError
from riskreport.options import check_options
from riskreport.stats.reml import reml_variances, strata
from riskreport.stats.system_effects import SYSTEM_EFFECT_COLUMNS, mixed_systems  # noqa: F401 - importable from here as before

MIXED_COLUMNS = [
    "system",
    "baseline",
    "measure",
    "effect",
    "se",
    "df",
    "ci_low",
    "ci_high",
    "p_value",
    "var_topic",
    "var_instance",
    "var_topic_system",
    "var_residual",
    "delta0",
    "verdict",
]
COMPONENTS = ("topic", "instance", "topic_system", "residual")
VERDICTS = ("equivalent", "not_worse", "worse", "better", "inconclusive")
METHODS = ("auto", "balanced", "mixedlm")
BALANCED = "balanced REML"
MIXEDLM = "statsmodels MixedLM"
SPARSE_ROWS = 3000  # MixedLM with sparse design matrices above this many scores (faster there)


@dataclass(frozen=True)
class MixedFit:
    """One system against the baseline under the model of Jayasinghe et al. 2014 (docs/measures/nondeterministic.md).

    `variances` maps each of `COMPONENTS` to its REML estimate; `method` is `BALANCED` (the fast
    path) or `MIXEDLM` (the reference); `note` explains a fallback or a degenerate design.
    """

    system: str
    baseline: str
    effect: float
    se: float
    n_topics: int
    n_instances: tuple[int, int]
    variances: dict[str, float]
    method: str
    note: str = ""

    @property
    def df(self) -> int:
        return self.n_topics - 1

    @property
    def t(self) -> float:
        return self.effect / self.se if self.se > 0 else float("nan")

    @property
    def p_value(self) -> float:
        """Two-sided p of H0: no effect, Student t with n_topics − 1 df (Jayasinghe et al. 2014; docs/measures/nondeterministic.md)."""
        return float(2 * stats.t.sf(abs(self.t), self.df)) if self.se > 0 else float("nan")

    def interval(self, level: float) -> tuple[float, float]:
        """Two-sided `level` confidence interval of the effect."""
        half = stats.t.ppf(0.5 + level / 2, self.df) * self.se
        return self.effect - half, self.effect + half

    @property
    def shares(self) -> dict[str, float]:
        """Each variance component as a share of their sum."""
        total = sum(v for v in self.variances.values() if np.isfinite(v))
        return {k: (v / total if total > 0 and np.isfinite(v) else float("nan")) for k, v in self.variances.items()}


def fit_balanced(
    challenger: np.ndarray, baseline: np.ndarray, system: str = "challenger", baseline_name: str = "baseline"
) -> MixedFit:
    """The Jayasinghe et al. 2014; docs/measures/nondeterministic.md model on a complete design: two instances x topics matrices over the same topics.

    Exact REML through the orthogonal strata of the design (module docstring); O(N) time.
    """
    first, second = np.asarray(challenger, dtype=float), np.asarray(baseline, dtype=float)
    if first.ndim != 2 or second.ndim != 2 or first.shape[1] != second.shape[1]:
        raise RiskReportError("fit_balanced needs two instances x topics matrices over the same topics")
    if not (np.isfinite(first).all() and np.isfinite(second).all()):
        raise RiskReportError("fit_balanced needs a complete design (no missing score)")
    n_topics = first.shape[1]
    if n_topics < 2:
        raise RiskReportError("the mixed-effects model needs at least 2 topics")
    st = strata(first, second)
    if st.ss_residual + st.ss_instance + float(np.trace(st.cross)) == 0:
        variances = np.zeros(4)
    else:
        variances = reml_variances(st)
    topic, interaction, instance, residual = variances
    k1, k2 = st.k
    var = (
        instance * (float(k1 > 1) / k1 + float(k2 > 1) / k2)
        + 2 * interaction / n_topics
        + residual * (1 / k1 + 1 / k2) / n_topics
    )
    note = ""
    if st.df_residual == 0:
        note = (
            "one instance per system: the residual cannot be told apart from the topic × system "
            "interaction (both are in var_topic_system) and the model reduces to the paired t-test"
        )
        residual = np.float64("nan")
    return MixedFit(
        system,
        baseline_name,
        st.means[0] - st.means[1],
        float(np.sqrt(max(var, 0.0))),
        n_topics,
        st.k,
        {
            "topic": float(topic),
            "instance": float(instance),
            "topic_system": float(interaction),
            "residual": float(residual),
        },
        BALANCED,
        note,
    )


def fit_mixedlm(scores: pd.DataFrame, system: str, baseline: str) -> MixedFit:
    """The reference fit: statsmodels MixedLM (REML) with `vc_formula` for the crossed random effects.

    `scores` is tidy (`system, instance, topic, score`) and may be incomplete. One group holds
    every row; variance components: topic, topic × system, and instance for the rows of
    non-deterministic systems only (a deterministic system has no instance effect).
    """
    import statsmodels.formula.api as smf
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    data = _pair(scores, system, baseline).dropna(subset=["score"])
    counts = data.groupby("system")["instance"].nunique()
    data = data.assign(
        challenger=(data["system"] == system).astype(float),
        group=0,
        nondeterministic=data["system"].map(lambda s: float(counts[s] > 1)),
        topic_code=pd.factorize(data["topic"])[0],
        system_code=pd.factorize(data["system"])[0],
        instance_code=pd.factorize(data["system"] + "\x00" + data["instance"])[0],
    )
    vc = {"topic": "0 + C(topic_code)", "topic_system": "0 + C(topic_code):C(system_code)"}
    if data["nondeterministic"].any():
        vc["instance"] = "0 + C(instance_code):nondeterministic"
    model = smf.mixedlm(
        "score ~ challenger", data, groups="group", re_formula="0", vc_formula=vc, use_sparse=len(data) > SPARSE_ROWS
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = model.fit(reml=True)
    components = dict(zip(model.exog_vc.names, np.asarray(result.vcomp, dtype=float)))
    notes = [] if result.converged else ["MixedLM did not converge"]
    notes += sorted(
        {
            str(w.message)
            for w in caught
            if issubclass(w.category, ConvergenceWarning) and "boundary" not in str(w.message)
        }
    )
    return MixedFit(
        system,
        baseline,
        float(result.fe_params["challenger"]),
        float(result.bse_fe["challenger"]),
        int(data["topic"].nunique()),
        (int(counts[system]), int(counts[baseline])),
        {
            "topic": components["topic"],
            "instance": components.get("instance", 0.0),
            "topic_system": components["topic_system"],
            "residual": float(result.scale),
        },
        MIXEDLM,
        "; ".join(notes),
    )


def fit_pair(scores: pd.DataFrame, system: str, baseline: str, method: str = "auto") -> MixedFit:
    """Fit one system against the baseline: the fast path when the design is complete, else MixedLM.

    `method`: `auto` (fast path if complete, else MixedLM, noted), `balanced` (fast path; an
    error on an incomplete design) or `mixedlm` (always the reference).
    """
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")
    if method == "mixedlm":
        return fit_mixedlm(scores, system, baseline)
    matrices, problem = _complete_matrices(_pair(scores, system, baseline), system, baseline)
    if problem is None:
        return fit_balanced(matrices[0], matrices[1], system, baseline)
    if method == "balanced":
        raise RiskReportError(f"{system} vs {baseline}: the fast path needs a complete design, but {problem}.")
    fit = fit_mixedlm(scores, system, baseline)
    note = f"incomplete design ({problem}): fitted with statsmodels MixedLM"
    return replace(fit, note="; ".join(n for n in (note, fit.note) if n))


def _pair(scores: pd.DataFrame, system: str, baseline: str) -> pd.DataFrame:
    for name in (system, baseline):
        if not (scores["system"] == name).any():
            raise RiskReportError(f"no instance scores for system {name!r}")
    if system == baseline:
        raise RiskReportError(f"cannot compare {system!r} with itself")
    return scores[scores["system"].isin([system, baseline])]


def _complete_matrices(pair: pd.DataFrame, system: str, baseline: str):
    """(challenger, baseline) instances x topics arrays of a complete design, or (None, what is missing)."""
    if pair.duplicated(["system", "instance", "topic"]).any():
        return None, "some instance scores a topic twice"
    topics = pd.unique(pair["topic"])
    matrices = []
    for name in (system, baseline):
        rows = pair[pair["system"] == name]
        matrix = rows.pivot(index="instance", columns="topic", values="score").reindex(columns=topics)
        matrices.append(matrix.to_numpy(dtype=float))
    cells = sum(m.size for m in matrices)
    absent = cells - sum(int(np.isfinite(m).sum()) for m in matrices)
    if absent:
        return None, f"{absent} of {cells} instance–topic cells have no score"
    return matrices, None


def equivalence_verdicts(
    effect: ArrayLike, se: ArrayLike, df: ArrayLike, sig_level: float, delta0: float
) -> np.ndarray:
    """Verdict of each effect for the margin δ0 (Jayasinghe et al. 2014; docs/measures/nondeterministic.md; two one-sided tests at `sig_level`).

    With the 100(1−2·sig)% interval [lo, hi] (TOST) and the 100(1−sig)% interval [l, h]:
    `equivalent`: −δ0 < lo and hi < δ0; else `better`: l > 0 (significantly better, p < sig);
    else `worse`: h < 0 (significantly worse); else `not_worse`: lo > −δ0 (non-inferior for
    δ0); else `inconclusive`. An undefined SE (NaN) is `inconclusive`.
    """
    check_options({"sig_level": sig_level, "delta0": delta0})
    effect, se, df = (np.asarray(x, dtype=float) for x in (effect, se, df))
    with np.errstate(invalid="ignore"):
        one_sided = stats.t.ppf(1 - sig_level, df) * se
        two_sided = stats.t.ppf(1 - sig_level / 2, df) * se
        lo, hi = effect - one_sided, effect + one_sided
        low, high = effect - two_sided, effect + two_sided
        conditions = [np.isnan(se), (lo > -delta0) & (hi < delta0), low > 0, high < 0, lo > -delta0]
    return np.select(conditions, ["inconclusive", "equivalent", "better", "worse", "not_worse"], "inconclusive")


def mixed_table(
    scores: pd.DataFrame,
    baseline: str,
    measure: str = "",
    sig_level: float = 0.05,
    delta0: float = 0.01,
    systems: Sequence[str] | None = None,
    method: str = "auto",
) -> pd.DataFrame:
    """The Jayasinghe et al. 2014; docs/measures/nondeterministic.md model for every system against `baseline`, tidy: `MIXED_COLUMNS` + extras.

    `effect` = a_algorithm − a_baseline (> 0: better than the baseline), `ci_low`/`ci_high`
    its 100(1−sig)% interval, `p_value` two-sided (t, `df` = n_topics − 1), `var_*` the REML
    variance components, `verdict` from `equivalence_verdicts`. Extras: `tost_low`/`tost_high`
    (the 100(1−2·sig)% interval the equivalence verdicts use), `share_*` (each component's share
    of their sum), `n_instances`, `n_baseline_instances`, `n_topics`, `method`, `note`.
    """
    check_options({"sig_level": sig_level, "delta0": delta0})
    names = list(dict.fromkeys(scores["system"]))
    chosen = [a for a in (systems if systems is not None else names) if a != baseline]
    rows = []
    for system in chosen:
        fit = fit_pair(scores, system, baseline, method)
        low, high = fit.interval(1 - sig_level)
        tost_low, tost_high = fit.interval(1 - 2 * sig_level)
        rows.append(
            {
                "system": system,
                "baseline": baseline,
                "measure": measure,
                "effect": fit.effect,
                "se": fit.se,
                "df": fit.df,
                "ci_low": low,
                "ci_high": high,
                "p_value": fit.p_value,
                **{f"var_{c}": fit.variances[c] for c in COMPONENTS},
                "delta0": float(delta0),
                "tost_low": tost_low,
                "tost_high": tost_high,
                **{f"share_{c}": fit.shares[c] for c in COMPONENTS},
                "n_instances": fit.n_instances[0],
                "n_baseline_instances": fit.n_instances[1],
                "n_topics": fit.n_topics,
                "method": fit.method,
                "note": fit.note,
            }
        )
    table = pd.DataFrame(
        rows,
        columns=MIXED_COLUMNS[:-1]
        + [
            "tost_low",
            "tost_high",
            *[f"share_{c}" for c in COMPONENTS],
            "n_instances",
            "n_baseline_instances",
            "n_topics",
            "method",
            "note",
        ],
    )
    table.insert(
        MIXED_COLUMNS.index("verdict"),
        "verdict",
        equivalence_verdicts(table["effect"], table["se"], table["df"], sig_level, delta0)
        if len(table)
        else pd.Series(dtype=str),
    )
    return table
