"""Adapter of Spark MLlib's tree models (``pyspark.ml``
DecisionTree*, RandomForest* and GBT* classification and regression
models), through :class:`SparkTreeModel`, a NumPy snapshot of their trees.

A Spark model's nodes live in the JVM of the session that fitted it, and it
predicts Spark DataFrames. :meth:`SparkTreeModel.from_spark` reads the trees
once, on the driver (see ``sklearn_fimp/_utils/_spark_trees.py``), into
arrays: the snapshot holds no JVM reference, pickles to Spark or Dask
workers, and predicts NumPy rows in NumPy as Spark's ``transform`` does:

- DecisionTree regression: the leaf's prediction; RandomForest regression:
  the mean of the trees' predictions; GBT regression: the sum of
  ``treeWeights[t] * tree_t(x)``;
- DecisionTree classification: the leaf's class counts
  (``impurityStats``) as raw prediction; RandomForest classification: the
  sum over trees of each leaf's class counts divided by their total (a leaf
  with total 0 adds nothing); the probabilities are the raw prediction
  divided by its sum, the prediction its first largest class;
- GBT classification (two classes): the margin ``m``, the sum of
  ``treeWeights[t] * tree_t(x)``; Spark's raw prediction is ``[-m, m]``,
  ``P(class 0) = 1 / (1 + exp(2 m))``, ``P(class 1)`` its complement, and
  the prediction class 1 when ``m > 0``.

Sums are taken tree by tree in the model's order, as Spark takes them.
Spark's labels are the doubles ``0.0 .. numClasses - 1``, so ``classes_``
is ``np.arange(numClasses, dtype=float)``.

At a continuous split a row goes left when ``x <= threshold`` in float64
(NaN goes right); at a categorical split a category goes where the split's
set says, and a value that is no category (NaN, negative, fractional, or
past the feature's ``numCategories``) goes right when Spark keeps the left
categories and left when it keeps the right ones (the larger set), as
Spark's ``CategoricalSplit`` does. Spark refuses NaN when it fits a tree,
but not when it predicts.

The engine reads the snapshot (or a pyspark.ml tree model, converted on the
way) as the boosting adapters read theirs: numerical columns as split ranks
of float64 ``x <= t`` with NaN missing and sent right, categorical columns
as category codes with one more code, ``numCategories``, for every value
that is no category, in the sets of the splits that send those left. The
terms are the trees in order, their tables what Spark's raw prediction adds
for a leaf: class counts (a decision tree) or fractions (a forest) with
divisor 1, leaf values with divisor ``n_trees`` (regression forests), or
``treeWeights[t] * leaf value`` with divisor 1 (GBT); the probabilities and
the margin's link are applied in ``scorer_outputs``.
"""

from functools import cached_property

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_array
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..._utils._scoring import StoredClassifierOutputs, StoredRegressorOutputs
from ..._utils._spark_trees import (
    SPARK_TREE_MODELS,
    is_spark_tree_model,
    prediction_nodes,
    spark_members,
)
from ._base import ModelAdapter, TreeEnsemble, TreeTerm, float32_below
from ._flat_trees import CategorySets, FlatTree, SplitRanks, coded_in_blocks
from ._sklearn_hist_boosting import DecisionRuleOutputs


