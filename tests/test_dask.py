"""Every parallel loop runs on a Dask cluster through joblib, with the
results of a local run, and ships the data and the fitted model once."""

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    BaggingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.tree import DecisionTreeRegressor

from sklearn_fimp import (
    DependenceAnalyzer,
    ImportanceSelector,
    drop_column_importance,
    feature_dependence,
    oob_permutation_importance,
    permutation_importance,
)

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client(dask_client):
    return dask_client


def local_and_dask(compute):
    """``compute()`` run locally and on the Dask cluster."""
    local = compute()
    with joblib.parallel_config(backend="dask"):
        remote = compute()
    return local, remote


def assert_same_result(local, remote):
    np.testing.assert_array_equal(local.importances, remote.importances)
    assert local.baseline_score == remote.baseline_score
    assert local.random_state == remote.random_state


@pytest.fixture(scope="module")
def classification():
    X, y = make_classification(
        n_samples=300, n_features=6, n_informative=3, random_state=0
    )
    return X, y


@pytest.fixture(scope="module")
def forest(classification):
    X, y = classification
    return RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)


def test_permutation_importance_any_model_same_on_dask(client, classification):
    X, y = classification
    model = LogisticRegression().fit(X, y)
    local, remote = local_and_dask(
        lambda: permutation_importance(
            model, X, y, n_repeats=3, max_samples=200, n_jobs=2, random_state=0
        )
    )
    assert_same_result(local, remote)


def test_permutation_importance_tree_engine_same_on_dask(
    client, classification, forest
):
    X, y = classification
    local, remote = local_and_dask(
        lambda: permutation_importance(forest, X, y, n_jobs=2, random_state=0)
    )
    assert_same_result(local, remote)


def test_oob_permutation_importance_forest_level_same_on_dask(
    client, classification, forest
):
    X, y = classification
    local, remote = local_and_dask(
        lambda: oob_permutation_importance(
            forest, X, y, n_repeats=2, n_jobs=2, random_state=0
        )
    )
    assert_same_result(local, remote)


@pytest.mark.parametrize("scale", [False, True])
def test_oob_permutation_importance_per_tree_same_on_dask(
    client, classification, forest, scale
):
    X, y = classification
    local, remote = local_and_dask(
        lambda: oob_permutation_importance(
            forest, X, y, per_tree=True, scale=scale, n_jobs=2, random_state=0
        )
    )
    assert_same_result(local, remote)
    np.testing.assert_array_equal(local.tree_importances, remote.tree_importances)


def test_oob_permutation_importance_without_engine_same_on_dask(client):
    """Bagging of a model the engine does not read (the predict-every-row
    paths, forest level and per tree)."""
    X, y = make_regression(n_samples=200, n_features=4, random_state=0)
    bagging = BaggingRegressor(
        Ridge(), n_estimators=8, max_features=0.75, random_state=0
    ).fit(X, y)
    for per_tree in (False, True):
        local, remote = local_and_dask(
            lambda per_tree=per_tree: oob_permutation_importance(
                bagging, X, y, per_tree=per_tree, n_jobs=2, random_state=0
            )
        )
        assert_same_result(local, remote)


@pytest.mark.parametrize("cv", [None, 3])
def test_drop_column_importance_same_on_dask(client, classification, cv):
    X, y = classification
    estimator = RandomForestClassifier(n_estimators=10)
    local, remote = local_and_dask(
        lambda: drop_column_importance(estimator, X, y, cv=cv, n_jobs=2, random_state=0)
    )
    assert_same_result(local, remote)


def test_feature_dependence_same_on_dask(client, classification):
    X, _ = classification
    estimator = RandomForestRegressor(n_estimators=10, bootstrap=True)
    local, remote = local_and_dask(
        lambda: feature_dependence(X, estimator=estimator, n_jobs=2, random_state=0)
    )
    np.testing.assert_array_equal(local.dependence, remote.dependence)
    np.testing.assert_array_equal(local.matrix, remote.matrix)


def test_dependence_analyzer_same_on_dask(client):
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(2, 200))
    X = np.column_stack([a, b, a + 0.01 * rng.normal(size=200), rng.normal(size=200)])
    analyzer = DependenceAnalyzer(
        RandomForestRegressor(n_estimators=10), n_jobs=2, random_state=0
    )
    local, remote = local_and_dask(lambda: analyzer.fit(X).support_.copy())
    with joblib.parallel_config(backend="dask"):
        remote_path = clone(analyzer).fit(X)
    np.testing.assert_array_equal(local, remote)
    assert list(remote_path.elimination_path_["feature"]) == list(
        analyzer.elimination_path_["feature"]
    )


