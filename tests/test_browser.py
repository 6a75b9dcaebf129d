"""A report as a reader's browser renders it: headless Chromium, network traffic logged.

Asserts the section headings from the rendered DOM and that the page requests nothing from the
network. `.ci/run` installs Chromium with the system package manager; the test skips only when
no browser is available.
"""

import html
import json
import re
import warnings
from html.parser import HTMLParser

import pytest
from conftest import SHARED_DATA, chromium, find_browser, markup_page, measured

from riskreport.render.pages.export import TEMPLATE_DIR, external_references
from riskreport.run.report.runner import run_report


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
    return find_browser()


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
    dom = chromium(browser, work, f"--log-net-log={netlog}", "--dump-dom", page.as_uri())
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
    (width, height, scroll), dom = measured(
        browser,
        tmp_path,
        markup_page(markup),
        "document.getElementById('verdict-matrix')",
        "--virtual-time-budget=2000",
    )
    print(f"verdict matrix 100 x 3 x 3: {width} x {height} px, page {scroll} px wide")
    assert height < 8000 and scroll <= 1400, (width, height, scroll)
    assert dom.count("<tr>") >= 100


def test_the_index_of_50_jobs_of_100_reports_fits_a_1400_px_window(browser, tmp_path):
    """One row per job (what it found, its changed verdicts, its history figure) in a 1400 px window (issue 34)."""
    from conftest import write_job_reports

    from riskreport.run.folders.index import write_index

    write_job_reports(tmp_path, 50, 100)
    page = write_index(tmp_path)
    (width, height, scroll), dom = measured(
        browser, tmp_path, page.read_text(encoding="utf-8"), "document.querySelector('table')"
    )
    print(f"index 50 jobs x 100 reports: jobs table {width} x {height} px, page {scroll} px wide")
    assert scroll <= 1400 and height < 50 * 40, (width, height, scroll)
    assert dom.count('<svg class="history"') == 50 and "<details>" in dom


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory):
    """The demo report (flagged systems weak-ql and weak-tfidf, a run with missing topics), with its verdicts."""
    import pandas as pd

    work = tmp_path_factory.mktemp("demo")
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        warnings.simplefilter("ignore")
        patch.setenv("RISKREPORT_CACHE", str(work / "cache"))
        folder = run_report("risk_report", reports_dir=work / "reports", parameters={"bootstrap_samples": 500})
    verdicts = pd.read_csv(folder / "tables" / "verdicts.csv")
    rule = verdicts[verdicts["method"] == "t"]
    return folder / "report.html", sorted(set(rule.loc[rule["verdict"].isin(["risk", "reward"]), "system"]))


SEEN = """<script>
window.addEventListener("load", function () {
  var seen = function (el) { return !el.closest("details:not([open])") && el.getClientRects().length > 0; };
  var tables = Array.prototype.map.call(document.querySelectorAll("div.rr-table"), function (box) {
    var rows = Array.prototype.slice.call(box.querySelectorAll("tbody tr"));
    var first = function (r) { return r.cells.length ? r.cells[0].textContent.trim() : ""; };
    return {caption: (box.querySelector("caption") || {textContent: ""}).textContent.trim(), open: seen(box),
            rows: rows.map(first), visible: rows.filter(seen).map(first), scrolls: box.scrollWidth > box.clientWidth + 1};
  });
  var images = Array.prototype.map.call(document.querySelectorAll("img"), function (i) { return i.alt + (seen(i) ? "" : " (hidden)"); });
  var out = document.createElement("pre"); out.id = "rr-seen";
  out.textContent = JSON.stringify({tables: tables, images: images, width: document.documentElement.scrollWidth});
  document.body.appendChild(out);
});
</script>"""


def seen(browser, page, work) -> dict:
    """What a reader sees at 1400 px without a click: per table its rows and the rows shown; the figures."""
    probe = work / "seen.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", SEEN + "</body>"), encoding="utf-8")
    dom = chromium(browser, work, "--window-size=1400,3000", "--dump-dom", probe.as_uri())
    return json.loads(html.unescape(re.search(r'<pre id="rr-seen">(.*?)</pre>', dom, re.S).group(1)))


TABLE_SCRIPT = re.compile(r"<script>\s*/\* riskreport: tables.*?</script>", re.S)
COLLAPSED = (
    "Parametric and jackknife SE",
    "at the first level",
    "Significantly different pairs",
)  # details, not findings


