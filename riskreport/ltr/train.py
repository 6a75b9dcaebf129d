"""Training the learners of a risk-sensitive learning-to-rank experiment with LightGBM, with progress.

`train_ranker` boosts one objective; `run_fold` does one fold of the papers' experiment: hold
queries out for the learned baselines, learn every objective at every α against the baselines,
and score the fold's test queries; with a grid of min-data-in-leaf values, each learner's value is the one
whose model has the best NDCG@k on the fold's validation queries. Progress says the trees done and an estimate of the time left.

Papers' settings (MSLR-WEB10K): Dinçer et al. 2014 (§6.3) 800 trees, 50 leaves, learning rate
0.075, min docs per leaf 500 or 1000 (chosen on validation); 2016 (§6) 500 trees, 50 leaves,
learning rate 0.1, min docs per leaf 1500.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import InputFormatError, ParameterError
from ..io.letor import LetorData
from ..progress import Progress, stderr_printer
from .baselines import Baseline, baseline_matrix, hold_out, learned_baseline, lightgbm_errors
from .objectives import NAMES, PARALLEL_ROWS, SEVERAL_BASELINES, make_objective, ndcg_per_query, objective_key
from .params import USES, scaled_min_data

PAPER_2014: dict[str, float] = {"trees": 800, "leaves": 50, "learning_rate": 0.075, "min_data_in_leaf": 1000}
PAPER_2016: dict[str, float] = {"trees": 500, "leaves": 50, "learning_rate": 0.1, "min_data_in_leaf": 1500}
say_stderr: Progress = stderr_printer("riskreport: ltr: ")  # the terminal of `riskreport run`, never the report's page


@dataclass(frozen=True)
class Setting:
    """Tree parameters shared by every learner of an experiment (LightGBM names in `lightgbm_params`)."""

    trees: int = 500  # PAPER_2016
    leaves: int = 50
    learning_rate: float = 0.1
    min_data_in_leaf: int | None = 1500  # None: `params.scaled_min_data` of each fold's training documents
    k: int = 10
    ndcg: str = "lightgbm"
    seed: int = 2026
    threads: int = 0

    def __post_init__(self):
        for name in ("trees", "leaves", "min_data_in_leaf", "k"):
            value = getattr(self, name)
            if value is None and name == "min_data_in_leaf":
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, np.integer))
                or value < (2 if name == "leaves" else 1)
            ):
                raise ParameterError(f"{name} must be a whole number ≥ {2 if name == 'leaves' else 1}, got {value!r}.")
        if not 0 < self.learning_rate <= 1:
            raise ParameterError(f"learning_rate must be in (0, 1], got {self.learning_rate!r}.")

    def lightgbm_params(self, rows: int | None = None) -> dict:
        return {
            "num_leaves": self.leaves,
            "learning_rate": self.learning_rate,
            "min_data_in_leaf": self.min_data_in_leaf,
            "seed": self.seed,
            "deterministic": True,
            "verbose": -1,
            "num_threads": self.threads_for(rows),
        }

    def threads_for(self, rows: int | None) -> int:
        """One thread below `PARALLEL_ROWS` training rows: starting threads then costs more than it saves
        (60 trees on the demo's fold: 2.4 s on one thread, 17 s on two, on a busy 2-core machine)."""
        return 1 if rows is not None and rows < PARALLEL_ROWS else self.threads


class TreeProgress:
    """A LightGBM callback saying trees done and the time left, at most every `every` seconds. The time left is
    estimated from the trees after the first, whose time includes compiling the gradient kernels (numba) in a new
    process: a first tree of 16 s once made 500 trees look like a day."""

    def __init__(self, label: str, say: Progress, done_before: int = 0, total: int | None = None, every: float = 5.0):
        self.label, self.say, self.done_before, self.total, self.every = label, say, done_before, total, every
        self.started = self.last = time.perf_counter()
        self.first: float | None = None  # when the first tree was done

    def __call__(self, env) -> None:
        trees = env.iteration - env.begin_iteration + 1
        total = self.total or (env.end_iteration - env.begin_iteration)
        now = time.perf_counter()
        if self.first is None:
            self.first = now
        if now - self.last < self.every and trees < env.end_iteration - env.begin_iteration:
            return
        self.last = now
        done = self.done_before + trees
        left = f", about {(now - self.first) / (trees - 1) * (total - done):.0f} s left" if trees > 1 else ""
        self.say(f"{self.label}: {trees} trees ({done}/{total} of the experiment), {now - self.started:.0f} s{left}")


def train_ranker(
    train: LetorData,
    objective: str,
    setting: Setting,
    baselines: np.ndarray | None = None,
    alpha: float = 0.0,
    callbacks: list | None = None,
):
    """A LightGBM booster of `objective` (any of `objectives.NAMES`) on `train`; `baselines` are the
    baselines' NDCG@k per training query, (baselines, queries)."""
    import lightgbm as lgb

    key = objective_key(objective)
    rows = None if key == "lambdamart" or baselines is None else np.atleast_2d(baselines)
    if rows is not None and key not in SEVERAL_BASELINES:
        rows = rows[:1]
    fobj = make_objective(
        key,
        train.labels,
        train.bounds,
        rows,
        alpha,
        k=setting.k,
        ndcg=setting.ndcg,
        threads=setting.threads_for(train.n_documents) or None,
    )
    dataset = lgb.Dataset(train.features, train.labels, group=train.group_sizes, params={"verbose": -1})
    params = {**setting.lightgbm_params(train.n_documents), "objective": fobj}
    with lightgbm_errors(f"the learner {NAMES[key]}", train, params["min_data_in_leaf"]):
        return lgb.train(params, dataset, num_boost_round=setting.trees, callbacks=callbacks or [])


@dataclass
class FoldResult:
    """Per-document scores of the fold's test queries by every learner and baseline, and the training time."""

    fold: str
    test: LetorData
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # learner or baseline name -> scores
    baseline_ndcg: dict[str, np.ndarray] = field(default_factory=dict)  # run baselines: NDCG per test query
    seconds: dict[str, float] = field(default_factory=dict)
    chosen: list[dict] = field(default_factory=list)  # per learner and grid value: validation NDCG, chosen or not
    held_out: int = 0  # training queries held out for the learned baselines
    min_data_in_leaf: int | None = None  # the one value every learner used (None: a grid, see `chosen`)


def learner_name(objective: str, alpha: float) -> str:
    key = objective_key(objective)
    return NAMES[key] if key == "lambdamart" else f"{NAMES[key]} α={alpha:g}"


def learner_grid(objectives: list[str], alphas: list[float]) -> list[tuple[str, float]]:
    """(objective, α) of every learner: LambdaMART once (α plays no part), the others at every α."""
    keys = list(dict.fromkeys(objective_key(o) for o in objectives))
    return [(key, 0.0) for key in keys if key == "lambdamart"] + [
        (key, float(a)) for key in keys if key != "lambdamart" for a in alphas
    ]


def run_fold(
    name: str,
    train: LetorData,
    test: LetorData,
    objectives: list[str],
    alphas: list[float],
    single: Baseline,
    learned: list[str],
    setting: Setting,
    held_out: float | None = None,
    extra: list[Baseline] | None = None,
    say: Progress = say_stderr,
    vali: LetorData | None = None,
    min_data_grid: list[int] | None = None,
) -> FoldResult:
    """One fold: learn the `learned` baselines on held-out training queries, then every learner on the rest
    against [single, learned…, extra…] (the single baseline first: U-CRO, T-SARO and T-FARO use it alone).
    With several `min_data_grid` values each learner is trained with each, and the model with the best mean
    NDCG@k on `vali` is kept (ties: the first value). `held_out` None and `setting.min_data_in_leaf` None: scaled to
    the fold's data (`params.held_out_queries`, `params.scaled_min_data` of the learners' training documents)."""
    result = FoldResult(name, test)
    learn_on = train
    baselines = [single]
    if learned:
        held, learn_on = hold_out(train, held_out, setting.seed)
        result.held_out = held.n_queries
        say(f"{name}: learning {len(learned)} baseline(s) on {held.n_queries} held-out queries")
        threads = setting.threads_for(held.n_documents)
        baselines += [learned_baseline(kind, held, seed=setting.seed, threads=threads) for kind in learned]
    if setting.min_data_in_leaf is None:
        setting = replace(setting, min_data_in_leaf=scaled_min_data(learn_on.n_documents, setting.leaves))
        say(f"{name}: min_data_in_leaf {setting.min_data_in_leaf} for {learn_on.n_documents:,} training documents")
    baselines += list(extra or [])
    matrix = baseline_matrix(baselines, learn_on, setting.k)
    for b in baselines:
        if b.scorer is not None:
            result.scores[b.name] = b.scorer(test.features)
        else:
            result.baseline_ndcg[b.name] = b.ndcg(test, setting.k)
    grid = learner_grid(objectives, alphas)
    values = [int(v) for v in (min_data_grid or [setting.min_data_in_leaf or 1]) if v is not None]
    result.min_data_in_leaf = values[0] if len(values) == 1 else None
    if len(values) > 1 and vali is None:
        raise ParameterError(f"{name}: min_data_in_leaf {values} is chosen on validation queries; the fold has none.")
    total = len(grid) * len(values) * setting.trees
    for position, (key, alpha) in enumerate(grid):
        learner = learner_name(key, alpha)
        started = time.perf_counter()
        models = []
        for step, value in enumerate(values):
            done = (position * len(values) + step) * setting.trees
            shown = f"{name} {learner}" + (f" min_data_in_leaf={value}" if len(values) > 1 else "")
            callbacks = [TreeProgress(shown, say, done, total)]
            models.append(
                train_ranker(learn_on, key, replace(setting, min_data_in_leaf=value), matrix, alpha, callbacks)
            )
        best, rows = choose_on_validation(models, values, vali, setting.k)
        result.chosen += [{"fold": name, "learner": learner, **row} for row in rows]
        result.seconds[learner] = time.perf_counter() - started
        result.scores[learner] = models[best].predict(test.features)
    return result


def choose_on_validation(models: list, values: list[int], vali: LetorData | None, k: int) -> tuple[int, list[dict]]:
    """(position of the model with the best mean NDCG@k on `vali`, one row per value); one model: no choice."""
    if len(models) == 1:
        return 0, [{"min_data_in_leaf": values[0], "vali_ndcg": np.nan, "chosen": True}]
    assert vali is not None
    check_relevant({"vali": vali}, need_vali=True)
    scores = [float(np.nanmean(ndcg_per_query(m.predict(vali.features), vali.labels, vali.bounds, k))) for m in models]
    best = int(np.argmax(scores))
    return best, [
        {"min_data_in_leaf": v, "vali_ndcg": score, "chosen": i == best}
        for i, (v, score) in enumerate(zip(values, scores))
    ]


def check_relevant(data: dict[str, LetorData], need_vali: bool = False) -> None:
    """Every split a fold's experiment uses has a document with a label above 0: NDCG@k is undefined on a query
    without one, and a file without any makes the experiment meaningless. An error naming the file, before training."""
    for split, part in data.items():
        if split == "vali" and not need_vali:
            continue
        if not np.any(part.labels > 0):
            raise InputFormatError(
                part.path,
                f"no query has a relevant document (every label of its {part.n_queries:,} queries is 0): nDCG is "
                f"undefined on all of them, so {USES[split]}",
                expected="some documents with a label of 1 or more",
            )


def fold_ndcg(result: FoldResult, k: int = 10) -> dict[str, np.ndarray]:
    """NDCG@k per test query of every learner and baseline of a fold (NaN: a query without a relevant document)."""
    out = {
        name: ndcg_per_query(scores, result.test.labels, result.test.bounds, k)
        for name, scores in result.scores.items()
    }
    out.update(result.baseline_ndcg)
    return out


@dataclass
class Experiment:
    """A whole experiment: the systems x queries NDCG@k matrix over every fold's test queries, and who is who."""

    matrix: pd.DataFrame
    single: str  # the single (BM25-like) baseline's row
    learned: list[str]  # learned baselines' rows
    runs: list[str]  # run baselines' rows
    learners: list[str]  # learners' rows, LambdaMART first
    folds: pd.DataFrame  # per fold: queries and documents of each split, seconds of training
    seconds: dict[str, float] = field(default_factory=dict)
    chosen: pd.DataFrame = field(default_factory=pd.DataFrame)  # min_data_in_leaf per fold and learner (validation)
    fold_of: pd.Series = field(default_factory=lambda: pd.Series(dtype=str))  # test query id -> its fold


def run_experiment(
    params, seed: int = 2026, threads: int = 0, run_scores: str | None = None, say: Progress = say_stderr
) -> Experiment:
    """Every fold of a `ltr.params.LetorParameters`: baselines, learners, test scores; one matrix over all folds."""
    from .baselines import LEARNED_NAMES, parse_baseline, run_baselines
    from .tables import score_matrix

    grid = params.min_data_grid
    first = grid[0] if grid else None  # None: scaled to each fold's training documents
    setting = Setting(params.trees, params.leaves, params.learning_rate, first, params.k, params.ndcg, seed, threads)
    extra = run_baselines(run_scores) if run_scores else []
    per_fold, ids, rows, chosen = [], [], [], []
    seconds: dict[str, float] = {}
    single: Baseline | None = None
    for fold in params.collection.folds.values():
        if fold.name not in params.folds:
            continue
        data = fold.read()
        check_relevant(data, need_vali=len(grid) > 1)
        single = parse_baseline(params.baseline, data["train"], params.k)
        say(
            f"{fold.name}: {data['train'].n_queries} training and {data['test'].n_queries} test queries, "
            f"{data['train'].n_features} features; single baseline {single.name}"
        )
        result = run_fold(
            fold.name,
            data["train"],
            data["test"],
            params.objectives,
            params.alphas,
            single,
            params.learned,
            setting,
            params.held_out,
            extra,
            say,
            data.get("vali"),
            grid,
        )
        chosen += result.chosen
        per_fold.append(fold_ndcg(result, params.k))
        ids.append(data["test"].query_ids)
        rows.append(
            {
                "fold": fold.name,
                **{f"{s}_queries": d.n_queries for s, d in data.items()},
                **{f"{s}_documents": d.n_documents for s, d in data.items()},
                "features": data["train"].n_features,
                **({"held_out_queries": result.held_out} if params.learned else {}),
                **({"min_data_in_leaf": result.min_data_in_leaf} if result.min_data_in_leaf is not None else {}),
                "training_s": sum(result.seconds.values()),
            }
        )
        for name, value in result.seconds.items():
            seconds[name] = seconds.get(name, 0.0) + value
    if single is None:
        raise ParameterError(f"No fold of {params.collection.path} to run (folds {params.folds}).")
    learners = [learner_name(key, alpha) for key, alpha in learner_grid(params.objectives, params.alphas)]
    learned = [LEARNED_NAMES[kind] for kind in params.learned]
    return Experiment(
        score_matrix(per_fold, ids),
        single.name,
        learned,
        [b.name for b in extra],
        learners,
        pd.DataFrame(rows),
        seconds,
        pd.DataFrame(chosen),
        pd.Series({str(q): row["fold"] for row, qids in zip(rows, ids) for q in qids}, dtype=str),
    )
