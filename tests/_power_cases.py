"""Small versions of the data sets on which issue 41 measured the selector's
power (``docs/bench_power.rst``), for the fixed-seed power tests
(``test_power.py``) and the benchmark that measures how often the selector
(and BorutaPy, side by side) succeeds on them (``bench/bench_power_small.py``).

Each case builds one data set from a seed and says whether a selection
succeeded on it; the tests' bounds rest on the success rates that benchmark
measured on other seeds.
"""

from typing import NamedTuple

import numpy as np
from sklearn.datasets import make_classification


class PowerData(NamedTuple):
    X: np.ndarray
    y: np.ndarray
    #: the columns a selector should keep (the causal ones of blocks)
    relevant: np.ndarray
    #: columns independent of y whose selection fails the data set (for
    #: blocks: those of blocks that hold no causal column; else the noise)
    forbidden: np.ndarray


def _classification(seed, n_samples, n_features, n_informative, **params):
    """``make_classification`` with the informative columns first (no
    repeated ones): the data, its first ``n_relevant`` columns relevant
    (``params`` may add linear combinations), the rest noise."""
    n_relevant = n_informative + params.get("n_redundant", 0)
    X, y = make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=n_informative,
        n_repeated=0,
        shuffle=False,
        random_state=seed,
        **{"n_redundant": 0, **params},
    )
    return PowerData(X, y, np.arange(n_relevant), np.arange(n_relevant, n_features))


def madelon(seed):
    """Madelon's design made small: 3 informative columns whose classes lie
    in clusters on a cube's vertices (4 per class: no single column
    separates them), 3 linear combinations of them, 94 noise columns, 500
    rows."""
    return _classification(seed, 500, 100, 3, n_redundant=3, n_clusters_per_class=4)


#: p >> n in blocks: columns, rows, block width, correlation within a block
BLOCKS = dict(n_columns=300, n_rows=300, block=20, rho=0.5, beta=1.0)


def blocks(seed):
    """Correlated blocks: 300 Gaussian columns in 15 blocks of 20
    (correlation 0.5 within a block), 300 rows, the first column of blocks
    0-3 additive on the logit of a binary y (coefficients +-1). The other
    columns of those blocks depend on y through their block; the 11 other
    blocks are independent of y."""
    rng = np.random.RandomState(seed)
    n, p, width = BLOCKS["n_rows"], BLOCKS["n_columns"], BLOCKS["block"]
    shared = rng.normal(size=(n, p // width))
    X = np.sqrt(BLOCKS["rho"]) * np.repeat(shared, width, axis=1)
    X += np.sqrt(1 - BLOCKS["rho"]) * rng.normal(size=(n, p))
    causal = np.arange(4) * width
    logit = X[:, causal] @ (BLOCKS["beta"] * np.array([1.0, -1.0, 1.0, -1.0]))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    return PowerData(X, y, causal, np.arange(4 * width, p))


def imbalanced(seed):
    """An imbalanced binary target: 6% positives among 1,500 rows, 4
    informative columns and 16 noise ones."""
    return _classification(seed, 1500, 20, 4, weights=[0.94], flip_y=0.0)


def boosted(seed):
    """For a boosted model: 4 informative columns and 11 noise ones, 600
    rows, a balanced binary target."""
    return _classification(seed, 600, 15, 4)


def succeeded(case, data, kept):
    """Whether the selection ``kept`` (a mask over X's columns) succeeds on
    ``data`` of ``case``: the relevant columns found (Madelon's design: F1
    at least 0.8; blocks: at least 2 of the 4 causal columns; imbalanced and
    boosted: at least 3 of the 4 informative ones) with at most one
    forbidden column kept (blocks: none from a block without a causal
    column)."""
    kept = np.asarray(kept, dtype=bool)
    found = int(kept[data.relevant].sum())
    wrong = int(kept[data.forbidden].sum())
    if case == "madelon":
        f1 = 2 * found / (kept.sum() + len(data.relevant)) if found else 0.0
        return f1 >= 0.8 and wrong <= 1
    if case == "blocks":
        return found >= 2 and wrong == 0
    return found >= 3 and wrong <= 1


CASES = {
    "madelon": madelon,
    "blocks": blocks,
    "imbalanced": imbalanced,
    "boosted": boosted,
}
