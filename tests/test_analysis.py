"""`riskreport.analyse(...)`: one result object whose tables are the report's, saved and loaded (issue 24)."""

from __future__ import annotations

import filecmp
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import riskreport as rr
from riskreport.errors import RiskReportError
from riskreport.render.tabular.csv_writer import table_file
from riskreport.run.api.analysis import TABLES, read_table
from riskreport.run.report.runner import run_report

OPTIONS = {"alphas": [0, 5], "bootstrap_samples": 200}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RISKREPORT_CACHE", str(folder))
        yield folder


@pytest.fixture(scope="module")
def built(cache, tmp_path_factory):
    """The demo report through `riskreport run` and through the API, each saved to its folder."""
    root = tmp_path_factory.mktemp("reports")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ran = run_report(
            "risk_report",
            collection="demo",
            alphas=OPTIONS["alphas"],
            out=root / "run",
            parameters={"bootstrap_samples": OPTIONS["bootstrap_samples"]},
        )
    analysis = rr.analyse("demo", **OPTIONS)
    return ran, analysis, analysis.save(root / "api")


def test_api_and_riskreport_run_write_the_same_tables(built):
    ran, analysis, saved = built
    written = sorted(p.name for p in (ran / "tables").iterdir())
    assert written == sorted(p.name for p in (saved / "tables").iterdir())
    assert {table_file(name) for name in analysis.tables} == {n for n in written if ".csv" in n}
    assert "topics.csv.gz" in written and "topics.csv" not in written  # the per-topic table compressed
    for name in written:  # byte for byte: the same numbers by construction
        assert filecmp.cmp(ran / "tables" / name, saved / "tables" / name, shallow=False), name
    assert sorted(p.name for p in (ran / "figures").iterdir()) == sorted(p.name for p in (saved / "figures").iterdir())
    record = json.loads((saved / "params.json").read_text())
    assert (
        record["status"] == "ok" and record["parameters"] == json.loads((ran / "params.json").read_text())["parameters"]
    )
    assert "params.json" in record["files"] and "tables/risk.csv" in record["files"]


def test_save_then_load_round_trips_every_table_and_parameter(built):
    _, analysis, saved = built
    loaded = rr.Analysis.load(saved)
    assert loaded.parameters == analysis.parameters
    assert (
        loaded.params.all_baselines == analysis.params.all_baselines
        and loaded.params.systems == analysis.params.systems
    )
    assert loaded.table_names == analysis.table_names
    for name in analysis.table_names:
        pd.testing.assert_frame_equal(loaded.table(name), analysis.table(name), check_dtype=False, rtol=1e-9)
    assert repr(loaded) == repr(analysis)
    reloaded = rr.Analysis.load(built[0])  # a folder `riskreport run` wrote loads the same way
    pd.testing.assert_frame_equal(reloaded.table("verdicts"), loaded.table("verdicts"))


def test_jupyter_summary_shows_verdicts_matrix_and_the_rest(built):
    _, analysis, _ = built
    markup = analysis._repr_html_()
    at5 = analysis.summary[analysis.summary["alpha"] == 5]
    risky = at5.loc[at5["verdict"] == "risk", "system"].tolist()
    assert risky and f"against bm25 at α = 5: {len(risky)} risk ({', '.join(risky)}" in markup
    assert "id='verdict-matrix'" in markup and "riskreport demo collection" in markup
    assert all(f"<code>{name}</code>" in markup for name in analysis.table_names)
    assert "<code>trisk-alpha</code>" in markup and "holm-adjusted" in markup
    assert "weak-tfidf" in repr(analysis) and "tables: verdicts, effectiveness" in repr(analysis)


def test_tables_figures_latex_by_name(built):
    _, analysis, _ = built
    assert set(analysis.tables) == {n for n in TABLES if n != "effectiveness_measures"}
    assert list(analysis.table("risk").columns) == rr.risk.RISK_COLUMNS
    figure = analysis.figure("urisk-alpha")
    assert hasattr(figure, "savefig") and figure.axes
    assert "\\begin{table}" in analysis.to_latex("risk")
    with pytest.raises(rr.UnknownNameError, match="Unknown table 'riks'. Did you mean 'risk'"):
        analysis.table("riks")
    with pytest.raises(rr.UnknownNameError, match="Unknown figure"):
        analysis.figure("nope")


