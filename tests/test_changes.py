"""Changes between two reports (`stats.changes`; a previous report checked as a whole, `run.changes`), the risk
gate (`run.gate`), JUnit XML (`run.junit`) and the index's findings (`run.index_jobs`): pure functions on hand-made
tables and summaries; the previous reports checked are written by `Analysis.save`, no template is run."""

import doctest
import json

import pandas as pd
import pytest
from conftest import write_job_reports

from riskreport.errors import ParameterError, UnknownNameError
from riskreport.run.cli.commands import main
from riskreport.run.folders.gate import Gate, check_gate, offenders, parse_gate
from riskreport.run.folders.index import write_index
from riskreport.run.folders.index_jobs import HISTORY
from riskreport.run.schedule.junit import Suite, write_junit
from riskreport.stats import changes
from riskreport.stats.changes import CHANGE_COLUMNS, changes_table, count_changes, rule_summary


def rule(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["system", "baseline", "alpha", "urisk", "trisk", "verdict"])


BEFORE = rule(
    [
        ("a", "b", 0, 0.01, 0.5, "inconclusive"),
        ("a", "b", 5, -0.02, -1.0, "inconclusive"),
        ("c", "b", 0, 0.10, 4.0, "reward"),
        ("c", "b", 5, 0.05, 2.5, "reward"),
        ("gone", "b", 0, 0.0, 0.1, "inconclusive"),
    ]
)
AFTER = rule(
    [
        ("a", "b", 0.0, -0.05, -2.9, "risk"),
        ("a", "b", 5.0, -0.30, -3.5, "risk"),
        ("c", "b", 0.0, 0.10, 4.1, "reward"),
        ("c", "b", 5.0, 0.01, 0.9, "inconclusive"),
        ("new", "b", 0.0, 0.0, 0.2, "inconclusive"),
    ]
)


def effectiveness(means: dict) -> pd.DataFrame:
    return pd.DataFrame({"system": list(means), "mean": list(means.values()), "sd": 0.2, "n_topics": 25})


