"""mkdocs hook: display formulas written in TeX between `\\[` and `\\]` lines become MathML at build time.

Browsers render MathML natively, so the site's formulas need no script and no network (MathJax from a
CDN would leave raw TeX on a machine offline). A formula latex2mathml cannot convert stops the build
with the formula in the message.
"""

from __future__ import annotations

from latex2mathml.converter import convert
from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority

OPEN, CLOSE = "\\[", "\\]"


class DisplayMath(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        formula: list[str] | None = None
        in_fence = False
        for line in lines:
            stripped = line.strip()
            if formula is None and stripped.startswith(("```", "~~~")):
                in_fence = not in_fence
            if in_fence or (formula is None and stripped != OPEN):
                out.append(line)
            elif formula is None:
                formula = []
            elif stripped == CLOSE:
                out += ["", f'<div class="formula">{to_mathml(" ".join(formula))}</div>', ""]
                formula = None
            else:
                formula.append(stripped)
        if formula is not None:
            raise ValueError(f"a display formula opened with {OPEN} is never closed with {CLOSE}: {' '.join(formula)}")
        return out


def to_mathml(tex: str) -> str:
    try:
        return convert(tex, display="block")
    except Exception as error:  # noqa: BLE001 - latex2mathml raises many kinds for TeX it does not know
        raise ValueError(f"cannot convert the formula {tex!r} to MathML: {error}") from error


class DisplayMathExtension(Extension):
    def extendMarkdown(self, md) -> None:  # Markdown's API names it
        md.preprocessors.register(DisplayMath(md), "riskreport_display_math", 28)


@event_priority(100)  # before mkdocstrings reads the Markdown extensions
def on_config(config):
    config.markdown_extensions.append(DisplayMathExtension())
    return config
