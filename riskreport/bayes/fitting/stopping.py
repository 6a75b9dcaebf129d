"""Sampling until the ESS target holds: NUTS runs in the background and stops at the first checkpoint that meets it.

A batch starts its chains, each a nutpie run of its own (`chains`: in this process, or on a Dask
cluster, `dask_chains`), with room for every draw `max_draws` still allows and all running at once. At fixed draw counts per chain (the checkpoints: the first at half the target's draws, then
every `check_every` draws) the first `c` draws of every chain are checked: when every system effect
has bulk and tail ESS ≥ the target and every parameter R̂ < 1.01 (the report's checks; divergences
do not go away with more draws), the sampler is stopped and exactly those draws are kept. A
chain's draws do not depend on how many draws were asked for, on when it was looked at or where
it ran (each run is seeded by the fit's seed, the batch and the chain: `chains.chain_seed`), so the kept draws are the same in every run with the same seed: stopping by
measurement keeps fits reproducible and cacheable. A batch that mixes poorly (ESS per draw below
`LOW_RANK_BELOW` at the checkpoint where the first guess of the draws needed is reached) is stopped
and continued by a batch with a low-rank mass matrix, as before.

An attempt that will be sampled again if it diverges (`until_divergence=True`: a higher target_accept is
left, `sampling.RETRY_TARGET_ACCEPTS`) stops as soon as a divergent transition shows among the first `c`
draws of a chain while the next checkpoint `c` is awaited: every earlier checkpoint failed, so the kept
draws would have held it, and the attempt would have failed whatever came after. The retry then starts at
once instead of after a full attempt; the fits that pass are the same draws as without the early stop.
"""

from __future__ import annotations

import math
import time

import numpy as np

from riskreport.bayes.diagnosis.convergence import ess_bulk, ess_tail, rhat_rank
from riskreport.bayes.diagnosis.diagnostics import RHAT_MAX
from riskreport.bayes.fitting.chains import chain_specs
from riskreport.bayes.fitting.fit_progress import RUNNING, duration, running_line, time_left
from riskreport.bayes.modelling.models import LABELS, sampled_variables

INITIAL_EFFICIENCY = 0.6  # ESS per draw guessed for the first batch (measured 0.55–0.9 on TREC-COVID)


LOW_RANK_BELOW = 0.25  # ESS per draw under which later batches adapt a low-rank mass matrix (correlated effects)


CHECKS_PER_TARGET = 20  # checkpoints per target's worth of draws: a stop overshoots the target by ≤ 5 % of it


POLL_SECONDS = 0.5  # how often a running batch is looked at


SAY_EVERY = 15.0  # seconds between progress lines of one batch


SCREEN = 8  # effects whose ESS a checkpoint computes at a time, the lowest at the last full check first


def max_rhat(draws: dict[str, np.ndarray]) -> float:
    """The largest rank-normalised split R̂ over every parameter the report checks (all but the z_ auxiliaries)."""
    return max(float(np.max(rhat_rank(values))) for name, values in draws.items() if not name.startswith("z_"))


def check_every(target: int, chains: int) -> int:
    """Draws per chain between two checkpoints."""
    return max(25, math.ceil(target / chains / CHECKS_PER_TARGET))


def checkpoints(first: int, step: int, last: int) -> list[int]:
    """The draw counts per chain at which a batch of at most `last` draws is checked: `first`, every `step`, `last`."""
    first = max(1, min(first, last))
    return sorted(set(range(first, last, step)) | {last})


