"""Feature dependence: how well each feature is predicted by the others."""

import numbers
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import is_classifier, is_regressor
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.utils import Bunch
from sklearn.utils.random import sample_without_replacement

from .._utils._compat import (
    HasMethods,
    Interval,
    RealNotInt,
    add_note,
    validate_params,
)
from .._utils._frames import check_table, is_pandas, is_polars
from .._utils._models import supports_oob
from .._utils._progress import Progress
from .._utils._random import MAX_SEED, draw_seed, with_shared_seed
from .._utils._validation import explain_input_errors
from ._oob_permutation import _oob_permutation_importance

#: Trees of the default forests. Out-of-bag R² and forest-level permutation
#: importances vary between seeds with the trees that score each row out of
#: bag: 100 trees grown on 30% bootstrap samples (below) give every row about
#: 74 of them, where rfpimp's 50 trees on full bootstrap samples give 18.
DEFAULT_N_ESTIMATORS = 100
#: Rows of the default forests' leaves: a little smoothing keeps the OOB score
#: of unpredictable features near 0 (single-row leaves push it further below)
#: and shortens the fits, at no visible cost for predictable ones.
DEFAULT_MIN_SAMPLES_LEAF = 5
#: Every split of the default forests considers every input. Dependence asks
#: how well the other features *can* predict a feature; with fewer
#: candidates per split (p/3, sqrt(p)), a forest given a few inputs misses
#: the one that explains the target in most splits, and an exact copy of a
#: column scores 0.9 instead of 1.
DEFAULT_MAX_FEATURES = 1.0
#: Size of each tree's bootstrap sample, as a share of the rows: 30% draws
#: hold about 26% distinct rows (a full bootstrap, 63%), so a tree is grown
#: in about 40% of the time, and each row is out of bag for 74% of the trees
#: instead of 37%. With the leaves of 5 rows, features that are hard to
#: predict score lower than with rfpimp's fully grown trees (by up to 0.17
#: on breast cancer, 0.15 of it from the leaves); docs/bench_dependence.rst,
#: "what each change buys".
DEFAULT_MAX_SAMPLES = 0.3


def _default_forest(forest):
    return forest(
        n_estimators=DEFAULT_N_ESTIMATORS,
        min_samples_leaf=DEFAULT_MIN_SAMPLES_LEAF,
        max_features=DEFAULT_MAX_FEATURES,
        max_samples=DEFAULT_MAX_SAMPLES,
    )


def default_regressor():
    """The forest that predicts numeric features by default."""
    return _default_forest(RandomForestRegressor)


def default_classifier():
    """The forest that predicts categorical and few-valued features by
    default."""
    return _default_forest(RandomForestClassifier)


REGRESSION, CLASSIFICATION, CONSTANT = "regression", "classification", "constant"

MAX_SAMPLES_CONSTRAINT = [
    Interval(numbers.Integral, 2, None, closed="left"),
    Interval(RealNotInt, 0, 1, closed="right"),
    None,
]
ESTIMATOR_CONSTRAINT = [None, HasMethods(["fit"]), dict]
ESTIMATOR_KEYS = ("regressor", "classifier")


# ----------------------------------------------------------------------------
# Input: every column as float64 codes, without touching the caller's table


class EncodedFeatures(NamedTuple):
    """The caller's features as one float64 array (a new array).

    ``categorical[j]`` is True for string and categorical columns, whose
    values are replaced by category codes (0, 1, ...; missing: NaN).
    """

    values: np.ndarray
    categorical: np.ndarray
    names: np.ndarray


