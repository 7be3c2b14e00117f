"""Rounds of probes: refit with the probes and collect every importance.

One fitted model makes the importances of all its columns dependent, and
its randomness (the bootstrap, the columns each split weighs) blurs weak
features. The probe columns are appended once and held fixed; each round
refits the model with a fresh seed, measures every column's importance
with a caller-given function, and keeps the real features' and the probes'
importances, so that the probe test can average each feature over rounds
and compare it with probes of its own kind averaged alike.
"""

import numpy as np
from sklearn.utils import Bunch

from ..._utils._random import MAX_SEED
from ..._utils._result import importance_result
from ._probes import add_probes

#: Keys of a round's result that the combined result computes anew.
_RECOMPUTED = ("importances", "importances_mean", "importances_std", "feature_names")


def measure_rounds(
    measure,
    X,
    groups,
    labels,
    feature_names,
    kind,
    n_probes,
    n_rounds,
    random_state,
    rows=None,
    add=add_probes,
    stop=None,
    fixed=True,
):
    """Importances of the features and of the probes in each round.

    Parameters
    ----------
    measure : callable
        ``measure(X_measured, all_groups, all_labels, seed, mirrored)``
        returns the mean importance of each group of ``all_groups`` (real
        ones first); ``mirrored`` gives the real group each probe stands
        for.
    X : array-like or DataFrame of shape (n_samples, n_features)
    groups : list of ndarray
        Column positions of each real feature or group.
    labels : list of str
        Name of each group.
    feature_names : ndarray of str
    kind : {"shadow", "uniform", "normal"}
    n_probes : int
        Probes.
    n_rounds : int
    random_state : RandomState
        Source of the probes' seed and of every round's seed, all drawn
        before the first round.
    rows : RowStructure or None
        How the rows hang together (``_rows.py``): the rows shadows copy.
    add : callable
        What appends the probes, with :func:`~._probes.add_probes`'s
        signature and result (the distributed selection appends them on the
        cluster).
    stop : callable or None
        ``stop(real, probes, owners)``, called with the rounds so far after
        each round, says whether to stop there (None: never).
    fixed : bool
        Whether the probes are drawn once and held fixed over the rounds
        (the selector's test needs it), or drawn afresh in each round (the
        distributed selection's, which compares each round with its own
        probes).

    Returns
    -------
    real : ndarray of shape (n_rounds_done, n_groups)
    probes : ndarray of shape (n_rounds, n_probes)
    owners : ndarray of shape (n_rounds, n_probes)
        The group each probe mirrors (-1 for uniform and normal probes,
        which mirror none but the group's width).
    """
    if fixed:
        probe_seeds = random_state.randint(MAX_SEED + 1, size=n_rounds)
        seeds = random_state.randint(MAX_SEED + 1, size=n_rounds)
    else:  # each round's two seeds side by side, as fresh probes always drew them
        probe_seeds, seeds = random_state.randint(MAX_SEED + 1, size=(n_rounds, 2)).T
    n_groups = len(groups)
    real = np.empty((n_rounds, n_groups))
    probes = np.empty((n_rounds, n_probes))
    owners = np.empty((n_rounds, n_probes), dtype=np.intp)
    for r, measure_seed in enumerate(seeds):
        # held fixed, the probes are drawn once: a noise feature and its
        # shadows then each keep one chance association with y, and the
        # rounds average out the model's randomness alone (mean_test)
        if r == 0 or not fixed:
            X_measured, probe_groups, probe_labels, mirrored = add(
                X,
                groups,
                feature_names,
                kind,
                n_probes,
                np.random.RandomState(probe_seeds[r]),
                mirrors=True,
                labels=labels,
                rows=rows,
            )
        means = measure(
            X_measured,
            list(groups) + list(probe_groups),
            list(labels) + list(probe_labels),
            int(measure_seed),
            mirrored,
        )
        real[r] = means[:n_groups]
        probes[r] = means[n_groups:]
        owners[r] = mirrored if kind == "shadow" else -1
        done = r + 1
        settled = (
            done < n_rounds
            and stop is not None
            and stop(real[:done], probes[:done], owners[:done])
        )
        if settled:
            return real[:done], probes[:done], owners[:done]
    return real, probes, owners


def probe_rounds(
    measure_round,
    X,
    groups,
    labels,
    feature_names,
    kind,
    n_probes,
    n_rounds,
    seed,
    rows=None,
    add=add_probes,
    classes=None,
    stop=None,
    fixed=True,
):
    """Every round's importances and the one result the selector keeps.

    ``measure_round(X_measured, all_groups, all_labels, seed, mirrored)``
    measures one round and returns ``(result, model)``: the importance result of the
    real groups followed by the probes, and the fitted model (or None).
    ``rows``, ``add`` and ``fixed`` are as :func:`measure_rounds` takes them;
    ``classes`` (one per group, or None) says which groups' probes
    standardize each other (:func:`~._probes.probe_classes`); ``stop(history)``
    (or None) says, after each round, whether the rounds so far suffice.

    Returns ``(result, model, history)``: the last round's result with
    every round as a column of ``importances`` (the k-th probe row holds
    the k-th probe of each round) and ``groups``, ``is_probe``,
    ``n_probes``, ``n_rounds`` and ``mirrors`` added; the last round's
    model; and the history (``real``, ``probes``, ``owners``, ``classes``,
    ``fixed``) the probe test reads.
    """
    results, models = [], []

    def measure(X_measured, all_groups, all_labels, round_seed, mirrored):
        result, model = measure_round(
            X_measured, all_groups, all_labels, round_seed, mirrored
        )
        result.groups = list(all_groups)
        result.feature_names = np.asarray(all_labels, dtype=object)
        results.append(result)
        models[:] = [model]
        return result.importances_mean

    real, probes, owners = measure_rounds(
        measure,
        X,
        groups,
        labels,
        feature_names,
        kind,
        n_probes,
        n_rounds,
        np.random.RandomState(seed),
        rows=rows,
        add=add,
        stop=None
        if stop is None
        else lambda real, probes, owners: stop(
            Bunch(real=real, probes=probes, owners=owners, classes=classes)
        ),
        fixed=fixed,
    )
    last = results[-1]
    result = importance_result(
        np.hstack([real, probes]).T,
        last.feature_names,
        **{key: value for key, value in last.items() if key not in _RECOMPUTED},
    )
    result.groups = list(last.groups)
    result.is_probe = np.arange(len(result.groups)) >= len(groups)
    result.n_probes = n_probes
    result.n_rounds = len(real)
    result.mirrors = owners
    result.classes = classes
    history = Bunch(
        real=real, probes=probes, owners=owners, classes=classes, fixed=fixed
    )
    return result, models[0], history
