"""Stability selection: ``ImportanceSelector(threshold="stability")``.

Each round splits the rows at random into two complementary halves, fits
a fresh clone of the estimator on each half and measures the features'
importances there with the selector's method (``plan.measure``). In each
half a feature (or group) is *selected* when its importance is positive
and among the ``q`` largest; it is kept when it is selected in at least
``CUTOFF`` of the halves (its ``selection_frequency_``).

The promise is a bound on the expected number of noise features kept, the
per-family error rate (PFER): with ``p`` features, a feature no more
likely to be selected in a half than a random choice of ``q`` features is
kept in expectation at most ``q**2 / ((2 * CUTOFF - 1) * p)`` times
(Meinshausen and Buehlmann 2010, theorem 1, under exchangeable noise
features and a selection no worse than random guessing; Shah and Samworth
2013 prove it for complementary pairs of halves). ``top_count`` picks the
largest ``q`` whose bound is at most ``pfer``. The bound also bounds the
probability of keeping any noise feature (the family-wise error rate).

It differs from the probe test in what it can find: the bound caps each
half at ``q`` features, about ``sqrt(pfer * p / 5)``, so it suits a few
strong features among many columns (more columns than rows), and keeps
little where the signal is spread over many correlated columns, whose
importance the model shares out. What it kept and cost on real wide
tables and the error measured on wide nulls are on
``docs/bench_power_wide.rst`` and ``docs/bench_calibration.rst``.
"""

import math
import warnings

import numpy as np
from sklearn.base import is_classifier

from ..._methods import HELD_OUT_ROWS, REFITS
from ..._utils._frames import take_rows
from ..._utils._random import MAX_SEED
from ..._utils._result import importance_result
from ..._utils._splits import split_params
from .._measuring._measure import real_features_only
from .._rows import INDEPENDENT, TIME
from ._decisions import Outcome

#: The share of the halves a feature must be selected in to be kept. Of
#: 0.6, 0.75 and 0.9 with the same bound (``pfer=1``), 0.6 kept the most
#: real columns on the wide tables of ``docs/bench_power_wide.rst`` (7, 4
#: and 1 on permeability, 6, 6 and 6 on the grants test table; no planted
#: column with any), measured before the page's run: ``q`` grows with
#: ``2 * CUTOFF - 1`` more slowly than a real feature's frequency, on a
#: noisy model of 30 trees and half the rows, falls below a higher cutoff.
CUTOFF = 0.6
#: Rounds (pairs of complementary halves) with ``n_rounds="auto"``: 50 fits
#: on half the rows, as Shah and Samworth (2013) recommend.
ROUNDS = 25


def top_count(pfer, n_groups, cutoff=CUTOFF):
    """The features (or groups) selected in each half, at most: the largest
    ``q`` with ``q**2 / ((2 * cutoff - 1) * n_groups) <= pfer`` (0 when
    even one is too many for ``pfer``), and at most ``n_groups``."""
    q = math.floor(math.sqrt(pfer * (2 * cutoff - 1) * n_groups) * (1 + 1e-12))
    return int(min(q, n_groups))


def pfer_bound(q, n_groups, cutoff=CUTOFF):
    """The bound on the expected number of noise features kept for ``q``."""
    return q * q / ((2 * cutoff - 1) * n_groups)


def complementary_halves(n_rows, rng, classes=None):
    """Two disjoint halves of the rows, drawn with ``rng``; with an odd
    count the row left over is in neither. ``classes`` (one label per row,
    or None): each class is split in two as evenly as the counts allow, so
    that a rare class is in both halves (its odd rows go to the halves in
    turn)."""
    order = rng.permutation(n_rows)
    if classes is None:
        half = n_rows // 2
        return np.sort(order[:half]), np.sort(order[half : 2 * half])
    # the rows grouped by class, each class in random order: every other
    # row then splits each class in two
    order = order[np.argsort(classes[order], kind="stable")]
    first, second = order[0::2], order[1::2]
    first = first[: len(second)]  # an odd count: the last row in neither
    return np.sort(first), np.sort(second)


