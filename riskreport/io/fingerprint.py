"""What a stored result depends on besides its inputs: riskreport's own source and the libraries' versions.

Tables and figures kept in the cache (`riskreport.run.api.store`, `riskreport.render.plotting.figure_store`) put
these in their keys, so that a changed formula, drawing or library is a new entry, never a stale one.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from functools import cache, lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of riskreport's Python source (every module: a table or figure may call any layer)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def versions(*names: str) -> dict[str, str]:
    """The installed version of each library named ('absent' when it is not installed)."""
    return {name: _version(name) for name in names}


@cache
def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"
