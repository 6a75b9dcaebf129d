"""One call for the Bayesian risk report: every fit, table and figure input of `templates/bayesian_risk.ipynb`."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from riskreport.bayes.fitting.chains import check_executor
from riskreport.bayes.fitting.fit_progress import FitProgress, stderr_progress
from riskreport.bayes.fitting.fits import BayesFit
from riskreport.bayes.fitting.sampling import Progress, fit, prepare
from riskreport.bayes.modelling.models import LABELS, check_model
from riskreport.bayes.modelling.scores import rbp_rank_gains, scores_data
from riskreport.bayes.posterior.brisk import adjusted_data, brisk_table
from riskreport.bayes.posterior.measures import (
    compare_table,
    diagnostics_note,
    dominance_pairs,
    effects_rbo,
    model_table,
    retry_note,
    system_effects,
)
from riskreport.bayes.posterior.ppdrisk import ppdrisk_draws, ppdrisk_table, predictive_overlay
from riskreport.errors import ParameterError

HIERARCHICAL = ("gaussian", "skew_normal", "zoib")


@dataclass
class BayesianRisk:
    """Results of `bayesian_risk`: the fits and their tidy tables (standard convention)."""

    fits: dict
    models: pd.DataFrame
    systems: pd.DataFrame
    dominance: pd.DataFrame
    rbo: pd.DataFrame
    diagnostics: pd.DataFrame
    overlay: pd.DataFrame
    brisk: pd.DataFrame
    brisk_fits: list
    ppdrisk: pd.DataFrame
    ppd_draws: np.ndarray
    ppd_systems: list
    ppd_model: str
    comparison: pd.DataFrame = field(default_factory=pd.DataFrame)
    rank: pd.DataFrame = field(default_factory=pd.DataFrame)
    settings: dict = field(default_factory=dict)

    @property
    def all_fits(self) -> list[BayesFit]:
        return list({id(f): f for f in list(self.fits.values()) + list(self.brisk_fits)}.values())  # α = 0 reuses a fit


def check_options(
    models: Sequence[str], family: str, ppd_model: str, level: float
) -> tuple[list[str], str, str, float]:
    """The template's model choices, checked: hierarchical models, BRisk⁻ family, PPDRisk⁻ model and level."""
    if isinstance(models, str) or not models:
        raise ParameterError(f"models must be a non-empty list among {', '.join(HIERARCHICAL)}, got {models!r}.")
    for model in models:
        check_model(model)
        if model not in HIERARCHICAL:
            raise ParameterError(f"models lists the hierarchical models {', '.join(HIERARCHICAL)}; got {model!r}.")
    if family not in ("skew_normal", "gaussian"):
        raise ParameterError(f"family must be skew_normal or gaussian, got {family!r}.")
    if ppd_model not in ("zoib", "gaussian"):
        raise ParameterError(f"ppd_model must be zoib or gaussian, got {ppd_model!r}.")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ParameterError(f"level must be a number between 0 and 1, got {level!r}.")
    return list(dict.fromkeys(models)), family, ppd_model, float(level)


