"""What the report measures: the importance methods it offers and their
dispatch, the model, the held-out split and score, the importances,
ImportanceSelector and DependenceAnalyzer."""

import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch

from .._methods import HELD_OUT_ROWS, METHODS
from .._selection._measuring._measure import measured_rows
from .._utils._frames import take_rows

# ----------------------------------------------------------------------------
# the importance methods: every method of the registry, dispatched from it

IMPORTANCE_METHODS = tuple(METHODS)
DEFAULT_METHODS = ("mdi", "permutation", "drop_column")
#: The stages --skip can leave out (the model is always fitted).
STAGES = ("importances", "selector", "dependence", "conditional")
#: The selector's rounds of probes (ImportanceSelector's default), and the
#: trees of its forest in each by default (--selector-trees): 30, the
#: calibration benchmark's setting (docs/bench_calibration.rst) and
#: ImportanceSelector's own with ``estimator=None``.
SELECTOR_ROUNDS = 10
ROUND_TREES = 30
#: Seconds drop-column may take (estimated as one refit per feature).
TIME_BUDGET = 60.0
#: Features drawn in the charts and measured by the dependence step.
TOP = 20
#: Rows each tree is fitted on (a bootstrap sample of this size).
TREE_ROWS = 10000
#: Held-out rows from which permutation importance is precise enough that
#: out-of-bag permutation does not replace drop-column (see plan_methods).
PRECISE_HELD_OUT_ROWS = 10000
#: Numeric columns with at most this many distinct values are predicted as
#: classes by the dependence step and by conditional permutation's samplers
#: (their ``categorical_threshold``); string columns always are.
FEW_VALUES_AS_CLASSES = 10
#: Rows and trees of the dependence step's models.
DEPENDENCE_ROWS = 2000
DEPENDENCE_TREES = 30
#: Trees of each column's model in conditional permutation importance (its
#: forest sampler's), and the seconds one such tree takes per input column
#: and row times log2(rows), measured on a quiet 2-core machine: an estimate
#: of that step's cost, held against --time-budget.
CONDITIONAL_SAMPLER_TREES = 50
CONDITIONAL_SECONDS_PER_UNIT = 40e-9
#: Rows each tree of those models is grown on, at most.
CONDITIONAL_ROWS_PER_TREE = 2000
#: Permutations per column, at most: on the held-out rows (fewer rows, so
#: more shuffles) and on the training rows, out of bag.
HELD_OUT_REPEATS = 10
OUT_OF_BAG_REPEATS = 5
#: Rows shuffled per column over all repeats: with more rows than this,
#: fewer repeats (at least MIN_REPEATS, so that the spread is measured); the
#: mean over 50,000 shuffled rows moves little from one shuffle to the next.
ROW_SHUFFLES = 50000
MIN_REPEATS = 2
#: Share of the features a regression forest considers at each split (as R's
#: randomForest does); scikit-learn's default considers all of them, about
#: three times the work. Classification forests keep their default, the
#: square root of the number of features.
REGRESSION_MAX_FEATURES = 1 / 3
METHOD_TITLES = {name: method.title for name, method in METHODS.items()}
#: What each method measures, as the report describes it.
METHOD_TEXT = {
    name: f"{method.title}: {method.description}" for name, method in METHODS.items()
}


def n_repeats(rows, n_rows):
    """Shuffles of each column for a method that measures on ``rows``
    (a registry constant) of ``n_rows`` rows: the default, or fewer on
    many rows (``ROW_SHUFFLES``)."""
    default = HELD_OUT_REPEATS if rows == HELD_OUT_ROWS else OUT_OF_BAG_REPEATS
    return int(min(default, max(MIN_REPEATS, np.ceil(ROW_SHUFFLES / max(n_rows, 1)))))


