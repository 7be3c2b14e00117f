"""Tests of mdi_importance (mean decrease in impurity, THEORY.md section 1)."""

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from sklearn.datasets import make_classification, make_regression
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
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeRegressor,
)
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_limits

from sklearn_fimp import mdi_importance

N_FEATURES = 5


@pytest.fixture(autouse=True, scope="module")
def _one_openmp_thread():
    # Histogram gradient boosting on tiny data is much slower with several
    # OpenMP threads on a busy machine.
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def _classification(n_classes=2):
    X, y = make_classification(
        n_samples=150,
        n_features=N_FEATURES,
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        random_state=0,
    )
    return X, y


def _regression(n_targets=1):
    X, y = make_regression(
        n_samples=150,
        n_features=N_FEATURES,
        n_informative=3,
        n_targets=n_targets,
        noise=5.0,
        random_state=0,
    )
    return X, y


def _weights(n):
    return np.random.RandomState(1).uniform(0.1, 3.0, size=n)


# --------------------------------------------------------------------------
# Slow, obviously correct reference (THEORY.md section 1)
# --------------------------------------------------------------------------


def reference_tree_totals(tree_, n_features, features=None, relative=True):
    """Sum of w_t*I_t - w_l*I_l - w_r*I_r per feature, over the split nodes of
    one tree, divided by the root weight (``relative``); None for a tree that
    never splits."""
    if tree_.node_count < 2:
        return None
    w = tree_.weighted_n_node_samples
    impurity = tree_.impurity
    totals = np.zeros(n_features)
    for node in range(tree_.node_count):
        left = tree_.children_left[node]
        right = tree_.children_right[node]
        if left == -1:
            continue
        decrease = (
            w[node] * impurity[node]
            - w[left] * impurity[left]
            - w[right] * impurity[right]
        )
        column = tree_.feature[node]
        if features is not None:
            column = features[column]
        totals[column] += decrease
    return totals / w[0] if relative else totals


def reference_hist_tree_totals(predictor, column_of_position, n_features):
    """Sum of the split gains per feature of one histogram-boosting tree."""
    nodes = predictor.nodes
    if len(nodes) < 2:
        return None
    totals = np.zeros(n_features)
    for node in nodes:
        if not node["is_leaf"]:
            totals[column_of_position[node["feature_idx"]]] += node["gain"]
    return totals


def reference_aggregate(per_tree, boosted, normalization):
    """Bagged: normalise each tree, average, renormalise. Boosted: average the
    totals, normalise (Spark: the totals are not relative to the root weight).
    None: average of the raw totals. Trees without a split are left out."""
    vectors = [v for v in per_tree if v is not None]
    if normalization is not None and not boosted:
        vectors = [v / v.sum() if v.sum() > 0 else v for v in vectors]
    mean = np.mean(vectors, axis=0)
    if normalization is not None:
        mean = mean / mean.sum()
    return mean


def reference_mdi(estimator, kind, normalization="sklearn"):
    n_features = estimator.n_features_in_
    if kind == "single":
        per_tree = [reference_tree_totals(estimator.tree_, n_features)]
    elif kind == "bagged":
        per_tree = [
            reference_tree_totals(member.tree_, n_features)
            for member in estimator.estimators_
        ]
    elif kind == "bagging":
        per_tree = [
            reference_tree_totals(member.tree_, n_features, np.asarray(features))
            for member, features in zip(
                estimator.estimators_, estimator.estimators_features_
            )
        ]
    elif kind == "boosted":
        per_tree = [
            reference_tree_totals(
                member.tree_, n_features, relative=normalization != "spark"
            )
            for stage in estimator.estimators_
            for member in stage
        ]
    elif kind == "hist":
        # With categorical features the model's trees see the categorical
        # columns first, then the others, each group in its original order.
        is_categorical = getattr(estimator, "is_categorical_", None)
        if is_categorical is None:
            column_of_position = np.arange(n_features)
        else:
            column_of_position = np.concatenate(
                [np.flatnonzero(is_categorical), np.flatnonzero(~is_categorical)]
            )
        per_tree = [
            reference_hist_tree_totals(predictor, column_of_position, n_features)
            for iteration in estimator._predictors
            for predictor in iteration
        ]
    else:  # pragma: no cover
        raise ValueError(kind)
    boosted = kind in ("boosted", "hist")
    return reference_aggregate(per_tree, boosted, normalization)


