"""Interrupts and time limits, as a user meets them: Ctrl-C in a terminal, SIGTERM from a scheduler, a cell
that never returns, a Dask worker killed in the middle of a job.

Every case runs the real command line (in a pseudo-terminal for Ctrl-C) or a real Dask LocalCluster, with
real signals; the template is a few cells written into the test's folder, one of which can sleep for ever.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import CLI, processes_in, tree

from riskreport.errors import ParameterError
from riskreport.run.cli.scaffold import new_notebook
from riskreport.run.report.problems import PARAMETERS_TAG
from riskreport.run.report.runner import run_report
from riskreport.run.schedule.batch import JobFileError, load_jobs, run_batch

FOREVER = 100000.0


def write_notebook(path: Path, cells: list) -> Path:
    notebook = new_notebook(cells)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def write_template(path: Path) -> Path:
    """Parameters; a cell that prints; a cell that sleeps `pause` s, unless the file `once` exists (then it is
    created and the cell sleeps: the first attempt hangs, the next one does not)."""
    return write_notebook(
        path,
        [
            nbformat.v4.new_markdown_cell("# Sleeper"),
            nbformat.v4.new_code_cell(
                'collection: str = "demo"  # collection\npause: float = 0.0  # seconds to sleep\n'
                'once: str = ""  # a file: sleep only if it does not exist yet',
                metadata={"tags": [PARAMETERS_TAG]},
            ),
            nbformat.v4.new_code_cell('print("first cell done")'),
            nbformat.v4.new_code_cell(
                "import time\nfrom pathlib import Path\n"
                "if not once or not Path(once).exists():\n"
                "    once and Path(once).touch()\n    time.sleep(pause)\n"
                "Path('tables').mkdir(exist_ok=True)\nPath('tables/done.csv').write_text('x\\n1\\n')"
            ),
        ],
    )


@pytest.fixture
def sleeper(tmp_path) -> Path:
    return write_template(tmp_path / "templates" / "sleeper.ipynb")


def wait_gone(folder: Path, seconds: float = 5.0) -> list[int]:
    end = time.monotonic() + seconds
    while processes_in(folder) and time.monotonic() < end:
        time.sleep(0.1)
    return processes_in(folder)


def wait_for(condition, seconds: float, process=None) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        assert process is None or process.poll() is None, "the command ended too early"
        time.sleep(0.1)


def executing(folder: Path) -> bool:
    """A kernel is executing in a build folder under `folder` (the parameterised notebook is written)."""
    return bool(list(folder.glob("**/.tmp-*/report.ipynb")))


needs_proc = pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")


# ---- Ctrl-C on `riskreport run` in a terminal ------------------------------------------------------


def _run_in_terminal(args: list[str], cwd: Path, ready) -> tuple[int, str, float]:
    """Run the CLI on a pseudo-terminal, type Ctrl-C once `ready()`; (exit code, what it printed after, seconds)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI, session leader of the new terminal (the kernel gets a session of its own)
        os.chdir(cwd)
        os.execv(sys.executable, CLI + args)
    output, status = b"", None

    def pump(seconds: float) -> bool:
        nonlocal output, status
        end = time.monotonic() + seconds
        while time.monotonic() < end and status is None:
            if select.select([fd], [], [], 0.05)[0]:
                try:
                    output += os.read(fd, 65536)
                except OSError:
                    pass
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = code
        return status is None

    try:
        deadline = time.monotonic() + 120
        while not ready():
            assert pump(0.1) and time.monotonic() < deadline, output.decode(errors="replace")
        pump(1.0)  # the cell is running
        mark = len(output)
        os.write(fd, b"\x03")  # Ctrl-C: the terminal sends SIGINT to its foreground process group
        sent = time.monotonic()
        while pump(0.05) and time.monotonic() - sent < 60:
            pass
        took = time.monotonic() - sent
        pump(0.3)
        assert status is not None, "the CLI did not end within 60 s of Ctrl-C"
        return os.waitstatus_to_exitcode(status), output[mark:].decode(errors="replace"), took
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


