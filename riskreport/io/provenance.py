"""What produced a report: SHA-256 of its input files and the versions of the packages that computed it; and a
file parsed once per content in a process (keyed by that SHA-256)."""

from __future__ import annotations

import functools
import hashlib
import os
import platform
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

PACKAGES = (
    "riskreport",
    "ir_measures",
    "pytrec_eval-terrier",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "matplotlib",
    "seaborn",
    "papermill",
    "nbconvert",
)


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


_DIGESTS: dict[tuple, str] = {}  # file signature -> SHA-256: a file is hashed once per process while unchanged


def file_signature(path: str | Path) -> tuple:
    """What identifies a file's content without reading it: path, device, inode, size, mtime and ctime (ns).
    Any write changes the ctime, so an unchanged signature means an unchanged file."""
    stat = os.stat(path)
    return (str(Path(path).resolve()), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's content; remembered for the file's signature (`file_signature`)."""
    key = file_signature(path)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]


def parsed(path: Path, read: Callable[[Path], T]) -> T:
    """`read(path)`, once per content of the file in a process (a reader of `riskreport.io.trec`, say): the same
    object for the same content, shared by its callers, who must not change it."""
    return _parsed(str(path), file_digest(path), read)


@functools.lru_cache(maxsize=4)
def _parsed(path: str, digest: str, read: Callable[[Path], T]) -> T:
    return read(Path(path))


def known_digests(paths: Iterable[str | Path]) -> list[list]:
    """[*signature, digest] of files, for another process to `remember_digests` (the report's kernel)."""
    return [[*file_signature(p), file_digest(p)] for p in paths]


def remember_digests(entries: Iterable[list]) -> None:
    """Take digests computed by another process for files whose signature is still the same."""
    for *key, digest in entries:
        try:
            if file_signature(key[0]) == tuple(key):
                _DIGESTS[tuple(key)] = digest
        except OSError:
            continue
