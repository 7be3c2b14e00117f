"""The probe test: is a feature's importance larger than the probes'?

Pure functions on importance values: the p-value of each feature against
the probes, and the corrections for testing many features at once.
"""

import numpy as np
from scipy import stats


def _holm(pvalues):
    order = np.argsort(pvalues, kind="stable")
    m = len(pvalues)
    adjusted = np.maximum.accumulate(pvalues[order] * (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def _benjamini_hochberg(pvalues):
    order = np.argsort(pvalues, kind="stable")
    m = len(pvalues)
    scaled = pvalues[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def adjust_pvalues(pvalues, correction):
    """p-values adjusted for testing many features at once."""
    pvalues = np.asarray(pvalues, dtype=np.float64)
    if correction is None or len(pvalues) == 0:
        return pvalues.copy()
    if correction == "bonferroni":
        return np.minimum(pvalues * len(pvalues), 1.0)
    if correction == "holm":
        return _holm(pvalues)
    return _benjamini_hochberg(pvalues)


def critical_pvalue(adjusted, alpha, correction):
    """The raw p-value below which a feature is kept, given the decisions."""
    m = len(adjusted)
    kept = int(np.sum(adjusted <= alpha))
    if correction is None:
        return alpha
    if correction == "bonferroni":
        return alpha / m
    if correction == "holm":
        return alpha / (m - kept) if kept < m else alpha
    return alpha * max(kept, 1) / m


def probe_test(real_means, probe_means):
    """One-sided test of each real mean against the probes' distribution.

    Under the null hypothesis a feature's mean importance is one more draw
    from the distribution of the probes' mean importances. With ``K`` probe
    means of average ``m`` and standard deviation ``s``, the statistic
    ``t = (x - m) / (s * sqrt(1 + 1/K))`` has a Student t distribution with
    ``K - 1`` degrees of freedom if that distribution is normal (the
    prediction interval of one new draw). When every probe has the same
    importance (``s = 0``), a feature beats the probes exactly when its
    importance is larger (p-value 0), and not otherwise (p-value 1).

    Returns
    -------
    statistics, pvalues : ndarray of shape (n_real,)
    """
    real_means = np.asarray(real_means, dtype=np.float64)
    probe_means = np.asarray(probe_means, dtype=np.float64)
    k = len(probe_means)
    center = probe_means.mean()
    spread = probe_means.std(ddof=1) * np.sqrt(1 + 1 / k)
    if not spread > 0:
        statistics = np.where(real_means > center, np.inf, -np.inf)
        return statistics, np.where(real_means > center, 0.0, 1.0)
    statistics = (real_means - center) / spread
    return statistics, stats.t.sf(statistics, k - 1)
