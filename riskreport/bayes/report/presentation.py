"""The Bayesian report's words and display tables: the methods paragraph, the sampler's layout, the priors,
how to read the tables, and the BRisk⁻/PPDRisk⁻/dominance tables formatted for the page (Benham's thesis
'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md). Pure functions of the fits and tables
`analysis.bayesian_risk` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from riskreport.bayes.fitting.fit_progress import stderr_progress
from riskreport.bayes.fitting.fits import BayesFit
from riskreport.bayes.fitting.stopping import check_every
from riskreport.bayes.modelling.models import FAMILY, LABELS, brms_priors, describe_prior
from riskreport.bayes.posterior.measures import NO_VERDICT, failure, remedy, retry_note
from riskreport.stats.rankings import riskiest_first

if TYPE_CHECKING:
    from riskreport.bayes.report.analysis import BayesianRisk


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
        f"{settings['tune']:,} warm-up iterations, target acceptance {asked_target_accept(first):g}, seed "
        f"{settings['seed']}; each fit samples until every system effect has a bulk and tail effective sample size "
        f"of at least {settings['target_ess']:,} (Kruschke's criterion for 95% intervals, as in the thesis), at most "
        f"{settings['max_draws']:,} draws, checked at fixed draw counts (every {check_every(settings['target_ess'], settings['chains']):,} "
        f"draws per chain) and stopped at the first that meets it; draws per fit: {', '.join(f'{d:,}' for d in draws)}. Checks: "
        f"rank-normalised split R̂ < 1.01, bulk and tail ESS ≥ the target for the system effects, no divergent "
        f"transitions; {len(fits) - len(failed)} of {len(fits)} fits pass"
        + (f"; the others give no verdicts: {', '.join(sorted({f.label for f in failed}))}." if failed else ".")
        + retried_text(fits)
        + f" Intervals are equal-tailed at {result.settings['level']:g}. WAIC and PSIS-LOO are on the deviance "
        "scale (lower is better) from the pointwise log-likelihood, the zero-one point masses included."
    )


def asked_target_accept(fitted: BayesFit) -> float:
    """The target acceptance a fit was asked for: the retry's starting one when it was sampled again."""
    return float(fitted.settings.get("retry", {}).get("from_target_accept", fitted.settings["target_accept"]))


def retried_text(fits: Sequence[BayesFit]) -> str:
    """` Sampled again after divergent transitions: BHM-ZOiB (…).` for the fits the sampler re-sampled, else empty."""
    notes = [f"{f.label} ({retry_note(f)})" for f in fits if retry_note(f)]
    return f" Sampled again after divergent transitions: {'; '.join(notes)}." if notes else ""


def layout_text(fits: Sequence[BayesFit]) -> str:
    """How the group effects were sampled and which mass matrix NUTS adapted (per fit: low-rank after a batch
    that mixed poorly)."""
    kinds: dict[str, list[str]] = {}
    for f in fits:
        if not f.model.startswith("paired"):
            last = f.batches[-1] if f.batches else {}
            kind = f"{last.get('group_effects', 'u centred')}, a {last.get('mass_matrix', 'diagonal')} mass matrix"
            kinds.setdefault(kind, []).append(f.label)
    matrices = (
        f"{next(iter(kinds))} in every fit"
        if len(kinds) == 1
        else "; ".join(f"{kind}: {', '.join(sorted(set(names)))}" for kind, names in kinds.items())
    )
    return (
        "r ~ N(0, sd) as brms, sampled as each group's mean plus zero-sum deviations, r = m + u with "
        "m ~ N(0, sd/√n) and u ~ ZeroSumNormal(sd), and the intercept the data see, b + m_sys + m_top "
        "(the same posterior; m sampled as sd/√n·z_m, and u as sd·z_u for a group whose data barely inform it): "
        + matrices
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
        "verdict the diagnostics column says ok, or FAILED and what failed (R̂, ESS, divergences). A fit that FAILED "
        "gives no verdict: its cells read “no verdict: fit failed (…)”, are not coloured and are not counted, and the "
        "lines above the verdict matrix say which fit failed and what to change.",
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


def dominance_display(dominance: pd.DataFrame, names: int = 5) -> pd.DataFrame:
    """Dominance pairs grouped for the page: per model and system, the systems whose interval lies wholly below its
    own, at most `names` of them named (a row of a campaign's 100 names is a screen; every pair is in the CSV)."""
    if dominance.empty:
        return pd.DataFrame(columns=["model", "system", "dominates", "systems dominated"])
    grouped = dominance.groupby(["model", "better"], sort=False)["worse"]

    def listed(worse: pd.Series) -> str:
        more = len(worse) - names
        return ", ".join(worse.iloc[:names]) + (f", … and {more} more (tables/bayes_dominance.csv)" if more > 0 else "")

    table = pd.DataFrame({"dominates": grouped.size(), "systems dominated": grouped.agg(listed)}).reset_index()
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
                "overlap rule": in_words(brisk["verdict_overlap"], brisk["diagnostics"]),
                "difference (h − c)": -brisk["diff_mean"],
                "difference low": -brisk["diff_high"],
                "difference high": -brisk["diff_low"],
                "draw-wise rule": in_words(brisk["verdict_difference"], brisk["diagnostics"]),
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
            "overlap rule": in_words(brisk["verdict_overlap"], brisk["diagnostics"]),
            "difference (c − h)": brisk["diff_mean"],
            "difference low": brisk["diff_low"],
            "difference high": brisk["diff_high"],
            "draw-wise rule": in_words(brisk["verdict_difference"], brisk["diagnostics"]),
            "diagnostics": brisk["diagnostics"],
        }
    )


