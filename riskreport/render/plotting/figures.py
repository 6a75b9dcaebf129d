"""Figures for papers: every figure of a page as a 200-dpi PNG, and as SVG and PDF on request, its caption in
the metadata.

Each format re-draws a figure, which used to be most of a report's run time: a report writes the PNG alone
unless it is asked for more (`figure_formats`, `check_formats`). `FigureWriter`
finds the figure's tight bounding box once (`tight_bbox`: every format is cut to it, so none
lays the figure out twice, as `bbox_inches="tight"` does), draws the 200-dpi PNG (the page
embeds it at half size), and when SVG or PDF are asked for pickles the finished figure and has one worker
process write them while the notebook goes on: a process, not a thread,
because matplotlib's font cache is not thread-safe. A figure that does not pickle, or a page
built from a plain script (whose top-level code a spawned worker would run again), is written
at once. `FigureWriter.wait` returns when every file is written and raises the first
error of a worker.

A spawned pool starts multiprocessing's resource tracker, a helper process that ignores SIGTERM.
When the kernel shuts down, ipykernel terminates every child of its process group and waits for
them; the tracker outlived those signals until jupyter_client killed the kernel 2.5 s later,
in most demo runs. `wait` therefore stops the tracker when this writer started it.
"""

from __future__ import annotations

import io
import multiprocessing
import pickle
import sys
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from riskreport.errors import ParameterError
from riskreport.io.processes import exit_with_parent
from riskreport.render.plotting.drawing import FigureJob, prepare_worker, style_snapshot

FORMATS = ("png", "svg", "pdf")  # every format a figure can be written in
DEFAULT_FORMATS = ("png",)  # what a report writes unless asked for more
PNG_DPI = 200
PNG_COMPRESSION = 3  # zlib level: 40% less time than PIL's default 6, files ~15% larger
RC = {"pdf.fonttype": 42, "svg.fonttype": "none", "svg.hashsalt": "riskreport"}


def metadata(title: str, caption: str) -> dict[str, dict[str, str]]:
    """Per format, the metadata keys that carry the figure's title and caption."""
    return {
        "svg": {"Title": title, "Description": caption},
        "pdf": {"Title": title, "Subject": caption},
        "png": {"Title": title, "Description": caption},
    }


def check_formats(value, where: str = "figure_formats") -> tuple[str, ...]:
    """The figure formats a report writes, in `FORMATS` order: `value` is None (the default, PNG alone), a list
    of names or one comma-separated string ("png,svg,pdf"); `ParameterError` naming `where` otherwise."""
    if value is None:
        return DEFAULT_FORMATS
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ParameterError(
            f"{where}: expected a list of figure formats (some of {', '.join(FORMATS)}), got {value!r}."
        )
    given = {n.strip().lower() for n in names if n.strip()}
    unknown = sorted(given - set(FORMATS))
    if unknown or not given:
        raise ParameterError(
            f"{where}: {'unknown format(s) ' + ', '.join(map(repr, unknown)) if unknown else 'no format given'}; "
            f"expected one or more of {', '.join(FORMATS)} (e.g. png,pdf)."
        )
    return tuple(f for f in FORMATS if f in given)


def tight_bbox(figure):
    """The region `savefig(bbox_inches="tight")` would cut, in inches: the figure's tight box, padded as
    `savefig.pad_inches` says. Passed to every format, it spares each a layout pass of its own."""
    import matplotlib as mpl

    canvas = figure.canvas
    if not hasattr(canvas, "get_renderer"):  # closed in pyplot (matplotlib >= 3.10 leaves a bare canvas): draw with Agg
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(figure)
    box = figure.get_tightbbox(canvas.get_renderer())
    return box.padded(mpl.rcParams["savefig.pad_inches"])


def write_png(
    figure,
    stem: Path,
    title: str,
    caption: str,
    bbox=None,
    save: bool = True,
    encoder: ThreadPoolExecutor | None = None,
    written: list[Future] | None = None,
) -> bytes:
    """Write `<stem>.png` at 200 dpi with `caption` in its metadata; return a half-size copy for a screen page.
    `bbox`: the region to write, in inches (default: `tight_bbox(figure)`); `save=False` draws the page's copy
    alone (the same pixels) and writes no file; `encoder`: a thread that encodes and writes the file while the
    caller goes on (PIL's encoder releases the GIL: on two cores the file costs no wall time), the same bytes;
    its future is appended to `written`.

    The figure is drawn once into raw pixels, which PIL encodes as the file and, halved, as the page's copy:
    matplotlib's own PNG, decoded again to halve it, took 15-30% longer for the same pixels."""
    from PIL import Image

    bbox = tight_bbox(figure) if bbox is None else bbox
    image = _pixels(figure, bbox)
    if image is None:  # matplotlib drew another size than expected: its own PNG, decoded
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", metadata=metadata(title, caption)["png"], bbox_inches=bbox, dpi=PNG_DPI)
        image = Image.open(buffer)
        image.load()
    if save:
        stem.parent.mkdir(parents=True, exist_ok=True)
        if encoder is None or written is None:
            _write_file(image, stem, title, caption)
        else:
            written.append(encoder.submit(_write_file, image, stem, title, caption))
    out = io.BytesIO()
    image.reduce(2).save(out, format="PNG", compress_level=PNG_COMPRESSION)  # each 2×2 block's mean: 100 dpi
    return out.getvalue()