def category_codes(values, n_categories):
    """Values of a categorical feature as category codes: a value that is a
    category ``0 .. n_categories - 1`` is its code (-0.0 as 0), any other
    (NaN, negative, fractional, too large) is ``n_categories``."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        known = (values >= 0) & (values < n_categories) & (values == np.floor(values))
    return np.where(known, values + 0.0, n_categories)


def spark_leaves(nodes, X):
    """The leaf each row of X (float64) reaches in one Spark tree
    (:class:`~sklearn_fimp._utils._spark_trees.PredictionNodes`), by
    Spark's rules (see the module docstring)."""
    n_rows = X.shape[0]
    rows = np.arange(n_rows)
    at = np.zeros(n_rows, dtype=np.intp)
    leaves = np.empty(n_rows, dtype=np.intp)
    while len(rows):
        split = nodes.children_left[at] >= 0
        leaves[rows[~split]] = at[~split]
        rows, at = rows[split], at[split]
        values = X[rows, nodes.feature[at]]
        go_left = values <= nodes.threshold[at]  # False for NaN
        n_categories = nodes.n_categories[at]
        categorical = np.flatnonzero(n_categories > 0)
        if len(categorical):
            nodes_c = at[categorical]
            codes = category_codes(values[categorical], n_categories[categorical])
            codes = codes.astype(np.intp)
            known = codes < n_categories[categorical]
            go_left[categorical] = np.where(
                known,
                nodes.left_categories[nodes_c, np.where(known, codes, 0)],
                nodes.unknown_left[nodes_c],
            )
        at = np.where(go_left, nodes.children_left[at], nodes.children_right[at])
    return leaves


def row_sums(values):
    """Each row's sum, added column by column from the first (as Spark sums
    a vector)."""
    total = values[:, 0].copy()
    for k in range(1, values.shape[1]):
        total += values[:, k]
    return total


def normalized_votes(raw):
    """Spark's probabilities of a decision tree or random forest classifier:
    its raw prediction divided by its sum."""
    return raw / row_sums(raw)[:, None]


def margin_probabilities(margin):
    """Spark's probabilities of a GBT classifier of margin ``margin``: the
    log loss's ``1 / (1 + exp(-2 x))`` of the raw prediction's first entry,
    ``-margin``, and its complement."""
    p0 = 1.0 / (1.0 + np.exp(2.0 * margin))
    return np.column_stack([p0, 1.0 - p0])


