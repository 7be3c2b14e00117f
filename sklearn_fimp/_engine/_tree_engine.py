"""Exact permutation importance for tree ensembles, re-routing only the rows
whose decision path uses a permuted feature.

Permuting feature ``j`` can change a tree's prediction for a row only if the
row's path in that tree passes through a node that splits on ``j``. The
engine routes the evaluation rows through every tree once, recording each
row's leaf and the features its path uses; then, for each group of features
and each permutation, it re-routes only the affected rows of each tree and
sums the trees' leaf values, tree by tree in the order the model's own
``predict`` adds them, so that the outputs (probabilities, decision values or
regression values) are the model's, ties included. The outputs are handed to
the scorer through a stand-in estimator, so any scorer works, and the
importances equal those of the predict-every-row path for the same
permutations.

Memory is bounded by routing rows in chunks and by processing groups in
batches whose permuted outputs fit a fixed budget; X is never copied per
feature.

The loops run in threads sharing the routing and writing their own slices
of the results (``require="sharedmem"``, whatever joblib backend is active):
the compiled kernels release the GIL, and shipping the routing to other
processes would cost more than computing it.
"""

from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import is_classifier
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
)
from sklearn.tree import BaseDecisionTree
from sklearn.utils.validation import validate_data

from .._utils._compat import (
    gradient_boosting_init,
    gradient_boosting_proba,
    scorer_reads_labels_only,
)
from .._utils._models import FORESTS
from .._utils._scoring import (
    AdditiveScore,
    StoredClassifierOutputs,
    StoredRegressorOutputs,
    score_outputs,
    score_table,
)
from ._kernels import KERNELS, NODE_DTYPE, PAIR_DTYPE, check_status

#: Rows routed at once through all trees, at most (bounds the leaf and path
#: caches; see ROUTING_BYTES).
CHUNK_ROWS = 50_000
#: Bytes allowed for one chunk's routing through all trees: deep trees on
#: many features record many (row, feature) pairs, and chunks shrink so that
#: their routing fits. Smaller chunks cost little (W2 of bench_permutation,
#: forest-level out-of-bag: the same time from 512 down to 128 MiB) and keep
#: the peak of large data sets down.
ROUTING_BYTES = 256 * 2**20
#: Rows sampled to estimate how many paths use each group.
SAMPLE_ROWS = 1000
#: Above this share of affected rows, a group is predicted the plain way.
MAX_AFFECTED_SHARE = 0.8
#: Bytes allowed for the permuted outputs of one batch of groups.
BATCH_BYTES = 256 * 2**20
#: Bytes a worker of the compiled kernels allows for one batch of tasks
#: (a group and a permutation each): their permuted columns, source rows and
#: changes, for one chunk. A batch reads each tree's nodes once.
TASK_BYTES = 32 * 2**20


class TreeTerm(NamedTuple):
    """One tree's contribution to the ensemble output.

    ``table[leaf]`` is added to the output columns ``columns`` for rows that
    reach ``leaf`` (None: all columns, in order); ``features`` maps the
    tree's inputs to columns of X (None: all columns, in order).
    """

    tree: object
    features: np.ndarray | None
    columns: np.ndarray | None
    table: np.ndarray
    #: split thresholds rounded down to float32 (see _float32_below)
    thresholds: np.ndarray
    #: the tree's nodes as the compiled kernels read them (None without them)
    nodes: "NodeArrays | None" = None


class NodeArrays(NamedTuple):
    """Trees' nodes for the compiled kernels: scikit-learn's arrays packed
    into ``NODE_DTYPE`` records, with ``column`` the column of X each split
    node reads (0 on leaves), and the float32 thresholds of the intervals."""

    nodes: np.ndarray
    threshold32: np.ndarray

    @property
    def tree_args(self):
        return (self.nodes,)


class TreeEnsemble(NamedTuple):
    """What the engine needs of a supported ensemble."""

    terms: list
    n_outputs: int
    #: "forest_classifier", "forest_regressor" (averaged trees, including a
    #: single tree and Bagging), "boosting_classifier", "boosting_regressor"
    kind: str
    #: every tree's table stacked (None when some tree writes only some
    #: output columns), and where each tree's rows start in it
    stacked_table: np.ndarray | None = None
    offsets: np.ndarray | None = None
    #: every tree's nodes concatenated for the compiled kernels, with each
    #: tree's table widened to all outputs (None without the kernels)
    forest: "ForestNodes | None" = None

    def with_stacked_tables(self):
        if KERNELS is not None:
            # the compiled kernels read the concatenated nodes and tables;
            # each term's nodes are a view of them
            forest = ForestNodes.of(self)
            terms = []
            for t, term in enumerate(self.terms):
                nodes = forest.tree_nodes(t)
                terms.append(term._replace(nodes=nodes, thresholds=nodes.threshold32))
            return self._replace(terms=terms, forest=forest)
        if any(term.columns is not None for term in self.terms):
            return self
        sizes = [len(term.table) for term in self.terms]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        stacked = np.concatenate([term.table for term in self.terms])
        return self._replace(stacked_table=stacked, offsets=offsets)

    @property
    def boosted(self):
        return self.kind.startswith("boosting")


class ForestNodes(NamedTuple):
    """Every tree's nodes, one after the other, for the compiled kernels."""

    node_offset: np.ndarray
    nodes: NodeArrays
    #: each tree's (n_nodes, n_outputs) leaf values in all outputs, and the
    #: addresses of those arrays, which the kernels read
    tables: list
    table_addresses: np.ndarray

    @classmethod
    def of(cls, ensemble):
        trees = [term.tree.tree_ for term in ensemble.terms]
        sizes = [tree_.node_count for tree_ in trees]
        node_offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        columns = []
        for term, tree_ in zip(ensemble.terms, trees):
            column = np.maximum(tree_.feature, 0)
            columns.append(column if term.features is None else term.features[column])
        # one assignment per field over all trees: field writes are strided
        nodes = np.empty(sum(sizes), dtype=NODE_DTYPE)
        nodes["left"] = np.concatenate([tree_.children_left for tree_ in trees])
        nodes["right"] = np.concatenate([tree_.children_right for tree_ in trees])
        nodes["column"] = np.concatenate(columns)
        nodes["missing_left"] = np.concatenate(
            [tree_.missing_go_to_left for tree_ in trees]
        )
        nodes["threshold"] = np.concatenate([tree_.threshold for tree_ in trees])
        threshold32 = np.concatenate([term.thresholds for term in ensemble.terms])
        # each tree's own table where it has every output (a view of the
        # tree's values for bagged trees: no copy), else widened
        tables = []
        for term in ensemble.terms:
            if term.columns is None:
                table = np.ascontiguousarray(term.table, dtype=np.float64)
            else:
                table = np.zeros((len(term.table), ensemble.n_outputs))
                table[:, term.columns] = term.table
            tables.append(table)
        addresses = np.array([table.ctypes.data for table in tables], dtype=np.uintp)
        return cls(node_offset, NodeArrays(nodes, threshold32), tables, addresses)

    def tree_nodes(self, t):
        """Tree ``t``'s nodes (views)."""
        first = self.node_offset[t]
        last = (
            self.node_offset[t + 1]
            if t + 1 < len(self.node_offset)
            else len(self.nodes.nodes)
        )
        return NodeArrays(
            self.nodes.nodes[first:last], self.nodes.threshold32[first:last]
        )