def _pixels(figure, bbox):
    """The figure drawn at 200 dpi, cut to `bbox` (inches), as a PIL image; None if the size is not as expected."""
    from PIL import Image

    buffer = io.BytesIO()
    figure.savefig(buffer, format="rgba", bbox_inches=bbox, dpi=PNG_DPI)
    size = (int(bbox.width * PNG_DPI), int(bbox.height * PNG_DPI))  # matplotlib's renderer truncates, too
    raw = buffer.getvalue()
    if len(raw) != size[0] * size[1] * 4:
        return None
    return Image.frombuffer("RGBA", size, raw, "raw", "RGBA", 0, 1)


def _write_file(image, stem: Path, title: str, caption: str) -> Path:
    path = stem.with_suffix(".png")
    path.write_bytes(_png(image, title, caption))
    return path


def _png(image, title: str, caption: str) -> bytes:
    """`image` as the PNG file matplotlib would write: its Software line, the title and caption, 200 dpi."""
    import matplotlib as mpl
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    software = {"Software": f"Matplotlib version{mpl.__version__}, https://matplotlib.org/"}
    for key, value in {**software, **metadata(title, caption)["png"]}.items():
        info.add_text(key, value)
    out = io.BytesIO()
    image.save(out, format="PNG", pnginfo=info, dpi=(PNG_DPI, PNG_DPI), compress_level=PNG_COMPRESSION)
    return out.getvalue()


def write_vector(
    figure, stem: Path, title: str, caption: str, bbox=None, formats: tuple[str, ...] = ("svg", "pdf")
) -> list[Path]:
    """Write `figure` as `<stem>.svg` and `<stem>.pdf` (those of `formats`) with `caption` in each file's metadata
    (`bbox` as `write_png`)."""
    import matplotlib as mpl

    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    with mpl.rc_context(RC):  # type: ignore[arg-type]  # matplotlib's stubs want literal rc keys
        bbox = tight_bbox(figure) if bbox is None else bbox
        for fmt in (f for f in ("svg", "pdf") if f in formats):
            path = stem.with_suffix(f".{fmt}")
            figure.savefig(path, format=fmt, metadata=metadata(title, caption)[fmt], bbox_inches=bbox)
            paths.append(path)
    return paths


