"""Fitting a model to a target effective sample size, with an on-disk cache of the draws.

NUTS through PyMC and the nutpie sampler (numba backend): the fastest of the engines measured
on this project's 2-core machines (see README, "Bayesian risk"). A fit samples `chains` chains and
stops at the first checkpoint where the system effects' bulk and tail ESS reach `target_ess` and
every R̂ < 1.01, or at `max_draws`, and says which (`stopping.sample_until`). `FitOptions` holds
the settings `fit` and `prepare` share; the draws are cached (`fits.FitCache`) and the compiled
model reused (`compiled.compiled_model`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from riskreport.bayes.diagnosis.diagnostics import diagnose, information_criteria
from riskreport.bayes.fitting.chains import LocalChains, check_executor
from riskreport.bayes.fitting.compiled import compiled_model
from riskreport.bayes.fitting.fit_progress import RUNNING, stderr_progress
from riskreport.bayes.fitting.fits import BayesFit, FitCache, cache_key, from_cache, library_versions
from riskreport.bayes.fitting.stopping import CHECKS_PER_TARGET, INITIAL_EFFICIENCY, LOW_RANK_BELOW, sample_until
from riskreport.bayes.modelling.models import EFFECTS_TEXT, LABELS, brms_priors, check_model, check_support, exact_draws
from riskreport.bayes.modelling.scores import BayesData, group_strength
from riskreport.errors import ParameterError
from riskreport.progress import Progress

RETRY_TARGET_ACCEPTS = (0.95, 0.99)
"""A fit with divergent transitions samples again, with the same seeds, at the next of these target_accepts above
its own (smaller steps), until it has none or the ladder ends: measured on TREC Web 2012 (ERR@20, indriCASP),
BHM-ZOiB still diverges at 0.95 and passes at 0.99. Above 0.99 a divergence says the model does not suit the scores."""


EXACT_STREAM = 38  # the random stream of the exactly drawn parameters: SeedSequence([seed, EXACT_STREAM])


CENTRE_ABOVE = 0.5  # a group whose data dominate its prior (`scores.group_strength`) is sampled centred


@dataclass(frozen=True)
class FitOptions:
    """How `fit` (and `prepare`) sample and cache a fit; every field is also a keyword of `fit`.

    `target_ess`: the bulk and tail ESS every system effect must reach; `max_draws`: at most this many
    draws in all (post warm-up, all chains); `chains`, `tune` (warm-up iterations per chain), `seed`;
    `target_accept`: brms's `adapt_delta` (brms's default 0.8; the thesis used 0.9; tune 300 and 0.8 need the
    fewest gradients per tail ESS: docs/templates/bayesian_risk.md, tests/benchmarks/bench_bayes_settings.py; a
    fit with divergences samples again at the next of `RETRY_TARGET_ACCEPTS`); `criteria=False` skips WAIC/PSIS-LOO
    (BRisk⁻ fits); `cache_dir`: the draws cache (default `$RISKREPORT_CACHE/bayes`), `use_cache=False`
    neither reads nor writes it. `executor="dask"` samples the chains on the Dask cluster at `scheduler`
    (`dask_chains`); the draws are the same as `executor="local"` (this process) gives, so neither is in the
    draws' cache key.
    """

    target_ess: int = 10_000
    max_draws: int = 72_000
    chains: int = 4
    tune: int = 300
    seed: int = 2026
    target_accept: float = 0.8
    criteria: bool = True
    cache_dir: str | Path | None = None
    use_cache: bool = True
    executor: str = "local"
    scheduler: str | None = None

    @classmethod
    def of(cls, options: FitOptions | None = None, **changes) -> FitOptions:
        """`options` (default: the defaults) with `changes`; an unknown name is a ParameterError."""
        known = {item.name for item in dataclasses.fields(cls)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ParameterError(f"Unknown fit option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}.")
        return dataclasses.replace(options or cls(), **changes)

    def settings(self) -> dict:
        """The sampling settings, checked (`check_settings`): part of the draws' cache key."""
        return check_settings(
            target_ess=self.target_ess,
            max_draws=self.max_draws,
            chains=self.chains,
            tune=self.tune,
            seed=self.seed,
            target_accept=self.target_accept,
        )


