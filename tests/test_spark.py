"""Spark: every parallel loop gives the local run's results under joblib's
Spark backend (joblibspark), and ``mdi_importance`` reproduces the
``featureImportances`` of pyspark.ml tree models.

One local Spark session (``local[2]``) serves the whole module; its Python
workers run this interpreter (``PYSPARK_PYTHON``) and import this checkout
of sklearn_fimp. Skipped, saying why, without pyspark, joblibspark or Java.

Marked ``slow``: starting the JVM, its Python workers and its first jobs
costs about a minute whatever the tests' sizes (60 to 80 s of the default
run on a 2-core machine, for 19 small tests). ``.ci/run`` runs the module in
its slow step with the newest releases, and ``.ci/run-minimum`` with the
minimum versions.
"""

import os
import shutil

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression

import sklearn_fimp
from sklearn_fimp import (
    DependenceAnalyzer,
    ImportanceSelector,
    drop_column_importance,
    feature_dependence,
    mdi_importance,
    oob_permutation_importance,
    permutation_importance,
)

pytestmark = pytest.mark.slow

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed")
joblibspark = pytest.importorskip("joblibspark", reason="joblibspark is not installed")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip(
        "Spark needs Java: no java on PATH and no JAVA_HOME", allow_module_level=True
    )


@pytest.fixture(scope="module")
def spark(spark_session):
    joblibspark.register_spark()
    return spark_session


def test_workers_import_this_checkout(spark):
    def where(_):
        import sklearn_fimp

        return sklearn_fimp.__file__

    with joblib.parallel_config(backend="spark", n_jobs=2):
        found = joblib.Parallel()(joblib.delayed(where)(i) for i in range(2))
    assert set(found) == {sklearn_fimp.__file__}


# ---------------------------------------------------------------------------
# joblib's Spark backend: the results of a local run


def local_and_spark(compute):
    """``compute()`` run locally and with joblib's Spark backend."""
    local = compute()
    with joblib.parallel_config(backend="spark"):
        remote = compute()
    return local, remote


def assert_same_result(local, remote):
    np.testing.assert_array_equal(local.importances, remote.importances)
    assert local.baseline_score == remote.baseline_score
    assert local.random_state == remote.random_state


@pytest.fixture(scope="module")
def classification():
    return make_classification(
        n_samples=200, n_features=5, n_informative=3, random_state=0
    )


@pytest.fixture(scope="module")
def forest(classification):
    X, y = classification
    return RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)


def test_permutation_importance_same_on_spark(spark, classification):
    X, y = classification
    model = LogisticRegression().fit(X, y)
    local, remote = local_and_spark(
        lambda: permutation_importance(
            model, X, y, n_repeats=3, n_jobs=2, random_state=0
        )
    )
    assert_same_result(local, remote)


def test_tree_engine_stays_local_on_spark(spark, classification, forest):
    """The tree engine's shared-memory threads run locally whatever the
    backend, with the same results."""
    X, y = classification
    local, remote = local_and_spark(
        lambda: permutation_importance(forest, X, y, n_jobs=2, random_state=0)
    )
    assert_same_result(local, remote)


@pytest.mark.parametrize("per_tree", [False, True])
def test_oob_permutation_importance_same_on_spark(
    spark, classification, forest, per_tree
):
    X, y = classification
    local, remote = local_and_spark(
        lambda: oob_permutation_importance(
            forest, X, y, per_tree=per_tree, n_repeats=2, n_jobs=2, random_state=0
        )
    )
    assert_same_result(local, remote)


@pytest.mark.parametrize("cv", [None, 2])
def test_drop_column_importance_same_on_spark(spark, classification, cv):
    X, y = classification
    estimator = RandomForestClassifier(n_estimators=5)
    local, remote = local_and_spark(
        lambda: drop_column_importance(estimator, X, y, cv=cv, n_jobs=2, random_state=0)
    )
    assert_same_result(local, remote)


def test_feature_dependence_same_on_spark(spark, classification):
    X, _ = classification
    estimator = RandomForestRegressor(n_estimators=5)
    local, remote = local_and_spark(
        lambda: feature_dependence(X, estimator=estimator, n_jobs=2, random_state=0)
    )
    np.testing.assert_array_equal(local.dependence, remote.dependence)
    np.testing.assert_array_equal(local.matrix, remote.matrix)


