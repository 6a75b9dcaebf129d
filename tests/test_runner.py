"""End to end: the template executed with papermill, exported to HTML, written atomically."""

import json
import os
import re
import shutil
import subprocess
import warnings

import nbformat
import numpy as np
import pandas as pd
import pytest

from riskreport.errors import ParameterError, ReportExecutionError
from riskreport.io.provenance import inputs_digest
from riskreport.run.report.runner import PROJECT_ROOT, fingerprint, plan_report, run_report

TEMPLATE = PROJECT_ROOT / "templates" / "risk_report.ipynb"


@pytest.fixture
def report(tiny_collection, tmp_path, cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        environment = dict(os.environ)
        folder = run_report(
            "risk_report",
            collection=str(tiny_collection),
            alphas=[0, 1, 5],
            reports_dir=tmp_path / "reports",
            figure_formats="png,pdf",  # examples/paper includes a PDF figure
        )
    assert dict(os.environ) == environment  # the kernel gets what it needs as parameters, not through os.environ
    return folder


def test_report_folder(report, tmp_path):
    assert report.parent == tmp_path / "reports" / "tiny" / "risk_report"
    assert (report.parent / "latest").resolve() == report
    assert sorted(p.name for p in report.iterdir()) == [
        "figures",
        "params.json",
        "report.html",
        "report.ipynb",
        "summary.json",
        "tables",
    ]
    assert sorted(p.name for p in (report / "tables").iterdir()) == [
        "bootstrap.csv",
        "bootstrap.tex",
        "effectiveness.csv",
        "effectiveness.tex",
        "georisk.csv",
        "georisk.tex",
        "mixed_systems.csv",
        "risk.csv",
        "risk.tex",
        "tests.csv",
        "topics.csv.gz",
        "tstar.csv",
        "tukey.csv",
        "verdicts.csv",
    ]
    assert {p.suffix for p in (report / "figures").iterdir()} == {".pdf", ".png"}
    assert json.loads((report / "params.json").read_text())["figure_formats"] == ["png", "pdf"]
    html = (report / "report.html").read_text()
    for heading in (
        "Risk report: Tiny test collection",
        "Verdicts at a glance",
        "1. Collection",
        "2. Effectiveness",
        "3. Per-topic differences",
        "4. Risk against the baseline: URisk and TRisk",
        "5. Exploratory topic analysis",
        "6. Multiple baselines: ZRisk, GeoRisk and T*Risk",
        "7. Rank agreement across α",
        "8. Is the risk real?",
        "9. Paired tests",
        "10. A closer look",
        "11. Shape diagnostics",
        "12. All systems at once",
        "13. Do the rankings agree?",
        "Methods",
    ):
        assert heading in html
    assert "resolve_parameters(" not in html  # code hidden
    assert "Template notes" not in html  # authoring cell removed
    assert "data:image/png;base64" in html  # figures embedded
    params = json.loads((report / "params.json").read_text())
    assert params["status"] == "ok" and params["parameters"]["baseline"] == "base"
    assert params["parameters"]["alphas"] == [0.0, 1.0, 5.0] and params["parameters"]["sig_level"] == 0.05
    assert set(params["versions"]) >= {"riskreport", "ir_measures", "papermill"}
    assert any(path.endswith("base.run") for path in params["collection"]["files_sha256"])
    index = json.loads((tmp_path / "reports" / "index.json").read_text())  # a plain run updates the index too
    assert [(e["path"], e["status"], e["latest"]) for e in index["reports"]] == [
        (f"tiny/risk_report/{report.name}", "ok", True)
    ]
    if shutil.which("pdflatex"):  # the report's tables and figures go into a paper as they are
        done = subprocess.run(
            [
                "pdflatex",
                "-interaction=nonstopmode",
                "-halt-on-error",
                "-output-directory",
                str(tmp_path),
                f"\\def\\report{{{report}}}\\input{{paper.tex}}",
            ],
            cwd=PROJECT_ROOT / "examples" / "paper",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-2000:]
        assert "Output written on" in done.stdout and "tab:tiny:risk" in (report / "tables" / "risk.tex").read_text()


def test_runner_context_reaches_the_kernel_but_not_the_fingerprint(report, tiny_collection):
    record = json.loads((report / "params.json").read_text())
    assert "context" not in record["parameters"]
    html = (report / "report.html").read_text(encoding="utf-8")
    assert inputs_digest(record["collection"]["files_sha256"])[:16] in html  # the runner's hashes, not re-hashed
    assert "Figure 1." in html and "Figure 2." in html
    assert html.count("<img src='data:image/png;base64,") == len(list((report / "figures").glob("*.png")))
    planned = {"collection": str(tiny_collection), "alphas": [0, 1, 5]}
    assert plan_report("risk_report", **planned, figure_formats=["pdf", "png"]).fingerprint == record["fingerprint"]
    default = plan_report("risk_report", **planned)  # PNG alone: the digest of a record without figure formats
    assert default.fingerprint != record["fingerprint"] and default.record["figure_formats"] == ["png"]
    assert fingerprint({k: v for k, v in default.record.items() if k != "figure_formats"}) == default.fingerprint
    with pytest.raises(ParameterError, match="figure_formats: unknown format"):
        plan_report("risk_report", **planned, figure_formats="png,gif")
    with pytest.raises(ParameterError, match="'context' is set by riskreport run"):
        plan_report("risk_report", collection=str(tiny_collection), parameters={"context": {"tables_dir": "x"}})


def test_risk_table_gives_the_verdicts_of_verdicts_csv(report, tiny_collection):
    import riskreport as rr

    written = pd.read_csv(report / "tables" / "verdicts.csv")
    rule = written[written["method"] == "t"].set_index(["system", "alpha"])["verdict"].sort_index()
    p = rr.resolve_parameters(str(tiny_collection), alphas=[0, 1, 5])
    risk = rr.risk_table(rr.evaluate(p.collection, p.measure, p.systems).matrix(), p.baseline, p.alphas, p.measure)
    ours = risk.set_index(["system", "alpha"])["verdict"].sort_index()
    assert ours.index.equals(rule.index) and (ours == rule).all()


def test_report_tables(report):
    effectiveness = pd.read_csv(report / "tables" / "effectiveness.csv")
    assert list(effectiveness.columns) == ["system", "measure", "mean", "median", "sd", "n_topics"]
    assert effectiveness.set_index("system")["mean"].to_dict() == pytest.approx(
        {"base": 0.5, "good": 0.875, "risky": 0.5}
    )
    risk = pd.read_csv(report / "tables" / "risk.csv")
    assert list(risk.columns) == [
        "system",
        "baseline",
        "measure",
        "alpha",
        "urisk",
        "trisk",
        "p_value",
        "se",
        "se_jackknife",
        "wins",
        "losses",
        "ties",
        "frisk",
        "freward",
        "loss20",
    ]
    risky = risk[risk["system"] == "risky"].set_index("alpha")
    assert risky["urisk"].to_dict() == pytest.approx({0.0: 0.0, 1.0: -0.25, 5.0: -1.25})  # Δ = +.5 +.5 −.5 −.5
    assert risky.loc[0.0, ["wins", "losses", "ties", "loss20"]].tolist() == [2, 2, 0, 2]
    assert risky.loc[1.0, "trisk"] == pytest.approx(-0.25 / (np.std([0.5, 0.5, -1, -1], ddof=1) / 2))
    topics = pd.read_csv(report / "tables" / "topics.csv.gz", dtype={"topic": str})
    assert list(topics.columns) == ["system", "baseline", "measure", "topic", "alpha", "delta", "x", "tr", "tj"]
    assert len(topics) == 2 * 4 * 3  # challengers x topics x α
    georisk = pd.read_csv(report / "tables" / "georisk.csv")
    assert list(georisk.columns) == ["system", "measure", "alpha", "mean", "zrisk", "georisk"]
    assert len(georisk) == 3 * 3 and georisk["georisk"].between(0, 1).all()
    tstar = pd.read_csv(report / "tables" / "tstar.csv")
    assert list(tstar.columns) == ["system", "reference", "measure", "alpha", "urisk", "trisk", "p_value"]
    assert set(tstar["reference"]) == {"mean", "median", "max"}
    boot = pd.read_csv(report / "tables" / "bootstrap.csv")
    assert list(boot.columns) == [
        "system",
        "baseline",
        "measure",
        "alpha",
        "method",
        "level",
        "adjusted_level",
        "ci_low",
        "ci_high",
        "verdict",
    ]
    assert set(boot["method"]) == {"student_t", "basic", "percentile", "bootstrap_t", "bca"}
    assert set(boot["level"]) == {0.95, 0.999} and len(boot) == 2 * 3 * 5 * 2
    assert (boot["ci_low"] <= boot["ci_high"]).all()
    assert ((boot["verdict"] == "risk") == (boot["ci_high"] < 0)).all()
    tests = pd.read_csv(report / "tables" / "tests.csv")
    header = "system,baseline,measure,alpha,test,statistic,direction,p_value,p_adjusted,correction"
    assert list(tests.columns) == header.split(",")
    assert set(tests["test"]) == {"t", "sign", "wilcoxon", "randomisation"} and set(tests["correction"]) == {"holm"}
    mixed = pd.read_csv(report / "tables" / "mixed_systems.csv")
    assert list(mixed.columns) == [
        "system",
        "measure",
        "alpha",
        "effect",
        "se",
        "ci_low",
        "ci_high",
        "p_value",
        "p_adjusted",
    ]


def test_failing_cell_keeps_failed_report_and_latest(report, tmp_path, tiny_collection):
    notebook = nbformat.read(TEMPLATE, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell('raise RuntimeError("boom in the template")'))
    broken = tmp_path / "broken.ipynb"
    nbformat.write(notebook, broken)
    shutil.copytree(report.parent, tmp_path / "before", symlinks=True)
    with pytest.raises(ReportExecutionError, match="RuntimeError: boom in the template") as info:
        run_report(str(broken), collection=str(tiny_collection), out=report)  # would replace the good report
    failed = info.value.kept
    assert (
        failed.name.startswith("failed-") and (failed / "report.ipynb").is_file() and (failed / "report.html").is_file()
    )
    assert "boom in the template" in (failed / "report.html").read_text()
    assert (report / "report.html").read_text() == (tmp_path / "before" / report.name / "report.html").read_text()
    assert (report.parent / "latest").resolve() == report


def test_minus_convention_subset_and_scores_csv(tmp_path, cache_dir):
    """A scores.csv collection, a system subset and the minus convention: HTML flips signs, CSVs stay standard."""
    root = tmp_path / "table"
    root.mkdir()
    rows = ["system,topic,score"] + [
        f"{s},{t},{v}"
        for s, vs in {"b": [0.5] * 4, "good": [1, 1, 0.5, 1], "risky": [1, 1, 0, 0], "other": [0.2] * 4}.items()
        for t, v in zip("1234", vs)
    ]
    (root / "scores.csv").write_text("\n".join(rows) + "\n")
    folder = run_report(
        "risk_report",
        collection=str(root),
        baseline="b",
        measure="P@2",
        alphas=[0, 1],
        parameters={"systems": '["good", "risky"]', "convention": "minus", "topic_alphas": "[0, 1]"},
        out=tmp_path / "out",
    )
    html = (folder / "report.html").read_text()
    assert {p.suffix for p in (folder / "figures").iterdir()} == {".png"}  # by default
    assert html.count("<img src='data:image/png;base64") == len(list((folder / "figures").iterdir()))
    assert "minus convention" in html and "other" not in html.split("Systems in this report")[1].split("</table>")[0]
    risk = pd.read_csv(folder / "tables" / "risk.csv")
    assert sorted(risk["system"].unique()) == ["good", "risky"]
    assert risk.set_index(["system", "alpha"]).loc[("risky", 1.0), "urisk"] == pytest.approx(-0.25)


def test_bare_score_table_report_says_what_it_chose(tmp_path, cache_dir):
    """Issue 13 point 6: a bare CSV without `measure` column and no --measure/--baseline is labelled `score`,
    and the report says which baseline and measure it chose and why; a given baseline gets no such note."""
    table = tmp_path / "campaign.csv"
    rows = ["system,topic,score"] + [
        f"{s},{t},{v}" for s, vs in {"zz-new": [1, 1, 0, 0.5], "bm25": [0.5] * 4}.items() for t, v in zip("1234", vs)
    ]
    table.write_text("\n".join(rows) + "\n")
    folder = run_report("risk_report", collection=str(table), alphas=[0, 1], out=tmp_path / "out")
    text = re.sub(r"<[^>]+>", "", (folder / "report.html").read_text())
    assert "No baseline was given: bm25 is the first system of the collection in alphabetical order" in text
    assert "No measure was given: score is the label of the values of campaign.csv" in text
    assert set(pd.read_csv(folder / "tables" / "risk.csv")["measure"]) == {"score"}
    assert json.loads((folder / "params.json").read_text())["chosen"] == ["baseline", "measure"]
    again = run_report(
        "risk_report",
        collection=str(table),
        baseline="bm25",
        measure="RBP(p=0.8)",
        alphas=[0, 1],
        out=tmp_path / "out2",
    )
    text = re.sub(r"<[^>]+>", "", (again / "report.html").read_text())
    assert "No baseline was given" not in text and "No measure was given" not in text
    assert set(pd.read_csv(again / "tables" / "risk.csv")["measure"]) == {"RBP(p=0.8)"}


def test_two_baselines_report(tiny_collection, tmp_path, cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = run_report(
            "risk_report",
            collection=str(tiny_collection),
            alphas=[0, 5],
            out=tmp_path / "two",
            parameters={"baselines": ["base", "good"], "bootstrap_samples": 200},
        )
    verdicts = pd.read_csv(folder / "tables" / "verdicts.csv")
    assert set(verdicts["baseline"]) == {"base", "good"}
    risk = pd.read_csv(folder / "tables" / "risk.csv")
    assert sorted(set(zip(risk["baseline"], risk["system"]))) == [
        ("base", "good"),
        ("base", "risky"),
        ("good", "base"),
        ("good", "risky"),
    ]
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "rr-verdict-groups" in html and "family of 4 comparisons" in html and "Baselines" in html
    assert "URisk and TRisk against good" in html


WARNING_CELLS = (
    'collection: str = "demo"  # collection name or path',
    "import logging, sys, warnings\nimport arviz  # its once-a-day FutureWarning: 'ArviZ is undergoing a major refactor'",
    'warnings.warn_explicit("Mean of empty slice", RuntimeWarning, "/lib/somelib/core.py", 7)\n'
    'print("somelib: progress 100%", file=sys.stderr)\nlogging.getLogger("somelib").warning("somelib logs a warning")',
    'warnings.warn("the template\'s own caution: 3 topics have no relevant document")',
    'import riskreport\nwarnings.warn_explicit("riskreport\'s own plotting warning", UserWarning, riskreport.__file__, 1)',
)


def test_library_warnings_go_to_the_log_and_the_templates_own_stay_marked(
    tmp_path, tiny_collection, cache_dir, monkeypatch
):
    """Issue 33, point 3: no stderr box on the page; the libraries' output in log.txt; the template's own warnings
    (its cells, riskreport's code) on the page, marked as such."""
    from riskreport.run.cli.scaffold import new_notebook

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # ArviZ warns again: its daily stamp is not there
    cells = [nbformat.v4.new_code_cell(WARNING_CELLS[0], metadata={"tags": ["parameters"]})]
    cells += [nbformat.v4.new_code_cell(source) for source in WARNING_CELLS[1:]]
    template = tmp_path / "warns.ipynb"
    nbformat.write(new_notebook(cells), template)
    folder = run_report(str(template), collection=str(tiny_collection), out=tmp_path / "out")
    page, log = (folder / "report.html").read_text(), (folder / "log.txt").read_text()
    for library in (
        "ArviZ is undergoing a major refactor",
        "FutureWarning",
        "RuntimeWarning: Mean of empty slice",
        "somelib: progress 100%",
        "somelib logs a warning",
    ):
        assert library in log and library not in page, library
    assert "output_stderr" not in page and "[cell 3]" in log and "[cell 4]" in log  # as "Cell 4 failed" counts
    assert page.count("Warning from the template") == 2 and "own caution: 3 topics" in page
    assert "(a cell of the template, line 1): UserWarning: the template&#x27;s own caution" in page
    assert "(__init__.py, line 1): UserWarning: riskreport&#x27;s own plotting warning" in page
    assert "log.txt" in json.loads((folder / "params.json").read_text())["files"]
    notebook = nbformat.read(folder / "report.ipynb", as_version=4)
    assert any(o.get("name") == "stderr" for c in notebook.cells for o in c.get("outputs", []))  # the record keeps it
