"""Tests of oob_mdi_importance (MDI-oob of Li, Wang, Basu, Kumbier and Yu 2019)."""

import numpy as np
import pandas as pd
import polars as pl
import pytest
from sklearn.base import is_classifier
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from sklearn_fimp import mdi_importance, oob_mdi_importance
from sklearn_fimp._utils._compat import MISSING_VALUES_ROUTED_AS_FITTED

N_ROWS, N_FEATURES = 120, 4
LABELS = np.array(["ant", "bee", "cat"])


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(N_ROWS, N_FEATURES))
    y = X[:, 0] + 2 * X[:, 1] + 0.3 * rng.normal(size=N_ROWS)
    return X, y


def _regression():
    return _data()


def _multioutput():
    X, y = _data()
    return X, np.column_stack([y, X[:, 2] - X[:, 3]])


def _three_classes():
    X, _ = _data()
    return X, LABELS[np.digitize(X[:, 0] + X[:, 2], [0.7, 1.3])]


def _binary():
    X, _ = _data()
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def _with_missing(data):
    def with_missing():
        X, y = data()
        X = X.copy()
        X[np.random.RandomState(2).uniform(size=X.shape) < 0.15] = np.nan
        return X, y

    return with_missing


def _weights():
    return np.random.RandomState(1).uniform(0.2, 2.0, size=N_ROWS)


# --------------------------------------------------------------------------
# Slow, obviously correct reference
# --------------------------------------------------------------------------


def _targets(estimator, y):
    if is_classifier(estimator):
        return (y[:, None] == estimator.classes_[None, :]).astype(float)
    return np.asarray(y, dtype=float).reshape(len(y), -1)


def reference_paths(tree, X):
    """Boolean (n_rows, node_count) matrix of the nodes each row visits,
    walking the tree row by row: left when the value is <= the threshold,
    and for a missing value the side the node's missing-value rule says (not
    ``decision_path``, which ignores that rule before scikit-learn 1.8)."""
    tree_ = tree.tree_
    missing_left = getattr(tree_, "missing_go_to_left", None)
    X = np.asarray(X, dtype=np.float32)
    path = np.zeros((X.shape[0], tree_.node_count), dtype=bool)
    for i, row in enumerate(X):
        node = 0
        path[i, node] = True
        while tree_.children_left[node] != -1:
            value = row[tree_.feature[node]]
            if np.isnan(value):
                left = bool(missing_left[node])
            else:
                left = value <= tree_.threshold[node]
            node = tree_.children_left[node] if left else tree_.children_right[node]
            path[i, node] = True
    return path


def in_bag_node_means(tree, X_member, multiplicity, targets):
    """Mean target of the in-bag rows reaching every node, each row counted as
    often as the bootstrap drew it; computed from scratch, not tree_.value."""
    path = reference_paths(tree, X_member)
    means = np.zeros((tree.tree_.node_count, targets.shape[1]))
    for node in range(tree.tree_.node_count):
        w = multiplicity[path[:, node]]
        means[node] = w @ targets[path[:, node]] / w.sum()
    return path, means


def reference_oob_mdi(estimator, X, y, oob_weight=None, per_tree=False):
    """For every out-of-bag row and every split node t on its path, with c the
    child on its path, add (mu_c - mu_t) . y_i to the feature t splits on;
    divide by the (weighted) number of out-of-bag rows; average over trees."""
    X = np.asarray(X, dtype=np.float64)
    n, n_features = X.shape
    targets = _targets(estimator, np.asarray(y))
    oob_weight = np.ones(n) if oob_weight is None else np.asarray(oob_weight)
    feature_sets = getattr(estimator, "estimators_features_", None)
    columns = []
    for t, (tree, in_bag) in enumerate(
        zip(estimator.estimators_, estimator.estimators_samples_)
    ):
        features = np.arange(n_features) if feature_sets is None else feature_sets[t]
        tree_ = tree.tree_
        multiplicity = np.bincount(in_bag, minlength=n).astype(float)
        path, means = in_bag_node_means(tree, X[:, features], multiplicity, targets)
        totals = np.zeros(n_features)
        oob_rows = np.flatnonzero(multiplicity == 0)
        for i in oob_rows:
            node = 0
            while tree_.children_left[node] != -1:
                left = tree_.children_left[node]
                right = tree_.children_right[node]
                child = left if path[i, left] else right
                column = features[tree_.feature[node]]
                totals[column] += (
                    oob_weight[i] * (means[child] - means[node]) @ (targets[i])
                )
                node = child
        columns.append(totals / oob_weight[oob_rows].sum())
    columns = np.column_stack(columns)
    return columns if per_tree else columns.mean(axis=1)


