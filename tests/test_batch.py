"""Batch runs: jobs files, skipping unchanged jobs, isolated failures, the lock, atomic outputs, the index.

Most jobs use a minimal template (parameters cell, a table, optional failure or pause) so that
the file stays fast; one job per batch uses the real risk_report template.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from riskreport.run.cli.commands import main
from riskreport.run.folders.index import write_index
from riskreport.run.folders.lock import LockedError, locked
from riskreport.run.report.runner import PROJECT_ROOT
from riskreport.run.schedule.batch import JobFileError, load_jobs, prune, run_batch


@pytest.fixture
def second_collection(tiny_collection, monkeypatch) -> Path:
    """A copy of the tiny collection; both can be named in jobs files (tiny, tiny2)."""
    monkeypatch.setenv("RISKREPORT_DATA", str(tiny_collection.parent))
    return Path(shutil.copytree(tiny_collection, tiny_collection.with_name("tiny2")))


def write_jobs(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def batch(jobs_file, reports, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_batch(jobs_file, reports_dir=reports, jobs=2, **options)


def statuses(result) -> dict:
    return {r.name: r.status for r in result.results}


def visible(folder: Path) -> set:
    return {p.name for p in folder.iterdir() if not p.name.startswith(".")}


def check_consistent(reports: Path) -> list:
    """Every `latest` points at a complete report; index.json parses and lists only existing reports."""
    for link in reports.glob("jobs/*/latest"):
        target = link.resolve()
        assert (target / "report.html").is_file()
        assert json.loads((target / "params.json").read_text())["status"] == "ok"
    index = json.loads((reports / "index.json").read_text())
    for entry in index["reports"]:
        assert (reports / entry["path"] / "params.json").is_file()
        assert entry["report"] is None or (reports / entry["report"]).is_file()
    assert (reports / "index.html").read_text().rstrip().endswith("</html>")
    return index["reports"]


def test_failing_job_is_isolated_and_rerun_skips_everything(
    tmp_path, tiny_collection, second_collection, mini_template, cache_dir
):
    reports = tmp_path / "reports"
    jobs = tmp_path / "jobs.toml"
    common = '[defaults]\ncollection = "tiny"\ntemplate = "templates/mini.ipynb"\n\n'
    flaky = '[[job]]\nname = "flaky"\nfail = {fail}\n'
    write_jobs(jobs, common + flaky.format(fail="false"))
    first = batch(jobs, reports)
    assert statuses(first) == {"flaky": "ok"}
    good = (reports / "jobs" / "flaky" / "latest").resolve()

    write_jobs(
        jobs,
        common + '[[job]]\nname = "real"\ntemplate = "risk_report"\nalphas = [0, 1]\n\n'
        '[[job]]\nname = "other"\ncollection = "tiny2"\n\n' + flaky.format(fail="true"),
    )
    second = batch(jobs, reports)
    assert statuses(second) == {"real": "ok", "other": "ok", "flaky": "failed"} and not second.ok
    failed = next(r for r in second.results if r.name == "flaky")
    assert "failing as asked" in failed.message and Path(failed.report).name.startswith("failed-")
    assert (reports / "jobs" / "flaky" / "latest").resolve() == good and (good / "report.html").is_file()
    assert "failing as asked" in second.log.read_text()
    entries = check_consistent(reports)
    assert sorted((e["job"], e["status"]) for e in entries) == [
        ("flaky", "failed"),
        ("flaky", "ok"),
        ("other", "ok"),
        ("real", "ok"),
    ]
    assert "failing as asked" in next(e["error"] for e in entries if e["status"] == "failed")
    real = next(e for e in entries if e["job"] == "real")
    assert real["collection"] == "tiny" and real["template"] == "risk_report" and real["alphas"] == [0.0, 1.0]

    write_jobs(jobs, jobs.read_text().replace("fail = true", "fail = false"))  # back to its last success
    before = {job: visible(reports / "jobs" / job) for job in ("real", "other", "flaky")}
    third = batch(jobs, reports)
    assert statuses(third) == {"real": "skipped", "other": "skipped", "flaky": "skipped"} and third.ok
    assert {job: visible(reports / "jobs" / job) for job in before} == before


def test_changed_run_file_reruns_exactly_its_jobs(
    tmp_path, tiny_collection, second_collection, mini_template, cache_dir
):
    reports = tmp_path / "reports"
    jobs = write_jobs(
        tmp_path / "jobs.toml",
        '[defaults]\ntemplate = "templates/mini.ipynb"\n\n'
        '[[job]]\nname = "a"\ncollection = "tiny"\n\n'
        '[[job]]\nname = "b"\ncollection = "./tiny2"\nkeep = 1\n\n'
        '[[job]]\nname = "c"\ncollection = "tiny2"\nmeasure = "P@1"\n',
    )
    assert statuses(batch(jobs, reports)) == {"a": "ok", "b": "ok", "c": "ok"}
    run = second_collection / "runs" / "base.run"
    os.utime(run)  # same content: still unchanged
    assert set(statuses(batch(jobs, reports)).values()) == {"skipped"}
    run.write_text(run.read_text().replace(" 3 same", " 5 same"))
    dry = run_batch(jobs, reports_dir=reports, dry_run=True)
    assert statuses(dry) == {"a": "skipped", "b": "run", "c": "run"}
    assert dry.results[1].message == "input files changed: base.run"
    again = batch(jobs, reports)
    assert statuses(again) == {"a": "skipped", "b": "ok", "c": "ok"}
    assert len([p for p in visible(reports / "jobs" / "b") if p != "latest"]) == 1  # keep = 1
    assert len([p for p in visible(reports / "jobs" / "c") if p != "latest"]) == 2
    check_consistent(reports)


def test_lock_contention(tmp_path, tiny_collection, cache_dir, capsys):
    reports = tmp_path / "reports"
    jobs = write_jobs(tmp_path / "jobs.toml", '[[job]]\nname = "nowhere"\ncollection = "./no-such-collection"\n')
    with locked(reports / ".lock", owner={"jobs": "/elsewhere/other.toml"}):
        with pytest.raises(LockedError, match=r"is locked by pid \d+ on .*other\.toml"):
            run_batch(jobs, reports_dir=reports)
        started = time.monotonic()
        with pytest.raises(LockedError, match="after waiting 0.3 s"):
            run_batch(jobs, reports_dir=reports, wait=0.3)
        assert time.monotonic() - started >= 0.3
        assert main(["batch", str(jobs), "--reports", str(reports)]) == 3
        assert "--wait" in capsys.readouterr().err
    holder = threading.Thread(target=_hold, args=(reports / ".lock", 0.5))
    holder.start()
    time.sleep(0.1)
    started = time.monotonic()
    waited = run_batch(jobs, reports_dir=reports, wait=30)  # waits, then runs
    holder.join()
    assert time.monotonic() - started >= 0.3
    assert statuses(waited) == {"nowhere": "error"} and "no-such-collection does not exist" in waited.results[0].message


def _hold(path, seconds):
    with locked(path):
        time.sleep(seconds)


def test_sigkill_midway_leaves_consistent_reports(tmp_path, second_collection, mini_template, cache_dir):
    reports = tmp_path / "reports"
    jobs = write_jobs(
        tmp_path / "jobs.toml",
        '[[job]]\nname = "slow"\ncollection = "tiny"\ntemplate = "templates/mini.ipynb"\npause = 0.0\n',
    )
    assert statuses(batch(jobs, reports)) == {"slow": "ok"}
    good = (reports / "jobs" / "slow" / "latest").resolve()
    write_jobs(jobs, jobs.read_text().replace("pause = 0.0", "pause = 60.0"))
    process = subprocess.Popen(
        [sys.executable, "-m", "riskreport", "batch", str(jobs), "--reports", str(reports), "--quiet"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 90
    while not list((reports / "jobs" / "slow").glob(".tmp-*/report.ipynb")):  # the kernel is executing
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.2)
    time.sleep(1)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    folder = reports / "jobs" / "slow"
    assert visible(folder) == {good.name, "latest"} and (folder / "latest").resolve() == good
    assert list(folder.glob(".tmp-*"))  # the half-built report is hidden
    assert [e["path"] for e in check_consistent(reports)] == [f"jobs/slow/{good.name}"]

    write_jobs(jobs, jobs.read_text().replace("pause = 60.0", "pause = 0.0"))
    after = batch(jobs, reports, wait=10)  # the lock dies with its holders (the kernel frees it within ms)
    assert statuses(after) == {"slow": "skipped"} and not list(folder.glob(".tmp-*"))


def test_dask_local_cluster(tmp_path, tiny_collection, mini_template, cache_dir):
    distributed = pytest.importorskip("distributed")
    reports = tmp_path / "reports"
    jobs = write_jobs(
        tmp_path / "jobs.toml",
        '[defaults]\ntemplate = "templates/mini.ipynb"\n'
        f'collection = "{tiny_collection}"\n\n[[job]]\nname = "d1"\n\n'
        '[[job]]\nname = "d2"\nfail = true\n',
    )
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        result = batch(jobs, reports, executor="dask", scheduler=cluster.scheduler_address)
    assert statuses(result) == {"d1": "ok", "d2": "failed"}
    assert (reports / "jobs" / "d1" / "latest" / "tables" / "scores.csv").is_file()
    assert len(check_consistent(reports)) == 2


@pytest.mark.parametrize(
    "text, message",
    [
        ('[[job]]\nname = "a"\nmeassure = "P@2"\n', "job 'a', key 'meassure': unknown key; did you mean 'measure'?"),
        (
            '[[job]]\nname = "a"\nalphas = "high"\n',
            "job 'a', key 'alphas': Parameter 'alphas' of template 'risk_report'",
        ),
        ('[defaults]\nsig_level = "x"\n[[job]]\nname = "a"\n', "job 'a', key 'sig_level' (from [defaults]): Parameter"),
        ('[[job]]\nname = "a"\n[[job]]\nname = "a"\n', "job name 'a' is used twice (jobs 1 and 2)"),
        ('[[job]]\nmeasure = "P@2"\n', "job 1: key 'name' must be a name"),
        ('[[job]]\nname = "../escape"\n', "job 1: key 'name' must be a name"),
        ('[job]\nname = "a"\n', "write each job as [[job]]"),
        ('[jobs]\nname = "a"\n', "unknown top-level key 'jobs'"),
        ('[[job]]\nname = "a"\nkeep = 0\n', "key 'keep': expected a whole number ≥ 1"),
        ('[[job]]\nname = "a"\ntemplate = "nope"\n', "key 'template': Unknown template 'nope'"),
        ('[[job]]\nname = "a"\nshow_code = "yes"\n', "key 'show_code': expected true or false"),
        ('[[job]]\nname = "a"\nfigure_formats = ["png", "jpeg"]\n', "key 'figure_formats': unknown format(s) 'jpeg'"),
        ('[[job]]\nname = "a"\nfail_on = "reward"\n', 'key \'fail_on\': expected "risk" (any α) or "risk@ALPHA"'),
        ('[[job]]\nname = "a"\nfail_on = "riskk"\n', 'key \'fail_on\': expected "risk" (any α) or "risk@ALPHA"'),
        ('[[job]]\nname = "a"\nfail_on = "risk@abc"\n', "key 'fail_on': expected \"risk\""),
        (
            '[[job]]\nname = "a"\nalphas = [0, 1, 5, 10]\nfail_on = "risk@7"\n',
            "key 'fail_on': α = 7 is not in the job's grid (0, 1, 5, 10); gate an α of its grid",
        ),
        (
            '[defaults]\nfail_on = "risk@3"\n[[job]]\nname = "a"\n',  # the demo's own grid: 0, 1, 2, 5, 10
            "key 'fail_on' (from [defaults]): α = 3 is not in the job's grid (0, 1, 2, 5, 10)",
        ),
        (
            '[[job]]\nname = "a"\ntemplate = "nondeterministic"\nfail_on = "risk"\n',
            "key 'fail_on': template 'nondeterministic' writes no verdicts",
        ),
        (
            '[[job]]\nname = "a"\ntemplate = "bayesian_risk"\nfail_on_systems = ["x"]\n',
            "key 'fail_on_systems': template 'bayesian_risk' writes no verdicts",
        ),
        ('[[job]]\nname = "a"\nfail_on_systems = "x"\n', "key 'fail_on_systems': expected a list of system ids"),
        ('[[job]]\nname = "a"\non_change = "mail"\n', "key 'on_change': expected a command as a list of strings"),
        ('[[job]]\nname = "a"\non_change_timeout = 0\n', "key 'on_change_timeout': expected a time limit"),
        ('[[job]\nname = "a"\n', "jobs.toml: not valid TOML"),
        ('[defaults]\ncollection = "demo"\n', "no jobs"),
    ],
)
def test_jobs_file_errors(tmp_path, text, message):
    path = write_jobs(tmp_path / "jobs.toml", text)
    with pytest.raises(JobFileError) as info:
        load_jobs(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_a_batch_gate_that_can_never_fire_is_refused_before_any_job_runs(tmp_path, tiny_collection, capsys):
    """`batch --fail-on risk@7` on jobs of grid 0, 1, 5, 10 (or on jobs without verdicts): refused as `run` refuses
    it, before the reports folder is touched; a job's own `fail_on = "risk@7"` is a jobs-file error (exit 1)."""
    jobs = write_jobs(
        tmp_path / "jobs.toml",
        f'[[job]]\nname = "a"\ncollection = "{tiny_collection}"\nalphas = [0, 1, 5, 10]\n'
        f'[[job]]\nname = "b"\ncollection = "{tiny_collection}"\ntemplate = "nondeterministic"\n',
    )
    reports = tmp_path / "reports"
    assert main(["batch", str(jobs), "--reports", str(reports), "--fail-on", "risk@7", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert (
        f"--fail-on risk@7: α = 7 is not in the grid of job 'a' (0, 1, 5, 10) ({jobs})" in err and not reports.exists()
    )
    assert main(["batch", str(jobs), "--reports", str(reports), "--fail-on", "risk@5", "--dry-run"]) == 0
    jobs.write_text(f'[[job]]\nname = "b"\ncollection = "{tiny_collection}"\ntemplate = "nondeterministic"\n')
    assert main(["batch", str(jobs), "--reports", str(reports), "--fail-on", "risk", "--quiet"]) == 1
    assert "no job of" in capsys.readouterr().err and not reports.exists()
    jobs.write_text(f'[[job]]\nname = "a"\ncollection = "{tiny_collection}"\nfail_on = "risk@7"\n')
    assert main(["batch", str(jobs), "--reports", str(reports), "--quiet"]) == 1
    assert "key 'fail_on': α = 7 is not in the job's grid (0, 1, 5)" in capsys.readouterr().err


def test_a_bayesian_jobs_executor_options_are_checked_when_it_is_planned(tmp_path, tiny_collection, cache_dir):
    """A misspelt executor, a missing or malformed scheduler: the job's error before a kernel starts, no failed-*."""
    jobs = write_jobs(
        tmp_path / "jobs.toml",
        "".join(
            f'[[job]]\nname = "{name}"\ntemplate = "bayesian_risk"\ncollection = "{tiny_collection}"\n{keys}\n'
            for name, keys in (
                ("typo", 'bayes_executor = "dsak"'),
                ("alone", 'bayes_executor = "dask"'),
                ("noport", 'bayes_executor = "dask"\nscheduler = "tcp://10.0.0.5"'),
                ("badport", 'bayes_executor = "dask"\nscheduler = "10.0.0.5:87x6"'),
            )
        ),
    )
    result = batch(jobs, tmp_path / "reports")
    assert statuses(result) == dict.fromkeys(("typo", "alone", "noport", "badport"), "error")
    messages = {r.name: r.message for r in result.results}
    assert "bayes_executor must be local (this machine) or dask" in messages["typo"]
    assert "bayes_executor dask needs the Dask scheduler's address" in messages["alone"]
    assert "scheduler 'tcp://10.0.0.5': no port number" in messages["noport"]
    assert "port '87x6' is not a number from 1 to 65535" in messages["badport"]
    assert not list((tmp_path / "reports" / "jobs").rglob("failed-*"))


def test_a_job_asks_for_figure_formats_and_a_change_of_them_runs_it_again(tmp_path, tiny_collection, cache_dir):
    from riskreport.run.schedule.batch import _spec, plan_report, why_run

    path = write_jobs(
        tmp_path / "jobs.toml",
        f'[defaults]\nfigure_formats = "pdf,png"\n[[job]]\nname = "a"\ncollection = "{tiny_collection}"\n',
    )
    (job,) = load_jobs(path)
    assert job.figure_formats == ("png", "pdf")
    plan = plan_report(job.template, parameters=job.parameters, figure_formats=job.figure_formats)
    assert _spec(job, plan, tmp_path, tmp_path / "log")["figure_formats"] == ("png", "pdf")
    assert why_run(plan, {**plan.record, "figure_formats": ["png"]}) == "figure_formats changed"
    assert why_run(plan, {**plan.record}) == "fingerprint changed"


def test_example_jobs_file_plans_and_cli_dry_run_writes_nothing(tmp_path, capsys, cache_dir):
    example = PROJECT_ROOT / "examples" / "jobs.toml"
    jobs = load_jobs(example)
    assert len(jobs) == 4 and {j.parameters["collection"] for j in jobs} == {"demo"}
    assert main(["batch", str(example), "--reports", str(tmp_path / "reports"), "--dry-run", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "4 job(s): 4 run (dry run, nothing written)" in out and "no complete report yet" in out
    assert not (tmp_path / "reports").exists()
    with pytest.raises(SystemExit):
        main(["batch", str(example), "--executor", "dask"])  # --scheduler is required


def _fake_report(folder: Path, status: str, finished: str, **fields) -> Path:
    folder.mkdir(parents=True)
    record = {
        "job": folder.parent.name,
        "template": "risk_report",
        "status": status,
        "finished_utc": finished,
        "duration_s": 1.0,
        "collection": {"name": "c"},
        "parameters": {"baseline": "b", "measure": "P@2", "alphas": [0, 1]},
    }
    record.update(fields)
    (folder / "params.json").write_text(json.dumps(record))
    (folder / "report.html").write_text("<html></html>")
    return folder


def test_index_escapes_names_and_lists_only_complete_folders(tmp_path):
    reports = tmp_path / "reports"
    evil = "<script>alert(1)</script>"
    _fake_report(
        reports / "jobs" / "x" / "20260101T000000Z",
        "ok",
        "2026-01-01T00:00:00+00:00",
        job=evil,
        collection={"name": evil},
        parameters={"baseline": "<b>", "measure": "P@2&x", "alphas": [0]},
    )
    _fake_report(reports / "jobs" / "x" / ".tmp-20260102T000000Z-abc", "ok", "2026-01-02T00:00:00+00:00")
    (reports / "jobs" / "x" / "latest").symlink_to("20260101T000000Z")
    page = write_index(reports).read_text()
    assert evil not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "P@2&amp;x" in page
    index = json.loads((reports / "index.json").read_text())
    assert [(e["path"], e["latest"]) for e in index["reports"]] == [("jobs/x/20260101T000000Z", True)]


def test_prune_keeps_newest_complete_and_failed_reports(tmp_path):
    folder = tmp_path / "jobs" / "j"
    for day, status in ((1, "ok"), (2, "ok"), (3, "failed"), (4, "ok"), (5, "failed"), (6, "failed")):
        _fake_report(folder / f"2026010{day}T000000Z", status, f"2026-01-0{day}T00:00:00+00:00")
    (folder / "latest").symlink_to("20260102T000000Z")  # latest is never deleted
    deleted = prune(folder, keep=1)
    assert sorted(p.name for p in deleted) == ["20260101T000000Z", "20260103T000000Z", "20260105T000000Z"]
    assert visible(folder) == {"20260102T000000Z", "20260104T000000Z", "20260106T000000Z", "latest"}


def test_a_file_parameter_is_read_relative_to_the_jobs_file(tiny_collection, tmp_path, monkeypatch):
    """`pool = "pool.txt"` in a jobs file means the file beside the jobs file, whatever the working folder."""
    folder = tmp_path / "jobs"
    folder.mkdir()
    (folder / "pool.txt").write_text("base\nrisky\n")
    (folder / "jobs.toml").write_text(f'[[job]]\nname = "x"\ncollection = "{tiny_collection}"\npool = "pool.txt"\n')
    monkeypatch.chdir(tmp_path)
    (job,) = load_jobs(folder / "jobs.toml")
    assert job.parameters["pool"] == str((folder / "pool.txt").resolve())
    (folder / "jobs.toml").write_text(f'[[job]]\nname = "x"\ncollection = "{tiny_collection}"\npool = "gone.txt"\n')
    with pytest.raises(JobFileError, match="key 'pool'.*gone.txt"):
        load_jobs(folder / "jobs.toml")


def test_a_bayesian_job_sends_its_chains_to_dask_with_two_keys(tmp_path):
    path = write_jobs(
        tmp_path / "jobs.toml",
        '[[job]]\nname = "b"\ntemplate = "bayesian_risk"\nchains = 8\nbayes_executor = "dask"\n'
        'scheduler = "tcp://10.0.0.5:8786"\n',
    )
    (job,) = load_jobs(path)
    assert job.parameters["bayes_executor"] == "dask" and job.parameters["scheduler"] == "tcp://10.0.0.5:8786"
    assert job.parameters["chains"] == 8


def _hook_job(command: list[str], timeout: float = 60.0):
    from riskreport.run.schedule.jobs import Job

    return Job("j", "risk_report", {}, on_change=tuple(command), on_change_timeout=timeout)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_hook_at_its_time_limit_is_stopped_with_everything_it_started(tmp_path):
    """The hook runs in a session of its own; at its limit the whole group goes: the `sleep` it started (in the
    background, and one that ignores SIGTERM) is gone when `run_hook` returns."""
    from riskreport.run.schedule.hooks import run_hook

    pids = tmp_path / "pids"
    script = f"(trap '' TERM; sleep 300) & echo $! >> {pids}\nsleep 300 & echo $! >> {pids}\necho $$ >> {pids}\nwait\n"
    said: list[str] = []
    started = time.monotonic()
    assert not run_hook(_hook_job(["sh", "-c", script], timeout=1.0), tmp_path / "summary.json", tmp_path, said.append)
    assert time.monotonic() - started < 30
    children = [int(p) for p in pids.read_text().split()]
    assert len(children) == 3 and not [pid for pid in children if _alive(pid)]
    assert "stopped after 1 s (on_change_timeout), with every process it started" in said[0]
    pids.unlink()
    said.clear()  # a hook that exits at once, leaving a child behind: the child is the hook's too
    quick = f"sleep 300 & echo $! >> {pids}\nexit 0\n"
    assert not run_hook(_hook_job(["sh", "-c", quick], timeout=1.0), tmp_path / "summary.json", tmp_path, said.append)
    (child,) = [int(p) for p in pids.read_text().split()]
    assert not _alive(child) and "stopped after 1 s" in said[0]


def test_what_a_failing_hook_prints_is_bounded_in_the_log(tmp_path):
    """5 MB on one line, then the error: the warning carries the output's tail (a few kB), the error included."""
    from riskreport.run.schedule.hooks import HOOK_TAIL, run_hook

    code = "import sys\nsys.stderr.write('x' * 5_000_000 + ' the real error')\nsys.exit(3)"
    said: list[str] = []
    assert not run_hook(_hook_job([sys.executable, "-c", code]), tmp_path / "s.json", tmp_path, said.append)
    (line,) = said
    assert "exited with 3: …" in line and line.endswith("the real error") and len(line) < HOOK_TAIL + 200
    said.clear()
    assert run_hook(_hook_job([sys.executable, "-c", "print('fine')"]), tmp_path / "s.json", tmp_path, said.append)
    assert said == [f"j: on_change {sys.executable} done ({tmp_path / 's.json'})"]
