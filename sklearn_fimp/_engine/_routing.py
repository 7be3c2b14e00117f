"""Routing: each row's leaf in a tree, and the interval each feature its
path splits on may take without changing the leaf.

For every row and every feature its path splits on, the path constrains the
feature to an interval ``lower < x <= upper``: a permuted value inside it
takes the row down the same path, to the same leaf. A row with a missing
value in the feature was sent by the node's missing-value rule, not by the
interval: it gets ``lower = +inf`` and is always re-routed, as is a row
that passes a categorical split (a set of codes, not an interval) on the
feature. The pairs are
stored feature by feature, as a CSC matrix's ``indptr`` does.

Both backends' routings are here: the NumPy one from the tree's
``decision_path``, the compiled one through the ``route_rows`` and
``route_scatter`` kernels (the same pairs, in the same order).
"""

from typing import NamedTuple

import numpy as np
from joblib import delayed, effective_n_jobs

from .._utils._compat import decision_path
from ._kernels import PAIR_DTYPE


class RoutedTree(NamedTuple):
    """One tree's routing of a chunk of rows (``feature_ptr`` indexes
    ``path_rows``, ``lower`` and ``upper`` as a CSC matrix's ``indptr``
    does)."""

    rows: np.ndarray | None  # positions in the chunk it scores (None: all)
    leaves: np.ndarray  # leaf of each of those rows
    feature_ptr: np.ndarray  # (n_features + 1,)
    path_rows: np.ndarray  # row (index into leaves) of each pair
    lower: np.ndarray  # float32, exclusive
    upper: np.ndarray  # float32, inclusive
    #: the compiled routing's pairs (``PAIR_DTYPE`` records, of which the
    #: arrays above are fields), or None
    pairs: np.ndarray | None = None


class RoutedForest(NamedTuple):
    """Every tree's compiled routing of a chunk of rows: tree ``t``'s rows
    are ``row_offset[t]:row_offset[t + 1]`` of ``positions`` (their rows in
    the chunk) and ``leaves``; its pairs are ``routings[t].pairs`` (at
    address ``pair_addresses[t]``), column ``c``'s from ``ptr[t, c]`` to
    ``ptr[t, c + 1]``."""

    row_offset: np.ndarray
    positions: np.ndarray
    leaves: np.ndarray
    ptr: np.ndarray
    pair_addresses: np.ndarray
    #: the per-tree routings, which own the pairs
    routings: list


class ObliviousRouting(NamedTuple):
    """Every oblivious tree's leaf number of every row of a chunk
    (n_trees x n_rows; see ``_backend.ObliviousLevels``)."""

    bits: np.ndarray


def route_oblivious(kernels, levels, X_chunk, parallel):
    """The leaf numbers of a chunk's rows in every oblivious tree, the trees
    split between the threads of ``parallel``."""
    X_chunk = np.ascontiguousarray(X_chunk, dtype=np.float32)
    n_trees = len(levels.offset) - 1
    bits = np.empty((n_trees, X_chunk.shape[0]), dtype=np.int32)
    parts = np.array_split(
        np.arange(n_trees), max(1, min(effective_n_jobs(parallel.n_jobs), n_trees))
    )

    def route(first, last):
        kernels.oblivious_leaves(
            levels=levels, first_tree=first, last_tree=last, X=X_chunk, bits=bits
        )

    parallel(delayed(route)(part[0], part[-1] + 1) for part in parts if len(part))
    return ObliviousRouting(bits)


def tree_input(term, X_rows):
    """Rows of X as the term's tree reads them (its feature subset)."""
    if term.features is not None:
        X_rows = X_rows[:, term.features]
    return np.ascontiguousarray(X_rows)


def as_rows(rows, n_rows):
    """Row indices as int64, every row for None."""
    if rows is None:
        return np.arange(n_rows, dtype=np.int64)
    return np.ascontiguousarray(rows, dtype=np.int64)


