"""Feature selection on a Spark DataFrame: :class:`ImportanceSelector`'s
probe test with its rounds of fits run on the cluster.

Each round appends shadow probes to the rows where they live (one exchange
of the rows, ``_distributed._spark.SparkTable.with_probes``), fits the
pyspark.ml tree
estimator on them there, and measures every column's importance there
(:func:`distributed_permutation_importance` on the round's held-out rows,
or the model's impurity importance); the driver keeps one number per
column and round and runs the probe test of ``_selection/_deciding/_probe_test.py``
on them, as the in-memory selector does (``_rounds.py`` runs the rounds
for both).
"""

import numbers
import warnings

import numpy as np
from sklearn.utils import Bunch

from .._distributed import distributed_permutation_importance
from .._distributed._partition import (
    HELD_OUT,
    LABEL,
    WEIGHT,
    feature_column,
    probe_column,
)
from .._distributed._permutations import GlobalPermutation
from .._distributed._spark import SparkTable, is_spark_frame
from .._methods import METHODS as REGISTRY
from .._methods import signature_defaults, warn_ignored_options
from .._utils._compat import Interval, RealNotInt, StrOptions, validate_params
from .._utils._progress import Progress
from .._utils._random import MAX_SEED, draw_seed
from .._utils._result import importance_result
from ._deciding._decisions import decision_of, tentative_advice, warn_if_probes_unseen
from ._deciding._probe_test import (
    CORRECTIONS,
    adjust_pvalues,
    critical_pvalue,
    round_critical_value,
    round_test,
)
from ._measuring._budget import measure_repeats, round_count
from ._measuring._probes import N_PROBES, draw_mirrors, probe_count, probe_names
from ._measuring._round_models import round_tree_count
from ._measuring._rounds import probe_rounds
from ._rows import warn_if_autocorrelated

#: the pyspark.ml estimators whose fitted models the engine reads
SPARK_TREE_ESTIMATORS = (
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "GBTClassifier",
    "GBTRegressor",
)
METHODS = ("permutation", "mdi")
#: the vector column of a round's features and probes
ROUND_FEATURES = "__features"
#: rows of y read in the data's order to look for dependent rows
DEPENDENCE_ROWS = 10_000


def _check_estimator(estimator):
    cls = type(estimator)
    spark = cls.__module__.startswith("pyspark.ml")
    if spark and cls.__name__ in SPARK_TREE_ESTIMATORS:
        return
    hint = "For data in memory and any scikit-learn model, use ImportanceSelector."
    if spark and cls.__name__ == "Pipeline":
        hint = (
            "For a pyspark.ml Pipeline, transform the rows with its fitted "
            "feature stages (indexers, assemblers) and pass its last stage, "
            "the tree estimator, with features= the columns it reads."
        )
    elif spark and cls.__name__.endswith("Model"):
        hint = (
            "A fitted model cannot be refitted with probes: pass the estimator "
            "it came from, or measure the model with "
            "distributed_permutation_importance."
        )
    raise TypeError(
        f"estimator is a {cls.__name__}; distributed_select_features fits a "
        "pyspark.ml tree estimator (not fitted): "
        f"{', '.join(SPARK_TREE_ESTIMATORS)}. {hint}"
    )


def _round_trees(estimator, round_trees):
    """Trees of each round's forest (``round_tree_count``), or None to fit
    the estimator as given: every estimator but a RandomForest."""
    forest = type(estimator).__name__.startswith("RandomForest")
    return round_tree_count(
        estimator.getNumTrees() if forest else None,
        round_trees,
        estimator=estimator,
        bagged="on Spark, a RandomForest",
    )


def _weight_column(estimator):
    """The estimator's ``weightCol`` when it is set, else None."""
    if estimator.hasParam("weightCol") and estimator.isSet("weightCol"):
        return estimator.getWeightCol()
    return None


def multi_level_categorical(metadata):
    """The names of the features that a vector column's ML attributes
    (``metadata``, as Spark stores it) mark as categorical with more than
    two levels (or an unknown number). Two-level ones (``binary``, or
    ``nominal`` with two values) are left out: a threshold between the two
    codes splits them as a category set does."""
    attributes = metadata.get("ml_attr", {}).get("attrs", {})
    names = []
    for attribute in attributes.get("nominal", []):
        levels = len(attribute["vals"]) if "vals" in attribute else None
        levels = attribute.get("num_vals", levels)
        if levels is None or levels > 2:
            names.append(str(attribute.get("name", attribute.get("idx"))))
    return names


