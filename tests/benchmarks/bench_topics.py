"""Scale in topics: an MS MARCO dev-sized score table (30 systems x 6,980 topics, generated) through every table
of a risk report (`rr.analyse(frame).tables`), in child processes, with the bootstrap's resample counts built
in blocks of resamples straight into the weights of the bootstrap means (`bootstrap.drawn_weights`) and the
randomisation test's signs in blocks (`inference.sign_flips`), and, side by side, as before (the reference: every
draw of B x c at once, the counts and the weights both held, `rng.choice` for the signs).

Prints per topic count: the peak RSS of the child (ru_maxrss) after each table, the CPU time of the child and the
ratio new/reference; the load average beside it (wall time is not used). Equal tables are asserted.

    python tests/benchmarks/bench_topics.py [--systems 30] [--topics 1000 3000 6980] [--samples 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
import numpy as np, pandas as pd
import riskreport as rr
from riskreport.stats import bootstrap

systems, topics, samples, reference, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
if reference:  # the former draws: every draw, cell index and count of B x c at once, then the weights beside them
    from riskreport.stats import inference
    def resample_counts(n_topics, samples, rng):
        draws = rng.integers(0, n_topics, size=(samples, n_topics))
        cells = (np.arange(samples)[:, None] * n_topics + draws).reshape(-1)
        return np.bincount(cells, minlength=samples * n_topics).reshape(samples, n_topics).astype(np.float64)
    def drawn_weights(n_topics, samples, rng):
        counts = resample_counts(n_topics, samples, rng)
        return bootstrap.resample_weights(counts)
    def sign_flips(n_topics, samples, rng):
        return rng.choice([-1.0, 1.0], size=(samples, n_topics)), False
    bootstrap.resample_counts, bootstrap.drawn_weights, inference.sign_flips = resample_counts, drawn_weights, sign_flips
rng = np.random.default_rng(7)
skill = rng.normal(0.35, 0.05, systems)
scores = np.clip(skill[:, None] + rng.normal(0, 0.25, (systems, topics)), 0, 1)
frame = pd.DataFrame(scores, index=[f"s{i:02d}" for i in range(systems)], columns=[str(t) for t in range(topics)])
a = rr.analyse(frame, baseline="s00", alphas=[0, 1, 5, 10], bootstrap_samples=samples)
peaks = {}
for name in a.table_names:
    table = a.table(name)
    peaks[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if name in ("risk", "bootstrap"):
        table.to_csv(f"{out}-{name}.csv", index=False)
print(json.dumps({"peaks": peaks, "cpu": time.process_time()}))
"""


def child(systems: int, topics: int, samples: int, reference: bool, out: Path, cache: Path) -> dict:
    env = {**os.environ, "RISKREPORT_CACHE": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(systems), str(topics), str(samples), "1" if reference else "0", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=30)
    parser.add_argument("--topics", type=int, nargs="+", default=[1000, 3000, 6980])
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for topics in args.topics:
            child(args.systems, topics, 10, False, root / "warm", root / "cache")  # the inputs' cache folder, once
            new = child(args.systems, topics, args.samples, False, root / "new", root / "cache")
            old = child(args.systems, topics, args.samples, True, root / "old", root / "cache")
            for name in ("risk", "bootstrap"):
                same = (root / f"new-{name}.csv").read_bytes() == (root / f"old-{name}.csv").read_bytes()
                assert same, f"{name} differs"
            print(f"{args.systems} systems x {topics} topics, B = {args.samples}; load {os.getloadavg()[0]:.1f}")
            for name in new["peaks"]:
                ratio = new["peaks"][name] / old["peaks"][name]
                print(
                    f"  peak RSS after {name:<14} {new['peaks'][name]:8.0f} MB  (reference {old['peaks'][name]:8.0f} MB, ratio {ratio:.2f})"
                )
            print(f"  CPU time {new['cpu']:.1f} s (reference {old['cpu']:.1f} s, ratio {new['cpu'] / old['cpu']:.2f})")


if __name__ == "__main__":
    main()
