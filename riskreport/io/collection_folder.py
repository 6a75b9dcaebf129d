"""What a collection folder holds (docs/measures/index.md, Scores): its qrels, runs, instances and score table found
by name, and its collection.toml checked; nothing is parsed. `riskreport.io.collection.load_collection` finds the
folder and reads its settings, then builds the `Collection` here."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from riskreport.errors import InputFormatError, RiskReportError

RUN_SUFFIXES = (".run", ".txt")
COMPRESSIONS = ("", ".gz", ".bz2")
CONFIG_KEYS = {"title", "description", "measure", "baseline", "alphas", "qrels"}


@dataclass(frozen=True)
class Collection:
    """The files of one collection and its defaults; nothing is parsed until asked for."""

    name: str
    path: Path
    qrels: Path | None
    runs: dict[str, Path]
    instances: dict[str, dict[str, Path]] = field(default_factory=dict)
    scores: Path | None = None
    config: dict = field(default_factory=dict)
    source: Path | None = None  # what to pass to load_collection to get this collection again

    @property
    def location(self) -> Path:
        return self.source or self.path

    @property
    def title(self) -> str:
        return self.config.get("title", self.name)

    @property
    def description(self) -> str:
        return self.config.get("description", "")

    @property
    def default_measure(self) -> str | None:
        return self.config.get("measure")

    @property
    def default_baseline(self) -> str | None:
        return self.config.get("baseline")

    @property
    def default_alphas(self) -> list[float] | None:
        return self.config.get("alphas")

    def qrels_file(self) -> Path:
        """The qrels file, for evaluating run files; an error naming the folder when there is none."""
        if self.qrels is None:
            raise RiskReportError(
                f"{self.path} has no qrels file to evaluate run files with "
                "(expected qrels.txt, *.qrels or qrels*.txt, optionally .gz/.bz2)."
            )
        return self.qrels

    def scores_file(self) -> Path:
        """The score table (scores.csv, or the table given as the collection); an error when there is none."""
        if self.scores is None:
            raise RiskReportError(f"{self.path} has no score table (scores.csv with columns system,topic,score).")
        return self.scores

    def instance_runs(self, systems: Iterable[str] | None = None) -> dict[str, Path]:
        """Run files of the instances of non-deterministic systems, keyed `<system>/<instance>`."""
        return {
            f"{system}/{instance}": path
            for system, runs in self.instances.items()
            if systems is None or system in systems
            for instance, path in runs.items()
        }

    def files(self) -> list[Path]:
        """Every input file, for hashing and provenance."""
        found = [self.qrels, self.scores] + ([self.path / "collection.toml"] if self.config else [])
        found += list(self.runs.values())
        found += [p for runs in self.instances.values() for p in runs.values()]
        return sorted(p for p in found if p is not None and p.is_file())


def folder_collection(
    folder: Path, config: dict, table: Path | None = None, runs_only: bool = False, bare: bool = False
) -> Collection:
    """The collection in `folder` (found by name or path) with its settings `config` (collection.toml, read);
    `table`: a score table given as the collection itself, in `folder`.

    `runs_only`: only the runs are wanted, to be evaluated with qrels given apart (`--qrels`): a folder with run
    files but no qrels is then their collection, without settings, and so is a `bare` folder of run files.
    """
    if bare:
        return Collection(name=folder.name, path=folder, qrels=None, runs=run_folder(folder))
    config = check_config(config, folder / "collection.toml")
    if table is not None:
        return Collection(
            name=table_name(table),
            path=folder.resolve(),
            qrels=None,
            runs={},
            scores=table.resolve(),
            config=config,
            source=table.resolve(),
        )
    qrels = _find_qrels(folder, config.get("qrels"))
    runs = _find_runs(folder / "runs")
    instances = {d.name: _find_runs(d, "instance") for d in sorted((folder / "instances").glob("*")) if d.is_dir()}
    scores = folder / "scores.csv" if (folder / "scores.csv").is_file() else None
    if runs_only and qrels is None and (scores is None or runs or any(instances.values())):
        return Collection(name=folder.name, path=folder, qrels=None, runs=run_folder(folder / "runs"))
    if qrels is None and scores is None:
        raise RiskReportError(
            f"{folder} is not a collection: it has no qrels file (qrels.txt, *.qrels, qrels*.txt) and no scores.csv."
            + _score_tables_hint(folder)
        )
    if (runs or any(instances.values())) and qrels is None:
        where = "runs/" if runs else "instances/"
        raise RiskReportError(
            f"{folder} has run files under {where} but no qrels file to evaluate them with "
            "(expected qrels.txt, *.qrels or qrels*.txt, optionally .gz/.bz2)."
        )
    return Collection(
        name=folder.name, path=folder, qrels=qrels, runs=runs, instances=instances, scores=scores, config=config
    )


def _score_tables_hint(path: Path) -> str:
    """Where a folder holds CSV files with a score table's header (TREC-COVID's round1_data.csv): the advice to give
    such a file itself as the collection, which a score table is."""
    from riskreport.io.score_files import looks_like_scores

    tables = [p for p in sorted(path.glob("*.csv")) if p.is_file() and looks_like_scores(p)]
    if not tables:
        return ""
    if len(tables) == 1:
        return f" It holds a score table: give that file itself as the collection, {tables[0]}."
    return " It holds score tables: give one of them itself as the collection: " + ", ".join(map(str, tables)) + "."


def table_name(table: Path) -> str:
    """The name of a score table given as a collection (its report folder, its title): the file's name
    (`my-scores.csv` -> `my-scores`, other characters as '-'), or its folder's for a collection's own scores.csv."""
    if table.stem.lower() == "scores":
        return table.parent.resolve().name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", table.stem).strip("-.") or table.parent.resolve().name


def system_id(path: Path) -> str:
    """System id = file name without its extensions (`indriCASP.run.gz` -> `indriCASP`)."""
    name = path.name
    for compression in (".gz", ".bz2"):
        if name.lower().endswith(compression):
            name = name[: -len(compression)]
    for suffix in RUN_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _is_run_file(path: Path) -> bool:
    name = path.name.lower()
    return path.is_file() and any(name.endswith(s + c) for s in RUN_SUFFIXES for c in COMPRESSIONS)


def _find_runs(folder: Path, kind: str = "system") -> dict[str, Path]:
    runs: dict[str, Path] = {}
    if not folder.is_dir():
        return runs
    for path in sorted(folder.iterdir()):
        if not _is_run_file(path):
            continue
        system = system_id(path)
        if system in runs:
            raise InputFormatError(
                path,
                f"two run files name the {kind} {system!r}: {runs[system].name} and {path.name}",
                expected=f"one run file per {kind}",
            )
        runs[system] = path
    return runs


def run_folder(folder: Path) -> dict[str, Path]:
    """The run files of a folder of TREC runs, by system; an error when it is no folder or holds none."""
    if not folder.is_dir():
        raise InputFormatError(folder, "not a folder of TREC runs", expected="a folder of run files")
    runs = _find_runs(folder)
    if not runs:
        raise InputFormatError(
            folder, "no run files", expected="files named <system>.run or <system>.txt, optionally .gz/.bz2"
        )
    return runs


def _find_qrels(path: Path, configured: str | None) -> Path | None:
    if configured:
        relative = Path(configured)
        if relative.is_absolute() or ".." in relative.parts or configured.startswith("~"):
            raise InputFormatError(
                path / "collection.toml",
                f"qrels = {configured!r} points outside the collection",
                expected="the name of a qrels file inside the collection folder",
            )
        chosen = path / configured
        if not chosen.is_file():
            raise InputFormatError(path / "collection.toml", f"qrels = {configured!r} does not exist in {path}")
        return chosen
    patterns = ("qrels.txt", "*.qrels", "qrels*.txt")
    found = sorted({p for pattern in patterns for c in COMPRESSIONS for p in path.glob(pattern + c) if p.is_file()})
    if len(found) > 1:
        raise RiskReportError(
            f"{path} has several qrels files ({', '.join(p.name for p in found)}); "
            'name the one to use with qrels = "..." in collection.toml.'
        )
    return found[0] if found else None


def check_config(config: dict, path: Path) -> dict:
    """collection.toml's values (`path`), each of its type: alphas a list of finite numbers ≥ 0, the others strings."""
    alphas = config.get("alphas")
    if alphas is not None and not (
        isinstance(alphas, list)
        and alphas
        and all(isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a) and a >= 0 for a in alphas)
    ):
        raise InputFormatError(path, f"alphas = {alphas!r}", expected="a non-empty list of finite non-negative numbers")
    for key in ("title", "description", "measure", "baseline", "qrels"):
        if key in config and not isinstance(config[key], str):
            raise InputFormatError(path, f"{key} = {config[key]!r}", expected="a string")
    return config