def _warn_if_categorical(X, features):
    """Warn when a vector column's ML attributes mark features as
    categorical of more than two levels (``VectorIndexer``'s output): the
    rounds assemble the features and probes as plain numbers, so the
    rounds' models split those features as ordered codes, unlike the
    user's model."""
    if not isinstance(features, str) or features not in X.columns:
        return
    names = multi_level_categorical(X.schema[features].metadata)
    if not names:
        return
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    warnings.warn(
        f"{features!r} marks {len(names)} feature(s) as categorical with more "
        f"than two levels ({shown}); each round fits its model on the features "
        "and probes as plain numbers, so those features are split as ordered "
        "values there, not as categories as your model splits them. The "
        "selection is that of a model that orders the category codes.",
        UserWarning,
        stacklevel=4,
    )


def _warn_if_dependent(X, y):
    """Warn when the first rows of y, in the DataFrame's order, are strongly
    autocorrelated (as :class:`ImportanceSelector` does without a time-aware
    or group-aware cv)."""
    values = X.select(y).limit(DEPENDENCE_ROWS).toPandas()[y].to_numpy()
    warn_if_autocorrelated(
        values,
        where=f"over the first {len(values):,} rows in the DataFrame's order",
        advice="The probe test assumes independent rows: shuffled probes lose "
        "the dependence a noise feature keeps, and noise features beat them. "
        "distributed_select_features does not handle such rows: select on "
        "whole series or groups collected in memory with "
        "ImportanceSelector(cv=TimeSeriesSplit(...)) or a group-aware cv. If "
        "the rows are only sorted, shuffle them.",
        stacklevel=5,
    )


def _held_out_count(method, test_size, n_rows):
    """The rows each round holds out of its fit for a registry entry
    ``method`` that scores held-out rows (checked: some to fit on, some to
    measure on)."""
    n_held_out = int(round(test_size * n_rows))
    if method.measures_held_out and not 0 < n_held_out < n_rows:
        raise ValueError(
            f"test_size={test_size} holds out {n_held_out} of X's {n_rows} rows; "
            "a round needs rows to fit on and rows to measure on."
        )
    return n_held_out


def _warn_none_selected(n_features, alpha, correction, test):
    # stacklevel: the caller of distributed_select_features, past this
    # function and validate_params' wrapper
    advice = tentative_advice(
        test.decisions, test.passed, where="the result's decisions", cv=False
    )
    warnings.warn(
        f"none of the {n_features} features beat the probes at alpha={alpha} "
        f"(correction={correction!r}). The model may predict y no better "
        "than chance, or the rounds are too few: check result.importances."
        f"{advice}",
        UserWarning,
        stacklevel=4,
    )


