"""Replaced changes: how the ensemble's output on each row changes when a
group of columns is given other values, from the rows that leave their paths
only.

A task is a group of columns and a replacement of their values: a
:class:`Permutation` (each row receives another row's values, as
permutation importance asks), :class:`GivenValues` (each row receives
values given for it, such as a conditional draw) or :class:`DonorRows`
(each row receives the values of a row held beside X, as a permutation of
a table spread over machines brings them). All give the engine the same
thing, the values each row receives (a permutation's are
``X[permutation, columns]``), so one mechanism serves all. For a routed
chunk, a task's change on a row is the sum over trees of (leaf value after
the replacement - leaf value before) over the trees in which the row moves;
the unreplaced total plus the change is the replaced output. Both backends'
implementations are here; :func:`group_changes` runs the backend's on
chunks, groups and workers.
"""

from typing import NamedTuple

import numpy as np
from joblib import delayed

from . import _budgets
from ._kept import _KEPT
from ._routing import (
    affected_rows,
    moving_rows,
    route_tree_numpy,
    rows_in_chunk,
    tree_input,
)


class Permutation(NamedTuple):
    """A group's columns taken from other rows of X: row ``i`` receives the
    values of row ``source[i]``."""

    source: np.ndarray

    def values(self, X, rows, columns):
        """The values rows ``rows`` of X receive in ``columns``, shape
        (len(rows), len(columns))."""
        return X[np.ix_(self.source[rows], columns)]


class GivenValues(NamedTuple):
    """A group's columns replaced by given values: row ``i`` of X receives
    ``array[i]`` (one value per column of the group, as the trees read X)."""

    array: np.ndarray

    def values(self, X, rows, columns):
        """The values rows ``rows`` of X receive, shape (len(rows),
        len(columns))."""
        return self.array[rows]


class DonorRows(NamedTuple):
    """A group's columns taken from rows held beside X: row ``i`` receives
    the values of ``donors[i]`` (a row of another part of a table spread
    over machines, which a global permutation sends to row ``i``; shape
    ``(n_rows, n_columns of X)``, as the trees read X)."""

    donors: np.ndarray

    def values(self, X, rows, columns):
        """The values rows ``rows`` of X receive in ``columns``."""
        return self.donors[np.ix_(rows, columns)]


def permutation_tasks(permutations, n_groups):
    """The replacements of ``n_groups`` groups, each permuted by each of
    ``permutations``: ``replacements[g][r]``."""
    shared = [Permutation(np.asarray(permutation)) for permutation in permutations]
    return [shared] * n_groups


def replaced_rows(X, rows, columns, replacement):
    """Rows ``rows`` of X with ``columns`` given the values ``replacement``
    gives those rows."""
    X_rows = X[rows]
    X_rows[:, columns] = replacement.values(X, rows, columns)
    return X_rows


def numpy_add_tree_changes(ensemble, routed, chunk_rows, X, columns, replacement, out):
    """Add to ``out`` (the chunk's rows) the change of every tree's leaf
    value when ``columns`` are replaced; only rows that leave their path are
    re-routed (``routed``: the chunk's :class:`RoutedTree` of each tree)."""
    # the values each chunk row receives
    chunk_values = replacement.values(X, chunk_rows, columns)
    stacked = ensemble.prepared
    moved_positions, new_nodes, old_nodes = [], [], []
    for t, (term, routing) in enumerate(zip(ensemble.terms, routed)):
        tree_values = (
            chunk_values if routing.rows is None else chunk_values[routing.rows]
        )
        moving = moving_rows(routing, columns, tree_values)
        if not len(moving):
            continue
        positions = moving if routing.rows is None else routing.rows[moving]
        X_moving = X[chunk_rows[positions]]
        X_moving[:, columns] = chunk_values[positions]
        leaves = term.tree.apply(tree_input(term, X_moving))
        if stacked is None:
            change = term.table[leaves] - term.table[routing.leaves[moving]]
            out[np.ix_(positions, term.columns)] += change
            continue
        moved_positions.append(positions)
        new_nodes.append(leaves + stacked.offsets[t])
        old_nodes.append(routing.leaves[moving] + stacked.offsets[t])
    if moved_positions:
        # all trees' changes at once: one gather, one weighted count per column
        positions = np.concatenate(moved_positions)
        table = stacked.table
        change = table[np.concatenate(new_nodes)] - table[np.concatenate(old_nodes)]
        for k in range(out.shape[1]):
            out[:, k] += np.bincount(positions, change[:, k], minlength=len(out))


