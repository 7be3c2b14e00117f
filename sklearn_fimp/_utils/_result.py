"""The one result type every importance function returns."""

import numpy as np
from sklearn.utils import Bunch


def importance_result(importances, feature_names, **details):
    """Build the result :class:`~sklearn.utils.Bunch`.

    Parameters
    ----------
    importances : array-like of shape (n_features_or_groups, n_repeats)
        One column per repeat (permutation, refit split or tree).
    feature_names : array-like of shape (n_features_or_groups,)
        Feature names, or group labels.
    **details
        What is needed to reproduce the result (``method``, ``scoring``,
        ``n_repeats``, ``baseline_score`` ...), stored as they are.

    Returns
    -------
    result : Bunch
        ``importances``, ``importances_mean`` and ``importances_std`` (both
        over the columns of ``importances``), ``feature_names`` and
        ``details``.
    """
    importances = np.asarray(importances, dtype=np.float64)
    if importances.ndim != 2 or importances.shape[0] != len(feature_names):
        raise ValueError(
            f"importances must be of shape ({len(feature_names)}, n_repeats); "
            f"got {importances.shape}. This is a bug in sklearn_fimp."
        )
    return Bunch(
        importances=importances,
        importances_mean=np.mean(importances, axis=1),
        importances_std=np.std(importances, axis=1),
        feature_names=np.asarray(feature_names, dtype=object),
        **details,
    )
