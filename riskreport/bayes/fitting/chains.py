"""The chains of a sampling batch: one nutpie run per chain, each with its own seed, in this process or on Dask.

nutpie seeds chain k of a run from the run's seed and k (stream k + 1 of a ChaCha8 generator), and a
run cannot be told which k its one chain is. So every chain here is a run of its own with one chain
and the seed `chain_seed(seed, batch, k)`: chain k's draws are then the same wherever it runs, in
this process beside the others (`LocalChains`) or in a Dask worker's process (`DaskChains`, one
`ChainActor` per chain), and, as before, do not depend on how many draws were asked for or on when
they were looked at.

On Dask each chain is an actor that starts a background nutpie run when it is created and answers
"the rows from row i on" (Arrow IPC bytes of nutpie's raw trace, warm-up included) while it runs;
the client polls, keeps the rows it has and asks only for new ones. The alternative, tasks that
sample up to a checkpoint and return, would warm up again for every checkpoint (nutpie cannot carry a
chain's state over from one run to the next), so each checkpoint would cost the whole chain so far.
A worker loads the model's numba callbacks from its riskreport cache (`compiled.compiled_model`, about 0.2 s
of CPU), or compiles them once per machine (6–7 s of CPU), for every data shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskreport.errors import ParameterError, RiskReportError

EXECUTORS = ("local", "dask")


def chain_seed(seed: int, batch: int, chain: int) -> int:
    """The nutpie seed of chain `chain` of batch `batch` of a fit seeded `seed` (numpy's `SeedSequence`)."""
    return int(np.random.SeedSequence([seed, batch, chain]).generate_state(1, dtype=np.uint64)[0])


@dataclass(frozen=True)
class ChainSpec:
    """What one chain's run needs besides the model: its seed, draws after warm-up and sampler settings."""

    seed: int
    draws: int
    tune: int
    target_accept: float
    low_rank: bool


def chain_specs(settings: dict, batch: int, length: int, low_rank: bool) -> list[ChainSpec]:
    """The runs of batch `batch`: `settings["chains"]` chains of at most `length` draws each."""
    return [
        ChainSpec(chain_seed(settings["seed"], batch, k), length, settings["tune"], settings["target_accept"], low_rank)
        for k in range(settings["chains"])
    ]


def check_executor(executor: str, scheduler: str | None) -> None:
    """`executor` is local or dask; dask has a scheduler address and Dask distributed installed."""
    if executor not in EXECUTORS:
        raise ParameterError(f"bayes_executor (executor of a fit) must be local or dask, got {executor!r}.")
    if executor == "local":
        return
    if not scheduler or not isinstance(scheduler, str):
        raise ParameterError(
            "bayes_executor dask needs the scheduler's address: scheduler tcp://HOST:8786 (-p scheduler ...)."
        )
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise RiskReportError("bayes_executor dask needs Dask distributed: pip install 'riskreport[dask]'.")


class _Chain:
    """One background nutpie run of one chain, looked at through its raw Arrow trace."""

    def __init__(self, compiled, spec: ChainSpec):
        import nutpie

        self.final = None
        self.sampler = nutpie.sample(
            compiled,
            draws=spec.draws,
            tune=spec.tune,
            chains=1,
            cores=1,
            seed=spec.seed,
            save_warmup=False,
            progress_bar=False,
            target_accept=spec.target_accept,
            low_rank_modified_mass_matrix=spec.low_rank,
            blocking=False,
            return_raw_trace=True,  # read as Arrow: a copy of the trace as ArviZ data costs seconds per look
        )

    def trace(self):
        """(draws, stats, ended): the chain's record batches so far (warm-up included) and whether it ended."""
        if self.final is None and _finished(self.sampler):
            self.final = self.sampler.wait().get_arrow_trace()  # a finished trace can be taken once
        draws, stats = self.final if self.final is not None else self.sampler.inspect().get_arrow_trace()
        return draws[0], stats[0], self.final is not None

    def stop(self) -> None:
        if self.final is None and not _finished(self.sampler):
            self.sampler.cancel()


class LocalChains:
    """The chains of a batch as nutpie runs in this process, all running at once (one thread each)."""

    def __init__(self, compiled, specs: list[ChainSpec]):
        self.chains: list[_Chain] = []
        try:
            for spec in specs:
                self.chains.append(_Chain(compiled, spec))
        except BaseException:
            self.stop()
            raise

    def trace(self):
        """(draws, stats, ended): one record batch per chain of each, and whether every chain ended."""
        looks = [chain.trace() for chain in self.chains]
        return [d for d, _, _ in looks], [s for _, s, _ in looks], all(e for _, _, e in looks)

    def stop(self) -> None:
        for chain in self.chains:
            chain.stop()


def _finished(sampler) -> bool:
    """Whether nutpie's background sampler has ended (its `is_finished` raises TimeoutError while it runs)."""
    try:
        return bool(sampler.is_finished)
    except TimeoutError:
        return False
