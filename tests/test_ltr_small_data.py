"""Learning to rank on data far smaller than MSLR-WEB10K (issue 33): defaults scaled to the data and said in the
report, LightGBM's refusal as one line naming the parameter, a note when the test queries are too few, and files
without relevant documents refused before anything trains."""

from __future__ import annotations

import gzip
import shutil
from dataclasses import replace
from html import unescape

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED_DATA

import riskreport as rr
from riskreport.errors import InputFormatError, ParameterError
from riskreport.io.letor import load_letor_folder, read_letor
from riskreport.io.letor_demo import generate_letor_demo
from riskreport.ltr import tables
from riskreport.ltr.baselines import feature_baseline, hold_out
from riskreport.ltr.params import held_out_queries, resolve_ltr_parameters, scaled_min_data
from riskreport.ltr.train import Setting, check_relevant, run_experiment, run_fold, train_ranker

QUIET = {"say": lambda _: None}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return generate_letor_demo(tmp_path_factory.mktemp("ltr-small") / "demo-letor")


@pytest.fixture(scope="module")
def small(demo, tmp_path_factory):
    """One fold of the demo (240 training queries, ~4,700 documents) without letor.toml: the template's own defaults,
    whose 1500 documents per leaf LightGBM refused on it."""
    folder = tmp_path_factory.mktemp("small") / "small"
    shutil.copytree(demo / "Fold1", folder / "Fold1")
    return folder


def test_defaults_scale_with_the_data():
    assert scaled_min_data(480_000, 50) == 1500  # an MSLR-WEB10K fold keeps the 2016 paper's value
    assert scaled_min_data(2_419, 50) == 24 and scaled_min_data(30, 50) == 1
    assert scaled_min_data(10_000, 15, most=50) == 50
    assert held_out_queries(201) == 40 and held_out_queries(18_900) == 2000  # the paper's share, at most 2,000
    assert held_out_queries(18_900, 0.2) == 3780 and held_out_queries(2) == 1  # a share given is kept


def test_unset_values_stay_unset_until_the_data_are_read(small, demo):
    params = resolve_ltr_parameters(str(small))
    assert params.min_data_in_leaf is None and params.min_data_grid == [] and params.held_out is None
    assert "scaled to each fold's data" in params.min_data_text
    assert resolve_ltr_parameters(str(small), min_data_in_leaf=30).min_data_in_leaf == 30
    assert resolve_ltr_parameters(str(demo)).min_data_in_leaf == 50  # letor.toml's value
    with pytest.raises(ParameterError, match="held_out must be a share"):
        resolve_ltr_parameters(str(small), held_out=1.5)


def test_lightgbm_refusing_the_data_is_one_line_naming_the_parameter(small):
    train = read_letor(small / "Fold1" / "train.txt.gz")
    few = train.select(np.arange(20))
    with pytest.raises(ParameterError) as error:
        train_ranker(few, "lambdamart", Setting(trees=2, leaves=7, min_data_in_leaf=1500, threads=1))
    message = str(error.value)
    assert "min_data_in_leaf=1500 is too large for the learner LambdaMART" in message and "\n" not in message
    assert f"{few.n_documents:,} training documents of 20 queries" in message and "leave it unset" in message
    constant = replace(few, features=np.ones_like(few.features))  # LightGBM drops every feature: its own check
    with pytest.raises(ParameterError, match=r"LightGBM finds no feature it can split .* every feature is constant"):
        train_ranker(constant, "lambdamart", Setting(trees=2, leaves=7, min_data_in_leaf=2, threads=1))


def test_a_fold_scales_min_data_to_its_learners_documents(small):
    data = load_letor_folder(str(small)).folds["Fold1"].read()
    setting = Setting(trees=3, leaves=15, min_data_in_leaf=None, threads=1)
    result = run_fold(
        "Fold1", data["train"], data["test"], ["lambdamart"], [1.0], feature_baseline(110), ["linear"], setting,
        **QUIET,
    )  # fmt: skip
    held, rest = hold_out(data["train"], None, setting.seed)
    assert result.held_out == held.n_queries == held_out_queries(data["train"].n_queries) == 48
    assert result.min_data_in_leaf == scaled_min_data(rest.n_documents, 15) == rest.n_documents // 30
    assert set(result.scores) == {"feature 110", "Linear", "LambdaMART"}


