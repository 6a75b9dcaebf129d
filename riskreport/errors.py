"""One exception family: every error a user can cause is a `RiskReportError`.

Messages say what went wrong, where (file and line when there is one), what was
expected, and how to fix it, so the CLI can print them without a traceback.
"""

from __future__ import annotations

import difflib
from pathlib import Path


class RiskReportError(Exception):
    """Base class of every error riskreport raises on purpose."""


class InputFormatError(RiskReportError):
    """A collection file does not follow its format."""

    def __init__(self, path: str | Path, problem: str, line: int | None = None, expected: str | None = None):
        self.path, self.line, self.problem, self.expected = Path(path), line, problem, expected
        where = f"{path}, line {line}" if line is not None else str(path)
        message = f"{where}: {problem}"
        if expected:
            message += f" (expected {expected})"
        super().__init__(message)

    def __reduce__(self):  # picklable, so errors cross process-pool boundaries intact
        return (self.__class__, (self.path, self.problem, self.line, self.expected))


class UnknownNameError(RiskReportError):
    """A template, collection, system, measure or parameter that does not exist."""

    def __init__(self, kind: str, name: str, available: list[str], hint: str = ""):
        self.kind, self.name, self.available = kind, name, list(available)
        close = suggestion(str(name), self.available)
        listing = ", ".join(self.available) if self.available else "(none)"
        message = f"Unknown {kind} {name!r}."
        if close:
            message += f" Did you mean {close!r}?"
        message += f" Available {kind}s: {listing}."
        if hint:
            message += f" {hint}"
        self.hint = hint
        super().__init__(message)

    def __reduce__(self):
        return (self.__class__, (self.kind, self.name, self.available, self.hint))


def suggestion(name: str, available: list[str]) -> str | None:
    """The name in `available` that `name` most likely means: the same name in another case (`BM25` -> `bm25`,
    `ndcg@10` -> `nDCG@10`), else the closest name compared in lower case, else None."""
    lowered: dict[str, str] = {}
    for candidate in available:
        lowered.setdefault(str(candidate).lower(), candidate)
    if name.lower() in lowered:
        return lowered[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1)
    return lowered[close[0]] if close else None


class ParameterError(RiskReportError, ValueError):
    """A report parameter (or a function argument) has the wrong type or an invalid value."""


class ReportExecutionError(RiskReportError):
    """A template cell failed while the report was executed."""

    def __init__(self, message: str, kept: Path | None = None):
        self.kept, self.reason = kept, message
        super().__init__(message + (f"\nThe failed notebook and its HTML are kept in {kept}" if kept else ""))

    def __reduce__(self):
        return (self.__class__, (self.reason, self.kept))


class ReportTimeoutError(ReportExecutionError):
    """The report reached its time limit (`timeout`): its kernel was stopped in the cell that was running."""
