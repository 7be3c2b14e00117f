"""The engine's backend, chosen once when the engine loads: the compiled
kernels when they were built and match the record dtypes, else NumPy.

Both backends offer the same operations, with the same results to the last
bit (``tests/test_engine_backend.py`` compares them):

``prepare(ensemble)``
    What the backend reads of an ensemble besides its terms (NumPy: every
    tree's table stacked; compiled: every tree's nodes packed into
    ``NODE_DTYPE`` records and its table widened to all outputs).
``route_tree(ensemble, t, X_rows, rows=None)``
    Tree ``t``'s :class:`~._routing.RoutedTree` of some rows.
``route_chunk(ensemble, X_chunk, rows_in_chunk, parallel)``
    Every tree's routing of a chunk, as ``task_changes`` and
    ``add_leaf_values`` read it.
``add_leaf_values(ensemble, total, routed)``
    Add every tree's leaf values on the routed rows to ``total``, tree by
    tree in order.
``task_changes(ensemble, routed, chunk_rows, X, tasks)``
    Yield each task's change of the total on the chunk's rows.
``tree_moves(ensemble, t, X_rows, permutations, groups)``
    Tree ``t``'s leaves on its rows and, per group, the rows that move and
    their new leaves (or None when no path uses the group).
``worth_rerouting(ensemble, X, groups, tree_rows)``
    Which groups re-routing computes faster than predicting every row.

The rest of the engine calls ``ensemble.backend``, set by
:func:`prepare_ensemble` to ``BACKEND``; tests switch backends with
``monkeypatch.setattr(_backend, "BACKEND", _backend.NUMPY)``. A new backend
(another compiled implementation, a GPU) is one class here with these
operations.
"""

import warnings
from typing import NamedTuple

import numpy as np
from joblib import delayed

from . import _budgets
from ._changes import (
    compiled_add_leaf_values,
    compiled_task_changes,
    compiled_tree_moves,
    numpy_add_leaf_values,
    numpy_task_changes,
    numpy_tree_moves,
    oblivious_add_leaf_values,
    oblivious_task_changes,
)
from ._kernels import NODE_DTYPE, load_kernels
from ._routing import (
    ObliviousRouting,
    affected_rows,
    route_forest_compiled,
    route_oblivious,
    route_tree_compiled,
    route_tree_numpy,
)


class StackedTables(NamedTuple):
    """Every tree's table stacked, and where each tree's rows start in it
    (for the NumPy backend, when every tree writes every output)."""

    table: np.ndarray
    offsets: np.ndarray


class TreeNodes(NamedTuple):
    """One tree's nodes for the compiled kernels: scikit-learn's arrays
    packed into ``NODE_DTYPE`` records, with ``column`` the column of X each
    split node reads (0 on leaves), the float32 thresholds of the intervals,
    and the category words its categorical nodes' ``category_set`` index."""

    nodes: np.ndarray
    threshold32: np.ndarray
    categories: np.ndarray


def category_sets(tree_):
    """A tree's categorical nodes: where each node's set starts in its
    category words (-1 on other nodes), and the words (see
    ``adapters/_flat_trees.py``); scikit-learn's trees have none."""
    sets = getattr(tree_, "category_set", None)
    if sets is None:
        return np.full(tree_.node_count, -1, dtype=np.int32), np.empty(0, np.uint32)
    return sets, tree_.category_words


class ObliviousLevels(NamedTuple):
    """An ensemble of oblivious trees, level by level, for the compiled
    kernels: tree ``t``'s levels (root first) are ``offset[t]:offset[t + 1]``
    of ``column``, ``threshold`` and ``missing_left``; a row's leaf number
    has bit ``d`` set when the row goes right at level ``d``, and
    ``tables[t][number]`` are that leaf's values in all outputs."""

    offset: np.ndarray
    column: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    tables: list
    table_addresses: np.ndarray

    @classmethod
    def of(cls, packed):
        """The levels of a :class:`PackedForest` whose every tree is
        oblivious, else None."""
        offset, columns, thresholds, missing, tables = [0], [], [], [], []
        for t in range(len(packed.node_offset)):
            nodes = packed.tree_nodes(t).nodes
            levels = oblivious_tree_levels(nodes)
            if levels is None:
                return None
            splits, leaves = levels
            offset.append(offset[-1] + len(splits))
            columns.append(nodes["column"][splits])
            thresholds.append(nodes["threshold"][splits])
            missing.append(nodes["missing_left"][splits])
            tables.append(np.ascontiguousarray(packed.tables[t][leaves]))
        return cls(
            np.asarray(offset, dtype=np.int64),
            np.concatenate(columns).astype(np.int32),
            np.concatenate(thresholds).astype(np.float64),
            np.concatenate(missing).astype(np.uint8),
            tables,
            np.array([table.ctypes.data for table in tables], dtype=np.uintp),
        )


