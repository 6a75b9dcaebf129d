"""The command line: help, listings, and one-paragraph errors that list what is available."""

import subprocess
import sys

import pytest

from riskreport.run.cli.commands import main


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("run", "templates", "inspect", "demo"):
        assert command in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "no_such_template"], "Unknown template 'no_such_template'. Available templates: "),
        (["run", "--collection", "no-such-collection"], "Unknown collection 'no-such-collection'"),
        (["run", "--baseline", "nobody"], "Unknown baseline 'nobody'"),
        (["run", "--measure", "nDGC@10"], "Unknown measure 'nDGC@10'"),
        (["run", "-p", "nonsense", "1"], "Unknown parameter 'nonsense'. Available parameters: collection, baseline"),
        (["run", "-p", "sig_level", "high"], "Parameter 'sig_level' of template 'risk_report' expects float"),
        (["run", "-p", "systems", "__import__('os').system('true')"], "expects Optional[list[str]]"),
        (["run", "--compare-with", "nowhere"], "nowhere/params.json: no report to compare with"),
        (["run", "nondeterministic", "--fail-on", "risk"], "template 'nondeterministic' writes no verdicts"),
        (["run", "bayesian_risk", "--fail-on-system", "x"], "template 'bayesian_risk' writes no verdicts"),
        (["run", "--junit", "TINY"], "tiny: is a folder; give the path of the XML file"),
        (["run", "--junit", "TINY/runs/base.run/risk.xml"], "TINY/runs/base.run is a file, not a folder"),
        (
            ["run", "bayesian_risk", "-p", "bayes_executor", "dsak"],
            "bayes_executor must be local (this machine) or dask",
        ),
        (["run", "bayesian_risk", "-p", "bayes_executor", "dask"], "bayes_executor dask needs the Dask scheduler's"),
        (
            ["run", "bayesian_risk", "-p", "bayes_executor", "dask", "-p", "scheduler", "tcp://10.0.0.5"],
            "scheduler 'tcp://10.0.0.5': no port number; expected a Dask scheduler address",
        ),
        (
            ["run", "bayesian_risk", "-p", "bayes_executor", "dask", "-p", "scheduler", "tpc://h:8786"],
            "scheduler 'tpc://h:8786': unknown protocol 'tpc'",
        ),
        (["run", "bayesian_risk", "-p", "scheduler", "tcp://h:8786"], "only used with bayes_executor dask"),
        (["run", "--fail-on-system", "rsiky"], "Unknown system 'rsiky'. Did you mean 'risky'?"),
        (["run", "--fail-on", "risk@2"], "--fail-on risk@2: α = 2 is not in the report's grid (0, 1, 5)"),
        (["run", "--collection", "./no/such/folder"], "./no/such/folder does not exist (. exists, no does not)"),
        (["run", "--collection", "TINY/runs/base.run"], "TINY/runs/base.run is a file, not a collection"),
        (["run", "--collection", "TINY/runs"], "no qrels"),
        (["run", "--collection", "EMPTY"], "EMPTY/runs holds no run files, named <system>.run"),
    ],
)
def test_run_errors(tiny_collection, monkeypatch, capsys, args, message):
    monkeypatch.setenv("RISKREPORT_DATA", str(tiny_collection.parent))
    if "--collection" not in args:
        args = args + ["--collection", "tiny"]
    empty = tiny_collection.parent / "empty"
    (empty / "runs").mkdir(parents=True)
    (empty / "qrels.txt").write_text((tiny_collection / "qrels.txt").read_text())
    folders = {"TINY": str(tiny_collection), "EMPTY": str(empty)}
    args = [folders.get(a.split("/")[0], a.split("/")[0]) + a[len(a.split("/")[0]) :] for a in args]
    message = folders.get(message.split("/")[0], message.split("/")[0]) + message[len(message.split("/")[0]) :]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("riskreport: error: ") and message in err
    assert "Traceback" not in err and "Unknown collection '/" not in err and "Unknown collection './" not in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--alpah", "5"], "riskreport run: error: unrecognized arguments: --alpah (did you mean --alpha?)"),
        (["run", "--alpha", "abc"], "riskreport run: error: argument --alpha/-a: abc: each α must be a finite number"),
        (["run", "--alpha", "0,-1"], "argument --alpha/-a: -1: each α must be a finite number ≥ 0"),
        (
            ["templates", "check", "--colection", "demo"],
            "unrecognized arguments: --colection (did you mean --collection?)",
        ),
        (["run", "a", "b"], "riskreport run: error: unrecognized arguments: b"),
        (["run", "--fail-on", "reward"], "riskreport run: error: argument --fail-on: expected risk (any α) or risk@"),
        (["run", "--fail-on", "riskk"], "argument --fail-on: expected risk (any α) or risk@ALPHA"),
        (["run", "--fail-on", "risk@abc"], "got 'risk@abc'"),
        (["run", "--fail-on", "risk@-1"], "got 'risk@-1'"),
        (["run", "--fail-on", "risk@"], "got 'risk@'"),
        (["batch", "jobs.toml", "--fail-on", "riskk"], "riskreport batch: error: argument --fail-on: expected risk"),
        (["batch", "jobs.toml", "--fail-on", "risk@inf"], "got 'risk@inf'"),
    ],
)
def test_flag_errors_are_the_commands_usage_errors(capsys, args, message):
    """Exit 2 with the command's own usage, as argparse's other flag errors (`--alpha abc` was 1; `--alpah` showed
    the top-level usage without the option meant)."""
    with pytest.raises(SystemExit) as exited:
        main(args)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and message in err and f"usage: riskreport {args[0]}" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--verison"], "riskreport: error: unrecognized arguments: --verison (did you mean --version?)"),
        (["rnu"], "invalid choice: 'rnu' (choose from 'run', 'batch',"),
        (["rnu"], "'demo') (did you mean run?)"),
        (["bacth", "jobs.toml"], "(did you mean batch?)"),
        (["zzz"], "invalid choice: 'zzz'"),
    ],
)
def test_top_level_mistakes_name_what_was_meant(capsys, args, message):
    """A mistyped top-level option or command: exit 2 with the top-level usage and, when one is close, the meant one."""
    with pytest.raises(SystemExit) as exited:
        main(args)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and message in err and "usage: riskreport [-h]" in err
    assert ("did you mean" in err) == (args[0] != "zzz")


