"""Benchmark of chains on a Dask cluster (`bayes.dask_chains`) against the same fit in-process, side by side.

One generated data set (S systems × T topics of Gaussian scores, `--systems`, `--topics`), one fit to a small
ESS target: first in this process (the model compiled and stored in a temporary cache, then sampled again with
the compiled model in memory: the reference), then on a `distributed.LocalCluster` of `--workers` processes of
one thread each, whose workers load the stored model. Prints wall and CPU seconds of the client and of the
workers (their resource usage once the cluster has closed: process start, imports, the model loaded from
the cache, sampling), the same fit again on the warm cluster, the bytes of Arrow the client received, and
whether the draws are identical. The 2 cores are shared: print the load beside the numbers.

    .venv/bin/python tests/benchmarks/bench_dask_chains.py --chains 4 --workers 2
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np
import pandas as pd


def _data(systems: int, topics: int):
    from riskreport import bayes

    rng = np.random.default_rng(1)
    y = (
        rng.normal(0, 0.4, systems)[:, None]
        + rng.normal(0, 0.6, topics)[None, :]
        + rng.normal(0, 0.3, (systems, topics))
    )
    table = pd.DataFrame(y, index=[f"s{i}" for i in range(systems)], columns=[f"t{j}" for j in range(topics)])
    return bayes.scores_data(table)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--topics", type=int, default=30)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--target", type=int, default=2000)
    args = parser.parse_args()

    import distributed

    from riskreport import bayes
    from riskreport.bayes.fitting import dask_chains

    data = _data(args.systems, args.topics)
    options = dict(target_ess=args.target, chains=args.chains, seed=3, criteria=False, progress=None)
    with tempfile.TemporaryDirectory() as cache:
        bayes.fit("gaussian", data, cache_dir=cache, use_cache=True, **options)  # compile and store the model
        wall, cpu = time.time(), time.process_time()
        local = bayes.fit("gaussian", data, use_cache=False, **options)
        local_wall, local_cpu = time.time() - wall, time.process_time() - cpu
        received = [0]
        original = dask_chains._batch

        def counted(payload: bytes):
            received[0] += len(payload)
            return original(payload)

        dask_chains._batch = counted
        before = _children_cpu()
        with distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            bayes.FitCache(cache).path(local.key).unlink(missing_ok=True)
            wall, cpu = time.time(), time.process_time()
            remote = bayes.fit(
                "gaussian", data, cache_dir=cache, executor="dask", scheduler=cluster.scheduler_address, **options
            )
            dask_wall, dask_cpu = time.time() - wall, time.process_time() - cpu
            bayes.FitCache(cache).path(remote.key).unlink(missing_ok=True)
            wall = time.time()
            again = bayes.fit(
                "gaussian", data, cache_dir=cache, executor="dask", scheduler=cluster.scheduler_address, **options
            )
            warm_wall = time.time() - wall
            same_again = all(np.array_equal(again.draws[k], remote.draws[k]) for k in remote.draws)
        workers_cpu = _children_cpu() - before
    same = all(np.array_equal(local.draws[k], remote.draws[k]) for k in local.draws)
    print(
        f"load {os.getloadavg()}; {args.systems} systems x {args.topics} topics, {args.chains} chains, ESS {args.target}"
    )
    print(f"draws {local.n_draws:,} (in-process) / {remote.n_draws:,} (Dask); identical: {same}")
    print(f"in-process: wall {local_wall:.1f} s, CPU {local_cpu:.1f} s (model in memory)")
    print(
        f"Dask, {args.workers} workers: wall {dask_wall:.1f} s, client CPU {dask_cpu:.1f} s, workers' CPU "
        f"{workers_cpu:.1f} s (process start, imports, model loaded from the cache, sampling), "
        f"{received[0] / 1e6:.2f} MB of Arrow received"
    )
    print(
        f"the same fit again on the warm cluster (model in the workers' memory): wall {warm_wall:.1f} s; identical: {same_again}"
    )
    print(
        f"ratio Dask / in-process wall: {dask_wall / local_wall:.2f} (first fit), {warm_wall / local_wall:.2f} (warm cluster)"
    )


if __name__ == "__main__":
    main()
