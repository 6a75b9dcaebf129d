"""The Bayesian models of Benham's thesis 'Inferential Risk Measures' (Ch. 4–5; docs/measures/bayesian.md), with brms's default priors.

Pure functions: data and priors in, a PyMC model (for sampling) or NumPy arrays (pointwise
log-likelihood, posterior predictive replicates) out. Group effects are non-centred as in
brms: r_sys[i] = sd_sys·z_i, r_top[j] = sd_top·z_j, z ~ N(0, 1); b is the intercept. The same
model can be written centred, r ~ N(0, sd) (`centred=(systems, topics)`): the posterior is the
same, only the sampler's geometry differs; for few, clearly different systems centred mixes far
better (`sampling` chooses per group; see `intercept_correlation` and `group_strength`).

Models (brms family; formula):
- `gaussian`: BHM-Gaussian, y ~ N(b + r_sys + r_top, σ).
- `skew_normal`: BHM-Skew-Normal, brms parameterisation (mean μ, sd σ, shape λ).
- `zoib`: BHM-ZOiB, zero_one_inflated_beta with logit μ = b + r_sys + r_top.
- `paired_gaussian`, `paired_skew_normal`: intercept-only models of d_j = −l_r(Δ_j) (URisk⁻_r).
- `zoib_rank`: BHM-ZOiB-Rank, zero_inflated_beta of per-rank gains, logit μ = b + β(k − k̄) + r_sys + r_top.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from riskreport.errors import ParameterError

MODELS = ("gaussian", "skew_normal", "zoib", "paired_gaussian", "paired_skew_normal", "zoib_rank")
LABELS = {
    "gaussian": "BHM-Gaussian",
    "skew_normal": "BHM-Skew-Normal",
    "zoib": "BHM-ZOiB",
    "paired_gaussian": "Paired-Gaussian",
    "paired_skew_normal": "Paired-Skew-Normal",
    "zoib_rank": "BHM-ZOiB-Rank",
}
FAMILY = {
    "gaussian": "gaussian",
    "skew_normal": "skew_normal",
    "zoib": "zero_one_inflated_beta",
    "paired_gaussian": "gaussian",
    "paired_skew_normal": "skew_normal",
    "zoib_rank": "zero_inflated_beta",
}
FAMILY_PARAMETERS = {
    "gaussian": ["sigma"],
    "skew_normal": ["sigma", "alpha"],
    "zoib": ["phi", "zoi", "coi"],
    "paired_gaussian": ["sigma"],
    "paired_skew_normal": ["sigma", "alpha"],
    "zoib_rank": ["beta", "phi", "zi"],
}
R_MAD = 1.4826  # R's mad() constant
SQRT_2_PI = np.sqrt(2.0 / np.pi)


@dataclass(frozen=True)
class BayesData:
    """Scores in long format, coded for a model: y, system and topic codes, optional rank."""

    y: np.ndarray
    system: np.ndarray  # codes into `systems`
    topic: np.ndarray  # codes into `topics`
    systems: tuple
    topics: tuple
    rank: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.y)

    def digest(self) -> str:
        """SHA-256 of the data (values, codes and labels): part of the cache key of a fit."""
        h = hashlib.sha256()
        for array in (self.y, self.system, self.topic) + ((self.rank,) if self.rank is not None else ()):
            h.update(np.ascontiguousarray(array, dtype=float).tobytes())
        h.update(repr((self.systems, self.topics)).encode())
        return h.hexdigest()

    def ranks(self) -> np.ndarray:
        """The rank of each score (BHM-ZOiB-Rank's covariate); an error when the data has none."""
        if self.rank is None:
            raise ParameterError("BHM-ZOiB-Rank needs per-rank gains: a scores table with a `rank` column.")
        return self.rank


def scores_data(scores: pd.DataFrame, systems=None) -> BayesData:
    """Code a tidy `system, topic, score[, rank]` table (or a systems × topics matrix) for a model.

    `systems` restricts and orders the systems (the model's pool); topics keep their order of appearance.
    """
    if "score" not in scores.columns:  # a matrix: systems x topics
        scores = scores.stack().rename("score").rename_axis(["system", "topic"]).reset_index()
    table = scores.copy()
    table["system"], table["topic"] = table["system"].astype(str), table["topic"].astype(str)
    if systems is not None:
        systems = list(dict.fromkeys(systems))
        missing = sorted(set(systems) - set(table["system"]))
        if missing:
            raise ParameterError(f"No scores for system(s) {', '.join(missing)} in the model's data.")
        table = table[table["system"].isin(systems)]
    else:
        systems = list(dict.fromkeys(table["system"]))
    topics = list(dict.fromkeys(table["topic"]))
    y = table["score"].to_numpy(dtype=float)
    if not np.all(np.isfinite(y)):
        raise ParameterError("The model's scores must be finite numbers.")
    rank = table["rank"].to_numpy(dtype=float) if "rank" in table.columns else None
    return BayesData(
        y=y,
        system=pd.Categorical(table["system"], categories=systems).codes.astype(np.int64),
        topic=pd.Categorical(table["topic"], categories=topics).codes.astype(np.int64),
        systems=tuple(systems),
        topics=tuple(topics),
        rank=rank,
    )


def paired_data(d: np.ndarray, system: str, topics) -> BayesData:
    """Data of a paired model: one challenger's d_j = −l_r(Δ_j) over the topics."""
    d = np.asarray(d, dtype=float)
    return BayesData(
        y=d,
        system=np.zeros(len(d), dtype=np.int64),
        topic=np.arange(len(d)),
        systems=(system,),
        topics=tuple(map(str, topics)),
    )


def anova_moments(data: BayesData) -> tuple[float, float, float] | None:
    """Two-way ANOVA moments of the cell means (ranks averaged): (sd_sys², sd_top², σ²), or None for paired data
    or an incomplete grid. The starting point of the sampler's layout (`intercept_correlation`, `group_strength`)."""
    n_sys, n_top = len(data.systems), len(data.topics)
    if n_sys < 2 or n_top < 2:
        return None
    sums, counts = np.zeros((n_sys, n_top)), np.zeros((n_sys, n_top))
    np.add.at(sums, (data.system, data.topic), data.y)
    np.add.at(counts, (data.system, data.topic), 1)
    if np.any(counts == 0):
        return None
    cells = sums / counts
    sys_means, top_means = cells.mean(axis=1), cells.mean(axis=0)
    residual = cells - sys_means[:, None] - top_means[None, :] + cells.mean()
    sigma2 = float((residual**2).sum()) / ((n_sys - 1) * (n_top - 1))
    return (
        max(float(sys_means.var(ddof=1)) - sigma2 / n_top, 0.0),
        max(float(top_means.var(ddof=1)) - sigma2 / n_sys, 0.0),
        sigma2,
    )


def intercept_correlation(data: BayesData) -> float:
    """Predicted posterior correlation of the intercept b with a system effect, from two-way ANOVA moments.

    The data fix b + mean(r_sys) + mean(r_top) closely but split it only through the group priors, so
    var(b) ≈ sd_sys²/S + sd_top²/T while a system effect given b has variance ≈ σ²/T; the correlation is
    √(var(b) / (var(b) + σ²/T)). Near 1 (few systems that differ a lot, little noise: the demo's 11
    systems give 0.89, TREC-COVID's 42 give 0.53) NUTS with a diagonal mass matrix mixes slowly: the
    sampler adapts a low-rank one instead. 0 for paired data or an incomplete grid.
    """
    moments = anova_moments(data)
    if moments is None:
        return 0.0
    sd_sys2, sd_top2, sigma2 = moments
    var_b = sd_sys2 / len(data.systems) + sd_top2 / len(data.topics)
    return float(np.sqrt(var_b / (var_b + sigma2 / len(data.topics)))) if var_b + sigma2 > 0 else 0.0


def group_strength(data: BayesData) -> tuple[float, float]:
    """How much the data dominate each group's prior: κ = sd² / (sd² + σ²/n), n the scores per group member
    (topics for a system, systems for a topic). κ near 1: each effect is fixed by its data, and the centred
    form r ~ N(0, sd) samples well; near 0 (e.g. topic effects of Eq. 4.5 scores at α = 10, sd_top ≪ σ/√S)
    the non-centred r = sd·z does. (0, 0) without moments."""
    moments = anova_moments(data)
    if moments is None:
        return 0.0, 0.0
    sd_sys2, sd_top2, sigma2 = moments
    noise_sys, noise_top = sigma2 / len(data.topics), sigma2 / len(data.systems)
    return (
        sd_sys2 / (sd_sys2 + noise_sys) if sd_sys2 + noise_sys > 0 else 0.0,
        sd_top2 / (sd_top2 + noise_top) if sd_top2 + noise_top > 0 else 0.0,
    )


def check_model(model: str) -> str:
    if model not in MODELS:
        raise ParameterError(f"model must be one of {', '.join(MODELS)}, got {model!r}.")
    return model


def check_support(model: str, y: np.ndarray) -> None:
    """The likelihood's support: [0, 1] for ZOiB, [0, 1) for the zero-inflated beta of ZOiB-Rank."""
    if model == "zoib" and (np.any(y < 0) or np.any(y > 1)):
        raise ParameterError(
            "BHM-ZOiB models scores in [0, 1]; this measure has scores outside it "
            "(use the Gaussian or skew-normal model)."
        )
    if model == "zoib_rank" and (np.any(y < 0) or np.any(y >= 1)):
        raise ParameterError("BHM-ZOiB-Rank models per-rank gains in [0, 1).")


def r_round(x: float, digits: int = 1) -> float:
    """R's round() (IEC 60559: halves to even, on the decimal value R prints)."""
    return float(np.round(x, digits))


def brms_priors(model: str, y: np.ndarray) -> dict:
    """brms ≥ 2.13 default priors (the thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md; brms R/priors.R `def_scale_prior`, `def_dprior`).

    Identity link: S = max(2.5, round(mad(y), 1)) (R's mad, constant 1.4826),
    b ~ Student-t(3, round(median(y), 1), S); sd and σ ~ half-Student-t(3, 0, S); λ ~ N(0, 4).
    Logit link (the data are not used): b ~ Student-t(3, 0, 2.5), sd ~ half-Student-t(3, 0, 2.5),
    φ ~ Gamma(0.01, 0.01), zoi, coi, zi ~ Beta(1, 1); β of ZOiB-Rank flat.
    Values are (distribution, *parameters) tuples, e.g. ("student_t", 3, 0.2, 2.5).
    """
    check_model(model)
    y = np.asarray(y, dtype=float)
    if FAMILY[model] in ("gaussian", "skew_normal"):
        median = float(np.median(y))
        scale = max(2.5, r_round(float(np.median(np.abs(y - median))) * R_MAD))
        priors: dict[str, tuple] = {
            "b": ("student_t", 3, r_round(median), scale),
            "sigma": ("half_student_t", 3, 0, scale),
        }
        if FAMILY[model] == "skew_normal":
            priors["alpha"] = ("normal", 0, 4)
    else:
        scale = 2.5
        priors = {"b": ("student_t", 3, 0.0, 2.5), "phi": ("gamma", 0.01, 0.01)}
        priors.update({"zoi": ("beta", 1, 1), "coi": ("beta", 1, 1)} if model == "zoib" else {"zi": ("beta", 1, 1)})
        if model == "zoib_rank":
            priors["beta"] = ("flat",)
    if not model.startswith("paired"):
        priors["sd_sys"] = priors["sd_top"] = ("half_student_t", 3, 0, scale)
    return priors


def describe_prior(prior: tuple) -> str:
    """brms-style text of a prior: `student_t(3, 0.2, 2.5)`."""
    name, *args = prior
    return f"{name}({', '.join(f'{a:g}' for a in args)})" if args else name


def free_variables(model: str, centred: tuple[bool, bool] = (False, False)) -> list[str]:
    """Names of the model's parameters as stored in a fit (z_* are non-centred group effects, r_* centred)."""
    names = ["b"]
    if not model.startswith("paired"):
        names += ["sd_sys", "sd_top", "r_sys" if centred[0] else "z_sys", "r_top" if centred[1] else "z_top"]
    names += FAMILY_PARAMETERS[model]
    return names


def model_inputs(model: str, data: BayesData, priors: dict) -> dict:
    """The data and prior constants of a model as named arrays: the shared data of its compiled form.

    A compiled model depends only on the model and the shapes (systems, topics, observations);
    `sampling` swaps these arrays in to reuse it (e.g. for BRisk⁻ at every α).
    """
    y = np.asarray(data.y, dtype=float)
    inputs = {
        "y": y,
        "system": data.system.astype(np.int64),
        "topic": data.topic.astype(np.int64),
        "b_loc": np.float64(priors["b"][2]),
        "b_scale": np.float64(priors["b"][3]),
    }
    if "sd_sys" in priors:
        inputs["sd_scale"] = np.float64(priors["sd_sys"][3])
    if "sigma" in priors:
        inputs["sigma_scale"] = np.float64(priors["sigma"][3])
    if FAMILY[model] in ("zero_one_inflated_beta", "zero_inflated_beta"):
        inner = (y > 0) & (y < 1)
        inputs.update(
            {
                "y": np.where(inner, y, 0.5),
                "inner": inner.astype(float),
                "n0": np.float64((y == 0).sum()),
                "n1": np.float64((y == 1).sum()),
                "n_inner": np.float64(inner.sum()),
            }
        )
    if model == "zoib_rank":
        inputs["rank_centred"] = np.asarray(data.ranks(), dtype=float) - float(np.mean(data.ranks()))
    return inputs


def build_pymc_model(model: str, data: BayesData, priors: dict, centred: tuple[bool, bool] = (False, False)):
    """The PyMC model of `model` on `data` with `priors` (see `brms_priors`); data and prior constants are `pm.Data`.

    `centred` (systems, topics): that group's effects are r ~ N(0, sd) instead of r = sd·z, z ~ N(0, 1)
    (the same model).
    """
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model(check_bounds=False) as pymc_model:  # transforms keep every parameter in its support
        inputs = {name: pm.Data(name, value) for name, value in model_inputs(model, data, priors).items()}
        eta = pm.StudentT("b", nu=3, mu=inputs["b_loc"], sigma=inputs["b_scale"])
        if not model.startswith("paired"):
            sd_sys = pm.HalfStudentT("sd_sys", nu=3, sigma=inputs["sd_scale"])
            sd_top = pm.HalfStudentT("sd_top", nu=3, sigma=inputs["sd_scale"])
            r_sys, r_top = (
                pm.Normal(f"r_{group}", 0.0, sd, shape=size)
                if centre
                else sd * pm.Normal(f"z_{group}", 0.0, 1.0, shape=size)
                for group, sd, size, centre in (
                    ("sys", sd_sys, len(data.systems), centred[0]),
                    ("top", sd_top, len(data.topics), centred[1]),
                )
            )
            eta = eta + r_sys[inputs["system"]] + r_top[inputs["topic"]]
        if model == "zoib_rank":
            eta = eta + pm.Flat("beta") * inputs["rank_centred"]
        family, y = FAMILY[model], inputs["y"]
        if family == "gaussian":
            pm.Normal("obs", mu=eta, sigma=pm.HalfStudentT("sigma", nu=3, sigma=inputs["sigma_scale"]), observed=y)
        elif family == "skew_normal":
            sigma = pm.HalfStudentT("sigma", nu=3, sigma=inputs["sigma_scale"])
            lam = pm.Normal("alpha", mu=0.0, sigma=4.0)
            delta = lam / pt.sqrt(1 + lam**2)
            omega = sigma / pt.sqrt(1 - 2 * delta**2 / np.pi)
            pm.SkewNormal("obs", mu=eta - omega * delta * SQRT_2_PI, sigma=omega, alpha=lam, observed=y)
        else:
            phi = pm.Gamma("phi", alpha=0.01, beta=0.01)
            a = pm.math.invlogit(eta) * phi
            beta_logp = pm.logp(pm.Beta.dist(alpha=a, beta=phi - a), y)
            pm.Potential("obs_inner", pt.sum(inputs["inner"] * beta_logp))
            n0, n1, n_in = inputs["n0"], inputs["n1"], inputs["n_inner"]
            if model == "zoib":
                zoi, coi = pm.Beta("zoi", 1.0, 1.0), pm.Beta("coi", 1.0, 1.0)
                pm.Potential(
                    "obs_01", (n0 + n1) * pt.log(zoi) + n0 * pt.log1p(-coi) + n1 * pt.log(coi) + n_in * pt.log1p(-zoi)
                )
            else:
                zi = pm.Beta("zi", 1.0, 1.0)
                pm.Potential("obs_0", n0 * pt.log(zi) + n_in * pt.log1p(-zi))
    return pymc_model


def linear_predictor(model: str, data: BayesData, draws: dict, index=slice(None)) -> np.ndarray:
    """η[d, n] for the draws `draws[name][d]` (flattened chains) and the observations `index`."""
    b = draws["b"][:, None]
    if model.startswith("paired"):
        return np.broadcast_to(b, (len(b), len(np.arange(data.n)[index])))
    system, topic = data.system[index], data.topic[index]
    eta = b + draws["r_sys"][:, system] + draws["r_top"][:, topic]
    if model == "zoib_rank":
        eta = eta + draws["beta"][:, None] * (data.ranks()[index] - data.ranks().mean())
    return eta


def skew_normal_location(mu, sigma, lam):
    """brms skew-normal (mean μ, sd σ, shape λ) → (ξ, ω): δ = λ/√(1+λ²), ω = σ/√(1 − 2δ²/π), ξ = μ − ωδ√(2/π)."""
    delta = lam / np.sqrt(1 + lam**2)
    omega = sigma / np.sqrt(1 - 2 * delta**2 / np.pi)
    return mu - omega * delta * SQRT_2_PI, omega, delta


def log_likelihood(model: str, data: BayesData, draws: dict, index=slice(None)) -> np.ndarray:
    """Pointwise log-likelihood log p(y_n | θ_d), shape (draws, observations), 0/1 point masses included."""
    y = data.y[index]
    eta = linear_predictor(model, data, draws, index)
    family = FAMILY[model]
    if family == "gaussian":
        sigma = draws["sigma"][:, None]
        return -0.5 * ((y - eta) / sigma) ** 2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)
    if family == "skew_normal":
        xi, omega, _ = skew_normal_location(eta, draws["sigma"][:, None], draws["alpha"][:, None])
        z = (y - xi) / omega
        return (
            np.log(2)
            - np.log(omega)
            - 0.5 * z**2
            - 0.5 * np.log(2 * np.pi)
            + special.log_ndtr(draws["alpha"][:, None] * z)
        )
    phi = draws["phi"][:, None]
    inner = (y > 0) & (y < 1)
    out = np.empty(eta.shape)
    a = special.expit(eta[:, inner]) * phi  # Beta(μφ, (1 − μ)φ) on the interior only
    out[:, inner] = (
        (a - 1) * np.log(y[inner])
        + (phi - a - 1) * np.log1p(-y[inner])
        - special.gammaln(a)
        - special.gammaln(phi - a)
        + special.gammaln(phi)
    )
    if model == "zoib":
        zoi, coi = draws["zoi"][:, None], draws["coi"][:, None]
        out[:, inner] += np.log1p(-zoi)
        out[:, y == 0] = np.log(zoi) + np.log1p(-coi)
        out[:, y == 1] = np.log(zoi) + np.log(coi)
    else:
        zi = draws["zi"][:, None]
        out[:, inner] += np.log1p(-zi)
        out[:, y == 0] = np.log(zi)
    return out


