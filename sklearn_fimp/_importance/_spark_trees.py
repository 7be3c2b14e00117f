"""Node arrays of fitted Spark MLlib (``pyspark.ml``) tree models for
``mdi_importance``.

The nodes are read from the model's JVM object (see
``sklearn_fimp/_utils/_spark_trees.py``): each node's ``impurityStats()``
give the impurity of the node's training rows (``calculate()``) and their
weighted number (``count()``), and internal nodes their
``split().featureIndex()``. They become the arrays scikit-learn's ``tree_``
holds, so that the impurity decreases of both libraries are computed by the
same code; pyspark is not imported.
"""

from typing import NamedTuple

import numpy as np

from .._utils._spark_trees import (
    SPARK_TREE_MODELS,
    depth_first,
    is_spark_model,
    spark_members,
)

__all__ = ["NodeArrays", "is_spark_model", "spark_trees"]


class NodeArrays(NamedTuple):
    """The node arrays of one tree, with scikit-learn's ``tree_`` names."""

    node_count: int
    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    impurity: np.ndarray
    weighted_n_node_samples: np.ndarray


def _node_arrays(tree):
    """Node arrays of one pyspark.ml decision tree model, nodes numbered in
    depth-first order (a parent before its children)."""
    feature, impurity, weight = [], [], []

    def visit(node, internal):
        stats = node.impurityStats()
        # the impurity of the node's training rows; ``node.impurity()`` is -1
        # for some leaves (a marker Spark sets on nodes it did not try to split)
        impurity.append(float(stats.calculate()))
        weight.append(float(stats.count()))
        feature.append(int(node.split().featureIndex()) if internal else -2)

    left, right = depth_first(tree, visit, reader="mdi_importance")
    return NodeArrays(
        len(left),
        left,
        right,
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
    trees = [_node_arrays(tree) for tree in spark_members(model)]
    return trees, SPARK_TREE_MODELS[name], int(model.numFeatures)
