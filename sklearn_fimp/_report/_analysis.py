"""What the report measures: the importance methods it offers and their
dispatch, the model, the held-out split and score, the importances,
ImportanceSelector and DependenceAnalyzer."""

import warnings

import numpy as np
from sklearn.utils import Bunch

from .._methods import HELD_OUT_ROWS, METHODS, MODEL_ONLY, REFITS, TRAINING_ROWS
from .._utils._frames import take_rows

# ----------------------------------------------------------------------------
# the importance methods: every method of the registry, dispatched from it

IMPORTANCE_METHODS = tuple(METHODS)
DEFAULT_METHODS = ("mdi", "permutation", "drop_column")
#: Permutations per column: on the held-out rows (fewer rows, so more
#: shuffles) and on the training rows, out of bag.
HELD_OUT_REPEATS = 10
OUT_OF_BAG_REPEATS = 5
METHOD_TITLES = {name: method.title for name, method in METHODS.items()}
#: What each method measures, as the report describes it.
METHOD_TEXT = {
    name: f"{method.title}: {method.description}"
    + (f" ({HELD_OUT_REPEATS} shuffles)" if method.rows == HELD_OUT_ROWS else "")
    for name, method in METHODS.items()
}


def measure_importances(model, X, y, train, test, methods, options, progress):
    """The importance results of each method, keyed by method name.

    ``model`` is the fitted Pipeline (encoder, forest), ``train`` and
    ``test`` the rows of the split; ``options`` gives ``n_jobs`` and
    ``random_state``. A method that reads the model's internals measures
    the forest on the encoded columns; the others measure the Pipeline on
    the raw ones.
    """
    results = {}
    for name in methods:
        method = METHODS[name]
        estimator, rows, cv = model, None, None
        if method.reads_model:
            estimator = model[-1]
        if method.rows == TRAINING_ROWS:
            rows = train
        elif method.rows == HELD_OUT_ROWS:
            rows = test
        elif method.rows == REFITS:
            cv = [(train, test)]
        X_rows = X if rows is None else take_rows(X, rows)
        y_rows = y if rows is None else y[rows]
        if method.reads_model and method.rows != MODEL_ONLY:
            X_rows = model[:-1].transform(X_rows)
        with progress.stage(f"{method.title} importance"):
            results[name] = method.compute(
                estimator,
                X_rows,
                y_rows,
                n_repeats=HELD_OUT_REPEATS
                if method.rows == HELD_OUT_ROWS
                else OUT_OF_BAG_REPEATS,
                cv=cv,
                n_jobs=options.n_jobs,
                random_state=options.random_state,
            )
    return results


# ----------------------------------------------------------------------------
# the model and its score


def make_model(task, n_estimators, n_jobs, random_state):
    """Ordinal codes for string columns, then a random forest, in a Pipeline."""
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder

    encode = ColumnTransformer(
        [
            (
                "categories",
                OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
                make_column_selector(dtype_exclude="number"),
            )
        ],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")
    forest = (
        RandomForestClassifier if task == "classification" else RandomForestRegressor
    )(n_estimators=n_estimators, n_jobs=n_jobs, random_state=random_state)
    return Pipeline([("encode", encode), ("forest", forest)])


def fit_model(data, options, progress):
    """The model fitted on the training rows of ``data``'s features plus a
    column of uniform random numbers, and its held-out score.

    Returns a Bunch with ``model``, ``X`` (the features with the random
    column), ``y``, ``train`` and ``test`` (row indices), ``random_name``
    (the random column's name), ``score`` and ``chance`` (the held-out
    score of always predicting the majority class or the mean).
    """
    random_name = _unused_name("random", set(data.X.columns))
    rng = np.random.RandomState(options.random_state)
    X = data.X.assign(**{random_name: rng.uniform(size=len(data.y))})
    y = data.y
    train, test = _split(y, data.task, options.random_state)
    model = make_model(
        data.task, options.n_estimators, options.n_jobs, options.random_state
    )
    with progress.stage("fitting the forest"):
        model.fit(take_rows(X, train), y[train])
    return Bunch(
        model=model,
        X=X,
        y=y,
        train=train,
        test=test,
        random_name=random_name,
        score=float(model.score(take_rows(X, test), y[test])),
        chance=_chance_score(y[train], y[test], data.task),
    )


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


def _chance_score(y_train, y_test, task):
    """Score of always predicting the training rows' majority class or mean."""
    if task == "classification":
        values, counts = np.unique(y_train, return_counts=True)
        return float(np.mean(y_test == values[np.argmax(counts)]))
    residual = np.sum((y_test - np.mean(y_train)) ** 2)
    total = np.sum((y_test - np.mean(y_test)) ** 2)
    return float(1 - residual / total) if total > 0 else 0.0


# ----------------------------------------------------------------------------
# selection and dependence


def select_features(data, options):
    """ImportanceSelector fitted on the encoded features (no refit).

    Returns ``(selector, notes)``: the notes are the messages of the warnings
    that ``min_features`` kept features the test did not, which the report
    shows; every other warning is passed on.
    """
    from .. import ImportanceSelector

    model = make_model(
        data.task, options.n_estimators, options.n_jobs, options.random_state
    )
    encoded = model[:-1].fit_transform(data.X)[list(data.X.columns)]
    selector = ImportanceSelector(
        model[-1], refit=False, n_jobs=options.n_jobs, random_state=options.random_state
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        selector.fit(encoded, data.y)
    for warning in caught:
        if not issubclass(warning.category, UserWarning) or "min_features" not in str(
            warning.message
        ):
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    notes = [str(w.message) for w in caught if "min_features" in str(w.message)]
    return selector, notes


def analyse_dependence(data, options):
    """DependenceAnalyzer fitted on the features; None for a single feature."""
    from .. import DependenceAnalyzer
    from .._importance._dependence import default_classifier, default_regressor

    if data.X.shape[1] < 2:
        return None
    estimators = {
        "regressor": default_regressor().set_params(n_estimators=options.n_estimators),
        "classifier": default_classifier().set_params(
            n_estimators=options.n_estimators
        ),
    }
    analyzer = DependenceAnalyzer(
        estimators, n_jobs=options.n_jobs, random_state=options.random_state
    )
    return analyzer.fit(data.X)