def oblivious_tree_levels(nodes):
    """For a tree (``NODE_DTYPE`` records) whose every level splits all its
    nodes on one column, threshold and missing direction, with no
    categorical split and every leaf at the same depth: one split node per
    level (root first) and the leaf node of each leaf number (bit ``d`` set:
    right at level ``d``). None for any other tree."""
    level = np.zeros(1, dtype=np.int64)
    splits = []
    # at most log2(node count) levels
    while nodes["left"][level[0]] != -1:
        if len(splits) > 30:
            return None
        records = nodes[level]
        first = records[0]
        same = (
            (records["left"] != -1)
            & (records["column"] == first["column"])
            & (records["threshold"] == first["threshold"])
            & (records["missing_left"] == first["missing_left"])
            & (records["category_set"] < 0)
        )
        if not same.all():
            return None
        splits.append(level[0])
        # leaf numbers: a level's nodes in the order of their numbers' low
        # bits, its left children first (bit 0), then its right ones
        level = np.concatenate([records["left"], records["right"]])
    if (nodes["left"][level] != -1).any():
        return None
    return np.asarray(splits, dtype=np.int64), level


class PackedForest(NamedTuple):
    """Every tree's nodes, one after the other, for the compiled kernels."""

    node_offset: np.ndarray
    nodes: np.ndarray
    threshold32: np.ndarray
    #: every tree's category words, one after the other (at least one word,
    #: so that the kernels get an array)
    categories: np.ndarray
    #: each tree's (n_nodes, n_outputs) leaf values in all outputs, and the
    #: addresses of those arrays, which the kernels read
    tables: list
    table_addresses: np.ndarray
    #: the :class:`ObliviousLevels` of an ensemble of oblivious trees
    #: (CatBoost's, stumps), which the kernels route and re-route by leaf
    #: numbers instead of paths; None for other ensembles
    oblivious: object = None

    @classmethod
    def of(cls, ensemble):
        trees = [term.tree for term in ensemble.terms]
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
        sets, words, n_words = [], [], 0
        for tree_ in trees:
            tree_sets, tree_words = category_sets(tree_)
            sets.append(np.where(tree_sets >= 0, tree_sets + n_words, -1))
            words.append(tree_words)
            n_words += len(tree_words)
        nodes["category_set"] = np.concatenate(sets)
        categories = np.concatenate(words + [np.zeros(1, np.uint32)]).astype(np.uint32)
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
        packed = cls(node_offset, nodes, threshold32, categories, tables, addresses)
        return packed._replace(oblivious=ObliviousLevels.of(packed))

    def tree_nodes(self, t):
        """Tree ``t``'s nodes (views)."""
        first = self.node_offset[t]
        last = (
            self.node_offset[t + 1]
            if t + 1 < len(self.node_offset)
            else len(self.nodes)
        )
        return TreeNodes(
            self.nodes[first:last], self.threshold32[first:last], self.categories
        )


class NumpyBackend:
    """The engine in NumPy and scikit-learn's tree methods (``apply``,
    ``decision_path``): no compiler needed, slower."""

    name = "numpy"

    def __reduce__(self):
        # ensembles travel to joblib workers; the backend is found by name
        return (get_backend, (self.name,))

    def prepare(self, ensemble):
        if any(term.columns is not None for term in ensemble.terms):
            return None
        sizes = [len(term.table) for term in ensemble.terms]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
        stacked = np.concatenate([term.table for term in ensemble.terms])
        return StackedTables(stacked, offsets)

    def route_tree(self, ensemble, t, X_rows, rows=None):
        return route_tree_numpy(ensemble.terms[t], X_rows, rows)

    def route_chunk(self, ensemble, X_chunk, rows_in_chunk, parallel):
        return parallel(
            delayed(route_tree_numpy)(term, X_chunk, rows)
            for term, rows in zip(ensemble.terms, rows_in_chunk)
        )

    def add_leaf_values(self, ensemble, total, routed):
        numpy_add_leaf_values(ensemble, total, routed)

    def task_changes(self, ensemble, routed, chunk_rows, X, tasks):
        return numpy_task_changes(ensemble, routed, chunk_rows, X, tasks)

    def tree_moves(self, ensemble, t, X_rows, permutations, groups):
        return numpy_tree_moves(ensemble, t, X_rows, permutations, groups)

    def worth_rerouting(self, ensemble, X, groups, tree_rows=None):
        """Re-routing saves the rows whose paths avoid a group; when nearly
        every path uses it (deep trees on a few features), re-routing in
        NumPy costs as much as predicting all rows, plus the bookkeeping.
        The share of affected rows is estimated on up to ``SAMPLE_ROWS``
        evenly spaced rows."""
        X = np.asarray(X, dtype=np.float32)
        sample = _budgets.evenly_spaced(X.shape[0], _budgets.SAMPLE_ROWS)
        if tree_rows is not None:
            sample_rows = [np.intersect1d(rows, sample) for rows in tree_rows]
        else:
            sample_rows = [sample] * len(ensemble.terms)
        affected = np.zeros(len(groups))
        reached = 0
        for term, rows in zip(ensemble.terms, sample_rows):
            if not len(rows):
                continue
            routing = route_tree_numpy(term, X[rows])
            affected += [len(affected_rows(routing, columns)) for columns in groups]
            reached += len(rows)
        return affected < _budgets.MAX_AFFECTED_SHARE * max(reached, 1)


