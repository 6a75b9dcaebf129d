"""Template authoring: `riskreport templates check` finds each kind of defect; `new-template` scaffolds one that passes."""

from __future__ import annotations

import nbformat
import pytest

from riskreport.io.collection import PROJECT_ROOT
from riskreport.run.cli.authoring import check_template, new_template
from riskreport.run.cli.commands import main
from riskreport.run.cli.inline_statistics import inline_statistics
from riskreport.run.cli.parameter_cell import understood_type
from riskreport.run.cli.scaffold import new_notebook
from riskreport.run.report.problems import PARAMETERS_TAG
from riskreport.run.report.templates import BUILT_IN

SHIPPED = [PROJECT_ROOT / "templates" / f"{name}.ipynb" for name in BUILT_IN]
GOOD_PARAMETERS = 'collection: str = "demo"  # collection name or path\nsig_level: float = 0.05  # significance level'


def make_template(
    folder,
    parameters: str | None = GOOD_PARAMETERS,
    code: tuple[str, ...] = ("x = 1",),
    extra_parameters: str | None = None,
    name: str = "t",
):
    """Cell 1 markdown, cell 2 parameters (if any), then one code cell per `code`, then a second parameters cell."""
    cells = [nbformat.v4.new_markdown_cell("# A test template")]
    if parameters is not None:
        cells.append(nbformat.v4.new_code_cell(parameters, metadata={"tags": [PARAMETERS_TAG]}))
    cells += [nbformat.v4.new_code_cell(source) for source in code]
    if extra_parameters is not None:
        cells.append(nbformat.v4.new_code_cell(extra_parameters, metadata={"tags": [PARAMETERS_TAG]}))
    notebook = new_notebook(cells)
    path = folder / f"{name}.ipynb"
    nbformat.write(notebook, path)
    return path


def problems(path):
    return check_template(path, execute=False).problems


def test_good_template_passes(tmp_path):
    result = check_template(make_template(tmp_path), execute=False)
    assert result.ok and result.parameters == 2
    assert "ok (2 parameters; static checks passed)" in result.report()


@pytest.mark.parametrize(
    "parameters, extra, cell, line, message, fix",
    [
        (None, None, None, None, "no cell is tagged `parameters`", "add the tag `parameters`"),
        (
            GOOD_PARAMETERS,
            "y: int = 1  # more",
            4,
            None,
            "a second cell tagged `parameters` (the first is cell 2)",
            "move its parameters into cell 2",
        ),
        (GOOD_PARAMETERS + "\nbare: int = 3", None, 2, 3, "parameter 'bare' has no help comment", "end the line with"),
        (
            GOOD_PARAMETERS + "\nk: int = 10  # default = 10",
            None,
            2,
            3,
            "papermill cannot read parameter 'k': the line has 2 '=' signs (one in its comment)",
            "reword the comment",
        ),
        (
            GOOD_PARAMETERS + "\npair: tuple = (1, 2)  # a pair",
            None,
            2,
            3,
            "parameter 'pair' has type `tuple`, which riskreport cannot check",
            "use str, int, float",
        ),
        (
            GOOD_PARAMETERS + "\nname: str | None = None  # a name",
            None,
            2,
            3,
            "papermill cannot read parameter 'name': its type annotation",
            "Optional[str], not str | None",
        ),
        (GOOD_PARAMETERS + "\nn = 3  # untyped", None, 2, 3, "parameter 'n' has no declared type", "annotate it"),
        (
            GOOD_PARAMETERS + '\nlevel: float = "high"  # a level',
            None,
            2,
            3,
            "the default of 'level' (`\"high\"`) is not a float",
            "change the default or the type",
        ),
        (
            GOOD_PARAMETERS + '\nsep: str = "a#b"  # separator',
            None,
            2,
            3,
            "papermill reads the default of 'sep' as `\"a`",
            "keep `#` out of the value",
        ),
        ("print(1)\n" + GOOD_PARAMETERS, None, 2, 1, "should only assign parameters", "move this statement"),
        (
            GOOD_PARAMETERS + "\nfrom typing import List",
            None,
            2,
            2,
            "papermill reads the default of 'sig_level' as `0.05from typing import List`",
            "put imports above",
        ),
        ("sig_level: float = 0.05  # level", None, 2, None, "no `collection` parameter", "collection: str"),
    ],
)
def test_parameter_defects(tmp_path, parameters, extra, cell, line, message, fix):
    found = problems(make_template(tmp_path, parameters, extra_parameters=extra))
    assert len(found) == 1, found
    assert (found[0].cell, found[0].line) == (cell, line)
    assert message in found[0].message and fix in found[0].fix


