"""Resamples streamed in blocks (riskreport.stats.resampling): the same draws as one call, the same
intervals and p-values as the resamples held whole, and memory that does not grow with topics x samples."""

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from riskreport.stats import bootstrap as bs
from riskreport.stats import inference as inf
from riskreport.stats import resampling


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 37 draws: many blocks, the last one short, whatever the number of topics."""
    monkeypatch.setattr(resampling, "DRAWS_AT_ONCE", 37)


def test_block_rows_hold_a_bounded_number_of_draws(monkeypatch):
    monkeypatch.setattr(resampling, "DRAWS_AT_ONCE", 100)
    assert resampling.block_rows(7) == 14 and resampling.block_rows(100) == 1
    assert resampling.block_rows(1000) == 1  # never 0 resamples a block
    assert resampling.block_rows(0) == 100


@pytest.mark.parametrize("topics, samples", [(5, 23), (9, 4), (40, 1)])
def test_count_blocks_are_one_call_of_draws_with_replacement(topics, samples, small_blocks):
    blocks = list(resampling.count_blocks(topics, samples, np.random.default_rng(3)))
    starts = [start for start, _ in blocks]
    assert starts == list(range(0, samples, resampling.block_rows(topics)))
    counts = np.concatenate([block for _, block in blocks])
    draws = np.random.default_rng(3).integers(0, topics, size=(samples, topics))
    expected = np.stack([np.bincount(row, minlength=topics) for row in draws]).astype(float)
    assert np.array_equal(counts, expected) and (counts.sum(axis=1) == topics).all()


def test_flip_blocks_are_rng_choice_of_signs(small_blocks):
    blocks = list(resampling.flip_blocks(6, 25, np.random.default_rng(8)))
    assert [start for start, _ in blocks] == list(range(0, 25, 6))
    flips = np.concatenate([block for _, block in blocks])
    assert np.array_equal(flips, np.random.default_rng(8).choice([-1.0, 1.0], size=(25, 6)))


def test_all_flips_enumerate_every_sign_vector_once():
    flips = resampling.all_flips(4)
    assert flips.shape == (16, 4) and len({tuple(f) for f in flips}) == 16
    assert flips[0].tolist() == [1.0, 1.0, 1.0, 1.0] and flips[5].tolist() == [-1.0, 1.0, -1.0, 1.0]


def test_drawn_weights_stream_is_the_held_weights_and_can_be_read_again(small_blocks):
    stream = resampling.DrawnWeights(7, 30, seed=4)
    held = bs.drawn_weights(7, 30, np.random.default_rng(4))
    for _ in range(2):  # regenerated from the seed each time
        blocks = list(resampling.weight_rows(stream))
        assert len(blocks) == 6 and max(len(block) for _, block in blocks) == 5
        assert np.array_equal(np.concatenate([block for _, block in blocks]), held.T)
    assert stream.shape == (7, 30)
    [(start, rows)] = resampling.weight_rows(held)
    assert start == 0 and rows.base is held and np.array_equal(rows, held.T)


@pytest.mark.parametrize("with_se", [True, False])
def test_moments_and_intervals_from_the_stream_equal_those_from_held_weights(with_se, small_blocks):
    x = np.random.default_rng(2).normal(size=(2, 3, 9))
    stream, held = resampling.DrawnWeights(9, 400, seed=6), bs.drawn_weights(9, 400, np.random.default_rng(6))
    streamed, whole = (
        bs.bootstrap_moments(x, None, with_se=with_se, weights=stream),
        bs.bootstrap_moments(x, None, with_se=with_se, weights=held),
    )
    assert streamed[0] == pytest.approx(whole[0], rel=1e-13, abs=1e-15)
    assert (streamed[1] is None) == (not with_se)
    if with_se:
        assert streamed[1] == pytest.approx(whole[1], rel=1e-12, abs=1e-15)
    ci_stream = bs.confidence_intervals(x, [0.9, 0.99], None, weights=stream)
    ci_held = bs.confidence_intervals(x, [0.9, 0.99], None, weights=held)
    assert all(ci_stream[m] == pytest.approx(ci_held[m], rel=1e-12, abs=1e-14) for m in bs.CI_METHODS)


def test_intervals_in_several_groups_of_rows_equal_one_group(monkeypatch):
    x = np.random.default_rng(5).normal(size=(11, 8))
    weights = resampling.DrawnWeights(8, 500, seed=1)
    one = bs.confidence_intervals(x, [0.9], None, weights=weights, workers=2)
    monkeypatch.setattr(bs, "MEMORY_BUDGET", 8 * 500 * 3)  # 3 rows per group, the stream read 4 times
    groups = bs.confidence_intervals(x, [0.9], None, weights=weights, workers=2)
    assert all(np.array_equal(one[m], groups[m]) for m in bs.CI_METHODS)


def test_one_topic_gives_no_interval_in_every_group_of_rows(monkeypatch):
    monkeypatch.setattr(bs, "MEMORY_BUDGET", 8 * 50 * 2)  # 2 rows per group: 4 groups of 7 rows
    ci = bs.confidence_intervals(np.zeros((7, 1)), [0.9], None, weights=resampling.DrawnWeights(1, 50, seed=0))
    assert all(interval.shape == (7, 1, 2) and np.isnan(interval).all() for interval in ci.values())


@pytest.mark.parametrize("samples", [512, 300])  # exact enumeration (2^9 ≤ 512), then sampled flips
def test_streamed_randomisation_counts_the_same_extreme_flips(samples, small_blocks):
    x = np.random.default_rng(1).normal(0.2, 1, size=(4, 9))
    flips, exact = inf.sign_flips(9, samples, np.random.default_rng(2026))
    observed = np.abs(x.mean(axis=1))
    extreme = (np.abs(x @ flips.T / 9) >= observed[:, None] - 1e-12).sum(axis=1)
    expected = extreme / len(flips) if exact else (1 + extreme) / (1 + len(flips))
    assert exact == (samples == 512) and len(flips) == samples
    assert inf.randomisation_test(x, samples=samples, seed=2026) == pytest.approx(expected, rel=1e-14)


def _peak_bytes(compute) -> int:
    tracemalloc.start()
    try:
        compute()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_bootstrap_and_randomisation_never_hold_samples_times_topics(monkeypatch):
    """4,000 topics x 2,000 resamples is 64 MB of floats; with 20,000-draw blocks the tables stay far below."""
    monkeypatch.setattr(resampling, "DRAWS_AT_ONCE", 20_000)
    topics, samples = 4_000, 2_000
    rng = np.random.default_rng(0)
    matrix = pd.DataFrame(rng.random((3, topics)), index=["b", "s", "t"], columns=[str(t) for t in range(topics)])
    whole = topics * samples * 8
    peak = _peak_bytes(lambda: bs.bootstrap_table(matrix, "b", [0, 5], samples=samples, levels=[0.95]))
    assert peak < whole / 4, f"the bootstrap held {peak / 1e6:.0f} MB"
    delta = matrix.loc[["s", "t"]].to_numpy() - matrix.loc["b"].to_numpy()
    peak = _peak_bytes(lambda: inf.risk_randomisation_test(delta, [0, 5], samples=samples))
    assert peak < whole / 4, f"the randomisation test held {peak / 1e6:.0f} MB"
