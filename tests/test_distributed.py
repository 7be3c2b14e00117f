"""distributed_permutation_importance on real engines: a Dask
``distributed`` LocalCluster (two worker processes) and a local Spark
session. For every model family the engine reads and every score that
combines from sums, the importances equal those of predicting every row of
the data in memory with the same permutations (``permutation_sources``),
to floating-point precision; and on a cluster whose workers' memory limit
is smaller than the data set, the computation completes with workers that
never held it.

Marked ``slow``: the cluster and the JVM take most of a minute to start.
"""

import logging
import resource

import numpy as np
import pandas as pd
import pytest
from sklearn.base import is_classifier
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.metrics import check_scoring

from sklearn_fimp import distributed_permutation_importance, permutation_sources

pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

N_ROWS = 600


def every_row_predicted(model, X, y, weight, scoring, groups, n_repeats, seed):
    """The slow reference: the permuted data in memory, every row predicted
    and scored by scikit-learn's scorer (None: accuracy or R², the model's
    ``score``, which CatBoost's does not weight)."""
    if scoring is None:
        scoring = "accuracy" if is_classifier(model) else "r2"
    scorer = check_scoring(model, scoring)
    baseline = scorer(model, X, y, sample_weight=weight)
    importances = np.empty((len(groups), n_repeats))
    for r in range(n_repeats):
        source = permutation_sources(len(y), seed, r)
        for g, columns in enumerate(groups):
            permuted = X.copy()
            if isinstance(X, pd.DataFrame):
                permuted.iloc[:, columns] = X.iloc[source, columns].to_numpy()
            else:
                permuted[:, columns] = X[source][:, columns]
            importances[g, r] = baseline - scorer(
                model, permuted, y, sample_weight=weight
            )
    return baseline, importances


def assert_equal_to_memory(result, reference, rtol=1e-9):
    """Equal to floating-point precision: float64 sums added in another
    order (``rtol=1e-6`` for XGBoost, which sums its trees in float32 where
    the engine sums in float64)."""
    baseline, importances = reference
    assert result.baseline_score == pytest.approx(baseline, rel=rtol, abs=1e-12)
    np.testing.assert_allclose(result.importances, importances, rtol=rtol, atol=1e-9)


@pytest.fixture(scope="module")
def client(dask_client):
    return dask_client


def _classification(n_classes=2):
    X, y = make_classification(
        n_samples=N_ROWS,
        n_features=5,
        n_informative=3,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=0,
    )
    return X, y


def _regression():
    return make_regression(
        n_samples=N_ROWS, n_features=5, n_informative=3, noise=5.0, random_state=0
    )


def _boosters():
    """The boosting libraries' models, where installed."""
    models = {}
    try:
        import xgboost

        models["xgboost"] = (
            xgboost.XGBClassifier(n_estimators=8, max_depth=3, n_jobs=1),
            "classification",
        )
    except ImportError:
        pass
    try:
        import lightgbm

        models["lightgbm"] = (
            lightgbm.LGBMRegressor(n_estimators=8, num_leaves=7, verbose=-1),
            "regression",
        )
    except ImportError:
        pass
    try:
        import catboost

        models["catboost"] = (
            catboost.CatBoostClassifier(
                iterations=8, depth=3, verbose=0, thread_count=1, random_seed=0
            ),
            "classification",
        )
    except ImportError:
        pass
    return models


MODELS = {
    "forest-classifier": (
        RandomForestClassifier(6, max_depth=4, random_state=0),
        "classification",
    ),
    "forest-regressor": (
        RandomForestRegressor(6, max_depth=4, random_state=0),
        "regression",
    ),
    "gradient-boosting": (
        GradientBoostingRegressor(n_estimators=6, max_depth=2, random_state=0),
        "regression",
    ),
    "hist-boosting-3-classes": (
        HistGradientBoostingClassifier(max_iter=5, max_depth=3, random_state=0),
        "3 classes",
    ),
    "hist-boosting-regressor": (
        HistGradientBoostingRegressor(max_iter=5, max_depth=3, random_state=0),
        "regression",
    ),
    **_boosters(),
}
SCORINGS = {
    "classification": [None, "balanced_accuracy", "neg_log_loss"],
    "3 classes": [None, "balanced_accuracy", "neg_log_loss"],
    "regression": [None, "neg_mean_squared_error"],
}


