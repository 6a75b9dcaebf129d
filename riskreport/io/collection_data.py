"""What a report reads from a collection's files, read once per content in a process: its qrels and its score
table. `rr.analyse`, `riskreport run` and a batch job read them here, once, and resolve the report's parameters
from them (`riskreport.measures.params.parameters_from`): nothing downstream reads them again."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from riskreport.io.collection_folder import Collection
from riskreport.io.provenance import parsed
from riskreport.io.score_files import read_scores
from riskreport.io.trec import read_qrels


@dataclass(frozen=True)
class CollectionData:
    """A collection and what a report reads from its files: its qrels (shared: not to be changed) and its score
    table (this value's own copy); None where it has none."""

    collection: Collection
    qrels: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    table: pd.DataFrame | None = field(default=None, compare=False, repr=False)


def read_collection(collection: Collection) -> CollectionData:
    """The qrels and the score table of `collection`, each parsed once per content in a process (by its digest)."""
    table = None if collection.scores is None else score_table(collection)
    qrels = None if collection.qrels is None else parsed(collection.qrels, read_qrels)
    return CollectionData(collection, qrels, table)


def score_table(collection: Collection) -> pd.DataFrame:
    """The collection's score table, parsed once per content in a process (a copy: callers may change it)."""
    return parsed_scores(collection.scores_file())


def parsed_scores(path: Path) -> pd.DataFrame:
    """The score table of that content, parsed once in a process; a copy, which the caller may change."""
    return parsed(path, read_scores).copy()
