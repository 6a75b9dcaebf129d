"""A nutpie model compiled once: kept in the process for every data set of its shapes, and on disk.

`compiled_model` compiles a model once per process and shape (model, systems, topics, observations,
centred groups) and gives it each new data set with nutpie's `with_data` (the data and prior constants are
PyMC `pm.Data` containers), with the initial points of that data.

nutpie compiles a PyMC model to two numba C callbacks (the log-density with its gradient, and the
function that expands a point into the stored variables). Compiling them takes 28–44 s of CPU
(ZOiB-42, with a warm or an empty PyTensor cache) in every new process: numba cannot cache a
callback that holds "dynamic globals", and these hold process addresses: the C function pointers of scipy's Cython special functions
(the digamma of the beta log-density's gradient) and the ids of the Python objects wrapping them.
This module stores the finished object code with, for each such address, what it pointed at
(`module.__pyx_capi__[name]`), and on loading writes the current process's address of the same
function into the loaded code. The Python-object ids are only read by numba when the function
pointer is null, which it never is; they are set to 0. Anything else holding a dynamic address is
not stored (the model is compiled as before).

The compiled code depends on the model's graph and its shapes, never on the data values (those are
PyMC `pm.Data` containers, swapped in with `with_data`); the key (`artefact_key`) holds the shapes,
the model-building source and the versions of every library that generates or runs the code, and the
host CPU (object code is specific to it). A loaded model gives the same draws, bit for bit, as the
model compiled in this process (tests/test_bayes.py).

This reads numba's internals (`codegen._engine._ee`, scipy's Cython wrapper objects), so it is used only
with the numba, llvmlite and nutpie versions it is tested with (`TESTED`); with any other a fit says a
warning in its log and compiles the model in every process, as nutpie alone does. (A hand-written numba
log-density, which numba could cache itself, was measured and not adopted: tests/benchmarks/bench_likelihood.py.)

`store_compiled` and `load_compiled` are the two entry points; an entry is one `.npz` of byte arrays
and a JSON record in the riskreport cache (`riskreport.io.cache`, kind `compiled`).
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import threading
import time
from pathlib import Path

import numpy as np

from riskreport.bayes.models import LABELS, build_pymc_model, free_variables, model_inputs
from riskreport.bayes.scores import BayesData
from riskreport.io.cache import Cache, cache_key, cache_root, open_private
from riskreport.progress import Progress

FORMAT = 1
LIBRARIES = ("pymc", "pytensor", "nutpie", "numba", "llvmlite", "numpy", "scipy")
DYNAMIC = "numba.dynamic.globals."
TESTED = {"numba": ("0.65.1",), "llvmlite": ("0.47.0",), "nutpie": ("0.16.8",)}
"""The versions whose internals storing and loading are tested with (tests/test_bayes.py); on any other the
model is compiled in every process (`untested_versions`)."""


def untested_versions() -> list[str]:
    """`name version` of each installed library of `TESTED` at a version not tested with storing and loading."""
    from importlib.metadata import version

    return [f"{name} {version(name)}" for name, tested in TESTED.items() if version(name) not in tested]


def artefact_key(shape: tuple, source: str) -> str:
    """The key of a compiled model: its shape tuple, the source that builds its graph, library versions, the CPU."""
    import sys
    from importlib.metadata import version

    import llvmlite.binding as llvm

    versions = {name: version(name) for name in LIBRARIES}
    cpu = (llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())
    return cache_key(
        "compiled",
        format=FORMAT,
        shape=shape,
        source=hashlib.sha256(source.encode()).hexdigest(),
        versions=versions,
        python=sys.version,
        cpu=cpu,
    )


def store_compiled(folder: Path, key: str, compiled) -> bool:
    """Write the machine code and layout of nutpie's `compiled` model under `key`; False when it cannot be stored."""
    try:
        parts, record = _artefact(compiled)
    except (AttributeError, KeyError, TypeError, ValueError, RuntimeError):  # internals of another numba/nutpie
        return False
    if parts is None:
        return False
    Cache("compiled", folder).put_arrays(key, parts, record)
    return True


