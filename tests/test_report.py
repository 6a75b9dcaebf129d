"""Presentation state a template holds: one Page numbers its figures and knows where its tables go."""

from pathlib import Path

import pandas as pd
import pytest

from riskreport.errors import ParameterError
from riskreport.render import report
from riskreport.render.plotting.figures import FORMATS, check_formats


def test_each_page_numbers_its_own_figures():
    first, second = report.Page(), report.Page()
    assert "Figure 1." in first.caption("a")._repr_html_()
    assert "Figure 2." in first.caption("b")._repr_html_()
    assert "Figure 1." in second.caption("c")._repr_html_()  # no counter shared between pages


def test_page_context_says_where_tables_go_and_how_many_threads(tmp_path):
    page = report.Page({"tables_dir": str(tmp_path / "t"), "workers": 3, "inputs_sha256": "ab" * 32})
    path = page.save_table(pd.DataFrame({"x": [1.0]}), "name")
    assert path == tmp_path / "t" / "name.csv" and path.read_text() == "x\n1\n"
    assert page.workers == 3 and report.Page(None).workers == 1 and str(report.Page().tables_dir) == "tables"
    with pytest.raises(ParameterError, match="context has unknown keys"):
        report.Page({"tables": "x"})


@pytest.mark.parametrize("background", [True, False])
def test_figures_go_to_figures_as_svg_pdf_and_200_dpi_png_with_the_caption(tmp_path, background):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from riskreport.render.plotting.figures import FigureWriter

    plt.close("all")  # figures other tests left open in this process are not this test's
    page = report.Page({"tables_dir": str(tmp_path / "tables"), "figure_formats": ["png", "svg", "pdf"]})
    page._writer = FigureWriter(background=background, formats=page._writer.formats)
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [1, 0])
    markup = page.figure(ax, "A caption: losses < 0", "line", collapsed=True)._repr_html_()
    assert "<details" in markup and "data:image/png;base64" in markup and "Figure 1." in markup
    page.finish()
    stem = tmp_path / "figures" / "1-line"
    assert "A caption: losses &lt; 0" in stem.with_suffix(".svg").read_text()
    assert b"A caption" in stem.with_suffix(".pdf").read_bytes()
    with Image.open(stem.with_suffix(".png")) as image:
        assert image.info.get("Description") == "A caption: losses < 0"
        assert round(image.info["dpi"][0]) == 200
    assert not plt.get_fignums()  # closed in this process


