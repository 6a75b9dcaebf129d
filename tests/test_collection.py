"""Collection discovery: file layout, system ids, defaults, names vs paths."""

import pytest
from conftest import write_qrels, write_run

from riskreport.errors import InputFormatError, RiskReportError, UnknownNameError
from riskreport.io.collection import load_collection, system_id
from riskreport.measures.params import resolve_parameters


def test_layout_and_defaults(tiny_collection):
    col = load_collection(tiny_collection)
    assert col.qrels.name == "qrels.txt"
    assert sorted(col.runs) == ["base", "good", "risky"]  # named by file, though all share one tag
    assert (col.default_measure, col.default_baseline, col.default_alphas) == ("P@2", "base", [0, 1, 5])
    assert col.title == "Tiny test collection"


@pytest.mark.parametrize(
    "name, expected", [("indriCASP.run.gz", "indriCASP"), ("a.b.run", "a.b"), ("sys.txt.bz2", "sys"), ("x.run", "x")]
)
def test_system_id_is_file_name(tmp_path, name, expected):
    assert system_id(tmp_path / name) == expected


def test_qrels_patterns(tmp_path):
    for name in ("qrels.adhoc.txt", "web.qrels", "qrels.txt.gz"):
        root = tmp_path / name.replace(".", "_")
        write_qrels(root / "q.tmp", [("1", "d", 1)]).rename(root / name)
        write_run(root / "runs" / "a.run", [("1", "d", 1)])
        assert load_collection(root).qrels.name == name


def test_ambiguous_qrels_and_duplicate_systems(tmp_path):
    write_qrels(tmp_path / "c" / "qrels.txt", [("1", "d", 1)])
    write_qrels(tmp_path / "c" / "other.qrels", [("1", "d", 1)])
    with pytest.raises(RiskReportError, match="several qrels files"):
        load_collection(tmp_path / "c")
    write_qrels(tmp_path / "d" / "qrels.txt", [("1", "d", 1)])
    write_run(tmp_path / "d" / "runs" / "a.run", [("1", "d", 1)])
    write_run(tmp_path / "d" / "runs" / "a.txt", [("1", "d", 1)])
    with pytest.raises(InputFormatError, match="two run files name the system 'a'"):
        load_collection(tmp_path / "d")


def test_config_errors(tiny_collection):
    (tiny_collection / "collection.toml").write_text('baseine = "base"\n')
    with pytest.raises(InputFormatError, match="unknown key.*baseine"):
        load_collection(tiny_collection)
    (tiny_collection / "collection.toml").write_text("alphas = [0, -1]\n")
    with pytest.raises(InputFormatError, match="non-negative"):
        load_collection(tiny_collection)


def test_by_name_under_data_dir(tiny_collection, monkeypatch):
    monkeypatch.setenv("RISKREPORT_DATA", str(tiny_collection.parent))
    assert load_collection("tiny").path == tiny_collection
    with pytest.raises(UnknownNameError, match=r"Unknown collection 'tinny'. Did you mean 'tiny'\?.*tiny"):
        load_collection("tinny")
    with pytest.raises(RiskReportError, match=r"\.\./tiny does not exist \(\.\. exists, tiny does not\)"):
        load_collection("../tiny")  # a path, never looked up as a name


def test_resolve_parameters_errors(tiny_collection):
    p = resolve_parameters(tiny_collection)
    assert (p.measure, p.baseline, p.alphas, p.systems) == ("P@2", "base", [0.0, 1.0, 5.0], ["base", "good", "risky"])
    with pytest.raises(UnknownNameError, match="Unknown baseline 'bsae'. Did you mean 'base'.*good, risky"):
        resolve_parameters(tiny_collection, baseline="bsae")
    with pytest.raises(UnknownNameError, match="Unknown measure 'nDGC@10'"):
        resolve_parameters(tiny_collection, measure="nDGC@10")
    with pytest.raises(RiskReportError, match="alphas"):
        resolve_parameters(tiny_collection, alphas=[-1])
    assert resolve_parameters(tiny_collection, systems=["good"]).systems == ["base", "good"]


