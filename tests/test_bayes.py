"""Bayesian risk (the thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md): priors, likelihoods and replicates against scipy, small fits on generated
data with known effects, the draws cache, and the thesis's TREC-COVID worked example when ../shared is present."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA
from scipy import stats

import riskreport as rr
from riskreport import bayes
from riskreport.bayes.fitting import sampling
from riskreport.bayes.modelling import likelihood, models, scores
from riskreport.errors import ParameterError

COVID = SHARED_DATA / "trec-covid-round1"
FAST = dict(target_ess=600, max_draws=8000, chains=2, tune=400, seed=7, target_accept=0.9, progress=None)


# ---------------------------------------------------------------- priors, likelihoods, replicates (no sampling)


def test_brms_default_priors_identity_link():
    y = np.array([0.1, 0.2, 0.3, 0.34, 0.5, 0.9])
    priors = bayes.brms_priors("gaussian", y)
    assert priors["b"] == ("student_t", 3, 0.3, 2.5)  # round(median 0.32, 1); S = max(2.5, mad)
    assert priors["sigma"] == priors["sd_sys"] == ("half_student_t", 3, 0, 2.5)
    wide = np.array([-10.0, -4.0, 0.0, 3.0, 12.0])  # mad = 4 × 1.4826 = 5.9304 → 5.9
    assert bayes.brms_priors("skew_normal", wide)["b"] == ("student_t", 3, 0.0, 5.9)
    assert bayes.brms_priors("skew_normal", wide)["alpha"] == ("normal", 0, 4)
    assert "sd_sys" not in bayes.brms_priors("paired_gaussian", y)


def test_brms_default_priors_logit_link_ignore_the_data():
    for y in (np.array([0.0, 0.5, 1.0]), np.array([0.9, 0.95, 0.99])):
        priors = bayes.brms_priors("zoib", y)
        assert priors["b"] == ("student_t", 3, 0.0, 2.5) and priors["sd_top"] == ("half_student_t", 3, 0, 2.5)
        assert priors["phi"] == ("gamma", 0.01, 0.01) and priors["zoi"] == priors["coi"] == ("beta", 1, 1)
    assert bayes.brms_priors("zoib_rank", np.array([0.0, 0.1]))["beta"] == ("flat",)
    assert bayes.describe_prior(("student_t", 3, 0.0, 2.5)) == "student_t(3, 0, 2.5)"


def _draws(n=5, **extra):
    rng = np.random.default_rng(0)
    d = {"b": rng.normal(0, 0.3, n), "r_sys": rng.normal(0, 0.2, (n, 2)), "r_top": rng.normal(0, 0.2, (n, 3))}
    d.update({k: np.full(n, v) if np.isscalar(v) else v for k, v in extra.items()})
    return d


def _cells():
    y = np.array([0.0, 0.2, 0.5, 1.0, 0.7, 0.05])
    return scores.BayesData(
        y=y,
        system=np.array([0, 0, 0, 1, 1, 1]),
        topic=np.array([0, 1, 2, 0, 1, 2]),
        systems=("a", "b"),
        topics=("1", "2", "3"),
    )


def test_log_likelihood_matches_scipy():
    data = _cells()
    d = _draws(sigma=0.3, alpha=2.0, phi=8.0, zoi=0.1, coi=0.4)
    eta = likelihood.linear_predictor("gaussian", data, d)
    assert np.allclose(likelihood.log_likelihood("gaussian", data, d), stats.norm.logpdf(data.y, eta, 0.3))
    xi, omega, _ = likelihood.skew_normal_location(eta, 0.3, 2.0)
    assert np.allclose(likelihood.log_likelihood("skew_normal", data, d), stats.skewnorm.logpdf(data.y, 2.0, xi, omega))
    mu = 1 / (1 + np.exp(-eta))
    expected = np.where(
        data.y == 0,
        np.log(0.1 * 0.6),
        np.where(
            data.y == 1,
            np.log(0.1 * 0.4),
            np.log(0.9) + stats.beta.logpdf(np.clip(data.y, 1e-9, 1 - 1e-9), mu * 8, (1 - mu) * 8),
        ),
    )
    assert np.allclose(likelihood.log_likelihood("zoib", data, d), expected)


def test_zoib_graph_likelihood_is_the_pointwise_log_likelihood():
    """The PyMC graph's likelihood (Beta terms for 0 < y < 1 only, written out with log y and log(1 − y) as
    data; counts for the 0s and 1s) equals Σ_n log p(y_n | θ) of `likelihood` (scipy's Beta) at random points."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame(
        [(f"s{s}", f"t{t}", float(rng.beta(2, 3))) for s in range(5) for t in range(7)],
        columns=["system", "topic", "score"],
    )
    table.loc[::9, "score"], table.loc[4::11, "score"] = 0.0, 1.0
    data = bayes.scores_data(table)
    model = models.build_pymc_model("zoib", data, models.brms_priors("zoib", data.y))
    names = ["b", "r_sys", "r_top", "phi", "zoi", "coi"]
    outputs = model.replace_rvs_by_values([model[name] for name in names])
    total = model.logp(vars=[term for term in model.potentials if term.name.startswith("obs")])
    function = model.compile_fn([total, *outputs], inputs=model.value_vars, on_unused_input="ignore", point_fn=True)
    for _ in range(4):
        point = {name: rng.normal(0, 0.7, np.shape(value)) for name, value in model.initial_point().items()}
        value, *draw = function(point)
        draws = {name: np.asarray(v)[None] for name, v in zip(names, draw, strict=True)}
        assert value == pytest.approx(likelihood.log_likelihood("zoib", data, draws).sum(), rel=1e-12)


