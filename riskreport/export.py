"""Standalone, offline HTML from an executed notebook (nbconvert), with contents and provenance.

The nbconvert template `nbtemplates/riskreport` extends JupyterLab's but drops every script
fetched from the network (require.js, MathJax, mermaid, widgets), so a report opened with
the network off looks finished. After export a table of contents is built from the section
headings and a provenance footer (collection, file hashes, versions, parameters, run time)
is appended; every value in it is HTML-escaped.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

TEMPLATE_DIR = Path(__file__).resolve().parent / "nbtemplates"
TOC_SLOT = '<div class="rr-toc-slot"></div>'
EXTERNAL = re.compile(r"""<(?:script|link|img|iframe|source|video|audio)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""",
                      re.IGNORECASE)


def export_html(notebook_path: Path, html_path: Path, show_code: bool = False, provenance: dict | None = None) -> Path:
    """Write `report.html`: images embedded, input cells hidden unless `show_code`, contents and footer added."""
    import nbformat
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    notebook = nbformat.read(notebook_path, as_version=4)
    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = {"remove_cell"}
    exporter = HTMLExporter(config=config, extra_template_basedirs=[str(TEMPLATE_DIR)], template_name="riskreport",
                            embed_images=True, exclude_input=not show_code, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(notebook)
    if provenance is not None:
        body = body.replace("</body>", footer(provenance) + "\n</body>", 1)
    body = add_contents(body)
    html_path.write_text(body, encoding="utf-8")
    return html_path


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
    file_rows = "".join(f"<tr><td><code>{esc(Path(p).name)}</code></td><td><code>{esc(h)}</code></td></tr>"
                        for p, h in sorted(files.items()))
    parameters = "".join(f"<tr><th>{esc(k)}</th><td><code>{esc(json.dumps(v, ensure_ascii=False))}</code></td></tr>"
                         for k, v in (record.get("parameters") or {}).items())
    versions = ", ".join(f"{esc(k)} {esc(v)}" for k, v in (record.get("versions") or {}).items())
    rows = [("Collection", f"{esc(collection.get('name', ''))} ({esc(collection.get('path', ''))})"),
            ("Template", f"{esc(record.get('template', ''))} (SHA-256 <code>{esc(record.get('template_sha256', ''))}</code>)"),
            ("Generated (UTC)", esc(record.get("finished_utc", ""))),
            ("Run time", f"{float(record.get('duration_s', 0)):.1f} s"),
            ("Status", esc(record.get("status", ""))),
            ("Versions", versions)]
    head = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return (f'<footer class="rr-footer"><h2 id="provenance">Provenance<a class="anchor-link" href="#provenance">¶</a></h2><table>{head}</table>'
            f"<details><summary>Parameters</summary><table>{parameters}</table></details>"
            f"<details><summary>Input files ({len(files)}, SHA-256)</summary><table>{file_rows}</table></details>"
            "</footer>")


def external_references(page: str) -> list[str]:
    """Tags of the page that would fetch something from the network (should be none)."""
    return EXTERNAL.findall(page)
