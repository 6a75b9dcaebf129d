"""The arguments of the `riskreport` command line: `build_parser` (every command, option and help text) and the
converters of option values (α lists, durations, positive counts). `riskreport.run.cli.commands` runs the commands."""

from __future__ import annotations

import argparse
import difflib
import math
import re

from riskreport.errors import ParameterError

EPILOG = """examples:
  riskreport run                                   # demo collection, its defaults
  riskreport run --collection path/to/trec-web-2012 --baseline indriCASP --measure ERR@20 --alpha 0 1 5 10
  riskreport run risk_report -p systems '["a","b"]' --out /tmp/report
  riskreport batch examples/jobs.toml --jobs 2      # the jobs of a file; unchanged jobs are skipped
  riskreport templates                             # templates and their parameters
  riskreport new-template my_report                # scaffold templates/my_report.ipynb
  riskreport templates check templates/my_report.ipynb   # validate it (and run it on the demo)
  riskreport inspect demo                          # what a collection holds
"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Top(
        prog="riskreport",
        description="Risk-sensitive evaluation reports for IR "
        "test collections (TREC runs + qrels, or per-topic score tables).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Command)

    run = commands.add_parser(
        "run",
        help="execute a template on a collection and write an HTML report",
        description="Execute a template with papermill and export it to standalone HTML. "
        "Unset options take the collection's defaults (collection.toml).",
        epilog="exit codes: 0 report written, 1 a clear error (bad input, a failing or timed-out template), 2 usage, "
        "4 the risk gate (--fail-on) found a challenger significantly riskier than its baseline (the report "
        "is written), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM)",
    )
    run.add_argument(
        "template",
        nargs="?",
        default="risk_report",
        help="template name (an installed template or one in $RISKREPORT_TEMPLATES) or path to an "
        ".ipynb (default: risk_report). A template is code: it runs as you. ./templates is not "
        "searched for bare names; give such a template as a path (templates/NAME.ipynb)",
    )
    run.add_argument("--collection", "-c", help="collection name (folder under data/) or path (default: demo)")
    run.add_argument(
        "--baseline",
        "-b",
        nargs="+",
        metavar="BASELINE",
        help="baseline system id (default: the collection's); several (-b bm25 dense) compare every "
        "system with each, corrected as one family",
    )
    run.add_argument(
        "--alpha",
        "-a",
        nargs="+",
        type=_alpha_list,
        metavar="ALPHA",
        help="risk-sensitivity values α ≥ 0, e.g. --alpha 0 1 5 10 or --alpha 0,1,5,10 (default: the collection's)",
    )
    run.add_argument(
        "--qrels",
        help="qrels for the runs of --collection (a collection or a bare folder of TREC "
        "runs): a TREC qrels file or an ir_datasets id, e.g. irds:trec-robust04 (needs riskreport[irds])",
    )
    run.add_argument(
        "--measure", "-m", help="ir_measures measure, e.g. ERR@20, nDCG@10, AP (default: the collection's)"
    )
    run.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help='any template parameter; VALUE is a Python literal (e.g. 0.01, \'["a","b"]\', None) or plain text',
    )
    run.add_argument(
        "--out",
        "-o",
        help="write the report into this folder: a new or empty one, or a previous "
        "report (its files are replaced, other files kept) (default: "
        "reports/<collection>/<template>/<UTC timestamp>/ and update 'latest')",
    )
    run.add_argument(
        "--force",
        action="store_true",
        help="with --out: also write into a non-empty folder that is "
        "not a report; only riskreport's own files are written, nothing else is touched",
    )
    run.add_argument("--reports", default="reports", help="reports folder used without --out (default: reports)")
    run.add_argument("--show-code", action="store_true", help="keep code cells in the HTML")
    run.add_argument(
        "--figure-formats",
        type=_figure_formats,
        metavar="LIST",
        help="formats of the figure files in figures/, some of png,svg,pdf (default: png; the page shows every "
        "figure whatever this says; SVG and PDF, for papers, take about a third of a small report's CPU time)",
    )
    run.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="time limit of the whole report: when reached, the kernel is stopped, the failed notebook "
        "is kept (failed-*), the previous report is untouched and the exit code is 1 (default: none)",
    )
    run.add_argument(
        "--compare-with",
        metavar="FOLDER",
        help="a previous report folder: the report's 'Since …' section and tables/changes.csv say what changed "
        "since it (inputs, parameters, systems, verdicts, effectiveness means)",
    )
    _gate_arguments(run, "the report")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress output")

    batch = commands.add_parser(
        "batch",
        help="run the jobs of a TOML file in parallel, skipping unchanged ones; write reports/index.html",
        description="Run every [[job]] of a jobs file (keys: name, template, keep, show_code, timeout, qrels, figure_formats and any template "
        "parameter; [defaults] applies to all jobs). A job whose template, parameters, input files and package "
        "versions are unchanged since its latest complete report is skipped. Reports go to "
        "DIR/jobs/<name>/<UTC timestamp>/, the index to DIR/index.html, the log to DIR/logs/. "
        "Templates are code: every template a jobs file names (by name or by path) is executed as the user "
        "who runs the batch, so a jobs file, and the templates it names, must be writable only by people you "
        "would let run programs as that user (cron often runs as a service user).",
        epilog="exit codes: 0 every job ok or skipped, 1 a job failed or a clear error (e.g. in the jobs file), "
        "2 usage, 3 the reports folder is locked by another batch, 4 the risk gate (--fail-on, a job's fail_on) "
        "found a challenger significantly riskier than its baseline (every job ok or skipped), 130 interrupted "
        "(Ctrl-C), 143 terminated (SIGTERM)",
    )
    batch.add_argument("jobs_file", metavar="JOBS.toml", help="the jobs file")
    batch.add_argument("--reports", default="reports", metavar="DIR", help="reports folder (default: reports)")
    batch.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        default=None,
        metavar="N",
        help="jobs at a time (default: one per core; with dask: all)",
    )
    batch.add_argument("--force", action="store_true", help="run every job, even unchanged ones")
    batch.add_argument("--dry-run", "-n", action="store_true", help="say what would run and why; write nothing")
    batch.add_argument(
        "--wait",
        nargs="?",
        type=float,
        const=math.inf,
        default=0.0,
        metavar="SECONDS",
        help="if another batch holds the reports folder, wait for it (forever, or SECONDS) "
        "instead of exiting with code 3",
    )
    batch.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="time limit of each report whose job sets no `timeout` (nor [defaults]); a job that "
        "reaches it is stopped and recorded as timed out, the others go on (default: none)",
    )
    batch.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="local: a pool of processes (default); dask: an existing Dask cluster",
    )
    batch.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://10.0.0.5:8786")
    _gate_arguments(batch, "every job's latest report")
    batch.add_argument("--quiet", "-q", action="store_true", help="no progress output (the summary is still printed)")

    templates = commands.add_parser(
        "templates",
        help="list templates and their parameters; check or scaffold templates",
        description="Without ACTION: list the templates riskreport finds and their parameters.",
        epilog="exit codes of `templates check`: 0 every template passed, 1 a template failed, 2 usage",
    )
    actions = templates.add_subparsers(dest="action", metavar="ACTION", parser_class=_Command)
    check = actions.add_parser(
        "check",
        help="validate templates: parameters, no inline statistics, a run on the demo collection",
        description="Validate templates: one cell tagged `parameters`; every parameter on one line that papermill "
        "reads, with a supported type and a help comment; no statistics computed in the notebook (numpy beyond "
        "grids, scipy, statsmodels, .mean(), .std(), ...); and the template runs on the demo collection. "
        "Each problem names the file, the cell (counted from the top, markdown included), the line and a fix.",
        epilog="exit codes: 0 every template passed, 1 a template failed, 2 usage",
    )
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="a template .ipynb, a folder of them, or a template name (default: every template found)",
    )
    check.add_argument("--no-execute", action="store_true", help="static checks only (fast): do not run the template")
    check.add_argument("--collection", "-c", default="demo", help="collection to run the templates on (default: demo)")
    check.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    _new_template_arguments(actions.add_parser("new", help="scaffold a minimal template (same as new-template)"))
    _new_template_arguments(
        commands.add_parser(
            "new-template",
            help="scaffold a minimal template: templates/NAME.ipynb",
            description="Write a minimal template that passes `riskreport templates check`: authoring notes, a "
            "parameters cell, a header and one URisk section (table, plot, CSV). Edit it in Jupyter.",
        )
    )

    inspect = commands.add_parser("inspect", help="summarise a collection: files, systems, topics, defaults")
    inspect.add_argument("collection", nargs="?", default="demo", help="collection name or path (default: demo)")

    demo = commands.add_parser(
        "demo",
        help="(re)generate the synthetic demo collection (and, without --path, the "
        "learning-to-rank demo demo-letor beside it)",
    )
    demo.add_argument("--path", default=None, help="target folder (default: the project's data/demo)")
    demo.add_argument("--seed", type=int, default=None, help="random seed (default: the generator's)")
    return parser


class _Suggesting(argparse.ArgumentParser):
    """A parser whose usage errors name what was meant: an unknown option (`--alpah`: did you mean --alpha?)
    or command (`rnu`: did you mean run?)."""

    def error(self, message: str):
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            meant = difflib.get_close_matches(choice[1], re.findall(r"'([^']*)'", choice[2]), 1)
            message += f" (did you mean {meant[0]}?)" if meant else ""
        super().error(message)

    def _refuse_extras(self, extras: list[str]) -> None:
        options = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        meant = [m for e in extras if e.startswith("-") for m in difflib.get_close_matches(e.split("=")[0], options, 1)]
        self.error(
            f"unrecognized arguments: {' '.join(extras)}" + (f" (did you mean {', '.join(meant)}?)" if meant else "")
        )


class _Top(_Suggesting):
    """The top-level parser: an option it does not know (`--verison`) is a usage error with the option meant.
    (A command's own unknown options are refused by the command's parser, `_Command`, before they get here.)"""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self._refuse_extras(extras)
        return namespace, extras


class _Command(_Suggesting):
    """A command's parser: an argument it does not know is its usage error (exit 2), with the option meant
    (`run --alpah 5`: did you mean --alpha?), not the top-level usage that names no command's options."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            self._refuse_extras(extras)
        return namespace, extras