def _data(task):
    if task == "regression":
        return _regression()
    return _classification(3 if task == "3 classes" else 2)


@pytest.mark.parametrize(
    "name, scoring",
    [(name, s) for name, (_, task) in MODELS.items() for s in SCORINGS[task]],
)
def test_dask_array_equals_every_row_predicted(client, name, scoring):
    model, task = MODELS[name]
    X, y = _data(task)
    model.fit(X, y)
    weight = np.random.RandomState(1).uniform(0.5, 2.0, N_ROWS)
    result = distributed_permutation_importance(
        model,
        da.from_array(X, chunks=150),
        da.from_array(y, chunks=150),
        scoring=scoring,
        sample_weight=da.from_array(weight, chunks=150),
        n_repeats=2,
        random_state=7,
    )
    groups = [np.array([j]) for j in range(X.shape[1])]
    assert_equal_to_memory(
        result,
        every_row_predicted(model, X, y, weight, scoring, groups, 2, 7),
        rtol=1e-6 if name == "xgboost" else 1e-9,
    )


def test_dask_dataframe_columns_and_groups(client):
    X, y = _regression()
    names = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    model = RandomForestRegressor(6, max_depth=4, random_state=0).fit(frame, y)
    frame["price"] = y
    frame["other"] = 1.0  # a column that is no feature
    data = dd.from_pandas(frame, npartitions=3)
    groups = {"first two": ["f0", "f1"], "last": ["f4"]}
    result = distributed_permutation_importance(
        model,
        data,
        "price",
        features=names,
        groups=groups,
        ungrouped="together",
        n_repeats=3,
        random_state=2,
    )
    assert list(result.feature_names) == ["first two", "last", "other"]
    assert_equal_to_memory(
        result,
        every_row_predicted(
            model, frame[names], y, None, None, result.groups, 3, result.random_state
        ),
    )


