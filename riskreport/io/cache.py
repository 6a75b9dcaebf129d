"""The one disk cache of riskreport: evaluated runs, Bayesian fits, stored tables and figures.

Entries are content-addressed: the key is the SHA-256 of everything the value depends on (input
digests, parameters, library versions; `cache_key`). Each entry is one file, written through a
temporary file and a rename (concurrent writers never leave a mixed file) and carrying its key
and a checksum of its content. Reading never fails a report:

- a missing entry is a miss;
- a damaged entry (unreadable, failing its checksum) or a foreign one (another key's entry in
  this place, an entry of another kind) is a miss with a `CacheWarning` naming the file; the
  value is computed again and the entry rewritten;
- a cache folder that cannot be written (read-only, full) is still read; the failed write is
  said once per folder with a `CacheWarning`, and the report goes on.

Location: `$RISKREPORT_CACHE`, else `$XDG_CACHE_HOME/riskreport`, else `~/.cache/riskreport`, one
sub-folder per use (`scores`, `bayes`, `tables`, `figures`, `csv`, `inputs` for the collection folders written
from inputs given in Python, named by the digest of their files: `write_folder`, and `numba` for the machine code
of riskreport's compiled kernels: `use_numba_cache`).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from riskreport.errors import ParameterError
from riskreport.io.files import umask

FORMAT = 1  # of the entry files themselves; part of every key
_UNWRITABLE: set[str] = set()  # folders whose failed write was already said


class CacheWarning(UserWarning):
    """A cache entry was ignored (damaged or foreign) or could not be written; the value is computed anyway."""


def default_cache_dir() -> Path:
    """The cache root: `$RISKREPORT_CACHE`, else `$XDG_CACHE_HOME/riskreport`, else `~/.cache/riskreport`."""
    if os.environ.get("RISKREPORT_CACHE"):
        return Path(os.environ["RISKREPORT_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "riskreport"


def numba_cache_dir() -> Path:
    """Where numba keeps the machine code of riskreport's own `cache=True` functions: `<cache root>/numba`."""
    return default_cache_dir() / "numba"


def use_numba_cache() -> None:
    """Make numba keep riskreport's compiled functions in `numba_cache_dir()`, not in `__pycache__` beside the
    source (an installed package would write into site-packages). Call it before the `@njit(cache=True)`
    decorators of a module run. Only functions defined in riskreport's own files are affected; other packages'
    numba caches (and `NUMBA_CACHE_DIR` for them) are left as they are. When that folder cannot be made, or is
    not private (another user owns it or can write it: numba's index files are pickles, run as code), a private
    temporary folder of this process is used instead, removed at exit; never the package's folder.
    """
    from numba.core import caching

    locators = caching.CacheImpl._locator_classes
    if not any(getattr(c, "riskreport", False) for c in locators):
        locators.insert(0, _numba_locator(caching))


