"""Adapter of scikit-learn's HistGradientBoosting* (one tree per class per
iteration, added to the baseline raw score).

The model's predictor compares float64 X with float64 thresholds, which a
float32 comparison cannot reproduce (two float64 values that round to the
same float32 may lie on either side of a threshold): numerical columns are
handed to the engine as split ranks (see ``_flat_trees.py``).

Native categorical features: the model encodes them itself (an
``OrdinalEncoder`` inside the model, for pandas categorical columns and for
columns named by ``categorical_features``), into codes ``0 ... n - 1`` with
NaN for a missing or unknown category, and its trees index the encoded
columns, categorical first. The adapter encodes X the same way (the model's
own preprocessing), puts the columns back in the caller's order, and gives
each categorical split the set of codes its bitset sends left; the model
sends a missing or unknown category where ``missing_go_to_left`` says and
every other known code right, as the engine does.
"""

import numpy as np
from sklearn.base import is_classifier
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

from ..._utils._compat import hist_gradient_boosting_input, hist_gradient_boosting_trees
from ..._utils._scoring import StoredClassifierOutputs, StoredRegressorOutputs
from ._base import ModelAdapter
from ._flat_trees import (
    CategorySets,
    FlatTree,
    SplitRanks,
    boosted_ensemble,
    coded_in_blocks,
)


class DecisionRuleOutputs(StoredClassifierOutputs):
    """Stored probabilities and decision values of a classifier that
    predicts from its decision values (``decision > 0`` for two classes,
    the largest otherwise), not from the rounded probabilities."""

    def predict(self, X):
        if self.decision.ndim == 1:
            return self.classes[(self.decision > 0).astype(np.intp)]
        return self.classes[np.argmax(self.decision, axis=1)]


class HistGradientBoosting(ModelAdapter):
    """HistGradientBoostingClassifier and HistGradientBoostingRegressor.

    The model adds its predictors' leaf values (which include the learning
    rate) iteration by iteration, class by class, to its baseline raw score;
    the terms are in that order and are the predictors the model kept
    (early stopping included). A classifier's raw outputs are decision
    values, which its loss turns into probabilities; a regressor's go
    through its loss's inverse link.
    """

    averaged = False

    @classmethod
    def accepts(cls, estimator):
        return isinstance(
            estimator, (HistGradientBoostingClassifier, HistGradientBoostingRegressor)
        )

    def _columns(self):
        """The caller's column of each column the trees index."""
        return next(hist_gradient_boosting_trees(self.estimator))[1]

    def _split_ranks(self):
        estimator = self.estimator
        nodes = np.concatenate(
            [nodes for nodes, _ in hist_gradient_boosting_trees(estimator)]
        )
        nodes = nodes[(nodes["is_leaf"] == 0) & (nodes["is_categorical"] == 0)]
        return SplitRanks(
            self._columns()[nodes["feature_idx"]],
            nodes["num_threshold"],
            estimator.n_features_in_,
        )

    def _categorical(self):
        """Which of the caller's columns the model encodes as categories."""
        categorical = np.zeros(self.estimator.n_features_in_, dtype=bool)
        if self.estimator.is_categorical_ is not None:
            categorical[np.asarray(self.estimator.is_categorical_, dtype=bool)] = True
        return categorical

    def ensemble(self):
        estimator = self.estimator
        columns = self._columns()
        ranks = self._split_ranks()
        trees, classes = [], []
        for iteration in estimator._predictors:
            for k, predictor in enumerate(iteration):
                trees.append(self._tree(predictor, columns, ranks))
                classes.append(k)
        return boosted_ensemble(
            self,
            trees,
            classes,
            estimator.n_trees_per_iteration_,
            is_classifier(estimator),
        )

    @staticmethod
    def _tree(predictor, columns, ranks):
        nodes = predictor.nodes
        leaf = nodes["is_leaf"].astype(bool)
        feature = np.where(leaf, 0, columns[nodes["feature_idx"].astype(np.intp)])
        categorical = ~leaf & (nodes["is_categorical"] == 1)
        numerical = ~leaf & ~categorical
        threshold = np.zeros(len(nodes))
        threshold[numerical] = ranks.rank_of(
            feature[numerical], nodes["num_threshold"][numerical]
        )
        category_set = np.full(len(nodes), -1)
        sets = CategorySets()
        for node in np.flatnonzero(categorical):
            bitset = predictor.raw_left_cat_bitsets[nodes["bitset_idx"][node]]
            category_set[node] = sets.add(words=bitset)
        return FlatTree(
            np.where(leaf, -1, nodes["left"].astype(np.intp)),
            np.where(leaf, -1, nodes["right"].astype(np.intp)),
            feature,
            threshold,
            nodes["missing_go_to_left"],
            np.where(leaf, nodes["value"], 0.0),
            category_set,
            sets.words,
        )

    def engine_input(self, X):
        """X encoded and validated as the model does it (float64, missing
        values allowed), in the caller's column order, each numerical column
        replaced by its split ranks and each categorical one by its codes
        (float32); a block of rows at a time (the model's validation copies
        X as float64)."""
        columns = self._columns()
        categorical = self._categorical()
        numerical = np.flatnonzero(~categorical)
        ranks = self._split_ranks()

        def code_block(X_block):
            encoded = hist_gradient_boosting_input(self.estimator, X_block)
            values = np.empty_like(encoded)
            values[:, columns] = encoded
            coded = ranks.code(values, numerical)
            coded[:, categorical] = values[:, categorical]
            return coded

        return coded_in_blocks(X, code_block)

    def raw_start(self, X, n_outputs):
        start = np.zeros((X.shape[0], n_outputs))
        start += self.estimator._baseline_prediction
        return start

    def scorer_outputs(self, raw):
        loss = self.estimator._loss
        if not self.estimator_is_classifier:
            return StoredRegressorOutputs(loss.link.inverse(raw[:, 0]))
        return DecisionRuleOutputs(
            self.estimator.classes_,
            proba=loss.predict_proba(raw),
            decision=raw[:, 0] if raw.shape[1] == 1 else raw,
        )
