"""Inputs from the field's tools reach the same risk table as the TREC files of the demo collection (issue 24)."""

from __future__ import annotations

import shutil

import ir_measures
import pandas as pd
import pytest
import pytrec_eval

import riskreport as rr
from riskreport.errors import InputFormatError, ParameterError, RiskReportError
from riskreport.io import inputs
from riskreport.io.trec import read_qrels, read_run

MEASURE = "nDCG@10"
SYSTEMS = ["bm25", "risky-llm", "dense-a", "weak-ql"]
ALPHAS = [0.0, 5.0]


@pytest.fixture(scope="module")
def demo():
    collection = rr.load_collection("demo")
    return collection, {s: collection.runs[s] for s in SYSTEMS}


@pytest.fixture(scope="module")
def expected(demo):
    collection, _ = demo
    return _risk(collection)


@pytest.fixture(autouse=True)
def _cache(cache_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def _risk(collection, measure=MEASURE) -> pd.DataFrame:
    matrix = rr.evaluate(collection, measure, SYSTEMS).matrix()
    return rr.risk_table(matrix, "bm25", ALPHAS, MEASURE).sort_values(["alpha", "system"]).reset_index(drop=True)


def _same(ours: pd.DataFrame, expected: pd.DataFrame) -> None:
    numbers = ["urisk", "trisk", "p_value", "p_adjusted", "wins", "losses", "ties", "frisk", "freward", "loss20"]
    assert ours[["system", "alpha", "verdict"]].equals(expected[["system", "alpha", "verdict"]])
    pd.testing.assert_frame_equal(ours[numbers], expected[numbers], rtol=1e-9, atol=1e-12)


def _pyterrier_frame(path) -> pd.DataFrame:
    run = read_run(path)
    return pd.DataFrame({"qid": run["query_id"], "docno": run["doc_id"], "score": run["score"]})


class Run:  # ranx's Run as far as riskreport uses it (ranx is not a dependency)
    def __init__(self, run: dict, name: str | None = None):
        self._run, self.name = run, name

    def to_dict(self) -> dict:
        return self._run


class Qrels:
    def __init__(self, qrels: dict):
        self._qrels = qrels

    def to_dict(self) -> dict:
        return self._qrels


def _nested(table: pd.DataFrame, value: str) -> dict:
    out: dict = {}
    for q, d, v in zip(table["query_id"], table["doc_id"], table[value]):
        out.setdefault(q, {})[d] = v
    return out


def test_folder_of_trec_runs(demo, expected, tmp_path):
    collection, runs = demo
    folder = tmp_path / "runs"
    folder.mkdir()
    for path in runs.values():
        shutil.copy(path, folder / path.name)
    _same(_risk(inputs.collection_from(runs=folder, qrels=collection.qrels)), expected)


def test_pyterrier_frames_by_score_and_by_rank(demo, expected):
    collection, runs = demo
    frames = {s: _pyterrier_frame(p) for s, p in runs.items()}
    qrels = read_qrels(collection.qrels).rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    _same(_risk(inputs.collection_from(runs=frames, qrels=qrels)), expected)
    ranked = {}
    for system, frame in frames.items():
        order = frame.sort_values(["qid", "score", "docno"], ascending=[True, False, False])
        ranked[system] = order.assign(rank=order.groupby("qid").cumcount() + 1).drop(columns="score")
    _same(_risk(inputs.collection_from(runs=ranked, qrels=qrels)), expected)
    together = pd.concat([f.assign(name=s) for s, f in frames.items()])  # PyTerrier Experiment style
    _same(_risk(inputs.collection_from(runs=together, qrels=qrels)), expected)


def test_ranx_runs_and_qrels(demo, expected):
    collection, runs = demo
    ranx_runs = [Run(_nested(read_run(p), "score"), name=s) for s, p in runs.items()]
    qrels = Qrels(_nested(read_qrels(collection.qrels), "relevance"))
    _same(_risk(inputs.collection_from(runs=ranx_runs, qrels=qrels)), expected)
    with pytest.raises(ParameterError, match="ranx Run without a name"):
        inputs.collection_from(runs=[Run({"1": {"d": 1.0}})], qrels=qrels)


def test_long_frame_and_matrix(demo, expected):
    collection, _ = demo
    matrix = rr.evaluate(collection, MEASURE, SYSTEMS).matrix()
    _same(_risk(inputs.collection_from(scores=matrix, measure=MEASURE)), expected)
    long = matrix.stack().rename("value").reset_index()
    assert list(long.columns) == ["system", "topic", "value"]
    _same(_risk(inputs.collection_from(scores=long, measure=MEASURE)), expected)
    with pytest.raises(InputFormatError, match="negative"):
        inputs.collection_from(scores=matrix - matrix.loc["bm25"])


def _pytrec_results(collection, runs) -> dict:
    qrels = _nested(read_qrels(collection.qrels), "relevance")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.10"})
    return {s: evaluator.evaluate(_nested(read_run(p), "score")) for s, p in runs.items()}


def test_pytrec_eval_and_trec_eval_output(demo, expected, tmp_path):
    collection, runs = demo
    results = _pytrec_results(collection, runs)
    # pytrec_eval scores only the topics a run returns: the qrels give the topic set, a missing topic scores 0
    _same(_risk(inputs.collection_from(scores=results, qrels=collection.qrels, measure="ndcg_cut_10")), expected)
    with pytest.raises(ParameterError, match="2 measures"):
        inputs.collection_from(scores=results, qrels=collection.qrels)
    folder = tmp_path / "trec_eval"
    folder.mkdir()
    for system, per_query in results.items():  # `trec_eval -q -m ndcg_cut.10 -m P.10` at full precision
        lines = [f"{m:<22}\t{q}\t{v:.17g}" for q, values in per_query.items() for m, v in values.items()]
        lines += ["runid                 \tall\t" + system, "ndcg_cut_10           \tall\t0.5"]
        (folder / f"{system}.txt").write_text("\n".join(lines) + "\n")
    _same(_risk(inputs.collection_from(scores=folder, qrels=collection.qrels, measure=MEASURE)), expected)
    (folder / "broken.txt").write_text("ndcg_cut_10 1\n")
    with pytest.raises(InputFormatError, match=r"broken.txt, line 1: 2 fields"):
        inputs.collection_from(scores=folder, qrels=collection.qrels, measure=MEASURE)


def test_ir_measures_output(demo, expected, tmp_path):
    collection, runs = demo
    qrels = list(ir_measures.read_trec_qrels(str(collection.qrels)))
    results = {
        s: list(ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels, ir_measures.read_trec_run(str(p))))
        for s, p in runs.items()
    }
    _same(_risk(inputs.collection_from(scores=results, qrels=collection.qrels)), expected)
    text = {}  # `ir_measures qrels run nDCG@10 -q`: topic, measure, value
    for system, metrics in results.items():
        text[system] = tmp_path / f"{system}.tsv"
        text[system].write_text("".join(f"{m.query_id}\t{m.measure}\t{m.value!r}\n" for m in metrics))
    _same(_risk(inputs.collection_from(scores=text, qrels=collection.qrels)), expected)


