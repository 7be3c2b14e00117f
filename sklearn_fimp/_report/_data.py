"""The report's input: the CSV file or the demo table, the task, and the
features and target ready to fit, with notes on the columns."""

from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._utils._targets import target_task
from ._columns import recognise_columns
from ._common import ReportError

#: Rows at least, so that the held-out split has rows of every kind.
MIN_ROWS = 20
#: Columns of a table shown in error messages.
MAX_NAMES_SHOWN = 40
#: Where the demo's data comes from, as the report says it.
DEMO_SOURCE = "scikit-learn's diabetes data (load_diabetes, original units)"
#: Bytes of a file read to guess its separator.
SNIFF_BYTES = 65536


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


class Table(NamedTuple):
    """The table to report on and what reading it found."""

    frame: object
    target: str
    source: str
    sep: object = None
    decimal: str = "."
    notes: list = []


def load_table(path, target, demo, *, sep=None, encoding="utf-8", decimal=None):
    """The table to report on (a :class:`Table`): the frame, the column to
    predict, where the table comes from, the column separator and decimal
    mark used (``decimal=None``: guessed, see :func:`read_table`), and notes
    on what reading it found (duplicate headers, a guessed decimal mark)."""
    if demo:
        frame, target = demo_table()
        return Table(frame, target, DEMO_SOURCE)
    frame, sep, decimal, notes = read_table(
        path, sep=sep, encoding=encoding, decimal=decimal, with_notes=True
    )
    return Table(frame, target, str(path), sep, decimal, notes)


def sniff_separator(path, encoding):
    """The column separator of a CSV file, guessed from its first lines
    among comma, semicolon, tab and pipe; a comma when nothing fits."""
    import csv

    with open(path, encoding=encoding, errors="replace", newline="") as file:
        sample = file.read(SNIFF_BYTES)
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


#: A value written with a decimal comma (and perhaps thousands points):
#: "-73,9425", "1.234,5".
DECIMAL_COMMA = r"[-+]?(\d{1,3}(\.\d{3})+|\d+),\d+"
#: Share of a text column's values that must be written so (or as whole
#: numbers) for the file's decimal mark to be guessed as a comma.
DECIMAL_COMMA_SHARE = 0.95


def guess_decimal(frame, sep):
    """``(decimal, columns)``: "," when the separator is not a comma and a
    text column of ``frame`` (read with ".") holds numbers written with a
    decimal comma, with those columns; else "." and no columns. Under a
    comma separator a decimal comma would split the value, so "." stays."""
    if sep == ",":
        return ".", []
    columns = []
    for column in frame.columns:
        values = frame[column]
        if is_numeric(values) or values.dtype.kind == "b":
            continue
        text = values.dropna().astype(str).str.strip()
        if len(text) == 0:
            continue
        comma = text.str.fullmatch(DECIMAL_COMMA)
        whole = text.str.fullmatch(r"[-+]?\d+")
        if comma.any() and (comma | whole).mean() >= DECIMAL_COMMA_SHARE:
            columns.append(str(column))
    return ("," if columns else "."), columns


def duplicate_headers(path, sep, encoding):
    """``{name: [positions]}`` of the header names the file repeats (pandas
    reads the second ``price`` as ``price.1``), read as pandas reads the
    header (any separator ``read_csv`` takes), before it renames them."""
    import pandas as pd

    header = pd.read_csv(
        path, sep=sep, encoding=encoding, header=None, nrows=1, dtype=str
    )
    positions = {}
    for position, name in enumerate(header.iloc[0].tolist(), start=1):
        if isinstance(name, str):  # an empty name is pandas' "Unnamed: k"
            positions.setdefault(name, []).append(position)
    return {name: where for name, where in positions.items() if len(where) > 1}


def _duplicate_note(name, positions, frame):
    renamed = [str(c) for c in frame.columns[[p - 1 for p in positions[1:]]]]
    return (
        f"The header names {name!r} {len(positions)} times (columns "
        f"{', '.join(map(str, positions))}): the first is read as {name!r}, "
        + ("the second as " if len(renamed) == 1 else "the others as ")
        + f"{', '.join(map(repr, renamed))}. Rename them in the file to say "
        "which is which (--target names the first)."
    )


