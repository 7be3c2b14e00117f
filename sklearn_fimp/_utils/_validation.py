"""Input checks shared by the importance functions."""

import functools
import inspect
import numbers
import re

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_array, check_is_fitted

from ._compat import check_columns_as_fitted, check_sample_weight
from ._frames import check_table, is_dataframe, is_pandas, is_polars

#: Columns named in one error message; the rest are counted.
MAX_NAMED_COLUMNS = 5


def check_inputs(estimator, X, y, sample_weight=None, *, fitted=True):
    """Validate the arguments of an importance function.

    Returns ``X`` (a numpy array, or the caller's pandas/polars frame), the
    feature names, ``y`` as an array (None when y is None) and
    ``sample_weight`` as a float array or None. With ``fitted``, X and y are
    also checked against the model's fit (``check_fitted_inputs``). Nothing
    the caller passed is modified.
    """
    if fitted:
        check_is_fitted(estimator)
    X, feature_names = check_table(X)
    if y is not None:
        y = check_array(
            y, ensure_2d=False, dtype=None, ensure_all_finite=False, input_name="y"
        )
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        check_finite_target(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"X has {X.shape[0]} rows but y has {y.shape[0]}; pass one "
                "target value per row of X."
            )
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X)
    if fitted:
        check_fitted_inputs(estimator, X, y)
    return X, feature_names, y, sample_weight


def check_fitted_inputs(estimator, X, y=None):
    """Check rows given with a fitted model against its fit: X's columns as
    its ``predict`` checks them (``check_fitted_columns``), and y's labels
    against a classifier's classes (``check_fitted_labels``; y None: not
    checked). For every function and selector path that reads a fitted
    model, whether or not it calls the model's ``predict``."""
    check_fitted_columns(estimator, X)
    if y is not None:
        check_fitted_labels(estimator, y)


def check_fitted_columns(estimator, X):
    """X's columns against those a fitted ``estimator`` (a Pipeline: its
    first step's) was fitted on, as scikit-learn's ``predict`` checks them:
    the same feature names in the same order when both have names (a
    warning when only one has), and ``n_features_in_`` columns.
    scikit-learn's error, with what to pass instead. A model that records
    neither (no ``n_features_in_``) is not checked."""
    if not hasattr(estimator, "n_features_in_"):
        return
    try:
        check_columns_as_fitted(estimator, X)
    except ValueError as exc:
        model = f"estimator={type(estimator).__name__}(...)"
        n_columns = estimator.n_features_in_
        names = getattr(estimator, "feature_names_in_", None)
        if names is not None and is_dataframe(X):
            listed = [str(name) for name in names[:MAX_NAMED_COLUMNS]]
            more = len(names) - MAX_NAMED_COLUMNS
            listed = ", ".join(repr(n) for n in listed) + (
                f" and {more} more" if more > 0 else ""
            )
            select = (
                "X.select(list(estimator.feature_names_in_))"
                if is_polars(X)
                else "X[estimator.feature_names_in_]"
            )
            fix = (
                f"X must hold the {n_columns} columns {model} was fitted on "
                f"({listed}), in the order of fit (the importances are read "
                "by each column's position at fit, even where a "
                f"ColumnTransformer's predict would accept them reordered): "
                f"{select} selects and orders them."
            )
        else:
            fix = (
                f"X must hold all {n_columns} columns {model} was fitted on, "
                "in the order of fit, as its predict requires: pass the rows "
                f"with all {n_columns} columns, in that order."
            )
        raise ValueError(f"{str(exc).rstrip()}\n{fix}") from exc


def _label_kind(values):
    """ "string", "number" or "other": the kind of the labels ``values`` (a
    set of them; an empty set is "other"); several kinds give "mixed"."""
    kinds = set()
    for value in values:
        if isinstance(value, (str, np.str_, bytes)):
            kinds.add("string")
        elif isinstance(value, (numbers.Number, np.number, np.bool_)):
            kinds.add("number")
        else:
            kinds.add("other")
    if len(kinds) == 1:
        return kinds.pop()
    return "mixed" if {"string", "number"} <= kinds else "other"


def _shown(labels):
    """Up to ``MAX_NAMED_COLUMNS`` labels as a list literal, sorted when they
    sort."""
    try:
        labels = sorted(labels)
    except TypeError:
        labels = sorted(labels, key=str)
    shown = repr(labels[:MAX_NAMED_COLUMNS])
    more = len(labels) - MAX_NAMED_COLUMNS
    return shown + (f" and {more} more" if more > 0 else "")


_KIND_NAMES = {
    "string": "strings",
    "number": "numbers",
    "mixed": "strings and numbers",
    "other": "other values",
}


