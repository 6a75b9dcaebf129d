"""Scale in topics: an MS MARCO dev-sized score table (30 systems x 6,980 topics, generated) through every table
of a risk report (`rr.analyse(frame).tables`), in child processes, with the bootstrap's weights and the
randomisation test's signs streamed a block at a time (`riskreport.stats.resampling`: `DrawnWeights`,
`flip_blocks`), and, side by side, the reference it replaces: the same resamples built in blocks but held whole
(the weights c x B, `bootstrap.drawn_weights`; the signs B x c).

Prints per topic count: the peak RSS of the child (ru_maxrss) after each table, the CPU time of the child and the
ratio new/reference; the load average beside it (wall time is not used). Tables equal to 1e-12 are asserted.

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

import pandas as pd

CHILD = r"""
import json, resource, sys, time
import numpy as np, pandas as pd
import riskreport as rr
from riskreport.stats import bootstrap

systems, topics, samples, reference, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
if reference:  # held whole: the bootstrap's weights (c x B) and the randomisation test's signs (B x c)
    from riskreport.stats import inference, resampling
    class HeldWeights(resampling.DrawnWeights):
        def blocks(self):
            yield 0, bootstrap.drawn_weights(self.n_topics, self.samples, np.random.default_rng(self.seed)).T
    def flip_blocks(n_topics, samples, rng):
        yield 0, np.concatenate([block for _, block in resampling.flip_blocks(n_topics, samples, rng)])
    bootstrap.DrawnWeights, inference.flip_blocks = HeldWeights, flip_blocks
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
                new_table, old_table = (pd.read_csv(root / f"{which}-{name}.csv") for which in ("new", "old"))
                pd.testing.assert_frame_equal(new_table, old_table, check_exact=False, rtol=1e-12, atol=1e-14)
            print(f"{args.systems} systems x {topics} topics, B = {args.samples}; load {os.getloadavg()[0]:.1f}")
            for name in new["peaks"]:
                ratio = new["peaks"][name] / old["peaks"][name]
                print(
                    f"  peak RSS after {name:<14} {new['peaks'][name]:8.0f} MB  (reference {old['peaks'][name]:8.0f} MB, ratio {ratio:.2f})"
                )
            print(f"  CPU time {new['cpu']:.1f} s (reference {old['cpu']:.1f} s, ratio {new['cpu'] / old['cpu']:.2f})")


if __name__ == "__main__":
    main()