@pytest.mark.parametrize("value", ["gif", "png,,jpeg", ","])
def test_figure_formats_on_the_command_line_are_checked_before_anything_runs(capsys, value):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--figure-formats", value])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "argument --figure-formats:" in err and "png, svg, pdf" in err


def test_unknown_baseline_lists_systems(tiny_collection, capsys):
    assert main(["run", "--collection", str(tiny_collection), "--baseline", "bsae"]) == 1
    assert "Did you mean 'base'? Available baselines: base, good, risky" in capsys.readouterr().err


def test_templates_and_inspect(tiny_collection, capsys):
    assert main(["templates"]) == 0
    out = capsys.readouterr().out
    assert "risk_report" in out and "alphas" in out and "risk-sensitivity grid" in out
    assert main(["inspect", str(tiny_collection)]) == 0
    out = capsys.readouterr().out
    assert "Tiny test collection" in out and "systems (3): base, good, risky" in out


def test_python_dash_m():
    done = subprocess.run([sys.executable, "-m", "riskreport", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("riskreport ")


@pytest.mark.parametrize("args", [["-b", "base", "godo"], ["-p", "baselines", '["base", "godo"]']])
def test_a_misspelt_second_baseline_is_caught_before_anything_runs(tiny_collection, tmp_path, capsys, args):
    """It was caught in the template's cell 3, after the runs were evaluated, and left a failed-* folder."""
    reports = tmp_path / "reports"
    assert main(["run", "-c", str(tiny_collection), "--reports", str(reports), "-q", *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("riskreport: error: Unknown baseline 'godo'. Did you mean 'good'?") and "Cell" not in err
    assert not reports.exists() or not any(reports.rglob("failed-*"))


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "no_such_template"], "Unknown template 'no_such_template'"),
        (["run", "-c", "TINY", "-b", "bsae"], "Did you mean 'base'? Available baselines: base, good, risky"),
        (["run", "-c", "no-such-collection"], "Unknown collection 'no-such-collection'"),
        (["run", "nondeterministic", "-c", "TINY", "--fail-on", "risk"], "writes no verdicts"),
        (["run", "-c", "TINY", "--junit", "TINY"], "is a folder"),
        (["run", "--fail-on", "riskk"], "argument --fail-on"),
        (["run", "--alpah", "5"], "did you mean --alpha?"),
    ],
)
def test_usage_errors_are_found_before_the_heavy_imports(tiny_collection, args, message):
    """A misspelt template, an unknown collection or baseline, a gate that cannot apply, a --junit folder: said
    before scipy, pandas or papermill is imported (they cost seconds of CPU; measured in
    tests/benchmarks/bench_startup.py)."""
    args = [str(tiny_collection) if a == "TINY" else a for a in args]
    probe = (
        "import sys\nfrom riskreport.run.cli.commands import main\n"
        "try:\n    code = main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, [m for m in ('scipy', 'pandas', 'papermill', 'statsmodels') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120)
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout.split(" ", 1) == [str(2 if "--" in message else 1), "[]\n"]
