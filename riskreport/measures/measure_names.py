"""Which measure: canonical ir_measures strings (every parameter given kept), the measure a report on a
collection uses, the labels of a score table that mean it, and the providers riskreport evaluates with
(its native gdeval, RBP and Judged first, then ir_measures' own)."""

from __future__ import annotations

import functools
import os

import ir_measures
import pandas as pd

from riskreport.errors import ParameterError, RiskReportError, UnknownNameError
from riskreport.io.collection import Collection
from riskreport.io.collection_data import score_table  # noqa: F401 - importable from here as before


def gdeval_provider() -> str:
    """Which implementation computes gdeval's ERR@k and nDCG(dcg='exp-log2')@k.

    `native` (default): `riskreport.measures.gdeval`, numpy, full precision; `perl`: ir_measures' gdeval.pl
    provider (values rounded to 5 decimals), chosen with `RISKREPORT_GDEVAL=perl`.
    """
    choice = os.environ.get("RISKREPORT_GDEVAL", "native").strip().lower() or "native"
    if choice not in ("native", "perl"):
        raise RiskReportError(f"RISKREPORT_GDEVAL={choice!r}: expected native (the default) or perl.")
    return choice


def native_providers() -> list:
    """riskreport's own ir_measures providers, in the order they are tried: gdeval's ERR and
    nDCG(dcg='exp-log2') (unless `RISKREPORT_GDEVAL=perl`), RBP and Judged."""
    from riskreport.measures import gdeval, judged, rbp

    return ([] if gdeval_provider() == "perl" else [gdeval.NATIVE]) + [rbp.NATIVE, judged.NATIVE]


def measure_pipeline():
    """The ir_measures providers riskreport evaluates with: its native ones first (`native_providers`),
    then ir_measures' own, in ir_measures' order."""
    from ir_measures import providers

    return providers.FallbackProvider(native_providers() + list(ir_measures.DefaultPipeline.providers))


SCORE = "score"  # the label of a score table's values when neither the table nor the user names a measure


def canonical_measure(measure: str) -> str:
    """The canonical ir_measures string of `measure`, every parameter given kept, or a clear error.

    ir_measures' own string leaves out parameters equal to their default (`RBP(p=0.8)` prints
    as `RBP`); a report's labels keep what the user wrote. `score`, the label of an unnamed
    score column, is returned as it is.

    >>> canonical_measure("RBP(p=0.8)"), canonical_measure("nDCG@10"), canonical_measure("score")
    ('RBP(p=0.8)', 'nDCG@10', 'score')
    """
    text = str(measure).strip()
    if text == SCORE:
        return SCORE
    try:
        parsed = ir_measures.parse_measure(text)
    except (ValueError, NameError, SyntaxError, TypeError, AttributeError) as error:
        raise UnknownNameError(
            "measure",
            text,
            ["ERR@20", "nDCG@10", "nDCG(dcg='exp-log2')@20", "AP", "P@10", "RR", "RBP(p=0.8)", "Judged@10"],
            hint=f"ir_measures could not parse it ({error}); any measure string ir_measures parses works.",
        ) from None
    return _measure_string(parsed)


def _measure_string(parsed) -> str:
    """ir_measures' `Measure.__repr__` without its omission of parameters equal to their default."""

    def value(v):
        return (
            "{" + ",".join(f"{k}:{x}" for k, x in sorted(v.items()) if k != x) + "}" if isinstance(v, dict) else repr(v)
        )

    params = ",".join(f"{k}={value(v)}" for k, v in parsed.params.items() if k != parsed.AT_PARAM)
    text = f"{parsed.__name__}({params})" if params else parsed.__name__
    return f"{text}@{parsed.params[parsed.AT_PARAM]}" if parsed.AT_PARAM in parsed.params else text


def resolve_measure(
    collection: Collection, measure: str | None = None, fallback: str = "nDCG@10", table: pd.DataFrame | None = None
) -> str:
    """The measure a report on `collection` uses, and its label (`report_measure`); `table`: the collection's score
    table when the caller holds it (read here otherwise)."""
    return report_measure(collection, measure, fallback, _own_table(collection, table))


