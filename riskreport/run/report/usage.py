"""What `riskreport run` checks before it imports the statistics, papermill and pandas (about 4 s of CPU): the
template exists, a risk gate can judge its report, the `--junit` file can be written, and the collection and
baselines named exist. A usage error is then said in a fraction of a second; everything is checked again, in
full, when the report is planned (`plan.plan_report`), so this only refuses what is certainly wrong."""

from __future__ import annotations

import ast

from riskreport.errors import UnknownNameError
from riskreport.run.folders.gate import Gate, check_gated_template
from riskreport.run.report.problems import PARAMETERS_TAG
from riskreport.run.report.templates import _literal, template_outline, template_path


def check_run_usage(
    template: str,
    *,
    collection: str | None = None,
    baselines: list[str] | None = None,
    gate: Gate | None = None,
    qrels: str | None = None,
) -> None:
    """Raise the error `run_report` would raise later for an unknown template, a gate on a template without
    verdicts, an unknown collection or a baseline that is none of the collection's runs."""
    tpl = template_outline(*template_path(template))
    if gate is not None:
        check_gated_template(tpl.name, tpl.verdicts)
    if tpl.letor or qrels is not None:  # a LETOR folder, or runs joined to other qrels: checked when planned
        return
    from riskreport.io.collection import load_collection

    spec = collection or collection_default(tpl.path) or "demo"
    found = load_collection(spec)
    if found.scores is not None:  # its systems are in a score table: read with pandas when the report is planned
        return
    runs = sorted(found.runs, key=str.lower)
    for name in baselines or ():
        if name not in found.runs and name not in found.instances:
            raise UnknownNameError("baseline", name, runs, hint=f"(systems of collection {found.name!r})")


def collection_default(path) -> str | None:
    """The default of the template's `collection` parameter, read from its parameters cell (None: not a literal)."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code" and PARAMETERS_TAG in cell.metadata.get("tags", []):
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                return None
            for node in tree.body:
                target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                if isinstance(target, ast.Name) and target.id == "collection" and node.value is not None:
                    value = _literal(ast.get_source_segment(cell.source, node.value) or "")
                    return value if isinstance(value, str) else None
    return None