# --------------------------------------------------------------------------
# Agreement with the reference
# --------------------------------------------------------------------------

# id -> (factory, data, fitted with sample_weight?)
CASES = {
    "RandomForestRegressor": (
        lambda: RandomForestRegressor(n_estimators=6, random_state=0),
        _regression,
        False,
    ),
    "RandomForestClassifier-3class": (
        lambda: RandomForestClassifier(n_estimators=6, random_state=0),
        _three_classes,
        False,
    ),
    "ExtraTreesRegressor-bootstrap": (
        lambda: ExtraTreesRegressor(n_estimators=6, bootstrap=True, random_state=0),
        _regression,
        False,
    ),
    "ExtraTreesClassifier-bootstrap": (
        lambda: ExtraTreesClassifier(n_estimators=6, bootstrap=True, random_state=0),
        _binary,
        False,
    ),
    "BaggingRegressor-max_features": (
        lambda: BaggingRegressor(
            DecisionTreeRegressor(), n_estimators=6, max_features=0.5, random_state=0
        ),
        _regression,
        False,
    ),
    "BaggingClassifier-max_features": (
        lambda: BaggingClassifier(
            DecisionTreeClassifier(), n_estimators=6, max_features=0.5, random_state=0
        ),
        _three_classes,
        False,
    ),
    "RandomForestRegressor-max_samples": (
        lambda: RandomForestRegressor(
            n_estimators=6, max_samples=0.5, max_depth=5, random_state=0
        ),
        _regression,
        False,
    ),
    "RandomForestRegressor-multioutput": (
        lambda: RandomForestRegressor(n_estimators=6, random_state=0),
        _multioutput,
        False,
    ),
    "RandomForestRegressor-missing": (
        lambda: RandomForestRegressor(n_estimators=6, random_state=0),
        _with_missing(_regression),
        False,
    ),
    "RandomForestClassifier-missing-class_weight": (
        lambda: RandomForestClassifier(
            n_estimators=6, class_weight="balanced", random_state=0
        ),
        _with_missing(_three_classes),
        False,
    ),
    "RandomForestRegressor-sample_weight": (
        lambda: RandomForestRegressor(n_estimators=6, random_state=0),
        _regression,
        True,
    ),
    "RandomForestClassifier-sample_weight": (
        lambda: RandomForestClassifier(n_estimators=6, random_state=0),
        _three_classes,
        True,
    ),
}


@pytest.fixture(scope="module")
def fitted():
    cache = {}

    def get(name):
        if name not in cache:
            factory, data, weighted = CASES[name]
            X, y = data()
            sample_weight = _weights() if weighted else None
            cache[name] = (factory().fit(X, y, sample_weight=sample_weight), X, y)
        return cache[name]

    return get