@pytest.fixture
def local_irds(demo, tmp_path, monkeypatch):
    """The demo qrels registered as an ir_datasets dataset, with IR_DATASETS_HOME in a temporary folder."""
    irds = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds"))
    qrels = tmp_path / "irds" / "riskreport-demo" / "qrels.txt"
    qrels.parent.mkdir(parents=True)
    shutil.copy(demo[0].qrels, qrels)
    name = f"riskreport-test/{tmp_path.name}"
    irds.registry.register(name, Dataset(TrecQrels(LocalDownload(qrels), {0: "not", 1: "relevant", 2: "highly"})))
    missing = f"riskreport-test/missing-{tmp_path.name}"
    irds.registry.register(missing, Dataset(TrecQrels(LocalDownload(tmp_path / "irds" / "absent.txt"), {})))
    return name, missing


def test_ir_datasets_qrels_offline(demo, expected, local_irds, tmp_path):
    name, missing = local_irds
    _same(_risk(inputs.collection_from(runs=demo[1], qrels=f"irds:{name}")), expected)
    _same(_risk(inputs.collection_from(runs=demo[1], qrels=name)), expected)  # a bare id that is no file
    with pytest.raises(RiskReportError, match="not available offline"):
        inputs.collection_from(runs=demo[1], qrels=f"irds:{missing}")
    with pytest.raises(ParameterError, match="neither a file nor a dataset ir_datasets knows"):
        inputs.collection_from(runs=demo[1], qrels="irds:no-such-dataset/at-all")
    folder = inputs.with_qrels("demo", f"irds:{name}")  # what --qrels and a job's qrels key use
    assert rr.load_collection(folder).default_baseline == "bm25"
    _same(_risk(rr.load_collection(folder)), expected)


def test_errors_name_the_input(demo):
    collection, _ = demo
    with pytest.raises(InputFormatError, match=r"runs\['a'\]: no score or rank column"):
        inputs.collection_from(runs={"a": pd.DataFrame({"qid": ["1"], "docno": ["d"]})}, qrels=collection.qrels)
    with pytest.raises(InputFormatError, match="document d ranked twice for topic 1"):
        inputs.collection_from(
            runs={"a": pd.DataFrame({"qid": ["1", "1"], "docno": ["d", "d"], "score": [1, 2]})}, qrels=collection.qrels
        )
    with pytest.raises(ParameterError, match="runs need qrels"):
        inputs.collection_from(runs={"a": pd.DataFrame({"qid": ["1"], "docno": ["d"], "score": [1.0]})})
    with pytest.raises(InputFormatError, match="no doc_id column"):
        inputs.collection_from(runs=demo[1], qrels=pd.DataFrame({"qid": ["1"], "label": [1]}))
    with pytest.raises(ParameterError, match="system name 'a/b'"):
        inputs.collection_from(scores=pd.DataFrame({"system": ["a/b"], "topic": ["1"], "value": [0.5]}))


