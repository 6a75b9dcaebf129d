"""The LETOR reader and fold folders: values as written, clear errors for bad input, the real sample in ../shared."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import SHARED_DATA

from riskreport.errors import InputFormatError, RiskReportError, UnknownNameError
from riskreport.io.letor import choose_folds, find_folds, load_letor_folder, read_letor, read_run_scores

LETOR_SAMPLE = SHARED_DATA / "letor-sample"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_reads_labels_queries_and_sparse_features(tmp_path):
    path = write(
        tmp_path / "train.txt",
        "2 qid:10 1:0.5 3:-1.25e-1 # doc A\n0 qid:10 2:7\n\n# a comment line\n1 qid:3 3:.5\t4:1E2 \r\n",
    )
    data = read_letor(path)
    assert data.labels.tolist() == [2, 0, 1]
    assert data.query_ids.tolist() == [10, 3] and data.bounds.tolist() == [0, 2, 3]
    np.testing.assert_array_equal(
        data.features, np.array([[0.5, 0, -0.125, 0], [0, 7, 0, 0], [0, 0, 0.5, 100]], dtype=np.float32)
    )
    assert data.lines.tolist() == [1, 2, 5]
    assert data.feature(4).tolist() == [0, 0, 100] and data.feature(9).tolist() == [0, 0, 0]


def test_gzip_and_width(tmp_path):
    path = tmp_path / "test.txt.gz"
    path.write_bytes(gzip.compress(b"1 qid:1 2:0.25\n"))
    data = read_letor(path).with_width(5)
    assert data.features.shape == (1, 5) and data.features[0, 1] == 0.25


@pytest.mark.parametrize(
    ("line", "problem", "column"),
    [
        ("x qid:1 1:0.5", "relevance label is not a number", 1),
        ("1.5 qid:1 1:0.5", "not a non-negative whole number", 1),
        ("-1 qid:1 1:0.5", "not a non-negative whole number", 1),
        ("1 1:0.5", "no query id", 3),
        ("1 qid:a 1:0.5", "no query id", 3),
        ("1", "no query id", 2),
        ("1 qid:1 0.5", "not '<id>:<value>'", 9),
        ("1 qid:1 0:0.5", "feature id is not a whole number ≥ 1", 9),
        ("1 qid:1 f2:0.5", "feature id is not a whole number ≥ 1", 9),
        ("1 qid:1 2:abc", "feature value is not a number", 9),
        ("1 qid:1 2:1e", "feature value is not a number", 9),
        ("1 qid:1 2:inf", "feature value is not a number", 9),
        ("1 qid:1 2:1e999", "too large for a 32-bit float", 9),  # read as inf before: the literal inf is refused
        ("1 qid:1 2:-4e38", "too large for a 32-bit float", 9),  # finite in float64, inf in float32
        ("1 qid:1 2:0.1 2:0.3", "do not increase", 15),
        ("1 qid:1 3:0.1 2:0.3", "do not increase", 15),
    ],
)
def test_bad_line_names_file_line_column_and_expectation(tmp_path, line, problem, column):
    path = write(tmp_path / "bad.txt", f"0 qid:1 1:0.1\n{line}\n")
    with pytest.raises(InputFormatError) as error:
        read_letor(path)
    message = str(error.value)
    assert message.startswith(f"{path}, line 2: ") and problem in message and f"column {column} " in message
    assert "(expected " in message and error.value.line == 2


def test_the_largest_float32_value_is_read(tmp_path):
    features = read_letor(write(tmp_path / "big.txt", "1 qid:1 2:3.4e38 3:-1e-50\n")).features
    assert features[0, 1:].tolist() == [float(np.float32(3.4e38)), 0.0]


def test_queries_must_be_contiguous(tmp_path):
    path = write(tmp_path / "train.txt", "1 qid:1 1:1\n0 qid:2 1:1\n0 qid:2 1:0\n1 qid:1 1:0\n")
    with pytest.raises(
        InputFormatError,
        match=r"line 4: query 1 appears again after other queries \(its lines start "
        r"at line 1 and stop before line 2\).*sort the file by query id",
    ):
        read_letor(path)


def test_empty_and_missing_files(tmp_path):
    with pytest.raises(InputFormatError, match="no document lines"):
        read_letor(write(tmp_path / "empty.txt", "# nothing\n\n"))
    with pytest.raises(RiskReportError, match="does not exist"):
        read_letor(tmp_path / "missing.txt")
    with pytest.raises(InputFormatError, match="cannot be read"):
        read_letor(write(tmp_path / "broken.txt.gz", "not gzip"))


def test_mslr_fold_layout_and_single_folder(tmp_path):
    for fold in ("Fold1", "Fold2", "Fold10"):
        for split in ("train", "vali", "test"):
            write(tmp_path / "mslr" / fold / f"{split}.txt", f"1 qid:{len(split)} 1:0.5\n0 qid:{len(split)} 2:1\n")
    folds = find_folds(tmp_path / "mslr")
    assert list(folds) == ["Fold1", "Fold2", "Fold10"]
    assert set(folds["Fold1"].files) == {"train", "vali", "test"}
    assert folds["Fold2"].read()["test"].n_features == 2
    write(tmp_path / "flat" / "train.txt", "1 qid:1 1:1\n")
    write(tmp_path / "flat" / "test.txt", "1 qid:2 1:1\n")
    assert list(find_folds(tmp_path / "flat")) == ["flat"]
    folder = load_letor_folder(str(tmp_path / "mslr"))
    with pytest.raises(UnknownNameError, match="Unknown fold 'Fold3'.*Fold1, Fold2, Fold10"):
        choose_folds(folder, ["Fold3"])


def test_incomplete_folders_are_explained(tmp_path):
    write(tmp_path / "a" / "Fold1" / "train.txt", "1 qid:1 1:1\n")
    with pytest.raises(RiskReportError, match="fold Fold1 has no test.txt"):
        find_folds(tmp_path / "a")
    (tmp_path / "b").mkdir()
    with pytest.raises(RiskReportError, match="holds no LETOR folds"):
        find_folds(tmp_path / "b")


def test_run_scores_file(tmp_path):
    table = read_run_scores(write(tmp_path / "runs.csv", "system,topic,score\nbm25,1,0.5\nbm25,2,0.25\n"))
    assert table["topic"].tolist() == [1, 2]
    with pytest.raises(InputFormatError, match="line 3.*whole-number query id"):
        read_run_scores(write(tmp_path / "bad.csv", "system,topic,score\nbm25,1,0.5\nbm25,two,0.25\n"))
    with pytest.raises(InputFormatError, match="no column.*score"):
        read_run_scores(write(tmp_path / "cols.csv", "system,topic\nbm25,1\n"))


def test_demo_data_is_synthetic_seeded_and_readable(tmp_path):
    from riskreport.io.letor_demo import N_QUERIES, build_letor_demo, generate_letor_demo

    first, again = build_letor_demo(7), build_letor_demo(7)
    assert all(np.array_equal(first[key], again[key]) for key in first)
    folder = load_letor_folder(str(generate_letor_demo(tmp_path / "demo", seed=7)))
    assert "SYNTHETIC" in (tmp_path / "demo" / "README.md").read_text() and folder.config["baseline"] == "feature:110"
    fold = folder.folds["Fold1"].read()
    assert fold["train"].n_features == 136
    assert sum(d.n_queries for d in fold.values()) == N_QUERIES
    assert not set(fold["train"].query_ids) & set(fold["test"].query_ids)


@pytest.mark.skipif(not LETOR_SAMPLE.is_dir(), reason="../shared/data/letor-sample is absent")
def test_real_letor_sample():
    data = read_letor(LETOR_SAMPLE / "train.txt")
    assert (data.n_documents, data.n_queries) == (3005, 201)
    assert data.query_ids[0] == 1 and data.query_ids[-1] == 201 and data.group_sizes.sum() == 3005
    assert set(np.unique(data.labels)) <= {0, 1, 2, 3, 4}
    first = (LETOR_SAMPLE / "train.txt").read_text().splitlines()[0].split()
    for field in first[2:]:
        number, value = field.split(":")
        assert data.features[0, int(number) - 1] == np.float32(value)
    test = read_letor(LETOR_SAMPLE / "test.txt")
    assert (test.n_documents, test.n_queries) == (768, 50) and test.query_ids[0] == 1001
    assert list(find_folds(LETOR_SAMPLE)) == ["letor-sample"]
