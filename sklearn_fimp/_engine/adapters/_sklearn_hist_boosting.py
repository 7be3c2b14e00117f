"""Adapter of scikit-learn's HistGradientBoosting* (one tree per class per
iteration, added to the baseline raw score).

The model's predictor compares float64 X with float64 thresholds, which a
float32 comparison cannot reproduce (two float64 values that round to the
same float32 may lie on either side of a threshold). The adapter therefore
hands the engine each column's *split rank*: for column ``c`` with the sorted
distinct thresholds ``T_c`` of all the model's splits on it, a value ``x``
becomes the number of thresholds below it, ``searchsorted(T_c, x)``, and the
split on ``T_c[k]`` becomes ``rank <= k``. Then ``x <= T_c[k]`` exactly when
``rank(x) <= k``, so every split sends every row where the model sends it;
the ranks are small integers (at most ``max_bins`` thresholds per column),
exact in float32, and a missing value stays missing (routed by
``missing_go_to_left``). Permuting a column of ranks is ranking the permuted
column, so the engine's permutations are the model's.

Native categorical splits (bitsets) are not intervals of any ordering the
kernels know; a model with categorical features is left to the
predict-every-row path (:meth:`HistGradientBoosting.ensemble` returns None).
"""

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.base import is_classifier
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from sklearn.utils.validation import validate_data

from ..._utils._scoring import StoredClassifierOutputs, StoredRegressorOutputs
from ._base import ModelAdapter, TreeEnsemble, TreeTerm, float32_below


class HistTree:
    """One predictor of a HistGradientBoosting model in the ``Tree``
    interface the engine reads (see ``_base.py``), with thresholds as split
    ranks (see the module docstring) and a NumPy ``apply`` and
    ``decision_path`` over rows of ranks."""

    def __init__(self, nodes, split_values):
        leaf = nodes["is_leaf"].astype(bool)
        self.node_count = len(nodes)
        self.children_left = np.where(leaf, -1, nodes["left"]).astype(np.intp)
        self.children_right = np.where(leaf, -1, nodes["right"]).astype(np.intp)
        self.feature = np.where(leaf, -2, nodes["feature_idx"]).astype(np.intp)
        self.missing_go_to_left = nodes["missing_go_to_left"].astype(np.uint8)
        self.threshold = np.full(self.node_count, -2.0)
        for node in np.flatnonzero(~leaf):
            values = split_values[self.feature[node]]
            self.threshold[node] = np.searchsorted(values, nodes["num_threshold"][node])
        self.max_depth = int(nodes["depth"].max())
        self.value = nodes["value"]

    def _descend(self, X, on_level=None):
        """Each row's leaf; ``on_level(rows, nodes)`` sees the rows still
        descending and their nodes, level by level from the root."""
        X = np.asarray(X)
        rows = np.arange(X.shape[0])
        at = np.zeros(X.shape[0], dtype=np.intp)
        leaves = np.empty(X.shape[0], dtype=np.intp)
        while len(rows):
            if on_level is not None:
                on_level(rows, at)
            split = self.feature[at] >= 0
            leaves[rows[~split]] = at[~split]
            rows, at = rows[split], at[split]
            values = X[rows, self.feature[at]]
            go_left = np.where(
                np.isnan(values),
                self.missing_go_to_left[at].astype(bool),
                values <= self.threshold[at],
            )
            at = np.where(go_left, self.children_left[at], self.children_right[at])
        return leaves

    def apply(self, X):
        """The leaf of each row."""
        return self._descend(X)

    def decision_path(self, X):
        """``(n_rows, node_count)`` indicator of the nodes each row passes
        through, as scikit-learn's trees return it (node ids increase along
        a path: the predictor's nodes are numbered depth first)."""
        row_parts, node_parts = [], []

        def on_level(rows, nodes):
            row_parts.append(rows)
            node_parts.append(nodes)

        n_rows = np.asarray(X).shape[0]
        self._descend(X, on_level)
        rows = np.concatenate(row_parts) if row_parts else np.empty(0, np.intp)
        nodes = np.concatenate(node_parts) if node_parts else np.empty(0, np.intp)
        order = np.argsort(rows, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_rows))])
        return csr_matrix(
            (np.ones(len(rows), dtype=np.int8), nodes[order], indptr),
            shape=(n_rows, self.node_count),
        )


def split_values(estimator):
    """Per column of X, the sorted distinct thresholds of the model's
    numerical splits on it."""
    nodes = np.concatenate(
        [
            predictor.nodes
            for iteration in estimator._predictors
            for predictor in iteration
        ]
    )
    nodes = nodes[nodes["is_leaf"] == 0]
    return [
        np.unique(nodes["num_threshold"][nodes["feature_idx"] == c])
        for c in range(estimator.n_features_in_)
    ]


class DecisionRuleOutputs(StoredClassifierOutputs):
    """Stored probabilities and decision values of a classifier that
    predicts from its decision values (HistGradientBoostingClassifier:
    ``decision > 0`` for two classes, the largest otherwise), not from the
    rounded probabilities."""

    def predict(self, X):
        if self.decision.ndim == 1:
            return self.classes[(self.decision > 0).astype(np.intp)]
        return self.classes[np.argmax(self.decision, axis=1)]


class HistGradientBoosting(ModelAdapter):
    """HistGradientBoostingClassifier and HistGradientBoostingRegressor
    without categorical features.

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

    def ensemble(self):
        estimator = self.estimator
        if estimator.is_categorical_ is not None and estimator.is_categorical_.any():
            return None
        values = split_values(estimator)
        n_columns = estimator.n_trees_per_iteration_
        terms = []
        for iteration in estimator._predictors:
            for k, predictor in enumerate(iteration):
                tree = HistTree(predictor.nodes, values)
                terms.append(
                    TreeTerm(
                        tree,
                        None,
                        None if n_columns == 1 else np.array([k]),
                        tree.value[:, None].astype(np.float64),
                        float32_below(tree.threshold),
                    )
                )
        if not terms:
            return None
        return TreeEnsemble(terms, n_columns, self, is_classifier(estimator))

    def engine_input(self, X):
        """X validated as the model validates it (float64, missing values
        allowed), each column replaced by its split ranks (float32)."""
        X = validate_data(
            self.estimator,
            X,
            reset=False,
            dtype=np.float64,
            ensure_all_finite=False,
        )
        ranks = np.zeros(X.shape, dtype=np.float32)
        for c, values in enumerate(split_values(self.estimator)):
            if len(values):
                ranks[:, c] = np.searchsorted(values, X[:, c])
            ranks[np.isnan(X[:, c]), c] = np.nan
        return ranks

    def raw_start(self, X, n_outputs):
        start = np.zeros((X.shape[0], n_outputs))
        start += self.estimator._baseline_prediction
        return start

    def scorer_outputs(self, raw):
        loss = self.estimator._loss
        if not is_classifier(self.estimator):
            return StoredRegressorOutputs(loss.link.inverse(raw[:, 0]))
        return DecisionRuleOutputs(
            self.estimator.classes_,
            proba=loss.predict_proba(raw),
            decision=raw[:, 0] if raw.shape[1] == 1 else raw,
        )
