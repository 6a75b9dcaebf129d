"""Faults lose nothing: the user's folders, read-only and full disks, corrupt caches, killed batches,
failed jobs in the index, template shadowing.

Every case runs the real command line or the real function on real files: a read-only folder is
made read-only for real (chmod, or `chattr +i` when the tests run as root), a full disk is a real
`ulimit -f`, a killed batch a real SIGKILL.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import CLI, processes_in, tree

from riskreport.io.collection import load_collection
from riskreport.io.files import DestinationError, plan_destination
from riskreport.measures.evaluation import evaluate, evaluate_runs
from riskreport.measures.run_files import ScoreCache
from riskreport.run.report.runner import PROJECT_ROOT, find_template


def cli(*args, cwd=None, env=None, limit_file_kb: int | None = None, timeout=300) -> subprocess.CompletedProcess:
    def limit():
        if limit_file_kb is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_kb * 1024, limit_file_kb * 1024))

    return subprocess.run(
        CLI + [str(a) for a in args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
    )


def no_traceback(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr


@contextmanager
def read_only(folder: Path):
    """Make `folder` truly read-only for this process (root ignores permission bits: use chattr +i)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)]).returncode != 0:
            pytest.skip("running as root and the folder cannot be made immutable (chattr +i)")
        undo = ["chattr", "-i", str(folder)]
    else:
        folder.chmod(0o555)
        undo = ["chmod", "755", str(folder)]
    try:
        probe = folder / ".probe"
        try:
            probe.touch()
            probe.unlink()
            pytest.skip(f"{folder} stays writable here")
        except OSError:
            pass
        yield folder
    finally:
        subprocess.run(undo)


# ---- 1. --out never deletes what riskreport did not write --------------------------------------


def test_out_into_a_users_folder_is_refused_and_loses_nothing(tmp_path, cache_dir):
    docs = tmp_path / "mydocs"
    (docs / "sub").mkdir(parents=True)
    (docs / "thesis.tex").write_text("my thesis")
    (docs / "sub" / "data.csv").write_text("1,2")
    before = tree(docs)
    done = cli("run", "--out", docs, cwd=tmp_path)
    assert done.returncode == 1 and tree(docs) == before
    assert "not a riskreport report" in done.stderr and "--force" in done.stderr
    no_traceback(done)

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "setup.py").write_text("setup()")
    done = cli("run", "--out", ".", cwd=project)
    assert done.returncode == 1 and (project / "setup.py").read_text() == "setup()" and (project / "src").is_dir()


