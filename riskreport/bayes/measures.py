"""Measures and rules on fitted models (the thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md): system effects and dominance, BRisk⁻, PPDRisk⁻, model choice.

Tables are tidy and in the project's standard convention (higher is better): an effect or a
`ppd_urisk` below 0 is worse than the baseline. The thesis's minus family is their negation:
BRisk⁻ = −effect, PPDRisk⁻ = −ppd_urisk (positive = risk).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from riskreport.bayes.models import LABELS, BayesData, paired_data, predict, scores_data
from riskreport.bayes.sampling import BayesFit, fit
from riskreport.errors import ParameterError
from riskreport.stats.rankings import ordering, rbo
from riskreport.stats.risk import risk_adjusted, risk_adjusted_scores

MODEL_COLUMNS = [
    "model",
    "waic",
    "p_waic",
    "loo",
    "p_loo",
    "chains",
    "draws",
    "divergences",
    "max_rhat",
    "min_ess_bulk",
    "min_ess_tail",
    "seconds",
]
SYSTEM_COLUMNS = [
    "model",
    "system",
    "effect_median",
    "effect_mean",
    "effect_low",
    "effect_high",
    "rank",
    "rhat",
    "ess_bulk",
    "ess_tail",
]
BRISK_COLUMNS = [
    "system",
    "baseline",
    "measure",
    "model",
    "alpha",
    "effect_mean",
    "effect_low",
    "effect_high",
    "baseline_low",
    "baseline_high",
    "verdict_overlap",
    "diff_mean",
    "diff_low",
    "diff_high",
    "verdict_difference",
    "diagnostics",
]
PPDRISK_COLUMNS = [
    "system",
    "baseline",
    "measure",
    "model",
    "alpha",
    "ppd_urisk_median",
    "ppd_urisk_mean",
    "ppd_urisk_low",
    "ppd_urisk_high",
    "verdict",
    "diagnostics",
]


def _tails(level: float) -> tuple[float, float]:
    if not 0 < level < 1:
        raise ParameterError(f"level must be between 0 and 1, got {level!r}.")
    return (1 - level) / 2, (1 + level) / 2


def verdict(low, high) -> np.ndarray:
    """`risk` when an interval (standard convention) lies below 0, `reward` above, else `inconclusive`."""
    low, high = np.asarray(low), np.asarray(high)
    return np.select([high < 0, low > 0], ["risk", "reward"], "inconclusive")


def diagnostics_note(result: BayesFit) -> str:
    """`ok`, or what the fit failed (R̂, ESS, divergences): shown beside every verdict drawn from it."""
    return "ok" if result.ok else f"FAILED: {result.diagnostics['problems']}"


def system_effects(result: BayesFit, level: float = 0.95) -> pd.DataFrame:
    """Posterior of every system effect r_sys: median, mean, equal-tailed interval, rank, R̂ and ESS.

    `rank` orders by posterior median (1 = best); `better_than` / `worse_than` count the systems
    whose interval lies entirely below / above this one's (dominance by non-overlap, the thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md).
    Columns `SYSTEM_COLUMNS` + `better_than`, `worse_than`.
    """
    lo, hi = _tails(level)
    r = result.flat("r_sys")
    low, high = np.quantile(r, [lo, hi], axis=0)
    median = np.median(r, axis=0)
    per = result.diagnostics["per_parameter"]
    table = pd.DataFrame(
        {
            "model": result.model,
            "system": list(result.data.systems),
            "effect_median": median,
            "effect_mean": r.mean(axis=0),
            "effect_low": low,
            "effect_high": high,
            "rhat": [per[f"r_sys[{i}]"][0] for i in range(r.shape[1])],
            "ess_bulk": [per[f"r_sys[{i}]"][1] for i in range(r.shape[1])],
            "ess_tail": [per[f"r_sys[{i}]"][2] for i in range(r.shape[1])],
        }
    )
    table.insert(6, "rank", table["effect_median"].rank(ascending=False, method="min").astype(int))
    table["better_than"] = (low[:, None] > high[None, :]).sum(axis=1)
    table["worse_than"] = (high[:, None] < low[None, :]).sum(axis=1)
    return table.sort_values("rank", kind="stable").reset_index(drop=True)


def dominance_pairs(effects: pd.DataFrame) -> pd.DataFrame:
    """Every pair (better, worse) of one model whose intervals do not overlap: `model, better, worse`."""
    rows = []
    for model, table in effects.groupby("model", sort=False):
        low, high, names = table["effect_low"].to_numpy(), table["effect_high"].to_numpy(), table["system"].to_numpy()
        better, worse = np.nonzero(low[:, None] > high[None, :])
        rows.append(pd.DataFrame({"model": model, "better": names[better], "worse": names[worse]}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["model", "better", "worse"])


def effects_rbo(effects: pd.DataFrame, p: float = 0.9) -> pd.DataFrame:
    """RBO (φ = `p`) between the orderings of the systems by posterior median under each pair of models."""
    orders = {m: ordering(t.set_index("system")["effect_median"]) for m, t in effects.groupby("model", sort=False)}
    names = list(orders)
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            low, residual = rbo(orders[a], orders[b], p)
            rows.append({"a": a, "b": b, "rbo_min": low, "rbo_residual": residual})
    return pd.DataFrame(rows, columns=["a", "b", "rbo_min", "rbo_residual"])


def model_table(results: Sequence[BayesFit]) -> pd.DataFrame:
    """WAIC, PSIS-LOO (deviance scale, lower is better) and diagnostics per fit: `MODEL_COLUMNS` + extras."""
    rows = []
    for result in results:
        c, d = result.criteria, result.diagnostics
        rows.append(
            {
                "model": result.model,
                "label": result.label,
                "waic": c["waic"],
                "p_waic": c["p_waic"],
                "loo": c["loo"],
                "p_loo": c["p_loo"],
                "chains": d["chains"],
                "draws": d["draws"],
                "divergences": d["divergences"],
                "max_rhat": d["max_rhat"],
                "min_ess_bulk": d["min_ess_bulk"],
                "min_ess_tail": d["min_ess_tail"],
                "seconds": result.seconds,
                "waic_se": c["waic_se"],
                "loo_se": c["loo_se"],
                "pareto_k_above_0_7": c["pareto_k_above_0_7"],
                "diagnostics": diagnostics_note(result),
                "cached": result.cached,
            }
        )
    return pd.DataFrame(rows)


COMPARE_COLUMNS = ["criterion", "model", "rank", "elpd", "se", "p", "elpd_diff", "dse", "weight", "warning"]


def _elpd_data(result: BayesFit, criterion: str):
    """ArviZ's ELPDData of a fit, rebuilt from its stored pointwise values (log scale)."""
    import xarray as xr
    from arviz.stats.stats_utils import ELPDData

    pointwise = result.pointwise[f"elpd_{criterion}_i"]
    c = result.criteria
    n_samples = c["loglik_draws"]
    values = {
        f"elpd_{criterion}": float(pointwise.sum()),
        "se": c[f"{criterion}_se"] / 2,
        f"p_{criterion}": c[f"p_{criterion}"],
        "n_samples": n_samples,
        "n_data_points": len(pointwise),
        "warning": False,
        f"{criterion}_i": xr.DataArray(pointwise, dims=["observation"]),
    }
    if criterion == "loo":
        values.update(
            pareto_k=xr.DataArray(result.pointwise["pareto_k"], dims=["observation"]),
            warning=bool(c["pareto_k_above_0_7"] > 0),
        )
    values["scale"] = "log"
    if criterion == "loo":
        values["good_k"] = min(1 - 1 / np.log10(n_samples), 0.7)
    return ELPDData(data=list(values.values()), index=list(values))


