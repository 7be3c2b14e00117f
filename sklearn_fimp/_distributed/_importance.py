"""Permutation importance of a fitted tree model on data that stays where
it lives: a Spark DataFrame or a Dask DataFrame or Array."""

import numbers
import uuid

import numpy as np
from sklearn.base import is_classifier

from .._engine import tree_ensemble
from .._importance._groups import UNGROUPED_OPTIONS, resolve_groups
from .._utils._compat import Interval, StrOptions, validate_params
from .._utils._progress import Progress
from .._utils._random import draw_seed
from .._utils._result import importance_result
from ._dask import DaskTable, is_dask_collection
from ._partition import ModelPayload
from ._permutations import GlobalPermutation
from ._scores import SummedScore, summed_scoring
from ._spark import SparkTable, is_spark_frame, spark_model_snapshot


def _table(estimator, X, y, sample_weight, features):
    if is_spark_frame(X):
        return SparkTable(estimator, X, y, sample_weight, features)
    if is_dask_collection(X):
        return DaskTable(X, y, sample_weight, features)
    raise TypeError(
        f"X is a {type(X).__name__}. distributed_permutation_importance takes a "
        "Spark DataFrame (pyspark.sql.DataFrame) or a Dask DataFrame or Array; "
        "for data in memory, call permutation_importance."
    )


def _feature_names(estimator, table):
    """The names the model was fitted with (None: it was fitted on an
    array), checked against the table's columns."""
    n_expected = getattr(estimator, "n_features_in_", None)
    if n_expected is not None and n_expected != table.n_features:
        raise ValueError(
            f"X has {table.n_features} feature columns and "
            f"{type(estimator).__name__} was fitted on {n_expected}; pass "
            "features= with the model's columns in the model's order."
        )
    names = getattr(estimator, "feature_names_in_", None)
    if names is None or not table.named:
        return None
    if list(names) != list(table.feature_names):
        raise ValueError(
            f"X's feature columns {list(table.feature_names)} are not those the "
            f"model was fitted on, in its order: {list(names)}. Pass "
            "features= with the model's columns."
        )
    return np.asarray(names, dtype=object)


