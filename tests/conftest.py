"""Shared fixtures: tiny hand-made collections, and the real data in ../shared when present."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from riskreport.run.cli.scaffold import new_notebook
from riskreport.run.report.problems import PARAMETERS_TAG

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
WEB2012 = SHARED_DATA / "trec-web-2012"


def write_run(path: Path, rows, tag: str = "tag") -> Path:
    """rows: (topic, docno, score); ranks are assigned in the given order per topic."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ranks: dict[str, int] = {}
    lines = []
    for topic, docno, score in rows:
        ranks[topic] = ranks.get(topic, 0) + 1
        lines.append(f"{topic} Q0 {docno} {ranks[topic]} {score} {tag}\n")
    text = "".join(lines)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return path


def write_qrels(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{t} 0 {d} {r}\n" for t, d, r in rows))
    return path


def write_job_reports(root: Path, jobs: int, reports: int) -> None:
    """A reports folder as batches leave it, without running anything: `jobs` jobs (job-00, ...) of `reports` complete
    reports each (params.json, an empty report.html, summary.json with 0-3 challengers at risk and `n % 3` verdicts
    changed in report n), `latest` at the newest, and a last batch in which every job was skipped."""
    import json

    import numpy as np

    rng = np.random.default_rng(1)
    for j in range(jobs):
        for n in range(reports):
            folder = root / "jobs" / f"job-{j:02d}" / f"2026{n:04d}T000000Z"
            folder.mkdir(parents=True)
            finished = f"2026-01-01T{n // 60:02d}:{n % 60:02d}:00+00:00"
            record = {"job": f"job-{j:02d}", "status": "ok", "finished_utc": finished, "template": "risk_report"}
            record["parameters"] = {"baseline": "bm25", "measure": "ERR@20", "alphas": [0, 1, 5, 10]}
            (folder / "params.json").write_text(json.dumps(record))
            (folder / "report.html").write_text("<html></html>")
            risky = [f"s{i}" for i in range(int(rng.integers(0, 4)))]
            headline = {"alpha": 10.0, "risk": risky, "reward": ["r"], "inconclusive": ["i", "j"]}
            changes = None if n == 0 else {"verdicts_changed": n % 3}
            (folder / "summary.json").write_text(
                json.dumps({"schema_version": 1, "headline": headline, "changes": changes})
            )
        (root / "jobs" / f"job-{j:02d}" / "latest").symlink_to(f"2026{reports - 1:04d}T000000Z")
    (root / "logs").mkdir()
    batch = {"log": "batch-x.log", "finished_utc": "2026-01-02T00:00:00+00:00"}
    batch["jobs"] = [{"name": f"job-{j:02d}", "status": "skipped"} for j in range(jobs)]
    (root / "logs" / "batch-x.json").write_text(json.dumps(batch))


@pytest.fixture
def tiny_collection(tmp_path) -> Path:
    """3 systems x 4 topics (+ a judged topic without relevant documents), all runs tagged alike.

    Per-topic P@2: base 0.5 0.5 0.5 0.5; good 1 1 0.5 1; risky 1 1 0 (topic 3 missing) 0.
    """
    root = tmp_path / "tiny"
    qrels = []
    for topic in ("1", "2", "3", "4"):
        qrels += [(topic, f"{topic}-r1", 2), (topic, f"{topic}-r2", 1), (topic, f"{topic}-n1", 0)]
    qrels += [("5", "5-n1", 0)]
    write_qrels(root / "qrels.txt", qrels)
    base = [(t, d, s) for t in ("1", "2", "3", "4") for d, s in ((f"{t}-r1", 3), (f"{t}-n1", 2), (f"{t}-x", 1))]
    good = [(t, d, s) for t in ("1", "2", "4") for d, s in ((f"{t}-r1", 3), (f"{t}-r2", 2))]
    good += [("3", "3-r1", 3), ("3", "3-n1", 2)]
    risky = [(t, d, s) for t in ("1", "2") for d, s in ((f"{t}-r1", 3), (f"{t}-r2", 2))]
    risky += [("4", "4-n1", 3), ("4", "4-x", 2), ("99", "99-a", 1)]
    write_run(root / "runs" / "base.run", base, tag="same")
    write_run(root / "runs" / "good.run.gz", good, tag="same")
    write_run(root / "runs" / "risky.txt", risky, tag="same")
    (root / "collection.toml").write_text(
        'title = "Tiny test collection"\nmeasure = "P@2"\nbaseline = "base"\nalphas = [0, 1, 5]\n'
    )
    return root


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def find_browser() -> str:
    """The installed Chromium or Chrome; the test skips without one."""
    path = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if path is None:
        pytest.skip("no Chromium/Chrome browser is installed")
    return path


def chromium(browser: str, work, *arguments: str) -> str:
    """Headless Chromium's standard output, with its profile in `work`."""
    command = [browser, *FLAGS, f"--user-data-dir={work / 'profile'}", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout


def measured(browser: str, work, page: str, element: str, *arguments: str) -> tuple[tuple[int, int, int], str]:
    """((width, height) of `element` (a JavaScript expression) and the page's scroll width, in px; the DOM) of `page`
    (a whole HTML page) rendered in a 1400 px window by headless Chromium (`arguments`: more of its flags)."""
    script = (
        f"<script>window.addEventListener('load', () => {{ const r = ({element}).getBoundingClientRect();"
        "document.body.setAttribute('data-size', "
        "Math.round(r.width) + 'x' + Math.round(r.height) + 'x' + document.body.scrollWidth); });</script>"
    )
    probe = work / "probe.html"
    probe.write_text(page.replace("</body>", script + "</body>"), encoding="utf-8")
    dom = chromium(browser, work, "--window-size=1400,3000", *arguments, "--dump-dom", probe.as_uri())
    width, height, scroll = map(int, re.search(r'data-size="(\d+)x(\d+)x(\d+)"', dom).groups())
    return (width, height, scroll), dom


def markup_page(markup: str) -> str:
    """A whole UTF-8 page around a fragment of markup."""
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{markup}</body></html>"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("RISKREPORT_CACHE", str(folder))
    return folder


@pytest.fixture
def web2012() -> Path:
    if not WEB2012.is_dir():
        pytest.skip("../shared/data/trec-web-2012 is not present")
    return WEB2012


MINI_SOURCE = """\
collection: str = "demo"  # collection
baseline: Optional[str] = None  # baseline
alphas: Optional[list[float]] = None  # α grid
measure: Optional[str] = None  # measure
fail: bool = False  # raise in a cell
pause: float = 0.0  # seconds to sleep in a cell
"""


@pytest.fixture
def mini_template(tmp_path) -> Path:
    """A small template: resolves the parameters, writes a table, can fail or pause."""
    notebook = new_notebook(
        [
            nbformat.v4.new_markdown_cell("# Mini report"),
            nbformat.v4.new_code_cell(
                "from typing import Optional\n" + MINI_SOURCE, metadata={"tags": [PARAMETERS_TAG]}
            ),
            nbformat.v4.new_code_cell(
                "import time\nimport riskreport as rr\nfrom riskreport import report\n"
                "p = rr.resolve_parameters(collection, measure=measure, baseline=baseline, "
                "alphas=alphas)\nscores = rr.evaluate(p.collection, p.measure)\n"
                "report.Page().save_table(scores.matrix().reset_index(), 'scores')\ntime.sleep(pause)\n"
                "assert not fail, 'failing as asked'\np.baseline"
            ),
        ]
    )
    path = tmp_path / "templates" / "mini.ipynb"
    path.parent.mkdir()
    nbformat.write(notebook, path)
    return path


CLI = [sys.executable, "-m", "riskreport"]  # the command line, run as a child process


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (relative POSIX path -> bytes): what a test compares before and after."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def processes_in(folder: Path) -> list[int]:
    """Live pids whose working directory or command line lies inside `folder` (CLI, workers, kernels, helpers)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and (cwd.startswith(str(folder)) or str(folder) in cmdline):
            found.append(int(proc.name))
    return found