CHILDREN_AFTER_WAIT = """
import os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from pathlib import Path
from riskreport.render.plotting.figures import FigureWriter
writer = FigureWriter(background=True, formats="png,svg,pdf")
fig, ax = plt.subplots()
writer.submit(fig, Path(sys.argv[1]) / "f", "t", "c")
writer.wait()
children = [e for e in os.listdir("/proc") if e.isdigit() and open(f"/proc/{e}/stat").read().rsplit(")", 1)[1].split()[1]
            == str(os.getpid())]
print(len(children))
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads child processes from /proc")
def test_background_figure_writer_leaves_no_child_process_for_the_kernel_to_wait_for(tmp_path):
    # ipykernel ends every child of its process group at shutdown and waits; multiprocessing's resource tracker
    # ignores SIGTERM, so a tracker left running made jupyter_client kill the kernel after 2.5 s
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", CHILDREN_AFTER_WAIT, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]
    assert (tmp_path / "f.svg").exists() and (tmp_path / "f.pdf").exists()


def test_a_page_writes_png_figures_alone_unless_asked_and_shows_every_figure_either_way(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = {}
    for formats in (None, ["pdf"]):
        folder = tmp_path / str(formats)
        page = report.Page({"tables_dir": str(folder / "tables"), "figure_formats": formats})
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([0, 1], [1, 0])
        shown[str(formats)] = page.figure(ax, "A caption", "line")._repr_html_()
        if formats is None:
            assert page._writer._pool is None  # PNG alone: no background process is started
        page.finish()
        names = sorted(p.name for p in (folder / "figures").iterdir())
        assert names == (["1-line.png"] if formats is None else ["1-line.pdf"])
    assert shown["None"] == shown["['pdf']"] and "data:image/png;base64" in shown["None"]


@pytest.mark.parametrize(
    "value, expected",
    [(None, ("png",)), ("pdf, PNG", ("png", "pdf")), (["svg", "png", "svg"], ("png", "svg")), ("png,svg,pdf", FORMATS)],
)
def test_figure_formats_are_checked_and_put_in_order(value, expected):
    assert check_formats(value) == expected


@pytest.mark.parametrize(
    "value, message",
    [("png,jpeg", "unknown format(s) 'jpeg'"), ("", "no format given"), (3, "expected a list of figure formats")],
)
def test_bad_figure_formats_say_what_is_expected(value, message):
    with pytest.raises(ParameterError, match=r"figure_formats: .*") as error:
        check_formats(value)
    assert message in str(error.value) and "png, svg, pdf" in str(error.value)


def test_figures_sent_to_the_background_writer_unpickle_without_seaborn():
    # seaborn's box plots leave a BoxPlotContainer in ax.containers; unpickling it made the writer process import
    # seaborn, pandas and scipy (0.8 s of the process that finishes last)
    import io
    import pickle

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from riskreport.render import plots
    from riskreport.render.plotting.figures import _without_foreign_containers

    deltas = pd.DataFrame({"system": ["a"] * 5 + ["b"] * 5, "delta": [0.1, -0.2, 0.3, 0.0, -0.5] * 2})
    figure = plots.delta_boxplots(deltas, "base", "ERR@20").figure
    modules = set()

    class Recording(pickle.Unpickler):
        def find_class(self, module, name):
            modules.add(module.split(".")[0])
            return super().find_class(module, name)

    Recording(io.BytesIO(pickle.dumps(figure))).load()
    assert "seaborn" in modules  # the test would pass vacuously otherwise
    modules.clear()
    patches = len(figure.axes[0].patches)
    Recording(io.BytesIO(pickle.dumps(_without_foreign_containers(figure)))).load()
    assert "seaborn" not in modules and len(figure.axes[0].patches) == patches
    plt.close(figure)


def test_write_csv_is_byte_identical_to_pandas(tmp_path):
    import numpy as np
    import pandas as pd

    from riskreport.render.tabular.csv_writer import CSV_FLOAT, write_csv

    n = 70
    table = pd.DataFrame(
        {
            "system": [f"s{i % 4}" for i in range(n)],
            "measure": "RBP(p=0.8,rel=2)",
            "alpha": np.arange(n) % 3 * 0.5,
            "x": np.linspace(-1, 1, n) ** 3 * 1e5,
            "k": np.arange(n),
            "flag": np.arange(n) % 2 == 0,
        }
    )
    table.loc[::5, "x"], table.loc[1::9, "x"], table.loc[2::11, "x"] = np.nan, np.inf, -0.0
    table["note"] = pd.Series(["a,b", None, 'q"x', "", "ok", "l\nm", np.nan] * 10, dtype=object)
    table["text"] = pd.Series(["a,b", None, "plain", ""] * 18, dtype="str")[:n]
    write_csv(table, tmp_path / "ours.csv")
    table.to_csv(tmp_path / "pandas.csv", index=False, float_format=CSV_FLOAT)
    assert (tmp_path / "ours.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()
    mixed = pd.DataFrame({"a": [1.5, 2.0], "b": pd.Series([1, "x"], dtype=object)})  # falls back to pandas
    write_csv(mixed, tmp_path / "mixed.csv")
    assert (tmp_path / "mixed.csv").read_text() == mixed.to_csv(index=False, float_format=CSV_FLOAT)


def test_styler_html_writes_the_markup_pandas_writes(monkeypatch):
    import numpy as np
    import pandas as pd

    import riskreport as rr
    from riskreport.render import html, report
    from riskreport.stats import significance

    monkeypatch.setattr(html, "FAST_HTML_CELLS", 0)  # every table takes the fast path (styler_html reads it there)
    rng = np.random.default_rng(4)
    matrix = pd.DataFrame(
        rng.beta(2, 5, (9, 25)), index=[f"s<{i}>" for i in range(9)], columns=[str(t) for t in range(25)]
    )
    alphas = [0.0, 1.0, 5.0]
    risk = rr.risk_table(matrix, "s<0>", alphas)
    tests = rr.inference.tests_table(matrix, "s<0>", alphas, samples=200)
    boot = rr.inference.bootstrap_table(matrix, "s<0>", alphas, samples=300)
    verdicts, summary = significance.report_verdicts(risk, tests, boot)
    styles = [
        report.risk_wide(risk, summary, caption="risk & <co>"),
        report.ci_wide(boot, summary, caption="ci"),
        report.tests_wide(tests, summary, 0.05, caption="tests"),
        report.styled(verdicts, caption="all"),
        report.styled(risk[["system", "alpha", "urisk", "p_value"]], highlight={"urisk": "max"}),
    ]
    for style in styles:
        assert report.styler_html(style) == style.to_html()


@pytest.mark.parametrize("show_code", [False, True])
def test_export_makes_nbconvert_accessibility_edits_without_a_soup_round_trip(show_code):
    import nbformat
    from bs4 import BeautifulSoup
    from nbconvert import HTMLExporter

    from riskreport.render import export

    cell = nbformat.v4.new_code_cell(
        "x = 1",
        outputs=[
            nbformat.v4.new_output(
                "display_data",
                data={
                    "text/html": "<img src='data:image/png;base64,AAAA'/><img alt='a' src='x.png'>"
                    "<div class='jp-OutputArea-output' tabindex='1'>t</div><table><tr><td>1</td></tr></table>"
                },
            )
        ],
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T\n\n## Section"), cell])
    options = dict(
        extra_template_basedirs=[str(export.TEMPLATE_DIR)],
        template_name="riskreport",
        embed_images=True,
        exclude_input=not show_code,
    )
    theirs, _ = HTMLExporter(**options).from_notebook_node(notebook)
    ours, _ = export._exporter_class()(**options).from_notebook_node(notebook)
    assert str(BeautifulSoup(ours, features="html.parser")) == theirs
    assert ours.count(export.NO_ALT) == 1 and 'tabindex="0"' in ours and "tabindex='1'" not in ours


def test_interval_verdicts_show_every_row_of_a_small_report_and_the_disagreements_of_a_campaign():
    import pandas as pd

    verdicts = pd.DataFrame(
        {
            "system": ["a"] * 4 + ["b"] * 4,
            "alpha": [0.0] * 8,
            "method": ["t", "bca", "percentile", "basic"] * 2,
            "kind": ["test", "interval", "interval", "interval"] * 2,
            "statistic": 1.0,
            "p_adjusted": 0.01,
            "ci_low": -1.0,
            "ci_high": 1.0,
            "verdict": ["risk", "risk", "inconclusive", "risk", "undefined", "inconclusive", "reward", "inconclusive"],
        }
    )
    summary = pd.DataFrame({"system": ["a", "b"], "alpha": [0.0, 0.0], "verdict": ["risk", "undefined"]})
    shown, caption = report.interval_verdicts(verdicts, summary)
    assert len(shown) == 6 and "kind" not in shown and caption.startswith("Every interval method")
    shown, caption = report.interval_verdicts(verdicts, summary, limit=5)
    assert shown[["system", "method", "verdict", "rule_verdict"]].values.tolist() == [
        ["a", "percentile", "inconclusive", "risk"],
        ["b", "percentile", "reward", "undefined"],
    ]
    assert "2 of 6 rows" in caption and "tables/verdicts.csv" in caption


def test_the_html_exporter_is_prepared_ahead_and_serves_every_export_of_a_process(tmp_path):
    import nbformat

    from riskreport.render import export

    export._exporter.cache_clear()
    export.prepare()
    prepared = export._exporter(False)
    assert prepared._template_cached is not None  # the page template was compiled ahead
    cell = nbformat.v4.new_code_cell("x = 1", outputs=[nbformat.v4.new_output("stream", text="printed\n")])
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("## Section"), cell])
    nbformat.write(notebook, tmp_path / "a.ipynb")
    for name in ("a.html", "b.html"):
        page = export.export_html(tmp_path / "a.ipynb", tmp_path / name, provenance={"status": "ok"}).read_text()
        assert "printed" in page and "x = 1" not in page and 'href="#Section"' in page and "Provenance" in page
    assert (
        export._exporter(False) is prepared and (tmp_path / "a.html").read_text() == (tmp_path / "b.html").read_text()
    )


def test_page_numbers_never_read_minus_zero_and_headers_are_readable():
    """Issue 33, point 12: `-0.00` is 0.00 wherever the page rounds; raw column names become words."""
    from riskreport.render import html
    from riskreport.render.pages.nondeterministic import mixed_summary

    assert [html.fixed(v, 2) for v in (-0.001, -0.0051, 0.0, float("nan"))] == ["0.00", "-0.01", "0.00", "–"]
    assert [html.fixed(v, 4, signed=True) for v in (-0.00004, 0.25)] == ["0.0000", "+0.2500"]
    table = pd.DataFrame({"alpha": [0.0], "tau_mean_urisk": [-0.0004], "rbo_min": [0.5]})
    markup = report.styled(table, precision=3).to_html()
    assert ">τ mean vs URisk<" in markup and ">rbo min<" in markup and "tau_mean_urisk" not in markup
    assert ">0.000<" in markup and "-0.000" not in markup
    mixed = pd.DataFrame(
        {"system": ["a"], "n_instances": [10], "effect": [-0.00001], "se": [0.01], "ci_low": [-0.00002],
         "ci_high": [0.02], "p_value": [0.5], "tost_low": [-0.01], "tost_high": [0.01], "delta0": [0.05],
         "verdict": ["not_worse"], "method": ["fast"]}
    )  # fmt: skip
    shown = mixed_summary(mixed, 0.05).to_html()
    assert ">not worse<" in shown and "not_worse" not in shown and "[0.0000, +0.0200]" in shown
    assert "background-color: #eef6e8" in shown  # still coloured as a not-worse verdict


def test_the_per_topic_table_is_written_compressed_and_reproducibly(tmp_path):
    """topics.csv was 60 MB for 30 systems x 6,980 topics: gzip, with no time stamp, so the same table is the same bytes."""
    import gzip

    from riskreport.render.tabular.csv_writer import table_file, write_csv

    table = pd.DataFrame({"system": ["a", "b, c"], "topic": ["1", "2"], "delta": [0.25, float("nan")]})
    assert table_file("topics") == "topics.csv.gz" and table_file("risk") == "risk.csv"
    write_csv(table, tmp_path / "t.csv")
    first = write_csv(table, tmp_path / "topics.csv.gz").read_bytes()
    assert gzip.decompress(first) == (tmp_path / "t.csv").read_bytes()
    assert write_csv(table, tmp_path / "again.csv.gz").read_bytes() == first
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "topics.csv.gz", dtype={"topic": str}), table)


def test_a_long_table_is_written_once_and_copied_by_the_next_report(tmp_path, monkeypatch):
    """Issue 40: a table of KEPT_ROWS rows or more is kept as written; the same content gives the same bytes without
    formatting it again, and any other content (-0.0 for 0.0 included) is written anew."""
    import numpy as np

    from riskreport.render import csv_writer

    monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / "cache"))
    rows = csv_writer.KEPT_ROWS
    table = pd.DataFrame({"system": ["a", "b"] * (rows // 2), "alpha": 0.0, "x": np.arange(rows) / 7})
    first = csv_writer.write_csv(table, tmp_path / "one.csv.gz").read_bytes()
    formatted, calls = csv_writer._write, []
    monkeypatch.setattr(csv_writer, "_write", lambda *a: pytest.fail("formatted again"))
    assert csv_writer.write_csv(table.copy(), tmp_path / "two.csv.gz").read_bytes() == first
    monkeypatch.setattr(csv_writer, "_write", lambda *a: calls.append(1) or formatted(*a))
    signed = table.assign(alpha=np.where(np.arange(rows) == 3, -0.0, 0.0))
    csv_writer.write_csv(signed, tmp_path / "three.csv.gz")
    csv_writer.write_csv(table, tmp_path / "four.csv")  # another kind of file
    assert len(calls) == 2


def test_a_figure_drawn_for_one_report_is_read_back_by_the_next(tmp_path, monkeypatch):
    """Issue 40: a page keeps the PNGs of an analysis's figures; the next page of the same content shows and writes
    the same bytes without drawing; another caption (or number) is drawn anew."""
    import warnings

    import riskreport as rr

    monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / "cache"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = rr.analyse("demo", alphas=[0, 5], bootstrap_samples=200)
        pages = []
        for n in range(2):
            page = report.Page({"tables_dir": str(tmp_path / f"r{n}" / "tables")})
            pages.append((page.show(analysis, "urisk-alpha").markup, page))
            page.finish()
            if n == 0:
                monkeypatch.setattr(type(analysis), "figure", lambda *a, **k: pytest.fail("drawn again"))
    assert pages[0][0] == pages[1][0]
    assert (tmp_path / "r0/figures/1-urisk-alpha.png").read_bytes() == (
        tmp_path / "r1/figures/1-urisk-alpha.png"
    ).read_bytes()
    monkeypatch.undo()
    monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / "cache"))
    page = report.Page({"tables_dir": str(tmp_path / "r2" / "tables")})
    page.figures = 1  # the same figure as number 2: another key
    drawn = []
    monkeypatch.setattr(type(analysis), "figure", lambda self, name, baseline=None: drawn.append(name) or _a_figure())
    page.show(analysis, "urisk-alpha")
    assert drawn == ["urisk-alpha"]


def _a_figure():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    return fig


def test_flagged_list_names_every_flagged_challenger_once_per_kind_by_its_smallest_alpha():
    """Issue 39, point 4: the rule's flags by kind and first α, then what most methods flag and the rule never does."""
    from riskreport.render.tabular.campaign import flagged_by_alpha, flagged_list

    summary = pd.DataFrame(
        {
            "system": ["a", "b", "c", "d"] * 3,
            "baseline": "base",
            "alpha": [0.0] * 4 + [5.0] * 4 + [10.0] * 4,
            "verdict": ["inconclusive", "reward", "inconclusive", "inconclusive"]
            + ["risk", "reward", "inconclusive", "inconclusive"]
            + ["risk", "inconclusive", "risk", "inconclusive"],
        }
    )
    methods = ["t", "sign", "wilcoxon"]
    verdicts = summary.loc[summary.index.repeat(3)].assign(method=methods * 12).reset_index(drop=True)
    risky_d = (verdicts["system"] == "d") & (verdicts["alpha"] == 5.0) & (verdicts["method"] != "t")
    verdicts.loc[risky_d, "verdict"] = "risk"  # 2 of 3 methods: most, the rule never
    verdicts.loc[(verdicts["system"] == "a") & (verdicts["alpha"] == 0.0) & (verdicts["method"] != "t"), "verdict"] = (
        "risk"  # flagged by most methods at α = 0, by the rule from α = 5: named by the rule only
    )
    table = flagged_by_alpha(summary, verdicts)
    assert table[["kind", "flagged_by", "alpha", "system"]].values.tolist() == [
        ["risk", "rule", 5.0, "a"],
        ["risk", "rule", 10.0, "c"],
        ["reward", "rule", 0.0, "b"],
        ["risk", "most methods", 5.0, "d"],
    ]
    markup = flagged_list(summary, verdicts).markup
    assert "risk</b> from α = 5 (1): a" in markup and "reward</b> from α = 0 (1): b" in markup
    assert "never by the rule: 1 of 4" in markup and "from r = 6" in flagged_list(summary, None, "minus").markup
    assert "No challenger of 4" in flagged_list(summary.assign(verdict="inconclusive")).markup


