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
Fast path (`fit_balanced`) for complete designs, where every instance of both systems has a
score on the same T topics (k_1 and k_2 instances, which may differ). Then the data split into
orthogonal strata, the eigenspaces of the covariance V, and REML factorises:

    instance x topic contrasts   (k_l − 1)(T − 1) dims   variance σ²_ε
    instance contrasts           k_l − 1 dims            σ²_ε + T·σ²_s       (non-deterministic l)
    topic contrasts              T − 1 pairs (w_1, w_2)  Σ = σ²_t·J + σ²_at·I + σ²_ε·diag(1/k_1, 1/k_2)
    the two system means         absorbed by the fixed effects

so −2·ℓ_REML = df_E·log σ²_ε + SS_E/σ²_ε + df_I·log(σ²_ε + T·σ²_s) + SS_I/(σ²_ε + T·σ²_s)
+ (T − 1)·log|Σ| + tr(Σ⁻¹S) + const, a function of six sums of squares computed in one pass.
With k_1 = k_2, Σ diagonalises along (1, 1) and (1, −1) and the REML estimates are the ANOVA
closed forms when those are ≥ 0; otherwise the four variances are found by L-BFGS-B with the
analytic gradient under the bounds ≥ 0. The GLS effect is the difference of the system means
(V leaves the column space of the design invariant), with
Var = σ²_s·(δ_1/k_1 + δ_2/k_2) + 2σ²_at/T + σ²_ε·(1/k_1 + 1/k_2)/T, δ_l = 1 for non-deterministic l.
Both paths give the same estimates and SEs (|difference| ≤ 1e-4, tests/test_mixed.py); an
incomplete design is fitted with MixedLM and the `method`/`note` columns say so.

>>> scores = riskreport.stats.instances.evaluate_instances("demo", "nDCG@10")   # doctest: +SKIP
>>> mixed_table(scores.scores, "bm25", "nDCG@10", delta0=0.01)            # doctest: +SKIP
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import optimize, stats

from riskreport.errors import ParameterError, RiskReportError
from riskreport.stats.corrections import adjust_pvalues
from riskreport.options import check_options
from riskreport.stats.risk import challengers as risk_challengers, risk_adjusted_scores

MIXED_COLUMNS = ["system", "baseline", "measure", "effect", "se", "df", "ci_low", "ci_high", "p_value",
                 "var_topic", "var_instance", "var_topic_system", "var_residual", "delta0", "verdict"]
SYSTEM_EFFECT_COLUMNS = ["system", "measure", "alpha", "effect", "se", "ci_low", "ci_high", "p_value", "p_adjusted"]
COMPONENTS = ("topic", "instance", "topic_system", "residual")
VERDICTS = ("equivalent", "not_worse", "worse", "better", "inconclusive")
METHODS = ("auto", "balanced", "mixedlm")
BALANCED = "balanced REML"
MIXEDLM = "statsmodels MixedLM"
SPARSE_ROWS = 3000               # MixedLM with sparse design matrices above this many scores (faster there)


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


@dataclass(frozen=True)
class _Strata:
    """Sufficient statistics of a complete design (module docstring)."""

    n_topics: int
    k: tuple[int, int]
    means: tuple[float, float]
    ss_residual: float
    df_residual: int
    ss_instance: float
    df_instance: int
    cross: np.ndarray = field(repr=False)   # S: 2 x 2 cross-products of the centred per-topic instance means


def _strata(first: np.ndarray, second: np.ndarray) -> _Strata:
    """Sums of squares of the orthogonal strata of two complete instances x topics matrices."""
    ss_e = ss_i = 0.0
    df_e = df_i = 0
    topic_means, means = [], []
    n_topics = first.shape[1]
    for y in (first, second):
        k = y.shape[0]
        row, column, grand = y.mean(axis=1, keepdims=True), y.mean(axis=0), y.mean()
        ss_e += float(((y - row - column + grand) ** 2).sum())
        ss_i += float(n_topics * ((row - grand) ** 2).sum())
        df_e += (k - 1) * (n_topics - 1)
        df_i += k - 1
        topic_means.append(column - grand)
        means.append(float(grand))
    centred = np.array(topic_means)
    return _Strata(n_topics, (first.shape[0], second.shape[0]), (means[0], means[1]), ss_e, df_e, ss_i, df_i,
                   centred @ centred.T)


