"""Fitting a model to a target effective sample size, with an on-disk cache of the draws.

NUTS through PyMC and the nutpie sampler (numba backend): the fastest of the engines measured
on this project's 2-core machines (see README, "Bayesian risk"). A fit samples `chains` chains;
when the ESS of the system effects (bulk and tail) is below `target_ess` it adds batches of
chains of the same length, with fresh seeds, until the target holds or `max_draws` is reached,
and it says which. Draws are cached under `$RISKREPORT_CACHE/bayes`, keyed by the data, model,
priors, settings and library versions; an entry carries a checksum of its content and key and
is written atomically, so a damaged or foreign entry is never read back as a fit.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from riskreport.bayes.compiled import initial_point_function
from riskreport.bayes.diagnostics import _min_ess, diagnose, information_criteria
from riskreport.bayes.fit_progress import stderr_progress
from riskreport.bayes.models import (
    FAMILY,
    LABELS,
    BayesData,
    brms_priors,
    build_pymc_model,
    check_model,
    check_support,
    free_variables,
    group_strength,
    intercept_correlation,
    model_inputs,
)
from riskreport.errors import ParameterError
from riskreport.io.cache import Cache
from riskreport.io.cache import cache_key as content_key
from riskreport.io.provenance import package_versions
from riskreport.progress import Progress

CACHE_FORMAT = 2  # 2: pointwise elpd stored with the draws


POINTWISE = "pointwise:"  # prefix of the pointwise model-choice arrays in a cache entry


LIBRARIES = ("riskreport", "pymc", "pytensor", "nutpie", "numba", "numpy", "arviz")


INITIAL_EFFICIENCY = 0.6  # ESS per draw guessed for the first batch (measured 0.55–0.9 on TREC-COVID)


LOW_RANK_BELOW = 0.25  # ESS per draw under which later batches adapt a low-rank mass matrix (correlated effects)


LOW_RANK_ABOVE = 0.75  # predicted intercept–effect correlation above which the first batch already does,


CENTRED_FAMILIES = ("gaussian", "zero_one_inflated_beta", "zero_inflated_beta")  # and centres the groups


CENTRE_ABOVE = 0.5  # whose data dominate their prior (`models.group_strength`)


@dataclass
class BayesFit:
    """Posterior draws of one model on one data set, with diagnostics and model-choice criteria.

    `draws[name]` has shape (chain, draw, ...); `r_sys` and `r_top` are the group effects.
    `diagnostics` holds R̂, bulk/tail ESS and divergences with pass/fail flags; `criteria`
    WAIC and PSIS-LOO on the deviance scale (lower is better).
    """

    model: str
    data: BayesData
    priors: dict
    draws: dict
    settings: dict
    diagnostics: dict
    criteria: dict
    seconds: float
    versions: dict
    cached: bool = False
    key: str = ""
    batches: list = field(default_factory=list)
    pointwise: dict = field(
        default_factory=dict
    )  # elpd_loo_i, elpd_waic_i, pareto_k per observation (model comparison)

    @property
    def label(self) -> str:
        return LABELS[self.model]

    @property
    def n_draws(self) -> int:
        first = self.draws["b"]
        return int(first.shape[0] * first.shape[1])

    @property
    def n_chains(self) -> int:
        return int(self.draws["b"].shape[0])

    def flat(self, name: str) -> np.ndarray:
        """Draws of `name` with the chains concatenated: shape (draws, ...)."""
        values = self.draws[name]
        return values.reshape((-1,) + values.shape[2:])

    def flat_draws(self) -> dict:
        return {name: self.flat(name) for name in self.draws}

    @property
    def effects_name(self) -> str:
        """The parameter whose ESS is the target: the system effects (the intercept of a paired model)."""
        return "b" if self.model.startswith("paired") else "r_sys"

    @property
    def ok(self) -> bool:
        return bool(self.diagnostics.get("ok", False))


def library_versions() -> dict:
    return package_versions(LIBRARIES, python=False)


def fit(
    model: str,
    data: BayesData,
    *,
    target_ess: int = 10_000,
    max_draws: int = 72_000,
    chains: int = 4,
    tune: int = 1000,
    seed: int = 2026,
    target_accept: float = 0.9,
    criteria: bool = True,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: Progress | None = stderr_progress,
) -> BayesFit:
    """Fit `model` (see `models.MODELS`) to `data` until every system effect has bulk and tail ESS ≥ `target_ess`.

    At most `max_draws` draws in all (post warm-up, all chains). Seeded: the same inputs give the
    same draws. Progress goes to `progress` (stderr by default; None: silent). `target_accept` is
    brms's `adapt_delta` (the thesis used 0.9). `criteria=False` skips WAIC/PSIS-LOO (BRisk⁻ fits).

    >>> data = scores_data(table)                                    # doctest: +SKIP
    >>> zoib = fit("zoib", data, target_ess=10_000)                  # doctest: +SKIP
    >>> zoib.diagnostics["min_ess_bulk"], zoib.criteria["waic"]      # doctest: +SKIP
    """
    check_model(model)
    check_support(model, data.y)
    settings = check_settings(
        target_ess=target_ess, max_draws=max_draws, chains=chains, tune=tune, seed=seed, target_accept=target_accept
    )
    if model == "zoib_rank" and data.rank is None:
        raise ParameterError("BHM-ZOiB-Rank needs per-rank gains: a scores table with a `rank` column.")
    say = progress or (lambda message: None)
    priors, versions, key, cache = _entry(model, data, settings, criteria, cache_dir, use_cache)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            say(f"{LABELS[model]}: cached draws ({hit['meta']['n_draws']:,} draws), no sampling")
            return _finished(progress, _from_cache(hit, model, data, key))
    started = time.time()
    draws, batches, divergences = _sample_to_target(
        model, data, priors, settings, say, cache.compiled if cache is not None else None
    )
    sampled = time.time()
    diagnostics = diagnose(draws, "b" if model.startswith("paired") else "r_sys", target_ess, divergences)
    diagnostics["seconds_to_target"] = sampled - started  # compile and sampling, until the ESS check passed
    information = information_criteria(model, data, draws) if criteria else {}
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


def _finished(progress, result: BayesFit) -> BayesFit:
    done = getattr(progress, "fit_done", None)
    if done is not None:
        done(result)
    return result


def _entry(model: str, data: BayesData, settings: dict, criteria: bool, cache_dir, use_cache: bool):
    """(priors, versions, key, draws cache or None) of a fit."""
    priors = brms_priors(model, data.y)
    versions = library_versions()
    key = cache_key(model, data, priors, {**settings, "criteria": criteria}, versions)
    return priors, versions, key, FitCache(cache_dir) if use_cache else None


def prepare(
    model: str,
    data: BayesData,
    *,
    target_ess: int = 10_000,
    max_draws: int = 72_000,
    chains: int = 4,
    tune: int = 1000,
    seed: int = 2026,
    target_accept: float = 0.9,
    criteria: bool = True,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    **_,
) -> bool:
    """Compile (or load from the cache) the model that `fit` with these arguments will sample, unless its draws
    are cached; True if a compiled model is now ready. Meant for a background thread: `fit` then finds the
    model compiled (the compile of one fit overlaps the sampling of another)."""
    settings = check_settings(
        target_ess=target_ess, max_draws=max_draws, chains=chains, tune=tune, seed=seed, target_accept=target_accept
    )
    priors, _, key, cache = _entry(model, data, settings, criteria, cache_dir, use_cache)
    if cache is not None and cache.has(key):
        return False
    centred = layout(model, data)[0]
    _compiled(model, data, priors, lambda message: None, centred, cache.compiled if cache is not None else None)
    return True


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
        "sampler": "nutpie (NUTS), numba backend",
        "initial_efficiency": INITIAL_EFFICIENCY,
        "low_rank_below": LOW_RANK_BELOW,
        "low_rank_above": LOW_RANK_ABOVE,
        "centred_families": CENTRED_FAMILIES,
        "centre_above": CENTRE_ABOVE,
    }  # the batch rule, in the key


def cache_key(model: str, data: BayesData, priors: dict, settings: dict, versions: dict) -> str:
    """The draws' key in the riskreport cache: the data, model, priors, sampler settings and library versions."""
    return content_key(
        "bayes",
        format=CACHE_FORMAT,
        model=model,
        data=data.digest(),
        priors=priors,
        settings=settings,
        versions=versions,
    )