def test_demo_report_shows_every_flagged_system_and_figure_without_a_click(browser, demo_page, tmp_path):
    """Issue 33, point 2: every table that lists a flagged system shows its row; every figure and the tables the
    sections' text describes are open; only the detail tables of COLLAPSED start closed."""
    page, flagged = demo_page
    assert {"weak-ql", "weak-tfidf"} <= set(flagged)
    shown = seen(browser, page, tmp_path)
    closed = [t["caption"] for t in shown["tables"] if not t["open"]]
    assert all(any(c in caption for c in COLLAPSED) for caption in closed) and len(closed) == len(COLLAPSED), closed
    for table in shown["tables"]:
        if table["open"]:
            missing = [s for s in flagged if s in table["rows"] and s not in table["visible"]]
            assert missing == [], (table["caption"], missing)
            if len(table["rows"]) <= 25:
                assert table["visible"] == table["rows"], table["caption"]
    systems = next(t for t in shown["tables"] if t["caption"].startswith("Systems in this report"))
    assert "weak-tfidf" in systems["visible"] and len(systems["visible"]) == 11  # the run with missing topics 17, 42
    assert len(shown["images"]) >= 11 and not [i for i in shown["images"] if i.endswith("(hidden)")]
    # issue 33, point 12: no table scrolls sideways at 1400 px (section 9's 21 columns of p-values included)
    assert [t["caption"] for t in shown["tables"] if t["scrolls"]] == [] and shown["width"] <= 1400


def test_demo_page_has_one_time_stamp_readable_headers_and_no_negative_zero(demo_page):
    """Issue 33, point 12: the folder's name, the header and the provenance give one time; input files are named
    with their folders; no `-0.00`; no raw column names."""
    page, _ = demo_page
    text = page.read_text(encoding="utf-8")
    stamp = page.parent.name  # e.g. 20261126T123106Z
    iso = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}+00:00"
    times = re.findall(r"Generated \(UTC\)</th><td[^>]*>([^<]+)<", text)
    assert times == [iso, iso], (times, iso)
    files = re.findall(r"<tr><td><code>([^<]+)</code></td><td><code>[0-9a-f]{64}</code>", text)
    assert len(files) == len(set(files)) > 10 and any(f.startswith("instances/") and f.count("/") == 2 for f in files)
    assert re.findall(r"(?<![\d.])[-\u2212]0\.0+(?![0-9])", text) == []
    for raw in ("tau_mean_urisk", "p_adjusted", "n_topics", "se_jackknife"):
        assert f">{raw}<" not in text, raw
    assert "τ mean vs URisk" in text


def test_a_long_table_is_paged_with_its_flagged_rows_first(browser, tmp_path):
    import pandas as pd

    from riskreport.render import report

    table = pd.DataFrame({"system": [f"s{i:02d}" for i in range(40)], "mean": [i / 40 for i in range(40)]})
    small = report.interactive(table.head(25)).markup
    long = report.interactive(table, flagged=["s31", "s38"]).markup
    page = tmp_path / "long.html"
    export = (TEMPLATE_DIR / "riskreport" / "index.html.j2").read_text(encoding="utf-8")
    page.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{small}{long}"
        f"{TABLE_SCRIPT.search(export).group(0)}</body></html>",
        encoding="utf-8",
    )
    whole, paged = seen(browser, page, tmp_path)["tables"]
    assert whole["visible"] == whole["rows"] and len(whole["rows"]) == 25  # 25 rows: shown whole
    assert len(paged["visible"]) == 25 and paged["visible"][:2] == ["s31", "s38"]
    assert paged["visible"][2:] == [f"s{i:02d}" for i in range(23)]


def test_a_printout_opens_every_collapsed_part_and_shows_every_row(browser, demo_page, tmp_path):
    """@media print: the report prints as many pages as a copy of it with every <details> open and no paging."""
    page, _ = demo_page
    text = page.read_text(encoding="utf-8")
    expanded = tmp_path / "expanded.html"
    expanded.write_text(
        re.sub(
            r"data-page='\d+'",
            "data-page='1000000'",
            text.replace("<details class='rr-detail'>", "<details class='rr-detail' open>"),
        ),
        encoding="utf-8",
    )
    assert expanded.read_text(encoding="utf-8") != text  # the demo report does have collapsed parts
    assert pages(browser, page, tmp_path / "a") == pages(browser, expanded, tmp_path / "b")


def pages(browser, page, work) -> int:
    """The number of pages of `page` printed to PDF."""
    work.mkdir()
    pdf = work / "page.pdf"
    chromium(browser, work, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri())
    return len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf.read_bytes()))


COVID = SHARED_DATA / "trec-covid-round1" / "round1_data.csv"

