import dataclasses
import functools

import numpy as np
import pytest
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import permutation_importance as sklearn_permutation
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold, ShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state, get_tags

from sklearn_fimp import (
    RecursiveImportanceSelector,
    RecursiveSelectionDisplay,
    _methods,
    oob_permutation_importance,
)
from sklearn_fimp._selection._recursive import choose_size, subset_sizes
from sklearn_fimp._utils._random import MAX_SEED


@pytest.fixture
def friedman():
    return make_friedman1(n_samples=160, n_features=7, random_state=0)


def _reference_seeds(random_state, n_paths, n_sizes):
    """The seeds the selector draws, written out: a model seed and a path
    seed from ``random_state``; per path, an inner-split seed and one
    importance seed per step."""
    rng = check_random_state(random_state)
    model_seed, path_seed = rng.randint(MAX_SEED + 1, size=2)
    seeds = np.random.RandomState(path_seed).randint(
        MAX_SEED + 1, size=(n_paths, n_sizes + 1)
    )
    return int(model_seed), seeds


def _reference_path(estimator, X, y, train, test, sizes, seeds, method, n_repeats):
    """Slow reference: refit, measure with a public function, drop the
    least important, score on the test rows."""
    fit_rows = train
    if method == "permutation":
        inner = ShuffleSplit(n_splits=1, test_size=0.2, random_state=seeds[0])
        inner_train, inner_test = next(inner.split(train))
        fit_rows, measure_rows = train[inner_train], train[inner_test]
    else:
        measure_rows = train
    features = list(range(X.shape[1]))
    scores, dropped = [], []
    for k, size in enumerate(sizes):
        model = clone(estimator).fit(X[np.ix_(fit_rows, features)], y[fit_rows])
        if test is not None:
            scores.append(model.score(X[np.ix_(test, features)], y[test]))
        if k == len(sizes) - 1:
            break
        X_measure = X[np.ix_(measure_rows, features)]
        if method == "permutation":
            result = sklearn_permutation(
                model,
                X_measure,
                y[measure_rows],
                n_repeats=n_repeats,
                random_state=int(seeds[k + 1]),
            )
        else:
            result = oob_permutation_importance(
                model,
                X_measure,
                y[measure_rows],
                n_repeats=n_repeats,
                random_state=int(seeds[k + 1]),
            )
        order = np.argsort(result.importances_mean, kind="stable")
        least = order[: size - sizes[k + 1]]
        dropped.append([features[i] for i in least])
        features = [f for i, f in enumerate(features) if i not in set(least)]
    return scores, dropped


@pytest.mark.parametrize("method", ["oob_permutation", "permutation"])
@pytest.mark.parametrize("step", [1, 2])
def test_recursive_matches_slow_reference_loop(friedman, method, step):
    X, y = friedman
    forest = RandomForestRegressor(n_estimators=10, max_depth=5)
    selector = RecursiveImportanceSelector(
        forest, method=method, step=step, cv=3, n_repeats=2, random_state=4
    ).fit(X, y)

    sizes = subset_sizes(X.shape[1], step, 1)
    splits = list(KFold(3).split(X))
    model_seed, seeds = _reference_seeds(4, len(splits) + 1, len(sizes))
    estimator = clone(forest).set_params(random_state=model_seed)
    scores = np.column_stack(
        [
            _reference_path(estimator, X, y, tr, te, sizes, s, method, 2)[0]
            for (tr, te), s in zip(splits, seeds)
        ]
    )
    np.testing.assert_array_equal(selector.cv_results_["n_features"], sizes)
    for k in range(3):
        np.testing.assert_allclose(
            selector.cv_results_[f"split{k}_test_score"], scores[:, k], rtol=1e-12
        )
    np.testing.assert_allclose(selector.cv_results_["mean_test_score"], scores.mean(1))
    np.testing.assert_allclose(selector.cv_results_["std_test_score"], scores.std(1))

    chosen = int(np.argmax(scores.mean(axis=1)))  # no ties with float scores
    _, dropped = _reference_path(
        estimator,
        X,
        y,
        np.arange(len(y)),
        None,
        sizes[: chosen + 1],
        seeds[-1],
        method,
        2,
    )
    ranking = np.ones(X.shape[1], dtype=int)
    for rank, features in enumerate(reversed(dropped), start=2):
        ranking[features] = rank
    np.testing.assert_array_equal(selector.ranking_, ranking)
    assert selector.n_features_ == sizes[chosen]
    np.testing.assert_array_equal(selector.support_, ranking == 1)
    kept = np.flatnonzero(selector.support_)
    refit = clone(estimator).fit(X[:, kept], y)
    np.testing.assert_allclose(selector.predict(X), refit.predict(X[:, kept]))


