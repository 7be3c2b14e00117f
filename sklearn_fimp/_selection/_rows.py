"""Rows that hang together: time order and groups.

The probe test exchanges rows: a shuffled copy of a column is a draw from
its null only when the rows are exchangeable. With time-ordered rows a
noise column keeps its autocorrelation and a shuffled shadow loses it; with
grouped rows (repeated measures of a customer, a patient, a store) a
column constant within groups keeps that constancy and a shuffled shadow
loses it. A forest then fits the noise column to neighbouring rows in a way
its shadows cannot be fitted, and the noise column "beats" them
(``THEORY.md`` section 9: 20 of 20 data sets kept noise out of bag).

:class:`RowStructure` says how the rows hang together, from what the user
passed the scikit-learn way: a ``cv`` whose test rows come after its
training rows (``TimeSeriesSplit``) means time order; ``fit(X, y,
groups=...)`` for a group-aware ``cv`` means groups. Its ``shadow_rows``
draws the rows a shadow copies so that the shadow keeps the dependence a
noise column would have: a circular shift by a random lag between a tenth
and nine tenths of the rows along time (a surrogate that keeps the
autocorrelation but for one seam); along groups, a permutation of whole
groups for a column constant within each group, and a permutation within
each group otherwise (restricted permutations).
"""

import warnings

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import check_cv

from .._utils._frames import is_pandas, is_polars

INDEPENDENT, TIME, GROUPS = "independent", "time", "groups"
#: Lag-1 autocorrelation of y in row order above which ``fit`` warns that
#: the rows may not be independent (for independent rows its standard
#: deviation is about 1 / sqrt(n_rows): 0.05 on 400 rows).
STRONG_AUTOCORRELATION = 0.5


class RowStructure:
    """How the rows of X hang together.

    Parameters
    ----------
    kind : {"independent", "time", "groups"}
    groups : ndarray of shape (n_rows,) or None
        The group of each row, coded 0, 1, ... (``kind="groups"``).
    """

    def __init__(self, kind=INDEPENDENT, groups=None):
        self.kind = kind
        self.groups = groups

    def __repr__(self):
        return f"RowStructure({self.kind!r})"

    def shadow_rows(self, X, columns, rng):
        """The row each row of a shadow of ``columns`` copies."""
        n = X.shape[0]
        if self.kind == TIME:
            margin = max(1, n // 10)
            lag = rng.randint(margin, max(margin, n - margin) + 1)
            return (np.arange(n) - lag) % n
        if self.kind == GROUPS:
            if _constant_within(X, columns, self.groups):
                first = _first_rows(self.groups)
                return first[rng.permutation(len(first))][self.groups]
            return _within_groups(self.groups, rng)
        return rng.permutation(n)


def _first_rows(groups):
    """The first row of each group (groups coded 0, 1, ...)."""
    _, first = np.unique(groups, return_index=True)
    return first


def _within_groups(groups, rng):
    """A permutation of the rows that keeps each row in its group."""
    rows = np.arange(len(groups))
    out = rows.copy()
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.diff(groups[order])) + 1
    for block in np.split(order, bounds):
        out[block] = block[rng.permutation(len(block))]
    return out


def _column(X, c):
    if is_pandas(X):
        return X.iloc[:, c].to_numpy()
    if is_polars(X):
        return X.get_column(X.columns[c]).to_numpy()
    return np.asarray(X)[:, c]


def _constant_within(X, columns, groups):
    """Whether each of ``columns`` takes one value in every group."""
    first = _first_rows(groups)
    for c in columns:
        values = _column(X, c)
        reference = values[first][groups]
        same = reference == values
        if values.dtype.kind == "f":
            same |= np.isnan(reference) & np.isnan(values)
        else:
            same |= _missing(reference) & _missing(values)
        if not np.all(same):
            return False
    return True


def _missing(values):
    return np.array([v is None or v != v for v in values], dtype=bool)


def row_structure(estimator, cv, X, y, split_kwargs):
    """The :class:`RowStructure` the user's ``cv`` and ``fit(groups=...)``
    say: groups when the rows' groups reach the splitter, time order when
    every test row of every split of ``cv`` comes after its training rows,
    independent rows otherwise (with a warning when y's lag-1
    autocorrelation in row order is strong)."""
    groups = split_kwargs.get("groups")
    if groups is not None:
        _, codes = np.unique(np.asarray(groups), return_inverse=True)
        return RowStructure(GROUPS, codes.ravel())
    if cv is not None and _time_ordered(estimator, cv, X, y):
        return RowStructure(TIME)
    warn_if_autocorrelated(
        y,
        where="in the order of X's rows",
        advice="The probe test and out-of-bag importances assume independent "
        "rows: on such rows they keep noise features. If the rows are "
        "time-ordered, pass cv=TimeSeriesSplit(...); if they are grouped, pass "
        "a group-aware cv (GroupKFold(...)) and fit(X, y, groups=...). If the "
        "rows are only sorted, shuffle them.",
        stacklevel=6,
    )
    return RowStructure(INDEPENDENT)


def _time_ordered(estimator, cv, X, y):
    if isinstance(cv, int | np.integer):
        return False
    splits = cv if isinstance(cv, list) else None
    if splits is None:
        splitter = check_cv(cv, y, classifier=is_classifier(estimator))
        try:
            splits = list(splitter.split(X, y))
        except (TypeError, ValueError):  # a splitter that needs groups
            return False
    return len(splits) > 0 and all(
        len(train) and len(test) and np.max(train) < np.min(test)
        for train, test in splits
    )


def lag_one_autocorrelation(y):
    """Lag-1 autocorrelation of a numeric y in row order; None for fewer
    than 30 rows, a constant y, or class labels (tables sorted by class,
    such as scikit-learn's iris, would look autocorrelated, and shuffled
    held-out splits and out-of-bag rows do not mind the order)."""
    y = np.asarray(y)
    if y.ndim > 1 or len(y) < 30 or y.dtype.kind not in "fiu":
        return None
    if len(np.unique(y)) <= 10:
        return None
    s = y.astype(np.float64) - y.mean()
    denominator = np.dot(s, s)
    return float(np.dot(s[1:], s[:-1]) / denominator) if denominator > 0 else None


def warn_if_autocorrelated(y, *, where, advice, stacklevel):
    """Warn when y's lag-1 autocorrelation in row order is strong
    (``STRONG_AUTOCORRELATION``): the rows may not be independent. ``where``
    says which rows' order was read, ``advice`` what the caller's user can
    do; ``stacklevel`` is that of ``warnings.warn`` called here."""
    rho = lag_one_autocorrelation(y)
    if rho is None or rho < STRONG_AUTOCORRELATION:
        return
    warnings.warn(
        f"y's neighbouring rows are strongly correlated (lag-1 autocorrelation "
        f"{rho:.2f} {where}), as in time-ordered or grouped rows. {advice}",
        UserWarning,
        stacklevel=stacklevel,
    )
