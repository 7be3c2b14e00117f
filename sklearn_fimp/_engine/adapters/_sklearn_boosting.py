"""Adapter of scikit-learn's GradientBoosting* (one regression tree per
class per stage, added to the initial estimator's raw predictions)."""

import numpy as np
from sklearn.base import is_classifier
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

from ..._utils._compat import gradient_boosting_init, gradient_boosting_proba
from ..._utils._scoring import StoredClassifierOutputs
from ._base import ModelAdapter, TreeEnsemble, TreeTerm, float32_below
from ._sklearn_trees import sklearn_tree_input


class GradientBoosting(ModelAdapter):
    """GradientBoostingClassifier and GradientBoostingRegressor.

    scikit-learn adds ``learning_rate * value`` stage by stage, class by
    class, to the initial estimator's raw predictions; the terms are in that
    order, with the scaled tables (the same products). A classifier's raw
    outputs are decision values, which the model's loss turns into
    probabilities.
    """

    averaged = False

    @classmethod
    def accepts(cls, estimator):
        return isinstance(
            estimator, (GradientBoostingClassifier, GradientBoostingRegressor)
        )

    def ensemble(self):
        estimator = self.estimator
        stages = estimator.estimators_
        n_columns = stages.shape[1]
        terms = [
            TreeTerm(
                stages[i, k].tree_,
                None,
                None if n_columns == 1 else np.array([k]),
                estimator.learning_rate * stages[i, k].tree_.value[:, 0, :1],
                float32_below(stages[i, k].tree_.threshold),
            )
            for i in range(stages.shape[0])
            for k in range(n_columns)
        ]
        return TreeEnsemble(terms, n_columns, self, is_classifier(estimator))

    def engine_input(self, X):
        return sklearn_tree_input(self.estimator, X)

    def raw_start(self, X, n_outputs):
        return gradient_boosting_init(self.estimator, X)

    def scorer_outputs(self, raw):
        if not self.estimator_is_classifier:
            return super().scorer_outputs(raw)
        decision = raw[:, 0] if raw.shape[1] == 1 else raw
        return StoredClassifierOutputs(
            self.estimator.classes_,
            proba=gradient_boosting_proba(self.estimator, decision),
            decision=decision,
        )