def _spy_on(monkeypatch, name, calls):
    """Replace the registry entry's core by one that records the targets it
    measures on (y values are unique, so they identify the rows)."""
    method = _methods.METHODS[name]

    @functools.wraps(method.core)
    def recording_core(estimator, X, y, **kwargs):
        calls.append(np.asarray(y).copy())
        return method.core(estimator, X, y, **kwargs)

    spied = dataclasses.replace(method, core=recording_core)
    monkeypatch.setitem(_methods.METHODS, name, spied)


@pytest.mark.parametrize("method", ["oob_permutation", "permutation", "oob_mdi"])
def test_recursive_never_measures_on_test_rows(friedman, monkeypatch, method):
    X, y = friedman
    assert len(np.unique(y)) == len(y)
    calls = []
    _spy_on(monkeypatch, method, calls)
    selector = RecursiveImportanceSelector(
        RandomForestRegressor(n_estimators=5),
        method=method,
        cv=4,
        n_repeats=1,
        random_state=0,
    ).fit(X, y)
    n_steps = X.shape[1] - 1
    splits = list(KFold(4).split(X))
    assert len(calls) >= 4 * n_steps
    for k, (train, test) in enumerate(splits):
        for measured in calls[k * n_steps : (k + 1) * n_steps]:
            rows = np.flatnonzero(np.isin(y, measured))
            assert len(rows) == len(measured)
            assert not np.isin(rows, test).any()
            assert np.isin(rows, train).all()
            if method == "permutation":  # an inner 20% of the training rows
                assert len(rows) == int(np.ceil(0.2 * len(train)))
    assert selector.method_ == method


def test_choose_size_best_and_one_se():
    sizes = np.array([5, 4, 3, 2, 1])
    scores = np.array(
        [
            [0.80, 0.82, 0.78],
            [0.84, 0.86, 0.82],  # best mean 0.84, std(ddof=1) 0.02
            [0.83, 0.85, 0.81],  # 0.83 >= 0.84 - 0.02 / sqrt(3)
            [0.82, 0.84, 0.80],  # 0.82 < 0.8285
            [0.50, 0.52, 0.48],
        ]
    )
    assert sizes[choose_size(sizes, scores, "best")] == 4
    assert sizes[choose_size(sizes, scores, "one_se")] == 3
    tied = np.array([[0.9], [0.9], [0.5]])
    assert choose_size(np.array([3, 2, 1]), tied, "best") == 1  # fewest features


def test_recursive_one_se_selects_no_more_than_best():
    X, y = make_friedman1(n_samples=200, n_features=8, random_state=1)
    kwargs = dict(cv=4, random_state=0)
    forest = RandomForestRegressor(n_estimators=20)
    best = RecursiveImportanceSelector(forest, **kwargs).fit(X, y)
    one_se = RecursiveImportanceSelector(forest, selection_rule="one_se", **kwargs).fit(
        X, y
    )
    np.testing.assert_array_equal(
        best.cv_results_["mean_test_score"], one_se.cv_results_["mean_test_score"]
    )
    assert one_se.n_features_ <= best.n_features_
    results = one_se.cv_results_
    sizes, means = results["n_features"], results["mean_test_score"]
    top = np.argmax(means)
    splits = np.column_stack([results[f"split{k}_test_score"] for k in range(4)])
    error = splits[top].std(ddof=1) / 2
    assert means[sizes == one_se.n_features_][0] >= means[top] - error
    assert all(means[sizes < one_se.n_features_] < means[top] - error)