def check_fitted_labels(estimator, y):
    """A fitted classifier's ``classes_`` (per output: a list of them)
    against y's labels: labels of another kind (strings and numbers) or
    none of which is a class would count every prediction wrong and give
    every feature an importance of 0, as scikit-learn's scorers would raise
    "Mix of label input types". A ValueError naming y's labels, the classes
    and the fix. A regressor, a model without ``classes_`` and a target
    whose shape does not follow the classes, and a y of continuous values
    (not labels), are not checked."""
    if not is_classifier(estimator):
        return
    values = np.asarray(y)
    if values.dtype.kind == "f" and np.any(values != np.round(values)):
        # not labels: a model whose predict gives raw values (a plain
        # CatBoost model with a classification loss) scored as a regressor
        return
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        return
    y = np.asarray(y)
    if isinstance(classes, list):  # one array of classes per output
        if y.ndim != 2 or y.shape[1] != len(classes):
            return
        columns = [(y[:, k], classes[k], k) for k in range(len(classes))]
    else:
        if y.ndim != 1:
            return
        columns = [(y, classes, None)]
    model = f"estimator={type(estimator).__name__}(...)"
    for labels, fitted, column in columns:
        try:
            seen = set(np.asarray(labels).tolist())
            known = set(np.asarray(fitted).tolist())
        except TypeError:  # unhashable labels: left to the model
            continue
        kind, fitted_kind = _label_kind(seen), _label_kind(known)
        kinds = {kind, fitted_kind}
        if "mixed" in kinds or kinds == {"string", "number"}:
            reason = (
                "strings and numbers never match, so every prediction would "
                "count as wrong and every importance would be 0 (scikit-learn's "
                "scorers raise 'Mix of label input types (string and number)')"
            )
        elif "other" not in kinds and not seen & known:
            reason = (
                "none of them is among its classes, so every prediction would "
                "count as wrong and every importance would be 0"
            )
        else:
            continue
        kind, fitted_kind = _KIND_NAMES[kind], _KIND_NAMES[fitted_kind]
        where = "" if column is None else f" in column {column}"
        for_column = "" if column is None else " for that column"
        raise ValueError(
            f"y holds the labels {_shown(seen)}{where} ({kind}) and {model} was "
            f"fitted on the classes {_shown(known)}{for_column} ({fitted_kind}): "
            f"{reason}. Pass y with the labels the model was fitted on, encoded "
            "as they were for its fit (e.g. with the same LabelEncoder), or a "
            "model fitted on these labels."
        )


def check_finite_target(y):
    """Reject NaN and infinity in a numeric target, and missing labels (None
    or NaN) among a target's strings, naming the first row: no model is
    scored or fitted on a missing target."""
    if y.dtype.kind == "O":
        values = y.reshape(len(y), -1)
        missing = np.array(
            [
                any(v is None or (isinstance(v, float) and v != v) for v in row)
                for row in values
            ],
            dtype=bool,
        )
        if missing.any():
            row = int(np.argmax(missing))
            raise ValueError(
                f"y has {int(missing.sum())} row(s) with a missing label (None or "
                f"NaN among its labels), e.g. at row {row}; a missing label is "
                "no class. Drop those rows from X and y (e.g. keep = "
                "pd.notna(y); X[keep], y[keep]) or fill them with a label of "
                "their own."
            )
        return
    if y.dtype.kind not in "fc":
        return
    bad = ~np.isfinite(y.reshape(len(y), -1)).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        value = y[row] if y.ndim == 1 else y[row].tolist()
        raise ValueError(
            f"y has {int(bad.sum())} row(s) with a missing or infinite target, "
            f"e.g. {value} at row {row}; the target must be finite. Drop those "
            "rows from X and y (e.g. keep = np.isfinite(y); X[keep], y[keep])."
        )


# ----------------------------------------------------------------------------
# Errors that name the offending columns


def check_unique_columns(X, *, param="X"):
    """Reject a DataFrame whose column names (as strings) repeat: feature
    names, groups and ``transform`` identify columns by name."""
    if not is_pandas(X) or not hasattr(X, "columns"):
        return
    names = [str(c) for c in X.columns]
    seen, repeated = set(), []
    for name in names:
        if name in seen and name not in repeated:
            repeated.append(name)
        seen.add(name)
    if repeated:
        raise ValueError(
            f"{param} has duplicated column names {repeated}; each feature needs "
            "its own name (feature names, groups and transform identify "
            f"columns by name). Rename them ({param}.columns = [...]) or drop "
            f"the copies ({param}.loc[:, ~{param}.columns.duplicated()])."
        )


