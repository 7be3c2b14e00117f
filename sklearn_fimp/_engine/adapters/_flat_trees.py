"""What the boosting adapters share: trees as flat node arrays, X coded as
the trees compare it, and the ensemble of one term per tree.

The boosting libraries compare X in their own ways: HistGradientBoosting
and LightGBM compare float64 values with float64 thresholds (``x <= t``),
XGBoost float32 values with float32 thresholds (``x < t``), and each sends
missing values, and categories, its own way. None of these is the float32
``x <= t`` of the engine's kernels, so an adapter hands the engine each
numerical column's *split ranks* instead: for column ``c`` with the sorted
distinct thresholds ``T_c`` of all the model's splits on it, a value becomes
the number of thresholds below it (for ``x <= t``; at or below it for
``x < t``), and the split on ``T_c[k]`` becomes ``rank <= k``. Then the
model's comparison holds exactly when ``rank <= k`` does, so every split
sends every row where the model sends it; the ranks are small integers,
exact in float32, and a missing value stays missing (routed by the node's
``missing_go_to_left``). Ranking is done value by value, so permuting a
column of ranks is ranking the permuted column: the engine's permutations
are the model's.

A categorical column is handed to the engine as the model's category codes
(non-negative integers, or NaN for what the model treats as missing), and a
categorical split as the set of codes that go left (every other code goes
right): ``category_set`` gives, per node, where its set starts in the tree's
``category_words`` (-1 on other nodes), laid out as ``[n_words, word_0,
word_1, ...]`` with code ``v`` in bit ``v % 32`` of word ``v // 32``. Routing
records a row on such a split as always moving.
"""

import numpy as np
from scipy.sparse import csr_matrix

from ..._utils._compat import safe_indexing
from ..._utils._scoring import StoredClassifierOutputs, StoredRegressorOutputs
from .. import _budgets
from ._base import TreeEnsemble, TreeTerm, float32_below


class CategorySets:
    """The category words of one tree's categorical nodes, built set by
    set."""

    def __init__(self):
        self._words = []
        self._size = 0

    def add(self, left_codes=None, words=None):
        """Where the set of ``left_codes`` (or of the bitset ``words``,
        uint32) starts in :attr:`words`."""
        if words is None:
            codes = np.asarray(left_codes, dtype=np.int64)
            n_words = int(codes.max()) // 32 + 1 if len(codes) else 1
            words = np.zeros(n_words, dtype=np.uint32)
            bits = np.left_shift(np.uint32(1), (codes % 32).astype(np.uint32))
            np.bitwise_or.at(words, codes // 32, bits)
        start = self._size
        self._words.append(np.concatenate([[len(words)], words]).astype(np.uint32))
        self._size += len(words) + 1
        return start

    @property
    def words(self):
        if not self._words:
            return np.empty(0, dtype=np.uint32)
        return np.concatenate(self._words)


def in_category_sets(words, starts, codes):
    """Whether each code is in the set that starts at ``starts`` (one per
    code) in ``words``: False for NaN, negative or non-integer codes and
    codes past the set's words."""
    codes = np.asarray(codes, dtype=np.float64)
    n_words = words[starts].astype(np.int64) if len(starts) else np.zeros(0, np.int64)
    valid = (codes >= 0) & (codes < 32 * n_words) & (codes == np.floor(codes))
    inside = np.zeros(len(codes), dtype=bool)
    v = codes[valid].astype(np.int64)
    word = words[starts[valid] + 1 + v // 32]
    inside[valid] = (np.right_shift(word, (v % 32).astype(np.uint32)) & 1) == 1
    return inside


class FlatTree:
    """One tree as flat node arrays, in the ``Tree`` interface the engine
    reads (see ``_base.py``), with a NumPy ``apply`` and ``decision_path``
    over rows coded as the module docstring says.

    Nodes must be numbered so that ids grow along every path (a depth-first
    numbering). ``value`` holds what a row reaching each leaf adds.
    """

    def __init__(
        self,
        children_left,
        children_right,
        feature,
        threshold,
        missing_go_to_left,
        value,
        category_set=None,
        category_words=None,
    ):
        self.children_left = np.asarray(children_left, dtype=np.intp)
        self.children_right = np.asarray(children_right, dtype=np.intp)
        self.node_count = len(self.children_left)
        leaf = self.children_left < 0
        self.feature = np.where(leaf, -2, feature).astype(np.intp)
        self.threshold = np.where(leaf, -2.0, threshold).astype(np.float64)
        self.missing_go_to_left = np.asarray(missing_go_to_left, dtype=np.uint8)
        self.value = np.asarray(value, dtype=np.float64)
        if category_set is None:
            category_set = np.full(self.node_count, -1)
        self.category_set = np.where(leaf, -1, category_set).astype(np.int32)
        self.category_words = (
            np.empty(0, dtype=np.uint32)
            if category_words is None
            else np.asarray(category_words, dtype=np.uint32)
        )
        depth = np.zeros(self.node_count, dtype=np.intp)
        for node in np.flatnonzero(~leaf):  # parents come before children
            depth[self.children_left[node]] = depth[node] + 1
            depth[self.children_right[node]] = depth[node] + 1
        self.max_depth = int(depth.max())

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
            go_left = values <= self.threshold[at]
            categorical = self.category_set[at] >= 0
            if categorical.any():
                go_left[categorical] = in_category_sets(
                    self.category_words,
                    self.category_set[at[categorical]],
                    values[categorical],
                )
            missing = np.isnan(values)
            go_left[missing] = self.missing_go_to_left[at[missing]].astype(bool)
            at = np.where(go_left, self.children_left[at], self.children_right[at])
        return leaves

    def apply(self, X):
        """The leaf of each row."""
        return self._descend(X)

    def decision_path(self, X):
        """``(n_rows, node_count)`` indicator of the nodes each row passes
        through, as scikit-learn's trees return it."""
        row_parts, node_parts = [], []

        def on_level(rows, nodes):
            row_parts.append(rows)
            node_parts.append(nodes)

        n_rows = np.asarray(X).shape[0]
        self._descend(X, on_level)
        rows = np.concatenate(row_parts) if row_parts else np.empty(0, np.intp)
        nodes = np.concatenate(node_parts) if node_parts else np.empty(0, np.intp)
        order = np.lexsort((nodes, rows))
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_rows))])
        return csr_matrix(
            (np.ones(len(rows), dtype=np.int8), nodes[order], indptr),
            shape=(n_rows, self.node_count),
        )


