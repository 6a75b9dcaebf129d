"""Seeded streams of resamples for the bootstrap and the randomisation test, in blocks.

Holding B resamples of c topics at once costs B x c floats: 558 MB for 10,000 resamples of the 6,980
topics of MS MARCO dev, for the bootstrap's weights and again for the randomisation test's signs. The
statistics need only one block of resamples at a time (a bootstrap mean is x @ w for one column w of
weights; a flipped mean is x @ f for one sign vector f), so the resamples are produced as a stream of
blocks of at most `DRAWS_AT_ONCE` draws, regenerated from the seed when they are needed again. A
generator yields the same numbers in blocks as in one call, so the stream is value for value the set
that one call would draw: blocking changes memory, never a result.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

DRAWS_AT_ONCE = 4_000_000  # topic draws turned into counts (or signs) at a time (~32 MB of floats)


def block_rows(n_topics: int) -> int:
    """Resamples per block: `DRAWS_AT_ONCE` draws of `n_topics` topics, at least one resample."""
    return max(1, DRAWS_AT_ONCE // max(n_topics, 1))


def count_blocks(n_topics: int, samples: int, rng: np.random.Generator) -> Iterator[tuple[int, np.ndarray]]:
    """(first resample, counts of a block of resamples (k x c)), in order: row b says how often each topic
    was drawn (with replacement, c draws) in resample b."""
    rows = block_rows(n_topics)
    for start in range(0, samples, rows):
        k = min(rows, samples - start)
        draws = rng.integers(0, n_topics, size=(k, n_topics))
        cells = (np.arange(k)[:, None] * n_topics + draws).reshape(-1)
        yield start, np.bincount(cells, minlength=k * n_topics).reshape(k, n_topics).astype(np.float64)


def flip_blocks(n_topics: int, samples: int, rng: np.random.Generator) -> Iterator[tuple[int, np.ndarray]]:
    """(first resample, sign vectors of a block (k x c)), in order: the same signs as
    `rng.choice([-1.0, 1.0], size=(samples, n_topics))`, a block at a time."""
    signs, rows = np.array([-1.0, 1.0]), block_rows(n_topics)
    for start in range(0, samples, rows):
        yield start, signs[rng.integers(0, 2, size=(min(rows, samples - start), n_topics))]


def all_flips(n_topics: int) -> np.ndarray:
    """Every one of the 2^c sign vectors (2^c x c): row r flips topic j when bit j of r is set."""
    codes = np.arange(2**n_topics)[:, None] >> np.arange(n_topics)[None, :]
    return np.where(codes & 1, -1.0, 1.0)


@dataclass(frozen=True)
class DrawnWeights:
    """The weights of the bootstrap means (c x B: x @ weights are the B resampled means of x), drawn from
    `seed` block by block whenever they are used, never held whole.

    Value for value `resample_weights(resample_counts(n_topics, samples, default_rng(seed)))` of
    riskreport.stats.bootstrap; the largest array held is one block of c x `block_rows(c)` floats.
    """

    n_topics: int
    samples: int
    seed: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_topics, self.samples

    def blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """(first resample, weights of a block of resamples, one row per resample (k x c)), in order, from a
        fresh generator: the transpose of columns of the c x B weights (rows keep the products fast)."""
        for start, counts in count_blocks(self.n_topics, self.samples, np.random.default_rng(self.seed)):
            counts /= self.n_topics
            yield start, counts


Weights = np.ndarray | DrawnWeights


def weight_rows(weights: Weights) -> Iterator[tuple[int, np.ndarray]]:
    """The weights (c x B) as (first resample, rows k x c, one per resample): `DrawnWeights` block by block,
    an array held whole as one block (its transpose, a view)."""
    if isinstance(weights, DrawnWeights):
        yield from weights.blocks()
    else:
        yield 0, weights.T