def bayesian_risk(
    matrix: pd.DataFrame,
    baseline: str,
    alphas: Sequence[float],
    *,
    measure: str = "",
    models: Sequence[str] = ("gaussian", "zoib"),
    family: str = "gaussian",
    ppd_model: str = "zoib",
    challengers: Sequence[str] | None = None,
    level: float = 0.95,
    target_ess: int = 10_000,
    max_draws: int = 72_000,
    chains: int = 4,
    seed: int = 2026,
    target_accept: float | None = None,
    tune: int | None = None,
    cache_dir=None,
    rank_gains: pd.DataFrame | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    progress: Progress | None = stderr_progress,
) -> BayesianRisk:
    """Fit the models of the thesis 'Inferential Risk Measures' (Ch. 4–5; docs/measures/bayesian.md) on the pool `matrix` (systems × topics) and derive every table of the report.

    `models` are compared (WAIC, PSIS-LOO and their differences, system effects); BRisk⁻ fits
    BHM-`family` on the Eq. 4.5-adjusted scores at each α; PPDRisk⁻ uses `ppd_model` (fitted once,
    reused if compared). With `rank_gains` (tidy `system, topic, rank, score` of the pool's systems)
    BHM-ZOiB-Rank is fitted too: its system effects join the others (`fits["zoib_rank"]`); it models
    other data, so it is not in the WAIC/LOO comparison. `executor="dask"` samples every fit's chains on the
    Dask cluster at `scheduler` (the same draws as in this process: `dask_chains`). `target_accept` and `tune`
    (warm-up iterations per chain): the sampler's, None for its defaults (what a failed fit's remedy changes).
    """
    models, family, ppd_model, level = check_options(models, family, ppd_model, level)
    check_executor(executor, scheduler)
    options = dict(target_ess=target_ess, max_draws=max_draws, chains=chains, seed=seed, cache_dir=cache_dir)
    options.update(executor=executor, scheduler=scheduler)
    options.update({k: v for k, v in (("target_accept", target_accept), ("tune", tune)) if v is not None})
    if baseline not in matrix.index:
        raise ParameterError(f"The baseline {baseline!r} is not in the model's pool of systems.")
    challengers = [s for s in (challengers or list(matrix.index)) if s != baseline]
    data = scores_data(matrix)
    rank_data = scores_data(rank_gains, systems=list(matrix.index)) if rank_gains is not None else None
    jobs = fit_jobs(matrix, baseline, alphas, models + [ppd_model], family, data, rank_data)
    options["progress"] = FitProgress(len(jobs), progress) if progress is not None else None
    prepare_in_background(jobs, options)
    fits = {model: fit(model, data, **options) for model in dict.fromkeys(models + [ppd_model])}
    compared = [fits[m] for m in models]
    if rank_data is not None:
        fits["zoib_rank"] = fit("zoib_rank", rank_data, **options)
    systems = pd.concat(
        [system_effects(f, level) for f in compared + [fits.get("zoib_rank")] if f is not None], ignore_index=True
    )
    values, names = ppdrisk_draws(fits[ppd_model], baseline, alphas, challengers, seed=seed)
    ppd = ppdrisk_table(fits[ppd_model], baseline, alphas, measure, level, draws=(values, names))
    brisk, brisk_fits = brisk_table(
        matrix, baseline, alphas, family, measure, level, challengers, unadjusted=fits.get(family), **options
    )
    overlay = pd.concat([predictive_overlay(f, seed=seed) for f in compared], ignore_index=True)
    everything = {id(f) for f in list(fits.values()) + brisk_fits}
    return BayesianRisk(
        fits=fits,
        models=model_table(compared),
        systems=systems,
        dominance=dominance_pairs(systems),
        rbo=effects_rbo(systems),
        diagnostics=all_diagnostics(fits, brisk_fits, alphas),
        overlay=overlay,
        brisk=brisk,
        brisk_fits=brisk_fits,
        ppdrisk=ppd,
        ppd_draws=values,
        ppd_systems=names,
        ppd_model=ppd_model,
        comparison=compare_table(compared),
        rank=rank_table(fits["zoib_rank"], level) if "zoib_rank" in fits else pd.DataFrame(),
        settings={**options, "level": level, "family": family, "models": models, "n_fits": len(everything)},
    )


def fit_jobs(
    matrix: pd.DataFrame,
    baseline: str,
    alphas: Sequence[float],
    models: Sequence[str],
    family: str,
    data,
    rank_data=None,
) -> list[tuple[str, object, bool]]:
    """(model, data, criteria) of every fit `bayesian_risk` makes, in its order (BRisk⁻ at α = 0 reuses the
    unadjusted fit of its family when there is one)."""
    jobs = [(model, data, True) for model in dict.fromkeys(models)]
    if rank_data is not None:
        jobs.append(("zoib_rank", rank_data, True))
    jobs += [
        (family, adjusted_data(matrix, baseline, float(a)), False) for a in alphas if not (a == 0 and family in models)
    ]
    return jobs


def prepare_in_background(jobs: Sequence[tuple], options: dict) -> threading.Thread:
    """Compile (or load) the models of `jobs` in a daemon thread, in order, while the fits sample.

    Sampling keeps both cores busy in nutpie's own threads; a compile is mostly one core of numba and
    LLVM, so the compile of the next model overlaps the sampling of this one. A failure here is left to
    the fit itself, which compiles again and reports it.
    """
    settings = {k: v for k, v in options.items() if k != "progress"}

    def run():
        for model, data, criteria in jobs:
            try:
                prepare(model, data, criteria=criteria, **settings)
            except Exception:  # noqa: BLE001 - the fit in the main thread meets and reports the same error
                return

    thread = threading.Thread(target=run, name="riskreport-bayes-compile", daemon=True)
    thread.start()
    return thread


RBP_P = re.compile(r"RBP\(p=([0-9.]+)\)")