def _string_codes(values, name):
    """Category codes of an object column of strings (missing: NaN).

    Raises a TypeError naming the column when a value is neither a string
    nor missing.
    """
    values = np.asarray(values, dtype=object)
    missing = np.array(
        [v is None or (isinstance(v, float) and np.isnan(v)) for v in values],
        dtype=bool,
    )
    try:
        import pandas as pd

        missing |= np.asarray(pd.isna(values), dtype=bool)
    except ImportError:  # pragma: no cover - pandas is optional
        pass
    present = values[~missing]
    strange = [v for v in present if not isinstance(v, str)]
    if strange:
        try:
            float(strange[0])
            reason = "it mixes strings and numbers"
        except (TypeError, ValueError) as exc:
            reason = str(exc)
        raise TypeError(
            f"column {name!r} holds a value of type {type(strange[0]).__name__} "
            f"({reason}); pass numbers, or strings for categories."
        )
    codes = np.full(len(values), np.nan)
    _, inverse = np.unique(present.astype(str), return_inverse=True)
    codes[~missing] = inverse
    return codes


def _object_column(values, name):
    """Numbers if the column of Python objects converts to float, else
    category codes."""
    try:
        return np.asarray(values, dtype=np.float64), False
    except TypeError as exc:
        if not any(isinstance(v, str) for v in np.asarray(values, dtype=object)):
            raise TypeError(
                f"column {name!r} cannot be read as numbers or strings: {exc}"
            ) from exc
    except ValueError:
        pass
    return _string_codes(values, name), True


def _unsupported(dtype, name=None):
    what = "X" if name is None else f"column {name!r}"
    return TypeError(
        f"{what} has dtype {dtype}, which feature dependence cannot predict or "
        "use; convert it to numbers (or to strings or a categorical dtype for "
        "categories) before passing it."
    )


def _pandas_column(column, name):
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy().astype(np.float64)
        if not dtype.ordered:
            # the same codes as the column's values as strings would get
            rank = np.argsort(np.argsort(dtype.categories.astype(str)))
            codes[codes >= 0] = rank[codes[codes >= 0].astype(np.intp)]
        codes[codes < 0] = np.nan
        return codes, True
    if pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype)
        and not pd.api.types.is_complex_dtype(dtype)
    ):
        return column.to_numpy(dtype=np.float64, na_value=np.nan), False
    if pd.api.types.is_object_dtype(dtype):
        return _object_column(column.to_numpy(dtype=object, na_value=None), name)
    if pd.api.types.is_string_dtype(dtype):
        values = column.to_numpy(dtype=object, na_value=None)
        return _string_codes(values, name), True
    raise _unsupported(dtype, name)


def _polars_column(column, name):
    import polars as pl

    dtype = column.dtype
    if dtype.is_numeric() or dtype == pl.Boolean:
        if dtype.is_float() or dtype.is_integer() or dtype == pl.Boolean:
            return column.cast(pl.Float64).fill_null(np.nan).to_numpy(), False
        raise _unsupported(dtype, name)
    if isinstance(dtype, pl.Enum):
        # the order the user gave the categories
        codes = column.to_physical().cast(pl.Float64).fill_null(np.nan)
        return codes.to_numpy(), True
    if dtype in (pl.String, pl.Categorical):
        # Categorical's physical codes depend on a string cache; strings
        # give the same codes in every session
        return _string_codes(column.cast(pl.String).to_numpy(), name), True
    raise _unsupported(dtype, name)


