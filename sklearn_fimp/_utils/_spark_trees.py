"""Reading the nodes of fitted Spark MLlib (``pyspark.ml``) tree models.

A Spark tree model keeps its nodes in the JVM. They are read through the
model's Python handle on its JVM object: ``model.trees`` (a decision tree
model is its own only tree), then each tree's ``rootNode()``, an
``InternalNode`` (``split()``, ``leftChild()``, ``rightChild()``) or a
``LeafNode``; every node has ``prediction()`` and ``impurityStats()``. Each
call is a round trip to the JVM, so a tree is read once, node by node, into
NumPy arrays, its nodes numbered depth first (a parent before its children,
the left subtree first). pyspark is not imported.

How Spark sends a row at a split (``Split.shouldGoLeft`` of Spark's
``ml.tree``):

- a ``ContinuousSplit`` sends it left when ``x <= threshold`` in float64,
  so a NaN goes right;
- a ``CategoricalSplit`` keeps the smaller of its two sets of categories:
  its left categories when there are at most ``numCategories // 2`` of
  them, else the right ones, and sends a row left when its value is in the
  left set, or is not in the right set. A value that is no category
  (NaN, negative, fractional, ``numCategories`` or more) is in neither, so
  it goes right at the first kind of split and left at the second.

:func:`prediction_nodes` reads what a tree predicts with (the engine's
adapter and ``SparkTreeModel``); ``sklearn_fimp._importance._spark_trees``
reads the impurities for ``mdi_importance``.
"""

from typing import NamedTuple

import numpy as np

#: the fitted tree models of pyspark.ml, and whether their trees are boosted
SPARK_TREE_MODELS = {
    "DecisionTreeClassificationModel": False,
    "DecisionTreeRegressionModel": False,
    "RandomForestClassificationModel": False,
    "RandomForestRegressionModel": False,
    "GBTClassificationModel": True,
    "GBTRegressionModel": True,
}


def is_spark_model(estimator):
    """Whether ``estimator`` is a model of ``pyspark.ml``."""
    return type(estimator).__module__.startswith("pyspark.ml")


def is_spark_tree_model(estimator):
    """Whether ``estimator`` is one of the tree models of ``pyspark.ml``
    (:data:`SPARK_TREE_MODELS`)."""
    return is_spark_model(estimator) and type(estimator).__name__ in SPARK_TREE_MODELS


def spark_members(model):
    """The decision tree models a fitted pyspark.ml tree model is made of
    (a decision tree model: itself)."""
    return model.trees if hasattr(model, "trees") else [model]


def java_tree(tree, reader="sklearn_fimp"):
    """The JVM object of a pyspark.ml decision tree model; ``reader`` names
    what reads it in the error raised without one."""
    java = getattr(tree, "_java_obj", None)
    if java is None:
        raise TypeError(
            f"{type(tree).__name__} has no JVM object to read its nodes from "
            f"(a Spark Connect model?); {reader} reads the trees of a "
            "pyspark.ml model fitted in a classic (JVM-backed) Spark session."
        )
    return java


def depth_first(tree, visit, reader="sklearn_fimp"):
    """Call ``visit(node, internal)`` on the JVM nodes of a pyspark.ml
    decision tree model, depth first (a parent before its children, the
    left subtree first); returns the children arrays ``(children_left,
    children_right)`` of that numbering, -1 at leaves."""
    left, right = [], []
    stack = [(java_tree(tree, reader).rootNode(), -1, False)]
    while stack:
        node, parent, is_right = stack.pop()
        index = len(left)
        if parent >= 0:
            (right if is_right else left)[parent] = index
        left.append(-1)
        right.append(-1)
        internal = node.getClass().getSimpleName() == "InternalNode"
        visit(node, internal)
        if internal:
            stack.append((node.rightChild(), index, True))
            stack.append((node.leftChild(), index, False))
    return np.asarray(left, dtype=np.intp), np.asarray(right, dtype=np.intp)


class PredictionNodes(NamedTuple):
    """One Spark tree's nodes as it predicts, numbered depth first."""

    children_left: np.ndarray
    children_right: np.ndarray
    #: the split's feature; -2 at leaves
    feature: np.ndarray
    #: continuous splits: ``x <= threshold`` goes left; NaN at other nodes
    threshold: np.ndarray
    #: categorical splits: the feature's number of categories; 0 elsewhere
    n_categories: np.ndarray
    #: ``(node_count, max(n_categories))`` bool: whether a categorical
    #: split sends each category left
    left_categories: np.ndarray
    #: categorical splits: whether a value that is no category goes left
    unknown_left: np.ndarray
    #: leaves: ``prediction()`` (a class label or a value); 0 elsewhere
    prediction: np.ndarray
    #: leaves of classification trees: ``impurityStats().stats()``, the
    #: weighted count of each class; None for regression trees
    class_counts: np.ndarray | None

    @property
    def node_count(self):
        return len(self.children_left)


def prediction_nodes(tree, *, n_classes=None, reader="sklearn_fimp"):
    """:class:`PredictionNodes` of a pyspark.ml decision tree model;
    ``n_classes``: read each leaf's class counts (classification trees)."""
    feature, threshold, n_categories, left_sets, prediction, counts = (
        [] for _ in range(6)
    )

    def visit(node, internal):
        if not internal:
            feature.append(-2)
            threshold.append(np.nan)
            n_categories.append(0)
            left_sets.append(())
            prediction.append(float(node.prediction()))
            if n_classes is not None:
                counts.append([float(v) for v in node.impurityStats().stats()])
            return
        split = node.split()
        feature.append(int(split.featureIndex()))
        prediction.append(0.0)
        if n_classes is not None:
            counts.append([0.0] * n_classes)
        if split.getClass().getSimpleName() == "CategoricalSplit":
            threshold.append(np.nan)
            n_categories.append(int(split.numCategories()))
            left_sets.append([int(c) for c in split.leftCategories()])
        else:
            threshold.append(float(split.threshold()))
            n_categories.append(0)
            left_sets.append(())

    children_left, children_right = depth_first(tree, visit, reader)
    n_categories = np.asarray(n_categories, dtype=np.intp)
    table = np.zeros((len(feature), int(n_categories.max())), dtype=bool)
    unknown_left = np.zeros(len(feature), dtype=bool)
    for node in np.flatnonzero(n_categories):
        table[node, left_sets[node]] = True
        # Spark keeps the right categories when the left are more than half
        unknown_left[node] = len(left_sets[node]) > n_categories[node] // 2
    return PredictionNodes(
        children_left,
        children_right,
        np.asarray(feature, dtype=np.intp),
        np.asarray(threshold, dtype=np.float64),
        n_categories,
        table,
        unknown_left,
        np.asarray(prediction, dtype=np.float64),
        None if n_classes is None else np.asarray(counts, dtype=np.float64),
    )
