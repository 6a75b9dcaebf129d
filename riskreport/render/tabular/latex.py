"""LaTeX tables for papers: booktabs rules, best values bold, significance marks as superscripts.

A table is written as a `table` float that a paper `\\input`s; it needs only `booktabs` and
`amssymb` (both in every TeX distribution), which the file's first line names. A table of more
than `LONG_ROWS` rows (a campaign of 100 systems) is a `longtable` instead, which breaks across
pages and also needs `longtable` (one-column documents). Text from
files (system ids, topic ids) is escaped, so `bm25_rm3` and `50%` print as they read.

>>> table = pd.DataFrame({"system": ["bm25", "dense_a"], "mean": [0.3012, 0.3391]})
>>> print(latex_table(table, caption="Mean nDCG@10.", label="tab:eff", best={"mean": "max"}))
... # doctest: +NORMALIZE_WHITESPACE
% riskreport table: needs \\usepackage{booktabs,amssymb}
\\begin{table}[tbp]
\\centering
\\caption{Mean nDCG@10.}
\\label{tab:eff}
\\begin{tabular}{lr}
\\toprule
system & mean \\\\
\\midrule
bm25 & 0.3012 \\\\
dense\\_a & \\textbf{0.3391} \\\\
\\bottomrule
\\end{tabular}
\\end{table}
"""

from __future__ import annotations

import math
import re

import pandas as pd

LONG_ROWS = 40  # more rows than fit a page: a longtable instead of a table float

# The marks riskreport's pages use, and what each becomes in LaTeX (math mode, amssymb).
MARKS = {
    "▲": r"\blacktriangle",
    "▼": r"\blacktriangledown",
    "△": r"\vartriangle",
    "▽": r"\triangledown",
    "*": r"*",
    "†": r"\dagger",
    "‡": r"\ddagger",
}
_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    # Unicode the reports use, which plain pdflatex cannot print without extra packages.
    "α": r"$\alpha$",
    "Δ": r"$\Delta$",
    "φ": r"$\varphi$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "−": "-",
    "–": "--",
    "—": "---",
    "⁻": r"$^{-}$",
    "²": r"$^{2}$",
    "√": r"$\surd$",
    "…": r"\ldots{}",
}
_ESCAPE = re.compile("|".join(re.escape(c) for c in _SPECIAL))


def escape(text) -> str:
    """`text` with LaTeX's special characters escaped (so it prints as it reads)."""
    return _ESCAPE.sub(lambda m: _SPECIAL[m.group()], str(text))


def mark(symbol: str) -> str:
    """A significance mark as a superscript: ▼ -> `$^{\\blacktriangledown}$`."""
    if not symbol:
        return ""
    unknown = [s for s in symbol if s not in MARKS]
    if unknown:
        raise ValueError(f"no LaTeX form for the mark {unknown[0]!r} (known: {' '.join(MARKS)})")
    return "$^{" + "".join(MARKS[s] for s in symbol) + "}$"


