"""The synthetic demo collection: deterministic, well-formed, and its systems play their roles."""

from __future__ import annotations

import gzip
import re

import ir_measures
import numpy as np
import pytest

from riskreport.io.demo import BASELINE, DEMO_SYSTEMS, N_INSTANCES, generate_demo
from riskreport.io.demo_design import TOPIC_IDS

TOPICS = list(TOPIC_IDS)
RUN_LINE = re.compile(r"^(\d+) Q0 (DEMO-\d{2}-\d{3}) (\d+) (-?\d+\.\d{4}) demo$")
QRELS_LINE = re.compile(r"^(\d+) 0 (DEMO-\d{2}-\d{3}) ([0-3])$")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return generate_demo(tmp_path_factory.mktemp("demo") / "collection")


@pytest.fixture(scope="module")
def ndcg(demo):
    """Per-topic nDCG@10 of every run, missing topics scoring 0."""
    qrels = list(ir_measures.read_trec_qrels(str(demo / "qrels.txt")))
    evaluator = ir_measures.evaluator([ir_measures.parse_measure("nDCG@10")], qrels)

    def evaluate(path):
        scores = {m.query_id: m.value for m in evaluator.iter_calc(list(ir_measures.read_trec_run(str(path))))}
        return np.array([scores.get(topic, 0.0) for topic in TOPICS])

    return {path.name.removesuffix(".run.gz"): evaluate(path) for path in (demo / "runs").glob("*.run.gz")}


def delta(ndcg, system):
    return ndcg[system] - ndcg[BASELINE]


def relative_files(folder):
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


def test_same_seed_gives_identical_bytes_and_replaces_old_files(demo, tmp_path):
    (tmp_path / "again" / "instances" / "stale").mkdir(parents=True)
    (tmp_path / "again" / "instances" / "stale" / "1.run.gz").write_bytes(b"")
    (tmp_path / "again" / "qrels.txt").write_text("old")
    again = generate_demo(tmp_path / "again")
    assert relative_files(again) == relative_files(demo)
    for name in relative_files(demo):
        assert (again / name).read_bytes() == (demo / name).read_bytes(), name


def test_layout(demo):
    deterministic = sorted(n for n, s in DEMO_SYSTEMS.items() if s.deterministic)
    sampled = sorted(n for n, s in DEMO_SYSTEMS.items() if not s.deterministic)
    assert sorted(p.name.removesuffix(".run.gz") for p in (demo / "runs").glob("*.run.gz")) == deterministic
    for name in sampled:
        assert sorted(p.name for p in (demo / "instances" / name).iterdir()) == sorted(
            f"{n}.run.gz" for n in range(1, N_INSTANCES + 1)
        )
    assert 'baseline = "bm25"' in (demo / "collection.toml").read_text()
    assert "synthetic" in (demo / "README.md").read_text().lower()


def test_qrels_cover_all_topics_with_a_relevant_document(demo):
    rows = [QRELS_LINE.match(line).groups() for line in (demo / "qrels.txt").read_text().splitlines()]
    assert sorted({topic for topic, _, _ in rows}, key=int) == TOPICS
    assert {topic for topic, _, rel in rows if rel != "0"} == set(TOPICS)
    assert len({(topic, doc) for topic, doc, _ in rows}) == len(rows)


@pytest.mark.parametrize("run", ["runs/bm25.run.gz", "runs/weak-tfidf.run.gz", "instances/sampled-b/3.run.gz"])
def test_run_format(demo, run):
    rows = [RUN_LINE.match(line).groups() for line in gzip.open(demo / run, "rt").read().splitlines()]
    missing = DEMO_SYSTEMS.get(run.removeprefix("runs/").removesuffix(".run.gz"))
    expected_topics = [t for t in TOPICS if not missing or t not in missing.missing_topics]
    assert list(dict.fromkeys(topic for topic, *_ in rows)) == expected_topics
    assert len({(topic, doc) for topic, doc, *_ in rows}) == len(rows) == 100 * len(expected_topics)
    for topic in expected_topics:
        ranks = [int(rank) for t, _, rank, _ in rows if t == topic]
        scores = [float(score) for t, _, _, score in rows if t == topic]
        assert ranks == list(range(1, 101))
        assert all(a > b for a, b in zip(scores, scores[1:]))


def test_unpooled_system_retrieves_some_unjudged_documents(demo):
    judged = set()
    for line in (demo / "qrels.txt").read_text().splitlines():
        topic, _, docno, _ = line.split()
        judged.add((topic, docno))
    top10 = []
    for line in gzip.open(demo / "runs/dense-b.run.gz", "rt"):
        topic, _, docno, rank, _, _ = line.split()
        if int(rank) <= 10:
            top10.append((topic, docno))
    assert 0 < sum(pair not in judged for pair in top10) < len(top10) / 2


def test_better_systems_beat_the_baseline(ndcg):
    for name, system in DEMO_SYSTEMS.items():
        if system.role == "better":
            assert delta(ndcg, name).mean() > 0.05, name
            assert (delta(ndcg, name) < 0).sum() <= 10, name


def test_risky_system_wins_on_average_but_loses_badly_on_some_topics(ndcg):
    assert delta(ndcg, "risky-llm").mean() > 0.05
    assert (delta(ndcg, "risky-llm") < -0.2).sum() >= 8


def test_near_copies_barely_differ_from_the_baseline(ndcg):
    for name, system in DEMO_SYSTEMS.items():
        if system.role == "near-copy":
            assert np.abs(delta(ndcg, name)).mean() < 0.01, name


def test_worse_systems_lose_to_the_baseline(ndcg):
    for name, system in DEMO_SYSTEMS.items():
        if system.role == "worse":
            assert delta(ndcg, name).mean() < -0.05, name


@pytest.mark.parametrize("system", ["sampled-a", "sampled-b"])
def test_instances_vary_around_the_true_effect(demo, ndcg, system):
    qrels = list(ir_measures.read_trec_qrels(str(demo / "qrels.txt")))
    measure = ir_measures.parse_measure("nDCG@10")
    effects = []
    for number in range(1, N_INSTANCES + 1):
        run = list(ir_measures.read_trec_run(str(demo / "instances" / system / f"{number}.run.gz")))
        effects.append(ir_measures.calc_aggregate([measure], qrels, run)[measure] - ndcg[BASELINE].mean())
    assert np.std(effects, ddof=1) > 0.005
    assert abs(np.mean(effects) - DEMO_SYSTEMS[system].true_effect) < 0.02
