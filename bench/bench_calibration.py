"""Calibration of the probe test: how often is noise kept, where truth is known?

Every regime draws data sets whose noise columns are independent of y and of
the signal columns, so a kept noise column is a false discovery. Per regime
and selector, over the seeds:

- FWER: the share of data sets with at least one noise column kept
  (``correction="holm"``), with its binomial (Clopper-Pearson) 95% upper
  bound;
- FDR: the mean false discovery proportion (``correction="fdr_bh"``; 0 for
  a data set where nothing is kept), with a 95% upper bound (mean + 1.645
  standard errors);
- power (regimes with signal): the mean share of informative columns kept
  (Holm).

Regimes (name: task, rows, columns):

- ``reg-mixed-300``: regression, pure noise, n=300: 5 N(0, 1) and 5
  three-level columns (the issue's first regime).
- ``bin-mixed-300``: the same columns, binary y.
- ``reg-normal-2000``: regression, pure noise, n=2000, 20 N(0, 1) columns.
- ``mc3-corr-1000``: three classes, pure noise, n=1000: 10 N(0, 1)
  columns, 10 noisy copies of them (x + N(0, 0.5^2), correlation 0.89) and
  10 five-level columns.
- ``bin-small-100``: binary, pure noise, n=100, p=5: two binary, two
  ten-level and one N(0, 1) column.
- ``friedman-600``: ``make_friedman1(n_samples=600, n_features=25,
  noise=1)``: 5 informative columns, 20 uniform noise columns.
- ``mc4-signal-1000``: ``make_classification(n_samples=1000,
  n_features=40, n_informative=5, n_redundant=0, n_classes=4,
  shuffle=False)``: 5 informative, 35 N(0, 1) noise columns (the noise is
  independent of y and of the informative ones).
- ``bin-wide-300``: binary, pure noise, n=300, p=500: 250 N(0, 1) and 250
  four-level columns.
- ``bin-blocks-1000``: binary, pure noise, n=400, p=1000: N(0, 1) columns
  in 50 independent blocks of 20, correlation 0.5 within a block (the null
  blocks of ``bench_power.py``'s omics set, whose features are not
  independent of each other, as the test's null assumes).
- ``reg-wide-150``: regression, pure noise, n=150, p=1000 (more columns
  than rows): N(0, 1) columns, y N(0, 1).
- ``bin-blocks-wide-150``: binary, pure noise, n=150, p=1000: the blocks
  of ``bin-blocks-1000`` (50 of 20 columns, correlation 0.5 within a
  block) on fewer rows than columns.
- ``reg-tight-200``: regression, pure noise, n=200, p=110: four blocks of
  25 columns correlated at 0.94 within a block (a shared N(0, 1) factor and
  N(0, 0.25^2) each: adjacent wavelengths of a spectrum) and 10
  independent N(0, 1) columns, y N(0, 1). The forest's "auto" tests each
  block as one group (``correlated_groups``).
- ``bin-tight-300``: binary, pure noise, n=300, p=77: blocks of 2, 5, 10
  and 40 columns correlated at 0.96 within a block (N(0, 0.2^2) each
  around a shared factor) and 20 independent columns, half N(0, 1), half
  four-level: groups of four widths, each standardized by its own
  class of probes.
- ``bin-classes-wide-200``: binary, pure noise, n=200, p=586: 300 N(0, 1)
  columns, 250 binary ones whose share of ones is drawn from U(0.02, 0.3)
  (sparse indicators, as fingerprints and one-hot codes are), six blocks
  of four near-copies of a binary column (1% of values flipped; the
  forest's "auto" tests each as one group) and 12 ten-level columns. Two
  large classes of probes, each its own null, and two small ones tested
  against the pooled null (``_probe_test.mean_test``), which the large
  classes make: where the small classes' tail differs, the pool could
  misjudge them.
- ``bin-kinds-wide-60``: binary, pure noise, n=60, p=72: 56 binary
  columns whose share of ones is drawn from U(0.1, 0.5), 8 N(0, 1) columns
  and 8 ten-level ones: two small classes of probes of different kinds
  (continuous and ten-level) among one large class, each small one given
  shadows of its own (``_probes.class_top_up``); ``KINDS`` names the
  columns of each kind, whose p-values the page's note counts.
- ``bin-large-5000``: binary, n=5000, p=20: y from a logistic model on 4
  N(0, 1) columns; noise: 8 N(0, 1) (four correlated pairs, r=0.8), 4
  binary and 4 seven-level columns.
- ``bin-signal-400``: binary, n=400, p=3: y is whether ``num + 2 [cat =
  1] - 1.5 [cat = 2]`` is above its median, ``num`` N(0, 1) with 10%
  missing, ``cat`` three-level; one N(0, 1) noise column. Few features
  and a strong signal: with a held-out accuracy or a drop-column score
  most probes tie (``--hgb-on``).
- ``reg-pipe-noise-500``: regression, pure noise, n=500, p=8, mixed types
  as a pandas DataFrame: 4 N(0, 1) columns and 4 string categorical columns
  of 3, 5, 10 and 20 equally likely levels.
- ``bin-pipe-noise-500``: the same columns, binary y.
- ``reg-pipe-signal-600``: regression, n=600, p=9: y = x1 + 0.7 x2 +
  effect[g] + N(0, 1), x1, x2 N(0, 1) and g a five-level string column with
  effects (0, 1, -1, 0.5, -0.5) (not monotone in the level's code); noise:
  3 N(0, 1) columns and string columns of 3, 8 and 20 levels.
- ``bin-pipe-signal-600``: the same columns, y ~ Bernoulli(sigmoid(1.5 (x1
  + 0.7 x2 + effect[g]))).

The four ``*-pipe-*`` regimes (``MIXED``) run each data set in two forms:
``(pipeline)``, the DataFrame through ``make_pipeline(make_column_transformer(
(OneHotEncoder(handle_unknown="ignore"), <categorical names>),
(StandardScaler(), <numeric names>)), RandomForest*(n_estimators=trees))``
(the ColumnTransformer lists its columns by name, as users write it), and
``(forest)``, the bare forest on the same data with each categorical column
ordinal-encoded as one integer column (the same original columns, so the
two select among the same features); with every ``--methods`` on both, and
``permutation`` on the bare forest too (the measure ``auto`` picks for a
Pipeline). A row records the method that ran (``method_run``).

Time-ordered and grouped regimes (``DEPENDENT``; regression, 8 columns,
every column and y independent of each other, but rows dependent):

- ``ts-ar5-300``, ``ts-ar9-300``, ``ts-ar9-1000``: pure noise in time
  order: 8 independent stationary AR(1) columns (unit variance, phi 0.5,
  0.9, 0.9) and an independent AR(1) y of the same phi; n=300, 300, 1000.
- ``ts-signal-600``: n=600, 8 AR(1) columns (phi 0.9); y = x1 + 0.7 x2 +
  0.5 x3 + an independent AR(1) series (phi 0.9): 3 informative, 5 noise.
- ``grp-5-300``, ``grp-20-400``: pure noise in groups of 5 (60 groups) and
  20 (20 groups) consecutive rows: 4 N(0, 1) columns constant within groups
  (group-level noise), 4 N(0, 1) row-level columns, y = N(0, 1) group
  effect + N(0, 0.5^2) row noise.

Each data set runs in two forms: ``(forest+cv)``, ``RandomForestRegressor(
n_estimators=trees)`` with the splitter a user would pass,
``cv=TimeSeriesSplit(3)`` for ``ts-*`` and ``cv=GroupKFold(3)`` with
``fit(X, y, groups=groups)`` for ``grp-*``; and ``(forest)``, the same
forest without a splitter (the default: MDI-oob and shuffled shadows, which
assume independent rows; shown for contrast). BorutaPy runs as on the other
regimes: it has no notion of a splitter.

Selectors:

- probe tests of ``sklearn_fimp`` computed from the same rounds of probes
  (``sklearn_fimp._selection._measuring._rounds.measure_rounds``: each round appends
  one fresh shadow per feature, refits the model and measures every
  column with the selector's importance method):

  - ``t-1fit``: the test ``ImportanceSelector`` used up to version 0.x: one
    fit, a t prediction interval of the feature against the probes' means;
  - ``rank-pool``: features averaged over the rounds, rank p-value against
    all probes of all rounds, raw importances;
  - ``std-rank``: features averaged over the rounds and standardized by
    their own shadows, rank p-value against the probes' standardized
    scores;
  - ``rounds``: the test ``ImportanceSelector`` uses: each round's score
    in units of the feature's own shadows, its p-value against the probes'
    standardized scores of all rounds (with ``std-tail``'s tail), and the
    rounds combined by their k-th smallest p-value times R / k, k = ceil(R /
    3) (valid whatever the dependence between rounds);
  - ``std-tail``: features averaged over the rounds and standardized as in
    ``std-rank``, with a generalized Pareto tail beyond the last ten probe
    scores (Cantelli's bound where ties leave too few values to fit one);
    the test the selector used before ``rounds``;
  - ``std-tail-ties``: ``std-tail`` as it was before ties were handled:
    the Pareto tail fitted through null values tied at its threshold, no
    floor at the share of null values reaching a score, and a probe whose
    class-mates all tie left out of the null values;
  - ``hits``: Boruta's statistic on the same rounds: rounds in which the
    feature beats the largest probe, binomial test against 1/2;

  for every ``method`` (``auto`` resolves to ``oob_mdi`` for forests), the
  forests being ``RandomForest*(n_estimators=trees)`` and for ``permutation``
  also Ridge / LogisticRegression; with ``--hgb-on``, also
  ``HistGradientBoosting*(max_iter=trees)`` (otherwise its defaults),
  through ``--hgb-methods`` (default ``permutation``; accuracy on held-out
  rows or a drop-column score take few values, so many probes tie);
- ``BorutaPy``: ``BorutaPy(RandomForest*(max_depth=5), n_estimators="auto",
  alpha=0.05, max_iter=50)`` (its own two-step correction), through its
  public API; confirmed features count as kept.
- ``ImportanceSelector, stability, pfer=1`` (``--stability-on REGIMES``,
  independent rows only): ``ImportanceSelector(RandomForest*(n_estimators=
  trees), threshold="stability", pfer=1, round_trees=None)``, 25 pairs of
  complementary halves; its row also records the noise columns kept, whose
  mean the selector bounds by ``pfer`` (a table of its own on the page).

Wide-data power (``--power``): F1 against the informative columns on 600 x
300 data with 8 informative columns (``make_classification(600, 300,
n_informative=8, n_redundant=0, shuffle=False)`` and a regression twin
``make_regression(600, 300, n_informative=8, noise=10, shuffle=False)``
with ``y`` passed through ``tanh`` of its standardized value), seeds 100+,
ours against BorutaPy, with the seconds of each, in one run.

Run from the repository root::

    PYTHONPATH=. python bench/bench_calibration.py --quick   # seconds
    PYTHONPATH=. python bench/bench_calibration.py --write   # full, writes docs

The table is printed, and written to ``docs/bench_calibration.rst`` with
``--write``. ``--log FILE`` appends every row to FILE as it comes;
``bench/bench_calibration_rows.jsonl`` is the page's log, only ever appended
to (``--recompute`` appends the rows it changes, and a later row of a data
set, selector, rounds and trees replaces an earlier one when the log is
read), so that the repository keeps each row once.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from _common import (
    DOCS,
    command_line,
    heading,
    list_table,
    missing,
    reproduce,
    shown,
    skip,
    text_table,
    timed,
    utc_stamp,
    versions,
    wide_classification,
    write_page,
    written_by,
)
from joblib import Parallel, delayed
from scipy import stats
from sklearn.compose import make_column_transformer
from sklearn.datasets import make_classification, make_friedman1, make_regression
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils import Bunch

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._methods import METHODS
from sklearn_fimp._selection._deciding._decisions import probe_decision

# Private: the probe test's two halves are computed from the rounds that the
# public ImportanceSelector.fit measured, and the classes its shadows
# standardize by; the package has no public function for a probe test's
# p-values.
from sklearn_fimp._selection._deciding._probe_test import (
    adjust_pvalues,
    round_test,
)
from sklearn_fimp._selection._measuring._budget import round_count

DOCS_FILE = DOCS / "bench_calibration.rst"
ALPHA = 0.05
ALL_METHODS = (
    "auto",
    "mdi",
    "oob_mdi",
    "permutation",
    "oob_permutation",
    "drop_column",
)
#: Directory where the rounds' importances are kept (``--cache``), so that
#: another test can be evaluated on the same fits without refitting.
CACHE = os.environ.get("BENCH_CALIBRATION_CACHE")
#: Probe tests computed on the same rounds: "mean" is the one that
#: ImportanceSelector uses; "rounds", the test it used before its probes were
#: held fixed, computed on the same fixed probes, shows why it no longer
#: applies (each round's null scores then repeat the same few columns).
TESTS = ("mean", "rounds")


# --------------------------------------------------------------------------
# regimes: (X, y, informative mask)


def _levels(rng, n, k, size):
    return rng.randint(k, size=(n, size)).astype(float)


def reg_mixed_300(rng):
    X = np.hstack([rng.standard_normal((300, 5)), _levels(rng, 300, 3, 5)])
    return X, rng.standard_normal(300), np.zeros(10, bool)


def bin_mixed_300(rng):
    X = np.hstack([rng.standard_normal((300, 5)), _levels(rng, 300, 3, 5)])
    return X, rng.randint(2, size=300), np.zeros(10, bool)


def reg_normal_2000(rng):
    return (
        rng.standard_normal((2000, 20)),
        rng.standard_normal(2000),
        np.zeros(20, bool),
    )


def mc3_corr_1000(rng):
    base = rng.standard_normal((1000, 10))
    copies = base + 0.5 * rng.standard_normal((1000, 10))
    X = np.hstack([base, copies, _levels(rng, 1000, 5, 10)])
    return X, rng.randint(3, size=1000), np.zeros(30, bool)


def bin_small_100(rng):
    X = np.hstack(
        [
            _levels(rng, 100, 2, 2),
            _levels(rng, 100, 10, 2),
            rng.standard_normal((100, 1)),
        ]
    )
    return X, rng.randint(2, size=100), np.zeros(5, bool)


def friedman_600(rng):
    X, y = make_friedman1(600, 25, noise=1.0, random_state=rng)
    return X, y, np.arange(25) < 5


def mc4_signal_1000(rng):
    X, y = make_classification(
        1000,
        40,
        n_informative=5,
        n_redundant=0,
        n_repeated=0,
        n_classes=4,
        shuffle=False,
        random_state=rng,
    )
    return X, y, np.arange(40) < 5


def bin_wide_300(rng):
    X = np.hstack([rng.standard_normal((300, 250)), _levels(rng, 300, 4, 250)])
    return X, rng.randint(2, size=300), np.zeros(500, bool)


def bin_blocks_1000(rng):
    n, block, rho = 400, 20, 0.5
    shared = np.repeat(rng.standard_normal((n, 1000 // block)), block, axis=1)
    X = np.sqrt(rho) * shared + np.sqrt(1 - rho) * rng.standard_normal((n, 1000))
    return X, rng.randint(2, size=n), np.zeros(1000, bool)


def reg_wide_150(rng):
    X = rng.standard_normal((150, 1000))
    return X, rng.standard_normal(150), np.zeros(1000, bool)


def bin_blocks_wide_150(rng):
    n, block, rho = 150, 20, 0.5
    shared = np.repeat(rng.standard_normal((n, 1000 // block)), block, axis=1)
    X = np.sqrt(rho) * shared + np.sqrt(1 - rho) * rng.standard_normal((n, 1000))
    return X, rng.randint(2, size=n), np.zeros(1000, bool)


def reg_tight_200(rng):
    n, blocks, width = 200, 4, 25
    shared = np.repeat(rng.standard_normal((n, blocks)), width, axis=1)
    tight = shared + 0.25 * rng.standard_normal((n, blocks * width))
    X = np.hstack([tight, rng.standard_normal((n, 10))])
    return X, rng.standard_normal(n), np.zeros(X.shape[1], bool)


def bin_tight_300(rng):
    n, widths = 300, (2, 5, 10, 40)
    shared = np.repeat(rng.standard_normal((n, len(widths))), widths, axis=1)
    tight = shared + 0.2 * rng.standard_normal((n, sum(widths)))
    X = np.hstack([tight, rng.standard_normal((n, 10)), _levels(rng, n, 4, 10)])
    return X, rng.randint(2, size=n), np.zeros(X.shape[1], bool)


def bin_large_5000(rng):
    n = 5000
    signal = rng.standard_normal((n, 4))
    logit = signal @ np.array([1.0, 0.7, 0.5, 0.3])
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    z = rng.standard_normal((n, 4))
    pairs = np.hstack([z, 0.8 * z + 0.6 * rng.standard_normal((n, 4))])
    X = np.hstack([signal, pairs, _levels(rng, n, 2, 4), _levels(rng, n, 7, 4)])
    return X, y, np.arange(20) < 4


def wide_regression(rng):
    X, y = make_regression(
        600, 300, n_informative=8, noise=10.0, shuffle=False, random_state=rng
    )
    return X, np.tanh((y - y.mean()) / y.std()), np.arange(300) < 8


POWER = {
    "wide-classification": ("classification", wide_classification),
    "wide-regression": ("regression", wide_regression),
}


def bin_signal_400(rng):
    num = rng.standard_normal(400)
    cat = rng.randint(3, size=400).astype(float)
    signal = num + 2.0 * (cat == 1) - 1.5 * (cat == 2)
    num[rng.uniform(size=400) < 0.1] = np.nan
    X = np.column_stack([num, cat, rng.standard_normal(400)])
    y = (signal > np.median(signal)).astype(int)
    return X, y, np.array([True, True, False])


def _mixed_frame(rng, n, numeric, levels):
    """A DataFrame of ``numeric`` N(0, 1) columns ``x1, x2, ...`` and, for
    each count of ``levels``, a string column ``c<k>_<i>`` of k equally
    likely levels ``"L00", "L01", ...``."""
    import pandas as pd

    columns = {f"x{i + 1}": rng.standard_normal(n) for i in range(numeric)}
    for i, k in enumerate(levels):
        codes = rng.randint(k, size=n)
        columns[f"c{k}_{i + 1}"] = np.array([f"L{c:02d}" for c in range(k)])[codes]
    return pd.DataFrame(columns)


def reg_pipe_noise_500(rng):
    X = _mixed_frame(rng, 500, 4, [3, 5, 10, 20])
    return X, rng.standard_normal(500), np.zeros(8, bool)


def bin_pipe_noise_500(rng):
    X = _mixed_frame(rng, 500, 4, [3, 5, 10, 20])
    return X, rng.randint(2, size=500), np.zeros(8, bool)


#: effects of the five levels of the informative categorical column
_EFFECTS = np.array([0.0, 1.0, -1.0, 0.5, -0.5])


def _pipe_signal(rng, n):
    """Columns x1, x2 (informative), x3-x5 (noise), then g (five levels,
    informative) and string noise columns of 3, 8 and 20 levels; the linear
    predictor x1 + 0.7 x2 + effect[g]."""
    X = _mixed_frame(rng, n, 5, [5, 3, 8, 20])
    X = X.rename(columns={"c5_1": "g"})
    codes = X["g"].str[1:].astype(int).to_numpy()
    signal = X["x1"].to_numpy() + 0.7 * X["x2"].to_numpy() + _EFFECTS[codes]
    informative = np.isin(X.columns, ["x1", "x2", "g"])
    return X, signal, informative


def reg_pipe_signal_600(rng):
    X, signal, informative = _pipe_signal(rng, 600)
    return X, signal + rng.standard_normal(600), informative


def bin_pipe_signal_600(rng):
    X, signal, informative = _pipe_signal(rng, 600)
    p = 1 / (1 + np.exp(-1.5 * signal))
    return X, (rng.uniform(size=600) < p).astype(int), informative


#: Mixed-type regimes, run as a Pipeline on the DataFrame and as a bare
#: forest on its ordinal-encoded twin (see the module docstring).
MIXED = {
    "reg-pipe-noise-500": ("regression", reg_pipe_noise_500),
    "bin-pipe-noise-500": ("classification", bin_pipe_noise_500),
    "reg-pipe-signal-600": ("regression", reg_pipe_signal_600),
    "bin-pipe-signal-600": ("classification", bin_pipe_signal_600),
}


def _ar1(rng, n, phi, size=None):
    """Independent stationary AR(1) series of unit variance (``size``
    columns, one series when None): x_t = phi x_{t-1} + N(0, 1 - phi^2)."""
    k = 1 if size is None else size
    x = np.empty((n, k))
    x[0] = rng.standard_normal(k)
    steps = np.sqrt(1 - phi**2) * rng.standard_normal((n, k))
    for t in range(1, n):
        x[t] = phi * x[t - 1] + steps[t]
    return x[:, 0] if size is None else x


def _ts_null(phi, n):
    def make(rng):
        return _ar1(rng, n, phi, 8), _ar1(rng, n, phi), np.zeros(8, bool)

    make.__name__ = f"ts_ar{round(10 * phi)}_{n}"
    return make


def ts_signal_600(rng):
    X = _ar1(rng, 600, 0.9, 8)
    y = X[:, 0] + 0.7 * X[:, 1] + 0.5 * X[:, 2] + _ar1(rng, 600, 0.9)
    return X, y, np.arange(8) < 3


def _group_null(size, n_groups):
    def make(rng):
        groups = np.repeat(np.arange(n_groups), size)
        n = n_groups * size
        level = rng.standard_normal((n_groups, 4))[groups]
        X = np.hstack([level, rng.standard_normal((n, 4))])
        y = rng.standard_normal(n_groups)[groups] + 0.5 * rng.standard_normal(n)
        return X, y, np.zeros(8, bool)

    make.__name__ = f"grp_{size}_{n_groups * size}"
    return make


#: Regimes whose rows hang together, with the splitter a user would pass:
#: name: (task, make, splitter, group size or None). Each data set runs with
#: that splitter (``(forest+cv)``; ``fit(X, y, groups=...)`` for GroupKFold)
#: and without it (``(forest)``, the default), see the module docstring.
DEPENDENT = {
    "ts-ar5-300": ("regression", _ts_null(0.5, 300), "TimeSeriesSplit", None),
    "ts-ar9-300": ("regression", _ts_null(0.9, 300), "TimeSeriesSplit", None),
    "ts-ar9-1000": ("regression", _ts_null(0.9, 1000), "TimeSeriesSplit", None),
    "ts-signal-600": ("regression", ts_signal_600, "TimeSeriesSplit", None),
    "grp-5-300": ("regression", _group_null(5, 60), "GroupKFold", 5),
    "grp-20-400": ("regression", _group_null(20, 20), "GroupKFold", 20),
}


def splitter(regime, n_rows):
    """The cv a user would pass for ``regime`` (3 splits) and the keyword
    arguments of ``fit`` it needs (the rows' groups, for GroupKFold)."""
    from sklearn.model_selection import GroupKFold, TimeSeriesSplit

    _, _, kind, size = DEPENDENT[regime]
    if kind == "TimeSeriesSplit":
        return TimeSeriesSplit(3), {}
    return GroupKFold(3), dict(groups=np.arange(n_rows) // size)


def _is_text(column):
    from pandas.api.types import is_numeric_dtype

    return not is_numeric_dtype(column)


def ordinal(X):
    """A float array of X with each string column as one integer column
    (the code of its level in sorted order); X itself when it is an array."""
    if not hasattr(X, "columns"):
        return X
    columns = [
        np.unique(X[name].to_numpy(), return_inverse=True)[1]
        if _is_text(X[name])
        else X[name].to_numpy()
        for name in X.columns
    ]
    return np.column_stack(columns).astype(float)


def pipeline(X, task, seed, trees):
    """One-hot encoding of X's string columns and scaling of its numeric
    ones, each listed by name, in front of a forest."""
    categorical = [name for name in X.columns if _is_text(X[name])]
    numeric = [name for name in X.columns if name not in categorical]
    return make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), categorical),
            (StandardScaler(), numeric),
        ),
        forest(task, seed, trees),
    )