def test_a_campaign_page_pages_its_main_tables_and_folds_the_others_with_their_counts():
    from riskreport.render.tabular.campaign import CAMPAIGN_ROWS, scaled_table

    table = report.styled(pd.DataFrame({"system": [f"s{i}" for i in range(40)], "x": range(40)}), caption="Some <b>")
    assert "data-page='25'" in scaled_table(table, False, flagged=["s3"]).markup  # a demo's scale: as before
    main = scaled_table(table, True, flagged=["s3", "s9", "zz"]).markup
    assert f"data-page='{CAMPAIGN_ROWS}'" in main and "<details" not in main
    other = scaled_table(table, True, flagged=["s3", "s9", "zz"], main=False).markup
    assert "<summary>Some &lt;b&gt; (40 rows; the 2 flagged first)</summary>" in other
    small = scaled_table(report.styled(pd.DataFrame({"alpha": [0.0, 1.0]})), True).markup
    assert "rr-small-table" in small and "rr-table" not in small


def test_the_how_to_box_says_how_a_campaign_page_shows_its_tables(tmp_path):
    import riskreport as rr

    p = rr.resolve_parameters("demo")
    page = report.Page({"tables_dir": str(tmp_path / "tables")})
    demo = page.header(p, scaled=True).markup
    assert "Tables of up to 25 rows are shown whole" in demo and not page.campaign
    many = p.__class__(**{**p.__dict__, "systems": [*p.systems, *(f"extra{i}" for i in range(30))]})
    campaign = report.Page({"tables_dir": str(tmp_path / "tables")})
    assert "named above the verdict matrix" in campaign.header(many, scaled=True).markup and campaign.campaign
    assert "Tables of up to 25 rows" in campaign.header(many).markup  # another template: its own layout