def alpha_values(values: list[list[float]] | None) -> list[float] | None:
    """The values of --alpha, given apart (`0 1 5`) or with commas (`0,1,5`), each checked by `_alpha_list`."""
    if values is None:
        return None
    alphas = [alpha for value in values for alpha in value]
    if not alphas:
        raise ParameterError("--alpha: give at least one α ≥ 0, e.g. --alpha 0 1 5 10.")
    return alphas


def _alpha_list(text: str) -> list[float]:
    """One value of --alpha (`5` or `0,1,5`): a usage error (exit 2, as every flag's) unless finite numbers ≥ 0."""
    alphas = []
    for part in text.replace(",", " ").split():
        try:
            alpha = float(part)
        except ValueError:
            alpha = math.nan
        if not math.isfinite(alpha) or alpha < 0:
            raise argparse.ArgumentTypeError(
                f"{part}: each α must be a finite number ≥ 0 (a loss weighs 1 + α), "
                "e.g. --alpha 0 1 5 10 or --alpha 0,1,5,10"
            )
        alphas.append(alpha)
    return alphas


def _figure_formats(text: str) -> tuple[str, ...]:
    """--figure-formats: comma-separated formats (png, svg, pdf)."""
    from riskreport.render.plotting.figures import check_formats

    try:
        return check_formats(text, "--figure-formats")
    except ParameterError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--figure-formats: ")) from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {text!r}")
    return value


def _gate_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """--fail-on, --fail-on-system and --junit of `run` and `batch`."""
    from riskreport.run.folders.gate import gate_option

    parser.add_argument(
        "--fail-on",
        type=gate_option,
        metavar="risk[@ALPHA]",
        help=f"risk gate: exit with status 4 when a challenger of {what} is significantly riskier than its "
        "baseline (the report's verdict rule) at any α (risk) or at one α (risk@5), one line per offending "
        "(challenger, baseline, α) on stderr; the report is still written",
    )
    parser.add_argument(
        "--fail-on-system",
        action="append",
        metavar="NAME",
        help="gate only these challengers (repeat for several; implies --fail-on risk)",
    )
    parser.add_argument(
        "--junit",
        metavar="FILE",
        help="also write JUnit XML: one test case per (challenger, baseline, α), failed when the verdict is risk",
    )


def _new_template_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="template name: letters, digits and _, starting with a letter")
    parser.add_argument("--dir", default="templates", help="folder to write NAME.ipynb into (default: ./templates)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing NAME.ipynb")


def _version() -> str:
    from riskreport import __version__

    return __version__