def test_module_example_runs():
    assert doctest.testmod(changes, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def test_changed_verdicts_systems_files_parameters_and_means_one_row_each_in_order():
    table = changes_table(
        BEFORE,
        AFTER,
        effectiveness({"a": 0.50, "b": 0.45, "c": 0.60, "gone": 0.4}),
        effectiveness({"a": 0.45, "b": 0.45, "c": 0.59, "new": 0.4}),  # a moved by 0.05 > SE 0.04; c by 0.01
        {"runs/a.run": "1" * 64, "qrels.txt": "2" * 64},
        {"runs/a.run": "3" * 64, "qrels.txt": "2" * 64},
        {"measure": "P@10", "sig_level": 0.05, "context": {"x": 1}},
        {"measure": "P@10", "sig_level": 0.01, "context": {"x": 2}},
    )
    assert list(table.columns) == CHANGE_COLUMNS
    assert table["change"].tolist() == [
        "input",
        "parameter",
        "system added",
        "system removed",
        "verdict",
        "verdict",
        "verdict",
        "effectiveness",
    ]
    assert table.loc[0, ["name", "before", "after"]].tolist() == ["runs/a.run", "1" * 12, "3" * 12]
    assert table.loc[1, ["name", "before", "after"]].tolist() == ["sig_level", "0.05", "0.01"]
    assert table.loc[2, "system"] == "new" and table.loc[3, "system"] == "gone"
    verdicts = table[table["change"] == "verdict"]
    assert list(verdicts[["system", "alpha", "before", "after"]].itertuples(index=False, name=None)) == [
        ("a", 0.0, "inconclusive", "risk"),
        ("a", 5.0, "inconclusive", "risk"),
        ("c", 5.0, "reward", "inconclusive"),
    ]
    first = verdicts.iloc[0]
    assert (first.urisk_before, first.urisk_after, first.trisk_before, first.trisk_after) == (0.01, -0.05, 0.5, -2.9)
    moved = table.iloc[-1]
    assert moved.system == "a" and (moved.mean_before, moved.mean_after) == (0.5, 0.45)
    assert moved.se == pytest.approx(0.2 / 5)
    assert count_changes(table) == {
        "input": 1,
        "parameter": 1,
        "system added": 1,
        "system removed": 1,
        "verdict": 3,
        "effectiveness": 1,
    }


def test_nothing_changed_is_an_empty_table_and_moved_files_compare_by_name():
    same = changes_table(
        BEFORE,
        BEFORE.assign(alpha=BEFORE["alpha"].astype(float)),
        files_before={"/old/a.run": "1"},
        files_after={"/new/a.run": "1"},
    )
    assert same.empty and list(same.columns) == CHANGE_COLUMNS and count_changes(same) == {}


def test_rule_summary_takes_the_rules_rows_and_urisk():
    verdicts = pd.DataFrame(
        {
            "system": ["a", "a"],
            "baseline": ["b", "b"],
            "alpha": [1, 1],
            "method": ["t", "sign"],
            "statistic": [-3.0, 2.0],
            "verdict": ["risk", "inconclusive"],
        }
    )
    risk = pd.DataFrame({"system": ["a"], "baseline": ["b"], "alpha": [1.0], "urisk": [-0.2]})
    assert rule_summary(verdicts, risk).to_dict("records") == [
        {"system": "a", "baseline": "b", "alpha": 1.0, "urisk": -0.2, "trisk": -3.0, "verdict": "risk"}
    ]


SUMMARY = {
    "verdicts": [
        {
            "system": "weak",
            "baseline": "b",
            "alpha": 0.0,
            "verdict": "risk",
            "urisk": -0.1,
            "trisk": -4.0,
            "p_adjusted": 0.001,
        },
        {
            "system": "weak",
            "baseline": "b",
            "alpha": 5.0,
            "verdict": "risk",
            "urisk": -0.5,
            "trisk": -3.0,
            "p_adjusted": 0.01,
        },
        {
            "system": "ok",
            "baseline": "b",
            "alpha": 5.0,
            "verdict": "inconclusive",
            "urisk": 0.0,
            "trisk": None,
            "p_adjusted": None,
        },
        {
            "system": "odd",
            "baseline": "b",
            "alpha": 5.0,
            "verdict": "risk",
            "urisk": -0.2,
            "trisk": -2.5,
            "p_adjusted": 0.04,
        },
    ]
}


def test_gate_lines_name_each_offending_challenger_baseline_and_alpha():
    assert parse_gate(None) is None and parse_gate("risk") == Gate()
    assert parse_gate("risk@5", ["weak"]) == Gate(5.0, ("weak",)) and parse_gate(None, ["weak"]) == Gate(
        None, ("weak",)
    )
    lines = offenders(Gate(), SUMMARY)
    assert len(lines) == 3 and lines[0].startswith("risk: weak is significantly riskier than b at α = 0 (URisk -0.1")
    assert [line.split(" is ")[0] for line in offenders(Gate(5.0), SUMMARY)] == ["risk: weak", "risk: odd"]
    assert offenders(Gate(None, ("ok",)), SUMMARY) == [] and offenders(Gate(), None) == []


@pytest.mark.parametrize("text", ["reward", "risk@", "risk@x", "risk@-1", "risk@inf"])
def test_a_bad_gate_is_a_clear_error(text):
    with pytest.raises(ParameterError, match="expected risk"):
        parse_gate(text)


def test_a_gate_on_an_unknown_system_or_alpha_is_refused_before_the_report_runs():
    with pytest.raises(UnknownNameError, match="Did you mean 'weak'"):
        check_gate(Gate(systems=("waek",)), ["weak", "ok"], [0, 5])
    with pytest.raises(ParameterError, match="not in the report's grid"):
        check_gate(Gate(alpha=2.0), ["weak"], [0, 5])


def test_junit_has_one_case_per_verdict_failed_when_risk(tmp_path):
    junitparser = pytest.importorskip("junitparser")
    path, replaced = write_junit(
        tmp_path / "ci" / "risk.xml", [Suite("nightly", SUMMARY, "/r/1", 8.0), Suite("empty", None, "/r/2")]
    )
    suites = list(junitparser.JUnitXml.fromfile(str(path)))
    assert [s.name for s in suites] == ["nightly", "empty"] and suites[1].tests == 0 and not replaced
    cases = list(suites[0])
    assert [c.name for c in cases] == ["weak at α=0", "weak at α=5", "ok at α=5", "odd at α=5"]
    assert [bool(c.result) for c in cases] == [True, True, False, True]
    assert cases[0].classname == "riskreport.nightly.b" and suites[0].failures == 3
    assert suites[0].time == 8.0 and [c.time for c in cases] == [2.0] * 4  # the report's time, shared by its cases


@pytest.mark.parametrize("bad", ["\x1b[31m", "\x0c", "\x00", "\x08", "\ufffe", "\ud800"])
def test_junit_is_well_formed_whatever_characters_names_hold(tmp_path, bad):
    """Names come from users' files: characters XML 1.0 cannot hold are written as escapes and said; <&"' and
    non-ASCII stay as they are."""
    import xml.etree.ElementTree as ET

    odd = f"sys{bad}tem <&\"'> é"
    summary = {"verdicts": [{**SUMMARY["verdicts"][0], "system": odd, "baseline": f"b{bad}"}]}
    path, replaced = write_junit(tmp_path / "risk.xml", [Suite(f"job{bad}", summary, f"/r/{bad}")])
    root = ET.parse(path).getroot()  # raises on malformed XML
    case = root.find("testsuite/testcase")
    assert replaced == [f"U+{ord(bad[0]):04X}"]
    escape = f"\\x{ord(bad[0]):02x}" if ord(bad[0]) < 256 else f"\\u{ord(bad[0]):04x}"
    assert case.get("name") == f"sys{escape}{bad[1:]}tem <&\"'> é at α=0"
    assert root.find("testsuite").get("name") == f"job{escape}{bad[1:]}" and case.get("time") is not None


def test_a_junit_destination_that_cannot_be_written_is_refused_before_anything(tmp_path):
    from riskreport.io.files import DestinationError
    from riskreport.run.schedule.junit import check_junit_path

    (tmp_path / "file").write_text("x")
    with pytest.raises(DestinationError, match="is a folder"):
        check_junit_path(tmp_path)
    with pytest.raises(DestinationError, match="file is a file, not a folder"):
        check_junit_path(tmp_path / "file" / "deeper" / "risk.xml")
    assert check_junit_path(tmp_path / "new" / "risk.xml") == tmp_path / "new" / "risk.xml"
    assert not (tmp_path / "new").exists()  # checked, nothing made


def test_index_shows_findings_changes_and_history_of_many_jobs(tmp_path):
    """50 jobs x 100 reports (written by hand): one row per job with its headline, its changed verdicts linked to
    the report's section and a history figure of at most HISTORY bars; the list of every report is folded."""
    jobs, reports = 50, 100
    write_job_reports(tmp_path, jobs, reports)
    page = write_index(tmp_path).read_text()
    assert page.count("<svg class='history'") == jobs and page.count("<rect ") == jobs * min(reports, HISTORY)
    assert "<details><summary>All reports (5000), newest first</summary>" in page
    assert "jobs/job-07/20260099T000000Z/report.html#since" not in page  # 99 % 3 == 0: 'none', not a link
    assert "href='jobs/job-07/20260098T000000Z/report.html#since'>2 changed</a>" in page
    assert "1 ▲ reward</span> · 2 ○" in page


def test_the_since_section_lists_changed_verdicts_says_when_nothing_changed_and_escapes_names():
    from riskreport.render.pages.changes import since_section
    from riskreport.render.pages.export import add_contents
    from riskreport.stats.changes import Changes

    assert since_section(None)._repr_html_() == ""
    nothing = since_section(Changes(changes_table(BEFORE, BEFORE), "job n, report 1", "2026-01-01T02:00:00+00:00"))
    assert "Nothing changed since the previous report" in nothing._repr_html_()
    assert "Since job n, report 1, finished 2026-01-01 02:00:00 UTC" in nothing._repr_html_()
    named = AFTER.assign(system=AFTER["system"].replace("a", "<img src=x onerror=alert(1)>"))
    table = changes_table(BEFORE.assign(system=named["system"]), named)
    page = since_section(Changes(table, "<b>old</b>", None, count_changes(table)), "minus")._repr_html_()
    assert "<img" not in page and "<b>old" not in page and "&lt;img src=x" in page
    assert "3 verdict(s) changed" in page and "inconclusive → ▼ risk" in page and "▲ reward → inconclusive" in page
    assert "URisk before (minus)" in page
    contents = add_contents(f'<h1>T</h1><div class="rr-toc-slot"></div>{page}')
    assert '<li><a href="#since">Since &lt;b&gt;old&lt;/b&gt;</a></li>' in contents


def test_a_gate_on_a_report_without_verdicts_is_an_error_not_a_pass(tmp_path):
    from riskreport.run.folders.gate import enforce_gate

    (tmp_path / "summary.json").write_text(json.dumps({"schema_version": 1, "verdicts": [], "headline": None}))
    with pytest.raises(ParameterError, match="has no verdicts to gate"):
        enforce_gate(Gate(), tmp_path)
    enforce_gate(None, tmp_path)  # no gate: nothing to say


@pytest.fixture
def saved_report(tmp_path, tiny_collection, cache_dir):
    """A complete risk report of the tiny collection, as `Analysis.save` (and `riskreport run`) writes it."""
    import warnings

    import riskreport as rr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rr.analyse(str(tiny_collection), bootstrap_samples=50).save(tmp_path / "before")


def _cut_lines(path, keep):
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:keep]))


