"""End to end: the template executed with papermill, exported to HTML, written atomically."""
import json
import shutil
import warnings

import nbformat
import pandas as pd
import pytest

from riskreport.errors import ReportExecutionError
from riskreport.runner import PROJECT_ROOT, run_report

TEMPLATE = PROJECT_ROOT / "templates" / "risk_report.ipynb"


@pytest.fixture
def report(tiny_collection, tmp_path, cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = run_report("risk_report", collection=str(tiny_collection), alphas=[0, 1, 5],
                            reports_dir=tmp_path / "reports")
    return folder


def test_report_folder(report, tmp_path):
    assert report.parent == tmp_path / "reports" / "tiny" / "risk_report"
    assert (report.parent / "latest").resolve() == report
    assert sorted(p.name for p in report.iterdir()) == ["params.json", "report.html", "report.ipynb", "tables"]
    html = (report / "report.html").read_text()
    for heading in ("Risk report: Tiny test collection", "1. Collection", "2. Effectiveness",
                    "3. Per-topic differences", "4. URisk across the α grid"):
        assert heading in html
    assert "resolve_parameters(" not in html            # code hidden
    assert "Template notes" not in html                # authoring cell removed
    assert "data:image/png;base64" in html             # figures embedded
    params = json.loads((report / "params.json").read_text())
    assert params["status"] == "ok" and params["parameters"]["baseline"] == "base"
    assert params["parameters"]["alphas"] == [0.0, 1.0, 5.0] and params["parameters"]["sig_level"] == 0.05
    assert set(params["versions"]) >= {"riskreport", "ir_measures", "papermill"}
    assert any(path.endswith("base.run") for path in params["collection"]["files_sha256"])


def test_report_tables(report):
    effectiveness = pd.read_csv(report / "tables" / "effectiveness.csv")
    assert list(effectiveness.columns) == ["system", "measure", "mean", "median", "sd", "n_topics"]
    assert effectiveness.set_index("system")["mean"].to_dict() == pytest.approx(
        {"base": 0.5, "good": 0.875, "risky": 0.5})
    risk = pd.read_csv(report / "tables" / "risk.csv")
    assert list(risk.columns) == ["system", "baseline", "measure", "alpha", "urisk", "wins", "losses", "ties"]
    risky = risk[risk["system"] == "risky"].set_index("alpha")["urisk"]
    assert risky.to_dict() == pytest.approx({0.0: 0.0, 1.0: -0.25, 5.0: -1.25})   # Δ = +.5 +.5 −.5 −.5


def test_failing_cell_keeps_failed_report_and_latest(report, tmp_path, tiny_collection):
    notebook = nbformat.read(TEMPLATE, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell('raise RuntimeError("boom in the template")'))
    broken = tmp_path / "broken.ipynb"
    nbformat.write(notebook, broken)
    shutil.copytree(report.parent, tmp_path / "before", symlinks=True)
    with pytest.raises(ReportExecutionError, match="RuntimeError: boom in the template") as info:
        run_report(str(broken), collection=str(tiny_collection), out=report)   # would replace the good report
    failed = info.value.kept
    assert failed.name.startswith("failed-") and (failed / "report.ipynb").is_file() and (failed / "report.html").is_file()
    assert "boom in the template" in (failed / "report.html").read_text()
    assert (report / "report.html").read_text() == (tmp_path / "before" / report.name / "report.html").read_text()
    assert (report.parent / "latest").resolve() == report
