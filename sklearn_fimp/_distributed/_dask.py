"""Dask: the rows stay in the partitions of a Dask DataFrame or Array; the
tasks run on whatever scheduler is active (a ``distributed`` Client's
cluster, or the local threads), and only the partitions' sums come back."""

import numpy as np

from ._partition import (
    LABEL,
    PARTITION_BYTES,
    REPEAT,
    TARGET,
    WEIGHT,
    exchanged_partitions,
    feature_column,
    partition_sums,
    partition_totals,
    send_rows,
    sent_row_bytes,
)


def _send_piece(part, start, stop, first_id, permutation, n_repeats, n_features):
    """:func:`send_rows` of rows ``start:stop`` of a partition."""
    return send_rows(
        part.iloc[start:stop], first_id + start, permutation, n_repeats, n_features
    )


def is_dask_collection(X):
    """Whether X is a Dask DataFrame or Array (without importing Dask)."""
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


class DaskTable:
    """The feature columns, the target and the weights of a Dask DataFrame
    or Array, renamed for the partitions (see ``_partition.py``).

    Parameters
    ----------
    X : dask DataFrame or Array
    y : str, dask Series or Array
        The target: a column of X, or a collection with X's partitions.
    sample_weight : str, dask Series or Array, or None
    features : list of str or None
        X's feature columns (None: every column but y and the weights).
    """

    engine = "dask"

    def __init__(self, X, y, sample_weight, features):
        import dask.array as da

        try:
            import dask.dataframe as dd
        except ImportError as error:
            raise ImportError(
                "distributed_permutation_importance moves the rows of Dask data "
                "(a DataFrame or an Array) through dask.dataframe, which failed "
                f"to import ({error}). Install the dask extra, which brings "
                "pandas and pyarrow: pip install 'sklearn-fimp[dask]'."
            ) from error

        if isinstance(X, da.Array):
            if X.ndim != 2:
                raise ValueError(f"X must be 2-dimensional; got {X.ndim} dimensions.")
            if features is not None:
                raise ValueError(
                    "features= names columns of a DataFrame; X is a Dask Array, "
                    "whose columns are all features."
                )
            self.feature_names = np.array([f"x{j}" for j in range(X.shape[1])])
            self.named = False
            X = X.rechunk({1: -1})
            y = self._array(y, X, "y")
            weight = (
                da.ones(X.shape[0], chunks=X.chunks[0])
                if sample_weight is None
                else self._array(sample_weight, X, "sample_weight")
            )
            stacked = da.concatenate(
                [X.astype(np.float64), y[:, None], weight[:, None]], axis=1
            )
            names = [feature_column(j) for j in range(X.shape[1])] + [LABEL, WEIGHT]
            self.frame = dd.from_dask_array(stacked, columns=names)
        elif isinstance(X, dd.DataFrame):
            reserved = [c for c in (y, sample_weight) if isinstance(c, str)]
            for name in reserved:
                if name not in X.columns:
                    raise ValueError(f"{name!r} is not a column of X.")
            if features is None:
                features = [c for c in X.columns if c not in reserved]
            missing = [c for c in features if c not in X.columns]
            if missing:
                raise ValueError(f"features names columns X does not have: {missing}")
            self.feature_names = np.asarray([str(c) for c in features], dtype=object)
            self.named = True
            frame = X[list(features)].astype(np.float64)
            frame.columns = [feature_column(j) for j in range(len(features))]
            frame[LABEL] = X[y] if isinstance(y, str) else y
            frame[WEIGHT] = (
                1.0
                if sample_weight is None
                else X[sample_weight]
                if isinstance(sample_weight, str)
                else sample_weight
            )
            frame[WEIGHT] = frame[WEIGHT].astype(np.float64)
            self.frame = frame
        else:
            raise TypeError(
                f"X is a {type(X).__name__}; a distributed permutation importance "
                "on Dask takes a dask.dataframe.DataFrame or a dask.array.Array."
            )
        self.n_features = len(self.feature_names)
        self.n_partitions = self.frame.npartitions

    @staticmethod
    def _array(values, X, name):
        import dask.array as da

        if not isinstance(values, da.Array) or values.ndim != 1:
            raise TypeError(
                f"{name} must be a 1-dimensional Dask Array with X's rows when "
                f"X is a Dask Array; got {type(values).__name__}."
            )
        if values.shape[0] != X.shape[0]:
            raise ValueError(f"{name} has {values.shape[0]} rows and X {X.shape[0]}.")
        return values.rechunk((X.chunks[0],)).astype(np.float64)

    def totals(self, score):
        """Each partition's :func:`partition_totals`, one row per partition
        in order."""
        import dask

        parts = self.frame.to_delayed()
        return np.vstack(
            dask.compute(*[dask.delayed(partition_totals)(p, score) for p in parts])
        )

    def sums(self, payload, permutation, groups, n_repeats, score, first_ids, lengths):
        """The partitions' :func:`partition_sums`, added."""
        import dask
        import dask.dataframe as dd
        import pandas as pd

        columns = [feature_column(j) for j in range(self.n_features)]
        meta = pd.DataFrame(
            {
                TARGET: pd.Series(dtype=np.int64),
                REPEAT: pd.Series(dtype=np.int32),
                **{c: pd.Series(dtype=np.float64) for c in columns},
                LABEL: pd.Series(dtype=self.frame[LABEL].dtype),
                WEIGHT: pd.Series(dtype=np.float64),
            }
        )
        # each partition is sent in pieces of PARTITION_BYTES of sent rows,
        # so that a worker holds one piece's copies, not a whole partition's
        piece_rows = max(
            1, PARTITION_BYTES // sent_row_bytes(n_repeats, self.n_features)
        )
        pieces = []
        for part, first, length in zip(
            self.frame.to_delayed(), first_ids, lengths, strict=True
        ):
            for start in range(0, max(int(length), 1), piece_rows):
                pieces.append(
                    dask.delayed(_send_piece)(
                        part,
                        start,
                        start + piece_rows,
                        int(first),
                        permutation,
                        n_repeats,
                        self.n_features,
                    )
                )
        sent = dd.from_delayed(pieces, meta=meta, verify_meta=False)
        n_rows = int(np.sum(lengths))
        exchanged = sent.shuffle(
            on=TARGET,
            npartitions=exchanged_partitions(
                n_rows, n_repeats, self.n_features, self.n_partitions
            ),
        )
        model = dask.delayed(payload, traverse=False)
        results = dask.compute(
            *[
                dask.delayed(partition_sums)(
                    part, model, groups, n_repeats, score, self.n_features
                )
                for part in exchanged.to_delayed()
            ]
        )
        return np.sum(results, axis=0)