def test_save_refuses_what_riskreport_run_refuses(built, tmp_path):
    _, analysis, _ = built
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(RiskReportError, match="not empty|not a report|--force"):
        analysis.save(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]  # nothing written
    analysis.save(folder, force=True)
    assert (folder / "notes.txt").read_text() == "mine" and (folder / "tables" / "risk.csv").is_file()


def test_read_table_keeps_text_as_text(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("system,topic,alpha,score,significant\nNA,007,0,0.5,True\nb,8,1,,False\n")
    table = read_table(path)
    assert table["system"].tolist() == ["NA", "b"] and table["topic"].tolist() == ["007", "8"]
    assert table["significant"].tolist() == [True, False] and np.isnan(table["score"].iloc[1])


def test_analyse_takes_runs_in_other_shapes(cache):
    collection = rr.load_collection("demo")
    from riskreport.io.trec import read_run

    frames = {
        s: read_run(collection.runs[s]).rename(columns={"query_id": "qid", "doc_id": "docno"})
        for s in ("bm25", "risky-llm", "weak-ql")
    }
    analysis = rr.analyse(runs=frames, qrels=collection.qrels, baseline="bm25", alphas=[0, 5], bootstrap_samples=200)
    direct = rr.risk_table(rr.evaluate(collection, "nDCG@10", list(frames)).matrix(), "bm25", [0, 5], "nDCG@10")
    pd.testing.assert_frame_equal(analysis.table("risk"), direct[rr.risk.RISK_COLUMNS])
    with pytest.raises(rr.ParameterError, match="unknown option"):
        rr.analyse("demo", bootstrap=10)


def test_a_figure_is_shown_once_in_jupyter(built):
    """Closed in pyplot: the inline backend does not show it again at the end of the cell."""
    import matplotlib.pyplot as plt

    _, analysis, _ = built
    plt.close("all")
    figure = analysis.figure("urisk-alpha")
    assert plt.get_fignums() == [] and figure.axes and figure.canvas is not None


@pytest.fixture(scope="module")
def two_baselines(cache):
    return rr.analyse("demo", baseline=["bm25", "dense-a"], **OPTIONS)


def test_figures_and_latex_per_baseline(two_baselines):
    a = two_baselines
    first, second = a.figure("urisk-alpha"), a.figure("urisk-alpha", baseline="dense-a")
    assert "bm25" in first.axes[0].get_title() and "dense-a" in second.axes[0].get_title()
    lines = {line.get_label() for line in second.axes[0].get_lines()}
    assert "bm25" in lines and "dense-a" not in lines
    latex = a.to_latex("risk", baseline="dense-a")
    assert "against dense-a" in latex and "tab:demo:risk:dense-a" in latex and "against bm25" in a.to_latex("risk")
    assert "dense-a" in a.caption("topic-deltas", baseline="dense-a")
    view = a.against("dense-a")
    assert view.risk is a.risk and view.summary is a.summary  # the family's tables, computed once
    assert set(view.main_risk["baseline"]) == {"dense-a"}
    with pytest.raises(rr.UnknownNameError, match="Unknown baseline 'bm2'. Did you mean 'bm25'"):
        a.figure("urisk-alpha", baseline="bm2")


def test_one_and_two_baselines_use_the_same_cell_style(built, two_baselines):
    one, two = built[1]._repr_html_(), two_baselines._repr_html_()
    assert one.count("white-space: nowrap") >= 1 and two.count("white-space: nowrap") >= 1


@pytest.fixture(scope="module")
def score_frame(built):
    return built[1].matrix.stack().rename("value").rename_axis(["system", "topic"]).reset_index()


def test_analyse_takes_inputs_as_its_first_argument(built, score_frame):
    keyword = rr.analyse(scores=score_frame, baseline="bm25", **OPTIONS)
    for given in (score_frame, built[1].matrix):
        positional = rr.analyse(given, baseline="bm25", **OPTIONS)
        pd.testing.assert_frame_equal(positional.table("risk"), keyword.table("risk"))
    assert keyword.params.collection.title == "per-topic scores from a DataFrame"
    assert "Risk report: per-topic scores from a DataFrame" in keyword._repr_html_()
    assert rr.analyse(score_frame, title="Mine", **OPTIONS).params.collection.title == "Mine"
    with pytest.raises(rr.ParameterError, match="give the inputs once"):
        rr.analyse(score_frame, scores=score_frame)


def test_analyse_takes_runs_as_its_first_argument(cache):
    collection = rr.load_collection("demo")
    from riskreport.io.trec import read_run

    frames = {s: read_run(collection.runs[s]) for s in ("bm25", "weak-ql")}
    by_keyword = rr.analyse(runs=frames, qrels=collection.qrels, **OPTIONS)
    by_position = rr.analyse(frames, qrels=collection.qrels, **OPTIONS)
    pd.testing.assert_frame_equal(by_position.table("risk"), by_keyword.table("risk"))
    assert by_position.params.collection.title == "runs from a mapping"
    one_frame = pd.concat([f.assign(name=s) for s, f in frames.items()])  # PyTerrier's Experiment shape
    pd.testing.assert_frame_equal(
        rr.analyse(one_frame, qrels=collection.qrels, **OPTIONS).table("risk"), by_keyword.table("risk")
    )
    with pytest.raises(rr.ParameterError, match="runs need qrels"):
        rr.analyse(one_frame)


@pytest.mark.parametrize("alphas", [["x"], [-1]])
def test_bad_alphas_with_inputs_are_a_parameter_error(score_frame, alphas):
    with pytest.raises(rr.ParameterError, match="alphas") as raised:
        rr.analyse(scores=score_frame, alphas=alphas)
    assert "collection.toml" not in str(raised.value)


def test_a_saved_analysis_of_a_frame_loads_once_its_cache_is_gone(score_frame, tmp_path, monkeypatch):
    """Every table is in the folder: clearing the cache (docs/cache.md: safe to delete) loses no saved analysis."""
    import shutil

    monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / "cache"))
    analysis = rr.analyse(score_frame, baseline=["bm25", "dense-a"], **OPTIONS)
    saved = analysis.save(tmp_path / "saved")
    shutil.rmtree(tmp_path / "cache")
    loaded = rr.Analysis.load(saved)
    assert loaded.table_names == analysis.table_names and repr(loaded) == repr(analysis)
    for name in ("risk", "verdicts", "topics"):
        pd.testing.assert_frame_equal(loaded.table(name), analysis.table(name), check_dtype=False, rtol=1e-9)
    assert "per-topic scores from a DataFrame" in loaded._repr_html_()
    with pytest.raises(RiskReportError, match="no longer exists .* the tables it was saved with"):
        loaded.figure("urisk-alpha")


