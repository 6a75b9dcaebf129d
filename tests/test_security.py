"""Security (issue 7, README "Trust model"): names from files render as text, parameters cannot
inject code, and a collection given by name cannot leave its data directory.

One report is executed (module fixture) on a tiny collection whose folder, systems, topics,
title and description carry HTML/JS markup, with a `title` parameter that tries to break out of
its string literal; every test below inspects that one report.
"""

from __future__ import annotations

import ast
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riskreport.errors import InputFormatError, ParameterError, RiskReportError, UnknownNameError
from riskreport.io.collection import available_collections, load_collection
from riskreport.measures.params import check_report_options
from riskreport.run.cli.commands import main
from riskreport.run.report.runner import _literal, list_templates, plan_report, run_report
from riskreport.run.schedule.batch import JobFileError, load_jobs

EVIL_BASELINE = "<img src=x onerror=alert(1)>"
EVIL_SYSTEMS = [EVIL_BASELINE, "<script>alert(2)<!--", "[link](javascript:alert(3))"]  # file names: no '/'
EVIL_TABLE_SYSTEM = "<script>alert(4)</script>"  # scores.csv: any text, '/' included
EVIL_TOPIC = "<svg/onload=alert('topic')>"
EVIL_DROPPED_TOPIC = "<iframe/src=javascript:alert('dropped')>"  # in a run, not in the qrels
EVIL_TITLE = "<script>alert('title')</script>"
EVIL_DESCRIPTION = "<b onmouseover=alert('description')>hover</b>"
EVIL_FOLDER = "<img src=x onerror=alert('collection')>"
TOPICS = ["1", "2", "3", EVIL_TOPIC]


def _title_parameter(sentinel: Path) -> str:
    return f"\"; import os; os.system('touch {sentinel}') #<img src=x onerror=alert('title-param')>"


def make_evil_collection(parent: Path) -> Path:
    root = parent / EVIL_FOLDER
    (root / "runs").mkdir(parents=True)
    (root / "qrels.txt").write_text("".join(f"{t} 0 d{i} {r}\n" for t in TOPICS for i, r in enumerate([2, 1, 0, 1])))

    def run(name, order, extra=()):
        lines = [f"{t} Q0 d{d} {k} {10 - k} tag\n" for t in TOPICS for k, d in enumerate(order, 1)]
        (root / "runs" / name).write_text("".join(lines) + "".join(f"{t} Q0 dx 1 1 tag\n" for t in extra))

    run("base.run", [0, 2, 1, 3])
    run(f"{EVIL_SYSTEMS[0]}.run", [2, 0, 3, 1])
    run(f"{EVIL_SYSTEMS[1]}.run", [1, 3, 0, 2], extra=[EVIL_DROPPED_TOPIC])
    run(f"{EVIL_SYSTEMS[2]}.txt", [3, 1, 2, 0])
    (root / "scores.csv").write_text(
        "system,topic,score\n" + "".join(f"{EVIL_TABLE_SYSTEM},{t},{s}\n" for t, s in zip(TOPICS, [0.5, 0.25, 1, 0]))
    )
    (root / "collection.toml").write_text(
        f'title = {json.dumps(EVIL_TITLE)}\ndescription = {json.dumps(EVIL_DESCRIPTION)}\nmeasure = "P@2"\n'
        f"baseline = {json.dumps(EVIL_BASELINE)}\n"
    )
    return root