def _table_columns(X):
    """``(name, values)`` of every column of X, values as a numpy array
    (None when X cannot be read as a table)."""
    if is_pandas(X) and hasattr(X, "columns"):
        return [(str(c), X.iloc[:, j]) for j, c in enumerate(X.columns)]
    if is_polars(X):
        return [(name, X.get_column(name)) for name in X.columns]
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        return None
    try:
        X = np.asarray(X)
    except (TypeError, ValueError):
        return None
    if X.ndim != 2:
        return None
    return [(f"x{j}", X[:, j]) for j in range(X.shape[1])]


def _as_float(column):
    """A column as float64 (missing as NaN), or None when it is not numeric."""
    if is_pandas(column):
        import pandas as pd

        if pd.api.types.is_bool_dtype(column.dtype) or (
            pd.api.types.is_numeric_dtype(column.dtype)
            and not pd.api.types.is_complex_dtype(column.dtype)
        ):
            return column.to_numpy(dtype=np.float64, na_value=np.nan)
        return None
    if is_polars(column):
        import polars as pl

        if column.dtype.is_numeric() or column.dtype == pl.Boolean:
            return column.cast(pl.Float64).fill_null(np.nan).to_numpy()
        return None
    values = np.asarray(column)
    if values.dtype.kind in "biuf":
        return values.astype(np.float64)
    return None


def _is_temporal(column):
    """Whether a column holds dates, times or durations."""
    dtype = getattr(column, "dtype", None)
    if is_polars(column):
        return bool(dtype.is_temporal())
    if is_pandas(column):
        import pandas as pd

        return pd.api.types.is_datetime64_any_dtype(
            dtype
        ) or pd.api.types.is_timedelta64_dtype(dtype)
    return np.asarray(column).dtype.kind in "Mm"


def _holds(column, text):
    values = column.to_numpy() if hasattr(column, "to_numpy") else np.asarray(column)
    return any(str(v) == text for v in np.asarray(values, dtype=object).ravel())


def _offending_columns(X, what, text=None):
    """Columns with NaN, infinity or the non-numeric value ``text`` ("nan",
    "inf", "text"): a list of ``(name, detail)``."""
    columns = _table_columns(X)
    if columns is None:
        return []
    found = []
    for name, column in columns:
        if what == "datetime":
            if _is_temporal(column):
                found.append((name, f"dtype {getattr(column, 'dtype', None)}"))
            continue
        values = _as_float(column)
        if what == "text":
            if values is None and _holds(column, text):
                dtype = getattr(column, "dtype", None)
                found.append((name, f"dtype {dtype}, e.g. {text!r}"))
            continue
        if values is None:
            continue
        bad = np.isnan(values) if what == "nan" else np.isinf(values)
        if bad.any():
            found.append((name, f"first at row {int(np.argmax(bad))}"))
    return found


def has_infinity(X):
    """Whether a numeric column of X (an array, a sparse matrix or a frame)
    holds +-infinity, which a model's ``predict`` checks for and the tree
    engine's inputs do not."""
    data = getattr(X, "data", None) if hasattr(X, "tocsr") else None
    if data is not None:
        return bool(np.isinf(data).any()) if data.dtype.kind == "f" else False
    if isinstance(X, np.ndarray):
        return bool(np.isinf(X).any()) if X.dtype.kind == "f" else False
    numeric = _numeric_block(X)
    if numeric is not None:
        return bool(np.isinf(numeric).any())
    return bool(_offending_columns(X, "inf"))


def _numeric_block(X):
    """A pandas frame's numeric and boolean columns as one float64 array
    (missing as NaN), in one conversion rather than column by column (a
    wide frame's columns cost a pandas lookup each); None for anything
    else, which :func:`_offending_columns` reads."""
    if not (is_pandas(X) and hasattr(X, "columns")):
        return None
    import pandas as pd

    types = pd.api.types
    numeric = [
        j
        for j, dtype in enumerate(X.dtypes)
        if types.is_bool_dtype(dtype)
        or (types.is_numeric_dtype(dtype) and not types.is_complex_dtype(dtype))
    ]
    return X.iloc[:, numeric].to_numpy(dtype=np.float64, na_value=np.nan)


def _named(found):
    names = [repr(name) for name, _ in found[:MAX_NAMED_COLUMNS]]
    more = len(found) - MAX_NAMED_COLUMNS
    listed = ", ".join(names) + (f" and {more} more" if more > 0 else "")
    first_name, first_detail = found[0]
    return f"{listed} ({first_name!r}: {first_detail})"