def plan_methods(methods, fit_seconds, n_features, time_budget, n_held_out=0):
    """``(methods, notes, short)``: the methods to measure, notes for the
    page on any left out to save time, and a one-line form of them for the
    progress messages ("" when nothing changed).

    Drop-column refits the model once per feature: it is estimated to take
    ``fit_seconds * n_features``; above ``time_budget`` it is left out. It is
    replaced by out-of-bag permutation (which needs no refit) unless
    permutation importance is measured on at least
    ``PRECISE_HELD_OUT_ROWS`` held-out rows (``n_held_out``): there, the
    held-out measure is precise and the out-of-bag one would measure the
    same thing again at the cost of shuffling every training row.
    """
    estimate = fit_seconds * n_features
    if "drop_column" not in methods or estimate <= time_budget:
        return list(methods), [], ""
    planned = [m for m in methods if m != "drop_column"]
    cost = (
        f"Drop-column importance refits the model once per feature: about "
        f"{estimate:.0f} s here ({n_features} features x {fit_seconds:.1f} s), "
        f"more than --time-budget {time_budget:g} s. "
    )
    if "permutation" in planned and n_held_out >= PRECISE_HELD_OUT_ROWS:
        note = cost + (
            f"It was left out: permutation importance on the {n_held_out} "
            "held-out rows measures what the model loses without each feature, "
            "without a refit. Raise --time-budget to measure drop-column."
        )
        return planned, [note], "drop-column importance over --time-budget: left out"
    if "oob_permutation" not in planned:
        planned.append("oob_permutation")
    note = cost + (
        "Out-of-bag permutation importance, which needs no refit, was measured "
        "instead; raise --time-budget to measure drop-column."
    )
    short = "drop-column importance over --time-budget: out-of-bag permutation instead"
    return planned, [note], short


def measure_importances(inputs, methods, options, progress):
    """The importance results of each method, keyed by method name.

    ``inputs`` is the prepared and fitted Bunch of :func:`prepare_inputs`
    and :func:`fit_model`; ``options`` gives ``n_jobs``, ``random_state``
    and ``scoring``. Every method measures the Pipeline (per column of X,
    through the encoder), but out-of-bag permutation, which measures the
    forest on the coded columns (the report's one coding, so permuting a
    code permutes the column).
    """
    results = {}
    for name in methods:
        method = METHODS[name]
        # The Pipeline, as a user measures it: its importances per column of
        # X, the permutations on the engine through the encoder. Out-of-bag
        # permutation reads the forest's bags, which the Pipeline hides.
        forest_only = name == "oob_permutation"
        estimator = inputs.model[-1] if forest_only else inputs.model
        X = forest_columns(inputs) if forest_only and method.reads_rows else inputs.X
        rows, cv = measured_rows(method, inputs.train, inputs.test)
        X_rows = X if rows is None else take_rows(X, rows)
        y_rows = inputs.y if rows is None else inputs.y[rows]
        repeats = n_repeats(method.rows, len(y_rows))
        with progress.stage(f"{method.title} importance", inner=True):
            results[name] = method.compute(
                estimator,
                X_rows,
                y_rows,
                n_repeats=repeats,
                cv=cv,
                scoring=options.scoring,
                n_jobs=options.n_jobs,
                verbose=int(bool(progress.verbose)),
                random_state=options.random_state,
            )
    return results


def has_spread(name, result):
    """Whether a method's standard deviation measures a spread: not for
    drop-column on one split (one refit per feature)."""
    importances = result.get("importances")
    return not (
        name == "drop_column" and importances is not None and importances.shape[1] < 2
    )


def top_features(results, random_name, n):
    """The ``n`` features of best mean rank across methods (the random
    column left out), most important first."""
    first = next(iter(results.values()))
    names = [str(f) for f in first.feature_names if str(f) != random_name]
    ranks = np.zeros(len(names))
    for result in results.values():
        values = dict(zip(map(str, result.feature_names), result.importances_mean))
        means = np.array([values[f] for f in names])
        ranks += np.argsort(np.argsort(-means, kind="stable"), kind="stable")
    order = np.argsort(ranks, kind="stable")
    return [names[i] for i in order[:n]]


# ----------------------------------------------------------------------------
# the model and its score


