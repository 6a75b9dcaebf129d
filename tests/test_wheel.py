"""The package as a user installs it: a wheel built from the checkout, installed into a new virtual environment
in an empty folder (no checkout in sight), runs its main job and knows every built-in template."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from riskreport.io.collection import PROJECT_ROOT

TEMPLATES = sorted(p.stem for p in (PROJECT_ROOT / "templates").glob("*.ipynb"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A venv holding only the wheel; the dependencies come from this environment's site-packages by a .pth
    line (a .pth line adds the folder but not its .pth files, so the editable install of the checkout stays out)."""
    root = tmp_path_factory.mktemp("wheel")
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
            str(PROJECT_ROOT),
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
    return {"bin": env_dir / "bin", "site": site, "cwd": work, "env": env, "home": home}


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