def fit(
    model: str,
    data: BayesData,
    options: FitOptions | None = None,
    *,
    progress: Progress | None = stderr_progress,
    **changes,
) -> BayesFit:
    """Fit `model` (see `models.MODELS`) to `data` until every system effect has bulk and tail ESS ≥ `target_ess`.

    `options` and the keywords `changes` are `FitOptions` (target_ess=10_000, max_draws=72_000,
    chains=4, tune=300, seed=2026, target_accept=0.8, criteria=True, cache_dir=None, use_cache=True,
    executor="local", scheduler=None).
    Seeded: the same inputs give the same draws. Progress goes to `progress` (stderr by default;
    None: silent).

    >>> data = scores_data(table)                                    # doctest: +SKIP
    >>> zoib = fit("zoib", data, target_ess=10_000)                  # doctest: +SKIP
    >>> zoib.diagnostics["min_ess_bulk"], zoib.criteria["waic"]      # doctest: +SKIP
    """
    options = FitOptions.of(options, **changes)
    check_model(model)
    check_support(model, data.y)
    check_executor(options.executor, options.scheduler)
    settings = options.settings()
    if model == "zoib_rank" and data.rank is None:
        raise ParameterError("BHM-ZOiB-Rank needs per-rank gains: a scores table with a `rank` column.")
    say = progress or (lambda message: None)
    priors, versions, key, cache = _entry(model, data, settings, options)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            say(f"{LABELS[model]}: cached draws ({hit['meta']['n_draws']:,} draws), no sampling")
            return _finished(progress, from_cache(hit, model, data, key))
    started = time.time()
    ladder = [step for step in RETRY_TARGET_ACCEPTS if step > settings["target_accept"]]
    draws, batches, divergences = _sample_to_target(model, data, priors, settings, say, options, bool(ladder))
    batches_done = list(batches)  # with retries, every attempt's too: what the fit cost
    attempts = [{"target_accept": settings["target_accept"], "divergences": int(divergences)}]
    for i, higher in enumerate(ladder):
        if not divergences:
            break
        say(
            f"{RUNNING}{LABELS[model]}: {divergences} divergent transition{'s' if divergences != 1 else ''} at target_accept "
            f"{settings['target_accept']:g}: sampling again at {higher:g} (smaller steps)"
        )
        settings = {**settings, "target_accept": higher}
        draws, batches, divergences = _sample_to_target(
            model, data, priors, settings, say, options, i + 1 < len(ladder)
        )
        batches_done += batches
        attempts.append({"target_accept": higher, "divergences": int(divergences)})
    if len(attempts) > 1:
        settings["retry"] = retry_record(attempts)
    sampled = time.time()
    diagnostics = diagnose(draws, "b" if model.startswith("paired") else "r_sys", options.target_ess, divergences)
    diagnostics["seconds_to_target"] = sampled - started  # compile and sampling, until the ESS check passed
    diagnostics.update(work(batches_done, diagnostics["min_ess_tail"]))
    information = information_criteria(model, data, draws) if options.criteria else {}
    pointwise = information.pop("pointwise", {})
    seconds = time.time() - started
    say(
        f"{LABELS[model]}: {diagnostics['draws']:,} draws in {seconds:.1f} s; min ESS bulk "
        f"{diagnostics['min_ess_bulk']:,.0f}, tail {diagnostics['min_ess_tail']:,.0f}; max R̂ "
        f"{diagnostics['max_rhat']:.4f}; {divergences} divergences"
        + (f"; WAIC {information['waic']:.1f}" if information else "")
    )
    result = BayesFit(
        model,
        data,
        priors,
        draws,
        settings,
        diagnostics,
        information,
        seconds,
        versions,
        False,
        key,
        batches,
        pointwise,
    )
    if cache is not None:
        cache.put(key, result)
    return _finished(progress, result)


def retry_record(attempts: list[dict]) -> dict:
    """`settings["retry"]` of a fit sampled again after divergences: the first and the last target_accept, the first
    attempt's divergences, and every attempt in order (`{"target_accept", "divergences"}`; the last one's draws are
    kept)."""
    return {
        "from_target_accept": attempts[0]["target_accept"],
        "divergences": attempts[0]["divergences"],
        "to_target_accept": attempts[-1]["target_accept"],
        "attempts": [dict(attempt) for attempt in attempts],
    }


def _finished(progress, result: BayesFit) -> BayesFit:
    done = getattr(progress, "fit_done", None)
    if done is not None:
        done(result)
    return result


def _entry(model: str, data: BayesData, settings: dict, options: FitOptions):
    """(priors, versions, key, draws cache or None) of a fit."""
    priors = brms_priors(model, data.y)
    versions = library_versions()
    key = cache_key(model, data, priors, {**settings, "criteria": options.criteria}, versions)
    return priors, versions, key, FitCache(options.cache_dir) if options.use_cache else None


def prepare(model: str, data: BayesData, options: FitOptions | None = None, **changes) -> bool:
    """Compile (or load from the cache) the model that `fit` with these options will sample, unless its draws
    are cached; True if a compiled model is now ready. Meant for a background thread: `fit` then finds the
    model compiled (the compile of one fit overlaps the sampling of another)."""
    options = FitOptions.of(options, **changes)
    priors, _, key, cache = _entry(model, data, options.settings(), options)
    if (cache is not None and cache.has(key)) or options.executor != "local":  # on Dask the workers compile
        return False
    compiled_model(model, data, priors, lambda message: None, layout(data))
    return True