DAMAGES = [  # (file in tables/, damage, what the error says)
    ("verdicts.csv", lambda p: p.write_bytes(p.read_bytes()[:150]), "is truncated: its last line is incomplete"),
    ("verdicts.csv", lambda p: p.write_bytes(b""), "is empty"),
    ("verdicts.csv", lambda p: p.write_text(p.read_text().replace("method", "mthd", 1)), "has no column 'method'"),
    ("verdicts.csv", lambda p: _cut_lines(p, 1), "has a header but no rows"),
    ("verdicts.csv", lambda p: _cut_lines(p, 9), "lacks"),  # whole lines cut: the keys and methods say so
    ("verdicts.csv", lambda p: p.write_text(p.read_text().replace(",inconclusive", ",inconclusiv", 1)), "line "),
    ("verdicts.csv", lambda p: p.write_text(p.read_text().replace(",base,0,", ",base,zero,", 1)), "is not a number"),
    ("verdicts.csv", lambda p: p.unlink(), "missing"),
    ("risk.csv", lambda p: _cut_lines(p, 3), "lacks"),
    ("risk.csv", lambda p: p.write_bytes(p.read_bytes()[:-5]), "is truncated"),
    ("risk.csv", lambda p: p.write_text(p.read_text().replace("urisk", "u_risk", 1)), "has no column 'urisk'"),
    ("risk.csv", lambda p: p.unlink(), "missing"),
    ("effectiveness.csv", lambda p: _cut_lines(p, 2), "lacks system(s)"),
    ("effectiveness.csv", lambda p: p.write_text('"a,b\n'), "is not a readable CSV table"),
    ("params.json", lambda p: p.write_text("{"), "no report to compare with"),
]