def compare_table(results: Sequence[BayesFit]) -> pd.DataFrame:
    """Model comparison by expected log predictive density (ArviZ `compare`, stacking weights), by PSIS-LOO and WAIC.

    Log scale, higher is better: `elpd_diff` is each model's difference from the best, `dse` the
    standard error of that difference (from the pointwise values; Vehtari, Gelman & Gabry 2017).
    A difference within about 2 × `dse` does not separate the models. Columns `COMPARE_COLUMNS`.
    """
    import warnings

    import arviz as az

    fits = [r for r in results if r.pointwise]
    if len(fits) < 2:
        return pd.DataFrame(columns=COMPARE_COLUMNS)
    tables = []
    for criterion in ("loo", "waic"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compared = az.compare({r.model: _elpd_data(r, criterion) for r in fits}, ic=criterion, scale="log")
        tables.append(
            pd.DataFrame(
                {
                    "criterion": "PSIS-LOO" if criterion == "loo" else "WAIC",
                    "model": compared.index,
                    "rank": compared["rank"].to_numpy() + 1,
                    "elpd": compared[f"elpd_{criterion}"].to_numpy(),
                    "se": compared["se"].to_numpy(),
                    "p": compared[f"p_{criterion}"].to_numpy(),
                    "elpd_diff": compared["elpd_diff"].to_numpy(),
                    "dse": compared["dse"].to_numpy(),
                    "weight": compared["weight"].to_numpy(),
                    "warning": compared["warning"].to_numpy(),
                }
            )
        )
    return pd.concat(tables, ignore_index=True)


def diagnostics_table(results: Sequence[BayesFit]) -> pd.DataFrame:
    """R̂ and bulk/tail ESS of every parameter group of every fit, with the fit's pass/fail verdict."""
    rows = []
    for result in results:
        groups: dict[str, list] = {}
        for name, values in result.diagnostics["per_parameter"].items():
            groups.setdefault(name.split("[")[0], []).append(values)
        for group, values in groups.items():
            values = np.array(values)
            rows.append(
                {
                    "model": result.model,
                    "parameter": group,
                    "count": len(values),
                    "max_rhat": values[:, 0].max(),
                    "min_ess_bulk": values[:, 1].min(),
                    "min_ess_tail": values[:, 2].min(),
                }
            )
    return pd.DataFrame(rows)


def adjusted_data(matrix: pd.DataFrame, baseline: str, alpha: float) -> BayesData:
    """The scores of BRisk⁻ at `alpha`: every system but the champion adjusted by thesis Eq. 4.5, coded for a model."""
    adjusted = risk_adjusted_scores(matrix, baseline, [alpha]).drop(columns="alpha")
    return scores_data(adjusted, systems=list(matrix.index))


def _fit_adjusted(matrix: pd.DataFrame, baseline: str, alpha: float, family: str, fit_options: dict) -> BayesFit:
    return fit(family, adjusted_data(matrix, baseline, alpha), **{"criteria": False, **fit_options})


def brisk_table(
    matrix: pd.DataFrame,
    baseline: str,
    alphas: Sequence[float],
    family: str = "skew_normal",
    measure: str = "",
    level: float = 0.95,
    challengers: Sequence[str] | None = None,
    unadjusted: BayesFit | None = None,
    **fit_options,
) -> tuple[pd.DataFrame, list[BayesFit]]:
    """BRisk⁻ per α (thesis Ch. 4; docs/measures/bayesian.md), in the standard convention; returns (table, fits).

    `unadjusted`: a BHM-`family` fit on `matrix` itself, if there is one: at α = 0 Eq. 4.5 changes no
    score, so it serves as the α = 0 fit instead of sampling the same posterior again.

    Every non-champion system of `matrix` (the model's pool) is adjusted by thesis Eq. 4.5 with α,
    the champion is unchanged, and BHM-`family` (skew_normal, the thesis's definition, or gaussian)
    is fitted. `effect_*` is r_sys[i] (BRisk⁻ = −effect). `verdict_overlap` is the thesis's rule
    (the challenger's interval does not overlap the baseline's); `verdict_difference` is the
    draw-wise interval of r_sys[c] − r_sys[h] (`diff_*`), a more powerful rule the thesis did not use.
    """
    if family not in ("skew_normal", "gaussian"):
        raise ParameterError(f"family of BRisk⁻ must be skew_normal or gaussian, got {family!r}.")
    lo, hi = _tails(level)
    systems = list(matrix.index)
    challengers = [s for s in (challengers or systems) if s != baseline]
    rows, fits = [], []
    for alpha in alphas:
        if unadjusted is not None and alpha == 0 and unadjusted.model == family:
            result = unadjusted
        else:
            result = _fit_adjusted(matrix, baseline, float(alpha), family, fit_options)
        fits.append(result)
        r = result.flat("r_sys")
        h = r[:, systems.index(baseline)]
        cols = [systems.index(s) for s in challengers]
        effect = r[:, cols]
        low, high = np.quantile(effect, [lo, hi], axis=0)
        base_low, base_high = np.quantile(h, [lo, hi])
        diff = effect - h[:, None]
        diff_low, diff_high = np.quantile(diff, [lo, hi], axis=0)
        rows.append(
            pd.DataFrame(
                {
                    "system": challengers,
                    "baseline": baseline,
                    "measure": measure,
                    "model": family,
                    "alpha": float(alpha),
                    "effect_mean": effect.mean(axis=0),
                    "effect_low": low,
                    "effect_high": high,
                    "baseline_low": base_low,
                    "baseline_high": base_high,
                    "verdict_overlap": np.select(
                        [high < base_low, low > base_high], ["risk", "reward"], "inconclusive"
                    ),
                    "diff_mean": diff.mean(axis=0),
                    "diff_low": diff_low,
                    "diff_high": diff_high,
                    "verdict_difference": verdict(diff_low, diff_high),
                    "diagnostics": diagnostics_note(result),
                }
            )
        )
    return pd.concat(rows, ignore_index=True), fits


def paired_table(
    matrix: pd.DataFrame,
    baseline: str,
    alphas: Sequence[float],
    family: str = "gaussian",
    measure: str = "",
    level: float = 0.95,
    challengers: Sequence[str] | None = None,
    **fit_options,
) -> tuple[pd.DataFrame, list[BayesFit]]:
    """Paired models (one challenger vs the champion): the intercept of d_j = −l_α(Δ_j) is URisk⁻.

    Reported in the standard convention: `urisk_*` = −intercept (URisk_α), with its verdict.
    """
    lo, hi = _tails(level)
    model = f"paired_{family}"
    rows, fits = [], []
    for system in [s for s in (challengers or matrix.index) if s != baseline]:
        delta = (matrix.loc[system] - matrix.loc[baseline]).to_numpy(dtype=float)
        for alpha in alphas:
            result = fit(
                model,
                paired_data(-risk_adjusted(delta, [alpha])[0], system, matrix.columns),
                **{"criteria": False, **fit_options},
            )
            fits.append(result)
            urisk = -result.flat("b")
            low, high = np.quantile(urisk, [lo, hi])
            rows.append(
                {
                    "system": system,
                    "baseline": baseline,
                    "measure": measure,
                    "model": model,
                    "alpha": float(alpha),
                    "urisk_mean": urisk.mean(),
                    "urisk_median": np.median(urisk),
                    "urisk_low": low,
                    "urisk_high": high,
                    "verdict": str(verdict(low, high)),
                    "diagnostics": diagnostics_note(result),
                }
            )
    return pd.DataFrame(rows), fits


def cell_index(result: BayesFit) -> np.ndarray:
    """(systems, topics) → observation index; every system must have exactly one score per topic."""
    data = result.data
    index = np.full((len(data.systems), len(data.topics)), -1)
    index[data.system, data.topic] = np.arange(data.n)
    counts = np.zeros_like(index)
    np.add.at(counts, (data.system, data.topic), 1)
    if np.any(counts != 1):
        raise ParameterError("PPDRisk⁻ needs exactly one score per system and topic in the model's data.")
    return index


def ppdrisk_draws(
    result: BayesFit,
    baseline: str,
    alphas: Sequence[float],
    challengers: Sequence[str] | None = None,
    seed: int = 2026,
    chunk: int = 2000,
) -> tuple[np.ndarray, list[str]]:
    """Draws of −PPDRisk⁻_α = mean_j l_α(ỹ[d,c,j] − ỹ[d,h,j]) (thesis Ch. 5; docs/measures/bayesian.md), shape (alphas, draws, challengers).

    One replicate ỹ per posterior draw and observed cell, independent across cells, made `chunk`
    draws at a time: memory stays bounded by chunk × observations whatever the number of draws.
    """
    systems = list(result.data.systems)
    if baseline not in systems:
        raise ParameterError(f"The baseline {baseline!r} is not in the model's pool.")
    challengers = [s for s in (challengers or systems) if s != baseline]
    cells = cell_index(result)
    h, cols = systems.index(baseline), [systems.index(s) for s in challengers]
    draws = result.flat_draws()
    total = len(draws["b"])
    out = np.empty((len(alphas), total, len(challengers)))
    rng = np.random.default_rng(seed)
    for start in range(0, total, chunk):
        part = {name: values[start : start + chunk] for name, values in draws.items()}
        replicate = predict(result.model, result.data, part, rng)[:, cells]  # (d, S, T)
        delta = replicate[:, cols, :] - replicate[:, [h], :]
        out[:, start : start + chunk, :] = risk_adjusted(delta, alphas).mean(axis=-1)
    return out, challengers


def ppdrisk_table(
    result: BayesFit,
    baseline: str,
    alphas: Sequence[float],
    measure: str = "",
    level: float = 0.95,
    challengers: Sequence[str] | None = None,
    seed: int = 2026,
    draws: tuple[np.ndarray, list[str]] | None = None,
) -> pd.DataFrame:
    """PPDRisk⁻ per challenger and α in the standard convention: `ppd_urisk` = −PPDRisk⁻.

    Point estimate: the median over draws (and the mean); interval: equal-tailed at `level`.
    `verdict` is `risk` when the interval lies below 0 (PPDRisk⁻ above 0), `reward` above.
    """
    lo, hi = _tails(level)
    values, names = draws or ppdrisk_draws(result, baseline, alphas, challengers, seed)
    low, high = np.quantile(values, [lo, hi], axis=1)
    return pd.DataFrame(
        {
            "system": np.tile(names, len(alphas)),
            "baseline": baseline,
            "measure": measure,
            "model": result.model,
            "alpha": np.repeat([float(a) for a in alphas], len(names)),
            "ppd_urisk_median": np.median(values, axis=1).reshape(-1),
            "ppd_urisk_mean": values.mean(axis=1).reshape(-1),
            "ppd_urisk_low": low.reshape(-1),
            "ppd_urisk_high": high.reshape(-1),
            "verdict": verdict(low, high).reshape(-1),
            "diagnostics": diagnostics_note(result),
        }
    )


def predictive_overlay(result: BayesFit, replicates: int = 40, seed: int = 2026) -> pd.DataFrame:
    """`replicates` posterior predictive data sets (evenly spaced draws) beside the observed scores.

    Tidy `model, source, replicate, score`: source `observed` (replicate −1) or `predicted`.
    """
    draws = result.flat_draws()
    picks = np.linspace(0, len(draws["b"]) - 1, replicates).astype(int)
    predicted = predict(result.model, result.data, {k: v[picks] for k, v in draws.items()}, np.random.default_rng(seed))
    n = result.data.n
    return pd.DataFrame(
        {
            "model": result.model,
            "label": LABELS[result.model],
            "source": ["observed"] * n + ["predicted"] * predicted.size,
            "replicate": np.concatenate([np.full(n, -1), np.repeat(np.arange(replicates), n)]),
            "score": np.concatenate([result.data.y, predicted.reshape(-1)]),
        }
    )