def numpy_task_changes(ensemble, routed, chunk_rows, X, tasks):
    """Yield, task after task, the change of the total on the chunk's rows
    (n_chunk_rows, n_outputs) when a task's ``(columns, replacement)`` is
    applied."""
    n_rows, n_outputs = len(chunk_rows), ensemble.n_outputs
    for columns, replacement in tasks:
        change = np.zeros((n_rows, n_outputs))
        numpy_add_tree_changes(
            ensemble, routed, chunk_rows, X, columns, replacement, change
        )
        yield change


def _permuted_columns(X, chunk_rows, batch):
    """The values of :func:`_task_batches` when every task permutes one
    column (the selector's case), gathered in one indexing of X: row ``k``
    is task ``k``'s column on the chunk's rows, as each task's ``values``
    gives it; None otherwise."""
    if not all(
        isinstance(replacement, Permutation) and len(columns) == 1
        for columns, replacement in batch
    ):
        return None
    # the tasks share a few permutations (every group gets the same ones)
    sources, row_of = [], {}
    for _, replacement in batch:
        if id(replacement.source) not in row_of:
            row_of[id(replacement.source)] = len(sources)
            sources.append(replacement.source[chunk_rows])
    sources = np.stack(sources)
    which = [row_of[id(replacement.source)] for _, replacement in batch]
    columns = np.array([columns[0] for columns, _ in batch], dtype=np.intp)
    return X[sources[which], columns[:, None]]


def _task_batches(n_rows, n_outputs, chunk_rows, X, tasks):
    """The tasks a batch at a time (``TASK_BYTES``): each batch's tasks, the
    values each gives its group's columns (column by column, as float32) and
    the groups as the kernels take them (``group_ptr``, ``group_columns``)."""
    widest = max(len(columns) for columns, _ in tasks)
    batch_size = _budgets.task_batch_size(n_rows, n_outputs, widest)
    for first in range(0, len(tasks), batch_size):
        batch = tasks[first : first + batch_size]
        values = _permuted_columns(X, chunk_rows, batch)
        if values is None:
            values = np.concatenate(
                [
                    replacement.values(X, chunk_rows, columns).T
                    for columns, replacement in batch
                ]
            )
        values = values.astype(np.float32, order="C", copy=False)
        groups = [np.asarray(columns, dtype=np.int64) for columns, _ in batch]
        group_ptr = np.concatenate([[0], np.cumsum([len(group) for group in groups])])
        yield batch, values, group_ptr.astype(np.int64), np.concatenate(groups)


def compiled_task_changes(kernels, ensemble, routed, chunk_rows, X, tasks):
    """:func:`numpy_task_changes` with the compiled kernels, which take the
    tasks a batch at a time (``TASK_BYTES``), reading each tree's nodes once
    per batch (``routed``: the chunk's :class:`RoutedForest`)."""
    n_rows, n_outputs = len(chunk_rows), ensemble.n_outputs
    forest = ensemble.prepared
    for batch, values, group_ptr, group_columns in _task_batches(
        n_rows, n_outputs, chunk_rows, X, tasks
    ):
        changes = np.zeros((len(batch), n_rows, n_outputs))
        kernels.add_moved_changes(
            node_offset=forest.node_offset,
            nodes=forest.nodes,
            categories=forest.categories,
            table_addresses=forest.table_addresses,
            n_outputs=n_outputs,
            row_offset=routed.row_offset,
            positions=routed.positions,
            leaves=routed.leaves,
            ptr=routed.ptr,
            pair_addresses=routed.pair_addresses,
            X=X,
            chunk_start=chunk_rows[0],
            values=values,
            group_ptr=group_ptr,
            group_columns=group_columns,
            out=changes,
        )
        yield from changes