# --------------------------------------------------------------------------
# Fitted models
# --------------------------------------------------------------------------

# id -> (factory, data, fit sample_weight?, kind)
CASES = {
    "DecisionTreeClassifier": (
        lambda: DecisionTreeClassifier(max_depth=6, random_state=0),
        _classification,
        False,
        "single",
    ),
    "DecisionTreeClassifier-entropy-weighted": (
        lambda: DecisionTreeClassifier(criterion="entropy", random_state=0),
        lambda: _classification(3),
        True,
        "single",
    ),
    "DecisionTreeRegressor": (
        lambda: DecisionTreeRegressor(max_depth=6, random_state=0),
        _regression,
        False,
        "single",
    ),
    "ExtraTreeRegressor": (
        lambda: ExtraTreeRegressor(random_state=0),
        _regression,
        False,
        "single",
    ),
    "RandomForestClassifier": (
        lambda: RandomForestClassifier(n_estimators=8, random_state=0),
        lambda: _classification(3),
        False,
        "bagged",
    ),
    "RandomForestRegressor": (
        lambda: RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0),
        _regression,
        False,
        "bagged",
    ),
    "ExtraTreesClassifier": (
        lambda: ExtraTreesClassifier(n_estimators=8, random_state=0),
        _classification,
        False,
        "bagged",
    ),
    "ExtraTreesRegressor": (
        lambda: ExtraTreesRegressor(n_estimators=8, max_depth=6, random_state=0),
        _regression,
        False,
        "bagged",
    ),
    "RandomForestRegressor-sample_weight": (
        lambda: RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0),
        _regression,
        True,
        "bagged",
    ),
    "ExtraTreesClassifier-bootstrap-sample_weight": (
        lambda: ExtraTreesClassifier(n_estimators=8, bootstrap=True, random_state=0),
        _classification,
        True,
        "bagged",
    ),
    "RandomForestRegressor-multioutput": (
        lambda: RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0),
        lambda: _regression(n_targets=3),
        False,
        "bagged",
    ),
    "GradientBoostingClassifier-binary": (
        lambda: GradientBoostingClassifier(
            n_estimators=10, max_depth=2, random_state=0
        ),
        _classification,
        False,
        "boosted",
    ),
    "GradientBoostingClassifier-3class": (
        lambda: GradientBoostingClassifier(
            n_estimators=10, max_depth=2, random_state=0
        ),
        lambda: _classification(3),
        False,
        "boosted",
    ),
    "GradientBoostingRegressor-subsample": (
        lambda: GradientBoostingRegressor(
            n_estimators=10, max_depth=3, subsample=0.7, random_state=0
        ),
        _regression,
        False,
        "boosted",
    ),
    "GradientBoostingRegressor-absolute_error-weighted": (
        lambda: GradientBoostingRegressor(
            n_estimators=10, loss="absolute_error", subsample=0.7, random_state=0
        ),
        _regression,
        True,
        "boosted",
    ),
}

BAGGED_CASES = [name for name, case in CASES.items() if case[3] == "bagged"]
BOOSTED_CASES = [name for name, case in CASES.items() if case[3] == "boosted"]


def _fit(name):
    factory, data, weighted, kind = CASES[name]
    X, y = data()
    sample_weight = _weights(len(y)) if weighted else None
    return factory().fit(X, y, sample_weight=sample_weight), kind


@pytest.fixture(scope="module")
def fitted():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = _fit(name)
        return cache[name]

    return get


# --------------------------------------------------------------------------
# Agreement with the reference and with scikit-learn
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CASES))
def test_mdi_importance_matches_reference_and_feature_importances(fitted, name):
    estimator, kind = fitted(name)
    result = mdi_importance(estimator)
    expected = reference_mdi(estimator, kind)
    np.testing.assert_allclose(result.importances_mean, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        result.importances_mean, estimator.feature_importances_, rtol=0, atol=1e-12
    )
    assert result.importances_mean.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("name", BAGGED_CASES + ["DecisionTreeRegressor"])