def test_skew_normal_parameterisation_has_brms_mean_and_sd():
    rng = np.random.default_rng(1)
    data = scores.BayesData(
        y=np.zeros(1), system=np.zeros(1, int), topic=np.zeros(1, int), systems=("a",), topics=("1",)
    )
    d = {
        "b": np.full(400_000, 0.3),
        "r_sys": np.zeros((400_000, 1)),
        "r_top": np.zeros((400_000, 1)),
        "sigma": np.full(400_000, 0.2),
        "alpha": np.full(400_000, -4.0),
    }
    y = likelihood.predict("skew_normal", data, d, rng)
    assert abs(y.mean() - 0.3) < 2e-3 and abs(y.std() - 0.2) < 2e-3 and stats.skew(y.ravel()) < -0.5


def test_zoib_replicates_have_the_point_masses():
    rng = np.random.default_rng(2)
    data = _cells()
    y = likelihood.predict("zoib", data, _draws(200_000, phi=5.0, zoi=0.2, coi=0.25), rng)
    assert abs((y == 0).mean() - 0.2 * 0.75) < 3e-3 and abs((y == 1).mean() - 0.2 * 0.25) < 3e-3
    assert y.min() >= 0 and y.max() <= 1


def test_bad_inputs_raise_parameter_errors():
    with pytest.raises(ParameterError, match="model must be one of"):
        bayes.fit("poisson", _cells())
    with pytest.raises(ParameterError, match="outside"):
        bayes.fit(
            "zoib",
            scores.BayesData(
                y=np.array([0.5, 1.5]),
                system=np.array([0, 1]),
                topic=np.array([0, 0]),
                systems=("a", "b"),
                topics=("1",),
            ),
        )
    with pytest.raises(ParameterError, match="target_ess"):
        bayes.fit("gaussian", _cells(), target_ess=0)
    with pytest.raises(ParameterError, match="No scores for system"):
        bayes.scores_data(pd.DataFrame({"system": ["a"], "topic": ["1"], "score": [0.1]}), systems=["a", "zz"])


# ---------------------------------------------------------------- small fits on generated data

EFFECTS = np.array([-0.8, -0.4, -0.1, 0.0, 0.1, 0.4, 0.8, 1.2])  # logit scale; system "s3" is the baseline


@pytest.fixture(scope="module")
def generated():
    """8 systems × 40 topics of ZOiB scores with known system effects (and a few exact 0s and 1s)."""
    rng = np.random.default_rng(11)
    topics = rng.normal(0, 0.7, 40)
    mu = 1 / (1 + np.exp(-(-0.3 + EFFECTS[:, None] + topics[None, :])))
    y = rng.beta(mu * 12, (1 - mu) * 12)
    boundary = rng.random(y.shape) < 0.03
    y = np.where(boundary, (rng.random(y.shape) < 0.3).astype(float), y)
    return pd.DataFrame(y, index=[f"s{i}" for i in range(8)], columns=[f"t{j}" for j in range(40)])


@pytest.fixture(scope="module")
def zoib_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("zoib-cache")


@pytest.fixture(scope="module")
def zoib_fit(generated, zoib_cache):
    return bayes.fit("zoib", bayes.scores_data(generated), cache_dir=zoib_cache, **FAST)