class _IfPresent:
    """Selects one column of a frame when the frame has it (none else): the
    report's Pipeline is refitted without a column by drop-column
    importance, and a column it no longer has must not be asked for."""

    def __init__(self, column):
        self.column = column

    def __call__(self, X):
        return [self.column] if self.column in X.columns else []


def make_encoder(columns=(), categories=None):
    """Ordinal codes of the string columns ``columns`` (``categories``: the
    sorted categories of each, or None to learn them when fitted; missing
    values stay missing), every other column passed through, in a
    pandas-output ColumnTransformer. A column missing from the frame is
    skipped, so the encoder also fits a frame with a column dropped."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OrdinalEncoder

    columns = list(columns)
    if categories is None:
        categories = ["auto"] * len(columns)
    return ColumnTransformer(
        [
            (
                f"categories_{k}",
                OrdinalEncoder(
                    categories=known if isinstance(known, str) else [known],
                    handle_unknown="use_encoded_value",
                    unknown_value=-1,
                ),
                _IfPresent(column),
            )
            for k, (column, known) in enumerate(zip(columns, categories))
        ],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")


def make_model(
    task,
    n_estimators,
    n_jobs,
    random_state,
    n_rows=0,
    tree_rows=None,
    encoder=None,
):
    """The report's coding of string columns (``encoder``, see
    :func:`prepare_inputs`; None passes every column through, for numeric
    data), then a random forest, in a Pipeline.

    With more than ``tree_rows`` training rows, each tree is fitted on a
    bootstrap sample of ``tree_rows`` rows (``max_samples``). A regression
    forest considers ``REGRESSION_MAX_FEATURES`` of the features at each
    split.
    """
    from sklearn.pipeline import Pipeline

    if encoder is None:
        encoder = make_encoder()
    return Pipeline(
        [
            ("encode", encoder),
            (
                "forest",
                make_forest(
                    task, n_estimators, n_jobs, random_state, n_rows, tree_rows
                ),
            ),
        ]
    )


def make_forest(task, n_estimators, n_jobs, random_state, n_rows=0, tree_rows=None):
    """The report's random forest (see :func:`make_model`)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    if task == "classification":
        forest = RandomForestClassifier()
    else:
        forest = RandomForestRegressor(max_features=REGRESSION_MAX_FEATURES)
    return forest.set_params(
        n_estimators=n_estimators,
        max_samples=tree_rows if tree_rows and n_rows > tree_rows else None,
        n_jobs=n_jobs,
        random_state=random_state,
    )


def prepare_inputs(data, options):
    """Split and encode once, for every stage of the report.

    Returns a Bunch with ``X`` (the features plus a column of uniform
    random numbers named ``random_name``), ``y``, ``train`` and ``test``
    (row indices of the held-out split), ``categorical`` (the string
    columns), ``encoder`` (the one coding: each string column's categories
    read once from every row, in sorted order, so that every stage, the
    model's Pipeline, the selector, the dependence step and conditional
    permutation, sees the same codes) and ``coded`` (X coded by it). The caller's data
    is not modified.
    """
    random_name = _unused_name("random", set(data.X.columns))
    rng = np.random.RandomState(options.random_state)
    X = data.X.assign(**{random_name: rng.uniform(size=len(data.y))})
    categorical = [c for c in X.columns if c in set(data.categorical)]
    learnt = make_encoder(categorical).fit(X)
    categories = [
        learnt.named_transformers_[f"categories_{k}"].categories_[0]
        for k in range(len(categorical))
    ]
    encoder = make_encoder(categorical, categories)
    coded = learnt.transform(X)[list(X.columns)]
    train, test = _split(data.y, data.task, options.random_state)
    return Bunch(
        X=X,
        y=data.y,
        task=data.task,
        train=train,
        test=test,
        random_name=random_name,
        categorical=categorical,
        encoder=encoder,
        coded=coded,
    )