def bin_classes_wide_200(rng):
    n = 200
    share = rng.uniform(0.02, 0.3, size=250)
    sparse = (rng.uniform(size=(n, 250)) < share).astype(float)
    base = (rng.uniform(size=(n, 6)) < rng.uniform(0.05, 0.3, size=6)).astype(float)
    blocks = np.repeat(base, 4, axis=1)
    blocks = np.abs(blocks - (rng.uniform(size=blocks.shape) < 0.01))
    X = np.hstack(
        [rng.standard_normal((n, 300)), sparse, blocks, _levels(rng, n, 10, 12)]
    )
    return X, rng.randint(2, size=n), np.zeros(X.shape[1], bool)


def bin_kinds_wide_60(rng):
    n = 60
    share = rng.uniform(0.1, 0.5, size=56)
    binary = (rng.uniform(size=(n, 56)) < share).astype(float)
    X = np.hstack([binary, rng.standard_normal((n, 8)), _levels(rng, n, 10, 8)])
    return X, rng.randint(2, size=n), np.zeros(X.shape[1], bool)


#: the kinds of column of the regimes whose note counts p-values per kind
KINDS = {
    "bin-classes-wide-200": {
        "normal": range(300),
        "sparse binary": range(300, 550),
        "blocks": range(550, 574),
        "ten-level": range(574, 586),
    },
    "bin-kinds-wide-60": {
        "binary": range(56),
        "normal": range(56, 64),
        "ten-level": range(64, 72),
    },
}


