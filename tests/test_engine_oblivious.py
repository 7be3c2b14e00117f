"""Oblivious trees (CatBoost's, stumps) take the compiled kernels' leaf-number
path, which gives the same importances, to the last bit, as the compiled
path-and-descent kernels for the same permutations."""

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeRegressor

from sklearn_fimp import oob_permutation_importance, permutation_importance
from sklearn_fimp._engine import _backend, tree_ensemble

from ._engine_cases import make_data

pytestmark = pytest.mark.skipif(
    _backend.COMPILED is None,
    reason="the compiled kernels (sklearn_fimp._ckernels) were not built",
)


def _without_oblivious_path(monkeypatch):
    """Ensembles prepared in the rest of the test take the path-and-descent
    kernels, whatever their trees."""
    monkeypatch.setattr(_backend.ObliviousLevels, "of", classmethod(lambda *_: None))


def _compiled(monkeypatch):
    monkeypatch.setattr(_backend, "BACKEND", _backend.COMPILED)


def _importances(function, model, X, y, **kwargs):
    return function(model, X, y, n_repeats=3, random_state=0, **kwargs).importances


def _assert_oblivious_path_matches(monkeypatch, model, X, y, function, **kwargs):
    _compiled(monkeypatch)
    assert tree_ensemble(model).prepared.oblivious is not None
    fast = _importances(function, model, X, y, **kwargs)
    _without_oblivious_path(monkeypatch)
    assert tree_ensemble(model).prepared.oblivious is None
    slow = _importances(function, model, X, y, **kwargs)
    np.testing.assert_array_equal(fast, slow)
    return fast


@pytest.mark.parametrize("n_classes", [0, 2, 3])
@pytest.mark.parametrize("groups", [None, [[0, 3], 1, [2, 4]]])
# depth 5 on 150 rows: the kernel's flipped-bit table of one-output trees
# (leaves at most a quarter of the rows); depth 7: without it
@pytest.mark.parametrize("depth", [5, 7])
def test_engine_oblivious_catboost_equals_the_descent_kernels(
    monkeypatch, n_classes, groups, depth
):
    catboost = pytest.importorskip("catboost")
    X, y = make_data(n_classes)
    rng = np.random.RandomState(0)
    X = X.copy()
    X[rng.uniform(size=X.shape[0]) < 0.15, 1] = np.nan
    model_class = (
        catboost.CatBoostRegressor if n_classes == 0 else catboost.CatBoostClassifier
    )
    model = model_class(
        iterations=15,
        depth=depth,
        nan_mode="Max",
        random_seed=0,
        thread_count=1,
        verbose=False,
        allow_writing_files=False,
    ).fit(X[:250], y[:250])
    importances = _assert_oblivious_path_matches(
        monkeypatch, model, X[250:], y[250:], permutation_importance, groups=groups
    )
    assert np.abs(importances).max() > 0


@pytest.mark.parametrize("n_classes", [0, 3])
def test_engine_oblivious_stumps_equal_the_descent_kernels(monkeypatch, n_classes):
    X, y = make_data(n_classes)
    model_class = (
        GradientBoostingRegressor if n_classes == 0 else (GradientBoostingClassifier)
    )
    model = model_class(n_estimators=20, max_depth=1, random_state=0)
    model.fit(X[:250], y[:250])
    _assert_oblivious_path_matches(
        monkeypatch, model, X[250:], y[250:], permutation_importance
    )


def test_engine_oblivious_path_leaves_out_of_bag_rows_to_the_descent_kernels(
    monkeypatch,
):
    # stumps are oblivious, but each tree reads its own out-of-bag rows: the
    # leaf-number path routes every row of a chunk, so these take the other
    X, y = make_data(2)
    model = RandomForestClassifier(n_estimators=15, max_depth=1, random_state=0)
    model.fit(X, y)
    _assert_oblivious_path_matches(monkeypatch, model, X, y, oob_permutation_importance)


def test_engine_oblivious_levels_number_the_leaves_by_their_directions():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    y = rng.normal(size=200)
    # a depth-2 tree whose two nodes at depth 1 split on different columns
    # is not oblivious; a stump is
    deep = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
    packed = tree_ensemble(deep).prepared
    nodes = packed.tree_nodes(0).nodes
    assert len(set(nodes["column"][nodes["left"] != -1])) > 1
    assert _backend.oblivious_tree_levels(nodes) is None
    stump = DecisionTreeRegressor(max_depth=1, random_state=0).fit(X, y)
    nodes = tree_ensemble(stump).prepared.tree_nodes(0).nodes
    splits, leaves = _backend.oblivious_tree_levels(nodes)
    assert splits.tolist() == [0]
    assert leaves.tolist() == [nodes["left"][0], nodes["right"][0]]


def test_engine_oblivious_levels_of_a_full_tree_of_depth_two():
    # a hand-made oblivious tree: level 0 on column 2, level 1 on column 0;
    # leaf number bit d is "right at level d"
    nodes = np.zeros(7, dtype=_backend.NODE_DTYPE)
    nodes["left"] = [1, 2, -1, -1, 5, -1, -1]
    nodes["right"] = [4, 3, -1, -1, 6, -1, -1]
    nodes["column"] = [2, 0, 0, 0, 0, 0, 0]
    nodes["threshold"] = [0.5, -1.0, 0, 0, -1.0, 0, 0]
    nodes["category_set"] = -1
    splits, leaves = _backend.oblivious_tree_levels(nodes)
    assert splits.tolist() == [0, 1]
    # number 0: left, left; 1: right then left; 2: left then right; 3: both
    assert leaves.tolist() == [2, 5, 3, 6]
    nodes["threshold"][4] = -0.5
    assert _backend.oblivious_tree_levels(nodes) is None
