"""Checks of a template's parameters cell against what papermill reads from it (one line per parameter,
`name: type = default  # help`), and of each default against its declared type."""

from __future__ import annotations

import ast
import io
import logging
import re
import tokenize
from pathlib import Path

from riskreport.errors import ParameterError
from riskreport.run.report.problems import Problem, source_line

# Types `runner.coerce_parameter` checks a -p value against (optionally wrapped in Optional[...]).
SCALAR_TYPES = {"str", "int", "float", "bool"}
LIST_TYPES = {"list", "List"}
DICT_TYPES = {"dict", "Dict"}


def parameter_problems(path: Path, notebook, number: int) -> tuple[dict, list[Problem]]:
    """Check every line of the parameters cell against what papermill reads from it."""
    import papermill

    source = notebook.cells[number - 1].source
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return {}, [
            Problem(
                f"syntax error: {error.msg}",
                "correct the Python syntax",
                cell=number,
                line=error.lineno,
                code=source_line(source, error.lineno),
            )
        ]
    papermill_logger = logging.getLogger("papermill")
    level, papermill_logger.level = papermill_logger.level, logging.ERROR  # its warnings become our problems
    try:
        inspected = papermill.inspect_notebook(str(path))
    except Exception as error:  # noqa: BLE001 - papermill raises ValueError and others for odd metadata
        return {}, [
            Problem(
                f"papermill cannot inspect the parameters ({error})",
                "open and save the notebook in Jupyter with a Python kernel",
                cell=number,
            )
        ]
    finally:
        papermill_logger.setLevel(level)
    problems: list[Problem] = []
    declared: dict = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        name = _assigned_name(node)
        if name is None:
            problems.append(
                Problem(
                    "the parameters cell should only assign parameters (and import typing names)",
                    "move this statement to a later cell: papermill injects the given values in a "
                    "new cell after this one",
                    cell=number,
                    line=node.lineno,
                    code=source_line(source, node.lineno),
                )
            )
            continue
        if name in declared:
            problems.append(
                Problem(
                    f"parameter {name!r} is assigned twice",
                    "keep one line per parameter",
                    cell=number,
                    line=node.lineno,
                    code=source_line(source, node.lineno),
                )
            )
            continue
        declared[name] = node
        problems += _one_parameter(name, node, source, inspected.get(name), number)
    if "collection" not in declared:
        problems.append(
            Problem(
                "no `collection` parameter: riskreport passes the collection (--collection, job files) through it",
                'add `collection: str = "demo"  # collection name or path`',
                cell=number,
            )
        )
    return declared, problems


def _assigned_name(node) -> str | None:
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _one_parameter(name: str, node, source: str, seen: dict | None, number: int) -> list[Problem]:
    at = {"cell": number, "line": node.lineno, "code": source_line(source, node.lineno)}
    if node.end_lineno != node.lineno:
        return [
            Problem(
                f"parameter {name!r} spans lines {node.lineno}-{node.end_lineno}; papermill reads one line "
                "per parameter, with its help comment at the end",
                "write it on one line",
                **at,
            )
        ]
    if seen is None:
        return [
            Problem(
                f"papermill cannot read parameter {name!r}: {_unreadable_reason(at['code'])}",
                _unreadable_fix(at["code"]),
                **at,
            )
        ]
    value = ast.get_source_segment(source, node.value) or ""  # None only for a node without positions
    if seen["default"] != value:
        if "#" in value:
            cause, fix = "a `#` inside the value starts its comment", "keep `#` out of the value"
        else:
            cause, fix = (
                "papermill joins the following lines without '=' to this parameter",
                "put imports above the parameters and other statements in a later cell",
            )
        return [
            Problem(
                f"papermill reads the default of {name!r} as `{seen['default']}`, not `{value}` ({cause})", fix, **at
            )
        ]
    problems = []
    if not seen["help"]:
        problems.append(
            Problem(
                f"parameter {name!r} has no help comment (`riskreport templates` shows it)",
                f"end the line with `  # what {name} means, and what None does`",
                **at,
            )
        )
    declared = seen["inferred_type_name"]
    if declared == "None":
        problems.append(
            Problem(
                f"parameter {name!r} has no declared type, so -p values are not checked",
                f"annotate it, e.g. `{name}: float = {value}  # ...` (str, int, float, bool, list[...],"
                " dict, Optional[...])",
                **at,
            )
        )
        return problems
    if not understood_type(declared):
        problems.append(
            Problem(
                f"parameter {name!r} has type `{declared}`, which riskreport cannot check",
                "use str, int, float, bool, list, list[str|int|float|bool], dict, or Optional[one of "
                "these] (Optional[str], not str | None)",
                **at,
            )
        )
        return problems
    problems += _default_problems(name, declared, value, seen, at)
    return problems


def _default_problems(name: str, declared: str, value: str, seen: dict, at: dict) -> list[Problem]:
    from riskreport.run.report.runner import Template, coerce_parameter

    try:
        literal = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return [
            Problem(
                f"the default of {name!r} (`{value}`) is not a plain value",
                "write a number, text, True/False, "
                "None, or a list or dict of them; derive other values in a later cell",
                **at,
            )
        ]
    template = Template(
        "check", Path("check.ipynb"), {name: {"default": value, "type": declared, "help": seen["help"]}}, ""
    )
    try:
        coerce_parameter(template, name, literal)
    except ParameterError:
        return [
            Problem(
                f"the default of {name!r} (`{value}`) is not a {declared}",
                "change the default or the type (None needs Optional[...])",
                **at,
            )
        ]
    return []


def understood_type(declared: str) -> bool:
    """Whether `runner.coerce_parameter` checks a value against this declared type."""
    text = declared.replace(" ", "")
    if text.startswith("Optional[") and text.endswith("]"):
        text = text[len("Optional[") : -1]
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
                return line[: token.start[1]], token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return line, ""