class SparkTreeModel(BaseEstimator):
    """A fitted pyspark.ml tree model's trees, as a scikit-learn estimator
    that predicts NumPy rows exactly as Spark's ``transform`` does (see the
    module docstring).

    Made by :meth:`from_spark`, which returns a :class:`SparkTreeClassifier`
    or a :class:`SparkTreeRegressor`; it cannot be fitted itself. Feature
    ``j`` is entry ``j`` of the model's feature vector.

    Attributes
    ----------
    n_features_in_ : int
        The model's ``numFeatures``.
    classes_ : ndarray of shape (n_classes,)
        Classifiers only: ``np.arange(numClasses, dtype=float)``.
    trees_ : list of PredictionNodes
        The trees' node arrays, in the model's order.
    tree_weights_ : ndarray of shape (n_trees,)
        The model's ``treeWeights`` (1.0 for a decision tree).
    boosted_ : bool
        Whether the trees are boosted (GBT*).
    spark_model_ : str
        The class name of the Spark model.
    """

    def __init__(self):
        pass

    @classmethod
    def from_spark(cls, model):
        """The snapshot of a fitted pyspark.ml tree model, read through its
        JVM object (a classic Spark session, not Spark Connect): a
        :class:`SparkTreeClassifier` or :class:`SparkTreeRegressor`."""
        name = type(model).__name__
        if not is_spark_tree_model(model):
            raise TypeError(
                f"model={name}(...) is not a pyspark.ml tree model; "
                "SparkTreeModel.from_spark reads the fitted DecisionTree*, "
                "RandomForest* and GBT* classification and regression models "
                "of pyspark.ml."
            )
        classification = name.endswith("ClassificationModel")
        thresholds = getattr(model, "thresholds", None)
        if classification and thresholds is not None and model.isSet(thresholds):
            raise ValueError(
                f"{name} has thresholds={model.getThresholds()}, which change "
                "its predicted classes; SparkTreeModel predicts as a model "
                "without thresholds. Clear them (model.clear(model.thresholds)) "
                "before taking the snapshot."
            )
        boosted = SPARK_TREE_MODELS[name]
        members = spark_members(model)
        n_classes = int(model.numClasses) if classification else None
        snapshot = SparkTreeClassifier() if classification else SparkTreeRegressor()
        snapshot.trees_ = [
            prediction_nodes(
                tree,
                n_classes=None if boosted else n_classes,
                reader="SparkTreeModel.from_spark",
            )
            for tree in members
        ]
        weights = model.treeWeights if hasattr(model, "treeWeights") else [1.0]
        snapshot.tree_weights_ = np.asarray(weights, dtype=np.float64)
        snapshot.boosted_ = boosted
        snapshot.spark_model_ = name
        snapshot.n_features_in_ = int(model.numFeatures)
        if classification:
            snapshot.classes_ = np.arange(n_classes, dtype=np.float64)
        return snapshot

    def fit(self, X, y=None):
        """Not available: the snapshot is of a model Spark fitted."""
        raise TypeError(
            f"{type(self).__name__} is a snapshot of a fitted pyspark.ml model "
            "and cannot be fitted: fit the Spark estimator on a Spark DataFrame "
            "and take SparkTreeModel.from_spark(model)."
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @property
    def _votes(self):
        """Whether the raw prediction is class counts or fractions (decision
        tree and random forest classifiers)."""
        return not self.boosted_ and hasattr(self, "classes_")

    @property
    def averaged(self):
        """Whether the raw prediction is the mean of the trees' (regression
        forests) rather than their sum."""
        return not self.boosted_ and not hasattr(self, "classes_")

    def leaf_tables(self):
        """Per tree, ``(node_count, n_outputs)``: what a row reaching each
        leaf adds to the raw prediction (class counts, class fractions,
        leaf values or weighted leaf values; see the module docstring)."""
        check_is_fitted(self)
        if self._votes and self.spark_model_.startswith("DecisionTree"):
            return [tree.class_counts for tree in self.trees_]
        if self._votes:
            tables = []
            for tree in self.trees_:
                total = row_sums(tree.class_counts)
                fractions = np.zeros_like(tree.class_counts)
                nonzero = total != 0
                fractions[nonzero] = tree.class_counts[nonzero] / total[nonzero, None]
                tables.append(fractions)
            return tables
        if self.boosted_:
            return [
                (weight * tree.prediction)[:, None]
                for tree, weight in zip(self.trees_, self.tree_weights_, strict=True)
            ]
        return [tree.prediction[:, None] for tree in self.trees_]

    def _validated(self, X):
        check_is_fitted(self)
        X = check_array(X, dtype=np.float64, ensure_all_finite=False, input_name="X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is "
                f"expecting {self.n_features_in_} features as input."
            )
        return X

    def raw_prediction(self, X):
        """``(n_rows, n_outputs)``: the trees' tables added tree by tree in
        order (divided by the number of trees for a regression forest):
        Spark's raw prediction of a decision tree or random forest
        classifier, the margin of a GBT classifier, a regressor's
        prediction."""
        X = self._validated(X)
        tables = self.leaf_tables()
        raw = np.zeros((X.shape[0], tables[0].shape[1]))
        for tree, table in zip(self.trees_, tables, strict=True):
            raw += table[spark_leaves(tree, X)]
        if self.averaged:
            raw /= len(self.trees_)
        return raw


class SparkTreeClassifier(ClassifierMixin, SparkTreeModel):
    """:class:`SparkTreeModel` of a pyspark.ml classification model."""

    def predict(self, X):
        """Spark's ``prediction`` of each row."""
        raw = self.raw_prediction(X)
        if self.boosted_:
            return self.classes_[(raw[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(raw, axis=1)]

    def predict_proba(self, X):
        """Spark's ``probability`` of each row."""
        raw = self.raw_prediction(X)
        if self.boosted_:
            return margin_probabilities(raw[:, 0])
        return normalized_votes(raw)

    @available_if(lambda self: self.boosted_)
    def decision_function(self, X):
        """GBT classifiers: the margin, Spark's ``rawPrediction[1]``."""
        return self.raw_prediction(X)[:, 0]


class SparkTreeRegressor(RegressorMixin, SparkTreeModel):
    """:class:`SparkTreeModel` of a pyspark.ml regression model."""

    def predict(self, X):
        """Spark's ``prediction`` of each row."""
        return self.raw_prediction(X)[:, 0]


def spark_tree_model(model):
    """:meth:`SparkTreeModel.from_spark` of a fitted pyspark.ml tree model,
    or ``model`` itself when it is already a :class:`SparkTreeModel`."""
    if isinstance(model, SparkTreeModel):
        return model
    return SparkTreeModel.from_spark(model)


class SparkML(ModelAdapter):
    """:class:`SparkTreeModel` and the pyspark.ml tree models themselves
    (read into a snapshot when the adapter is made; see the module
    docstring)."""

    def __init__(self, estimator):
        super().__init__(spark_tree_model(estimator))

    @classmethod
    def accepts(cls, estimator):
        if isinstance(estimator, SparkTreeModel):
            return hasattr(estimator, "trees_")
        return is_spark_tree_model(estimator)

    @property
    def averaged(self):
        return self.estimator.averaged

    @cached_property
    def _columns(self):
        """The split ranks of the continuous splits' thresholds, and each
        column's number of categories (0: numerical); None when a column
        has splits of both kinds."""
        model = self.estimator
        n_columns = model.n_features_in_
        n_categories = np.zeros(n_columns, dtype=np.intp)
        features, thresholds = [], []
        for tree in model.trees_:
            categorical = tree.n_categories > 0
            continuous = (tree.feature >= 0) & ~categorical
            features.append(tree.feature[continuous])
            thresholds.append(tree.threshold[continuous])
            n_categories[tree.feature[categorical]] = tree.n_categories[categorical]
        features = np.concatenate(features)
        if np.any(n_categories[features] > 0):
            return None
        ranks = SplitRanks(features, np.concatenate(thresholds), n_columns)
        return ranks, n_categories

    def ensemble(self):
        if self._columns is None:
            return None
        model = self.estimator
        terms = []
        for tree, table in zip(model.trees_, model.leaf_tables(), strict=True):
            flat = self._tree(tree, table)
            terms.append(
                TreeTerm(flat, None, None, table, float32_below(flat.threshold))
            )
        n_outputs = terms[0].table.shape[1]
        return TreeEnsemble(terms, n_outputs, self, self.estimator_is_classifier)

    def _tree(self, tree, table):
        ranks, _ = self._columns
        internal = tree.feature >= 0
        continuous = internal & (tree.n_categories == 0)
        threshold = np.zeros(tree.node_count)
        threshold[continuous] = ranks.rank_of(
            tree.feature[continuous], tree.threshold[continuous]
        )
        category_set = np.full(tree.node_count, -1)
        sets = CategorySets()
        for node in np.flatnonzero(tree.n_categories):
            left = np.flatnonzero(tree.left_categories[node])
            if tree.unknown_left[node]:  # the code of every value that is no category
                left = np.append(left, tree.n_categories[node])
            category_set[node] = sets.add(left_codes=left)
        return FlatTree(
            tree.children_left,
            tree.children_right,
            tree.feature,
            threshold,
            np.zeros(tree.node_count, dtype=np.uint8),  # NaN goes right
            table,
            category_set,
            sets.words,
        )

    def engine_input(self, X):
        """X coded as the module docstring says (float32), a block of rows
        at a time."""
        ranks, n_categories = self._columns
        numerical = np.flatnonzero(n_categories == 0)
        categorical = np.flatnonzero(n_categories)

        def code_block(X_block):
            values = self.estimator._validated(X_block)
            coded = ranks.code(values, numerical)
            for c in categorical:
                coded[:, c] = category_codes(values[:, c], n_categories[c])
            return coded

        return coded_in_blocks(X, code_block)

    def scorer_outputs(self, raw):
        model = self.estimator
        if not self.estimator_is_classifier:
            return StoredRegressorOutputs(raw[:, 0])
        if model.boosted_:
            margin = raw[:, 0]
            return DecisionRuleOutputs(
                model.classes_, proba=margin_probabilities(margin), decision=margin
            )
        return StoredClassifierOutputs(model.classes_, proba=normalized_votes(raw))
