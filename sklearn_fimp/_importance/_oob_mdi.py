"""Debiased MDI computed with out-of-bag rows (MDI-oob, Li et al. 2019)."""

import numbers

import numpy as np
import sklearn
from joblib import Parallel, delayed
from sklearn.base import is_classifier
from sklearn.tree import BaseDecisionTree
from sklearn.utils.validation import check_is_fitted

from .._utils._compat import (
    MISSING_VALUES_ROUTED_AS_FITTED,
    decision_path,
    validate_params,
)
from .._utils._models import BAGGED_ENSEMBLES
from .._utils._result import importance_result
from .._utils._validation import check_inputs, explain_input_errors
from ._bagging import bagged_members, ensemble_input, in_bag_rows, member_input
from ._pipeline import column_sums

MEAN_CRITERIA = (
    "squared_error",
    "friedman_mse",
    "poisson",
    "gini",
    "entropy",
    "log_loss",
)


def values_are_in_bag_means(ensemble, tree, n_draws):
    """Whether a member's ``tree_.value`` are the means (class fractions) of
    its in-bag rows counted with their bootstrap multiplicity.

    scikit-learn fits bagged trees with the bootstrap counts as sample
    weights. From scikit-learn 1.9 the ``sample_weight`` of ``fit`` only
    changes which rows the bootstrap draws; before, each tree was fitted with
    the counts times ``sample_weight``, and its values are means weighted by
    both. A tree fitted on the counts alone has a root weight equal to its
    ``n_draws`` bootstrap draws (a sum of integers, exact in floating point).
    """
    return (
        tree.tree_.weighted_n_node_samples[0] == n_draws
        and tree.criterion in MEAN_CRITERIA
        and getattr(tree, "monotonic_cst", None) is None
        and getattr(tree, "class_weight", None) is None
        and getattr(ensemble, "class_weight", None) is None
    )


def member_oob_mdi(ensemble, member, X, targets, weight, n_features, n_draws):
    """MDI-oob of one tree, from its out-of-bag rows.

    For an out-of-bag row ``i`` that goes from node ``t`` (splitting on ``j``)
    to child ``c``, the split contributes ``(mu_c - mu_t) . y_i`` to feature
    ``j``, where ``mu`` are in-bag node means and ``y_i`` the row's target
    (one-hot for classifiers). Summed over rows and nodes, divided by the
    total weight of the out-of-bag rows.

    The in-bag means are the node values of ``tree_.value`` where those are
    the means of the in-bag rows, each counted as often as the bootstrap drew
    it (mean-based criteria, no class weights, no monotonic constraints);
    otherwise (``tree_.value`` holds medians for ``criterion="absolute_error"``
    and clipped values under monotonic constraints) they are computed from
    the in-bag rows.
    """
    tree = member.estimator
    tree_ = tree.tree_
    oob = member.oob_rows
    if values_are_in_bag_means(ensemble, tree, n_draws):
        if is_classifier(tree):
            # class fractions over the classes the member was trained on
            means = np.zeros((tree_.node_count, targets.shape[1]))
            means[:, np.asarray(tree.classes_, dtype=np.intp)] = tree_.value[:, 0, :]
        else:
            means = tree_.value[:, :, 0]
        path = decision_path(tree, member_input(member, X[oob]))
        reached = path.T @ (targets[oob] * weight[oob, None])
    else:
        path = decision_path(tree, member_input(member, X)).tocsc()
        drawn = np.bincount(member.in_bag_rows, minlength=X.shape[0])
        drawn = drawn.astype(np.float64)
        means = (path.T @ (targets * drawn[:, None])) / (path.T @ drawn)[:, None]
        reached = path[oob].T @ (targets[oob] * weight[oob, None])
    parent = np.full(tree_.node_count, -1, dtype=np.intp)
    internal = np.flatnonzero(tree_.children_left >= 0)
    parent[tree_.children_left[internal]] = internal
    parent[tree_.children_right[internal]] = internal
    child = np.flatnonzero(parent >= 0)
    contribution = np.sum(
        (means[child] - means[parent[child]]) * reached[child], axis=1
    )
    split_on = tree_.feature[parent[child]]
    if member.features is not None:
        split_on = member.features[split_on]
    totals = np.bincount(split_on, weights=contribution, minlength=n_features)
    return totals / weight[oob].sum()