def test_figures_drawn_on_the_other_core_are_the_same_bytes_and_fill_their_place(tmp_path, monkeypatch):
    """Issue 40: with two workers a page hands figures to its background process when that is free; the files and
    the page's HTML are byte for byte those drawn in the kernel, and a displayed figure's place is filled at
    `finish` (`update_display`, which papermill keeps)."""
    import warnings

    import IPython.display

    import riskreport as rr
    from riskreport.render.plotting.drawing import PendingFigure
    from riskreport.render.plotting.figures import FigureWriter

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = rr.analyse("demo", alphas=[0, 5], bootstrap_samples=200)
        names = analysis.figure_names
        shown, files, kinds = {}, {}, {}
        displayed, updated = [], []
        monkeypatch.setattr(IPython.display, "display", lambda obj, display_id=None: displayed.append(display_id))
        monkeypatch.setattr(
            IPython.display, "update_display", lambda obj, display_id: updated.append((display_id, obj))
        )
        for workers in (1, 2):
            monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / f"cache{workers}"))  # nothing kept from the other
            page = report.Page({"tables_dir": str(tmp_path / f"w{workers}" / "tables"), "workers": workers})
            if workers == 2:
                page._writer = FigureWriter(background=True, draw_elsewhere=True)  # also under a plain `pytest`
            parts = []
            for name in names:
                part = page.show(analysis, name)
                if isinstance(part, PendingFigure):
                    part._ipython_display_()
                    while not part.future.done():  # the next figure finds the process free again
                        part.future.exception()
                parts.append(part)
            kinds[workers] = [type(p).__name__ for p in parts]
            page.finish()
            shown[workers] = [p.markup for p in parts]
            files[workers] = {p.name: p.read_bytes() for p in (tmp_path / f"w{workers}" / "figures").iterdir()}
    assert kinds[1] == ["HTML"] * len(names) and kinds[2] == ["PendingFigure"] * len(names)
    assert shown[1] == shown[2] and files[1] == files[2] and len(files[1]) == len(names)
    assert len(displayed) == len(names) and [d for d, _ in updated] == displayed
    assert [obj.markup for _, obj in updated] == shown[1]


