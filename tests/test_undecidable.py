"""Input no selection can be made from is an error, not a confident choice
(issue 56, items 4, 8 and 9, and SelectFromModel's conventions): NaN
importances, ``min_features`` above ``max_features``, a scorer that does not
return one number, a selection parameter changed after ``fit``, ``prefit``
with a model never fitted, and pandas' nullable columns."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression, Ridge

from sklearn_fimp import (
    ImportanceSelector,
    drop_column_importance,
    oob_permutation_importance,
    permutation_importance,
)
from sklearn_fimp._methods import METHODS

#: The methods whose importance is a score's change (a scorer can make it NaN).
SCORED_METHODS = sorted(
    name for name, entry in METHODS.items() if "scoring" in entry.parameters
)


def forest(n_estimators=5):
    return RandomForestClassifier(n_estimators=n_estimators, random_state=0)


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 5)
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def nan_scorer(estimator, X, y, sample_weight=None):
    return np.nan


@pytest.mark.parametrize("method", SCORED_METHODS)
def test_selector_nan_importances_raise(data, method):
    # Before: every importance NaN, and the selector kept the first column
    # (ranking_ in column order) as if it had ranked them.
    X, y = data
    selector = ImportanceSelector(
        forest(), method=method, scoring=nan_scorer, n_rounds=2, random_state=0
    )
    with pytest.raises(ValueError, match=r"importances of 5 of 5 .* are NaN"):
        selector.fit(X, y)


@pytest.mark.parametrize("threshold", ["mean", 0.0, "probes"])
def test_selector_nan_importance_getter_raises(data, threshold):
    X, y = data

    def getter(model):
        values = np.abs(model.coef_).ravel().copy()
        values[2] = np.nan
        return values

    selector = ImportanceSelector(
        LogisticRegression(), importance_getter=getter, threshold=threshold
    )
    with pytest.raises(ValueError, match=r"1 of 5 .* NaN \('x2'\)"):
        selector.fit(X, y)


def test_selector_min_features_above_max_features_raises(data):
    # Before: kept 4, with max_features_ still 2.
    X, y = data
    selector = ImportanceSelector(forest(), min_features=4, max_features=2)
    with pytest.raises(ValueError, match=r"min_features=4 .* max_features=2"):
        selector.fit(X, y)
    fraction = ImportanceSelector(forest(), min_features=4, max_features=0.5)
    with pytest.raises(ValueError, match=r"max_features_=2\)"):
        fraction.fit(X, y)


def test_selector_max_features_zero_keeps_none_as_select_from_model(data):
    X, y = data
    with pytest.raises(ValueError, match="pass min_features=0"):
        ImportanceSelector(forest(), max_features=0).fit(X, y)
    selector = ImportanceSelector(
        forest(), max_features=0, min_features=0, n_rounds=2, random_state=0
    )
    with pytest.warns(UserWarning, match="no feature is kept"):
        selector.fit(X, y)
    assert not selector.get_support().any()
    assert selector.max_features_ == 0


@pytest.mark.parametrize("method", ["drop_column", "permutation"])
def test_selector_scorer_returning_an_array_raises(data, method):
    # Before: "importances must be of shape ... This is a bug in sklearn_fimp"
    # (drop-column) or numpy's "only 0-dimensional arrays" (permutation).
    X, y = data
    selector = ImportanceSelector(
        forest(),
        method=method,
        scoring=lambda est, X, y: np.array([1.0, 2.0]),
        threshold="mean",
    )
    with pytest.raises(ValueError, match=r"scoring returned ndarray of shape \(2,\)"):
        selector.fit(X, y)


def test_importance_functions_scorer_returning_an_array_raise(data):
    X, y = data
    scorer = lambda est, X, y: np.array([1.0, 2.0])  # noqa: E731
    model = forest().fit(X, y)
    for call in (
        lambda: drop_column_importance(forest(), X, y, scoring=scorer),
        lambda: permutation_importance(model, X, y, scoring=scorer),
        lambda: oob_permutation_importance(model, X, y, scoring=scorer),
        lambda: permutation_importance(
            model, X, y, scoring=lambda est, X, y: {"a": np.ones(2)}
        ),
    ):
        with pytest.raises(ValueError, match="a scorer must return one number"):
            call()


@pytest.mark.parametrize(
    "changed", [{"threshold": "median"}, {"max_features": 1}, {"alpha": 0.01}]
)
def test_selector_parameter_changed_after_fit_raises(data, changed):
    # SelectFromModel reads threshold and max_features again at transform;
    # here the selection (and estimator_) was decided in fit, so a changed
    # value is an error, not the old selection silently.
    X, y = data
    selector = ImportanceSelector(forest(), threshold="mean").fit(X, y)
    support = selector.get_support()
    selector.set_params(**changed)
    with pytest.raises(ValueError, match="after fit.*call fit again"):
        selector.transform(X)
    with pytest.raises(ValueError, match="after fit"):
        selector.predict(X)
    selector.set_params(threshold="mean", max_features=None, alpha=0.05)
    np.testing.assert_array_equal(selector.get_support(), support)
    selector.set_params(**changed).fit(X, y)
    assert selector.transform(X).shape[1] == selector.get_support().sum()


def test_selector_prefit_with_an_unfitted_model_says_what_prefit_expects(data):
    X, y = data
    with pytest.raises(NotFittedError, match="prefit=True measures the estimator"):
        ImportanceSelector(forest(), prefit=True, threshold="mean").fit(X, y)


@pytest.mark.parametrize("dtype", ["Float64", "Int64"])
def test_selector_nullable_column_with_na_refits_and_predicts(dtype):
    # Before: the one kept column, nullable with pd.NA, made the refit fail
    # with "buffer source array is read-only" (scikit-learn's forest fails
    # on that frame too); the columns now reach the model as float64 NaN.
    rng = np.random.RandomState(0)
    signal = rng.randint(-5, 6, 200).astype(float)
    column = pd.array(signal, dtype=dtype)
    column[::10] = pd.NA
    X = pd.DataFrame({"a": column, "b": rng.randn(200), "c": rng.randn(200)})
    before = X.copy()
    y = signal * 3
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=10, random_state=0),
        n_rounds=2,
        random_state=0,
    ).fit(X, y)
    assert list(selector.get_feature_names_out()) == ["a"]
    prediction = selector.predict(X)
    assert np.isfinite(prediction).all()
    assert np.isnan(selector.transform(X)[::10].astype(float)).all()
    pd.testing.assert_frame_equal(X, before)


def test_selector_linear_model_unchanged_by_unit_weights(data):
    # The guide's sentence: weights of ones change nothing for a model whose
    # fit does not depend on how rows are counted (a forest's bootstrap does).
    X, y = data
    kwargs = dict(method="permutation", threshold="mean", random_state=0)
    plain = ImportanceSelector(Ridge(), **kwargs).fit(X, y)
    weighted = ImportanceSelector(Ridge(), **kwargs).fit(
        X, y, sample_weight=np.ones(len(y))
    )
    np.testing.assert_allclose(
        plain.importances_.importances_mean, weighted.importances_.importances_mean
    )


def test_selector_nan_probe_importances_raise_naming_the_probes(data):
    # a NaN among the probes leaves no null to test against: the error says
    # the probes are NaN, not that the features are
    X, y = data
    rng = np.random.RandomState(0)
    X = np.column_stack([X, rng.randn(len(y))])

    def getter(model):
        values = np.abs(model.coef_).ravel().copy()
        values[6:] = np.nan  # every column past the real ones: probes
        return values

    selector = ImportanceSelector(
        LogisticRegression(), importance_getter=getter, n_rounds=2, random_state=0
    )
    with pytest.raises(ValueError, match=r"importances of \d+ probes are NaN"):
        selector.fit(X, y)
