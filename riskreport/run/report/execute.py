"""Executing a template: papermill in a thread with a private kernelspec, watched by the main thread, which
stops the kernel's process group at the report's time limit or on an interrupt and names the cell that ran."""

from __future__ import annotations

import json
import logging
import math
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from riskreport.errors import ReportExecutionError, ReportTimeoutError
from riskreport.io.processes import kill_group
from riskreport.measures.evaluation import Progress
from riskreport.run.report.templates import Template

KERNEL_NAME = "riskreport-python"


@dataclass(frozen=True)
class _Limit:
    """A report's time limit: `seconds` from `started` (a `time.time()`)."""

    seconds: float
    started: float

    def remaining(self) -> float:
        return self.seconds - (time.time() - self.started)


class _Watch:
    """What the supervisor of an execution knows: the kernels started, the cell running, why it stopped them."""

    def __init__(self):
        self.managers: list = []  # kernel managers (their provisioner knows the kernel's process group)
        self.nb = None  # the notebook papermill executes (injected parameters included)
        self.cell: int | None = None  # index in `nb` of the cell that started last
        self.reason: str | None = None  # None, "timeout" or "interrupt"
        self.stopped: float | None = None  # when (time.time()) the kernels were first stopped

    def stop(self, reason: str) -> None:
        """Kill every kernel started (its whole process group: kernel, figure writer, their helpers)."""
        if self.reason is None:
            self.reason, self.stopped = reason, time.time()
            logging.getLogger("papermill").setLevel(logging.CRITICAL)  # "Kernel died ...": we say why ourselves
        for manager in self.managers:
            kill_group(getattr(manager.provisioner, "pgid", None))

    def wait(self, thread: threading.Thread, seconds: float) -> None:
        """Keep the kernels dead until papermill, seeing them gone, has saved the notebook and returned."""
        end = time.monotonic() + seconds
        while thread.is_alive() and time.monotonic() < end:
            self.stop(self.reason or "interrupt")  # a kernel that was still starting is killed too
            thread.join(0.2)

    def running_cell(self) -> str:
        """'cell 3 (`time.sleep(600)`)': the running cell, counted from the top of the template as written."""
        if self.nb is None or self.cell is None:
            return "the kernel, starting before any cell ran,"
        cells = self.nb.cells
        injected = [i for i, c in enumerate(cells) if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
        number = self.cell + 1 - sum(1 for i in injected if i < self.cell)
        line = next((line.strip() for line in cells[self.cell].source.splitlines() if line.strip()), "")
        return f"cell {number}" + (f" (`{line[:60]}{'…' if len(line) > 60 else ''}`)" if line else "")


def _execute(tpl: Template, parameters: dict, work: Path, say: Progress, limit: _Limit | None = None) -> None:
    """Execute the template into `work/report.ipynb`; `ReportExecutionError` if a cell fails or the kernel dies.

    papermill runs in a thread while this (the main) thread watches the clock and takes the
    signals: at the time limit, or on an interrupt, the kernel's process group is killed, papermill
    sees the kernel dead and saves the notebook as far as it got. (In the main thread nbclient would
    catch SIGINT and SIGTERM itself, and shut the kernel down by interrupting its cell: tracebacks.)
    """
    import nbformat

    jupyter = work / ".jupyter"  # kernelspec and connection file of this run, removed with it
    say(f"executing {tpl.path.name} ({len(nbformat.read(tpl.path, as_version=4).cells)} cells)")
    if limit is not None and limit.remaining() <= 0:
        raise ReportTimeoutError(
            f"Template {tpl.name!r} was not started: the report's time limit of "
            f"{limit.seconds:g} s was reached while its runs were evaluated "
            f"({time.time() - limit.started:.1f} s)."
        )
    watch = _Watch()
    outcome: dict[str, BaseException] = {}  # {'error': what papermill raised}, filled by its thread
    thread = threading.Thread(
        target=_papermill, args=(tpl, parameters, work, watch, outcome), daemon=True, name="riskreport-papermill"
    )
    papermill_level = logging.getLogger("papermill").level
    try:
        thread.start()
        _supervise(thread, watch, limit)
    except BaseException:  # an interrupt: no kernel is left behind, papermill ends before the folder goes
        watch.stop("interrupt")
        watch.wait(thread, 5.0)
        raise
    finally:
        logging.getLogger("papermill").setLevel(papermill_level)
        shutil.rmtree(jupyter, ignore_errors=True)
    failure = outcome.get("error")
    if watch.reason == "timeout" and limit is not None and watch.stopped is not None:
        raise ReportTimeoutError(
            f"Template {tpl.name!r} reached the report's time limit of {limit.seconds:g} s: "
            f"{watch.running_cell()} was still running after the report had run "
            f"{watch.stopped - limit.started:.1f} s; its kernel was stopped."
        ) from None
    if failure is not None:
        from papermill.exceptions import PapermillExecutionError

        if isinstance(failure, PapermillExecutionError):
            message = f"Cell {failure.exec_count} of template {tpl.name!r} failed: {failure.ename}: {failure.evalue}"
        else:
            message = f"Template {tpl.name!r} could not be executed: {type(failure).__name__}: {failure}"
        raise ReportExecutionError(message) from failure


def _papermill(tpl: Template, parameters: dict, work: Path, watch: _Watch, outcome: dict) -> None:
    """papermill's run of the template (in the execution thread); an exception goes into `outcome`."""
    import asyncio

    import papermill
    from jupyter_core.utils import ensure_event_loop

    try:  # the kernel's environment is the kernelspec's: this process's os.environ is left alone
        papermill.execute_notebook(
            str(tpl.path),
            str(work / "report.ipynb"),
            parameters=parameters,
            kernel_name=KERNEL_NAME,
            engine_name=_engine(),
            kernel_manager_class=_kernel_manager(_kernelspec(work / ".jupyter"), watch),
            cwd=str(work),
            progress_bar=False,
            log_output=False,
            report_mode=False,
            watch=watch,
        )
    except BaseException as error:  # noqa: BLE001 - a cell failed, the kernel died or was stopped, ...
        outcome["error"] = error
    finally:  # the event loop nbclient made for this thread (jupyter_core's) would be left open
        ensure_event_loop().close()
        asyncio.set_event_loop(None)


def _supervise(thread: threading.Thread, watch: _Watch, limit: _Limit | None) -> None:
    """Wait for the execution thread; at the time limit, stop its kernel and wait for papermill to save."""
    while thread.is_alive():
        remaining = math.inf if limit is None else limit.remaining()
        if remaining <= 0:
            watch.stop("timeout")
            watch.wait(thread, 30.0)
            return
        thread.join(min(0.25, remaining))


def _engine() -> str:
    """papermill's nbclient engine, saving the notebook once at the end (also when a cell fails or the kernel
    dies) instead of at the start and end of every cell: at campaign scale the notebook grows to ~15 MB and
    those ~70 writes took seconds. Registered once per process as `riskreport`."""
    from papermill.engines import NBClientEngine, papermill_engines

    class SaveAtEnd(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, watch: _Watch | None = None, **kwargs):
            path, nb_man.output_path = nb_man.output_path, None
            if watch is not None:  # the supervisor names the running cell if it must stop the kernel
                watch.nb, start = nb_man.nb, nb_man.cell_start

                def cell_start(cell, cell_index=None, **options):
                    watch.cell = cell_index
                    return start(cell, cell_index, **options)

                nb_man.cell_start = cell_start
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            finally:
                nb_man.output_path = path  # `notebook_complete` (papermill calls it in `finally`) saves

    if "riskreport" not in papermill_engines._engines:
        papermill_engines.register("riskreport", SaveAtEnd)
    return "riskreport"


def _kernelspec(home: Path) -> Path:
    """A private kernelspec under `home` that runs this very Python, whatever kernels the user has installed.

    The kernel is started through `riskreport.run.report.kernel`, which ends the kernel when the process
    that started it dies (however it dies), so no kernel outlives a killed run.
    """
    spec_dir = home / "kernels" / KERNEL_NAME
    spec = {
        "argv": [
            sys.executable,
            "-m",
            "riskreport.run.report.kernel",
            "-f",
            "{connection_file}",
            "--IPKernelApp.log_level=CRITICAL",
        ],
        "display_name": "riskreport (Python)",
        "language": "python",
        "env": {"MPLBACKEND": "module://matplotlib_inline.backend_inline"},
    }
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    (home / "runtime").mkdir(exist_ok=True)
    return home


def _kernel_manager(home: Path, watch: _Watch | None = None):
    """A kernel manager class that finds the private kernelspec in `home` (instead of setting JUPYTER_PATH)
    and writes the kernel's connection file there too (not into the system's temporary folder); each
    manager made is listed in `watch` (whose supervisor may have to kill its kernel)."""
    import uuid

    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from traitlets import default

    class Manager(AsyncKernelManager):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            if watch is not None:
                watch.managers.append(self)

        @default("kernel_spec_manager")
        def _private_specs(self):
            return KernelSpecManager(kernel_dirs=[str(home / "kernels")])

        @default("connection_file")
        def _private_connection_file(self):
            return str(home / "runtime" / f"kernel-{uuid.uuid4()}.json")

    return Manager