def test_a_figure_whose_background_process_failed_is_drawn_in_the_kernel(tmp_path, monkeypatch):
    """Issue 40: a background process that ends (killed, out of memory) costs the figure nothing: it is drawn here."""
    import warnings
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    import riskreport as rr
    from riskreport.render.plotting.drawing import PendingFigure
    from riskreport.render.plotting.figures import FigureWriter

    def broken(self, job, stem, title, caption):
        future = Future()
        future.set_exception(BrokenProcessPool("a child process terminated abruptly"))
        self._drawing.append(future)
        return future

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = rr.analyse("demo", alphas=[0, 5], bootstrap_samples=200)
        shown = {}
        for kind in ("kernel", "failed"):
            monkeypatch.setenv("RISKREPORT_CACHE", str(tmp_path / f"cache-{kind}"))
            page = report.Page({"tables_dir": str(tmp_path / kind / "tables")})
            if kind == "failed":
                monkeypatch.setattr(FigureWriter, "free", lambda self: True)
                monkeypatch.setattr(FigureWriter, "draw", broken)
            part = page.show(analysis, "urisk-alpha")
            assert isinstance(part, PendingFigure) == (kind == "failed")
            shown[kind] = part.markup
            page.finish()
    assert shown["kernel"] == shown["failed"]
    assert (tmp_path / "kernel/figures/1-urisk-alpha.png").read_bytes() == (
        tmp_path / "failed/figures/1-urisk-alpha.png"
    ).read_bytes()