def _numba_locator(caching):
    """numba's cache locator for functions in riskreport's files: `numba_cache_dir()/<folder>_<sha1 of its path>`."""
    package = Path(__file__).resolve().parent.parent
    bases: tuple[type, ...] = (caching._SourceFileBackedLocatorMixin, caching._CacheLocator)

    class RiskreportLocator(*bases):  # type: ignore[misc]
        riskreport = True

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(_numba_root() / self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            if not Path(py_file).resolve().is_relative_to(package):
                return None  # not riskreport's: numba's own locators decide
            return super().from_function(py_func, py_file)

    return RiskreportLocator


_NUMBA_ROOT: list[Path] = []  # the folder chosen in this process (the cache's, or a private temporary one)


def _numba_root() -> Path:
    if not _NUMBA_ROOT:
        folder = numba_cache_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            usable = _private_up_to(folder, default_cache_dir()) and os.access(folder, os.W_OK)
        except OSError:
            usable = False
        if not usable:
            import atexit
            import shutil

            folder = Path(tempfile.mkdtemp(prefix="riskreport-numba-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _NUMBA_ROOT.append(folder)
    return _NUMBA_ROOT[0]


def _private_up_to(folder: Path, root: Path) -> bool:
    """`folder` and its parents up to `root` are this user's and writable by no one else."""
    chain = [folder, *[p for p in folder.parents if p.is_relative_to(root)]]
    return all(p.stat().st_uid == os.getuid() and not p.stat().st_mode & 0o022 for p in chain)


def cache_key(kind: str, **parts: Any) -> str:
    """SHA-256 of an entry's kind and of everything its value depends on (JSON of `parts`, keys sorted).

    Callers put the digests of input files, the parameters and the versions of the libraries that
    compute the value into `parts`: a change of any of them is a new key, never a stale value.
    """
    text = json.dumps({"kind": kind, "format": FORMAT, **parts}, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Cache:
    """Entries of one kind (`scores`, `bayes`, `tables`, ...) in `folder` (default: `default_cache_dir() / kind`)."""

    def __init__(self, kind: str, folder: str | os.PathLike | None = None):
        self.kind = kind
        self.folder = Path(folder) if folder is not None else default_cache_dir() / kind

    def path(self, key: str, suffix: str = ".json") -> Path:
        """Where the entry of `key` lives: `<folder>/<key[:2]>/<key><suffix>`."""
        return self.folder / key[:2] / f"{key}{suffix}"

    # ---- JSON values ---------------------------------------------------------------------------

    def get(self, key: str) -> Any | None:
        """The JSON value stored under `key`, or None (missing, damaged or foreign: see the module)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            entry = json.loads(data.decode("utf-8"))
            ok = entry["sha256"] == _json_digest(entry["value"])
            own = ok and entry["key"] == key and entry["kind"] == self.kind
        except (ValueError, TypeError, KeyError):
            ok = own = False
        if not own:
            self._ignored(path, "fails its checksum" if not ok else "belongs to another entry")
            return None
        return entry["value"]

    def put(self, key: str, value: Any) -> None:
        """Store a JSON-serialisable `value` under `key`; a write that fails is said once, never raised."""
        entry = {"key": key, "kind": self.kind, "value": value, "sha256": _json_digest(value)}
        self._write(self.path(key), json.dumps(entry, separators=(",", ":")).encode())

    # ---- arrays with metadata ----------------------------------------------------------------------

    def get_arrays(self, key: str, private_to: Path | None = None) -> tuple[dict[str, np.ndarray], Any] | None:
        """The arrays and JSON metadata stored under `key` (`put_arrays`), or None. With `private_to` (a folder
        above the entry, e.g. the cache root), only an entry that is `private` up to it, read through the
        file it checked (no check-then-read race): machine code, say, that this process will run."""
        path = self.path(key, ".npz")
        handle = open_private(path, private_to) if private_to is not None else None
        if handle is None and (private_to is not None or not path.is_file()):
            return None
        try:
            with handle or open(path, "rb") as source, np.load(source, allow_pickle=False) as stored:
                arrays = {name: stored[name] for name in stored.files if name != "__record__"}
                record = json.loads(bytes(stored["__record__"]).decode())
            ok = record["sha256"] == _arrays_digest(arrays, record["meta"])
            own = ok and record["key"] == key and record["kind"] == self.kind
        except Exception:  # noqa: BLE001 - zipfile, numpy and json raise many kinds for a damaged file
            ok = own = False
        if not own:
            self._ignored(path, "fails its checksum" if not ok else "belongs to another entry")
            return None
        return arrays, record["meta"]

    def put_arrays(self, key: str, arrays: dict[str, np.ndarray], meta: Any) -> None:
        """Store named arrays (no objects: read back without pickle) and JSON `meta` under `key`."""
        arrays = {name: np.ascontiguousarray(values) for name, values in arrays.items()}
        meta = json.loads(json.dumps(meta, default=float))  # what reading back will give
        record = {"key": key, "kind": self.kind, "meta": meta, "sha256": _arrays_digest(arrays, meta)}
        buffer = io.BytesIO()
        named: dict[str, Any] = {"__record__": np.frombuffer(json.dumps(record).encode(), dtype=np.uint8), **arrays}
        np.savez(buffer, **named)
        self._write(self.path(key, ".npz"), buffer.getvalue())

    # ---- files -------------------------------------------------------------------------------------

    def _write(self, path: Path, data: bytes) -> None:
        temporary = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.chmod(temporary, 0o666 & ~umask())
            os.replace(temporary, path)
        except OSError as error:  # a read-only or full cache costs a computation, never the report
            if temporary:
                Path(temporary).unlink(missing_ok=True)
            if str(self.folder) not in _UNWRITABLE:
                _UNWRITABLE.add(str(self.folder))
                warnings.warn(
                    f"cannot write the {self.kind} cache in {self.folder}: {error}; values are computed "
                    "and used, not kept (set RISKREPORT_CACHE to a writable folder to keep them)",
                    CacheWarning,
                    stacklevel=3,
                )

    def _ignored(self, path: Path, why: str) -> None:
        warnings.warn(
            f"ignored a damaged {self.kind} cache entry {path} (it {why}); the value is computed again "
            "and the entry rewritten",
            CacheWarning,
            stacklevel=3,
        )


def open_private(path: Path, top: Path):
    """`path` opened for reading when it and every folder from it up to `top` (inclusive) belong to this user
    and no one else can write them, else None (also when it does not exist).

    The file is opened first (not following a symbolic link) and checked through its descriptor: what is
    read is what was checked. Folders are checked after, so none could be swapped in between by another
    user (who cannot write any of them); a `top` that is not above `path` is refused.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    handle = os.fdopen(descriptor, "rb")
    try:
        folders = [Path(path).parent, *Path(path).parent.parents]
        top = Path(top)
        if top not in folders or not _owned(os.fstat(descriptor), regular=True):
            raise PermissionError(path)
        for folder in folders[: folders.index(top) + 1]:
            if not _owned(os.lstat(folder), regular=False):
                raise PermissionError(folder)
    except OSError:
        handle.close()
        return None
    return handle


def _owned(info: os.stat_result, regular: bool) -> bool:
    import stat

    kind = stat.S_ISREG(info.st_mode) if regular else stat.S_ISDIR(info.st_mode)
    return kind and info.st_uid == os.getuid() and not info.st_mode & 0o022


def cache_root(folder: Path) -> Path:
    """The cache root above `folder` (`default_cache_dir()`), or `folder` itself when it lies elsewhere."""
    root = default_cache_dir().absolute()
    folder = Path(folder).absolute()
    return root if root == folder or root in folder.parents else folder


def _json_digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _arrays_digest(arrays: dict[str, np.ndarray], meta: Any) -> str:
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for name in sorted(arrays):
        values = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}|{values.dtype.str}|{values.shape}".encode())
        digest.update(values.tobytes())
    return digest.hexdigest()


def write_folder(files: dict[str, str | Path], name: str, folder=None) -> Path:
    """Write `files` (relative path → text, or a file to link) into `folder`, or into a folder `name` of the cache
    named by their digest (the same files, the same folder: written once); atomically (a temporary sibling renamed
    into place). A collection folder written from inputs (`riskreport.io.inputs`)."""
    digest = hashlib.sha256()
    for relative, content in sorted(files.items()):
        digest.update(relative.encode() + b"\0")
        digest.update(content.encode() if isinstance(content, str) else _link_key(content))
    if folder is None:
        target = default_cache_dir() / "inputs" / digest.hexdigest()[:24] / name
        if (target / ".complete").is_file():
            return target
    else:
        target = Path(folder).expanduser().resolve()
        if target.exists() and any(target.iterdir()):
            raise ParameterError(f"{target} is not empty: collection_from writes a new collection folder there.")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for relative, content in files.items():
            path = work / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.symlink_to(content.resolve())
        (work / ".complete").write_text(digest.hexdigest())
        if target.exists():
            target.rmdir()
        os.replace(work, target)
    except FileExistsError:  # written meanwhile by another process: the same content
        shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target


def _link_key(path: Path) -> bytes:
    stat = path.stat()
    return f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