def forest_columns(inputs):
    """The coded columns in the order the fitted model's forest reads them
    (the encoder puts the string columns first)."""
    return inputs.coded[list(inputs.model[-1].feature_names_in_)]


def fit_model(inputs, options, progress):
    """The model fitted on the training rows of the prepared ``inputs``
    (the report's coding, then a forest of --n-estimators trees), and its
    held-out score.

    Returns ``inputs`` with ``model``, ``score``, ``chance`` (the held-out
    score of always predicting the majority class or the mean) and
    ``fit_seconds`` added.
    """
    model = make_model(
        inputs.task,
        options.n_estimators,
        options.n_jobs,
        options.random_state,
        len(inputs.train),
        options.tree_rows,
        encoder=clone(inputs.encoder),
    )
    X, y, train, test = inputs.X, inputs.y, inputs.train, inputs.test
    with progress.stage("fitting the forest"):
        started = time.perf_counter()
        model.fit(take_rows(X, train), y[train])
        fit_seconds = time.perf_counter() - started
    score, chance = _scores(model, X, y, train, test, inputs.task, options.scoring)
    inputs.update(model=model, score=score, chance=chance, fit_seconds=fit_seconds)
    return inputs


def _scores(model, X, y, train, test, task, scoring):
    """The model's held-out score and that of always predicting the
    training rows' majority class or mean, with ``scoring`` (None: accuracy
    or R²)."""
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.metrics import get_scorer

    scorer = get_scorer(scoring or ("accuracy" if task == "classification" else "r2"))
    X_test = take_rows(X, test)
    dummy = (
        DummyClassifier(strategy="prior")
        if task == "classification"
        else DummyRegressor(strategy="mean")
    ).fit(take_rows(X, train), y[train])
    with warnings.catch_warnings():
        # the baseline's constant predictions make some scorers warn
        warnings.simplefilter("ignore")
        chance = float(scorer(dummy, X_test, y[test]))
    return float(scorer(model, X_test, y[test])), chance


def _unused_name(base, taken):
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


def _split(y, task, random_state):
    """Training and held-out rows (a quarter), stratified when possible."""
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(y))
    stratify = None
    if task == "classification":
        _, counts = np.unique(y, return_counts=True)
        n_test = int(np.ceil(0.25 * len(y)))
        if counts.min() >= 2 and n_test >= len(counts):
            stratify = y
    return train_test_split(
        rows, test_size=0.25, stratify=stratify, random_state=random_state
    )


# ----------------------------------------------------------------------------
# selection and dependence