def latex_table(
    table: pd.DataFrame,
    *,
    caption: str,
    label: str,
    precision: int = 4,
    best: dict[str, str] | None = None,
    marks: pd.DataFrame | None = None,
    legend: str | None = None,
    column_groups: list[tuple[str, int]] | None = None,
    placement: str = "tbp",
) -> str:
    """A booktabs `table` float of `table` (its columns as they are; the index is not printed).

    - `best`: column -> "max" or "min"; the best value of that column is bold (ties: all of them).
    - `marks`: a frame of mark strings ("▼", "▲", ...) aligned with `table` (same index, any of its
      columns); each non-empty mark is set as a superscript after the value.
    - `legend`: a line under the table saying what the marks mean (escaped, marks converted).
    - `column_groups`: [(title, span), ...] over the columns, as a first header row with
      `\\cmidrule`s (e.g. one group per measure); spans must add up to the number of columns.
    Numbers print with `precision` decimals (p-values: below 10^-4 as `<0.0001`), NaN as `--`.
    """
    columns = list(table.columns)
    numeric = {c: pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c]) for c in columns}
    bold = _best_cells(table, best or {})
    body = []
    for row_label, row in table.iterrows():
        cells = []
        for column in columns:
            text = _cell(row[column], column, numeric[column], precision)
            if (row_label, column) in bold:
                text = rf"\textbf{{{text}}}"
            if marks is not None and column in marks.columns and row_label in marks.index:
                text += mark(str(marks.at[row_label, column] or ""))
            cells.append(text)
        body.append(" & ".join(cells) + r" \\")
    spec = "".join("r" if numeric[c] else "l" for c in columns)
    header = []
    if column_groups:
        if sum(span for _, span in column_groups) != len(columns):
            raise ValueError(
                f"column_groups span {sum(s for _, s in column_groups)} columns, the table has {len(columns)}"
            )
        header.append(
            " & ".join(
                rf"\multicolumn{{{span}}}{{c}}{{{escape(title)}}}" if span > 1 else escape(title)
                for title, span in column_groups
            )
            + r" \\"
        )
        rules, start = [], 1
        for title, span in column_groups:
            if title:
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        header.append(" ".join(rules))
    header.append(" & ".join(escape(c) for c in columns) + r" \\")
    if len(body) > LONG_ROWS:
        return _longtable(spec, header, body, caption, label, legend)
    lines = [
        r"% riskreport table: needs \usepackage{booktabs,amssymb}",
        rf"\begin{{table}}[{placement}]",
        r"\centering",
        rf"\caption{{{escape(caption)}}}",
        rf"\label{{{label}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        *header,
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if legend:
        lines.append(r"\par\smallskip{\footnotesize " + _legend(legend) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _longtable(spec: str, header: list[str], body: list[str], caption: str, label: str, legend: str | None) -> str:
    """A `longtable` (breaks across pages, its header repeated on each) for tables of more than LONG_ROWS rows."""
    lines = [
        r"% riskreport table: needs \usepackage{booktabs,amssymb,longtable} (a long table: it breaks across pages)",
        rf"\begin{{longtable}}{{{spec}}}",
        rf"\caption{{{escape(caption)}}}\label{{{label}}} \\",
        r"\toprule",
        *header,
        r"\midrule",
        r"\endfirsthead",
        rf"\multicolumn{{{len(spec)}}}{{l}}{{\footnotesize (continued)}} \\",
        r"\toprule",
        *header,
        r"\midrule",
        r"\endhead",
        r"\bottomrule",
        r"\endfoot",
        *body,
        r"\end{longtable}",
    ]
    if legend:
        lines.append(r"{\footnotesize " + _legend(legend) + r"\par}")
    return "\n".join(lines) + "\n"


def _cell(value, column: str, numeric: bool, precision: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    if not numeric:
        return escape(value)
    if str(column) in ("alpha", "r"):
        return f"{float(value):g}"
    if str(column).startswith("p_") or str(column) == "p":
        return "$<$0.0001" if value < 1e-4 else f"{value:.4f}"
    if float(value).is_integer() and pd.api.types.is_integer_dtype(type(value)):
        return str(int(value))
    return f"{value:.{precision}f}"


def _best_cells(table: pd.DataFrame, best: dict[str, str]) -> set:
    cells = set()
    for column, how in best.items():
        if column not in table or how not in ("max", "min"):
            raise ValueError(f"best: expected a column of the table mapped to 'max' or 'min', got {column!r}: {how!r}")
        values = table[column]
        target = values.max() if how == "max" else values.min()
        cells |= {(label, column) for label, v in values.items() if v == target}
    return cells


def _legend(text: str) -> str:
    out = escape(text)
    for symbol in MARKS:
        if symbol not in ("*",):
            out = out.replace(symbol, mark(symbol))
    return out