REGIMES = {
    "reg-mixed-300": ("regression", reg_mixed_300),
    "bin-mixed-300": ("classification", bin_mixed_300),
    "reg-normal-2000": ("regression", reg_normal_2000),
    "mc3-corr-1000": ("classification", mc3_corr_1000),
    "bin-small-100": ("classification", bin_small_100),
    "friedman-600": ("regression", friedman_600),
    "mc4-signal-1000": ("classification", mc4_signal_1000),
    "bin-wide-300": ("classification", bin_wide_300),
    "bin-blocks-1000": ("classification", bin_blocks_1000),
    "reg-wide-150": ("regression", reg_wide_150),
    "bin-blocks-wide-150": ("classification", bin_blocks_wide_150),
    "reg-tight-200": ("regression", reg_tight_200),
    "bin-tight-300": ("classification", bin_tight_300),
    "bin-classes-wide-200": ("classification", bin_classes_wide_200),
    "bin-kinds-wide-60": ("classification", bin_kinds_wide_60),
    "bin-large-5000": ("classification", bin_large_5000),
    "bin-signal-400": ("classification", bin_signal_400),
    **MIXED,
    **{name: (task, make) for name, (task, make, _, _) in DEPENDENT.items()},
}


def make_data(regime, seed):
    task, make = REGIMES[regime] if regime in REGIMES else POWER[regime]
    X, y, informative = make(np.random.RandomState(seed))
    return X, y, informative, task


