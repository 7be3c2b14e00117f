"""Rows to fit on and rows to score on, and fit parameters split with them."""

import numbers

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit, check_cv
from sklearn.utils.multiclass import type_of_target

from ._frames import is_pandas, is_polars, take_rows

#: Share of the rows held out when no ``cv`` is given.
HOLDOUT_FRACTION = 0.2


def reusable_cv(cv):
    """``cv`` as every use in one fit (or call) can split again: an
    iterable of ``(train, test)`` splits (a generator such as
    ``KFold(3).split(X, y)``, or a list) read once into a list, as
    scikit-learn's ``check_cv`` reads it; an int, None or a splitter (an
    object with ``split``) as given, so that they split as before."""
    if not _splits_given(cv):
        return cv
    return list(check_cv(cv).split())


def _splits_given(cv):
    """Whether ``cv`` is an iterable of splits (not an int, None or a
    splitter)."""
    return not (cv is None or isinstance(cv, numbers.Integral) or hasattr(cv, "split"))


def routing_splitter(cv):
    """The splitter whose metadata requests the router of ``fit`` reads:
    ``check_cv(cv)``, or for an iterable of splits the same wrapper of no
    split (reading the splits would consume a generator before ``fit``)."""
    return check_cv([] if _splits_given(cv) else cv)


def held_out_splits(estimator, cv, y, seed):
    """Train/test index pairs: the splits of ``cv``, or one held-out split of
    ``HOLDOUT_FRACTION`` of the rows (stratified for a classifier when every
    class can be on both sides).

    A classifier's rows of a class of one row are all fitted on, none held
    out: a model fitted without a class gives it no probability, which
    log-loss and the Brier score cannot score. The other rows are split as
    they would be alone."""
    if cv is not None:
        splitter = check_cv(cv, y, classifier=is_classifier(estimator))
        return list(splitter.split(np.zeros((len(y), 1)), y))
    if not is_classifier(estimator) or type_of_target(y) not in (
        "binary",
        "multiclass",
    ):
        return _holdout(y, False, seed)
    _, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    codes = codes.reshape(-1)
    single = counts[codes] < 2
    rows = np.flatnonzero(~single)
    if not single.any() or len(rows) < 2:
        return _holdout(y, _stratifiable(counts, len(y)), seed)
    [(train, test)] = _holdout(
        codes[rows], _stratifiable(counts[counts >= 2], len(rows)), seed
    )
    train = np.sort(np.concatenate([rows[train], np.flatnonzero(single)]))
    return [(train, rows[test])]


def folds_fitting_single_rows(estimator, n_folds, y):
    """The splits of ``n_folds`` folds (stratified for a classifier), with a
    classifier's rows of a class of one row fitted on in every split and
    held out in none, as in :func:`held_out_splits`: a model fitted without
    a class cannot score it. The other rows are split as they would be
    alone."""
    classifier = is_classifier(estimator)
    splitter = check_cv(n_folds, y, classifier=classifier)
    if not classifier or type_of_target(y) not in ("binary", "multiclass"):
        return list(splitter.split(np.zeros((len(y), 1)), y))
    _, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    single = counts[codes.reshape(-1)] < 2
    rows = np.flatnonzero(~single)
    if not single.any() or len(rows) < n_folds:
        return list(splitter.split(np.zeros((len(y), 1)), y))
    return [
        (np.sort(np.concatenate([rows[train], np.flatnonzero(single)])), rows[test])
        for train, test in splitter.split(np.zeros((len(rows), 1)), y[rows])
    ]


def cross_fit_splits(estimator, y, seed):
    """Two ``(train, test)`` splits whose test rows are complementary halves
    of y's rows, drawn with ``seed`` (by class for a classifier): every row
    is held out once. A classifier's rows of a class of one row are fitted
    on in both, held out in neither (as in ``held_out_splits``)."""
    n_rows = len(y)
    rows = np.arange(n_rows)
    strata = None
    if is_classifier(estimator) and type_of_target(y) in ("binary", "multiclass"):
        _, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
        codes = codes.reshape(-1)
        single = counts[codes] < 2
        rows = np.flatnonzero(~single)
        strata = codes[rows]
    order = np.random.RandomState(seed).permutation(len(rows))
    if strata is not None:  # alternate halves within each class, shuffled
        order = order[np.argsort(strata[order], kind="stable")]
    half = np.zeros(len(rows), dtype=bool)
    half[order[1::2]] = True
    fitted_on_both = np.setdiff1d(np.arange(n_rows), rows)
    return [
        (np.sort(np.concatenate([rows[~side], fitted_on_both])), rows[side])
        for side in (half, ~half)
    ]