@validate_params(
    {
        "estimator": [object],
        "X": [object],
        "y": [str, object, None],
        "features": [list, tuple, str, None],
        "scoring": [str, None],
        "n_repeats": [Interval(numbers.Integral, 1, None, closed="left")],
        "groups": [list, tuple, dict, str, None],
        "ungrouped": [StrOptions(set(UNGROUPED_OPTIONS))],
        "sample_weight": [str, object, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def distributed_permutation_importance(
    estimator,
    X,
    y=None,
    *,
    features=None,
    scoring=None,
    n_repeats=5,
    groups=None,
    ungrouped="separate",
    sample_weight=None,
    verbose=0,
    random_state=None,
):
    """Permutation importance of a fitted tree model on a Spark DataFrame or
    a Dask DataFrame or Array, computed where the rows live.

    The same quantity as :func:`permutation_importance` (the drop in score
    when a feature's or group's column is permuted over all the rows),
    computed without bringing the rows together: the model is sent to the
    workers once, every row is sent, once per repeat, to the partition of
    the row that receives its values under a global permutation, each
    partition routes its rows through the tree engine and returns the sums
    of the score's row terms, and the driver adds them. Only those sums
    reach the driver, so the rows need not fit on it or on any one worker.

    Parameters
    ----------
    estimator : fitted tree model
        A model the tree engine reads: scikit-learn's decision trees,
        forests, Bagging of trees, GradientBoosting and HistGradientBoosting,
        XGBoost, LightGBM and CatBoost (numerical features), or a fitted
        pyspark.ml DecisionTree, RandomForest or GBT model (classification or
        regression), whose trees are read on the driver.
    X : pyspark.sql.DataFrame, dask.dataframe.DataFrame or dask.array.Array
        The rows to measure on, with the model's feature columns and,
        except for a Dask Array, the target.
    y : str, dask Series, dask Array or None
        The target: a column of X (Spark, Dask DataFrame), or a Dask Series
        or Array with X's partitions. None: the ``labelCol`` of a pyspark.ml
        model.
    features : list of str, str or None
        The feature columns, in the model's order. None: the model's
        ``feature_names_in_`` (Spark: a scikit-learn model fitted with
        names), the ``featuresCol`` vector column of a pyspark.ml model, or
        (Dask) every column of X but y and the weights. A str: a Spark vector
        column (``pyspark.ml.linalg.Vector``) holding all features.
    scoring : str or None
        A score that is a sum over rows: "accuracy", "balanced_accuracy",
        "neg_log_loss" (classifiers), "r2", "neg_mean_squared_error"
        (regressors); None: accuracy or R², as the model's ``score``.
    n_repeats : int, default=5
        Number of permutations per feature or group.
    groups, ungrouped
        As in :func:`permutation_importance` (a list or dict of features;
        "auto" needs the data in memory and is not offered).
    sample_weight : str, dask Series or Array, or None
        Row weights: a column of X, or a collection with X's partitions.
    verbose : int, default=0
        Progress messages on stderr, one per stage, from the driver.
    random_state : int, RandomState instance or None
        Seed of the permutations.

    Returns
    -------
    result : Bunch
        As :func:`permutation_importance` returns it (``importances``,
        ``importances_mean``, ``importances_std``, ``feature_names``,
        ``groups``, ``baseline_score``, ``method``, ``scoring``,
        ``n_repeats``, ``random_state``), with

        permutation : str
            "global": every repeat is one permutation of all the rows, the
            same for every feature and group, row ``i`` receiving the values
            of row ``permutation_sources(n_rows, random_state, r)[i]``,
            rows numbered in the data's order (partition by partition).
            Predicting every row of the data in memory with these
            permutations gives the same importances, to floating-point
            precision (the tests check it for every model family and
            score).
        engine : {"spark", "dask"}
        n_rows : int

    Notes
    -----
    Cost: one pass over the data for the totals the score needs (row
    counts, class weights, the target's mean), then one exchange of ``(1 +
    n_repeats)`` copies of the rows between partitions, then one pass of the
    tree engine. The user guide's "Data beyond one machine" and the
    benchmark page ``bench_distributed`` have the figures.

    See Also
    --------
    permutation_importance : The same on data in memory, any model.
    permutation_sources : The permutations of a result, in memory.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_fimp import distributed_permutation_importance
    >>> X, y = make_regression(n_samples=400, n_features=3, n_informative=1,
    ...                        random_state=0)
    >>> model = RandomForestRegressor(10, random_state=0).fit(X, y)
    >>> result = distributed_permutation_importance(
    ...     model, da.from_array(X, chunks=100), da.from_array(y, chunks=100),
    ...     random_state=0)
    >>> int(result.importances_mean.argmax()), result.permutation
    (0, 'global')
    """
    progress = Progress("distributed_permutation_importance", verbose)
    snapshot = spark_model_snapshot(estimator)
    model = estimator if snapshot is None else snapshot
    if y is None and snapshot is not None:
        y = estimator.getLabelCol()
    if y is None:
        raise ValueError("y is required: the target column, Series or Array.")
    if snapshot is not None and features is None:
        features = estimator.getFeaturesCol()
    if tree_ensemble(model) is None:
        raise ValueError(
            f"{type(estimator).__name__} is not a model the tree engine reads; "
            "distributed_permutation_importance needs one (see its estimator "
            "parameter). For another model, collect a sample of rows and call "
            "permutation_importance."
        )
    table = _table(model, X, y, sample_weight, features)
    feature_names = _feature_names(model, table)
    if isinstance(groups, str):
        raise ValueError(
            f"groups={groups!r} is not offered on distributed data; pass a list "
            "or dict of features (feature_groups on a sample of rows gives "
            "groups of collinear features)."
        )
    labels, groups = resolve_groups(
        groups, table.feature_names, None, ungrouped=ungrouped
    )
    seed = draw_seed(random_state)
    scoring_name = summed_scoring(model, scoring)
    score = SummedScore(scoring_name, model.classes_ if is_classifier(model) else None)

    progress(f"totals of the rows ({table.engine}, {table.n_partitions} partitions)")
    totals = table.totals(score)
    counts = totals[:, 0].astype(np.int64)
    n_rows = int(counts.sum())
    score.set_totals(
        totals[:, 1].sum(),
        weighted_target=None if score.needs_classes else totals[:, 2].sum(),
        class_weight=totals[:, 3:].sum(axis=0) if score.needs_classes else None,
    )
    first_ids = np.concatenate([[0], np.cumsum(counts)[:-1]])
    permutation = GlobalPermutation(seed, n_rows)
    payload = ModelPayload(uuid.uuid4().hex, model, feature_names)
    progress(
        f"{n_rows:,} rows: exchanging {n_repeats + 1} copies and scoring "
        f"{len(groups)} features or groups x {n_repeats} repeats"
    )
    sums = table.sums(payload, permutation, groups, n_repeats, score, first_ids, counts)
    n_tasks = len(groups) * n_repeats
    permuted = sums[:n_tasks].reshape(len(groups), n_repeats)
    score.variance = sums[n_tasks + 1]
    baseline = float(score.score(sums[n_tasks]))
    importances = baseline - score.score(permuted)
    progress("done")
    return importance_result(
        importances,
        labels,
        groups=groups,
        baseline_score=baseline,
        method="permutation",
        scoring=scoring,
        n_repeats=n_repeats,
        max_samples=None,
        random_state=seed,
        permutation="global",
        engine=table.engine,
        n_rows=n_rows,
    )


def permutation_sources(n_rows, random_state, repeat):
    """The permutation of one repeat of
    :func:`distributed_permutation_importance`, in memory.

    Parameters
    ----------
    n_rows : int
        The number of rows the distributed call measured (its ``n_rows``).
    random_state : int
        The result's ``random_state`` (the seed it used).
    repeat : int
        The repeat, from 0 to ``n_repeats - 1``.

    Returns
    -------
    sources : ndarray of int64 of shape (n_rows,)
        Row ``i`` (in the data's order, partition by partition) received
        the values of row ``sources[i]``: ``X[sources]`` is X permuted as
        the repeat permuted each feature or group, for checking a
        distributed result in memory on data small enough to collect.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_fimp import permutation_sources
    >>> sources = permutation_sources(10, random_state=0, repeat=0)
    >>> bool(np.array_equal(np.sort(sources), np.arange(10)))
    True
    """
    return GlobalPermutation(draw_seed(random_state), n_rows).sources(repeat)
