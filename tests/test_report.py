"""Presentation state a template holds: one Page numbers its figures and knows where its tables go."""
import pandas as pd
import pytest

from riskreport import report
from riskreport.errors import ParameterError


def test_each_page_numbers_its_own_figures():
    first, second = report.Page(), report.Page()
    assert "Figure 1." in first.caption("a")._repr_html_()
    assert "Figure 2." in first.caption("b")._repr_html_()
    assert "Figure 1." in second.caption("c")._repr_html_()       # no counter shared between pages


def test_page_context_says_where_tables_go_and_how_many_threads(tmp_path):
    page = report.Page({"tables_dir": str(tmp_path / "t"), "workers": 3, "inputs_sha256": "ab" * 32})
    path = page.save_table(pd.DataFrame({"x": [1.0]}), "name")
    assert path == tmp_path / "t" / "name.csv" and path.read_text() == "x\n1\n"
    assert page.workers == 3 and report.Page(None).workers == 1 and str(report.Page().tables_dir) == "tables"
    with pytest.raises(ParameterError, match="context has unknown keys"):
        report.Page({"tables": "x"})
