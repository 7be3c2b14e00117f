"""What runs on the workers: pure functions of one partition's rows, the
same for every engine (Spark's ``mapInPandas``, Dask's partitions).

A permutation importance spread over partitions takes two steps:

1. :func:`send_rows`: every row is sent, once as itself (``repeat = -1``,
   to its own index) and once per repeat to the row that receives its
   values (``GlobalPermutation.targets``); the engine then moves each row
   to the partition of its ``target``;
2. :func:`partition_sums`: a partition now holds, for each of its targets,
   the row itself and the row each repeat gives it; the tree engine routes
   the rows once and returns, for every (group, repeat), the sum of the
   score's row terms with the group's columns taken from the given rows
   (``DonorRows``), and the unpermuted sum.

The driver adds the partitions' sums (see ``_scores.py``).
"""

from typing import NamedTuple

import numpy as np

from .._engine import _budgets
from .._engine._changes import DonorRows
from .._engine._scores import _scored_values, summed_row_terms, tree_ensemble
from .._engine._ties import outputs_and_ties
from ._scores import check_finite_rows, class_indices

#: bytes of sent rows a partition holds at most: a worker holds one
#: partition's rows a few times over while it sorts and reads them
PARTITION_BYTES = 16 * 2**20
#: the engine's routing budget on a worker (the in-memory default is 256 MiB)
ROUTING_BYTES = 16 * 2**20

#: columns of the rows sent between partitions besides the features
TARGET, REPEAT, LABEL, WEIGHT = "__target", "__repeat", "__y", "__w"


def feature_column(j):
    """The name of feature ``j``'s column in the rows sent."""
    return f"__x{j}"


class ModelPayload(NamedTuple):
    """What the workers receive of the model: the fitted estimator (or the
    snapshot of a Spark model's trees) and a token naming this call, under
    which each worker process keeps the engine's prepared ensemble."""

    token: str
    estimator: object
    #: the names the estimator was fitted with (None: a plain array)
    feature_names: object


_ENSEMBLES = {}


def prepared_ensemble(payload):
    """The engine's ensemble of the payload's model, built once per worker
    process and call."""
    ensemble = _ENSEMBLES.get(payload.token)
    if ensemble is None:
        _ENSEMBLES.clear()  # one call's model at a time
        ensemble = _ENSEMBLES[payload.token] = tree_ensemble(payload.estimator)
    return ensemble


def sent_row_bytes(n_repeats, n_features):
    """Bytes of the rows one row sends: ``1 + n_repeats`` rows of its
    features, target, repeat, label and weight."""
    return (n_repeats + 1) * (n_features + 4) * 8


