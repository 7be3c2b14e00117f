"""Adapter of CatBoost's scikit-learn models (CatBoostClassifier,
CatBoostRegressor, and the plain ``CatBoost`` model, a regressor to
scikit-learn) on numerical features.

The trees come from the model's JSON export (``save_model(...,
format="json")``): CatBoost grows *oblivious* trees, in which every node of
a level splits on the same feature and border. Per tree, ``splits`` lists
one split per level (a float feature and a float32 border) and
``leaf_values`` its ``2**depth`` leaves (times the number of outputs,
output by output within a leaf); a row's leaf is ``sum over levels k of
bit_k << k``, with ``bit_k`` = 1 when the value of the split of ``splits[k]``
is above its border. CatBoost reads X in float32 and compares it with the
float32 border (``x > border`` sets the bit); a missing value is read as
-inf (``nan_value_treatment`` "AsFalse", CatBoost's ``nan_mode="Min"``, and
"AsIs": a column with no missing value in training, or ``"Forbidden"``) or
+inf ("AsTrue", ``nan_mode="Max"``). The adapter builds each oblivious tree
as a full binary tree (level ``k`` splits on ``splits[k]``, its left child
the bit 0), and hands the engine split ranks of ``x <= border`` in float32
(see ``_flat_trees.py``), with a missing value coded as the rank of -inf or
+inf of its column, so that it goes where CatBoost sends it.

The raw output is ``scale * (sum of the trees' leaf values) + bias``
(``scale_and_bias``): the engine adds ``scale * leaf value`` to the bias,
tree by tree, in float64, as CatBoost sums them (the same to the last bit
when ``scale`` is 1, CatBoost's default). The loss gives the link (``LINKS``):
the sigmoid of the raw output for Logloss and CrossEntropy (the label is
class 1 when the raw output is above 0, CatBoost's rule at its default
probability threshold), the softmax for MultiClass (the label the largest
raw output), the exponential for Poisson and Tweedie (as
``CatBoostRegressor.predict`` by default), the identity otherwise; a plain
``CatBoost`` model predicts the raw output whatever its loss (the adapter
takes it with a regression loss; with a classification loss scikit-learn
takes it for a classifier whose ``predict`` gives raw values, and it takes
the predict-every-row path). With
``scoring=None`` a regressor is scored as ``CatBoostRegressor.score``
scores it (one R² pooled over the outputs).

Out of reach, taking the predict-every-row path: categorical features
(``cat_features``, and the CTRs and one-hot splits built on them), text and
embedding features, losses not in ``LINKS``, and binary classifiers with a
probability threshold other than 0.5 (``set_probability_threshold``).
"""

import json
import os
import tempfile

import numpy as np
from sklearn.base import is_classifier

from ..._utils._models import is_catboost_model
from ..._utils._scoring import StoredClassifierOutputs, StoredRegressorOutputs
from ._base import ModelAdapter, TreeEnsemble, TreeTerm, float32_below
from ._flat_trees import FlatTree, SplitRanks, linked_outputs

#: CatBoost's losses the adapter takes, and their links.
LINKS = {
    "Logloss": "sigmoid",
    "CrossEntropy": "sigmoid",
    "MultiClass": "softmax",
    "RMSE": "identity",
    "MultiRMSE": "identity",
    "MAE": "identity",
    "Quantile": "identity",
    "Expectile": "identity",
    "MAPE": "identity",
    "Huber": "identity",
    "Lq": "identity",
    "Poisson": "exp",
    "Tweedie": "exp",
}

#: nan_value_treatment values that read a missing value as +inf (the others
#: read it as -inf)
_NAN_AS_HIGH = "AsTrue"


class CatBoostOutputs(StoredClassifierOutputs):
    """Probabilities of a CatBoost classifier, and its labels as its
    ``predict`` gives them: from the raw outputs (above 0 for two classes,
    the largest otherwise), not from the rounded probabilities."""

    def __init__(self, classes, proba=None, raw=None):
        super().__init__(classes, proba=proba)
        self.raw = raw

    def predict(self, X):
        if self.raw.shape[1] == 1:
            return self.classes[(self.raw[:, 0] > 0).astype(np.intp)]
        return self.classes[np.argmax(self.raw, axis=1)]