def oblivious_task_changes(kernels, ensemble, routed, chunk_rows, X, tasks):
    """:func:`compiled_task_changes` for an ensemble of oblivious trees
    (``routed``: the chunk's :class:`ObliviousRouting`): a replaced column
    changes the bits of its own levels in each row's leaf number, with no
    descent; the same changes, summed in the same order."""
    n_rows, n_outputs = len(chunk_rows), ensemble.n_outputs
    for batch, values, group_ptr, group_columns in _task_batches(
        n_rows, n_outputs, chunk_rows, X, tasks
    ):
        changes = np.zeros((len(batch), n_rows, n_outputs))
        kernels.oblivious_changes(
            levels=ensemble.prepared.oblivious,
            n_outputs=n_outputs,
            bits=routed.bits,
            n_columns=X.shape[1],
            values=values,
            group_ptr=group_ptr,
            group_columns=group_columns,
            out=changes,
        )
        yield from changes


def numpy_add_leaf_values(ensemble, total, routed):
    """Add each tree's leaf values to ``total`` (a chunk's rows), tree by
    tree in order, as the model's own ``predict`` adds them."""
    for term, routing in zip(ensemble.terms, routed):
        reached = slice(None) if routing.rows is None else routing.rows
        if term.columns is None:
            total[reached] += term.table[routing.leaves]
        else:
            reached = np.arange(len(total))[reached]
            total[np.ix_(reached, term.columns)] += term.table[routing.leaves]


def oblivious_add_leaf_values(kernels, ensemble, total, routed):
    """:func:`compiled_add_leaf_values` for an ensemble of oblivious trees."""
    kernels.oblivious_add_leaf_values(
        levels=ensemble.prepared.oblivious,
        n_outputs=ensemble.n_outputs,
        bits=routed.bits,
        out=total,
    )


def compiled_add_leaf_values(kernels, ensemble, total, routed):
    """:func:`numpy_add_leaf_values` with the compiled kernels."""
    kernels.add_leaf_values(
        table_addresses=ensemble.prepared.table_addresses,
        n_outputs=ensemble.n_outputs,
        row_offset=routed.row_offset,
        positions=routed.positions,
        leaves=routed.leaves,
        out=total,
    )


def _add_changes_of_groups(ensemble, routed, chunk_rows, X, groups, replacements, out):
    """Add to ``out[g, r]`` the changes of group ``g`` replaced by
    ``replacements[g][r]``."""
    n_repeats = len(replacements[0])
    tasks = [
        (columns, replacement)
        for columns, group_replacements in zip(groups, replacements)
        for replacement in group_replacements
    ]
    changes = ensemble.backend.task_changes(ensemble, routed, chunk_rows, X, tasks)
    for k, change in enumerate(changes):
        out[divmod(k, n_repeats)] += change


def route_chunk(ensemble, X, chunk_rows, tree_rows, parallel):
    """The backend's routing of a chunk (contiguous rows of X) through every
    tree (``tree_rows``: each tree's rows, or None for all)."""
    chunk_tree_rows = rows_in_chunk(tree_rows, chunk_rows, len(ensemble.terms))
    X_chunk = X[chunk_rows[0] : chunk_rows[-1] + 1]
    return ensemble.backend.route_chunk(ensemble, X_chunk, chunk_tree_rows, parallel)


#: The routing of one chunk that :func:`_routed` keeps for the next call,
#: at most (two fitted halves keep two).
KEPT_ROUTING_BYTES = 32 * 2**20


