"""distributed_select_features: the probe columns built where the rows
live equal the features permuted in memory (the same permutations), and
the selection on a local Spark session keeps strong features and rejects
noise. The Spark tests are marked ``slow`` (the JVM takes most of a
minute to start); the partitions' function runs in the default run."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.utils import Bunch
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_fimp import (
    ProbeDisplay,
    distributed_permutation_importance,
    distributed_select_features,
)
from sklearn_fimp._distributed._partition import (
    HELD_OUT,
    LABEL,
    WEIGHT,
    feature_column,
    probe_column,
    send_rows,
    shadowed_rows,
)
from sklearn_fimp._distributed._permutations import GlobalPermutation
from sklearn_fimp._selection._distributed import (
    _round_trees,
    _warn_none_selected,
    multi_level_categorical,
)
from sklearn_fimp._selection._measuring._probes import draw_mirrors


def expected_probes(X, seed, mirrored):
    """The slow reference: probe ``k`` of row ``t`` is feature
    ``mirrored[k]`` of the row that layer ``k // n_features``'s permutation
    sends to ``t``."""
    n, n_features = X.shape
    permutation = GlobalPermutation(seed, n)
    out = np.empty((n, len(mirrored)))
    for k, feature in enumerate(mirrored):
        out[:, k] = X[permutation.sources(k // n_features), feature]
    return out


def partitions_after_exchange(frame, first_ids, permutation, n_layers, n_parts, rng):
    """What an engine does between ``send_rows`` and ``shadowed_rows``:
    each partition sends its rows, the rows go to the partition of their
    target, in any order."""
    n_features = sum(c.startswith("__x") for c in frame.columns)
    bounds = [*first_ids, len(frame)]
    sent = pd.concat(
        [
            send_rows(
                frame.iloc[bounds[i] : bounds[i + 1]],
                bounds[i],
                permutation,
                n_layers,
                n_features,
            )
            for i in range(len(first_ids))
        ],
        ignore_index=True,
    )
    sent = sent.iloc[rng.permutation(len(sent))]
    return [sent[sent["__target"] % n_parts == p] for p in range(n_parts)]


@pytest.mark.parametrize("n_probes", [2, 3, 7])
def test_shadowed_rows_equal_the_features_permuted_in_memory(n_probes):
    rng = np.random.RandomState(0)
    n, n_features, seed = 37, 3, 12345
    X = rng.normal(size=(n, n_features))
    frame = pd.DataFrame({feature_column(j): X[:, j] for j in range(n_features)})
    frame[LABEL] = rng.randint(2, size=n)
    frame[WEIGHT] = rng.uniform(size=n)
    mirrored = draw_mirrors(n_features, n_probes, rng)
    n_layers = -(-n_probes // n_features)
    split, n_held_out = GlobalPermutation(7, n), 9
    parts = partitions_after_exchange(
        frame, [0, 20], GlobalPermutation(seed, n), n_layers, 3, rng
    )
    out = pd.concat(
        [
            shadowed_rows(part, n_layers, mirrored, n_features, (split, n_held_out))
            for part in parts
        ]
    )
    rows = np.argsort(X[:, 0])[
        np.searchsorted(np.sort(X[:, 0]), out[feature_column(0)])
    ]
    assert np.array_equal(np.sort(rows), np.arange(n))
    columns = [feature_column(j) for j in range(n_features)]
    np.testing.assert_array_equal(out[columns].to_numpy(), X[rows])
    probes = out[[probe_column(k) for k in range(n_probes)]].to_numpy()
    np.testing.assert_array_equal(probes, expected_probes(X, seed, mirrored)[rows])
    np.testing.assert_array_equal(out[LABEL].to_numpy(), frame[LABEL].to_numpy()[rows])
    np.testing.assert_array_equal(
        out[WEIGHT].to_numpy(), frame[WEIGHT].to_numpy()[rows]
    )
    held = out[HELD_OUT].to_numpy()
    assert held.sum() == n_held_out
    np.testing.assert_array_equal(held, split.targets(rows, 0) < n_held_out)


def test_shadowed_rows_refuse_rows_that_do_not_match():
    rng = np.random.RandomState(1)
    frame = pd.DataFrame({feature_column(0): rng.normal(size=10), LABEL: 0.0})
    frame[WEIGHT] = 1.0
    (part,) = partitions_after_exchange(frame, [0], GlobalPermutation(3, 10), 1, 1, rng)
    with pytest.raises(RuntimeError, match="do not match"):
        shadowed_rows(part.iloc[1:], 1, [0], 1, None)


def test_refuses_what_is_not_a_spark_tree_estimator_or_frame():
    frame = pd.DataFrame({"a": [1.0, 2.0], "y": [0.0, 1.0]})
    with pytest.raises(TypeError, match="pyspark.ml tree estimator"):
        distributed_select_features(RandomForestRegressor(), frame, "y")
    pipeline = type("Pipeline", (), {"__module__": "pyspark.ml.pipeline"})()
    with pytest.raises(TypeError, match="feature stages"):
        distributed_select_features(pipeline, frame, "y")
    model = type("RandomForestRegressionModel", (), {"__module__": "pyspark.ml.x"})()
    with pytest.raises(TypeError, match="cannot be refitted"):
        distributed_select_features(model, frame, "y")
    with pytest.raises(InvalidParameterError, match="method"):
        distributed_select_features(RandomForestRegressor(), frame, "y", method="shap")


@pytest.mark.parametrize(
    "name, value", [("n_repeats", 0), ("n_repeats", "twice"), ("n_rounds", 0)]
)
def test_refuses_repeats_or_rounds_that_are_neither_auto_nor_positive(name, value):
    frame = pd.DataFrame({"a": [1.0, 2.0], "y": [0.0, 1.0]})
    # checked before the estimator and the frame, with the values it takes
    expected = rf"'{name}' .* among {{'auto'}} or an int in the range \[1, inf\)"
    with pytest.raises(InvalidParameterError, match=expected):
        distributed_select_features(
            RandomForestRegressor(), frame, "y", **{name: value}
        )


@pytest.mark.parametrize("n_probes", [1, 0, "many"])
def test_both_front_ends_refuse_the_same_probe_counts(n_probes):
    from sklearn.ensemble import RandomForestRegressor as Forest

    from sklearn_fimp import ImportanceSelector

    frame = pd.DataFrame({"a": [1.0, 2.0], "y": [0.0, 1.0]})
    # one constraint (_probes.N_PROBES): "auto" or at least 2, on Spark and
    # in memory alike
    expected = r"'n_probes' .* among {'auto'} or an int in the range \[2, inf\)"
    with pytest.raises(InvalidParameterError, match=expected):
        distributed_select_features(
            RandomForestRegressor(), frame, "y", n_probes=n_probes
        )
    with pytest.raises(InvalidParameterError, match=expected):
        ImportanceSelector(Forest(), n_probes=n_probes).fit(frame[["a"]], frame["y"])


def _spark_like(name, **methods):
    """An object that looks like a pyspark.ml estimator of that class name."""
    return type(name, (), {"__module__": "pyspark.ml.regression", **methods})()


@pytest.mark.parametrize(
    "num_trees, round_trees, expected",
    [(100, "auto", 30), (200, "auto", 60), (20, "auto", 20), (100, None, 100)]
    + [(100, 7, 7)],
)
def test_round_trees_share_out_a_spark_forest(num_trees, round_trees, expected):
    forest = _spark_like("RandomForestRegressor", getNumTrees=lambda self: num_trees)
    assert _round_trees(forest, round_trees) == expected


def test_round_trees_fit_other_spark_trees_as_given():
    boosted = _spark_like("GBTRegressor")
    assert _round_trees(boosted, "auto") is None
    assert _round_trees(boosted, None) is None
    with pytest.raises(
        ValueError, match=r"round_trees=5 .* \(on Spark, a RandomForest\)"
    ):
        _round_trees(boosted, 5)


# --------------------------------------------------------------------------
# on Spark


def regression_frame(spark, n_rows, seed, n_partitions=3):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, 6))
    y = 2 * X[:, 0] + 1.5 * X[:, 1] + X[:, 2] + 0.5 * rng.normal(size=n_rows)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    frame["y"] = y
    frame["w"] = rng.uniform(0.5, 1.5, size=n_rows)
    return frame, spark.createDataFrame(frame).repartition(n_partitions)


@pytest.mark.slow
def test_probes_on_spark_equal_the_features_permuted_in_memory(spark_session):
    from sklearn_fimp._distributed._spark import SparkTable

    frame, data = regression_frame(spark_session, 101, 0)
    data = spark_session.createDataFrame(frame, schema=data.schema)  # data's order
    features = [f"x{j}" for j in range(6)]
    table = SparkTable(None, data, "y", "w", features)
    counts = table.counts()
    first_ids = np.concatenate([[0], np.cumsum(counts)[:-1]])
    mirrored = draw_mirrors(6, 8, np.random.RandomState(0))
    split = GlobalPermutation(5, 101)
    out = table.with_probes(
        first_ids, GlobalPermutation(99, 101), 2, mirrored, (split, 20)
    ).toPandas()
    X = frame[features].to_numpy()
    rows = np.argsort(X[:, 0])[
        np.searchsorted(np.sort(X[:, 0]), out[feature_column(0)])
    ]
    assert np.array_equal(np.sort(rows), np.arange(101))
    probes = out[[probe_column(k) for k in range(8)]].to_numpy()
    np.testing.assert_array_equal(probes, expected_probes(X, 99, mirrored)[rows])
    np.testing.assert_array_equal(out[LABEL].to_numpy(), frame["y"].to_numpy()[rows])
    np.testing.assert_array_equal(out[WEIGHT].to_numpy(), frame["w"].to_numpy()[rows])
    assert out[HELD_OUT].sum() == 20


@pytest.mark.slow
def test_selects_the_signal_with_held_out_permutations(spark_session):
    from pyspark.ml.regression import RandomForestRegressor as SparkForest

    _, data = regression_frame(spark_session, 500, 1)
    forest = SparkForest(numTrees=10, maxDepth=4, labelCol="y", weightCol="w")
    result = distributed_select_features(
        forest, data, features=[f"x{j}" for j in range(6)], n_rounds=3, random_state=0
    )
    assert result.selected == ["x0", "x1", "x2"]
    assert list(result.decisions[:3]) == ["confirmed"] * 3
    assert result.n_rows == 500 and result.engine == "spark"
    assert result.n_probes == 20 and result.n_repeats == 5
    importances = result.importances
    assert importances.importances.shape == (6 + 20, 3)
    assert importances.is_probe.sum() == 20
    np.testing.assert_array_equal(
        result.support, (result.pvalues_corrected <= 0.01) & result.support
    )
    assert result.importance_history.shape == (3, 6)
    assert result.probe_history.shape == (3, 20)
    pytest.importorskip("matplotlib").use("Agg")
    display = ProbeDisplay(
        result.importance_history,
        result.probe_history,
        result.feature_names,
        result.decisions,
    ).plot()
    assert len(display.order_) == 6


@pytest.mark.slow
@pytest.mark.parametrize(
    "given, expected", [({}, 5), ({"n_repeats": "auto"}, 1), ({"n_repeats": 3}, 3)]
)
def test_each_round_permutes_each_column_as_many_times_as_told(
    spark_session, monkeypatch, given, expected
):
    # "auto" is the in-memory selector's: one permutation per column in
    # each round; the default stays 5 (the function's docstring says why)
    from pyspark.ml.regression import DecisionTreeRegressor

    from sklearn_fimp._selection import _distributed

    measured = []

    def spy(*args, **kwargs):
        measured.append(kwargs["n_repeats"])
        return distributed_permutation_importance(*args, **kwargs)

    monkeypatch.setattr(_distributed, "distributed_permutation_importance", spy)
    _, data = regression_frame(spark_session, 200, 5, n_partitions=2)
    result = distributed_select_features(
        DecisionTreeRegressor(maxDepth=3, labelCol="y"),
        data,
        features=["x0", "x1"],
        n_rounds=2,
        random_state=0,
        **given,
    )
    assert measured == [expected, expected]  # each of the two rounds
    assert result.n_repeats == expected and result.n_rounds == 2


@pytest.mark.slow
def test_rounds_fit_a_share_of_a_spark_forest(spark_session, capsys):
    from pyspark.ml.regression import RandomForestRegressor as SparkForest

    _, data = regression_frame(spark_session, 300, 4)
    forest = SparkForest(numTrees=40, maxDepth=3, labelCol="y")
    result = distributed_select_features(
        forest,
        data,
        features=[f"x{j}" for j in range(6)],
        method="mdi",
        n_rounds=3,
        verbose=1,
        random_state=0,
    )
    assert result.round_trees == 30
    assert result.n_repeats is None and result.n_rounds == 3
    assert "round 3 of 3: fitting 30 of the forest's trees" in capsys.readouterr().err
    assert forest.getNumTrees() == 40  # the caller's estimator untouched
    assert result.selected == ["x0", "x1", "x2"]


@pytest.mark.slow
def test_selects_the_signal_with_impurity_on_a_vector_column(spark_session):
    from pyspark.ml.classification import GBTClassifier
    from pyspark.ml.feature import VectorAssembler

    frame, _ = regression_frame(spark_session, 500, 2)
    frame["label"] = (frame["y"] > frame["y"].median()).astype(float)
    data = spark_session.createDataFrame(frame).repartition(2)
    data = VectorAssembler(
        inputCols=[f"x{j}" for j in range(6)], outputCol="features"
    ).transform(data)
    result = distributed_select_features(
        GBTClassifier(maxIter=20, maxDepth=3),
        data,
        method="mdi",
        n_rounds=5,
        random_state=0,
    )
    assert list(result.feature_names) == [f"features[{j}]" for j in range(6)]
    assert result.selected == ["features[0]", "features[1]", "features[2]"]


@pytest.mark.slow
def test_warns_on_dependent_rows_and_refuses_a_test_size_that_holds_out_none(
    spark_session,
):
    from pyspark.ml.regression import DecisionTreeRegressor

    rng = np.random.RandomState(3)
    y = np.zeros(400)
    for t in range(1, 400):
        y[t] = 0.95 * y[t - 1] + rng.normal()
    frame = pd.DataFrame({"x0": rng.normal(size=400), "y": y})
    data = spark_session.createDataFrame(frame).coalesce(1)
    tree = DecisionTreeRegressor(maxDepth=2, labelCol="y")
    with (
        pytest.warns(UserWarning, match="lag-1 autocorrelation 0.9"),
        pytest.raises(ValueError, match="test_size=0.001 holds out 0"),
    ):
        distributed_select_features(tree, data, features=["x0"], test_size=0.001)


def test_only_categorical_features_of_more_than_two_levels_are_reported():
    # Spark's ML attributes of a vector column: a two-level feature (binary,
    # or nominal with two values) splits the same way as an ordered code
    metadata = {
        "ml_attr": {
            "attrs": {
                "binary": [{"idx": 0, "name": "flag"}],
                "nominal": [
                    {"idx": 1, "name": "two", "vals": ["a", "b"]},
                    {"idx": 2, "name": "three", "vals": ["a", "b", "c"]},
                    {"idx": 3, "name": "counted", "num_vals": 4},
                    {"idx": 4, "name": "pair", "num_vals": 2},
                    {"idx": 5},
                ],
                "numeric": [{"idx": 6, "name": "x"}],
            },
            "num_attrs": 7,
        }
    }
    assert multi_level_categorical(metadata) == ["three", "counted", "5"]
    assert multi_level_categorical({}) == []


def test_none_selected_warning_counts_the_tentative_features():
    # as the in-memory selector's warning: the features that beat the
    # probes before the correction, and the one option offered here
    decisions = np.array(["tentative", "rejected", "tentative", "rejected"])
    test = Bunch(decisions=decisions, passed=np.zeros(4, dtype=bool))
    with pytest.warns(UserWarning, match="none of the 4 features") as record:
        _warn_none_selected(4, 0.01, "holm", test)
    message = str(record[0].message)
    assert "2 of them beat the probes before the correction for testing 4" in message
    assert "'tentative' in the result's decisions" in message
    assert "keep_tentative=True keeps them" in message
    assert "'cv'" not in message
    # none tentative, or every tentative one kept: no such advice
    for others, passed in [
        (np.array(["rejected"] * 4), np.zeros(4, dtype=bool)),
        (decisions, decisions == "tentative"),
    ]:
        with pytest.warns(UserWarning) as record:
            _warn_none_selected(4, 0.01, "holm", Bunch(decisions=others, passed=passed))
        assert "keep_tentative" not in str(record[0].message)


@pytest.mark.slow
def test_warns_when_a_vector_column_holds_categorical_features(spark_session):
    from pyspark.ml.feature import VectorAssembler, VectorIndexer
    from pyspark.ml.regression import DecisionTreeRegressor

    rng = np.random.RandomState(4)
    frame = pd.DataFrame(
        {
            "level": rng.randint(3, size=200).astype(float),
            "x": rng.normal(size=200),
            "y": rng.normal(size=200),
        }
    )
    data = VectorAssembler(inputCols=["level", "x"], outputCol="raw").transform(
        spark_session.createDataFrame(frame)
    )
    data = (
        VectorIndexer(inputCol="raw", outputCol="features", maxCategories=4)
        .fit(data)
        .transform(data)
    )
    with pytest.warns(UserWarning, match="as categorical"):
        distributed_select_features(
            DecisionTreeRegressor(maxDepth=2, labelCol="y"),
            data,
            method="mdi",
            n_rounds=1,
            random_state=0,
        )
