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


def rank_pvalues(statistics, null):
    """Share of null values at least as large as each statistic.

    ``p = (1 + #{null >= s}) / (N + 1)``: exact (never below its nominal
    level) when a statistic under the null hypothesis is exchangeable with
    the ``N`` null values, and never smaller than ``1 / (N + 1)``.

    Returns
    -------
    pvalues : ndarray of shape (n_statistics,)
    """
    statistics = np.asarray(statistics, dtype=np.float64)
    null = np.sort(np.asarray(null, dtype=np.float64))
    at_least = len(null) - np.searchsorted(null, statistics, side="left")
    return (1.0 + at_least) / (len(null) + 1.0)


def tail_pvalues(statistics, null, *, min_exceedances=10, tail_size=None):
    """Rank p-values, with a generalized Pareto tail beyond the null values.

    Where at least ``min_exceedances`` null values reach a statistic, its
    p-value is the rank p-value of :func:`rank_pvalues`. Beyond that the
    rank p-value can only say "fewer than ``min_exceedances / N``"; there a
    generalized Pareto distribution fitted to the ``tail_size`` largest null
    values (by maximum likelihood, the threshold at the next value down)
    extrapolates the tail, as for permutation p-values smaller than the
    number of permutations can resolve (Knijnenburg et al. 2009). The
    extrapolated p-value is capped by the rank p-value at the point where
    the tail takes over, so that p-values stay monotone in the statistic.

    Returns
    -------
    pvalues : ndarray of shape (n_statistics,)
    """
    statistics = np.asarray(statistics, dtype=np.float64)
    null = np.sort(np.asarray(null, dtype=np.float64))
    n = len(null)
    pvalues = rank_pvalues(statistics, null)
    if tail_size is None:
        tail_size = max(min(n // 10, 250), 2 * min_exceedances)
    tail_size = min(tail_size, n - 1)
    at_least = n - np.searchsorted(null, statistics, side="left")
    beyond = at_least < min_exceedances
    if not np.any(beyond) or tail_size < 2 * min_exceedances:
        return pvalues
    threshold = null[n - tail_size - 1]
    excess = null[n - tail_size :] - threshold
    if not np.ptp(excess) > 0:
        return pvalues
    shape, _, scale = stats.genpareto.fit(excess, floc=0.0)
    tail = (tail_size / (n + 1.0)) * stats.genpareto.sf(
        statistics[beyond] - threshold, shape, loc=0.0, scale=scale
    )
    cap = (1.0 + min_exceedances - 1) / (n + 1.0)
    pvalues[beyond] = np.minimum(tail, cap)
    return pvalues


def standardized_scores(real, probes, owners, n_groups):
    """Each feature's mean importance over rounds, in units of its own probes.

    ``real`` (n_rounds, n_groups) holds each feature's importance in each
    round, ``probes`` (n_rounds, n_probes) the probes', and ``owners`` (same
    shape as ``probes``) the feature each probe mirrors (-1 for probes that
    mirror none: uniform or normal noise, which form one class of their
    own). A feature's score is ``(mean_r real - m) / s`` with ``m`` and ``s``
    the mean and standard deviation of its own probes' importances; each
    probe's null score is its importance in the same units, computed from
    the other probes of its class (leave one out), so that a probe is
    standardized as a feature is: by values that do not include it.

    Shadow probes keep their feature's distribution and number of distinct
    values, so standardizing by them removes the differences in location
    and spread between features of different cardinality that make one
    pool of probes unfair to some features. Pooling the standardized probe
    scores of all features then gives ``n_rounds * n_probes`` null values,
    fine enough for the small p-values that a correction over many features
    needs.

    Returns
    -------
    scores : ndarray of shape (n_groups,)
    null : ndarray of shape (n_null,)
        The probes' standardized scores (classes with fewer than three
        probes contribute none).
    """
    real = np.asarray(real, dtype=np.float64)
    probes = np.asarray(probes, dtype=np.float64).ravel()
    owners = np.asarray(owners).ravel()
    mean_real = real.mean(axis=0)
    scores = np.empty(n_groups)
    classes = {}
    for owner in np.unique(owners):
        classes[owner] = probes[owners == owner]
    pooled = classes.get(-1)
    null = []
    for values in classes.values():
        k = len(values)
        if k < 3:
            continue
        total, squares = values.sum(), np.sum(values**2)
        loo_mean = (total - values) / (k - 1)
        loo_var = (squares - values**2 - (k - 1) * loo_mean**2) / (k - 2)
        loo_sd = np.sqrt(np.maximum(loo_var, 0.0))
        ok = loo_sd > 0
        null.append((values[ok] - loo_mean[ok]) / loo_sd[ok])
    for g in range(n_groups):
        values = classes.get(g, pooled)
        if values is None or len(values) < 2 or not np.std(values) > 0:
            values = probes
        center, spread = values.mean(), values.std(ddof=1)
        if not spread > 0:
            scores[g] = np.inf if mean_real[g] > center else -np.inf
        else:
            scores[g] = (mean_real[g] - center) / spread
    null = np.concatenate(null) if null else np.zeros(0)
    return scores, null
