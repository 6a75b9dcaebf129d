"""The chains of a sampling batch on an existing Dask cluster: one actor per chain, its draws gathered as Arrow.

Each chain is a `ChainActor` on a worker (the chains are spread over the workers' threads, one
chain per thread, round robin over the workers): it loads or compiles the model there and starts its
own nutpie run with the chain's seed (`chains.chain_seed`), so its draws are those the same chain
gives in-process. The client (`DaskChains`) polls every actor for the rows of nutpie's raw trace it
does not have yet (Arrow IPC bytes, warm-up included) and keeps them: the stopping rule then checks
the gathered draws exactly as it checks local ones (`stopping`). Needs the `dask` extra; riskreport
must be importable on the workers.
"""

from __future__ import annotations

import threading

from riskreport.bayes.fitting.chains import ChainSpec, _Chain
from riskreport.errors import RiskReportError

_CLIENTS: dict[str, object] = {}  # one client per scheduler address for the process (a report's fits share it)
_CLIENTS_LOCK = threading.Lock()
CONNECT_TIMEOUT = "20s"  # how long a fit waits for the scheduler
STATS = (
    "tuning",
    "diverging",
    "n_steps",
)  # the sampler statistics the stopping rule reads (n_steps: the gradients); nutpie also stores the
# unconstrained draw and the gradient of every draw, 2/3 of the bytes: they stay on the worker


def client_of(scheduler: str):
    """A Dask client of the cluster at `scheduler` (kept for later fits), or a clear error."""
    from distributed import Client

    with _CLIENTS_LOCK:
        client = _CLIENTS.get(scheduler)
        if client is not None and getattr(client, "status", "") == "running":
            return client
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise RiskReportError(f"Cannot reach the Dask scheduler at {scheduler!r} (scheduler): {error}") from None
        _CLIENTS[scheduler] = client
        return client


def placement(workers: dict, chains: int) -> list[str]:
    """The worker of each chain: every worker's threads in turn (w0, w1, w0, w1, ... for two 1-thread workers
    and four chains), round robin when there are more chains than threads."""
    slots = [
        address
        for depth in range(max((info.get("nthreads", 1) for info in workers.values()), default=0))
        for address, info in sorted(workers.items())
        if info.get("nthreads", 1) > depth
    ]
    if not slots:
        raise RiskReportError("The Dask cluster has no workers to sample on.")
    return [slots[k % len(slots)] for k in range(chains)]


class ChainActor:
    """One chain on a Dask worker: the model loaded or compiled in the worker's process, a nutpie run started."""

    def __init__(self, model: str, data, priors: dict, centred, spec: ChainSpec):
        from riskreport.bayes.fitting.compiled import compiled_model

        compiled = compiled_model(model, data, priors, lambda message: None, tuple(centred))
        self.chain = _Chain(compiled, spec)

    def rows(self, start: int) -> tuple[bytes, bytes, bool]:
        """The draws and stats rows of the trace from row `start` on, as Arrow IPC bytes, and whether it ended."""
        draws, stats, ended = self.chain.trace()
        return _ipc(draws.slice(start)), _ipc(stats.slice(start), STATS), ended

    def stop(self) -> bool:
        self.chain.stop()
        return True


class DaskChains:
    """The chains of a batch as actors on the cluster at `scheduler`; `trace` gathers their rows."""

    def __init__(self, scheduler: str, job: tuple, specs: list[ChainSpec]):
        self.client = client_of(scheduler)
        workers = placement(self.client.scheduler_info()["workers"], len(specs))
        model, data, priors, centred = job
        self.futures = [
            self.client.submit(
                ChainActor, model, data, priors, centred, spec, actor=True, workers=[address], pure=False
            )
            for spec, address in zip(specs, workers)
        ]
        self.actors: list = []
        try:
            with self.client.as_current():  # the actors bind to this client (it is not the default one)
                self.actors = [future.result() for future in self.futures]
        except Exception as error:  # noqa: BLE001 - e.g. riskreport missing on a worker: one clear line
            self.stop()
            raise RiskReportError(
                f"Starting the chains on the Dask cluster failed: {type(error).__name__}: {error}"
            ) from None
        except BaseException:
            self.stop()
            raise
        self.parts: list[tuple[list, list]] = [([], []) for _ in specs]
        self.rows = [0] * len(specs)
        self.ended = [False] * len(specs)

    def trace(self):
        """(draws, stats, ended): one record batch per chain of each (all rows so far), and whether all ended."""
        import pyarrow

        asked = {k: actor.rows(self.rows[k]) for k, actor in enumerate(self.actors) if not self.ended[k]}
        for k, future in asked.items():
            try:
                draws, stats, self.ended[k] = future.result()
            except Exception as error:  # noqa: BLE001 - a lost worker, a failed chain: one clear line
                raise RiskReportError(
                    f"Chain {k + 1} on the Dask cluster failed: {type(error).__name__}: {error}"
                ) from None
            draws, stats = _batch(draws), _batch(stats)
            if draws.num_rows or not self.parts[k][0]:
                self.parts[k][0].append(draws)
                self.parts[k][1].append(stats)
            self.rows[k] += draws.num_rows
        together = [(pyarrow.concat_batches(draws), pyarrow.concat_batches(stats)) for draws, stats in self.parts]
        self.parts = [([d], [s]) for d, s in together]
        return [_arro3(d) for d, _ in together], [_arro3(s) for _, s in together], all(self.ended)

    def stop(self) -> None:
        for actor in self.actors:
            try:
                actor.stop().result()
            except Exception:  # noqa: BLE001 - a lost worker has stopped its chain already
                pass
        self.client.cancel(self.futures)
        self.actors, self.futures = [], []


def _ipc(batch, columns: tuple[str, ...] | None = None) -> bytes:
    """nutpie's record batch (arro3) as Arrow IPC stream bytes, only `columns` if given."""
    import pyarrow

    batch = pyarrow.record_batch(batch)  # through the Arrow PyCapsule interface, no copy
    if columns is not None:
        batch = batch.select(list(columns))
    sink = pyarrow.BufferOutputStream()
    with pyarrow.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _batch(data: bytes):
    import pyarrow

    return pyarrow.ipc.open_stream(data).read_next_batch()  # one batch was written, perhaps of no rows


def _arro3(batch):
    """A pyarrow record batch as the arro3 record batch nutpie gives in-process (`stopping._column` reads those)."""
    from arro3.core import RecordBatch

    return RecordBatch.from_arrow(batch)
