"""The `riskreport` command line: run, batch, templates (list, check, new), new-template, inspect, demo. Its
arguments are `riskreport.run.cli.parser`."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from riskreport.errors import RiskReportError
from riskreport.progress import stderr_printer
from riskreport.run.cli.parser import alpha_values, build_parser

_say = stderr_printer("riskreport: ")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "run" and args.force and args.out is None:
        parser.error("--force goes with --out (reports under --reports always go into a new folder)")
    if args.command == "batch" and (args.executor == "dask") != (args.scheduler is not None):
        parser.error("--executor dask and --scheduler ADDRESS go together")
    from riskreport.io.processes import Interrupted, raise_on_signals, restore_signals

    previous = raise_on_signals()  # SIGINT and SIGTERM: one Interrupted, then a clean-up no second signal cuts short
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = _show_warning
            return COMMANDS[args.command](args)
    except RiskReportError as error:
        print(f"riskreport: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as error:
        interrupt = error if isinstance(error, Interrupted) else Interrupted()
        print(f"riskreport: {interrupt}", file=sys.stderr, flush=True)
        return interrupt.exit_code
    except BrokenPipeError:  # `riskreport inspect | head`: the reader left; say nothing more
        _silence_stdout()
        return 141
    finally:
        restore_signals(previous)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit raises no second BrokenPipeError."""
    import os

    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"riskreport: warning: {message}", file=sys.stderr)


def _run(args) -> int:
    from riskreport.run.folders.gate import RiskGateError, UngatedReportError, parse_gate
    from riskreport.run.report.usage import check_run_usage

    gate = parse_gate(args.fail_on, args.fail_on_system)
    junit = _junit_path(args.junit)
    check_run_usage(args.template, collection=args.collection, baselines=args.baseline, gate=gate, qrels=args.qrels)
    from riskreport.run.report.runner import run_report

    parameters = dict(args.parameter)
    collection = args.collection
    baseline = args.baseline[0] if args.baseline else None
    if args.baseline and len(args.baseline) > 1:
        parameters["baselines"] = list(dict.fromkeys(args.baseline))
    if args.qrels:
        from riskreport.io.inputs import with_qrels

        collection = with_qrels(collection or "demo", args.qrels)
    try:
        folder = _run_report(run_report, args, collection, baseline, parameters)
    except RiskGateError as gate_error:
        print(gate_error.report / "report.html", flush=True)
        _junit(junit, [gate_error.report])
        for line in gate_error.lines:
            print(f"riskreport: {line}", file=sys.stderr)
        return gate_error.exit_code
    except UngatedReportError as error:  # the report is written: say where, then why the gate could not judge it
        print(error.report / "report.html", flush=True)
        raise
    print(folder / "report.html", flush=True)
    _junit(junit, [folder])
    return 0


def _run_report(run_report, args, collection, baseline, parameters) -> Path:
    return run_report(
        args.template,
        collection=collection,
        baseline=baseline,
        alphas=alpha_values(args.alpha),
        measure=args.measure,
        parameters=parameters,
        out=args.out,
        reports_dir=args.reports,
        show_code=args.show_code,
        progress=None if args.quiet else _say,
        force=args.force,
        timeout=args.timeout,
        figure_formats=args.figure_formats,
        compare_with=args.compare_with,
        fail_on=args.fail_on,
        fail_on_systems=args.fail_on_system,
    )


def _junit_path(path: str | None) -> Path | None:
    """--junit FILE checked before anything runs (`junit.check_junit_path`)."""
    if path is None:
        return None
    from riskreport.run.schedule.junit import check_junit_path

    return check_junit_path(path)


def _junit(path: Path | None, folders: list[Path], names: list[str] | None = None) -> None:
    """--junit FILE: the verdicts of the report folders as JUnit XML (`run.junit`), a suite per report named
    `names[i]` (default: its job, or its collection and template)."""
    if path is None:
        return
    from riskreport.run.schedule.junit import report_suite, write_junit

    written, replaced = write_junit(path, [report_suite(f, names[n] if names else None) for n, f in enumerate(folders)])
    if replaced:
        _say(
            f"warning: JUnit XML: characters XML 1.0 cannot hold ({', '.join(replaced)}) are written as \\xNN in "
            f"{written}"
        )
    _say(f"JUnit XML: {written}")