def _artefact(compiled) -> tuple[dict | None, dict]:
    parts = {}
    names, slices, shapes = compiled.shape_info
    record = {
        "n_dim": int(compiled.n_dim),
        "n_expanded": int(compiled.n_expanded),
        "shape_info": [
            list(map(str, names)),
            [[int(s.start), int(s.stop)] for s in slices],
            [list(map(int, shape)) for shape in shapes],
        ],
        "shared": [[name, str(value.dtype), int(value.ndim)] for name, value in compiled.shared_data.items()],
        "user_dtype": str(compiled.user_data.dtype),
    }
    for part, cfunc in (("logp", compiled.compiled_logp_func), ("expand", compiled.compiled_expand_func)):
        library = cfunc._library
        relocations = _relocations(library)
        if relocations is None:
            return None, record
        name, _, (objcode, bitcode) = library.serialize_using_object_code()
        parts[f"{part}_object"] = np.frombuffer(objcode, dtype=np.uint8)
        parts[f"{part}_bitcode"] = np.frombuffer(bitcode, dtype=np.uint8)
        record[part] = {"library": name, "symbol": cfunc.native_name, "relocations": relocations}
    return parts, record


def load_compiled(folder: Path, key: str, pymc_model, shared_data: dict):
    """nutpie's compiled model stored under `key`, for `pymc_model` (its initial points) with `shared_data`; or None.

    None when there is no readable entry for `key`, or its recorded layout does not match `shared_data`.
    """
    store = Cache("compiled", folder)
    entry = store.get_arrays(key, private_to=cache_root(store.folder))
    if entry is None:
        return None
    parts, record = entry
    shared = {
        name: np.array(shared_data[name], dtype=dtype, order="C", copy=True)
        for name, dtype, ndim in record["shared"]
        if name in shared_data
    }
    if len(shared) != len(record["shared"]) or any(shared[n].ndim != d for n, _, d in record["shared"]):
        return None
    try:
        return _assemble(parts, record, pymc_model, shared)
    except (ImportError, AttributeError, KeyError, TypeError, ValueError, RuntimeError):  # other nutpie/numba
        return None


def private(path: Path, top: Path) -> bool:
    """The entry and every folder from it up to `top` belong to this user and no one else can write them.

    A stored model is machine code that this process runs: an entry someone else could have written
    or replaced is not loaded (the model is compiled instead), as ssh treats its keys. True when the
    entry does not exist (nothing to load).
    """
    if not path.exists():
        return True
    handle = open_private(path, top)  # `load_compiled` reads through such a handle: what it checked
    if handle is not None:
        handle.close()
    return handle is not None


class _Callback:
    """What nutpie reads of a numba `CFunc`: its address; holds the code library alive."""

    def __init__(self, library, address: int):
        self._library = library
        self.address = address


def _assemble(parts: dict, record: dict, pymc_model, shared: dict):
    from nutpie.compile_pymc import CompiledPyMCModel, _prepare_dims_and_coords, make_user_data

    for value in shared.values():
        value.flags.writeable = False
    user_data = make_user_data(shared, shared)
    if str(user_data.dtype) != record["user_dtype"]:
        return None
    callbacks = {part: _load_library(parts, record[part], part) for part in ("logp", "expand")}
    if any(callback is None for callback in callbacks.values()):
        return None
    names, slices, shapes = record["shape_info"]
    shape_info = (names, [slice(a, b) for a, b in slices], [tuple(s) for s in shapes])
    initial = initial_point_function(pymc_model, shape_info)
    dims, coords = _prepare_dims_and_coords(pymc_model, shape_info)
    return CompiledPyMCModel(
        _n_dim=record["n_dim"],
        dims=dims,
        _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=callbacks["logp"],
        compiled_expand_func=callbacks["expand"],
        initial_point_func=initial,
        shared_data=shared,
        user_data=user_data,
        n_expanded=record["n_expanded"],
        shape_info=shape_info,
        logp_func=None,
        expand_func=None,
    )


