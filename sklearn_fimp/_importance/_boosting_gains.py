"""Split gains of XGBoost and LightGBM models, read without importing them.

Both libraries record, for every split, the reduction of the training loss
it brought (its "gain"); summed per feature over a tree, it is the analogue
of the impurity decrease MDI sums for scikit-learn's trees, and the total
over trees is what the libraries report as ``importance_type="total_gain"``
(XGBoost) or ``"gain"`` (LightGBM).
"""

import json

import numpy as np

from .._utils._models import is_lightgbm_trees, is_xgboost_trees


def _xgboost_gains(estimator, n_features):
    booster = estimator.get_booster()
    names = booster.feature_names or [f"f{i}" for i in range(n_features)]
    position = {name: i for i, name in enumerate(names)}
    vectors = []
    for dump in booster.get_dump(with_stats=True, dump_format="json"):
        gains = np.zeros(n_features)
        stack = [json.loads(dump)]
        while stack:
            node = stack.pop()
            if "split" in node:
                gains[position[node["split"]]] += node["gain"]
                stack.extend(node["children"])
        vectors.append(gains)
    return vectors


def _lightgbm_gains(estimator, n_features):
    vectors = []
    for tree in estimator.booster_.dump_model()["tree_info"]:
        gains = np.zeros(n_features)
        stack = [tree["tree_structure"]]
        while stack:
            node = stack.pop()
            if "split_feature" in node:
                gains[node["split_feature"]] += node["split_gain"]
                stack.extend((node["left_child"], node["right_child"]))
        vectors.append(gains)
    return vectors


def boosting_library_gains(estimator):
    """Per-tree total split gain of each feature of a fitted XGBoost or
    LightGBM model (trees without a split left out), or None for a model
    of neither library."""
    if is_xgboost_trees(estimator):
        vectors = _xgboost_gains(estimator, estimator.n_features_in_)
    elif is_lightgbm_trees(estimator):
        vectors = _lightgbm_gains(estimator, estimator.n_features_in_)
    else:
        return None
    return [gains for gains in vectors if gains.any()]
