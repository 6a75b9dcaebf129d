"""Benchmark: ns of CPU per interior score of BHM-ZOiB's Beta terms (value and gradient), two forms of log Γ and ψ.

Side by side in one process, on the same 27,390 scores (the 110 × 249 campaign's size) and three precisions φ:

- `shift loop`: the shift to z ≥ 7 by a loop whose trip count depends on x (the kernel of issue 32);
- `shift 7`: always seven steps, unrolled, no branch on x (`riskreport.bayes.modelling._kernel_terms._shift`, what
  riskreport samples).

Both then take log Γ(z) and ψ(z) from one Stirling series (`_kernel_terms._stirling`), the two shapes sharing one log
and one division. Each is checked against SciPy's gammaln and digamma (relative error printed) first.

    python tests/benchmarks/bench_bayes_gradient.py [--seconds 1.0] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numba
import numpy as np
from scipy import special

from riskreport.bayes.modelling import _kernel_terms


@numba.njit(inline="always", error_model="numpy")
def _shift_loop(x):
    p, d = 1.0, 0.0
    while x < 7.0:
        d = d * x + p
        p *= x
        x += 1.0
    return x, p, d


def _interior(shift):
    @numba.njit(error_model="numpy")
    def interior(eta, log_y, log1m_y, phi, g_eta):
        value, g_phi = 0.0, 0.0
        for i in range(eta.size):
            mu = 1.0 / (1.0 + math.exp(-eta[i]))
            a = mu * phi
            c = phi - a
            z_a, p_a, d_a = shift(a)
            z_c, p_c, d_c = shift(c)
            lgamma_a, psi_a = _kernel_terms._stirling(z_a)
            lgamma_c, psi_c = _kernel_terms._stirling(z_c)
            inverse = 1.0 / (p_a * p_c)
            psi_a -= d_a * p_c * inverse
            psi_c -= d_c * p_a * inverse
            value += (a - 1.0) * log_y[i] + (c - 1.0) * log1m_y[i] - lgamma_a - lgamma_c + math.log(p_a * p_c)
            g_eta[i] = a * (1.0 - mu) * (log_y[i] - log1m_y[i] - psi_a + psi_c)
            g_phi += mu * (log_y[i] - psi_a) + (1.0 - mu) * (log1m_y[i] - psi_c)
        return value, g_phi

    return interior


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
    forms = {"shift loop": _interior(_shift_loop), "shift 7": _interior(_kernel_terms._shift)}
    rng = np.random.default_rng(0)
    n = 27_390
    y = rng.beta(2, 3, n)
    log_y, log1m_y = np.log(y), np.log1p(-y)
    for phi in (0.5, 5.0, 30.0):
        eta = rng.normal(-0.5, 1.0, n)
        mu = special.expit(eta)
        a, c = mu * phi, phi - mu * phi
        value = np.sum((a - 1) * log_y + (c - 1) * log1m_y - special.gammaln(a) - special.gammaln(c))
        grad = a * (1 - mu) * (log_y - log1m_y - special.digamma(a) + special.digamma(c))
        line = [f"φ = {phi:g}:"]
        for name, form in forms.items():
            g = np.empty(n)
            ours = form(eta, log_y, log1m_y, phi, g)[0]
            error = max(abs(ours - value) / abs(value), float(np.max(np.abs(g - grad)) / np.max(np.abs(grad))))
            times = []
            for _ in range(args.rounds):
                calls, started = 0, time.process_time()
                while time.process_time() - started < args.seconds:
                    form(eta, log_y, log1m_y, phi, g)
                    calls += 1
                times.append((time.process_time() - started) / calls / n * 1e9)
            line.append(f"{name} {statistics.median(times):5.1f} ns per score (error {error:.0e})")
        print("  ".join(line))
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
