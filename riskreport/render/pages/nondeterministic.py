"""Tables and prose of the non-deterministic systems report (mixed model, variance components, tests)."""

from __future__ import annotations

import html

import pandas as pd

from riskreport.render.tabular.html import HTML, fixed, styled

VERDICT_STYLES = {
    "equivalent": "background-color: #d9f0e3",
    "better": "background-color: #b7e1c4",
    "not_worse": "background-color: #eef6e8",
    "worse": "background-color: #fde0d2",
    "risk": "background-color: #fde0d2",
    "reward": "background-color: #d9f0e3",
}


def mixed_summary(mixed: pd.DataFrame, sig_level: float, caption: str | None = None):
    """The mixed model's system effects for the page: effect, SE, both intervals, p, verdict, fitting method.

    `mixed` is `riskreport.stats.mixed.mixed_table(...)` (standard convention: > 0 is better).
    """
    interval = lambda low, high: [  # noqa: E731
        f"[{fixed(a, 4, signed=True)}, {fixed(b, 4, signed=True)}]" for a, b in zip(low, high)
    ]
    table = pd.DataFrame(
        {
            "system": mixed["system"],
            "instances": mixed["n_instances"],
            "effect": mixed["effect"],
            "se": mixed["se"],
            f"{100 * (1 - sig_level):g}% CI": interval(mixed["ci_low"], mixed["ci_high"]),
            "p_value": mixed["p_value"],
            f"{100 * (1 - 2 * sig_level):g}% CI (equivalence)": interval(mixed["tost_low"], mixed["tost_high"]),
            "δ0": mixed["delta0"],
            "verdict": mixed["verdict"],
            "method": mixed["method"],
        }
    )
    return (
        styled(table, caption=caption)
        .format("{:g}", subset=["δ0"])
        .format(lambda v: html.escape(str(v).replace("_", " ")), subset=["verdict"])  # `not worse`, not `not_worse`
        .map(lambda v: VERDICT_STYLES.get(v, ""), subset=["verdict"])
    )


def variance_components(mixed: pd.DataFrame, caption: str | None = None):
    """Variance components of the mixed model per system, and each one's share of their sum."""
    names = {"topic": "topic", "instance": "instance", "topic_system": "topic × system", "residual": "residual"}
    table = pd.DataFrame({"system": mixed["system"]})
    for key, name in names.items():
        table[f"σ² {name}"] = mixed[f"var_{key}"]
    for key, name in names.items():
        table[f"share {name}"] = mixed[f"share_{key}"]
    shares = [c for c in table.columns if c.startswith("share")]
    return styled(table, precision=6, caption=caption).format("{:.1%}", subset=shares, na_rep="–")


def instance_tests_summary(tests: pd.DataFrame, caption: str | None = None):
    """Single-instance paired t-tests per system (from `riskreport.stats.instance_risk.single_instance_tests`), shares as %."""
    shares = [c for c in tests.columns if c.startswith("share_p")]
    shown = tests.rename(columns={c: f"significant at {int(c[7:]) / 100:g}" for c in shares})
    return styled(shown, caption=caption).format(
        "{:.0%}", subset=[f"significant at {int(c[7:]) / 100:g}" for c in shares]
    )


def nondeterministic_methods(mixed: pd.DataFrame, baseline: str, measure: str, sig_level: float) -> HTML:
    """The methods paragraph of the non-deterministic template (Jayasinghe et al. 2014; docs/measures/nondeterministic.md)."""
    df = sorted(set(int(d) for d in mixed["df"]))
    methods = sorted(set(mixed["method"]))
    delta0 = float(mixed["delta0"].iloc[0]) if len(mixed) else float("nan")
    text = (
        f"Each system is compared with the baseline {baseline} on {measure} under the linear mixed-effects model "
        "of Jayasinghe et al. (SIGIR 2014): score = γ + system + instance + topic + topic × system + residual, "
        "with the system a fixed effect and the others random, instances nested in their system and crossed "
        "with topics. A deterministic system (a single run) has no instance effect: its instance variance is 0. "
        "The variance components are estimated by restricted maximum likelihood (REML): exactly, through the "
        "orthogonal strata of the design, when every instance of both systems has a score on every topic "
        "('balanced REML', which agrees with statsmodels MixedLM to 1e-4), and with statsmodels MixedLM otherwise. "
        f"Fitting method(s) used here: {', '.join(methods)}. The effect is the difference of the system means "
        f"(> 0: better than the baseline); its p-value and intervals use Student's t with n_topics − 1 = "
        f"{', '.join(map(str, df))} degrees of freedom. Equivalence is tested with two one-sided tests at level "
        f"{sig_level:g} for the margin δ0 = {delta0:g}: 'equivalent' when the {100 * (1 - 2 * sig_level):g}% "
        "interval lies inside (−δ0, δ0); otherwise 'better' or 'worse' when the "
        f"{100 * (1 - sig_level):g}% interval lies entirely above or below 0; otherwise 'not worse' when the "
        f"{100 * (1 - 2 * sig_level):g}% interval's lower end is above −δ0 (non-inferiority); otherwise "
        "'inconclusive'. A lack of significance is never read as equivalence. The single-instance analyses compare "
        "each instance with the baseline (its per-topic mean over instances when the baseline has several): "
        "paired t-tests over topics, and URisk/TRisk at every α; the pooled system is the per-topic mean over an "
        "system's instances."
    )
    return HTML(f"<p>{html.escape(text)}</p>")
