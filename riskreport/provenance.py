"""What produced a report: SHA-256 of its input files and the versions of the packages that computed it."""
from __future__ import annotations

import hashlib
import os
import platform
from importlib import metadata

from .evaluation import file_digest

PACKAGES = ("riskreport", "ir_measures", "pytrec_eval-terrier", "numpy", "pandas", "scipy", "statsmodels",
            "matplotlib", "seaborn", "papermill", "nbconvert")


def package_versions(packages=PACKAGES, python: bool = True) -> dict[str, str]:
    """Installed version of each of `packages` ("not installed" when absent), and Python's."""
    versions = {"python": platform.python_version()} if python else {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def file_hashes(paths) -> dict[str, str]:
    """SHA-256 of every input file, keyed by its path (hashed in threads: hashlib releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor
    paths = list(paths)
    with ThreadPoolExecutor(max(1, min(len(paths), os.cpu_count() or 1))) as pool:
        return dict(zip(map(str, paths), pool.map(file_digest, paths)))


def inputs_digest(hashes: dict[str, str]) -> str:
    """One SHA-256 over the `file_hashes` of a report's inputs (the header shows it)."""
    return hashlib.sha256("".join(f"{k}={v}\n" for k, v in sorted(hashes.items())).encode()).hexdigest()
