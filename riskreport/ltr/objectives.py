"""Risk-sensitive LambdaMART objectives for LightGBM: U-CRO, T-SARO, T-FARO, T*-FARO and GeoRisk.

LambdaMART (Burges 2010): every pair (a, b) of a query with y_a > y_b contributes
ρ_ab = 1/(1 + exp(σ(s_a − s_b))) times |ΔM_ab|, the change of the query's NDCG@k if a and b
swapped places in the current ranking; the gradient of a is −σ·ρ_ab·|ΔM_ab| (LightGBM minimises),
that of b the opposite, and both get the Hessian term σ²·ρ_ab(1 − ρ_ab)·|ΔM_ab|. The risk-sensitive
objectives replace |ΔM| by ΔM′ on query j, with M_m(j) the learner's current NDCG@k and M_b(j) the
baseline's:

- U-CRO (Wang et al. SIGIR 2012, constant risk): ΔM′ = ΔM if M_m(j) + ΔM ≥ M_b(j), else ΔM·(1 + α).
- T-SARO (Dinçer, Macdonald & Ounis SIGIR 2014, §6.3, semi-adaptive): U-CRO with
  α′_j = [1 − Φ(TR_j)]·α, TR_j = δ_j / SE, δ_j = M_m(j) − M_b(j), SE the standard error of the
  risk-adjusted differences l_α(δ_j), computed after the first boosting iteration and kept.
- T-FARO (2014, fully adaptive): ΔM′ = ΔM·(1 + α′_j) on every query.
- T*-FARO (Dinçer et al. SIGIR 2016, §6): T-FARO against the per-query mean of several baselines.
- GeoRisk (2016, §6): ΔM′ = GeoRisk_α(M_m + ΔM) − GeoRisk_α(M_m) over the matrix {learner,
  baselines} (Eq. 6), one query's terms updated per swap (S, T_j, N move by ΔM, the other queries'
  z terms are kept): O(1) per swap, and consistent, which recomputing the whole matrix is not (every
  other e_ij grows with S, so GeoRisk can fall as the learner improves); multiplied by c (the number of queries),
  a constant of the iteration that puts it on ΔM's scale (a Newton leaf value does not depend on it).

Here ΔM in a condition is the signed change of NDCG@k the swap would make; ΔM′ enters the pair as
a weight of |ΔM|. With α = 0 U-CRO, T-SARO, T-FARO and T*-FARO are LambdaMART exactly; GeoRisk stays
a different (consistent) objective. Queries without a relevant document have no NDCG: they get no
gradient and are left out of the risk statistics.

`ndcg="lightgbm"` (default) reproduces LightGBM's `lambdarank` with `lambdarank_truncation_level=k`
and `lambdarank_norm=True`: pairs with a document in the top k, discounts at every rank, the pair
weight divided by 0.01 + |s_a − s_b|, the query's gradients scaled by log2(1 + Σλ)/Σλ, and LightGBM's
arithmetic (ρ from its 2^20-bin sigmoid table, float32 sums): at α = 0 its gradients to the bit,
so it grows the same trees as the built-in objective. `ndcg="exact"` uses the exact change of NDCG@k
(discounts 0 below rank k) without normalisation, as Burges' LambdaMART; it reached a lower NDCG@10
(demo Fold1: 0.790 against 0.817 after 60 trees; LightGBM's sample data: 0.742 against 0.752).

>>> objective = make_objective("u-cro", labels, bounds, baselines=bm25_ndcg, alpha=1.0)   # doctest: +SKIP
>>> booster = lightgbm.train({"objective": objective, ...}, train_set)                    # doctest: +SKIP
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from scipy import stats

from ..errors import ParameterError, UnknownNameError

NAMES = {
    "lambdamart": "LambdaMART",
    "u-cro": "U-CRO",
    "t-saro": "T-SARO",
    "t-faro": "T-FARO",
    "t*-faro": "T*-FARO",
    "georisk": "GeoRisk",
}
KINDS = {"lambdamart": 0, "u-cro": 1, "t-saro": 1, "t-faro": 2, "t*-faro": 2, "georisk": 3}  # _lambdas kinds
MODES = ("exact", "lightgbm")
PARALLEL_ROWS = 100_000  # below this many rows one thread is faster than numba's pool (measured: 1.5 vs 23 ms)
SEVERAL_BASELINES = ("t*-faro", "georisk")  # the 2016 objectives learn against every baseline at once


def objective_key(name: str) -> str:
    """The key of an objective from any spelling (`T*-FARO`, `tstar-faro`, `ucro`, `LambdaMART`)."""
    key = str(name).strip().lower().replace("_", "-").replace("tstar", "t*")
    key = {"ucro": "u-cro", "tsaro": "t-saro", "tfaro": "t-faro", "t*faro": "t*-faro", "lambdarank": "lambdamart"}.get(
        key, key
    )
    if key not in NAMES:
        raise UnknownNameError("objective", str(name), list(NAMES))
    return key


def risk_adjusted(delta: np.ndarray, alpha: float) -> np.ndarray:
    """l_α(δ) = δ if δ ≥ 0 else (1 + α)·δ (Wang et al. 2012)."""
    return np.where(delta < 0, (1.0 + alpha) * delta, delta)


def adaptive_alpha(delta: np.ndarray, se: float, alpha: float) -> np.ndarray:
    """α′_j = [1 − Φ(TR_j)]·α with TR_j = δ_j / SE (Dinçer et al. 2014, §6.3); SE = 0: TR = ±∞ by the sign of δ."""
    with np.errstate(divide="ignore", invalid="ignore"):
        tr = np.where(se > 0, delta / se if se > 0 else 0.0, np.sign(delta) * np.inf)
    return (1.0 - stats.norm.cdf(np.nan_to_num(tr, nan=0.0))) * alpha


def urisk_se(delta: np.ndarray, alpha: float) -> float:
    """Standard error sd(l_α(δ))/√c of URisk over the queries with a defined δ."""
    x = risk_adjusted(delta[np.isfinite(delta)], alpha)
    return float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else 0.0


def georisk_state(model: np.ndarray, baselines: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What one GeoRisk swap needs (Dinçer et al. 2016, Eqs. 3–6), over the queries with defined scores:
    per query the column total T_j and the learner's l_α(z_j); and (S, N, ZRisk, c, α, c) of the learner."""
    valid = np.isfinite(model)
    x = np.vstack([np.where(valid, model, 0.0), np.where(valid, baselines, 0.0)])
    total, column = x[0].sum(), x.sum(axis=0)
    grand = column.sum()
    expected = total * column / grand if grand > 0 else np.zeros_like(column)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(expected > 0, (x[0] - expected) / np.sqrt(np.where(expected > 0, expected, 1.0)), 0.0)
    lz = np.where(valid, risk_adjusted(z, alpha), 0.0)
    c = max(int(valid.sum()), 1)
    return column, lz, np.array([total, grand, lz.sum(), c, alpha, c], dtype=float)


