"""Small pieces of report HTML: a rich-display wrapper, notes, number formats, the styled pandas table and its
HTML (fast for large tables), interactive (paged, searchable) tables and tables side by side."""

from __future__ import annotations

import html
import json

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


def template_warning(text: str, where: str) -> HTML:
    """A warning of the template itself (or of riskreport's code it calls), marked as such on the page; other
    libraries' warnings go to the report's log.txt instead."""
    return HTML(
        f"<div class='rr-warning'><strong>Warning from the template</strong> ({html.escape(where)}): "
        f"{html.escape(text)}</div>"
    )


def note(text: str) -> HTML:
    """A short paragraph (escaped)."""
    return HTML(f"<p>{html.escape(text)}</p>")


def fixed(value: float, precision: int, signed: bool = False) -> str:
    """A number to `precision` decimals (with its sign when `signed`), never `-0.00`: a value that rounds to zero
    is shown as 0 (`0.00`), whatever the sign of what was rounded."""
    if value != value:
        return "–"
    text = f"{value:+.{precision}f}" if signed else f"{value:.{precision}f}"
    return text.lstrip("+-") if float(text) == 0 else text


HEADERS = {  # raw column names of the tidy tables -> what the page's header says (the CSVs keep the raw names)
    "tau_mean_urisk": "τ mean vs URisk",
    "tau_mean_georisk": "τ mean vs GeoRisk",
    "tau_urisk_georisk": "τ URisk vs GeoRisk",
    "not_worse": "not worse",
    "n_topics": "topics",
    "p_value": "p",
    "p_adjusted": "p (adjusted)",
    "se_jackknife": "SE (jackknife)",
    "se": "SE",
    "ci_low": "CI low",
    "ci_high": "CI high",
    "delta": "Δ",
}


def header_text(name) -> str:
    """A column's header on the page: `HEADERS`, else its name with `_` as a space (`rbo_min` -> `rbo min`)."""
    return HEADERS.get(name, name.replace("_", " ")) if isinstance(name, str) else str(name)


def styled(
    table: pd.DataFrame, precision: int = 5, highlight: dict[str, str] | None = None, caption: str | None = None
):
    """A pandas Styler: escaped text, fixed precision (never `-0.00`: `fixed`), readable headers (`header_text`),
    optional best-value highlight per column.

    `highlight` maps a column to "max" or "min".
    """
    style = (
        table.style.format(precision=precision, escape="html", na_rep="–")
        .format_index(lambda name: html.escape(header_text(name)), axis=1)
        .hide(axis="index")
    )
    floats = [c for c in table.columns if pd.api.types.is_float_dtype(table[c])]
    if floats:
        style = style.format(lambda v: fixed(v, precision), subset=floats, na_rep="–")
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


WHOLE_ROWS = 25  # a table of up to this many rows is shown whole; a longer one is paged, its flagged rows first


def interactive(
    table,
    page_size: int = WHOLE_ROWS,
    summary: str | None = None,
    open_: bool = False,
    flagged: list[str] | None = None,
) -> HTML:
    """A table (DataFrame or Styler) the page makes sortable, searchable and, beyond `page_size` rows, paged (script
    in the nbconvert template, no network); inside a `<details>` titled `summary` when one is given (collapsed
    unless `open_`; a printout opens it).

    `flagged`: names (e.g. the systems a verdict flags, `tables.flagged`) whose rows, by their first cell, a paged
    table puts first, so that they are seen without a click; the rest keep their order.
    """
    markup = styler_html(table if hasattr(table, "to_html") and not isinstance(table, pd.DataFrame) else styled(table))
    first = f" data-flagged='{html.escape(json.dumps(list(flagged)), quote=True)}'" if flagged else ""
    body = f"<div class='rr-table' data-page='{int(page_size)}'{first}>{markup}</div>"
    if summary is not None:
        body = (
            f"<details class='rr-detail'{' open' if open_ else ''}><summary>{html.escape(summary)}</summary>"
            f"{body}</details>"
        )
    return HTML(body)


FAST_HTML_CELLS = 5_000  # Stylers with more cells than this are written by `styler_html`'s own loop


def styler_html(style) -> str:
    """`style.to_html()`, the same markup, written in one loop for a large table with a plain layout (hidden
    index, one header row, no table styles, classes or tooltips): pandas' template costs ~0.1 ms a cell."""
    data = style.data
    try:
        plain = (
            data.size > FAST_HTML_CELLS
            and all(style.hide_index_)
            and not any(style.hide_columns_)
            and data.columns.nlevels == 1
            and not style.hidden_rows
            and not style.hidden_columns
            and not style.table_styles
            and not style.table_attributes
            and not style.cell_context
            and style.tooltips is None
            and not style.concatenated
            and isinstance(style.caption, (str, type(None)))
            and style.cell_ids
        )
        if plain:
            return _plain_table_html(style, data)
    except (AttributeError, KeyError, TypeError):  # pandas' Styler internals moved: its own, slower, writer
        pass
    return style.to_html()


def _plain_table_html(style, data: pd.DataFrame) -> str:
    style._compute()
    uid, rows, cols = style.uuid, data.shape[0], data.shape[1]
    groups: dict[tuple, list[str]] = {}
    for (r, c), props in sorted(style.ctx.items()):
        if props:
            groups.setdefault(tuple(props), []).append(f"row{r}_col{c}")
    css = "".join(
        ", ".join(f"#T_{uid}_{sel}" for sel in selectors)
        + " {\n"
        + "".join(f"  {prop}: {value};\n" for prop, value in props)
        + "}\n"
        for props, selectors in groups.items()
    )
    head = "".join(
        f'      <th id="T_{uid}_level0_col{c}" class="col_heading level0 col{c}" >'
        f"{style._display_funcs_columns[(0, c)](name)}</th>\n"
        for c, name in enumerate(data.columns)
    )
    columns = [data.iloc[:, c].tolist() for c in range(cols)]
    funcs = style._display_funcs
    body = []
    for r in range(rows):
        cells = "".join(
            f'      <td id="T_{uid}_row{r}_col{c}" class="data row{r} col{c}" >{funcs[(r, c)](columns[c][r])}</td>\n'
            for c in range(cols)
        )
        body.append(f"    <tr>\n{cells}    </tr>\n")
    caption = f"  <caption>{style.caption}</caption>\n" if style.caption else ""
    return (
        f'<style type="text/css">\n{css}</style>\n<table id="T_{uid}">\n{caption}  <thead>\n    <tr>\n{head}'
        f"    </tr>\n  </thead>\n  <tbody>\n{''.join(body)}  </tbody>\n</table>\n"
    )


def side_by_side(*parts: HTML) -> HTML:
    """Figures (from `Page.figure`) next to each other, each scaled to its share of the page width."""
    return HTML(
        "<div class='rr-figures'>" + "".join(f"<div class='rr-figure'>{part.markup}</div>" for part in parts) + "</div>"
    )