@pytest.mark.parametrize(
    "estimator, method",
    [
        (LogisticRegression(), "permutation"),
        (LogisticRegression(), "drop_column"),
        (RandomForestClassifier(n_estimators=10), "oob_permutation"),
    ],
)
def test_importance_selector_same_on_dask(client, classification, estimator, method):
    X, y = classification
    selector = ImportanceSelector(
        estimator,
        method=method,
        threshold="mean",
        n_repeats=2,
        n_jobs=2,
        random_state=0,
    )

    def select():
        fitted = selector.fit(X, y)
        return fitted.support_.copy(), fitted.importances_.importances.copy()

    (local_support, local_importances), (remote_support, remote_importances) = (
        local_and_dask(select)
    )
    np.testing.assert_array_equal(local_support, remote_support)
    if _fit_runs_through_joblib(estimator):
        # scikit-learn 1.6 (the floor) runs LogisticRegression's own fit
        # through joblib, so on the cluster it fits on a worker whose BLAS
        # rounds differently (coefficients 6e-16 apart); the same fitted
        # model's permutation importances are identical on Dask
        np.testing.assert_allclose(local_importances, remote_importances, rtol=1e-12)
    else:
        np.testing.assert_array_equal(local_importances, remote_importances)


def _fit_runs_through_joblib(estimator):
    """Whether the estimator's own fit dispatches work through joblib."""
    import inspect

    return "Parallel(" in inspect.getsource(type(estimator).fit)


# ---------------------------------------------------------------------------
# what travels to the workers

#: names of the Counting* models pickled in this (the client's) process
PICKLED = []


class CountingLogisticRegression(LogisticRegression):
    def __getstate__(self):
        PICKLED.append(type(self).__name__)
        return super().__getstate__()

    def predict_proba(self, X):
        # a method of its own: permutation importance predicts the permuted
        # rows on the workers (scikit-learn's own linear models are
        # permuted through their coefficients, with no worker)
        return super().predict_proba(X)


class CountingRandomForest(RandomForestRegressor):
    def __getstate__(self):
        PICKLED.append(type(self).__name__)
        return super().__getstate__()


@pytest.fixture
def scattered(monkeypatch):
    """Arguments joblib scatters to the cluster (once per Parallel call)."""
    seen = []
    original = distributed.Client.scatter

    def scatter(self, data, *args, **kwargs):
        seen.append(data)
        return original(self, data, *args, **kwargs)

    monkeypatch.setattr(distributed.Client, "scatter", scatter)
    return seen


def test_permutation_importance_ships_model_once_per_worker(client, scattered):
    """Twelve features on two workers: the fitted model is pickled once per
    worker, not once per feature, and X is scattered once. (joblib's Dask
    backend serializes each task twice: as the batch it calls and as the
    ``tasks`` argument it passes along.)"""
    X, y = make_classification(n_samples=400, n_features=12, random_state=0)
    model = CountingLogisticRegression().fit(X, y)
    PICKLED.clear()
    with joblib.parallel_config(backend="dask"):
        permutation_importance(model, X, y, n_jobs=-1, random_state=0)
    n_workers = len(client.scheduler_info()["workers"])
    assert 1 <= len(PICKLED) <= 2 * n_workers < X.shape[1]
    assert sum(np.shape(item) == X.shape for item in scattered) == 1


def test_oob_per_tree_ships_model_once_per_worker(client, scattered):
    """Thirty trees on two workers: the forest travels once per worker (two
    serializations of each task, as above), not once per tree, and X is
    scattered once."""
    X, y = make_regression(n_samples=300, n_features=5, random_state=0)
    X = X.astype(np.float32)
    forest = CountingRandomForest(n_estimators=30, random_state=0).fit(X, y)
    PICKLED.clear()
    with joblib.parallel_config(backend="dask"):
        oob_permutation_importance(
            forest, X, y, per_tree=True, n_jobs=-1, random_state=0
        )
    n_workers = len(client.scheduler_info()["workers"])
    assert 1 <= PICKLED.count("CountingRandomForest") <= 2 * n_workers
    assert sum(np.shape(item) == X.shape for item in scattered) == 1


def test_drop_column_importance_scatters_X_once(client, scattered):
    X, y = make_regression(n_samples=300, n_features=5, random_state=0)
    with joblib.parallel_config(backend="dask"):
        drop_column_importance(
            DecisionTreeRegressor(), X, y, cv=2, n_jobs=-1, random_state=0
        )
    assert sum(np.shape(item) == X.shape for item in scattered) == 1


def test_distributed_importance_without_dask_dataframe_names_the_extra(monkeypatch):
    """Without pandas, dask.dataframe fails to import: the error of
    distributed_permutation_importance on a Dask Array names the extra that
    brings what it needs (no cluster: it fails before computing)."""
    import sys

    import dask.array as da

    from sklearn_fimp import distributed_permutation_importance

    X, y = make_regression(n_samples=100, n_features=3, random_state=0)
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    with pytest.raises(ImportError, match=r"pip install 'sklearn-fimp\[dask\]'"):
        distributed_permutation_importance(
            model, da.from_array(X, chunks=50), da.from_array(y, chunks=50)
        )
