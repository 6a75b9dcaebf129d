"""The code checks of the project, run as CI runs them from the repository root: the layer contract
(import-linter), ruff (lint and format), mypy; and proof that the layer contract catches a wrong-way import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the tools of the test extra, installed beside this Python


def _tool(name: str) -> str:
    found = BIN / name if (BIN / name).is_file() else shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]' (it is in the test extra of pyproject.toml)")
    return str(found)


def _run(command: list[str], cwd: Path = ROOT, package_root: Path = ROOT) -> subprocess.CompletedProcess:
    """`command` from `cwd` with `package_root` first on the path (the checkout, not an installed riskreport)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package_root), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _passes(command: list[str]) -> None:
    result = _run(command)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"


def test_the_layer_contract_is_kept():
    _passes([_tool("lint-imports"), "--no-cache"])


def test_ruff_check_passes():
    _passes([_tool("ruff"), "check", "riskreport", "tests"])


def test_ruff_format_check_passes():
    _passes([_tool("ruff"), "format", "--check", "riskreport", "tests"])


def test_mypy_passes():
    _passes([_tool("mypy")])  # packages and options: [tool.mypy] in pyproject.toml


def test_a_wrong_way_import_breaks_the_layer_contract(tmp_path):
    """The risk measures (stats) importing the runner (run) is what the contract forbids: a copy of the package
    with that one import added fails `lint-imports`, which names the import."""
    shutil.copytree(
        ROOT / "riskreport", tmp_path / "riskreport", ignore=shutil.ignore_patterns("__pycache__", "templates")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")  # the same contracts
    risk = tmp_path / "riskreport" / "stats" / "risk.py"
    risk.write_text(risk.read_text() + "\nimport riskreport.run.report.runner  # noqa: E402, F401 - the wrong way\n")
    result = _run([_tool("lint-imports"), "--no-cache"], cwd=tmp_path, package_root=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "BROKEN" in output and "riskreport.stats.risk -> riskreport.run.report.runner" in output, output


# The package's imports as grimp (import-linter's graph) reads them, every function-level import included, in
# dependency order: `graphlib` raises CycleError naming the modules of a circle when there is one.
CIRCLES = """
import graphlib, sys, grimp
graph = grimp.build_graph("riskreport", cache_dir=None)
imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
try:
    graphlib.TopologicalSorter(imports).prepare()
except graphlib.CycleError as error:
    sys.exit("import circle: " + " -> ".join(error.args[1]))
"""


def test_no_import_circle_in_the_package():
    _passes([sys.executable, "-c", CIRCLES])


def test_an_import_circle_is_found(tmp_path):
    """A copy of the package where summary.json's module imports the reports index, which reads summaries (a circle
    summary -> index -> index_jobs -> summary inside one floor, which no layer contract sees), fails and names it."""
    shutil.copytree(
        ROOT / "riskreport", tmp_path / "riskreport", ignore=shutil.ignore_patterns("__pycache__", "templates")
    )
    summary = tmp_path / "riskreport" / "run" / "folders" / "summary.py"
    summary.write_text(summary.read_text() + "\nimport riskreport.run.folders.index  # noqa: E402, F401 - a circle\n")
    result = _run([sys.executable, "-c", CIRCLES], cwd=tmp_path, package_root=tmp_path)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "import circle:" in result.stderr, result.stderr
    assert "riskreport.run.folders.summary" in result.stderr and "riskreport.run.folders.index" in result.stderr


def test_every_short_module_name_resolves():
    """`rr.<name>` for every entry of `riskreport.MODULES` and for `rr.options` (a top-level module), through the
    package's `__getattr__` even where an earlier import already set the attribute: `rr.options` used to look
    for a riskreport.stats.options in a fresh interpreter."""
    import riskreport as rr

    for name in ["options", *rr.MODULES]:
        module = rr.__getattr__(name)
        assert module.__name__.endswith("." + name), (name, module.__name__)


def test_every_short_bayes_module_name_resolves():
    """`bayes.<name>` for every entry of `riskreport.bayes.MODULES` (the modules by their names before bayes/ was
    in floors: the Bayesian template reads `bayes.analysis`), through the package's `__getattr__`."""
    from riskreport import bayes

    assert {"analysis", "presentation", "measures", "sampling", "fit_progress", "kernels"} <= set(bayes.MODULES)
    for name, path in bayes.MODULES.items():
        module = bayes.__getattr__(name)
        assert module.__name__ == f"riskreport.bayes.{path}" and path.endswith("." + name), (name, module.__name__)


def test_every_short_render_module_name_resolves():
    """`render.<name>` for every entry of `riskreport.render.MODULES` (the modules by their names before render/ was
    in floors: the templates read `from riskreport.render import bayes`), through the package's `__getattr__`."""
    from riskreport import render

    assert {"report", "bayes", "plots", "figures", "tables", "html", "export"} <= set(render.MODULES)
    for name, path in render.MODULES.items():
        module = render.__getattr__(name)
        assert module.__name__ == f"riskreport.render.{path}" and path.endswith("." + name), (name, module.__name__)


MAX_MODULE_LINES = 400


def test_every_module_is_under_the_size_limit():
    """The project's rule: a module over ~400 lines (after `ruff format`) holds more than one concern; split it."""
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / "riskreport").rglob("*.py")
    }
    assert sizes, "no modules found"
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


