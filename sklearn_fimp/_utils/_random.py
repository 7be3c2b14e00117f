"""Seeds and random draws shared by every function of the package.

Every call draws its seeds here, before any parallel work, so that results
do not depend on ``n_jobs`` or the joblib backend.
"""

import numbers

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.random import sample_without_replacement

MAX_SEED = np.iinfo(np.int32).max


def draw_seed(random_state):
    """An integer seed for everything random in one call, fixed before any
    dispatch. An int ``random_state`` is its own seed, so the seed recorded
    in a result, passed back as ``random_state``, reproduces the result."""
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(MAX_SEED + 1))


def permutation_seed(seed):
    """Seed of the row permutations, derived from the call's seed as
    :func:`sklearn.inspection.permutation_importance` derives its own, so
    that the same int ``random_state`` gives the same permutations."""
    return int(np.random.RandomState(seed).randint(MAX_SEED + 1))


def evaluation_rows(seed, n_rows, max_samples):
    """Rows to evaluate on (None: all), drawn as scikit-learn draws them."""
    if max_samples is None:
        return None
    if isinstance(max_samples, numbers.Integral):
        if max_samples > n_rows:
            raise ValueError(
                f"max_samples={max_samples} is larger than the {n_rows} rows of X; "
                f"pass at most {n_rows}, or a fraction in (0, 1]."
            )
        n_kept = int(max_samples)
    else:
        n_kept = max(1, int(max_samples * n_rows))
    if n_kept >= n_rows:
        return None
    return sample_without_replacement(
        n_rows, n_kept, random_state=np.random.RandomState(seed)
    )


def row_permutations(seed, n_rows, n_repeats, *, n_total=None):
    """The ``n_repeats`` row permutations used for every feature or group.

    They are those of :func:`sklearn.inspection.permutation_importance` for
    the same seed: a generator seeded with ``seed`` first draws the evaluation
    rows when ``max_samples`` subsamples (``n_total`` rows to ``n_rows``),
    then shuffles an index array once per repeat, and scikit-learn applies
    each shuffle to the already shuffled column, so repeat ``r`` sees the
    composition of the first ``r`` shuffles. Every feature gets the same
    permutations, which makes differences between features less noisy.
    """
    generator = np.random.RandomState(seed)
    if n_total is not None and n_total > n_rows:
        sample_without_replacement(n_total, n_rows, random_state=generator)
    shuffle = np.arange(n_rows)
    composed = np.arange(n_rows)
    permutations = np.empty((n_repeats, n_rows), dtype=np.intp)
    for repeat in range(n_repeats):
        generator.shuffle(shuffle)
        composed = composed[shuffle]
        permutations[repeat] = composed
    return permutations


def with_shared_seed(estimator, seed, *, replace_fixed=False):
    """Clone ``estimator`` with every unset ``random_state`` set to ``seed``.

    Parameters the user fixed to an integer are kept; None or a RandomState
    instance would make each refit draw different randomness, so that a
    difference in score would mix the effect of the dropped column with
    luck.

    ``replace_fixed=True`` sets the user's integer seeds to ``seed`` too:
    for the selector's rounds, which average the model's randomness out of
    the importances, a fixed seed would fit the same model in every round
    (the same bootstrap, the same splits), so that the rounds would cost
    their time and average nothing. The rounds' seeds are drawn from the
    selector's ``random_state``, so a fixed one still reproduces the
    selection; the final refit keeps the user's seed.
    """
    estimator = clone(estimator)
    seeds = {
        name: seed
        for name, value in estimator.get_params(deep=True).items()
        if name.endswith("random_state")
        and (replace_fixed or value is None or isinstance(value, np.random.RandomState))
    }
    return estimator.set_params(**seeds)
