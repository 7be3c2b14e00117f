"""Mean absolute SHAP value per feature: the booster's own exact TreeSHAP
for LightGBM, XGBoost and CatBoost, shap's TreeExplainer for the other tree
models.

The three boosters compute exact path-dependent TreeSHAP values themselves
(LightGBM's ``pred_contrib``, XGBoost's ``pred_contribs``, CatBoost's
``ShapValues``): the same values shap's TreeExplainer computes from their
trees, in the units of the raw output, without the optional ``shap``
package and without shap reading the model first. Each returns one column
per feature and one for the expected value (last), per output.
"""

import numbers

import numpy as np
import scipy.sparse
from sklearn.utils.validation import check_is_fitted

from .._utils._compat import Interval, RealNotInt, StrOptions, validate_params
from .._utils._frames import is_polars, take_rows
from .._utils._models import (
    is_catboost_estimator,
    is_lightgbm_trees,
    is_xgboost_trees,
)
from .._utils._random import draw_seed, evaluation_rows
from .._utils._result import importance_result
from .._utils._validation import check_inputs
from ._groups import UNGROUPED_OPTIONS, resolve_groups
from ._pipeline import column_sums

#: The command that installs the optional dependency.
SHAP_EXTRA = 'pip install "sklearn-fimp[shap]"'


def import_shap():
    """The ``shap`` module, or an ImportError naming the extra to install
    (only scikit-learn's tree models need it)."""
    try:
        import shap
    except ImportError as exc:
        raise ImportError(
            "method='shap' (shap_importance) computes the SHAP values of "
            "scikit-learn's tree models with the optional 'shap' package, "
            "which is not installed (LightGBM, XGBoost and CatBoost models "
            f"compute their own). Install the extra with {SHAP_EXTRA} (or pip "
            "install shap), or use another method such as 'permutation'."
        ) from exc
    return shap


