"""The package as a user installs it: a wheel built from the checkout's tracked files, installed into a new virtual
environment in an empty folder (no checkout in sight), runs its main job and knows every built-in template."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from riskreport.io.collection import PROJECT_ROOT
from riskreport.run.cli.scaffold import new_template
from riskreport.run.report.templates import BUILT_IN

TEMPLATES = sorted(BUILT_IN)
SCAFFOLDED = "scaffolded_here"  # a template a user scaffolded in the checkout (`riskreport new-template`)


def tracked_checkout(folder: Path) -> tuple[Path, list[str]]:
    """A copy of the checkout's tracked files as the working tree has them (what a fresh clone with these edits
    holds: no untracked template, no stale build/), and their names."""
    listed = subprocess.run(["git", "-C", str(PROJECT_ROOT), "ls-files", "-z"], capture_output=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the wheel is built from the checkout's tracked files")
    names = [n for n in listed.stdout.decode().split("\0") if n and (PROJECT_ROOT / n).is_file()]
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT_ROOT / name, folder / name)
    return folder, names


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A venv holding only the wheel; the dependencies come from this environment's site-packages by a .pth
    line (a .pth line adds the folder but not its .pth files, so the editable install of the checkout stays out).
    The wheel is built from the tracked files, beside a template scaffolded into the copy's templates/."""
    root = tmp_path_factory.mktemp("wheel")
    checkout, tracked = tracked_checkout(root / "checkout")
    new_template(SCAFFOLDED, checkout / "templates")  # issue 39: it was packed into the wheel
    # without PYTHONPATH: a checkout on it (its riskreport.egg-info) makes pip call the wheel installed already
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(root / "dist"),
            str(checkout),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    wheel = next((root / "dist").glob("riskreport-*.whl"))
    env_dir = root / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
            env=clean,
        ).stdout.strip()
    )
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (env_dir / "share").mkdir(exist_ok=True)  # the dependencies' data files (nbconvert's templates), as pip puts them
    (env_dir / "share" / "jupyter").symlink_to(Path(sys.prefix) / "share" / "jupyter")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        env=clean,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    home = root / "home"
    work = root / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RISKREPORT_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "share"),
        XDG_CACHE_HOME=str(home / "cache"),
        PATH=f"{env_dir / 'bin'}:{env.get('PATH', '')}",
    )
    return {
        "bin": env_dir / "bin",
        "site": site,
        "cwd": work,
        "env": env,
        "home": home,
        "wheel": wheel,
        "checkout": checkout,
        "tracked": tracked,
    }


