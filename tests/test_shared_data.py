"""docs/measures (worked examples) values on the real TREC 2012 Web track data (skipped when ../shared is absent)."""

import pytest

from riskreport.io.collection import load_collection
from riskreport.measures.evaluation import evaluate
from riskreport.stats.risk import risk_table


def test_web2012_err_ndcg_and_urisk(web2012, cache_dir):
    col = load_collection(web2012)
    err = evaluate(col, "ERR@20").matrix()
    assert err.shape == (8, 50)
    assert err.loc["indriCASP"].mean() == pytest.approx(0.19466, abs=5e-6)
    ndcg = evaluate(col, "nDCG(dcg='exp-log2')@20").matrix()
    assert ndcg.loc["indriCASP"].mean() == pytest.approx(0.11177, abs=5e-6)
    risk = risk_table(err, "indriCASP", [5]).set_index("system")
    assert risk.loc["indri-ql-cata-filtered", "urisk"] == pytest.approx(-0.23790, abs=5e-6)


def test_web2012_urisk_equals_gdeval(web2012, cache_dir):
    """URisk of all 7 challengers vs indriCASP at α 0, 1, 5, 10 equals, to the 5 decimals it prints, TREC 2013 gdeval 1.3
    (`gdeval.pl -c -riskAlpha α -baseline indriCASP.run qrels run`), recorded in tests/fixtures."""
    from pathlib import Path

    import pandas as pd

    expected = pd.read_csv(Path(__file__).parent / "fixtures" / "gdeval_web2012_risk.csv")
    col = load_collection(web2012)
    for measure, column in (("ERR@20", "err20"), ("nDCG(dcg='exp-log2')@20", "ndcg20")):
        ours = risk_table(evaluate(col, measure).matrix(), "indriCASP", [0, 1, 5, 10])
        merged = ours.merge(expected, on=["alpha", "system"])
        assert len(merged) == 28
        assert (merged["urisk"] - merged[column]).abs().max() <= 5e-6 + 1e-12  # half of gdeval's last digit
        assert (merged["urisk"].round(5) - merged[column]).abs().max() < 1e-12  # equal as gdeval prints it