def test_a_damaged_previous_report_is_refused_before_anything_runs(saved_report, tiny_collection, tmp_path, capsys):
    """Every table a comparison reads is checked, its columns, rows and cells and against the others: a damaged
    one is one line naming the file and what is wrong (exit 1), and nothing is made; the intact report passes."""
    import shutil

    from riskreport.errors import InputFormatError
    from riskreport.run.folders.changes import saved_side

    assert len(saved_side(saved_report).verdicts)
    for n, (name, damage, problem) in enumerate(DAMAGES):
        broken = tmp_path / f"broken-{n}"
        shutil.copytree(saved_report, broken)
        path = broken / name if name == "params.json" else broken / "tables" / name
        damage(path)
        with pytest.raises(InputFormatError) as info:
            saved_side(broken)
        assert str(path) in str(info.value) and problem in str(info.value), (name, problem, info.value)
        out = tmp_path / f"out-{n}"
        assert main(["run", "-c", str(tiny_collection), "--compare-with", str(broken), "--out", str(out), "-q"]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"riskreport: error: {path}") and not out.exists()


def test_a_batch_job_does_not_compare_with_a_damaged_previous_report_and_says_why(saved_report, tmp_path):
    import shutil

    from riskreport.run.folders.changes import job_previous

    parent = tmp_path / "jobs" / "nightly"
    shutil.copytree(saved_report, parent / "20260101T000000Z")
    (parent / "latest").symlink_to("20260101T000000Z")
    said: list[str] = []
    assert job_previous(parent, said.append)["folder"] == str(parent / "20260101T000000Z") and not said
    verdicts = parent / "latest" / "tables" / "verdicts.csv"
    verdicts.write_bytes(verdicts.read_bytes()[:150])
    assert job_previous(parent, said.append) is None
    (line,) = said
    assert line.startswith(f"warning: not compared with its previous report: {verdicts.resolve()}: is truncated")
    verdicts.unlink()  # a report of a template without verdicts: nothing to compare, nothing to say
    assert job_previous(parent, said.append) is None and len(said) == 1


