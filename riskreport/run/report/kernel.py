"""`python -m riskreport.run.report.kernel`: an IPython kernel that ends when the process that started it dies, and that
shows a template's own warnings on the page, marked as such.

jupyter_client starts kernels in their own session, so a `kill -9` of `riskreport run` or of a
batch worker would leave the kernel running (and writing). A watcher thread ends this kernel
as soon as its parent is gone.

A warning raised by a template's cell or by riskreport itself (`own_warning`) is displayed as a marked note
(`riskreport.render.tabular.html.template_warning`); any other library's warning goes to stderr as usual, which the
runner moves from the page into the report's `log.txt` (`riskreport.render.pages.export.export_html`).
"""

from __future__ import annotations

import os
import re
import sys
import warnings

PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # riskreport/
CELL = re.compile(r"(^<ipython-input-)|([/\\]ipykernel_\d+[/\\]-?\d+\.py$)")  # the file name IPython gives a cell


def own_warning(filename: str) -> bool:
    """Whether a warning attributed to `filename` is the template's own: raised in one of its cells or in
    riskreport's code (which the template calls), rather than inside another library."""
    path = os.path.abspath(filename) if filename and not filename.startswith("<") else filename or ""
    return (
        bool(CELL.search(filename or ""))
        or path.startswith(PACKAGE + os.sep)
        or filename == os.environ.get("IPYKERNEL_CELL_NAME", "\0")
    )


def show_warning(message, category, filename, lineno, file=None, line=None, _default=warnings.showwarning) -> None:
    """`warnings.showwarning` of the report's kernel: the template's own warnings on the page, the rest to stderr."""
    if file is None and own_warning(filename):
        try:
            from IPython.display import display

            from riskreport.render.tabular.html import template_warning

            where = "a cell of the template" if CELL.search(filename) else os.path.relpath(filename, PACKAGE)
            display(template_warning(f"{category.__name__}: {message}", f"{where}, line {lineno}"))
            return
        except Exception:  # noqa: BLE001 - no display (no kernel yet): the warning as Python shows it
            pass
    _default(message, category, filename, lineno, file, line)


def main() -> None:
    if sys.path and sys.path[0] in ("", os.getcwd()):  # as ipykernel_launcher: the report folder is no module path
        del sys.path[0]
    from riskreport.io.processes import exit_with_parent

    exit_with_parent()
    warnings.showwarning = show_warning
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