def _float32_below(values):
    """Largest float32 <= each value. For a float32 ``x`` and a float64
    threshold ``t``, ``x <= t`` exactly when ``x <= _float32_below(t)``, and
    ``x > t`` exactly when ``x > _float32_below(t)``."""
    rounded = values.astype(np.float32)
    too_high = rounded > values
    rounded[too_high] = np.nextafter(rounded[too_high], np.float32(-np.inf))
    return rounded


def tree_ensemble(estimator):
    """Describe a supported tree ensemble, or return None.

    Supported: DecisionTree*, RandomForest*, ExtraTrees*, Bagging* of
    decision trees and GradientBoosting*, single-output.
    """
    classifier = is_classifier(estimator)
    if classifier and np.ndim(estimator.classes_[0]) > 0:
        return None  # multi-output classification
    if isinstance(estimator, (BaseDecisionTree, FORESTS)):
        trees = (
            [estimator]
            if isinstance(estimator, BaseDecisionTree)
            else list(estimator.estimators_)
        )
        features = [None] * len(trees)
    elif isinstance(estimator, (BaggingClassifier, BaggingRegressor)):
        trees = list(estimator.estimators_)
        if not all(isinstance(t, BaseDecisionTree) for t in trees):
            return None
        features = [np.asarray(f) for f in estimator.estimators_features_]
    elif isinstance(estimator, (GradientBoostingClassifier, GradientBoostingRegressor)):
        stages = estimator.estimators_
        n_columns = stages.shape[1]
        # scikit-learn adds learning_rate * value stage by stage, class by
        # class; the scaled table gives the same products.
        terms = [
            TreeTerm(
                stages[i, k],
                None,
                None if n_columns == 1 else np.array([k]),
                estimator.learning_rate * stages[i, k].tree_.value[:, 0, :1],
                _float32_below(stages[i, k].tree_.threshold),
            )
            for i in range(stages.shape[0])
            for k in range(n_columns)
        ]
        kind = "boosting_classifier" if classifier else "boosting_regressor"
        return TreeEnsemble(terms, n_columns, kind).with_stacked_tables()
    else:
        return None

    if classifier:
        # Leaf class fractions; members trained on encoded labels may know
        # only some of the ensemble's classes.
        n_classes = len(estimator.classes_)
        terms = [
            TreeTerm(
                tree,
                feats,
                None
                if len(tree.classes_) == n_classes
                else np.asarray(tree.classes_, dtype=np.intp),
                tree.tree_.value[:, 0, :],
                _float32_below(tree.tree_.threshold),
            )
            for tree, feats in zip(trees, features)
        ]
        return TreeEnsemble(terms, n_classes, "forest_classifier").with_stacked_tables()
    n_outputs = trees[0].tree_.value.shape[1]
    terms = [
        TreeTerm(
            tree,
            feats,
            None,
            tree.tree_.value[:, :, 0],
            _float32_below(tree.tree_.threshold),
        )
        for tree, feats in zip(trees, features)
    ]
    return TreeEnsemble(terms, n_outputs, "forest_regressor").with_stacked_tables()


def engine_input(estimator, X):
    """X as the trees read it: float32, validated against the estimator."""
    return validate_data(
        estimator,
        X,
        reset=False,
        dtype=np.float32,
        order="C",
        ensure_all_finite=False,
    )


def stored_outputs(estimator, ensemble, outputs):
    """Wrap engine outputs (n_rows, n_outputs) for a scorer."""
    if ensemble.kind == "forest_classifier":
        return StoredClassifierOutputs(estimator.classes_, proba=outputs)
    if ensemble.kind == "boosting_classifier":
        decision = outputs[:, 0] if outputs.shape[1] == 1 else outputs
        return StoredClassifierOutputs(
            estimator.classes_,
            proba=gradient_boosting_proba(estimator, decision),
            decision=decision,
        )
    return StoredRegressorOutputs(outputs[:, 0] if outputs.shape[1] == 1 else outputs)


class RoutedTree(NamedTuple):
    """One tree's routing of a chunk of rows.

    For every row and every feature its path splits on, the path constrains
    the feature to an interval ``lower < x <= upper``: a permuted value
    inside it takes the row down the same path, to the same leaf. The pairs
    are stored feature by feature (``feature_ptr`` indexes ``path_rows``,
    ``lower`` and ``upper`` as a CSC matrix's ``indptr`` does).
    """

    rows: np.ndarray | None  # positions in the chunk it scores (None: all)
    leaves: np.ndarray  # leaf of each of those rows
    feature_ptr: np.ndarray  # (n_features + 1,)
    path_rows: np.ndarray  # row (index into leaves) of each pair
    lower: np.ndarray  # float32, exclusive
    upper: np.ndarray  # float32, inclusive
    #: the compiled routing's pairs (``PAIR_DTYPE`` records, of which the
    #: arrays above are fields), or None
    pairs: np.ndarray | None = None


def _tree_input(term, X_rows):
    if term.features is not None:
        X_rows = X_rows[:, term.features]
    return np.ascontiguousarray(X_rows)


def _as_rows(rows, n_rows):
    if rows is None:
        return np.arange(n_rows, dtype=np.int64)
    return np.ascontiguousarray(rows, dtype=np.int64)


def _route_compiled(term, X_chunk, rows):
    """:func:`route` with the compiled kernels: the pairs are recorded row
    by row, then stored column by column."""
    X_chunk = np.ascontiguousarray(X_chunk, dtype=np.float32)
    tree_rows = _as_rows(rows, X_chunk.shape[0])
    n_rows, n_columns = len(tree_rows), X_chunk.shape[1]
    width = max(1, min(term.tree.tree_.max_depth, n_columns))
    leaves = np.empty(n_rows, dtype=np.int64)
    counts = np.zeros(n_columns, dtype=np.int64)
    buffer = np.empty(n_rows * width, dtype=PAIR_DTYPE)
    buffer_columns = np.empty(n_rows * width, dtype=np.int32)
    row_counts = np.empty(n_rows, dtype=np.int32)
    nodes = term.nodes
    check_status(
        KERNELS.route_rows(
            *nodes.tree_args,
            nodes.threshold32,
            X_chunk,
            n_columns,
            tree_rows,
            n_rows,
            width,
            leaves,
            counts,
            buffer,
            buffer_columns,
            row_counts,
        )
    )
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    pairs = np.empty(ptr[-1], dtype=PAIR_DTYPE)
    check_status(
        KERNELS.route_scatter(
            buffer, buffer_columns, row_counts, n_rows, width, n_columns, ptr, pairs
        )
    )
    return RoutedTree(
        rows, leaves, ptr, pairs["row"], pairs["lower"], pairs["upper"], pairs
    )


