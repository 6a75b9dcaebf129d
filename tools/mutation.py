"""Mutation pass over the numeric modules, each against its own tests only (docs/development.md).

    .venv/bin/pip install mutmut        # a development tool, not a dependency
    python tools/mutation.py                          # every module in MODULES, in order of risk
    python tools/mutation.py riskreport/stats/bootstrap.py --children 2
    python tools/mutation.py --list

For each module a scratch copy of the package and tests is made under `--work` (default .mutation/,
git-ignored) with a `[tool.mutmut]` section that mutates that one file and runs only its test files;
`mutmut run` tries every mutant (a test process forked per mutant, only the tests that reach the
mutated function, a CPU-time limit of (test time + constant) x multiplier x 2). Afterwards the
surviving mutants (and those no test reaches) are written with their diffs to
`<work>/<module>/survivors.md` and summed up on stdout. mutmut does not mutate decorated functions
nor module-level constants: for the modules in `NO_JIT` (or with `--undecorate`) the scratch copy of
the module has its `@njit` decorators removed, and its tests run with NUMBA_DISABLE_JIT=1, so that
mutmut mutates numba kernels as plain Python functions (and a forked test process does not call a
parallel kernel: GNU OpenMP, numba's threading layer here, terminates a child forked after it ran).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# module -> its own test files, in order of risk (a formula error there changes a verdict)
MODULES: dict[str, list[str]] = {
    "riskreport/stats/bootstrap.py": ["tests/test_bootstrap.py", "tests/test_resampling.py", "tests/test_inference.py"],
    "riskreport/stats/resampling.py": ["tests/test_resampling.py", "tests/test_bootstrap.py"],
    "riskreport/stats/risk_measures.py": ["tests/test_risk_measures.py", "tests/test_risk.py"],
    "riskreport/stats/risk.py": ["tests/test_risk_formulas.py", "tests/test_risk.py"],
    "riskreport/stats/inference.py": ["tests/test_inference_formulas.py"],
    "riskreport/stats/corrections.py": ["tests/test_corrections.py", "tests/test_inference.py"],
    "riskreport/ltr/objectives.py": [
        "tests/test_ltr_objectives.py",
        "tests/test_ltr_objective_options.py",
        "tests/test_ltr_lambdas.py",
    ],
    "riskreport/ltr/_lambdas.py": ["tests/test_ltr_lambdas.py", "tests/test_ltr_objectives.py"],
    "riskreport/bayes/diagnosis/psis.py": ["tests/test_psis.py"],
    "riskreport/bayes/diagnosis/convergence.py": ["tests/test_convergence.py"],
    "riskreport/bayes/modelling/likelihood.py": ["tests/test_likelihood.py", "tests/test_psis.py"],
    "riskreport/measures/gdeval.py": ["tests/test_gdeval.py"],
    "riskreport/measures/rbp.py": ["tests/test_rbp.py"],
}

# modules of numba kernels, or whose tests run them: mutated with their @njit decorators removed (if any) and tested
# with numba's compiler off (NUMBA_DISABLE_JIT=1; the kernels give the same bits either way, docs/development.md)
NO_JIT = {"riskreport/ltr/_lambdas.py", "riskreport/ltr/objectives.py"}
DECORATOR = re.compile(r"^@(numba\.)?njit\b.*\n", re.MULTILINE)  # a one-line @njit / @njit(...) decorator

IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "benchmarks", ".hypothesis")


def toml_list(values: list[str]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def prepare(
    module: str, tests: list[str], work: Path, multiplier: float, constant: float, undecorate: bool = False
) -> Path:
    """A fresh scratch copy of the package and tests whose pyproject mutates `module` only; with `undecorate`, the
    copy of `module` without its numba decorators."""
    folder = work / module.removeprefix("riskreport/").removesuffix(".py").replace("/", "-")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copytree(ROOT / "riskreport", folder / "riskreport", ignore=IGNORED)
    shutil.copytree(ROOT / "tests", folder / "tests", ignore=IGNORED)
    if undecorate:
        source = folder / module
        source.write_text(DECORATOR.sub("", source.read_text()))
    config = f"""
