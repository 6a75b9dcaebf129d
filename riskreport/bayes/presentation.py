"""The Bayesian report's words and display tables: the methods paragraph, the sampler's layout, the priors,
how to read the tables, and the BRisk⁻/PPDRisk⁻/dominance tables formatted for the page (Benham's thesis
'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md). Pure functions of the fits and tables
`analysis.bayesian_risk` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from riskreport.bayes.fits import BayesFit
from riskreport.bayes.models import FAMILY, LABELS, brms_priors, describe_prior
from riskreport.bayes.stopping import check_every
from riskreport.stats.rankings import riskiest_first

if TYPE_CHECKING:
    from riskreport.bayes.analysis import BayesianRisk


def methods_text(result: BayesianRisk, n_topics: int) -> str:
    """The methods paragraph: models, priors, sampler, draws and diagnostics, as used."""
    first = next(iter(result.fits.values()))
    settings = first.settings
    priors = []
    for model, fitted in result.fits.items():
        text = ", ".join(f"{name} ~ {describe_prior(prior)}" for name, prior in fitted.priors.items())
        priors.append(f"{LABELS[model]}: {text}")
    fits = result.all_fits
    failed = [f for f in fits if not f.ok]
    draws = sorted({f.n_draws for f in fits})
    pool = len(first.data.systems)
    return (
        f"Every model is fitted on all {pool} systems of the pool and {n_topics} topics at once (partial pooling "
        "over systems and topics; group effects " + layout_text(fits) + "). "
        f"Models compared: {', '.join(LABELS[m] for m in result.settings['models'])}; BRisk⁻ fits "
        f"{LABELS[result.settings['family']]} to the scores adjusted by thesis Eq. 4.5 at each α (the baseline "
        f"unchanged); PPDRisk⁻ draws one posterior predictive replicate per draw and cell from "
        f"{LABELS[result.ppd_model]}. Priors are brms's defaults (brms ≥ 2.13): " + "; ".join(priors) + ". "
        f"Sampler: {settings['sampler']} through PyMC, {settings['chains']} chains per batch, "
        f"{settings['tune']:,} warm-up iterations, target acceptance {settings['target_accept']:g}, seed "
        f"{settings['seed']}; each fit samples until every system effect has a bulk and tail effective sample size "
        f"of at least {settings['target_ess']:,} (Kruschke's criterion for 95% intervals, as in the thesis), at most "
        f"{settings['max_draws']:,} draws, checked at fixed draw counts (every {check_every(settings['target_ess'], settings['chains']):,} "
        f"draws per chain) and stopped at the first that meets it; draws per fit: {', '.join(f'{d:,}' for d in draws)}. Checks: "
        f"rank-normalised split R̂ < 1.01, bulk and tail ESS ≥ the target for the system effects, no divergent "
        f"transitions; {len(fits) - len(failed)} of {len(fits)} fits pass"
        + (
            f" and the verdicts of the others are marked FAILED: {', '.join(sorted({f.label for f in failed}))}."
            if failed
            else "."
        )
        + f" Intervals are equal-tailed at {result.settings['level']:g}. WAIC and PSIS-LOO are on the deviance "
        "scale (lower is better) from the pointwise log-likelihood, the zero-one point masses included."
    )


def layout_text(fits: Sequence[BayesFit]) -> str:
    """How the group effects were sampled and which mass matrix NUTS adapted (per fit: low-rank after a batch
    that mixed poorly)."""
    kinds: dict[str, list[str]] = {}
    for f in fits:
        if not f.model.startswith("paired"):
            mass = f.batches[-1].get("mass_matrix", "diagonal") if f.batches else "diagonal"
            kinds.setdefault(f"a {mass} mass matrix", []).append(f.label)
    matrices = (
        f"{next(iter(kinds))} in every fit"
        if len(kinds) == 1
        else "; ".join(f"{kind}: {', '.join(sorted(set(names)))}" for kind, names in kinds.items())
    )
    return (
        "r ~ N(0, sd) as brms, sampled as each group's mean plus zero-sum deviations, r = m + u with "
        "m ~ N(0, sd/√n) and u ~ ZeroSumNormal(sd), and the intercept the data see, b + m_sys + m_top "
        f"(the same posterior); {matrices}"
    )


def priors_table(models: Sequence[str], matrix: pd.DataFrame) -> pd.DataFrame:
    """The brms default priors of each model on the scores of `matrix`, as text (for the report)."""
    y = matrix.to_numpy(dtype=float).ravel()
    return pd.DataFrame(
        [
            {"model": LABELS[model], "family": FAMILY[model], "parameter": name, "prior": describe_prior(prior)}
            for model in dict.fromkeys(models)
            for name, prior in brms_priors(model, y).items()
        ]
    )


def reading_points(convention: str = "standard") -> list[str]:
    """The how-to box of the Bayesian page: exactly the marks and colours it uses (no ▲/▼, no coloured cells)."""
    worse = "below 0" if convention == "standard" else "above 0 (BRisk⁻, PPDRisk⁻)"
    return [
        "Verdicts are words: risk, reward or inconclusive. BRisk⁻ gives two, each labelled (the thesis's overlap "
        "rule and the draw-wise rule); PPDRisk⁻ one, risk when its interval lies wholly " + worse + ". Beside every "
        "verdict the diagnostics column says ok, or FAILED and what failed (R̂, ESS, divergences): a FAILED verdict "
        "is not to be trusted.",
        "In the model comparison the lowest WAIC and PSIS-LOO are in bold on a green background; elpd differences "
        "come with the standard error of the difference (dse). Dominance pairs list, per model, the systems whose "
        "whole credible interval lies above another system's.",
        "Colours in the figures: the baseline is blue; orange is a system credibly worse than the baseline (its "
        "interval wholly below the baseline's) or a risk verdict, green credibly better or a reward, grey "
        "inconclusive. Figures are numbered, with a caption beneath, and their axes say which side is worse.",
        "Each numbered section opens with a “How to read this” line. Tables on this page are rounded; every number "
        "is in the report's tables/*.csv at full precision (standard convention). Provenance (input hashes, "
        "versions, parameters, run time) is at the end of the page.",
    ]


def dominance_display(dominance: pd.DataFrame) -> pd.DataFrame:
    """Dominance pairs grouped for the page: per model and system, the systems whose interval lies wholly below its own."""
    if dominance.empty:
        return pd.DataFrame(columns=["model", "system", "dominates", "systems dominated"])
    grouped = dominance.groupby(["model", "better"], sort=False)["worse"]
    table = pd.DataFrame({"dominates": grouped.size(), "systems dominated": grouped.agg(", ".join)}).reset_index()
    table = table.rename(columns={"better": "system"})
    table["model"] = table["model"].map(LABELS)
    return table.sort_values(["model", "dominates"], ascending=[True, False], kind="stable").reset_index(drop=True)


def brisk_display(brisk: pd.DataFrame, convention: str = "standard") -> pd.DataFrame:
    """BRisk⁻ for the page: in the minus convention BRisk⁻ = −effect and the difference flips sign (positive = risk)."""
    if convention == "minus":
        return pd.DataFrame(
            {
                "system": brisk["system"],
                "r": brisk["alpha"] + 1,
                "BRisk⁻": -brisk["effect_mean"],
                "BRisk⁻ low": -brisk["effect_high"],
                "BRisk⁻ high": -brisk["effect_low"],
                "baseline low": -brisk["baseline_high"],
                "baseline high": -brisk["baseline_low"],
                "overlap rule": brisk["verdict_overlap"],
                "difference (h − c)": -brisk["diff_mean"],
                "difference low": -brisk["diff_high"],
                "difference high": -brisk["diff_low"],
                "draw-wise rule": brisk["verdict_difference"],
                "diagnostics": brisk["diagnostics"],
            }
        )
    return pd.DataFrame(
        {
            "system": brisk["system"],
            "alpha": brisk["alpha"],
            "effect": brisk["effect_mean"],
            "effect low": brisk["effect_low"],
            "effect high": brisk["effect_high"],
            "baseline low": brisk["baseline_low"],
            "baseline high": brisk["baseline_high"],
            "overlap rule": brisk["verdict_overlap"],
            "difference (c − h)": brisk["diff_mean"],
            "difference low": brisk["diff_low"],
            "difference high": brisk["diff_high"],
            "draw-wise rule": brisk["verdict_difference"],
            "diagnostics": brisk["diagnostics"],
        }
    )


def ppdrisk_display(ppdrisk: pd.DataFrame, convention: str = "standard") -> pd.DataFrame:
    """PPDRisk⁻ for the page: the minus convention shows PPDRisk⁻ itself (positive = risk), else −PPDRisk⁻."""
    sign, name = (-1.0, "PPDRisk⁻") if convention == "minus" else (1.0, "−PPDRisk⁻")
    low, high = (
        (ppdrisk["ppd_urisk_high"], ppdrisk["ppd_urisk_low"])
        if sign < 0
        else (ppdrisk["ppd_urisk_low"], ppdrisk["ppd_urisk_high"])
    )
    grid = {"r": ppdrisk["alpha"] + 1} if convention == "minus" else {"alpha": ppdrisk["alpha"]}
    return pd.DataFrame(
        {
            "system": ppdrisk["system"],
            **grid,
            f"{name} median": sign * ppdrisk["ppd_urisk_median"],
            f"{name} mean": sign * ppdrisk["ppd_urisk_mean"],
            "low": sign * low,
            "high": sign * high,
            "verdict": ppdrisk["verdict"],
            "diagnostics": ppdrisk["diagnostics"],
        }
    )


def figure_challengers(ppdrisk: pd.DataFrame, limit: int) -> list[str]:
    """The challengers drawn in figures: all, or the `limit` with the lowest −PPDRisk⁻ median at the largest α."""
    return riskiest_first(ppdrisk, "ppd_urisk_median")[:limit]


def data_overview(
    matrix: pd.DataFrame,
    baseline: str,
    challengers: Sequence[str],
    pool_file: str | None = None,
    absent: Sequence[str] = (),
) -> pd.DataFrame:
    """The model's data in numbers: scores, systems, topics, exact zeros and ones; the pool's file and the runs it
    lists that the collection lacks (left out of the models)."""
    values = matrix.to_numpy(dtype=float)
    pool = (
        [
            ("pool file", pool_file),
            (f"runs of the pool file not in the collection ({len(absent)}, left out)", ", ".join(absent) or "none"),
        ]
        if pool_file
        else []
    )
    rows = pool + [
        ("systems in the model's pool", len(matrix)),
        ("challengers reported", len(challengers)),
        ("baseline (champion)", baseline),
        ("topics", matrix.shape[1]),
        ("scores", values.size),
        ("scores = 0", int((values == 0).sum())),
        ("scores = 1", int((values == 1).sum())),
        ("scores outside [0, 1]", int(((values < 0) | (values > 1)).sum())),
    ]
    return pd.DataFrame(rows, columns=["item", "value"]).astype({"value": str})