CAMPAIGN_SEEN = """<script>
window.addEventListener("load", function () {
  var seen = function (el) { return !el.closest("details:not([open])") && el.getClientRects().length > 0; };
  var list = document.querySelector("div.rr-flagged-list");
  var named = Array.prototype.map.call(list.querySelectorAll("li"), function (li) {
    return li.textContent.slice(li.textContent.indexOf("): ") + 3).split(", "); });
  var tables = Array.prototype.map.call(document.querySelectorAll("div.rr-table"), function (box) {
    var rows = Array.prototype.slice.call(box.querySelectorAll("tbody tr"));
    var first = function (r) { return r.cells.length ? r.cells[0].textContent.trim() : ""; };
    var summary = box.closest("details") ? box.closest("details").querySelector("summary").textContent : "";
    return {open: seen(box), rows: rows.map(first), visible: rows.filter(seen).map(first), summary: summary,
            flagged: JSON.parse(box.getAttribute("data-flagged") || "[]"),
            info: (box.querySelector(".rr-tools span") || {textContent: ""}).textContent};
  });
  var out = document.createElement("pre"); out.id = "rr-seen";
  out.textContent = JSON.stringify({height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
                                    list: seen(list), named: [].concat.apply([], named), tables: tables});
  document.body.appendChild(out);
});
</script>"""


@pytest.fixture(scope="module")
def campaign_page(tmp_path_factory):
    """The risk_report page of the 107 runs of TREC-COVID round 1 (RBP, p = 0.8; baseline bm25_baseline) when
    ../shared holds them, else of a synthetic score table of the same shape (107 systems x 30 topics); with the
    challengers a verdict flags: the rule's risk or reward at some α, or most of the methods' (tables/verdicts.csv)."""
    import numpy as np
    import pandas as pd

    work = tmp_path_factory.mktemp("campaign")
    scores = COVID
    if not COVID.is_file():
        rng = np.random.default_rng(1)
        base = rng.beta(2, 4, 30)
        rows = [
            (name, t, float(np.clip(base[t] + rng.normal(shift, 0.12), 0, 1)))
            for name, shift in [("bm25_baseline", 0.0)]
            + [(f"run-{i:03d}", rng.normal(-0.04, 0.06)) for i in range(106)]
            for t in range(30)
        ]
        scores = work / "scores.csv"
        pd.DataFrame(rows, columns=["system", "topic", "score"]).to_csv(scores, index=False)
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        warnings.simplefilter("ignore")
        patch.setenv("RISKREPORT_CACHE", str(work / "cache"))
        folder = run_report("risk_report", collection=str(scores), baseline="bm25_baseline", out=work / "report")
    verdicts = pd.read_csv(folder / "tables" / "verdicts.csv", keep_default_na=False)
    rule = verdicts[(verdicts["method"] == "t") & verdicts["verdict"].isin(["risk", "reward"])]
    counts = verdicts.groupby(["system", "alpha"])["verdict"].agg(
        lambda v: max((v == "risk").sum(), (v == "reward").sum()) * 2 > len(v)
    )
    most = counts[counts].reset_index()["system"]
    return folder / "report.html", set(rule["system"]), set(rule["system"]) | set(most)


def test_a_campaign_page_names_every_flagged_challenger_and_fits_8000_px(browser, campaign_page, tmp_path):
    """Issue 39, point 4: at 107 systems the page is under 8,000 px at 1400 px wide; every challenger a verdict
    flags is named without a click (the list above the verdict matrix); a table that cannot show every flagged
    row says how many rows it holds and shows its flagged rows first; the others are one click away, their
    summary saying how many rows and flagged rows they hold."""
    page, by_rule, flagged = campaign_page
    assert len(flagged) > 25 and by_rule  # a campaign: more flagged challengers than any table shows whole
    probe = tmp_path / "seen.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", CAMPAIGN_SEEN + "</body>"), encoding="utf-8")
    dom = chromium(browser, tmp_path, "--window-size=1400,3000", "--dump-dom", probe.as_uri())
    shown = json.loads(html.unescape(re.search(r'<pre id="rr-seen">(.*?)</pre>', dom, re.S).group(1)))
    print(f"campaign page: {shown['height']} px tall, {shown['width']} px wide, {len(flagged)} flagged")
    assert shown["height"] < 8000 and shown["width"] <= 1400, (shown["height"], shown["width"])
    assert shown["list"] and flagged <= set(shown["named"]), sorted(flagged - set(shown["named"]))
    for table in shown["tables"]:
        held = [s for s in table["rows"] if s in table["flagged"]]
        if table["open"] and len(table["visible"]) < len(table["rows"]):  # paged: says how many, flagged first
            assert f" of {len(table['rows'])}" in table["info"], table["info"]
            if held:
                assert f"the {len(held)} flagged first" in table["info"], table["info"]
                assert table["visible"] == held[: len(table["visible"])] or set(held) <= set(table["visible"])
        elif not table["open"] and table["summary"] and held:
            assert f"({len(table['rows'])} rows; the {len(held)} flagged first)" in table["summary"] or (
                "Validity" in table["summary"] or "bootstrap intervals" in table["summary"]
            ), table["summary"]
