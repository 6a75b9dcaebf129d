"""Collections: a folder of qrels, runs, instances and/or a score table, plus defaults.

Layout of a collection folder (docs/measures/index.md, Scores):

    qrels.txt | *.qrels | qrels*.txt     TREC qrels (.gz/.bz2 accepted)
    runs/<system>.run[.gz|.bz2]          one TREC run per system (also .txt)
    instances/<system>/<instance>.run    several runs of a non-deterministic system
    scores.csv                           precomputed scores: system,topic,score[,measure][,instance]
    collection.toml                      title, description, measure, baseline, alphas[, qrels]

A collection is given by name (a folder under a data directory) or by path; the path of a
score table (`*.csv`, same columns as scores.csv) is a collection of its own. `load_collection` finds
the folder and reads its settings (`riskreport.io.data_folders`), then what it holds
(`riskreport.io.collection_folder`); what a report reads from those files is read once by
`riskreport.io.collection_data`.
"""

from __future__ import annotations

import os
from pathlib import Path

from riskreport.io.collection_folder import (  # noqa: F401 - importable from here as before
    COMPRESSIONS,
    CONFIG_KEYS,
    RUN_SUFFIXES,
    Collection,
    _find_runs,
    _is_run_file,
    folder_collection,
    run_folder,
    system_id,
    table_name,
)
from riskreport.io.data_folders import (  # noqa: F401 - the lookup's names, importable from here as before
    CHECKOUT,
    COLLECTION_NAME,
    PROJECT_ROOT,
    available_collections,
    data_dirs,
    make_demo,
    read_settings,
    resolve_data_folder,
    user_data_dir,
)

DEMO = "demo"


def demo_path() -> Path:
    """Where `riskreport demo` writes the demo collection by default: `data/demo` of a source checkout, else
    the user data folder's `demo`."""
    return (PROJECT_ROOT / "data" if CHECKOUT else user_data_dir()) / DEMO


def resolve_collection_path(spec: str | os.PathLike) -> Path:
    """A collection folder from a name under a data directory, or from a path (`resolve_data_folder`); the demo
    collection made on first use."""
    return resolve_data_folder(spec, DEMO, _make_demo)


def _make_demo() -> Path:
    from riskreport.io.demo import generate_demo

    return make_demo(demo_path(), "demo collection", generate_demo, "riskreport demo --path FOLDER/demo")


def load_collection(spec: str | os.PathLike, *, runs_only: bool = False) -> Collection:
    """Find the files of a collection and read its `collection.toml`.

    `runs_only`: only its runs are wanted, to be evaluated with qrels given apart (`--qrels`, a job's
    `qrels`): a folder of runs without qrels, or a bare folder of TREC run files, is then a collection too.

    >>> demo = load_collection("demo")          # doctest: +SKIP
    >>> demo.default_baseline
    'bm25'
    """
    given = Path(str(spec)).expanduser()
    table = given if given.is_file() and given.suffix.lower() == ".csv" else None  # a bare score table
    bare = runs_only and given.is_dir() and not (given / "runs").is_dir()
    if bare:
        folder = given.resolve()
    elif table is not None:
        folder = table.parent
    else:
        folder = resolve_data_folder(spec, DEMO, _make_demo)
    config = {} if bare else read_settings(folder / "collection.toml", CONFIG_KEYS)
    return folder_collection(folder, config, table, runs_only=runs_only, bare=bare)
