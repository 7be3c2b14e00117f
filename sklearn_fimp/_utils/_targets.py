"""What kind of target y is: class labels or a quantity.

One rule for every place that picks a model for the user (the selectors'
default forest, the report's): a target that is not numeric (strings,
booleans, categories), or that holds at most ``MAX_CLASSES_OF_NUMERIC_TARGET``
distinct values that are all whole numbers, is made of class labels; any
other numeric target is a quantity. scikit-learn's ``type_of_target`` calls
every whole-number target "multiclass", which would fit a classifier with a
class per distinct value to counts, prices or scores (scikit-learn's own
diabetes target has 214 distinct whole numbers on 442 rows).
"""

import numpy as np

#: A numeric target with at most this many distinct values, all of them
#: whole numbers, is treated as class labels.
MAX_CLASSES_OF_NUMERIC_TARGET = 10


def _is_categorical(y):
    dtype = getattr(y, "dtype", None)
    return dtype is not None and str(dtype) == "category"


def _whole_values(values):
    """Distinct values (per column) of a numeric array, and whether they are
    all finite whole numbers."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    whole = bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))
    distinct = max(len(np.unique(values[:, j])) for j in range(values.shape[1]))
    return distinct, whole


def target_task(y):
    """ "classification" or "regression": the kind of model ``y`` calls for.

    ``y`` is array-like of shape (n_samples,) or (n_samples, n_outputs); a
    pandas Series with a category dtype holds class labels whatever its
    categories are."""
    if _is_categorical(y):
        return "classification"
    values = np.asarray(y)
    if values.dtype.kind not in "iuf":  # strings, objects, booleans
        return "classification"
    distinct, whole = _whole_values(values)
    if whole and distinct <= MAX_CLASSES_OF_NUMERIC_TARGET:
        return "classification"
    return "regression"


def many_whole_numbers(y):
    """The number of distinct values of a whole-number target that
    :func:`target_task` calls a quantity (more than
    ``MAX_CLASSES_OF_NUMERIC_TARGET`` of them), or 0: such a target may
    also be class labels (ids of many classes, stored as integers or as
    floats), which only its user knows."""
    if _is_categorical(y):
        return 0
    values = np.asarray(y)
    if values.dtype.kind not in "iuf":
        return 0
    distinct, whole = _whole_values(values)
    return distinct if whole and distinct > MAX_CLASSES_OF_NUMERIC_TARGET else 0