def _nbytes(routed):
    """Bytes of the arrays a routing holds (views counted again: an upper
    bound)."""
    if isinstance(routed, np.ndarray):
        return routed.nbytes
    if isinstance(routed, (tuple, list)):
        return sum(_nbytes(part) for part in routed)
    return 0


def _routed(ensemble, X, chunk_rows, tree_rows, parallel, n_chunks):
    """:func:`route_chunk`; when X is one chunk routed through every tree,
    kept within :func:`~._kept.keeping_ensembles` for the next call on the
    same ensemble and rows (the selector's rounds permute the same rows of
    one fitted half again) when it takes at most ``KEPT_ROUTING_BYTES``."""
    store = _KEPT.get()
    if store is None or n_chunks > 1 or tree_rows is not None:
        return route_chunk(ensemble, X, chunk_rows, tree_rows, parallel)
    key = ("routed", id(ensemble), id(X))
    if key in store:
        return store[key][1]
    routed = route_chunk(ensemble, X, chunk_rows, tree_rows, parallel)
    if _nbytes(routed) <= KEPT_ROUTING_BYTES:
        store[key] = ((ensemble, X), routed)
    return routed


def group_changes(
    ensemble, X, groups, replacements, n_jobs, *, tree_rows, start, chunks, progress
):
    """Yield ``(group_indices, base_total, changes)`` batch by batch.

    ``base_total`` (n_rows, n_outputs) is ``start`` plus the trees' leaf
    values on the unreplaced rows, added tree by tree in order, as the
    model's ``predict`` adds them; ``changes[g, r]`` the change of the total
    when group ``g`` is replaced by ``replacements[g][r]`` (a
    :class:`Permutation` or :class:`GivenValues`; see
    :func:`permutation_tasks`). ``tree_rows``
    restricts each tree to some rows (its out-of-bag rows, in increasing
    order); ``chunks`` are the row ranges routed at once (see
    :func:`~._budgets.row_chunks`).
    """
    n_rows = X.shape[0]
    n_repeats = len(replacements[0]) if len(replacements) else 0
    batch_size = _budgets.group_batch_size(
        len(groups), n_repeats, n_rows, ensemble.n_outputs
    )
    base_total = np.array(start, dtype=np.float64)
    for first in range(0, len(groups), batch_size):
        batch = list(range(first, min(first + batch_size, len(groups))))
        changes = np.zeros((len(batch), n_repeats, n_rows, ensemble.n_outputs))
        with _budgets.engine_threads(n_jobs) as parallel:
            for chunk_rows in chunks:
                chunk_start = chunk_rows[0]
                routed = _routed(
                    ensemble, X, chunk_rows, tree_rows, parallel, len(chunks)
                )
                if first == 0:
                    total = base_total[chunk_rows]
                    ensemble.backend.add_leaf_values(ensemble, total, routed)
                    base_total[chunk_rows] = total
                # groups are split between workers; each writes its own slices
                parallel(
                    delayed(_add_changes_of_groups)(
                        ensemble,
                        routed,
                        chunk_rows,
                        X,
                        [groups[batch[i]] for i in part],
                        [replacements[batch[i]] for i in part],
                        changes[
                            part[0] : part[-1] + 1, :, chunk_start : chunk_rows[-1] + 1
                        ],
                    )
                    for part in _budgets.worker_parts(len(batch), n_jobs)
                )
                # freed before the next chunk is routed, not held beside it
                del routed
        if progress is not None and batch_size < len(groups):
            progress(f"tree engine: {batch[-1] + 1} of {len(groups)} groups done")
        yield batch, base_total, changes