def sample_until(start, model: str, settings: dict, say, until_divergence: bool = False):
    """(draws, batches, divergences): sample the chains `start(specs)` starts until every system effect reaches
    `settings["target_ess"]` or `max_draws` is used; each batch is stopped at its first checkpoint that meets the
    target. The first batch adapts a diagonal mass matrix; one that mixes poorly is followed by a batch with a
    low-rank one. `until_divergence`: stop at the first divergent transition the kept draws would hold (the
    caller samples again at a higher target_accept; the draws returned are then short of the target)."""
    chains, target = settings["chains"], settings["target_ess"]
    low_rank = False
    effects = "b" if model.startswith("paired") else "r_sys"
    names = sampled_variables(model)
    room = settings["max_draws"] // chains
    step = check_every(target, chains)
    guess = max(1, min(math.ceil(target / chains / INITIAL_EFFICIENCY), room))
    parts: list[dict[str, np.ndarray]] = []
    batches: list[dict] = []
    divergences = 0
    while True:
        done = parts[0][names[0]].shape[1] if parts else 0
        mass = "low-rank" if low_rank else "diagonal"
        say(
            f"{LABELS[model]}: sampling {chains} chains (+ {settings['tune']:,} warm-up, {mass} mass matrix), "
            f"batch {len(batches) + 1}: until the ESS target ({target:,}), at most {room - done:,} draws per chain"
        )
        first = max(1, math.ceil(target / chains / 2) - done)  # an ESS above twice the draws is never met in practice
        switch_at = None if low_rank else guess - done
        say(
            f"{RUNNING}{LABELS[model]}: batch {len(batches) + 1}, {chains} chains: {settings['tune']:,} warm-up "
            f"iterations each, then draws until the ESS target (0 s)"
        )
        outcome = _batch(
            start,
            settings,
            len(batches),
            room - done,
            low_rank,
            names,
            parts,
            effects,
            say,
            checkpoints(first, step, room - done),
            switch_at,
            until_divergence,
        )
        kept, draws, batch_divergences, bulk, tail, seconds, switch, work, diverged = outcome
        parts.append(kept)
        divergences += batch_divergences
        per_chain = kept[names[0]].shape[1]
        batches.append(
            {
                "chains": chains,
                "draws_per_chain": per_chain,
                "mass_matrix": mass,
                "seconds": round(seconds, 2),
                **work,
                "divergences": batch_divergences,
                "min_ess_bulk": bulk,
                "min_ess_tail": tail,
                "stopped": "divergent transition"
                if diverged
                else "switch to low-rank"
                if switch
                else "target met"
                if min(bulk, tail) >= target
                else "max_draws",
            }
        )
        total = draws["b"].size
        if diverged:
            say(
                f"{LABELS[model]}: {batch_divergences} divergent transition{'s' if batch_divergences != 1 else ''} "
                f"in the first {total:,} draws after {seconds:.1f} s: this attempt stops here"
            )
            return draws, batches, divergences
        say(
            f"{LABELS[model]}: {total:,} draws, min ESS of the system effects bulk {bulk:,.0f} / tail {tail:,.0f} "
            f"(target {target:,}) after {seconds:.1f} s"
        )
        if switch:
            low_rank = True  # strongly correlated effects (e.g. near-identical systems): a low-rank matrix mixes better
            continue
        if min(bulk, tail) < target:
            say(f"{LABELS[model]}: max_draws = {settings['max_draws']:,} reached before the ESS target")
        return draws, batches, divergences


def _batch(start, settings, batch, length, low_rank, names, parts, effects, say, points, switch_at, until_divergence):
    """Run one batch of at most `length` draws per chain; (kept draws, all draws so far, divergences, bulk ESS,
    tail ESS, seconds, switch, work, diverged). `start(specs)` starts the chains (`chains.LocalChains`,
    `dask_chains.DaskChains`). `until_divergence`: stop (diverged=True) once a divergent transition shows among
    the first `c` draws of a chain while checkpoint `c` is awaited, keeping the draws every chain has."""
    target = settings["target_ess"]
    started, cpu = time.time(), time.process_time()
    run = _Run(say, settings["tune"], start(chain_specs(settings, batch, length, low_rank)), started)
    looks: list[tuple[float, float]] = []  # (seconds, min ESS) at each checkpoint: the time left
    last = None  # each effect's min(bulk, tail) ESS at the latest checkpoint that computed it: the screening order
    try:
        for c in points:
            kept, diverging = run.first(c, names, until_divergence)
            draws = {name: np.concatenate([p[name] for p in parts] + [kept[name]], axis=1) for name in names}
            if until_divergence and diverging:
                work = {"gradients": run.gradients, "cpu_seconds": round(time.process_time() - cpu, 2)}
                return kept, draws, diverging, 0.0, 0.0, time.time() - started, False, work, True
            full = c == points[-1] or (switch_at is not None and c >= switch_at)  # the switch needs the exact min
            bulk, tail, last = effects_ess(draws[effects], target, None if full else last)
            reached, total = min(bulk, tail), draws["b"].size
            switch = switch_at is not None and c >= switch_at and reached < target and reached / total < LOW_RANK_BELOW
            rhat = max_rhat(draws) if reached >= target else None
            if (rhat is not None and rhat < RHAT_MAX) or c == points[-1] or switch:
                work = {"gradients": run.gradients, "cpu_seconds": round(time.process_time() - cpu, 2)}
                return kept, draws, diverging, bulk, tail, time.time() - started, switch, work, False
            if not looks and not parts and run.seen is not None:  # ESS 0 when the slowest chain's draws began
                looks.append((run.seen[0] - started, 0.0))
            looks.append((time.time() - started, reached))
            run.tell(running_line(total, bulk, tail, target, looks[-1][0], time_left(looks, target), rhat))
        raise AssertionError("unreachable: the last checkpoint always returns")
    finally:
        run.stop()


def effects_ess(values: np.ndarray, target: int, last: np.ndarray | None) -> tuple[float, float, np.ndarray]:
    """(smallest bulk ESS, smallest tail ESS, each effect's min of the two) of `values` (chains, draws, *effects).

    With `last` (the effects' ESS at an earlier check) the effects are taken `SCREEN` at a time, lowest `last`
    first, and the work stops at the first batch with an ESS below `target`: the check fails whatever the others
    are, and the smallest ESS returned is then that of the effects computed (the others keep `last`). Without
    `last`, or when every effect reaches `target`, every effect is computed: the same values as all at once.
    """
    columns = values.reshape(values.shape[:2] + (-1,))
    if last is None:
        every_bulk, every_tail = ess_bulk(columns), ess_tail(columns)
        return float(every_bulk.min()), float(every_tail.min()), np.minimum(every_bulk, every_tail)
    last = last.copy()
    bulk, tail = float("inf"), float("inf")
    order = np.argsort(last, kind="stable")
    for start in range(0, len(order), SCREEN):
        some = order[start : start + SCREEN]
        b, t = ess_bulk(columns[:, :, some]), ess_tail(columns[:, :, some])
        bulk, tail = min(bulk, float(b.min())), min(tail, float(t.min()))
        last[some] = np.minimum(b, t)
        if min(bulk, tail) < target:
            break
    return bulk, tail, last


