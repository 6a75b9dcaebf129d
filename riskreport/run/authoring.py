"""Template authoring: check a template (`check_template`) and scaffold a new one (`new_template`).

A template is an ordinary notebook with one cell tagged `parameters` that papermill can read,
and code cells that call riskreport functions and show their results: statistics live in
riskreport, where they are tested, not in the notebook. The check is static (nbformat, papermill's
own parameter inspection, Python's `ast`), then executes the template on the demo collection.

>>> result = check_template("templates/risk_report.ipynb", execute=False)   # doctest: +SKIP
>>> print(result.report())                                                  # doctest: +SKIP
"""
from __future__ import annotations

import ast
import io
import logging
import os
import re
import tempfile
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from riskreport.errors import ParameterError, ReportExecutionError, RiskReportError
from riskreport.measures.evaluation import Progress


PARAMETERS_TAG = "parameters"
TEMPLATE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")

# Types `runner.coerce_parameter` checks a -p value against (optionally wrapped in Optional[...]).
SCALAR_TYPES = {"str", "int", "float", "bool"}
LIST_TYPES = {"list", "List"}
DICT_TYPES = {"dict", "Dict"}

# Inline statistics: names whose call computes a number in the notebook instead of in riskreport.
STAT_METHODS = frozenset({
    "mean", "average", "median", "mode", "std", "var", "sem", "mad", "quantile", "percentile", "skew", "kurt",
    "kurtosis", "describe", "corr", "corrwith", "cov", "cumsum", "cumprod", "prod", "product", "diff",
    "pct_change", "rolling", "expanding", "ewm", "sqrt", "log", "log1p", "log2", "log10", "exp", "pow", "dot",
    "nanmean", "nanmedian", "nanstd", "nanvar", "nanpercentile", "nanquantile"})