def test_run_files_without_qrels_are_named_when_the_collection_is_loaded(tmp_path):
    """Run files under runs/ or instances/ need a qrels file; a score table alone does not (it was a TypeError
    from the evaluation for instances/)."""
    for where in ("runs", "instances/x"):
        root = tmp_path / where.replace("/", "_")
        (root / "scores.csv").parent.mkdir(parents=True)
        (root / "scores.csv").write_text("system,topic,score\nb,1,0.5\nb,2,0.25\n")
        write_run(root / where / "i1.run", [("1", "d", 1)])
        with pytest.raises(RiskReportError, match=f"run files under {where.split('/')[0]}/ but no qrels file"):
            load_collection(root)
    (tmp_path / "scores_only").mkdir()
    (tmp_path / "scores_only" / "scores.csv").write_text("system,topic,score\nb,1,0.5\n")
    col = load_collection(tmp_path / "scores_only")
    assert col.scores_file().name == "scores.csv"
    with pytest.raises(RiskReportError, match="has no qrels file to evaluate run files with"):
        col.qrels_file()


def test_a_score_table_collection_without_topics_is_an_input_error(tmp_path):
    from riskreport.measures.topics import collection_topic_set

    (tmp_path / "scores.csv").write_text("system,topic,score\nb,1,0.5\n")
    col = load_collection(tmp_path)
    assert collection_topic_set(col, ["2", "1", "2"]) == (["1", "2"], {"1", "2"})
    with pytest.raises(InputFormatError, match="no topic has a score") as info:
        collection_topic_set(col, [])
    assert info.value.path.name == "scores.csv"


def test_a_score_table_given_as_a_collection_is_named_after_its_file(tmp_path):
    """`--collection my-scores.csv` gave "Risk report: own" and reports/own/ (issue 33, point 9)."""
    own = tmp_path / "own"
    own.mkdir()
    for name in ("my-scores.csv", "scores.csv", "runs 2024 (final).csv"):
        (own / name).write_text("system,topic,score\nb,1,0.5\nc,1,0.25\n")
    assert load_collection(own / "my-scores.csv").name == "my-scores"
    assert load_collection(own / "my-scores.csv").title == "my-scores"
    assert load_collection(own / "scores.csv").name == "own"
    assert load_collection(own / "runs 2024 (final).csv").name == "runs-2024-final"


def test_a_folder_without_a_collection_suggests_its_score_table(tmp_path):
    """A folder like TREC-COVID round 1's (no qrels, no scores.csv, but a CSV score table beside a system list and
    per-rank gains): the error names the score table, which works as the collection (issue 39)."""
    folder = tmp_path / "trec-covid-round1"
    folder.mkdir()
    (folder / "round1_data.csv").write_text("\ufeffsystem,topic,score\na,1,0.5\nb,1,0.25\n")
    (folder / "round1_pooled.csv").write_text("system,pooled\na,1\nb,0\n")
    (folder / "round1_rbpgain.csv").write_text("system,topic,rank,score\na,1,1,0\n")
    (folder / "notes.csv").write_bytes(b"\xff\xfe not text")
    with pytest.raises(RiskReportError, match="is not a collection") as error:
        load_collection(folder)
    message = str(error.value)
    assert f"give that file itself as the collection, {folder / 'round1_data.csv'}." in message
    assert "pooled" not in message and "rbpgain" not in message and "notes" not in message
    assert load_collection(folder / "round1_data.csv").scores == (folder / "round1_data.csv").resolve()
    (folder / "round2_data.csv").write_text("system,topic,score,measure\na,1,0.5,P@5\n")
    with pytest.raises(RiskReportError, match="give one of them itself as the collection: .*round1_data.csv, .*round2"):
        load_collection(folder)
    for table in folder.glob("round*_data.csv"):
        table.unlink()
    with pytest.raises(RiskReportError, match=r"and no scores.csv\.$"):
        load_collection(folder)