@pytest.mark.parametrize("name", list(CASES))
def test_oob_mdi_importance_matches_reference(fitted, name):
    if "missing" in name and not MISSING_VALUES_ROUTED_AS_FITTED:
        pytest.skip("scikit-learn < 1.8 fits rows with NaN along other paths")
    estimator, X, y = fitted(name)
    result = oob_mdi_importance(estimator, X, y)
    expected = reference_oob_mdi(estimator, X, y, per_tree=True)
    np.testing.assert_allclose(result.importances, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(
        result.importances_mean, expected.mean(axis=1), rtol=0, atol=1e-10
    )
    assert result.n_trees == len(estimator.estimators_)
    assert list(result.feature_names) == [f"x{i}" for i in range(N_FEATURES)]


@pytest.mark.parametrize(
    "name",
    ["RandomForestRegressor-sample_weight", "RandomForestClassifier-sample_weight"],
)
def test_oob_mdi_importance_sample_weight_weights_out_of_bag_rows(fitted, name):
    estimator, X, y = fitted(name)
    weight = _weights()
    result = oob_mdi_importance(estimator, X, y, sample_weight=weight)
    expected = reference_oob_mdi(estimator, X, y, oob_weight=weight)
    np.testing.assert_allclose(result.importances_mean, expected, rtol=0, atol=1e-10)
    unweighted = oob_mdi_importance(estimator, X, y).importances_mean
    assert not np.allclose(result.importances_mean, unweighted)


@pytest.mark.parametrize(
    "estimator",
    [
        # Node values are medians, not means, with the absolute error.
        RandomForestRegressor(
            n_estimators=4, criterion="absolute_error", random_state=0
        ),
        # Monotonic constraints clip node values to bounds.
        RandomForestRegressor(
            n_estimators=4, monotonic_cst=[1, 0, 0, -1], random_state=0
        ),
    ],
    ids=["absolute_error", "monotonic_cst"],
)
def test_oob_mdi_importance_uses_in_bag_means_whatever_the_node_values(estimator):
    X, y = _regression()
    estimator.fit(X, y)
    result = oob_mdi_importance(estimator, X, y)
    expected = reference_oob_mdi(estimator, X, y)
    np.testing.assert_allclose(result.importances_mean, expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "name", ["RandomForestRegressor", "RandomForestClassifier-3class"]
)
def test_oob_mdi_importance_tree_total_telescopes_to_prediction(fitted, name):
    # Summed over features, a tree's contributions along a path telescope to
    # (leaf mean - root mean) . y_i, averaged over its out-of-bag rows.
    estimator, X, y = fitted(name)
    targets = _targets(estimator, y)
    result = oob_mdi_importance(estimator, X, y)
    for t, (tree, in_bag) in enumerate(
        zip(estimator.estimators_, estimator.estimators_samples_)
    ):
        multiplicity = np.bincount(in_bag, minlength=len(y))
        oob = multiplicity == 0
        root_mean = multiplicity @ targets / multiplicity.sum()
        if is_classifier(estimator):
            prediction = tree.predict_proba(X[oob])
        else:
            prediction = tree.predict(X[oob]).reshape(oob.sum(), -1)
        expected = np.mean(np.sum((prediction - root_mean) * targets[oob], axis=1))
        assert result.importances[:, t].sum() == pytest.approx(expected, abs=1e-10)


# --------------------------------------------------------------------------
# Li et al.: noise features get about zero
# --------------------------------------------------------------------------


def test_oob_mdi_importance_noise_column_near_zero_where_mdi_is_large():
    rng = np.random.RandomState(0)
    n = 2000
    X = rng.uniform(size=(n, 3))  # column 2 is noise
    y = X[:, 0] + X[:, 1] + 0.4 * rng.normal(size=n)
    forest = RandomForestRegressor(
        n_estimators=80, min_samples_leaf=1, random_state=0
    ).fit(X, y)
    mdi = mdi_importance(forest).importances_mean
    oob = oob_mdi_importance(forest, X, y).importances_mean
    # Deep trees fit the target noise with the noise column: plain MDI gives it
    # a large share ...
    assert mdi[2] > 0.1
    # ... which out-of-bag rows do not confirm.
    assert oob[0] > 0 and oob[1] > 0
    assert abs(oob[2]) < 0.05 * oob.max()


# --------------------------------------------------------------------------
# Input containers
# --------------------------------------------------------------------------


@pytest.mark.parametrize("frame", ["pandas", "polars"])
@pytest.mark.parametrize("target", ["regression", "classification"])
def test_oob_mdi_importance_dataframe_matches_numpy_and_uses_column_names(
    frame, target
):
    X, y = _regression() if target == "regression" else _three_classes()
    names = ["width", "height", "depth", "weight"]
    frame_X = (
        pd.DataFrame(X, columns=names)
        if frame == "pandas"
        else pl.DataFrame(X, schema=names)
    )
    model = RandomForestRegressor if target == "regression" else RandomForestClassifier
    on_array = model(n_estimators=5, random_state=0).fit(X, y)
    on_frame = model(n_estimators=5, random_state=0).fit(frame_X, y)
    from_array = oob_mdi_importance(on_array, X, y)
    from_frame = oob_mdi_importance(on_frame, frame_X, pd.Series(y))
    np.testing.assert_allclose(
        from_frame.importances, from_array.importances, rtol=0, atol=1e-12
    )
    assert list(from_frame.feature_names) == names


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "estimator",
    [
        RandomForestRegressor(n_estimators=3, bootstrap=False),
        ExtraTreesRegressor(n_estimators=3),
        BaggingRegressor(DecisionTreeRegressor(), n_estimators=3, bootstrap=False),
    ],
    ids=lambda est: type(est).__name__,
)
def test_oob_mdi_importance_without_bootstrap_raises(estimator):
    X, y = _regression()
    estimator.fit(X, y)
    name = type(estimator).__name__
    with pytest.raises(ValueError, match=rf"{name}(.|\n)*permutation_importance"):
        oob_mdi_importance(estimator, X, y)


