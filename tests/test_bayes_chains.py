"""Chains as nutpie runs of their own (`bayes.chains`) and on a Dask cluster (`bayes.dask_chains`): the seeds, where
the chains go, the options' errors, and the same draws on a LocalCluster as in this process."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from riskreport import bayes
from riskreport.bayes.fitting import chains, dask_chains
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
    from riskreport.bayes.fitting import compiled

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


def test_a_fit_with_divergences_samples_again_up_the_target_accept_ladder(tmp_path, monkeypatch):
    """Divergences at the first target_accept: the fit samples again at the next of `RETRY_TARGET_ACCEPTS` (0.95,
    then 0.99) with the same seed rule until it has none or the ladder ends, keeps the last draws, counts every
    attempt's gradients, and says so in `settings["retry"]` (kept by the draws cache); without divergences there
    is no second run and no "retry". TREC Web 2012's BHM-ZOiB still diverged at 0.95 and passed at 0.99."""
    from riskreport.bayes.fitting import sampling
    from riskreport.bayes.posterior.measures import remedy, retry_note

    assert sampling.RETRY_TARGET_ACCEPTS == (0.95, 0.99)
    data = bayes.scores_data(_table())
    calls: list[dict] = []
    rng = np.random.default_rng(0)
    divergences = {}  # target_accept -> divergences of an attempt at it

    def fake(model, data_, priors, settings, say, options, until_divergence):
        calls.append({**settings, "until_divergence": until_divergence})
        draws = {name: rng.normal(size=(3, 400)) for name in ("b", "sd_sys", "sd_top", "sigma")}
        draws.update(r_sys=rng.normal(size=(3, 400, 5)), r_top=rng.normal(size=(3, 400, 12)))
        return draws, [{"stopped": "target met", "gradients": 1000}], divergences.get(settings["target_accept"], 0)

    monkeypatch.setattr(sampling, "_sample_to_target", fake)
    divergences.update({0.8: 4, 0.95: 2})
    said: list[str] = []
    result = bayes.fit("gaussian", data, cache_dir=tmp_path, **{**SMALL, "progress": said.append})
    assert [c["target_accept"] for c in calls] == [0.8, 0.95, 0.99]
    assert [c["until_divergence"] for c in calls] == [True, True, False]  # the last attempt samples to its end
    assert len({c["seed"] for c in calls}) == 1
    assert result.settings["retry"] == {
        "from_target_accept": 0.8,
        "divergences": 4,
        "to_target_accept": 0.99,
        "attempts": [
            {"target_accept": 0.8, "divergences": 4},
            {"target_accept": 0.95, "divergences": 2},
            {"target_accept": 0.99, "divergences": 0},
        ],
    }
    assert result.settings["target_accept"] == 0.99 and result.diagnostics["divergences"] == 0
    assert result.diagnostics["gradients"] == 3000  # what the fit cost: every attempt
    assert [line.split(": ", 1)[-1] for line in said if "sampling again" in line] == [
        "4 divergent transitions at target_accept 0.8: sampling again at 0.95 (smaller steps)",
        "2 divergent transitions at target_accept 0.95: sampling again at 0.99 (smaller steps)",
    ]
    assert retry_note(result) == "sampled again at target_accept 0.95 and 0.99 after 4 divergences at 0.8 and 2 at 0.95"
    cached = bayes.fit("gaussian", data, cache_dir=tmp_path, **SMALL)
    assert cached.cached and cached.settings["retry"] == result.settings["retry"] and len(calls) == 3

    calls.clear()  # passes at 0.95: one retry
    divergences.clear()
    divergences.update({0.8: 1})
    once = bayes.fit("gaussian", data, use_cache=False, **{**SMALL, "seed": 5})
    assert [c["target_accept"] for c in calls] == [0.8, 0.95] and once.settings["retry"]["to_target_accept"] == 0.95
    assert retry_note(once) == "sampled again at target_accept 0.95 after 1 divergence at 0.8"

    calls.clear()  # diverges on every step: stops after 0.99 and fails its checks, the remedy another model
    divergences.update({0.8: 6, 0.95: 3, 0.99: 2})
    stuck = bayes.fit("gaussian", data, use_cache=False, **{**SMALL, "seed": 7})
    assert [c["target_accept"] for c in calls] == [0.8, 0.95, 0.99]
    assert not stuck.ok and stuck.diagnostics["divergences"] == 2 and stuck.settings["retry"]["divergences"] == 6
    assert remedy(stuck) == (
        "sampled again at target_accept 0.95 and 0.99 after 6 divergences at 0.8 and 3 at 0.95, it still diverged: "
        "the model does not suit these scores; report another (models, family, ppd_model)"
    )

    calls.clear()  # asked for 0.95: only 0.99 is above it
    calm = bayes.fit("gaussian", data, use_cache=False, **{**SMALL, "seed": 6}, target_accept=0.95)
    assert [c["target_accept"] for c in calls] == [0.95, 0.99] and calm.settings["retry"]["from_target_accept"] == 0.95
    calls.clear()
    top = bayes.fit("gaussian", data, use_cache=False, **{**SMALL, "seed": 8}, target_accept=0.99)
    assert len(calls) == 1 and "retry" not in top.settings  # already at the ladder's top
    assert calls[0]["until_divergence"] is False
    divergences.clear()
    calls.clear()
    quiet = bayes.fit("gaussian", data, use_cache=False, **{**SMALL, "seed": 9})
    assert len(calls) == 1 and "retry" not in quiet.settings