@needs_proc
def test_ctrl_c_on_run_says_one_line_and_keeps_the_previous_report(tmp_path, sleeper, tiny_collection, cache_dir):
    out = tmp_path / "out"
    args = ["run", str(sleeper), "--collection", str(tiny_collection), "--out", str(out), "-q"]
    done = subprocess.run(CLI + args, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    before = tree(out)
    code, said, took = _run_in_terminal(args + ["-p", "pause", str(FOREVER)], tmp_path, lambda: executing(tmp_path))
    lines = [line for line in said.replace("^C", "").splitlines() if line.strip()]
    assert code == 130, said
    assert len(lines) <= 2 and "Traceback" not in said and "Error" not in said, said
    assert "interrupted (SIGINT)" in said and "untouched" in said
    assert tree(out) == before  # the previous report, byte for byte
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no .tmp-out-* beside it
    assert wait_gone(tmp_path) == []  # the kernel went with the CLI
    assert took < 10, f"{took:.1f} s from Ctrl-C to exit"


# ---- SIGTERM on a batch ----------------------------------------------------------------------------


def _jobs(path: Path, sleeper: Path, collection: Path, pause: float, extra: str = "") -> Path:
    path.write_text(
        f'[defaults]\ntemplate = "{sleeper}"\ncollection = "{collection}"\npause = {pause}\n{extra}\n'
        '[[job]]\nname = "one"\n\n[[job]]\nname = "two"\n',
        encoding="utf-8",
    )
    return path


@needs_proc
def test_sigterm_on_a_batch_stops_its_jobs_and_keeps_the_previous_reports(
    tmp_path, sleeper, tiny_collection, cache_dir
):
    reports = tmp_path / "reports"
    jobs = _jobs(tmp_path / "jobs.toml", sleeper, tiny_collection, 0.0)
    base = CLI + ["batch", str(jobs), "--reports", str(reports), "--jobs", "2", "-q"]
    assert subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=300).returncode == 0
    latest = {name: (reports / "jobs" / name / "latest").resolve() for name in ("one", "two")}
    before = {name: tree(folder) for name, folder in latest.items()}
    _jobs(jobs, sleeper, tiny_collection, FOREVER)
    process = subprocess.Popen(base, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: len(list(reports.glob("jobs/*/.tmp-*/report.ipynb"))) == 2, 120, process)
    time.sleep(1.0)
    process.send_signal(signal.SIGTERM)  # the batch process alone, as `kill <pid>` or a scheduler's stop
    sent = time.monotonic()
    stdout, stderr = process.communicate(timeout=60)
    took = time.monotonic() - sent
    assert process.returncode == 143, stderr
    assert len(stderr.strip().splitlines()) <= 2 and "Traceback" not in stderr + stdout, stderr
    assert "interrupted (SIGTERM)" in stderr and "2 job(s) stopped" in stderr
    for name, folder in latest.items():
        assert (reports / "jobs" / name / "latest").resolve() == folder and tree(folder) == before[name]
    assert not list(reports.glob("jobs/*/.*-*"))  # no build folder, no trash left
    assert wait_gone(tmp_path) == []
    index = json.loads((reports / "index.json").read_text())
    assert {j["job"]: j["status"] for j in index["last_batch"]["jobs"]} == {"one": "interrupted", "two": "interrupted"}
    assert took < 15, f"{took:.1f} s from SIGTERM to exit"
    _jobs(jobs, sleeper, tiny_collection, 0.0)
    again = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=300)  # the lock is free
    assert again.returncode == 0 and "skipped" in again.stdout, again.stderr


# ---- time limits -----------------------------------------------------------------------------------


