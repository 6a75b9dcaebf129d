"""The Bayesian models of Benham's thesis 'Inferential Risk Measures' (Ch. 4–5; docs/measures/bayesian.md), with brms's default priors.

Pure functions: data and priors in, a PyMC model (for sampling) or NumPy arrays (pointwise
log-likelihood, posterior predictive replicates) out. The model is brms's: b ~ Student-t, each
group's effects r_g ~ N(0, sd_g) iid (brms samples them non-centred, r = sd·z). PyMC samples the
same posterior in another parameterisation (`effects="zero_sum"`, the default): each group's
effects are their mean plus zero-sum deviations, r_g = m_g + u_g with m_g ~ N(0, sd_g/√n_g) and
u_g ~ ZeroSumNormal(sd_g) (the same joint distribution as n_g iid N(0, sd_g) effects), and the free
intercept is the one the data see, b_data = b + m_sys + m_top, with b's Student-t prior evaluated at
b = b_data − m_sys − m_top (a linear map with Jacobian 1). The posterior of b, sd and every r is
unchanged (tests/test_bayes_models.py); the slow direction of brms's form, the intercept against
the means of the group effects, is gone. The data never see m (only b's prior does), so it is sampled
scaled, m = sd/√n·z_m with z_m ~ N(0, 1); the deviations are sampled as they are (centred), or, for a
group whose data barely inform it (the topics of BRisk⁻ scores at α = 10), scaled too, u = sd·z_u with
z_u ~ ZeroSumNormal(1) (`centred`, chosen by `sampling.layout`). `effects="brms"` builds brms's non-centred form, the reference the tests compare
against.

Models (brms family; formula):
- `gaussian`: BHM-Gaussian, y ~ N(b + r_sys + r_top, σ).
- `skew_normal`: BHM-Skew-Normal, brms parameterisation (mean μ, sd σ, shape λ).
- `zoib`: BHM-ZOiB, zero_one_inflated_beta with logit μ = b + r_sys + r_top.
- `paired_gaussian`, `paired_skew_normal`: intercept-only models of d_j = −l_r(Δ_j) (URisk⁻_r).
- `zoib_rank`: BHM-ZOiB-Rank, zero_inflated_beta of per-rank gains, logit μ = b + β(k − k̄) + r_sys + r_top.
"""

from __future__ import annotations

import numpy as np

from riskreport.bayes.modelling.scores import BayesData
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


EFFECTS = ("zero_sum", "brms")  # parameterisations of the group effects (`build_pymc_model`)


EFFECTS_TEXT = "mean + zero-sum deviations (r = m + u), intercept b + m_sys + m_top"  # the sampled one, as reported


def free_variables(model: str) -> list[str]:
    """Names of the model's parameters as stored in a fit: b, sd_sys, sd_top, r_sys, r_top and the family's."""
    names = ["b"]
    if not model.startswith("paired"):
        names += ["sd_sys", "sd_top", "r_sys", "r_top"]
    return names + FAMILY_PARAMETERS[model]


EXACT = {"zoib": ("zoi", "coi"), "zoib_rank": ("zi",)}
"""Parameters drawn from their exact Beta posterior, not sampled (`exact_draws`)."""


def sampled_variables(model: str) -> list[str]:
    """The stored variables NUTS samples: `free_variables` but those drawn exactly (`EXACT`)."""
    return [name for name in free_variables(model) if name not in EXACT.get(model, ())]


def exact_draws(model: str, y: np.ndarray, shape: tuple, rng: np.random.Generator) -> dict:
    """Draws of the parameters with an exact posterior (`EXACT`), of `shape`: zoi ~ Beta(1 + n0 + n1, 1 + n_inner),
    coi ~ Beta(1 + n1, 1 + n0) (BHM-ZOiB); zi ~ Beta(1 + n0, 1 + n_inner) (BHM-ZOiB-Rank). Their Beta(1, 1) priors
    times the likelihood's zoi^(n0+n1)(1 − zoi)^n_inner · coi^n1 (1 − coi)^n0 (zi^n0 (1 − zi)^n_inner)."""
    n0, n1 = float(np.sum(y == 0)), float(np.sum(y == 1))
    inner = float(y.size) - n0 - n1
    if model == "zoib":
        return {"zoi": rng.beta(1 + n0 + n1, 1 + inner, shape), "coi": rng.beta(1 + n1, 1 + n0, shape)}
    if model == "zoib_rank":
        return {"zi": rng.beta(1 + n0, 1 + inner, shape)}
    return {}


