"""SPEC §6 values on the real TREC 2012 Web track data (skipped when ../shared is absent)."""
import pytest

from riskreport.collection import load_collection
from riskreport.evaluation import evaluate
from riskreport.risk import urisk_table


def test_web2012_err_ndcg_and_urisk(web2012, cache_dir):
    col = load_collection(web2012)
    err = evaluate(col, "ERR@20").matrix()
    assert err.shape == (8, 50)
    assert err.loc["indriCASP"].mean() == pytest.approx(0.19466, abs=5e-6)
    ndcg = evaluate(col, "nDCG(dcg='exp-log2')@20").matrix()
    assert ndcg.loc["indriCASP"].mean() == pytest.approx(0.11177, abs=5e-6)
    risk = urisk_table(err, "indriCASP", [5]).set_index("system")
    assert risk.loc["indri-ql-cata-filtered", "urisk"] == pytest.approx(-0.23790, abs=5e-6)