def layout(model: str, data: BayesData) -> tuple[tuple[bool, bool], bool, float]:
    """((centred systems, centred topics), low_rank, predicted correlation): how the sampler meets this posterior.

    Few systems that differ clearly (the demo's 11: predicted intercept–effect correlation 0.89)
    make a posterior that NUTS with a diagonal mass matrix and non-centred effects mixes badly
    (ESS/draw ≈ 0.08, divergences: the data fix each r = sd·z, so z and sd form a banana, and b moves
    with every r). Above `LOW_RANK_ABOVE` the first batch adapts a low-rank mass matrix and, for the
    families where it measured better (Gaussian, ZOiB: ESS/draw 0.6–0.9, no divergences), centres
    each group whose data dominate its prior (κ > `CENTRE_ABOVE`; a weak group, such as the topics of
    scores adjusted at α = 10, stays non-centred: centred it made a funnel, ESS 5 in 72,000 draws).
    TREC-COVID's 42 systems (0.53) keep brms's non-centred form and a diagonal matrix.
    """
    correlation = intercept_correlation(data)
    strong = correlation > LOW_RANK_ABOVE
    if not strong or FAMILY[model] not in CENTRED_FAMILIES or model.startswith("paired"):
        return (False, False), strong, correlation
    kappa_sys, kappa_top = group_strength(data)
    return (kappa_sys > CENTRE_ABOVE, kappa_top > CENTRE_ABOVE), strong, correlation


