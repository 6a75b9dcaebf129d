"""Benchmark: CPU µs per log-density + gradient evaluation of BHM-ZOiB, as nutpie's sampler calls it.

Side by side in one process, on the same random unconstrained points:

- `old graph`: the PyMC graph before issue 32 (brms's r = sd·z; the Beta log-density evaluated for every
  score, the 0s and 1s masked with a 0/1 weight; a frozen copy below), compiled by nutpie's numba backend;
- `new graph`: `models.build_pymc_model(exact=True)` (zero-sum effects; the Beta terms only for the interior
  scores, log y and log(1 − y) as data, log Γ(φ) once; zoi and coi drawn exactly, not in the graph), compiled
  by nutpie's numba backend;
- `numba`: what riskreport samples, the hand-written log-density and gradient (`riskreport.bayes.modelling.kernels`,
  its compile or cache-load time printed), checked first against PyMC's value and gradient (numba backend)
  at random points.

Each is the C callback nutpie calls (`compiled_logp_func`), called through ctypes (its overhead, about
0.2 µs, is printed); times are CPU (`time.process_time`) medians of `--rounds` rounds, load printed.
Sizes: the generated 110 × 249 campaign (27,390 scores) and ZOiB-42 (TREC-COVID round 1's 42 pooled
runs × 30 topics, 1,260 scores; generated scores of the same shape when ../shared is absent).

    python tests/benchmarks/bench_likelihood.py [--rounds 5] [--seconds 1.0] [--sizes campaign zoib42]
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reuse = _load("bench_bayes_reuse")


def datasets() -> dict:
    from riskreport.bayes import scores_data

    rng = np.random.default_rng(0)
    if reuse.COVID.is_dir():
        table = pd.read_csv(reuse.COVID / "round1_data.csv")
        pooled = pd.read_csv(reuse.COVID / "round1_pooled.csv")
        covid = table[table["system"].isin(set(pooled.loc[pooled["pooled"] == 1, "system"]))]
    else:
        covid = reuse.generated(rng, 42, 30)
    return {
        "campaign 110x249": scores_data(reuse.generated(np.random.default_rng(0), 110, 249)),
        "ZOiB-42": scores_data(covid),
    }


def old_graph(data, priors):
    """Today's BHM-ZOiB graph before issue 32 (non-centred effects, Beta log-density masked), frozen here."""
    import pymc as pm
    import pytensor.tensor as pt

    y = np.asarray(data.y, dtype=float)
    inner = (y > 0) & (y < 1)
    with pm.Model(check_bounds=False) as model:
        d = {
            "y": pm.Data("y", np.where(inner, y, 0.5)),
            "inner": pm.Data("inner", inner.astype(float)),
            "system": pm.Data("system", data.system.astype(np.int64)),
            "topic": pm.Data("topic", data.topic.astype(np.int64)),
        }
        n0, n1, n_in = float((y == 0).sum()), float((y == 1).sum()), float(inner.sum())
        eta = pm.StudentT("b", nu=3, mu=0.0, sigma=2.5)
        sd_sys = pm.HalfStudentT("sd_sys", nu=3, sigma=2.5)
        sd_top = pm.HalfStudentT("sd_top", nu=3, sigma=2.5)
        r_sys = sd_sys * pm.Normal("z_sys", 0.0, 1.0, shape=len(data.systems))
        r_top = sd_top * pm.Normal("z_top", 0.0, 1.0, shape=len(data.topics))
        eta = eta + r_sys[d["system"]] + r_top[d["topic"]]
        phi = pm.Gamma("phi", alpha=0.01, beta=0.01)
        a = pm.math.invlogit(eta) * phi
        pm.Potential("obs_inner", pt.sum(d["inner"] * pm.logp(pm.Beta.dist(alpha=a, beta=phi - a), d["y"])))
        zoi, coi = pm.Beta("zoi", 1.0, 1.0), pm.Beta("coi", 1.0, 1.0)
        pm.Potential("obs_01", (n0 + n1) * pt.log(zoi) + n0 * pt.log1p(-coi) + n1 * pt.log(coi) + n_in * pt.log1p(-zoi))
    return model


def compile_nutpie(pymc_model):
    import nutpie

    started = time.process_time()
    compiled = nutpie.compile_pymc_model(pymc_model, backend="numba")
    return compiled, time.process_time() - started


class Callback:
    """nutpie's C log-density callback `int64(dim, x*, grad*, logp*, user_data*)`, called through ctypes."""

    def __init__(self, address: int, n_dim: int, user_data: int, keep=None):
        proto = ctypes.CFUNCTYPE(
            ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
        )
        self.function, self.n_dim, self.user_data, self.keep = proto(address), n_dim, user_data, keep
        self.grad, self.logp = np.zeros(n_dim), np.zeros(1)

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        code = self.function(self.n_dim, x.ctypes.data, self.grad.ctypes.data, self.logp.ctypes.data, self.user_data)
        if code != 0:
            raise RuntimeError(f"log-density callback returned {code}")
        return float(self.logp[0]), self.grad.copy()


