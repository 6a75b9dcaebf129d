"""The command line: help, listings, and one-paragraph errors that list what is available."""

import subprocess
import sys

import pytest

from riskreport.run.cli import main


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
        (["run", "--fail-on", "reward"], "--fail-on 'reward': expected risk (any α) or risk@ALPHA"),
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
