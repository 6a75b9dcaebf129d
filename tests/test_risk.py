"""URisk and the win/loss counts: SPEC §6 worked example and invariants."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from riskreport.risk import risk_adjusted, urisk, urisk_table, win_loss_ties

# Thesis Table 2.9 (SPEC §6; topic 10's Δ is −0.8)
S = [0.4, 0.5, 0.1, 0.2, 0.2, 0.2, 0.0, 0.4, 0.3, 0.0, 0.5, 0.1, 0.4, 0.0, 0.1]
B = [0.1, 0.1, 0.7, 0.8, 0.6, 0.6, 0.7, 0.3, 0.3, 0.8, 0.7, 0.1, 0.5, 0.1, 0.8]


def test_spec_worked_example_urisk():
    delta = np.subtract(S, B)
    assert urisk(delta, [0, 1, 4, 9]) == pytest.approx([-0.25333, -0.56, -1.48, -3.01333], abs=5e-6)
    assert np.std(risk_adjusted(delta, [4])[0], ddof=1) == pytest.approx(1.590238, abs=5e-7)
    wins, losses, ties = win_loss_ties(delta)
    assert (wins, losses, ties) == (3, 10, 2)


def test_urisk_table_is_tidy():
    matrix = pd.DataFrame([S, B], index=["s", "b"], columns=[str(i) for i in range(1, 16)])
    table = urisk_table(matrix, "b", [0, 4], "ERR@20")
    assert list(table.columns) == ["system", "baseline", "measure", "alpha", "urisk", "wins", "losses", "ties"]
    assert table["urisk"].tolist() == pytest.approx([-0.253333, -1.48], abs=5e-7)
    assert table[["system", "baseline", "measure"]].drop_duplicates().values.tolist() == [["s", "b", "ERR@20"]]


scores = arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 30)),
                elements=st.floats(0, 1, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(scores, st.lists(st.floats(0, 50, allow_nan=False), min_size=2, max_size=6))
def test_urisk_invariants(x, alphas):
    delta = x - x[:1]
    values = urisk(delta, [0.0] + sorted(alphas))
    np.testing.assert_allclose(values[0], delta.mean(axis=1), atol=1e-12)      # URisk_0 = mean difference
    assert np.all(np.diff(values, axis=0) <= 1e-12)                            # non-increasing in α
    wins, losses, ties = win_loss_ties(delta)
    assert np.all(wins + losses + ties == x.shape[1])