def test_a_report_of_another_collection_names_it_and_inputs_go_by_their_path(saved_report, tiny_collection, tmp_path):
    import shutil
    import warnings

    import riskreport as rr
    from riskreport.render.pages.changes import since_section

    other = tmp_path / "other"
    shutil.copytree(tiny_collection, other)
    (other / "runs" / "risky.txt").write_text((other / "runs" / "risky.txt").read_text().replace("99-a", "99-b"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        changes = rr.analyse(str(other), bootstrap_samples=50).compare(saved_report)
    table = changes.table
    assert table.loc[0, ["change", "before", "after"]].tolist() == ["collection", "tiny", "other"]
    assert table.loc[table["change"] == "input", "name"].tolist() == ["runs/risky.txt"]  # moved, not changed: the rest
    assert changes.counts["collection"] == 1
    assert "previous report is of collection <code>tiny</code>, this one of <code>other</code>" in str(
        since_section(changes)._repr_html_()
    )


def test_files_of_the_same_name_in_a_collection_are_told_apart_by_their_path():
    from riskreport.run.folders.changes import collection_files

    before = collection_files({"/c/instances/a/1.run.gz": "1" * 64, "/c/instances/b/1.run.gz": "2" * 64}, "/c")
    after = collection_files({"/d/instances/a/1.run.gz": "3" * 64, "/d/instances/b/1.run.gz": "4" * 64}, "/d")
    assert list(before) == ["instances/a/1.run.gz", "instances/b/1.run.gz"]
    rows = changes_table(BEFORE, BEFORE, files_before=before, files_after=after)
    assert rows["name"].tolist() == ["instances/a/1.run.gz", "instances/b/1.run.gz"]
    assert collection_files({"/elsewhere/systems.txt": "5" * 64}, "/c") == {"/elsewhere/systems.txt": "5" * 64}