class _SparkRounds:
    """The rounds of :func:`distributed_select_features` on the cluster:
    ``add`` appends a round's probes where the rows live, ``measure`` fits
    the estimator there and measures every column (the ``add`` and
    ``measure`` that ``probe_rounds`` takes); the attributes are what both
    read of the call (``method``: the method's registry entry)."""

    def __init__(
        self,
        *,
        estimator,
        method,
        labels,
        n_features,
        n_rows,
        first_ids,
        n_held_out,
        weight,
        n_trees,
        n_rounds,
        scoring,
        n_repeats,
        progress,
    ):
        self.estimator = estimator
        self.method = method
        self.labels = labels
        self.n_features = n_features
        self.n_rows = n_rows
        self.first_ids = first_ids
        self.n_held_out = n_held_out
        self.weight = weight
        self.n_trees = n_trees
        self.n_rounds = n_rounds
        self.scoring = scoring
        self.n_repeats = n_repeats
        self.progress = progress
        self.round_numbers = iter(range(1, n_rounds + 1))

    def add(self, table, groups, feature_names, kind, n_probes, rng, **_):
        """Append a round's probes to the rows where they live
        (``probe_rounds``' ``add``)."""
        mirrored = draw_mirrors(len(groups), n_probes, rng)
        permutation = GlobalPermutation(rng.randint(MAX_SEED + 1), self.n_rows)
        held_out = None
        if self.method.measures_held_out:
            held_out = (
                GlobalPermutation(rng.randint(MAX_SEED + 1), self.n_rows),
                self.n_held_out,
            )
        frame = table.with_probes(
            self.first_ids,
            permutation,
            -(-n_probes // self.n_features),
            mirrored,
            held_out,
        )
        probe_groups = [np.array([self.n_features + k]) for k in range(n_probes)]
        return (
            frame,
            probe_groups,
            probe_names(feature_names, self.labels, mirrored, kind),
            mirrored,
        )

    def measure(self, frame, all_groups, all_labels, round_seed, mirrored):
        """Fit a copy of the estimator on a round's rows and measure every
        column there (``probe_rounds``' ``measure``)."""
        from pyspark import StorageLevel
        from pyspark.ml.feature import VectorAssembler

        stage = f"round {next(self.round_numbers)} of {self.n_rounds}"
        self.progress(
            f"{stage}: fitting"
            + ("" if self.n_trees is None else f" {self.n_trees} of the forest's trees")
        )
        columns = [feature_column(j) for j in range(self.n_features)]
        columns += [probe_column(k) for k in range(len(mirrored))]
        assembled = (
            VectorAssembler(inputCols=columns, outputCol=ROUND_FEATURES)
            .transform(frame)
            .select(ROUND_FEATURES, LABEL, WEIGHT, HELD_OUT)
            .persist(StorageLevel.MEMORY_AND_DISK)
        )
        try:
            fitted = self.estimator.copy()
            fitted.setFeaturesCol(ROUND_FEATURES).setLabelCol(LABEL)
            if self.weight is not None:
                fitted.setWeightCol(WEIGHT)
            if fitted.hasParam("seed"):
                fitted.setSeed(int(round_seed))
            if self.n_trees is not None:
                fitted.setNumTrees(self.n_trees)
            train = (
                assembled.filter(~assembled[HELD_OUT])
                if self.method.measures_held_out
                else assembled
            )
            model = fitted.fit(train)
            if self.method.in_sample_impurity:
                result = importance_result(
                    model.featureImportances.toArray()[:, None],
                    all_labels,
                    method=self.method.name,
                )
            else:
                self.progress(f"{stage}: measuring")
                result = distributed_permutation_importance(
                    model,
                    assembled.filter(assembled[HELD_OUT]),
                    LABEL,
                    features=ROUND_FEATURES,
                    scoring=self.scoring,
                    n_repeats=self.n_repeats,
                    sample_weight=None if self.weight is None else WEIGHT,
                    random_state=int(round_seed),
                )
        finally:
            assembled.unpersist()
        return result, None


@validate_params(
    {
        "estimator": [object],
        "X": [object],
        "y": [str, None],
        "features": [list, tuple, str, None],
        "method": [StrOptions(set(METHODS))],
        "n_probes": N_PROBES,
        "n_rounds": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 1, None, closed="left"),
        ],
        "round_trees": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 1, None, closed="left"),
            None,
        ],
        "alpha": [Interval(RealNotInt, 0, 1, closed="neither")],
        "correction": [StrOptions(set(CORRECTIONS)), None],
        "keep_tentative": ["boolean"],
        "test_size": [Interval(RealNotInt, 0, 1, closed="neither")],
        "scoring": [str, None],
        "n_repeats": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 1, None, closed="left"),
        ],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def distributed_select_features(
    estimator,
    X,
    y=None,
    *,
    features=None,
    method="permutation",
    n_probes="auto",
    n_rounds="auto",
    round_trees="auto",
    alpha=0.01,
    correction="holm",
    keep_tentative=False,
    test_size=0.2,
    scoring=None,
    n_repeats=5,
    verbose=0,
    random_state=None,
):
    """Select the features a pyspark.ml tree model uses, on a Spark
    DataFrame, with :class:`ImportanceSelector`'s probe test.

    Each of ``n_rounds`` rounds appends shadow probes (copies of the
    features, each shuffled over all the rows by a global permutation, so a
    shadow keeps its feature's distribution and loses any link to y) to the
    rows where they live, fits a copy of ``estimator`` on them on the
    cluster, and measures the importance of every feature and probe there.
    Only one number per column and round reaches the driver, which runs the
    probe test of :class:`ImportanceSelector` (each feature standardized by
    its own shadows, rounds combined by a rule valid under any dependence,
    Holm's correction by default). The rows need not fit on the driver.

    Parameters
    ----------
    estimator : pyspark.ml estimator
        Not fitted: a DecisionTree, RandomForest or GBT classifier or
        regressor. Each round fits a copy, with its parameters, on a vector
        column of the features and probes (its ``featuresCol`` and
        ``labelCol`` are set for the round; a ``weightCol`` it has is used
        as the rows' weights; its ``seed`` changes with the round).
    X : pyspark.sql.DataFrame
        The rows, with the features and the target.
    y : str or None
        The target column; None: the estimator's ``labelCol``.
    features : list of str, str or None
        Numeric feature columns, or one vector column
        (``pyspark.ml.linalg.Vector``) holding every feature; None: the
        estimator's ``featuresCol``.
    method : {"permutation", "mdi"}, default="permutation"
        How a round measures importance. "permutation": the drop in score
        when a column is permuted over the round's held-out rows
        (:func:`distributed_permutation_importance`, exact tree engine),
        the model being fitted on the others. "mdi": the fitted model's
        ``featureImportances`` (impurity decrease on the training rows,
        normalized by Spark; no held-out rows), biased towards many-valued
        features, which the shadows share. On the benchmark's binary data
        sets (1,000 rows), "mdi" kept 1.00 of the informative columns and
        "permutation" 0.73 (its 200 held-out rows score by accuracy, a
        coarse measure on few rows), at half the time per round.
    n_probes : "auto" or int, default="auto"
        Probes per round, at least 2 (as for ImportanceSelector); "auto":
        one per feature, and at least 20 (ImportanceSelector's 50: its
        probes are fixed, these are drawn afresh in every round). Probe
        ``k`` copies a feature; every feature is copied once before any
        twice.
    n_rounds : "auto" or int, default="auto"
        Rounds of fresh probes, each one fit of the estimator. "auto": 10,
        as :class:`ImportanceSelector`'s "auto" for these methods.
    round_trees : "auto", int or None, default="auto"
        Trees of each round's fit when the estimator is a RandomForest, as
        :class:`ImportanceSelector` takes it: "auto" fits 30% of its
        ``numTrees``, rounded up, at least 30 (all of them below 30: Spark's
        default forest of 20 trees is fitted whole); None, all of them; an
        int, that many (a RandomForest only). A forest's importance averages
        independent trees, so the rounds share them out instead of each
        fitting all of them.
    alpha : float in (0, 1), default=0.01
        Level of the test: with Holm's correction, the probability of
        keeping any feature that is no better than the probes. Measured at
        ``alpha=0.05`` (``docs/bench_distributed_selection.rst``, Spark's
        default forest, 10 rounds, 60 data sets of 1,000 rows per regime):
        noise kept in 0/60 data sets of pure-noise regression (continuous
        and three-level columns) with either method, and in 0/60
        ("permutation") and 1/60 ("mdi") of binary data sets with three
        informative and five noise columns.
    correction : {"holm", "bonferroni", "fdr_bh"} or None, default="holm"
        Adjustment of the p-values for testing many features.
    keep_tentative : bool, default=False
        Select the "tentative" features (they beat the probes before the
        correction, not after) as well as the confirmed ones.
        :class:`ImportanceSelector`'s ``keep_tentative="cv"`` is not
        offered here: it cross-validates the model on sets of features,
        which on a cluster is a job of its own (pyspark.ml's
        ``CrossValidator`` on the columns this function selects with
        ``keep_tentative=True``).
    test_size : float in (0, 1), default=0.2
        Share of the rows held out of each round's fit for
        ``method="permutation"`` (drawn afresh in each round).
    scoring : str or None
        The score of ``method="permutation"``, as
        :func:`distributed_permutation_importance` takes it.
    n_repeats : "auto" or int, default=5
        Permutations per column in each round for ``method="permutation"``
        (each one more copy of the held-out rows exchanged). "auto": one,
        as :class:`ImportanceSelector`'s "auto" with probes. It is not the
        default here: this test compares each round with that round's own
        fresh probes and needs a feature to beat them in a third of the
        rounds, so a round's precision counts, and the default score,
        accuracy on the held-out rows, moves in coarse steps. On the
        benchmark's binary data sets one permutation per round kept 0.41 of
        the informative columns (31 data sets), five 0.77 on the same seeds,
        and noise in 1/31 pure-noise data sets against 0/31
        (``docs/bench_distributed_selection.rst``, issue 58).
    verbose : int, default=0
        Progress messages on stderr, one per stage, from the driver.
    random_state : int, RandomState instance or None
        Seed of the probes, the held-out rows, the permutations and the
        estimator's seed in each round.

    Returns
    -------
    result : Bunch
        feature_names : ndarray of str
            The features: the columns, or ``"<vector>[j]"`` for a vector
            column.
        support : ndarray of bool
            The selected features.
        selected : list of str
            Their names.
        decisions : ndarray of str
            "confirmed", "tentative" or "rejected", per feature, as
            :class:`ImportanceSelector`'s ``decisions_``.
        ranking, statistics, pvalues, pvalues_corrected : ndarray
            As the in-memory selector's ``ranking_``, and the score, raw and
            corrected p-value of each feature.
        importances : Bunch
            Every round's importance of every feature and probe (as
            :func:`permutation_importance` returns importances, one column
            per round), with ``is_probe`` and ``mirrors``.
        importance_history, probe_history : ndarray of shape (n_rounds, \
                n_features) and (n_rounds, n_probes)
            The features' and the probes' importance in each round, as
            :class:`ImportanceSelector`'s attributes of these names:
            ``ProbeDisplay(result.importance_history, result.probe_history,
            result.feature_names, result.decisions).plot()`` draws them.
        method, n_rounds, n_probes, alpha, correction, random_state, n_rows
            What ran; ``engine`` is "spark".
        n_repeats : int or None
            The permutations per column in each round; None for "mdi".
        round_trees : int or None
            The trees each round's forest fitted; None where the estimator
            was fitted as given (not a RandomForest).

    Notes
    -----
    Cost: per round, one exchange of ``1 + ceil(n_probes / n_features)``
    copies of the rows (the probes), one fit of the estimator on twice the
    columns (or more; a forest with ``round_trees`` of its trees), and for
    "permutation" the distributed permutation importance of the held-out
    rows. The rows must be independent (the probes are shuffled over all
    rows): the function warns when the first rows' targets are strongly
    autocorrelated. The user guide's "Data beyond
    one machine" has the measured error rates and costs.

    See Also
    --------
    ImportanceSelector : The same test on data in memory, any model.
    distributed_permutation_importance : The importance a round measures.

    Examples
    --------
    On a Spark DataFrame ``listings`` (not run here: it needs a Spark
    session):

    >>> from pyspark.ml.regression import RandomForestRegressor  # doctest: +SKIP
    >>> from sklearn_fimp import distributed_select_features
    >>> result = distributed_select_features(  # doctest: +SKIP
    ...     RandomForestRegressor(labelCol="price"),
    ...     listings,
    ...     features=["bedrooms", "bathrooms", "latitude", "longitude"],
    ...     random_state=0,
    ... )
    >>> result.selected  # doctest: +SKIP
    ['bedrooms', 'bathrooms', 'latitude', 'longitude']
    """
    progress = Progress("distributed_select_features", verbose)
    entry = REGISTRY[method]
    _check_call(
        estimator,
        X,
        entry,
        {"scoring": scoring, "n_repeats": n_repeats, "test_size": test_size},
    )
    y = estimator.getLabelCol() if y is None else y
    weight = _weight_column(estimator)
    n_trees = _round_trees(estimator, round_trees)
    n_rounds = round_count(n_rounds, entry)
    # "auto": one permutation in each round, as the selector's rounds
    n_repeats = measure_repeats(n_repeats, use_probes=True)
    features = estimator.getFeaturesCol() if features is None else features
    table = SparkTable(None, X, y, weight, features)
    n_features = table.n_features
    n_probes = probe_count(n_probes, n_features, fresh=True)
    _warn_if_categorical(X, features)
    _warn_if_dependent(X, y)
    progress(f"counting the rows ({table.n_partitions} partitions)")
    n_rows, first_ids = _row_ids(table)
    n_held_out = _held_out_count(entry, test_size, n_rows)
    groups = [np.array([j]) for j in range(n_features)]
    labels = table.feature_names

    rounds = _SparkRounds(
        estimator=estimator,
        method=entry,
        labels=labels,
        n_features=n_features,
        n_rows=n_rows,
        first_ids=first_ids,
        n_held_out=n_held_out,
        weight=weight,
        n_trees=n_trees,
        n_rounds=n_rounds,
        scoring=scoring,
        n_repeats=n_repeats,
        progress=progress,
    )

    seed = draw_seed(random_state)
    # fresh probes in each round: the test its benchmark page measured
    probes = (labels, labels, "shadow", n_probes, n_rounds, seed)
    result, _, history = probe_rounds(
        rounds.measure, table, groups, *probes, add=rounds.add, fixed=False
    )
    # warnings point at the caller's line, past validate_params' wrapper
    warn_if_probes_unseen(history, estimator, stacklevel=3)
    test = fresh_probe_decision(
        history,
        n_features,
        alpha=alpha,
        correction=correction,
        keep_tentative=keep_tentative,
    )
    passed = test.passed
    if not np.any(passed):
        _warn_none_selected(n_features, alpha, correction, test)
    progress("done")
    return Bunch(
        **_decided(test, labels),
        importances=result,
        importance_history=history.real,
        probe_history=history.probes,
        method=method,
        n_rounds=n_rounds,
        n_repeats=n_repeats if entry.repeats else None,
        round_trees=n_trees,
        n_probes=n_probes,
        alpha=alpha,
        correction=correction,
        random_state=seed,
        engine=table.engine,
        n_rows=n_rows,
    )