def test_too_few_test_queries_are_said():
    rng = np.random.default_rng(1)
    for n, expected in ((50, True), (50_000, False)):
        base = rng.uniform(0.3, 0.9, n)
        matrix = pd.DataFrame(
            [base, base + rng.normal(0, 0.1, n), base + rng.normal(0, 0.1, n)],
            index=["LambdaMART", "U-CRO α=1", "T-FARO α=1"],
            columns=[str(q) for q in range(n)],
        )
        note = tables.too_few_queries(matrix, list(matrix.index), sig_level=0.05)
        assert (note is not None) == expected
    # sd 0.1 · (1.96 + 0.84) / √50 = 0.040, 6.6 % of 0.6: (2.80 · 0.1 / 0.006)² ≈ 2,180 queries would detect 1 %
    assert note is None
    matrix = matrix.iloc[:, :50]
    note = tables.too_few_queries(matrix, list(matrix.index))
    assert note.startswith("50 test queries are too few to tell these learners apart")
    assert tables.too_few_queries(matrix, ["U-CRO α=1"]) is None  # no LambdaMART to compare with


def _copy_with_labels(source, target, split, label):
    """`source`'s fold with every label of `split` set to `label`."""
    shutil.copytree(source / "Fold1", target / "Fold1")
    path = target / "Fold1" / f"{split}.txt.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    path.write_bytes(gzip.compress("".join(f"{label} {line.split(' ', 1)[1]}\n" for line in lines).encode()))
    return target


def test_files_without_relevant_documents_are_refused_before_training(demo, tmp_path):
    folder = _copy_with_labels(demo, tmp_path / "no-relevant-test", "test", 0)
    said = []
    params = resolve_ltr_parameters(str(folder), objectives=["lambdamart"], learned_baselines=[], trees=2)
    with pytest.raises(InputFormatError, match=r"test.txt.gz: no query has a relevant document .* nothing to compare"):
        run_experiment(params, threads=1, say=said.append)
    assert not any("trees" in line for line in said), "refused before any training"
    vali = _copy_with_labels(demo, tmp_path / "no-relevant-vali", "vali", 0)
    params = resolve_ltr_parameters(str(vali), objectives=["lambdamart"], learned_baselines=[], trees=2)
    run_experiment(params, threads=1, **QUIET)  # vali.txt is not used without a grid
    grid = resolve_ltr_parameters(str(vali), objectives=["lambdamart"], learned_baselines=[], min_data_grid=[5, 9])
    with pytest.raises(InputFormatError, match=r"vali.txt.gz: no query has .* min_data_grid cannot choose"):
        run_experiment(grid, threads=1, **QUIET)
    data = load_letor_folder(str(demo)).folds["Fold1"].read()
    check_relevant(data, need_vali=True)  # the demo's own files pass


def test_a_report_on_files_without_relevant_documents_is_refused_before_it_starts(demo, tmp_path):
    """`riskreport run risk_ltr` on a test.txt without relevant documents: the file's error before any cell runs,
    and no failed-* folder (it was refused in cell 4 of the template)."""
    folder = _copy_with_labels(demo, tmp_path / "no-relevant", "test", 0)
    reports = tmp_path / "reports"
    with pytest.raises(InputFormatError, match=r"test.txt.gz: no query has a relevant document .* nothing to compare"):
        rr.run_report("risk_ltr", collection=str(folder), reports_dir=reports)
    assert not reports.exists() or not any(reports.rglob("report.html")), "nothing written"
    assert not any(p.name.startswith("failed-") for p in tmp_path.rglob("*"))
    vali = _copy_with_labels(demo, tmp_path / "no-relevant-vali", "vali", 0)
    with pytest.raises(InputFormatError, match=r"vali.txt.gz: .* min_data_grid cannot choose"):
        rr.run_report("risk_ltr", collection=str(vali), reports_dir=reports, parameters={"min_data_grid": [5, 9]})


