"""What the engine keeps while one fitted model is measured many times.

Within :func:`keeping_ensembles` (the selector's rounds of a deterministic
model, which measure each fitted half of the rows again with fresh
permutations and never refit it inside the block), the engine keeps what
depends only on the model and the rows it measures: the model's ensemble
(``_scores.tree_ensemble``), its input coded from the rows
(:func:`kept_engine_input`), the row chunks and, when the rows fit one
chunk of a bounded size, their routing through the trees. Everything kept
is held, with the objects its key names, until the block ends, so that an
id is never reused for another object.
"""

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

#: What :func:`keeping_ensembles` keeps (None: outside the block).
_KEPT = ContextVar("kept_ensembles", default=None)


@contextmanager
def keeping_ensembles():
    """Within the block, the engine reads each fitted model once and keeps
    what it prepares from it and from the rows it measures (see the
    module's docstring), for callers that measure one fitted model many
    times and never refit it inside the block."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def kept(key, make, *held):
    """``make()``, kept under ``key`` within :func:`keeping_ensembles` (the
    objects ``held``, whose ids ``key`` names, are held with it)."""
    store = _KEPT.get()
    if store is None:
        return make()
    if key not in store:
        store[key] = (held, make())
    return store[key][1]


def kept_engine_input(estimator, ensemble, X):
    """``ensemble.adapter.engine_input(X)``; within
    :func:`keeping_ensembles`, kept for the next call on the same model
    with the same X (the same object, or a numeric array of equal values:
    the selector's rounds measure each fitted half on the same rows, sliced
    anew each round), so that the rounds code the rows once per model. X
    is held, not copied: within the block no one writes to it."""
    store = _KEPT.get()
    if store is None:
        return ensemble.adapter.engine_input(X)
    key = ("engine input", id(estimator))
    if key in store and _same_values(store[key][0], X):
        return store[key][1]
    X_engine = ensemble.adapter.engine_input(X)
    store[key] = (X, X_engine)
    return X_engine


def _same_values(seen, X):
    if seen is X:
        return True
    numeric = isinstance(seen, np.ndarray) and isinstance(X, np.ndarray)
    return (
        numeric
        and seen.dtype == X.dtype
        and X.dtype.kind in "biuf"
        and seen.shape == X.shape
        and np.array_equal(seen, X, equal_nan=X.dtype.kind == "f")
    )