def test_unreadable_and_missing_files(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    assert "not a readable notebook" in problems(broken)[0].message
    assert problems(tmp_path / "absent.ipynb")[0].message == "file not found"


@pytest.mark.parametrize(
    "source, line, what",
    [
        ("t = scores.mean()", 1, "`.mean()`"),
        ("import numpy as np\nm = np.std(x)", 2, "`np.std`"),
        ("import scipy.stats as st", 1, "`import scipy.stats`"),
        ("from statsmodels.stats import multitest", 1, "statsmodels computes statistics"),
        ("from numpy import sqrt", 1, "`from numpy import sqrt`"),
        ('g = df.groupby("s")["x"].agg("median")', 1, "aggregation by name 'median'"),
        ('t = df.pivot_table(index="s", values="x", aggfunc="std")', 1, "aggregation by name 'std'"),
        ('t = df.groupby("s").agg(m=("x", "var"))', 1, "aggregation by name 'var'"),
        ("share = (d < 0).sum() / len(d)", 1, "inside a division"),
        ('d = df["a"] - df["b"]', 1, "arithmetic on a table column"),
        ('label = f"{x.quantile(0.9):.2f}"', 1, "`.quantile()`"),
    ],
)
def test_inline_statistics_flagged(source, line, what):
    found = inline_statistics(source, cell=5)
    assert len(found) == 1 and (found[0].cell, found[0].line) == (5, line)
    assert what in found[0].message and "riskreport" in found[0].fix


def test_presentation_code_allowed():
    source = "\n".join(
        [
            "%matplotlib inline",
            "import numpy as np",
            "import riskreport as rr",
            "from riskreport import report",
            "fine = rr.risk_table(m, p.baseline, np.linspace(0, max(p.alphas), 101), p.measure)",
            "n = int((diag['skewness'].abs() > 1).sum())",
            'counts = t.groupby("alpha")["significant"].agg(["sum", "size"])',
            'pairs = t["a"] + " − " + t["b"]',
            "shown = table.round(3)",
            "report.styled(rr.inference.bootstrap_table(m, 'b', [0, 1]))",
            'best = t.apply(lambda row: row["mean"] > 0, axis=1)',
        ]
    )
    assert inline_statistics(source) == []


def test_inline_statistics_reported_per_cell(tmp_path):
    path = make_template(tmp_path, code=("import riskreport as rr", "a = 1\nb = scores.std()"))
    found = problems(path)
    assert [(p.cell, p.line) for p in found] == [(4, 2)] and found[0].code == "b = scores.std()"


@pytest.mark.parametrize(
    "declared, ok",
    [
        ("str", True),
        ("Optional[list[float]]", True),
        ("list[str]", True),
        ("dict", True),
        ("dict[str, float]", True),
        ("Optional[bool]", True),
        ("list", True),
        ("tuple", False),
        ("list[tuple]", False),
        ("Path", False),
    ],
)
def test_understood_types(declared, ok):
    assert understood_type(declared) is ok


def test_shipped_templates_declare_their_parameters_well():
    for path in SHIPPED:
        others = [p for p in problems(path) if not p.message.startswith("inline statistics")]
        assert others == [], f"{path.name}: {others}"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_templates_pass_static_check(path):
    assert problems(path) == []


def test_new_template_passes_check_and_runs(tmp_path, tiny_collection, cache_dir, capsys):
    assert main(["new-template", "my_report", "--dir", str(tmp_path)]) == 0
    path = tmp_path / "my_report.ipynb"
    assert capsys.readouterr().out.strip() == str(path)
    notebook = nbformat.read(path, as_version=4)
    assert notebook.cells[0].metadata["tags"] == ["remove_cell"] and notebook.cells[1].metadata["tags"] == [
        "parameters"
    ]
    assert main(["templates", "check", str(path), "--collection", str(tiny_collection), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "my_report.ipynb: ok (8 parameters; static checks passed; executed on" in out
    assert "1 template(s) checked: 1 passed, 0 failed" in out


def test_failing_cell_is_reported(tmp_path, tiny_collection, cache_dir, capsys):
    path = make_template(tmp_path, code=("x = 1", "y = 2\nz = y / 0"))
    assert main(["templates", "check", str(path), "--collection", str(tiny_collection), "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert "t.ipynb, cell 4, line 2: execution failed: ZeroDivisionError: division by zero" in out
    assert "| z = y / 0" in out and "Traceback" not in out + err


def test_new_template_refuses_to_overwrite(tmp_path, capsys):
    first = new_template("mine", tmp_path)
    assert nbformat.read(first, as_version=4) == nbformat.read(new_template("mine", tmp_path, force=True), as_version=4)
    assert main(["new-template", "mine", "--dir", str(tmp_path)]) == 1
    assert "already exists; choose another name, or add --force" in capsys.readouterr().err
    assert main(["templates", "new", "mine", "--dir", str(tmp_path), "--force"]) == 0
    assert capsys.readouterr().out.strip() == str(first)
    for bad in ("../evil", "my report", "1st", "a-b"):
        assert main(["new-template", bad, "--dir", str(tmp_path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("riskreport: error: Template name") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.ipynb"]


def test_check_cli_messages_and_exit_codes(tmp_path, capsys):
    good = make_template(tmp_path, name="good")
    bad = make_template(tmp_path, GOOD_PARAMETERS + "\nk: int = 10  # default = 10", name="bad")
    assert main(["templates", "check", str(good), "--no-execute"]) == 0
    assert main(["templates", "check", str(tmp_path), "--no-execute"]) == 1
    out, err = capsys.readouterr()
    assert f"{bad}: FAILED (1 problem)" in out and f"{bad}, cell 2, line 3: papermill cannot read" in out
    assert "| k: int = 10  # default = 10" in out and "fix: reword the comment" in out
    assert "2 template(s) checked: 1 passed, 1 failed" in out
    assert "Traceback" not in out + err and "Unable to parse" not in err
    assert main(["templates", "check", "no_such_template"]) == 1
    assert "Unknown template 'no_such_template'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["templates", "nonsense"])
    assert usage.value.code == 2


@pytest.mark.parametrize(
    "source",
    [
        'sns.boxplot(data=d, x="delta", y="system", order=d.groupby("system")["delta"].median().sort_values().index)',
        'order = d.groupby("system")["delta"].mean().sort_values().index',
        'worst = d.groupby("system")["delta"].mean().nsmallest(5).index.tolist()',
        'shown = sorted(systems, key=lambda s: d.loc[d["system"] == s, "delta"].mean())',
        'rows = d.iloc[d["delta"].abs().mean(axis=None).argsort()]',
        "t = scores.mean()  # riskreport: reviewed",
    ],
)
def test_an_order_or_a_reviewed_line_is_not_inline_statistics(source):
    """An expression whose value only orders a plot or a table shows no number; a reviewed line was read by a person."""
    assert inline_statistics(source) == []


def test_ordering_does_not_hide_a_statistic_beside_it():
    found = inline_statistics('sns.barplot(x=d.groupby("s")["x"].mean(), order=d["s"].sort_values())')
    assert len(found) == 1 and "`.mean()`" in found[0].message


def test_a_reviewed_cell_is_counted_not_flagged(tmp_path):
    path = make_template(
        tmp_path, code=("import riskreport as rr", "b = scores.std()", "c = s.var()  # riskreport: reviewed")
    )
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[3].metadata["tags"] = ["reviewed"]
    nbformat.write(notebook, path)
    result = check_template(path, execute=False)
    assert result.ok and result.reviewed == 2 and "2 cell(s) or line(s) marked reviewed" in result.report()


def test_the_advice_can_be_followed_from_a_wheel():
    """The fix no longer says to change riskreport, which a user of the installed package cannot."""
    fix = inline_statistics("t = scores.mean()")[0].fix
    assert "compute it in riskreport" not in fix and "package of your own" in fix and "# riskreport: reviewed" in fix


def test_the_writing_guide_runs_the_scaffold_by_path():
    """./templates is not searched by name (docs/trust.md): the guide's commands give the scaffold by its path."""
    import re

    guide = (PROJECT_ROOT / "docs" / "templates" / "writing.md").read_text(encoding="utf-8")
    commands = re.findall(r"^riskreport run (\S+)", guide, flags=re.MULTILINE)
    assert commands and all(c.startswith("templates/") and c.endswith(".ipynb") for c in commands)
    assert "runs (`riskreport run my_report`)" not in guide


def test_a_template_scaffolded_in_a_checkout_is_found_as_beside_a_wheel(tmp_path, monkeypatch, capsys):
    """In a checkout the installed templates are the repository's templates/, where `new-template` scaffolds from the
    repository root: the scaffold there is the user's, run by its path as from any ./templates, not a built-in one
    by its bare name (issue 39; tests/test_wheel.py checks the same with a real checkout and wheel)."""
    from riskreport.errors import UnknownNameError
    from riskreport.run.cli.authoring import template_files
    from riskreport.run.report import templates

    checkout = tmp_path / "checkout"
    (checkout / "templates").mkdir(parents=True)
    for name in ("risk_report", "nondeterministic"):
        (checkout / "templates" / f"{name}.ipynb").write_bytes(
            (PROJECT_ROOT / "templates" / f"{name}.ipynb").read_bytes()
        )
    monkeypatch.setattr(templates, "installed_templates", lambda: checkout / "templates")
    monkeypatch.chdir(checkout)
    assert main(["new-template", "my_report"]) == 0
    assert capsys.readouterr().out.strip() == "templates/my_report.ipynb"
    assert templates.find_template("risk_report").origin == "installed"
    assert templates.find_template("templates/my_report.ipynb").origin == "given as a path"
    with pytest.raises(UnknownNameError, match=r"run it as templates/my_report\.ipynb, or add its folder"):
        templates.find_template("my_report")
    assert [t.name for t in templates.list_templates()] == ["nondeterministic", "risk_report"]
    assert [p.stem for p in template_files()] == ["nondeterministic", "risk_report"]
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # elsewhere: the advice names the scaffold's whole path
    with pytest.raises(UnknownNameError) as error:
        templates.find_template("my_report")
    assert f"{checkout / 'templates' / 'my_report.ipynb'} is not one of riskreport's built-in templates" in str(
        error.value
    )


def test_the_built_in_templates_are_the_tracked_ones_and_the_wheels():
    """`BUILT_IN` names every template the repository holds, and pyproject.toml packs those and no other."""
    import subprocess

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    package_data = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert package_data["riskreport.templates"] == [f"{name}.ipynb" for name in BUILT_IN]
    tracked = subprocess.run(["git", "-C", str(PROJECT_ROOT), "ls-files", "templates"], capture_output=True, text=True)
    if tracked.returncode == 0:
        assert sorted(tracked.stdout.split()) == [f"templates/{name}.ipynb" for name in sorted(BUILT_IN)]


def test_a_page_that_shows_figures_must_be_finished(tmp_path):
    """Issue 40: with two cores a page's figures are drawn in the background and put in place by `page.finish()`."""
    shows = ("page = report.Page(context)", 'display(page.show(a, "urisk-alpha"))')
    found = problems(make_template(tmp_path, code=shows, name="unfinished"))
    assert [(p.cell, p.message.split(":")[0]) for p in found] == [
        (4, "the page shows figures (`page.show`) but is never finished")
    ]
    assert "call `page.finish()` in the last cell" in found[0].fix
    assert problems(make_template(tmp_path, code=(*shows, "page.finish()"), name="finished")) == []
