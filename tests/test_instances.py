"""Instances of non-deterministic systems: loading, inconsistent inputs, and the nondeterministic template end to end."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import write_qrels, write_run

from riskreport.errors import InputFormatError, ParameterError
from riskreport.io.collection import PROJECT_ROOT, load_collection
from riskreport.io.demo import DEMO_SYSTEMS
from riskreport.run.report.runner import run_report
from riskreport.stats import instances, mixed
from riskreport.stats.instances import SINGLE_RUN, evaluate_instances, from_table, resolve_instance_parameters

DEMO = PROJECT_ROOT / "data" / "demo"
TOPICS = ("1", "2", "3", "4")


@pytest.fixture
def instance_collection(tmp_path):
    """P@2 over 4 topics: a deterministic `base`, `nd` with 3 instances (instance 3 lacks topic 4), `single` with one."""
    root = tmp_path / "nd-tiny"
    write_qrels(root / "qrels.txt", [(t, f"{t}-{d}", r) for t in TOPICS for d, r in (("r1", 2), ("r2", 1), ("n1", 0))])
    ranking = lambda docs, topics=TOPICS: [(t, f"{t}-{d}", 10 - i) for t in topics for i, d in enumerate(docs)]  # noqa: E731
    write_run(root / "runs" / "base.run", ranking(["r1", "n1"]))
    write_run(root / "instances" / "nd" / "1.run", ranking(["r1", "r2"]))
    write_run(root / "instances" / "nd" / "2.run.gz", ranking(["r2", "n1"]))
    write_run(root / "instances" / "nd" / "3.run", ranking(["r1", "r2"], TOPICS[:3]))
    write_run(root / "instances" / "single" / "only.run", ranking(["n1", "r1"]))
    (root / "collection.toml").write_text('measure = "P@2"\nbaseline = "base"\n')
    return root


def test_instances_from_runs_missing_topics_and_single_run(instance_collection, cache_dir):
    scores = evaluate_instances(instance_collection, "P@2")
    assert scores.n_instances() == {"base": 1, "nd": 3, "single": 1}
    assert scores.instances("base") == [SINGLE_RUN] and scores.deterministic("single")
    assert scores.topics == list(TOPICS)
    np.testing.assert_allclose(scores.matrix("nd").to_numpy(), [[1, 1, 1, 1], [0.5] * 4, [1, 1, 1, 0]])
    assert scores.missing.values.tolist() == [["nd", "3", "4"]]  # scored 0, listed
    assert any("instances/single/ holds a single run" in n for n in scores.notes)
    assert any("1 instance–topic cell(s) absent" in n for n in scores.notes)
    summary = scores.summary().set_index("system")
    assert summary.loc["nd", "kind"] == "non-deterministic" and summary.loc["base", "kind"] == "deterministic"


def test_inconsistent_instance_folders(instance_collection, cache_dir):
    (instance_collection / "instances" / "empty").mkdir()
    with pytest.raises(InputFormatError, match="holds no run files"):
        evaluate_instances(instance_collection, "P@2", ["base", "empty"])
    write_run(instance_collection / "instances" / "nd" / "1.run.gz", [("1", "1-r1", 1)])
    with pytest.raises(InputFormatError, match="1.run and 1.run.gz"):  # duplicate instance names
        load_collection(instance_collection)


def test_instances_from_scores_csv(tmp_path, cache_dir):
    root = tmp_path / "table"
    root.mkdir()
    rows = ["system,topic,score,instance", "b,1,0.5,", "b,2,0.1,", "s,1,0.6,x", "s,2,0.2,x", "s,1,0.4,y"]
    (root / "scores.csv").write_text("\n".join(rows) + "\n")
    scores = evaluate_instances(load_collection(root), "P@10")
    assert scores.n_instances() == {"b": 1, "s": 2} and scores.instances("b") == [SINGLE_RUN]
    assert scores.matrix("s").to_numpy().tolist() == [[0.6, 0.2], [0.4, 0.0]]
    assert scores.missing.values.tolist() == [["s", "y", "2"]]
    (root / "scores.csv").write_text("\n".join(rows + ["s,2,0.3,"]) + "\n")
    with pytest.raises(InputFormatError, match="rows with and without an instance"):
        evaluate_instances(load_collection(root), "P@10")


def test_resolve_instance_parameters(instance_collection, tiny_collection):
    p = resolve_instance_parameters(str(instance_collection))
    assert p.baseline == "base" and p.systems == ["base", "nd", "single"]  # instances/ folders, not runs/
    assert resolve_instance_parameters(str(instance_collection), systems=["nd"]).systems == ["base", "nd"]
    with pytest.raises(ParameterError, match="no non-deterministic system"):
        resolve_instance_parameters(str(tiny_collection))


def test_unbalanced_table_uses_the_reference_fit():
    rng = np.random.default_rng(1)
    rows = [("a", str(m), str(t), 0.3 + 0.01 * m + rng.normal(0, 0.05)) for m in range(4) for t in range(12)]
    rows += [("b", "run", str(t), 0.3 + rng.normal(0, 0.05)) for t in range(12)]
    scores = from_table(pd.DataFrame(rows[1:], columns=["system", "instance", "topic", "score"]))
    table = mixed.mixed_table(scores.scores, "b")
    assert table.loc[0, "method"] == mixed.MIXEDLM and "incomplete design" in table.loc[0, "note"]


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nondeterministic")
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        patch.setenv("RISKREPORT_CACHE", str(folder / "cache"))
        return run_report("nondeterministic", collection=str(DEMO), out=folder / "report")


def test_demo_report_sections_and_tables(demo_report):
    assert sorted(p.name for p in (demo_report / "tables").iterdir()) == ["instances.csv", "mixed.csv"]
    html = (demo_report / "report.html").read_text()
    for heading in (
        "Non-deterministic systems: riskreport demo collection",
        "1. Systems and instances",
        "2. Per-topic spread of effectiveness across instances",
        "3. Single-instance significance",
        "4. The mixed-effects model",
        "5. Equivalence: effects against the margin ±δ0",
        "6. Per-instance risk across α",
        "7. Methods",
        "balanced REML",
    ):
        assert heading in html, heading
    assert "Template notes" not in html and "resolve_instance_parameters(" not in html
    assert html.count("<img") == 4  # the four figures, embedded
    assert html.count('src="data:image/png;base64') == 4
    params = json.loads((demo_report / "params.json").read_text())
    assert params["status"] == "ok" and params["parameters"]["delta0"] == 0.01
    model = pd.read_csv(demo_report / "tables" / "mixed.csv")
    assert (
        list(model.columns)
        == mixed.MIXED_COLUMNS
        == [
            "system",
            "baseline",
            "measure",
            "effect",
            "se",
            "df",
            "ci_low",
            "ci_high",
            "p_value",
            "var_topic",
            "var_instance",
            "var_topic_system",
            "var_residual",
            "delta0",
            "verdict",
        ]
    )
    assert model["system"].tolist() == ["sampled-a", "sampled-b"] and set(model["baseline"]) == {"bm25"}
    assert (model["df"] == 49).all() and model["verdict"].isin(mixed.VERDICTS).all()
    per_instance = pd.read_csv(demo_report / "tables" / "instances.csv", dtype={"instance": str})
    assert (
        list(per_instance.columns)
        == instances.INSTANCE_COLUMNS
        == ["system", "instance", "measure", "alpha", "urisk", "trisk", "p_value", "significant"]
    )
    assert len(per_instance) == 2 * 10 * 5  # systems x instances x α
    assert per_instance["significant"].dtype == bool


def test_demo_intervals_cover_the_true_effects_and_verdicts_match(demo_report):
    """Seed 2026 (the shipped demo): each CI covers the generator's documented true effect."""
    model = pd.read_csv(demo_report / "tables" / "mixed.csv").set_index("system")
    for system in ("sampled-a", "sampled-b"):
        row = model.loc[system]
        assert row["ci_low"] < DEMO_SYSTEMS[system].true_effect < row["ci_high"], system
        assert row["var_instance"] > 0 and row["var_residual"] > 0
        expected = mixed.equivalence_verdicts([row["effect"]], [row["se"]], [row["df"]], 0.05, row["delta0"])[0]
        assert row["verdict"] == expected
    assert model.loc["sampled-b", "effect"] > model.loc["sampled-a", "effect"]