def test_a_damaged_or_foreign_saved_folder_is_refused_at_load(built, tmp_path):
    import shutil

    copy = shutil.copytree(built[2], tmp_path / "copy")
    risk = pd.read_csv(copy / "tables" / "risk.csv").drop(columns="urisk")
    risk.to_csv(copy / "tables" / "risk.csv", index=False)
    with pytest.raises(rr.InputFormatError, match=r"risk\.csv: no column urisk \(expected the columns riskreport"):
        rr.Analysis.load(copy)
    record = json.loads((copy / "params.json").read_text())
    (copy / "params.json").write_text(json.dumps({**record, "template": "risk_ltr"}))
    with pytest.raises(rr.InputFormatError, match="a report of the template 'risk_ltr'"):
        rr.Analysis.load(copy)


def test_save_errors_speak_python(built, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(RiskReportError) as raised:
        built[1].save(folder)
    assert "pass force=True" in str(raised.value) and "--out" not in str(raised.value)
    assert str(raised.value).startswith(f"save {folder}")


# ---- issue 40: the slow tables kept with the evaluations ------------------------------------------------------


def campaign_scores(systems: int = 30, topics: int = 40, seed: int = 7) -> pd.DataFrame:
    """A small campaign as a long score table: systems of varied skill, ties and exact zeros (as real runs)."""
    rng = np.random.default_rng(seed)
    base = rng.beta(2, 5, topics)
    rows = []
    for s in range(systems):
        shift = rng.normal(0, 0.05) + rng.normal(0, 0.08, topics) * (s % 3 != 0)
        values = np.clip(np.round(base + shift, 3), 0, 1)
        rows += [(f"run{s:02d}", f"t{t}", v) for t, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["system", "topic", "score"])


STORED = ("risk", "tests", "boot", "diagnostics", "mixed")


def test_a_second_report_reads_its_slow_tables_back_value_for_value(tmp_path, monkeypatch):
    """Issue 40: the risk, tests, bootstrap, mixed-model and diagnostics tables of a report are stored with the
    evaluations and read back by the next report of the same scores and options: equal to the computed ones
    exactly (values, dtypes, order), and every table of the report the same."""
    monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / "cache"))
    scores = campaign_scores()
    options = {"alphas": [0, 1, 5], "bootstrap_samples": 300, "baseline": "run00"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = rr.analyse(scores, **options)
        computed = {name: getattr(first, name) for name in STORED}
        tables = first.tables
        assert len(list((tmp_path / "cache" / "tables").rglob("*.npz"))) == len(STORED)
        second = rr.analyse(scores, **options)
        import riskreport.stats.inference as inference

        monkeypatch.setattr(inference, "bootstrap_table", lambda *a, **k: pytest.fail("bootstrap computed again"))
        monkeypatch.setattr(inference, "tests_table", lambda *a, **k: pytest.fail("tests computed again"))
        for name in STORED:
            pd.testing.assert_frame_equal(getattr(second, name), computed[name], check_exact=True)
        for name, table in second.tables.items():
            pd.testing.assert_frame_equal(table, tables[name], check_exact=True)


def test_stored_tables_are_keyed_by_the_scores_and_every_option(tmp_path, monkeypatch):
    """Another seed, number of resamples, α grid, baseline or score is another entry, never the stored table."""
    monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / "cache"))
    scores = campaign_scores(systems=6, topics=12)
    base = {"alphas": [0, 2], "bootstrap_samples": 200, "baseline": "run00"}
    changed = scores.assign(score=scores["score"].where(scores.index != 5, scores["score"] + 0.01))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = rr.analyse(scores, **base).boot
        for data, options in [
            (scores, {**base, "seed": 1}),
            (scores, {**base, "bootstrap_samples": 250}),
            (scores, {**base, "alphas": [0, 3]}),
            (scores, {**base, "baseline": "run01"}),
            (changed, base),
        ]:
            again = rr.analyse(data, **options).boot
            fresh_cache = tmp_path / f"fresh-{len(list(tmp_path.iterdir()))}"
            monkeypatch.setenv("RISKREPORT_CACHE", str(fresh_cache))
            pd.testing.assert_frame_equal(again, rr.analyse(data, **options).boot, check_exact=True)  # as computed
            monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / "cache"))
            assert not again.equals(reference), options