def of_nutpie(compiled) -> Callback:
    return Callback(compiled.compiled_logp_func.address, compiled.n_dim, compiled.user_data.ctypes.data, compiled)


def microseconds(callback: Callback, points: list[np.ndarray], seconds: float) -> float:
    """CPU µs per call, cycling through `points` for about `seconds` of CPU."""
    calls, started = 0, time.process_time()
    while time.process_time() - started < seconds:
        for x in points:
            callback(x)
        calls += len(points)
    return (time.process_time() - started) / calls * 1e6


def ctypes_overhead(seconds: float) -> float:
    """CPU µs of a ctypes call to a C function doing nothing much (labs)."""
    labs = ctypes.CDLL(None).labs
    calls, started = 0, time.process_time()
    while time.process_time() - started < seconds:
        for _ in range(1000):
            labs(1)
        calls += 1000
    return (time.process_time() - started) / calls * 1e6


def rows_for(data) -> dict:
    """{row name: (Callback, compile CPU s)} for one data set."""
    from riskreport.bayes.modelling.models import brms_priors, build_pymc_model, model_inputs

    priors = brms_priors("zoib", data.y)
    out = {}
    compiled, seconds = compile_nutpie(old_graph(data, priors))
    out["old graph"] = (of_nutpie(compiled), seconds)
    new = build_pymc_model("zoib", data, priors, exact=True)
    compiled, seconds = compile_nutpie(new)
    out["new graph"] = (of_nutpie(compiled), seconds)
    started = time.process_time()
    from riskreport.bayes.modelling import kernels

    sizes = (len(data.systems), len(data.topics))
    buffer = kernels.pack("zoib", model_inputs("zoib", data, priors), *sizes)
    n_dim = sum(int(np.prod(shape)) for _, shape in kernels.free_layout("zoib", *sizes))
    callback = Callback(kernels.callbacks("zoib")[0].address, n_dim, buffer.ctypes.data, buffer)
    out["numba"] = (callback, time.process_time() - started)
    print(f"  numba against PyMC: {check(kernels, callback, new, data)}")
    return out


def check(kernels, callback: Callback, pymc_model, data) -> str:
    """The gradient equal to PyMC's (numba backend) to 1e-10 relative, the value up to one constant, at random points.

    The constant is PyTensor's: it casts the Python float constants of the Student-t normalisers to float32.
    """
    names = [value.name for value in pymc_model.value_vars]
    if names != [name for name, _ in kernels.free_layout("zoib", len(data.systems), len(data.topics))]:
        return f"not checked: PyMC's layout is {names[:6]}…, not the zero-sum one"
    function = pymc_model.logp_dlogp_function(ravel_inputs=True, mode="NUMBA")
    function.set_extra_values({})
    rng = np.random.default_rng(5)
    differences, worst = [], 0.0
    for _ in range(6):
        x = rng.normal(0, 0.5, callback.n_dim)
        value, grad = function(x)
        ours, our_grad = callback(x)
        worst = max(worst, float(np.max(np.abs(our_grad - grad) / (np.abs(grad) + 1e-10 * np.max(np.abs(grad))))))
        differences.append(ours - float(value))
    assert worst < 1e-10 and np.ptp(differences) < 1e-10 * abs(float(value)), (worst, differences)
    return f"gradient within {worst:.1e} relative, value within {np.ptp(differences):.1e} of a constant"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per row and round")
    parser.add_argument("--sizes", nargs="+", default=["campaign", "zoib42"], choices=["campaign", "zoib42"])
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    print(f"ctypes call overhead: {ctypes_overhead(0.2):.2f} µs CPU")
    chosen = {"campaign": "campaign 110x249", "zoib42": "ZOiB-42"}
    for name, data in datasets().items():
        if name not in {chosen[size] for size in args.sizes}:
            continue
        interior = int(((data.y > 0) & (data.y < 1)).sum())
        print(f"\n{name}: {data.n:,} scores ({interior:,} in (0, 1)), {len(data.systems)} systems")
        rows = rows_for(data)
        rng = np.random.default_rng(1)
        points = {row: [rng.normal(0, 0.5, cb.n_dim) for _ in range(16)] for row, (cb, _) in rows.items()}
        times: dict[str, list[float]] = {row: [] for row in rows}
        for _ in range(args.rounds):
            for row, (callback, _) in rows.items():
                times[row].append(microseconds(callback, points[row], args.seconds))
        reference = statistics.median(times["old graph"])
        for row, (_, compile_s) in rows.items():
            median = statistics.median(times[row])
            print(
                f"  {row:10s} {median:9.1f} µs CPU per gradient ({median * 1e3 / data.n:6.1f} ns per score), "
                f"{reference / median:5.2f}x the old graph; compile {compile_s:.1f} s CPU; "
                f"rounds {', '.join(f'{t:.0f}' for t in times[row])}"
            )
        print(f"  load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