def encode_features(X):
    """Read ``X`` (array, pandas or polars) into :class:`EncodedFeatures`.

    The caller's object is only read. String and categorical columns become
    category codes; missing values become NaN; infinite values and columns
    of other types (dates, complex numbers ...) are rejected with an error
    naming the column.
    """
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(
            "X is a sparse matrix; feature dependence predicts each column from "
            "the others and needs dense columns. Convert it with X.toarray()."
        )
    X, names = check_table(X)
    n_rows, n_features = X.shape
    if n_rows < 2:
        raise ValueError(
            f"X has {n_rows} sample(s); feature dependence needs at least 2 "
            "samples (n_samples=1 leaves no out-of-bag rows)."
        )
    values = np.empty((n_rows, n_features))
    categorical = np.zeros(n_features, dtype=bool)
    if is_pandas(X):
        for j in range(n_features):
            values[:, j], categorical[j] = _pandas_column(X.iloc[:, j], names[j])
    elif is_polars(X):
        for j, column in enumerate(X.get_columns()):
            values[:, j], categorical[j] = _polars_column(column, names[j])
    elif X.dtype == object:
        for j in range(n_features):
            values[:, j], categorical[j] = _object_column(X[:, j], names[j])
    elif X.dtype.kind in "US":
        for j in range(n_features):
            values[:, j] = _string_codes(X[:, j].astype(str).astype(object), names[j])
        categorical[:] = True
    elif X.dtype.kind in "biuf":
        values[:] = X
    else:
        raise _unsupported(X.dtype)
    infinite = np.isinf(values).any(axis=0)
    if infinite.any():
        raise ValueError(
            f"Input X contains infinity in column {names[np.argmax(infinite)]!r}; "
            "replace it with a finite value or NaN (missing)."
        )
    return EncodedFeatures(values, categorical, names)


def target_kinds(encoded, categorical_threshold):
    """How each feature is predicted: regression, classification or constant.

    A feature with at most one distinct observed value carries no
    information and is "constant"; string and categorical columns, and
    numeric ones with at most ``categorical_threshold`` distinct values, are
    predicted by a classifier; the rest by a regressor.
    """
    kinds = []
    for j in range(encoded.values.shape[1]):
        column = encoded.values[:, j]
        n_distinct = len(np.unique(column[~np.isnan(column)]))
        if n_distinct <= 1:
            kinds.append(CONSTANT)
        elif encoded.categorical[j] or n_distinct <= categorical_threshold:
            kinds.append(CLASSIFICATION)
        else:
            kinds.append(REGRESSION)
    return np.asarray(kinds, dtype=object)


def sample_rows(seed, n_rows, max_samples):
    """Sorted rows the dependence models use (None: all of them)."""
    if max_samples is None:
        return None
    if isinstance(max_samples, numbers.Integral):
        n_kept = min(int(max_samples), n_rows)
    else:
        n_kept = max(2, int(max_samples * n_rows))
    if n_kept >= n_rows:
        return None
    rows = sample_without_replacement(
        n_rows, n_kept, random_state=np.random.RandomState(seed)
    )
    return np.sort(rows)


# ----------------------------------------------------------------------------
# One dependence model


def resolve_estimators(estimator):
    """The regressor and classifier that predict the features.

    ``estimator`` is None (both defaults), one bagged ensemble (used for the
    features of its kind; the default for the others) or a dict with keys
    "regressor" and/or "classifier".
    """
    if estimator is None:
        chosen = {}
    elif isinstance(estimator, dict):
        unknown = sorted(set(map(str, estimator)) - set(ESTIMATOR_KEYS))
        if unknown:
            raise ValueError(
                f"estimator: unknown key(s) {unknown}; a dict estimator takes the "
                "keys 'regressor' and 'classifier'."
            )
        chosen = dict(estimator)
    elif is_classifier(estimator):
        chosen = {"classifier": estimator}
    elif is_regressor(estimator):
        chosen = {"regressor": estimator}
    else:
        raise ValueError(
            f"estimator={type(estimator).__name__}(...) is neither a regressor nor "
            "a classifier; pass a RandomForest*, ExtraTrees* or Bagging* model "
            "with bootstrap=True, or a dict {'regressor': ..., 'classifier': ...}."
        )
    for key, check in (("regressor", is_regressor), ("classifier", is_classifier)):
        model = chosen.get(key)
        if model is None:
            continue
        if not check(model):
            raise ValueError(
                f"estimator['{key}'] is a {type(model).__name__}, which is not a {key}."
            )
        if not supports_oob(model):
            raise ValueError(
                f"estimator={type(model).__name__}(...) has no out-of-bag rows: "
                "dependence is an out-of-bag score, so pass a RandomForest*, "
                "ExtraTrees* or Bagging* model with bootstrap=True."
            )
    regressor = chosen.get("regressor")
    classifier = chosen.get("classifier")
    return {
        REGRESSION: default_regressor() if regressor is None else regressor,
        CLASSIFICATION: default_classifier() if classifier is None else classifier,
    }


