"""Scheduled runs that say what changed: a job's second report lists exactly the verdicts that changed since its
first (a run file changed on purpose), summary.json validates against its schema, the risk gate's exit status
and lines, JUnit XML, the on_change hook, and an unchanged re-run still skipped. Two full risk_report runs."""

import json
import sys
import warnings
from pathlib import Path

import pytest
from conftest import write_qrels, write_run

from riskreport.run.cli.commands import main
from riskreport.run.folders.gate import GATE_EXIT
from riskreport.run.folders.summary import SCHEMA_FILE

TOPICS = [f"t{n:02d}" for n in range(24)]
ALPHAS = [0.0, 1.0, 5.0]


def ranking(wins: set[int]) -> list:
    """A run whose first document is the relevant one on the topics numbered in `wins` (P@1 = 1 there, else 0)."""
    rows = []
    for n, topic in enumerate(TOPICS):
        first, second = (f"{topic}-r", f"{topic}-n") if n in wins else (f"{topic}-n", f"{topic}-r")
        rows += [(topic, first, 2), (topic, second, 1)]
    return rows


BASE = set(range(16))  # the baseline finds the relevant document first on 16 of 24 topics
STEADY = (BASE - {0, 1}) | {16, 17}  # two losses, two wins: inconclusive at every α, in both reports
BEFORE = (BASE - {2}) | {18}  # one loss, one win: inconclusive
AFTER = (BASE - set(range(2, 14))) | {18, 19}  # twelve losses, two wins: a significant risk at every α


@pytest.fixture
def changing(tmp_path) -> Path:
    root = tmp_path / "nightly"
    write_qrels(root / "qrels.txt", [(t, f"{t}-{d}", int(d == "r")) for t in TOPICS for d in ("r", "n")])
    write_run(root / "runs" / "base.run", ranking(BASE))
    write_run(root / "runs" / "steady.run", ranking(STEADY))
    write_run(root / "runs" / "candidate.run", ranking(BEFORE))
    (root / "collection.toml").write_text('title = "Nightly"\nmeasure = "P@1"\nbaseline = "base"\n')
    return root


