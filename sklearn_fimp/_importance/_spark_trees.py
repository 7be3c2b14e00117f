"""Node arrays of fitted Spark MLlib (``pyspark.ml``) tree models.

A Spark tree model keeps its nodes in the JVM. They are read through the
model's Python handle on its JVM object: ``model.trees``, then each tree's
``rootNode()``, an ``InternalNode`` or ``LeafNode`` whose ``impurityStats()``
give the impurity of the node's training rows (``calculate()``) and their
weighted number (``count()``), with ``split().featureIndex()``,
``leftChild()`` and ``rightChild()`` for internal nodes. They become the
arrays scikit-learn's ``tree_`` holds, so that the impurity decreases of
both libraries are computed by the same code; pyspark is not imported.
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


class NodeArrays(NamedTuple):
    """The node arrays of one tree, with scikit-learn's ``tree_`` names."""

    node_count: int
    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    impurity: np.ndarray
    weighted_n_node_samples: np.ndarray


def is_spark_model(estimator):
    """Whether ``estimator`` is a model of ``pyspark.ml``."""
    return type(estimator).__module__.startswith("pyspark.ml")


def _java_tree(tree):
    java = getattr(tree, "_java_obj", None)
    if java is None:
        raise TypeError(
            f"{type(tree).__name__} has no JVM object to read its nodes from "
            "(a Spark Connect model?); mdi_importance reads the trees of a "
            "pyspark.ml model fitted in a classic (JVM-backed) Spark session."
        )
    return java


def _node_arrays(tree):
    """Node arrays of one pyspark.ml decision tree model, nodes numbered in
    depth-first order (a parent before its children)."""
    left, right, feature, impurity, weight = [], [], [], [], []
    stack = [(_java_tree(tree).rootNode(), -1, False)]
    while stack:
        node, parent, is_right = stack.pop()
        index = len(left)
        if parent >= 0:
            (right if is_right else left)[parent] = index
        left.append(-1)
        right.append(-1)
        stats = node.impurityStats()
        # the impurity of the node's training rows; ``node.impurity()`` is -1
        # for some leaves (a marker Spark sets on nodes it did not try to split)
        impurity.append(float(stats.calculate()))
        weight.append(float(stats.count()))
        if node.getClass().getSimpleName() == "InternalNode":
            feature.append(int(node.split().featureIndex()))
            stack.append((node.rightChild(), index, True))
            stack.append((node.leftChild(), index, False))
        else:
            feature.append(-2)
    return NodeArrays(
        len(left),
        np.asarray(left, dtype=np.intp),
        np.asarray(right, dtype=np.intp),
        np.asarray(feature, dtype=np.intp),
        np.asarray(impurity, dtype=np.float64),
        np.asarray(weight, dtype=np.float64),
    )


def spark_trees(model):
    """``(trees, boosted, n_features)`` of a fitted pyspark.ml tree model:
    the node arrays of each of its trees and whether they are boosted."""
    name = type(model).__name__
    if name not in SPARK_TREE_MODELS:
        raise TypeError(
            f"estimator={name}(...) is a pyspark.ml model without trees to "
            "read; mdi_importance reads DecisionTree*, RandomForest* and GBT* "
            "classification and regression models of pyspark.ml."
        )
    members = model.trees if hasattr(model, "trees") else [model]
    trees = [_node_arrays(tree) for tree in members]
    return trees, SPARK_TREE_MODELS[name], int(model.numFeatures)
