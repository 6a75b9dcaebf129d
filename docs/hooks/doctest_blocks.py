"""mkdocs hook: docstring examples (`>>>` lines and the output below them) render as Python console code.

riskreport's docstrings carry doctests (run by tests/test_api.py) as plain `>>>` lines. Markdown would
read `>` as a quotation and `["a"]["b"]` as a link; this wraps each example, up to the next blank line,
in a `pycon` fence before any other block processing. Lines inside an existing fence are left alone.
"""

from __future__ import annotations

from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority

PROMPT = ">>>"


class DoctestBlocks(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        in_fence = in_example = False
        indent = ""
        for line in lines:
            stripped = line.lstrip()
            if in_example and not stripped:
                out.append(f"{indent}```")
                in_example = False
            elif not in_example and stripped.startswith(("```", "~~~")):
                in_fence = not in_fence
            elif not in_example and not in_fence and stripped.startswith(PROMPT):
                indent = line[: len(line) - len(stripped)]
                out.append(f"{indent}```pycon")
                in_example = True
            out.append(line)
        if in_example:
            out.append(f"{indent}```")
        return out


class DoctestBlocksExtension(Extension):
    def extendMarkdown(self, md) -> None:
        md.preprocessors.register(DoctestBlocks(md), "riskreport_doctest_blocks", 29)


@event_priority(100)  # before mkdocstrings reads the Markdown extensions
def on_config(config):
    config.markdown_extensions.append(DoctestBlocksExtension())
    return config