@pytest.mark.parametrize(
    "text, relevant",
    [
        (b"0 qid:1 1:0.5\n0 qid:1 1:0.1\n", False),
        (b"0 qid:1 1:0.5\n2 qid:1 1:0.1\n", True),
        (b"0 qid:1 1:0.5\n0.5 qid:1 1:0.1", True),  # a fractional label, no final newline
        (b"# a comment\n0 qid:1 1:0.5\n\n  0 qid:2 1:1\n", False),
        (b"0 qid:1 1:0.5\nx qid:1 1:0.1\n", True),  # not a number: left to the reader, which names the line
    ],
)
def test_has_relevant_label_reads_only_the_labels(tmp_path, text, relevant):
    from riskreport.io.letor import has_relevant_label

    for name, data in (("f.txt", text), ("f.txt.gz", gzip.compress(text))):
        path = tmp_path / name
        path.write_bytes(data)
        assert has_relevant_label(path) == relevant
        assert has_relevant_label(path, block=5) == relevant  # lines cut across blocks


@pytest.mark.parametrize("text", [b"", b"\n\n", b"# only a comment\n  \n"])
def test_a_file_without_document_lines_is_its_own_error(tmp_path, text):
    """An empty train.txt was reported as "no query has a relevant document (every label is 0)" (issue 39)."""
    from riskreport.io.letor import has_relevant_label

    for name, data in (("train.txt", text), ("train.txt.gz", gzip.compress(text))):
        path = tmp_path / name
        path.write_bytes(data)
        for block in (1 << 24, 5):
            with pytest.raises(InputFormatError, match=rf"{name}: no document lines") as error:
                has_relevant_label(path, block=block)
            assert "relevant" not in str(error.value)


def test_a_report_on_an_empty_train_file_says_it_is_empty(demo, tmp_path):
    """`riskreport run risk_ltr` on a fold whose train.txt is empty: that error, before anything runs."""
    shutil.copytree(demo / "Fold1", tmp_path / "empty" / "Fold1")
    train = tmp_path / "empty" / "Fold1" / "train.txt.gz"
    train.write_bytes(gzip.compress(b""))
    reports = tmp_path / "reports"
    with pytest.raises(InputFormatError, match=r"train.txt.gz: no document lines") as error:
        rr.run_report("risk_ltr", collection=str(tmp_path / "empty"), reports_dir=reports)
    assert "no query has a relevant document" not in str(error.value)
    assert not reports.exists() or not any(reports.rglob("report.html"))


@pytest.fixture(scope="module")
def report(small, tmp_path_factory):
    return rr.run_report(
        "risk_ltr",
        collection=str(small),
        out=tmp_path_factory.mktemp("small-report") / "report",
        parameters={"objectives": ["lambdamart", "u-cro"], "alphas": [1], "learned_baselines": ["linear"], "trees": 4},
    )


def test_the_report_runs_with_the_template_defaults_and_says_what_it_scaled(report):
    html = unescape((report / "report.html").read_text(encoding="utf-8"))
    assert "learning rate 0.1, documents per leaf scaled to each fold's data (min_data_in_leaf not given" in html
    assert "min_data_in_leaf was not given (nor in letor.toml), so it was scaled to the data: 37 documents" in html
    assert "learned on 48 held-out training queries" in html
    assert "too few to tell these learners apart" in html
    assert "nDCG@10" in html and "NDCG@10" not in html
    assert len(pd.read_csv(report / "tables" / "ndcg.csv")) == 4  # feature 110, Linear, LambdaMART, U-CRO α=1
    folds = pd.read_csv(report / "tables" / "folds.csv")
    assert folds[["fold", "held_out_queries", "min_data_in_leaf"]].values.tolist() == [["Fold1", 48, 37]]


def test_analysis_load_of_a_learning_to_rank_report_is_a_clear_error(report):
    with pytest.raises(InputFormatError, match=r"params.json: a report of the template 'risk_ltr', which Analysis"):
        rr.Analysis.load(report)


@pytest.mark.skipif(not (SHARED_DATA / "letor-sample").is_dir(), reason="needs ../shared/data/letor-sample")
def test_the_real_sample_gets_values_that_fit_it():
    """LightGBM's LambdaRank sample (201 training queries, 3,005 documents): the 2016 defaults failed on it."""
    params = resolve_ltr_parameters(str(SHARED_DATA / "letor-sample"), objectives=["lambdamart"], trees=3)
    experiment = run_experiment(params, threads=1, **QUIET)
    row = experiment.folds.iloc[0]
    assert (row["held_out_queries"], row["min_data_in_leaf"]) == (40, 24)
    assert "24" in tables.setting_note(params, experiment)
