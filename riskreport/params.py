"""Report parameters: defaults from `collection.toml`, checked before any notebook starts."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from .collection import Collection, load_collection
from .errors import ParameterError, UnknownNameError
from .evaluation import available_systems, canonical_measure, collection_topics, resolve_measure
from .trec import read_system_list

DEFAULT_MEASURE = "nDCG@10"
DEFAULT_ALPHAS = (0.0, 1.0, 5.0, 10.0)


@dataclass(frozen=True)
class ReportParameters:
    """The effective parameters of a report, every default resolved."""

    collection: Collection
    measure: str
    baseline: str
    alphas: list[float]
    systems: list[str]
    sig_level: float = 0.05
    extra: dict = field(default_factory=dict)     # systems_file, absent: when the systems came from a file
    known: list = field(default_factory=list)     # every system of the collection with scores for the measure
    baselines: list = field(default_factory=list)  # every baseline when there are several (`baseline` is the first)

    @property
    def challengers(self) -> list[str]:
        return [s for s in self.systems if s != self.baseline]

    @property
    def all_baselines(self) -> list[str]:
        """The baselines of the report: `baselines` when there are several, else `[baseline]`."""
        return list(self.baselines) or [self.baseline]


def resolve_parameters(collection: str | Collection, *, measure: str | None = None,
                       baseline: str | Sequence[str] | None = None,
                       alphas: Sequence[float] | None = None, systems: Iterable[str] | str | None = None,
                       sig_level: float = 0.05, instances: bool = False) -> ReportParameters:
    """Fill defaults from the collection and check every value; raise a clear error otherwise.

    With `instances=True` the non-deterministic systems (instances/, or scores.csv rows with
    several instances) count as systems too (templates on non-deterministic systems).
    A system named twice in `systems` counts once; a collection whose qrels have no relevant
    document is an error here, before any run is evaluated. `systems` may also be the path of a
    file listing them (`choose_systems`); `extra` then holds `systems_file` and the `absent` runs.
    `baseline` may name several baselines (a list): the first is `baseline`, all are `baselines`.

    >>> p = resolve_parameters("demo")            # doctest: +SKIP
    >>> p.baseline, p.measure, p.alphas            # doctest: +SKIP
    ('bm25', 'nDCG@10', [0.0, 1.0, 2.0, 5.0, 10.0])
    """
    if not isinstance(collection, Collection):
        collection = load_collection(collection)
    measure = resolve_measure(collection, measure, fallback=DEFAULT_MEASURE)
    known = list(available_systems(collection, measure, instances=instances))
    if not known:
        raise ParameterError(f"Collection {collection.name!r} has no system with {measure} scores "
                             "(no runs/ folder, and scores.csv has no rows for this measure).")
    several = [] if baseline is None or isinstance(baseline, str) else list(dict.fromkeys(baseline))
    if not isinstance(baseline, str) and baseline is not None and not several:
        raise ParameterError("baseline: an empty list; give one baseline or several.")
    baseline = several[0] if several else baseline or collection.default_baseline or known[0]
    for name in several or [baseline]:
        if name not in known:
            raise UnknownNameError("baseline", name, known,
                                   hint=f"(systems of collection {collection.name!r} with {measure} scores)")
    alphas = check_alphas(DEFAULT_ALPHAS if alphas is None and not collection.default_alphas
                          else alphas if alphas is not None else collection.default_alphas)
    collection_topics(collection, measure)               # a clear error now, not in a template cell
    chosen, absent = (known, []) if systems is None else choose_systems(systems, known)
    extra = {"systems_file": str(systems), "absent": absent} if is_system_file(systems) else {}
    chosen = [b for b in several or [baseline] if b not in chosen] + list(chosen)
    if len(chosen) < 2:
        raise ParameterError(f"A risk report needs the baseline and at least one other system; got {chosen}.")
    check_report_options({"sig_level": sig_level})
    return ReportParameters(collection, measure, baseline, alphas, list(dict.fromkeys(chosen)), float(sig_level),
                            extra, known, several if len(several) > 1 else [])


SYSTEM_FILE_SUFFIXES = (".csv", ".txt", ".tsv", ".lst", ".list")


def is_system_file(value) -> bool:
    """Whether a `systems`/`pool` value means a file listing systems rather than ids: a path object, or text
    with a path separator, a list-file suffix (.csv, .txt, ...) or naming an existing file."""
    if isinstance(value, os.PathLike):
        return True
    if not isinstance(value, str):
        return False
    return os.sep in value or value.lower().endswith(SYSTEM_FILE_SUFFIXES) or Path(value).expanduser().is_file()


def choose_systems(value, known: Sequence[str], name: str = "system") -> tuple[list[str], list[str]]:
    """The systems a `systems` or `pool` value names, and those a file lists that `known` lacks.

    `value`: a list of ids, comma-separated text, or the path of a file (`trec.read_system_list`:
    one id per line, or a CSV with a `system` column and an optional 0/1 `pooled` column). An id
    given directly must be in `known`; a file may list runs the collection lacks (a TREC pool list
    names every run of the track): they are returned as absent, for the report to say, unless the
    file lists none of `known`, which is an error naming the file.
    """
    if not is_system_file(value):
        chosen = _as_list(value)
        for system in chosen:
            if system not in known:
                raise UnknownNameError(name, system, list(known))
        return list(dict.fromkeys(chosen)), []
    path = Path(value).expanduser()
    listed = read_system_list(path)
    present = set(known)
    chosen = [s for s in listed if s in present]
    if not chosen:
        shown = ", ".join(listed[:5]) + (", …" if len(listed) > 5 else "")
        raise ParameterError(f"{path}: none of the {len(listed)} system(s) it lists ({shown}) is in the collection "
                             f"(systems: {', '.join(list(known)[:10])}{', …' if len(known) > 10 else ''}). Is it the "
                             "list of another collection?")
    return chosen, [s for s in listed if s not in present]


def check_alphas(alphas) -> list[float]:
    """The α grid as sorted unique finite floats ≥ 0."""
    if isinstance(alphas, (int, float)) and not isinstance(alphas, bool):
        alphas = [alphas]
    if isinstance(alphas, (str, bytes, dict)) or not hasattr(alphas, "__iter__"):
        raise ParameterError(f"alphas must be a list of non-negative numbers, got {alphas!r}.")
    try:
        values = [float(a) for a in alphas if not isinstance(a, bool)]
    except (TypeError, ValueError):
        raise ParameterError(f"alphas must be a list of non-negative numbers, got {alphas!r}.") from None
    if not values or len(values) != len(list(alphas)) or any(not (a >= 0) or a == float("inf") for a in values):
        raise ParameterError(f"alphas must be a non-empty list of finite non-negative numbers, got {alphas!r}.")
    return sorted(set(values))


def _as_list(systems) -> list[str]:
    if isinstance(systems, str):
        return [s.strip() for s in systems.split(",") if s.strip()]
    if not isinstance(systems, (list, tuple)) or not all(isinstance(s, str) for s in systems):
        raise ParameterError(f"systems must be a list of system ids, got {systems!r}.")
    return list(systems)


MAX_BOOTSTRAP_SAMPLES = 1_000_000     # B x topics resample counts are held in memory
CONVENTIONS = ("standard", "minus")   # how URisk is signed (risk.py): here, so checking options needs no scipy


def check_report_options(parameters: dict, params: ReportParameters | None = None) -> dict:
    """The one check of the report options templates share: before a kernel starts, in a template's first
    cell, and inside the functions an option reaches (a wrong value from Python is the same error).

    Types are checked against the template's declaration (`runner.coerce_parameter`); this checks
    values: `seed` ≥ 0, 1 ≤ `bootstrap_samples` ≤ 1,000,000, `ci_levels` in (0, 1), `topic_alphas`
    like `alphas`, `convention`, `correction`, `max_figure_systems` ≥ 1, `delta0` > 0, `sig_level`
    in (0, 1) (in (0, 0.5) with `delta0`: the equivalence tests), `other_measures` (each must parse)
    and, given the resolved `params`, `focus_system` (must be a challenger). Other names pass
    unchanged; a bad value raises `ParameterError` naming the parameter.
    """
    from .corrections import CORRECTIONS

    def whole(name, low, high=None):
        value = parameters[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high and value > high):
            bound = f"between {low:,} and {high:,}" if high else f"≥ {low}"
            raise ParameterError(f"{name} must be a whole number {bound}, got {value!r}.")

    def choice(name, allowed):
        if parameters[name] not in allowed:
            raise ParameterError(f"{name} must be one of {', '.join(allowed)}, got {parameters[name]!r}.")

    checks = {
        "seed": lambda: whole("seed", 0),
        "bootstrap_samples": lambda: whole("bootstrap_samples", 1, MAX_BOOTSTRAP_SAMPLES),
        "max_figure_systems": lambda: whole("max_figure_systems", 1),
        "convention": lambda: choice("convention", CONVENTIONS),
        "correction": lambda: choice("correction", CORRECTIONS),
        "ci_levels": lambda: _check_levels(parameters["ci_levels"]),
        "topic_alphas": lambda: parameters["topic_alphas"] is None or _check_topic_alphas(parameters["topic_alphas"]),
        "delta0": lambda: _check_positive("delta0", parameters["delta0"]),
        "sig_level": lambda: _check_sig_level(parameters["sig_level"], equivalence="delta0" in parameters),
        "other_measures": lambda: _check_measures(parameters["other_measures"]),
        "measures": lambda: _check_measures(parameters["measures"], "measures"),
        "focus_system": lambda: _check_focus(parameters["focus_system"], params),
    }
    for name in parameters:
        if name in checks:
            checks[name]()
    return parameters


def _check_levels(levels) -> None:
    if not (isinstance(levels, (list, tuple)) and levels and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1 for v in levels)):
        raise ParameterError(f"ci_levels must be a non-empty list of levels between 0 and 1, got {levels!r}.")


def _check_positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}.")


def _check_topic_alphas(values) -> None:
    try:
        check_alphas(values)
    except ParameterError as error:
        raise ParameterError(f"topic_{error}") from None


def _check_sig_level(value, equivalence: bool = False) -> None:
    high = 0.5 if equivalence else 1
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < high:
        why = " for the equivalence tests" if equivalence else ""
        raise ParameterError(f"sig_level must be a number between 0 and {high:g}{why}, got {value!r}.")


def _check_measures(measures, name: str = "other_measures") -> None:
    if measures is None:
        return
    if isinstance(measures, str) or not isinstance(measures, (list, tuple)):
        raise ParameterError(f"{name} must be a list of ir_measures strings, got {measures!r}.")
    for measure in measures:
        canonical_measure(measure)         # UnknownNameError naming the measure, before any run is evaluated


def _check_focus(system, params: ReportParameters | None) -> None:
    if system is None or params is None:
        return
    if system not in params.challengers:
        raise UnknownNameError("challenger", system, params.challengers,
                               hint="(focus_system must be a challenger of this report, not the baseline)")