def _reml_objective(theta: np.ndarray, st: _Strata) -> tuple[float, np.ndarray]:
    """−2·ℓ_REML (up to a constant) and its gradient in (σ²_topic, σ²_topic_system, σ²_instance, σ²_residual)."""
    a, b, s, e = theta
    k1, k2 = st.k
    value, grad = 0.0, np.zeros(4)
    if st.df_residual > 0:
        value += st.df_residual * np.log(e) + st.ss_residual / e
        grad[3] += st.df_residual / e - st.ss_residual / e ** 2
    if st.df_instance > 0:
        phi = e + st.n_topics * s
        value += st.df_instance * np.log(phi) + st.ss_instance / phi
        d = st.df_instance / phi - st.ss_instance / phi ** 2
        grad[2] += st.n_topics * d
        grad[3] += d
    s11, s22 = a + b + e / k1, a + b + e / k2
    det = s11 * s22 - a * a
    if not det > 0:
        return np.inf, grad
    inverse = np.array([[s22, -a], [-a, s11]]) / det
    value += (st.n_topics - 1) * np.log(det) + float((inverse * st.cross).sum())
    m = (st.n_topics - 1) * inverse - inverse @ st.cross @ inverse
    grad += [m.sum(), np.trace(m), 0.0, m[0, 0] / k1 + m[1, 1] / k2]
    return float(value), grad


def _closed_form(st: _Strata) -> np.ndarray | None:
    """ANOVA = REML estimates for k_1 = k_2 when all are ≥ 0, else None."""
    if st.k[0] != st.k[1]:
        return None
    k, t1 = st.k[0], st.n_topics - 1
    e = st.ss_residual / st.df_residual if st.df_residual else 0.0
    s = (st.ss_instance / st.df_instance - e) / st.n_topics if st.df_instance else 0.0
    ms_sum = (st.cross[0, 0] + st.cross[1, 1] + 2 * st.cross[0, 1]) / 2 / t1
    ms_diff = (st.cross[0, 0] + st.cross[1, 1] - 2 * st.cross[0, 1]) / 2 / t1
    theta = np.array([(ms_sum - ms_diff) / 2, ms_diff - e / k, s, e])
    return theta if (theta >= 0).all() and (st.df_residual == 0 or e > 0) else None


def _start(st: _Strata) -> np.ndarray:
    """Moment estimates, clipped into the interior: the optimiser's starting point."""
    k1, k2 = st.k
    t1 = st.n_topics - 1
    e = st.ss_residual / st.df_residual if st.df_residual else 0.0
    s = (st.ss_instance / st.df_instance - e) / st.n_topics if st.df_instance else 0.0
    sigma = st.cross / t1
    a = sigma[0, 1]
    b = (sigma[0, 0] - e / k1 + sigma[1, 1] - e / k2) / 2 - a
    total = max(np.trace(sigma) / 2, 1e-300)
    return np.maximum([a, b, s, e], 0.05 * total)


def _reml_variances(st: _Strata, closed_form: bool = True) -> np.ndarray:
    """REML estimates of (σ²_topic, σ²_topic_system, σ²_instance, σ²_residual) of a complete design.

    The ANOVA closed form where it applies (k_1 = k_2, estimates ≥ 0), else the bounded optimiser.
    """
    exact = _closed_form(st) if closed_form else None
    if exact is not None:
        return exact
    scale = max(float(np.trace(st.cross)) / 2 / (st.n_topics - 1), st.ss_residual / max(st.df_residual, 1), 1e-300)
    scaled = _Strata(st.n_topics, st.k, st.means, st.ss_residual / scale, st.df_residual, st.ss_instance / scale,
                     st.df_instance, st.cross / scale)
    tiny = 1e-12
    bounds = [(0.0, None),
              (tiny if st.df_residual == 0 else 0.0, None),             # Σ must stay positive definite
              (0.0, None) if st.df_instance else (0.0, 0.0),
              (tiny, None) if st.df_residual else (0.0, 0.0)]           # σ²_ε not identifiable: fixed at 0
    lower, upper = zip(*[(lo, np.inf if hi is None else hi) for lo, hi in bounds])
    start = np.clip(_start(st) / scale, lower, upper)
    result = optimize.minimize(_reml_objective, start, args=(scaled,), jac=True, method="L-BFGS-B", bounds=bounds,
                               options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 2000})
    return np.where(result.x <= tiny * 10, 0.0, result.x) * scale


