"""Mean absolute SHAP value per feature, from shap's TreeExplainer."""

import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._utils._compat import Interval, RealNotInt, validate_params
from .._utils._frames import is_polars, take_rows
from .._utils._random import draw_seed, evaluation_rows
from .._utils._result import importance_result
from .._utils._validation import check_inputs
from ._pipeline import column_sums

#: The command that installs the optional dependency.
SHAP_EXTRA = 'pip install "sklearn-fimp[shap]"'


def import_shap():
    """The ``shap`` module, or an ImportError naming the extra to install."""
    try:
        import shap
    except ImportError as exc:
        raise ImportError(
            "method='shap' (shap_importance) computes SHAP values with the "
            "optional 'shap' package, which is not installed. Install the "
            f"extra with {SHAP_EXTRA} (or pip install shap), or use another "
            "method such as 'permutation'."
        ) from exc
    return shap


@validate_params(
    {
        "estimator": [object],
        "X": ["array-like"],
        "y": ["array-like", None],
        "sample_weight": ["array-like", None],
        "max_samples": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def shap_importance(
    estimator, X, y=None, *, sample_weight=None, max_samples=None, random_state=None
):
    """Mean absolute SHAP value of each feature of a tree model.

    SHAP values (Lundberg and Lee, 2017) split each prediction into one
    additive contribution per feature; the importance of a feature is the
    mean over rows of the absolute value of its contribution, averaged over
    the model's outputs (the classes of a classifier whose trees predict
    probabilities: for two classes both have the same absolute values). The
    values are shap's ``TreeExplainer`` with its defaults (exact,
    "tree_path_dependent": the trees' own training-row counts stand in for
    the background data), in the units of the model's raw output
    (probability, log-odds or the target's unit).

    The mean absolute SHAP value says how much the model's output moves
    with the feature on the rows given, not how much the model's score
    depends on it: a feature the model splits on to fit noise gets a share
    too. Measure it on rows
    the model did not train on to see less of that noise, and see
    :func:`permutation_importance` for an importance in units of score.

    Needs the optional ``shap`` package: ``pip install "sklearn-fimp[shap]"``.

    Parameters
    ----------
    estimator : estimator
        A fitted tree model shap's TreeExplainer reads: DecisionTree*,
        RandomForest*, ExtraTrees*, GradientBoosting*,
        HistGradientBoosting*, XGBoost or LightGBM; or a fitted Pipeline
        ending in one: each row's SHAP values of the model inputs an
        original column alone feeds are summed (SHAP values add up) before
        the absolute value, per original column of X.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows to explain (held-out rows, preferably).
    y : None
        Ignored; accepted so that every row-reading importance function
        takes ``(estimator, X, y)``.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows in the mean.
    max_samples : int, float or None, default=None
        Explain at most this many rows (a float: this fraction of them),
        drawn without replacement with ``random_state``. None: all rows.
    random_state : int, RandomState instance or None, default=None
        Seed of the rows drawn with ``max_samples``.

    Returns
    -------
    result : Bunch
        importances : ndarray of shape (n_features, n_rows)
            Each explained row's absolute SHAP values (averaged over
            outputs), times its weight relative to the mean weight, so that
            the row means are the importances.
        importances_mean : ndarray of shape (n_features,)
            Mean absolute SHAP value.
        importances_std : ndarray of shape (n_features,)
            Spread over rows.
        feature_names : ndarray of shape (n_features,)
        method, n_rows, random_state

    Examples
    --------
    >>> from sklearn.datasets import make_friedman1
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_fimp import shap_importance
    >>> X, y = make_friedman1(n_samples=300, n_features=6, random_state=0)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0)
    >>> forest = forest.fit(X[:200], y[:200])
    >>> result = shap_importance(forest, X[200:])
    >>> int(result.importances_mean.argmax())
    3
    """
    import_shap()
    check_is_fitted(estimator)
    X, labels, _, sample_weight = check_inputs(estimator, X, y, sample_weight)
    return _shap_importance(
        estimator,
        X,
        None,
        labels=labels,
        seed=draw_seed(random_state),
        sample_weight=sample_weight,
        max_samples=max_samples,
    )


def _shap_importance(
    estimator, X, y, *, labels, seed, sample_weight=None, max_samples=None
):
    """:func:`shap_importance` on validated input (X an array or frame,
    ``labels`` its column names, ``seed`` an int); y is not used."""
    shap = import_shap()
    rows = evaluation_rows(seed, X.shape[0], max_samples)
    X_rows = take_rows(X, rows)
    through = column_sums(estimator, "shap")
    if through is not None:  # the model on its inputs, summed per column
        estimator, X_rows, labels = (
            through.model,
            through.transform(X_rows),
            through.labels,
        )
    if is_polars(X_rows):
        X_rows = X_rows.to_pandas()
    weight = None
    if sample_weight is not None:
        weight = sample_weight if rows is None else sample_weight[rows]
    try:
        explainer = shap.TreeExplainer(estimator)
    except Exception as exc:  # shap raises a bare Exception for unknown models
        raise TypeError(
            f"shap's TreeExplainer cannot explain estimator="
            f"{type(estimator).__name__}(...): {exc} method='shap' needs a "
            "model it reads (DecisionTree*, RandomForest*, ExtraTrees*, "
            "GradientBoosting*, HistGradientBoosting*, XGBoost or LightGBM; "
            "shap's limits apply). Use method='permutation' for any other model."
        ) from exc
    values = np.asarray(explainer.shap_values(X_rows, check_additivity=False))
    # (n_rows, n_features) for one output, (n_rows, n_features, n_outputs)
    # for several
    if through is not None:  # a row's values add up over a column's inputs
        values = np.moveaxis(through.sum(np.moveaxis(values, 1, 0)), 0, 1)
    per_row = np.abs(values)
    if per_row.ndim == 3:
        per_row = per_row.mean(axis=2)
    if weight is not None:
        per_row = per_row * (weight / weight.mean())[:, None]
    return importance_result(
        per_row.T,
        labels,
        method="shap",
        n_rows=per_row.shape[0],
        random_state=seed,
    )
