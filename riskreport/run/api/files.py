"""An `Analysis` on disk: `save` writes the folder `riskreport run` writes (tables, figures, params.json),
atomically; `read_saved` reads such a folder back (with `folders.saved_tables.read_table`). A mixin of
`riskreport.run.api.analysis.Analysis`."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from riskreport.errors import InputFormatError, ParameterError
from riskreport.run.api.tables import LATEX, TABLES
from riskreport.run.folders.place import move_into_place
from riskreport.run.folders.saved_tables import read_table

TEMPLATE = "risk_report"


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
        (`folders.summary`) is written too."""
        from riskreport.io.files import collisions, list_files, plan_destination, umask
        from riskreport.run.folders.summary import SUMMARY, write_summary
        from riskreport.run.report import runner

        started = time.time()
        plan = runner.plan_report(TEMPLATE, parameters=_plain(self.parameters), figure_formats=figure_formats)
        destination = plan_destination(folder, force=force, names=("save", "force=True"))
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
            move_into_place(work, destination)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return destination.final

    def _write(self, work: Path, figure_formats: list[str]) -> None:
        from riskreport.render.plotting.figures import FigureWriter
        from riskreport.render.tabular.csv_writer import table_file, write_csv

        tables = work / "tables"
        tables.mkdir()
        for name in self.table_names:
            write_csv(self.table(name), tables / table_file(name))
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
    if record.get("template", TEMPLATE) != TEMPLATE or "measure" not in given or "collection" not in given:
        # e.g. risk_ltr: learners trained, not runs evaluated
        raise InputFormatError(
            folder / "params.json",
            f"a report of the template {record.get('template', '?')!r}, which Analysis.load cannot read: it loads "
            "evaluations of runs or score tables (parameters collection, measure, baseline, alphas); read this "
            f"report's tables in {folder / 'tables'} with pandas",
        )
    files = sorted((folder / "tables").glob("*.csv")) + sorted((folder / "tables").glob("*.csv.gz"))
    named = {path.name.removesuffix(".gz").removesuffix(".csv"): path for path in files}  # topics.csv.gz: topics
    tables = {name: read_table(path) for name, path in named.items() if name in TABLES}
    _check_columns(folder, tables)
    from riskreport.measures.params import resolve_parameters

    baseline = given.pop("baselines", None) or given.pop("baseline", None)
    given.pop("baseline", None)
    given.pop("context", None)
    systems = given.pop("systems", None)
    location, measure, alphas = given.pop("collection"), given.pop("measure"), given.pop("alphas")
    if _gone(location) and "risk" in tables:  # inputs from Python whose cache folder was cleared: the tables remain
        params = _detached(location, record, given, measure, baseline, alphas, tables["risk"])
    else:
        params = resolve_parameters(
            location,
            measure=measure,
            baseline=baseline,
            alphas=alphas,
            systems=systems,
            sig_level=given.get("sig_level", 0.05),
        )
    return record, params, given, tables, systems


def _check_columns(folder: Path, tables: dict[str, pd.DataFrame]) -> None:
    """Each saved table has the columns riskreport writes: a damaged one is an error now, not a KeyError later."""
    from riskreport.render.tabular.csv_writer import table_file
    from riskreport.run.api.tables import table_columns

    for name, expected in table_columns().items():
        missing = [c for c in expected if name in tables and c not in tables[name].columns]
        if missing:
            raise InputFormatError(
                folder / "tables" / table_file(name),
                f"no column {', '.join(missing)}",
                expected=f"the columns riskreport writes: {', '.join(expected)}",
            )


def _gone(location: str) -> bool:
    """Whether a saved report's collection was a path that no longer exists (a cleared cache, another machine)."""
    path = Path(location).expanduser()
    return path.is_absolute() and not path.exists()


def _detached(location: str, record: dict, given: dict, measure: str, baseline, alphas, risk: pd.DataFrame):
    """The parameters of a saved report whose inputs are gone, from its params.json and risk table: its tables
    load as saved; what needs the scores (figures, other tables) says the inputs are gone."""
    from riskreport.io.collection import Collection
    from riskreport.measures.params import ReportParameters

    baselines = [baseline] if isinstance(baseline, str) else list(baseline)
    systems = list(dict.fromkeys([*baselines, *risk["system"]]))
    name = record.get("collection", {}).get("name") or Path(location).name
    title = {"title": given["title"]} if given.get("title") else {}
    collection = Collection(name=name, path=Path(location), qrels=None, runs={}, config=title, source=Path(location))
    return ReportParameters(
        collection,
        measure,
        baselines[0],
        [float(a) for a in alphas],
        systems,
        float(given.get("sig_level", 0.05)),
        {"gone": location},
        systems,
        baselines if len(baselines) > 1 else [],
    )


def _plain(parameters: dict) -> dict:
    """Parameters as the runner checks them (lists, not tuples; no None for a list-typed value it can default)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in parameters.items() if v is not None}