def test_mdi_importance_spark_equals_sklearn_for_bagged_trees(fitted, name):
    estimator, _ = fitted(name)
    spark = mdi_importance(estimator, normalization="spark")
    np.testing.assert_allclose(
        spark.importances_mean, estimator.feature_importances_, rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("name", BOOSTED_CASES)
def test_mdi_importance_spark_sums_boosted_trees_unnormalised(fitted, name):
    # Spark's GBT models sum their trees' total decreases as they are; the
    # same as scikit-learn's weighting unless trees have different root
    # weights (row subsampling)
    estimator, kind = fitted(name)
    spark = mdi_importance(estimator, normalization="spark").importances_mean
    np.testing.assert_allclose(
        spark, reference_mdi(estimator, kind, "spark"), rtol=0, atol=1e-12
    )
    assert spark.sum() == pytest.approx(1.0, abs=1e-12)
    trees = np.ravel(getattr(estimator, "estimators_", []))
    if len({float(tree.tree_.weighted_n_node_samples[0]) for tree in trees}) <= 1:
        np.testing.assert_allclose(
            spark, estimator.feature_importances_, rtol=0, atol=1e-12
        )


@pytest.mark.parametrize("name", list(CASES))
def test_mdi_importance_none_is_mean_of_raw_tree_totals(fitted, name):
    estimator, kind = fitted(name)
    raw = mdi_importance(estimator, normalization=None).importances_mean
    np.testing.assert_allclose(
        raw, reference_mdi(estimator, kind, None), rtol=1e-12, atol=1e-12
    )
    assert abs(raw.sum() - 1.0) > 1e-3


# --------------------------------------------------------------------------
# Histogram gradient boosting (no feature_importances_)
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "estimator, data",
    [
        (HistGradientBoostingRegressor(max_iter=15, random_state=0), _regression),
        (HistGradientBoostingClassifier(max_iter=15, random_state=0), _classification),
        (
            HistGradientBoostingClassifier(max_iter=10, random_state=0),
            lambda: _classification(3),
        ),
    ],
    ids=["regressor", "binary", "3class"],
)
@pytest.mark.parametrize("normalization", ["sklearn", "spark", None])
def test_mdi_importance_hist_gradient_boosting_matches_gain_reference(
    estimator, data, normalization
):
    X, y = data()
    estimator.fit(X, y)
    result = mdi_importance(estimator, normalization=normalization)
    expected = reference_mdi(estimator, "hist", normalization)
    np.testing.assert_allclose(
        result.importances_mean, expected, rtol=1e-12, atol=1e-12
    )
    n_split_trees = sum(
        len(predictor.nodes) > 1
        for iteration in estimator._predictors
        for predictor in iteration
    )
    assert result.importances.shape == (N_FEATURES, n_split_trees)


def _categorical_last_frame(n=300, seed=0):
    """Only the last column, a pandas categorical, carries signal."""
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(
        {
            "noise_a": rng.normal(size=n),
            "noise_b": rng.normal(size=n),
            "noise_c": rng.uniform(size=n),
            "colour": pd.Categorical(rng.choice(["red", "green", "blue", "grey"], n)),
        }
    )
    effect = {"red": 0.0, "green": 3.0, "blue": -2.0, "grey": 5.0}
    y = X["colour"].map(effect).astype(float).to_numpy()
    y = y + 0.3 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("as_frame", [True, False], ids=["from_dtype", "indices"])
