"""Probes that reach the model of a Pipeline.

The selector's probes are new columns of X (``probe_3_city``, a shuffled
copy of ``city``). A Pipeline's preprocessing does not know them: a
ColumnTransformer that lists its columns by name drops them, one that
passes the others through hands the model a raw text column. So in each
round the selector fits, instead of the user's Pipeline, the same steps
with the preprocessing wrapped in :class:`ProbeInputs`: it is fitted on X's
own columns (as the user's Pipeline would be), and it transforms a row into
the model inputs of its own columns followed, for each probe, by the model
inputs its original would give if its values were the probe's: ``T(X with
city replaced by probe_3_city)``, restricted to the inputs ``city`` feeds.
A shadow of ``city`` is then one-hot encoded, scaled or imputed exactly as
``city`` is, with the categories and statistics learnt from ``city``, and
the model sees it as it sees ``city``: the two are exchangeable when
``city`` is noise, which is what the probe test needs.

The refit on the selected columns, and every fit on a subset of the
columns, prunes the user's Pipeline with ``_importance._pipeline.
for_columns``.
"""

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.pipeline import Pipeline

from ..._importance._pipeline import input_sources
from ..._utils._frames import is_dataframe, is_polars, take_columns


def _replaced(X_real, columns, X_probe, probe_columns):
    """X_real with its ``columns`` given the values of ``probe_columns`` of
    X_probe (the table with the probes), under X_real's column names."""
    if is_polars(X_real):
        import polars as pl

        return X_real.with_columns(
            [
                pl.Series(X_real.columns[c], X_probe.get_column(X_probe.columns[p]))
                for c, p in zip(columns, probe_columns)
            ]
        )
    if is_dataframe(X_real):
        out = X_real.copy()
        for c, p in zip(columns, probe_columns):
            out.isetitem(c, X_probe.iloc[:, p].to_numpy())
        return out
    out = np.array(X_real, copy=True)
    out[:, columns] = np.asarray(X_probe)[:, probe_columns]
    return out


def _dense(Z):
    return Z.toarray() if scipy.sparse.issparse(Z) else np.asarray(Z)


#: At most this many rows (a batch of probes' tables) in one stacked
#: transform of :class:`ProbeInputs`.
STACKED_ROWS = 200_000