class _Revealed:
    """Made-up chains of `bayes.chains`' kind whose Arrow traces grow by `step` rows at each look: `tune` warm-up
    rows, then `draws` (iid normal) with a divergent transition at the post-warm-up draws `diverge` {chain: index}."""

    def __init__(self, specs, diverge: dict, step: int = 10, systems: int = 3, topics: int = 4):
        import pyarrow as pa
        from arro3.core import RecordBatch  # nutpie's traces: slicing past the end panics

        self.looks, self.step, self.shown = 0, step, 0
        self.draws, self.stats = [], []
        for k, spec in enumerate(specs):
            rng = np.random.default_rng(k)
            rows = spec.tune + spec.draws
            columns = {name: pa.array(rng.normal(size=rows)) for name in ("b", "sd_sys", "sd_top", "sigma")}
            fields = [pa.field(name, pa.float64()) for name in columns]
            for name, width in (("r_sys", systems), ("r_top", topics)):
                values = pa.array(rng.normal(size=rows * width))
                columns[name] = pa.ListArray.from_arrays(pa.array(np.arange(rows + 1) * width, pa.int32()), values)
                fields.append(pa.field(name, columns[name].type, metadata={b"shape": str(width).encode()}))
            self.draws.append(
                RecordBatch.from_arrow(pa.RecordBatch.from_arrays(list(columns.values()), schema=pa.schema(fields)))
            )
            diverging = np.zeros(rows, bool)
            if k in diverge:
                diverging[spec.tune + diverge[k]] = True
            stats = {"tuning": np.arange(rows) < spec.tune, "diverging": diverging, "n_steps": np.full(rows, 3)}
            self.stats.append(RecordBatch.from_arrow(pa.RecordBatch.from_pydict(stats)))
        self.rows = rows

    def trace(self):
        self.looks += 1
        self.shown = min(self.shown + self.step, self.rows)
        cut = [d.slice(0, self.shown) for d in self.draws], [s.slice(0, self.shown) for s in self.stats]
        return (*cut, self.shown == self.rows)

    def stop(self) -> None:
        pass


def test_an_attempt_that_will_be_sampled_again_stops_at_its_first_divergence(monkeypatch):
    """`until_divergence` (a higher target_accept is left): the attempt stops as soon as a divergent transition
    shows among the first `c` draws of a chain while checkpoint `c` is awaited (the kept draws would hold it), not
    after a full attempt; a divergence past the checkpoint that meets the target changes nothing, so a fit that
    passes keeps the same draws."""
    from riskreport.bayes.fitting import stopping

    monkeypatch.setattr(stopping._Run, "_pause", lambda self, c, least: 0.0)
    settings = dict(target_ess=200, max_draws=1000, chains=2, tune=50, seed=1, target_accept=0.8)  # checks at 50, 75…

    def sample(diverge, until_divergence):
        made = []

        def start(specs):
            made.append(_Revealed(specs, diverge))
            return made[-1]

        said: list[str] = []
        draws, batches, divergences = stopping.sample_until(start, "gaussian", settings, said.append, until_divergence)
        return draws, batches, divergences, made[0].shown, said

    draws, batches, divergences, shown, said = sample({1: 30}, True)  # chain 1 diverges at its 31st draw
    assert divergences == 1 and batches[-1]["stopped"] == "divergent transition"
    assert shown == 50 + 40 and draws["b"].shape == (2, 40)  # seen when 40 draws were there, short of the first check
    assert batches[-1]["gradients"] == 2 * 90 * 3 and "this attempt stops here" in said[-1]
    full, batches, divergences, shown, _ = sample({1: 30}, False)  # the last attempt: on to the target, and fails
    assert divergences == 1 and batches[-1]["stopped"] == "target met" and full["b"].shape[1] >= 100
    late = {0: 420}  # past the checkpoint that meets the target: not in the kept draws, with or without
    same, batches, divergences, shown, _ = sample(late, True)
    assert divergences == 0 and batches[-1]["stopped"] == "target met" and shown < 50 + 420
    assert all(np.array_equal(same[name], full[name]) for name in full)
    assert sample(late, False)[2] == 0


def test_the_stopping_check_screens_the_effects_without_changing_the_draws(monkeypatch):
    """At a checkpoint the ESS is computed `SCREEN` effects at a time, lowest first, until one misses the target
    (`stopping.effects_ess`): the same checkpoints pass, so the same draws, ESS and batches as computing every
    effect at every check, with far fewer effects computed."""
    from riskreport.bayes.fitting import stopping

    monkeypatch.setattr(stopping._Run, "_pause", lambda self, c, least: 0.0)
    settings = dict(target_ess=400, max_draws=4000, chains=2, tune=20, seed=1, target_accept=0.8)
    computed: list[int] = []
    bulk = stopping.ess_bulk

    def counted(values):
        computed.append(values.shape[-1])
        return bulk(values)

    monkeypatch.setattr(stopping, "ess_bulk", counted)

    def sample(screen):
        monkeypatch.setattr(stopping, "SCREEN", screen)
        computed.clear()
        start = lambda specs: _Revealed(specs, {}, step=25, systems=40)  # noqa: E731
        draws, batches, _ = stopping.sample_until(start, "gaussian", settings, lambda line: None)
        return draws, batches, sum(computed)

    screened, batches, effects = sample(stopping.SCREEN)
    full, full_batches, every = sample(10_000)
    assert all(np.array_equal(screened[name], full[name]) for name in full)
    timing = ("seconds", "cpu_seconds")
    assert [{k: v for k, v in b.items() if k not in timing} for b in batches] == [
        {k: v for k, v in b.items() if k not in timing} for b in full_batches
    ]
    assert batches[-1]["stopped"] == "target met" and every >= 3 * 40 and effects < every / 2, (effects, every)