def test_ir_datasets_qrels_from_the_cli_and_a_jobs_file(demo, expected, local_irds, tmp_path, monkeypatch, capsys):
    from riskreport.run.cli import commands as cli
    from riskreport.run.report import runner
    from riskreport.run.schedule import batch

    name, missing = local_irds
    planned = {}
    monkeypatch.setattr(runner, "run_report", lambda template, **kw: planned.update(kw) or tmp_path)
    assert cli.main(["run", "--collection", "demo", "--qrels", f"irds:{name}", "--quiet"]) == 0
    _same(_risk(rr.load_collection(planned["collection"])), expected)
    assert cli.main(["run", "--qrels", f"irds:{missing}", "--quiet"]) == 1
    assert "not available offline" in capsys.readouterr().err
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[defaults]\ncollection = "demo"\n\n[[job]]\nname = "irds"\nqrels = "irds:{name}"\n\n'
        f'[[job]]\nname = "file"\nqrels = "demo-qrels.txt"\n'
    )
    shutil.copy(demo[0].qrels, tmp_path / "demo-qrels.txt")
    loaded = {job.name: job for job in batch.load_jobs(jobs)}
    for job in loaded.values():
        _same(_risk(rr.load_collection(job.parameters["collection"])), expected)
    jobs.write_text(f'[[job]]\nname = "x"\nqrels = "irds:{missing}"\n')
    with pytest.raises(batch.JobFileError, match="job 'x', key 'qrels'.*not available offline"):
        batch.load_jobs(jobs)


def test_ir_datasets_offline_is_one_clean_line(local_irds, demo, tmp_path, capfd):
    """Offline, ir_datasets logged 9 lines on stderr and its error embedded `<...LocalDownload object at 0x...>`."""
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload
    from ir_datasets.util.download import Download, RequestsDownload

    local = tmp_path / "irds" / "downloads" / "qrels-copy"
    remote = [RequestsDownload(f"http://127.0.0.1:9/{n}.txt", tries=1) for n in (1, 2)]  # as trec-robust04's
    sources = Download([LocalDownload(local), *remote])
    name = f"riskreport-test/offline-{tmp_path.name}"
    ir_datasets.registry.register(name, Dataset(TrecQrels(sources, {})))
    capfd.readouterr()
    with pytest.raises(RiskReportError) as raised:
        inputs.collection_from(runs=demo[1], qrels=f"irds:{name}")
    message = str(raised.value)
    assert f"no local copy at {local}; download failed (" in message and " object at 0x" not in message
    assert capfd.readouterr().err == ""


def test_inputs_given_without_saying_which(demo):
    """`rr.analyse(x)`: a run frame, ranx Runs and (with qrels) a mapping are runs; other frames and mappings scores."""
    collection, runs = demo
    frame = _pyterrier_frame(runs["bm25"]).assign(name="bm25")
    ranx_runs = [Run(_nested(read_run(p), "score"), name=s) for s, p in runs.items()]
    matrix = pd.DataFrame([[0.5, 0.2]], index=["a"], columns=["1", "2"])
    assert inputs.given_inputs(frame) == (frame, None)
    assert inputs.given_inputs(ranx_runs)[0] is ranx_runs and inputs.given_inputs(ranx_runs[0])[0] is ranx_runs[0]
    assert inputs.given_inputs(runs, qrels=collection.qrels) == (runs, None)
    assert inputs.given_inputs({"a": {"1": {"nDCG@10": 0.5}}}) == (None, {"a": {"1": {"nDCG@10": 0.5}}})
    assert inputs.given_inputs(matrix)[1] is matrix
    with pytest.raises(ParameterError, match="got int; expected a collection name or path"):
        inputs.given_inputs(3)
    assert inputs.input_title(ranx_runs, None) == "runs from ranx Runs"
    assert inputs.input_title(None, "out/bm25.trec_eval") == "per-topic scores from bm25.trec_eval"


def test_other_qrels_make_the_collection_their_folder_holds(demo, tmp_path):
    """`with_qrels` (`--qrels`, a job's `qrels`, `rr.analyse(collection, qrels=...)`) builds the collection of the
    folder it writes from what it wrote: the same value as looking that folder up again, for a collection, a folder
    of runs without qrels and a bare folder of run files; a collection's own settings travel with its runs."""
    collection, runs = demo
    without = tmp_path / "without" / "runs"
    without.mkdir(parents=True)
    bare = tmp_path / "bare"
    bare.mkdir()
    for path in runs.values():
        (without / path.name).symlink_to(path)
        (bare / path.name).symlink_to(path)
    for given, systems, config in (
        (collection.path, list(collection.runs), collection.config),
        (without.parent, SYSTEMS, {}),
        (bare, SYSTEMS, {}),
    ):
        built = inputs.given_collection(str(given), collection.qrels)
        assert built == rr.load_collection(built.path), given
        assert sorted(built.runs) == sorted(systems) and built.qrels.read_text() == inputs.qrels_text(
            read_qrels(collection.qrels)
        )
        assert {k: built.config.get(k) for k in config if k in ("title", "baseline", "measure")} == {
            k: config[k] for k in config if k in ("title", "baseline", "measure")
        }
        assert inputs.with_qrels(str(given), collection.qrels) == str(built.path)
