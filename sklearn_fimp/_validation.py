"""Input checks shared by the importance functions."""

import numpy as np
from sklearn.utils.validation import check_array, check_is_fitted

from ._compat import check_sample_weight
from ._frames import check_table


def check_inputs(estimator, X, y, sample_weight=None, *, fitted=True):
    """Validate the arguments of an importance function.

    Returns ``X`` (a numpy array, or the caller's pandas/polars frame), the
    feature names, ``y`` as an array and ``sample_weight`` as a float array or
    None. Nothing the caller passed is modified.
    """
    if fitted:
        check_is_fitted(estimator)
    X, feature_names = check_table(X)
    y = check_array(
        y, ensure_2d=False, dtype=None, ensure_all_finite=False, input_name="y"
    )
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"X has {X.shape[0]} rows but y has {y.shape[0]}; pass one target "
            "value per row of X."
        )
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X)
    return X, feature_names, y, sample_weight


def subset(values, rows):
    """``values[rows]`` for an optional array (None stays None)."""
    if values is None or rows is None:
        return values
    return np.asarray(values)[rows]