def chance_corrected_accuracy(estimator, X, y):
    """Accuracy rescaled so that 0 is always predicting the most frequent
    class of ``y`` and 1 is predicting every row right:
    ``(accuracy - p) / (1 - p)`` with ``p`` the share of the most frequent
    class. It is R² with the 0-1 loss in place of the squared error, so
    dependences of numeric and categorical features share one scale."""
    accuracy = float(np.mean(estimator.predict(X) == y))
    _, counts = np.unique(y, return_counts=True)
    chance = counts.max() / len(y)
    if chance >= 1:
        return 0.0
    return (accuracy - chance) / (1 - chance)


class Measurement(NamedTuple):
    """The dependence of one feature and the importances of its inputs."""

    feature: int
    dependence: float
    inputs: np.ndarray
    importances: np.ndarray
    fitted: bool


def measure_feature(values, feature, inputs, kind, estimator, seed, n_repeats):
    """Fit the model of ``feature`` from ``inputs``; score it out of bag.

    Rows where the feature is missing are left out of its model. A constant
    feature has dependence 1 (it is predicted without any input); a feature
    with no inputs has dependence 0. Neither fits a model.
    """
    inputs = np.asarray(inputs, dtype=np.intp)
    no_importance = np.zeros(len(inputs))
    if kind == CONSTANT:
        return Measurement(feature, 1.0, inputs, no_importance, False)
    if not len(inputs):
        return Measurement(feature, 0.0, inputs, no_importance, False)
    target = values[:, feature]
    observed = ~np.isnan(target)
    if observed.all():
        X_inputs, y = values[:, inputs], target
    else:
        X_inputs, y = values[np.ix_(observed, inputs)], target[observed]
    if kind == CLASSIFICATION:
        # a few-valued numeric feature may hold fractions, which classifiers
        # reject as continuous labels: predict its value codes instead
        y = np.unique(y, return_inverse=True)[1]
    model = with_shared_seed(estimator, seed)
    try:
        model.fit(X_inputs, y)
    except Exception as exc:
        add_note(
            exc,
            f"feature dependence: raised by the fit predicting feature {feature} "
            f"from {len(inputs)} others.",
        )
        raise
    columns = np.arange(X_inputs.shape[1])
    result = _oob_permutation_importance(
        model,
        X_inputs,
        y,
        labels=[f"x{j}" for j in columns],
        groups=[np.array([j]) for j in columns],
        seed=seed,
        n_repeats=n_repeats,
        scoring=chance_corrected_accuracy if kind == CLASSIFICATION else None,
    )
    return Measurement(
        feature,
        float(result.baseline_score),
        inputs,
        result.importances_mean,
        True,
    )


def measure_features(
    values, features, inputs_of, kinds, estimators, seeds, *, n_jobs, n_repeats, verbose
):
    """Measure several features in parallel (joblib); results in order.

    ``inputs_of(j)`` gives the columns that predict feature ``j``; each
    feature uses its own seed, so the results do not depend on ``n_jobs``.
    """
    return Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(measure_feature)(
            values,
            j,
            inputs_of(j),
            kinds[j],
            estimators.get(kinds[j]),
            seeds[j],
            n_repeats,
        )
        for j in features
    )


def feature_seeds(seed, n_features):
    """One seed for the row sample and one per feature (its forest and its
    permutations), drawn before any dispatch: results do not depend on
    ``n_jobs`` or on the order in which features are measured."""
    seeds = np.random.RandomState(seed).randint(MAX_SEED + 1, size=n_features + 1)
    return int(seeds[0]), [int(s) for s in seeds[1:]]


