"""A fit's result (`BayesFit`: draws, diagnostics, model-choice criteria) and the on-disk cache of fits.

Draws are cached in the riskreport cache (`riskreport.io.cache`, kind `bayes`, under
`$RISKREPORT_CACHE/bayes`), keyed by the data, model, priors, settings and library versions; an
entry carries a checksum of its content and key and is written atomically, so a damaged or
foreign entry is never read back as a fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from riskreport.bayes.modelling.models import LABELS
from riskreport.bayes.modelling.scores import BayesData
from riskreport.io.cache import Cache
from riskreport.io.cache import cache_key as content_key
from riskreport.io.provenance import package_versions

CACHE_FORMAT = 4  # 2: pointwise elpd stored; 3: zero-sum effects, r stored; 4: numba kernels, exact zoi/coi/zi, retry


POINTWISE = "pointwise:"  # prefix of the pointwise model-choice arrays in a cache entry


LIBRARIES = ("riskreport", "pymc", "pytensor", "nutpie", "numba", "numpy", "arviz")


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

    def get(self, key: str) -> dict | None:
        hit = self.cache.get_arrays(key)
        return None if hit is None else {"arrays": hit[0], "meta": hit[1]}

    def put(self, key: str, result: BayesFit) -> None:
        arrays = dict(result.draws)
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


def from_cache(hit: dict, model: str, data: BayesData, key: str) -> BayesFit:
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
        draws,
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
