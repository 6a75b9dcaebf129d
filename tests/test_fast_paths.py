"""Issue 40: every faster formulation equals the plain one it replaces, value for value."""

from __future__ import annotations

import numpy as np

from riskreport.stats import bootstrap as bs


def test_bootstrap_t_quantiles_by_partition_equal_the_sorted_rows():
    """The bootstrap-t limits read their order statistics by a partial sort: the same values, bit for bit, as the
    quantiles of the sorted t* (NaN where SE* = 0, ordered last; NaN where no resample has an SE)."""
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(0, 0.1, (40, 30)), 2)
    x[:5, :25] = 0  # sparse rows: many resamples with SE* = 0
    x[5] = 0  # no variation at all
    x[6, :] = 0
    x[6, 0] = 0.3  # one non-zero topic
    levels = np.array([0.9, 0.95, 0.999])
    means, ses = bs.bootstrap_moments(x, None, weights=bs.DrawnWeights(30, 2000, 1))
    theta = x.mean(axis=-1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(ses > 0, (means - theta) / np.where(ses > 0, ses, 1), np.nan)
    plain = [bs._quantiles(np.sort(t, axis=-1), np.full(len(x), q)) for q in (*(1 - levels) / 2, *(1 + levels) / 2)]
    fast = bs._order_quantiles(
        np.where(np.isnan(t), np.inf, t),
        [np.full(len(x), q) for q in (*(1 - levels) / 2, *(1 + levels) / 2)],
        valid=(ses > 0).sum(axis=-1),
    )
    for a, b in zip(plain, fast):
        assert np.array_equal(a, b, equal_nan=True)
    assert np.isnan(plain[0][5]) and (ses[0] == 0).any()
    out = bs._interval_chunk(x, levels, ["bootstrap_t"], means, ses)["bootstrap_t"]
    se = (x.std(axis=-1, ddof=1) / np.sqrt(30))[:, None]
    expected = np.stack([theta - np.stack(plain[3:], -1) * se, theta - np.stack(plain[:3], -1) * se], -1)
    expected = np.where((se == 0)[..., None], theta[..., None], expected)
    assert np.array_equal(out, expected, equal_nan=True)


def test_irregular_spaces_found_by_numpy_as_by_searching_the_bytes():
    """The run reader's check for two spaces in a row or a space beside a line break (numpy, a block at a time)
    agrees with searching the bytes for each pair, for pairs anywhere, across block boundaries too."""
    from riskreport.io import trec

    rng = np.random.default_rng(5)
    alphabet = np.frombuffer(b"ab \n\t", dtype=np.uint8)
    for _ in range(3000):
        data = rng.choice(alphabet, size=int(rng.integers(0, 12))).tobytes()
        expected = any(pair in data for pair in (b"  ", b"\n ", b" \n"))
        for block in (1, 2, 3, 1 << 20):
            assert trec._irregular_spaces(data, block) == expected, (data, block)


def test_native_values_are_what_ir_measures_iter_calc_yields():
    """run_files takes riskreport's evaluators' values a measure at a time (`_native_values`): the same values,
    in the same order per measure, as ir_measures' `iter_calc` (defaults for qrels topics a run lacks included)."""
    import pandas as pd

    from riskreport.measures import run_files

    rng = np.random.default_rng(11)
    qrels = pd.DataFrame(
        {
            "query_id": np.repeat(["1", "2", "3", "10"], 30),
            "doc_id": [f"d{i}" for i in rng.integers(0, 60, 120)],
            "relevance": rng.choice([-2, 0, 1, 2, 3], 120),
        }
    ).drop_duplicates(["query_id", "doc_id"])
    run = pd.DataFrame(
        {
            "query_id": pd.Series(np.repeat(["1", "2", "10", "77"], 40), dtype="str"),
            "doc_id": pd.Series([f"d{i}" for i in range(40)] * 4, dtype="str"),
            "score": np.round(rng.normal(size=160), 1),  # ties
        }
    )
    run_files._init_worker(
        qrels, ["ERR@5", "nDCG(dcg='exp-log2')@5", "Judged@5", "RBP(p=0.8)@10", "Judged@10"], worker=False
    )
    assert run_files._WORKER["native"]
    expected: dict = {}
    for metric in run_files._WORKER["evaluator"].iter_calc(run):
        expected.setdefault(metric.measure, []).append((metric.query_id, metric.value))
    found = {m: list(zip(t, v)) for m, t, v in run_files._native_values(run)}
    assert found == expected and len(found) == 5


def test_a_long_tables_key_changes_with_any_text_value(tmp_path):
    """The key under which a long CSV is kept digests a text column by its factorized codes and distinct values:
    the same content gives the same key, any changed, swapped or missing value another one."""
    import pandas as pd

    from riskreport.render.tabular.csv_writer import _written_key

    def key(values):
        return _written_key(pd.DataFrame({"system": pd.Series(values, dtype="str"), "x": 1.0}), tmp_path / "t.csv")

    base = ["a", "b", "a", "c", "", "ab"]
    keys = {
        key(variant)
        for variant in (
            base,
            ["a", "b", "a", "c", "", "a"],  # a value changed
            ["b", "a", "a", "c", "", "ab"],  # two swapped
            ["a", "b", "a", "c", None, "ab"],  # missing, not empty
            ["a", "b", "a", "c", "", "abc"],  # a longer value
            ["a", "ba", "", "c", "", "ab"],
        )
    }
    assert len(keys) == 6 and key(list(base)) == key(base) and None not in keys


def test_topic_tj_sets_shared_topic_ticks_once_per_column_and_every_panel_shows_them():
    """topic_tj's panels share x: the topic tick labels are set on the lowest panel of each column (the one that
    shows them); every panel still has the topics' tick positions, and only the lowest panels label them."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from riskreport.render import plots

    rng = np.random.default_rng(2)
    topics = [str(t) for t in range(301, 351)]
    data = pd.DataFrame(
        [(s, t, 0.0, d, d, d * 10) for s in ["a", "b", "c", "d", "e"] for t in topics for d in [rng.normal(0, 0.1)]],
        columns=["system", "topic", "alpha", "delta", "x", "tj"],
    )
    fig = plots.topic_tj(data, 1.97, "base", "ERR@20")
    fig.canvas.draw()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 5
    for i, ax in enumerate(axes):
        assert list(ax.get_xticks()) == list(range(0, 50, 2))
        shown = [t.get_text() for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
        lowest = i + 3 >= 5
        assert shown == (topics[::2] if lowest else []), i
    plt.close(fig)