def test_zoib_recovers_known_effects(zoib_fit):
    effects = bayes.system_effects(zoib_fit).set_index("system")
    truth = pd.Series(EFFECTS - EFFECTS.mean(), index=[f"s{i}" for i in range(8)]).reindex(effects.index)
    assert stats.spearmanr(effects["effect_median"], truth).statistic > 0.95
    assert effects["rank"].min() == 1 and sorted(effects["rank"]) == list(range(1, 9))
    inside = (effects["effect_low"] - 0.1 <= truth) & (truth <= effects["effect_high"] + 0.1)
    assert inside.all()
    assert effects.loc["s7", "better_than"] >= 2 and effects.loc["s0", "worse_than"] >= 2
    d = zoib_fit.diagnostics
    assert d["rhat_ok"] and d["ess_ok"], d["problems"]  # divergences are reported, not asserted: 8 systems only
    assert d["min_ess_bulk"] >= 600 and d["min_ess_tail"] >= 600 and d["max_rhat"] < 1.01
    assert {"waic", "loo", "p_waic", "p_loo"} <= set(zoib_fit.criteria)


def test_ppdrisk_flags_the_clearly_worse_systems(zoib_fit):
    table = bayes.ppdrisk_table(zoib_fit, "s3", [0.0, 1.0], measure="sim")
    at0 = table[table["alpha"] == 0].set_index("system")
    assert at0.loc["s0", "verdict"] == "risk" and at0.loc["s7", "verdict"] == "reward"
    assert (table["ppd_urisk_low"] <= table["ppd_urisk_median"]).all()
    at1 = table[table["alpha"] == 1].set_index("system")
    assert (at1["ppd_urisk_median"] <= at0["ppd_urisk_median"] + 1e-12).all()  # losses weigh more
    assert list(table.columns) == bayes.PPDRISK_COLUMNS


def test_ppdrisk_memory_is_bounded_by_the_chunk(zoib_fit):
    values, names = bayes.ppdrisk_draws(zoib_fit, "s3", [0.0], chunk=100)
    again, _ = bayes.ppdrisk_draws(zoib_fit, "s3", [0.0], chunk=100)
    assert values.shape == (1, zoib_fit.n_draws, 7) and np.array_equal(values, again)  # seeded