class CatBoostRegressorOutputs(StoredRegressorOutputs):
    """Predictions of a CatBoost regressor, scored (``scoring=None``) as
    ``CatBoostRegressor.score`` scores them: one R² over all outputs
    (residual over total sum of squares, pooled), which for several
    outputs is not scikit-learn's average of the outputs' R²; like it, it
    takes no sample weights."""

    def score(self, X, y):
        predictions = np.asarray(self.values)
        y = np.asarray(y, dtype=np.float64).reshape(predictions.shape)
        total = np.sum((y - y.mean(axis=0)) ** 2)
        return float(1 - np.sum((y - predictions) ** 2) / total)


class CatBoost(ModelAdapter):
    """CatBoostClassifier, CatBoostRegressor and the plain CatBoost model
    (see the module docstring)."""

    averaged = False

    @classmethod
    def accepts(cls, estimator):
        return is_catboost_model(estimator)

    def _model(self):
        """The model's JSON export (written and parsed once per adapter)."""
        if not hasattr(self, "_json"):
            with tempfile.TemporaryDirectory() as directory:
                path = os.path.join(directory, "model.json")
                self.estimator.save_model(path, format="json")
                with open(path, encoding="utf-8") as file:
                    self._json = json.load(file)
        return self._json

    def _loss(self):
        return self._model()["model_info"]["params"]["loss_function"]["type"]

    def _plain(self):
        """Whether the model is a plain ``CatBoost`` one."""
        from catboost import CatBoostClassifier, CatBoostRegressor

        return not isinstance(self.estimator, (CatBoostClassifier, CatBoostRegressor))

    def _link(self):
        """The loss's link; the raw output for a plain ``CatBoost`` model,
        whose ``predict`` gives it whatever the loss."""
        return "identity" if self._plain() else LINKS[self._loss()]

    def _float_features(self):
        """Per float feature (CatBoost's ``float_feature_index``): its
        column of X and whether a missing value reads as +inf."""
        features = self._model()["features_info"]["float_features"]
        column = {f["feature_index"]: f["flat_feature_index"] for f in features}
        high = {
            f["flat_feature_index"]: f.get("nan_value_treatment") == _NAN_AS_HIGH
            for f in features
        }
        return column, high

    def _numeric_only(self):
        """Whether every feature and split is numerical."""
        info = self._model()["features_info"]
        if any(info.get(key) for key in info if key != "float_features"):
            return False  # categorical, text or embedding features
        return all(
            split.get("split_type") == "FloatFeature"
            for tree in self._model()["oblivious_trees"]
            for split in tree["splits"]
        )

    def _split_ranks(self):
        """The model's split ranks (built once per adapter)."""
        if hasattr(self, "_ranks"):
            return self._ranks
        column, _ = self._float_features()
        features, borders = [], []
        for tree in self._model()["oblivious_trees"]:
            for split in tree["splits"]:
                features.append(column[split["float_feature_index"]])
                borders.append(split["border"])
        self._ranks = SplitRanks(
            np.asarray(features, dtype=np.intp),
            np.asarray(borders, dtype=np.float64),
            self._n_features(),
            dtype=np.float32,
        )
        return self._ranks

    def _n_features(self):
        """The number of columns of X: the model's, or, where an unpickled
        model reports 0 (CatBoost 1.2's ``n_features_in_`` after pickling,
        as when a model is sent to a Dask or Spark worker), its export's."""
        info = self._model()["features_info"]
        flat = [
            feature["flat_feature_index"]
            for features in info.values()
            for feature in features
            if isinstance(feature, dict) and "flat_feature_index" in feature
        ]
        return max(int(self.estimator.n_features_in_), max(flat, default=-1) + 1)

    def _scale_and_bias(self):
        scale, bias = self._model()["scale_and_bias"]
        return float(scale), np.asarray(bias, dtype=np.float64).ravel()

    def ensemble(self):
        if self._loss() not in LINKS or not self._numeric_only():
            return None
        if self._plain() and is_classifier(self.estimator):
            # a classification loss: scikit-learn's scorers read its predict
            # (raw values) as labels and its predict_proba as probabilities
            return None
        if (
            is_classifier(self.estimator)
            and self._link() == "sigmoid"
            and self.estimator.get_probability_threshold() != 0.5
        ):
            return None
        scale, bias = self._scale_and_bias()
        n_outputs = len(bias)
        ranks = self._split_ranks()
        column, _ = self._float_features()
        terms = []
        for tree in self._model()["oblivious_trees"]:
            if not tree["splits"]:
                continue  # a constant: added to the start (raw_start)
            flat = _oblivious_tree(tree, column, ranks, scale, n_outputs)
            thresholds = float32_below(flat.threshold)
            terms.append(TreeTerm(flat, None, None, flat.value, thresholds))
        if not terms:
            return None
        return TreeEnsemble(terms, n_outputs, self, is_classifier(self.estimator))

    def engine_input(self, X):
        """X as CatBoost reads it (float32, a missing value as -inf or +inf
        by its column's treatment), coded as split ranks."""
        values = np.asarray(X, dtype=np.float64)
        n_features = self._n_features()
        if values.ndim != 2 or values.shape[1] != n_features:
            name = type(self.estimator).__name__
            raise ValueError(
                f"X has {values.shape[-1]} features, but {name} is expecting "
                f"{n_features} features as input."
            )
        values = values.astype(np.float32)
        _, high = self._float_features()
        for c in range(n_features):
            missing = np.isnan(values[:, c])
            if missing.any():
                values[missing, c] = np.inf if high.get(c, False) else -np.inf
        return self._split_ranks().code(values)

    def raw_start(self, X, n_outputs):
        scale, bias = self._scale_and_bias()
        start = np.zeros((X.shape[0], n_outputs))
        start += bias
        for tree in self._model()["oblivious_trees"]:
            if not tree["splits"]:
                start += scale * np.asarray(tree["leaf_values"], dtype=np.float64)
        return start

    def scorer_outputs(self, raw):
        return linked_outputs(
            raw,
            self._link(),
            getattr(self.estimator, "classes_", None),
            classifier=CatBoostOutputs,
            regressor=CatBoostRegressorOutputs,
            raw=raw,
        )