def report_measure(collection: Collection, measure: str | None, fallback: str, table: pd.DataFrame | None) -> str:
    """The measure a report on `collection` uses, and its label, from its score table `table` (None: it has none).

    Given: the label of a score table's rows as it is (a score-table collection may name any
    measure), else its canonical ir_measures string. Not given: the collection's default
    (collection.toml); else, for a collection of score tables only, the one measure its table
    holds (`score` when it has no `measure` column), and an error naming them when it holds
    several; else `fallback`.
    """
    tables_only = not collection.runs and not collection.instances and collection.scores is not None
    labels = table_measures(collection, table) if tables_only else []
    if measure is None:
        measure = collection.default_measure
    if measure is None:
        if not labels:
            return canonical_measure(fallback)
        if len(labels) > 1:
            raise ParameterError(
                f"{collection.scores} holds scores of {len(labels)} measures ({', '.join(labels)}): "
                "choose one with --measure (or `measure` in collection.toml)."
            )
        return labels[0]
    if str(measure).strip() in labels:
        return str(measure).strip()
    try:
        return canonical_measure(measure)
    except UnknownNameError as error:
        if not labels:
            raise
        raise UnknownNameError(
            "measure", str(measure), labels, hint=f"(the measures of {collection.scores})"
        ) from error


def score_table_measures(collection: Collection, table: pd.DataFrame | None = None) -> list[str]:
    """The measures a collection's score table holds (`table_measures`); `table`: that table when the caller holds
    it (read here otherwise)."""
    return table_measures(collection, _own_table(collection, table))


def table_measures(collection: Collection, table: pd.DataFrame | None) -> list[str]:
    """The measures the collection's score table `table` holds (None: it has none): its `measure` labels, rows
    without one counted as the collection's default measure, else as `score`."""
    if table is None:
        return []
    labels = table["measure"].unique().tolist()
    blank = canonical_measure(collection.default_measure) if collection.default_measure else SCORE
    return list(dict.fromkeys(blank if label == "" else label for label in labels))


def judged_measure(measure: str, default_depth: int = 1000) -> str:
    """`Judged@k` at the cutoff of `measure` (its rank depth when it has none)."""
    cutoff = ir_measures.parse_measure(measure).params.get("cutoff") or default_depth
    return f"Judged@{cutoff}"


def _own_table(collection: Collection, table: pd.DataFrame | None) -> pd.DataFrame | None:
    """`table` when the caller holds it, else the collection's score table (None when it has none)."""
    return table if table is not None or collection.scores is None else score_table(collection)


def measure_labels(collection: Collection, measure: str, table: pd.DataFrame | None = None) -> set[str]:
    """Labels in the score table's `measure` column that mean `measure` (`table_labels`); `table`: that table when
    the caller holds it (read here otherwise)."""
    return table_labels(collection, measure, _own_table(collection, table))


def table_labels(collection: Collection, measure: str, table: pd.DataFrame | None) -> set[str]:
    """Labels in the `measure` column of the collection's score table `table` (None: it has none) that mean
    `measure`: itself, a label ir_measures reads as the same measure (`RBP` for `RBP(p=0.8)`), and '' (rows without
    a label, which carry the collection's default measure, else whichever measure the report names)."""
    labels = {measure}
    default = collection.default_measure
    if default is None or canonical_measure(default) == measure:
        labels.add("")
    if table is not None and measure != SCORE:
        labels |= {label for label in table["measure"].unique() if _same_measure(label, measure)}
    return labels


def measure_rows(collection: Collection, measure: str, table: pd.DataFrame | None) -> pd.DataFrame | None:
    """The rows of the collection's score table `table` that hold `measure` (None without a table)."""
    if table is None:
        return None
    return table[table["measure"].isin(table_labels(collection, measure, table))]


@functools.lru_cache(maxsize=256)
def _same_measure(label: str, measure: str) -> bool:
    try:
        return label != "" and ir_measures.parse_measure(label) == ir_measures.parse_measure(measure)
    except Exception:  # noqa: BLE001 - a label ir_measures does not parse (a score table may name any measure)
        return False
