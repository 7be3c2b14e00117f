"""Adapter of LightGBM's scikit-learn models (LGBMClassifier, LGBMRegressor)
with tree learners (``gbdt``, ``dart``, ``goss``, ``rf``).

The trees come from ``booster_.dump_model()``: per node the split feature,
threshold, decision type, missing type and default direction; per leaf its
value (learning rate, and the initial score of ``boost_from_average``, folded
in by LightGBM). LightGBM compares the float64 value with the float64
threshold, ``x <= threshold``, after its missing-value rule: with missing
type "None" a NaN is read as 0.0; with "NaN" a NaN goes in the default
direction; with "Zero" a NaN or a value within 1e-35 of zero does. The
adapter hands the engine split ranks (see ``_flat_trees.py``), exact for
float64 comparisons, with NaN (and, on a column whose splits treat zero as
missing, zero) kept missing and each node's ``missing_go_to_left`` the
direction LightGBM gives it (where 0.0 goes, for "None").

Categorical splits ("=="): LightGBM reads a value as the category
``int(x)`` (truncated), sends it left when it is in the node's set and right
otherwise; a NaN, a negative value and a category past the set go right. The
adapter codes such columns as the truncated categories, NaN for a missing
value (with ``missing_go_to_left`` false) and -1 for a negative one; pandas
categorical columns are first coded as LightGBM codes them (the training
categories' positions, NaN for an unknown or missing category).

The raw output is the trees' leaf values added iteration by iteration,
class by class, in float64 (as LightGBM adds them), over the iterations
``predict`` uses (up to the best iteration after early stopping), divided by
their number for ``rf`` (``average_output``); the objective's
transformation (sigmoid, softmax, exponential) makes it the prediction.
Out of reach (the predict-every-row path): linear trees, objectives other
than those in ``LINKS``, and columns whose splits mix zero-as-missing with
another missing type.
"""

import numpy as np
from sklearn.base import is_classifier

from ..._utils._models import is_lightgbm_trees
from ._base import ModelAdapter
from ._flat_trees import (
    CategorySets,
    FlatTree,
    SplitRanks,
    boosted_ensemble,
    coded_in_blocks,
    linked_outputs,
)

#: LightGBM's objectives the adapter takes, and their links.
LINKS = {
    "binary": "sigmoid",
    "multiclass": "softmax",
    "regression": "identity",
    "regression_l1": "identity",
    "huber": "identity",
    "fair": "identity",
    "quantile": "identity",
    "mape": "identity",
    "poisson": "exp",
    "gamma": "exp",
    "tweedie": "exp",
}

#: LightGBM's zero for the "Zero" missing type: |x| <= this
ZERO_THRESHOLD = 1e-35
_MISSING_TYPES = {"None": 0, "Zero": 1, "NaN": 2}


class _Nodes:
    """A dumped tree's nodes, numbered depth first."""

    def __init__(self, structure):
        self.nodes = []
        self.left, self.right = [], []
        stack = [(structure, None, None)]
        while stack:
            node, parent, is_left = stack.pop()
            index = len(self.nodes)
            self.nodes.append(node)
            self.left.append(-1)
            self.right.append(-1)
            if parent is not None:
                (self.left if is_left else self.right)[parent] = index
            if "split_feature" in node:
                stack.append((node["right_child"], index, False))
                stack.append((node["left_child"], index, True))

    def splits(self):
        return [node for node in self.nodes if "split_feature" in node]