def predict(model: str, data: BayesData, draws: dict, rng: np.random.Generator, index=slice(None)) -> np.ndarray:
    """One posterior predictive replicate ỹ[d, n] ~ p(y | θ_d) per draw and observation, independent across cells."""
    eta = linear_predictor(model, data, draws, index)
    family = FAMILY[model]
    if family == "gaussian":
        return eta + draws["sigma"][:, None] * rng.standard_normal(eta.shape)
    if family == "skew_normal":
        xi, omega, delta = skew_normal_location(eta, draws["sigma"][:, None], draws["alpha"][:, None])
        z0, z1 = np.abs(rng.standard_normal(eta.shape)), rng.standard_normal(eta.shape)
        return xi + omega * (delta * z0 + np.sqrt(1 - delta**2) * z1)
    mu = special.expit(eta)
    phi = draws["phi"][:, None]
    interior = rng.beta(mu * phi, (1 - mu) * phi)
    interior = np.clip(interior, 1e-300, 1 - 1e-16)  # Beta draws may round to 0 or 1 for tiny φ
    if model == "zoib":
        boundary = rng.random(eta.shape) < draws["zoi"][:, None]
        one = rng.random(eta.shape) < draws["coi"][:, None]
        return np.where(boundary, one.astype(float), interior)
    zero = rng.random(eta.shape) < draws["zi"][:, None]
    return np.where(zero, 0.0, interior)