def _sample_to_target(model, data, priors, settings, say, compiled_dir=None):
    centred, low_rank, correlation = layout(model, data)
    if low_rank:
        say(
            f"{LABELS[model]}: intercept and system effects predicted to correlate at {correlation:.2f} "
            f"(> {LOW_RANK_ABOVE}): low-rank mass matrix from the first batch"
            + "".join(f", centred {group} effects" for group, c in zip(("system", "topic"), centred) if c)
        )
    compiled = _compiled(model, data, priors, say, centred, compiled_dir)
    import nutpie  # heavy imports only when sampling (imported by `_compiled`)

    chains, target = settings["chains"], settings["target_ess"]
    effects = "b" if model.startswith("paired") else "r_sys"
    per_chain = max(1, min(math.ceil(target / chains / INITIAL_EFFICIENCY), settings["max_draws"] // chains))
    parts: list[dict[str, np.ndarray]] = []
    batches: list[dict] = []
    divergences = 0
    while True:
        batch = len(batches)
        mass = "low-rank" if low_rank else "diagonal"
        say(
            f"{LABELS[model]}: sampling {chains} chains × {per_chain:,} draws (+ {settings['tune']:,} warm-up, "
            f"{mass} mass matrix), batch {batch + 1}"
        )
        started = time.time()
        trace = nutpie.sample(
            compiled,
            draws=per_chain,
            tune=settings["tune"],
            chains=chains,
            cores=min(chains, os.cpu_count() or 1),
            seed=settings["seed"] + 7919 * batch,
            save_warmup=False,
            progress_bar=False,
            target_accept=settings["target_accept"],
            low_rank_modified_mass_matrix=low_rank,
        )
        parts.append({name: np.asarray(trace.posterior[name].values) for name in free_variables(model, centred)})
        batch_divergences = int(np.asarray(trace.sample_stats["diverging"].values).sum())
        divergences += batch_divergences
        # a later batch continues each chain after its own warm-up: chain k of every batch is appended along draws
        draws = _with_effects({name: np.concatenate([p[name] for p in parts], axis=1) for name in parts[0]})
        bulk, tail = _min_ess(draws[effects])
        total, done = draws["b"].size, draws["b"].shape[1]
        batches.append(
            {
                "chains": chains,
                "draws_per_chain": per_chain,
                "mass_matrix": mass,
                "group_effects": "/".join(
                    f"{g} {'centred' if c else 'non-centred'}" for g, c in zip(("systems", "topics"), centred)
                ),
                "seconds": round(time.time() - started, 2),
                "divergences": batch_divergences,
                "min_ess_bulk": bulk,
                "min_ess_tail": tail,
            }
        )
        say(
            f"{LABELS[model]}: {total:,} draws, min ESS of the system effects bulk {bulk:,.0f} / tail {tail:,.0f} "
            f"(target {target:,}) after {time.time() - started:.1f} s"
        )
        room = settings["max_draws"] // chains - done
        reached = min(bulk, tail)
        if reached >= target or room < 1:
            if reached < target:
                say(f"{LABELS[model]}: max_draws = {settings['max_draws']:,} reached before the ESS target")
            return draws, batches, divergences
        if not low_rank and reached / total < LOW_RANK_BELOW:
            # strongly correlated effects (e.g. near-identical systems): a low-rank mass matrix mixes far better;
            # size the next batch by the usual efficiency guess, then by what it measures
            low_rank = True
            per_chain = min(room, max(50, math.ceil((target - reached) / chains / INITIAL_EFFICIENCY)))
            continue
        # each batch pays its own warm-up: overshoot a little rather than add a third batch
        per_chain = min(room, max(done // 4, math.ceil(done * (target / max(reached, 1.0) - 1) * 1.3)))


_COMPILED: dict = {}  # (model, systems, topics, observations, centred) -> compiled nutpie model, reused in a process


_LOCKS: dict = {}  # shape -> lock: a fit and a background `prepare` never compile the same model twice


_LOCKS_LOCK = threading.Lock()


def _compiled(model: str, data: BayesData, priors: dict, say: Progress, centred=(False, False), folder=None):
    """The compiled model for these shapes, with this data and these prior constants swapped in.

    Compiled once per process; with `folder`, its machine code is kept there and loaded by later processes
    (`compiled.load_compiled`: 15–25 s of numba compilation saved per model).
    """
    import warnings

    with warnings.catch_warnings():  # PyTensor's C-backend BLAS notice: the numba backend does not use it
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS", category=UserWarning)
        return _compile(model, data, priors, say, centred, folder)


def _compile(model: str, data: BayesData, priors: dict, say: Progress, centred: tuple[bool, bool], folder):
    shape = (model, len(data.systems), len(data.topics), data.n, centred)
    inputs = model_inputs(model, data, priors)
    with _LOCKS_LOCK:
        lock = _LOCKS.setdefault(shape, threading.Lock())
    with lock:
        if shape in _COMPILED:  # a data container the graph does not use (n1 of ZOiB-Rank) is not in the model
            compiled = _COMPILED[shape]
            renewed = compiled.with_data(**{name: v for name, v in inputs.items() if name in compiled.shared_data})
            pymc_model = build_pymc_model(model, data, priors, centred)
            return dataclasses.replace(
                renewed, initial_point_func=initial_point_function(pymc_model, renewed.shape_info)
            )
        _COMPILED[shape] = _compile_or_load(model, data, priors, say, centred, folder, shape, inputs)
        return _COMPILED[shape]


def _compile_or_load(model, data, priors, say, centred, folder, shape, inputs):
    import nutpie

    from . import models
    from .compiled import artefact_key, load_compiled, store_compiled

    started = time.time()
    pymc_model = build_pymc_model(model, data, priors, centred)
    key = artefact_key(shape, Path(models.__file__).read_text(encoding="utf-8")) if folder else ""
    compiled = load_compiled(folder, key, pymc_model, inputs) if folder else None
    if compiled is not None:
        say(f"{LABELS[model]}: compiled model loaded from the cache in {time.time() - started:.1f} s")
    else:
        say(f"{LABELS[model]}: compiling the model ({data.n:,} scores, {len(data.systems)} systems)")
        compiled = nutpie.compile_pymc_model(pymc_model, backend="numba", var_names=free_variables(model, centred))
        say(f"{LABELS[model]}: compiled in {time.time() - started:.1f} s")
        if folder:
            store_compiled(folder, key, compiled)
    return compiled


def _with_effects(draws: dict) -> dict:
    """Add the group effects r = sd·z to the free variables."""
    for group in ("sys", "top"):
        if f"z_{group}" in draws:
            draws[f"r_{group}"] = draws[f"sd_{group}"][..., None] * draws[f"z_{group}"]
    return draws


class FitCache:
    """Posterior draws in the riskreport cache (`riskreport.io.cache`, kind `bayes`): the draws and pointwise
    log-likelihoods as arrays, the fit's metadata as JSON."""

    def __init__(self, root: str | Path | None = None):
        self.cache = Cache("bayes", root)

    def path(self, key: str) -> Path:
        return self.cache.path(key, ".npz")

    def has(self, key: str) -> bool:
        """An entry exists for `key` (not checked: `get` may still find it damaged)."""
        return self.path(key).is_file()

    @property
    def compiled(self) -> Path:
        """Where the compiled models of these fits are kept (`compiled.store_compiled`): `compiled` in this folder."""
        return self.cache.folder / "compiled"

    def get(self, key: str) -> dict | None:
        hit = self.cache.get_arrays(key)
        return None if hit is None else {"arrays": hit[0], "meta": hit[1]}

    def put(self, key: str, result: BayesFit) -> None:
        derived = [f"r_{g}" for g in ("sys", "top") if f"z_{g}" in result.draws]  # a centred group stores r itself
        arrays = {name: values for name, values in result.draws.items() if name not in derived}
        arrays.update({POINTWISE + name: values for name, values in result.pointwise.items()})
        meta = {
            "model": result.model,
            "priors": result.priors,
            "settings": result.settings,
            "diagnostics": result.diagnostics,
            "criteria": result.criteria,
            "seconds": result.seconds,
            "versions": result.versions,
            "batches": result.batches,
            "n_draws": result.n_draws,
        }
        self.cache.put_arrays(key, arrays, meta)


def _from_cache(hit: dict, model: str, data: BayesData, key: str) -> BayesFit:
    meta = hit["meta"]
    diagnostics = meta["diagnostics"]
    diagnostics["per_parameter"] = {k: tuple(v) for k, v in diagnostics["per_parameter"].items()}
    priors = {k: tuple(v) for k, v in meta["priors"].items()}
    draws = {name: values for name, values in hit["arrays"].items() if not name.startswith(POINTWISE)}
    pointwise = {name[len(POINTWISE) :]: values for name, values in hit["arrays"].items() if name.startswith(POINTWISE)}
    return BayesFit(
        model,
        data,
        priors,
        _with_effects(draws),
        meta["settings"],
        diagnostics,
        meta["criteria"],
        meta["seconds"],
        meta["versions"],
        True,
        key,
        meta["batches"],
        pointwise,
    )