MAX_PACKAGE_LINES = 4_000


def _package_sizes(package: Path) -> dict[str, int]:
    """Lines of each package folder's own files: every text file in it or in a folder under it that is no package
    (nbconvert's templates, a JSON schema), not those of its sub-packages, not compiled `.pyc` files."""
    folders = [package, *(f for f in package.rglob("*") if (f / "__init__.py").is_file())]
    return {
        str(folder.relative_to(package.parent)): sum(_lines(path) for path in _own_files(folder)) for folder in folders
    }


def _own_files(folder: Path) -> list[Path]:
    """The files of `folder` and of its folders that are no packages (nor `__pycache__`), down to the next package."""
    files = []
    for path in folder.iterdir():
        if path.is_file() and path.suffix != ".pyc":
            files.append(path)
        elif path.is_dir() and path.name != "__pycache__" and not (path / "__init__.py").is_file():
            files.extend(_own_files(path))
    return files


def _lines(path: Path) -> int:
    """A text file's lines; a binary file (an image, say) has none."""
    try:
        return len(path.read_text(encoding="utf-8").splitlines())
    except UnicodeDecodeError:
        return 0


def _over_size(sizes: dict[str, int]) -> dict[str, int]:
    return {name: n for name, n in sizes.items() if n > MAX_PACKAGE_LINES}


def test_every_package_is_under_the_size_limit():
    """The project's rule: a package whose own files total over 4,000 lines is split into sub-packages (render/'s
    nbconvert template counts: it is the page's HTML)."""
    sizes = _package_sizes(ROOT / "riskreport")
    assert {"riskreport", "riskreport/bayes", "riskreport/bayes/fitting", "riskreport/run/cli"} <= set(sizes)
    assert sizes["riskreport/render/pages"] > sum(
        len(path.read_text(encoding="utf-8").splitlines()) for path in (ROOT / "riskreport/render/pages").glob("*.py")
    )  # the .j2 and conf.json in pages/nbtemplates/ are counted
    assert _over_size(sizes) == {}


def test_an_over_size_package_is_found(tmp_path):
    """A package of 4,001 lines, in two modules and a template in a folder that is no package, is over the limit; its
    parent, whose own module is short and whose sub-package's lines are not its own, is not; compiled files and
    `__pycache__` are not counted, nor a binary file."""
    inner = tmp_path / "pkg" / "inner"
    (inner / "templates").mkdir(parents=True)
    (inner / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text('"""A package."""\n')
    (inner / "__init__.py").write_text("\n".join(f"A{i} = {i}" for i in range(2_000)) + "\n")
    (inner / "more.py").write_text("\n".join(f"B{i} = {i}" for i in range(1_000)) + "\n")
    (inner / "templates" / "page.html.j2").write_text("<p>a line</p>\n" * 1_001)
    (inner / "__pycache__" / "more.cpython-310.pyc").write_text("compiled\n" * 5_000)
    (inner / "stale.pyc").write_text("compiled\n" * 5_000)
    (inner / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe" * 100)
    sizes = _package_sizes(tmp_path / "pkg")
    assert sizes == {"pkg": 1, "pkg/inner": 4_001}
    assert _over_size(sizes) == {"pkg/inner": 4_001}