class LightGBM(ModelAdapter):
    """LGBMClassifier and LGBMRegressor (see the module docstring)."""

    averaged = False

    @classmethod
    def accepts(cls, estimator):
        return is_lightgbm_trees(estimator) and hasattr(estimator, "booster_")

    def _dump(self):
        if not hasattr(self, "_dumped"):
            self._dumped = self.estimator.booster_.dump_model()
        return self._dumped

    def _objective(self):
        words = self._dump()["objective"].split()
        parameters = dict(word.split(":", 1) for word in words[1:] if ":" in word)
        return words[0], parameters

    def _n_iterations(self):
        dump = self._dump()
        total = len(dump["tree_info"]) // dump["num_tree_per_iteration"]
        best = self.estimator.booster_.best_iteration
        return best if 0 < best < total else total

    def _trees(self):
        dump = self._dump()
        n_trees = self._n_iterations() * dump["num_tree_per_iteration"]
        return [_Nodes(info["tree_structure"]) for info in dump["tree_info"][:n_trees]]

    def _columns(self, trees):
        """Per column: its splits' missing types and whether it is
        categorical, and the model's numerical thresholds."""
        n_columns = self.estimator.n_features_in_
        types = [set() for _ in range(n_columns)]
        categorical = np.zeros(n_columns, dtype=bool)
        features, thresholds = [], []
        for tree in trees:
            for node in tree.splits():
                c = node["split_feature"]
                if node["decision_type"] == "==":
                    categorical[c] = True
                    continue
                types[c].add(node["missing_type"])
                features.append(c)
                thresholds.append(node["threshold"])
        ranks = SplitRanks(features, thresholds, n_columns)
        return types, categorical, ranks

    def ensemble(self):
        name, _ = self._objective()
        dump = self._dump()
        if name not in LINKS:
            return None
        if "sqrt" in dump["objective"].split():
            # reg_sqrt: fitted to sqrt(|y|) with y's sign, and its predict
            # squares the raw output back, which no link here does
            return None
        if any(info.get("is_linear") for info in dump["tree_info"]):
            return None
        trees = self._trees()
        types, categorical, ranks = self._columns(trees)
        if any("Zero" in t and len(t) > 1 for t in types):
            return None
        n_outputs = dump["num_tree_per_iteration"]
        flat = [self._tree(tree, ranks) for tree in trees]
        classes = [t % n_outputs for t in range(len(flat))]
        return boosted_ensemble(
            self, flat, classes, n_outputs, is_classifier(self.estimator)
        )

    @staticmethod
    def _tree(tree, ranks):
        n_nodes = len(tree.nodes)
        feature = np.zeros(n_nodes, dtype=np.intp)
        threshold = np.zeros(n_nodes)
        missing_left = np.zeros(n_nodes, dtype=np.uint8)
        value = np.zeros(n_nodes)
        category_set = np.full(n_nodes, -1)
        sets = CategorySets()
        for i, node in enumerate(tree.nodes):
            if "split_feature" not in node:
                value[i] = node["leaf_value"]
                continue
            c = feature[i] = node["split_feature"]
            if node["decision_type"] == "==":
                left = [int(v) for v in str(node["threshold"]).split("||")]
                category_set[i] = sets.add(left_codes=left)
                continue  # NaN goes right
            t = node["threshold"]
            threshold[i] = ranks.rank_of(np.array([c]), np.array([t]))[0]
            if node["missing_type"] == "None":
                missing_left[i] = t >= 0.0
            else:
                missing_left[i] = node["default_left"]
        return FlatTree(
            tree.left,
            tree.right,
            feature,
            threshold,
            missing_left,
            value,
            category_set,
            sets.words,
        )

    def _values(self, X):
        """X as LightGBM reads it, float64: pandas categorical columns coded
        as in training (NaN for an unknown or missing category)."""
        categories = self.estimator.booster_.pandas_categorical
        if hasattr(X, "dtypes") and categories:
            import pandas as pd

            X = X.copy(deep=False)
            columns = [
                column
                for column, dtype in zip(X.columns, X.dtypes)
                if isinstance(dtype, pd.CategoricalDtype)
            ]
            for column, known in zip(columns, categories):
                codes = X[column].cat.set_categories(known).cat.codes
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

    def engine_input(self, X):
        """X coded as the module docstring says (float32), a block of rows
        at a time."""
        types, categorical, ranks = self._columns(self._trees())

        def code_block(X_block):
            values = self._values(X_block)
            for c, column_types in enumerate(types):
                if "Zero" in column_types:
                    zero = np.abs(values[:, c]) <= ZERO_THRESHOLD
                    values[zero, c] = np.nan
            coded = ranks.code(values, np.flatnonzero(~categorical))
            for c in np.flatnonzero(categorical):
                truncated = np.trunc(values[:, c])
                truncated[(truncated < 0) | (truncated >= 2**31)] = -1
                coded[:, c] = truncated  # NaN stays NaN
            return coded

        return coded_in_blocks(X, code_block)

    def raw_start(self, X, n_outputs):
        return np.zeros((X.shape[0], n_outputs))

    def scorer_outputs(self, raw):
        if self._dump()["average_output"]:
            raw = raw / self._n_iterations()
        name, parameters = self._objective()
        return linked_outputs(
            raw,
            LINKS[name],
            getattr(self.estimator, "classes_", None),
            sigmoid_scale=float(parameters.get("sigmoid", 1.0)),
        )