_FIXES = {
    "nan": (
        "contain missing values (NaN), which {model} does not accept",
        "Impute them (e.g. SimpleImputer in a Pipeline), drop those rows, or "
        "use a model that accepts NaN (HistGradientBoosting*, RandomForest*, "
        "DecisionTree*).",
    ),
    "inf": (
        "contain infinite values, which {model} does not accept",
        "Replace them with finite values (e.g. np.clip), or with NaN for a "
        "model that accepts missing values.",
    ),
    "datetime": (
        "hold dates or times, which {model} cannot use as they are",
        "Convert them to numbers: calendar parts (year, month, day of week) "
        "or seconds since a date (e.g. X['when'].astype('int64') // 10**9 "
        "for a pandas datetime column), or drop them.",
    ),
    "text": (
        "hold non-numeric values, which {model} cannot use",
        "Encode them (OneHotEncoder or OrdinalEncoder in a ColumnTransformer "
        "of a Pipeline), or use a model that handles categories "
        "(HistGradientBoosting* with categorical_features='from_dtype').",
    ),
}

#: scikit-learn's messages about X (those about y say "Input y" or "Input").
_PATTERNS = (
    (
        "datetime",
        re.compile(r"DateTime64DType|TimeDelta64DType|[Tt]imestamp|datetime64"),
    ),
    ("nan", re.compile(r"\bX contains NaN")),
    ("inf", re.compile(r"\bX contains infinity")),
    ("text", re.compile(r"could not convert string to float: (?:np\.str_\()?'(.*)'")),
)


def _model_name(arguments):
    model = arguments.get("estimator")
    if model is None and "self" in arguments:
        model = getattr(arguments["self"], "estimator", None)
    return "the estimator" if model is None else f"{type(model).__name__}(...)"


def _explained(exc, X, model):
    """A clearer error for ``exc`` naming X's offending columns, or None."""
    message = str(exc)
    for what, pattern in _PATTERNS:
        match = pattern.search(message)
        if match is None:
            continue
        found = _offending_columns(
            X, what, match.groups()[0] if match.groups() else None
        )
        if not found or any(repr(name) in message for name, _ in found):
            # nothing to add, or the message already names the column
            return None
        problem, fix = _FIXES[what]
        first_line = message.strip().splitlines()[0].rstrip(".")
        if len(first_line) > 200:  # numpy's dtype errors list every dtype
            first_line = first_line.split(". ")[0]
        return ValueError(
            f"X column(s) {_named(found)} {problem.format(model=model)} "
            f"({first_line}). {fix}"
        )
    return None


def text_columns_in_error(exc, X):
    """The columns of ``X`` holding the string that ``exc`` (a model's
    "could not convert string to float") could not convert: a list of
    ``(name, detail)``, empty for any other error."""
    match = dict(_PATTERNS)["text"].search(str(exc))
    return [] if match is None else _offending_columns(X, "text", match.group(1))


def explain_input_errors(func):
    """Decorate a public function or ``fit`` whose argument ``X`` is the
    caller's table: reject duplicated column names up front, and turn the
    wrapped model's errors about NaN, infinity or strings (which name no
    column) into errors naming the columns of X that hold them and a fix."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        arguments = signature.bind_partial(*args, **kwargs).arguments
        X = arguments.get("X")
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError(
                f"X is a sparse matrix ({type(X).__name__}), and "
                f"{func.__qualname__} works on dense columns (it permutes, drops "
                "or predicts them). Convert it with X.toarray(), or pass a dense "
                "array or DataFrame."
            )
        check_unique_columns(X)
        try:
            return func(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            explained = _explained(exc, X, _model_name(arguments))
            if explained is None:
                raise
            raise explained from exc

    return wrapper


def reads_the_model_only(func):
    """Decorate a public function that reads a fitted model and no rows
    (``mdi_importance``): rows passed to it are an error that says so and
    names the functions that measure on rows, not a bare "too many
    positional arguments"."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if len(args) > 1 or "X" in kwargs:
            raise TypeError(
                f"{func.__name__}(estimator) reads the importances from the "
                "fitted trees and takes no rows: call it with the model alone. "
                "To measure on rows, use permutation_importance(model, X_test, "
                "y_test) or, on a forest's training rows, "
                "oob_mdi_importance(model, X_train, y_train)."
            )
        return func(*args, **kwargs)

    return wrapper


def discard_fit_on_error(fit):
    """Decorate ``fit``: when it raises (or is interrupted), delete every
    fitted attribute, so that the estimator does not claim to be fitted
    with a half-built state or with a previous fit's attributes that the
    failed call partly overwrote."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            for name in [n for n in vars(self) if n.endswith("_")]:
                if not name.startswith("__"):
                    delattr(self, name)
            raise

    return wrapper
