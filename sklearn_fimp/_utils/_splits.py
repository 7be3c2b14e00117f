"""Rows to fit on and rows to score on, and fit parameters split with them."""

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit, check_cv
from sklearn.utils.multiclass import type_of_target

from ._frames import is_pandas, is_polars, take_rows

#: Share of the rows held out when no ``cv`` is given.
HOLDOUT_FRACTION = 0.2


def held_out_splits(estimator, cv, y, seed):
    """Train/test index pairs: the splits of ``cv``, or one held-out split of
    ``HOLDOUT_FRACTION`` of the rows (stratified for a classifier when every
    class can be on both sides)."""
    if cv is not None:
        splitter = check_cv(cv, y, classifier=is_classifier(estimator))
        return list(splitter.split(np.zeros((len(y), 1)), y))
    stratify = is_classifier(estimator) and type_of_target(y) in (
        "binary",
        "multiclass",
    )
    if stratify:
        # a class with one row, or more classes than test rows, cannot be
        # split by class; fall back to a plain random split
        _, counts = np.unique(y, return_counts=True)
        n_test = int(np.ceil(HOLDOUT_FRACTION * len(y)))
        stratify = counts.min() >= 2 and len(y) - n_test >= len(counts)
        stratify = stratify and n_test >= len(counts)
    splitter = (StratifiedShuffleSplit if stratify else ShuffleSplit)(
        n_splits=1, test_size=HOLDOUT_FRACTION, random_state=seed
    )
    return list(splitter.split(np.zeros((len(y), 1)), y))


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