def exchanged_partitions(n_rows, n_repeats, n_features, n_partitions):
    """How many partitions the sent rows are exchanged into: at least the
    data's, and enough that each holds about ``PARTITION_BYTES``."""
    total = n_rows * sent_row_bytes(n_repeats, n_features)
    return max(n_partitions, -(-total // PARTITION_BYTES))


def send_rows(frame, first_id, permutation, n_repeats, n_features):
    """The rows of one partition (a pandas DataFrame with the feature
    columns, ``__y`` and ``__w``, rows numbered from ``first_id`` in order),
    each once as itself and once per repeat as the giver of its values:
    the same columns plus ``__target`` (int64) and ``__repeat`` (int32).
    """
    import pandas as pd

    n = len(frame)
    ids = np.arange(first_id, first_id + n, dtype=np.int64)
    columns = [feature_column(j) for j in range(n_features)]
    parts = []
    for r in range(-1, n_repeats):
        part = frame[[*columns, LABEL, WEIGHT]].copy()
        if r >= 0:  # the givers carry only the features
            part[LABEL] = 0.0
            part[WEIGHT] = 0.0
        part.insert(0, REPEAT, np.full(n, r, dtype=np.int32))
        part.insert(0, TARGET, ids if r < 0 else permutation.targets(ids, r))
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _model_input(payload, ensemble, values):
    """Feature values as the engine reads them."""
    if payload.feature_names is not None:
        import pandas as pd

        values = pd.DataFrame(values, columns=list(payload.feature_names))
    return ensemble.adapter.engine_input(values)


def partition_sums(frame, payload, groups, n_repeats, score, n_features):
    """Sums of the score's row terms over one partition of sent rows (see
    the module docstring): a float64 array of ``n_groups * n_repeats``
    permuted sums, then the unpermuted sum, then (R²) ``sum w (y -
    mean)**2``."""
    n_extra = 2
    if len(frame) == 0:
        return np.zeros(len(groups) * n_repeats + n_extra)
    frame = frame.sort_values([TARGET, REPEAT], kind="stable")
    repeat = frame[REPEAT].to_numpy()
    target = frame[TARGET].to_numpy()
    columns = [feature_column(j) for j in range(n_features)]
    values = frame[columns].to_numpy(dtype=np.float64)
    own = repeat == -1
    targets = target[own]
    ensemble = prepared_ensemble(payload)
    X = _model_input(payload, ensemble, values[own])
    donors = []
    for r in range(n_repeats):
        given = repeat == r
        if not np.array_equal(target[given], targets):
            raise RuntimeError(
                f"repeat {r}: the rows received do not match the partition's "
                "rows (the data changed between two passes over it?)"
            )
        donors.append(_model_input(payload, ensemble, values[given]))
    terms = score.partition_terms(
        frame[LABEL].to_numpy()[own], frame[WEIGHT].to_numpy()[own]
    )
    start = ensemble.raw_start(X)
    divisor = float(len(ensemble.terms)) if ensemble.averaged else 1.0
    totals, base_total = summed_row_terms(
        ensemble,
        X,
        groups,
        [[DonorRows(donor) for donor in donors]] * len(groups),
        1,
        start=start,
        divisor=divisor,
        additive=terms,
        scored_values=_scored_values(ensemble),
        chunks=_budgets.row_chunks(ensemble, X, None, budget=ROUTING_BYTES),
    )
    outputs, _ = outputs_and_ties(
        ensemble, base_total, np.zeros_like(base_total), divisor
    )
    every_row = np.arange(X.shape[0])
    base = terms.row_terms(_scored_values(ensemble)(outputs), every_row).sum()
    deviation = terms.squared_deviation() if score.mean is not None else 0.0
    return np.concatenate([np.reshape(totals, -1), [base, deviation]])


def partition_totals(frame, score):
    """The first pass over one partition (columns ``__y`` and ``__w``): its
    number of rows, weight, weighted target sum (regression) and the weight
    of each of the score's classes (classification), as one float64 array
    ``[n_rows, weight, weighted_target, class weights...]``."""
    y = frame[LABEL].to_numpy()
    weight = frame[WEIGHT].to_numpy(dtype=np.float64)
    check_finite_rows(y, weight, score.needs_classes)
    if score.needs_classes:
        index = class_indices(score.classes, y)
        classes = np.bincount(index, weights=weight, minlength=len(score.classes))
        target = 0.0
    else:
        classes = np.zeros(0)
        target = float(np.sum(weight * y))
    return np.concatenate([[len(frame), weight.sum(), target], classes])


#: columns of the selection's rows besides the features and probes: whether
#: the row is held out of the round's fit
HELD_OUT = "__held_out"


def probe_column(k):
    """The name of probe ``k``'s column in a round of the selection."""
    return f"__probe{k}"


def shadowed_rows(frame, n_layers, mirrored, n_features, held_out):
    """One partition of a round of the selection on Spark (see
    ``_selection/_distributed.py``): the rows it received from
    :func:`send_rows` (each target's own row and one giver per layer of
    probes) as one row per target with the features, the probes (probe
    ``k`` is feature ``mirrored[k]`` of the giver of layer ``k //
    n_features``), ``__y``, ``__w`` and ``__held_out``.

    ``held_out`` is ``(permutation, n_held_out)``: a row is held out of the
    fit when its index goes to one of the first ``n_held_out`` places of
    that permutation (repeat 0), ``n_held_out`` rows in all; None holds out
    none.
    """
    import pandas as pd

    frame = frame.sort_values([TARGET, REPEAT], kind="stable")
    width = 1 + n_layers
    target = frame[TARGET].to_numpy()
    repeat = frame[REPEAT].to_numpy()
    if len(frame) % width or not (
        np.all(target.reshape(-1, width) == target[::width, None])
        and np.all(repeat.reshape(-1, width) == np.arange(-1, n_layers))
    ):
        raise RuntimeError(
            "the rows received do not match the partition's rows (the data "
            "changed between two passes over it?)"
        )
    columns = [feature_column(j) for j in range(n_features)]
    values = frame[columns].to_numpy(dtype=np.float64)
    values = values.reshape(len(frame) // width, width, n_features)
    own = frame.iloc[::width]
    layer = 1 + np.arange(len(mirrored)) // n_features
    probes = values[:, layer, np.asarray(mirrored, dtype=np.intp)]
    out = {name: values[:, 0, j] for j, name in enumerate(columns)}
    out.update({probe_column(k): probes[:, k] for k in range(len(mirrored))})
    out[LABEL] = own[LABEL].to_numpy()
    out[WEIGHT] = own[WEIGHT].to_numpy()
    ids = target[::width]
    if held_out is None:
        out[HELD_OUT] = np.zeros(len(ids), dtype=bool)
    else:
        permutation, n_held_out = held_out
        out[HELD_OUT] = permutation.targets(ids, 0) < n_held_out
    return pd.DataFrame(out)