def _riskreport(installed, *args, timeout=300):
    return subprocess.run(
        [str(installed["bin"] / "riskreport"), *args],
        cwd=installed["cwd"],
        env=installed["env"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_wheel_holds_the_templates_and_no_checkout_is_used(installed):
    shipped = sorted(p.stem for p in (installed["site"] / "riskreport" / "templates").glob("*.ipynb"))
    assert shipped == TEMPLATES
    where = subprocess.run(
        [str(installed["bin"] / "python"), "-c", "import riskreport; print(riskreport.__file__)"],
        cwd=installed["cwd"],
        env=installed["env"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(installed["site"]))
    listed = _riskreport(installed, "templates")
    assert listed.returncode == 0, listed.stderr
    for name in TEMPLATES:
        assert name in listed.stdout
        assert _riskreport(installed, "run", name, "--help").returncode == 0


def test_the_wheel_holds_tracked_files_only(installed):
    """Every file of the package in the wheel is a tracked file of the checkout (templates/ maps to
    riskreport/templates): neither a scaffolded template nor a file of a stale build/ is packed (issue 39)."""
    tracked = {f"riskreport/{n}" if n.startswith("templates/") else n for n in installed["tracked"]}
    with zipfile.ZipFile(installed["wheel"]) as wheel:
        packed = [n for n in wheel.namelist() if not n.startswith("riskreport-") and not n.endswith("/")]
    assert packed and not [n for n in packed if n not in tracked]
    assert f"riskreport/templates/{SCAFFOLDED}.ipynb" not in packed


def test_the_wheel_holds_every_module_of_the_package(installed):
    """Every tracked module of the package is in the wheel: a sub-package left out of pyproject.toml's `packages`
    (riskreport.bayes.fitting, say) would install without its modules."""
    modules = {n for n in installed["tracked"] if n.startswith("riskreport/") and n.endswith(".py")}
    with zipfile.ZipFile(installed["wheel"]) as wheel:
        packed = set(wheel.namelist())
    assert "riskreport/bayes/fitting/sampling.py" in modules and sorted(modules - packed) == []


def test_a_scaffolded_template_is_found_the_same_way_from_a_checkout_and_from_the_wheel(installed):
    """A template scaffolded into templates/ runs by its path and is unknown by bare name, whether templates/ is a
    checkout's (beside the built-in templates) or a folder beside an installed wheel, with the same advice."""
    scaffolded = _riskreport(installed, "new-template", SCAFFOLDED)
    assert scaffolded.returncode == 0 and scaffolded.stdout.strip() == f"templates/{SCAFFOLDED}.ipynb"
    env = dict(installed["env"], PYTHONPATH=str(installed["checkout"]))
    answers = {}
    for where, command, cwd, environment in [
        ("wheel", [str(installed["bin"] / "riskreport")], installed["cwd"], installed["env"]),
        ("checkout", [sys.executable, "-m", "riskreport"], installed["checkout"], env),
    ]:
        by_name, by_path, listed = (
            subprocess.run(
                [*command, *arguments], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300
            )
            for arguments in (
                ["templates", "check", SCAFFOLDED, "--no-execute"],
                ["templates", "check", f"templates/{SCAFFOLDED}.ipynb", "--no-execute"],
                ["templates"],
            )
        )
        assert by_path.returncode == 0, (where, by_path.stderr)
        assert SCAFFOLDED not in listed.stdout and "risk_report" in listed.stdout, where
        answers[where] = (by_name.returncode, by_name.stderr.strip().replace(str(cwd.resolve()), "."))
    assert answers["wheel"] == answers["checkout"]
    code, error = answers["wheel"]
    assert code == 1 and f"Unknown template '{SCAFFOLDED}'" in error
    assert f"./templates/{SCAFFOLDED}.ipynb is not used for a bare name" in error
    assert f"run it as templates/{SCAFFOLDED}.ipynb" in error


def test_the_installed_package_runs_its_main_job_on_the_demo(installed):
    done = _riskreport(installed, "run")
    assert done.returncode == 0, done.stderr
    report = Path(done.stdout.strip())
    assert report.name == "report.html" and report.is_file() and report.is_relative_to(installed["cwd"])
    demo = installed["home"] / "share" / "riskreport" / "demo"
    assert (demo / "collection.toml").is_file(), "the demo collection is made in the user data folder"
    assert not (installed["site"] / "data").exists() and not (installed["site"] / "riskreport" / "data").exists()
    assert "making the synthetic demo collection" in done.stderr
    again = _riskreport(installed, "inspect", "demo")
    assert again.returncode == 0 and str(demo) in again.stdout


def test_the_installed_package_writes_no_compiled_code_into_site_packages(installed):
    """numba's cache of riskreport's kernels (cache=True) goes to the riskreport cache, never beside the installed
    package: reading a LETOR file and computing the learning-to-rank gradients leaves site-packages as it was."""
    package = installed["site"] / "riskreport"
    before = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in package.rglob("*"))
    code = (
        "import numpy as np\n"
        "from riskreport.io.letor import read_letor, write_letor\n"
        "from riskreport.ltr.objectives import make_objective\n"
        "path = write_letor('tiny.txt', np.array([2, 0, 1, 0]), np.array([1, 1, 2, 2]), np.ones((4, 2)))\n"
        "data = read_letor(path)\n"
        "make_objective('u-cro', data.labels, data.bounds, np.zeros((1, 2)), 1.0)(np.zeros(4), None)\n"
    )
    done = subprocess.run(
        [str(installed["bin"] / "python"), "-c", code],
        cwd=installed["cwd"],
        env=installed["env"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in package.rglob("*")) == before
    kept = {p.parent.name.split("_")[0] for p in (installed["home"] / "cache" / "riskreport" / "numba").rglob("*.nbi")}
    assert kept == {"io", "ltr"}