class Prepared(NamedTuple):
    """Encoded rows and what every model fit needs."""

    names: np.ndarray
    values: np.ndarray
    kinds: np.ndarray
    estimators: dict
    seed: int
    seeds: list


def prepare(X, estimator, max_samples, categorical_threshold, random_state):
    """Everything a dependence computation needs before its first fit."""
    encoded = encode_features(X)
    estimators = resolve_estimators(estimator)
    seed = draw_seed(random_state)
    rows_seed, seeds = feature_seeds(seed, encoded.values.shape[1])
    rows = sample_rows(rows_seed, encoded.values.shape[0], max_samples)
    values = encoded.values if rows is None else encoded.values[rows]
    kinds = target_kinds(encoded._replace(values=values), categorical_threshold)
    return Prepared(encoded.names, values, kinds, estimators, seed, seeds)


def dependence_matrix(measurements, n_features):
    """Importances of every measured feature's inputs as rows of a square
    matrix; entries for features that were not inputs are NaN."""
    matrix = np.full((n_features, n_features), np.nan)
    for m in measurements:
        matrix[m.feature, m.inputs] = m.importances
    return matrix


# ----------------------------------------------------------------------------
# Public API

COMMON_PARAMS = {
    "estimator": ESTIMATOR_CONSTRAINT,
    "max_samples": MAX_SAMPLES_CONSTRAINT,
    "categorical_threshold": [Interval(numbers.Integral, 0, None, closed="left")],
    "n_repeats": [Interval(numbers.Integral, 1, None, closed="left")],
    "n_jobs": [numbers.Integral, None],
    "verbose": ["verbose"],
    "random_state": ["random_state"],
}


