"""The report's input: the CSV file or the demo table, the task, and the
features and target ready to fit, with notes on the columns."""

from pathlib import Path
from typing import NamedTuple

import numpy as np

from ._common import ReportError

#: A numeric target with at most this many distinct values, all of them
#: whole numbers, is treated as class labels.
MAX_CLASSES_OF_NUMERIC_TARGET = 10
#: Rows at least, so that the held-out split has rows of every kind.
MIN_ROWS = 20
#: Columns of a table shown in error messages.
MAX_NAMES_SHOWN = 40
#: Where the demo's data comes from, as the report says it.
DEMO_SOURCE = "scikit-learn's diabetes data (load_diabetes, original units)"


def _require_pandas(purpose):
    try:
        import pandas
    except ImportError:
        raise ReportError(
            f"{purpose} needs pandas, which is not installed; install it with "
            'pip install "sklearn-fimp[pandas]" (or pip install pandas).'
        ) from None
    return pandas


def names_list(names):
    """Column names for a message, quoted, at most MAX_NAMES_SHOWN of them."""
    names = [repr(str(n)) for n in names]
    if len(names) > MAX_NAMES_SHOWN:
        names = names[:MAX_NAMES_SHOWN] + [f"... ({len(names) - MAX_NAMES_SHOWN} more)"]
    return ", ".join(names)


def load_table(path, target, sep, demo):
    """``(frame, target, source)``: the table to report on, the column to
    predict and where the table comes from."""
    if demo:
        frame, target = demo_table()
        return frame, target, DEMO_SOURCE
    return read_table(path, sep), target, str(path)


def read_table(path, sep):
    """The CSV file as a DataFrame, or a ReportError saying why not."""
    pd = _require_pandas("Reading a CSV file")
    path = Path(path)
    if not path.exists():
        raise ReportError(f"{str(path)!r}: no such file.")
    if path.is_dir():
        raise ReportError(f"{str(path)!r} is a directory; pass a CSV file.")
    try:
        return pd.read_csv(path, sep=sep)
    except pd.errors.EmptyDataError:
        raise ReportError(
            f"{str(path)!r} is empty; pass a CSV file with a header."
        ) from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ReportError(
            f"{str(path)!r} could not be read as CSV ({message}); check the file, "
            "or its separator with --sep."
        ) from None
    except OSError as exc:
        raise ReportError(f"{str(path)!r} could not be read: {exc.strerror}.") from None


def demo_table():
    """scikit-learn's diabetes data in its original units, and its target."""
    _require_pandas("The demo")
    from sklearn.datasets import load_diabetes

    frame = load_diabetes(as_frame=True, scaled=False).frame
    frame = frame.rename(columns={"target": "progression"})
    return frame, "progression"


def is_numeric(series):
    """Whether a column holds numbers (booleans do not count)."""
    import pandas as pd

    return pd.api.types.is_numeric_dtype(series.dtype) and not (
        pd.api.types.is_bool_dtype(series.dtype)
    )


def choose_task(y, task):
    """ "classification" or "regression" for the target column ``y``.

    Auto: a target that is not numeric (strings, categories, booleans), or
    that holds at most 10 distinct values that are all whole numbers, is
    made of class labels; any other numeric target is a quantity.
    """
    numeric = is_numeric(y)
    if task == "regression":
        if not numeric:
            raise ReportError(
                f"--task regression needs a numeric target; column {str(y.name)!r} "
                f"has dtype {y.dtype}. Use --task classification or auto."
            )
        return task
    if task == "classification":
        return task
    if not numeric:
        return "classification"
    values = y.to_numpy(dtype=float)
    whole = np.all(np.isfinite(values)) and np.all(values == np.round(values))
    few = y.nunique() <= MAX_CLASSES_OF_NUMERIC_TARGET
    return "classification" if whole and few else "regression"


class PreparedData(NamedTuple):
    """The table split into features and target, with notes for the report."""

    X: object
    y: np.ndarray
    task: str
    notes: list
    categorical: list


def prepare_data(frame, target, task, max_rows, random_state):
    """Check the table and the target; features and target, ready to fit.

    The caller's ``frame`` is not modified.
    """
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    _check_target_column(frame, target)
    notes = []
    missing = frame[target].isna().to_numpy()
    if missing.all():
        raise ReportError(f"the target column {target!r} has no values.")
    if missing.any():
        notes.append(
            f"{int(missing.sum())} rows without a value of the target were left out."
        )
        frame = frame.loc[~missing]
    if len(frame) > max_rows:
        notes.append(
            f"A random sample of {max_rows} of the {len(frame)} rows was used "
            "(--max-rows)."
        )
        frame = frame.sample(n=max_rows, random_state=random_state)
    frame = frame.reset_index(drop=True)
    y = frame[target]
    n_values = y.nunique()
    if n_values < 2:
        raise ReportError(
            f"the target column {target!r} has a single value "
            f"({y.iloc[0]!r}); there is nothing to predict. Choose another "
            "--target."
        )
    if len(frame) < MIN_ROWS:
        raise ReportError(
            f"the file has {len(frame)} rows with a target value; the report "
            f"needs at least {MIN_ROWS} to fit and to score on held-out rows."
        )
    task = choose_task(y, task)
    X = frame.drop(columns=[target])
    categorical = [c for c in X.columns if not is_numeric(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    infinite = [c for c in numeric if np.isinf(X[c].to_numpy(dtype=float)).any()]
    for c in infinite:
        X[c] = X[c].replace([np.inf, -np.inf], np.nan)
    if infinite:
        notes.append(
            f"Infinite values in {names_list(infinite)} were treated as missing."
        )
    notes.extend(_column_notes(X, categorical))
    if task == "classification":
        y = y.astype(str) if not is_numeric(y) else y
        notes.extend(_class_notes(y))
    return PreparedData(X, y.to_numpy(), task, notes, categorical)


def _check_target_column(frame, target):
    if target is None:
        raise ReportError(
            "--target is required with a data file; name the column to predict "
            f"(the columns are {names_list(frame.columns)})."
        )
    if target not in frame.columns:
        raise ReportError(
            f"--target {target!r} is not a column of the file; the columns are "
            f"{names_list(frame.columns)}."
        )
    if frame.shape[1] < 2:
        raise ReportError(
            f"the file has only the column {target!r}; it needs at least one "
            "feature column besides the target."
        )


def _class_notes(y):
    """A note when a class occurs once (the split cannot be stratified)."""
    counts = y.value_counts()
    if counts.min() < 2:
        rare = [str(v) for v in counts.index[counts < 2]]
        return [
            f"Class(es) {names_list(rare)} occur once; the held-out split is "
            "not stratified."
        ]
    return []


def _column_notes(X, categorical):
    """What the reader should know about columns that cannot carry much."""
    empty, constant, identifiers = [], [], []
    for column in X.columns:
        values = X[column]
        n_distinct = values.nunique()
        if values.isna().all():
            empty.append(column)
        elif n_distinct == 1:
            constant.append(column)
        elif column in categorical and n_distinct == values.notna().sum() > 2:
            identifiers.append(column)
    notes = []
    if empty:
        notes.append(f"No values in {names_list(empty)}: nothing to learn from.")
    if constant:
        notes.append(f"One value only in {names_list(constant)}: nothing to learn.")
    if identifiers:
        notes.append(
            f"Every row has its own value in {names_list(identifiers)} (an "
            "identifier?): held-out rows bring values the model never saw, so "
            "these columns cannot help it predict."
        )
    return notes