def _check_call(estimator, X, entry, options):
    """Check ``distributed_select_features``' estimator and data before any
    job: a pyspark.ml tree model, a Spark DataFrame; warn of ``options``
    (scoring, n_repeats, test_size) set away from their defaults that the
    method (``entry``) does not read."""
    names = tuple(options)
    warn_ignored_options(
        [entry],
        options,
        signature_defaults(distributed_select_features, names),
        owner="distributed_select_features",
    )
    _check_estimator(estimator)
    if not is_spark_frame(X):
        raise TypeError(
            f"X is a {type(X).__name__}; distributed_select_features takes a "
            "Spark DataFrame (pyspark.sql.DataFrame). For data in memory, use "
            "ImportanceSelector."
        )


def _decided(test, labels):
    """What the probe ``test`` decided of the features ``labels``, by the
    names of ``distributed_select_features``' result."""
    return dict(
        feature_names=labels,
        support=test.passed,
        selected=[str(name) for name in labels[test.passed]],
        decisions=test.decisions,
        ranking=test.ranking,
        statistics=test.scores,
        pvalues=test.pvalues,
        pvalues_corrected=test.corrected,
    )


def _row_ids(table):
    """``(n_rows, first_ids)``: the rows of the Spark ``table``, and the
    global index of each partition's first row (one count per partition)."""
    counts = table.counts()
    return int(counts.sum()), np.concatenate([[0], np.cumsum(counts)[:-1]])


def fresh_probe_decision(history, n_real, *, alpha, correction, keep_tentative):
    """The probe test of rounds with fresh probes (``round_test``: each
    round against its own probes, the rounds combined by quantile
    aggregation), as a ``_decisions.ProbeDecision``: the distributed
    selection's, whose rounds draw their probes afresh (the in-memory
    selector holds its probes fixed and tests the rounds' means)."""
    scores, pvalues, null = round_test(
        history.real, history.probes, history.owners, n_real
    )
    corrected = adjust_pvalues(pvalues, correction)
    critical = critical_pvalue(corrected, alpha, correction)
    n_rounds = history.real.shape[0]
    threshold = round_critical_value(null, critical, n_rounds) if len(null) else 0.0
    return decision_of(scores, pvalues, corrected, threshold, alpha, keep_tentative)