@pytest.mark.parametrize("normalization", ["sklearn", None])
def test_mdi_importance_hist_gradient_boosting_categorical_goes_to_its_column(
    as_frame, normalization
):
    X, y = _categorical_last_frame()
    if as_frame:
        model = HistGradientBoostingRegressor(
            max_iter=10, categorical_features="from_dtype", random_state=0
        )
    else:
        X = X.assign(colour=X["colour"].cat.codes).to_numpy(dtype=float)
        model = HistGradientBoostingRegressor(
            max_iter=10, categorical_features=[3], random_state=0
        )
    model.fit(X, y)
    result = mdi_importance(model, normalization=normalization)
    np.testing.assert_allclose(
        result.importances_mean,
        reference_mdi(model, "hist", normalization),
        rtol=1e-12,
        atol=1e-12,
    )
    assert np.argmax(result.importances_mean) == 3
    if normalization is not None:
        assert result.importances_mean[3] > 0.9
    expected_names = (
        ["noise_a", "noise_b", "noise_c", "colour"]
        if as_frame
        else ["x0", "x1", "x2", "x3"]
    )
    assert list(result.feature_names) == expected_names


# --------------------------------------------------------------------------
# Bagging of trees on column subsets
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ensemble, data",
    [(BaggingClassifier, _classification), (BaggingRegressor, _regression)],
    ids=["classifier", "regressor"],
)
@pytest.mark.parametrize("bootstrap_features", [False, True])
@pytest.mark.parametrize("normalization", ["sklearn", None])
def test_mdi_importance_bagging_maps_member_features_back(
    ensemble, data, bootstrap_features, normalization
):
    X, y = data()
    tree = (
        DecisionTreeClassifier(max_depth=4)
        if ensemble is BaggingClassifier
        else DecisionTreeRegressor(max_depth=4)
    )
    model = ensemble(
        tree,
        n_estimators=8,
        max_features=0.6,
        bootstrap_features=bootstrap_features,
        random_state=0,
    ).fit(X, y)
    result = mdi_importance(model, normalization=normalization)
    np.testing.assert_allclose(
        result.importances_mean,
        reference_mdi(model, "bagging", normalization),
        rtol=1e-12,
        atol=1e-12,
    )


# --------------------------------------------------------------------------
# The result Bunch
# --------------------------------------------------------------------------


@pytest.mark.parametrize("normalization", ["sklearn", "spark", None])
def test_mdi_importance_result_has_one_column_per_tree_that_splits(normalization):
    X, y = _classification()
    # Bootstrap samples of two rows: about half the trees see one class only
    # and stay a single leaf.
    forest = RandomForestClassifier(n_estimators=20, max_samples=2, random_state=0).fit(
        X, y
    )
    n_split_trees = sum(tree.tree_.node_count > 1 for tree in forest.estimators_)
    assert 0 < n_split_trees < 20
    result = mdi_importance(forest, normalization=normalization)
    assert result.importances.shape == (N_FEATURES, n_split_trees)
    assert result.n_trees == n_split_trees
    np.testing.assert_allclose(
        result.importances_mean, result.importances.mean(axis=1), rtol=1e-14
    )
    np.testing.assert_allclose(
        result.importances_mean,
        reference_mdi(forest, "bagged", normalization),
        rtol=0,
        atol=1e-12,
    )
    if normalization == "sklearn":
        np.testing.assert_allclose(
            result.importances_mean, forest.feature_importances_, rtol=0, atol=1e-12
        )


@pytest.mark.parametrize("container", ["numpy", "pandas", "polars"])
def test_mdi_importance_feature_names_follow_the_training_columns(container):
    X, y = _regression()
    names = ["d", "a", "e", "c", "b"]
    if container == "pandas":
        X = pd.DataFrame(X, columns=names)
    elif container == "polars":
        X = pl.DataFrame(X, schema=names)
    forest = ExtraTreesRegressor(n_estimators=3, random_state=0).fit(X, y)
    result = mdi_importance(forest)
    expected = names if container != "numpy" else [f"x{i}" for i in range(5)]
    assert list(result.feature_names) == expected
    assert result.importances_mean.shape == (N_FEATURES,)
    assert result.importances_std.shape == (N_FEATURES,)


# --------------------------------------------------------------------------
# MDI's bias towards continuous, high-cardinality features
# --------------------------------------------------------------------------