def route(term, X_chunk, n_features, rows=None):
    """Leaves, and the interval each path allows each feature it uses, for
    a chunk (``rows``: the tree's subset of it, or None for all rows)."""
    if term.nodes is not None:
        return _route_compiled(term, X_chunk, rows)
    X_tree = _tree_input(term, X_chunk if rows is None else X_chunk[rows])
    tree_ = term.tree.tree_
    n_rows = X_tree.shape[0]
    path = term.tree.decision_path(X_tree, check_input=False)
    nodes = path.indices
    leaves = nodes[path.indptr[1:] - 1]
    # node ids grow along a path, so each split's successor is the next entry
    split = np.flatnonzero(tree_.feature[nodes] >= 0)
    split_nodes = nodes[split]
    went_left = nodes[split + 1] == tree_.children_left[split_nodes]
    pair_rows = np.repeat(np.arange(n_rows), np.diff(path.indptr))[split]
    local_features = tree_.feature[split_nodes]
    features = (
        local_features if term.features is None else term.features[local_features]
    )
    thresholds = term.thresholds[split_nodes]
    size = n_features * n_rows
    key = features.astype(np.int64 if size >= 2**31 else np.int32) * n_rows
    key += pair_rows.astype(key.dtype)
    # deeper splits on a feature only narrow the interval; keep the tightest
    lower = np.full(size, -np.inf, dtype=np.float32)
    upper = np.full(size, np.inf, dtype=np.float32)
    np.maximum.at(lower, key[~went_left], thresholds[~went_left])
    np.minimum.at(upper, key[went_left], thresholds[went_left])
    used = np.zeros(size, dtype=bool)
    used[key] = True
    keys = np.flatnonzero(used)
    path_rows, key_features = keys % n_rows, keys // n_rows
    lower, upper = lower[keys], upper[keys]
    # a missing value was sent by the node's missing-value rule, not by the
    # interval: such rows are always re-routed
    if term.features is None:
        tree_columns = key_features
    else:
        tree_columns = np.empty(n_features, dtype=np.intp)
        tree_columns[term.features] = np.arange(len(term.features))
        tree_columns = tree_columns[key_features]
    lower[np.isnan(X_tree[path_rows, tree_columns])] = np.inf
    feature_ptr = np.concatenate(
        [[0], np.cumsum(np.bincount(key_features, minlength=n_features))]
    )
    return RoutedTree(rows, leaves, feature_ptr, path_rows, lower, upper)


class RoutedForest(NamedTuple):
    """Every tree's routing of a chunk of rows, for the compiled kernels:
    tree ``t``'s rows are ``row_offset[t]:row_offset[t + 1]`` of
    ``positions`` (their rows in the chunk) and ``leaves``; its pairs are
    ``routings[t].pairs`` (at address ``pair_addresses[t]``), column ``c``'s
    from ``ptr[t, c]`` to ``ptr[t, c + 1]``."""

    row_offset: np.ndarray
    positions: np.ndarray
    leaves: np.ndarray
    ptr: np.ndarray
    pair_addresses: np.ndarray
    #: the per-tree routings, which own the pairs
    routings: list

    def trees(self):
        """``(positions, leaves)`` of each tree in turn."""
        for first, last in zip(self.row_offset[:-1], self.row_offset[1:]):
            yield self.positions[first:last], self.leaves[first:last]


def route_forest(ensemble, X_chunk, rows_in_chunk, parallel):
    """Route a chunk through every tree with the compiled kernels
    (``parallel``: a :class:`joblib.Parallel` of threads)."""
    positions = [_as_rows(rows, X_chunk.shape[0]) for rows in rows_in_chunk]
    routings = parallel(
        delayed(_route_compiled)(term, X_chunk, rows)
        for term, rows in zip(ensemble.terms, positions)
    )
    sizes = [len(rows) for rows in positions]
    return RoutedForest(
        np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        np.concatenate(positions),
        np.concatenate([routing.leaves for routing in routings]),
        np.array([routing.feature_ptr for routing in routings], dtype=np.int64),
        np.array([routing.pairs.ctypes.data for routing in routings], dtype=np.uintp),
        routings,
    )


def add_compiled_changes(ensemble, routed, chunk_start, X, tasks, out):
    """Compiled :func:`add_tree_changes` for several tasks at once: task
    ``k``, ``(columns, sources)``, reads ``columns`` of chunk row ``i`` from
    row ``sources[i]`` of X and adds its changes to ``out[k]`` (``out`` is
    C-contiguous, (n_tasks, n_chunk_rows, n_outputs)). ``routed`` is a
    :class:`RoutedForest` of the chunk starting at row ``chunk_start``.
    Returns the number of (row, tree, task) that reached another leaf."""
    forest = ensemble.forest
    sources = np.ascontiguousarray([task_sources for _, task_sources in tasks])
    groups = [np.asarray(columns, dtype=np.int64) for columns, _ in tasks]
    group_ptr = np.concatenate([[0], np.cumsum([len(group) for group in groups])])
    return check_status(
        KERNELS.add_moved_changes(
            len(ensemble.terms),
            forest.node_offset,
            *forest.nodes.tree_args,
            forest.table_addresses,
            ensemble.n_outputs,
            routed.row_offset,
            routed.positions,
            routed.leaves,
            routed.ptr,
            routed.pair_addresses,
            X,
            X.shape[1],
            chunk_start,
            sources.shape[1],
            len(tasks),
            sources.astype(np.int64, copy=False),
            group_ptr.astype(np.int64),
            np.concatenate(groups),
            out,
        )
    )


