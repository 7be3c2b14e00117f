"""Models and data shared by the tree engine's tests
(``tests/test_engine_*.py``), which compare the engine with the
predict-every-row path; their fixtures (``engine_backend``,
``reroute_every_group``) are in ``conftest.py``."""

import numpy as np
import pytest
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from sklearn_fimp import permutation_importance

CLASSIFIERS = {
    "tree": DecisionTreeClassifier(min_samples_leaf=3, random_state=0),
    "forest": RandomForestClassifier(n_estimators=12, random_state=0),
    "extra_trees": ExtraTreesClassifier(
        n_estimators=12, min_samples_leaf=2, random_state=0
    ),
    "boosting": GradientBoostingClassifier(n_estimators=15, random_state=0),
    "bagging": BaggingClassifier(
        DecisionTreeClassifier(), n_estimators=12, max_features=0.6, random_state=0
    ),
    "hist_boosting": HistGradientBoostingClassifier(
        max_iter=15, max_leaf_nodes=8, random_state=0
    ),
}
REGRESSORS = {
    "tree": DecisionTreeRegressor(min_samples_leaf=3, random_state=0),
    "forest": RandomForestRegressor(n_estimators=12, random_state=0),
    "extra_trees": ExtraTreesRegressor(n_estimators=12, random_state=0),
    "boosting": GradientBoostingRegressor(
        n_estimators=15, subsample=0.8, random_state=0
    ),
    "bagging": BaggingRegressor(
        DecisionTreeRegressor(), n_estimators=12, max_features=0.6, random_state=0
    ),
    "hist_boosting": HistGradientBoostingRegressor(
        max_iter=15, max_leaf_nodes=8, random_state=0
    ),
}


def make_data(n_classes):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 5))
    signal = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] * X[:, 3]
    signal = signal + rng.normal(scale=0.5, size=400)
    if n_classes == 0:
        return X, signal
    edges = np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.digitize(signal, edges)


def generic(model):
    """The same fitted model behind a Pipeline, which the engine does not
    take: the predict-every-row path."""
    return Pipeline([("model", model)])


def assert_same_importances(model, X, y, atol=1e-10, **kwargs):
    """The engine's importances equal the predict-every-row path's for the
    same permutations (``atol``: 1e-10, floating-point precision; a model
    that sums in float32, as XGBoost does, agrees to float32 precision)."""
    fast = permutation_importance(model, X, y, random_state=0, **kwargs)
    slow = permutation_importance(generic(model), X, y, random_state=0, **kwargs)
    assert fast.baseline_score == pytest.approx(slow.baseline_score, abs=1e-12)
    np.testing.assert_allclose(fast.importances, slow.importances, atol=atol)
    return fast


def count_engine_calls(monkeypatch):
    """A list that gets the model's class name each time the permutation
    core hands a model to the engine (``permuted_scores``)."""
    from sklearn_fimp._importance import _permutation

    calls = []
    engine = _permutation.permuted_scores

    def counted(*args, **kwargs):
        calls.append(type(args[0]).__name__)
        return engine(*args, **kwargs)

    monkeypatch.setattr(_permutation, "permuted_scores", counted)
    return calls