def test_dependence_analyzer_same_on_spark(spark):
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(2, 150))
    X = np.column_stack([a, b, a + 0.01 * rng.normal(size=150), rng.normal(size=150)])
    analyzer = DependenceAnalyzer(
        RandomForestRegressor(n_estimators=5), n_jobs=2, random_state=0
    )
    local = clone(analyzer).fit(X)
    with joblib.parallel_config(backend="spark"):
        remote = clone(analyzer).fit(X)
    np.testing.assert_array_equal(local.support_, remote.support_)
    assert list(remote.elimination_path_["feature"]) == list(
        local.elimination_path_["feature"]
    )


@pytest.mark.parametrize("method", ["permutation", "drop_column"])
def test_importance_selector_same_on_spark(spark, classification, method):
    X, y = classification
    selector = ImportanceSelector(
        LogisticRegression(),
        method=method,
        threshold="mean",
        n_repeats=2,
        n_jobs=2,
        random_state=0,
    )

    def select():
        fitted = clone(selector).fit(X, y)
        return fitted.support_.copy(), fitted.importances_.importances.copy()

    (local_support, local_importances), (remote_support, remote_importances) = (
        local_and_spark(select)
    )
    np.testing.assert_array_equal(local_support, remote_support)
    np.testing.assert_array_equal(local_importances, remote_importances)


# ---------------------------------------------------------------------------
# mdi_importance of pyspark.ml tree models


@pytest.fixture(scope="module")
def frame(spark):
    from pyspark.ml.linalg import Vectors

    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 5))
    label = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=300) > 0).astype(float)
    target = X[:, 0] + X[:, 2] ** 2 + 0.1 * rng.normal(size=300)
    weight = rng.uniform(0.5, 2.0, size=300)
    rows = [
        (Vectors.dense(x), float(c), float(t), float(w))
        for x, c, t, w in zip(X, label, target, weight)
    ]
    return spark.createDataFrame(rows, ["features", "label", "target", "weight"])


def spark_models():
    from pyspark.ml import classification, regression

    return {
        "DecisionTreeClassifier": classification.DecisionTreeClassifier(
            maxDepth=4, seed=0
        ),
        "DecisionTreeRegressor": regression.DecisionTreeRegressor(
            labelCol="target", maxDepth=6, seed=0
        ),
        "RandomForestClassifier": classification.RandomForestClassifier(
            numTrees=8, maxDepth=4, seed=0
        ),
        "RandomForestClassifier-entropy-weighted": (
            classification.RandomForestClassifier(
                numTrees=8, maxDepth=4, impurity="entropy", weightCol="weight", seed=0
            )
        ),
        "RandomForestRegressor": regression.RandomForestRegressor(
            labelCol="target", numTrees=8, maxDepth=5, seed=0
        ),
        "GBTClassifier": classification.GBTClassifier(maxIter=6, maxDepth=3, seed=0),
        "GBTRegressor-subsampled": regression.GBTRegressor(
            labelCol="target", maxIter=6, maxDepth=3, subsamplingRate=0.7, seed=0
        ),
    }


MODEL_NAMES = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "RandomForestClassifier",
    "RandomForestClassifier-entropy-weighted",
    "RandomForestRegressor",
    "GBTClassifier",
    "GBTRegressor-subsampled",
]


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_mdi_importance_reproduces_spark_feature_importances(spark, frame, name):
    model = spark_models()[name].fit(frame)
    expected = model.featureImportances.toArray()
    result = mdi_importance(model, normalization="spark")
    np.testing.assert_allclose(result.importances_mean, expected, rtol=0, atol=1e-12)
    assert result.n_trees == len(getattr(model, "trees", [model]))
    assert list(result.feature_names) == [f"x{i}" for i in range(5)]
    # bagged trees: Spark's normalisation is scikit-learn's
    if not name.startswith("GBT"):
        sklearn_style = mdi_importance(model).importances_mean
        np.testing.assert_allclose(sklearn_style, expected, rtol=0, atol=1e-12)


def test_mdi_importance_rejects_spark_model_without_trees(spark, frame):
    from pyspark.ml.classification import LogisticRegression as SparkLogistic

    model = SparkLogistic(maxIter=5).fit(frame)
    with pytest.raises(TypeError, match="LogisticRegressionModel.*without trees"):
        mdi_importance(model)
