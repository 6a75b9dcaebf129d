"""A report as a reader's browser renders it: headless Chromium, network traffic logged.

Asserts the section headings from the rendered DOM and that the page requests nothing from the
network. `.ci/run` installs Chromium with the system package manager; the test skips only when
no browser is available.
"""

import html
import json
import re
import shutil
import subprocess
import warnings
from html.parser import HTMLParser

import pytest

from riskreport.render.export import external_references
from riskreport.run.runner import run_report

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


class Headings(HTMLParser):
    def __init__(self):
        super().__init__()
        self.current, self.found, self.scripts = None, [], []

    def handle_starttag(self, tag, attrs):
        if tag in ("h1", "h2"):
            self.current = [tag, ""]
        if tag == "script":
            self.scripts.append(dict(attrs))

    def handle_data(self, data):
        if self.current is not None:
            self.current[1] += data

    def handle_endtag(self, tag):
        if self.current is not None and tag == self.current[0]:
            self.found.append((tag, self.current[1].replace("¶", "").strip()))
            self.current = None


@pytest.fixture(scope="module")
def browser():
    path = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if path is None:
        pytest.skip("no Chromium/Chrome browser is installed")
    return path


def test_report_renders_offline(browser, tiny_collection, tmp_path, cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = run_report(
            "risk_report",
            collection=str(tiny_collection),
            alphas=[0, 1],
            out=tmp_path / "report",
            parameters={"bootstrap_samples": 500},
        )
    page = folder / "report.html"
    assert external_references(page.read_text()) == []
    dom, requests = render(browser, page, tmp_path / "page")
    parser = Headings()
    parser.feed(dom)
    h2 = [text for tag, text in parser.found if tag == "h2"]
    assert ("h1", "Risk report: Tiny test collection") in parser.found
    for heading in (
        "1. Collection",
        "2. Effectiveness",
        "4. Risk against the baseline: URisk and TRisk",
        "8. Is the risk real? Bootstrap confidence intervals of URisk",
        "Methods",
        "Provenance",
    ):
        assert heading in h2
    assert "Contents" in dom and "How to read this report" in dom
    # the embedded table script ran: every interactive table has its search box, sortable headers and row count
    assert dom.count('class="rr-tools"') == dom.count('class="rr-table"') > 0
    assert "rr-sortable" in dom and "rows 1–" in dom and 'id="verdict-matrix"' in dom
    assert not any(s.get("src", "").startswith(("http:", "https:", "//")) for s in parser.scripts)
    assert requests == []
    # sorting and searching work: a copy of the page clicks the `mean` header and types a system into the search box
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom, requests = render(browser, probe, tmp_path / "probe")
    result = json.loads(html.unescape(re.search(r'<pre id="rr-probe">(.*?)</pre>', dom, re.S).group(1)))
    assert result["means"] == sorted(result["means"]) and len(result["means"]) > 1  # ascending after one click
    assert 0 < len(result["found"]) < result["rows"] and all(result["query"] in row for row in result["found"])
    assert requests == []
    # control: the same check sees a page that does fetch from the network
    control = tmp_path / "control.html"
    control.write_text('<html><body><h1>x</h1><script src="https://cdn.example.invalid/lib.js"></script></body></html>')
    assert render(browser, control, tmp_path / "control")[1] == ["https://cdn.example.invalid/lib.js"]


PROBE = """<script>
window.addEventListener("load", function () {
  var box = Array.prototype.find.call(document.querySelectorAll("div.rr-table"), function (b) {
    return Array.prototype.some.call(b.querySelectorAll("thead th"), function (th) { return th.textContent.trim() === "mean"; }); });
  var heads = Array.prototype.slice.call(box.querySelectorAll("thead tr:last-child th"));
  var col = heads.findIndex(function (th) { return th.textContent.trim() === "mean"; });
  heads[col].click();
  var visible = function () { return Array.prototype.filter.call(box.querySelectorAll("tbody tr"),
                                                                 function (r) { return r.style.display !== "none"; }); };
  var means = visible().map(function (r) { return parseFloat(r.cells[col].textContent); });
  var rows = box.querySelectorAll("tbody tr").length, query = visible()[0].cells[0].textContent.trim();
  var search = box.querySelector("input[type=search]"); search.value = query;
  search.dispatchEvent(new Event("input"));
  var found = visible().map(function (r) { return r.textContent; });
  var out = document.createElement("pre"); out.id = "rr-probe";
  out.textContent = JSON.stringify({means: means, rows: rows, query: query, found: found});
  document.body.appendChild(out);
});
</script>"""


def render(browser: str, page, work) -> tuple[str, list[str]]:
    """The DOM after rendering, and the http(s) URLs the page itself requested (from Chromium's net log)."""
    work.mkdir()
    netlog = work / "net.json"
    dom = subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={work / 'profile'}",
            f"--log-net-log={netlog}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return dom, sorted(
        {
            e["params"]["url"]
            for e in log["events"]
            if e["type"] == start
            and "file://" in e["params"].get("network_isolation_key", "")
            and e["params"]["url"].startswith(("http:", "https:"))
        }
    )