def in_words(verdicts: pd.Series, diagnostics: pd.Series) -> pd.Series:
    """Verdicts for the page: a failed fit's `no verdict` says why (`no verdict: fit failed (4 divergences)`)."""
    return verdicts.where(verdicts != NO_VERDICT, diagnostics.map(no_verdict_text))


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
            "verdict": in_words(ppdrisk["verdict"], ppdrisk["diagnostics"]),
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


RULES = ("PPDRisk⁻", "overlap", "draw-wise")  # the verdicts of the Bayesian verdict matrix (BRisk⁻: two rules)
FLAGS = ("risk", "reward")


def no_verdict_text(diagnostics: str) -> str:
    """A cell whose fit failed, in words: `FAILED: 4 divergences` → `no verdict: fit failed (4 divergences)`."""
    return f"no verdict: fit failed ({diagnostics.removeprefix('FAILED: ')})"


def why_none(ppdrisk: str, brisk: str) -> str:
    """Why a cell has no verdict from any rule, from the diagnostics of PPDRisk⁻'s and BRisk⁻'s fits."""
    if brisk in ("ok", ppdrisk):
        return no_verdict_text(ppdrisk)
    return f"no verdict: fits failed (PPDRisk⁻: {ppdrisk.removeprefix('FAILED: ')}; BRisk⁻: {brisk.removeprefix('FAILED: ')})"


def verdict_summary(ppdrisk: pd.DataFrame, brisk: pd.DataFrame) -> pd.DataFrame:
    """The report's verdicts per challenger and α in the frequentist verdict matrix's shape (`render.tables`):
    `verdict` is PPDRisk⁻'s, or, where its fit failed its checks, the first of BRisk⁻'s rules (overlap, then
    draw-wise) that gives one (`by` names the rule), or `no verdict` when none does (`why` says why, in words);
    `urisk` the −PPDRisk⁻ median (NaN from a failed fit); `methods` the rules (PPDRisk⁻, BRisk⁻ overlap, BRisk⁻
    draw-wise) that give a verdict (their fit passed its checks), `agree` those of them with `verdict`; `disagree`
    the later rules' verdicts that differ from it.

    Rows: systems a verdict flags (any rule, any α: risk or reward) first, riskiest first, then the others.
    `attrs["flagged"]` says how many systems that is, `attrs["risk"]` and `attrs["reward"]` name those a rule
    flags so (riskiest first: a page names each of them without a click), `attrs["at"][kind][system]` the α at
    which a rule flags it so, with those rules, `attrs["judged"]` the α at which some rule gives a verdict, and
    `attrs["failed"]` which fits failed their checks (a fit is per model and α, not per system: said once).
    """
    both = ppdrisk.merge(
        brisk[["system", "alpha", "verdict_overlap", "verdict_difference", "diagnostics"]],
        on=["system", "alpha"],
        how="left",
        suffixes=("", "_brisk"),
    )
    rules = both[["verdict", "verdict_overlap", "verdict_difference"]].fillna("inconclusive").to_numpy()
    given = rules != NO_VERDICT
    first = given.argmax(axis=1)  # the first rule with a verdict (0, PPDRisk⁻, where none has one)
    verdict = rules[np.arange(len(rules)), first]
    disagree = [
        "; ".join(f"{rule}: {v}" for rule, v in zip(RULES[k + 1 :], row[k + 1 :]) if v != row[k])
        for k, row in zip(first, rules)
    ]
    summary = pd.DataFrame(
        {
            "system": both["system"],
            "alpha": both["alpha"],
            "verdict": verdict,
            "by": np.asarray(RULES)[first],
            "urisk": both["ppd_urisk_median"].where(given[:, 0]),
            "agree": ((rules == verdict[:, None]) & given).sum(axis=1),
            "methods": given.sum(axis=1),
            "disagree": disagree,
            "why": [
                "" if any(row) else why_none(ppd, brisk)
                for row, ppd, brisk in zip(given, both["diagnostics"], both["diagnostics_brisk"].fillna("ok"))
            ],
        }
    )
    flags = np.isin(rules, FLAGS)
    flagged = set(summary.loc[flags.any(axis=1), "system"])
    order = [s for s in riskiest_first(ppdrisk, "ppd_urisk_median") if s in flagged]
    order += [s for s in riskiest_first(ppdrisk, "ppd_urisk_median") if s not in flagged]
    rank = {system: k for k, system in enumerate(order)}
    summary.attrs["at"] = {kind: flagged_at(both, rules, kind) for kind in FLAGS}
    summary.attrs["judged"] = sorted(set(both.loc[given.any(axis=1), "alpha"]))
    summary = summary.sort_values(["system", "alpha"], key=lambda c: c.map(rank) if c.name == "system" else c)
    summary = summary.reset_index(drop=True)
    summary.attrs["flagged"] = len(flagged)
    for kind in FLAGS:  # who any rule flags so at some α, riskiest first
        summary.attrs[kind] = [s for s in order if s in summary.attrs["at"][kind]]
    bad_brisk = sorted(set(both.loc[both["diagnostics_brisk"].fillna("ok") != "ok", "alpha"]))
    summary.attrs["failed"] = (["PPDRisk⁻'s fit"] if (both["diagnostics"] != "ok").any() else []) + (
        [f"BRisk⁻'s at α = {', '.join(f'{a:g}' for a in bad_brisk)}"] if bad_brisk else []
    )
    return summary