@validate_params(
    {
        "estimator": [object],
        "X": ["array-like"],
        "y": ["array-like", None],
        "groups": [list, tuple, dict, StrOptions({"auto"}), None],
        "ungrouped": [StrOptions(set(UNGROUPED_OPTIONS))],
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
    estimator,
    X,
    y=None,
    *,
    groups=None,
    ungrouped="separate",
    sample_weight=None,
    max_samples=None,
    random_state=None,
):
    """Mean absolute SHAP value of each feature (or group) of a tree model.

    SHAP values (Lundberg and Lee, 2017) split each prediction into one
    additive contribution per feature; the importance of a feature is the
    mean over rows of the absolute value of its contribution, averaged over
    the model's outputs (the classes of a classifier whose trees predict
    probabilities: for two classes both have the same absolute values). The
    values are exact path-dependent TreeSHAP values (the trees' own
    training-row counts stand in for the background data), in the units of
    the model's raw output (probability, log-odds or the target's unit):
    LightGBM, XGBoost and CatBoost models compute them themselves
    (``pred_contrib``, ``pred_contribs``, ``ShapValues``), with the trees
    their ``predict`` uses (up to the best iteration when early stopping
    chose one); the other models through shap's ``TreeExplainer`` with its
    defaults.

    The mean absolute SHAP value says how much the model's output moves
    with the feature on the rows given, not how much the model's score
    depends on it: a feature the model splits on to fit noise gets a share
    too. Measure it on rows
    the model did not train on to see less of that noise, and see
    :func:`permutation_importance` for an importance in units of score.

    LightGBM, XGBoost and CatBoost models need nothing more; scikit-learn's
    tree models need the optional ``shap`` package:
    ``pip install "sklearn-fimp[shap]"``.

    Parameters
    ----------
    estimator : estimator
        A fitted LightGBM, XGBoost (tree booster) or CatBoost model, or a
        scikit-learn tree model shap's TreeExplainer reads (DecisionTree*,
        RandomForest*, ExtraTrees*, GradientBoosting*,
        HistGradientBoosting*); or a fitted Pipeline ending in one: each
        row's SHAP values of the model inputs an original column alone feeds
        are summed (SHAP values add up) before the absolute value, per
        original column of X.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows to explain (held-out rows, preferably).
    y : None
        Ignored; accepted so that every row-reading importance function
        takes ``(estimator, X, y)``.
    groups : None, "auto", list or dict, default=None
        None: each feature alone. A list whose items are a feature (name or
        position) or a list of features, or a dict ``{label: features}``;
        groups may overlap. "auto": the groups of :func:`feature_groups`. A
        group's SHAP value on a row is the sum of its features' (SHAP
        values add up), taken before the absolute value: two columns that
        stand in for each other share one contribution between them.
    ungrouped : {"separate", "together", "drop"}, default="separate"
        Features no group mentions get a group each, share one group labelled
        "other", or are left out.
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
        importances : ndarray of shape (n_groups, n_rows)
            Each explained row's absolute SHAP values (averaged over
            outputs), times its weight relative to the mean weight, so that
            the row means are the importances.
        importances_mean : ndarray of shape (n_groups,)
            Mean absolute SHAP value.
        importances_std : ndarray of shape (n_groups,)
            Spread over rows.
        feature_names : ndarray of shape (n_groups,)
            Feature names, or group labels.
        groups : list of ndarray
            Column positions of each group (one feature each without
            ``groups``).
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
    check_is_fitted(estimator)
    X, feature_names, _, sample_weight = check_inputs(estimator, X, y, sample_weight)
    labels, groups = resolve_groups(groups, feature_names, X, ungrouped=ungrouped)
    return _shap_importance(
        estimator,
        X,
        None,
        labels=labels,
        groups=groups,
        seed=draw_seed(random_state),
        sample_weight=sample_weight,
        max_samples=max_samples,
    )


def _shap_importance(
    estimator, X, y, *, labels, seed, groups=None, sample_weight=None, max_samples=None
):
    """:func:`shap_importance` on validated input (X an array or frame,
    ``labels`` its column names, or the labels of ``groups``, lists of
    column positions; ``seed`` an int); y is not used."""
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
    values = shap_values(estimator, X_rows)
    if through is not None:  # a row's values add up over a column's inputs
        values = np.moveaxis(through.sum(np.moveaxis(values, 1, 0)), 0, 1)
    if groups is None:
        groups = [np.array([j]) for j in range(values.shape[1])]
    elif not groups:
        values = values[:, :0]
    else:  # ... and over a group's columns: one gather, one sum per group
        members = np.concatenate([np.asarray(g, dtype=np.intp) for g in groups])
        starts = np.cumsum([0] + [len(g) for g in groups[:-1]])
        values = np.add.reduceat(values[:, members], starts, axis=1)
    per_row = np.abs(values)
    if per_row.ndim == 3:
        per_row = per_row.mean(axis=2)
    if weight is not None:
        per_row = per_row * (weight / weight.mean())[:, None]
    return importance_result(
        per_row.T,
        labels,
        groups=groups,
        method="shap",
        n_rows=per_row.shape[0],
        random_state=seed,
    )


def shap_values(estimator, X):
    """Signed SHAP values of the rows X (an array or pandas frame) for a
    fitted tree model: (n_rows, n_features) for one output,
    (n_rows, n_features, n_outputs) for several, in raw-output units."""
    if is_lightgbm_trees(estimator):
        contributions = _lightgbm_contributions(estimator, X)
    elif is_xgboost_trees(estimator):
        contributions = _xgboost_contributions(estimator, X)
    elif is_catboost_estimator(estimator):
        contributions = _catboost_contributions(estimator, X)
    else:
        return _tree_explainer_values(estimator, X)
    return _without_bias(contributions, X.shape[0], X.shape[1])


def _without_bias(contributions, n_rows, n_features):
    """A booster's contributions, (n_rows, n_features + 1) or with the
    outputs as blocks of n_features + 1 columns (LightGBM) or on a middle
    axis (XGBoost, CatBoost), the expected value last, as
    :func:`shap_values` returns them."""
    values = np.asarray(contributions, dtype=np.float64)
    values = values.reshape(n_rows, -1, n_features + 1)[:, :, :-1]
    if values.shape[1] == 1:
        return values[:, 0, :]
    return np.moveaxis(values, 1, 2)


def _lightgbm_contributions(estimator, X):
    contributions = estimator.predict(X, pred_contrib=True)
    if isinstance(contributions, list):  # sparse X, several classes
        contributions = scipy.sparse.hstack(contributions)
    if scipy.sparse.issparse(contributions):
        contributions = contributions.toarray()
    return contributions


def _xgboost_contributions(estimator, X):
    import xgboost

    booster = estimator.get_booster()
    names = None
    if not hasattr(X, "columns"):  # an array: the names the model knows
        names = booster.feature_names
    rows = xgboost.DMatrix(
        X,
        missing=estimator.missing,
        nthread=estimator.n_jobs,
        feature_names=names,
        feature_types=estimator.feature_types,
        enable_categorical=estimator.enable_categorical,
    )
    try:  # the trees the wrapper's predict adds (early stopping: up to the best)
        iterations = (0, estimator.best_iteration + 1)
    except AttributeError:
        iterations = (0, 0)
    contributions = booster.predict(
        rows, pred_contribs=True, iteration_range=iterations
    )
    if scipy.sparse.issparse(contributions):
        contributions = contributions.toarray()
    return contributions


def _catboost_contributions(estimator, X):
    import catboost

    rows = catboost.Pool(X, cat_features=estimator.get_cat_feature_indices())
    threads = estimator.get_params().get("thread_count", -1)
    return estimator.get_feature_importance(
        rows, type="ShapValues", thread_count=-1 if threads is None else threads
    )


def _tree_explainer_values(estimator, X):
    """shap's TreeExplainer values (exact, path-dependent) of the rows X."""
    shap = import_shap()
    try:
        explainer = shap.TreeExplainer(estimator)
    except Exception as exc:  # shap raises a bare Exception for unknown models
        raise TypeError(
            f"shap's TreeExplainer cannot explain estimator="
            f"{type(estimator).__name__}(...): {exc} method='shap' needs a "
            "LightGBM, XGBoost or CatBoost model, or a scikit-learn tree "
            "model TreeExplainer reads (DecisionTree*, RandomForest*, "
            "ExtraTrees*, GradientBoosting*, HistGradientBoosting*; shap's "
            "limits apply). Use method='permutation' for any other model."
        ) from exc
    values = np.asarray(explainer.shap_values(X, check_additivity=False))
    # (n_rows, n_features) for one output, (n_rows, n_features, n_outputs)
    # for several
    return values