@explain_input_errors
@validate_params(
    {"X": ["array-like"], **COMMON_PARAMS}, prefer_skip_nested_validation=True
)
def feature_dependence(
    X,
    *,
    estimator=None,
    max_samples=5000,
    categorical_threshold=10,
    n_repeats=1,
    n_jobs=None,
    verbose=0,
    random_state=None,
):
    """How well each feature is predicted by all the others.

    For each feature, a forest is trained to predict it from every other
    feature, and its out-of-bag score is the feature's *dependence*: near 1,
    the other features carry the same information and the feature is
    redundant; near 0, it carries information of its own. Numeric features
    are predicted by a regressor and scored with R²; string and categorical
    columns, and numeric features with few distinct values, by a classifier
    scored with chance-corrected accuracy, ``(accuracy - p) / (1 - p)``
    where ``p`` is the share of the most frequent value (0: no better than
    always guessing it; 1: always right), which puts both kinds on the same
    scale. The dependence matrix says which features explain each one: row
    ``i`` holds the out-of-bag permutation importance
    (:func:`oob_permutation_importance`, forest level) of every other
    feature in the model of feature ``i``, in the unit of the dependence.

    Low dependence does not mean unimportant for a target, and high
    dependence does not mean unimportant either: two copies of a column
    both have dependence near 1, yet one of them must be kept.
    :class:`DependenceAnalyzer` removes redundant features one at a time.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        The features. Strings and pandas or polars categorical columns are
        encoded internally (category codes), never in the caller's data.
        Missing values (NaN, None) are allowed: a feature's model uses the
        rows where it is observed.
    estimator : estimator, dict or None, default=None
        The models that predict each feature. None: a
        :class:`~sklearn.ensemble.RandomForestRegressor` and a
        :class:`~sklearn.ensemble.RandomForestClassifier` with 100 trees,
        each grown on a bootstrap sample of 30% of the rows
        (``max_samples=0.3``), ``min_samples_leaf=5`` and
        ``max_features=1.0`` (every split may use every input: fewer
        candidates per split make a forest with few inputs miss the one
        that explains the feature). Small samples make the trees quick to
        grow and score every row with many out-of-bag trees; see
        :doc:`/bench_dependence` for the cost and the stability against
        rfpimp's defaults. One bagged
        ensemble (RandomForest*, ExtraTrees* or Bagging* with
        ``bootstrap=True``) is used for the features of its kind and the
        default for the others; a dict
        ``{"regressor": ..., "classifier": ...}`` sets both. Models are
        cloned; every ``random_state`` they leave unset is seeded from
        ``random_state``.
    max_samples : int, float or None, default=5000
        Rows the models are trained and scored on: at most this many (or
        this fraction), drawn once without replacement; None uses all rows.
        A few thousand rows measure dependence about as the full set does.
    categorical_threshold : int, default=10
        Numeric features with at most this many distinct values are
        predicted by the classifier; 0 predicts every numeric feature by
        regression.
    n_repeats : int, default=1
        Permutations per input feature in the dependence matrix. With 100
        trees, the matrix varies between seeds mostly because the forests
        do; more permutations cost time and change it little.
    n_jobs : int or None, default=None
        Features measured in parallel (joblib semantics;
        ``joblib.parallel_config(backend="dask")`` fits them on a Dask
        cluster, with the same results).
    verbose : int, default=0
        Progress messages on stderr: the number of models, and joblib's
        progress of the parallel fits.
    random_state : int, RandomState instance or None, default=None
        Seeds the row sample, the forests and the permutations. Results are
        the same for every ``n_jobs`` and joblib backend.

    Returns
    -------
    result : Bunch
        dependence : ndarray of shape (n_features,)
            Out-of-bag R² or chance-corrected accuracy of each feature's
            model. A feature with at most one distinct value is predicted
            by a constant and gets 1; the only feature of X gets 0.
        matrix : ndarray of shape (n_features, n_features)
            ``matrix[i, k]``: how much the dependence of feature ``i``
            drops when feature ``k`` is permuted. It can exceed the
            dependence (up to about 2 for R²): a model that relies on ``k``
            alone makes scrambled predictions, which score below zero. The
            diagonal is NaN, and so is the row of a constant feature.
        feature_names : ndarray of shape (n_features,)
        target_kind : ndarray of shape (n_features,)
            "regression", "classification" or "constant".
        n_samples : int
            Rows used.
        n_repeats, random_state
            ``random_state`` is the integer seed actually used.

    See Also
    --------
    DependenceAnalyzer : Sequential elimination of redundant features.
    feature_groups : Groups of collinear features by rank correlation.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_fimp import feature_dependence
    >>> rng = np.random.RandomState(0)
    >>> a, b = rng.normal(size=(2, 300))
    >>> X = np.column_stack([a, b, a + 0.01 * rng.normal(size=300)])
    >>> result = feature_dependence(X, random_state=0)
    >>> (result.dependence > 0.9).tolist()
    [True, False, True]
    >>> int(np.nanargmax(result.matrix[0]))  # x0 is explained by x2
    2
    """
    state = prepare(X, estimator, max_samples, categorical_threshold, random_state)
    n_features = state.values.shape[1]
    everything = np.arange(n_features)
    Progress("feature_dependence", verbose)(
        f"fitting a model of each of {n_features} features on "
        f"{state.values.shape[0]} rows"
    )
    measurements = measure_features(
        state.values,
        everything,
        lambda j: np.delete(everything, j),
        state.kinds,
        state.estimators,
        state.seeds,
        n_jobs=n_jobs,
        n_repeats=n_repeats,
        verbose=verbose,
    )
    matrix = dependence_matrix(measurements, n_features)
    for m in measurements:
        if state.kinds[m.feature] == CONSTANT:
            matrix[m.feature] = np.nan
    return Bunch(
        dependence=np.array([m.dependence for m in measurements]),
        matrix=matrix,
        feature_names=state.names,
        target_kind=state.kinds,
        n_samples=state.values.shape[0],
        n_repeats=n_repeats,
        random_state=state.seed,
    )