def test_second_report_says_exactly_which_verdicts_changed_and_gates_ci(tmp_path, changing, cache_dir, capsys):
    reports, hook_log = tmp_path / "reports", tmp_path / "hook.log"
    hook = tmp_path / "hook.py"
    hook.write_text(f"import sys\nopen({str(hook_log)!r}, 'a').write(sys.argv[-1] + '\\n')\n")
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[[job]]\nname = "nightly"\ncollection = "./nightly"\nalphas = {ALPHAS}\nbootstrap_samples = 200\n'
        f'fail_on = "risk"\non_change = [{json.dumps(sys.executable)}, "hook.py"]\non_change_timeout = 60\n'
    )
    cli = ["batch", str(jobs), "--reports", str(reports), "--quiet"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(cli + ["--fail-on", "risk"]) == 0  # no risky challenger: the gates pass; nothing to compare with
        first = (reports / "jobs" / "nightly" / "latest").resolve()
        assert not (first / "tables" / "changes.csv").exists() and not hook_log.exists()
        assert json.loads((first / "summary.json").read_text())["changes"] is None

        write_run(changing / "runs" / "candidate.run", ranking(AFTER))  # the change, on purpose
        junit = tmp_path / "ci" / "risk.xml"
        assert main(cli + ["--junit", str(junit)]) == GATE_EXIT
    captured = capsys.readouterr()
    second = (reports / "jobs" / "nightly" / "latest").resolve()
    assert second != first
    lines = [line for line in captured.err.splitlines() if "significantly riskier" in line]
    assert lines == [
        f"riskreport: nightly: risk: candidate is significantly riskier than base at α = {a:g}"
        + line.split(f"α = {a:g}")[1]
        for a, line in zip(ALPHAS, lines)
    ]
    assert "nightly  ok" in captured.out and "3 verdict(s) changed since job nightly" in captured.out

    changes = (second / "tables" / "changes.csv").read_text().splitlines()
    verdict_rows = [row.split(",")[:7] for row in changes if row.startswith("verdict,")]
    assert verdict_rows == [
        ["verdict", "", "candidate", "base", f"{a}", "inconclusive", "risk"] for a in ("0", "1", "5")
    ]
    assert changes[1].startswith("input,runs/candidate.run,,,,")  # what went in: the one file that changed, by its path
    assert [row.split(",")[2] for row in changes if row.startswith("effectiveness,")] == ["candidate"]

    summary = json.loads((second / "summary.json").read_text())
    assert summary["changes"]["verdicts_changed"] == 3 and summary["changes"]["previous_folder"] == str(first)
    assert summary["headline"] == {"alpha": 5.0, "risk": ["candidate"], "reward": [], "inconclusive": ["steady"]}
    page = (second / "report.html").read_text()
    assert f"Since job nightly, report {first.name}" in page and "inconclusive → ▼ risk" in page
    assert f'<a href="#since">Since job nightly, report {first.name}' in page  # in the contents
    assert hook_log.read_text().splitlines() == [str(second / "summary.json")]  # once: the run whose verdicts changed

    index = (reports / "index.html").read_text()
    assert f"href='jobs/nightly/{second.name}/report.html#since'>3 changed</a>" in index
    assert "1 ▼ risk</span>" in index and index.count("<svg class='history'") == 1
    assert "⛔ gate: 3 risk</span>" in index  # the job whose gate fired is marked
    log = sorted((reports / "logs").glob("batch-*.log"))[-1].read_text()
    assert [line.split(" ", 1)[1] for line in log.splitlines() if " gate: " in line] == [
        f"gate: {line.removeprefix('riskreport: ')}" for line in lines
    ]  # the gate's lines are in the batch's log as on stderr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(cli + ["--junit", str(junit)]) == GATE_EXIT  # unchanged: skipped, its latest still fails the gate
    out = capsys.readouterr().out
    assert "nightly  skipped" in out and (reports / "jobs" / "nightly" / "latest").resolve() == second
    assert hook_log.read_text().splitlines() == [str(second / "summary.json")]

    jsonschema = pytest.importorskip("jsonschema")  # last: what needs an optional package
    jsonschema.validate(summary, json.loads(SCHEMA_FILE.read_text()))
    junitparser = pytest.importorskip("junitparser")
    (suite,) = junitparser.JUnitXml.fromfile(str(junit))
    assert suite.name == "nightly" and suite.tests == 2 * len(ALPHAS) and suite.failures == len(ALPHAS)
    assert sorted(c.name for c in suite if c.result) == [f"candidate at α={a:g}" for a in ALPHAS]
    report = {p.name: p.value for p in suite.properties()}["report"]
    assert report == str(second)  # the skipped job's stamped report, not jobs/nightly/latest, which moves
    duration = json.loads((second / "params.json").read_text())["duration_s"]
    assert suite.time == pytest.approx(duration, abs=1e-3) and all(c.time > 0 for c in suite)


def test_the_gate_on_the_demo_names_its_two_risky_challengers(tmp_path, capsys):
    import riskreport as rr
    from riskreport.run.folders.gate import GATE_EXIT as EXIT
    from riskreport.run.folders.gate import enforce_gate, parse_gate

    out = tmp_path / "demo"
    args = ["run", "--out", str(out), "-p", "bootstrap_samples", "200", "--quiet", "--fail-on", "risk@5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(args + ["--junit", str(tmp_path / "demo.xml")]) == EXIT
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out / "report.html") and (out / "report.html").is_file()  # still written
    offenders = sorted(line.split(" is ")[0] for line in captured.err.splitlines() if "riskier" in line)
    assert offenders == ["riskreport: risk: weak-ql", "riskreport: risk: weak-tfidf"]
    enforce_gate(parse_gate(None, ["rerank-ce", "bm25-rm3"]), out)  # named challengers without risk: passes
    assert (tmp_path / "demo.xml").is_file()
    same = rr.Analysis.load(out).compare(out)  # the API: a report compared with itself changed nothing
    assert same.empty and same.previous == str(out) and same.verdicts_changed == 0
