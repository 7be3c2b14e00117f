"""The tree engine reads fitted pyspark.ml tree models: ``SparkTreeModel``,
the NumPy snapshot of their trees, predicts as Spark's ``transform`` does,
pickles, and the engine's permutation importances of it equal those of the
predict-every-row path.

One local Spark session (``local[2]``) fits the six tree models of
pyspark.ml once for the module, on continuous features and with a
categorical feature (``VectorIndexer``); the engine's tests then run on the
snapshots, without Spark. Spark refuses NaN when it fits a tree, so NaN
(and values that are no category) appear only in the rows predicted.
Skipped, saying why, without pyspark or Java; marked ``slow`` (starting the
JVM costs seconds whatever the tests' sizes).
"""

import os
import pickle
import shutil

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

from sklearn_fimp import permutation_importance
from sklearn_fimp._engine import engine_input, tree_ensemble
from sklearn_fimp._engine.adapters import adapter_for
from sklearn_fimp._engine.adapters._spark_ml import (
    SparkML,
    SparkTreeClassifier,
    SparkTreeModel,
    SparkTreeRegressor,
)

from ._engine_cases import assert_same_importances, count_engine_calls

pytestmark = pytest.mark.slow

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip(
        "Spark needs Java: no java on PATH and no JAVA_HOME", allow_module_level=True
    )

#: model name -> (pyspark.ml estimator class, its parameters, label column)
SPARK_ESTIMATORS = {
    "DecisionTreeClassifier": ("classification", {"maxDepth": 4}, "y3"),
    "RandomForestClassifier": ("classification", {"numTrees": 6, "maxDepth": 4}, "y3"),
    "GBTClassifier": ("classification", {"maxIter": 6, "maxDepth": 3}, "y2"),
    "DecisionTreeRegressor": ("regression", {"maxDepth": 4}, "yr"),
    "RandomForestRegressor": ("regression", {"numTrees": 6, "maxDepth": 4}, "yr"),
    "GBTRegressor": ("regression", {"maxIter": 6, "maxDepth": 3}, "yr"),
}
VARIANTS = ["continuous", "categorical"]
CASES = [f"{name}-{variant}" for name in SPARK_ESTIMATORS for variant in VARIANTS]
CLASSIFIER_CASES = [case for case in CASES if "Classifier" in case]
REGRESSOR_CASES = [case for case in CASES if "Regressor" in case]
#: the categorical feature's column and its categories 0 .. N_CATEGORIES - 1
CATEGORICAL, N_CATEGORIES = 3, 6
#: values of the categorical column in the first rows predicted that are no
#: category
NO_CATEGORY = [6.0, 7.0, -1.0, 1.5, np.nan, 2.5, 100.0, -0.0]


@pytest.fixture(scope="module")
def spark(spark_session):
    return spark_session


def _signal(X):
    return (
        X[:, 0]
        + 0.5 * X[:, 1]
        - 0.4 * X[:, 0] * X[:, 2]
        + np.isin(X[:, CATEGORICAL], [1, 4])
        - 0.5 * (X[:, CATEGORICAL] == 2)
    )


def _targets(X, rng):
    signal = _signal(X) + 0.3 * rng.normal(size=len(X))
    return {
        "y3": np.digitize(signal, [-0.3, 0.6]).astype(float),
        "y2": (signal > 0.2).astype(float),
        "yr": signal,
    }