def _identical(a, b):
    """Whether two outputs are equal, value for value (NaN equal to NaN)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # objects: no NaN test
        return bool(np.array_equal(a, b))


def _stacked(tables):
    """The rows of ``tables`` (of one container and one set of columns), one
    after another."""
    if is_polars(tables[0]):
        import polars as pl

        return pl.concat(tables, how="vertical")
    if is_dataframe(tables[0]):
        import pandas as pd

        return pd.concat(tables, axis=0, ignore_index=True)
    return np.concatenate([np.asarray(t) for t in tables], axis=0)


class ProbeInputs(TransformerMixin, BaseEstimator):
    """The model inputs of X's own columns, then those of each probe.

    Parameters
    ----------
    preprocessing : transformer
        The user's steps before the model (cloned and fitted on X's first
        ``n_features`` columns).
    n_features : int
        X's own columns; the probes follow them.
    probes : list of (ndarray, ndarray)
        For each probe, its column positions and those of the columns it
        stands for (a shadow's original), in the same order.

    Attributes
    ----------
    stacks_ : bool or None
        Whether the probes' tables are transformed as one (their rows
        stacked), which saves a transform per batch of probes: decided on
        the first tables transformed, True where the stacked transform
        equals the transform of each table exactly (the preprocessing
        transforms each row on its own, as scikit-learn's encoders, scalers
        and imputers do); otherwise each table is transformed on its own.
    """

    def __init__(self, preprocessing, n_features, probes):
        self.preprocessing = preprocessing
        self.n_features = n_features
        self.probes = probes

    def fit(self, X, y=None, **fit_params):
        self.fit_transform(X, y, **fit_params)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on X's own columns and transform X. The own columns' inputs
        are the preprocessing's ``fit_transform``, as the user's Pipeline
        computes them in its fit (TargetEncoder cross-fits there, so that
        a noise column's encoding does not learn y from its own rows)."""
        own = take_columns(X, np.arange(self.n_features))
        self.preprocessing_ = clone(self.preprocessing)
        own_inputs = _dense(self.preprocessing_.fit_transform(own, y, **fit_params))
        self._index(own_inputs.shape[1])
        self.n_features_in_ = X.shape[1]
        self.stacks_ = None  # decided on the first tables transformed
        return self._with_probes(own_inputs, own, X)

    def _index(self, n_outputs):
        """The sources of the own inputs, each probe's block, the batches."""
        sources = input_sources(self.preprocessing_, self.n_features)
        if sources is None or len(sources) != n_outputs:
            sources = [frozenset(range(self.n_features))] * n_outputs
        self.own_sources_ = sources
        # the inputs each probe's original feeds: the probe's block
        self.blocks_ = [
            np.array(
                [k for k, inner in enumerate(sources) if inner & set(map(int, orig))],
                dtype=np.intp,
            )
            for _, orig in self.probes
        ]
        self.waves_ = self._waves()

    def _waves(self):
        """The probes in batches that one transform can serve: in a batch,
        no probe replaces a column that another's block reads (so each
        block is the transform of its own probe with every other column as
        it is), whatever the steps mix."""
        waves = []  # (probes, columns replaced, columns read)
        for p, ((_, orig), block) in enumerate(zip(self.probes, self.blocks_)):
            replaced = {int(o) for o in orig}
            read = set().union(*(self.own_sources_[k] for k in block), replaced)
            for members, wave_replaced, wave_read in waves:
                if not (replaced & wave_read or read & wave_replaced):
                    members.append(p)
                    wave_replaced |= replaced
                    wave_read |= read
                    break
            else:
                waves.append(([p], set(replaced), set(read)))
        return [members for members, _, _ in waves]

    def transform(self, X):
        own = take_columns(X, np.arange(self.n_features))
        return self._with_probes(_dense(self.preprocessing_.transform(own)), own, X)

    def _with_probes(self, own_inputs, own, X):
        """The own inputs followed by each probe's block."""
        blocks = [None] * len(self.probes)
        batch = max(1, STACKED_ROWS // max(own.shape[0], 1))
        for start in range(0, len(self.waves_), batch):
            waves = self.waves_[start : start + batch]
            tables = []
            for members in waves:
                orig = np.concatenate([self.probes[p][1] for p in members])
                columns = np.concatenate([self.probes[p][0] for p in members])
                tables.append(_replaced(own, orig, X, columns))
            for members, replaced in zip(waves, self._transformed(tables)):
                for p in members:
                    blocks[p] = replaced[:, self.blocks_[p]]
        return np.hstack([own_inputs] + blocks)

    def _transformed(self, tables):
        """The preprocessing's dense output for each table: one transform of
        their stacked rows where ``stacks_`` (decided, on the first tables,
        by comparing it with a transform of each), else one each."""
        if self.stacks_ is False or len(tables) <= 1:
            return [_dense(self.preprocessing_.transform(t)) for t in tables]
        stacked = _dense(self.preprocessing_.transform(_stacked(tables)))
        parts = np.split(stacked, len(tables))
        if self.stacks_ is None:
            each = [_dense(self.preprocessing_.transform(t)) for t in tables]
            self.stacks_ = all(_identical(a, b) for a, b in zip(parts, each))
            return parts if self.stacks_ else each
        return parts

    def output_sources(self):
        """For each output, the columns of X (with the probes) it may depend
        on: a probe's block depends on the probe's columns in place of its
        original's, and on the other columns its original's inputs read."""
        sources = list(self.own_sources_)
        for (columns, orig), block in zip(self.probes, self.blocks_):
            swap = {int(o): int(c) for o, c in zip(orig, columns)}
            sources += [
                frozenset(swap.get(i, i) for i in self.own_sources_[k]) for k in block
            ]
        return sources


def with_probe_inputs(pipeline, n_features, probes):
    """A clone of ``pipeline`` whose steps before the model are wrapped in
    :class:`ProbeInputs` (the model's step keeps its name, so that fit
    parameters addressed to it still reach it)."""
    preprocessing = Pipeline(clone(pipeline).steps[:-1])
    if len(preprocessing.steps) == 1:
        preprocessing = preprocessing.steps[0][1]
    name, model = pipeline.steps[-1]
    return Pipeline(
        [
            ("probe_inputs", ProbeInputs(preprocessing, n_features, probes)),
            (name, clone(model)),
        ]
    )


def selects_through(estimator):
    """Whether the selector measures ``estimator`` with probes passed
    through its preprocessing: a Pipeline with steps before its model."""
    return isinstance(estimator, Pipeline) and len(estimator.steps) >= 2