def test_verdict_matrix_of_100_systems_3_baselines_3_alphas_stays_readable(browser, tmp_path):
    """Every row shown (no paging): under 8,000 px tall and no wider than a 1400 px window (issue 24)."""
    import numpy as np
    import pandas as pd

    from riskreport.render import report

    rng = np.random.default_rng(3)
    systems, baselines, alphas = [f"system-{i:03d}" for i in range(100)], ["bm25", "monoT5", "dense"], [0.0, 1.0, 5.0]
    rows = [(s, b, a) for b in baselines for a in alphas for s in systems if s != b]
    summary = pd.DataFrame(rows, columns=["system", "baseline", "alpha"]).assign(
        urisk=rng.normal(0, 0.3, len(rows)),
        trisk=np.nan,
        p_adjusted=rng.random(len(rows)),
        verdict=rng.choice(["risk", "reward", "inconclusive"], len(rows)),
        agree=7,
        methods=9,
        disagree="sign: risk; wilcoxon: risk; randomisation: reward; bca: risk; percentile: risk",
    )
    markup = report.verdict_matrix(summary, caption="Verdict matrix").markup
    script = (
        "<script>window.addEventListener('load', () => { const m = document.getElementById('verdict-matrix');"
        "const r = m.getBoundingClientRect(); document.body.setAttribute('data-size', "
        "Math.round(r.width) + 'x' + Math.round(r.height) + 'x' + document.body.scrollWidth); });</script>"
    )
    page = tmp_path / "matrix.html"
    page.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{markup}{script}</body></html>",
        encoding="utf-8",
    )
    dom = subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,3000",
            "--virtual-time-budget=2000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    width, height, scroll = map(int, re.search(r'data-size="(\d+)x(\d+)x(\d+)"', dom).groups())
    print(f"verdict matrix 100 x 3 x 3: {width} x {height} px, page {scroll} px wide")
    assert height < 8000 and scroll <= 1400, (width, height, scroll)
    assert dom.count("<tr>") >= 100


def test_the_index_of_50_jobs_of_100_reports_fits_a_1400_px_window(browser, tmp_path):
    """One row per job (what it found, its changed verdicts, its history figure) in a 1400 px window (issue 34)."""
    from conftest import write_job_reports

    from riskreport.run.index import write_index

    write_job_reports(tmp_path, 50, 100)
    page = write_index(tmp_path)
    script = (
        "<script>window.addEventListener('load', () => { const t = document.querySelector('table');"
        "const r = t.getBoundingClientRect(); document.body.setAttribute('data-size', "
        "Math.round(r.width) + 'x' + Math.round(r.height) + 'x' + document.body.scrollWidth); });</script>"
    )
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
    dom = subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,3000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    width, height, scroll = map(int, re.search(r'data-size="(\d+)x(\d+)x(\d+)"', dom).groups())
    print(f"index 50 jobs x 100 reports: jobs table {width} x {height} px, page {scroll} px wide")
    assert scroll <= 1400 and height < 50 * 40, (width, height, scroll)
    assert dom.count('<svg class="history"') == 50 and "<details>" in dom