class _Run:
    """The background nutpie runs of a batch's chains, looked at through their raw Arrow traces (a record batch
    per chain): `chains.LocalChains` or `dask_chains.DaskChains`."""

    def __init__(self, say, tune: int, chains, started: float):
        self.say, self.tune, self.chains, self.started = say, tune, chains, started
        self.seen: tuple[float, int] | None = None  # (time, draws of the slowest chain) at the first look with draws
        self.said = time.time()
        self.gradients = 0  # leapfrog steps (gradient evaluations) of every chain so far, warm-up included

    def tell(self, message: str) -> None:
        """Say `message` if nothing was said for `SAY_EVERY` seconds (progress of a long batch)."""
        if time.time() - self.said >= SAY_EVERY:
            self.said = time.time()
            self.say(message)

    def first(self, c: int, names, until_divergence: bool = False) -> tuple[dict[str, np.ndarray], int]:
        """The first `c` post-warm-up draws of every chain, {name: (chains, c, *shape)}, and their divergences.
        `until_divergence`: as soon as a chain has a divergent transition among its first `c` draws, the draws every
        chain has by then (fewer than `c`) and the divergences among the first `c` draws of each chain so far."""
        draws, stats, tuned = self._with(c, until_divergence)
        self.gradients = sum(int(np.asarray(stat.column("n_steps").to_numpy()).sum()) for stat in stats)
        have = min(c, min(stat.num_rows - t for stat, t in zip(stats, tuned)))
        kept = {name: np.stack([_column(d.slice(t, have), name) for d, t in zip(draws, tuned)]) for name in names}
        return kept, _divergent(stats, tuned, c)

    def _with(self, c: int, until_divergence: bool = False):
        """The trace's (draws, stats) batches and warm-up lengths per chain once every chain has at least `c`
        post-warm-up draws (or the run ended, or with `until_divergence` a chain diverged in its first `c`)."""
        while True:
            draws, stats, ended = self.chains.trace()
            tuned = [int(np.asarray(stat.column("tuning").to_numpy()).sum()) for stat in stats]
            least = min(stat.num_rows - t for stat, t in zip(stats, tuned))
            if least >= c or ended or (until_divergence and _divergent(stats, tuned, c)):
                return draws, stats, tuned
            warming = min(stat.num_rows for stat in stats)
            self.tell(self._line(warming, least, c))
            time.sleep(self._pause(c, least))

    def _line(self, done: int, least: int, c: int) -> str:
        """Where the slowest chain is (warm-up or draws), and when the next ESS check comes: measured from its
        iterations per second since the batch started."""
        elapsed = time.time() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        when = f", the next ESS check in about {duration((self.tune + c - done) / rate)}" if rate > 0 else ""
        if least == 0 and done < self.tune:
            return f"{RUNNING}warm-up: {done:,} of {self.tune:,} iterations per chain ({elapsed:.0f} s{when})"
        return f"{RUNNING}{least:,} draws per chain, the next ESS check at {c:,} ({elapsed:.0f} s{when})"

    def _pause(self, c: int, least: int) -> float:
        """Seconds until the slowest chain should reach `c`, from its rate so far (between 0.2 and 10 s)."""
        now = time.time()
        if least == 0 or self.seen is None:
            self.seen = (now, least) if least > 0 else None
            return POLL_SECONDS
        rate = (least - self.seen[1]) / max(now - self.seen[0], 1e-9)
        return float(np.clip((c - least) / rate, 0.2, 10.0)) if rate > 0 else POLL_SECONDS

    def stop(self) -> None:
        self.chains.stop()


def _divergent(stats, tuned: list[int], c: int) -> int:
    """Divergent transitions among the first `c` post-warm-up draws of each chain (of those it has so far)."""
    return sum(int(_column(s.slice(t, min(c, s.num_rows - t)), "diverging").sum()) for s, t in zip(stats, tuned))


def _column(batch, name: str) -> np.ndarray:
    """One column of an Arrow record batch as an array (draws, *shape); list columns hold a vector per draw."""
    import pyarrow

    column = batch.column(name)
    shape = column.field.metadata.get(b"shape", b"") if column.field.metadata else b""
    values = pyarrow.array(column)
    if hasattr(values, "flatten"):
        values = values.flatten()
    dims = [int(n) for n in shape.decode().split(",") if n] if shape else []
    return np.asarray(values.to_numpy(zero_copy_only=False)).reshape([batch.num_rows, *dims])