@explain_input_errors
@validate_params(
    {
        "estimator": [object],
        "X": ["array-like"],
        "y": ["array-like"],
        "sample_weight": ["array-like", None],
        "n_jobs": [numbers.Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def oob_mdi_importance(estimator, X, y, *, sample_weight=None, n_jobs=None):
    """Debiased mean decrease in impurity from out-of-bag rows (MDI-oob).

    Plain MDI measures impurity decreases on the rows a tree was grown on,
    so splits that fit noise still earn credit, and features with many
    candidate split points (continuous, high cardinality, pure noise) earn
    the most. MDI-oob (Li, Wang, Basu, Kumbier and Yu, "A debiased MDI
    feature importance measure for random forests", NeurIPS 2019) re-scores
    every split with the rows the tree did not see: an out-of-bag row ``i``
    that passes from node ``t`` (splitting on feature ``j``) to child ``c``
    adds ``(mu_c - mu_t) . y_i`` to feature ``j``, where ``mu`` is the in-bag
    mean of the node (class fractions for classifiers, with ``y_i`` one-hot).
    A split on noise sends out-of-bag rows left and right regardless of
    their target, so its expected contribution is zero; a useful split sends
    rows to the child whose mean matches their target. Per tree, the sums
    are divided by the number (weight) of out-of-bag rows; trees are
    averaged. Values are not normalised and can be negative.

    Parameters
    ----------
    estimator : estimator
        A fitted RandomForest*, ExtraTrees* or Bagging* of trees model,
        trained with ``bootstrap=True``.
    X : array-like or DataFrame of shape (n_samples, n_features)
        The training rows, in the order passed to ``fit``.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        The training targets (one output for classifiers).
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the out-of-bag rows in each tree's average.
    n_jobs : int or None, default=None
        Threads that read the trees in parallel (joblib semantics); the
        result does not depend on it.

    Returns
    -------
    result : Bunch
        importances : ndarray of shape (n_features, n_trees)
            Each tree's MDI-oob.
        importances_mean, importances_std : ndarray of shape (n_features,)
        feature_names : ndarray of shape (n_features,)
        method, n_trees

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_fimp import oob_mdi_importance
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(size=(500, 2))
    >>> y = 3 * X[:, 0] + rng.normal(scale=0.1, size=500)
    >>> forest = RandomForestRegressor(n_estimators=50, random_state=0).fit(X, y)
    >>> result = oob_mdi_importance(forest, X, y)
    >>> float(result.importances_mean[0].round(1))  # the feature y depends on
    0.7
    >>> bool(abs(result.importances_mean[1]) < 0.01)  # noise: about zero
    True
    """
    X, feature_names, y, sample_weight = check_inputs(estimator, X, y, sample_weight)
    return _oob_mdi_importance(
        estimator,
        X,
        y,
        labels=feature_names,
        sample_weight=sample_weight,
        n_jobs=n_jobs,
    )


def _oob_mdi_importance(
    estimator, X, y, *, labels, sample_weight=None, centre_target=False, n_jobs=None
):
    """:func:`oob_mdi_importance` on validated input: X the estimator's
    training rows (array or frame), y an array, ``labels`` the names of X's
    columns.

    ``centre_target=True`` subtracts the (weighted) mean of a regression
    target first. MDI-oob adds ``(mu_child - mu_node) * y_i`` over
    out-of-bag rows. Their increments do not sum to zero as the in-bag rows'
    do, so a target with a large mean adds noise of size
    ``mean(y) * sum(increments)`` whose expectation is zero. Centring y
    removes it without changing what is estimated (the in-bag means shift by
    the same constant, leaving the increments as they are): on Friedman's
    data this multiplies the signal-to-noise ratio of a weak feature several
    times. The selector centres; the public function, which reproduces the
    published estimator, does not.
    """
    through = column_sums(estimator, "oob_mdi")
    if through is not None:  # the model on its inputs, summed per column
        result = _oob_mdi_importance(
            through.model,
            through.transform(X),
            y,
            labels=[f"x{k}" for k in range(len(through.sources))],
            sample_weight=sample_weight,
            centre_target=centre_target,
            n_jobs=n_jobs,
        )
        return importance_result(
            through.sum(result.importances),
            labels,
            method="oob_mdi",
            n_trees=result.n_trees,
        )
    if centre_target and not is_classifier(estimator):
        y = np.asarray(y, dtype=np.float64)
        y = y - np.average(y, axis=0, weights=sample_weight)
    # the in-bag rows are needed only where the nodes do not hold their means
    n_draws = None
    if isinstance(estimator, BAGGED_ENSEMBLES):
        check_is_fitted(estimator)
        n_draws = len(next(in_bag_rows(estimator)))
    members = bagged_members(
        estimator,
        X.shape[0],
        keep_in_bag=isinstance(estimator, BAGGED_ENSEMBLES)
        and not all(
            isinstance(tree, BaseDecisionTree)
            and values_are_in_bag_means(estimator, tree, n_draws)
            for tree in getattr(estimator, "estimators_", [])
        ),
    )
    if not all(isinstance(m.estimator, BaseDecisionTree) for m in members):
        raise TypeError(
            f"estimator={type(estimator).__name__}(...) bags models that are "
            "not decision trees; MDI-oob reads tree nodes. Use "
            "oob_permutation_importance instead."
        )
    classifier = is_classifier(estimator)
    if classifier:
        encoded = np.searchsorted(estimator.classes_, y)
        encoded = np.minimum(encoded, len(estimator.classes_) - 1)
        if np.any(estimator.classes_[encoded] != y):
            raise ValueError(
                "y has labels the estimator was not fitted on; pass the "
                "training targets used in fit."
            )
        targets = np.eye(len(estimator.classes_))[encoded]
    else:
        targets = y.reshape(len(y), -1).astype(np.float64)
    weight = np.ones(len(y)) if sample_weight is None else sample_weight
    X_checked = ensemble_input(estimator, X)
    if not MISSING_VALUES_ROUTED_AS_FITTED and np.isnan(X_checked).any():
        raise ValueError(
            f"X has missing values; with scikit-learn {sklearn.__version__}, "
            "trees fitted on rows with missing values do not always send "
            "those rows down the paths they predict them with, so MDI-oob, "
            "which compares in-bag node means along prediction paths, would "
            "be wrong. Upgrade to scikit-learn >= 1.8, impute the missing "
            "values before fitting, or use oob_permutation_importance."
        )
    n_features = X_checked.shape[1]
    # one column per tree, in the trees' order whatever n_jobs (threads: the
    # trees' decision paths are computed without the GIL)
    columns = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(member_oob_mdi)(
            estimator, member, X_checked, targets, weight, n_features, n_draws
        )
        for member in members
        if len(member.oob_rows)
        and member.estimator.tree_.node_count > 1
        and weight[member.oob_rows].sum() > 0
    )
    importances = np.column_stack(columns) if columns else np.zeros((n_features, 1))
    return importance_result(
        importances, labels, method="oob_mdi", n_trees=len(columns)
    )
