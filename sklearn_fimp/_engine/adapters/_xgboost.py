"""Adapter of XGBoost's scikit-learn models (XGBClassifier, XGBRegressor and
their random-forest variants) with a ``gbtree`` or ``dart`` booster.

The trees come from the booster's JSON model (``save_raw("json")``):
per tree, the children, split features, split conditions (float32; a leaf's
value at a leaf), default directions and split types, and the class each
tree adds to (``tree_info``); for ``dart``, each tree's weight. XGBoost reads
X in float32 and sends ``x < split_condition`` left (a missing value in the
default direction), which split ranks with ``x < t`` on float32 values
reproduce exactly (see ``_flat_trees.py``). The raw output is the model's
base margin (``base_score``, through the objective's link) plus the trees'
leaf values, iteration by iteration, class by class, up to the best
iteration when early stopping chose one, as the model's ``predict`` adds
them; the objective's transformation (sigmoid, softmax, exponential) makes
it the model's prediction.

Categorical splits (``enable_categorical``, split type 1): XGBoost reads
the float32 value as the category ``int(x)`` (truncated) and sends a
category in the node's list (``categories``, cut per node by
``categories_segments`` and ``categories_sizes``) right, and every other
one left (a negative value, one of 2**24 or more, and one past the list's
largest too); a missing value goes in the default direction. The engine
sends the codes of its set left and the others right, so the adapter swaps
such a node's children and default direction and gives it the listed
categories as its set. Categorical columns are coded as the truncated
categories (-1 for the invalid ones, NaN for missing); pandas categorical
columns first as XGBoost codes them: their categories' positions among the
training categories the model stored (NaN for a missing category; XGBoost
refuses an unknown one), or the frame's own codes when the model stored
none.

Precision: XGBoost adds the leaf values in float32, the engine in float64,
so the engine's outputs are those of the model to float32 rounding (about
1e-7 relative), and importances agree to that precision rather than to the
last bit. Models out of reach, which take the predict-every-row path: the
``gblinear`` booster, multi-output models and objectives other than those
in ``LINKS``.
"""

import json

import numpy as np
from sklearn.base import is_classifier

from ..._utils._models import is_xgboost_trees
from ..._utils._scoring import StoredClassifierOutputs, StoredRegressorOutputs
from ._base import ModelAdapter
from ._flat_trees import (
    CategorySets,
    FlatTree,
    SplitRanks,
    boosted_ensemble,
    coded_in_blocks,
    depth_first,
)

#: XGBoost's first invalid category: larger ones, and negative ones, are
#: in no split's list
MAX_CATEGORY = 2**24

#: The objectives the adapter takes, and their links: "logit" (base_score is
#: a probability, the prediction the sigmoid of the margin), "log" (base_score
#: a mean, the prediction the exponential), "identity", and "softmax" (one
#: margin per class; base_score already margins).
LINKS = {
    "binary:logistic": "logit",
    "reg:logistic": "logit",
    "reg:squarederror": "identity",
    "reg:squaredlogerror": "identity",
    "reg:pseudohubererror": "identity",
    "reg:absoluteerror": "identity",
    "reg:quantileerror": "identity",
    "count:poisson": "log",
    "reg:gamma": "log",
    "reg:tweedie": "log",
    "multi:softprob": "softmax",
}


class XGBoostOutputs(StoredClassifierOutputs):
    """Probabilities of an XGBoost classifier, and its labels as its
    ``predict`` gives them (probability above 0.5 for two classes, the most
    probable class otherwise)."""

    def predict(self, X):
        if self.proba.shape[1] == 2:
            return self.classes[(self.proba[:, 1] > 0.5).astype(np.intp)]
        return self.classes[np.argmax(self.proba, axis=1)]