def test_a_damaged_stored_table_is_computed_again(tmp_path, monkeypatch):
    from riskreport.io.cache import CacheWarning

    monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / "cache"))
    scores = campaign_scores(systems=5, topics=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        computed = rr.analyse(scores, alphas=[0, 1], bootstrap_samples=200).tests
    for entry in (tmp_path / "cache" / "tables").rglob("*.npz"):
        entry.write_bytes(entry.read_bytes()[:100])
    with pytest.warns(CacheWarning, match="damaged"):
        again = rr.analyse(scores, alphas=[0, 1], bootstrap_samples=200).tests
    pd.testing.assert_frame_equal(again, computed, check_exact=True)


def test_frames_are_stored_and_read_back_with_their_dtypes_and_missing_text():
    from riskreport.run.api.store import arrays_frame, frame_arrays

    frame = pd.DataFrame(
        {
            "system": pd.Series(["a", "b", None], dtype="str"),
            "note": pd.Series(["x", np.nan, "NA"], dtype=object),
            "n": np.array([1, 2, 3], dtype=np.int64),
            "flag": [True, False, True],
            "value": [0.1, np.nan, -0.0],
        }
    )
    back = arrays_frame(*frame_arrays(frame))
    pd.testing.assert_frame_equal(back, frame, check_exact=True)
    assert np.signbit(back["value"].iloc[2]) and back["note"].iloc[2] == "NA"
    assert frame_arrays(pd.DataFrame({"when": pd.to_datetime(["2026-01-01"])})) is None  # not stored: computed
    assert frame_arrays(pd.DataFrame({"mixed": ["a", 1]})) is None


def test_the_score_table_is_read_once_per_analysis_and_per_plan(tmp_path, cache_dir, monkeypatch):
    """`rr.analyse` and the runner's plan (what `riskreport run` and a batch job run) resolve a score-table
    collection into one `ReportParameters` in one pass: its score table is read once there (each read hashes the
    file and copies the table: it was read 4 times by `resolve_parameters` and 3 more by `evaluate`), and the
    scores are evaluated from that same table. Its topics are resolved in the same pass."""
    from riskreport.io import collection_data as measure_names
    from riskreport.run.report.runner import plan_report

    rng = np.random.default_rng(7)
    rows = [(s, f"t{t}", m, rng.random()) for s in ("bm25", "a", "b") for t in range(12) for m in ("nDCG@10", "P@10")]
    pd.DataFrame(rows, columns=["system", "topic", "measure", "score"]).to_csv(tmp_path / "scores.csv", index=False)
    reads = []
    parsed = measure_names.parsed_scores
    monkeypatch.setattr(measure_names, "parsed_scores", lambda *key: reads.append(key) or parsed(*key))

    analysis = rr.analyse(str(tmp_path), measure="P@10", baseline="bm25", alphas=[0, 5])
    risk = analysis.table("risk")
    assert len(reads) == 1, reads
    assert sorted(analysis.params.topics) == sorted(f"t{t}" for t in range(12))
    assert analysis.params.topics == list(analysis.matrix.columns)  # the matrix's topics are the resolved ones
    expected = pd.DataFrame(rows, columns=["system", "topic", "measure", "score"]).query("measure == 'P@10'")
    matrix = expected.pivot(index="system", columns="topic", values="score")
    assert np.allclose(analysis.matrix.loc[["a", "b"]].to_numpy(), matrix.loc[["a", "b"], analysis.matrix.columns])
    assert set(risk["system"]) == {"a", "b"}

    reads.clear()
    plan = plan_report("risk_report", collection=str(tmp_path), measure="P@10", baseline="bm25", alphas=[0, 5])
    assert len(reads) == 1 and plan.params.table is not None and plan.params.topics == analysis.params.topics


def test_a_batch_job_builds_its_score_table_once(tmp_path, cache_dir, monkeypatch):
    """A batch job resolves its score-table collection as `riskreport run` does (`plan_report`): its score table is
    built once per job, and its runs' qrels not read again after."""
    from riskreport.io import collection_data
    from riskreport.run.schedule.batch import run_batch

    rng = np.random.default_rng(8)
    rows = [(s, f"t{t}", "P@10", rng.random()) for s in ("bm25", "a", "b") for t in range(12)]
    pd.DataFrame(rows, columns=["system", "topic", "measure", "score"]).to_csv(tmp_path / "scores.csv", index=False)
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(f'[[job]]\nname = "p10"\ncollection = "{tmp_path}"\nbaseline = "bm25"\nalphas = [0, 5]\n')
    builds = []
    parsed = collection_data.parsed_scores
    monkeypatch.setattr(collection_data, "parsed_scores", lambda *key: builds.append(key) or parsed(*key))

    result = run_batch(jobs, reports_dir=tmp_path / "reports", dry_run=True)
    assert [r.status for r in result.results] == ["run"], result.results
    assert len(builds) == 1, builds
