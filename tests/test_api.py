"""The Python face: entry points exported, the module docstring runs, API misuse raises the project's errors."""

import doctest

import pandas as pd
import pytest

import riskreport as rr
from riskreport.errors import UnknownNameError
from riskreport.stats import inference


def test_module_docstring_is_a_running_example(cache_dir):
    result = doctest.testmod(rr, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5 and result.failed == 0


@pytest.mark.parametrize(
    "module", ["riskreport.stats.risk_measures", "riskreport.render.tabular.latex", "riskreport.stats.significance"]
)
def test_module_examples_run(module):
    import importlib

    result = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted >= 1 and result.failed == 0


def test_entry_points_are_exported():
    assert {"run_report", "run_batch", "check_report_options"} <= set(rr.__all__)
    assert all(hasattr(rr, name) for name in rr.__all__) and len(set(rr.__all__)) == len(rr.__all__)


MATRIX = pd.DataFrame([[0.5, 0.2, 0.9], [0.6, 0.1, 0.9]], index=["base", "new"], columns=["t1", "t2", "t3"])


@pytest.mark.parametrize(
    "call",
    [
        lambda m: rr.risk_table(m, "bsae", [0]),
        lambda m: rr.deltas(m, "nope"),
        lambda m: rr.effectiveness_table(m, "nope"),
        lambda m: rr.zrisk_single(m, "x", [1]),
        lambda m: inference.bootstrap_distribution(m, "base", "nwe", 1, samples=10),
    ],
)
def test_a_wrong_system_name_is_an_unknown_name(call):
    with pytest.raises(UnknownNameError, match="Available"):
        call(MATRIX)


def test_a_transposed_matrix_says_so():
    with pytest.raises(UnknownNameError, match="looks transposed"):
        rr.topic_risk(MATRIX.T, "base", [0])
