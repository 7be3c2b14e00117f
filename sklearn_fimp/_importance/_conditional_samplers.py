"""The samplers of conditional permutation importance: one model per column,
fitted once on the columns outside its group, whose draws replace the column
in every repeat (``replace_columns`` puts them into X)."""

import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.preprocessing import StandardScaler

from .._utils._frames import is_pandas, is_polars
from .._utils._random import MAX_SEED
from ._dependence import CLASSIFICATION, CONSTANT

SAMPLERS = ("forest", "linear")

#: Out-of-bag trees the forest sampler's prediction of a row averages, about:
#: what the conditional mean needs.
SAMPLER_OOB_TREES = 17
#: Trees of the forest sampler, at most: on up to 2,000 rows a row is out of
#: bag for about a third of the trees, and 47 give it 17.
SAMPLER_N_ESTIMATORS = 50
#: Rows each tree of the forest sampler is grown on (at most): the
#: conditional mean of a column is smooth enough that a few thousand rows
#: per tree estimate it, and every other row is then out of bag for the tree.
SAMPLER_MAX_ROWS_PER_TREE = 2000
#: Rows of the forest sampler's leaves: smoothing that keeps the out-of-bag
#: residuals of an unpredictable column close to its own spread.
SAMPLER_MIN_SAMPLES_LEAF = 5


class _ColumnSampler:
    """Draws of one column given the columns outside its group.

    For a numeric column: ``mean`` (its prediction from the other columns,
    out of bag for the forest sampler, so that no row's own value enters its
    prediction) and ``residuals`` (the column minus ``mean``); a draw is
    ``mean + residuals[permutation]``. For a categorical or few-valued
    column: ``proba`` (predicted probabilities of ``values``); a draw picks,
    in each row, the value whose cumulative probability first exceeds a
    uniform number. A column the others do not predict: ``column`` (its own
    values); a draw is ``column[permutation]``.
    """

    def __init__(
        self,
        mean=None,
        residuals=None,
        proba=None,
        values=None,
        column=None,
        score=None,
    ):
        self.mean = mean
        self.residuals = residuals
        self.proba = proba
        self.values = values
        self.column = column
        self.score = score

    @property
    def categorical(self):
        return self.proba is not None

    def take(self, rows):
        """The sampler of the rows ``rows`` of those it was fitted on: each
        row's prediction is out of bag (no row's own value entered it), so
        a subset of rows is sampled as a model fitted on all of them would
        sample it, the residuals permuted among the subset's rows."""
        return _ColumnSampler(
            mean=None if self.mean is None else self.mean[rows],
            residuals=None if self.residuals is None else self.residuals[rows],
            proba=None if self.proba is None else self.proba[rows],
            values=self.values,
            column=None if self.column is None else self.column[rows],
            score=self.score,
        )

    def draw(self, permutation, uniform):
        if self.column is not None:
            return self.column[permutation]
        if not self.categorical:
            return self.mean + self.residuals[permutation]
        cumulative = np.cumsum(self.proba, axis=1)
        cumulative[:, -1] = np.inf
        picked = (uniform[:, None] >= cumulative).sum(axis=1)
        return self.values[picked]


def sampler_n_estimators(n_rows):
    """Trees of the forest sampler on ``n_rows`` rows: enough that each row
    is out of bag for about ``SAMPLER_OOB_TREES`` of them, at most
    ``SAMPLER_N_ESTIMATORS``.

    A tree grown on m of n rows drawn with replacement leaves a row out with
    probability (1 - 1/n)^m: about 0.37 while m = n (up to
    ``SAMPLER_MAX_ROWS_PER_TREE`` rows: 47 trees), 0.90 for 2,000 of 20,000
    rows (19 trees). Each row's out-of-bag prediction then averages as many
    trees whatever the number of rows, and the forest costs less where rows
    are many.
    """
    m = min(n_rows, SAMPLER_MAX_ROWS_PER_TREE)
    out_of_bag = (1.0 - 1.0 / n_rows) ** m if n_rows > 1 else 0.0
    if out_of_bag <= 0:
        return SAMPLER_N_ESTIMATORS
    return int(min(SAMPLER_N_ESTIMATORS, np.ceil(SAMPLER_OOB_TREES / out_of_bag)))