def compiled_moved_leaves(term, routing, X, sources, groups):
    """For each group in turn, the rows of a tree routed on all rows of X
    that reach another leaf when the group's columns are read from rows
    ``sources[r]``, for each permutation ``r``: ``(moved, new_leaves,
    counts)``, the moved rows of each permutation in turn (``counts[r]`` of
    them). The kernel takes the groups a batch at a time (``TASK_BYTES``
    bounds the room for their moved rows, which is at most the rows whose
    paths split on a group's columns, once per permutation)."""
    n_repeats, n_rows = sources.shape
    # a group moves at most the rows whose paths split on its columns
    paths = np.diff(routing.feature_ptr)
    room = [n_repeats * min(n_rows, int(paths[columns].sum())) for columns in groups]
    first = 0
    while first < len(groups):
        last, size = first + 1, room[first]
        while last < len(groups) and 16 * (size + room[last]) <= TASK_BYTES:
            size += room[last]
            last += 1
        batch = [np.asarray(c, dtype=np.int64) for c in groups[first:last]]
        group_ptr = np.concatenate([[0], np.cumsum([len(c) for c in batch])])
        moved = np.empty(max(1, size), dtype=np.int64)
        new_leaves = np.empty_like(moved)
        counts = np.empty(len(batch) * n_repeats, dtype=np.int64)
        check_status(
            KERNELS.moved_leaves(
                *term.nodes.tree_args,
                X,
                X.shape[1],
                n_rows,
                sources,
                n_repeats,
                routing.feature_ptr,
                routing.pairs,
                len(batch),
                group_ptr.astype(np.int64),
                np.concatenate(batch),
                routing.leaves,
                moved,
                new_leaves,
                counts,
            )
        )
        counts = counts.reshape(len(batch), n_repeats)
        ends = np.cumsum(counts.sum(axis=1))
        for group_counts, end in zip(counts, ends):
            start = end - group_counts.sum()
            yield moved[start:end], new_leaves[start:end], group_counts
        first = last


def affected_rows(routing, columns):
    """Rows (of a routed tree) whose path splits on any of ``columns``."""
    parts = [
        routing.path_rows[routing.feature_ptr[c] : routing.feature_ptr[c + 1]]
        for c in columns
    ]
    return parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))


def moving_rows(routing, columns, X, source):
    """Rows (of a routed tree) that leave their path when ``columns`` are
    permuted: some permuted value falls outside the row's interval.

    Row ``i`` of the tree receives the values of row ``source[i]`` of ``X``.
    """
    moving = []
    for c in columns:
        span = slice(routing.feature_ptr[c], routing.feature_ptr[c + 1])
        rows = routing.path_rows[span]
        values = X[:, c][source[rows]]
        stay = (values > routing.lower[span]) & (values <= routing.upper[span])
        moving.append(rows[~stay])
    return moving[0] if len(moving) == 1 else np.unique(np.concatenate(moving))


def worth_rerouting(ensemble, X, groups, tree_rows=None):
    """Which groups the engine computes faster than predicting every row.

    Re-routing saves the rows whose paths avoid a group; without the
    compiled kernels, when nearly every path uses it (deep trees on a few
    features), re-routing costs as much as predicting all rows, plus the
    bookkeeping. The share of affected rows is then estimated on up to
    ``SAMPLE_ROWS`` evenly spaced rows. With the kernels, every group is
    re-routed (on the rent data of bench/bench_permutation.py, whose deep
    trees use every feature on nearly every path, 1.7x faster than
    predicting every row).
    """
    if ensemble.forest is not None:
        # compiled, re-routing the rows that move costs less than predicting
        # every row even when every path uses the group
        return np.ones(len(groups), dtype=bool)
    X = np.asarray(X, dtype=np.float32)
    n_rows = X.shape[0]
    sample = np.unique(np.linspace(0, n_rows - 1, min(n_rows, SAMPLE_ROWS)).astype(int))
    if tree_rows is not None:
        sample_rows = [np.intersect1d(rows, sample) for rows in tree_rows]
    else:
        sample_rows = [sample] * len(ensemble.terms)
    affected = np.zeros(len(groups))
    reached = 0
    for term, rows in zip(ensemble.terms, sample_rows):
        if not len(rows):
            continue
        routing = route(term, X[rows], X.shape[1])
        affected += [len(affected_rows(routing, columns)) for columns in groups]
        reached += len(rows)
    return affected < MAX_AFFECTED_SHARE * max(reached, 1)


def permuted_rows(X, rows, columns, permutation):
    """Rows ``rows`` of X with ``columns`` taken from the permuted rows."""
    X_rows = X[rows]
    X_rows[:, columns] = X[np.ix_(permutation[rows], columns)]
    return X_rows


def add_tree_changes(ensemble, routed, chunk_rows, X, columns, permutation, out):
    """Add to ``out`` (the chunk's rows) the change of every tree's leaf
    value when ``columns`` are permuted; only rows that leave their path are
    re-routed."""
    # the row whose values each chunk row receives
    source = permutation[chunk_rows]
    moved_positions, new_nodes, old_nodes = [], [], []
    for t, (term, routing) in enumerate(zip(ensemble.terms, routed)):
        tree_source = source if routing.rows is None else source[routing.rows]
        moving = moving_rows(routing, columns, X, tree_source)
        if not len(moving):
            continue
        positions = moving if routing.rows is None else routing.rows[moving]
        X_moving = permuted_rows(X, chunk_rows[positions], columns, permutation)
        leaves = term.tree.tree_.apply(_tree_input(term, X_moving))
        if ensemble.stacked_table is None:
            change = term.table[leaves] - term.table[routing.leaves[moving]]
            out[np.ix_(positions, term.columns)] += change
            continue
        moved_positions.append(positions)
        new_nodes.append(leaves + ensemble.offsets[t])
        old_nodes.append(routing.leaves[moving] + ensemble.offsets[t])
    if moved_positions:
        # all trees' changes at once: one gather, one weighted count per column
        positions = np.concatenate(moved_positions)
        table = ensemble.stacked_table
        change = table[np.concatenate(new_nodes)] - table[np.concatenate(old_nodes)]
        for k in range(out.shape[1]):
            out[:, k] += np.bincount(positions, change[:, k], minlength=len(out))