def _batch(args) -> int:
    from riskreport.run.folders.gate import GATE_EXIT
    from riskreport.run.folders.lock import LockedError
    from riskreport.run.schedule.batch import run_batch

    junit = None if args.dry_run else _junit_path(args.junit)
    try:
        result = run_batch(
            args.jobs_file,
            reports_dir=args.reports,
            jobs=args.jobs,
            force=args.force,
            dry_run=args.dry_run,
            executor=args.executor,
            scheduler=args.scheduler,
            wait=args.wait,
            progress=None if args.quiet else _say,
            timeout=args.timeout,
            fail_on=args.fail_on,
            fail_on_systems=args.fail_on_system,
        )
    except LockedError as error:
        print(f"riskreport: error: {error}", file=sys.stderr)
        return 3
    print(result.table(), flush=True)
    reported = [(r.name, Path(r.report)) for r in result.results if r.report and r.status in ("ok", "skipped")]
    for line in result.gate:
        print(f"riskreport: {line}", file=sys.stderr)
    if not result.dry_run:
        _junit(junit, [folder for _, folder in reported], [name for name, _ in reported])
    if not result.ok:
        return 1
    return GATE_EXIT if result.gate else 0


def _templates(args) -> int:
    if args.action == "check":
        return _check_templates(args)
    if args.action == "new":
        return _new_template(args)
    from riskreport.run.report.runner import list_templates

    for template in list_templates():
        print(f"{template.name}  ({template.path})")
        if template.description:
            print(f"  {template.description}")
        for name, spec in template.parameters.items():
            print(f"    {name:<12} = {spec['default']:<12} {spec['help']}")
        print()
    return 0


def _check_templates(args) -> int:
    from riskreport.run.cli.authoring import check_template, template_files

    files = template_files(args.paths)
    if not files:
        raise RiskReportError("No templates to check: give a .ipynb file or a folder of templates.")
    results = []
    for path in files:
        result = check_template(
            path, execute=not args.no_execute, collection=args.collection, progress=None if args.quiet else _say
        )
        print(result.report(), flush=True)
        results.append(result)
    failed = sum(not r.ok for r in results)
    print(f"{len(results)} template(s) checked: {len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def _new_template(args) -> int:
    from riskreport.run.cli.authoring import new_template

    path = new_template(args.name, args.dir, force=args.force)
    print(path)
    _say(f"edit it in Jupyter, then: riskreport templates check {path} && riskreport run {path}")
    return 0


def _inspect(args) -> int:
    from riskreport.io.collection import load_collection
    from riskreport.io.trec import read_qrels
    from riskreport.measures.evaluation import available_systems

    collection = load_collection(args.collection)
    print(f"{collection.title}\n  path: {collection.path}")
    if collection.description:
        print(f"  {collection.description}")
    if collection.qrels is not None:
        qrels = read_qrels(collection.qrels)
        topics = qrels.loc[qrels["relevance"] > 0, "query_id"].nunique()
        print(
            f"  qrels: {collection.qrels.name}: {len(qrels)} judgments, {qrels['query_id'].nunique()} topics, "
            f"{topics} with relevant documents, grades {sorted(qrels['relevance'].unique().tolist())}"
        )
    systems = available_systems(collection)
    print(
        f"  systems ({len(systems)}): "
        + ", ".join(f"{s}" + ("" if src == "run" else " [scores.csv]") for s, src in systems.items())
    )
    for system, instances in collection.instances.items():
        print(f"  non-deterministic system {system}: {len(instances)} instance(s)")
    if collection.scores is not None:
        print(f"  score table: {collection.scores.name}")
    defaults = {k: collection.config[k] for k in ("measure", "baseline", "alphas") if k in collection.config}
    print(
        f"  defaults: {defaults if defaults else '(none; riskreport falls back to nDCG@10, the first system, α 0 1 5 10)'}"
    )
    return 0


def _demo(args) -> int:
    from riskreport.io.collection import demo_path
    from riskreport.io.demo import generate_demo

    path = Path(args.path) if args.path else demo_path()
    kwargs = {} if args.seed is None else {"seed": args.seed}
    generate_demo(path, **kwargs)
    print(path)
    if not args.path:  # the learning-to-rank demo beside it (template risk_ltr)
        from riskreport.io.letor import demo_path as letor_demo_path
        from riskreport.io.letor_demo import generate_letor_demo

        print(generate_letor_demo(letor_demo_path(), **kwargs))
    return 0


COMMANDS = {
    "run": _run,
    "batch": _batch,
    "templates": _templates,
    "new-template": _new_template,
    "inspect": _inspect,
    "demo": _demo,
}
