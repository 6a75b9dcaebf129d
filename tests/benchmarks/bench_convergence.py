"""Benchmark: the convergence diagnostics (rank-normalised split R̂, bulk and tail ESS), ArviZ against
`riskreport.bayes.diagnosis.convergence`, side by side in one run, alternating, `--repeat` times each (medians printed):

- `_min_ess`, the ESS check after every sampling batch, on the system effects of a fit: 4 chains × 4,000
  draws × 42 effects; and the same for slowly mixing effects (autocorrelations up to 0.995), where ArviZ's
  loop over lags is long;
- `diagnose`, after every fit, on a ZOiB-shaped draws dict: b, sd_sys, sd_top, r_sys (42), r_top (30), z_sys (42),
  z_top (30), phi, zoi, coi, 4 chains × 4,167 draws (z_* are not diagnosed: 78 parameters).

The draws are AR(1) chains, each parameter with its own autocorrelation in [0, 0.95] unless said. ArviZ's side is what
riskreport computed before (`az.rhat`, `az.ess(method="bulk" | "tail")` on a dataset); each row prints both
medians, their ratio and the largest relative difference between the two's values. The 2 cores are shared with
other work, so read medians. Not collected by the test run.

    python tests/benchmarks/bench_convergence.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's riskreport

from riskreport.bayes.diagnosis.diagnostics import _min_ess, diagnose  # noqa: E402

CHAINS = 4
ZOIB = {"b": (), "sd_sys": (), "sd_top": (), "r_sys": (42,), "r_top": (30,), "z_sys": (42,), "z_top": (30,)}
ZOIB |= {"phi": (), "zoi": (), "coi": ()}


def ar1(rng: np.random.Generator, draws: int, shape: tuple[int, ...], rho_max: float = 0.95) -> np.ndarray:
    """AR(1) chains (CHAINS, draws, *shape), each parameter with its own autocorrelation in [0, rho_max]."""
    rho = rng.uniform(0.0, rho_max, size=shape)
    noise = rng.normal(size=(CHAINS, draws, *shape))
    x = np.empty_like(noise)
    x[:, 0] = noise[:, 0]
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


def arviz_min_ess(values: np.ndarray) -> tuple[float, float]:
    import arviz as az

    dataset = az.convert_to_dataset({"x": values.reshape(values.shape[:2] + (-1,))})
    return float(np.min(az.ess(dataset, method="bulk")["x"].values)), float(
        np.min(az.ess(dataset, method="tail")["x"].values)
    )


def arviz_per_parameter(draws: dict) -> dict[str, tuple[float, float, float]]:
    """`diagnose`'s per-parameter (R̂, bulk ESS, tail ESS) as ArviZ computes them."""
    import arviz as az

    names = [n for n in draws if not n.startswith("z_")]
    dataset = az.convert_to_dataset({n: draws[n] for n in names})
    rhat, bulk, tail = az.rhat(dataset), az.ess(dataset, method="bulk"), az.ess(dataset, method="tail")
    per_parameter = {}
    for name in names:
        columns = [np.atleast_1d(x[name].values) for x in (rhat, bulk, tail)]
        for i, values in enumerate(zip(*columns)):
            per_parameter[name if draws[name].ndim == 2 else f"{name}[{i}]"] = tuple(float(v) for v in values)
    return per_parameter


def relative_difference(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs)))


def timed(function: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def compare(name: str, arviz: Callable[[], object], ours: Callable[[], object], repeat: int) -> None:
    """Alternate the two `repeat` times; print the medians, the ratio and the largest relative difference."""
    times: dict[str, list[float]] = {"ArviZ": [], "ours": []}
    results: dict[str, object] = {}
    for _ in range(repeat):
        for side, function in (("ArviZ", arviz), ("ours", ours)):
            seconds, results[side] = timed(function)
            times[side].append(seconds)
    theirs, mine = (np.array(results[side], dtype=float) for side in ("ArviZ", "ours"))
    slow, fast = statistics.median(times["ArviZ"]), statistics.median(times["ours"])
    print(
        f"{name:<34} ArviZ {slow:7.3f} s   ours {fast:7.3f} s   ratio {slow / fast:6.1f}x   "
        f"max relative difference {relative_difference(mine, theirs):.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(2021)
    effects = ar1(rng, 4000, (42,))
    slow = ar1(rng, 4000, (42,), rho_max=0.995)
    draws = {name: ar1(rng, 4167, shape) for name, shape in ZOIB.items()}
    arviz_min_ess(effects)  # ArviZ's imports and numba compilation, outside the timings
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}; medians of {args.repeat} runs")
    compare("_min_ess (4, 4000, 42)", lambda: arviz_min_ess(effects), lambda: _min_ess(effects), args.repeat)
    compare("_min_ess, slowly mixing", lambda: arviz_min_ess(slow), lambda: _min_ess(slow), args.repeat)
    compare(
        "diagnose, ZOiB (4 × 4,167, 78 par.)",
        lambda: list(arviz_per_parameter(draws).values()),
        lambda: list(diagnose(draws, "r_sys", 10_000, 0)["per_parameter"].values()),
        args.repeat,
    )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
