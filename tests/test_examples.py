"""The example notebook runs top to bottom with the API only (needs ../shared/data/trec-web-2012)."""

from __future__ import annotations

import os

import nbformat
from conftest import WEB2012

from riskreport.run.report.execute import KERNEL_NAME, _kernel_manager, _kernelspec
from riskreport.run.report.runner import PROJECT_ROOT

EXAMPLE = PROJECT_ROOT / "examples" / "api_web2012.ipynb"


def test_example_notebook_runs(web2012, tmp_path, cache_dir):
    from nbclient import NotebookClient

    notebook = nbformat.read(EXAMPLE, as_version=4)
    home = _kernelspec(tmp_path / "jupyter")
    client = NotebookClient(
        notebook,
        timeout=900,
        kernel_name=KERNEL_NAME,
        kernel_manager_class=_kernel_manager(home),
        resources={"metadata": {"path": str(EXAMPLE.parent)}},
    )
    client.execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    summary = code[1].outputs[-1]["data"]["text/html"]  # `a` as the last line: the Jupyter summary
    assert "against indriCASP at α = 10" in summary and "against indri-ql-cata" in summary
    assert "rr-verdict-groups" in summary
    assert "image/png" in code[4].outputs[-1]["data"]  # a.figure(...) shows as a figure
    assert "risk.csv" in code[-1].outputs[-1]["data"]["text/plain"]


def test_example_uses_only_the_api():
    source = "\n".join(c.source for c in nbformat.read(EXAMPLE, as_version=4).cells if c.cell_type == "code")
    assert "from riskreport." not in source and "import riskreport as rr" in source


def test_the_example_looks_for_the_data_where_the_tests_do(tmp_path, monkeypatch):
    """The notebook's data folder does not depend on where Jupyter was started (it hard-coded ../../shared, issue
    39): its first cell, up to its check, names the folder conftest's `web2012` fixture uses, from any folder."""
    source = next(c.source for c in nbformat.read(EXAMPLE, as_version=4).cells if c.cell_type == "code")
    assert "../" not in source
    setup = source[: source.index("if not WEB2012.is_dir()")]
    for folder in (tmp_path, EXAMPLE.parent):
        monkeypatch.chdir(folder)
        names: dict = {}
        exec(setup, names)  # imports and the path: nothing is read
        assert names["WEB2012"] == WEB2012, os.getcwd()