def read_table(path, *, sep=None, encoding="utf-8", decimal=".", with_notes=False):
    """``(frame, sep)``: the CSV file as a DataFrame and the separator used
    (sniffed when ``sep`` is None), or a ReportError saying why not.

    ``decimal=None`` guesses the decimal mark: a comma when the separator is
    not a comma and a column is written with decimal commas (see
    :func:`guess_decimal`), else a point. With ``with_notes``, returns
    ``(frame, sep, decimal, notes)``: the notes say which decimal mark was
    guessed from which columns and name repeated header names.
    """
    pd = _require_pandas("Reading a CSV file")
    path = Path(path)
    if not path.exists():
        raise ReportError(f"{str(path)!r}: no such file.")
    if path.is_dir():
        raise ReportError(f"{str(path)!r} is a directory; pass a CSV file.")
    notes = []
    try:
        if sep is None:
            sep = sniff_separator(path, encoding)
        frame = pd.read_csv(path, sep=sep, encoding=encoding, decimal=decimal or ".")
        if decimal is None:
            decimal, columns = guess_decimal(frame, sep)
            if columns:
                frame = pd.read_csv(path, sep=sep, encoding=encoding, decimal=",")
                notes.append(
                    f"Decimal commas found in {names_list(columns)} (columns "
                    f"separated by {sep!r}): numbers were read with ',' as the "
                    "decimal mark (--decimal . reads them otherwise)."
                )
        for name, positions in duplicate_headers(path, sep, encoding).items():
            notes.append(_duplicate_note(name, positions, frame))
    except LookupError:
        raise ReportError(
            f"--encoding {encoding!r} is not an encoding Python knows; use e.g. "
            "utf-8, latin-1 or cp1252."
        ) from None
    except pd.errors.EmptyDataError:
        raise ReportError(
            f"{str(path)!r} is empty; pass a CSV file with a header."
        ) from None
    except UnicodeDecodeError as exc:
        raise ReportError(
            f"{str(path)!r} is not {encoding} text (it holds the byte "
            f"0x{exc.object[exc.start]:02x}); name its encoding with --encoding, e.g. "
            "--encoding latin-1 (Western European files from older software) or "
            "--encoding cp1252."
        ) from None
    except (pd.errors.ParserError, ValueError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ReportError(
            f"{str(path)!r} could not be read as CSV ({message}); check the file, "
            f"or its separator with --sep (read with {sep!r})."
        ) from None
    except OSError as exc:
        raise ReportError(f"{str(path)!r} could not be read: {exc.strerror}.") from None
    if with_notes:
        return frame, sep, decimal or ".", notes
    return frame, sep


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

    Auto: ``_utils._targets.target_task``, the rule the selectors' default
    forest follows: a target that is not numeric (strings, categories,
    booleans), or that holds at most ``MAX_CLASSES_OF_NUMERIC_TARGET``
    distinct values that are all whole numbers, is made of class labels;
    any other numeric target is a quantity.
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
    return target_task(y)


class PreparedData(NamedTuple):
    """The table split into features and target, with notes for the report."""

    X: object
    y: np.ndarray
    task: str
    notes: list
    categorical: list
    converted: list = []
    excluded: list = []
    target_summary: object = None
    n_rows_total: int = 0
    target_unit: str = ""


def _target_rows(frame, target, max_rows, random_state, notes):
    """``(frame, n_rows_total)``: the rows of ``frame`` with a value of the
    target (all ``n_rows_total`` of them, or a random sample of
    ``max_rows``), indexed from 0; ``notes`` says what was left out."""
    missing = frame[target].isna().to_numpy()
    if missing.all():
        raise ReportError(f"the target column {target!r} has no values.")
    if missing.any():
        notes.append(
            f"{int(missing.sum())} rows without a value of the target were left out."
        )
        frame = frame.loc[~missing]
    n_rows_total = len(frame)
    if max_rows is not None and len(frame) > max_rows:
        notes.append(
            f"A random sample of {max_rows} of the {len(frame)} rows was used "
            "(--max-rows)."
        )
        frame = frame.sample(n=max_rows, random_state=random_state)
    return frame.reset_index(drop=True), n_rows_total


def _log_target(y, task, target, notes):
    """``log(1 + y)`` for ``--log-target``, of a regression target above
    -1; ``notes`` says so."""
    if task != "regression":
        raise ReportError(
            "--log-target needs a regression target; the target is treated "
            "as classification (use --task regression if it is a quantity)."
        )
    if float(y.min()) <= -1:
        raise ReportError(
            f"--log-target needs target values above -1 (log(1 + y)); the "
            f"smallest value of {target!r} is {float(y.min())}."
        )
    notes.append(
        f"The target is modelled as log(1 + {target}) (--log-target): scores "
        "and importances are on that scale."
    )
    return np.log1p(y.astype(float))


def prepare_data(
    frame,
    target,
    task,
    max_rows,
    random_state,
    *,
    decimal=".",
    log_target=False,
    read_notes=(),
):
    """Check the table and the target; features and target, ready to fit.

    Columns are recognised first (see ``_columns``): numbers written with
    currency or separators are parsed, dates expanded, identifiers and free
    text excluded. ``max_rows=None`` keeps every row. With ``log_target``
    a regression target is replaced by ``log(1 + y)``. ``read_notes``
    (what reading the file found) open the notes. The caller's ``frame`` is
    not modified.
    """
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    _check_target_column(frame, target)
    notes = list(read_notes)
    frame, n_rows_total = _target_rows(frame, target, max_rows, random_state, notes)
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
    columns = recognise_columns(frame.drop(columns=[target]), decimal)
    X = columns.X
    copies = [c for c in X.columns if _copies_target(X[c], y)]
    if copies:
        X = X.drop(columns=copies)
        columns.excluded.extend(
            (
                c,
                "a copy of the target (the same value in every row): the answer "
                "itself, which no model has at prediction time",
            )
            for c in copies
        )
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
    if X.shape[1] == 0:
        raise ReportError(
            "no column is left to predict the target from: "
            + "; ".join(f"{c!r} ({why})" for c, why in columns.excluded)
            + "."
        )
    if task == "classification":
        y = y.astype(str) if not is_numeric(y) else y
        notes.extend(_class_notes(y))
    summary = target_summary(y, task)
    if log_target:
        y = _log_target(y, task, target, notes)
    return PreparedData(
        X,
        y.to_numpy(),
        task,
        notes,
        categorical,
        columns.converted,
        columns.excluded,
        summary,
        n_rows_total,
        f"log(1 + {target})" if log_target else target,
    )


def target_summary(y, task):
    """What the target looks like: class shares, or quantiles and skewness."""
    from sklearn.utils import Bunch

    if task == "classification":
        shares = y.value_counts(normalize=True)
        return Bunch(
            task=task,
            classes=[(str(k), float(v)) for k, v in shares.items()],
            imbalanced=bool(shares.iloc[0] >= 0.6 or shares.iloc[-1] < 0.1),
        )
    values = y.to_numpy(dtype=float)
    quantiles = np.quantile(values, [0, 0.01, 0.25, 0.5, 0.75, 0.99, 1])
    skewness = float(y.astype(float).skew())
    return Bunch(
        task=task,
        quantiles=dict(
            zip(
                ("min", "1%", "25%", "median", "75%", "99%", "max"),
                map(float, quantiles),
            )
        ),
        mean=float(values.mean()),
        skewness=skewness,
        skewed=bool(abs(skewness) > 2 and quantiles[0] > -1),
    )


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


def _copies_target(column, y):
    """Whether ``column`` holds the target's value in every row (a repeated
    header, a column exported twice): numbers equal as numbers, anything
    else as text; missing values must be missing in both."""
    missing = column.isna().to_numpy()
    if not np.array_equal(missing, y.isna().to_numpy()):
        return False
    if is_numeric(column) and is_numeric(y):
        values = column.to_numpy(dtype=float)[~missing]
        return bool(np.array_equal(values, y.to_numpy(dtype=float)[~missing]))
    text = column[~missing].astype(str).str.strip().to_numpy()
    return bool(np.array_equal(text, y[~missing].astype(str).str.strip().to_numpy()))
