"""Mean decrease in impurity, read from the fitted trees' node arrays."""

import numpy as np
from sklearn.tree import BaseDecisionTree
from sklearn.utils.validation import check_is_fitted

from .._utils._compat import StrOptions, hist_gradient_boosting_trees, validate_params
from .._utils._models import BAGGING, FORESTS, GRADIENT_BOOSTING, HIST_GRADIENT_BOOSTING
from .._utils._result import importance_result
from .._utils._validation import reads_the_model_only
from ._boosting_gains import boosting_library_gains
from ._pipeline import column_sums
from ._spark_trees import is_spark_model, spark_trees


def node_impurity_decrease(tree_):
    """Weighted impurity decrease ``RI_t`` of every node (0 at leaves)."""
    left, right = tree_.children_left, tree_.children_right
    internal = left >= 0
    weight, impurity = tree_.weighted_n_node_samples, tree_.impurity
    decrease = np.zeros(tree_.node_count)
    decrease[internal] = (
        weight[internal] * impurity[internal]
        - weight[left[internal]] * impurity[left[internal]]
        - weight[right[internal]] * impurity[right[internal]]
    )
    return decrease, internal


def tree_impurity_decrease(tree_, n_features, features=None, *, relative=True):
    """Total ``RI_t`` per feature of one tree, relative to the root weight
    (``relative=False``: in units of weight times impurity).

    ``features`` maps the tree's column positions to the ensemble's (Bagging
    trains members on column subsets).
    """
    decrease, internal = node_impurity_decrease(tree_)
    split_on = tree_.feature[internal]
    if features is not None:
        split_on = features[split_on]
    totals = np.bincount(split_on, weights=decrease[internal], minlength=n_features)
    return totals / tree_.weighted_n_node_samples[0] if relative else totals


def _hist_tree_gain(nodes, column_map, n_features):
    split = nodes["is_leaf"] == 0
    return np.bincount(
        column_map[nodes["feature_idx"][split]],
        weights=nodes["gain"][split],
        minlength=n_features,
    )


def _per_tree_decrease(estimator, *, relative=True):
    """Raw per-tree importance vectors of the trees that split at least once,
    and whether the ensemble is boosted (boosted trees share one scale).
    ``relative``: scikit-learn's trees relative to their root weight."""
    n_features = estimator.n_features_in_
    if isinstance(estimator, BaseDecisionTree):
        trees, boosted = [(estimator.tree_, None)], False
    elif isinstance(estimator, FORESTS):
        trees, boosted = [(t.tree_, None) for t in estimator.estimators_], False
    elif isinstance(estimator, BAGGING):
        members = list(zip(estimator.estimators_, estimator.estimators_features_))
        if not all(isinstance(m, BaseDecisionTree) for m, _ in members):
            raise _no_trees_error(estimator)
        trees = [(m.tree_, np.asarray(f)) for m, f in members]
        boosted = False
    elif isinstance(estimator, GRADIENT_BOOSTING):
        trees = [(t.tree_, None) for t in np.ravel(estimator.estimators_)]
        boosted = True
    elif isinstance(estimator, HIST_GRADIENT_BOOSTING):
        vectors = [
            _hist_tree_gain(nodes, column_map, n_features)
            for nodes, column_map in hist_gradient_boosting_trees(estimator)
            if len(nodes) > 1
        ]
        return vectors, True
    else:
        vectors = boosting_library_gains(estimator)
        if vectors is None:
            raise _no_trees_error(estimator)
        return vectors, True
    vectors = [
        tree_impurity_decrease(tree_, n_features, features, relative=relative)
        for tree_, features in trees
        if tree_.node_count > 1
    ]
    return vectors, boosted


def _no_trees_error(estimator):
    catboost = type(estimator).__module__.split(".")[0] == "catboost"
    return TypeError(
        f"estimator={type(estimator).__name__}(...) has no trees to read "
        "impurity decreases from; MDI needs a fitted DecisionTree*, "
        "ExtraTree*, RandomForest*, ExtraTrees*, Bagging* of trees, "
        "GradientBoosting*, HistGradientBoosting*, XGBoost or LightGBM model "
        "(for a Pipeline, pass its last step). For any other model use "
        "permutation_importance."
        + (
            " CatBoost's trees keep no per-split loss decrease; its own "
            "analogue of MDI is estimator.get_feature_importance("
            "type='PredictionValuesChange') (from the trees alone), and "
            "type='LossFunctionChange' (on a data set you pass) is its "
            "data-based one."
            if catboost
            else ""
        )
    )


def _normalized(vector):
    total = vector.sum()
    return vector / total if total > 0 else vector