def check_stability_rows(rows, n_rows):
    """The bound needs noise features exchangeable with each other, which
    rows that hang together break: a noise column constant within groups
    of rows (or smooth in time) is fitted to neighbouring rows in a way an
    independent one cannot be, and out-of-bag or held-out rows of the same
    group (or time) reward it. And too few rows leave nothing to fit on."""
    if rows.kind != INDEPENDENT:
        what = (
            "time-ordered rows (every test row of the cv comes after its training rows)"
            if rows.kind == TIME
            else "grouped rows (the rows' groups were passed to fit)"
        )
        raise ValueError(
            "threshold='stability' fits on random halves of the rows and "
            f"assumes independent rows; this fit has {what}, where a noise "
            "column that follows the groups or the time order can be "
            "selected as often as a real one. Use threshold='probes', whose "
            "shadow probes keep the rows' dependence (docs/probe_test.rst)."
        )
    if n_rows < 4:
        raise ValueError(
            f"threshold='stability' fits on halves of the rows, and X has "
            f"{n_rows}: pass at least 4 rows, or threshold='probes'."
        )


def stability_rounds(plan, X, y, fit_kwargs, seed):
    """``plan.n_rounds`` pairs of complementary halves (``plan``: a
    ``_plan.Plan``): ``(result, model, history)``, the result's
    ``importances`` one column per half (its mean importance there), the
    model fitted on the last half, and ``history.real`` of shape
    ``(2 * n_rounds, n_groups)``."""
    n_rows, n_groups = X.shape[0], len(plan.groups)
    check_stability_rows(plan.rows, n_rows)
    _check_cv_splits_halves(plan)
    rng = np.random.RandomState(seed)
    weight = plan.options["sample_weight"]
    # a classifier's halves split each class in two (of one target)
    classes = None
    if is_classifier(plan.estimator) and (y.ndim == 1 or y.shape[1] == 1):
        classes = np.unique(y.reshape(n_rows), return_inverse=True)[1]
    halves, model = [], None
    for k in range(plan.n_rounds):
        for half in complementary_halves(n_rows, rng, classes):
            _check_half_classes(classes, half, y)
            estimator_seed, importance_seed = rng.randint(MAX_SEED + 1, size=2)
            plan.progress(
                f"round {k + 1} of {plan.n_rounds}, half {len(halves) % 2 + 1}: "
                f"measuring {plan.method_name!r} importances of {n_groups} "
                f"features or groups on {len(half)} rows"
            )
            estimator = plan.round_estimator(int(estimator_seed))
            options = dict(
                plan.options,
                seed=int(importance_seed),
                sample_weight=None if weight is None else weight[half],
            )
            result, model = plan.measure(
                estimator,
                take_rows(X, half),
                y[half],
                options,
                fit_kwargs=split_params(fit_kwargs, half, n_rows),
            )
            halves.append(result.importances_mean[:n_groups])
    history = np.asarray(halves)
    result = importance_result(
        history.T, plan.labels, method=plan.method_name, n_rounds=plan.n_rounds
    )
    return real_features_only(result, plan.labels, plan.groups), model, history


def _check_cv_splits_halves(plan):
    """A cv given as splits (a list, or the splits an iterable gave) holds
    row positions of all of X, which a half's measure cannot split."""
    splits_given = isinstance(plan.cv, list)
    if (
        not splits_given
        or plan.method is None
        or plan.method.rows not in (HELD_OUT_ROWS, REFITS)
    ):
        return
    raise ValueError(
        f"threshold='stability' measures {plan.method.name!r} importances on "
        "halves of the rows, each split by cv, and cv was given as splits "
        f"({len(plan.cv)} train/test pairs of positions in all of X's rows), "
        "which cannot split a half. Pass the splitter itself (e.g. "
        "cv=KFold(3), not KFold(3).split(X)), or threshold='probes'."
    )


def _check_half_classes(classes, half, y):
    """A ValueError when the rows ``half`` of a classifier's target (class
    codes ``classes``, None for a regressor) hold one class: no classifier
    can be fitted there (the other class has too few rows for both
    halves)."""
    if classes is None or len(np.unique(classes[half])) > 1:
        return
    labels, counts = np.unique(y.reshape(len(classes)), return_counts=True)
    rare = int(np.argmin(counts))
    label = labels[rare].item() if hasattr(labels[rare], "item") else labels[rare]
    raise ValueError(
        "threshold='stability' fits the classifier on halves of the rows, and "
        f"class {label!r} has {int(counts[rare])} row(s) of y, too few for "
        "both halves: a half holds a single class, on which no classifier "
        "can be fitted. Merge the class with another or remove its rows, or "
        "use threshold='probes'."
    )


