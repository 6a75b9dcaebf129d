"""What the template checks report: `Problem`, one defect of a template (cell, line, what, how to fix it)."""

from __future__ import annotations

from dataclasses import dataclass

PARAMETERS_TAG = "parameters"  # the tag of the cell papermill injects parameters after


@dataclass(frozen=True)
class Problem:
    """One defect of a template: where (1-based cell and line), what is wrong, how to fix it."""

    message: str
    fix: str
    cell: int | None = None  # every cell counts, markdown included, from the top
    line: int | None = None  # line within the cell
    code: str = ""  # the offending source line, shown under the message

    def where(self) -> str:
        parts = [f"cell {self.cell}"] if self.cell is not None else []
        parts += [f"line {self.line}"] if self.line is not None else []
        return ", ".join(parts)


def source_line(source: str, number: int | None) -> str:
    """Line `number` (1-based) of a cell's source, stripped; empty when there is no such line."""
    lines = source.splitlines()
    return lines[number - 1].strip() if number and 0 < number <= len(lines) else ""
