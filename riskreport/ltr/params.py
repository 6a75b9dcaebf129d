"""Parameters of a risk-sensitive learning-to-rank report, every default resolved and checked before a kernel starts.

Defaults come from the data folder's `letor.toml` (title, description, baseline, alphas, trees,
leaves, learning_rate, min_data_in_leaf), else from Dinçer, Macdonald & Ounis SIGIR 2016 (§6):
α ∈ {1, 5}, 500 trees, 50 leaves, learning rate 0.1, 1500 documents per leaf, BM25 of the whole
document (MSLR-WEB10K feature 110) as the single baseline. `min_data_in_leaf` may be a list: a grid from
which each learner's value is chosen per fold by NDCG@k on the fold's validation queries (`vali.txt`), as the
2014 paper chose 500 or 1000 (§6.3). Imports no numba, scipy or LightGBM.

Two defaults follow the data's size when neither the call nor `letor.toml` sets them (`scaled_min_data`,
`held_out_queries`): the paper's 1500 documents per leaf fit MSLR-WEB10K's folds (about 480,000 training
documents) but leave no feature that LightGBM can split on a few thousand, so the default is at most
documents / (2 × leaves) of each fold's learners' training documents; and the learned baselines are learned on the
paper's share of the training queries, at most its 2,000 queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputFormatError, ParameterError, UnknownNameError
from ..io.letor import LetorFolder, choose_folds, has_relevant_label, load_letor_folder

OBJECTIVES = ("lambdamart", "u-cro", "t-saro", "t-faro", "t*-faro", "georisk")
LEARNED = ("gbrt", "lambdamart", "linear")
MIN_DATA = 1500  # the 2016 paper's documents per leaf
PAPER = {
    "alphas": [1.0, 5.0],
    "trees": 500,
    "leaves": 50,
    "learning_rate": 0.1,
    "min_data_in_leaf": MIN_DATA,
    "baseline": "feature:110",
}
NDCG_MODES = ("lightgbm", "exact")
HELD_OUT = 0.2  # the 2016 paper's share of the training queries held out for the learned baselines (2,000 of 10,000)
HELD_OUT_MOST = 2000  # ... and its number of queries: a larger training set holds out no more
LEARNED_MIN_DATA = 20  # documents per leaf of the learned GBRT and LambdaMART baselines (LightGBM's default)


def scaled_min_data(documents: int, leaves: int, most: int = MIN_DATA) -> int:
    """The default documents per leaf on `documents` training documents: the 2016 paper's 1500, at most
    documents / (2 × leaves), so that a tree of `leaves` leaves can grow and every feature with two values can be
    split (LightGBM drops a feature that no split with `min_data_in_leaf` documents on each side can use, and
    refuses data with no feature left). MSLR-WEB10K's folds keep 1500; 2,400 documents and 50 leaves give 24."""
    return max(1, min(most, documents // (2 * leaves)))


def held_out_queries(queries: int, share: float | None = None) -> int:
    """Training queries held out for the learned baselines: `share` of them, else the 2016 paper's 20 %, at most
    its 2,000 queries; at least one, and one fewer than all."""
    wanted = round((HELD_OUT if share is None else share) * queries)
    if share is None:
        wanted = min(wanted, HELD_OUT_MOST)
    return min(max(1, wanted), queries - 1)


@dataclass(frozen=True)
class LetorParameters:
    """The effective parameters of a `risk_ltr` report (what `runner` plans and the template uses)."""

    collection: LetorFolder
    folds: list[str]
    objectives: list[str]
    alphas: list[float]
    baseline: str
    learned: list[str]
    trees: int
    leaves: int
    learning_rate: float
    min_data_in_leaf: int | list[int] | None  # a list: the grid chosen on validation; None: `scaled_min_data`
    k: int = 10
    held_out: float | None = None  # None: `held_out_queries` (the paper's share, at most its 2,000 queries)
    ndcg: str = "lightgbm"
    sig_level: float = 0.05
    extra: dict = field(default_factory=dict)

    @property
    def measure(self) -> str:
        return f"nDCG@{self.k}"  # spelt as ir_measures and the other templates spell it

    @property
    def systems(self) -> list[str]:
        """The objectives, as the report header lists "systems"."""
        return list(self.objectives)

    @property
    def all_baselines(self) -> list[str]:
        """The baseline the report header names (the learners are compared with each baseline in the tables)."""
        return [self.baseline]

    @property
    def min_data_grid(self) -> list[int]:
        """The min-data-in-leaf values to choose from (one value: no choice; none: scaled to each fold's data)."""
        value = self.min_data_in_leaf
        return list(value) if isinstance(value, list) else [] if value is None else [value]

    @property
    def min_data_text(self) -> str:
        """The setting's documents per leaf in words, for the report's header."""
        grid = self.min_data_grid
        if not grid:
            return (
                "documents per leaf scaled to each fold's data (min_data_in_leaf not given: section 1 says the values)"
            )
        if len(grid) == 1:
            return f"at least {grid[0]} documents per leaf"
        return (
            f"at least {' or '.join(map(str, grid))} documents per leaf (chosen per fold and learner on the validation "
            "queries)"
        )


def resolve_ltr_parameters(
    collection: str | LetorFolder,
    *,
    folds: list[str] | None = None,
    objectives: list[str] | None = None,
    alphas: list[float] | None = None,
    baseline: str | None = None,
    learned_baselines: list[str] | None = None,
    trees: int | None = None,
    leaves: int | None = None,
    learning_rate: float | None = None,
    min_data_in_leaf: int | list[int] | None = None,
    min_data_grid: list[int] | None = None,
    k: int = 10,
    held_out: float | None = None,
    ndcg: str = "lightgbm",
    sig_level: float = 0.05,
    **_ignored,
) -> LetorParameters:
    """Fill defaults (`letor.toml`, else the 2016 paper's, scaled to the data for `min_data_in_leaf` and the
    held-out queries: see the module) and check every value; a clear error otherwise. `min_data_grid` (the
    template's parameter for a grid) wins over `min_data_in_leaf` when given."""
    from ..options import check_alphas, check_options

    folder = collection if isinstance(collection, LetorFolder) else load_letor_folder(collection)
    config = folder.config
    chosen = [f.name for f in choose_folds(folder, folds)]
    keys = _objective_keys(objectives)
    learned = list(dict.fromkeys(LEARNED if learned_baselines is None else learned_baselines))
    for kind in learned:
        if kind not in LEARNED:
            raise UnknownNameError("learned baseline", kind, list(LEARNED))

    def pick(name, given):
        return given if given is not None else config.get(name, PAPER[name])

    min_data = min_data_grid or (min_data_in_leaf if min_data_in_leaf is not None else config.get("min_data_in_leaf"))
    if ndcg not in NDCG_MODES:
        raise ParameterError(f"ndcg must be one of {', '.join(NDCG_MODES)}, got {ndcg!r}.")
    if held_out is not None and (
        isinstance(held_out, bool) or not isinstance(held_out, (int, float)) or not 0 < held_out < 1
    ):
        raise ParameterError(f"held_out must be a share of the training queries between 0 and 1, got {held_out!r}.")
    params = LetorParameters(
        folder,
        chosen,
        keys,
        check_alphas(pick("alphas", alphas)),
        str(pick("baseline", baseline)),
        learned,
        pick("trees", trees),
        pick("leaves", leaves),
        pick("learning_rate", learning_rate),
        None if min_data is None else _min_data(min_data),
        k,
        held_out,
        ndcg,
        sig_level,
    )
    _check_numbers(params)
    check_options({"sig_level": sig_level})
    if len(params.min_data_grid) > 1:
        _check_validation(params)
    return params


USES = {
    "train": "the learners get no gradient from it",
    "test": "there is nothing to compare the learners on",
    "vali": "min_data_grid cannot choose a value on it",
}


def check_relevant_files(params: LetorParameters) -> None:
    """Before anything runs: each file the experiment uses (train and test of every chosen fold; vali when a
    min_data_in_leaf grid is chosen on it) has a document with a label above 0, else an error naming the file
    (NDCG@k is undefined on a query without one). Each file is read only up to its first relevant document."""
    need_vali = len(params.min_data_grid) > 1
    for name in params.folds:
        for split, path in params.collection.folds[name].files.items():
            if (split != "vali" or need_vali) and not has_relevant_label(path):
                raise InputFormatError(
                    path,
                    f"no query has a relevant document (every label is 0): nDCG is undefined on all of them, "
                    f"so {USES[split]}",
                    expected="some documents with a label of 1 or more",
                )


def _min_data(value) -> int | list[int]:
    """One value, or a grid (a list or tuple of several values: sorted, without repeats; one value: that value)."""
    if not isinstance(value, (list, tuple)):
        return value
    if not value:
        raise ParameterError("min_data_in_leaf must be a whole number or a non-empty list of them, got [].")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise ParameterError(f"min_data_in_leaf values must be whole numbers ≥ 1, got {item!r} in {list(value)!r}.")
    grid = sorted(set(value))
    return grid if len(grid) > 1 else grid[0]


def _check_validation(params: LetorParameters) -> None:
    """A grid of min_data_in_leaf is chosen on validation queries: every chosen fold needs its vali.txt."""
    missing = [name for name in params.folds if "vali" not in params.collection.folds[name].files]
    if missing:
        raise ParameterError(
            f"min_data_in_leaf {params.min_data_in_leaf} is chosen on each fold's validation queries, but "
            f"{', '.join(missing)} of {params.collection.path} has no vali.txt: give one value, or add vali.txt."
        )


def _objective_keys(objectives: list[str] | None) -> list[str]:
    if objectives is None:
        return list(OBJECTIVES)
    spelled = {"ucro": "u-cro", "tsaro": "t-saro", "tfaro": "t-faro", "tstar-faro": "t*-faro", "tstar_faro": "t*-faro"}
    keys = [spelled.get(str(o).lower(), str(o).lower()) for o in objectives]
    for key, given in zip(keys, objectives):
        if key not in OBJECTIVES:
            raise UnknownNameError("objective", given, list(OBJECTIVES))
    if not keys:
        raise ParameterError('objectives must name at least one objective, e.g. ["lambdamart", "u-cro"].')
    return list(dict.fromkeys(keys))


def _check_numbers(params: LetorParameters) -> None:
    numbers = [("trees", params.trees), ("leaves", params.leaves), ("k", params.k)]
    numbers += [("min_data_in_leaf", value) for value in params.min_data_grid]
    for name, value in numbers:
        low = 2 if name == "leaves" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ParameterError(f"{name} must be a whole number ≥ {low}, got {value!r}.")
    rate = params.learning_rate
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
        raise ParameterError(f"learning_rate must be a number in (0, 1], got {rate!r}.")
    text = params.baseline.strip().lower()
    if text != "best" and not text.removeprefix("feature:").strip().isdigit():
        raise ParameterError(
            f"baseline must be 'feature:<id>' (e.g. feature:110, BM25 of MSLR-WEB10K) or 'best' "
            f"(the best single feature on the training queries), got {params.baseline!r}."
        )
