"""The `riskreport` command line: run, templates, inspect, demo."""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from .errors import RiskReportError

EPILOG = """examples:
  riskreport run                                   # demo collection, its defaults
  riskreport run --collection path/to/trec-web-2012 --baseline indriCASP --measure ERR@20 --alpha 0 1 5 10
  riskreport run risk_report -p systems '["a","b"]' --out /tmp/report
  riskreport templates                             # templates and their parameters
  riskreport inspect demo                          # what a collection holds
"""


def _say(message: str) -> None:
    print(f"riskreport: {message}", file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="riskreport", description="Risk-sensitive evaluation reports for IR "
                                     "test collections (TREC runs + qrels, or per-topic score tables).",
                                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser("run", help="execute a template on a collection and write an HTML report",
                              description="Execute a template with papermill and export it to standalone HTML. "
                              "Unset options take the collection's defaults (collection.toml).")
    run.add_argument("template", nargs="?", default="risk_report",
                     help="template name (templates/<name>.ipynb) or path to a .ipynb (default: risk_report)")
    run.add_argument("--collection", "-c", help="collection name (folder under data/) or path (default: demo)")
    run.add_argument("--baseline", "-b", help="baseline system id (default: the collection's)")
    run.add_argument("--alpha", "-a", nargs="+", type=float, metavar="ALPHA",
                     help="risk-sensitivity values α ≥ 0, e.g. --alpha 0 1 5 10 (default: the collection's)")
    run.add_argument("--measure", "-m", help="ir_measures measure, e.g. ERR@20, nDCG@10, AP (default: the collection's)")
    run.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                     help="any template parameter; VALUE is a Python literal (e.g. 0.01, '[\"a\",\"b\"]', None) "
                          "or plain text")
    run.add_argument("--out", "-o", help="write the report into this folder (default: "
                     "reports/<collection>/<template>/<UTC timestamp>/ and update 'latest')")
    run.add_argument("--reports", default="reports", help="reports folder used without --out (default: reports)")
    run.add_argument("--show-code", action="store_true", help="keep code cells in the HTML")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress output")

    commands.add_parser("templates", help="list templates and their parameters")

    inspect = commands.add_parser("inspect", help="summarise a collection: files, systems, topics, defaults")
    inspect.add_argument("collection", nargs="?", default="demo", help="collection name or path (default: demo)")

    demo = commands.add_parser("demo", help="(re)generate the synthetic demo collection")
    demo.add_argument("--path", default=None, help="target folder (default: the project's data/demo)")
    demo.add_argument("--seed", type=int, default=None, help="random seed (default: the generator's)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = _show_warning
            return COMMANDS[args.command](args)
    except RiskReportError as error:
        print(f"riskreport: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("riskreport: interrupted", file=sys.stderr)
        return 130


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"riskreport: warning: {message}", file=sys.stderr)


def _run(args) -> int:
    from .runner import run_report
    parameters = dict(args.parameter)
    folder = run_report(args.template, collection=args.collection, baseline=args.baseline, alphas=args.alpha,
                        measure=args.measure, parameters=parameters, out=args.out, reports_dir=args.reports,
                        show_code=args.show_code, progress=None if args.quiet else _say)
    print(folder / "report.html")
    return 0


def _templates(args) -> int:
    from .runner import list_templates
    for template in list_templates():
        print(f"{template.name}  ({template.path})")
        if template.description:
            print(f"  {template.description}")
        for name, spec in template.parameters.items():
            print(f"    {name:<12} = {spec['default']:<12} {spec['help']}")
        print()
    return 0


def _inspect(args) -> int:
    from .collection import load_collection
    from .evaluation import available_systems
    from .trec import read_qrels
    collection = load_collection(args.collection)
    print(f"{collection.title}\n  path: {collection.path}")
    if collection.description:
        print(f"  {collection.description}")
    if collection.qrels is not None:
        qrels = read_qrels(collection.qrels)
        topics = qrels.loc[qrels["relevance"] > 0, "query_id"].nunique()
        print(f"  qrels: {collection.qrels.name}: {len(qrels)} judgments, {qrels['query_id'].nunique()} topics, "
              f"{topics} with relevant documents, grades {sorted(qrels['relevance'].unique().tolist())}")
    systems = available_systems(collection)
    print(f"  systems ({len(systems)}): " + ", ".join(f"{s}" + ("" if src == "run" else " [scores.csv]")
                                                     for s, src in systems.items()))
    for system, instances in collection.instances.items():
        print(f"  non-deterministic system {system}: {len(instances)} instance(s)")
    if collection.scores is not None:
        print(f"  score table: {collection.scores.name}")
    defaults = {k: collection.config[k] for k in ("measure", "baseline", "alphas") if k in collection.config}
    print(f"  defaults: {defaults if defaults else '(none; riskreport falls back to nDCG@10, the first system, α 0 1 5 10)'}")
    return 0


def _demo(args) -> int:
    from .collection import PROJECT_ROOT
    from .demo import generate_demo
    path = Path(args.path) if args.path else PROJECT_ROOT / "data" / "demo"
    kwargs = {} if args.seed is None else {"seed": args.seed}
    generate_demo(path, **kwargs)
    print(path)
    return 0


def _version() -> str:
    from . import __version__
    return __version__


COMMANDS = {"run": _run, "templates": _templates, "inspect": _inspect, "demo": _demo}
