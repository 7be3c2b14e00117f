"""Row and column operations that work alike on numpy, pandas and polars.

The importance functions must hand an estimator data of the type it was
fitted on (a Pipeline with a ColumnTransformer selects columns by name), so
they permute and drop columns without converting the caller's table.
"""

import numpy as np
from sklearn.utils.validation import check_array

from ._compat import safe_indexing


def is_pandas(X):
    return type(X).__module__.partition(".")[0] == "pandas" and hasattr(X, "iloc")


def is_polars(X):
    return type(X).__module__.partition(".")[0] == "polars" and hasattr(X, "columns")


def is_dataframe(X):
    return is_pandas(X) or is_polars(X)


def check_table(X, *, param="X"):
    """Return ``X`` ready for row and column indexing, and its feature names.

    pandas and polars frames are returned as they are (their column names
    become the feature names); anything else is converted with
    :func:`~sklearn.utils.check_array`, allowing NaN and any dtype so that the
    estimator decides what it accepts.
    """
    if is_dataframe(X):
        if X.shape[1] == 0:
            raise ValueError(f"{param} has no columns; pass at least one feature.")
        if X.shape[0] == 0:
            raise ValueError(f"{param} has no rows; pass at least one sample.")
        return X, np.asarray([str(c) for c in X.columns], dtype=object)
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(
            f"{param} is a sparse matrix; importance functions permute and drop "
            "dense columns. Convert it with X.toarray() or pass a dense array."
        )
    X = check_array(X, dtype=None, ensure_all_finite=False, input_name=param)
    return X, np.asarray([f"x{i}" for i in range(X.shape[1])], dtype=object)


def nullable_as_float(X):
    """``X`` with pandas' nullable numeric and boolean columns (``Float64``,
    ``Int64``, ``boolean``, pyarrow-backed numbers, which may hold ``pd.NA``)
    as float64 columns with NaN, in a copy (``X`` itself when there are
    none, or not a pandas frame). scikit-learn's models read a missing
    value as NaN; given such a column they fail or read ``pd.NA`` as an
    object."""
    if not is_pandas(X):
        return X
    import pandas as pd

    types = pd.api.types
    nullable = [
        j
        for j, dtype in enumerate(X.dtypes)
        if types.is_extension_array_dtype(dtype)
        and (types.is_numeric_dtype(dtype) or types.is_bool_dtype(dtype))
    ]
    if not nullable:
        return X
    X = X.copy()
    for j in nullable:
        values = X.iloc[:, j].to_numpy(dtype=np.float64, na_value=np.nan)
        X.isetitem(j, pd.Series(values, index=X.index))
    return X


def take_rows(X, rows):
    """Rows ``rows`` of ``X``, in its own container: a table, an array (such
    as y or sample weights), or None (no values: returned as is). ``rows``
    None means all rows, ``X`` returned as is."""
    if X is None or rows is None:
        return X
    if is_polars(X):
        return X[np.asarray(rows)]
    return safe_indexing(X, rows, axis=0)


def take_columns(X, columns):
    """``X`` with only the columns at positions ``columns`` (in X's order),
    in its own container."""
    return drop_columns(X, np.setdiff1d(np.arange(X.shape[1]), columns))


def drop_columns(X, columns):
    """``X`` without the columns at positions ``columns``."""
    keep = np.setdiff1d(np.arange(X.shape[1]), columns)
    if is_polars(X):
        return X.select([X.columns[i] for i in keep])
    return safe_indexing(X, keep, axis=1)


def hold_constant(X, columns):
    """A copy of ``X`` whose columns ``columns`` all hold one row's values.

    The row is the first one with no missing value in those columns (the
    first row when there is none), so that a text or categorical column holds
    one of its own values and keeps its dtype. Every other column keeps its
    values and its position.
    """
    columns = np.asarray(columns, dtype=np.intp)
    return assign_permuted(
        writable_copy(X),
        X,
        columns,
        np.full(X.shape[0], _complete_row(X, columns), dtype=np.intp),
    )


def _complete_row(X, columns):
    """The first row with no missing value in ``columns``, else 0."""
    if is_polars(X):
        missing = np.zeros(X.shape[0], dtype=bool)
        for c in columns:
            column = X.get_column(X.columns[c])
            missing |= column.is_null().to_numpy()
            if column.dtype.is_float():
                missing |= column.is_nan().fill_null(True).to_numpy()
    elif is_pandas(X):
        missing = X.iloc[:, columns].isna().to_numpy().any(axis=1)
    else:
        block = X[:, columns]
        if block.dtype.kind in "fc":
            missing = np.isnan(block).any(axis=1)
        elif block.dtype == object:
            import pandas as pd

            missing = pd.isna(block).any(axis=1)
        else:
            return 0
    complete = np.flatnonzero(~missing)
    return int(complete[0]) if complete.size else 0


def writable_copy(X):
    """A copy of ``X`` whose columns :func:`assign_permuted` may overwrite."""
    if is_polars(X):
        # polars frames are immutable; assign_permuted builds new ones.
        return X
    return X.copy()


def assign_permuted(X_work, X, columns, permutation):
    """Set ``X_work[:, columns]`` to ``X[permutation, columns]``; return it.

    The same row permutation is applied to every column of ``columns``, which
    keeps the rows of a group of features together.
    """
    if is_polars(X):
        import polars as pl

        order = pl.Series(permutation)
        return X_work.with_columns(
            [X.get_column(X.columns[c]).gather(order) for c in columns]
        )
    if is_pandas(X):
        for c in columns:
            permuted = X.iloc[permutation, c]
            permuted.index = X_work.index
            X_work.isetitem(c, permuted)
        return X_work
    X_work[:, columns] = X[np.ix_(permutation, columns)]
    return X_work


def restore_columns(X_work, X, columns):
    """Undo :func:`assign_permuted` on ``columns``; return the frame."""
    if is_polars(X):
        return X
    if is_pandas(X):
        for c in columns:
            X_work.isetitem(c, X.iloc[:, c])
        return X_work
    X_work[:, columns] = X[:, columns]
    return X_work