def test_recursive_selects_friedman_features():
    X, y = make_friedman1(n_samples=400, n_features=10, random_state=0)
    selector = RecursiveImportanceSelector(
        RandomForestRegressor(n_estimators=30), cv=3, random_state=0
    ).fit(X, y)
    assert set(np.flatnonzero(selector.support_)) == {0, 1, 2, 3, 4}
    assert selector.method_ == "oob_mdi"
    assert selector.transform(X).shape == (400, 5)


def test_recursive_in_pipeline_and_grid_search():
    X, y = make_classification(
        n_samples=150, n_features=6, n_informative=2, n_redundant=0, random_state=0
    )
    pipeline = make_pipeline(
        RecursiveImportanceSelector(
            make_pipeline(StandardScaler(), LogisticRegression()),
            method="permutation",
            cv=2,
            n_repeats=2,
            random_state=0,
        ),
        LogisticRegression(),
    )
    search = GridSearchCV(
        pipeline,
        {"recursiveimportanceselector__selection_rule": ["best", "one_se"]},
        cv=2,
    ).fit(X, y)
    assert search.best_score_ > 0.7
    selector = search.best_estimator_[0]
    assert selector.method_ == "permutation"
    assert selector.classes_.tolist() == [0, 1]
    assert selector.predict_proba(X).shape == (150, 2)


def test_recursive_set_output_and_frames_kept():
    pd = pytest.importorskip("pandas")
    X, y = make_friedman1(n_samples=120, n_features=5, random_state=0)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    copy = frame.copy()
    selector = RecursiveImportanceSelector(
        RandomForestRegressor(n_estimators=5), cv=2, random_state=0
    ).set_output(transform="pandas")
    out = selector.fit(frame, y).transform(frame)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(selector.get_feature_names_out())
    pd.testing.assert_frame_equal(frame, copy)


def test_recursive_keeps_and_checks_polars_column_names():
    """Before scikit-learn 1.9, validate_data reads no names from polars >= 2
    frames: the selector records and checks them itself."""
    pl = pytest.importorskip("polars")
    X, y = make_friedman1(n_samples=120, n_features=5, random_state=0)
    names = [f"f{i}" for i in range(5)]
    frame = pl.DataFrame({name: X[:, i] for i, name in enumerate(names)})
    selector = RecursiveImportanceSelector(
        RandomForestRegressor(n_estimators=5), cv=2, random_state=0
    ).fit(frame, y)
    assert list(selector.feature_names_in_) == names
    assert set(selector.get_feature_names_out()) <= set(names)
    assert selector.transform(frame).shape == (120, selector.n_features_)
    with pytest.raises(ValueError, match="same order as they were in fit"):
        selector.transform(frame.select(names[::-1]))


def test_recursive_missing_values_on_every_scikit_learn():
    """method="auto" measures a forest on rows with NaN with MDI-oob where
    scikit-learn routes them as in the fit (>= 1.8), and with out-of-bag
    permutation before; an explicit "oob_mdi" is refused there, and the tags
    say so (scikit-learn's common checks fit NaN where allow_nan is set)."""
    X, y = make_friedman1(n_samples=120, n_features=5, random_state=0)
    X[::7, 1] = np.nan
    forest = RandomForestRegressor(n_estimators=5)
    auto = RecursiveImportanceSelector(forest, cv=2, random_state=0).fit(X, y)
    explicit = RecursiveImportanceSelector(forest, method="oob_mdi", cv=2)
    if _methods.MISSING_VALUES_ROUTED_AS_FITTED:
        assert auto.method_ == "oob_mdi"
        assert get_tags(explicit).input_tags.allow_nan
    else:
        assert auto.method_ == "oob_permutation"
        assert not get_tags(explicit).input_tags.allow_nan
        with pytest.raises(ValueError, match="NaN"):
            explicit.fit(X, y)


