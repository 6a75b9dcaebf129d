"""`riskreport new-template`: a minimal template (notes, parameters, header, one URisk section) that passes
`riskreport templates check`."""

from __future__ import annotations

import os
import re
from pathlib import Path

from riskreport.errors import RiskReportError
from riskreport.run.report.problems import PARAMETERS_TAG

TEMPLATE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")

NOTES = """\
# {name}: URisk of every system against a baseline

*Template notes (removed from the HTML, because this cell is tagged `remove_cell`):* an ordinary
notebook, scaffolded by `riskreport new-template {name}`. Run it by hand in Jupyter, or with
`riskreport run templates/{name}.ipynb` (by name once its folder is in `$RISKREPORT_TEMPLATES`: a
bare name is not looked up in ./templates), which injects the parameters below with papermill. The first line of this
cell is the description `riskreport templates` shows.

- The cell tagged `parameters` holds one `name: type = default  # help` line per parameter (no `=`
  in the comment); `-p NAME VALUE` sets a parameter, checked against its type.
- Compute with riskreport functions (`rr.evaluate`, `rr.risk_table`, `rr.inference...`), show with
  `report.styled` and `riskreport.render.plots`, save tables with `page.save_table(table, "name")` and number
  figures with `page.caption(...)` (`page = report.Page(context)`: `context` is set by `riskreport run`).
  No formulas in the notebook: statistics come from riskreport or a tested package of your own; a line
  that only presents results may be marked `# riskreport: reviewed` (`riskreport templates check`).
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


def new_notebook(cells: list):
    """A notebook of `cells` with the metadata papermill needs to run it (a Python kernelspec and language)."""
    import nbformat

    return nbformat.v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )


def scaffold(name: str):
    """The notebook `new_template` writes: notes, parameters, header, one URisk section."""
    import nbformat

    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell(NOTES.format(name=name), id="authoring-notes", metadata={"tags": ["remove_cell"]}),
        v4.new_code_cell(PARAMETERS.format(name=name), id="parameters", metadata={"tags": [PARAMETERS_TAG]}),
        v4.new_code_cell(HEADER.format(name=name), id="header"),
        v4.new_markdown_cell(SECTION, id="urisk-text"),
        v4.new_code_cell(URISK, id="urisk"),
    ]
    return new_notebook(cells)


def new_template(name: str, folder: str | os.PathLike = "templates", force: bool = False) -> Path:
    """Write `folder/NAME.ipynb` from `scaffold`; an existing file is replaced only with `force`."""
    import nbformat

    name = name[: -len(".ipynb")] if name.endswith(".ipynb") else name
    if not TEMPLATE_NAME.fullmatch(name):
        raise RiskReportError(
            f"Template name {name!r} is not allowed: use letters, digits and underscores, starting "
            "with a letter, at most 64 characters (e.g. my_report)."
        )
    path = Path(folder) / f"{name}.ipynb"
    if path.exists() and not force:
        raise RiskReportError(f"{path} already exists; choose another name, or add --force to overwrite it.")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    nbformat.write(scaffold(name), tmp)
    os.replace(tmp, path)
    return path