@pytest.mark.parametrize(
    "estimator, data",
    [
        (GradientBoostingRegressor(n_estimators=3), _regression),
        (HistGradientBoostingClassifier(max_iter=3), _binary),
        (DecisionTreeRegressor(), _regression),
    ],
    ids=["GradientBoostingRegressor", "HistGradientBoostingClassifier", "DecisionTree"],
)
def test_oob_mdi_importance_model_without_out_of_bag_rows_raises(estimator, data):
    X, y = data()
    estimator.fit(X, y)
    with pytest.raises(ValueError, match=type(estimator).__name__):
        oob_mdi_importance(estimator, X, y)


@pytest.mark.parametrize("n_rows", [N_ROWS - 10, N_ROWS + 10])
def test_oob_mdi_importance_other_rows_than_training_raises(fitted, n_rows):
    estimator, X, y = fitted("RandomForestRegressor")
    rows = np.arange(n_rows) % N_ROWS
    with pytest.raises(ValueError, match="rows"):
        oob_mdi_importance(estimator, X[rows], y[rows])


def test_oob_mdi_importance_x_and_y_lengths_differ_raises(fitted):
    estimator, X, y = fitted("RandomForestRegressor")
    with pytest.raises(ValueError, match="rows"):
        oob_mdi_importance(estimator, X, y[:-1])


@pytest.mark.parametrize("unseen", ["dog", "Ant", ""])
def test_oob_mdi_importance_unseen_labels_raise(fitted, unseen):
    estimator, X, y = fitted("RandomForestClassifier-3class")
    y = y.copy().astype(object)
    y[5] = unseen
    with pytest.raises(ValueError, match="label"):
        oob_mdi_importance(estimator, X, y)


def test_oob_mdi_importance_unfitted_raises_not_fitted_error():
    X, y = _regression()
    with pytest.raises(NotFittedError):
        oob_mdi_importance(RandomForestRegressor(), X, y)


def test_oob_mdi_importance_bagged_non_trees_raise_type_error():
    X, y = _regression()
    bagging = BaggingRegressor(LinearRegression(), n_estimators=3, random_state=0)
    bagging.fit(X, y)
    with pytest.raises(TypeError, match="BaggingRegressor"):
        oob_mdi_importance(bagging, X, y)


def test_oob_mdi_importance_missing_values_need_scikit_learn_1_8(monkeypatch):
    from sklearn_fimp._importance import _oob_mdi

    monkeypatch.setattr(_oob_mdi, "MISSING_VALUES_ROUTED_AS_FITTED", False)
    X, y = _with_missing(_regression)()
    forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="Upgrade to scikit-learn >= 1.8"):
        oob_mdi_importance(forest, X, y)
    # without missing values, every version
    X, y = _regression()
    forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    assert oob_mdi_importance(forest, X, y).n_trees == 3


def test_oob_mdi_importance_n_jobs_gives_the_same_result():
    # the trees are read by threads; each tree's column stays in its place
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + rng.normal(size=300)
    forest = RandomForestRegressor(n_estimators=12, random_state=0).fit(X, y)
    serial = oob_mdi_importance(forest, X, y)
    threaded = oob_mdi_importance(forest, X, y, n_jobs=2)
    np.testing.assert_array_equal(threaded.importances, serial.importances)
