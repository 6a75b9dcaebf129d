"""The studentized range by fixed quadrature (`stats.studentized_range`) against scipy's adaptive integration
and a brute-force nested `quad`: Tukey HSD's p-values and critical values rest on it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, special, stats

from riskreport.stats import studentized_range as sr

Q = np.array([0.05, 0.3, 1.0, 2.0, 3.0, 4.0, 5.5, 7.0, 9.0, 12.0, 16.0])


@pytest.mark.parametrize("k", [2, 3, 14, 110])
@pytest.mark.parametrize("df", [1, 2, 5, 21, 637, 27_141, 100_000, 1e6])
def test_the_cdf_equals_scipys_within_its_tolerance(k, df):
    ours = sr.studentized_range_cdf(Q, k, df)
    assert np.abs(ours - stats.studentized_range.cdf(Q, k, df)).max() < 2e-11  # scipy integrates to 1e-11


def brute_cdf(q: float, k: int, df: float) -> float:
    """P(Q ≤ q) as the textbook double integral, each level by adaptive `quad`."""

    def range_cdf(w):
        def integrand(z):
            return np.exp(-z * z / 2) / np.sqrt(2 * np.pi) * max(special.ndtr(z + w) - special.ndtr(z), 0) ** (k - 1)

        return k * integrate.quad(integrand, -np.inf, np.inf, epsabs=1e-14, limit=200)[0]

    density = lambda s: stats.chi.pdf(s * np.sqrt(df), df) * np.sqrt(df)  # noqa: E731
    return integrate.quad(lambda s: density(s) * range_cdf(q * s), 0, np.inf, epsabs=1e-13, limit=400)[0]


@pytest.mark.parametrize(("k", "df", "q"), [(50, 1, 3.0), (110, 2, 12.0), (200, 3, 9.0), (4, 21, 3.5)])
def test_few_degrees_of_freedom_and_many_means_refine_the_rule_to_the_brute_force(k, df, q):
    assert sr.studentized_range_cdf(q, k, df)[0] == pytest.approx(brute_cdf(q, k, df), abs=1e-11)


def test_edges_and_the_survival_function():
    q = np.array([-1.0, 0.0, np.inf, 3.0])
    cdf = sr.studentized_range_cdf(q, 4, 21)
    assert cdf[:3].tolist() == [0.0, 0.0, 1.0] and 0 < cdf[3] < 1
    assert sr.studentized_range_sf(q, 4, 21).tolist() == pytest.approx((1 - cdf).tolist(), abs=0)
    assert sr.studentized_range_cdf(np.array([]), 4, 21).shape == (0,)


@pytest.mark.parametrize(("level", "k", "df"), [(0.95, 3, 10), (0.9, 4, 21), (0.95, 14, 637), (0.99, 110, 27_141)])
def test_the_critical_value_is_scipys(level, k, df):
    critical = sr.studentized_range_ppf(level, k, df)
    assert critical == pytest.approx(stats.studentized_range.ppf(level, k, df), rel=1e-10)
    assert sr.studentized_range_cdf(critical, k, df)[0] == pytest.approx(level, abs=1e-12)


def test_a_level_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        sr.studentized_range_ppf(1.0, 3, 10)