def fit_balanced(challenger: np.ndarray, baseline: np.ndarray, system: str = "challenger",
                 baseline_name: str = "baseline") -> MixedFit:
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
    st = _strata(first, second)
    if st.ss_residual + st.ss_instance + float(np.trace(st.cross)) == 0:
        variances = np.zeros(4)
    else:
        variances = _reml_variances(st)
    topic, interaction, instance, residual = variances
    k1, k2 = st.k
    var = (instance * (float(k1 > 1) / k1 + float(k2 > 1) / k2) + 2 * interaction / n_topics
           + residual * (1 / k1 + 1 / k2) / n_topics)
    note = ""
    if st.df_residual == 0:
        note = ("one instance per system: the residual cannot be told apart from the topic × system "
                "interaction (both are in var_topic_system) and the model reduces to the paired t-test")
        residual = float("nan")
    return MixedFit(system, baseline_name, st.means[0] - st.means[1], float(np.sqrt(max(var, 0.0))), n_topics,
                    st.k, {"topic": float(topic), "instance": float(instance), "topic_system": float(interaction),
                           "residual": float(residual)}, BALANCED, note)


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
    data = data.assign(challenger=(data["system"] == system).astype(float), group=0,
                       nondeterministic=data["system"].map(lambda s: float(counts[s] > 1)),
                       topic_code=pd.factorize(data["topic"])[0], system_code=pd.factorize(data["system"])[0],
                       instance_code=pd.factorize(data["system"] + "\x00" + data["instance"])[0])
    vc = {"topic": "0 + C(topic_code)", "topic_system": "0 + C(topic_code):C(system_code)"}
    if data["nondeterministic"].any():
        vc["instance"] = "0 + C(instance_code):nondeterministic"
    model = smf.mixedlm("score ~ challenger", data, groups="group", re_formula="0", vc_formula=vc,
                        use_sparse=len(data) > SPARSE_ROWS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = model.fit(reml=True)
    components = dict(zip(model.exog_vc.names, np.asarray(result.vcomp, dtype=float)))
    notes = [] if result.converged else ["MixedLM did not converge"]
    notes += sorted({str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)
                     and "boundary" not in str(w.message)})
    return MixedFit(system, baseline, float(result.fe_params["challenger"]), float(result.bse_fe["challenger"]),
                    int(data["topic"].nunique()), (int(counts[system]), int(counts[baseline])),
                    {"topic": components["topic"], "instance": components.get("instance", 0.0),
                     "topic_system": components["topic_system"], "residual": float(result.scale)},
                    MIXEDLM, "; ".join(notes))


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


def equivalence_verdicts(effect, se, df, sig_level: float, delta0: float) -> np.ndarray:
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


def mixed_table(scores: pd.DataFrame, baseline: str, measure: str = "", sig_level: float = 0.05,
                delta0: float = 0.01, systems: Sequence[str] | None = None, method: str = "auto") -> pd.DataFrame:
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
        rows.append({"system": system, "baseline": baseline, "measure": measure, "effect": fit.effect,
                     "se": fit.se, "df": fit.df, "ci_low": low, "ci_high": high, "p_value": fit.p_value,
                     **{f"var_{c}": fit.variances[c] for c in COMPONENTS}, "delta0": float(delta0),
                     "tost_low": tost_low, "tost_high": tost_high,
                     **{f"share_{c}": fit.shares[c] for c in COMPONENTS},
                     "n_instances": fit.n_instances[0], "n_baseline_instances": fit.n_instances[1],
                     "n_topics": fit.n_topics, "method": fit.method, "note": fit.note})
    table = pd.DataFrame(rows, columns=MIXED_COLUMNS[:-1] + [
        "tost_low", "tost_high", *[f"share_{c}" for c in COMPONENTS], "n_instances", "n_baseline_instances",
        "n_topics", "method", "note"])
    table.insert(MIXED_COLUMNS.index("verdict"), "verdict",
                 equivalence_verdicts(table["effect"], table["se"], table["df"], sig_level, delta0)
                 if len(table) else pd.Series(dtype=str))
    return table