def select_features(inputs, options, verbose=0):
    """ImportanceSelector fitted on the coded features (the random column
    left out; no refit), with a forest of --selector-trees trees in each of
    its ``SELECTOR_ROUNDS`` rounds.

    Returns ``(selector, notes)``: the notes are the messages of the warnings
    that ``min_features`` kept features the test did not, which the report
    shows; every other warning is passed on.
    """
    from .. import ImportanceSelector

    forest = make_forest(
        inputs.task,
        options.selector_trees,
        options.n_jobs,
        options.random_state,
        len(inputs.y),
        options.tree_rows,
    )
    selector = ImportanceSelector(
        forest,
        n_rounds=SELECTOR_ROUNDS,
        round_trees=None,  # --selector-trees trees in every round
        refit=False,
        n_jobs=options.n_jobs,
        verbose=int(bool(verbose)),
        random_state=options.random_state,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        selector.fit(inputs.coded.drop(columns=[inputs.random_name]), inputs.y)
    for warning in caught:
        if not issubclass(warning.category, UserWarning) or "min_features" not in str(
            warning.message
        ):
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    notes = [str(w.message) for w in caught if "min_features" in str(w.message)]
    return selector, notes


def as_categories(inputs, columns):
    """The coded ``columns``, the string columns' codes held as ordered
    categories (the same codes), so that the dependence step and
    conditional permutation predict them as categories, with a classifier,
    whatever their number of levels."""
    import pandas as pd

    frame = inputs.coded[list(columns)].copy()
    for column in frame.columns:
        if column in inputs.categorical:
            codes = frame[column]
            levels = np.arange(int(np.nanmax(codes, initial=-1)) + 1, dtype=float)
            frame[column] = pd.Categorical(codes, categories=levels, ordered=True)
    return frame


def analyse_dependence(inputs, features, options, verbose=0):
    """DependenceAnalyzer fitted on ``features`` (the most important ones)
    of a sample of ``--dependence-rows`` rows, with forests of
    ``--dependence-trees`` trees, on the report's coding; None for fewer
    than two features."""
    from .. import DependenceAnalyzer
    from .._importance._dependence import default_classifier, default_regressor

    if len(features) < 2:
        return None
    trees = options.dependence_trees
    estimators = {
        "regressor": default_regressor().set_params(n_estimators=trees),
        "classifier": default_classifier().set_params(n_estimators=trees),
    }
    analyzer = DependenceAnalyzer(
        estimators,
        max_samples=options.dependence_rows,
        categorical_threshold=FEW_VALUES_AS_CLASSES,
        n_jobs=options.n_jobs,
        verbose=int(bool(verbose)),
        random_state=options.random_state,
    )
    return analyzer.fit(as_categories(inputs, features))


# ----------------------------------------------------------------------------
# ordinary against conditional permutation importance


def plan_conditional(n_features, n_columns, n_held_out, options):
    """``(n_rows, seconds, note)``: the held-out rows conditional permutation
    importance of ``n_features`` features (of a model of ``n_columns``
    columns) is measured on, at most ``--dependence-rows``; the estimated
    seconds of its column models (one forest per feature, each predicting
    the feature from every other column); and a note for the page when that
    estimate exceeds ``--time-budget`` (then nothing is measured), else
    None."""
    n_rows = min(n_held_out, options.dependence_rows)
    rows_per_tree = max(2, min(n_rows, CONDITIONAL_ROWS_PER_TREE))
    seconds = (
        n_features
        * CONDITIONAL_SAMPLER_TREES
        * max(n_columns - 1, 1)
        * rows_per_tree
        * np.log2(rows_per_tree)
        * CONDITIONAL_SECONDS_PER_UNIT
    )
    if seconds <= options.time_budget:
        return n_rows, seconds, None
    note = (
        f"Left out: conditional permutation importance fits one forest per "
        f"feature, predicting it from the {n_columns - 1} other columns; for the "
        f"{n_features} features to compare that would take about {seconds:.0f} s, "
        f"more than --time-budget {options.time_budget:g} s. Raise --time-budget "
        "or lower --top to measure it."
    )
    return n_rows, seconds, note


def incomplete_columns(inputs):
    """The columns with missing values in the held-out rows: conditional
    permutation importance models each column from the others and needs
    complete ones."""
    X_test = take_rows(inputs.coded, inputs.test)
    return [str(c) for c in X_test.columns if X_test[c].isna().any()]


def measure_conditional(inputs, features, n_rows, options, verbose=0):
    """Conditional permutation importance of ``features`` and of the random
    column, on at most ``n_rows`` of the held-out rows (drawn once), of the
    forest on the report's coded columns (string columns drawn as
    categories, as the dependence step predicts them), through the registry
    entry, with as many draws as ordinary permutation makes on that many
    rows."""
    method = METHODS["conditional_permutation"]
    columns = inputs.model[-1].feature_names_in_
    X_test = take_rows(as_categories(inputs, columns), inputs.test)
    y_test = inputs.y[inputs.test]
    return method.compute(
        inputs.model[-1],
        X_test,
        y_test,
        groups=[*features, inputs.random_name],
        ungrouped="drop",
        categorical_threshold=FEW_VALUES_AS_CLASSES,
        n_repeats=n_repeats(HELD_OUT_ROWS, n_rows),
        max_samples=n_rows if n_rows < len(y_test) else None,
        scoring=options.scoring,
        n_jobs=options.n_jobs,
        verbose=int(bool(verbose)),
        random_state=options.random_state,
    )
