"""Modules reached by their short names: a package's `__getattr__` imports `riskreport.render.plotting.plots` as
`render.plots` on first use (`riskreport`, `riskreport.bayes` and `riskreport.render` keep such a table, `MODULES`)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from types import ModuleType


def short_module(package: str, modules: Mapping[str, str], name: str) -> ModuleType:
    """The module `modules[name]` (a path relative to `package`), imported on first use and kept in the package's
    namespace, so the next lookup is a plain attribute; `AttributeError`, as Python raises it, for another name."""
    if name not in modules:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module = importlib.import_module(f".{modules[name]}", package)
    setattr(sys.modules[package], name, module)
    return module