def stability_decision(history, pfer, cutoff=CUTOFF):
    """The features (or groups) kept from the halves' importances
    ``history`` (n_halves, n_groups): ``(passed, order, frequency, q)``,
    ``order`` by decreasing selection frequency, then mean importance."""
    n_halves, n_groups = history.shape
    q = top_count(pfer, n_groups, cutoff)
    if q == 0:
        warnings.warn(
            f"pfer={pfer} is below what one feature selected in each half "
            f"costs with {n_groups} features (or groups), "
            f"{pfer_bound(1, n_groups, cutoff):.3g}: no feature can be kept "
            "with that promise. Pass a larger pfer, at least that value.",
            UserWarning,
            stacklevel=5,
        )
    # the q largest importances of each half, among the positive ones; ties
    # at the q-th value are broken by column order (stable sort)
    ranks = np.argsort(np.argsort(-history, axis=1, kind="stable"), axis=1)
    frequency = top_frequency(history, ranks, q)
    order = np.lexsort((-history.mean(axis=0), -frequency))
    return frequency >= cutoff - 1e-12, order, frequency, q


def top_frequency(history, ranks, q):
    """The share of the halves in which each feature is among the ``q``
    largest importances (``ranks``: their order in each half), and
    positive."""
    return ((ranks < q) & (history > 0)).mean(axis=0)


#: How far above ``pfer`` :func:`bound_limits` looks for a larger top count.
LIMIT_SEARCH = 5


def bound_limits(history, pfer, cutoff=CUTOFF):
    """``(q, kept)``: the smallest top count above the one ``pfer`` allows,
    within ``LIMIT_SEARCH`` times ``pfer``'s bound, at which the halves
    agree on more features (each among the top ``q`` of at least
    ``cutoff`` of the halves) than at the allowed one, and how many they
    agree on there; None when there is none. Several equally strong
    features share the top places of the halves: with ``q = 1``, three
    such columns among 18 were selected in 20%, 30% and 50% of the halves,
    and none was kept, where the top 2 (``pfer=1.2``) kept all three."""
    n_groups = history.shape[1]
    allowed = top_count(pfer, n_groups, cutoff)
    ranks = np.argsort(np.argsort(-history, axis=1, kind="stable"), axis=1)
    kept = np.sum(top_frequency(history, ranks, allowed) >= cutoff - 1e-12)
    for q in range(allowed + 1, top_count(LIMIT_SEARCH * pfer, n_groups, cutoff) + 1):
        more = int(np.sum(top_frequency(history, ranks, q) >= cutoff - 1e-12))
        if more > kept:
            return q, more
    return None


class StabilitySelection:
    """Stability selection's test strategy (``_decisions.select``): the
    features selected in at least ``CUTOFF`` of the halves' ``history``,
    the top ``q`` of each that ``pfer`` allows."""

    def __init__(self, pfer):
        self.pfer = pfer

    def decide(self, result, history, n_real):
        passed, order, frequency, q = stability_decision(history.real, self.pfer)
        cause = None
        limited = bound_limits(history.real, self.pfer)
        if limited is not None:
            larger, agreed = limited
            cause = (
                f"The bound pfer={self.pfer} lets each half select its top {q} "
                f"of {n_real} features (or groups), and several strong ones "
                f"share those places: at the top {larger}, {agreed} are "
                f"selected in at least {CUTOFF:.0%} of the halves (the "
                f"{int(passed.sum())} kept at the top {q}). "
                f"pfer={_rounded_up(pfer_bound(larger, n_real))} allows the "
                f"top {larger}, a bound of that many noise features kept in "
                "expectation; or use threshold='probes'."
            )
            if passed.any():  # with none kept, the too-few warning says it
                warnings.warn(cause, UserWarning, stacklevel=4)
        # 1 for the kept, then 2, 3, ... in order of frequency and importance
        ranking = np.empty(n_real, dtype=int)
        ranking[order] = np.maximum(np.arange(n_real) - passed.sum() + 2, 1)
        return Outcome(
            passed,
            order,
            CUTOFF,
            ranking,
            detail=f"were selected in at least {CUTOFF:.0%} of the halves (the "
            f"top {q} of each, pfer={self.pfer})",
            frequency=frequency,
            cause=cause,
        )


def _rounded_up(value):
    """``value`` rounded up to two significant digits, so that the bound it
    names allows what it says."""
    digits = 1 - math.floor(math.log10(value))
    return f"{math.ceil(value * 10**digits) / 10**digits:g}"