class _Page(HTMLParser):
    """Elements, attributes, script bodies and the visible text of an HTML page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._script = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag == "script":
            self._script = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = False

    def handle_data(self, data):
        if self._script:
            self.scripts[-1] += data
        else:
            self.text.append(data)

    def markup_from_names(self) -> list:
        """Elements or attributes that could only come from the markup in the names."""
        found = [("script", body[:80]) for body in self.scripts if "alert(" in body]
        for tag, attrs in self.tags:
            if tag in ("svg", "iframe", "b") and any("alert(" in v for v in attrs.values()):
                found.append((tag, attrs))
            found += [
                (tag, attrs)
                for k, v in attrs.items()
                if k.startswith("on") or "alert(" in v or v.strip().lower().startswith("javascript:")
            ]
        return found


@pytest.fixture(scope="module")
def evil_report(tmp_path_factory):
    """Execute risk_report once on the evil collection; return (report folder, reports dir, sentinel)."""
    base = tmp_path_factory.mktemp("security")
    sentinel = base / "PWNED"
    collection = make_evil_collection(base)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RISKREPORT_CACHE", str(base / "cache"))
        folder = run_report(
            "risk_report",
            collection=str(collection),
            reports_dir=base / "reports",
            parameters={"title": _title_parameter(sentinel), "bootstrap_samples": 200},
        )
    return folder, base / "reports", sentinel


def test_markup_names_are_possible_and_load_as_system_ids(tmp_path):
    with pytest.raises(OSError):  # '/' separates path components: `</script>` cannot be in a file name
        (tmp_path / "<script>alert(1)</script>.run").write_text("")
    collection = load_collection(make_evil_collection(tmp_path))
    assert sorted(collection.runs) == sorted(["base"] + EVIL_SYSTEMS)
    assert collection.name == EVIL_FOLDER and collection.title == EVIL_TITLE


def test_report_shows_the_names_as_text(evil_report):
    folder, _, _ = evil_report
    text = "".join(_Page((folder / "report.html").read_text(encoding="utf-8")).text)
    for name in EVIL_SYSTEMS + [EVIL_TABLE_SYSTEM, EVIL_TITLE, EVIL_DESCRIPTION, "onerror=alert('title-param')"]:
        assert name in text, name


def test_report_has_no_markup_from_names(evil_report):
    folder, _, _ = evil_report
    page = _Page((folder / "report.html").read_text(encoding="utf-8"))
    assert page.markup_from_names() == []


def test_index_has_no_markup_from_names(evil_report):
    _, reports, _ = evil_report
    page = _Page((reports / "index.html").read_text(encoding="utf-8"))
    assert page.markup_from_names() == []
    text = "".join(page.text)
    assert EVIL_BASELINE in text and EVIL_FOLDER in text


def test_parameters_cell_holds_only_literals(evil_report):
    folder, _, sentinel = evil_report
    notebook = json.loads((folder / "report.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"] if "injected-parameters" in c["metadata"].get("tags", []))
    values = {}
    for statement in ast.parse("".join(cell["source"])).body:
        assert isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name), ast.dump(statement)
        values[statement.targets[0].id] = ast.literal_eval(statement.value)  # data only, never code
    assert values["title"] == _title_parameter(sentinel)
    assert values["baseline"] == EVIL_BASELINE
    assert not sentinel.exists()


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(st.text(), st.lists(st.text(), max_size=3), st.dictionaries(st.text(max_size=5), st.text(), max_size=2))
)
def test_papermill_quotes_any_text_as_a_literal(value):
    """papermill's translator turns any string (quotes, backslashes, newlines, any code point) into a literal."""
    from papermill.translators import PythonTranslator

    tree = ast.parse(PythonTranslator.codify({"title": value}))
    assert len(tree.body) == 1 and ast.literal_eval(tree.body[0].value) == value


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("systems", "__import__('os').system('touch PWNED')", "expects Optional[list[str]]"),
        ("systems", "__import__('os').system('touch {sentinel}')", "no such file"),  # a path: a file listing systems
        ("seed", "__import__('os').system('touch {sentinel}')", "expects int"),
        ("alphas", "[__import__('os').system('touch {sentinel}')]", "expects Optional[list[float]]"),
        ("ci_levels", "[0.95, (lambda: __import__('os').system('touch {sentinel}'))()]", "expects list[float]"),
        ("sig_level", "0.05; import os; os.system('touch {sentinel}')", "expects float"),
    ],
)
def test_cli_parameters_are_data_of_the_declared_type(
    tiny_collection, cache_dir, tmp_path, capsys, name, value, message, monkeypatch
):
    sentinel = tmp_path / "PWNED"
    monkeypatch.chdir(tmp_path)  # `touch PWNED` would make the sentinel too
    code = main(
        [
            "run",
            "--collection",
            str(tiny_collection),
            "--out",
            str(tmp_path / "r"),
            "--quiet",
            "-p",
            name,
            value.format(sentinel=sentinel),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and message in err and "Traceback" not in err
    assert not sentinel.exists() and not (tmp_path / "r").exists()


def test_job_file_parameters_are_checked_by_type(tiny_collection, tmp_path, monkeypatch):
    sentinel = tmp_path / "PWNED"
    monkeypatch.chdir(tmp_path)
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[[job]]\nname = "x"\ncollection = "{tiny_collection}"\n'
        "systems = \"__import__('os').system('touch PWNED')\"\n"
    )
    with pytest.raises(JobFileError, match="key 'systems'.*expects Optional\\[list\\[str\\]\\]"):
        load_jobs(jobs)
    jobs.write_text(
        f'[[job]]\nname = "x"\ncollection = "{tiny_collection}"\n'
        f"systems = \"__import__('os').system('touch {sentinel}')\"\n"
    )  # a path: a file of systems
    with pytest.raises(JobFileError, match="key 'systems'.*no such file"):
        load_jobs(jobs)
    jobs.write_text(f'[[job]]\nname = "x"\ncollection = "{tiny_collection}"\ntitle = "\\"; import os #"\nseed = 7\n')
    (job,) = load_jobs(jobs)
    assert job.parameters["title"] == '"; import os #' and job.parameters["seed"] == 7
    jobs.write_text('[[job]]\nname = "../../etc"\n')
    with pytest.raises(JobFileError, match="key 'name' must be a name"):
        load_jobs(jobs)
    assert not sentinel.exists()


# ---- collection names cannot leave data/ --------------------------------------------------------


@pytest.fixture
def data_dir(tmp_path, tiny_collection, monkeypatch):
    """RISKREPORT_DATA = tmp/data, which holds the collection `tiny`; the current directory is tmp/work."""
    data = tmp_path / "data"
    data.mkdir()
    tiny_collection.rename(data / "tiny")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("RISKREPORT_DATA", str(data))
    return data


@pytest.mark.parametrize(
    "name",
    [
        "../tiny",
        "../data/tiny/../tiny/..",
        "/tiny",
        "tiny/",
        "./tiny",
        "~/tiny",
        ".tiny",
        "..",
        "tiny/../../data/tiny/x",
        "tiny\\..\\..",
        "",
    ],
)
def test_a_name_is_only_looked_up_in_data_dirs(data_dir, name):
    """Names never traverse: anything with '/' or a leading '.' or '~' is a path relative to the current
    directory (here tmp/work, where none of these is a collection), never to data/."""
    assert load_collection("tiny").path == (data_dir / "tiny").resolve()
    with pytest.raises(RiskReportError, match="Unknown collection|is not a collection|does not exist"):
        load_collection(name)


def test_a_path_means_that_path(data_dir):
    assert load_collection("../data/tiny").path == (data_dir / "tiny").resolve()
    assert load_collection(str(data_dir / "tiny")).path == (data_dir / "tiny").resolve()
    with pytest.raises(RiskReportError, match="is not a collection"):
        load_collection("/")


def test_symlink_leaving_data_dir_is_refused_by_name(data_dir, tmp_path):
    outside = tmp_path / "elsewhere"
    (data_dir / "tiny").rename(outside)
    (data_dir / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(
        RiskReportError,
        match=r"data/linked is a symbolic link to .*elsewhere, outside .*data: "
        r"a collection given by name must live in a data directory",
    ):
        load_collection("linked")
    assert "linked" not in available_collections()
    assert load_collection(str(outside)).path == outside.resolve()  # its path still works
    (data_dir / "alias").symlink_to(data_dir / "linked", target_is_directory=True)  # link to a link: still outside
    with pytest.raises(RiskReportError, match="symbolic link"):
        load_collection("alias")


def test_symlink_inside_data_dir_is_followed(data_dir):
    (data_dir / "alias").symlink_to(data_dir / "tiny", target_is_directory=True)
    assert load_collection("alias").path == (data_dir / "tiny").resolve()


@pytest.mark.parametrize("qrels", ["../qrels.txt", "/etc/passwd", "sub/../../qrels.txt", "~/qrels.txt"])
def test_qrels_named_in_collection_toml_stays_inside(tiny_collection, qrels):
    (tiny_collection / "collection.toml").write_text(f'qrels = "{qrels}"\n')
    with pytest.raises(InputFormatError, match="points outside the collection"):
        load_collection(tiny_collection)


# ---- parameter values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("seed", -1),
        ("bootstrap_samples", 0),
        ("bootstrap_samples", 10**9),
        ("ci_levels", [0.95, 1.5]),
        ("ci_levels", []),
        ("convention", "plus"),
        ("correction", "sidak"),
        ("topic_alphas", [-1]),
        ("delta0", 0),
        ("max_figure_systems", 0),
        ("seed", True),
    ],
)
def test_option_values_are_checked(name, value):
    with pytest.raises(ParameterError, match=f"^{name} must be"):
        check_report_options({name: value})


