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
    ],
)
def test_run_errors(tiny_collection, monkeypatch, capsys, args, message):
    monkeypatch.setenv("RISKREPORT_DATA", str(tiny_collection.parent))
    if "--collection" not in args:
        args = args + ["--collection", "tiny"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("riskreport: error: ") and message in err
    assert "Traceback" not in err


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
