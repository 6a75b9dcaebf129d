"""The documentation: the site builds without a warning, and the README stays short, true and linked."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_LINES = 150


def _needs_mkdocs():
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason=f"{module} is not installed (pip install 'riskreport[docs]')")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The site as `mkdocs build --strict` builds it, and its log (once for the tests of this module)."""
    _needs_mkdocs()
    site = tmp_path_factory.mktemp("docs") / "site"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "NO_MKDOCS_2_WARNING": "1",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    return site, log


def test_site_builds_strict(built):
    """`mkdocs build --strict`: no broken link or anchor, no page left out of the nav, every API page resolves."""
    site, log = built
    assert "excluded from the built site" not in log, log  # mkdocs only says so at INFO level
    assert (site / "index.html").is_file()
    risk_api = (site / "api" / "stats" / "index.html").read_text(encoding="utf-8")
    assert "risk_table" in risk_api and "georisk" in risk_api  # generated from the docstrings
    api = (site / "api" / "riskreport" / "index.html").read_text(encoding="utf-8")
    assert '<span class="gp">&gt;&gt;&gt; </span>' in api and "<blockquote>" not in api  # doctests as console code


# In each `td code` of a page, the text of every line start and what precedes it: a break between two word
# characters (letters, digits, _) cut a name in two.
BROKEN_NAMES = r"""<script>window.addEventListener('load', () => {
  const broken = [];
  for (const code of document.querySelectorAll('.md-typeset td code')) {
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), range = document.createRange();
    let top = null, before = '';
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        range.setStart(node, i); range.setEnd(node, i + 1);
        const rects = range.getClientRects();
        if (!rects.length) continue;
        if (top !== null && rects[0].top > top + 2 && /\w/.test(before) && /\w/.test(node.data[i]))
          broken.push(code.textContent);
        top = rects[0].top; before = node.data[i];
      }
    }
  }
  document.body.setAttribute('data-broken', encodeURIComponent(JSON.stringify(broken)));
});</script>"""


def test_code_in_tables_breaks_between_words_not_inside_a_name(built, tmp_path):
    """In headless Chromium at 1400 px, the API table of From Python breaks its code only between words: Material
    let inline code break anywhere, and the table read "rr.analyse(collecti" / "on" (issue 39)."""
    import json
    from urllib.parse import unquote

    from conftest import chromium, find_browser

    browser = find_browser()
    site, _ = built
    for page in ("python", "cli", "reports"):
        probe = site / page / "probe.html"  # beside the page: its stylesheets load as they do for the page
        html = (site / page / "index.html").read_text(encoding="utf-8")
        probe.write_text(html.replace("</body>", BROKEN_NAMES + "</body>"), encoding="utf-8")
        dom = chromium(browser, tmp_path, "--window-size=1400,3000", "--dump-dom", probe.as_uri())
        broken = json.loads(unquote(re.search(r'data-broken="([^"]*)"', dom).group(1)))
        assert broken == [], f"{page}: code cut inside a name: {broken}"


def test_readme_is_short_and_true():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < MAX_README_LINES
    for absent in ("SPEC", "../shared", "covid42"):
        assert absent not in text, f"README.md mentions {absent!r}, which a clone does not have"


def test_readme_gives_the_commands_ci_runs():
    """The install-and-run command and the test command of .ci/run appear in the README, word for word."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for line in ci if line.startswith(("python3 -m venv", ".venv/bin/python -m pytest"))]
    assert len(commands) == 2, commands
    text = README.read_text(encoding="utf-8")
    for command in commands:
        assert command in text, f"README.md lacks the command .ci/run runs: {command}"


def test_readme_links_into_the_docs_exist():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?:docs|examples)/[^)#\s]+)(?:#[^)]*)?\)", text)
    assert targets, "README.md links into docs/"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_docs_cite_papers_not_internal_notes():
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "docs").rglob("*.md")
        if re.search(r"\bSPEC\b|\.\./shared", p.read_text(encoding="utf-8"))
    ]
    assert not offenders


def _hook(name: str = "doctest_blocks"):
    _needs_mkdocs()
    pytest.importorskip("latex2mathml", reason="latex2mathml is not installed (pip install 'riskreport[docs]')")
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_doctest_examples_become_console_code():
    blocks = _hook().DoctestBlocks(None)
    lines = [
        "Text.",
        "",
        '>>> p["a"]["color"]',
        "'black'",
        "",
        "More text.",
        "```python",
        ">>> inside a fence",
        "```",
        "    >>> indented",
        "    1",
    ]
    assert blocks.run(lines) == [
        "Text.",
        "",
        "```pycon",
        '>>> p["a"]["color"]',
        "'black'",
        "```",
        "",
        "More text.",
        "```python",
        ">>> inside a fence",
        "```",
        "    ```pycon",
        "    >>> indented",
        "    1",
        "    ```",
    ]


def test_display_formulas_become_mathml():
    hook = _hook("mathml")
    out = hook.DisplayMath(None).run(
        ["Text.", "", "\\[", "x_j = l_\\alpha(\\Delta_j)", "\\]", "", "```tex", "\\[", "```"]
    )
    assert out[:2] == ["Text.", ""] and out[-3:] == ["```tex", "\\[", "```"]  # a fence is left alone
    (html,) = [line for line in out if line.startswith('<div class="formula">')]
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in html and "<mi>&#x00394;</mi>" in html
    with pytest.raises(ValueError, match="never closed"):
        hook.DisplayMath(None).run(["\\[", "x"])


def test_the_skip_table_names_every_test_that_needs_the_shared_data():
    """Every test file that skips without a folder of the real data beside the repository (a `SHARED_DATA / "..."`
    folder, or the `web2012` fixture) is named in docs/development.md's table, in the row of that folder: the table
    left out the 8 LETOR-sample skips and others (issue 39)."""
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    table = text[text.index("## Tests that may skip") : text.index("## The documentation")]
    rows = [line for line in table.splitlines() if line.startswith("| `") or line.startswith("| the")]
    missing = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        folders = set(re.findall(r'SHARED_DATA / "([\w-]+)"', source))
        if re.search(r"def test_\w+\([^)]*\bweb2012\b", source):
            folders.add("trec-web-2012")
        for folder in folders:
            if not any(path.name in row and f"shared/data/{folder}/" in row for row in rows):
                missing.append(f"{path.name} ({folder})")
    assert not missing, f"docs/development.md's skip table lacks: {missing}"