TALLY_METHODS = frozenset({"sum", "count", "nunique"})   # counting is presentation, but not inside a division
AGGREGATING_METHODS = frozenset({"agg", "aggregate", "transform", "apply", "pipe", "resample"})
STAT_MODULES = frozenset({"scipy", "statsmodels", "statistics", "math", "sklearn", "pingouin"})
NUMPY_ALLOWED = frozenset({"linspace", "arange", "geomspace", "logspace", "array", "asarray", "nan", "inf"})
ARITHMETIC = (ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
DIVISION = (ast.Div, ast.FloorDiv)

FIX_INLINE = ("compute it in riskreport and call that function from the template (rr.evaluate, rr.risk_table, "
              "rr.effectiveness_table, rr.inference.*, ...); the notebook only arranges and shows results")


@dataclass(frozen=True)
class Problem:
    """One defect of a template: where (1-based cell and line), what is wrong, how to fix it."""

    message: str
    fix: str
    cell: int | None = None     # every cell counts, markdown included, from the top
    line: int | None = None     # line within the cell
    code: str = ""              # the offending source line, shown under the message

    def where(self) -> str:
        parts = [f"cell {self.cell}"] if self.cell is not None else []
        parts += [f"line {self.line}"] if self.line is not None else []
        return ", ".join(parts)


@dataclass
class CheckResult:
    """What `check_template` found in one template; `ok` when nothing."""

    path: Path
    problems: list[Problem] = field(default_factory=list)
    parameters: int = 0
    executed: str = ""          # e.g. "executed on demo in 8.1 s"; empty when not executed

    @property
    def ok(self) -> bool:
        return not self.problems

    def report(self) -> str:
        """Plain text: one block per problem, each naming the file, cell and line."""
        shown = _shown_path(self.path)
        if self.ok:
            steps = [f"{self.parameters} parameters", "static checks passed"] + ([self.executed] if self.executed else [])
            return f"{shown}: ok ({'; '.join(steps)})"
        lines = [f"{shown}: FAILED ({len(self.problems)} problem{'s' if len(self.problems) > 1 else ''})"]
        for problem in self.problems:
            where = f"{shown}, {problem.where()}" if problem.where() else shown
            lines.append(f"  {where}: {problem.message}")
            if problem.code:
                lines.append(f"      | {problem.code}")
            lines.append(f"      fix: {problem.fix}")
        return "\n".join(lines)


def check_template(path: str | os.PathLike, *, execute: bool = True, collection: str = "demo",
                   progress: Progress | None = None) -> CheckResult:
    """Check a template notebook: parameters, no inline statistics, and (unless `execute=False`) a run.

    The run executes the template with `runner.run_report` on `collection` (default: the demo)
    in a temporary folder; a failing cell is reported with its number, line and error.
    """
    path = Path(path)
    result = CheckResult(path)
    notebook, problem = _read_notebook(path)
    if problem:
        result.problems.append(problem)
        return result
    fatal = _structure_problems(notebook)
    result.problems += fatal
    tagged = _tagged_cells(notebook, PARAMETERS_TAG)
    declared: dict = {}
    readable = notebook.metadata.get("kernelspec", {}).get("name")   # else papermill cannot inspect it
    if readable and len(tagged) == 1 and notebook.cells[tagged[0] - 1].cell_type == "code":
        declared, problems = _parameter_problems(path, notebook, tagged[0])
        result.parameters = len(declared)
        result.problems += problems
    for number, cell in enumerate(notebook.cells, 1):
        if cell.cell_type == "code" and number not in tagged:
            result.problems += inline_statistics(cell.source, number)
    if execute and not fatal:
        started = time.time()
        problems = _execution_problems(path, collection if "collection" in declared else None, progress)
        result.problems += problems
        if not problems:
            result.executed = f"executed on {collection} in {time.time() - started:.1f} s"
    result.problems.sort(key=lambda p: (p.cell or 0, p.line or 0))
    return result


def template_files(paths: list[str] | None = None) -> list[Path]:
    """The notebooks to check: files, folders of `.ipynb`, or template names; none: every template found."""
    from riskreport.run.runner import find_template, template_dirs
    if not paths:
        found: dict[str, Path] = {}
        for folder, _ in template_dirs():
            for notebook in sorted(folder.glob("*.ipynb")):
                found.setdefault(notebook.stem, notebook)
        return list(found.values())
    files: list[Path] = []
    for spec in paths:
        path = Path(spec)
        if path.is_dir():
            files += sorted(path.glob("*.ipynb"))
        elif path.suffix == ".ipynb" or path.exists() or os.sep in spec:
            files.append(path)          # a missing file is reported by the check itself
        else:
            files.append(find_template(spec).path)
    return files


# --- reading and structure ---------------------------------------------------------------------

def _read_notebook(path: Path):
    import nbformat
    if path.suffix != ".ipynb":
        return None, Problem("not a notebook: a template is an .ipynb file", "give the path of a .ipynb file")
    if not path.is_file():
        return None, Problem("file not found", "check the path; `riskreport templates` lists the templates it finds")
    try:
        return nbformat.read(path, as_version=4), None
    except Exception as error:  # nbformat raises JSON, validation and encoding errors alike
        return None, Problem(f"not a readable notebook ({type(error).__name__}: {error})",
                             "open and save it in Jupyter, or restore it from version control")


def _tagged_cells(notebook, tag: str) -> list[int]:
    return [n for n, cell in enumerate(notebook.cells, 1) if tag in cell.metadata.get("tags", [])]


def _structure_problems(notebook) -> list[Problem]:
    """Defects that keep papermill from parameterising the notebook at all."""
    problems = []
    if not notebook.metadata.get("kernelspec", {}).get("name"):
        problems.append(Problem("the notebook metadata has no kernelspec, so papermill cannot run it",
                                "open the notebook in Jupyter, choose a Python kernel and save it"))
    language = notebook.metadata.get("language_info", {}).get("name") or \
        notebook.metadata.get("kernelspec", {}).get("language")
    if language and language.lower() != "python":
        problems.append(Problem(f"the notebook's language is {language!r}; riskreport templates are Python",
                                "use a Python kernel"))
    tagged = _tagged_cells(notebook, PARAMETERS_TAG)
    if not tagged:
        problems.append(Problem("no cell is tagged `parameters`, so papermill cannot inject parameters",
                                "add the tag `parameters` to the code cell that assigns the defaults (JupyterLab: "
                                "property inspector > Cell Tags; Notebook: View > Cell Toolbar > Tags)"))
    elif len(tagged) > 1:
        for number in tagged[1:]:
            problems.append(Problem(f"a second cell tagged `parameters` (the first is cell {tagged[0]}); papermill "
                                    "reads and overrides only the first", "remove the tag from this cell and move its "
                                    f"parameters into cell {tagged[0]}", cell=number))
    for number in tagged:
        if notebook.cells[number - 1].cell_type != "code":
            problems.append(Problem("the cell tagged `parameters` is not a code cell",
                                    "tag the code cell that assigns the defaults instead", cell=number))
    for number in _tagged_cells(notebook, "injected-parameters"):
        problems.append(Problem("a cell tagged `injected-parameters`: this notebook is an executed report, not a "
                                "template", "delete the cell (start from the template, not from report.ipynb)",
                                cell=number))
    return problems


# --- the parameters cell -----------------------------------------------------------------------

def _parameter_problems(path: Path, notebook, number: int) -> tuple[dict, list[Problem]]:
    """Check every line of the parameters cell against what papermill reads from it."""
    import papermill
    source = notebook.cells[number - 1].source
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return {}, [Problem(f"syntax error: {error.msg}", "correct the Python syntax", cell=number,
                            line=error.lineno, code=_line(source, error.lineno))]
    papermill_logger = logging.getLogger("papermill")
    level, papermill_logger.level = papermill_logger.level, logging.ERROR   # its warnings become our problems
    try:
        inspected = papermill.inspect_notebook(str(path))
    except Exception as error:  # papermill raises ValueError and others for odd metadata
        return {}, [Problem(f"papermill cannot inspect the parameters ({error})", "open and save the notebook in "
                            "Jupyter with a Python kernel", cell=number)]
    finally:
        papermill_logger.setLevel(level)
    problems: list[Problem] = []
    declared: dict = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        name = _assigned_name(node)
        if name is None:
            problems.append(Problem("the parameters cell should only assign parameters (and import typing names)",
                                    "move this statement to a later cell: papermill injects the given values in a "
                                    "new cell after this one", cell=number, line=node.lineno,
                                    code=_line(source, node.lineno)))
            continue
        if name in declared:
            problems.append(Problem(f"parameter {name!r} is assigned twice", "keep one line per parameter",
                                    cell=number, line=node.lineno, code=_line(source, node.lineno)))
            continue
        declared[name] = node
        problems += _one_parameter(name, node, source, inspected.get(name), number)
    if "collection" not in declared:
        problems.append(Problem("no `collection` parameter: riskreport passes the collection (--collection, job "
                                "files) through it", 'add `collection: str = "demo"  # collection name or path`',
                                cell=number))
    return declared, problems


def _assigned_name(node) -> str | None:
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _one_parameter(name: str, node, source: str, seen: dict | None, number: int) -> list[Problem]:
    at = {"cell": number, "line": node.lineno, "code": _line(source, node.lineno)}
    if node.end_lineno != node.lineno:
        return [Problem(f"parameter {name!r} spans lines {node.lineno}-{node.end_lineno}; papermill reads one line "
                        "per parameter, with its help comment at the end", "write it on one line", **at)]
    if seen is None:
        return [Problem(f"papermill cannot read parameter {name!r}: {_unreadable_reason(at['code'])}",
                        _unreadable_fix(at["code"]), **at)]
    value = ast.get_source_segment(source, node.value)
    if seen["default"] != value:
        if "#" in value:
            cause, fix = "a `#` inside the value starts its comment", "keep `#` out of the value"
        else:
            cause, fix = ("papermill joins the following lines without '=' to this parameter",
                          "put imports above the parameters and other statements in a later cell")
        return [Problem(f"papermill reads the default of {name!r} as `{seen['default']}`, not `{value}` ({cause})",
                        fix, **at)]
    problems = []
    if not seen["help"]:
        problems.append(Problem(f"parameter {name!r} has no help comment (`riskreport templates` shows it)",
                                f"end the line with `  # what {name} means, and what None does`", **at))
    declared = seen["inferred_type_name"]
    if declared == "None":
        problems.append(Problem(f"parameter {name!r} has no declared type, so -p values are not checked",
                                f"annotate it, e.g. `{name}: float = {value}  # ...` (str, int, float, bool, list[...],"
                                " dict, Optional[...])", **at))
        return problems
    if not understood_type(declared):
        problems.append(Problem(f"parameter {name!r} has type `{declared}`, which riskreport cannot check",
                                "use str, int, float, bool, list, list[str|int|float|bool], dict, or Optional[one of "
                                "these] (Optional[str], not str | None)", **at))
        return problems
    problems += _default_problems(name, declared, value, seen, at)
    return problems


def _default_problems(name: str, declared: str, value: str, seen: dict, at: dict) -> list[Problem]:
    from riskreport.run.runner import Template, coerce_parameter
    try:
        literal = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return [Problem(f"the default of {name!r} (`{value}`) is not a plain value", "write a number, text, True/False, "
                        "None, or a list or dict of them; derive other values in a later cell", **at)]
    template = Template("check", Path("check.ipynb"), {name: {"default": value, "type": declared, "help": seen["help"]}},
                        "")
    try:
        coerce_parameter(template, name, literal)
    except ParameterError:
        return [Problem(f"the default of {name!r} (`{value}`) is not a {declared}",
                        "change the default or the type (None needs Optional[...])", **at)]
    return []


def understood_type(declared: str) -> bool:
    """Whether `runner.coerce_parameter` checks a value against this declared type."""
    text = declared.replace(" ", "")
    if text.startswith("Optional[") and text.endswith("]"):
        text = text[len("Optional["):-1]
    if text in SCALAR_TYPES | LIST_TYPES | DICT_TYPES:
        return True
    head, _, rest = text.partition("[")
    if head in LIST_TYPES and rest.endswith("]"):
        return rest[:-1] in SCALAR_TYPES
    return head in DICT_TYPES and rest.endswith("]")


def _unreadable_reason(line: str) -> str:
    code, comment = _split_comment(line)
    if line.count("=") > 1:
        where = "in its comment" if "=" in comment else "in its value"
        return f"the line has {line.count('=')} '=' signs (one {where}) and papermill skips any line with more than one"
    if re.search(r":\s*[^=]*[|.]", code):
        return "its type annotation has characters papermill does not read (`|` or `.`)"
    return "the line does not have the form `name: type = default  # help`"


def _unreadable_fix(line: str) -> str:
    _, comment = _split_comment(line)
    if "=" in comment:
        return "reword the comment without '=' (e.g. 'default 1', 'α ≥ 0', 'None: all systems')"
    if line.count("=") > 1:
        return "put a value holding '=' in a later cell, or avoid the '='"
    return "write `name: type = default  # help` with a plain type (Optional[str], not str | None)"


def _split_comment(line: str) -> tuple[str, str]:
    """The code and the comment of one line (a `#` inside a string is not a comment)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                return line[:token.start[1]], token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return line, ""


def _line(source: str, number: int | None) -> str:
    lines = source.splitlines()
    return lines[number - 1].strip() if number and 0 < number <= len(lines) else ""


# --- inline statistics -------------------------------------------------------------------------

def inline_statistics(source: str, cell: int | None = None) -> list[Problem]:
    """Static check of one code cell: calls that compute statistics in the notebook.

    Flags (a riskreport call is never flagged, e.g. `rr.risk_table(...)`):
    - imports of scipy, statsmodels, statistics, math, sklearn, pingouin;
    - numpy beyond grids and constants (`np.linspace`, `np.arange`, `np.nan`, ...: `NUMPY_ALLOWED`);
    - calls of statistical methods and functions (`.mean()`, `.std()`, `.quantile()`, `.corr()`, `.diff()`, ...:
      `STAT_METHODS`), also by name in `.agg("mean")`, `.apply("std")`, `aggfunc="median"`;
    - a tally (`sum(...)`, `.sum()`, `.count()`, `.nunique()`) inside a division: a mean or a share;
    - arithmetic (`- * / // % **`) on a table column `df["name"]`.
    Tallies on their own (`(p < 0.05).sum()`, `.agg(["sum", "size"])`), rounding and `.abs()` are presentation.
    """
    try:
        tree = ast.parse(_plain_python(source))
    except SyntaxError as error:
        return [Problem(f"syntax error: {error.msg}", "correct the Python syntax", cell=cell, line=error.lineno,
                        code=_line(source, error.lineno))]
    finder = _InlineStatistics()
    finder.visit(tree)
    return [Problem(what, FIX_INLINE, cell=cell, line=line, code=_line(source, line)) for line, what in finder.found]


def _plain_python(source: str) -> str:
    """IPython magics (`%matplotlib`, `!ls`) as the Python the kernel runs, line numbers kept."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython comes with the kernel
        return source
    return TransformerManager().transform_cell(source)


class _InlineStatistics(ast.NodeVisitor):
    def __init__(self):
        self.found: list[tuple[int, str]] = []
        self.numpy: set[str] = set()
        self.riskreport: set[str] = set()

    def flag(self, node, what: str) -> None:
        self.found.append((node.lineno, f"inline statistics: {what}"))

    def visit_Import(self, node) -> None:
        for alias in node.names:
            root, bound = alias.name.split(".")[0], alias.asname or alias.name.split(".")[0]
            self._imported(node, root, alias.name, bound)

    def visit_ImportFrom(self, node) -> None:
        root = (node.module or "").split(".")[0]
        for alias in node.names:
            bound = alias.asname or alias.name
            if root == "numpy" and alias.name not in NUMPY_ALLOWED:
                self.flag(node, f"`from {node.module} import {alias.name}` brings numpy math into the notebook")
            elif root == "riskreport":
                self.riskreport.add(bound)
            elif root in STAT_MODULES:
                self.flag(node, f"`from {node.module} import {alias.name}`: {root} computes statistics")

    def _imported(self, node, root: str, module: str, bound: str) -> None:
        if root == "numpy":
            self.numpy.add(bound)
        elif root == "riskreport":
            self.riskreport.add(bound)
        elif root in STAT_MODULES:
            self.flag(node, f"`import {module}`: {root} computes statistics")

    def visit_Attribute(self, node) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.numpy and node.attr not in NUMPY_ALLOWED:
            self.flag(node, f"`{node.value.id}.{node.attr}` computes with numpy (only grids and constants are "
                      f"allowed: {', '.join(sorted(NUMPY_ALLOWED))})")
        self.generic_visit(node)

    def visit_Call(self, node) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and not self._from_riskreport(func):
            if func.attr in STAT_METHODS and not self._is_numpy(func.value):
                self.flag(node, f"`.{func.attr}()` computes a statistic in the notebook")
            if func.attr in AGGREGATING_METHODS:
                self._named_aggregations(node, node.args + [k.value for k in node.keywords])
        self._named_aggregations(node, [k.value for k in node.keywords if k.arg == "aggfunc"])
        self.generic_visit(node)

    def _named_aggregations(self, node, values) -> None:
        for value in values:
            for name in _strings(value):
                if name in STAT_METHODS:
                    self.flag(node, f"aggregation by name {name!r} computes a statistic in the notebook")

    def visit_BinOp(self, node) -> None:
        if isinstance(node.op, DIVISION) and any(_is_tally(side) for side in (node.left, node.right)):
            self.flag(node, "a sum or count inside a division computes a mean or a share")
        elif isinstance(node.op, ARITHMETIC) and any(_is_column(side) for side in (node.left, node.right)):
            self.flag(node, "arithmetic on a table column computes new numbers")
        self.generic_visit(node)

    def _is_numpy(self, node) -> bool:   # np.mean is flagged once, by visit_Attribute
        return isinstance(node, ast.Name) and node.id in self.numpy

    def _from_riskreport(self, func: ast.Attribute) -> bool:
        node = func.value
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.riskreport


def _strings(node) -> list[str]:
    """Function names given as text: "mean", ["mean", "sum"], ("col", "mean"), {"col": "mean"} (not inside a lambda)."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [name for element in node.elts for name in _strings(element)]
    if isinstance(node, ast.Dict):
        return [name for value in node.values for name in _strings(value)]
    return []


def _is_tally(node) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "sum") or \
        (isinstance(func, ast.Attribute) and func.attr in TALLY_METHODS)


def _is_column(node) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
        isinstance(node.slice.value, str)


# --- execution ---------------------------------------------------------------------------------

def _execution_problems(path: Path, collection: str | None, progress: Progress | None) -> list[Problem]:
    from riskreport.run.runner import run_report
    say = progress or (lambda message: None)
    say(f"executing {path.name} on {collection or 'its default collection'}")
    with tempfile.TemporaryDirectory(prefix="riskreport-check-") as work:
        try:
            run_report(str(path), collection=collection, out=Path(work) / "report", reports_dir=work,
                       update_index=False, progress=say)
        except ReportExecutionError as error:
            return [_failed_cell(error)]
        except RiskReportError as error:
            return [Problem(f"the template could not run on {collection}: {error}",
                            "fix the template's defaults or the parameters it is given")]
    return []


def _failed_cell(error: ReportExecutionError) -> Problem:
    """Locate the failing cell in the kept notebook, numbered as in the template."""
    import nbformat
    fix = "fix the cell; `riskreport run TEMPLATE --show-code` shows the whole failing notebook"
    executed = Path(error.kept or "") / "report.ipynb"
    if not error.kept or not executed.is_file():
        return Problem(f"execution failed: {error.reason}", fix)
    added = {"injected-parameters", "papermill-error-cell-tag"}
    cells = [c for c in nbformat.read(executed, as_version=4).cells if not added & set(c.metadata.get("tags", []))]
    for number, cell in enumerate(cells, 1):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") == "error":
                traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(output.get("traceback", [])))
                match = re.search(r"Cell In\[\d+\], line (\d+)", traceback)
                line = int(match.group(1)) if match else None
                return Problem(f"execution failed: {output.get('ename')}: {output.get('evalue')}", fix, cell=number,
                               line=line, code=_line(cell.source, line))
    return Problem(f"execution failed: {error.reason}", fix)


def _shown_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# --- scaffolding -------------------------------------------------------------------------------

NOTES = """\
# {name}: URisk of every system against a baseline

*Template notes (removed from the HTML, because this cell is tagged `remove_cell`):* an ordinary
notebook, scaffolded by `riskreport new-template {name}`. Run it by hand in Jupyter, or with
`riskreport run templates/{name}.ipynb` (by name from the project root, or with its folder in
`$RISKREPORT_TEMPLATES`), which injects the parameters below with papermill. The first line of this
cell is the description `riskreport templates` shows.

- The cell tagged `parameters` holds one `name: type = default  # help` line per parameter (no `=`
  in the comment); `-p NAME VALUE` sets a parameter, checked against its type.
- Compute with riskreport functions (`rr.evaluate`, `rr.risk_table`, `rr.inference...`), show with
  `report.styled` and `riskreport.render.plots`, save tables with `page.save_table(table, "name")` and number
  figures with `page.caption(...)` (`page = report.Page(context)`: `context` is set by `riskreport run`).
  No formulas in the notebook: statistics live in riskreport, where they are tested.
- Before sharing it: `riskreport templates check templates/{name}.ipynb`.
"""

PARAMETERS = """\
# Parameters: papermill injects the values given on the command line or in a job file.
from typing import Optional

collection: str = "demo"  # collection name (folder under data/) or path to a collection folder
baseline: Optional[str] = None  # baseline system id; None: the collection's default, else its first system
measure: Optional[str] = None  # ir_measures measure string such as nDCG@10, ERR@20, AP; None: the collection's default, else nDCG@10
alphas: Optional[list[float]] = None  # risk-sensitivity grid of α ≥ 0 (losses weigh 1 + α); None: the collection's default, else [0, 1, 5, 10]
systems: Optional[list[str]] = None  # system ids to report on; None: all (the baseline is always included)
sig_level: float = 0.05  # significance level of the two-sided TRisk tests
title: Optional[str] = None  # report title; None: {name}: <collection title>
context: Optional[dict] = None  # set by riskreport run: the tables folder, input hashes and threads of the report; None by hand: ./tables, inputs hashed here, one thread"""

HEADER = """\
import matplotlib.pyplot as plt
import riskreport as rr
from riskreport import plots, report

p = rr.resolve_parameters(collection, measure=measure, baseline=baseline, alphas=alphas, systems=systems,
                          sig_level=sig_level)
page = report.Page(context)  # figure numbers, the tables folder and what the runner already computed
page.header(p, title=title or f"{name}: {{p.collection.title}}")"""

SECTION = """\
## 1. URisk against the baseline

URisk_α is the mean per-topic difference Δ = challenger − baseline with every loss weighted by 1 + α
(Wang et al. 2012; TREC Web track `gdeval -riskAlpha`): URisk_0 is the plain mean difference. TRisk_α is
its Student-t statistic, with the two-sided p-value (Dinçer, Macdonald & Ounis 2014).
**How to read this:** higher is better; a URisk below 0 is risk. A system whose URisk falls steeply as α
grows wins on average but loses badly on some topics."""

URISK = """\
scores = rr.evaluate(p.collection, p.measure, p.systems)
risk = rr.risk_table(scores.matrix(), p.baseline, p.alphas, p.measure, sig_level=p.sig_level)
page.save_table(risk[rr.risk.RISK_COLUMNS], "urisk")
display(report.styled(risk[["system", "alpha", "urisk", "trisk", "p_value", "wins", "losses"]],
                      caption=f"URisk and TRisk of {p.measure} against {p.baseline} (higher is better)"))
plots.urisk_by_alpha(risk, p.baseline, p.measure)
plt.show()
display(page.caption("URisk against α, one line per challenger: the steeper a line falls, the larger its losses."))"""


def scaffold(name: str):
    """The notebook `new_template` writes: notes, parameters, header, one URisk section."""
    import nbformat
    v4 = nbformat.v4
    cells = [v4.new_markdown_cell(NOTES.format(name=name), id="authoring-notes", metadata={"tags": ["remove_cell"]}),
             v4.new_code_cell(PARAMETERS.format(name=name), id="parameters", metadata={"tags": [PARAMETERS_TAG]}),
             v4.new_code_cell(HEADER.format(name=name), id="header"),
             v4.new_markdown_cell(SECTION, id="urisk-text"),
             v4.new_code_cell(URISK, id="urisk")]
    return v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})


def new_template(name: str, folder: str | os.PathLike = "templates", force: bool = False) -> Path:
    """Write `folder/NAME.ipynb` from `scaffold`; an existing file is replaced only with `force`."""
    import nbformat
    name = name[:-len(".ipynb")] if name.endswith(".ipynb") else name
    if not TEMPLATE_NAME.fullmatch(name):
        raise RiskReportError(f"Template name {name!r} is not allowed: use letters, digits and underscores, starting "
                              "with a letter, at most 64 characters (e.g. my_report).")
    path = Path(folder) / f"{name}.ipynb"
    if path.exists() and not force:
        raise RiskReportError(f"{path} already exists; choose another name, or add --force to overwrite it.")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    nbformat.write(scaffold(name), tmp)
    os.replace(tmp, path)
    return path
