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

import numpy as np

from riskreport.bayes.scores import BayesData
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
        inner = (y > 0) & (y < 1)  # η and the Beta density only for these: the 0s and 1s enter through their counts
        inputs.update(
            {
                "system": inputs["system"][inner],
                "topic": inputs["topic"][inner],
                "log_y": np.log(y[inner]),
                "log1m_y": np.log1p(-y[inner]),
                "n0": np.float64((y == 0).sum()),
                "n1": np.float64((y == 1).sum()),
                "n_inner": np.float64(inner.sum()),
            }
        )
        del inputs["y"]
    if model == "zoib_rank":
        ranks = np.asarray(data.ranks(), dtype=float)
        inputs["rank_centred"] = (ranks - float(np.mean(ranks)))[(y > 0) & (y < 1)]
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
        family = FAMILY[model]
        y = inputs.get("y")
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
            n0, n1, n_in = inputs["n0"], inputs["n1"], inputs["n_inner"]
            pm.Potential("obs_inner", beta_log_density(eta, phi, inputs, n_in))
            if model == "zoib":
                zoi, coi = pm.Beta("zoi", 1.0, 1.0), pm.Beta("coi", 1.0, 1.0)
                pm.Potential(
                    "obs_01", (n0 + n1) * pt.log(zoi) + n0 * pt.log1p(-coi) + n1 * pt.log(coi) + n_in * pt.log1p(-zoi)
                )
            else:
                zi = pm.Beta("zi", 1.0, 1.0)
                pm.Potential("obs_0", n0 * pt.log(zi) + n_in * pt.log1p(-zi))
    return pymc_model


def beta_log_density(eta, phi, inputs: dict, n_inner):
    """Σ log Beta(y_i | μ_i φ, (1 − μ_i) φ) over the interior scores (0 < y < 1), μ = logit⁻¹(η) (brms's beta family).

    Written out with log y and log(1 − y) precomputed (data) and log Γ(φ) once per evaluation rather than
    once per score: the same value as PyMC's `Beta` log-density summed over these scores.
    """
    import pytensor.tensor as pt

    a = pt.sigmoid(eta) * phi
    b = phi - a
    return n_inner * pt.gammaln(phi) + pt.sum(
        (a - 1) * inputs["log_y"] + (b - 1) * inputs["log1m_y"] - pt.gammaln(a) - pt.gammaln(b)
    )