def test_cached_fit_is_read_back_and_checked(zoib_fit, generated, zoib_cache):
    cache_dir = zoib_cache
    again = bayes.fit("zoib", bayes.scores_data(generated), cache_dir=cache_dir, **FAST)
    assert again.cached and np.array_equal(again.draws["r_sys"], zoib_fit.draws["r_sys"])
    assert again.criteria == pytest.approx(zoib_fit.criteria)
    entry = bayes.FitCache(cache_dir).path(again.key)
    blob = bytearray(entry.read_bytes())
    blob[len(blob) // 2] ^= 0xFF  # damage the stored draws
    entry.write_bytes(bytes(blob))
    assert bayes.FitCache(cache_dir).get(again.key) is None  # a damaged entry is a miss, never a fit


def test_gaussian_fit_is_seeded_and_brisk_rules_are_labelled(generated):
    scaled = generated * 0.5
    first = bayes.fit("gaussian", bayes.scores_data(scaled), use_cache=False, **FAST)
    second = bayes.fit("gaussian", bayes.scores_data(scaled), use_cache=False, **FAST)
    assert np.array_equal(first.draws["r_sys"], second.draws["r_sys"])
    table, fits = bayes.brisk_table(scaled, "s3", [0.0, 2.0], family="gaussian", measure="sim", use_cache=False, **FAST)
    assert list(table.columns) == bayes.BRISK_COLUMNS and len(fits) == 2
    at0 = table[table["alpha"] == 0].set_index("system")
    assert at0.loc["s0", "verdict_difference"] == "risk" and at0.loc["s7", "verdict_difference"] == "reward"
    worse = table.set_index(["system", "alpha"])["effect_mean"]
    assert worse[("s0", 2.0)] < worse[("s0", 0.0)]  # Eq. 4.5 adjustment lowers a losing system


def test_sampling_extends_to_the_target_and_reports_when_capped(generated):
    capped = bayes.fit(
        "gaussian",
        bayes.scores_data(generated * 0.5),
        use_cache=False,
        **{**FAST, "target_ess": 50_000, "max_draws": 3000},
    )
    assert not capped.diagnostics["ess_ok"] and capped.n_draws <= 3000
    assert "ESS < 50,000" in capped.diagnostics["problems"]


def test_sampling_stops_at_the_first_checkpoint_that_meets_the_target(generated):
    """The kept draws are the first c of every chain; at the checkpoint before c the ESS target or R̂ < 1.01 was
    not met yet."""
    from riskreport.bayes.diagnosis.diagnostics import _min_ess
    from riskreport.bayes.fitting import stopping

    result = bayes.fit("gaussian", bayes.scores_data(generated * 0.5), use_cache=False, **FAST)
    step = stopping.check_every(FAST["target_ess"], FAST["chains"])
    per_chain = result.draws["r_sys"].shape[1]
    first = -(-FAST["target_ess"] // FAST["chains"] // 2)
    assert result.ok and result.batches[-1]["stopped"] == "target met"
    assert min(_min_ess(result.draws["r_sys"])) >= FAST["target_ess"]
    assert per_chain in stopping.checkpoints(first, step, FAST["max_draws"] // FAST["chains"])
    if per_chain > first:  # the checkpoint before did not meet the report's checks
        before = {name: values[:, : per_chain - step] for name, values in result.draws.items()}
        met = min(_min_ess(before["r_sys"])) >= FAST["target_ess"] and stopping.max_rhat(before) < 1.01
        assert not met


def test_a_fit_does_not_depend_on_which_data_compiled_its_model_first(generated):
    """The compiled model given new data starts from the new data's initial points (its prior constants):
    a BRisk⁻ fit inside the report equals the same fit alone."""
    from riskreport.bayes.posterior import brisk

    adjusted = brisk.adjusted_data(generated * 0.5, "s3", 10.0)
    alone = bayes.fit("gaussian", adjusted, use_cache=False, **FAST)
    shifted = bayes.scores_data(generated * 0.5 + 3.0)  # other prior constants (b ~ student_t(3, 3.2, 2.5))
    bayes.fit("gaussian", shifted, use_cache=False, **FAST)  # compiles the shape
    after = bayes.fit("gaussian", adjusted, use_cache=False, **FAST)  # reuses it with new data
    assert np.array_equal(alone.draws["r_sys"], after.draws["r_sys"])


# ---------------------------------------------------------------- the thesis 'Inferential Risk Measures', Ch. 4–5; docs/measures/bayesian.md worked example (../shared)

needs_covid = pytest.mark.skipif(not COVID.is_dir(), reason="../shared TREC-COVID data not present")


@pytest.fixture(scope="module")
def covid(tmp_path_factory):
    scores = pd.read_csv(COVID / "round1_data.csv")
    pooled = pd.read_csv(COVID / "round1_pooled.csv")
    systems = [s for s in scores["system"].unique() if s in set(pooled.loc[pooled["pooled"] == 1, "system"])]
    return bayes.scores_data(scores, systems=systems), tmp_path_factory.mktemp("covid-cache")


@needs_covid
def test_worked_example_data(covid):
    data, _ = covid
    assert (data.n, int((data.y == 0).sum()), int((data.y == 1).sum()), len(data.systems)) == (1260, 39, 17, 42)


@needs_covid
@pytest.mark.parametrize("model, waic", [("gaussian", 538.1), ("zoib", -656.1)])
def test_worked_example_waic_and_ppdrisk(covid, model, waic):
    data, cache = covid
    result = bayes.fit(model, data, target_ess=10_000, cache_dir=cache, seed=2026, progress=None)
    assert result.ok, result.diagnostics["problems"]
    assert result.criteria["waic"] == pytest.approx(waic, abs=3)
    if model == "zoib":
        table = bayes.ppdrisk_table(result, "bm25_baseline", [0.0])
        flagged = table.loc[table["verdict"] != "inconclusive", ["system", "verdict"]].values.tolist()
        assert flagged == [["UB_NLP_RUN_1", "risk"]]


def test_report_analysis_end_to_end(generated, zoib_fit, tmp_path_factory):
    from riskreport.bayes.report import analysis, presentation

    scaled = generated.clip(0, 1)
    options = {k: v for k, v in FAST.items() if k in ("target_ess", "max_draws", "chains", "seed")}
    cells = scaled.stack().rename("score").rename_axis(["system", "topic"]).reset_index()
    gains = pd.concat(
        [
            cells.assign(rank=1, score=(0.2 * cells["score"]).where(cells["score"] > 0.3, 0.0)),
            cells.assign(rank=2, score=(0.1 * cells["score"]).where(cells["score"] > 0.5, 0.0)),
        ]
    )
    result = analysis.bayesian_risk(
        scaled,
        "s3",
        [0.0, 1.0],
        measure="sim",
        models=["gaussian", "zoib"],
        family="gaussian",
        level=0.95,
        cache_dir=tmp_path_factory.getbasetemp() / "cache0",
        rank_gains=gains,
        progress=None,
        **options,
    )
    assert list(result.models["model"]) == ["gaussian", "zoib"] and len(result.brisk_fits) == 2
    assert result.brisk_fits[0] is result.fits["gaussian"]  # α = 0 changes no score: the Gaussian fit serves
    assert set(result.ppdrisk["alpha"]) == {0.0, 1.0} and result.ppd_draws.shape[0] == 2
    assert len(result.diagnostics) == 5 and set(result.overlay["source"]) == {"observed", "predicted"}
    compared = result.comparison.set_index(["criterion", "model"])
    assert list(result.comparison.columns) == bayes.measures.COMPARE_COLUMNS and len(compared) == 4
    for criterion in ("PSIS-LOO", "WAIC"):
        best = compared.loc[criterion].sort_values("rank").iloc[0]
        assert best["elpd_diff"] == 0 and (compared.loc[criterion, "dse"] >= 0).all()
        gap = (
            result.fits["zoib"].pointwise[f"elpd_{criterion.lower().replace('psis-', '')}_i"]
            - result.fits["gaussian"].pointwise[f"elpd_{criterion.lower().replace('psis-', '')}_i"]
        )
        assert (
            abs(
                compared.loc[criterion].loc["zoib", "elpd"]
                - compared.loc[criterion].loc["gaussian", "elpd"]
                - gap.sum()
            )
            < 1e-6
        )  # the difference of the pointwise sums
        assert compared.loc[criterion].loc["gaussian" if gap.sum() > 0 else "zoib", "dse"] == pytest.approx(
            np.sqrt(len(gap) * gap.var())
        )  # SE of the difference (ArviZ: n·var)
    assert set(result.systems["model"]) == {"gaussian", "zoib", "zoib_rank"}
    assert (
        result.rank["parameter"].iloc[0].startswith("β") and (result.rank["low"] < result.rank["high"]).iloc[:3].all()
    )
    shown = presentation.dominance_display(result.dominance)
    assert shown["dominates"].sum() == len(result.dominance) and set(shown.columns) == {
        "model",
        "system",
        "dominates",
        "systems dominated",
    }
    text = presentation.methods_text(result, 40)
    assert "student_t(3, 0, 2.5)" in text and "nutpie" in text and "10,000" not in text
    minus = presentation.brisk_display(result.brisk, "minus")
    assert (minus["BRisk⁻"] == -result.brisk["effect_mean"]).all()
    shown = presentation.ppdrisk_display(result.ppdrisk, "minus")
    assert (shown["PPDRisk⁻ median"] == -result.ppdrisk["ppd_urisk_median"]).all()
    assert presentation.priors_table(["gaussian", "zoib"], scaled)["parameter"].tolist()[:2] == ["b", "sigma"]
    with pytest.raises(ParameterError, match="family"):
        analysis.check_options(["gaussian"], "student", "zoib", 0.95)


def test_paired_model_intercept_is_urisk(generated):
    table, fits = bayes.paired_table(
        generated.iloc[[0, 3]], "s3", [0.0], family="gaussian", use_cache=False, **{**FAST, "target_ess": 2000}
    )
    delta = generated.loc["s0"] - generated.loc["s3"]
    row = table.iloc[0]
    assert row["verdict"] == "risk" and row["urisk_low"] < delta.mean() < row["urisk_high"]
    assert abs(row["urisk_mean"] - delta.mean()) < 0.02


def test_rbp_rank_gains_from_a_run_and_qrels():
    run = pd.DataFrame({"query_id": ["1"] * 4 + ["2"], "doc_id": ["a", "b", "c", "d", "x"], "score": [4, 3, 2, 2, 1]})
    qrels = pd.DataFrame({"query_id": ["1", "1", "1", "2"], "doc_id": ["a", "c", "d", "y"], "relevance": [2, 1, -2, 2]})
    gains = bayes.rbp_rank_gains({"s": run}, qrels, ["1", "2", "3"], p=0.8, depth=4)
    assert len(gains) == 12 and list(gains.columns) == ["system", "topic", "rank", "score"]
    # topic 1: a (grade 2 of 2), b (unjudged), then the tie c/d by docno descending: d (spam, 0), c (grade 1 of 2)
    assert gains["score"].tolist()[:4] == pytest.approx([0.2, 0.0, 0.0, 0.2 * 0.8**3 * 0.5])
    assert gains["score"].tolist()[4:] == [0.0] * 8  # unjudged, and a topic the run lacks


def test_zoib_rank_fit_recovers_the_rank_slope():
    rng = np.random.default_rng(5)
    rows = []
    for s, effect in enumerate([-0.5, 0.0, 0.5]):
        for t in range(12):
            for k in range(1, 6):
                mu = 1 / (1 + np.exp(-(-1.0 + effect - 0.3 * (k - 3))))
                g = 0.0 if rng.random() < 0.3 else rng.beta(mu * 20, (1 - mu) * 20)
                rows.append((f"s{s}", f"t{t}", k, g))
    table = pd.DataFrame(rows, columns=["system", "topic", "rank", "score"])
    result = bayes.fit("zoib_rank", bayes.scores_data(table), use_cache=False, criteria=True, **FAST)
    beta = result.flat("beta")
    assert np.quantile(beta, 0.025) < -0.3 < np.quantile(beta, 0.975) and abs(result.flat("zi").mean() - 0.3) < 0.06
    assert result.diagnostics["max_rhat"] < 1.05 and np.isfinite(result.criteria["waic"])  # 3 systems: sd_sys is vague
    with pytest.raises(ParameterError, match="rank"):
        bayes.fit("zoib_rank", bayes.scores_data(table.drop(columns="rank")), use_cache=False, **FAST)


# ---------------------------------------------------------------- the model's pool given as a file (no sampling)


def test_pool_file_formats(tmp_path):
    from riskreport.io.trec import read_system_list

    plain = tmp_path / "pool.txt"
    plain.write_text("# the pool\nbase\n\n good \nbase\n")
    assert read_system_list(plain) == ["base", "good"]  # comments, blanks, spaces; twice counts once
    flagged = tmp_path / "pooled.csv"
    flagged.write_text("system,pooled\nbase,1\nrisky,0\ngood,1\nother-track,1\n")
    assert read_system_list(flagged) == ["base", "good", "other-track"]
    chosen, absent = rr.choose_systems(str(flagged), ["base", "good", "risky"], "pool")
    assert (chosen, absent) == (["base", "good"], ["other-track"])
    assert rr.choose_systems(["good", "base"], ["base", "good"]) == (["good", "base"], [])


@pytest.mark.parametrize(
    "text, message",
    [
        ("system,pooled\nbase,1\ngood,yes\n", r"pooled.csv, line 3: pooled is 'yes' \(expected 0 or 1"),
        ("system,pooled\nbase,1,x\n", r"pooled.csv, line 2: 3 field\(s\) instead of 2"),
        (
            "run,pooled\nbase,1\n",
            r"pooled.csv, line 1: 'run,pooled' has a comma but the first line is not a CSV header",
        ),
        ("system,pooled\nbase,0\n", r"pooled.csv: no row has pooled = 1"),
        ("# nothing\n\n", r"pooled.csv: the file lists no system"),
    ],
)
def test_pool_file_errors_name_the_file_and_line(tmp_path, text, message):
    from riskreport.io.trec import read_system_list

    path = tmp_path / "pooled.csv"
    path.write_text(text)
    with pytest.raises(rr.InputFormatError, match=message):
        read_system_list(path)


def test_pool_file_through_the_runner(tiny_collection, tmp_path, monkeypatch):
    from riskreport.run.report.runner import plan_report

    pool = tmp_path / "pooled.csv"
    pool.write_text("system,pooled\nbase,1\ngood,1\nrisky,0\nelsewhere,1\n")
    monkeypatch.chdir(tmp_path)
    plan = plan_report("bayesian_risk", collection=str(tiny_collection), parameters={"pool": "pooled.csv"})
    assert plan.effective["pool"] == str(pool.resolve())  # the kernel runs elsewhere: absolute
    assert str(pool.resolve()) in plan.record["collection"]["files_sha256"]  # an input: its hash in the fingerprint
    p = rr.resolve_parameters(str(tiny_collection), systems=plan.effective["pool"])
    assert p.systems == ["base", "good"] and p.extra["absent"] == ["elsewhere"]
    before = plan.fingerprint
    pool.write_text("system,pooled\nbase,1\ngood,1\nrisky,1\n")
    assert (
        plan_report("bayesian_risk", collection=str(tiny_collection), parameters={"pool": "pooled.csv"}).fingerprint
        != before
    )
    with pytest.raises(rr.InputFormatError, match="missing.csv: no such file"):
        plan_report("bayesian_risk", collection=str(tiny_collection), parameters={"pool": "missing.csv"})
    (tmp_path / "foreign.txt").write_text("x\ny\n")
    with pytest.raises(rr.ParameterError, match=r"foreign.txt: none of the 2 system\(s\) it lists \(x, y\)"):
        rr.resolve_parameters(str(tiny_collection), systems=str(tmp_path / "foreign.txt"))


# ---------------------------------------------------------------- per-rank gains for BHM-ZOiB-Rank (no sampling)


def test_rank_gains_table_and_its_errors(tmp_path):
    from riskreport.bayes.report.analysis import rank_gains_for
    from riskreport.io.trec import read_rank_gains

    path = tmp_path / "gains.csv"
    path.write_text("system,topic,rank,score\na,1,1,0.2\na,1,2,0\nb,1,1,0.16\nc,1,1,0.1\na,2,1,0\nb,2,1,0.2\n")
    matrix = pd.DataFrame([[0.3, 0.1], [0.2, 0.4]], index=["a", "b"], columns=["1", "2"])
    gains = rank_gains_for(str(path), None, "RBP(p=0.8)", matrix)
    assert list(gains.columns) == ["system", "topic", "rank", "score"] and set(gains["system"]) == {"a", "b"}
    assert len(gains) == 5 and gains["rank"].dtype.kind == "i"  # c is not in the pool
    with pytest.raises(ParameterError, match=r"gains.csv: no per-rank gains for 1 system\(s\) of the pool: z"):
        rank_gains_for(str(path), None, "RBP(p=0.8)", matrix.rename(index={"b": "z"}))
    for text, message in (
        ("system,topic,score\na,1,0.2\n", r"line 1: missing column\(s\) rank"),
        ("system,topic,rank,score\na,1,0,0.2\n", r"line 2: rank 0"),
        ("system,topic,rank,score\na,1,1,1.0\n", r"line 2: gain 1 is outside \[0, 1\)"),
        ("system,topic,rank,score\na,1,1,0.1\na,1,1,0.2\n", r"line 3: system a has two gains at rank 1"),
    ):
        path.write_text(text)
        with pytest.raises(rr.InputFormatError, match=message):
            read_rank_gains(path)


def test_rbp_rank_gains_from_the_collection(tiny_collection):
    from riskreport.bayes.report.analysis import rank_gains_for

    p = rr.resolve_parameters(str(tiny_collection))
    matrix = rr.evaluate(p.collection, p.measure, p.systems).matrix()
    gains = rank_gains_for("rbp", p.collection, "RBP(p=0.5)", matrix, depth=3)
    assert len(gains) == len(matrix) * matrix.shape[1] * 3
    first = gains[(gains["system"] == "base") & (gains["topic"] == "1")]["score"].tolist()
    assert first == pytest.approx([0.5 * 1.0, 0.0, 0.0])  # 1-r1 (grade 2 of 2), then non-relevant


def test_group_strength_tells_weak_topic_effects():
    rng = np.random.default_rng(3)
    y = rng.normal(0, 0.15, (11, 1)) + rng.normal(0, 0.01, (1, 50)) + rng.normal(0, 0.3, (11, 50))
    kappa_sys, kappa_top = scores.group_strength(bayes.scores_data(pd.DataFrame(y)))
    assert kappa_sys > 0.5 > kappa_top  # the topics of BRisk⁻ scores at α = 10: sampled scaled by sd
    assert sampling.layout(bayes.scores_data(pd.DataFrame(y))) == (True, False)
    assert scores.group_strength(bayes.paired_data(np.ones(5), "s", range(5))) == (0.0, 0.0)


# ---------------------------------------------------------------- the compiled kernels on disk, the report's progress

COMPILED_CHILD = r"""
import json, sys
import numpy as np, pandas as pd
from riskreport import bayes
table = pd.read_csv(sys.argv[1], index_col=0)
messages = []
result = bayes.fit("zoib", bayes.scores_data(table), use_cache=False, progress=messages.append,
                   **json.loads(sys.argv[2]))
np.save(sys.argv[3], result.draws["r_sys"])
print(json.dumps(messages))
"""


def test_compiled_kernels_are_kept_in_the_riskreport_cache_and_loaded_by_a_new_process(generated, tmp_path):
    """The first process compiles the model's numba callbacks once and numba keeps them in <cache>/numba (never
    beside the source); a new process, with data of another shape, loads them (no compile line) and the same
    data give the same draws, bit for bit."""
    import json
    import os
    import subprocess
    import sys

    table, cache, script = tmp_path / "scores.csv", tmp_path / "cache", tmp_path / "child.py"
    script.write_text(COMPILED_CHILD)
    options = json.dumps({k: v for k, v in FAST.items() if k != "progress"})

    def child(name, scores):
        scores.to_csv(table)
        out = subprocess.run(
            [sys.executable, str(script), str(table), options, str(tmp_path / name)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "RISKREPORT_CACHE": str(cache)},
        )
        return " | ".join(json.loads(out.stdout.strip().splitlines()[-1])), np.load(tmp_path / name)

    first, draws = child("first.npy", generated)
    assert "compiled in" in first
    assert {p.parent.name.split("_")[0] for p in (cache / "numba").rglob("*.nbi")} == {"modelling"}
    other, _ = child("other.npy", generated.iloc[:5, :17])
    assert "compiled in" not in other
    again, same = child("again.npy", generated)
    assert "compiled in" not in again and np.array_equal(draws, same)


def test_fit_progress_counts_fits_and_estimates_the_time_left(zoib_fit):
    lines = []
    progress = bayes.fit_progress.FitProgress(3, lines.append, cached=1)
    progress("BHM-ZOiB: sampling 2 chains")  # a fit's own lines are not shown
    progress.fit_done(zoib_fit)
    progress("BHM-ZOiB: max_draws = 8,000 reached before the ESS target")
    progress.fit_done(zoib_fit)
    progress.fit_done(zoib_fit)
    assert lines[0] == "3 Bayesian fits to run (1 cached): progress after each"
    assert lines[1].startswith("1/3 fits done (BHM-ZOiB") and lines[1].endswith(" left")
    assert "reached before the ESS target" in lines[2]
    assert lines[-1].startswith("3/3 fits done") and "left" not in lines[-1]


def test_a_report_whose_fits_fail_says_which_on_the_page_and_at_the_end_of_the_terminal(tmp_path, cache_dir):
    """Issue 38 (TREC Web 2012, ERR@20: BHM-ZOiB had 4 divergences, yet PPDRisk⁻ coloured the verdict matrix and
    the terminal printed no warning). Here every fit stops at max_draws = 400 far short of its ESS target: no verdict
    may come from any of them, the page says so in the cells and above the matrix, and the run's last lines on
    stderr name each failed fit with what to change. The sampler settings given reach the fits."""
    import re
    import subprocess

    from conftest import CLI

    rng = np.random.default_rng(1)
    lines = ["system,topic,score"] + [
        f"{system},{topic},{np.clip(0.5 + shift + rng.normal(0, 0.15), 0.01, 0.99):.4f}"
        for system, shift in (("base", 0.0), ("worse", -0.1), ("other", 0.05))
        for topic in range(12)
    ]
    (tmp_path / "small.csv").write_text("\n".join(lines) + "\n")
    parameters = dict(models='["gaussian"]', ppd_model="gaussian", target_ess=1_000_000, max_draws=400, chains=2)
    parameters.update(target_accept=0.99, tune=200)  # at the top of the retry ladder: never sampled again
    command = [*CLI, "run", "bayesian_risk", "-c", str(tmp_path / "small.csv"), "-b", "base", "-a", "0", "1"]
    command += [item for name, value in parameters.items() for item in ("-p", name, str(value))]
    done = subprocess.run([*command, "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=1100)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("riskreport: bayes: ")]
    warnings = [line.removeprefix("riskreport: bayes: warning: ") for line in said if ": warning: " in line]
    assert said[-2:] == [f"riskreport: bayes: warning: {w}" for w in warnings], said  # the last word of the fits
    assert warnings[0].startswith("BHM-Gaussian failed its checks (") and "ESS" in warnings[0]
    assert "no verdict comes from it (PPDRisk⁻, BRisk⁻ at α = 0)" in warnings[0]
    assert warnings[1].startswith("BHM-Gaussian for BRisk⁻ at α = 1 failed its checks (")
    assert all("To change: " in w and "-p max_draws " in w for w in warnings)
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    matrix = page[page.index("<div id='verdict-matrix'") :]
    matrix = matrix[: matrix.index("</table>")]
    assert not re.search("#fde0d2|#d9f0e3", matrix)  # no risk or reward colour in the verdict matrix
    assert "no verdict: fit failed (" in matrix and "no verdict: fit failed (" in page[page.index("PPDRisk⁻ of ") :]
    assert "A fit failed its checks, so some rules give no verdict" in page
    assert "Risk</b> under at least one rule: no verdict at any α" in page
    assert "200 warm-up iterations, target acceptance 0.99" in page
