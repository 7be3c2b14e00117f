"""Every supported model family gives, through its adapter, the importances
of the predict-every-row path."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import (
    BaggingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.neighbors import KNeighborsClassifier

from sklearn_fimp import permutation_importance
from sklearn_fimp._engine import tree_ensemble
from sklearn_fimp._engine.adapters import adapter_for
from sklearn_fimp._engine.adapters._sklearn_boosting import GradientBoosting
from sklearn_fimp._engine.adapters._sklearn_trees import AveragedTrees

from ._engine_cases import (
    CLASSIFIERS,
    REGRESSORS,
    assert_same_importances,
    generic,
    make_data,
)

pytestmark = pytest.mark.usefixtures("engine_backend", "reroute_every_group")


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "scoring", [None, "neg_log_loss", "roc_auc_ovr", "balanced_accuracy"]
)
def test_engine_classifiers_match_generic_path(name, n_classes, scoring):
    X, y = make_data(n_classes)
    model = CLASSIFIERS[name].fit(X[:250], y[:250])
    assert tree_ensemble(model) is not None
    assert_same_importances(model, X[250:], y[250:], scoring=scoring, n_repeats=2)


@pytest.mark.parametrize("name", sorted(REGRESSORS))
@pytest.mark.parametrize("scoring", [None, "neg_mean_absolute_error"])
def test_engine_regressors_match_generic_path(name, scoring):
    X, y = make_data(0)
    model = REGRESSORS[name].fit(X[:250], y[:250])
    assert tree_ensemble(model) is not None
    assert_same_importances(model, X[250:], y[250:], scoring=scoring, n_repeats=2)


@pytest.mark.parametrize(
    "model",
    [CLASSIFIERS["forest"], CLASSIFIERS["boosting"], CLASSIFIERS["bagging"]],
    ids=["forest", "boosting", "bagging"],
)
def test_engine_groups_and_sample_weight_match_generic_path(model):
    X, y = make_data(3)
    model.fit(X[:250], y[:250])
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    weight[:20] = 0
    assert_same_importances(
        model,
        X[250:],
        y[250:],
        groups=[[0, 1], [1, 2, 3], 4],
        sample_weight=weight,
        n_repeats=3,
    )


def test_engine_multi_output_regression_matches_generic_path():
    X, y = make_data(0)
    Y = np.column_stack([y, X[:, 4] ** 2])
    model = RandomForestRegressor(n_estimators=8, random_state=0).fit(X[:250], Y[:250])
    assert_same_importances(model, X[250:], Y[250:])


def test_engine_pandas_input_matches_numpy():
    pd = pytest.importorskip("pandas")
    X, y = make_data(2)
    frame = pd.DataFrame(X, columns=list("abcde"))
    on_frame = RandomForestClassifier(n_estimators=8, random_state=0).fit(
        frame[:250], y[:250]
    )
    on_array = RandomForestClassifier(n_estimators=8, random_state=0).fit(
        X[:250], y[:250]
    )
    a = permutation_importance(on_frame, frame[250:], y[250:], random_state=0)
    b = permutation_importance(on_array, X[250:], y[250:], random_state=0)
    np.testing.assert_array_equal(a.importances, b.importances)


def test_engine_adapters_take_the_supported_families_only():
    X, y = make_data(2)
    for name, model in {**CLASSIFIERS, **REGRESSORS}.items():
        model = clone(model).fit(X, y)
        adapter = adapter_for(model)
        expected = GradientBoosting if name == "boosting" else AveragedTrees
        assert isinstance(adapter, expected), name
        assert adapter_for(generic(model)) is None
    assert adapter_for(HistGradientBoostingClassifier(max_iter=3).fit(X, y)) is None
    # a Bagging ensemble of other estimators, or a multi-output classifier,
    # is taken by no adapter's ensemble
    bagged_knn = BaggingClassifier(KNeighborsClassifier(), n_estimators=2).fit(X, y)
    assert tree_ensemble(bagged_knn) is None
    Y = np.column_stack([y, 1 - y])
    assert tree_ensemble(RandomForestClassifier(n_estimators=2).fit(X, Y)) is None