def numpy_tree_moves(ensemble, t, X_rows, permutations, groups):
    """One tree's leaves on its rows ``X_rows``, and for each group in turn
    the rows that reach another leaf with the group permuted by each
    permutation, with their new leaves: ``(changed, new_leaves, counts)``
    (``counts[r]`` rows for permutation ``r``, in turn), or None when no
    path of the tree splits on the group (no row moves).

    Groups that nearly every path uses are re-routed on all rows, which
    needs no record of the features each path uses (``MAX_AFFECTED_SHARE``
    of ``SAMPLE_ROWS`` sampled rows)."""
    term = ensemble.terms[t]
    n_rows = X_rows.shape[0]
    every_row = np.arange(n_rows)
    sample = np.unique(np.linspace(0, n_rows - 1, _budgets.SAMPLE_ROWS).astype(int))
    sample_routing = route_tree_numpy(term, X_rows[sample])
    dense = [
        len(affected_rows(sample_routing, columns))
        >= _budgets.MAX_AFFECTED_SHARE * len(sample)
        for columns in groups
    ]
    if all(dense):
        routing = None
        base_leaves = term.tree.apply(tree_input(term, X_rows))
    else:
        routing = route_tree_numpy(term, X_rows)
        base_leaves = routing.leaves

    def moves(g, columns):
        changed, new_leaves = [], []
        for permutation in permutations:
            replacement = Permutation(permutation)
            if dense[g]:
                rows_moved = every_row
            else:
                values = replacement.values(X_rows, every_row, columns)
                rows_moved = moving_rows(routing, columns, values)
            X_moved = replaced_rows(X_rows, rows_moved, columns, replacement)
            changed.append(rows_moved)
            new_leaves.append(term.tree.apply(tree_input(term, X_moved)))
        counts = [len(rows_moved) for rows_moved in changed]
        return np.concatenate(changed), np.concatenate(new_leaves), counts

    def each_group():
        for g, columns in enumerate(groups):
            if not dense[g] and not len(affected_rows(routing, columns)):
                yield None  # no path uses the group: no row moves
            else:
                yield moves(g, columns)

    return base_leaves, each_group()


def compiled_tree_moves(kernels, ensemble, t, X_rows, permutations, groups):
    """:func:`numpy_tree_moves` with the compiled kernels (never None: a
    group no path uses moves no row). The kernel takes the groups a batch
    at a time (``TASK_BYTES`` bounds the room for their moved rows, which is
    at most the rows whose paths split on a group's columns, once per
    permutation)."""
    routing = ensemble.backend.route_tree(ensemble, t, X_rows)
    return routing.leaves, _compiled_moved_leaves(
        kernels, ensemble.prepared.tree_nodes(t), routing, X_rows, permutations, groups
    )


def _compiled_moved_leaves(kernels, tree_nodes, routing, X, sources, groups):
    n_repeats, n_rows = sources.shape
    # a group moves at most the rows whose paths split on its columns
    paths = np.diff(routing.feature_ptr)
    room = [n_repeats * min(n_rows, int(paths[columns].sum())) for columns in groups]
    first = 0
    while first < len(groups):
        last, size = first + 1, room[first]
        while last < len(groups) and 16 * (size + room[last]) <= _budgets.TASK_BYTES:
            size += room[last]
            last += 1
        batch = [np.asarray(c, dtype=np.int64) for c in groups[first:last]]
        group_ptr = np.concatenate([[0], np.cumsum([len(c) for c in batch])])
        moved = np.empty(max(1, size), dtype=np.int64)
        new_leaves = np.empty_like(moved)
        counts = np.empty(len(batch) * n_repeats, dtype=np.int64)
        kernels.moved_leaves(
            nodes=tree_nodes.nodes,
            categories=tree_nodes.categories,
            X=X,
            sources=sources,
            ptr=routing.feature_ptr,
            pairs=routing.pairs,
            group_ptr=group_ptr.astype(np.int64),
            group_columns=np.concatenate(batch),
            leaves=routing.leaves,
            moved=moved,
            new_leaves=new_leaves,
            counts=counts,
        )
        counts = counts.reshape(len(batch), n_repeats)
        ends = np.cumsum(counts.sum(axis=1))
        for group_counts, end in zip(counts, ends):
            start = end - group_counts.sum()
            yield moved[start:end], new_leaves[start:end], group_counts
        first = last