def _oblivious_tree(tree, column, ranks, scale, n_outputs):
    """One oblivious tree as a full binary :class:`FlatTree` numbered depth
    first: level ``k`` splits on ``tree["splits"][k]``, left for bit 0; the
    leaf of bits ``b_k`` holds ``scale`` times CatBoost's leaf ``sum b_k <<
    k``."""
    splits = tree["splits"]
    depth = len(splits)
    features = np.array([column[s["float_feature_index"]] for s in splits])
    borders = np.array([s["border"] for s in splits], dtype=np.float64)
    level_ranks = ranks.rank_of(features, borders)
    leaves = scale * np.asarray(tree["leaf_values"], dtype=np.float64).reshape(
        2**depth, n_outputs
    )
    n_nodes = 2 ** (depth + 1) - 1
    left = np.full(n_nodes, -1, dtype=np.intp)
    right = np.full(n_nodes, -1, dtype=np.intp)
    feature = np.zeros(n_nodes, dtype=np.intp)
    threshold = np.zeros(n_nodes)
    value = np.zeros((n_nodes, n_outputs))
    # depth first, left (bit 0) before right: a node's left child is the next
    # id, its right child follows the left subtree, so the node at level l
    # reached by bits b_0 .. b_(l-1) has id l + sum_k b_k (2**(depth-k) - 1)
    skip = 2 ** (depth - np.arange(depth)) - 1
    for level in range(depth + 1):
        bits = np.arange(2**level)
        taken = (bits[:, None] >> np.arange(level)) & 1
        ids = level + taken @ skip[:level]
        if level == depth:
            value[ids] = leaves[bits]
            break
        feature[ids] = features[level]
        threshold[ids] = level_ranks[level]
        left[ids] = ids + 1
        right[ids] = ids + 1 + skip[level]
    return FlatTree(
        left,
        right,
        feature,
        threshold,
        np.zeros(n_nodes, dtype=np.uint8),  # no missing value reaches a split
        value,
    )