def depth_first(children_left, children_right, root=0):
    """Node ids of a tree in depth-first order from ``root`` (parents before
    children, left subtree before right), for trees whose ids do not grow
    along paths."""
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        if children_left[node] >= 0:
            stack.append(children_right[node])
            stack.append(children_left[node])
    return np.array(order, dtype=np.intp)


class SplitRanks:
    """Each numerical column's sorted distinct thresholds, and X coded as
    split ranks (see the module docstring).

    ``strict``: the model's splits send ``x < t`` left (else ``x <= t``);
    ``dtype``: the precision in which the model compares values and
    thresholds.
    """

    def __init__(
        self, features, thresholds, n_columns, *, strict=False, dtype=np.float64
    ):
        features = np.asarray(features, dtype=np.intp)
        thresholds = np.asarray(thresholds).astype(dtype)
        self.strict = strict
        self.dtype = dtype
        self.values = [np.unique(thresholds[features == c]) for c in range(n_columns)]

    def rank_of(self, features, thresholds):
        """The rank threshold ``k`` of splits on ``features`` at
        ``thresholds`` (the index of each threshold among its column's)."""
        thresholds = np.asarray(thresholds).astype(self.dtype)
        ranks = np.zeros(len(thresholds))
        for c in np.unique(features):
            on = features == c
            ranks[on] = np.searchsorted(self.values[c], thresholds[on])
        return ranks

    def code(self, X, columns=None):
        """Columns of X (``dtype`` values, NaN for missing) as split ranks,
        float32, NaN kept; ``columns``: which columns to code (all by
        default); the others are left at 0."""
        X = np.asarray(X)
        ranks = np.zeros(X.shape, dtype=np.float32)
        side = "right" if self.strict else "left"
        for c in range(X.shape[1]) if columns is None else columns:
            values = X[:, c].astype(self.dtype)
            if len(self.values[c]):
                ranks[:, c] = np.searchsorted(self.values[c], values, side=side)
            ranks[np.isnan(values), c] = np.nan
        return ranks


def coded_in_blocks(X, code_block):
    """``code_block`` (rows of X to their float32 codes, row by row) applied
    to consecutive blocks of ``_budgets.INPUT_ROWS`` rows of X (an array or
    a frame), the codes stacked: the copies that validating and coding make
    are one block's at a time, beside the float32 result."""
    n_rows = X.shape[0]
    size = _budgets.INPUT_ROWS
    if n_rows <= size:
        return code_block(X)
    coded = None
    for start in range(0, n_rows, size):
        rows = slice(start, min(start + size, n_rows))
        block = code_block(safe_indexing(X, rows))
        if coded is None:
            coded = np.empty((n_rows, *block.shape[1:]), dtype=block.dtype)
        coded[rows] = block
    return coded


def boosted_ensemble(adapter, trees, classes, n_outputs, classifier):
    """The :class:`TreeEnsemble` of a boosted model: one term per tree,
    in the order of the model's ``predict``, adding its leaf values to
    output column ``classes[t]`` (or to the only output)."""
    terms = [
        TreeTerm(
            tree,
            None,
            None if n_outputs == 1 else np.array([k]),
            tree.value[:, None],
            float32_below(tree.threshold),
        )
        for tree, k in zip(trees, classes, strict=True)
    ]
    if not terms:
        return None
    return TreeEnsemble(terms, n_outputs, adapter, classifier)


def linked_outputs(
    sums,
    link,
    classes,
    *,
    classifier=StoredClassifierOutputs,
    regressor=StoredRegressorOutputs,
    sigmoid_scale=1.0,
    **classifier_params,
):
    """A booster's scorer outputs from its raw ``sums`` (float64) through its
    link: "sigmoid" (two classes, one output; of ``sigmoid_scale`` times the
    sum), "softmax" (one output per class), "exp" (a mean modelled on the
    log scale) or "identity". ``classifier(classes, proba=...,
    **classifier_params)`` and ``regressor(values)`` make the outputs."""
    if link == "sigmoid":
        p = 1.0 / (1.0 + np.exp(-sigmoid_scale * sums[:, 0]))
        proba = np.column_stack([1.0 - p, p])
        return classifier(classes, proba=proba, **classifier_params)
    if link == "softmax":
        shifted = np.exp(sums - sums.max(axis=1, keepdims=True))
        proba = shifted / shifted.sum(axis=1, keepdims=True)
        return classifier(classes, proba=proba, **classifier_params)
    values = sums[:, 0] if sums.shape[1] == 1 else sums
    return regressor(np.exp(values) if link == "exp" else values)