def flagged_at(both: pd.DataFrame, rules: np.ndarray, kind: str) -> dict[str, list[tuple[float, list[str]]]]:
    """system → [(α, the rules that call it `kind` at α)], for the systems some rule calls `kind` (rows of `both`
    in the order of `rules`: PPDRisk⁻, overlap, draw-wise)."""
    at: dict[str, list[tuple[float, list[str]]]] = {}
    for system, alpha, row in zip(both["system"], both["alpha"], rules):
        hit = [rule for rule, v in zip(RULES, row) if v == kind]
        if hit:
            at.setdefault(system, []).append((float(alpha), hit))
    return {system: sorted(cells) for system, cells in at.items()}


@dataclass(frozen=True)
class FitFailure:
    """A fit that failed its checks: its label, what it serves (`uses`: PPDRisk⁻, BRisk⁻ at α = …, the model
    comparison), what failed in words (`measures.failure`) and what to change (`measures.remedy`)."""

    fit: str
    uses: tuple[str, ...]
    what: str
    remedy: str

    @property
    def consequence(self) -> str:
        """What the report does not say because of it: the verdicts it gives none of, the comparison it weakens."""
        verdicts = [u for u in self.uses if u.startswith(("PPDRisk⁻", "BRisk⁻"))]
        parts = [f"no verdict comes from it ({', '.join(verdicts)})"] if verdicts else []
        parts += [UNTRUSTED.get(u, f"{u} are not to be trusted") for u in self.uses if u not in verdicts]
        return " and ".join(parts) or "its results are not to be trusted"

    def sentence(self) -> str:
        """One line for the page and the terminal: which fit failed, what failed, what follows, what to change."""
        return f"{self.fit} failed its checks ({self.what}): {self.consequence}. To change: {self.remedy}."


COMPARISON = "the model comparison"
RANK_MODEL = "BHM-ZOiB-Rank's system effects and parameters"
UNTRUSTED = {COMPARISON: "its WAIC, PSIS-LOO and system effects are not to be trusted"}


def fit_failures(result: BayesianRisk) -> list[FitFailure]:
    """Every fit of the report that failed its checks (R̂, ESS, divergences), in the order fitted, once each (the
    α = 0 BRisk⁻ fit may be the unadjusted fit of its family), with what it serves and what to change."""
    uses: dict[int, list[str]] = {}
    fits: dict[int, BayesFit] = {}
    for model, fitted in result.fits.items():
        fits[id(fitted)] = fitted
        uses.setdefault(id(fitted), [])
        if model in result.settings.get("models", ()):
            uses[id(fitted)].append(COMPARISON)
        if model == result.ppd_model:
            uses[id(fitted)].append("PPDRisk⁻")
        if model == "zoib_rank":
            uses[id(fitted)].append(RANK_MODEL)
    for alpha, fitted in zip(dict.fromkeys(result.brisk["alpha"]), result.brisk_fits):
        fits[id(fitted)] = fitted
        uses.setdefault(id(fitted), []).append(f"BRisk⁻ at α = {alpha:g}")
    return [
        FitFailure(fit_name(fits[key], uses[key]), tuple(uses[key]), failure(fits[key]), remedy(fits[key]))
        for key in uses
        if not fits[key].ok
    ]


def fit_name(fitted: BayesFit, uses: Sequence[str]) -> str:
    """`BHM-ZOiB`, or `BHM-Gaussian for BRisk⁻ at α = 5` for a fit to the risk-adjusted scores only."""
    return fitted.label if len(uses) != 1 or not uses[0].startswith("BRisk⁻") else f"{fitted.label} for {uses[0]}"


def warn_failed(result: BayesianRisk, say=stderr_progress) -> list[str]:
    """Say on the terminal (`say`: stderr, as the fits' progress) one warning line per fit that failed its checks;
    returns the lines. The template calls it last, so the warning is what a run ends with."""
    lines = [f"warning: {failed.sentence()}" for failed in fit_failures(result)]
    for line in lines:
        say(line)
    return lines
