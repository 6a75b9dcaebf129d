"""min_data_in_leaf chosen per fold on the validation queries (Dinçer et al. 2014 chose 500 or 1000 per fold):
parameters, the choice itself, and the report's table of chosen values."""

from __future__ import annotations

import numpy as np
import pytest

import riskreport as rr
from riskreport.errors import ParameterError
from riskreport.io.letor import load_letor_folder
from riskreport.io.letor_demo import generate_letor_demo
from riskreport.ltr.baselines import feature_baseline
from riskreport.ltr.objectives import ndcg_per_query
from riskreport.ltr.params import resolve_ltr_parameters
from riskreport.ltr.train import Setting, run_experiment, run_fold, train_ranker
from riskreport.run.report.runner import plan_report

GRID = [5, 80]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return load_letor_folder(str(generate_letor_demo(tmp_path_factory.mktemp("ltr-vali") / "demo-letor")))


@pytest.fixture(scope="module")
def fold(demo):
    return demo.folds["Fold1"].read()


def test_grid_parameters(demo):
    assert resolve_ltr_parameters(demo).min_data_grid == [50]
    params = resolve_ltr_parameters(demo, min_data_grid=[80, 5, 80])
    assert params.min_data_in_leaf == [5, 80] and params.min_data_grid == [5, 80]
    assert resolve_ltr_parameters(demo, min_data_in_leaf=[30]).min_data_in_leaf == 30
    assert resolve_ltr_parameters(demo, min_data_in_leaf=7, min_data_grid=[]).min_data_in_leaf == 7
    with pytest.raises(ParameterError, match="whole numbers ≥ 1, got 0"):
        resolve_ltr_parameters(demo, min_data_grid=[0, 10])
    with pytest.raises(ParameterError, match=r"non-empty list"):
        resolve_ltr_parameters(demo, min_data_in_leaf=[])


def test_grid_needs_validation_queries(demo, tmp_path):
    folder = tmp_path / "no-vali"
    (folder / "Fold1").mkdir(parents=True)
    for split in ("train", "test"):
        (folder / "Fold1" / f"{split}.txt.gz").write_bytes((demo.path / "Fold1" / f"{split}.txt.gz").read_bytes())
    resolve_ltr_parameters(str(folder), min_data_in_leaf=20)
    with pytest.raises(ParameterError, match="Fold1 of .* has no vali.txt"):
        resolve_ltr_parameters(str(folder), min_data_grid=GRID)


def test_each_learner_keeps_the_value_best_on_validation(fold):
    """Every grid value is trained; the kept model is the one with the best validation NDCG@10, and its test scores
    are that model's (retrained here independently with the chosen value)."""
    train, vali, test = fold["train"], fold["vali"], fold["test"]
    setting = Setting(trees=8, leaves=7, min_data_in_leaf=GRID[0], threads=1)
    result = run_fold(
        "Fold1", train, test, ["lambdamart", "t-faro"], [1.0], feature_baseline(110), [], setting,
        say=lambda _: None, vali=vali, min_data_grid=GRID,
    )  # fmt: skip
    assert len(result.chosen) == 2 * len(GRID)
    for learner, key in (("LambdaMART", "lambdamart"), ("T-FARO α=1", "t-faro")):
        rows = [r for r in result.chosen if r["learner"] == learner]
        best = max(rows, key=lambda r: r["vali_ndcg"])
        assert [r["chosen"] for r in rows] == [r is best for r in rows]
        baselines = np.atleast_2d(feature_baseline(110).ndcg(train))
        again = Setting(trees=8, leaves=7, min_data_in_leaf=best["min_data_in_leaf"], threads=1)
        booster = train_ranker(train, key, again, baselines, 1.0)
        vali_ndcg = np.nanmean(ndcg_per_query(booster.predict(vali.features), vali.labels, vali.bounds))
        assert vali_ndcg == pytest.approx(best["vali_ndcg"])
        assert np.array_equal(booster.predict(test.features), result.scores[learner])
    assert len({r["vali_ndcg"] for r in result.chosen}) > 1  # the grid values give different models
    with pytest.raises(ParameterError, match="chosen on validation queries; the fold has none"):
        run_fold("F", train, test, ["lambdamart"], [1.0], feature_baseline(110), [], setting, min_data_grid=GRID)


def test_experiment_and_report_show_the_chosen_values(demo, tmp_path):
    params = resolve_ltr_parameters(
        demo, folds=["Fold1"], objectives=["lambdamart"], learned_baselines=[], trees=4, leaves=7, min_data_grid=GRID
    )
    chosen = run_experiment(params, threads=1, say=lambda _: None).chosen
    assert list(chosen["min_data_in_leaf"]) == GRID and chosen["chosen"].sum() == 1
    plan = plan_report("risk_ltr", collection=str(demo.path), parameters={"min_data_grid": GRID})
    assert plan.effective["min_data_grid"] == GRID and plan.effective["min_data_in_leaf"] is None
    parameters = {"folds": ["Fold1"], "objectives": ["lambdamart", "u-cro"], "alphas": [1], "learned_baselines": []}
    folder = rr.run_report(
        "risk_ltr",
        collection=str(demo.path),
        out=tmp_path / "report",
        parameters={**parameters, "trees": 4, "leaves": 7, "min_data_grid": GRID},
    )
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "5 or 80 documents per leaf" in html and "chosen by mean nDCG@k on the fold" in html
    assert (folder / "tables" / "min_data_in_leaf.csv").read_text().count("\n") == 1 + 2 * len(GRID)
