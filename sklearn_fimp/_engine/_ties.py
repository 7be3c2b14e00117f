"""Tie repair: rows whose permuted outputs lie within rounding of a tie are
recomputed in the model's order.

The engine adds a task's changes to the unpermuted total, not the leaf
values tree by tree as the model's ``predict`` does; the sums agree to
rounding, which matters only where a row sits on a tie (two classes of the
row, or the same output of two rows, which ranks such as ROC AUC compare).
Those rows are recomputed from their leaves, tree by tree in order, so that
predicted classes and ranks are the model's.
"""

import numpy as np

from ._changes import replaced_rows
from ._routing import tree_input


def _among(rows, sorted_rows):
    """Whether each of ``rows`` is in ``sorted_rows`` (increasing): a
    bisection per row, where ``np.isin`` would pass over all of
    ``sorted_rows`` (a tree's out-of-bag rows) for a few rows."""
    at = np.searchsorted(sorted_rows, rows.astype(sorted_rows.dtype, copy=False))
    found = at < len(sorted_rows)
    found[found] = sorted_rows[at[found]] == rows[found]
    return found


def model_order_totals(ensemble, X_rows, rows, start, tree_rows=None):
    """``start`` plus the trees' leaf values for a few rows, added tree by
    tree in order (as the model's own ``predict`` adds them); ``tree_rows``:
    each tree's rows (in increasing order), or None for all."""
    totals = np.array(start, dtype=np.float64)
    every_row = np.arange(len(rows))
    for t, term in enumerate(ensemble.terms):
        if tree_rows is None:
            reached, X_reached = every_row, X_rows
        else:
            reached = np.flatnonzero(_among(rows, tree_rows[t]))
            if not len(reached):
                continue
            X_reached = X_rows[reached]
        leaves = term.tree.apply(tree_input(term, X_reached))
        if term.columns is None:
            totals[reached] += term.table[leaves]
        else:
            totals[np.ix_(reached, term.columns)] += term.table[leaves]
    return totals


def changed_rows(change):
    """Rows of ``change`` (n_rows, n_outputs) with a nonzero entry, in
    increasing order (several times faster than ``np.any(axis=1)`` on the
    few columns of an engine's outputs)."""
    rows = np.flatnonzero(change.reshape(-1)) // change.shape[1]
    if change.shape[1] > 1 and len(rows):
        rows = rows[np.concatenate([[True], rows[1:] != rows[:-1]])]
    return rows


def rows_near_ties(outputs, candidates, reference=None):
    """Among ``candidates`` (a boolean mask), the rows whose outputs are
    within rounding of a tie: two classes of the row (for a binary decision
    value, 0), or, given ``reference``, the same output of another row
    (scorers that read predicted labels only need the first kind).

    ``reference``: each output column of the rows that are not candidates,
    sorted (or a superset of them, such as every row's unreplaced output,
    see :func:`sorted_outputs`). A candidate is compared with the reference
    by bisection and with the other candidates, instead of sorting every
    row's outputs, which dominated where a replaced column changes few
    rows; a superset only adds rows to repair.
    """
    rows = np.flatnonzero(candidates)
    if not len(rows):
        return rows
    mine = outputs[rows]
    largest = np.max(np.abs(mine), initial=0.0)
    if reference is not None:
        largest = max(largest, np.max(np.abs(reference), initial=0.0))
    tolerance = 1e-9 * max(1.0, float(largest))
    if mine.shape[1] > 1:
        top_two = np.partition(mine, -2, axis=1)[:, -2:]
        suspect = top_two[:, 1] - top_two[:, 0] <= tolerance
    else:  # a binary decision value: the classes tie at 0
        suspect = np.abs(mine[:, 0]) <= tolerance
    for column, others in zip(mine.T, () if reference is None else reference.T):
        suspect |= _near(column, others, tolerance)
        order = np.argsort(column, kind="stable")
        close = np.diff(column[order]) <= tolerance
        suspect[order[1:][close]] = True
        suspect[order[:-1][close]] = True
    return rows[suspect]


def _near(values, sorted_values, tolerance):
    """Whether each of ``values`` is within ``tolerance`` of one of
    ``sorted_values`` (increasing)."""
    if not len(sorted_values):
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(sorted_values, values)
    above = sorted_values[np.minimum(at, len(sorted_values) - 1)]
    below = sorted_values[np.maximum(at - 1, 0)]
    return (np.abs(above - values) <= tolerance) | (np.abs(values - below) <= tolerance)


def _outputs(ensemble, base, change, divisor):
    outputs = (base + change) / divisor
    if ensemble.outputs_are_probabilities:
        # changes added out of order can overshoot by a rounding
        np.clip(outputs, 0.0, 1.0, out=outputs)
    return outputs


def sorted_outputs(ensemble, base, divisor):
    """Each output column of the unreplaced rows, sorted: the ``reference``
    of :func:`outputs_and_ties` for every task of one ``base``."""
    return np.sort(_outputs(ensemble, base, 0.0, divisor), axis=0)


def outputs_and_ties(ensemble, base, change, divisor, reference=None):
    """``(base + change) / divisor``, and the rows whose change leaves them
    within rounding of a tie (see :func:`rows_near_ties`; ``reference``:
    :func:`sorted_outputs` of ``base``, or None), whose outputs
    :func:`repair_ties` recomputes in the model's order."""
    outputs = _outputs(ensemble, base, change, divisor)
    if not ensemble.classifier:
        return outputs, np.empty(0, dtype=np.intp)
    changed = np.zeros(len(change), dtype=bool)
    changed[changed_rows(change)] = True
    return outputs, rows_near_ties(outputs, changed, reference)


def repair_ties(ensemble, X, repairs, *, start, divisor, tree_rows):
    """Recompute, in the model's order and in one pass over the trees, the
    tied rows of several replaced outputs: each repair is ``(outputs, ties,
    rows, columns, replacement)``, with ``outputs`` those of rows ``rows``
    of X when ``columns`` are replaced by ``replacement`` (see
    :mod:`._changes`), and
    ``outputs[ties]`` is overwritten. ``start`` and ``divisor`` cover every
    row of X."""
    repairs = [repair for repair in repairs if len(repair[1])]
    if not repairs:
        return
    tie_rows = np.concatenate([rows[ties] for _, ties, rows, _, _ in repairs])
    X_ties = np.concatenate(
        [
            replaced_rows(X, rows[ties], columns, replacement)
            for _, ties, rows, columns, replacement in repairs
        ]
    )
    totals = model_order_totals(ensemble, X_ties, tie_rows, start[tie_rows], tree_rows)
    totals /= divisor[tie_rows] if np.ndim(divisor) else divisor
    ends = np.cumsum([len(ties) for _, ties, _, _, _ in repairs])
    for (outputs, ties, _, _, _), end in zip(repairs, ends, strict=True):
        outputs[ties] = totals[end - len(ties) : end]
