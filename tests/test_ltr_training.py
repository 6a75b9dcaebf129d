"""Training with the objectives: LambdaMART equals LightGBM's own `lambdarank`, every objective trains on the
demo data and the real sample, the paper tables, and the `risk_ltr` report from planning to HTML."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA

import riskreport as rr
from riskreport.errors import ParameterError, UnknownNameError
from riskreport.io.letor import load_letor_folder, read_letor
from riskreport.io.letor_demo import generate_letor_demo
from riskreport.ltr import tables
from riskreport.ltr.baselines import baseline_matrix, best_feature, feature_baseline, learned_baseline, parse_baseline
from riskreport.ltr.objectives import NAMES, ndcg_per_query
from riskreport.ltr.params import resolve_ltr_parameters
from riskreport.ltr.train import Setting, run_experiment, train_ranker

LETOR_SAMPLE = SHARED_DATA / "letor-sample"
NDCG_TOLERANCE = 0.0  # ours vs the built-in lambdarank, same data, seeds and tree parameters: bit-identical


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return load_letor_folder(str(generate_letor_demo(tmp_path_factory.mktemp("ltr") / "demo-letor")))


@pytest.fixture(scope="module")
def fold(demo):
    return demo.folds["Fold1"].read()


def mean_ndcg(booster, data):
    return float(np.nanmean(ndcg_per_query(booster.predict(data.features), data.labels, data.bounds, 10)))


def builtin_lambdarank(train, setting):
    import lightgbm as lgb

    params = {
        **setting.lightgbm_params(train.n_documents),
        "objective": "lambdarank",
        "lambdarank_truncation_level": setting.k,
        "lambdarank_norm": True,
    }
    return lgb.train(params, lgb.Dataset(train.features, train.labels, group=train.group_sizes), setting.trees)


def test_lambdamart_matches_lightgbm_lambdarank(fold):
    """Same data, seeds and trees: our LambdaMART objective computes LightGBM's own gradients to the bit (its
    sigmoid table, float32 sums), so 60 trees predict exactly alike and the test NDCG@10 is the same number."""
    setting = Setting(trees=60, leaves=15, min_data_in_leaf=50, threads=1)
    ours, builtin = train_ranker(fold["train"], "lambdamart", setting), builtin_lambdarank(fold["train"], setting)
    assert abs(mean_ndcg(ours, fold["test"]) - mean_ndcg(builtin, fold["test"])) <= NDCG_TOLERANCE
    assert np.array_equal(ours.predict(fold["test"].features), builtin.predict(fold["test"].features))


@pytest.mark.parametrize("name", list(NAMES))
def test_every_objective_trains_on_the_demo(fold, name):
    train, test = fold["train"], fold["test"]
    setting = Setting(trees=15, leaves=7, min_data_in_leaf=50, threads=1)
    bm25 = feature_baseline(110)
    baselines = baseline_matrix([bm25, feature_baseline(107)], train)
    booster = train_ranker(train, name, setting, baselines, alpha=1.0)
    assert mean_ndcg(booster, test) > np.nanmean(bm25.ndcg(test)) - 0.1


@pytest.mark.skipif(not LETOR_SAMPLE.is_dir(), reason="../shared/data/letor-sample is absent")
@pytest.mark.parametrize("name", list(NAMES))
def test_every_objective_trains_on_the_real_sample(name):
    train = read_letor(LETOR_SAMPLE / "train.txt")
    test = read_letor(LETOR_SAMPLE / "test.txt").with_width(train.n_features)
    feature = best_feature(train)
    baseline = feature_baseline(feature)
    setting = Setting(trees=20, leaves=15, min_data_in_leaf=20, threads=1)
    booster = train_ranker(train, name, setting, baseline_matrix([baseline], train), alpha=1.0)
    assert mean_ndcg(booster, test) > np.nanmean(baseline.ndcg(test))


def test_baselines(fold):
    train = fold["train"]
    assert parse_baseline("feature:110", train).feature == 110
    assert parse_baseline("best", train).feature == best_feature(train)
    with pytest.raises(ParameterError, match="feature:<id>"):
        parse_baseline("bm25", train)
    for kind in ("gbrt", "lambdamart", "linear"):
        assert np.nanmean(learned_baseline(kind, train, trees=10).ndcg(fold["test"])) > 0.3
    with pytest.raises(UnknownNameError, match="learned baseline"):
        learned_baseline("adarank", train)


def test_experiment_and_paper_tables(demo):
    params = resolve_ltr_parameters(
        demo,
        folds=["Fold1"],
        objectives=["lambdamart", "u-cro", "georisk"],
        alphas=[1],
        learned_baselines=["linear"],
        trees=10,
        leaves=7,
        min_data_in_leaf=50,
    )
    messages = []
    experiment = run_experiment(params, threads=1, say=messages.append)
    assert experiment.learners == ["LambdaMART", "U-CRO α=1", "GeoRisk α=1"]
    assert experiment.single == "feature 110" and experiment.learned == ["Linear"]
    assert any("trees" in m and "left" in m for m in messages)
    matrix = experiment.matrix
    assert set(matrix.index) == {"feature 110", "Linear", *experiment.learners} and matrix.notna().all().all()
    table7 = tables.paper_table(matrix, "feature 110", ["Linear"], experiment.learners, "2016")
    assert table7.columns.get_level_values(1).tolist()[:3] == ["nDCG@10", "Reward/Risk", "W/L"]
    row = table7.loc["LambdaMART", "vs feature 110"]
    delta = matrix.loc["LambdaMART"] - matrix.loc["feature 110"]
    assert row["Wins"] == (delta > 0).sum() and row["Losses"] == (delta < 0).sum()
    base = matrix.loc["feature 110"]
    assert row["L>20%"] == ((base > 0) & ((base - matrix.loc["LambdaMART"]) / base > 0.2)).sum()
    assert row["Reward/Risk"] == pytest.approx(delta.clip(lower=0).mean() / (-delta).clip(lower=0).mean())
    table3 = tables.paper_table(matrix, "feature 110", [], experiment.learners, "2014")
    assert "Loss/Win" in table3.columns.get_level_values(1)
    losses = tables.compare_losses(matrix, "feature 110", experiment.learners)
    assert losses.loc[0, "learner"] == "LambdaMART" and losses.loc[0, "loss20_change"] == 0
    risk = tables.risk_against_baselines(experiment, [1.0])
    assert set(risk["baseline"]) == {"feature 110", "Linear"} and set(risk["verdict"]) <= {
        "risk",
        "reward",
        "inconclusive",
        "undefined",
    }
    assert set(tables.learner_tests(experiment)["system"]) == {"U-CRO α=1", "GeoRisk α=1"}


def test_macro_average_is_the_mean_over_learned_baselines():
    matrix = pd.DataFrame(
        [[0.5, 0.2, 0.4], [0.6, 0.1, 0.4], [0.3, 0.3, 0.3], [0.7, 0.2, 0.1]],
        index=["bm25", "L", "b1", "b2"],
        columns=["1", "2", "3"],
    )
    table = tables.paper_table(matrix, "bm25", ["b1", "b2"], ["L"], "2016")
    macro = table.loc["L", "macro-average vs b1, b2"]
    # L = (0.6, 0.1, 0.4): against b1 Δ = (0.3, −0.2, 0.1), 2 wins, 1 loss; against b2 Δ = (−0.1, −0.1, 0.3),
    # 1 win, 2 losses; macro-averages 1.5 and 1.5
    assert macro["Wins"] == 1.5 and macro["Losses"] == 1.5
    assert macro["nDCG@10"] == pytest.approx(matrix.loc["L"].mean())


def test_parameters_and_their_errors(demo):
    params = resolve_ltr_parameters(demo)
    assert (params.trees, params.leaves, params.min_data_in_leaf, params.alphas) == (60, 15, 50, [1.0, 5.0])
    assert (
        params.baseline == "feature:110"
        and params.folds == [f"Fold{i}" for i in range(1, 6)]
        and params.measure == "nDCG@10"
    )
    with pytest.raises(UnknownNameError, match="objective 'u-crow'.*Did you mean 'u-cro'"):
        resolve_ltr_parameters(demo, objectives=["u-crow"])
    with pytest.raises(ParameterError, match="trees must be a whole number"):
        resolve_ltr_parameters(demo, trees=0)
    with pytest.raises(ParameterError, match="baseline must be 'feature:<id>'"):
        resolve_ltr_parameters(demo, baseline="bm25")
    with pytest.raises(UnknownNameError, match="Unknown fold"):
        resolve_ltr_parameters(demo, folds=["Fold9"])


def test_plan_and_run_the_report(demo, tmp_path):
    from riskreport.run.report.runner import plan_report

    plan = plan_report("risk_ltr", collection=str(demo.path), parameters={"trees": 5})
    assert plan.effective["trees"] == 5 and plan.effective["leaves"] == 15 and plan.effective["alphas"] == [1.0, 5.0]
    assert any(path.endswith("train.txt.gz") for path in plan.record["collection"]["files_sha256"])
    folder = rr.run_report(
        "risk_ltr",
        collection=str(demo.path),
        out=tmp_path / "report",
        parameters={
            "folds": ["Fold1"],
            "objectives": ["lambdamart", "t-faro"],
            "alphas": [1],
            "learned_baselines": ["linear"],
            "trees": 5,
            "leaves": 7,
        },
    )
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "2016 layout" in html and "T-FARO α=1" in html and "L&gt;20%" in html
    shown = [m.group(0) for m in re.finditer(r"(?s).{60}(?:trees \(|baseline\(s\) on).{20}", html)]
    assert shown == [], "training progress belongs on the terminal"
    assert json.loads((folder / "params.json").read_text())["status"] == "ok"
    assert {"table7.csv", "table3.csv", "losses.csv", "losses_per_fold.csv", "risk.csv", "ndcg.csv"} <= {
        p.name for p in (folder / "tables").iterdir()
    }


def test_jobs_file_plans_a_learning_to_rank_job(demo, tmp_path):
    from riskreport.run.schedule.batch import load_jobs, run_batch

    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[[job]]\nname = "ltr"\ntemplate = "risk_ltr"\ncollection = "{demo.path}"\ntrees = 5\n'
        'objectives = ["lambdamart", "georisk"]\n'
    )
    assert load_jobs(jobs)[0].parameters["objectives"] == ["lambdamart", "georisk"]
    result = run_batch(jobs, reports_dir=tmp_path / "reports", dry_run=True)
    assert [r.status for r in result.results] == ["run"]
    jobs.write_text(f'[[job]]\nname = "ltr"\ntemplate = "risk_ltr"\ncollection = "{demo.path}"\ntrees = 0\n')
    assert (
        "trees must be a whole number"
        in run_batch(jobs, reports_dir=tmp_path / "reports", dry_run=True).results[0].message
    )


def test_time_left_is_estimated_without_the_first_tree(monkeypatch):
    """The first tree of a process includes compiling the gradient kernels: 100 s then 1 s a tree is 1 s a tree."""
    from types import SimpleNamespace

    from riskreport.ltr import train

    clock = iter([0.0, 100.0, 101.0, 102.0])
    monkeypatch.setattr(train.time, "perf_counter", lambda: next(clock))
    said: list[str] = []
    progress = train.TreeProgress("F LambdaMART", said.append, total=12, every=0.0)
    for iteration in range(3):
        progress(SimpleNamespace(iteration=iteration, begin_iteration=0, end_iteration=10))
    assert said == [
        "F LambdaMART: 1 trees (1/12 of the experiment), 100 s",
        "F LambdaMART: 2 trees (2/12 of the experiment), 101 s, about 10 s left",
        "F LambdaMART: 3 trees (3/12 of the experiment), 102 s, about 9 s left",
    ]
