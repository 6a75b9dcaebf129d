"""The model nutpie samples: the hand-written numba callbacks of `kernels`, given one data set.

`compiled_model` packs a data set into the callbacks' buffer (`kernels.pack`) and hands nutpie the two C
callbacks (log-density with gradient, expand) with that buffer as their user data: nothing is compiled per
data set or shape. The callbacks are compiled once per machine and model family (`kernels.callbacks`, 6–7 s
of CPU) and numba keeps their machine code in the riskreport cache (`cache=True`, `io.cache.use_numba_cache`),
so a later process loads them in about 0.2 s of CPU. Nothing here reads numba's or nutpie's private state:
the model is nutpie's own `CompiledPyMCModel` record of a numba-compiled model (two callback addresses, a
user-data pointer, the layout of the stored variables), filled from `kernels` instead of from a PyMC graph.

A chain's initial point is the priors' support point jittered by U(−1, 1) on the unconstrained scale
(`kernels.initial_point`), seeded by nutpie with the chain's seed.
"""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from riskreport.bayes.fitting.fit_progress import RUNNING
from riskreport.bayes.modelling.models import LABELS, model_inputs
from riskreport.bayes.modelling.scores import BayesData
from riskreport.progress import Progress

TICK_SECONDS = 15.0  # between two progress lines of a long compile


@contextlib.contextmanager
def _ticking(say: Progress, message: str):
    """Say `message (N s)` every `TICK_SECONDS` while the block runs (a compile says nothing for seconds)."""
    started, done = time.time(), threading.Event()

    def tick():
        while not done.wait(TICK_SECONDS):
            say(f"{message} ({time.time() - started:.0f} s)")

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def compiled_model(model: str, data: BayesData, priors: dict, say: Progress, centred: tuple[bool, bool] = (True, True)):
    """nutpie's model of `model` on `data` with `priors`: the `kernels` callbacks with this data set's buffer."""
    from nutpie.compile_pymc import CompiledPyMCModel

    from riskreport.bayes.modelling import kernels

    started = time.process_time()
    if kernels.ready(model):
        logp, expand = kernels.callbacks(model)
    else:
        say(f"{RUNNING}{LABELS[model]}: loading the compiled model, or compiling it once on this machine (0 s)")
        with _ticking(say, f"{RUNNING}{LABELS[model]}: compiling the model once on this machine"):
            logp, expand = kernels.callbacks(model)
    seconds = time.process_time() - started
    if seconds > 1.0:
        say(f"{RUNNING}{LABELS[model]}: compiled in {seconds:.1f} s of CPU, kept for every later fit")
    n_sys, n_top = len(data.systems), len(data.topics)
    inputs = model_inputs(model, data, priors)
    free = kernels.free_layout(model, n_sys, n_top, centred)
    stored = kernels.stored_layout(model, n_sys, n_top)
    sizes = [int(np.prod(shape)) for _, shape in stored]
    ends = np.cumsum(sizes)
    shape_info = (
        [name for name, _ in stored],
        [slice(int(end - size), int(end)) for size, end in zip(sizes, ends)],
        [shape for _, shape in stored],
    )
    return CompiledPyMCModel(
        _n_dim=sum(int(np.prod(shape)) for _, shape in free),
        dims={},
        _coords={},
        _shapes=dict(stored),
        compiled_logp_func=logp,
        compiled_expand_func=expand,
        initial_point_func=lambda seed: kernels.initial_point(model, inputs, free, seed),
        shared_data={},
        user_data=kernels.pack(model, inputs, n_sys, n_top, centred),
        n_expanded=int(ends[-1]),
        shape_info=shape_info,
        logp_func=None,
        expand_func=None,
    )
