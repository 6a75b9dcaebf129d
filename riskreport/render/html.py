"""Small pieces of report HTML: a rich-display wrapper, notes, number formats and the styled pandas table."""

from __future__ import annotations

import html

import pandas as pd


class HTML:
    """Minimal rich-display object (avoids importing IPython at module import)."""

    def __init__(self, markup: str):
        self.markup = markup

    def _repr_html_(self) -> str:
        return self.markup


def omitted(text: str) -> HTML:
    """Why a section has nothing to show; the exported page then leaves that section (and its contents entry) out."""
    return HTML(f"<p class='rr-omit-section'>{html.escape(text)}</p>")


def note(text: str) -> HTML:
    """A short paragraph (escaped)."""
    return HTML(f"<p>{html.escape(text)}</p>")


def styled(
    table: pd.DataFrame, precision: int = 5, highlight: dict[str, str] | None = None, caption: str | None = None
):
    """A pandas Styler: escaped text, fixed precision, optional best-value highlight per column.

    `highlight` maps a column to "max" or "min".
    """
    style = (
        table.style.format(precision=precision, escape="html", na_rep="–")
        .format_index(escape="html", axis=1)
        .hide(axis="index")
    )
    grid_columns = [c for c in table.columns if c in ("alpha", "r")]
    if grid_columns:
        style = style.format("{:g}", subset=grid_columns)
    p_columns = [c for c in table.columns if str(c).startswith("p_") and pd.api.types.is_numeric_dtype(table[c])]
    if p_columns:
        style = style.format(format_p, subset=p_columns, na_rep="–")
    text = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
    if text:
        style = style.set_properties(subset=text, **{"text-align": "left"})
    for column, how in (highlight or {}).items():
        if column in table:
            style = (style.highlight_max if how == "max" else style.highlight_min)(
                subset=[column], props="font-weight: bold; background-color: #e8f4ea"
            )
    if caption:
        style = style.set_caption(html.escape(caption))
    return style


def format_p(p: float) -> str:
    """p-values: 4 decimals, or `< 0.0001`."""
    if p != p:
        return "–"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def significance_marks(
    table: pd.DataFrame, sig_level: float, p_column: str = "p_adjusted", effect_column: str = "delta"
) -> pd.Series:
    """▲ significantly better, ▼ significantly worse than the baseline, '' otherwise."""
    significant = table[p_column] < sig_level
    return pd.Series(
        ["▲" if s and e > 0 else "▼" if s and e < 0 else "" for s, e in zip(significant, table[effect_column])],
        index=table.index,
    )


def _signed(values: pd.Series, convention: str) -> pd.Series:
    return -values if convention == "minus" else values


def _alpha_label(alpha: float, convention: str) -> str:
    return f"r = {alpha + 1:g}" if convention == "minus" else f"α = {alpha:g}"


def _short_p(p: float) -> str:
    """A p-value in a wide table: 3 decimals, or `<.001`."""
    return "–" if p != p else "<.001" if p < 1e-3 else f"{p:.3f}"
