"""Inline statistics: the static check that a template's code cells compute no statistic themselves
(statistics live in riskreport, where they are tested; the notebook only arranges and shows results)."""

from __future__ import annotations

import ast
import re

from riskreport.run.report.problems import Problem, source_line

# Inline statistics: names whose call computes a number in the notebook instead of in riskreport.
STAT_METHODS = frozenset(
    {
        "mean",
        "average",
        "median",
        "mode",
        "std",
        "var",
        "sem",
        "mad",
        "quantile",
        "percentile",
        "skew",
        "kurt",
        "kurtosis",
        "describe",
        "corr",
        "corrwith",
        "cov",
        "cumsum",
        "cumprod",
        "prod",
        "product",
        "diff",
        "pct_change",
        "rolling",
        "expanding",
        "ewm",
        "sqrt",
        "log",
        "log1p",
        "log2",
        "log10",
        "exp",
        "pow",
        "dot",
        "nanmean",
        "nanmedian",
        "nanstd",
        "nanvar",
        "nanpercentile",
        "nanquantile",
    }
)
TALLY_METHODS = frozenset({"sum", "count", "nunique"})  # counting is presentation, but not inside a division
AGGREGATING_METHODS = frozenset({"agg", "aggregate", "transform", "apply", "pipe", "resample"})
STAT_MODULES = frozenset({"scipy", "statsmodels", "statistics", "math", "sklearn", "pingouin"})
NUMPY_ALLOWED = frozenset({"linspace", "arange", "geomspace", "logspace", "array", "asarray", "nan", "inf"})
ARITHMETIC = (ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
DIVISION = (ast.Div, ast.FloorDiv)

ORDER_KEYWORDS = frozenset({"order", "hue_order", "row_order", "col_order", "key"})  # what they get only sorts
ORDERING_METHODS = frozenset({"sort_values", "nlargest", "nsmallest"})  # `.index` of their result: labels in order
REVIEWED = re.compile(r"#\s*riskreport:\s*reviewed\b")  # a line's mark: read by a person, presentation
REVIEWED_TAG = "reviewed"  # a cell's tag: the same for the whole cell

FIX_INLINE = (
    "use a riskreport function that gives the number (rr.risk_table, rr.effectiveness_table, rr.topic_risk, "
    "rr.inference.*, ...), or compute it in a Python package of your own (installed, with its tests) and call "
    "that; if the line only presents or orders results, mark it reviewed: end it with `# riskreport: reviewed` "
    "(or tag the cell `reviewed`)"
)


def inline_statistics(source: str, cell: int | None = None) -> list[Problem]:
    """Static check of one code cell: calls that compute statistics in the notebook.

    Flags (a riskreport call is never flagged, e.g. `rr.risk_table(...)`):
    - imports of scipy, statsmodels, statistics, math, sklearn, pingouin;
    - numpy beyond grids and constants (`np.linspace`, `np.arange`, `np.nan`, ...: `NUMPY_ALLOWED`);
    - calls of statistical methods and functions (`.mean()`, `.std()`, `.quantile()`, `.corr()`, `.diff()`, ...:
      `STAT_METHODS`), also by name in `.agg("mean")`, `.apply("std")`, `aggfunc="median"`;
    - a tally (`sum(...)`, `.sum()`, `.count()`, `.nunique()`) inside a division: a mean or a share;
    - arithmetic (`- * / // % **`) on a table column `df["name"]`.
    Tallies on their own (`(p < 0.05).sum()`, `.agg(["sum", "size"])`), rounding and `.abs()` are presentation,
    and so is an expression that only orders: the value of `order=`, `hue_order=`, `key=` (seaborn, `sorted`),
    or the `.index` of `.sort_values()`, `.nlargest()`, `.nsmallest()` (labels, not numbers) and `.argsort()`.
    A line ending with `# riskreport: reviewed` is not flagged: a person has read it as presentation.
    """
    try:
        tree = ast.parse(_plain_python(source))
    except SyntaxError as error:
        return [
            Problem(
                f"syntax error: {error.msg}",
                "correct the Python syntax",
                cell=cell,
                line=error.lineno,
                code=source_line(source, error.lineno),
            )
        ]
    finder = _InlineStatistics()
    finder.visit(tree)
    return [
        Problem(what, FIX_INLINE, cell=cell, line=line, code=source_line(source, line))
        for line, what in finder.found
        if not REVIEWED.search(_line(source, line))
    ]


def reviewed_lines(source: str) -> int:
    """How many lines of a cell are marked `# riskreport: reviewed` (the check reports the count)."""
    return sum(bool(REVIEWED.search(line)) for line in source.splitlines())


def _line(source: str, number: int) -> str:
    lines = source.splitlines()
    return lines[number - 1] if 0 < number <= len(lines) else ""


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
        self.ordering = 0  # inside an expression whose value only orders (labels or positions, no number shown)

    def flag(self, node, what: str) -> None:
        if not self.ordering:
            self.found.append((node.lineno, f"inline statistics: {what}"))

    def _order(self, node) -> None:
        self.ordering += 1
        self.visit(node)
        self.ordering -= 1

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
        value = node.value
        if node.attr == "index" and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            if value.func.attr in ORDERING_METHODS:  # `s.groupby(...).mean().sort_values().index`: an order
                return self._order(value)
        if isinstance(node.value, ast.Name) and node.value.id in self.numpy and node.attr not in NUMPY_ALLOWED:
            self.flag(
                node,
                f"`{node.value.id}.{node.attr}` computes with numpy (only grids and constants are "
                f"allowed: {', '.join(sorted(NUMPY_ALLOWED))})",
            )
        self.generic_visit(node)

    def visit_Call(self, node) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "argsort":
            return self._order(func.value)
        ordered = [k.value for k in node.keywords if k.arg in ORDER_KEYWORDS]
        for value in ordered:
            self._order(value)
        if ordered:  # the rest of the call as if those keywords were not there
            kept = [k for k in node.keywords if k.arg not in ORDER_KEYWORDS]
            node = ast.copy_location(ast.Call(func=func, args=node.args, keywords=kept), node)
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

    def _is_numpy(self, node) -> bool:  # np.mean is flagged once, by visit_Attribute
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
    return (isinstance(func, ast.Name) and func.id == "sum") or (
        isinstance(func, ast.Attribute) and func.attr in TALLY_METHODS
    )


def _is_column(node) -> bool:
    return (
        isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
    )
