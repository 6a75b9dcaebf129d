"""Parameters of a risk-sensitive learning-to-rank report, every default resolved and checked before a kernel starts.

Defaults come from the data folder's `letor.toml` (title, description, baseline, alphas, trees,
leaves, learning_rate, min_data_in_leaf), else from Dinçer, Macdonald & Ounis SIGIR 2016 (§6):
α ∈ {1, 5}, 500 trees, 50 leaves, learning rate 0.1, 1500 documents per leaf, BM25 of the whole
document (MSLR-WEB10K feature 110) as the single baseline. `min_data_in_leaf` may be a list: a grid from
which each learner's value is chosen per fold by NDCG@k on the fold's validation queries (`vali.txt`), as the
2014 paper chose 500 or 1000 (§6.3). Imports no numba, scipy or LightGBM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ParameterError, UnknownNameError
from ..io.letor import LetorFolder, choose_folds, load_letor_folder

OBJECTIVES = ("lambdamart", "u-cro", "t-saro", "t-faro", "t*-faro", "georisk")
LEARNED = ("gbrt", "lambdamart", "linear")
PAPER = {
    "alphas": [1.0, 5.0],
    "trees": 500,
    "leaves": 50,
    "learning_rate": 0.1,
    "min_data_in_leaf": 1500,
    "baseline": "feature:110",
}
NDCG_MODES = ("lightgbm", "exact")


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
    min_data_in_leaf: int | list[int]  # a list: the grid chosen from on each fold's validation queries
    k: int = 10
    held_out: float = 0.2
    ndcg: str = "lightgbm"
    sig_level: float = 0.05
    extra: dict = field(default_factory=dict)

    @property
    def measure(self) -> str:
        return f"NDCG@{self.k}"

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
        """The min-data-in-leaf values to choose from (one value: no choice)."""
        value = self.min_data_in_leaf
        return list(value) if isinstance(value, list) else [value]


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
    held_out: float = 0.2,
    ndcg: str = "lightgbm",
    sig_level: float = 0.05,
    **_ignored,
) -> LetorParameters:
    """Fill defaults (`letor.toml`, else the 2016 paper's) and check every value; a clear error otherwise.
    `min_data_grid` (the template's parameter for a grid) wins over `min_data_in_leaf` when given."""
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

    if ndcg not in NDCG_MODES:
        raise ParameterError(f"ndcg must be one of {', '.join(NDCG_MODES)}, got {ndcg!r}.")
    if not 0 < held_out < 1:
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
        _min_data(min_data_grid if min_data_grid else pick("min_data_in_leaf", min_data_in_leaf)),
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
