"""What a reader meets (issue 24, point 5): colours, headers, contents, flags and table widths."""

from __future__ import annotations

import matplotlib
import nbformat
import numpy as np
import pandas as pd
import pytest

import riskreport as rr
from riskreport.render import export, plots, report
from riskreport.run.cli import commands as cli


def test_heatmap_uses_the_orange_loss_green_win_colours():
    deltas = pd.DataFrame({"system": ["a"] * 3, "topic": ["1", "2", "3"], "delta": [-0.5, 0.0, 0.5]})
    ax = plots.delta_heatmap(deltas, "b", "nDCG@10")
    cmap = ax.images[0].get_cmap()
    assert matplotlib.colors.to_hex(cmap(0.0)) == plots.RISK_COLOURS["loss"]
    assert matplotlib.colors.to_hex(cmap(1.0)) == plots.RISK_COLOURS["win"]
    assert min(cmap(0.5)[:3]) > 0.99  # 0 is white
    assert "orange: loss, green: win" in ax.get_title()
    matplotlib.pyplot.close(ax.figure)


@pytest.mark.parametrize(
    "given, expected",
    [(["0", "1", "5"], [0.0, 1.0, 5.0]), (["1,5"], [1.0, 5.0]), (["0", "1,5,10"], [0.0, 1.0, 5.0, 10.0])],
)
def test_alpha_flag_takes_spaces_and_commas(given, expected, monkeypatch):
    from riskreport.run.report import runner

    seen = {}
    monkeypatch.setattr(runner, "run_report", lambda template, **kw: seen.update(kw) or __import__("pathlib").Path("."))
    assert cli.main(["run", "--alpha", *given, "--quiet"]) == 0
    assert seen["alphas"] == expected


@pytest.mark.parametrize("value", ["-1", "1,-5", "x", "nan"])
def test_alpha_flag_errors_name_the_flag(value, capsys):
    """A bad α is a usage error (exit 2, like every flag's), naming the flag and what it takes."""
    with pytest.raises(SystemExit) as stopped:
        cli.main(["run", "--alpha", value, "--quiet"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "--alpha" in err and "≥ 0" in err and "alphas must be" not in err


def test_a_section_with_nothing_to_show_leaves_the_page_and_its_contents():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("## 4. Kept"),
        nbformat.v4.new_code_cell("x"),
        nbformat.v4.new_markdown_cell("## 5. Per-rank gains\n\ntext"),
        nbformat.v4.new_markdown_cell("more"),
        nbformat.v4.new_code_cell("y"),
        nbformat.v4.new_markdown_cell("## 6. Next"),
    ]
    nb.cells[4].outputs = [nbformat.v4.new_output("display_data", {"text/html": report.omitted("Not fitted").markup})]
    tagged = [("remove_cell" in c.metadata.get("tags", [])) for c in export.omit_sections(nb).cells]
    assert tagged == [False, False, True, True, True, False]
    kept = [c.source for c in nb.cells if c.cell_type == "markdown" and "remove_cell" not in c.metadata.get("tags", [])]
    assert kept == ["## 4. Kept", "## 5. Next"], "the sections after an omitted one are numbered again"


def test_renumbered_sections_take_their_references_along():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("## 1. Data\n\nThe table in section 3 says more."),
        nbformat.v4.new_markdown_cell("## 3. Diagnostics"),
    ]
    export.renumber_sections(nb)
    assert [c.source for c in nb.cells] == ["## 1. Data\n\nThe table in section 2 says more.", "## 2. Diagnostics"]


def test_bayesian_header_shows_the_credible_level_not_a_significance_level():
    p = rr.resolve_parameters("demo", sig_level=0.05)
    page = report.header(p, "0" * 64, credible_level=0.95).markup
    assert "Credible-interval level" in page and "0.95 (equal-tailed" in page and "Significance level" not in page
    assert "Significance level" in report.header(p, "0" * 64).markup


def test_risk_table_fits_the_page_its_counts_apart():
    p = rr.resolve_parameters("demo", measure="nDCG@10", alphas=[0, 1, 2, 5, 10])
    matrix = rr.evaluate(p.collection, p.measure, p.systems).matrix()
    risk = rr.risk_table(matrix, p.baseline, p.alphas, p.measure)
    tests = rr.inference.tests_table(matrix, p.baseline, p.alphas, p.measure, samples=200)
    _, summary = rr.significance.report_verdicts(risk, tests, None, p.sig_level)
    wide = report.risk_wide(risk, summary)
    assert len(wide.data.columns) == 1 + 3 * 5 and "wins" not in wide.data.columns
    assert "-7.03" in wide.to_html() or "-7.04" in wide.to_html()  # TRisk to 2 decimals (weak-tfidf, α = 10)
    counts = report.risk_counts(risk, summary).data
    assert list(counts.columns) == [
        "system",
        "wins",
        "losses",
        "ties",
        "FRisk",
        "FReward",
        "FRisk/FReward",
        "losses > 20%",
    ]
    geo = rr.pools.georisk_wide(rr.pools.pool_analysis(matrix, p.baseline, p.alphas, p.measure), p.baseline)
    assert len(geo.columns) == 3 + 3 * 5 and geo["GeoRisk (rank) α = 10"].iloc[0].endswith("(1)")
    assert np.isfinite(counts["FRisk"]).all()