def initial_point_function(pymc_model, shape_info: tuple):
    """nutpie's seeded initial point (support point, jittered) of `pymc_model`, flat, in `shape_info`'s order."""
    from nutpie.compile_pymc import _rv_dict_to_flat_array_wrapper, _wrap_with_lock
    from pymc.initial_point import make_initial_point_fn

    names, _, shapes = shape_info
    n_free = len(pymc_model.free_RVs)
    point = _wrap_with_lock(
        make_initial_point_fn(
            model=pymc_model,
            jitter_rvs=set(pymc_model.free_RVs),
            default_strategy="support_point",
            return_transformed=True,
        )
    )
    return _rv_dict_to_flat_array_wrapper(point, names=list(names[:n_free]), shapes=list(shapes[:n_free]))


def _relocations(library) -> list | None:
    """[symbol, module, capsule name or None] per dynamic global of `library`, or None if one is not understood."""
    import gc

    addresses = {int(name[len(DYNAMIC) :], 16): name for name in library._dynamic_globals}
    if not addresses:
        return []
    wrappers = [obj for obj in gc.get_objects() if type(obj).__name__ == "_CythonWrapper"]
    found = {}
    for wrapper in wrappers:
        module = getattr(wrapper._pyfunc, "__module__", None)
        capsule = _capsule_name(module, wrapper._func_ptr)
        if capsule is None:
            continue
        if wrapper._func_ptr in addresses:
            found[addresses[wrapper._func_ptr]] = [module, capsule]
        if id(wrapper) in addresses:
            found[addresses[id(wrapper)]] = [module, None]  # the Python object: read only if the pointer is null
    if len(found) != len(addresses):
        return None
    return [[symbol, *target] for symbol, target in sorted(found.items())]


def _capsule_name(module: str | None, pointer: int) -> str | None:
    for name, capsule in _capsules(module).items():
        if _pointer(capsule) == pointer:
            return name
    return None


def _capsules(module: str | None) -> dict:
    import importlib

    try:
        return dict(getattr(importlib.import_module(module), "__pyx_capi__", {})) if module else {}
    except ImportError:
        return {}


def _pointer(capsule) -> int:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, (ctypes.py_object,)
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, (ctypes.py_object, ctypes.c_char_p)
    return int(get_pointer(capsule, get_name(capsule)) or 0)


def _load_library(parts: dict, info: dict, part: str):
    """Load stored object code into numba's JIT, point its dynamic globals at this process's functions."""
    from numba.core.registry import cpu_target

    targets = {}
    for symbol, module, capsule in info["relocations"]:
        if capsule is None:
            targets[symbol] = 0
            continue
        capsules = _capsules(module)
        if capsule not in capsules:
            return None
        targets[symbol] = _pointer(capsules[capsule])
    codegen = cpu_target.target_context.codegen()
    library = codegen.unserialize_library(
        (info["library"], "object", (parts[f"{part}_object"].tobytes(), parts[f"{part}_bitcode"].tobytes()))
    )
    address = library.get_pointer_to_function(info["symbol"])
    if not address:
        return None
    engine = codegen._engine._ee
    for symbol, target in targets.items():
        slot = engine.get_global_value_address(symbol)
        if not slot:
            return None
        ctypes.c_void_p.from_address(slot).value = target or None
    return _Callback(library, address)


_COMPILED: dict = {}  # (model, systems, topics, observations, centred) -> (nutpie model, its PyMC model)


_LOCKS: dict = {}  # shape -> lock: a fit and a background `prepare` never compile the same model twice