# --------------------------------------------------------------------------
# selectors


def forest(task, seed, trees, **params):
    model = RandomForestRegressor if task == "regression" else RandomForestClassifier
    return model(n_estimators=trees, random_state=seed, **params)


def linear(task, seed):
    if task == "regression":
        return Ridge()
    return LogisticRegression(max_iter=1000)


def boosting(task, seed, iterations):
    model = (
        HistGradientBoostingRegressor
        if task == "regression"
        else HistGradientBoostingClassifier
    )
    return model(max_iter=iterations, random_state=seed)


def booster(kind, task, seed, iterations):
    """LightGBM, XGBoost or CatBoost with ``iterations`` trees, one thread."""
    classify = task != "regression"
    if kind == "catboost":
        import catboost

        model = catboost.CatBoostClassifier if classify else catboost.CatBoostRegressor
        return model(
            iterations=iterations,
            random_seed=seed,
            thread_count=1,
            verbose=0,
            allow_writing_files=False,
        )
    if kind == "lightgbm":
        import lightgbm

        model = lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor
        return model(n_estimators=iterations, random_state=seed, n_jobs=1, verbose=-1)
    import xgboost

    model = xgboost.XGBClassifier if classify else xgboost.XGBRegressor
    return model(n_estimators=iterations, random_state=seed, n_jobs=1)


def tree_model(model, task, seed, trees):
    """The forest ("forest" or "forest+cv"), HistGradientBoosting ("hgb"),
    LightGBM, XGBoost or CatBoost with ``trees`` trees."""
    if model in ("forest", "forest+cv"):
        return forest(task, seed, trees)
    if model == "hgb":
        return boosting(task, seed, trees)
    return booster(model, task, seed, trees)


#: the models whose rounds the selector's default measures as if stopped
#: early (``round_trees="auto"``; a forest's rounds fit ``trees`` trees)
BOOSTED = ("hgb", "lightgbm", "xgboost", "catboost", "pipeline-hgb")


def pipeline_hgb(X, task, seed, trees):
    """:func:`pipeline`'s encoders in front of HistGradientBoosting."""
    model = pipeline(X, task, seed, trees)
    return make_pipeline(
        *[step for _, step in model.steps[:-1]], boosting(task, seed, trees)
    )