@needs_proc
def test_timeout_on_run_stops_the_kernel_and_keeps_the_failed_notebook(tmp_path, sleeper, tiny_collection, cache_dir):
    out = tmp_path / "out"
    args = ["run", str(sleeper), "--collection", str(tiny_collection), "--out", str(out), "-q"]
    assert subprocess.run(CLI + args, cwd=tmp_path, capture_output=True, text=True, timeout=300).returncode == 0
    before = tree(out)
    started = time.monotonic()
    done = subprocess.run(
        CLI + args + ["-p", "pause", str(FOREVER), "--timeout", "10"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "time limit of 10 s" in done.stderr and "cell 4 (`import time`)" in done.stderr, done.stderr
    assert tree(out) == before
    failed = tmp_path / "failed-out"
    assert "failed-out" in done.stderr and (failed / "report.html").is_file()
    notebook = nbformat.read(failed / "report.ipynb", as_version=4)
    printed = [o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert "first cell done\n" in printed  # outputs up to the cell that was running
    record = json.loads((failed / "params.json").read_text())
    assert record["status"] == "failed" and "time limit" in record["error"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert wait_gone(tmp_path) == []
    assert took < 10 + 20, f"{took:.1f} s for a 10 s limit"


def test_timeout_in_a_batch_lets_the_other_jobs_finish(tmp_path, sleeper, tiny_collection, cache_dir):
    reports = tmp_path / "reports"
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[defaults]\ntemplate = "{sleeper}"\ncollection = "{tiny_collection}"\ntimeout = 600\n\n'
        f'[[job]]\nname = "hangs"\npause = {FOREVER}\ntimeout = 10\n\n[[job]]\nname = "fine"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        CLI + ["batch", str(jobs), "--reports", str(reports), "--jobs", "2", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    index = json.loads((reports / "index.json").read_text())
    jobs_now = {j["job"]: j for j in index["last_batch"]["jobs"]}
    assert jobs_now["fine"]["status"] == "ok" and jobs_now["hangs"]["status"] == "timeout"
    assert "time limit of 10 s" in jobs_now["hangs"]["message"]
    assert "timeout" in (reports / "index.html").read_text()
    assert list((reports / "jobs" / "hangs").glob("failed-*/report.ipynb"))
    assert not (reports / "jobs" / "hangs" / "latest").exists()
    assert "hangs  timeout" in done.stdout


def test_batch_timeout_is_the_default_of_jobs_that_set_none(tmp_path, sleeper, tiny_collection, cache_dir):
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[defaults]\ntemplate = "{sleeper}"\ncollection = "{tiny_collection}"\n\n'
        f'[[job]]\nname = "hangs"\npause = {FOREVER}\n\n[[job]]\nname = "own"\ntimeout = 300\n',
        encoding="utf-8",
    )
    assert [j.timeout for j in load_jobs(jobs)] == [None, 300.0]
    result = run_batch(jobs, reports_dir=tmp_path / "reports", jobs=2, timeout=10)
    assert {r.name: r.status for r in result.results} == {"hangs": "timeout", "own": "ok"}
    assert not result.ok


@pytest.mark.parametrize("value", ["0", "-5", '"ten"', "true", "nan", "inf"])
def test_jobs_file_timeout_is_checked(tmp_path, value):
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(f'[defaults]\ntimeout = {value}\n\n[[job]]\nname = "a"\n', encoding="utf-8")
    with pytest.raises(
        JobFileError,
        match=r"job 'a', key 'timeout' \(from \[defaults\]\): expected a time limit "
        r"in seconds, a number > 0",
    ):
        load_jobs(jobs)


def test_timeout_argument_is_checked(tmp_path):
    with pytest.raises(ParameterError, match="timeout: expected a time limit in seconds"):
        run_report("risk_report", timeout=0, out=tmp_path / "out")
    done = subprocess.run(CLI + ["run", "--timeout", "soon"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--timeout: expected a number of seconds > 0, got 'soon'" in done.stderr


# ---- a Dask worker killed in the middle of a job --------------------------------------------------


def _worker_of(log: Path, job: str) -> int:
    """The Dask worker process running `job`: parent of the job's process, as the batch log names it."""
    line = next(line for line in log.read_text().splitlines() if f"[{job}] started in process" in line)
    pid = int(line.rsplit(" ", 1)[1])
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@needs_proc
def test_dask_worker_killed_mid_job_runs_it_once_more(tmp_path, sleeper, tiny_collection, cache_dir):
    distributed = pytest.importorskip("distributed")
    import dask

    reports = tmp_path / "reports"
    flag = tmp_path / "first-attempt"
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[defaults]\ntemplate = "{sleeper}"\ncollection = "{tiny_collection}"\n\n'
        f'[[job]]\nname = "victim"\npause = {FOREVER}\nonce = "{flag}"\n\n[[job]]\nname = "bystander"\n',
        encoding="utf-8",
    )
    outcome = {}

    def kill_the_victims_worker() -> None:
        wait_for(flag.exists, 120)
        time.sleep(0.5)
        log = next((reports / "logs").glob("batch-*.log"))
        os.kill(_worker_of(log, "victim"), signal.SIGKILL)
        outcome["killed"] = True

    import threading

    killer = threading.Thread(target=kill_the_victims_worker, daemon=True)
    # without rescheduling by the scheduler, the lost task comes back as KilledWorker: the batch runs it again
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
    ):
        killer.start()
        result = run_batch(jobs, reports_dir=reports, executor="dask", scheduler=cluster.scheduler_address)
    killer.join(5)
    assert outcome.get("killed")
    statuses = {r.name: r for r in result.results}
    assert statuses["bystander"].status == "ok" and statuses["victim"].status == "ok", result.table()
    assert "run again after its Dask worker was lost" in statuses["victim"].message
    assert "KilledWorker" in statuses["victim"].message
    assert result.ok
    log = next((reports / "logs").glob("batch-*.log")).read_text()
    assert log.count("[victim] started in process") == 2
    assert not list(reports.glob("jobs/*/.tmp-*"))  # the lost attempt's build folder is cleared
    assert len(list((reports / "jobs" / "victim").glob("2*"))) == 1
    index = json.loads((reports / "index.json").read_text())
    assert {j["job"]: j["status"] for j in index["last_batch"]["jobs"]} == {"victim": "ok", "bystander": "ok"}
    assert wait_gone(reports) == []


# ---- Ctrl-C while a figure is written in the background, or during the HTML export ------------------


def _figure_template(path: Path) -> Path:
    """A cell that hands a figure to the background writer and sleeps while the writer's process is alive."""
    return write_notebook(
        path,
        [
            nbformat.v4.new_code_cell(
                'collection: str = "demo"  # collection\npause: float = 0.0  # seconds to sleep\n'
                "bulk: int = 0  # characters of output: a notebook whose export takes a while",
                metadata={"tags": [PARAMETERS_TAG]},
            ),
            nbformat.v4.new_code_cell(
                "import time\nfrom pathlib import Path\nimport matplotlib\nmatplotlib.use('Agg')\n"
                "import matplotlib.pyplot as plt\nfrom riskreport.render.plotting.figures import FigureWriter\n"
                "writer = FigureWriter(background=True, formats='png,svg')\nfigure, axes = plt.subplots()\n"
                "axes.plot([1, 2, 3])\nwriter.submit(figure, Path('figures/f'), 'title', 'caption')\n"
                "Path('writer-started').touch()\ntime.sleep(pause)\nwriter.wait()\n"
                "from IPython.display import HTML, display\nif bulk:\n    display(HTML('<p>' + 'x' * bulk + '</p>'))"
            ),
        ],
    )


def _interrupt_group(args: list[str], cwd: Path, ready) -> tuple[subprocess.CompletedProcess, float]:
    """The CLI in a session of its own; SIGINT to its whole process group (what a terminal's Ctrl-C does)."""
    process = subprocess.Popen(
        CLI + args, cwd=cwd, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(ready, 120, process)
        os.killpg(process.pid, signal.SIGINT)
        sent = time.monotonic()
        stdout, stderr = process.communicate(timeout=60)
        return subprocess.CompletedProcess(args, process.returncode, stdout, stderr), time.monotonic() - sent
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@needs_proc
@pytest.mark.parametrize("phase", ["figure writer", "export"])
def test_ctrl_c_while_a_figure_is_written_or_the_html_exported(tmp_path, tiny_collection, cache_dir, phase):
    template = _figure_template(tmp_path / "templates" / "figure.ipynb")
    out = tmp_path / "out"
    args = ["run", str(template), "--collection", str(tiny_collection), "--out", str(out), "-q"]
    assert subprocess.run(CLI + args, cwd=tmp_path, capture_output=True, text=True, timeout=300).returncode == 0
    before = tree(out)
    if phase == "figure writer":  # the cell sleeps while the writer's process is up
        ready = lambda: bool(list(tmp_path.glob(".tmp-*/writer-started")))  # noqa: E731
        args += ["-p", "pause", str(FOREVER)]
    else:  # params.json is written just before the export starts, which takes a while for 20 MB of output
        ready = lambda: bool(list(tmp_path.glob(".tmp-*/params.json")))  # noqa: E731
        args += ["-p", "bulk", str(20_000_000)]
    done, took = _interrupt_group(args, tmp_path, ready)
    assert done.returncode == 130, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert tree(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert wait_gone(tmp_path) == []  # the kernel, the figure writer and its resource tracker
    assert took < 10, f"{took:.1f} s from Ctrl-C to exit"


@needs_proc
def test_sigterm_on_a_dask_batch_stops_the_jobs_on_the_workers(tmp_path, sleeper, tiny_collection, cache_dir):
    distributed = pytest.importorskip("distributed")
    reports = tmp_path / "reports"
    jobs = _jobs(tmp_path / "jobs.toml", sleeper, tiny_collection, FOREVER)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        process = subprocess.Popen(
            CLI
            + [
                "batch",
                str(jobs),
                "--reports",
                str(reports),
                "--executor",
                "dask",
                "--scheduler",
                cluster.scheduler_address,
                "-q",
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: len(list(reports.glob("jobs/*/.tmp-*/report.ipynb"))) == 2, 180, process)
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        stdout, stderr = process.communicate(timeout=90)
        took = time.monotonic() - sent
        log = next((reports / "logs").glob("batch-*.log")).read_text()
        job_processes = [int(line.rsplit(" ", 1)[1]) for line in log.splitlines() if "started in process" in line]
        assert process.returncode == 143, stderr
        assert "Traceback" not in stderr + stdout and "interrupted (SIGTERM)" in stderr, stderr
        assert not list(reports.glob("jobs/*/.*-*")) and not list(reports.glob("jobs/*/2*"))
        assert wait_gone(reports) == []  # the kernels on the worker
        assert len(job_processes) == 2 and not [pid for pid in job_processes if Path(f"/proc/{pid}").exists()]
        assert took < 30, f"{took:.1f} s from SIGTERM to exit"


def test_a_signal_during_the_move_into_place_is_raised_after_it():
    from riskreport.io.processes import Interrupted, deferred_signals, raise_on_signals, restore_signals

    previous = raise_on_signals()
    try:
        moved = []
        with pytest.raises(Interrupted) as caught:
            with deferred_signals():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)  # the handler has run: it only noted the signal
                moved.append("old report away")
                moved.append("new report in")
        assert moved == ["old report away", "new report in"]
        assert caught.value.exit_code == 143 and str(caught.value) == "interrupted (SIGTERM)"
        os.kill(os.getpid(), signal.SIGINT)  # once interrupted, a second signal does not cut the clean-up short
        time.sleep(0.2)
    finally:
        restore_signals(previous)


# ---- a Ctrl-C whose exception the interpreter dropped -------------------------------------------------------------


def test_an_interrupt_python_dropped_is_raised_again_before_anything_is_moved_into_place(monkeypatch):
    """Python prints "Exception ignored" and goes on when a signal handler raises inside a `__del__` (or while an
    import finishes): the run must still stop before its report is put in place, not complete and exit 0."""
    from riskreport.io.processes import Interrupted, deferred_signals, raise_on_signals, restore_signals

    dropped: list[BaseException | None] = []  # what Python dropped, kept here instead of pytest's warning summary
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: dropped.append(unraisable.exc_value))

    class Finaliser:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)  # the handler runs here, where its exception is dropped

    previous = raise_on_signals()
    try:
        Finaliser()  # collected at once: the Interrupted is lost
        assert [type(error) for error in dropped] == [Interrupted]
        moved = []
        with pytest.raises(Interrupted) as caught:
            with deferred_signals():
                moved.append("report")
        assert moved == [] and caught.value.exit_code == 130
    finally:
        restore_signals(previous)
    with deferred_signals():  # the handlers restored: a later run in this process is not stopped by it
        moved.append("next report")
    assert moved == ["next report"]


# ---- an interrupted first run leaves no empty folders -------------------------------------------------------------


@pytest.mark.parametrize("phase", ["prewarm", "_execute"])
def test_an_interrupted_first_run_leaves_no_empty_report_folders(tmp_path, sleeper, tiny_collection, cache_dir, phase):
    """reports/<collection>/<template>/ is made before the report runs; an interrupt of the first run removed the
    build folder but left those folders empty."""
    from riskreport.io.processes import Interrupted
    from riskreport.run.report import runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "mine.txt").write_text("kept")
    plan = runner.plan_report(str(sleeper), collection=str(tiny_collection))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, phase, interrupted)
        with pytest.raises(Interrupted):
            runner.build_report(plan, reports_dir=tmp_path / "reports")
        assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["mine.txt"]
        with pytest.raises(Interrupted):
            runner.build_report(plan, reports_dir=tmp_path / "new" / "reports")
        assert not (tmp_path / "new").exists()