class CompiledBackend:
    """The engine's inner loops in C (``_ckernels.c``, through the typed
    wrappers of ``_kernels.py``)."""

    name = "compiled"

    def __init__(self, kernels):
        self.kernels = kernels

    def __reduce__(self):
        return (get_backend, (self.name,))

    def prepare(self, ensemble):
        # the kernels read the concatenated nodes and the tables' addresses
        return PackedForest.of(ensemble)

    def route_tree(self, ensemble, t, X_rows, rows=None):
        return route_tree_compiled(
            self.kernels,
            ensemble.prepared.tree_nodes(t),
            ensemble.terms[t].tree.max_depth,
            X_rows,
            rows,
        )

    def route_chunk(self, ensemble, X_chunk, rows_in_chunk, parallel):
        levels = ensemble.prepared.oblivious
        if levels is not None and all(rows is None for rows in rows_in_chunk):
            return route_oblivious(self.kernels, levels, X_chunk, parallel)

        def route_tree(t, X_chunk, rows):
            return self.route_tree(ensemble, t, X_chunk, rows)

        return route_forest_compiled(
            route_tree, len(ensemble.terms), X_chunk, rows_in_chunk, parallel
        )

    def add_leaf_values(self, ensemble, total, routed):
        if isinstance(routed, ObliviousRouting):
            oblivious_add_leaf_values(self.kernels, ensemble, total, routed)
        else:
            compiled_add_leaf_values(self.kernels, ensemble, total, routed)

    def task_changes(self, ensemble, routed, chunk_rows, X, tasks):
        if isinstance(routed, ObliviousRouting):
            return oblivious_task_changes(
                self.kernels, ensemble, routed, chunk_rows, X, tasks
            )
        return compiled_task_changes(
            self.kernels, ensemble, routed, chunk_rows, X, tasks
        )

    def tree_moves(self, ensemble, t, X_rows, permutations, groups):
        return compiled_tree_moves(
            self.kernels, ensemble, t, X_rows, permutations, groups
        )

    def worth_rerouting(self, ensemble, X, groups, tree_rows=None):
        """Every group: compiled, re-routing the rows that move costs less
        than predicting every row even when every path uses the group (on
        the rent data of bench/bench_permutation.py, whose deep trees use
        every feature on nearly every path, 1.7x faster)."""
        return np.ones(len(groups), dtype=bool)


#: The NumPy backend, always available.
NUMPY = NumpyBackend()
_KERNELS = load_kernels()
#: The compiled backend, or None when the kernels were not built or were
#: refused (see ``_kernels.load_kernels``).
COMPILED = None if _KERNELS is None else CompiledBackend(_KERNELS)
#: The backend new ensembles are prepared for.
BACKEND = NUMPY if COMPILED is None else COMPILED


def get_backend(name):
    """The backend called ``name`` ("numpy" or "compiled")."""
    if name == "numpy":
        return NUMPY
    if COMPILED is None:
        raise RuntimeError(
            "an ensemble prepared for sklearn_fimp's compiled kernels reached a "
            "process where they are not available; install the same build of "
            "sklearn_fimp on every worker."
        )
    return COMPILED


_said_not_compiled = False


def warn_if_not_compiled():
    """Say once per process, at the engine's first use, that it runs
    without its compiled kernels (not built: no C compiler at install)."""
    global _said_not_compiled
    if COMPILED is not None or _said_not_compiled:
        return
    _said_not_compiled = True
    warnings.warn(
        "sklearn_fimp's compiled kernels are not installed (no C compiler "
        "was found when the package was built), so the tree engine runs its "
        "NumPy implementation: the same results, several times slower. "
        "Reinstall sklearn_fimp where a C compiler is available to get them; "
        "sklearn_fimp.show_versions() reports whether they are in use.",
        UserWarning,
        stacklevel=2,
    )


def prepare_ensemble(ensemble):
    """``ensemble`` prepared for ``BACKEND``."""
    warn_if_not_compiled()
    backend = BACKEND
    return ensemble._replace(backend=backend, prepared=backend.prepare(ensemble))