def _sampler_model(sampler, kind, seed, n_rows, n_jobs):
    if sampler == "linear":
        if kind == CLASSIFICATION:
            return LogisticRegression(max_iter=1000)
        return RidgeCV(alphas=np.logspace(-3, 3, 13))
    forest = RandomForestClassifier if kind == CLASSIFICATION else RandomForestRegressor
    return forest(
        n_estimators=sampler_n_estimators(n_rows),
        min_samples_leaf=SAMPLER_MIN_SAMPLES_LEAF,
        max_features=1.0,
        max_samples=min(n_rows, SAMPLER_MAX_ROWS_PER_TREE),
        oob_score=True,
        n_jobs=n_jobs,
        random_state=seed,
    )


def _raw_column(X, c):
    if is_pandas(X):
        return X.iloc[:, c].to_numpy(dtype=object)
    if is_polars(X):
        return X.get_column(X.columns[c]).to_numpy().astype(object)
    return X[:, c]


def fit_column_sampler(X, codes, inputs, c, kind, sampler, seed, n_jobs):
    """Fit the model of column ``c`` of ``X`` from ``inputs`` (the encoded
    columns outside its group); ``codes`` is the column encoded."""
    n_rows = codes.shape[0]
    model = _sampler_model(sampler, kind, seed, n_rows, n_jobs)
    if sampler == "linear":
        inputs = StandardScaler().fit_transform(inputs)
    if kind == CLASSIFICATION:
        levels, first_row, target = np.unique(
            codes, return_index=True, return_inverse=True
        )
        model.fit(inputs, target)
        if sampler == "forest":
            proba = _complete_oob(model.oob_decision_function_, model, inputs)
            score_ = float(model.oob_score_)
        else:
            proba = _complete_oob(model.predict_proba(inputs), model, inputs)
            score_ = float(model.score(inputs, target))
        indicators = np.eye(len(levels))[target]
        if not _skill(indicators, proba) > 0:
            return _marginal_sampler(X, c, score_)
        if sampler == "forest":
            proba = _calibrated(indicators, proba)
        values = np.asarray(_raw_column(X, c))[first_row]
        return _ColumnSampler(proba=proba, values=values, score=score_)
    model.fit(inputs, codes)
    if sampler == "forest":
        mean = _complete_oob(model.oob_prediction_, model, inputs)
        score_ = float(model.oob_score_)
    else:
        mean = model.predict(inputs)
        score_ = float(model.score(inputs, codes))
    if not score_ > 0:
        # the other columns do not predict this one: its conditional
        # distribution is its marginal, drawn by plain permutation (the
        # noise of an uninformative model would widen the draws)
        return _marginal_sampler(X, c, score_)
    if sampler == "forest":
        mean = _calibrated(codes, mean)
    return _ColumnSampler(mean=mean, residuals=codes - mean, score=score_)


def _skill(truth, prediction):
    """1 - the squared error of ``prediction`` over that of the column's
    mean: R² for a numeric column, the Brier skill score for the indicators
    of a categorical one (both out of bag for the forest sampler)."""
    baseline = np.sum((truth - truth.mean(axis=0)) ** 2)
    if baseline == 0:
        return 0.0
    return 1.0 - np.sum((truth - prediction) ** 2) / baseline


def _calibrated(truth, prediction):
    """The out-of-bag prediction shrunk towards the column's mean by the
    least-squares slope of the column on it.

    An out-of-bag prediction is the conditional mean plus the forest's
    estimation noise, which widens both the prediction and the residuals:
    a draw ``prediction + permuted residual`` has about the column's
    variance plus twice the noise's, and asks the model about rows more
    extreme than the data. Along the least-squares line the residuals are
    uncorrelated with the prediction, so a draw has the column's variance;
    the slope is below 1 as much as the prediction is noise. For the
    indicators of a categorical column (``truth`` and ``prediction`` of
    shape (n_rows, n_levels)) one slope, at most 1, mixes the predicted
    probabilities with the column's frequencies.
    """
    centre = truth.mean(axis=0)
    if truth.ndim == 1:
        spread = prediction - prediction.mean()
        slope = np.dot(spread, truth - centre) / max(np.dot(spread, spread), _TINY)
        return centre + max(slope, 0.0) * spread
    spread = prediction - centre
    slope = np.sum(spread * (truth - centre)) / max(np.sum(spread**2), _TINY)
    return centre + float(np.clip(slope, 0.0, 1.0)) * spread


_TINY = np.finfo(np.float64).tiny


def _marginal_sampler(X, c, score_):
    """The draw of a column the other columns do not predict: a permutation
    of the column, its conditional distribution (an uninformative model's
    noise would tie the draws to the other columns at random)."""
    return _ColumnSampler(column=np.asarray(_raw_column(X, c)), score=score_)