_LOCKS_LOCK = threading.Lock()


def compiled_model(
    model: str, data: BayesData, priors: dict, say: Progress, centred: tuple[bool, bool] = (True, True), folder=None
):
    """nutpie's compiled `model` for the shapes of `data`, with this data, these prior constants and their
    initial points swapped in.

    Compiled once per process; with `folder`, its machine code is kept there and loaded by later processes
    (`load_compiled`: 15–45 s of numba compilation saved per model).
    """
    import warnings

    with warnings.catch_warnings():  # PyTensor's C-backend BLAS notice: the numba backend does not use it
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS", category=UserWarning)
        return _compile(model, data, priors, say, centred, folder)


def _compile(model: str, data: BayesData, priors: dict, say: Progress, centred: tuple[bool, bool], folder):
    shape = (model, len(data.systems), len(data.topics), data.n, centred)
    inputs = model_inputs(model, data, priors)
    with _LOCKS_LOCK:
        lock = _LOCKS.setdefault(shape, threading.Lock())
    with lock:
        if shape in _COMPILED:  # a data container the graph does not use (n1 of ZOiB-Rank) is not in the model
            compiled, pymc_model = _COMPILED[shape]
            renewed = compiled.with_data(**{name: v for name, v in inputs.items() if name in compiled.shared_data})
            start = _InitialPoints(compiled.initial_point_func, pymc_model, inputs)
            return dataclasses.replace(renewed, initial_point_func=start)
        _COMPILED[shape] = _compile_or_load(model, data, priors, say, centred, folder, shape, inputs)
        return _COMPILED[shape][0]


class _InitialPoints:
    """The initial points of a compiled model given other data: its own seeded function, evaluated with the
    model's `pm.Data` containers set to that data (and set back).

    The priors' support points depend on the data's prior constants (brms sets them from y): with the
    first data's points, the same fit gave other draws depending on which data compiled the model first.
    """

    _lock = threading.Lock()  # the containers belong to the one PyMC model of a shape

    def __init__(self, function, pymc_model, inputs: dict):
        self.function, self.pymc_model = function, pymc_model
        self.inputs = {name: np.asarray(value, dtype=pymc_model[name].type.dtype) for name, value in inputs.items()}

    def __call__(self, seed):
        with self._lock:
            saved = {name: self.pymc_model[name].get_value() for name in self.inputs}
            try:
                for name, value in self.inputs.items():
                    self.pymc_model[name].set_value(value)
                return self.function(seed)
            finally:
                for name, value in saved.items():
                    self.pymc_model[name].set_value(value)


def _tested() -> str:
    return ", ".join(f"{name} {' / '.join(versions)}" for name, versions in TESTED.items())


def _compile_or_load(model, data, priors, say, centred, folder, shape, inputs):
    import nutpie

    from riskreport.bayes import models

    started = time.time()
    pymc_model = build_pymc_model(model, data, priors, centred)
    untested = untested_versions() if folder else []
    if untested:
        say(
            f"warning: {LABELS[model]}: the compiled-model cache is tested with {_tested()}, not "
            f"{', '.join(untested)}: compiling in this process, nothing stored"
        )
        folder = None
    key = artefact_key(shape, Path(models.__file__).read_text(encoding="utf-8")) if folder else ""
    compiled = load_compiled(folder, key, pymc_model, inputs) if folder else None
    if compiled is not None:
        say(f"{LABELS[model]}: compiled model loaded from the cache in {time.time() - started:.1f} s")
    else:
        say(f"{LABELS[model]}: compiling the model ({data.n:,} scores, {len(data.systems)} systems)")
        compiled = nutpie.compile_pymc_model(pymc_model, backend="numba", var_names=free_variables(model))
        say(f"{LABELS[model]}: compiled in {time.time() - started:.1f} s")
        if folder:
            store_compiled(folder, key, compiled)
    return compiled, pymc_model