[tool.mutmut]
source_paths = ["riskreport"]
only_mutate = ["{module}"]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-x"]
pytest_add_cli_args_test_selection = {toml_list(tests)}
timeout_multiplier = {multiplier}
timeout_constant = {constant}
use_git_change_detection = false
"""
    (folder / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + config)
    return folder


def environment(folder: Path, undecorate: bool) -> dict[str, str]:
    """The tests' environment: riskreport's cache in the scratch folder, not the user's (a mutant of the code
    that fills the cache, the studentized range values of `stats/inference.py`, would otherwise store wrong
    values under the right key, and every later report and test would read them); numba's compiler off for
    an undecorated module (its kernels run as Python)."""
    return (
        os.environ
        | {"RISKREPORT_CACHE": str(folder.resolve() / "cache")}
        | ({"NUMBA_DISABLE_JIT": "1"} if undecorate else {})
    )


def mutmut(folder: Path, *args: str, timeout: float | None = None, undecorate: bool = False) -> str:
    command = [str(Path(sys.executable).with_name("mutmut")), *args]
    done = subprocess.run(
        command,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=environment(folder, undecorate),
    )
    return done.stdout + done.stderr


def diffs(folder: Path, names: list[str]) -> list[str]:
    """The diff of each mutant, from one process (`mutmut show` costs a process start per mutant)."""
    if not names:
        return []
    script = (
        "import json, sys\n"
        "from mutmut.mutation.diff_apply import find_mutant, get_diff_for_mutant\n"
        "names = json.load(sys.stdin)\n"
        "json.dump([get_diff_for_mutant(n, path=find_mutant(n).path) for n in names], sys.stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, input=json.dumps(names), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def report(module: str, folder: Path, write: bool = True) -> tuple[dict[str, int], list[str]]:
    """Counts by status, and the mutants that were not killed (survived, no tests, suspicious)."""
    lines = mutmut(folder, "results", "--all", "true").splitlines()
    statuses = dict(line.strip().rsplit(": ", 1) for line in lines if re.match(r"\s+\S+: \w", line))
    counts: dict[str, int] = {}
    for status in statuses.values():
        counts[status] = counts.get(status, 0) + 1
    alive = sorted(name for name, status in statuses.items() if status not in ("killed", "timeout"))
    if not write:
        return counts, alive
    text = [f"# Mutants of {module} not killed by its tests\n", f"counts: {counts}\n"]
    for name, diff in zip(alive, diffs(folder, alive)):
        text += [f"\n## {name}: {statuses[name]}\n", "```diff", diff.strip(), "```"]
    (folder / "survivors.md").write_text("\n".join(text) + "\n")
    return counts, alive


def drive(tests: list[str], names: list[str], cpu_limit: int) -> dict[str, int]:
    """Run `tests` once per mutant in a forked child (cwd: a mutants/ folder): {mutant: pytest's exit code}.

    The mutated functions pick the active mutant from MUTANT_UNDER_TEST at each call, so one parent
    that has imported everything forks a child per mutant, as `mutmut run` does. A child that uses
    more than `cpu_limit` CPU seconds is stopped (-24: SIGXCPU, counted as killed).
    """
    import pytest

    sys.path.insert(0, os.getcwd())
    options = ["-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-x", *tests]
    if pytest.main(["--collect-only", *options]) != 0:  # import everything once, before forking
        raise SystemExit("the tests cannot be collected")
    codes = {}
    for name in ["", *names]:  # "" first: the unmutated code must pass
        pid = os.fork()
        if pid == 0:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 1))
            os.environ["MUTANT_UNDER_TEST"] = name
            sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child exits below
            os._exit(int(pytest.main(options)))
        status = os.waitpid(pid, 0)[1]
        codes[name] = os.waitstatus_to_exitcode(status)
        if name == "" and codes[name] != 0:
            raise SystemExit(f"the tests fail without a mutant (exit {codes[name]})")
    return codes


def recheck(
    module: str, folder: Path, cpu_limit: int, tests: list[str], again: bool = False, undecorate: bool = False
) -> list[str]:
    """Try the mutants that the last run (with `again`: the last recheck) left alive against the current
    `tests`; those still alive."""
    if again:
        codes = json.loads((folder / "recheck.out.json").read_text())
        alive = [name for name in json.loads((folder / "recheck.json").read_text()) if codes[name] == 0]
    else:
        _, alive = report(module, folder, write=False)
    tests = folder / "mutants" / "tests"
    shutil.rmtree(tests)
    shutil.copytree(ROOT / "tests", tests, ignore=IGNORED)
    names = folder / "recheck.json"
    names.write_text(json.dumps(alive))
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--drive",
        str(names),
        "--cpu-limit",
        str(cpu_limit),
        module,
    ]
    subprocess.run(
        command, cwd=folder / "mutants", check=True, capture_output=True, text=True, env=environment(folder, undecorate)
    )
    codes = json.loads(names.with_suffix(".out.json").read_text())
    still = sorted(name for name in alive if codes[name] == 0)
    lines = [f"{module}: {len(alive) - len(still)} of {len(alive)} mutants now killed; still alive:"]
    lines += [f"\n## {name}\n```diff\n{diff.strip()}\n```" for name, diff in zip(still, diffs(folder, still))]
    (folder / "recheck.md").write_text("\n".join(lines) + "\n")
    return still


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="paths as in MODULES (default: all, in order of risk)")
    parser.add_argument("--work", type=Path, default=ROOT / ".mutation", help="scratch folder (default .mutation/)")
    parser.add_argument("--children", type=int, default=1, help="mutants tried at once (default 1)")
    parser.add_argument("--timeout-multiplier", type=float, default=3.0, help="mutmut's timeout_multiplier")
    parser.add_argument("--timeout-constant", type=float, default=2.0, help="mutmut's timeout_constant (s)")
    parser.add_argument("--report-only", action="store_true", help="summarise an earlier run, do not run")
    parser.add_argument("--list", action="store_true", help="print the modules and their tests, then stop")
    parser.add_argument(
        "--recheck", action="store_true", help="try the mutants an earlier run left alive against the current tests"
    )
    parser.add_argument("--cpu-limit", type=int, default=120, help="CPU seconds per mutant in --recheck")
    parser.add_argument("--again", action="store_true", help="with --recheck: only those the last recheck left alive")
    parser.add_argument(
        "--tests", action="append", help="with --recheck: only these test files (default: the module's own)"
    )
    parser.add_argument(
        "--undecorate",
        action=argparse.BooleanOptionalAction,
        help="remove the module's @njit decorators in the scratch copy and test with NUMBA_DISABLE_JIT=1 "
        "(default: for the modules in NO_JIT)",
    )
    parser.add_argument("--drive", type=Path, help=argparse.SUPPRESS)  # internal: the child of --recheck
    args = parser.parse_args(argv)
    args.work = args.work.resolve()  # the recheck runs its child in the scratch folder
    if args.drive:
        codes = drive(args.tests or MODULES[args.modules[0]], json.loads(args.drive.read_text()), args.cpu_limit)
        args.drive.with_suffix(".out.json").write_text(json.dumps(codes))
        return 0
    if args.list:
        for module, tests in MODULES.items():
            print(module, " ".join(tests))
        return 0
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"not in MODULES: {', '.join(unknown)} (see --list)")
    for module in args.modules or list(MODULES):
        start, cpu = time.monotonic(), os.times()
        folder = args.work / module.removeprefix("riskreport/").removesuffix(".py").replace("/", "-")
        undecorate = module in NO_JIT if args.undecorate is None else args.undecorate
        if args.recheck:
            still = recheck(module, folder, args.cpu_limit, args.tests or MODULES[module], args.again, undecorate)
            print(f"{module}: {len(still)} still alive -> {folder / 'recheck.md'}", flush=True)
            continue
        if not args.report_only:
            folder = prepare(
                module, MODULES[module], args.work, args.timeout_multiplier, args.timeout_constant, undecorate
            )
            log = mutmut(folder, "run", "--max-children", str(args.children), undecorate=undecorate)
            (folder / "run.log").write_text(log)
        counts, alive = report(module, folder)
        used = os.times()
        children = used.children_user + used.children_system - cpu.children_user - cpu.children_system
        print(
            f"{module}: {counts}; {time.monotonic() - start:.0f} s wall, {children:.0f} s CPU, "
            f"load {os.getloadavg()[0]:.1f}; not killed: {len(alive)} -> {folder / 'survivors.md'}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