def rows_in_chunk(tree_rows, chunk_rows, n_terms):
    """Each tree's rows (in increasing order) that fall in the chunk, as
    positions in it, or None for all rows."""
    if tree_rows is None:
        return [None] * n_terms
    first, stop = chunk_rows[0], chunk_rows[-1] + 1
    return [
        rows[np.searchsorted(rows, first) : np.searchsorted(rows, stop)] - first
        for rows in tree_rows
    ]


def route_tree_numpy(term, X_chunk, rows=None):
    """Routing of a chunk's rows (``rows``: the tree's subset of it, or None
    for all rows) through one tree, from its ``decision_path``."""
    n_features = X_chunk.shape[1]
    X_tree = tree_input(term, X_chunk if rows is None else X_chunk[rows])
    tree_ = term.tree
    n_rows = X_tree.shape[0]
    path = decision_path(tree_, X_tree)
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
    # a set of categories is no interval: rows on such a split always move
    category_set = getattr(tree_, "category_set", None)
    if category_set is not None:
        categorical = category_set[split_nodes] >= 0
        lower[key[categorical]] = np.inf
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


def route_tree_compiled(kernels, tree_nodes, max_depth, X_chunk, rows=None):
    """:func:`route_tree_numpy` with the compiled kernels (``tree_nodes``:
    the tree's packed nodes): the pairs are recorded row by row, then
    stored column by column."""
    X_chunk = np.ascontiguousarray(X_chunk, dtype=np.float32)
    tree_rows = as_rows(rows, X_chunk.shape[0])
    n_rows, n_columns = len(tree_rows), X_chunk.shape[1]
    width = max(1, min(max_depth, n_columns))
    leaves = np.empty(n_rows, dtype=np.int64)
    counts = np.zeros(n_columns, dtype=np.int64)
    buffer = np.empty(n_rows * width, dtype=PAIR_DTYPE)
    buffer_columns = np.empty(n_rows * width, dtype=np.int32)
    row_counts = np.empty(n_rows, dtype=np.int32)
    kernels.route_rows(
        nodes=tree_nodes.nodes,
        categories=tree_nodes.categories,
        threshold32=tree_nodes.threshold32,
        X=X_chunk,
        rows=tree_rows,
        width=width,
        leaves=leaves,
        counts=counts,
        buffer=buffer,
        buffer_columns=buffer_columns,
        row_counts=row_counts,
    )
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    pairs = np.empty(ptr[-1], dtype=PAIR_DTYPE)
    kernels.route_scatter(
        buffer=buffer,
        buffer_columns=buffer_columns,
        row_counts=row_counts,
        width=width,
        ptr=ptr,
        pairs=pairs,
    )
    return RoutedTree(
        rows, leaves, ptr, pairs["row"], pairs["lower"], pairs["upper"], pairs
    )


def route_forest_compiled(route_tree, n_trees, X_chunk, rows_in_chunk, parallel):
    """Route a chunk through every tree with the compiled kernels
    (``route_tree(t, X_chunk, rows)``: one tree's compiled routing;
    ``parallel``: a :class:`joblib.Parallel` of threads)."""
    positions = [as_rows(rows, X_chunk.shape[0]) for rows in rows_in_chunk]
    routings = parallel(
        delayed(route_tree)(t, X_chunk, rows) for t, rows in enumerate(positions)
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


def affected_rows(routing, columns):
    """Rows (of a routed tree) whose path splits on any of ``columns``."""
    parts = [
        routing.path_rows[routing.feature_ptr[c] : routing.feature_ptr[c + 1]]
        for c in columns
    ]
    return parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))


def moving_rows(routing, columns, values):
    """Rows (of a routed tree) that leave their path when ``columns`` are
    replaced: some replaced value falls outside the row's interval.

    Row ``i`` of the tree receives ``values[i, j]`` in column ``columns[j]``.
    """
    moving = []
    for j, c in enumerate(columns):
        span = slice(routing.feature_ptr[c], routing.feature_ptr[c + 1])
        rows = routing.path_rows[span]
        received = values[rows, j]
        stay = (received > routing.lower[span]) & (received <= routing.upper[span])
        moving.append(rows[~stay])
    return moving[0] if len(moving) == 1 else np.unique(np.concatenate(moving))
