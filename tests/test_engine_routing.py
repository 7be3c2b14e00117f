"""Routing: rows follow the trees' own rules, and groups that nearly every
path uses go to the plain path without the compiled kernels."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

from sklearn_fimp import permutation_importance
from sklearn_fimp._engine import _budgets, tree_ensemble, worth_rerouting

from ._engine_cases import (
    CLASSIFIERS,
    assert_same_importances,
    generic,
    make_data,
)

pytestmark = pytest.mark.usefixtures("engine_backend", "reroute_every_group")


@pytest.mark.parametrize("name", ["forest", "extra_trees", "bagging"])
def test_engine_missing_values_follow_the_trees_rule(name):
    # Trees trained with missing values send them where missing_go_to_left
    # says; permuted-in missing values and rows missing a value must be
    # re-routed accordingly.
    X, y = make_data(2)
    X[np.random.RandomState(2).uniform(size=X.shape) < 0.15] = np.nan
    model = CLASSIFIERS[name].fit(X[:250], y[:250])
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)
    assert_same_importances(model, X[250:], y[250:], groups=[[0, 1], 2, [3, 4]])


def test_engine_leaves_groups_every_path_uses_to_the_plain_path(
    engine_backend, monkeypatch
):
    # Deep trees on two features use both on nearly every path: without the
    # compiled kernels, re-routing would cost as much as predicting. A
    # feature no tree splits on costs nothing to re-route.
    if engine_backend == "compiled":
        pytest.skip("compiled, the engine re-routes every group")
    monkeypatch.setattr(_budgets, "MAX_AFFECTED_SHARE", 0.8)
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.uniform(size=(500, 2)), np.zeros(500)])
    y = X[:, 0] + X[:, 1]
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    ensemble = tree_ensemble(model)
    X32 = X.astype(np.float32)
    groups = [np.array([0]), np.array([1]), np.array([2])]
    assert list(worth_rerouting(ensemble, X32, groups)) == [
        False,
        False,
        True,
    ]
    mixed = permutation_importance(model, X, y, random_state=0)
    plain = permutation_importance(generic(model), X, y, random_state=0)
    np.testing.assert_array_equal(mixed.importances, plain.importances)