def probe_rounds(X, y, task, seed, method, model, n_rounds, trees, regime=None):
    """Importances of features and shadows over ``n_rounds`` rounds, measured
    by ``ImportanceSelector.fit`` itself (public API, ``refit=False``), and
    the method that ran. ``model="pipeline"`` fits X (a DataFrame) through
    :func:`pipeline`; the other models fit X's :func:`ordinal` array.
    ``model="forest+cv"`` passes the forest with ``regime``'s splitter (and
    the rows' groups to ``fit``, for GroupKFold)."""
    if model == "pipeline":
        estimator = pipeline(X, task, seed, trees)
    elif model == "pipeline-hgb":
        estimator = pipeline_hgb(X, task, seed, trees)
    else:
        X = ordinal(X)
    cv, split = None, {}
    if model == "forest+cv":
        cv, split = splitter(regime, len(y))
    if model in ("forest", "forest+cv", "hgb", "lightgbm", "xgboost", "catboost"):
        estimator = tree_model(model, task, seed, trees)
    elif model == "linear":
        estimator = linear(task, seed)
    selector = ImportanceSelector(
        estimator,
        method=method,
        n_rounds=n_rounds,
        # every round fits the model as built: ``trees`` trees per round; a
        # boosted model's halves measured as the selector's default measures
        # them, cut where they score best on the half (round_trees="auto")
        round_trees="auto" if model in BOOSTED else None,
        alpha=ALPHA,
        min_features=0,
        refit=False,
        random_state=seed,
        cv=cv,
    ).fit(X, y, **split)
    result = selector.importances_
    # the groups the test measured: each column alone, or (a linear model's
    # default) its correlated columns together; the group of each column
    group_of = np.empty(X.shape[1], dtype=np.intp)
    for g, members in enumerate(selector.groups_):
        group_of[members] = g
    return (
        selector.importance_history_,
        selector.probe_history_,
        np.asarray(result.mirrors),
        selector.method_,
        # the classes the selector's test used (its probe classes, merged
        # where a small class got shadows of its own: _probes.class_top_up)
        np.asarray(result.classes),
        group_of,
    )


def test_decisions(real, probes, owners, classes, test, n_rounds):
    """``(kept with Holm, kept with Benjamini-Hochberg, raw p-values)`` of
    ``test`` at ``ALPHA``: for "mean", ImportanceSelector's own decision on
    the rounds it ran (its looks and their spending, ``probe_decision``;
    the rounds stopped early by the rule of the selector's default
    correction); for "rounds", the round test's p-values adjusted as they
    come."""
    n_groups = real.shape[1]
    if test == "rounds":
        pvalues = round_test(
            real, probes, owners, n_groups, classes=classes, fixed=True
        )[1]
        return (
            adjust_pvalues(pvalues, "holm") <= ALPHA,
            adjust_pvalues(pvalues, "fdr_bh") <= ALPHA,
            pvalues,
        )
    history = Bunch(real=real, probes=probes, owners=owners, classes=classes)
    kept = [
        probe_decision(
            history,
            n_groups,
            alpha=ALPHA,
            correction=correction,
            keep_tentative=False,
            n_rounds=n_rounds,
        )
        for correction in ("holm", "fdr_bh")
    ]
    return kept[0].passed, kept[1].passed, kept[1].pvalues


def between_share(values):
    """Share of the variance of noise importances (rounds x features) that
    lies between features: 0 when rounds are independent draws, 1 when a
    feature's importance is fixed by the data and only the fit varies."""
    if values.shape[0] < 2 or values.shape[1] < 2:
        return np.nan
    within = values.var(axis=0, ddof=1).mean()
    between = values.mean(axis=0).var(ddof=1) - within / values.shape[0]
    total = between + within
    return float(max(between, 0.0) / total) if total > 0 else np.nan


def outcome(kept_holm, kept_bh, informative):
    noise = ~informative
    false_bh = int(np.sum(kept_bh & noise))
    return dict(
        any_false=bool(np.any(kept_holm & noise)),
        fdp=false_bh / max(int(kept_bh.sum()), 1),
        power=(float(np.mean(kept_holm[informative])) if informative.any() else np.nan),
        f1=f1_score(kept_holm, informative),
        power_bh=(
            float(np.mean(kept_bh[informative])) if informative.any() else np.nan
        ),
        f1_bh=f1_score(kept_bh, informative),
    )


def f1_score(kept, informative):
    true = int(np.sum(kept & informative))
    if true == 0:
        return 0.0
    return 2 * true / (int(kept.sum()) + int(informative.sum()))


def _kept_rounds(regime, seed, method, model, n_rounds, trees):
    """Where a data set's rounds are kept, or None without a cache."""
    if not CACHE:
        return None
    return Path(CACHE, f"sel-{regime}-{seed}-{method}-{model}-{n_rounds}-{trees}.npz")


def run_probes(regime, seed, method, model, n_rounds, trees):
    X, y, informative, task = make_data(regime, seed)
    cached = _kept_rounds(regime, seed, method, model, n_rounds, trees)
    if cached is not None and cached.exists():
        with np.load(cached) as saved:
            real, probes, owners = saved["real"], saved["probes"], saved["owners"]
            classes = saved["classes"]
            # rounds kept before groups were recorded measured each column
            group_of = (
                saved["group_of"] if "group_of" in saved else np.arange(real.shape[1])
            )
            seconds = float(saved["seconds"])
            # rounds kept before rows recorded the method that ran have none
            method_run = str(saved["method_run"]) if "method_run" in saved else None
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds, (real, probes, owners, method_run, classes, group_of) = timed(
                lambda: probe_rounds(
                    X, y, task, seed, method, model, n_rounds, trees, regime
                )
            )
        if cached is not None:
            np.savez(
                cached,
                real=real,
                probes=probes,
                owners=owners,
                classes=classes,
                group_of=group_of,
                seconds=seconds,
                method_run=method_run,
            )
    ran = {} if method_run is None else dict(method_run=method_run)
    rows = []
    noise = ~informative
    # a group holding no informative column is noise; a kept group keeps
    # its columns, and each column has its group's p-value
    noise_groups = np.bincount(group_of[informative], minlength=real.shape[1]) == 0
    diagnosis = dict(
        probe_skew=float(stats.skew(probes[0])),
        between_share=between_share(real[:, noise_groups]),
    )
    for test in TESTS:
        holm, bh, pvalues = (
            np.asarray(a)[group_of]
            for a in test_decisions(real, probes, owners, classes, test, n_rounds)
        )
        label = f"{method} ({model}) {test}"
        rows.append(
            dict(
                regime=regime,
                seed=seed,
                selector=label,
                seconds=seconds,
                rounds=n_rounds,
                trees=trees,
            )
            | ran
            | outcome(holm, bh, informative)
            | dict(noise_p=pvalues[noise])
            | diagnosis
        )
    return rows


#: stability selection's bound on the expected number of noise columns kept
STABILITY_PFER = 1.0
STABILITY = f"ImportanceSelector, stability, pfer={STABILITY_PFER:g}"


