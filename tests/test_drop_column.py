import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_regression
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedShuffleSplit

from sklearn_fimp import drop_column_importance

from .conftest import as_frame


def forest_oob_r2(model, X, y):
    """R² of the averaged out-of-bag predictions, in a plain loop."""
    total, count = np.zeros(len(y)), np.zeros(len(y))
    for tree, in_bag in zip(model.estimators_, model.estimators_samples_):
        mask = np.ones(len(y), dtype=bool)
        mask[in_bag] = False
        total[mask] += tree.predict(X[mask].astype(np.float32))
        count[mask] += 1
    seen = count > 0
    prediction = total[seen] / count[seen]
    residual = np.sum((y[seen] - prediction) ** 2)
    return 1 - residual / np.sum((y[seen] - y[seen].mean()) ** 2)


def test_drop_column_oob_equals_reference_refits(noisy_regression):
    X, y = noisy_regression
    model = RandomForestRegressor(n_estimators=15, random_state=None)
    result = drop_column_importance(model, X, y, random_state=0)
    assert result.evaluation == "oob"
    seed = result.random_state
    baseline_model = clone(model).set_params(random_state=seed).fit(X, y)
    baseline = forest_oob_r2(baseline_model, X, y)
    expected = []
    for j in range(3):
        kept = np.delete(X, j, axis=1)
        refit = clone(model).set_params(random_state=seed).fit(kept, y)
        expected.append(baseline - forest_oob_r2(refit, kept, y))
    assert result.baseline_score == pytest.approx(baseline, abs=1e-12)
    np.testing.assert_allclose(result.importances[:, 0], expected, atol=1e-12)


def test_drop_column_cv_equals_reference_refits(noisy_regression):
    X, y = noisy_regression
    cv = KFold(3, shuffle=True, random_state=0)
    result = drop_column_importance(
        Ridge(), X, y, cv=cv, groups=[[0, 1]], random_state=0
    )
    assert result.evaluation == "cv"
    assert result.importances.shape == (2, 3)
    for s, (train, test) in enumerate(cv.split(X)):
        base = Ridge().fit(X[train], y[train]).score(X[test], y[test])
        for g, dropped in enumerate([[0, 1], [2]]):
            kept = np.delete(X, dropped, axis=1)
            score = Ridge().fit(kept[train], y[train]).score(kept[test], y[test])
            assert result.importances[g, s] == pytest.approx(base - score, abs=1e-12)
        assert result.baseline_scores[s] == pytest.approx(base, abs=1e-12)


@pytest.mark.parametrize("classifier", [False, True])
def test_drop_column_holdout_without_oob(noisy_regression, classifier):
    X, y = noisy_regression
    if classifier:
        y = (y > np.median(y)).astype(int)
        model, splitter = LogisticRegression(), StratifiedShuffleSplit
    else:
        model, splitter = Ridge(), ShuffleSplit
    result = drop_column_importance(model, X, y, random_state=0)
    assert result.evaluation == "holdout"
    train, test = next(
        splitter(n_splits=1, test_size=0.2, random_state=result.random_state).split(
            X, y
        )
    )
    base = clone(model).fit(X[train], y[train]).score(X[test], y[test])
    assert result.baseline_score == pytest.approx(base, abs=1e-12)


def test_drop_column_duplicate_and_random_column_get_about_zero():
    # THEORY.md 3-4: removing either copy of a duplicated column costs
    # nothing; a random column's importance is about zero or negative.
    rng = np.random.RandomState(0)
    n = 1500
    x = rng.uniform(size=(n, 2))
    y = 3 * x[:, 0] + x[:, 1] + rng.normal(scale=0.1, size=n)
    X = np.column_stack([x[:, 0], x[:, 0], x[:, 1], rng.uniform(size=n)])
    model = RandomForestRegressor(n_estimators=30, min_samples_leaf=3, n_jobs=1)
    result = drop_column_importance(model, X, y, random_state=0)
    single = drop_column_importance(model, X[:, [0, 2, 3]], y, random_state=0)
    assert single.importances_mean[0] > 0.5
    assert np.all(np.abs(result.importances_mean[:2]) < 0.02)
    assert result.importances_mean[3] < 0.01
    assert result.importances_mean[2] > 0.02


def test_drop_column_shares_seed_but_keeps_user_seed(noisy_regression):
    X, y = noisy_regression
    fixed = RandomForestRegressor(n_estimators=10, random_state=5)
    a = drop_column_importance(fixed, X, y, random_state=0)
    b = drop_column_importance(fixed, X, y, random_state=1)
    # the user's random_state=5 is kept, so the outer seed changes nothing
    np.testing.assert_array_equal(a.importances, b.importances)
    unset = RandomForestRegressor(n_estimators=10)
    c = drop_column_importance(unset, X, y, random_state=0)
    d = drop_column_importance(unset, X, y, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(c.importances, d.importances)
    assert unset.random_state is None  # the caller's estimator is not changed


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_drop_column_dataframe_matches_numpy(noisy_regression, kind):
    X, y = noisy_regression
    frame = as_frame(X, kind)
    a = drop_column_importance(Ridge(), frame, y, cv=3, groups=[["f0", "f2"]])
    b = drop_column_importance(Ridge(), X, y, cv=3, groups=[[0, 2]])
    np.testing.assert_allclose(a.importances, b.importances, atol=1e-12)
    assert list(a.feature_names) == ["f0+f2", "f1"]


def test_drop_column_sample_weight_reaches_fit_and_scorer(noisy_regression):
    X, y = noisy_regression
    weight = np.random.RandomState(0).uniform(0, 3, size=len(y))
    result = drop_column_importance(Ridge(), X, y, cv=KFold(2), sample_weight=weight)
    train, test = next(KFold(2).split(X))
    base = (
        Ridge()
        .fit(X[train], y[train], sample_weight=weight[train])
        .score(X[test], y[test], sample_weight=weight[test])
    )
    assert result.baseline_scores[0] == pytest.approx(base, abs=1e-12)


def test_drop_column_group_of_everything_is_refused(noisy_regression):
    X, y = noisy_regression
    with pytest.raises(ValueError, match="would leave no feature"):
        drop_column_importance(Ridge(), X, y, groups=[[0, 1, 2]])


@pytest.mark.parametrize("cv", [3, None], ids=["cv", "oob"])
def test_drop_column_importance_multimetric_scores_each_fit_for_every_metric(cv):
    X, y = make_regression(n_samples=150, n_features=3, random_state=0)
    model = Ridge() if cv else RandomForestRegressor(n_estimators=10)
    scoring = {"r2": "r2", "mse": "neg_mean_squared_error"}
    results = drop_column_importance(
        model, X, y, cv=cv, scoring=scoring, random_state=0
    )
    assert list(results) == ["r2", "mse"]
    for name, result in results.items():
        alone = drop_column_importance(
            model, X, y, cv=cv, scoring=scoring[name], random_state=0
        )
        assert result.scoring == scoring[name]
        np.testing.assert_array_equal(result.importances, alone.importances)
        np.testing.assert_array_equal(result.baseline_scores, alone.baseline_scores)
