"""LaTeX tables: booktabs, escaping, bold best values, significance superscripts; they compile."""

from __future__ import annotations

import shutil
import subprocess

import pandas as pd
import pytest

from riskreport.render.tabular.latex import escape, latex_table, mark

TABLE = pd.DataFrame(
    {
        "system": ["bm25_rm3", "dense-a", "50% & co"],
        "alpha": [1.0, 1.0, 1.0],
        "urisk": [-0.0123, 0.0456, float("nan")],
        "p_value": [0.00001, 0.2, 0.04],
    }
)


def test_escaping_bold_marks_and_legend():
    marks = pd.DataFrame({"urisk": ["▼", "", ""]}, index=TABLE.index)
    tex = latex_table(
        TABLE,
        caption="URisk at α = 1 (higher is better).",
        label="tab:urisk",
        best={"urisk": "max"},
        marks=marks,
        legend="▼ significant risk after Holm correction.",
    )
    assert r"bm25\_rm3" in tex and r"50\% \& co" in tex
    assert r"\textbf{0.0456}" in tex and r"-0.0123$^{\blacktriangledown}$" in tex
    assert r"$<$0.0001" in tex and " -- " in tex and "& 1 &" in tex
    assert r"$^{\blacktriangledown}$ significant risk" in tex
    assert tex.count(r"\toprule") == tex.count(r"\midrule") == tex.count(r"\bottomrule") == 1
    assert r"URisk at $\alpha$ = 1" in tex and "α" not in tex  # plain pdflatex prints no Unicode α


def test_column_groups_and_errors():
    wide = pd.DataFrame({"system": ["a"], "nDCG@10": [0.3], "p": [0.01], "AP": [0.2], "p ": [0.5]})
    tex = latex_table(wide, caption="c", label="l", column_groups=[("", 1), ("nDCG@10", 2), ("AP", 2)])
    assert r"\multicolumn{2}{c}{nDCG@10}" in tex and r"\cmidrule(lr){2-3}" in tex and r"\cmidrule(lr){4-5}" in tex
    with pytest.raises(ValueError, match="span"):
        latex_table(wide, caption="c", label="l", column_groups=[("x", 2)])
    with pytest.raises(ValueError, match="no LaTeX form"):
        mark("☃")
    assert escape("a_b^c~") == r"a\_b\textasciicircum{}c\textasciitilde{}"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine (pdflatex) installed")
def test_tables_compile_with_plain_pdflatex(tmp_path):
    marks = pd.DataFrame({"urisk": ["▼", "▲", ""]}, index=TABLE.index)
    (tmp_path / "t.tex").write_text(
        latex_table(
            TABLE,
            caption="Risk of $x_1$ & co, α = 1",
            label="tab:t",
            marks=marks,
            best={"urisk": "max"},
            legend="▼ risk, ▲ reward.",
        )
    )
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs,amssymb}\n\\begin{document}\n\\input{t.tex}\n\\end{document}\n"
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "paper.pdf").stat().st_size > 1000


def test_long_tables_break_across_pages(tmp_path):
    """A campaign's 106 challengers do not fit a float: more than LONG_ROWS rows make a longtable, which compiles."""
    from riskreport.render.tabular.latex import LONG_ROWS

    long = pd.DataFrame({"system": [f"run_{i}" for i in range(106)], "urisk": [-i / 100 for i in range(106)]})
    marks = pd.DataFrame({"urisk": ["▼" if i % 3 == 0 else "" for i in range(106)]})
    text = latex_table(
        long, caption="URisk of 106 runs.", label="tab:long", marks=marks, best={"urisk": "max"}, legend="▼ risk."
    )
    assert "\\begin{longtable}{lr}" in text and "\\endhead" in text and "\\begin{table}" not in text
    assert "needs \\usepackage{booktabs,amssymb,longtable}" in text.splitlines()[0]
    assert "\\begin{table}" in latex_table(long.head(LONG_ROWS), caption="c", label="l")
    if shutil.which("pdflatex") is None:
        pytest.skip("no pdflatex")
    (tmp_path / "t.tex").write_text(text)
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs,amssymb,longtable}\n"
        "\\begin{document}\n\\input{t.tex}\n\\end{document}\n"
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "Output written on paper.pdf (3 pages" in done.stdout