def test_mdi_importance_random_column_outranks_weak_binary_feature():
    rng = np.random.RandomState(0)
    n = 500
    strong = rng.randint(0, 2, n)
    weak = rng.randint(0, 2, n)
    random_column = rng.uniform(size=n)
    y = (2 * strong + 0.6 * weak + rng.normal(size=n) > 1.3).astype(int)
    X = np.column_stack([strong, weak, random_column])
    # The weak binary feature is truly predictive ...
    assert y[weak == 1].mean() - y[weak == 0].mean() > 0.1
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    importance = mdi_importance(forest).importances_mean
    # ... but MDI ranks pure noise far above it.
    assert importance[2] > 5 * importance[1]
    assert importance[2] > 0.3


# --------------------------------------------------------------------------
# Errors and degenerate models
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "estimator",
    [
        DecisionTreeClassifier(),
        RandomForestRegressor(),
        GradientBoostingClassifier(),
        HistGradientBoostingRegressor(),
        BaggingRegressor(DecisionTreeRegressor()),
    ],
    ids=lambda est: type(est).__name__,
)
def test_mdi_importance_unfitted_estimator_raises_not_fitted_error(estimator):
    with pytest.raises(NotFittedError):
        mdi_importance(estimator)


@pytest.mark.parametrize(
    "estimator",
    [
        LogisticRegression(),
        make_pipeline(StandardScaler(), LogisticRegression()),
        BaggingClassifier(LogisticRegression(), n_estimators=3),
    ],
    ids=["LogisticRegression", "Pipeline", "BaggingClassifier"],
)
def test_mdi_importance_model_without_trees_raises_type_error(estimator):
    # a Pipeline is read through its last step (tests/test_pipeline_importance.py
    # for one ending in trees): the error names that step
    X, y = _classification()
    estimator.fit(X, y)
    name = type(estimator).__name__
    if name == "Pipeline":
        name = "LogisticRegression"
    with pytest.raises(TypeError, match=rf"{name}(.|\n)*permutation_importance"):
        mdi_importance(estimator)


@pytest.mark.parametrize("normalization", ["l1", "Sklearn", "", 1, True])
def test_mdi_importance_invalid_normalization_raises(fitted, normalization):
    estimator, _ = fitted("RandomForestRegressor")
    with pytest.raises(InvalidParameterError, match="normalization"):
        mdi_importance(estimator, normalization=normalization)


@pytest.mark.parametrize(
    "estimator, y_kind",
    [
        (RandomForestRegressor(n_estimators=3, random_state=0), "constant"),
        (ExtraTreesClassifier(n_estimators=3, random_state=0), "constant"),
        (RandomForestClassifier(n_estimators=3, min_samples_split=1000), "varied"),
        (DecisionTreeRegressor(max_depth=3), "constant"),
        (GradientBoostingRegressor(n_estimators=3), "constant"),
        (
            BaggingRegressor(DecisionTreeRegressor(), n_estimators=3, random_state=0),
            "constant",
        ),
        (HistGradientBoostingRegressor(max_iter=3), "constant"),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, str) else value,
)
@pytest.mark.parametrize("normalization", ["sklearn", "spark", None])
def test_mdi_importance_trees_without_splits_give_zeros_without_warning(
    estimator, y_kind, normalization
):
    X, y = _classification()
    if y_kind == "constant":
        y = np.ones_like(y)
    estimator.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = mdi_importance(estimator, normalization=normalization)
    np.testing.assert_array_equal(result.importances_mean, np.zeros(N_FEATURES))
    assert np.all(np.isfinite(result.importances))
    assert result.n_trees == 0
    if hasattr(estimator, "feature_importances_"):
        np.testing.assert_array_equal(
            result.importances_mean, estimator.feature_importances_
        )


def test_mdi_importance_catboost_names_its_analogue():
    catboost = pytest.importorskip("catboost")
    X, y = _classification()
    model = catboost.CatBoostClassifier(
        iterations=5, depth=2, verbose=False, thread_count=1, allow_writing_files=False
    ).fit(X, y)
    with pytest.raises(TypeError, match="PredictionValuesChange") as error:
        mdi_importance(model)
    assert "LossFunctionChange" in str(error.value)