@pytest.fixture(scope="module")
def data():
    """Training and evaluation rows: three continuous features and one of
    categories 0-5; the evaluation rows have NaN in feature 1 and values
    that are no category in their first rows."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(500, 4))
    X[:, CATEGORICAL] = rng.randint(0, N_CATEGORIES, size=500)
    targets = _targets(X, rng)
    train, evaluate = slice(0, 300), slice(300, 500)
    X_eval = X[evaluate].copy()
    X_eval[rng.uniform(size=200) < 0.1, 1] = np.nan
    X_eval[: len(NO_CATEGORY), CATEGORICAL] = NO_CATEGORY
    return (
        X[train],
        {name: y[train] for name, y in targets.items()},
        X_eval,
        {name: y[evaluate] for name, y in targets.items()},
    )


def _frame(spark, X, targets=None):
    from pyspark.ml.linalg import Vectors

    if targets is None:
        return spark.createDataFrame([(Vectors.dense(x),) for x in X], ["features"])
    names = sorted(targets)
    rows = [
        (Vectors.dense(x), *(float(targets[name][i]) for name in names))
        for i, x in enumerate(X)
    ]
    return spark.createDataFrame(rows, ["features", *names])


@pytest.fixture(scope="module")
def fitted(spark, data):
    """Per case: the Spark model, its snapshot, the evaluation rows and
    their target, and Spark's ``prediction`` and ``probability`` of them."""
    from pyspark.ml import classification, regression
    from pyspark.ml.feature import VectorIndexer

    X_train, y_train, X_eval, y_eval = data
    train = _frame(spark, X_train, y_train)
    indexer = VectorIndexer(
        inputCol="features", outputCol="indexed", maxCategories=N_CATEGORIES
    ).fit(train)
    # categories 0-5 are indexed as themselves: the rows predicted are the
    # feature vectors the model reads, values that are no category included
    identity = {float(v): v for v in range(N_CATEGORIES)}
    assert indexer.categoryMaps == {CATEGORICAL: identity}
    frames = {
        "continuous": train,
        "categorical": indexer.transform(train)
        .drop("features")
        .withColumnRenamed("indexed", "features"),
    }
    evaluation = _frame(spark, X_eval)
    modules = {"classification": classification, "regression": regression}
    cases = {}
    for name, (module, params, label) in SPARK_ESTIMATORS.items():
        for variant in VARIANTS:
            estimator = getattr(modules[module], name)(labelCol=label, seed=0, **params)
            model = estimator.fit(frames[variant])
            rows = model.transform(evaluation).collect()
            probability = None
            if module == "classification":
                probability = np.array([row.probability.toArray() for row in rows])
            cases[f"{name}-{variant}"] = {
                "model": model,
                "snapshot": SparkTreeModel.from_spark(model),
                "X": X_eval,
                "y": y_eval[label],
                "prediction": np.array([row.prediction for row in rows]),
                "probability": probability,
            }
    return cases


# ---------------------------------------------------------------------------
# the snapshot predicts as Spark's transform


@pytest.mark.parametrize("case", CASES)
def test_spark_tree_model_predicts_as_spark_transform(fitted, case):
    found = fitted[case]
    snapshot = found["snapshot"]
    classifier = found["probability"] is not None
    assert is_classifier(snapshot) == classifier
    assert type(snapshot) is (SparkTreeClassifier if classifier else SparkTreeRegressor)
    assert snapshot.n_features_in_ == 4
    assert snapshot.spark_model_ == type(found["model"]).__name__
    prediction = snapshot.predict(found["X"])
    if classifier:
        n_classes = found["probability"].shape[1]
        np.testing.assert_array_equal(snapshot.classes_, np.arange(n_classes))
        np.testing.assert_array_equal(prediction, found["prediction"])
        np.testing.assert_allclose(
            snapshot.predict_proba(found["X"]), found["probability"], rtol=1e-12
        )
    else:
        np.testing.assert_allclose(prediction, found["prediction"], rtol=1e-12)


def test_spark_tree_model_categorical_splits_of_both_kinds(fitted):
    """Spark keeps the smaller side of a categorical split: values that are
    no category go right where it keeps the left categories, left where it
    keeps the right ones; the models' splits have both kinds, so the test
    above checks both rules on the rows with such values."""
    kinds = set()
    for case in CASES:
        snapshot = fitted[case]["snapshot"]
        for tree in snapshot.trees_:
            categorical = np.flatnonzero(tree.n_categories)
            if case.endswith("continuous"):
                assert not len(categorical)
            kinds.update(tree.unknown_left[categorical].tolist())
    assert kinds == {False, True}


@pytest.mark.parametrize("case", CASES)
def test_spark_tree_model_pickles(fitted, case):
    found = fitted[case]
    snapshot = found["snapshot"]
    copy = pickle.loads(pickle.dumps(snapshot))
    assert type(copy) is type(snapshot)
    np.testing.assert_array_equal(
        copy.predict(found["X"]), snapshot.predict(found["X"])
    )
    if is_classifier(snapshot):
        np.testing.assert_array_equal(
            copy.predict_proba(found["X"]), snapshot.predict_proba(found["X"])
        )
    assert tree_ensemble(copy) is not None


def test_spark_tree_model_decision_function_is_the_margin(fitted):
    found = fitted["GBTClassifier-categorical"]
    snapshot = found["snapshot"]
    margin = snapshot.decision_function(found["X"])
    np.testing.assert_array_equal(snapshot.predict(found["X"]), margin > 0)
    assert not hasattr(
        fitted["RandomForestClassifier-continuous"]["snapshot"], ("decision_function")
    )