def model_inputs(model: str, data: BayesData, priors: dict) -> dict:
    """The data and prior constants of a model as named arrays: the shared data of its compiled form.

    PyMC's model takes them as `pm.Data`; `kernels.pack` packs them into the buffer the numba kernels read.
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


def build_pymc_model(
    model: str,
    data: BayesData,
    priors: dict,
    centred: tuple[bool, bool] = (True, True),
    effects: str = "zero_sum",
    exact: bool = False,
):
    """The PyMC model of `model` on `data` with `priors` (see `brms_priors`); data and prior constants are `pm.Data`.

    `effects`: the parameterisation of the intercept and group effects (one of `EFFECTS`; the same
    posterior of b, sd_sys, sd_top, r_sys, r_top): "zero_sum" (module docstring) or "brms" (b; r_g = sd_g·z_g,
    z_g ~ N(0, 1)). Zero-sum free variables: b_data, z_m_g (m_g = sd_g/√n_g·z_m_g), and u_g, or z_u_g
    (u_g = sd_g·z_u_g, z_u_g ~ ZeroSumNormal(1)) for a group not `centred` (systems, topics).
    `exact=True` leaves out zoi, coi (BHM-ZOiB) and zi (BHM-ZOiB-Rank): independent of every other parameter
    a posteriori, they are drawn from their exact Beta posterior (`exact_draws`); the rest is the
    density nutpie samples (`kernels.log_density`).
    """
    import pymc as pm
    import pytensor.tensor as pt

    if effects not in EFFECTS:
        raise ParameterError(f"effects must be one of {', '.join(EFFECTS)}, got {effects!r}.")
    with pm.Model(check_bounds=False) as pymc_model:  # transforms keep every parameter in its support
        inputs = {name: pm.Data(name, value) for name, value in model_inputs(model, data, priors).items()}
        eta = _intercept_and_effects(model, data, inputs, centred, effects)
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
            if exact:
                pass
            elif model == "zoib":
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


def _intercept_and_effects(model: str, data: BayesData, inputs: dict, centred: tuple[bool, bool], effects: str):
    """The linear predictor's intercept and group effects in the parameterisation `effects`, with the
    deterministics b, r_sys, r_top that a fit stores."""
    import pymc as pm

    if model.startswith("paired"):
        return pm.StudentT("b", nu=3, mu=inputs["b_loc"], sigma=inputs["b_scale"])
    groups = [("sys", len(data.systems), inputs["system"]), ("top", len(data.topics), inputs["topic"])]
    sds = [pm.HalfStudentT(f"sd_{group}", nu=3, sigma=inputs["sd_scale"]) for group, _, _ in groups]
    if effects == "brms":
        b = pm.StudentT("b", nu=3, mu=inputs["b_loc"], sigma=inputs["b_scale"])
        r = [
            pm.Deterministic(f"r_{g}", sd * pm.Normal(f"z_{g}", 0.0, 1.0, shape=n))
            for (g, n, _), sd in zip(groups, sds)
        ]
        return b + r[0][inputs["system"]] + r[1][inputs["topic"]]
    b_data = pm.Flat("b_data")  # the intercept the data see; its prior is b's, below
    eta, means = b_data, []
    for (group, n, index), sd, centre in zip(groups, sds, centred):
        m = sd / np.sqrt(n) * pm.Normal(f"z_m_{group}", 0.0, 1.0)  # the data never see m: only b's prior informs it
        if centre:
            u = pm.ZeroSumNormal(f"u_{group}", sigma=sd, shape=n)
        else:
            u = sd * pm.ZeroSumNormal(f"z_u_{group}", sigma=1.0, shape=n)
        pm.Deterministic(f"r_{group}", m + u)
        means.append(m)
        eta = eta + u[index]
    b = pm.Deterministic("b", b_data - means[0] - means[1])
    pm.Potential("b_prior", pm.logp(pm.StudentT.dist(nu=3, mu=inputs["b_loc"], sigma=inputs["b_scale"]), b))
    return eta
