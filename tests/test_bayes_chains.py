"""Chains as nutpie runs of their own (`bayes.chains`) and on a Dask cluster (`bayes.dask_chains`): the seeds, where
the chains go, the options' errors, and the same draws on a LocalCluster as in this process."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from riskreport import bayes
from riskreport.bayes import chains, dask_chains
from riskreport.errors import ParameterError, RiskReportError

SMALL = dict(target_ess=300, max_draws=2000, chains=3, tune=150, seed=5, criteria=False, progress=None)


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    effects, topics = np.linspace(-0.4, 0.4, 5), rng.normal(0, 0.6, 12)
    y = effects[:, None] + topics[None, :] + rng.normal(0, 0.3, (5, 12))
    return pd.DataFrame(y, index=[f"s{i}" for i in range(5)], columns=[f"t{j}" for j in range(12)])


def test_chain_seeds_are_fixed_and_distinct():
    seeds = {chains.chain_seed(2026, batch, chain) for batch in range(3) for chain in range(8)}
    assert len(seeds) == 24 and all(0 <= s < 2**64 for s in seeds)
    assert chains.chain_seed(2026, 1, 2) == chains.chain_seed(2026, 1, 2) != chains.chain_seed(2027, 1, 2)
    specs = chains.chain_specs({"seed": 7, "chains": 3, "tune": 100, "target_accept": 0.9}, 1, 50, False)
    assert [s.seed for s in specs] == [chains.chain_seed(7, 1, k) for k in range(3)] and specs[0].draws == 50


def test_chains_are_spread_over_the_workers_threads():
    workers = {"tcp://b:1": {"nthreads": 1}, "tcp://a:1": {"nthreads": 2}}
    assert dask_chains.placement(workers, 4) == ["tcp://a:1", "tcp://b:1", "tcp://a:1", "tcp://a:1"]
    assert dask_chains.placement({"tcp://a:1": {"nthreads": 1}}, 2) == ["tcp://a:1", "tcp://a:1"]
    with pytest.raises(RiskReportError, match="no workers"):
        dask_chains.placement({}, 2)


def test_executor_options_are_checked():
    data = bayes.scores_data(_table())
    with pytest.raises(ParameterError, match=r"bayes_executor \(executor of a fit\) must be local or dask"):
        bayes.fit("gaussian", data, executor="ray", use_cache=False, **SMALL)
    with pytest.raises(ParameterError, match="needs the scheduler's address"):
        bayes.fit("gaussian", data, executor="dask", use_cache=False, **SMALL)


# Under load a worker process that loads the model holds the GIL, and starting two of them takes a while: the cluster
# and the client wait for them (distributed's own 30-s comm timeouts and riskreport's 20-s connect timeout are made
# for an idle machine), so a slow machine is slower, not a failed test.
PATIENT = {"distributed.comm.timeouts.connect": "300s", "distributed.comm.timeouts.tcp": "300s"}
# The draws are bit for bit those of this process once PyTensor's compile cache is warm; on a fresh machine (a cold
# cache: PYTENSOR_FLAGS=base_compiledir=<new folder>) the workers' draws were up to 7.6e-12 from this process's, from
# the first draw on, with the same stop: rounding in the compiled model, not another chain. 1e-9 is far above that
# and far below the Monte Carlo error of any reported number (~1e-2).
ROUNDING = 1e-9


def test_a_chain_gives_the_same_draws_on_a_dask_cluster_as_in_process(tmp_path, monkeypatch):
    """Each chain is a nutpie run of its own, seeded by (seed, batch, chain): on two worker processes of a
    LocalCluster the gathered draws equal those of this process (to `ROUNDING`), and so does the stop, exactly."""
    distributed = pytest.importorskip("distributed")
    import dask

    monkeypatch.setattr(dask_chains, "CONNECT_TIMEOUT", PATIENT["distributed.comm.timeouts.connect"])
    data = bayes.scores_data(_table())
    local = bayes.fit("gaussian", data, cache_dir=tmp_path, **SMALL)  # compiles and stores the model
    bayes.FitCache(tmp_path).path(local.key).unlink()  # keep the compiled model, not the draws
    with (
        dask.config.set(PATIENT),
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
    ):
        remote = bayes.fit(
            "gaussian", data, cache_dir=tmp_path, executor="dask", scheduler=cluster.scheduler_address, **SMALL
        )
    # what must be equal: the key, each batch's draws and stop (not its seconds), then every draw
    same = ("chains", "draws_per_chain", "mass_matrix", "divergences", "stopped")
    assert remote.key == local.key
    assert [{k: b[k] for k in same} for b in remote.batches] == [{k: b[k] for k in same} for b in local.batches]
    assert set(remote.draws) == set(local.draws)
    for name, values in local.draws.items():
        np.testing.assert_allclose(remote.draws[name], values, rtol=ROUNDING, atol=ROUNDING, err_msg=name)
    assert len({values.tobytes() for values in local.draws["b"]}) == SMALL["chains"]  # the chains differ


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(dask_chains, "CONNECT_TIMEOUT", "1s")
    data = bayes.scores_data(_table())
    with pytest.raises(RiskReportError, match="Cannot reach the Dask scheduler"):
        bayes.fit("gaussian", data, executor="dask", scheduler="tcp://127.0.0.1:9", use_cache=False, **SMALL)


def test_a_chain_that_cannot_start_on_the_cluster_is_one_clear_error(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from riskreport.bayes import compiled

    def broken(*args, **kwargs):
        raise RuntimeError("no compiler on this worker")

    monkeypatch.setattr(compiled, "compiled_model", broken)  # the workers are threads of this process here
    data = bayes.scores_data(_table())
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        with pytest.raises(
            RiskReportError, match="Starting the chains on the Dask cluster failed: RuntimeError: no compiler"
        ):
            bayes.fit("gaussian", data, executor="dask", scheduler=cluster.scheduler_address, use_cache=False, **SMALL)


def test_a_fit_with_divergences_samples_again_at_a_higher_target_accept(tmp_path, monkeypatch):
    """Divergences at the first target_accept: the fit samples again at `RETRY_TARGET_ACCEPT` with the same seed
    rule, keeps the second draws, and says so in `settings["retry"]` (kept by the draws cache); without
    divergences there is no second run and no "retry"."""
    from riskreport.bayes import sampling

    data = bayes.scores_data(_table())
    calls: list[dict] = []
    rng = np.random.default_rng(0)

    def fake(model, data_, priors, settings, say, options):
        calls.append(dict(settings))
        draws = {name: rng.normal(size=(3, 400)) for name in ("b", "sd_sys", "sd_top", "sigma")}
        draws.update(r_sys=rng.normal(size=(3, 400, 5)), r_top=rng.normal(size=(3, 400, 12)))
        return draws, [{"stopped": "target met"}], 4 if len(calls) == 1 else 0

    monkeypatch.setattr(sampling, "_sample_to_target", fake)
    result = bayes.fit("gaussian", data, cache_dir=tmp_path, **SMALL)
    assert [c["target_accept"] for c in calls] == [0.8, sampling.RETRY_TARGET_ACCEPT]
    assert calls[0]["seed"] == calls[1]["seed"]
    assert result.settings["retry"] == {"from_target_accept": 0.8, "divergences": 4, "to_target_accept": 0.95}
    assert result.settings["target_accept"] == 0.95 and result.diagnostics["divergences"] == 0
    cached = bayes.fit("gaussian", data, cache_dir=tmp_path, **SMALL)
    assert cached.cached and cached.settings["retry"] == result.settings["retry"] and len(calls) == 2
    calls.clear()
    calm = bayes.fit("gaussian", data, use_cache=False, **{**SMALL, "seed": 6}, target_accept=0.95)
    assert len(calls) == 1 and "retry" not in calm.settings  # already at the retry's target_accept