def _stratifiable(counts, n_rows):
    """Whether ``n_rows`` of classes of ``counts`` rows each can be held out
    by class: every class has two rows, and there are at least as many
    test rows, and training rows, as classes (else a plain random split)."""
    n_test = int(np.ceil(HOLDOUT_FRACTION * n_rows))
    return bool(
        counts.min() >= 2 and n_rows - n_test >= len(counts) and n_test >= len(counts)
    )


def _holdout(y, stratify, seed):
    """One split of ``HOLDOUT_FRACTION`` of y's rows held out, drawn with
    ``seed`` (by class with ``stratify``)."""
    splitter = (StratifiedShuffleSplit if stratify else ShuffleSplit)(
        n_splits=1, test_size=HOLDOUT_FRACTION, random_state=seed
    )
    return list(splitter.split(np.zeros((len(y), 1)), y))


def check_held_out_splits(estimator, y, splits, sample_weight):
    """A ValueError naming the first of ``splits`` (train/test index pairs;
    a test of None scores no held-out row) that cannot be fitted and scored:
    a classifier's training rows of a single class (the other classes have
    too few rows for every split), or test rows whose ``sample_weight`` is
    all zero (their weighted score is undefined)."""
    _check_split_classes(estimator, y, splits)
    if sample_weight is None:
        return
    weight = np.asarray(sample_weight)
    for k, (_, test) in enumerate(splits):
        if test is not None and len(test) and not np.any(weight[test]):
            raise ValueError(
                f"sample_weight is zero on every one of the {len(test)} "
                f"held-out rows of split {k + 1} of {len(splits)} (rows "
                f"{_rows_text(test)}), so their weighted score is undefined. "
                "The rows are probably sorted by weight: shuffle them, or "
                "pass a cv that mixes them (KFold(shuffle=True), or a "
                "StratifiedKFold on the weighted classes)."
            )


def _check_split_classes(estimator, y, splits):
    """``check_held_out_splits``'s check of a classifier's training rows."""
    y = np.asarray(y)
    if not is_classifier(estimator) or y.ndim != 1:
        return
    for k, (train, _) in enumerate(splits):
        if train is None or len(np.unique(y[train])) > 1:
            continue
        labels, counts = np.unique(y, return_counts=True)
        counts = np.where(np.isin(labels, y[train]), np.inf, counts)
        rare = int(np.argmin(counts))  # the rarest class the rows lack
        label = labels[rare].item() if hasattr(labels[rare], "item") else labels[rare]
        raise ValueError(
            f"class {label!r} has {int(counts[rare])} row(s) of y, and the "
            f"training rows of split {k + 1} of {len(splits)} hold none of "
            "them: they hold a single class, on which no classifier can be "
            "fitted. Merge the class with another or remove its rows; or "
            "pass a cv whose training rows all hold it (StratifiedKFold "
            "with n_splits at most its rows), or a method that scores no "
            "held-out rows (method='oob_permutation' or 'mdi')."
        )


def _rows_text(rows):
    """Row positions for a message: the first few."""
    shown = ", ".join(str(int(r)) for r in rows[:5])
    return shown + (", ..." if len(rows) > 5 else "")


def split_params(params, rows, n_rows):
    """Fit parameters restricted to ``rows`` (per-row values are indexed)."""
    out = {}
    for key, value in params.items():
        if is_pandas(value) or is_polars(value):
            per_row = value.shape[0] == n_rows
            out[key] = take_rows(value, rows) if per_row else value
            continue
        array = (
            np.asarray(value)
            if hasattr(value, "__array__") or isinstance(value, (list, tuple))
            else None
        )
        if array is not None and array.ndim >= 1 and array.shape[0] == n_rows:
            out[key] = array[rows]
        else:
            out[key] = value
    return out