def test_template_defaults_pass_the_option_checks():
    for template in list_templates():
        defaults = {name: _literal(spec["default"], spec["default"]) for name, spec in template.parameters.items()}
        assert check_report_options(dict(defaults)) == defaults


def test_option_values_are_checked_before_the_kernel(tiny_collection):
    with pytest.raises(ParameterError, match="bootstrap_samples must be"):
        plan_report("risk_report", collection=str(tiny_collection), parameters={"bootstrap_samples": -5})


@pytest.mark.parametrize(
    "parameters, error, message",
    [
        ({"focus_system": "base"}, UnknownNameError, "Unknown challenger 'base'.*Available challengers: good, risky"),
        ({"focus_system": "godo"}, UnknownNameError, "Did you mean 'good'"),
        ({"other_measures": ["nDCG@@10"]}, UnknownNameError, "Unknown measure 'nDCG@@10'"),
    ],
)
def test_options_that_failed_inside_the_kernel_are_checked_before_it(tiny_collection, parameters, error, message):
    with pytest.raises(error, match=message):
        plan_report("risk_report", collection=str(tiny_collection), parameters=parameters)


def test_equivalence_needs_sig_level_below_one_half():
    with pytest.raises(ParameterError, match="sig_level must be a number between 0 and 0.5 for the equivalence"):
        check_report_options({"sig_level": 0.6, "delta0": 0.01})
    assert check_report_options({"sig_level": 0.6}) == {"sig_level": 0.6}
    with pytest.raises(ParameterError, match="other_measures must be a list"):
        check_report_options({"other_measures": "AP"})