def test_spark_tree_model_refuses_what_it_cannot_do(spark, fitted):
    from pyspark.ml.classification import LogisticRegression

    found = fitted["RandomForestClassifier-categorical"]
    snapshot = found["snapshot"]
    with pytest.raises(TypeError, match="cannot be fitted"):
        snapshot.fit(found["X"], found["y"])
    with pytest.raises(ValueError, match="X has 3 features.*expecting 4"):
        snapshot.predict(found["X"][:, :3])
    unfitted = clone(snapshot)
    assert type(unfitted) is SparkTreeClassifier
    assert not SparkML.accepts(unfitted)
    with_thresholds = found["model"].copy()
    with_thresholds.setThresholds([0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="thresholds"):
        SparkTreeModel.from_spark(with_thresholds)
    logistic = LogisticRegression(
        featuresCol="features", labelCol="label", maxIter=3
    ).fit(_frame(spark, found["X"][:50, [0]], {"label": found["y"][:50] > 0}))
    with pytest.raises(
        TypeError, match="LogisticRegressionModel.*not a pyspark.ml tree"
    ):
        SparkTreeModel.from_spark(logistic)
    assert adapter_for(logistic) is None


# ---------------------------------------------------------------------------
# the engine reads the snapshot, and the Spark model itself


def test_tree_ensemble_reads_the_spark_model_itself(fitted):
    found = fitted["GBTRegressor-categorical"]
    from_model = tree_ensemble(found["model"])
    from_snapshot = tree_ensemble(found["snapshot"])
    assert isinstance(from_model.adapter, SparkML)
    assert len(from_model.terms) == len(from_snapshot.terms) == 6
    for a, b in zip(from_model.terms, from_snapshot.terms, strict=True):
        np.testing.assert_array_equal(a.table, b.table)
        np.testing.assert_array_equal(a.tree.threshold, b.tree.threshold)
    np.testing.assert_array_equal(
        engine_input(found["model"], found["X"]),
        engine_input(found["snapshot"], found["X"]),
    )


@pytest.mark.usefixtures("engine_backend", "reroute_every_group")
@pytest.mark.parametrize("scoring", [None, "neg_log_loss", "roc_auc_ovr"])
@pytest.mark.parametrize("case", CLASSIFIER_CASES)
def test_engine_spark_classifiers_match_generic_path(
    fitted, case, scoring, monkeypatch
):
    found = fitted[case]
    if scoring == "roc_auc_ovr" and case.startswith("GBT"):
        scoring = "roc_auc"  # two classes: the margin
    calls = count_engine_calls(monkeypatch)
    assert_same_importances(
        found["snapshot"], found["X"], found["y"], scoring=scoring, n_repeats=2
    )
    assert calls == [type(found["snapshot"]).__name__]


@pytest.mark.usefixtures("engine_backend", "reroute_every_group")
@pytest.mark.parametrize("scoring", [None, "neg_mean_absolute_error"])
@pytest.mark.parametrize("case", REGRESSOR_CASES)
def test_engine_spark_regressors_match_generic_path(fitted, case, scoring, monkeypatch):
    found = fitted[case]
    calls = count_engine_calls(monkeypatch)
    assert_same_importances(
        found["snapshot"], found["X"], found["y"], scoring=scoring, n_repeats=2
    )
    assert calls == [type(found["snapshot"]).__name__]


@pytest.mark.usefixtures("engine_backend", "reroute_every_group")
@pytest.mark.parametrize(
    "case", ["RandomForestClassifier-categorical", "GBTRegressor-categorical"]
)
def test_engine_spark_groups_and_sample_weight_match_generic_path(fitted, case):
    found = fitted[case]
    weight = np.random.RandomState(1).uniform(0, 2, size=len(found["y"]))
    weight[:20] = 0
    assert_same_importances(
        found["snapshot"],
        found["X"],
        found["y"],
        groups=[[0, 1], [1, 2, 3], 3],
        sample_weight=weight,
        n_repeats=3,
    )


def test_permutation_importance_of_spark_snapshot_finds_the_signal(fitted):
    found = fitted["RandomForestRegressor-categorical"]
    result = permutation_importance(
        found["snapshot"], found["X"], found["y"], n_repeats=3, random_state=0
    )
    # feature 0 carries the most signal
    assert int(np.argmax(result.importances_mean)) == 0