def task_changes(ensemble, routed, chunk_rows, X, tasks):
    """Yield, task after task, the change of the total on the chunk's rows
    (n_chunk_rows, n_outputs) when a task's ``(columns, permutation)`` is
    applied. The compiled kernels take the tasks a batch at a time
    (``TASK_BYTES``), reading each tree's nodes once per batch."""
    n_rows, n_outputs = len(chunk_rows), ensemble.n_outputs
    if not isinstance(routed, RoutedForest):
        for columns, permutation in tasks:
            change = np.zeros((n_rows, n_outputs))
            add_tree_changes(
                ensemble, routed, chunk_rows, X, columns, permutation, change
            )
            yield change
        return
    widest = max(len(columns) for columns, _ in tasks)
    per_task = n_rows * (8 * n_outputs + 8 + 4 * widest)
    batch_size = max(1, TASK_BYTES // per_task)
    for first in range(0, len(tasks), batch_size):
        batch = tasks[first : first + batch_size]
        changes = np.zeros((len(batch), n_rows, n_outputs))
        add_compiled_changes(
            ensemble,
            routed,
            chunk_rows[0],
            X,
            [(columns, permutation[chunk_rows]) for columns, permutation in batch],
            changes,
        )
        yield from changes


def _add_changes_of_groups(ensemble, routed, chunk_rows, X, groups, permutations, out):
    """Add to ``out[g, r]`` the changes of group ``g`` permuted by
    ``permutations[r]`` (see :func:`task_changes`)."""
    tasks = [
        (columns, permutation) for columns in groups for permutation in permutations
    ]
    changes = task_changes(ensemble, routed, chunk_rows, X, tasks)
    for k, change in enumerate(changes):
        out[divmod(k, len(permutations))] += change


def _chunks(ensemble, X, tree_rows):
    """Consecutive row ranges whose routing through every tree fits
    ``ROUTING_BYTES``, estimated on a few evenly spaced rows."""
    n_rows = X.shape[0]
    sample = np.unique(np.linspace(0, n_rows - 1, min(n_rows, 256)).astype(int))
    in_sample = np.zeros(n_rows, dtype=bool)
    in_sample[sample] = True
    per_row = 0.0
    for t, term in enumerate(ensemble.terms):
        rows = sample if tree_rows is None else tree_rows[t][in_sample[tree_rows[t]]]
        if len(rows):
            routing = route(term, X[rows], X.shape[1])
            # a pair (16 bytes, twice while being sorted), a leaf and a row
            per_row += (32 * routing.feature_ptr[-1] + 16 * len(rows)) / len(sample)
    size = int(min(CHUNK_ROWS, max(1000, ROUTING_BYTES // max(per_row, 1))))
    return [
        np.arange(start, min(start + size, n_rows)) for start in range(0, n_rows, size)
    ]


def _rows_in_chunk(tree_rows, chunk_rows, n_terms):
    """Each tree's rows (in increasing order) that fall in the chunk, as
    positions in it, or None for all rows."""
    if tree_rows is None:
        return [None] * n_terms
    first, stop = chunk_rows[0], chunk_rows[-1] + 1
    return [
        rows[np.searchsorted(rows, first) : np.searchsorted(rows, stop)] - first
        for rows in tree_rows
    ]


def _route_chunk(ensemble, X, chunk_rows, tree_rows, parallel):
    """Route a chunk (contiguous rows of X) through every tree: the routing,
    and each tree's ``(rows of the chunk it reaches or None, leaves)``.
    ``parallel`` is a :class:`joblib.Parallel` of threads."""
    rows_in_chunk = _rows_in_chunk(tree_rows, chunk_rows, len(ensemble.terms))
    X_chunk = X[chunk_rows[0] : chunk_rows[-1] + 1]
    if ensemble.forest is not None:
        routed = route_forest(ensemble, X_chunk, rows_in_chunk, parallel)
        return routed, list(routed.trees())
    routed = parallel(
        delayed(route)(term, X_chunk, X.shape[1], rows)
        for term, rows in zip(ensemble.terms, rows_in_chunk)
    )
    return routed, [(routing.rows, routing.leaves) for routing in routed]


def _add_leaf_values(ensemble, total, routed, reached_leaves):
    """Add each tree's leaf values to ``total`` (a chunk's rows), tree by
    tree in order, as the model's own ``predict`` adds them."""
    if isinstance(routed, RoutedForest):
        KERNELS.add_leaf_values(
            len(ensemble.terms),
            ensemble.forest.table_addresses,
            ensemble.n_outputs,
            routed.row_offset,
            routed.positions,
            routed.leaves,
            total,
        )
        return
    for term, (reached, leaves) in zip(ensemble.terms, reached_leaves):
        if reached is None:
            reached = slice(None)
        if term.columns is None:
            total[reached] += term.table[leaves]
        else:
            reached = np.arange(len(total))[reached]
            total[np.ix_(reached, term.columns)] += term.table[leaves]


def _engine_threads(n_jobs):
    """The threads of one pass over the chunks, as a context manager.

    The same threads route and score every chunk: threads started afresh
    for each call would each allocate from an arena of their own (glibc),
    which keeps the memory a chunk freed, and the process's peak would grow
    by up to a chunk's routing for every new arena."""
    return Parallel(n_jobs=n_jobs, require="sharedmem")


def _worker_parts(n_groups, n_jobs):
    n_workers = max(1, effective_n_jobs(n_jobs))
    parts = np.array_split(np.arange(n_groups), min(n_workers, max(n_groups, 1)))
    return [part for part in parts if len(part)]


def permuted_changes(
    ensemble, X, groups, permutations, n_jobs, *, tree_rows, start, chunks, progress
):
    """Yield ``(group_indices, base_total, changes)`` batch by batch.

    ``base_total`` (n_rows, n_outputs) is ``start`` plus the trees' leaf
    values on the unpermuted rows, added tree by tree in order, as the
    model's ``predict`` adds them; ``changes[g, r]`` the change of the total
    when group ``g`` is permuted by ``permutations[r]``. ``tree_rows``
    restricts each tree to some rows (its out-of-bag rows, in increasing
    order); ``chunks`` are
    the row ranges routed at once (see :func:`_chunks`).
    """
    n_rows = X.shape[0]
    n_repeats = len(permutations)
    per_group = n_repeats * n_rows * ensemble.n_outputs * 8
    batch_size = max(1, min(len(groups), BATCH_BYTES // max(per_group, 1)))
    base_total = np.array(start, dtype=np.float64)
    for first in range(0, len(groups), batch_size):
        batch = list(range(first, min(first + batch_size, len(groups))))
        changes = np.zeros((len(batch), n_repeats, n_rows, ensemble.n_outputs))
        with _engine_threads(n_jobs) as parallel:
            for chunk_rows in chunks:
                chunk_start = chunk_rows[0]
                routed, reached_leaves = _route_chunk(
                    ensemble, X, chunk_rows, tree_rows, parallel
                )
                if first == 0:
                    total = base_total[chunk_rows]
                    _add_leaf_values(ensemble, total, routed, reached_leaves)
                    base_total[chunk_rows] = total
                # groups are split between workers; each writes its own slices
                parallel(
                    delayed(_add_changes_of_groups)(
                        ensemble,
                        routed,
                        chunk_rows,
                        X,
                        [groups[batch[i]] for i in part],
                        permutations,
                        changes[
                            part[0] : part[-1] + 1, :, chunk_start : chunk_rows[-1] + 1
                        ],
                    )
                    for part in _worker_parts(len(batch), n_jobs)
                )
                # freed before the next chunk is routed, not held beside it
                del routed, reached_leaves
        if progress is not None and batch_size < len(groups):
            progress(f"tree engine: {batch[-1] + 1} of {len(groups)} groups done")
        yield batch, base_total, changes


def _among(rows, sorted_rows):
    """Whether each of ``rows`` is in ``sorted_rows`` (increasing): a
    bisection per row, where ``np.isin`` would pass over all of
    ``sorted_rows`` (a tree's out-of-bag rows) for a few rows."""
    at = np.searchsorted(sorted_rows, rows.astype(sorted_rows.dtype, copy=False))
    found = at < len(sorted_rows)
    found[found] = sorted_rows[at[found]] == rows[found]
    return found


def exact_totals(ensemble, X_rows, rows, start, tree_rows=None):
    """``start`` plus the trees' leaf values for a few rows, added tree by
    tree in order (as the model's own ``predict`` adds them); ``tree_rows``
    as in :func:`permuted_changes`."""
    totals = np.array(start, dtype=np.float64)
    for t, term in enumerate(ensemble.terms):
        mask = (
            np.ones(len(rows), dtype=bool)
            if tree_rows is None
            else _among(rows, tree_rows[t])
        )
        if not mask.any():
            continue
        leaves = term.tree.tree_.apply(_tree_input(term, X_rows[mask]))
        if term.columns is None:
            totals[mask] += term.table[leaves]
        else:
            totals[np.ix_(np.flatnonzero(mask), term.columns)] += term.table[leaves]
    return totals


def changed_rows(change):
    """Rows of ``change`` (n_rows, n_outputs) with a nonzero entry, in
    increasing order (several times faster than ``np.any(axis=1)`` on the
    few columns of an engine's outputs)."""
    rows = np.flatnonzero(change.reshape(-1)) // change.shape[1]
    if change.shape[1] > 1 and len(rows):
        rows = rows[np.concatenate([[True], rows[1:] != rows[:-1]])]
    return rows


def rows_near_ties(outputs, candidates, across_rows=True):
    """Among ``candidates`` (a boolean mask), the rows whose outputs are
    within rounding of a tie: two classes of the row (for a binary decision
    value, 0), or (``across_rows``) the same output of another row.

    Changes are added in another order than the model's own ``predict``
    adds leaf values, so such a row could fall on the other side of a tie;
    it is recomputed in the model's order so that predicted classes and
    ranks (ROC AUC ...) are the model's. Scorers that read predicted labels
    only need the first kind.
    """
    tolerance = 1e-9 * max(1.0, float(np.max(np.abs(outputs), initial=0.0)))
    suspect = np.zeros(len(outputs), dtype=bool)
    if outputs.shape[1] > 1:
        top_two = np.partition(outputs, -2, axis=1)[:, -2:]
        suspect |= top_two[:, 1] - top_two[:, 0] <= tolerance
    else:  # a binary decision value: the classes tie at 0
        suspect |= np.abs(outputs[:, 0]) <= tolerance
    for column in outputs.T if across_rows else ():
        order = np.argsort(column, kind="stable")
        close = np.diff(column[order]) <= tolerance
        suspect[order[1:][close]] = True
        suspect[order[:-1][close]] = True
    return np.flatnonzero(suspect & candidates)


def _outputs_and_ties(ensemble, base, change, divisor, ranks_matter):
    """``(base + change) / divisor``, and the rows whose change leaves them
    within rounding of a tie (see :func:`rows_near_ties`), whose outputs
    :func:`repair_ties` recomputes in the model's order."""
    outputs = (base + change) / divisor
    if ensemble.kind == "forest_classifier":
        # changes added out of order can overshoot by a rounding
        np.clip(outputs, 0.0, 1.0, out=outputs)
    if not ensemble.kind.endswith("classifier"):
        return outputs, np.empty(0, dtype=np.intp)
    changed = np.zeros(len(change), dtype=bool)
    changed[changed_rows(change)] = True
    return outputs, rows_near_ties(outputs, changed, ranks_matter)


def repair_ties(ensemble, X, repairs, *, start, divisor, tree_rows):
    """Recompute, in the model's order and in one pass over the trees, the
    tied rows of several permuted outputs: each repair is ``(outputs, ties,
    rows, columns, permutation)``, with ``outputs`` those of rows ``rows``
    of X when ``columns`` are permuted by ``permutation``, and
    ``outputs[ties]`` is overwritten. ``start`` and ``divisor`` cover every
    row of X."""
    repairs = [repair for repair in repairs if len(repair[1])]
    if not repairs:
        return
    tie_rows = np.concatenate([rows[ties] for _, ties, rows, _, _ in repairs])
    X_ties = np.concatenate(
        [
            permuted_rows(X, rows[ties], columns, permutation)
            for _, ties, rows, columns, permutation in repairs
        ]
    )
    totals = exact_totals(ensemble, X_ties, tie_rows, start[tie_rows], tree_rows)
    totals /= divisor[tie_rows] if np.ndim(divisor) else divisor
    ends = np.cumsum([len(ties) for _, ties, _, _, _ in repairs])
    for (outputs, ties, _, _, _), end in zip(repairs, ends, strict=True):
        outputs[ties] = totals[end - len(ties) : end]


def permuted_outputs(
    ensemble,
    X,
    groups,
    permutations,
    n_jobs,
    *,
    start,
    divisor,
    chunks,
    tree_rows=None,
    ranks_matter=True,
    progress=None,
):
    """Yield ``(g, r, outputs, base_total)``: the model's output on every
    row with group ``g`` permuted by ``permutations[r]``, as its own
    ``predict`` would give it: ``(start + sum of leaf values) / divisor``,
    and the unpermuted ``start + sum of leaf values``. ``ranks_matter=False``
    (a scorer that reads predicted labels only) skips the repair of ties
    between rows.
    """
    divisor = np.reshape(divisor, (-1, 1)) if np.ndim(divisor) else divisor
    every_row = np.arange(X.shape[0])
    for batch, base_total, changes in permuted_changes(
        ensemble,
        X,
        groups,
        permutations,
        n_jobs,
        tree_rows=tree_rows,
        start=start,
        chunks=chunks,
        progress=progress,
    ):
        for i, g in enumerate(batch):
            for r, permutation in enumerate(permutations):
                outputs, ties = _outputs_and_ties(
                    ensemble, base_total, changes[i, r], divisor, ranks_matter
                )
                repair_ties(
                    ensemble,
                    X,
                    [(outputs, ties, every_row, groups[g], permutation)],
                    start=start,
                    divisor=divisor,
                    tree_rows=tree_rows,
                )
                yield g, r, outputs, base_total


def chunked_score_totals(
    ensemble,
    X,
    groups,
    permutations,
    n_jobs,
    *,
    start,
    divisor,
    additive,
    scored_values,
    chunks,
    tree_rows=None,
    scored=None,
    progress=None,
):
    """Sums over rows of ``additive``'s row terms with each group permuted
    by each permutation, shape (n_groups, n_permutations), and the
    unpermuted ``start + sum of leaf values`` of every row.

    Chunk by chunk: each chunk of rows is routed once for all groups and
    only one chunk's outputs are held per worker, so time and memory stay
    linear in the number of rows. ``scored`` (a mask) limits the sums to
    some rows, the row terms of which ``additive`` indexes in order;
    ``scored_values`` turns outputs into what ``additive.row_terms`` reads.
    """
    n_rows = X.shape[0]
    if scored is None:
        scored = np.ones(n_rows, dtype=bool)
    term_rows = np.cumsum(scored) - 1
    divisor = np.reshape(divisor, (-1, 1)) if np.ndim(divisor) else divisor
    totals = np.zeros((len(groups), len(permutations)))
    base_total = np.array(start, dtype=np.float64)

    def outputs_of(base, change, rows):
        """Outputs of ``rows`` of X (``base`` and ``change`` theirs), and
        their tied rows (see :func:`repair_ties`)."""
        return _outputs_and_ties(
            ensemble,
            base,
            change,
            divisor[rows] if np.ndim(divisor) else divisor,
            ranks_matter=False,
        )

    def add_totals(part, routed, chunk_rows, base):
        # a task changes the row terms of the rows its changes reach only
        kept = np.flatnonzero(scored[chunk_rows])
        base_terms = np.zeros(len(chunk_rows))
        if len(kept):
            rows = chunk_rows[kept]
            # nothing changed: no row to repair
            outputs, _ = outputs_of(base[kept], np.zeros_like(base[kept]), rows)
            base_terms[kept] = additive.row_terms(
                scored_values(outputs), term_rows[rows]
            )
        base_sum = base_terms.sum()
        pairs = [(g, r) for g in part for r in range(len(permutations))]
        changes = task_changes(
            ensemble,
            routed,
            chunk_rows,
            X,
            [(groups[g], permutations[r]) for g, r in pairs],
        )
        # tied rows are repaired many tasks at once (one pass over the trees
        # for all of them), the tasks' outputs held meanwhile up to
        # TASK_BYTES
        held, held_bytes = [], 0

        def add_held():
            repair_ties(
                ensemble,
                X,
                [
                    (outputs, ties, rows, groups[g], permutations[r])
                    for g, r, _, rows, outputs, ties in held
                ],
                start=start,
                divisor=divisor,
                tree_rows=tree_rows,
            )
            for g, r, moved, rows, outputs, _ in held:
                terms = additive.row_terms(scored_values(outputs), term_rows[rows])
                totals[g, r] += base_sum + (terms.sum() - base_terms[moved].sum())
            held.clear()

        for (g, r), change in zip(pairs, changes, strict=True):
            # rows that are not scored are out of bag for no tree: unchanged
            moved = changed_rows(change)
            rows = chunk_rows[moved]
            outputs, ties = outputs_of(base[moved], change[moved], rows)
            held.append((g, r, moved, rows, outputs, ties))
            held_bytes += outputs.nbytes + 2 * moved.nbytes
            if held_bytes >= TASK_BYTES:
                add_held()
                held_bytes = 0
        add_held()

    with _engine_threads(n_jobs) as parallel:
        for chunk_rows in chunks:
            routed, reached_leaves = _route_chunk(
                ensemble, X, chunk_rows, tree_rows, parallel
            )
            base = base_total[chunk_rows]
            _add_leaf_values(ensemble, base, routed, reached_leaves)
            base_total[chunk_rows] = base
            # groups are split between workers; each adds to its own totals
            parallel(
                delayed(add_totals)(part, routed, chunk_rows, base)
                for part in _worker_parts(len(groups), n_jobs)
            )
            # freed before the next chunk is routed, not held beside it
            del routed, reached_leaves
            if progress is not None:
                progress(f"tree engine: {chunk_rows[-1] + 1:,} of {n_rows:,} rows done")
    return totals, base_total


def _scored_values(estimator, ensemble):
    """What :meth:`AdditiveScore.row_terms` reads of engine outputs:
    probabilities for classifiers, values for regressors."""
    if ensemble.kind.endswith("classifier"):
        return lambda outputs: stored_outputs(estimator, ensemble, outputs).proba
    return lambda outputs: outputs


def _chunked_additive(estimator, chunks, scoring, y, sample_weight):
    """The additive form of the score when the rows span several chunks,
    else None.

    Within one chunk the scorer itself scores the outputs (its results are
    then bit for bit scikit-learn's); beyond, scoring all rows at once would
    mean routing every chunk again for each batch of groups, and the sums of
    row terms agree with the scorer to floating-point precision.
    """
    if len(chunks) < 2:
        return None
    return AdditiveScore.for_scoring(estimator, scoring, y, sample_weight)


def _permuted_scores(
    estimator,
    ensemble,
    X,
    y,
    sample_weight,
    groups,
    permutations,
    scorer,
    n_jobs,
    scoring,
    *,
    start,
    divisor,
    tree_rows=None,
    scored=None,
    progress=None,
):
    """Scores of the rows ``scored`` (a mask; None: all) with each group
    permuted by each permutation: summed chunk by chunk when the score is
    additive and the rows span several chunks, else by the scorer. Returns
    them with the unpermuted ``start + sum of leaf values`` of every row.
    ``progress`` (a :class:`~sklearn_fimp._utils._progress.Progress`, or None) is
    told of each chunk or batch done when there are several."""
    if scored is not None:
        y = y[scored]
        sample_weight = None if sample_weight is None else sample_weight[scored]
    chunks = _chunks(ensemble, X, tree_rows)
    additive = _chunked_additive(estimator, chunks, scoring, y, sample_weight)
    if additive is not None:
        totals, base_total = chunked_score_totals(
            ensemble,
            X,
            groups,
            permutations,
            n_jobs,
            start=start,
            divisor=divisor,
            additive=additive,
            scored_values=_scored_values(estimator, ensemble),
            chunks=chunks,
            tree_rows=tree_rows,
            scored=scored,
            progress=progress,
        )
        return np.vectorize(additive.score)(totals), base_total
    scores = {}
    for g, r, outputs, base_total in permuted_outputs(  # noqa: B007 (returned)
        ensemble,
        X,
        groups,
        permutations,
        n_jobs,
        start=start,
        divisor=divisor,
        chunks=chunks,
        tree_rows=tree_rows,
        ranks_matter=not scorer_reads_labels_only(scorer),
        progress=progress,
    ):
        if scored is not None:
            outputs = outputs[scored]
        stored = stored_outputs(estimator, ensemble, outputs)
        scores[g, r] = score_outputs(scorer, stored, y, sample_weight)
    return score_table(scores, len(groups), len(permutations)), base_total


def fast_permuted_scores(
    estimator,
    ensemble,
    X,
    y,
    sample_weight,
    groups,
    permutations,
    scorer,
    n_jobs,
    scoring=None,
    progress=None,
):
    """Scores with each group permuted, on validation rows (engine path of
    :func:`~sklearn_fimp.permutation_importance`).

    ``X`` is already validated by :func:`engine_input`."""
    if ensemble.boosted:
        start, divisor = gradient_boosting_init(estimator, X), 1.0
    else:
        start = np.zeros((X.shape[0], ensemble.n_outputs))
        divisor = float(len(ensemble.terms))
    scores, _ = _permuted_scores(
        estimator,
        ensemble,
        X,
        y,
        sample_weight,
        groups,
        permutations,
        scorer,
        n_jobs,
        scoring,
        start=start,
        divisor=divisor,
        progress=progress,
    )
    return scores


def fast_oob_permuted_scores(
    estimator,
    ensemble,
    members,
    X,
    y,
    sample_weight,
    groups,
    permutations,
    scorer,
    n_jobs,
    scoring=None,
    progress=None,
):
    """Out-of-bag scores with each group permuted over the training rows
    (engine path of :func:`~sklearn_fimp.oob_permutation_importance`), and
    the sums of the members' out-of-bag outputs with their counts, as
    :func:`~sklearn_fimp._importance._bagging.oob_sums` gives them (the
    baseline's input).

    ``X`` is already validated against the estimator."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    tree_rows = [member.oob_rows for member in members]
    count = np.zeros(X.shape[0])
    for rows in tree_rows:
        count[rows] += 1
    scores, total = _permuted_scores(
        estimator,
        ensemble,
        X,
        y,
        sample_weight,
        groups,
        permutations,
        scorer,
        n_jobs,
        scoring,
        start=np.zeros((X.shape[0], ensemble.n_outputs)),
        divisor=np.maximum(count, 1),
        tree_rows=tree_rows,
        scored=count > 0,
        progress=progress,
    )
    if not ensemble.kind.endswith("classifier") and total.shape[1] == 1:
        total = total[:, 0]  # as a single-output regressor predicts
    return scores, total, count


def fast_member_drops(
    estimator,
    ensemble,
    t,
    rows,
    X,
    y,
    sample_weight,
    groups,
    n_repeats,
    seed,
    scorer,
    scoring,
):
    """Breiman's per-tree importances of tree ``t`` on its out-of-bag
    ``rows`` (engine path of ``oob_permutation_importance(per_tree=True)``).

    Same permutations and results as the predict-every-row path; a group
    that no path of the tree uses gets exactly 0 without being scored. For
    accuracy, R² and mean squared error, a permuted score is updated from
    the re-routed rows alone. ``X`` is already validated against the
    estimator.
    """
    term = ensemble.terms[t]
    X_rows = np.ascontiguousarray(X[rows], dtype=np.float32)
    y_rows = y[rows]
    weight = None if sample_weight is None else sample_weight[rows]
    every_row = np.arange(len(rows))
    # without the compiled kernels, groups that nearly every path uses are
    # re-routed on all rows, which needs no record of the features each
    # path uses
    dense = [False] * len(groups)
    if term.nodes is None:
        sample = np.unique(np.linspace(0, len(rows) - 1, SAMPLE_ROWS).astype(int))
        sample_routing = route(term, X_rows[sample], X.shape[1])
        dense = [
            len(affected_rows(sample_routing, columns))
            >= MAX_AFFECTED_SHARE * len(sample)
            for columns in groups
        ]
    if all(dense):
        routing = None
        base_leaves = term.tree.tree_.apply(_tree_input(term, X_rows))
    else:
        routing = route(term, X_rows, X.shape[1])
        base_leaves = routing.leaves

    def tree_outputs(leaves):
        """The tree's outputs in the engine's layout (n_rows, n_outputs)."""
        values = term.table[leaves]
        if term.columns is not None:
            full = np.zeros((len(leaves), ensemble.n_outputs))
            full[:, term.columns] = values
            values = full
        return values

    def tree_score(leaves):
        outputs = stored_outputs(estimator, ensemble, tree_outputs(leaves))
        return score_outputs(scorer, outputs, y_rows, weight)

    additive = AdditiveScore.for_scoring(estimator, scoring, y_rows, weight)
    if additive is None:
        baseline = tree_score(base_leaves)
    else:
        # each node's prediction, read once rather than per moved row
        node_predictions = additive.predictions(
            tree_outputs(np.arange(term.tree.tree_.node_count))
        )
        base_terms = additive.prediction_terms(node_predictions[base_leaves], every_row)
        base_total = base_terms.sum()
        baseline = additive.score(base_total)
    generator = np.random.RandomState(seed)
    permutations = np.array(
        [generator.permutation(len(rows)) for _ in range(n_repeats)],
        dtype=np.int64,
    ).reshape(n_repeats, len(rows))

    def moves(g, columns):
        """Rows that reach another leaf with the group permuted, and their
        leaves, permutation after permutation (``counts`` of each)."""
        changed, new_leaves = [], []
        for permutation in permutations:
            if dense[g]:
                rows_moved = every_row
            else:
                rows_moved = moving_rows(routing, columns, X_rows, permutation)
            X_moved = permuted_rows(X_rows, rows_moved, columns, permutation)
            changed.append(rows_moved)
            new_leaves.append(term.tree.tree_.apply(_tree_input(term, X_moved)))
        counts = [len(rows_moved) for rows_moved in changed]
        return np.concatenate(changed), np.concatenate(new_leaves), counts

    # compiled, every group's moves come from the kernel; a group no path
    # uses moves no row, and its drop is exactly 0
    compiled = (
        None
        if term.nodes is None
        else compiled_moved_leaves(term, routing, X_rows, permutations, groups)
    )
    # a score of several metrics is an array: one drop per metric
    drops = np.zeros((len(groups), n_repeats, *np.shape(baseline)))
    for g, columns in enumerate(groups):
        if compiled is not None:
            changed, new_leaves, counts = next(compiled)
        elif not dense[g] and not len(affected_rows(routing, columns)):
            continue  # no path uses the group: exactly 0, nothing to score
        else:
            changed, new_leaves, counts = moves(g, columns)
        if additive is not None:
            change = additive.prediction_terms(node_predictions[new_leaves], changed)
            change -= base_terms[changed]
            repeat = np.repeat(np.arange(n_repeats), counts)
            totals = base_total + np.bincount(repeat, change, minlength=n_repeats)
            drops[g] = [baseline - additive.score(total) for total in totals]
            continue
        ends = np.cumsum(counts)
        for r, (first, last) in enumerate(zip(ends - counts, ends)):
            if first == last:
                continue  # every row keeps its path: the drop is exactly 0
            leaves = base_leaves.copy()
            leaves[changed[first:last]] = new_leaves[first:last]
            drops[g, r] = baseline - tree_score(leaves)
    return baseline, drops