def rbp_rank_gains(runs: dict, qrels: pd.DataFrame, topics, p: float = 0.8, depth: int = 10) -> pd.DataFrame:
    """Per-rank RBP gains g_ijk = (1 − p)·p^(k−1)·rel/rel_max of each run (the data of BHM-ZOiB-Rank).

    `runs` maps a system to its `query_id, doc_id, score` table (`trec.read_run`); ranks follow score
    descending, then docno descending (docs/measures/index.md, Scores; `riskreport.measures.ranked`, as the native RBP provider); unjudged,
    non-relevant and spam documents gain 0; a topic a run lacks (or ranks fewer than `depth` documents
    for) has gain 0 at the missing ranks. Tidy `system, topic, rank, score` for ranks 1..`depth` of every
    system and topic.
    """
    if not 0 < p < 1 or depth < 1:
        raise ParameterError(f"RBP gains need 0 < p < 1 and depth ≥ 1, got p = {p!r}, depth = {depth!r}.")
    from riskreport.measures.ranked import rank_run, run_arrays
    from riskreport.measures.rbp import rank_gains

    judgments = dict(
        zip(zip(qrels["query_id"].astype(str), qrels["doc_id"].astype(str)), qrels["relevance"].astype(float))
    )
    top = float(qrels["relevance"].max()) if len(qrels) and qrels["relevance"].max() > 0 else 1.0
    topics = [str(t) for t in topics]
    frames = []
    for system, run in runs.items():
        ranked = rank_run(*run_arrays(run), depth)
        found = rank_gains(ranked, judgments, p, depth, scale=top)
        row = {t: i for i, t in enumerate(ranked.topics.tolist())}
        gains = np.zeros((len(topics), depth))
        present = [i for i, t in enumerate(topics) if t in row]
        gains[present] = found[[row[topics[i]] for i in present]]
        frames.append(
            pd.DataFrame(
                {
                    "system": system,
                    "topic": np.repeat(topics, depth),
                    "rank": np.tile(np.arange(1, depth + 1), len(topics)),
                    "score": gains.reshape(-1),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[["system", "topic", "rank", "score"]]