def _complete_oob(outputs, model, inputs):
    """Out-of-bag outputs, with the model's prediction for the (rare) rows
    no tree left out of its bag."""
    outputs = np.array(outputs, dtype=np.float64)
    missing = np.isnan(outputs).reshape(outputs.shape[0], -1).any(axis=1)
    if missing.any():
        predict = model.predict_proba if outputs.ndim == 2 else model.predict
        outputs[missing] = predict(inputs[missing])
    return outputs


def _constant_sampler(X, c, n_rows):
    """A constant column's draw: the column itself."""
    values = np.asarray(_raw_column(X, c))[:1]
    return _ColumnSampler(proba=np.ones((n_rows, 1)), values=values, score=0.0)


def fit_group_samplers(X, encoded, kinds, columns, sampler, seed, n_jobs, unread=()):
    """One sampler per column of a group, each fitted on the columns outside
    the group and outside ``unread``."""
    outside = np.setdiff1d(
        np.arange(encoded.shape[1]), np.concatenate([columns, unread])
    )
    inputs = encoded[:, outside]
    if inputs.shape[1] == 0:
        inputs = np.zeros((encoded.shape[0], 1))
    seeds = np.random.RandomState(seed).randint(MAX_SEED + 1, size=len(columns))
    return [
        fit_column_sampler(
            X, encoded[:, c], inputs, c, kinds[c], sampler, int(s), n_jobs
        )
        for c, s in zip(columns, seeds)
    ]


def fit_samplers(X, encoded, kinds, groups, sampler, seed, n_jobs, probe_groups=0):
    """The samplers of every group, one per column in the group's order:
    those of its varying columns fitted on the columns outside the group
    (:func:`fit_group_samplers`, one seed per group drawn from ``seed``), a
    constant column's the column itself.

    The last ``probe_groups`` groups are probes, independent of every other
    column by construction (a selector's shuffled copies): no sampler reads
    them, since a column's distribution given the others and such probes is
    its distribution given the others alone, and a model that reads them
    only costs more to fit."""
    n_rows = X.shape[0]
    probes = [
        np.asarray(g, dtype=np.intp) for g in groups[len(groups) - probe_groups :]
    ]
    unread = np.concatenate(probes) if probes else np.empty(0, dtype=np.intp)
    group_seeds = np.random.RandomState(seed).randint(MAX_SEED + 1, size=len(groups))
    samplers = []
    for columns, group_seed in zip(groups, group_seeds):
        varying = [c for c in columns if kinds[c] != CONSTANT]
        fitted = dict(
            zip(
                varying,
                fit_group_samplers(
                    X,
                    encoded,
                    kinds,
                    varying,
                    sampler,
                    int(group_seed),
                    n_jobs,
                    unread,
                ),
            )
        )
        samplers.append(
            [
                fitted[c] if c in fitted else _constant_sampler(X, c, n_rows)
                for c in columns
            ]
        )
    return samplers


def samplers_of_rows(samplers, rows):
    """Every group's samplers (as :func:`fit_samplers` returns them) taken
    to the rows ``rows`` (None: all of them)."""
    if rows is None:
        return samplers
    return [[sampler.take(rows) for sampler in group] for group in samplers]


# ----------------------------------------------------------------------------
# Draws put into X


def _as_column_dtype(values, dtype):
    """Draws in a column's own dtype: numeric draws of an integer column are
    rounded to the nearest integer (the model never saw fractions there)."""
    dtype = np.dtype(dtype) if isinstance(dtype, np.dtype) else None
    if dtype is not None and dtype.kind in "iub" and values.dtype.kind == "f":
        return np.rint(values).astype(dtype)
    return values


def replace_columns(X_work, X, columns, values):
    """Set the columns ``columns`` of ``X_work`` (a copy of ``X``) to
    ``values`` (one array per column); return it."""
    if is_polars(X):
        import polars as pl

        replaced = []
        for c, v in zip(columns, values):
            name = X.columns[c]
            dtype = X.schema[name]
            if dtype.is_integer() and v.dtype.kind == "f":
                v = np.rint(v)
            if v.dtype == object:
                v = v.tolist()
            replaced.append(pl.Series(name, v).cast(dtype))
        return X_work.with_columns(replaced)
    if is_pandas(X):
        import pandas as pd

        for c, v in zip(columns, values):
            dtype = X.dtypes.iloc[c]
            v = _as_column_dtype(v, dtype)
            X_work.isetitem(c, pd.Series(v, index=X_work.index, dtype=dtype))
        return X_work
    for c, v in zip(columns, values):
        X_work[:, c] = _as_column_dtype(v, X.dtype)
    return X_work
