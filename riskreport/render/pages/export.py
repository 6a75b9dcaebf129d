"""Standalone, offline HTML from an executed notebook (nbconvert), with contents and provenance.

The nbconvert template `nbtemplates/riskreport` extends JupyterLab's but drops every script
fetched from the network (require.js, MathJax, mermaid, widgets), so a report opened with
the network off looks finished. After export a table of contents is built from the section
headings and a provenance footer (collection, file hashes, versions, parameters, run time)
is appended; every value in it is HTML-escaped.

Importing nbconvert and compiling its page template take about as long as exporting a small report:
`prepare` does both ahead (`riskreport run` calls it in a thread while the kernel runs), and the
exporter made is kept for the next export in the same process (a batch worker's next report).
"""

from __future__ import annotations

import functools
import html
import json
import re
from pathlib import Path

TEMPLATE_DIR = Path(__file__).resolve().parent / "nbtemplates"
TOC_SLOT = '<div class="rr-toc-slot"></div>'
EXTERNAL = re.compile(
    r"""<(?:script|link|img|iframe|source|video|audio)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.IGNORECASE
)


def export_html(
    notebook_path: Path,
    html_path: Path,
    show_code: bool = False,
    provenance: dict | None = None,
    log: Path | None = None,
) -> Path:
    """Write `report.html`: images embedded, input cells hidden unless `show_code`, contents and footer added.

    What the kernel wrote to stderr (libraries' warnings, logging, progress) is not put on the page: with `log`,
    it is written there (`log.txt`, per cell; no file when there is none). The template's own warnings are on
    the page already, marked (`riskreport.run.report.kernel`); `report.ipynb` keeps every output as it ran.
    """
    import nbformat

    notebook = omit_sections(nbformat.read(notebook_path, as_version=4))
    stderr = take_stderr(notebook)
    if log is not None and stderr:
        log.write_text(
            "What the libraries wrote to stderr while the template ran (warnings, logging), kept off the page.\n"
            + "".join(f"\n[cell {cell}]\n{text}{'' if text.endswith(chr(10)) else chr(10)}" for cell, text in stderr),
            encoding="utf-8",
        )
    try:
        body, _ = _exporter(show_code).from_notebook_node(notebook)
    except (AttributeError, TypeError, ImportError):  # nbconvert's internals moved: its own exporter, slower, as it is
        from nbconvert import HTMLExporter

        body, _ = HTMLExporter(**_exporter_options(show_code)).from_notebook_node(notebook)
    if provenance is not None:
        body = body.replace("</body>", footer(provenance) + "\n</body>", 1)
    body = add_contents(body)
    html_path.write_text(body, encoding="utf-8")
    return html_path


def take_stderr(notebook) -> list[tuple[int, str]]:
    """Remove every stderr stream output from `notebook`; return (the cell's execution count, as "Cell N failed"
    counts, its text) for each cell that had any, in order."""
    taken = []
    for number, cell in enumerate(notebook.cells, 1):
        outputs = cell.get("outputs", [])
        stderr = [o.get("output_type") == "stream" and o.get("name") == "stderr" for o in outputs]
        if any(stderr):
            cell["outputs"] = [o for o, err in zip(outputs, stderr) if not err]
            text = "".join(str(o.get("text", "")) for o, err in zip(outputs, stderr) if err)
            taken.append((cell.get("execution_count") or number, text))
    return taken


def prepare(show_code: bool = False) -> None:
    """Import nbconvert and compile the page template now, so that the next `export_html` starts at once.
    Any failure is left for `export_html` to meet (and report) again."""
    try:
        _exporter(show_code).template  # noqa: B018 - compiles and keeps the jinja template
    except Exception:  # noqa: BLE001 - e.g. nbconvert's internals moved: export_html falls back
        _exporter.cache_clear()


@functools.lru_cache(maxsize=2)
def _exporter(show_code: bool):
    """The HTML exporter of reports with or without code, made once per process."""
    return _exporter_class()(**_exporter_options(show_code))


def _exporter_options(show_code: bool) -> dict:
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = {"remove_cell"}
    return {
        "config": config,
        "extra_template_basedirs": [str(TEMPLATE_DIR)],
        "template_name": "riskreport",
        "embed_images": True,
        "exclude_input": not show_code,
        "exclude_input_prompt": True,
        "exclude_output_prompt": True,
    }


OMIT_SECTION = "rr-omit-section"  # a cell whose output holds this class removes itself and its section heading


def omit_sections(notebook):
    """Tag for removal each code cell whose output says its section has nothing to show (`report.omitted(...)`),
    and the markdown cells of that section before it: the page and its contents then skip the section."""
    cells = notebook.cells
    for i, cell in enumerate(cells):
        text = json.dumps(cell.get("outputs", [])) if cell.cell_type == "code" else ""
        if OMIT_SECTION not in text:
            continue
        start = i
        while start > 0 and cells[start - 1].cell_type == "markdown":
            start -= 1
            if cells[start].source.lstrip().startswith("## "):
                break
        for part in cells[start : i + 1]:
            tags = part.metadata.setdefault("tags", [])
            if "remove_cell" not in tags:
                tags.append("remove_cell")
    return renumber_sections(notebook)


NUMBERED_HEADING = re.compile(r"^## (\d+)\. ", re.MULTILINE)
SECTION_REFERENCE = re.compile(r"\b([Ss]ections?) (\d+)\b")


def renumber_sections(notebook):
    """Number the `## N. ` headings of the cells kept on the page in sequence again (from the first one's
    number), and the "section N" references in them with them, so that an omitted section leaves no gap
    (4 then 6). The notebook itself (report.ipynb) keeps the template's numbers."""
    kept = [c for c in notebook.cells if c.cell_type == "markdown" and "remove_cell" not in c.metadata.get("tags", [])]
    old = [int(m.group(1)) for c in kept for m in NUMBERED_HEADING.finditer(c.source)]
    new = {number: i for i, number in enumerate(old, old[0] if old else 1)}
    if all(number == i for number, i in new.items()):
        return notebook
    for cell in kept:
        cell.source = NUMBERED_HEADING.sub(lambda m: f"## {new.get(int(m.group(1)), m.group(1))}. ", cell.source)
        cell.source = SECTION_REFERENCE.sub(
            lambda m: f"{m.group(1)} {new.get(int(m.group(2)), m.group(2))}", cell.source
        )
    return notebook


START_TAG = re.compile(r"<(img|div)\b([^>]*?)(\s*/?>)", re.IGNORECASE)
FOCUSABLE = re.compile(r"""\bclass\s*=\s*(?:"[^"]*|'[^']*|)\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b""")
TABINDEX = re.compile(r"""\btabindex\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)
NUMERIC_REFERENCE = re.compile(r"&#(?:(\d{1,7})|[xX]([0-9a-fA-F]{1,6}));")
NO_ALT = "No description has been provided for this image"


def accessible(page: str) -> tuple[str, int]:
    """nbconvert's accessibility edits of a page: alternative text on images without one, and input and
    output areas focusable (tabindex 0); returns the page and how many images lacked a text."""
    missing = 0

    def edit(match: re.Match) -> str:
        nonlocal missing
        tag, attributes, end = match.groups()
        if tag.lower() == "img" and not re.search(r"\balt\s*=", attributes):
            missing += 1
            return f'<{tag}{attributes} alt="{NO_ALT}"{end}'
        if tag.lower() == "div" and FOCUSABLE.search(attributes):  # an existing tabindex becomes 0, as there
            attributes, found = TABINDEX.subn('tabindex="0"', attributes)
            return f"<{tag}{attributes}{'' if found else ' tabindex=' + chr(34) + '0' + chr(34)}{end}"
        return match.group(0)

    return START_TAG.sub(edit, page), missing


def _non_ascii_character(match: re.Match) -> str:
    """The character a numeric reference stands for when it is not ASCII (those keep their meaning in markup)."""
    code = int(match.group(1), 10) if match.group(1) else int(match.group(2), 16)
    return chr(code) if 128 <= code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else match.group(0)


def _exporter_class():
    """nbconvert's HTMLExporter, its accessibility edits done on the text: nbconvert makes them by parsing and
    re-serialising the whole page with BeautifulSoup, which at a campaign's tables (~10^5 tags) takes half a
    minute for what a regular expression does in milliseconds."""
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    class Exporter(HTMLExporter):
        def from_notebook_node(self, nb, resources=None, **kw):
            language = nb.metadata.get("language_info", {})
            lexer = language.get("pygments_lexer", language.get("name", None))
            self.register_filter(
                "highlight_code", self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self))
            )
            resources = self._init_resources(resources)
            self.register_filter(
                "filter_data_type",
                WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources),
            )
            page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            page, missing = accessible(page)
            page = NUMERIC_REFERENCE.sub(_non_ascii_character, page)  # "&#945;" as "α", as a soup round trip writes it
            if missing:
                self.log.warning("Alternative text is missing on %s image(s).", missing)
            return page, resources

    return Exporter


def add_contents(page: str) -> str:
    """Insert a table of contents of the h2 sections at the header's slot (or after the first h1)."""
    sections = re.findall(r'<h2 id="([^"]+)">(.*?)<a class="anchor-link"', page, flags=re.S)
    if not sections:
        return page.replace(TOC_SLOT, "")
    items = "".join(f'<li><a href="#{anchor}">{title.strip()}</a></li>' for anchor, title in sections)
    toc = f'<nav class="rr-toc"><strong>Contents</strong><ol style="list-style: none">{items}</ol></nav>'
    if TOC_SLOT in page:
        return page.replace(TOC_SLOT, toc, 1)
    return re.sub(r"(</h1>)", r"\1" + toc.replace("\\", "\\\\"), page, count=1)


def footer(record: dict) -> str:
    """Provenance of a report: collection, input hashes, template, parameters, versions, run time."""
    esc = lambda value: html.escape(str(value))  # noqa: E731
    collection = record.get("collection") or {}
    files = collection.get("files_sha256") or {}
    file_rows = "".join(
        f"<tr><td><code>{esc(_shown_path(p, collection.get('path')))}</code></td><td><code>{esc(h)}</code></td></tr>"
        for p, h in sorted(files.items())
    )
    parameters = "".join(
        f"<tr><th>{esc(k)}</th><td><code>{esc(json.dumps(v, ensure_ascii=False))}</code></td></tr>"
        for k, v in (record.get("parameters") or {}).items()
    )
    versions = ", ".join(f"{esc(k)} {esc(v)}" for k, v in (record.get("versions") or {}).items())
    rows = [
        ("Collection", f"{esc(collection.get('name', ''))} ({esc(collection.get('path', ''))})"),
        (
            "Template",
            f"{esc(record.get('template', ''))} (SHA-256 <code>{esc(record.get('template_sha256', ''))}</code>)",
        ),
        ("Generated (UTC)", esc(record.get("generated_utc") or record.get("finished_utc", ""))),
        ("Run time", f"{float(record.get('duration_s', 0)):.1f} s"),
        ("Status", esc(record.get("status", ""))),
        ("Versions", versions),
    ]
    head = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return (
        f'<footer class="rr-footer"><h2 id="provenance">Provenance<a class="anchor-link" href="#provenance">¶</a></h2><table>{head}</table>'
        f"<details><summary>Parameters</summary><table>{parameters}</table></details>"
        f"<details><summary>Input files ({len(files)}, SHA-256)</summary><table>{file_rows}</table></details>"
        "</footer>"
    )


def _shown_path(path: str, root: str | None) -> str:
    """An input file as the footer names it: relative to the collection's folder (`runs/nondet-a/1.run.gz`, so
    that files of one name in different folders stay apart), else the full path."""
    try:
        return Path(path).relative_to(root).as_posix() if root else path
    except ValueError:
        return path


def external_references(page: str) -> list[str]:
    """Tags of the page that would fetch something from the network (should be none)."""
    return EXTERNAL.findall(page)
