"""Rounds of probes: refit with fresh probes and collect every importance.

One fitted model makes the importances of all its columns dependent, and a
single set of probes gives few null values. Each round appends fresh probe
columns, measures every column's importance with a caller-given function,
and keeps the real features' and the probes' importances, so that the
probe test can average each feature over rounds and compare it with many
probes of its own kind.
"""

import numpy as np

from .._utils._random import MAX_SEED
from ._probes import add_probes


def measure_rounds(
    measure, X, groups, labels, feature_names, kind, n_probes, n_rounds, random_state
):
    """Importances of the features and of fresh probes in each round.

    Parameters
    ----------
    measure : callable
        ``measure(X_measured, all_groups, all_labels, seed)`` returns the
        mean importance of each group of ``all_groups`` (real ones first).
    X : array-like or DataFrame of shape (n_samples, n_features)
    groups : list of ndarray
        Column positions of each real feature or group.
    labels : list of str
        Name of each group.
    feature_names : ndarray of str
    kind : {"shadow", "uniform", "normal"}
    n_probes : int
        Probes per round.
    n_rounds : int
    random_state : RandomState
        Source of every round's two seeds (probes, measure), all drawn
        before the first round.

    Returns
    -------
    real : ndarray of shape (n_rounds, n_groups)
    probes : ndarray of shape (n_rounds, n_probes)
    owners : ndarray of shape (n_rounds, n_probes)
        The group each probe mirrors (-1 for uniform and normal probes,
        which mirror none but the group's width).
    """
    seeds = random_state.randint(MAX_SEED + 1, size=(n_rounds, 2))
    n_groups = len(groups)
    real = np.empty((n_rounds, n_groups))
    probes = np.empty((n_rounds, n_probes))
    owners = np.empty((n_rounds, n_probes), dtype=np.intp)
    for r, (probe_seed, measure_seed) in enumerate(seeds):
        X_measured, probe_groups, probe_labels, mirrored = add_probes(
            X,
            groups,
            feature_names,
            kind,
            n_probes,
            np.random.RandomState(probe_seed),
            mirrors=True,
            labels=labels,
        )
        means = measure(
            X_measured,
            list(groups) + list(probe_groups),
            list(labels) + list(probe_labels),
            int(measure_seed),
        )
        real[r] = means[:n_groups]
        probes[r] = means[n_groups:]
        owners[r] = mirrored if kind == "shadow" else -1
    return real, probes, owners
