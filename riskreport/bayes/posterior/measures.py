"""Measures on fitted models (the thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md): system
effects and dominance, model choice (WAIC, PSIS-LOO and their differences), diagnostics, and the interval
rules BRisk⁻ (`brisk`) and PPDRisk⁻ (`ppdrisk`) share.

Tables are tidy and in the project's standard convention (higher is better): an effect below 0 is
worse than the baseline.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from riskreport.bayes.diagnosis.diagnostics import RHAT_MAX
from riskreport.bayes.fitting.fits import BayesFit
from riskreport.errors import ParameterError
from riskreport.stats.rankings import ordering, rbo

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


def interval_tails(level: float) -> tuple[float, float]:
    if not 0 < level < 1:
        raise ParameterError(f"level must be between 0 and 1, got {level!r}.")
    return (1 - level) / 2, (1 + level) / 2


def verdict(low, high) -> np.ndarray:
    """`risk` when an interval (standard convention) lies below 0, `reward` above, else `inconclusive`."""
    low, high = np.asarray(low), np.asarray(high)
    return np.select([high < 0, low > 0], ["risk", "reward"], "inconclusive")


NO_VERDICT = "no verdict"  # the verdict of a rule whose fit failed its checks (R̂, ESS, divergences)


def diagnostics_note(result: BayesFit) -> str:
    """`ok`, or what the fit failed in words (`failure`): shown beside every verdict drawn from it."""
    return "ok" if result.ok else f"FAILED: {failure(result)}"


def checked(verdicts, result: BayesFit) -> np.ndarray:
    """The verdicts a rule draws from `result`: as they are when the fit passed its checks, else `NO_VERDICT`
    (a failed fit gives no risk or reward, whatever its intervals say)."""
    verdicts = np.asarray(verdicts)
    return verdicts if result.ok else np.full(verdicts.shape, NO_VERDICT, dtype=object)


def failure(result: BayesFit) -> str:
    """What a fit failed, in words: `4 divergences`, `R̂ 1.032 ≥ 1.01`, `tail ESS 6,557 < 10,000` (joined by `; `);
    empty when it passed."""
    if result.ok:
        return ""
    d = result.diagnostics
    parts = []
    if not d.get("divergences_ok", d.get("divergences", 0) == 0):
        parts.append(_divergences(d["divergences"]))
    if not d.get("rhat_ok", True):
        parts.append(f"R̂ {d['max_rhat']:.3f} ≥ {RHAT_MAX:g}")
    if not d.get("ess_ok", True):
        which = "bulk" if d["min_ess_bulk"] <= d["min_ess_tail"] else "tail"
        parts.append(f"{which} ESS {d[f'min_ess_{which}']:,.0f} < {d['target_ess']:,}")
    return "; ".join(parts) or d.get("problems") or "failed its checks"


def retry_note(result: BayesFit) -> str:
    """`sampled again at target_accept 0.95 after 4 divergences at 0.8` when the sampler re-sampled the fit after
    divergent transitions (`settings["retry"]`), with every step of the ladder when there were several:
    `sampled again at target_accept 0.95 and 0.99 after 4 divergences at 0.8 and 2 at 0.95`; else empty."""
    retry = result.settings.get("retry")
    if not retry:
        return ""
    attempts = retry.get("attempts") or [
        {"target_accept": retry["from_target_accept"], "divergences": retry["divergences"]},
        {"target_accept": retry["to_target_accept"]},
    ]
    again = " and ".join(f"{attempt['target_accept']:g}" for attempt in attempts[1:])
    first, *rest = attempts[:-1]
    diverged = [f"{_divergences(first['divergences'])} at {first['target_accept']:g}"]
    diverged += [f"{int(attempt['divergences']):,} at {attempt['target_accept']:g}" for attempt in rest]
    return f"sampled again at target_accept {again} after {' and '.join(diverged)}"


def _divergences(n) -> str:
    return f"{int(n):,} divergence{'s' if int(n) != 1 else ''}"


TARGET_ACCEPT_STEPS = (0.9, 0.95, 0.99)  # what a fit with divergences tries next; above 0.99 NUTS's steps get so
# small that a divergence says the model does not suit the scores


def remedy(result: BayesFit) -> str:
    """What to change when a fit fails its checks, for its kind of failure, as template parameters (`-p NAME VALUE`):
    divergences → the next of `TARGET_ACCEPT_STEPS` (above the last, another model); R̂ → a longer warm-up and more
    draws; ESS short of the target → max_draws for the draws the target needs at the ESS per draw reached. Empty
    when it passed."""
    if result.ok:
        return ""
    d, s = result.diagnostics, result.settings
    steps = []
    if not d.get("divergences_ok", d.get("divergences", 0) == 0):
        now = float(s.get("target_accept", 0.8))
        higher = next((step for step in TARGET_ACCEPT_STEPS if step > now), None)
        again = f"{retry_note(result)}, it still diverged: " if s.get("retry") else ""
        steps.append(
            again + f"raise target_accept to {higher:g} (-p target_accept {higher:g})"
            if higher is not None
            else again
            + ("" if s.get("retry") else f"at target_accept {now:g} the sampler still diverges: ")
            + "the model does not suit these scores; report another (models, family, ppd_model)"
        )
    draws, max_draws = int(d.get("draws", 0)), int(s.get("max_draws", d.get("draws", 0)))
    more = max_draws
    if not d.get("ess_ok", True):
        reached = min(d["min_ess_bulk"], d["min_ess_tail"])
        needed = draws * d["target_ess"] / max(reached, 1.0) * 1.1  # ESS grows in proportion to the draws
        more = max(int(np.ceil(needed / 1000 - 1e-9)) * 1000, max_draws + 1000)  # whole thousands
    if not d.get("rhat_ok", True):
        tune = 2 * int(s.get("tune", 1000))
        more = max(more, 2 * max_draws)
        steps.append(f"sample longer: a longer warm-up (-p tune {tune}) and more draws (-p max_draws {more})")
    elif not d.get("ess_ok", True):
        steps.append(f"raise max_draws to {more:,} (-p max_draws {more}): {draws:,} draws reached ESS {reached:,.0f}")
    return "; ".join(steps)


def system_effects(result: BayesFit, level: float = 0.95) -> pd.DataFrame:
    """Posterior of every system effect r_sys: median, mean, equal-tailed interval, rank, R̂ and ESS.

    `rank` orders by posterior median (1 = best); `better_than` / `worse_than` count the systems
    whose interval lies entirely below / above this one's (dominance by non-overlap, the thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md).
    Columns `SYSTEM_COLUMNS` + `better_than`, `worse_than`.
    """
    lo, hi = interval_tails(level)
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