class XGBoost(ModelAdapter):
    """XGBClassifier, XGBRegressor, XGBRFClassifier, XGBRFRegressor with
    trees (see the module docstring)."""

    averaged = False
    #: XGBoost adds its trees' outputs in float32
    exact_outputs = False

    @classmethod
    def accepts(cls, estimator):
        return is_xgboost_trees(estimator)

    def _model(self):
        """The booster's JSON model (parsed once per adapter)."""
        if not hasattr(self, "_json"):
            raw = self.estimator.get_booster().save_raw(raw_format="json")
            self._json = json.loads(bytes(raw))
        return self._json["learner"]

    def _objective(self):
        return self._model()["objective"]["name"]

    def _trees(self):
        """The JSON trees the model's ``predict`` adds, in order, with their
        classes and weights."""
        booster = self._model()["gradient_booster"]
        dart = booster["name"] == "dart"
        model = booster["gbtree"]["model"] if dart else booster["model"]
        trees, classes = model["trees"], model["tree_info"]
        weights = booster["weight_drop"] if dart else [1.0] * len(trees)
        indptr = model.get("iteration_indptr")
        try:
            best = self.estimator.best_iteration
        except AttributeError:
            best = None
        if best is not None and indptr is not None and best + 1 < len(indptr):
            end = indptr[best + 1]
            trees, classes, weights = trees[:end], classes[:end], weights[:end]
        return trees, classes, weights

    def _split_ranks(self, trees):
        features, thresholds = [], []
        for tree in trees:
            left = np.asarray(tree["left_children"])
            split = (left >= 0) & (np.asarray(tree["split_type"]) == 0)
            features.append(np.asarray(tree["split_indices"])[split])
            thresholds.append(np.asarray(tree["split_conditions"])[split])
        return SplitRanks(
            np.concatenate(features) if features else np.empty(0, np.intp),
            np.concatenate(thresholds) if thresholds else np.empty(0),
            self.estimator.n_features_in_,
            strict=True,
            dtype=np.float32,
        )

    def ensemble(self):
        param = self._model()["learner_model_param"]
        if self._objective() not in LINKS or int(param.get("num_target", 1)) > 1:
            return None
        trees, classes, weights = self._trees()
        ranks = self._split_ranks(trees)
        flat = [self._tree(tree, weight, ranks) for tree, weight in zip(trees, weights)]
        n_outputs = max(1, int(param.get("num_class", 0)))
        return boosted_ensemble(
            self, flat, classes, n_outputs, is_classifier(self.estimator)
        )

    @staticmethod
    def _tree(tree, weight, ranks):
        left = np.asarray(tree["left_children"], dtype=np.intp)
        right = np.asarray(tree["right_children"], dtype=np.intp)
        default_left = np.asarray(tree["default_left"], dtype=bool)
        categorical = np.asarray(tree["split_type"]) == 1
        # the engine sends its set left, XGBoost its list right: swapped
        left, right = (
            np.where(categorical, right, left),
            np.where(categorical, left, right),
        )
        default_left = default_left ^ categorical
        order = depth_first(left, right)
        renumber = np.empty(len(left), dtype=np.intp)
        renumber[order] = np.arange(len(order))
        left, right = left[order], right[order]
        leaf = left < 0
        left = np.where(leaf, -1, renumber[np.maximum(left, 0)])
        right = np.where(leaf, -1, renumber[np.maximum(right, 0)])
        feature = np.asarray(tree["split_indices"], dtype=np.intp)[order]
        condition = np.asarray(tree["split_conditions"], dtype=np.float32)[order]
        categorical = categorical[order]
        numerical = ~leaf & ~categorical
        threshold = np.zeros(len(order))
        threshold[numerical] = ranks.rank_of(feature[numerical], condition[numerical])
        value = np.where(leaf, condition.astype(np.float64), 0.0)
        if weight != 1.0:
            value = value * np.float64(np.float32(weight))
        category_set = np.full(len(order), -1)
        sets = CategorySets()
        listed = np.asarray(tree.get("categories", []), dtype=np.int64)
        for node, start, size in zip(
            tree.get("categories_nodes", []),
            tree.get("categories_segments", []),
            tree.get("categories_sizes", []),
        ):
            category_set[renumber[node]] = sets.add(listed[start : start + size])
        return FlatTree(
            left,
            right,
            np.where(leaf, 0, feature),
            threshold,
            default_left[order],
            value,
            category_set,
            sets.words,
        )

    def _categorical(self):
        """Which columns the model reads as categories."""
        feature_types = self.estimator.get_booster().feature_types or ()
        categorical = np.zeros(self.estimator.n_features_in_, dtype=bool)
        categorical[: len(feature_types)] = [kind == "c" for kind in feature_types]
        return categorical

    def _training_categories(self):
        """Per column, the categories the model stored from a training
        frame (None for a column without, or when XGBoost stores none)."""
        booster = self.estimator.get_booster()
        try:
            stored = booster.get_categories(export_to_arrow=True)
        except (AttributeError, TypeError, ImportError, ValueError):
            return {}
        if stored.empty():
            return {}
        return {
            name: None if known is None else known.to_pylist()
            for name, known in stored.to_arrow()
        }

    def _values(self, X, known):
        """X as XGBoost reads it, float64: pandas categorical columns coded
        as the model codes them (``known``: its training categories per
        column name)."""
        if hasattr(X, "dtypes"):
            import pandas as pd

            columns = [
                column
                for column, dtype in zip(X.columns, X.dtypes)
                if isinstance(dtype, pd.CategoricalDtype)
            ]
            if columns:
                X = X.copy(deep=False)
            for column in columns:
                values = X[column]
                if known.get(column) is not None:
                    values = values.cat.set_categories(known[column])
                codes = values.cat.codes.to_numpy()
                X[column] = np.where(codes < 0, np.nan, codes)
        values = np.asarray(X, dtype=np.float64)
        n_features = self.estimator.n_features_in_
        if values.ndim != 2 or values.shape[1] != n_features:
            name = type(self.estimator).__name__
            raise ValueError(
                f"X has {values.shape[-1]} features, but {name} is expecting "
                f"{n_features} features as input."
            )
        return values

    def _missing(self):
        missing = self.estimator.get_params().get("missing", np.nan)
        return np.nan if missing is None else float(missing)

    def engine_input(self, X):
        """X as XGBoost reads it (float32, the model's ``missing`` value as
        missing), numerical columns coded as split ranks and categorical ones
        as categories (see the module docstring), a block of rows at a
        time."""
        missing = self._missing()
        trees, _, _ = self._trees()
        ranks = self._split_ranks(trees)
        categorical = self._categorical()
        known = self._training_categories() if categorical.any() else {}

        def code_block(X_block):
            values = self._values(X_block, known).astype(np.float32)
            if not np.isnan(missing):
                values[values == np.float32(missing)] = np.nan
            coded = ranks.code(values, np.flatnonzero(~categorical))
            for c in np.flatnonzero(categorical):
                category = np.trunc(values[:, c])
                category[(values[:, c] < 0) | (values[:, c] >= MAX_CATEGORY)] = -1
                coded[:, c] = category  # NaN stays NaN
            return coded

        return coded_in_blocks(X, code_block)

    def raw_start(self, X, n_outputs):
        base = self._model()["learner_model_param"]["base_score"]
        base = np.array(json.loads(base.replace("E", "e")), dtype=np.float32).ravel()
        link = LINKS[self._objective()]
        one = np.float32(1.0)
        if link == "logit":
            base = -np.log(one / base - one)
        elif link == "log":
            base = np.log(base)
        start = np.zeros((X.shape[0], n_outputs))
        start += np.resize(base.astype(np.float64), n_outputs)
        return start

    def scorer_outputs(self, raw):
        link = LINKS[self._objective()]
        margin = raw.astype(np.float32)
        if link == "logit":
            p = (1.0 / (1.0 + np.exp(-margin[:, 0].astype(np.float64)))).astype(
                np.float32
            )
            if self._objective() == "reg:logistic":
                return StoredRegressorOutputs(p)
            return XGBoostOutputs(
                self.estimator.classes_, proba=np.column_stack([1 - p, p])
            )
        if link == "softmax":
            shifted = np.exp(margin - margin.max(axis=1, keepdims=True))
            proba = shifted / shifted.sum(axis=1, keepdims=True)
            return XGBoostOutputs(self.estimator.classes_, proba=proba)
        values = margin[:, 0] if margin.shape[1] == 1 else margin
        if link == "log":
            values = np.exp(values)
        return StoredRegressorOutputs(values)
