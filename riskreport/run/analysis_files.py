"""An `Analysis` on disk: `save` writes the folder `riskreport run` writes (tables, figures, params.json),
atomically; `read_saved` and `read_table` read such a folder back. A mixin of `riskreport.run.analysis.Analysis`."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from riskreport.errors import InputFormatError, ParameterError
from riskreport.run.analysis_tables import LATEX, TABLES

TEMPLATE = "risk_report"
TEXT_COLUMNS = {
    "system",
    "baseline",
    "measure",
    "topic",
    "method",
    "kind",
    "verdict",
    "test",
    "correction",
    "reference",
    "system_a",
    "system_b",
}


class AnalysisFiles:
    """Saving an `Analysis` (which provides the tables, figures and parameters used here)."""

    if TYPE_CHECKING:  # every table and option of the Analysis this is mixed into

        def __getattr__(self, name: str) -> Any: ...

    # ---- save and load ------------------------------------------------------------------------
    def save(self, folder: str | os.PathLike, *, force: bool = False, figure_formats=None) -> Path:
        """Write the report's folder as `riskreport run --out folder` does (tables/*.csv and *.tex, figures/,
        params.json), atomically: built in a temporary folder and moved into place when complete. The same
        refusal rules: a new or empty folder, or a previous report; with `force` any folder, where only
        riskreport's own files are replaced. `figure_formats` as `run_report`'s (None: PNG alone). summary.json
        (`run.summary`) is written too."""
        from riskreport.io.files import collisions, list_files, plan_destination, umask
        from riskreport.run import runner
        from riskreport.run.summary import SUMMARY, write_summary

        started = time.time()
        plan = runner.plan_report(TEMPLATE, parameters=_plain(self.parameters), figure_formats=figure_formats)
        destination = plan_destination(folder, force=force)
        work = Path(tempfile.mkdtemp(prefix=f".tmp-{destination.final.name}-", dir=destination.build_in))
        try:
            os.chmod(work, 0o777 & ~umask())
            self._write(work, plan.record["figure_formats"])
            files = list_files(work) + ["params.json", SUMMARY]
            write_summary(work, runner._write_params(work, plan, started, status="ok", job=None, files=files))
            clash = collisions(work, destination)
            if clash:
                raise ParameterError(
                    f"{destination.final}: saving would overwrite {', '.join(clash[:5])}, which "
                    "riskreport did not write; force never replaces files it did not write."
                )
            runner._move_into_place(work, destination)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return destination.final

    def _write(self, work: Path, figure_formats: list[str]) -> None:
        from riskreport.render.csv_writer import write_csv
        from riskreport.render.figures import FigureWriter

        tables = work / "tables"
        tables.mkdir()
        for name in self.table_names:
            write_csv(self.table(name), tables / f"{name}.csv")
        for name in (n for n in LATEX if n in self.table_names):
            (tables / f"{name}.tex").write_text(self.to_latex(name), encoding="utf-8")
        import matplotlib.pyplot as plt

        writer, captions = FigureWriter(background=False, formats=figure_formats), self._captions()
        for number, name in enumerate(self.figure_names, 1):
            fig = self.figure(name)
            writer.submit(fig, work / "figures" / f"{number}-{name}", f"Figure {number}: {name}", captions[name])
            plt.close(fig)
        writer.wait()


def read_saved(folder: str | os.PathLike) -> tuple[dict, Any, dict, dict[str, pd.DataFrame], Any]:
    """A saved report's folder (by `Analysis.save` or `riskreport run`): its params.json record, the resolved
    parameters, the other parameters as given, its tables as written, and the systems it was given."""
    folder = Path(folder)
    try:
        record = json.loads((folder / "params.json").read_text(encoding="utf-8"))
        given = dict(record["parameters"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputFormatError(
            folder / "params.json",
            f"not a saved report ({type(error).__name__}: {error})",
            expected="the params.json that riskreport run or Analysis.save writes",
        ) from None
    if "measure" not in given or "collection" not in given:  # e.g. risk_ltr: learners trained, not runs evaluated
        raise InputFormatError(
            folder / "params.json",
            f"a report of the template {record.get('template', '?')!r}, which Analysis.load cannot read: it loads "
            "evaluations of runs or score tables (parameters collection, measure, baseline, alphas); read this "
            f"report's tables in {folder / 'tables'} with pandas",
        )
    from riskreport.measures.params import resolve_parameters

    baseline = given.pop("baselines", None) or given.pop("baseline", None)
    given.pop("baseline", None)
    given.pop("context", None)
    systems = given.pop("systems", None)
    params = resolve_parameters(
        given.pop("collection"),
        measure=given.pop("measure"),
        baseline=baseline,
        alphas=given.pop("alphas"),
        systems=systems,
        sig_level=given.get("sig_level", 0.05),
    )
    tables = {path.stem: read_table(path) for path in sorted((folder / "tables").glob("*.csv")) if path.stem in TABLES}
    return record, params, given, tables, systems


def read_table(path: Path) -> pd.DataFrame:
    """A table as `write_csv` wrote it: text columns as text (a system named `NA` stays `NA`), numbers as numbers."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in table.columns:
        if column in TEXT_COLUMNS:
            continue
        values = table[column]
        if set(values) <= {"True", "False"} and len(values):
            table[column] = values == "True"
        else:
            table[column] = pd.to_numeric(values.replace("", np.nan))
    return table


def _plain(parameters: dict) -> dict:
    """Parameters as the runner checks them (lists, not tuples; no None for a list-typed value it can default)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in parameters.items() if v is not None}