def test_recursive_sample_weight_reaches_fit_score_and_importance():
    X, y = make_friedman1(n_samples=120, n_features=5, random_state=0)
    model = make_pipeline(StandardScaler(), Ridge())
    kwargs = dict(method="permutation", cv=3, random_state=0)
    plain = RecursiveImportanceSelector(model, **kwargs).fit(X, y)
    ones = RecursiveImportanceSelector(model, **kwargs).fit(
        X, y, ridge__sample_weight=np.ones(120)
    )
    np.testing.assert_allclose(
        plain.cv_results_["mean_test_score"], ones.cv_results_["mean_test_score"]
    )
    weight = np.random.RandomState(0).uniform(0.1, 3, size=120)
    with config_context(enable_metadata_routing=True):
        ridge = Ridge().set_fit_request(sample_weight=True)
        ridge.set_score_request(sample_weight=True)
        weighted = RecursiveImportanceSelector(ridge, **kwargs).fit(
            X, y, sample_weight=weight
        )
    assert not np.allclose(
        weighted.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"]
    )


def test_recursive_shap_and_drop_column_methods():
    pytest.importorskip("shap")
    X, y = make_friedman1(n_samples=150, n_features=6, random_state=0)
    for method in ("shap", "drop_column", "mdi"):
        selector = RecursiveImportanceSelector(
            RandomForestRegressor(n_estimators=10), method=method, cv=2, random_state=0
        ).fit(X, y)
        assert selector.method_ == method
        assert selector.ranking_.min() == 1


def test_recursive_bad_input_messages(friedman):
    X, y = friedman
    with pytest.raises(ValueError, match="'selection_rule' parameter"):
        RecursiveImportanceSelector(selection_rule="lowest").fit(X, y)
    with pytest.raises(ValueError, match="method='oob_mdi' reads the model"):
        RecursiveImportanceSelector(
            make_pipeline(StandardScaler(), Ridge()), method="oob_mdi"
        ).fit(X, y)
    with pytest.warns(UserWarning, match="max_samples=10 has no effect"):
        RecursiveImportanceSelector(
            RandomForestRegressor(n_estimators=5), method="mdi", max_samples=10
        ).fit(X, y)
    with pytest.raises(ValueError, match="requires y"):
        RecursiveImportanceSelector().fit(X, None)


def test_recursive_results_do_not_depend_on_n_jobs(friedman):
    X, y = friedman
    kwargs = dict(method="oob_permutation", cv=3, n_repeats=2, random_state=0)
    forest = RandomForestRegressor(n_estimators=5)
    one = RecursiveImportanceSelector(forest, n_jobs=1, **kwargs).fit(X, y)
    two = RecursiveImportanceSelector(forest, n_jobs=2, **kwargs).fit(X, y)
    np.testing.assert_array_equal(
        one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"]
    )
    np.testing.assert_array_equal(one.ranking_, two.ranking_)


def test_recursive_display(friedman):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = friedman
    selector = RecursiveImportanceSelector(
        RandomForestRegressor(n_estimators=5), cv=3, scoring="r2", random_state=0
    ).fit(X, y)
    display = RecursiveSelectionDisplay.from_selector(selector)
    sizes = selector.cv_results_["n_features"]
    np.testing.assert_array_equal(display.line_.get_xdata(), np.sort(sizes))
    np.testing.assert_allclose(
        display.line_.get_ydata(),
        selector.cv_results_["mean_test_score"][np.argsort(sizes)],
    )
    marked = [line for line in display.ax_.lines if "selected" in line.get_label()]
    assert len(marked) == 1
    assert marked[0].get_xdata()[0] == selector.n_features_
    assert display.ax_.get_ylabel() == "cross-validated r2"
    assert display.ax_.get_xlabel() == "number of features"
    assert len(display.ax_.lines) == 1 + 3 + 1  # mean, three splits, marker

    _, ax = plt.subplots()
    fitted = RecursiveSelectionDisplay.from_estimator(
        RandomForestRegressor(n_estimators=5), X, y, cv=3, random_state=0, ax=ax
    )
    assert fitted.ax_ is ax
    assert fitted.n_features_selected == fitted.selector_.n_features_
    with pytest.raises(TypeError, match="fitted RecursiveImportanceSelector"):
        RecursiveSelectionDisplay.from_selector(Ridge())
    plt.close("all")