def test_workers_with_less_memory_than_the_data(tmp_path):
    """Two workers limited to 600 MiB each (a worker holds about 220 MiB
    once the libraries are imported; 467 MiB at its peak in a trial run),
    9,000,000 rows of 8 features and a target, 618 MiB as float64,
    generated on the workers: the computation completes without a worker
    restarting, each worker's peak memory stays below its limit, and the
    result equals the
    in-memory engine's for the same permutation (the in-memory tree engine
    is itself checked against predicting every row elsewhere)."""
    from sklearn_fimp._engine import permuted_scores, tree_ensemble

    n_rows, chunk = 9_000_000, 100_000

    def make(n, seed, chunks):
        X = da.random.RandomState(seed).normal(size=(n, 8), chunks=(chunks, 8))
        return X, X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * da.sin(X[:, 3])

    X_train, y_train = make(20_000, 1, 20_000)
    model = RandomForestRegressor(5, max_depth=6, random_state=0)
    model.fit(X_train.compute(), y_train.compute())
    X, y = make(n_rows, 2, chunk)
    limit = 600 * 2**20
    assert X.nbytes + y.nbytes > limit
    with (
        dask.config.set(
            {
                "distributed.p2p.comm.buffer": "32 MiB",
                "distributed.p2p.storage.buffer": "32 MiB",
                # a paused worker whose memory the allocator does not give
                # back never resumes; the limit is still enforced (95%)
                "distributed.worker.memory.pause": False,
                "temporary-directory": str(tmp_path),
            }
        ),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            memory_limit=limit,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        workers = set(client.scheduler_info()["workers"])
        result = distributed_permutation_importance(
            model, X, y, n_repeats=1, random_state=0
        )
        # no worker was restarted (a restart gives a new address)
        assert set(client.scheduler_info()["workers"]) == workers
        peaks = client.run(
            lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        )
    assert max(peaks.values()) < limit
    X_mem, y_mem = X.compute(), y.compute()
    ensemble = tree_ensemble(model)
    X_engine = ensemble.adapter.engine_input(X_mem)
    scores = permuted_scores(
        model,
        ensemble,
        X_engine,
        y_mem,
        None,
        [np.array([j]) for j in range(8)],
        [permutation_sources(n_rows, 0, 0)],
        check_scoring(model),
        1,
    )
    baseline = model.score(X_mem, y_mem)
    assert result.baseline_score == pytest.approx(baseline, rel=1e-9)
    np.testing.assert_allclose(
        result.importances, baseline - scores, rtol=1e-7, atol=1e-10
    )


# ---------------------------------------------------------------------------
# Spark


@pytest.fixture(scope="module")
def spark(spark_session):
    return spark_session


def _ordered(frame):
    """A Spark DataFrame's rows in the data's order (partition by
    partition), as distributed_permutation_importance numbers them."""
    return frame.toPandas()


@pytest.mark.parametrize("scoring", [None, "balanced_accuracy", "neg_log_loss"])
def test_spark_columns_with_a_scikit_learn_model(spark, scoring):
    X, y = _classification(3)
    names = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    model = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(frame, y)
    frame["label"] = y
    frame["weight"] = np.random.RandomState(0).uniform(0.5, 2.0, N_ROWS)
    data = spark.createDataFrame(frame).repartition(3)
    result = distributed_permutation_importance(
        model,
        data,
        "label",
        scoring=scoring,
        sample_weight="weight",
        n_repeats=2,
        random_state=3,
    )
    assert result.engine == "spark"
    rows = _ordered(data)
    groups = [np.array([j]) for j in range(5)]
    assert_equal_to_memory(
        result,
        every_row_predicted(
            model,
            rows[names],
            rows["label"].to_numpy(),
            rows["weight"].to_numpy(),
            scoring,
            groups,
            2,
            3,
        ),
    )


SPARK_MODELS = {
    "DecisionTreeClassifier": ("classification", {"maxDepth": 4}),
    "RandomForestClassifier": ("classification", {"numTrees": 5, "maxDepth": 4}),
    "GBTClassifier": ("classification", {"maxIter": 5, "maxDepth": 3}),
    "DecisionTreeRegressor": ("regression", {"maxDepth": 4}),
    "RandomForestRegressor": ("regression", {"numTrees": 5, "maxDepth": 4}),
    "GBTRegressor": ("regression", {"maxIter": 5, "maxDepth": 3}),
}


@pytest.mark.parametrize("name", SPARK_MODELS)
def test_spark_ml_models_equal_every_row_predicted(spark, name):
    from pyspark.ml import classification, regression
    from pyspark.ml.linalg import Vectors

    from sklearn_fimp._engine.adapters._spark_ml import SparkTreeModel

    task, params = SPARK_MODELS[name]
    X, y = _classification(2) if task == "classification" else _regression()
    rows = [(Vectors.dense(x), float(t)) for x, t in zip(X, y, strict=True)]
    data = spark.createDataFrame(rows, ["features", "label"]).repartition(2)
    module = classification if task == "classification" else regression
    model = getattr(module, name)(seed=0, **params).fit(data)
    scorings = [None, "neg_log_loss"] if task == "classification" else [None]
    for scoring in scorings:
        result = distributed_permutation_importance(
            model, data, scoring=scoring, n_repeats=2, random_state=5
        )
        ordered = _ordered(data)
        X_ordered = np.array([v.toArray() for v in ordered["features"]])
        snapshot = SparkTreeModel.from_spark(model)
        groups = [np.array([j]) for j in range(X.shape[1])]
        assert_equal_to_memory(
            result,
            every_row_predicted(
                snapshot,
                X_ordered,
                ordered["label"].to_numpy(),
                None,
                scoring,
                groups,
                2,
                5,
            ),
        )


def test_a_spark_model_is_read_once(spark):
    """Reading a pyspark.ml model's trees costs about 0.3 ms per node; a
    second call on the same model reuses the snapshot."""
    from pyspark.ml.linalg import Vectors
    from pyspark.ml.regression import RandomForestRegressor as SparkForest

    from sklearn_fimp._distributed._spark import spark_model_snapshot

    X, y = _regression()
    rows = [(Vectors.dense(x), float(t)) for x, t in zip(X[:200], y[:200], strict=True)]
    data = spark.createDataFrame(rows, ["features", "label"])
    model = SparkForest(numTrees=2, maxDepth=2, seed=0).fit(data)
    assert spark_model_snapshot(model) is spark_model_snapshot(model)