def test_out_force_and_previous_reports_replace_only_riskreports_files(
    tmp_path, mini_template, tiny_collection, cache_dir
):
    docs = tmp_path / "mydocs"
    docs.mkdir()
    (docs / "notes.txt").write_text("mine")
    args = ("run", mini_template, "--collection", tiny_collection, "--out", docs, "-q")
    done = cli(*args, "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads((docs / "params.json").read_text())
    assert "notes.txt" not in record["files"] and {"report.html", "params.json", "tables/scores.csv"} <= set(
        record["files"]
    )
    # Again, now a previous report holding a file of the user's: no --force needed, the user's file stays.
    (docs / "tables" / "my-extra.csv").write_text("x")
    (docs / "report.html").write_text("old")
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (docs / "notes.txt").read_text() == "mine" and (docs / "tables" / "my-extra.csv").read_text() == "x"
    assert (docs / "report.html").read_text() != "old"
    # --force never overwrites a file of the same name that riskreport did not write.
    other = tmp_path / "other"
    other.mkdir()
    (other / "report.html").write_text("the user's own page")
    done = cli(*args[:-2], other, "-q", "--force", cwd=tmp_path)
    assert done.returncode == 1 and "did not write" in done.stderr
    assert tree(other) == {"report.html": b"the user's own page"}
    no_traceback(done)


def test_plan_destination_rules(tmp_path):
    assert plan_destination(tmp_path / "new").mode == "new"
    (tmp_path / "empty").mkdir()
    assert plan_destination(tmp_path / "empty").mode == "swap"
    report = tmp_path / "report"
    (report / "tables").mkdir(parents=True)
    (report / "params.json").write_text(
        json.dumps({"template": "t", "status": "ok", "files": ["params.json", "tables/a.csv"]})
    )
    (report / "tables" / "a.csv").write_text("a")
    assert plan_destination(report).mode == "swap"
    (report / "mine.txt").write_text("m")
    assert plan_destination(report).mode == "merge" and plan_destination(report).kept == ("mine.txt",)
    with pytest.raises(DestinationError, match="is a file"):
        plan_destination(report / "mine.txt")
    with pytest.raises(DestinationError, match="does not exist"):
        plan_destination(tmp_path / "missing" / "out")


# ---- 2. unwritable destinations: one line, before the kernel starts ------------------------------


def test_unwritable_destinations_fail_at_once_with_one_line(tmp_path, cache_dir):
    with read_only(tmp_path / "locked") as locked_folder:
        for args in (("--out", locked_folder / "report"), ("--reports", locked_folder / "reports")):
            started = time.monotonic()
            done = cli("run", *args, cwd=tmp_path)
            assert done.returncode == 1 and "cannot write in" in done.stderr, done.stderr
            assert str(locked_folder) in done.stderr and "executing" not in done.stderr
            assert len(done.stderr.strip().splitlines()) == 1 and time.monotonic() - started < 60
            no_traceback(done)
        jobs = tmp_path / "jobs.toml"
        jobs.write_text('[[job]]\nname = "a"\n')
        done = cli("batch", jobs, "--reports", locked_folder / "reports", cwd=tmp_path)
        assert done.returncode == 1 and "cannot write in" in done.stderr
        no_traceback(done)
        for command in (("run", "--out", tmp_path / "r"), ("batch", jobs, "--reports", tmp_path / "reports")):
            done = cli(*command, "--junit", locked_folder / "ci" / "risk.xml", cwd=tmp_path)  # before anything runs
            assert (
                done.returncode == 1 and f"--junit {locked_folder / 'ci' / 'risk.xml'}: cannot write in" in done.stderr
            )
            assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists(), done.stderr
            assert not (tmp_path / "reports").exists()
            no_traceback(done)
    done = cli("run", "--out", tmp_path / "no" / "such" / "report", cwd=tmp_path)
    assert done.returncode == 1 and "does not exist" in done.stderr and not (tmp_path / "no").exists()
    no_traceback(done)


def test_junit_of_names_with_control_characters_is_well_formed_and_says_so(tmp_path, cache_dir):
    """A score CSV whose system names hold ESC and form feed: the report is written, its JUnit XML parses, the
    names are written as escapes, a warning line says which characters were; the property names the report."""
    import xml.etree.ElementTree as ET

    rows = ["system,topic,score"]
    for n in range(12):
        rows += [f"base,t{n},0.5", f"sys\x1btem,t{n},{0.1 if n < 9 else 0.9}", f"a\x0cb,t{n},{0.5 + n % 2 / 10}"]
    table = tmp_path / "odd.csv"
    table.write_text("\n".join(rows) + "\n")
    junit = tmp_path / "ci" / "risk.xml"
    out = tmp_path / "report"
    done = cli(
        "run", "-c", table, "-b", "base", "-a", "0", "5", "-p", "bootstrap_samples", "50", "--out", out,
        "--junit", junit, "-q", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == str(out / "report.html"), done.stderr
    root = ET.parse(junit).getroot()
    names = sorted(case.get("name") for case in root.iter("testcase"))
    assert names == ["a\\x0cb at α=0", "a\\x0cb at α=5", "sys\\x1btem at α=0", "sys\\x1btem at α=5"]
    assert "characters XML 1.0 cannot hold (U+000C, U+001B)" in done.stderr or "(U+001B, U+000C)" in done.stderr
    suite = root.find("testsuite")
    assert suite.find("properties/property").get("value") == str(out) and float(suite.get("time")) > 0
    no_traceback(done)


# ---- 3. a full disk --------------------------------------------------------------------------


def test_full_disk_leaves_no_debris_and_keeps_the_previous_report(tmp_path, mini_template, tiny_collection, cache_dir):
    reports = tmp_path / "reports"
    args = ("run", mini_template, "--collection", tiny_collection, "--reports", reports, "-q")
    assert cli(*args, cwd=tmp_path).returncode == 0
    folder = reports / "tiny" / "mini"
    good = (folder / "latest").resolve()
    before = tree(good)
    done = cli(*args, cwd=tmp_path, limit_file_kb=4)  # the executed notebook is larger than 4 KiB
    assert done.returncode == 1, done.stderr
    assert re.search(r"file too large .* while writing .*report\.ipynb", done.stderr), done.stderr
    no_traceback(done)
    assert sorted(p.name for p in folder.iterdir()) == sorted([good.name, "latest"])  # no .tmp-*, no failed-*
    assert (folder / "latest").resolve() == good and tree(good) == before


# ---- 4. the evaluation cache never serves numbers its inputs do not give -------------------------


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.json"))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "edit", "swap"])
def test_damaged_cache_entries_are_recomputed(tiny_collection, tmp_path, damage):
    cache = tmp_path / "cache"
    collection = load_collection(str(tiny_collection))
    truth = evaluate(collection, "P@2", cache_dir=cache).matrix()
    entries = _entries(cache)
    assert len(entries) == 3
    target = entries[0]
    text = target.read_text()
    if damage == "truncate":
        target.write_text(text[: len(text) // 2])
    elif damage == "garbage":
        target.write_bytes(b"\x00\xff{not json")
    elif damage == "edit":  # valid JSON, altered values
        entry = json.loads(text)
        entry["value"]["values"] = [1.0] * len(entry["value"]["values"])
        target.write_text(json.dumps(entry))
    else:  # another run's (valid) entry under this key
        target.write_text(entries[1].read_text())
    with pytest.warns(UserWarning, match=re.escape(str(target))):
        again = evaluate(collection, "P@2", cache_dir=cache).matrix()
    assert again.equals(truth)
    assert json.loads(target.read_text()) == json.loads(text)  # rewritten whole
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert evaluate(collection, "P@2", cache_dir=cache).matrix().equals(truth)
    assert not [w for w in caught if "damaged" in str(w.message)]


def _hammer(cache: str, qrels: str, runs: dict, rounds: int) -> None:
    for _ in range(rounds):
        ScoreCache(Path(cache)).put_all("q", "r", {"P@2": (["1", "2"], [0.5, 1.0]), "run_topics": ["1", "2"]})
        evaluate_runs(Path(qrels), {k: Path(v) for k, v in runs.items()}, ["P@2"], cache_dir=cache, jobs=1)


def test_concurrent_writers_leave_a_valid_cache(tiny_collection, tmp_path):
    import multiprocessing

    cache = tmp_path / "cache"
    collection = load_collection(str(tiny_collection))
    runs = {s: str(p) for s, p in collection.runs.items()}
    workers = [
        multiprocessing.get_context("spawn").Process(target=_hammer, args=(str(cache), str(collection.qrels), runs, 30))
        for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert not list(cache.rglob("*.tmp")) and not list(cache.rglob(".*-*"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ScoreCache(cache).get_all("q", "r", ["P@2"])["P@2"] == (["1", "2"], [0.5, 1.0])
        evaluate_runs(collection.qrels, collection.runs, ["P@2"], cache_dir=cache, jobs=1)
    assert not [w for w in caught if "damaged" in str(w.message)]  # no entry fails its check


# ---- 5. a killed batch leaves no orphans and no lock ------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")
def test_kill_9_of_a_batch_ends_its_workers_and_frees_the_lock(tmp_path, mini_template, tiny_collection, cache_dir):
    reports = tmp_path / "reports"
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[defaults]\ntemplate = "{mini_template}"\ncollection = "{tiny_collection}"\npause = 60.0\n\n'
        '[[job]]\nname = "one"\n\n[[job]]\nname = "two"\n'
    )
    process = subprocess.Popen(
        CLI + ["batch", str(jobs), "--reports", str(reports), "--jobs", "2", "-q"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while len(list(reports.glob("jobs/*/.tmp-*/report.ipynb"))) < 2:  # both kernels are executing
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.2)
    assert processes_in(reports)
    process.send_signal(signal.SIGKILL)  # the batch process alone, as `kill -9 <pid>`
    process.wait()
    deadline = time.monotonic() + 15
    while processes_in(reports) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_in(reports) == []
    time.sleep(1)
    assert not list(reports.glob("jobs/*/2*"))  # nothing was written after the batch died
    jobs.write_text(jobs.read_text().replace("pause = 60.0", "pause = 0.0"))
    done = cli("batch", jobs, "--reports", reports, "-q", cwd=tmp_path)  # at once: no --wait
    assert done.returncode == 0, done.stderr + done.stdout
    assert not list(reports.glob("jobs/*/.tmp-*"))


def test_a_forked_child_does_not_hold_the_lock(tmp_path):
    from riskreport.run.folders.lock import locked

    lock = tmp_path / ".lock"
    read, write = os.pipe()
    with locked(lock, wait=0):
        child = os.fork()
        if child == 0:  # the child outlives its parent's hold of the lock
            os.write(write, b"forked")
            time.sleep(1.5)
            os._exit(0)
        assert os.read(read, 6) == b"forked"
    try:
        with locked(lock, wait=0):  # the parent released it; the live child does not keep it
            assert os.waitpid(child, os.WNOHANG) == (0, 0)
    finally:
        os.waitpid(child, 0)
        os.close(read)
        os.close(write)


def test_a_released_lock_leaves_no_file_and_still_excludes(tmp_path):
    """The lock file goes with its holder (no empty `.index.lock` left in reports/), and removing it
    never lets two holders in: threads taking the lock in turns never overlap."""
    import threading

    from riskreport.run.folders.lock import locked

    lock = tmp_path / ".index.lock"
    with locked(lock, wait=0, owner={"jobs": "j.toml"}):
        assert lock.exists()
    assert not lock.exists()
    inside, overlaps = [0], []

    def take() -> None:
        for _ in range(40):
            with locked(lock):
                inside[0] += 1
                if inside[0] != 1:
                    overlaps.append(inside[0])
                time.sleep(0.0005)
                inside[0] -= 1

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == [] and not lock.exists()


# ---- 6. a job that fails before its template starts is in the index -----------------------------


def test_index_shows_jobs_that_failed_before_their_template(tmp_path, mini_template, tiny_collection, cache_dir):
    collection = Path(shutil.copytree(tiny_collection, tmp_path / "moving"))
    reports = tmp_path / "reports"
    jobs = tmp_path / "jobs.toml"
    jobs.write_text(
        f'[[job]]\nname = "gone"\ntemplate = "{mini_template}"\ncollection = "{collection}"\n\n'
        f'[[job]]\nname = "fine"\ntemplate = "{mini_template}"\ncollection = "{tiny_collection}"\n'
    )
    assert cli("batch", jobs, "--reports", reports, "-q", cwd=tmp_path).returncode == 0
    good = (reports / "jobs" / "gone" / "latest").resolve()
    shutil.rmtree(collection)
    done = cli("batch", jobs, "--reports", reports, "-q", cwd=tmp_path)
    assert done.returncode == 1
    index = json.loads((reports / "index.json").read_text())
    jobs_now = {j["job"]: j for j in index["last_batch"]["jobs"]}
    assert jobs_now["gone"]["status"] == "error" and jobs_now["gone"]["older"]
    assert "moving" in jobs_now["gone"]["message"]
    assert jobs_now["gone"]["latest_ok"]["path"] == good.relative_to(reports.resolve()).as_posix()
    assert jobs_now["fine"]["status"] == "skipped" and not jobs_now["fine"]["older"]
    page = (reports / "index.html").read_text()
    assert "Last batch" in page and "older" in page and page.count("failed") >= 1


# ---- 7. a templates/ folder in the working directory does not replace the installed ones ------


def test_working_directory_templates_do_not_shadow_installed_ones(tmp_path, monkeypatch):
    evil = tmp_path / "templates"
    evil.mkdir()
    shutil.copy(PROJECT_ROOT / "templates" / "risk_report.ipynb", evil / "risk_report.ipynb")
    shutil.copy(PROJECT_ROOT / "templates" / "risk_report.ipynb", evil / "only_here.ipynb")
    monkeypatch.chdir(tmp_path)
    template = find_template("risk_report")
    assert template.path == (PROJECT_ROOT / "templates" / "risk_report.ipynb").resolve()
    assert template.origin == "installed"
    by_path = find_template("templates/only_here.ipynb")
    assert by_path.path == (evil / "only_here.ipynb").resolve() and by_path.origin == "given as a path"
    done = cli("run", "only_here", cwd=tmp_path)
    assert done.returncode == 1 and "templates/only_here.ipynb" in done.stderr and "RISKREPORT_TEMPLATES" in done.stderr
    monkeypatch.setenv("RISKREPORT_TEMPLATES", str(evil))
    assert find_template("only_here").origin == "$RISKREPORT_TEMPLATES"


# ---- 8. the batch help says templates are code ------------------------------------------------


def test_batch_help_says_templates_are_code():
    done = cli("batch", "--help")
    assert "Templates are code" in " ".join(done.stdout.split())


# ---- also seen: broken pipes and kernel debris ---------------------------------------------


def test_closed_pipe_ends_quietly():
    done = subprocess.run(" ".join(CLI) + " inspect demo | head -1", shell=True, capture_output=True, text=True)
    assert done.stdout.strip() and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_a_run_leaves_nothing_in_the_temp_folder(tmp_path, mini_template, tiny_collection, cache_dir):
    temp = tmp_path / "tmp"
    temp.mkdir()
    runtime = tmp_path / "runtime"
    done = cli(
        "run",
        mini_template,
        "--collection",
        tiny_collection,
        "--out",
        tmp_path / "out",
        "-q",
        cwd=tmp_path,
        env={"TMPDIR": str(temp), "JUPYTER_RUNTIME_DIR": str(runtime)},
    )
    assert done.returncode == 0, done.stderr
    assert list(temp.iterdir()) == [] and not list(runtime.glob("*"))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "params.json",
        "report.html",
        "report.ipynb",
        "summary.json",
        "tables",
    ]