# Every system against the baseline at each α (deterministic systems; templates/risk_report.ipynb)

def mixed_systems(matrix: pd.DataFrame, baseline: str, alphas: Sequence[float], measure: str = "",
                  correction: str = "holm", level: float = 0.95, method: str = "auto") -> pd.DataFrame:
    """System effects against the baseline from `score ~ system + (1 | topic)` on the thesis Eq. 4.5
    risk-adjusted scores at each α (the frequentist counterpart of the thesis's Bayesian model).

    `method="statsmodels"` fits statsmodels MixedLM (REML); `"auto"` uses its closed form for a
    complete systems x topics design (one score per cell), which gives the same REML estimates:
    effect = mean difference, SE = √(2σ²/c) with σ² the REML residual variance. z-based p and CI
    as statsmodels reports them; p adjusted across challengers with `correction`. Columns `SYSTEM_EFFECT_COLUMNS`.
    """
    scores = risk_adjusted_scores(matrix, baseline, alphas)
    challengers = risk_challengers(matrix, baseline)
    z = stats.norm.ppf(0.5 + level / 2)
    parts = []
    for alpha, frame in scores.groupby("alpha", sort=True):
        if method == "statsmodels":
            effect, se = _mixedlm_effects(frame, baseline, challengers)
        else:
            effect, se = _balanced_effects(frame["score"].to_numpy().reshape(matrix.shape), list(matrix.index),
                                           baseline, challengers)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(se > 0, 2 * stats.norm.sf(np.abs(effect / np.where(se > 0, se, 1))), np.nan)
        parts.append(pd.DataFrame({"system": challengers, "measure": measure, "alpha": alpha, "effect": effect,
                                   "se": se, "ci_low": effect - z * se, "ci_high": effect + z * se, "p_value": p,
                                   "p_adjusted": adjust_pvalues(p, correction)}))
    return pd.concat(parts, ignore_index=True)


def _balanced_effects(x: np.ndarray, systems: list, baseline: str, challengers: list):
    """REML for a complete two-way layout with a random topic intercept, in closed form."""
    k, c = x.shape
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    ss_error = (resid ** 2).sum()
    ss_topic = k * ((x.mean(axis=0) - x.mean()) ** 2).sum()
    df_error, df_topic = (k - 1) * (c - 1), c - 1
    ms_error = ss_error / df_error if df_error else 0.0
    ms_topic = ss_topic / df_topic if df_topic else 0.0
    # REML = ANOVA estimates inside the parameter space; on the boundary (topic variance 0) the
    # topic and error sums of squares pool.
    sigma2 = ms_error if ms_topic >= ms_error else (ss_error + ss_topic) / (df_error + df_topic)
    if df_error == 0:                                # one topic: the residual variance cannot be estimated
        sigma2 = np.nan
    means = x.mean(axis=1)
    index = {s: i for i, s in enumerate(systems)}
    effect = np.array([means[index[s]] - means[index[baseline]] for s in challengers])
    se = np.full(len(challengers), np.sqrt(2 * sigma2 / c))
    return effect, se


def _mixedlm_effects(frame: pd.DataFrame, baseline: str, challengers: list):
    import statsmodels.formula.api as smf
    data = frame.assign(system=pd.Categorical(frame["system"], categories=[baseline] + challengers))
    model = smf.mixedlm("score ~ C(system)", data, groups=data["topic"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = model.fit(reml=True)
        except np.linalg.LinAlgError:       # singular at the boundary (topic variance 0): derivative-free
            fit = model.fit(reml=True, method="powell")
    names = [f"C(system)[T.{s}]" for s in challengers]
    return fit.fe_params[names].to_numpy(), fit.bse_fe[names].to_numpy()