def rank_gains_for(
    rank_gains: str | None, collection, measure: str, matrix: pd.DataFrame, depth: int = 10
) -> pd.DataFrame | None:
    """The per-rank gains of BHM-ZOiB-Rank for the pool `matrix` (systems × topics), or None.

    `rank_gains`: None (no rank model); "rbp": RBP gains (1 − p)·p^(k−1)·rel/rel_max at ranks 1..`depth`
    from the collection's runs and qrels (`models.rbp_rank_gains`; p of the measure when it is RBP, else
    0.8); or the path of a `system,topic,rank,score` table (`trec.read_rank_gains`), which must hold
    every system of the pool (other systems and topics are left out).
    """
    from riskreport.io.trec import read_qrels, read_rank_gains, read_run

    if rank_gains is None:
        return None
    systems, topics = list(matrix.index), [str(t) for t in matrix.columns]
    if rank_gains == "rbp":
        lacking = [s for s in systems if s not in collection.runs]
        if lacking or collection.qrels is None:
            raise ParameterError(
                f"rank_gains = 'rbp' computes RBP gains from runs and qrels, but the collection "
                f"{collection.name!r} has "
                + (f"no run file for {', '.join(lacking)}" if lacking else "no qrels")
                + ". Give a per-rank gains table "
                "(system,topic,rank,score) instead."
            )
        match = RBP_P.search(measure)
        return rbp_rank_gains(
            {s: read_run(collection.runs[s]) for s in systems},
            read_qrels(collection.qrels),
            topics,
            p=float(match.group(1)) if match else 0.8,
            depth=depth,
        )
    table = read_rank_gains(rank_gains)
    lacking = [s for s in systems if s not in set(table["system"])]
    if lacking:
        raise ParameterError(
            f"{rank_gains}: no per-rank gains for {len(lacking)} system(s) of the pool: "
            f"{', '.join(lacking[:10])}{', …' if len(lacking) > 10 else ''} (expected rows "
            "system,topic,rank,score for every system of the pool)."
        )
    return table[table["system"].isin(systems) & table["topic"].isin(topics)].reset_index(drop=True)


def rank_table(result: BayesFit, level: float = 0.95) -> pd.DataFrame:
    """BHM-ZOiB-Rank's own parameters: the rank slope β (logit scale per rank; below 0: gains fall with rank), the
    zero-inflation zi and the precision φ, with equal-tailed intervals; and its WAIC and PSIS-LOO (on its own data)."""
    lo, hi = (1 - level) / 2, (1 + level) / 2
    rows = []
    for name, meaning in (
        ("beta", "β: change of logit μ per rank"),
        ("zi", "zi: P(gain = 0)"),
        ("phi", "φ: precision"),
    ):
        values = result.flat(name)
        low, high = np.quantile(values, [lo, hi])
        rows.append({"parameter": meaning, "median": float(np.median(values)), "low": float(low), "high": float(high)})
    c = result.criteria
    rows += [
        {
            "parameter": "WAIC (its own data: per-rank gains)",
            "median": c.get("waic", np.nan),
            "low": np.nan,
            "high": np.nan,
        },
        {"parameter": "PSIS-LOO (its own data)", "median": c.get("loo", np.nan), "low": np.nan, "high": np.nan},
    ]
    return pd.DataFrame(rows)


def all_diagnostics(fits: dict, brisk_fits: list, alphas: Sequence[float]) -> pd.DataFrame:
    """One row per fit: what was fitted, draws, R̂, ESS, divergences, seconds, the target_accept of its draws
    (`retry`: whether it was sampled again after divergences, `measures.retry_note`) and the verdict on the
    diagnostics (`measures.diagnostics_note`)."""
    rows = []
    named = [(LABELS[m], f) for m, f in fits.items()]
    named += [(f"{LABELS[f.model]} for BRisk⁻, α = {a:g}", f) for a, f in zip(alphas, brisk_fits)]
    for name, result in named:
        d = result.diagnostics
        rows.append(
            {
                "fit": name,
                "chains": d["chains"],
                "draws": d["draws"],
                "divergences": d["divergences"],
                "max_rhat": d["max_rhat"],
                "min_ess_bulk": d["min_ess_bulk"],
                "min_ess_tail": d["min_ess_tail"],
                "target_ess": d["target_ess"],
                "seconds": result.seconds,
                "cached": result.cached,
                "target_accept": result.settings.get("target_accept", np.nan),
                "retry": retry_note(result),
                "diagnostics": diagnostics_note(result),
            }
        )
    return pd.DataFrame(rows)