def work(batches: list[dict], min_ess_tail: float) -> dict:
    """What a fit cost: seconds compiling (or loading) the model and sampling, gradients (leapfrog steps of every
    chain, warm-up included) per unit of the smallest tail ESS of the effects, and µs of process CPU per gradient
    (the CPU of the sampling batches: other threads of the process, e.g. a background compile, count too)."""
    gradients = sum(batch.get("gradients", 0) for batch in batches)
    cpu = sum(batch.get("cpu_seconds", 0.0) for batch in batches)
    return {
        "compile_seconds": sum(batch.get("compile_seconds", 0.0) for batch in batches),
        "sampling_seconds": sum(batch.get("seconds", 0.0) for batch in batches),
        "gradients": gradients,
        "gradients_per_tail_ess": gradients / min_ess_tail if min_ess_tail > 0 else float("inf"),
        "us_per_gradient": cpu / gradients * 1e6 if gradients else float("nan"),
    }


def check_settings(*, target_ess, max_draws, chains, tune, seed, target_accept) -> dict:
    """The sampling settings, checked: whole numbers in range, 0.5 ≤ target_accept < 1."""
    for name, value, low in (
        ("target_ess", target_ess, 1),
        ("max_draws", max_draws, 1),
        ("chains", chains, 1),
        ("tune", tune, 50),
        ("seed", seed, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ParameterError(f"{name} must be a whole number ≥ {low}, got {value!r}.")
    if chains > max_draws:
        raise ParameterError(f"max_draws ({max_draws}) must allow at least one draw per chain ({chains} chains).")
    if not (isinstance(target_accept, float) and 0.5 <= target_accept < 1):
        raise ParameterError(f"target_accept must be a number in [0.5, 1), got {target_accept!r}.")
    return {
        "target_ess": int(target_ess),
        "max_draws": int(max_draws),
        "chains": int(chains),
        "tune": int(tune),
        "seed": int(seed),
        "target_accept": float(target_accept),
        "sampler": "nutpie (NUTS), numba backend, one run per chain seeded by (seed, batch, chain)",
        "initial_efficiency": INITIAL_EFFICIENCY,
        "stopping": f"first checkpoint that meets the target, every 1/{CHECKS_PER_TARGET} of it",
        "low_rank_below": LOW_RANK_BELOW,
        "group_effects": EFFECTS_TEXT,
        "centre_above": CENTRE_ABOVE,
        "retry_target_accepts": list(RETRY_TARGET_ACCEPTS),
    }  # the batch rule and the parameterisation, in the key


def layout(data: BayesData) -> tuple[bool, bool]:
    """(centred systems, centred topics): a group's zero-sum deviations are sampled as they are (u) when its data
    dominate its prior (κ > `CENTRE_ABOVE`), else scaled by sd (u = sd·z_u), the same model either way.

    Measured (docs/templates/bayesian_risk.md, tests/benchmarks/bench_reparam.py): centred mixes better on every
    data set (κ 0.73–0.99), but the topics of the demo's BRisk⁻ scores at α = 10 (κ = 0.02: sd_top ≪ σ/√S)
    make a funnel centred and mix well scaled.
    """
    return tuple(kappa > CENTRE_ABOVE for kappa in group_strength(data))  # type: ignore[return-value]


def _sample_to_target(model, data, priors, settings, say, options: FitOptions, until_divergence: bool = False):
    """(draws, batches, divergences) of one attempt at `settings["target_accept"]`; `until_divergence`: a higher
    target_accept is left, so the attempt stops at its first divergent transition (`stopping.sample_until`)."""
    centred = layout(data)
    if not all(centred) and not model.startswith("paired"):
        say(
            f"{LABELS[model]}: "
            + " and ".join(g for g, c in zip(("system", "topic"), centred) if not c)
            + " effects barely informed by the data: sampled scaled by their sd"
        )
    started = time.time()
    start = _starter(model, data, priors, say, centred, options)
    compile_seconds = time.time() - started
    draws, batches, divergences = sample_until(start, model, settings, say, until_divergence)
    rng = np.random.default_rng(np.random.SeedSequence([settings["seed"], EXACT_STREAM]))
    draws.update(exact_draws(model, data.y, draws["b"].shape[:2], rng))
    scaled = [g for g, c in zip(("systems", "topics"), centred) if not c]
    batches[0]["compile_seconds"] = round(compile_seconds, 2)  # loading or compiling the model, then sampling
    for batch in batches:
        batch["group_effects"] = "u centred" if not scaled else f"the {' and '.join(scaled)}' u scaled by sd"
    return draws, batches, divergences


def _starter(model, data, priors, say, centred, options: FitOptions):
    """What starts a batch's chains: nutpie runs in this process, or actors on the Dask cluster."""
    if options.executor == "dask":
        from riskreport.bayes.fitting.dask_chains import DaskChains

        job = (model, data, priors, centred)
        say(f"{LABELS[model]}: sampling the chains on the Dask cluster at {options.scheduler}")
        return lambda specs: DaskChains(str(options.scheduler), job, specs)
    compiled = compiled_model(model, data, priors, say, centred)
    return lambda specs: LocalChains(compiled, specs)