def run_stability(regime, seed, trees):
    """``ImportanceSelector(threshold="stability")`` on a forest of
    ``trees`` trees in each half (its other parameters at their defaults:
    25 pairs of halves); the row records the noise columns kept, whose
    expectation the selector bounds by ``pfer``."""
    X, y, informative, task = make_data(regime, seed)
    selector = ImportanceSelector(
        forest(task, seed, trees),
        threshold="stability",
        pfer=STABILITY_PFER,
        round_trees=None,
        min_features=0,
        refit=False,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, _ = timed(lambda: selector.fit(ordinal(X), y))
    kept = np.asarray(selector.support_, dtype=bool)
    row = dict(
        regime=regime,
        seed=seed,
        selector=STABILITY,
        seconds=seconds,
        n_false=int(np.sum(kept & ~informative)),
        pfer=STABILITY_PFER,
    )
    return [row | outcome(kept, kept, informative)]


def run_boruta(regime, seed):
    from boruta import BorutaPy

    X, y, informative, task = make_data(regime, seed)
    selector = BorutaPy(
        forest(task, seed, 100, max_depth=5),
        n_estimators="auto",
        alpha=ALPHA,
        max_iter=50,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, _ = timed(lambda: selector.fit(ordinal(X), y))
    kept = np.asarray(selector.support_, dtype=bool)
    row = dict(regime=regime, seed=seed, selector="BorutaPy", seconds=seconds)
    return [row | outcome(kept, kept, informative)]


# --------------------------------------------------------------------------
# plan and summary


def plan(
    regimes,
    seeds,
    configs,
    boruta,
    boruta_seeds=None,
    done=frozenset(),
    stability=frozenset(),
    trees=None,
):
    """The jobs to run: every (regime, seed, configuration), BorutaPy on the
    first ``boruta_seeds`` seeds of the regimes in ``boruta``, stability
    selection (forests of ``trees`` trees) on the regimes in ``stability``,
    leaving out the fits already recorded in ``done`` (see
    _configuration_key)."""
    jobs = []
    for regime in regimes:
        for i, seed in enumerate(seeds):
            for method, model, n_rounds, trees in configs(regime):
                configuration = f"{method} ({model})"
                if (regime, seed, configuration, n_rounds, trees) not in done:
                    jobs.append(
                        delayed(run_probes)(
                            regime, seed, method, model, n_rounds, trees
                        )
                    )
            if (
                regime in boruta
                and (boruta_seeds is None or i < boruta_seeds)
                and (regime, seed, "BorutaPy", None, None) not in done
            ):
                jobs.append(delayed(run_boruta)(regime, seed))
            if (
                regime in stability
                and (regime, seed, STABILITY, None, None) not in done
            ):
                jobs.append(delayed(run_stability)(regime, seed, trees))
    return jobs


def read_log(paths):
    """Rows recorded with ``--log``, one per (regime, seed, selector, rounds,
    trees): a later row replaces an earlier one of the same key, in the
    earlier one's place (the log is only ever appended to; ``--recompute``
    appends the rows it changes)."""
    rows = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                rows[(row["seed"], *_table_key(row))] = row
    return list(rows.values())


def append_log(path, rows):
    """Append ``rows`` to the log at ``path``, one JSON line each (the log
    is never rewritten)."""
    with open(path, "a") as log:
        for row in rows:
            log.write(_line(row))


def _line(row):
    return json.dumps(_record(row), default=float) + "\n"


def changed_rows(logged, rows):
    """The rows of ``rows`` that the log does not hold as they are."""
    held = {(r["seed"], *_table_key(r)): _line(r) for r in logged}
    return [
        row for row in rows if held.get((row["seed"], *_table_key(row))) != _line(row)
    ]


def recompute(rows, n_rounds, trees):
    """Every probe test's row of ``rows`` computed again from the kept rounds
    of its data set (no refit: each test, including one added since, on the
    same fits); the other rows (BorutaPy) as they are. A row records its
    rounds and trees; ``n_rounds`` and ``trees`` stand in for rows recorded
    before it did."""
    if not CACHE:
        raise SystemExit("--recompute needs BENCH_CALIBRATION_CACHE (the kept rounds)")
    kept = [row for row in rows if _is_peer(row["selector"])]
    configurations = dict.fromkeys(
        _configuration_key(row, n_rounds, trees)
        for row in rows
        if not _is_peer(row["selector"])
    )
    for regime, seed, configuration, n_rounds, trees in configurations:
        method, model = configuration.rstrip(")").split(" (")
        path = _kept_rounds(regime, seed, method, model, n_rounds, trees)
        if not path.exists():
            raise SystemExit(
                f"no kept rounds for {regime}, seed {seed}, {configuration} "
                f"({path}): refit it with --log, or check --rounds and --trees"
            )
        kept.extend(run_probes(regime, seed, method, model, n_rounds, trees))
    return kept


def _configuration_key(row, n_rounds=None, trees=None):
    """(regime, seed, configuration, rounds, trees) of a row: the fits it
    was computed from (rounds and trees are None for a peer's row, and
    ``n_rounds`` and ``trees`` for a row recorded before rows kept them)."""
    return (
        row["regime"],
        row["seed"],
        _configuration(row["selector"]),
        row.get("rounds", n_rounds),
        row.get("trees", trees),
    )


def _table_key(row):
    """(regime, selector, rounds, trees): the rows one line of the tables
    summarizes (rounds and trees are None for a peer's row)."""
    return row["regime"], row["selector"], row.get("rounds"), row.get("trees")


def _by_selector_and_fits(rows):
    """Rows grouped by :func:`_table_key`, in order."""
    table = {}
    for row in rows:
        table.setdefault(_table_key(row), []).append(row)
    return table


def _fits(n_rounds, trees):
    """The 'Rounds x trees' cell ('' for a peer)."""
    return "" if n_rounds is None else f"{n_rounds} x {trees}"


def _is_peer(selector):
    """A peer's row (BorutaPy), not one of the probe tests on kept rounds."""
    return _configuration(selector) == selector


def _configuration(selector):
    """'auto (forest)' of the label 'auto (forest) std-tail'."""
    return selector.rsplit(" ", 1)[0] if selector.endswith(TESTS) else selector


def clopper_pearson_upper(k, n, level=0.95):
    return 1.0 if k == n else float(stats.beta.ppf(level, k + 1, n - k))


def summarize(rows):
    out = []
    for (regime, selector, n_rounds, trees), group in _by_selector_and_fits(
        rows
    ).items():
        n = len(group)
        k = sum(r["any_false"] for r in group)
        fdp = np.array([r["fdp"] for r in group])
        power = np.array([r["power"] for r in group])
        # rows logged before the Benjamini-Hochberg power was recorded (the
        # peers', whose two decisions are one) fall back on Holm's
        power_bh = np.array([r.get("power_bh", r["power"]) for r in group])
        out.append(
            dict(
                regime=regime,
                selector=selector,
                fits=_fits(n_rounds, trees),
                n=n,
                fwer_k=k,
                fwer=k / n,
                fwer_upper=clopper_pearson_upper(k, n),
                fdr=float(fdp.mean()),
                fdr_upper=float(fdp.mean() + 1.645 * fdp.std(ddof=1) / np.sqrt(n))
                if n > 1
                else np.nan,
                power=_mean_where_defined(power),
                f1=float(np.mean([r["f1"] for r in group])),
                power_bh=_mean_where_defined(power_bh),
                f1_bh=float(np.mean([r.get("f1_bh", r["f1"]) for r in group])),
                seconds=float(np.mean([r["seconds"] for r in group])),
                **_noise_kept(group),
            )
        )
    return out


def _noise_kept(group):
    """Stability selection's rows: the mean number of noise columns kept
    (what ``pfer`` bounds), with mean + 1.645 standard errors, and the
    most in one data set; nothing for the other rows."""
    if not all("n_false" in r for r in group):
        return {}
    kept = np.array([r["n_false"] for r in group], dtype=float)
    upper = kept.mean() + 1.645 * kept.std(ddof=1) / np.sqrt(len(kept))
    return dict(
        pfer=group[0]["pfer"],
        mean_false=float(kept.mean()),
        mean_false_upper=float(upper) if len(kept) > 1 else np.nan,
        max_false=int(kept.max()),
    )


def _mean_where_defined(values):
    """Mean of the values that are not NaN (power without informative
    columns, a between-feature share with one noise column), NaN when none
    is (where np.nanmean would warn)."""
    values = np.asarray(values, dtype=np.float64)
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else np.nan


def diagnose(rows):
    """Null p-values of noise features per test, and what one fit shares."""
    out = []
    with_pvalues = [row for row in rows if "noise_p" in row]
    for (regime, selector, n_rounds, trees), group in _by_selector_and_fits(
        with_pvalues
    ).items():
        p = np.concatenate([r["noise_p"] for r in group])
        if len(p) == 0:
            continue
        common = dict(
            regime=regime,
            fits=_fits(n_rounds, trees),
            probe_skew=_mean_where_defined([r["probe_skew"] for r in group]),
            between_share=_mean_where_defined([r["between_share"] for r in group]),
        )
        # a pure-noise regime of KINDS: its noise columns are all of its
        # columns, in order, and each kind's p-values get a row of their own
        kinds = {"all columns": slice(None), **KINDS.get(regime, {})}
        for kind, columns in kinds.items():
            p = np.concatenate([np.asarray(r["noise_p"])[columns] for r in group])
            label = selector if kind == "all columns" else f"{selector} [{kind}]"
            out.append(
                common
                | dict(
                    selector=label,
                    n_pvalues=len(p),
                    le_01=float(np.mean(p <= 0.01)),
                    le_05=float(np.mean(p <= 0.05)),
                )
            )
    return out


def text_diagnosis(diagnosis):
    return text_table(
        ["regime", "selector", "p-values", "P(p<=.01)", "P(p<=.05)", "skew", "between"],
        [
            [
                d["regime"],
                d["selector"],
                d["n_pvalues"],
                f"{d['le_01']:.3f}",
                f"{d['le_05']:.3f}",
                f"{d['probe_skew']:.2f}",
                f"{d['between_share']:.2f}",
            ]
            for d in diagnosis
        ],
    )


def summary_text(summary):
    return text_table(
        ["regime", "selector", "fits", "n", "FWER", "upper", "FDR", "upper"]
        + ["power", "F1", "s"],
        [
            [
                s["regime"],
                s["selector"],
                s["fits"],
                s["n"],
                f"{s['fwer_k']}={s['fwer']:.1%}",
                f"{s['fwer_upper']:.1%}",
                f"{s['fdr']:.1%}",
                f"{s['fdr_upper']:.1%}",
                f"{s['power']:.2f}",
                f"{s['f1']:.2f}",
                f"{s['seconds']:.2f}",
            ]
            for s in summary
        ],
    )


def _percent(x):
    return "" if not np.isfinite(x) else f"{100 * x:.1f}"


def _is_headline(selector):
    """Rows of the first table: the selector's own test, and the peers."""
    return selector.endswith(f" {TESTS[0]}") or _is_peer(selector)


def _error_table(title, summary):
    order = [*REGIMES, *POWER]
    body = []
    for s in sorted(summary, key=lambda s: order.index(s["regime"])):
        power = "" if not np.isfinite(s["power"]) else f"{s['power']:.2f}"
        power_bh = "" if not np.isfinite(s["power_bh"]) else f"{s['power_bh']:.2f}"
        body.append(
            [
                s["regime"],
                s["selector"],
                s["fits"],
                s["n"],
                f"{s['fwer_k']} = {_percent(s['fwer'])}",
                _percent(s["fwer_upper"]),
                _percent(s["fdr"]),
                _percent(s["fdr_upper"]),
                power,
                power_bh,
                f"{s['f1_bh']:.2f}" if power else "",
                f"{s['seconds']:.2f}",
            ]
        )
    return list_table(
        title,
        [
            "Regime",
            "Selector",
            "Rounds x trees",
            "Data sets",
            "FWER (%)",
            "FWER 95% upper (%)",
            "FDR (%)",
            "FDR 95% upper (%)",
            "Power, Holm",
            "Power, BH",
            "F1, BH",
            "Time (s)",
        ],
        body,
    )


def _stability_table(summary):
    order = [*REGIMES, *POWER]
    body = [
        [
            s["regime"],
            s["n"],
            f"{s['pfer']:g}",
            f"{s['mean_false']:.2f}",
            _decimal(s["mean_false_upper"]),
            s["max_false"],
            f"{s['fwer_k']} = {_percent(s['fwer'])}",
            "" if not np.isfinite(s["power"]) else f"{s['power']:.2f}",
            f"{s['seconds']:.2f}",
        ]
        for s in sorted(summary, key=lambda s: order.index(s["regime"]))
    ]
    return list_table(
        "ImportanceSelector(threshold='stability'): noise columns kept per "
        "data set, whose expectation the selector bounds by pfer",
        [
            "Regime",
            "Data sets",
            "pfer",
            "Noise kept, mean",
            "Mean 95% upper",
            "Noise kept, most",
            "Any noise kept (%)",
            "Power",
            "Time (s)",
        ],
        body,
    )


def _decimal(x):
    return "" if not np.isfinite(x) else f"{x:.2f}"


def rst(summary, diagnosis, command, seconds, notes):
    lines = [
        *written_by("bench_calibration.py"),
        *heading("Benchmark: calibration of the probe test"),
        "",
        f"- date: {utc_stamp()}; whole run {seconds / 60:.1f} min",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores (shared), "
        f"{platform.system()} {platform.release()}",
        "- " + versions("numpy", "scipy", "scikit-learn", "sklearn_fimp", "boruta"),
        f"- alpha = q = {ALPHA}",
        "",
        *reproduce(command),
        "Regimes and selectors are described at the top of "
        "``bench/bench_calibration.py``. FWER: share of data sets with any noise "
        "column kept (Holm), with the Clopper-Pearson 95% upper bound; FDR: mean "
        "false discovery proportion (Benjamini-Hochberg), with mean + 1.645 "
        "standard errors; power: mean share of informative columns kept, with "
        "either correction, and F1 with Benjamini-Hochberg (the selector's "
        "default); "
        "time: mean seconds per data set, one core.",
        "",
    ]
    for note in notes:
        lines += [note, ""]
    headline = [row for row in summary if _is_headline(row["selector"])]
    others = [row for row in summary if not _is_headline(row["selector"])]
    lines += _error_table(
        f"ImportanceSelector's test and BorutaPy: error rates at alpha = {ALPHA}",
        headline,
    )
    if others:
        lines += [""] + _error_table(
            "The round test ImportanceSelector used before its probes were held "
            "fixed, computed on the same fixed probes (not valid there: shown "
            "to say why the selector no longer uses it)",
            others,
        )
    if diagnosis:
        lines += [""] + list_table(
            "Unadjusted p-values of the noise columns "
            "(valid: P(p <= a) <= a), skewness of the probes' importances in "
            "one fit, and the share of a noise column's importance variance "
            "that is fixed by the data (between features, over rounds)",
            [
                "Regime",
                "Test",
                "Rounds x trees",
                "p-values",
                "P(p <= 0.01)",
                "P(p <= 0.05)",
                "Probe skewness",
                "Between share",
            ],
            [
                [
                    d["regime"],
                    d["selector"],
                    d["fits"],
                    d["n_pvalues"],
                    f"{d['le_01']:.3f}",
                    f"{d['le_05']:.3f}",
                    f"{d['probe_skew']:.2f}",
                    f"{d['between_share']:.2f}",
                ]
                for d in diagnosis
            ],
        )
    stable = [row for row in summary if "mean_false" in row]
    if stable:  # last: the other notes name the tables above by position
        lines += [""] + _stability_table(stable)
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a run of seconds in a temporary folder (see quick); prints the page",
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--regimes", nargs="*", default=None)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument(
        "--auto-rounds",
        action="store_true",
        help="each method on the forest runs the rounds n_rounds='auto' gives "
        "it (drop_column: 1) instead of --rounds",
    )
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--methods", nargs="*", default=["auto"])
    parser.add_argument("--no-boruta", action="store_true")
    parser.add_argument("--power", action="store_true")
    parser.add_argument(
        "--all-methods-on",
        nargs="*",
        default=[],
        help="regimes on which every method (and a linear model) is measured",
    )
    parser.add_argument(
        "--boruta-on", nargs="*", default=None, help="regimes BorutaPy runs on"
    )
    parser.add_argument(
        "--hgb-on",
        nargs="*",
        default=[],
        help="regimes on which HistGradientBoosting is measured too, with "
        "--hgb-methods",
    )
    parser.add_argument("--hgb-methods", nargs="*", default=["permutation"])
    parser.add_argument(
        "--boosters-on",
        nargs="*",
        default=[],
        help="regimes on which each of --boosters is wrapped with method='auto'",
    )
    parser.add_argument(
        "--boosters",
        nargs="*",
        default=["hgb", "lightgbm", "xgboost", "pipeline-hgb"],
        help="hgb, lightgbm, xgboost, catboost, linear, and pipeline-hgb (the MIXED "
        "regimes' encoders in front of HistGradientBoosting)",
    )
    parser.add_argument(
        "--stability-on",
        nargs="*",
        default=[],
        help="regimes ImportanceSelector(threshold='stability') also runs on "
        "(independent rows; its forests have --trees trees)",
    )
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--from-log",
        nargs="*",
        default=None,
        help="summarize rows recorded with --log instead of running",
    )
    parser.add_argument(
        "--recompute",
        nargs="*",
        default=None,
        help="recompute the probe tests' rows recorded with --log from the "
        "kept rounds (BENCH_CALIBRATION_CACHE; with the --rounds and --trees "
        "they were run with), keep the other rows, and summarize; with --log, "
        "append the rows that changed to it",
    )
    parser.add_argument(
        "--note", action="append", default=[], help="a line for the docs page"
    )
    parser.add_argument(
        "--log",
        default=None,
        help="append every row to this file (it is only ever appended to: a "
        "later row of a data set and selector replaces an earlier one)",
    )
    parser.add_argument(
        "--boruta-seeds",
        type=int,
        default=None,
        help="run BorutaPy on this many seeds of each regime only",
    )
    parser.add_argument(
        "--skip-logged",
        nargs="*",
        default=[],
        help="leave out the data sets these --log files already hold",
    )
    parser.add_argument(
        "--page",
        type=Path,
        default=DOCS_FILE,
        help=f"where --write writes the page (default: {shown(DOCS_FILE)})",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.quick:
        if args.log or args.from_log is not None or args.recompute is not None:
            parser.error("--quick keeps its rows and rounds in a temporary folder")
        with tempfile.TemporaryDirectory() as folder:
            quick(args, argv, folder, start)
        return
    if args.from_log is not None:
        report(read_log(args.from_log), args, argv, start)
        return
    if args.recompute is not None:
        rows = recompute(read_log(args.recompute), args.rounds, args.trees)
        if args.log:
            held = read_log([args.log]) if Path(args.log).is_file() else []
            changed = changed_rows(held, rows)
            append_log(args.log, changed)
            print(f"appended {len(changed)} recomputed rows to {args.log}")
        report(rows, args, argv, start)
        return
    report(run(args), args, argv, start)


#: --quick: the regimes, seeds, rounds and trees of a run of seconds.
QUICK = {
    "regimes": [
        "bin-small-100",
        "reg-mixed-300",
        "bin-pipe-noise-500",
        "ts-ar9-300",
        "grp-5-300",
    ],
    "seeds": 2,
    "rounds": 3,
    "trees": 5,
}


def quick(args, argv, folder, start):
    """A run of seconds: two small regimes, a mixed one (a Pipeline and its
    bare forest), a time-ordered and a grouped one (with and without their
    splitter), two seeds, 3 rounds of 5-tree forests, BorutaPy on
    one data set where boruta is installed, stability selection on the
    first regime; its rows logged and its rounds
    kept in ``folder`` (a temporary folder), then recomputed from the kept
    rounds as --recompute does (appending the rows that change, none), and
    the page printed, not written."""
    global CACHE
    CACHE = folder
    args.regimes, args.seeds = QUICK["regimes"], QUICK["seeds"]
    args.rounds, args.trees, args.jobs = QUICK["rounds"], QUICK["trees"], 1
    args.boruta_on, args.boruta_seeds = QUICK["regimes"][:1], 1
    args.stability_on = QUICK["regimes"][:1]
    if not args.no_boruta and missing("boruta"):
        skip("BorutaPy", missing("boruta"))
        args.no_boruta = True
    args.log, args.write = str(Path(folder, "rows.jsonl")), True
    run(args)
    logged = read_log([args.log])
    changed = changed_rows(logged, recompute(logged, args.rounds, args.trees))
    append_log(args.log, changed)
    print(f"--recompute from the kept rounds: {len(changed)} rows changed")
    if changed:
        raise SystemExit("rows recomputed from the same rounds differ")
    args.log = None
    report(read_log([Path(folder, "rows.jsonl")]), args, argv, start)


def run(args):
    """Run the jobs the arguments ask for; their rows (also appended to
    --log as they come)."""
    regimes = args.regimes or list(POWER if args.power else REGIMES)
    n_seeds = args.seeds or 60
    seeds = range(100, 100 + n_seeds) if args.power else range(n_seeds)

    def rounds(method):
        """--rounds, or with --auto-rounds what n_rounds="auto" gives
        ``method`` (drop-column: 1)."""
        if not args.auto_rounds or method == "auto":
            return args.rounds
        return round_count("auto", METHODS[method])

    def configs(regime):
        methods = ALL_METHODS if regime in args.all_methods_on else args.methods
        out = [(m, "forest", rounds(m), args.trees) for m in methods]
        if regime in MIXED:  # the Pipeline, and the bare forest's permutation
            out = [(m, "pipeline", args.rounds, args.trees) for m in methods] + out
            if "permutation" not in methods:
                out.append(("permutation", "forest", args.rounds, args.trees))
        if regime in DEPENDENT:  # with the user's splitter, and the default
            out = [(m, "forest+cv", args.rounds, args.trees) for m in methods] + out
        if regime in args.all_methods_on:
            out.append(("permutation", "linear", args.rounds, args.trees))
        if regime in args.hgb_on:
            out.extend((m, "hgb", args.rounds, args.trees) for m in args.hgb_methods)
        if regime in args.boosters_on:  # the method "auto" gives each
            models = [
                m for m in args.boosters if m != "pipeline-hgb" or regime in MIXED
            ]
            out.extend(("auto", m, args.rounds, args.trees) for m in models)
        return out

    boruta_on = set(regimes if args.boruta_on is None else args.boruta_on)
    if args.no_boruta:
        boruta_on = set()
    done = {_configuration_key(row) for row in read_log(args.skip_logged)}
    jobs = plan(
        regimes,
        seeds,
        configs,
        boruta_on,
        args.boruta_seeds,
        done,
        stability=set(args.stability_on),
        trees=args.trees,
    )
    print(f"{len(jobs)} jobs", flush=True)
    rows = []
    for result in Parallel(n_jobs=args.jobs, return_as="generator_unordered")(jobs):
        for row in result:
            rows.append(row)
            short = {k: v for k, v in row.items() if k != "noise_p"}
            print(short, flush=True)
            if args.log:
                append_log(args.log, [row])
    return rows


def _without_notes(argv):
    """The command line without its --note values (the page prints those as
    paragraphs of their own)."""
    kept, skipping = [], False
    for arg in argv:
        if skipping:
            skipping = False
        elif arg == "--note" or arg.startswith("--note="):
            if "--note" not in kept:
                kept += ["--note", "<each paragraph below, one --note each>"]
            skipping = arg == "--note"
        else:
            kept.append(arg)
    return kept


def _record(row):
    """A row as one line of the --log file."""
    return dict(row, noise_p=[float(p) for p in row.get("noise_p", [])])


def report(rows, args, argv, start):
    print(summary_text(summarize(rows)))
    print()
    print(text_diagnosis(diagnose(rows)))
    if args.write:
        command = command_line(
            "bench_calibration.py", _without_notes(argv), pythonpath=True
        )
        text = rst(
            summarize(rows),
            diagnose(rows),
            command,
            time.perf_counter() - start,
            args.note,
        )
        write_page(args.page, text, quick=args.quick)


if __name__ == "__main__":
    main()
