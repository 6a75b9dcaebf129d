"""Template authoring: check a template (`check_template`) and scaffold a new one (`new_template`).

A template is an ordinary notebook with one cell tagged `parameters` that papermill can read,
and code cells that call riskreport functions and show their results: statistics live in
riskreport, where they are tested, not in the notebook. The check is static (nbformat, papermill's
own parameter inspection, Python's `ast`), then executes the template on the demo collection.

>>> result = check_template("templates/risk_report.ipynb", execute=False)   # doctest: +SKIP
>>> print(result.report())                                                  # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from riskreport.errors import ReportExecutionError, RiskReportError
from riskreport.progress import Progress
from riskreport.run.cli.inline_statistics import REVIEWED_TAG, inline_statistics, reviewed_lines
from riskreport.run.cli.parameter_cell import parameter_problems
from riskreport.run.cli.scaffold import new_template  # noqa: F401 - `riskreport new-template` imports it here
from riskreport.run.report.problems import PARAMETERS_TAG, Problem, source_line


@dataclass
class CheckResult:
    """What `check_template` found in one template; `ok` when nothing."""

    path: Path
    problems: list[Problem] = field(default_factory=list)
    parameters: int = 0
    executed: str = ""  # e.g. "executed on demo in 8.1 s"; empty when not executed
    reviewed: int = 0  # cells tagged `reviewed` and lines marked `# riskreport: reviewed`: not flagged, counted

    @property
    def ok(self) -> bool:
        return not self.problems

    def report(self) -> str:
        """Plain text: one block per problem, each naming the file, cell and line."""
        shown = _shown_path(self.path)
        if self.ok:
            marked = [f"{self.reviewed} cell(s) or line(s) marked reviewed"] if self.reviewed else []
            steps = [f"{self.parameters} parameters", "static checks passed", *marked] + (
                [self.executed] if self.executed else []
            )
            return f"{shown}: ok ({'; '.join(steps)})"
        lines = [f"{shown}: FAILED ({len(self.problems)} problem{'s' if len(self.problems) > 1 else ''})"]
        for problem in self.problems:
            where = f"{shown}, {problem.where()}" if problem.where() else shown
            lines.append(f"  {where}: {problem.message}")
            if problem.code:
                lines.append(f"      | {problem.code}")
            lines.append(f"      fix: {problem.fix}")
        return "\n".join(lines)


def check_template(
    path: str | os.PathLike, *, execute: bool = True, collection: str = "demo", progress: Progress | None = None
) -> CheckResult:
    """Check a template notebook: parameters, no inline statistics, and (unless `execute=False`) a run.

    The run executes the template with `runner.run_report` on `collection` (default: the demo)
    in a temporary folder; a failing cell is reported with its number, line and error.
    """
    path = Path(path)
    result = CheckResult(path)
    notebook, problem = _read_notebook(path)
    if problem:
        result.problems.append(problem)
        return result
    fatal = _structure_problems(notebook)
    result.problems += fatal
    tagged = _tagged_cells(notebook, PARAMETERS_TAG)
    declared: dict = {}
    readable = notebook.metadata.get("kernelspec", {}).get("name")  # else papermill cannot inspect it
    if readable and len(tagged) == 1 and notebook.cells[tagged[0] - 1].cell_type == "code":
        declared, problems = parameter_problems(path, notebook, tagged[0])
        result.parameters = len(declared)
        result.problems += problems
    result.problems += _unfinished_page(notebook)
    reviewed = _tagged_cells(notebook, REVIEWED_TAG)
    for number, cell in enumerate(notebook.cells, 1):
        if cell.cell_type == "code" and number not in tagged and number not in reviewed:
            result.problems += inline_statistics(cell.source, number)
            result.reviewed += reviewed_lines(cell.source)
    result.reviewed += sum(notebook.cells[n - 1].cell_type == "code" for n in reviewed)
    if execute and not fatal:
        started = time.time()
        letor = bool(notebook.metadata.get("riskreport", {}).get("letor"))  # its collection is a LETOR folder
        run_on = collection if "collection" in declared and not letor else None
        problems = _execution_problems(path, run_on, progress)
        result.problems += problems
        if not problems:
            result.executed = f"executed on {run_on or 'its default data'} in {time.time() - started:.1f} s"
    result.problems.sort(key=lambda p: (p.cell or 0, p.line or 0))
    return result


def template_files(paths: list[str] | None = None) -> list[Path]:
    """The notebooks to check: files, folders of `.ipynb`, or template names; none: every template found."""
    from riskreport.run.report.runner import find_template, template_dirs
    from riskreport.run.report.templates import named_templates

    if not paths:
        found: dict[str, Path] = {}
        for folder, origin in template_dirs():
            for notebook in named_templates(folder, origin):
                found.setdefault(notebook.stem, notebook)
        return list(found.values())
    files: list[Path] = []
    for spec in paths:
        path = Path(spec)
        if path.is_dir():
            files += sorted(path.glob("*.ipynb"))
        elif path.suffix == ".ipynb" or path.exists() or os.sep in spec:
            files.append(path)  # a missing file is reported by the check itself
        else:
            files.append(find_template(spec).path)
    return files


# --- reading and structure ---------------------------------------------------------------------


def _read_notebook(path: Path):
    import nbformat

    if path.suffix != ".ipynb":
        return None, Problem("not a notebook: a template is an .ipynb file", "give the path of a .ipynb file")
    if not path.is_file():
        return None, Problem("file not found", "check the path; `riskreport templates` lists the templates it finds")
    try:
        return nbformat.read(path, as_version=4), None
    except Exception as error:  # noqa: BLE001 - nbformat raises JSON, validation and encoding errors alike
        return None, Problem(
            f"not a readable notebook ({type(error).__name__}: {error})",
            "open and save it in Jupyter, or restore it from version control",
        )


def _tagged_cells(notebook, tag: str) -> list[int]:
    return [n for n, cell in enumerate(notebook.cells, 1) if tag in cell.metadata.get("tags", [])]


def _structure_problems(notebook) -> list[Problem]:
    """Defects that keep papermill from parameterising the notebook at all."""
    problems = []
    if not notebook.metadata.get("kernelspec", {}).get("name"):
        problems.append(
            Problem(
                "the notebook metadata has no kernelspec, so papermill cannot run it",
                "open the notebook in Jupyter, choose a Python kernel and save it",
            )
        )
    language = notebook.metadata.get("language_info", {}).get("name") or notebook.metadata.get("kernelspec", {}).get(
        "language"
    )
    if language and language.lower() != "python":
        problems.append(
            Problem(f"the notebook's language is {language!r}; riskreport templates are Python", "use a Python kernel")
        )
    tagged = _tagged_cells(notebook, PARAMETERS_TAG)
    if not tagged:
        problems.append(
            Problem(
                "no cell is tagged `parameters`, so papermill cannot inject parameters",
                "add the tag `parameters` to the code cell that assigns the defaults (JupyterLab: "
                "property inspector > Cell Tags; Notebook: View > Cell Toolbar > Tags)",
            )
        )
    elif len(tagged) > 1:
        for number in tagged[1:]:
            problems.append(
                Problem(
                    f"a second cell tagged `parameters` (the first is cell {tagged[0]}); papermill "
                    "reads and overrides only the first",
                    f"remove the tag from this cell and move its parameters into cell {tagged[0]}",
                    cell=number,
                )
            )
    for number in tagged:
        if notebook.cells[number - 1].cell_type != "code":
            problems.append(
                Problem(
                    "the cell tagged `parameters` is not a code cell",
                    "tag the code cell that assigns the defaults instead",
                    cell=number,
                )
            )
    for number in _tagged_cells(notebook, "injected-parameters"):
        problems.append(
            Problem(
                "a cell tagged `injected-parameters`: this notebook is an executed report, not a template",
                "delete the cell (start from the template, not from report.ipynb)",
                cell=number,
            )
        )
    return problems


def _unfinished_page(notebook) -> list[Problem]:
    """A page that shows an analysis's figures (`Page.show`) and is never finished: with two cores its figures are
    drawn in the background and put in place by `Page.finish`, so a page left unfinished keeps placeholders."""
    code = [(n, c.source) for n, c in enumerate(notebook.cells, 1) if c.cell_type == "code"]
    shows = [n for n, source in code if re.search(r"\b(?!plt\.)\w+\.show\(\s*\w", source)]  # not plt.show()
    if not shows or any(re.search(r"\.finish\(\)", source) for _, source in code):
        return []
    return [
        Problem(
            "the page shows figures (`page.show`) but is never finished: figures drawn in the background "
            "would stay placeholders",
            "call `page.finish()` in the last cell",
            cell=shows[0],
        )
    ]


# --- execution ---------------------------------------------------------------------------------


def _execution_problems(path: Path, collection: str | None, progress: Progress | None) -> list[Problem]:
    from riskreport.run.report.runner import run_report

    say = progress or (lambda message: None)
    say(f"executing {path.name} on {collection or 'its default collection'}")
    with tempfile.TemporaryDirectory(prefix="riskreport-check-") as work:
        try:
            run_report(
                str(path),
                collection=collection,
                out=Path(work) / "report",
                reports_dir=work,
                update_index=False,
                progress=say,
            )
        except ReportExecutionError as error:
            return [_failed_cell(error)]
        except RiskReportError as error:
            return [
                Problem(
                    f"the template could not run on {collection}: {error}",
                    "fix the template's defaults or the parameters it is given",
                )
            ]
    return []


def _failed_cell(error: ReportExecutionError) -> Problem:
    """Locate the failing cell in the kept notebook, numbered as in the template."""
    import nbformat

    fix = "fix the cell; `riskreport run TEMPLATE --show-code` shows the whole failing notebook"
    executed = Path(error.kept or "") / "report.ipynb"
    if not error.kept or not executed.is_file():
        return Problem(f"execution failed: {error.reason}", fix)
    added = {"injected-parameters", "papermill-error-cell-tag"}
    cells = [c for c in nbformat.read(executed, as_version=4).cells if not added & set(c.metadata.get("tags", []))]
    for number, cell in enumerate(cells, 1):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") == "error":
                traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(output.get("traceback", [])))
                match = re.search(r"Cell In\[\d+\], line (\d+)", traceback)
                line = int(match.group(1)) if match else None
                return Problem(
                    f"execution failed: {output.get('ename')}: {output.get('evalue')}",
                    fix,
                    cell=number,
                    line=line,
                    code=source_line(cell.source, line),
                )
    return Problem(f"execution failed: {error.reason}", fix)


def _shown_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
