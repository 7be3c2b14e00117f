"""Adapter of scikit-learn's averaged trees: DecisionTree*, RandomForest*,
ExtraTrees* and Bagging* of decision trees."""

import numpy as np
from sklearn.base import is_classifier
from sklearn.ensemble import BaggingClassifier, BaggingRegressor
from sklearn.tree import BaseDecisionTree
from sklearn.utils.validation import validate_data

from ..._utils._models import FORESTS
from ._base import ModelAdapter, TreeEnsemble, TreeTerm, float32_below


def sklearn_tree_input(estimator, X):
    """X as scikit-learn's trees read it: float32, C order, validated
    against the estimator (missing values allowed: the trees route them)."""
    return validate_data(
        estimator,
        X,
        reset=False,
        dtype=np.float32,
        order="C",
        ensure_all_finite=False,
    )


class AveragedTrees(ModelAdapter):
    """One decision tree, or the average of a forest's or a Bagging
    ensemble's trees; single-output classification, any regression.

    A classifier's terms are the trees' leaf class fractions; a Bagging
    estimator trained on encoded labels may know only some of the ensemble's
    classes, and its term then adds to those columns only.
    """

    @classmethod
    def accepts(cls, estimator):
        return isinstance(
            estimator, (BaseDecisionTree, BaggingClassifier, BaggingRegressor) + FORESTS
        )

    def ensemble(self):
        estimator = self.estimator
        classifier = is_classifier(estimator)
        if classifier and np.ndim(estimator.classes_[0]) > 0:
            return None  # multi-output classification
        if isinstance(estimator, BaseDecisionTree):
            trees, features = [estimator], [None]
        elif isinstance(estimator, FORESTS):
            trees = list(estimator.estimators_)
            features = [None] * len(trees)
        else:
            trees = list(estimator.estimators_)
            if not all(isinstance(tree, BaseDecisionTree) for tree in trees):
                return None
            features = [np.asarray(f) for f in estimator.estimators_features_]
        if classifier:
            n_outputs = len(estimator.classes_)
            terms = [
                TreeTerm(
                    tree.tree_,
                    tree_features,
                    None
                    if len(tree.classes_) == n_outputs
                    else np.asarray(tree.classes_, dtype=np.intp),
                    tree.tree_.value[:, 0, :],
                    float32_below(tree.tree_.threshold),
                )
                for tree, tree_features in zip(trees, features)
            ]
        else:
            n_outputs = trees[0].tree_.value.shape[1]
            terms = [
                TreeTerm(
                    tree.tree_,
                    tree_features,
                    None,
                    tree.tree_.value[:, :, 0],
                    float32_below(tree.tree_.threshold),
                )
                for tree, tree_features in zip(trees, features)
            ]
        return TreeEnsemble(terms, n_outputs, self, classifier)

    def engine_input(self, X):
        return sklearn_tree_input(self.estimator, X)