@reads_the_model_only
@validate_params(
    {
        "estimator": [object],
        "normalization": [StrOptions({"sklearn", "spark"}), None],
    },
    prefer_skip_nested_validation=True,
)
def mdi_importance(estimator, *, normalization="sklearn"):
    """Mean decrease in impurity (MDI, "Gini importance") of a tree model.

    Computed from the fitted trees' node arrays, not from
    ``feature_importances_``. For each tree, a node ``t`` that splits on
    feature ``j`` contributes its weighted impurity decrease
    ``RI_t = w_t I_t - w_left I_left - w_right I_right``, with ``w`` the
    weighted number of training samples reaching the node (bootstrap
    multiplicities and sample weights included) and ``I`` the node's
    impurity (Gini, entropy, squared error ...). For histogram gradient
    boosting, XGBoost and LightGBM, the contribution is the split's gain in
    the training loss, as their trees record it (XGBoost's and LightGBM's
    "total gain" importance is the sum over trees). Trees with no split are
    left out.

    MDI is computed on training data only and favours continuous and
    high-cardinality features: a column of random numbers can outrank a
    useful categorical one. Prefer the permutation or drop-column
    importances to decide what a model uses.

    CatBoost models are not read: their JSON export keeps, per oblivious
    tree, the splits, leaf values and leaf weights, but no per-split
    decrease of the training loss. CatBoost's own analogue is
    ``get_feature_importance(type="PredictionValuesChange")``, computed from
    the fitted trees and the training weights in their leaves;
    ``type="LossFunctionChange"`` measures the change of the loss on a data
    set you pass, closer to drop-column importance.

    Parameters
    ----------
    estimator : estimator
        A fitted DecisionTree*, ExtraTree*, RandomForest*, ExtraTrees*,
        Bagging* of trees, GradientBoosting* or HistGradientBoosting* model,
        or an XGBoost (tree booster) or LightGBM scikit-learn model; or a
        fitted Pipeline ending in one, whose importances are given per
        original column: the sum over the model inputs each column alone
        feeds (its one-hot columns, its scaled or imputed values), read from
        the fitted steps. A model input computed from several columns
        (PolynomialFeatures, PCA) has no share of each, and an error says
        so when the model uses it.
    normalization : {"sklearn", "spark"} or None, default="sklearn"
        - "sklearn": as scikit-learn's ``feature_importances_`` (equal to it
          to floating-point precision): bagged trees are each normalised to
          sum 1 and averaged; boosted trees (which fit residuals on one common
          scale) are averaged unnormalised; the average is normalised to sum
          1.
        - "spark": as Spark MLlib's ``featureImportances``: bagged trees are
          each normalised to sum 1 and averaged, boosted trees' total
          decreases (weight times impurity, not relative to each tree's
          root weight) are summed as they are; the result is normalised to
          sum 1. Identical to "sklearn" except for boosted trees fitted on
          row subsamples of different weights.
        - None: the average over trees of each tree's total decrease,
          relative to its root weight (in units of impurity, or of loss for
          histogram gradient boosting).

    Returns
    -------
    result : Bunch
        importances : ndarray of shape (n_features, n_trees)
            One column per tree that splits, scaled so that the row means are
            the importances.
        importances_mean : ndarray of shape (n_features,)
            The importances.
        importances_std : ndarray of shape (n_features,)
            Spread over trees.
        feature_names : ndarray of shape (n_features,)
        method, normalization, n_trees

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from sklearn_fimp import mdi_importance
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> forest = RandomForestClassifier(random_state=0).fit(X, y)
    >>> result = mdi_importance(forest)
    >>> bool(abs(result.importances_mean - forest.feature_importances_).max() < 1e-12)
    True
    """
    if is_spark_model(estimator):
        names = None
    else:
        check_is_fitted(estimator)
        names = getattr(estimator, "feature_names_in_", None)
    through = column_sums(estimator, "mdi")
    if through is not None:
        result = _mdi_importance(through.model, normalization=normalization)
        return importance_result(
            through.sum(result.importances),
            through.labels,
            **{k: result[k] for k in ("method", "normalization", "n_trees")},
        )
    return _mdi_importance(estimator, labels=names, normalization=normalization)


def _mdi_importance(estimator, *, labels=None, normalization="sklearn"):
    """:func:`mdi_importance` of a fitted tree model (or pyspark.ml tree
    model), its features named ``labels`` (None: ``x0``, ``x1`` ...)."""
    # Spark sums its boosted trees' decreases as they are, not relative to
    # each tree's root weight (which differs when trees subsample rows)
    relative = normalization != "spark"
    if is_spark_model(estimator):
        trees, boosted, n_features = spark_trees(estimator)
        vectors = [
            tree_impurity_decrease(tree, n_features, relative=relative)
            for tree in trees
            if tree.node_count > 1
        ]
    else:
        vectors, boosted = _per_tree_decrease(estimator, relative=relative)
        n_features = estimator.n_features_in_
    names = labels
    if names is None:
        names = [f"x{i}" for i in range(n_features)]
    details = {"method": "mdi", "normalization": normalization, "n_trees": len(vectors)}
    if not vectors:
        return importance_result(np.zeros((n_features, 1)), names, **details)
    if normalization is not None and not boosted:
        vectors = [_normalized(v) for v in vectors]
    columns = np.column_stack(vectors)
    if normalization is not None:
        total = columns.mean(axis=1).sum()
        if total > 0:
            columns = columns / total
    return importance_result(columns, names, **details)