def _write_pickled(payload: bytes, stem: str, title: str, caption: str, bbox, formats: tuple[str, ...]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = pickle.loads(payload)
    try:
        return [str(p) for p in write_vector(figure, Path(stem), title, caption, bbox, formats)]
    finally:
        plt.close(figure)


def draw_files(
    job: FigureJob, rc: dict, stem: str, title: str, caption: str, formats: tuple[str, ...]
) -> tuple[bytes, list[str]]:
    """In the background process: draw `job` with the settings `rc`, write its files in `formats` and return the
    page's copy of the PNG (half size) and the paths of the SVG and PDF files written."""
    import warnings

    import matplotlib as mpl
    import matplotlib.pyplot as plt

    with warnings.catch_warnings(), mpl.rc_context(rc):
        warnings.simplefilter("ignore")  # the kernel's log, not the worker's stderr, is where warnings belong
        figure = job()
        try:
            bbox = tight_bbox(figure)
            png = write_png(figure, Path(stem), title, caption, bbox, "png" in formats)
            vector = tuple(f for f in formats if f != "png")
            paths = [str(p) for p in write_vector(figure, Path(stem), title, caption, bbox, vector)] if vector else []
        finally:
            plt.close(figure)
    return png, paths


def _without_foreign_containers(figure):
    """`figure` without other libraries' containers in its axes (seaborn's BoxPlotContainer): a container only
    groups artists the axes hold anyway and draws nothing, but unpickling one made the worker import its
    library, and with seaborn pandas and scipy: 0.8 s of the background process per report. The caller
    closes the figure next, so nothing else sees the change."""
    for ax in figure.axes:
        ax.containers[:] = [c for c in ax.containers if type(c).__module__.startswith("matplotlib.")]
    return figure


def _can_spawn() -> bool:
    """A spawned worker re-imports `__main__`: safe from a kernel, `python -m` or an interactive session, not
    from a plain script, whose top-level code would run again (there figures are written at once)."""
    main = sys.modules.get("__main__")
    return getattr(main, "__spec__", None) is not None or getattr(main, "__file__", None) is None


def _resource_tracker():
    """multiprocessing's resource tracker of this process (a private object: None if it ever moves)."""
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    return tracker if hasattr(tracker, "_fd") and hasattr(tracker, "_stop") else None


def _tracker_running() -> bool:
    tracker = _resource_tracker()
    return tracker is not None and tracker._fd is not None


def _stop_tracker() -> None:
    """Stop the resource tracker (it starts again if anything needs it later)."""
    tracker = _resource_tracker()
    if tracker is not None:
        try:
            tracker._stop()
        except Exception:  # noqa: BLE001 - at worst the kernel's shutdown waits for it, as before
            pass


class FigureWriter:
    """Writes figure files in `formats` (`check_formats`: the 200-dpi PNG by default), SVG and PDF in one
    background process; `wait()` before the report is complete."""

    def __init__(self, background: bool | None = None, formats=None, draw_elsewhere: bool = False):
        self.background = _can_spawn() if background is None else background
        self.formats = check_formats(formats)
        self.draw_elsewhere = draw_elsewhere and self.background  # `draw`: whole figures in the background process
        self._pool: ProcessPoolExecutor | None = None
        self._encoder: ThreadPoolExecutor | None = None  # PNG files, encoded beside the notebook (`write_png`)
        self._files: list[Future] = []  # their writes
        self._pending: list[Future] = []
        self._drawing: list[Future] = []  # figures drawn in the background (`draw`)
        self._started_tracker = False

    def _start_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._started_tracker = not _tracker_running()
            self._pool = ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=prepare_worker if self.draw_elsewhere else exit_with_parent,
            )  # ends with the kernel
        return self._pool

    def free(self) -> bool:
        """The background process may take a figure to draw now (`draw`): it draws figures and has none left (the
        first one starts it, and waits there while it imports its libraries; the kernel meanwhile goes on)."""
        return self.draw_elsewhere and all(future.done() for future in self._drawing)

    def draw(self, job: FigureJob, stem: Path, title: str, caption: str) -> Future:
        """Draw `job` in the background process and write its files there (`draw_files`, with this process's
        `rcParams`); the future's result is the page's copy of the PNG and the vector files' paths."""
        try:
            future = self._start_pool().submit(
                draw_files, job, style_snapshot(), str(stem), title, caption, self.formats
            )
        except Exception as error:  # noqa: BLE001 - a broken process: the caller draws the figure itself
            self.draw_elsewhere = False
            future = Future()
            future.set_exception(error)
        self._drawing.append(future)
        return future

    def submit(self, figure, stem: Path, title: str, caption: str) -> bytes:
        """Write the files of `figure` in this writer's formats: the PNG now (drawn in any case: returned at half
        size, for the page), SVG and PDF in the background when the figure pickles (its axes lose other
        libraries' containers first: `_without_foreign_containers`). The caller may close the figure at once."""
        bbox = tight_bbox(figure)
        if self._encoder is None and "png" in self.formats:
            self._encoder = ThreadPoolExecutor(1, thread_name_prefix="riskreport-png")
        png = write_png(figure, stem, title, caption, bbox, "png" in self.formats, self._encoder, self._files)
        vector = tuple(f for f in self.formats if f != "png")
        if not vector:
            return png
        payload = None
        if self.background:
            try:
                payload = pickle.dumps(_without_foreign_containers(figure))
            except Exception:  # noqa: BLE001 - e.g. a lambda in a formatter: write now instead
                payload = None
        if payload is None:
            write_vector(figure, stem, title, caption, bbox, vector)
            return png
        self._pending.append(
            self._start_pool().submit(_write_pickled, payload, str(stem), title, caption, bbox, vector)
        )
        return png

    def submit_closed(self, figure, stem: Path, title: str, caption: str) -> bytes:
        """`submit`, then close the figure in pyplot."""
        import matplotlib.pyplot as plt

        try:
            return self.submit(figure, stem, title, caption)
        finally:
            plt.close(figure)

    def wait(self) -> list[Path]:
        """Block until every submitted figure is written; the paths written in the background."""
        files, self._files = self._files, []
        if self._encoder is not None:  # every PNG file written (an encoding error is raised here)
            encoder, self._encoder = self._encoder, None
            encoder.shutdown(wait=True)
        for future in files:
            future.result()
        pending, self._pending = self._pending, []
        drawing, self._drawing = self._drawing, []
        try:
            drawn = [Path(p) for future in drawing if not future.exception() for p in future.result()[1]]
            return drawn + [Path(p) for future in pending for p in future.result()]
        finally:
            if self._pool is not None and not self._pending:
                self._pool.shutdown(wait=True)
                self._pool = None
                if self._started_tracker:  # its only user is gone: don't leave it to stall the kernel's exit
                    _stop_tracker()
                    self._started_tracker = False