class RiskObjective:
    """A LightGBM custom objective `(preds, dataset) -> (grad, hess)` for one of `NAMES`.

    `labels` are the graded labels of the training rows, `bounds` the query boundaries
    (`bounds[q]:bounds[q+1]`), `baselines` the baselines' NDCG@k per training query (shape
    (queries,) or (baselines, queries)): the first row is the single baseline of U-CRO, T-SARO and
    T-FARO; T*-FARO uses their per-query mean and GeoRisk all rows. `se_iteration`: the boosting
    iteration after which T-SARO/T-FARO freeze SE (1: after the first tree, as the 2014 paper).
    `last` keeps the per-query NDCG@k (`model`) and ΔM′ inputs of the latest call.
    """

    def __init__(
        self,
        name: str,
        labels: np.ndarray,
        bounds: np.ndarray,
        baselines: np.ndarray | None = None,
        alpha: float = 0.0,
        k: int = 10,
        ndcg: str = "lightgbm",
        sigma: float = 1.0,
        se_iteration: int = 1,
        threads: int | None = None,
    ):
        from . import _lambdas

        self.key = objective_key(name)
        self.name, self.alpha, self.k, self.sigma = NAMES[self.key], float(alpha), int(k), float(sigma)
        _check(self.alpha, self.k, ndcg, self.sigma)
        self.ndcg, self.se_iteration = ndcg, int(se_iteration)
        self.labels = np.ascontiguousarray(labels, dtype=np.int32)
        self.bounds = np.ascontiguousarray(bounds, dtype=np.int64)
        self.gains = np.exp2(self.labels.astype(float)) - 1.0
        ideal = _lambdas.ideal_dcg(self.gains, self.bounds, self.k)
        self.inverse_ideal = np.where(ideal > 0, 1.0 / np.where(ideal > 0, ideal, 1.0), 0.0)
        self.baselines = _baseline_rows(self.key, baselines, len(self.bounds) - 1)
        self.iteration = 0
        self.se: float | None = None
        self.last: dict[str, np.ndarray] = {}
        self.threads = threads or (1 if len(self.labels) < PARALLEL_ROWS else None)
        self._order = np.zeros(len(self.labels), np.int64)
        longest = int(np.diff(self.bounds).max()) if len(self.bounds) > 1 else 0
        self._discount = _lambdas.discounts(max(longest, 1))
        self._work = np.zeros((2, len(self.labels) if ndcg == "lightgbm" else 0), np.float32)

    def __call__(self, preds: np.ndarray, dataset=None) -> tuple[np.ndarray, np.ndarray]:

        with _numba_threads(self.threads):
            return self._gradients(preds)

    def _gradients(self, preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from . import _lambdas

        scores = np.ascontiguousarray(preds, dtype=float)
        if scores.shape != self.labels.shape:
            raise ParameterError(
                f"{self.name}: {scores.shape[0]} predictions for {self.labels.shape[0]} training rows "
                "(the objective was built for another data set)."
            )
        model = np.empty(len(self.bounds) - 1)
        _lambdas.rank_queries(scores, self.gains, self.bounds, self.inverse_ideal, self.k, self._order, model)
        alpha, base, column, lz, geo = self._inputs(model)
        grad, hess = np.empty_like(scores), np.empty_like(scores)
        exact = self.ndcg == "exact"
        cutoff = self.k if exact else np.iinfo(np.int64).max // 2
        _lambdas.pair_gradients(
            scores,
            self.gains,
            self.labels,
            self.bounds,
            self._order,
            self.inverse_ideal,
            self.k,
            cutoff,
            not exact,
            self.sigma,
            KINDS[self.key],
            alpha,
            np.nan_to_num(model),
            base,
            column,
            lz,
            geo,
            grad,
            hess,
            self._discount,
            self._work[0],
            self._work[1],
        )
        self.last = {"model": model, "alpha": alpha, "base": base}
        self.iteration += 1
        return grad, hess

    def _inputs(self, model: np.ndarray):
        """Per-query α′, M_b and GeoRisk terms for the kernel (unused ones are zeros)."""
        n = len(model)
        zeros, geo = np.zeros(n), np.zeros(6)
        if self.key == "lambdamart":
            return zeros, zeros, zeros, zeros, geo
        base = self.baselines.mean(axis=0) if self.key == "t*-faro" else self.baselines[0]
        if self.key == "georisk":
            column, lz, geo = georisk_state(model, self.baselines, self.alpha)
            return zeros, zeros, column, lz, geo
        if self.key == "u-cro":
            return np.full(n, self.alpha), base, zeros, zeros, geo
        delta = model - base
        se = self.se
        if se is None or self.iteration <= self.se_iteration:
            se = self.se = urisk_se(delta, self.alpha)  # recomputed until the iteration after which it is kept
        return np.nan_to_num(adaptive_alpha(delta, se, self.alpha)), base, zeros, zeros, geo


@contextmanager
def _numba_threads(threads: int | None):
    """numba's threads for the kernels (None: all it has); the previous number restored after."""
    import numba

    if threads is None:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def make_objective(
    name: str,
    labels: np.ndarray,
    bounds: np.ndarray,
    baselines: np.ndarray | None = None,
    alpha: float = 0.0,
    **options,
) -> RiskObjective:
    """`RiskObjective` for `name` (any spelling of `NAMES`); `options`: k, ndcg, sigma, se_iteration, threads."""
    return RiskObjective(name, labels, bounds, baselines, alpha, **options)


def ndcg_per_query(scores: np.ndarray, labels: np.ndarray, bounds: np.ndarray, k: int = 10) -> np.ndarray:
    """NDCG@k of every query (gains 2^y − 1, log2 discounts, ties in row order); NaN without a relevant document."""
    from . import _lambdas

    labels = np.ascontiguousarray(labels, dtype=np.int32)
    bounds = np.ascontiguousarray(bounds, dtype=np.int64)
    gains = np.exp2(labels.astype(float)) - 1.0
    ideal = _lambdas.ideal_dcg(gains, bounds, int(k))
    inverse = np.where(ideal > 0, 1.0 / np.where(ideal > 0, ideal, 1.0), 0.0)
    out = np.empty(len(bounds) - 1)
    _lambdas.rank_queries(
        np.ascontiguousarray(scores, dtype=float), gains, bounds, inverse, int(k), np.zeros(len(labels), np.int64), out
    )
    return out


def _check(alpha: float, k: int, ndcg: str, sigma: float) -> None:
    if not (np.isfinite(alpha) and alpha >= 0):
        raise ParameterError(f"alpha must be a finite number ≥ 0, got {alpha!r}.")
    if k < 1:
        raise ParameterError(f"k (the NDCG cutoff) must be ≥ 1, got {k!r}.")
    if ndcg not in MODES:
        raise ParameterError(f"ndcg must be one of {', '.join(MODES)}, got {ndcg!r}.")
    if not (np.isfinite(sigma) and sigma > 0):
        raise ParameterError(f"sigma must be a positive number, got {sigma!r}.")


def _baseline_rows(key: str, baselines, n_queries: int) -> np.ndarray:
    """The baselines' NDCG as (baselines, queries); an error when an objective needs one and has none."""
    if baselines is None:
        if key != "lambdamart":
            raise ParameterError(f"{NAMES[key]} learns against a baseline: give its NDCG per training query.")
        return np.zeros((0, n_queries))
    rows = np.atleast_2d(np.asarray(baselines, dtype=float))
    if rows.shape[1] != n_queries:
        raise ParameterError(f"{NAMES[key]}: baselines have {rows.shape[1]} queries, the training data {n_queries}.")
    return rows
