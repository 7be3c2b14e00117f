"""The ``sklearn-fimp`` command: one self-contained HTML report per data set.

``sklearn-fimp report DATA.csv --target COLUMN`` fits a random forest to
predict ``COLUMN`` from the other columns and writes one HTML file (figures
embedded as PNG) with the model's score, its importances under several
methods next to a column of random numbers, the features
:class:`~sklearn_fimp.ImportanceSelector` keeps (with p-values) and the
dependence analysis of :class:`~sklearn_fimp.DependenceAnalyzer`.
``sklearn-fimp report --demo`` does the same on scikit-learn's diabetes
data, so it runs on a fresh machine with no input.

Exit status: 0 on success; 2 when the input cannot be used (missing file,
unknown target column, a target with one value, a bad option) or pandas or
matplotlib is missing, with a one-line message on stderr and no traceback.
"""

import argparse
import base64
import html
import io
import sys
import time
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

PROG = "sklearn-fimp"
IMPORTANCE_METHODS = (
    "mdi",
    "oob_mdi",
    "permutation",
    "oob_permutation",
    "drop_column",
)
DEFAULT_METHODS = ("mdi", "permutation", "drop_column")
#: A numeric target with at most this many distinct values, all of them
#: whole numbers, is treated as class labels.
MAX_CLASSES_OF_NUMERIC_TARGET = 10
#: Rows at least, so that the held-out split has rows of every kind.
MIN_ROWS = 20
#: Columns of a table shown in error messages.
MAX_NAMES_SHOWN = 40

EXIT_USAGE = 2


class ReportError(Exception):
    """An input the report cannot use; the message says what to do."""


class Progress:
    """Progress lines on stderr: what is running, and how long it took."""

    def __init__(self, quiet=False, stream=None):
        self.quiet = quiet
        self.stream = sys.stderr if stream is None else stream
        self.started = None

    def say(self, message):
        if not self.quiet:
            print(f"{PROG}: {message}", file=self.stream, flush=True)

    def start(self, message):
        self.started = time.perf_counter()
        if not self.quiet:
            print(f"{PROG}: {message} ...", end="", file=self.stream, flush=True)

    def done(self):
        elapsed = time.perf_counter() - self.started
        if not self.quiet:
            print(f" {elapsed:.1f} s", file=self.stream, flush=True)


# ----------------------------------------------------------------------------
# command line


def _methods(values):
    """The importance methods of repeated / comma-separated --method options."""
    if not values:
        return list(DEFAULT_METHODS)
    chosen = []
    for value in values:
        for name in value.split(","):
            name = name.strip().replace("-", "_")
            if not name:
                continue
            if name not in IMPORTANCE_METHODS:
                raise ReportError(
                    f"--method {name!r} is not a method; choose among "
                    f"{', '.join(IMPORTANCE_METHODS)}."
                )
            if name not in chosen:
                chosen.append(name)
    if not chosen:
        raise ReportError(
            f"--method is empty; choose among {', '.join(IMPORTANCE_METHODS)}."
        )
    return chosen


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return value


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Feature importances you can trust. 'report' writes one HTML file "
            "on what a random forest learns from a CSV file."
        ),
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    report = commands.add_parser(
        "report",
        help="write an HTML report of feature importances for a CSV file",
        description=(
            "Fit a random forest that predicts TARGET from the other columns and "
            "write one self-contained HTML file: the model's held-out score; "
            "its importances (MDI, permutation, drop-column ...) with a column "
            "of random numbers for reference; the features ImportanceSelector "
            "keeps and their p-values; the dependence heatmap and the features "
            "DependenceAnalyzer would drop. The target is predicted by a "
            "classifier when it is not numeric, or holds at most "
            f"{MAX_CLASSES_OF_NUMERIC_TARGET} distinct whole numbers, and by a "
            "regressor otherwise (--task overrides). String columns are encoded "
            "as ordered category codes inside the model's Pipeline; every column "
            "is used."
        ),
        epilog=(
            "Exit status: 0 when the report is written; 2 with a message when the "
            "input cannot be used (missing file, unknown target column, a target "
            "with one value, a bad option, pandas or matplotlib not installed)."
        ),
    )
    report.add_argument(
        "data", nargs="?", metavar="DATA.csv", help="the CSV file (with a header)"
    )
    report.add_argument("--target", help="the column to predict")
    report.add_argument(
        "--demo",
        action="store_true",
        help="use scikit-learn's diabetes data instead of a file",
    )
    report.add_argument(
        "--method",
        action="append",
        metavar="METHOD",
        help=(
            "importance methods to compare, repeated or comma-separated, among "
            f"{', '.join(IMPORTANCE_METHODS)} (default: "
            f"{','.join(DEFAULT_METHODS)})"
        ),
    )
    report.add_argument(
        "--out",
        default="report.html",
        metavar="PATH",
        help="the HTML file to write (default: report.html)",
    )
    report.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        default="auto",
        help="how to predict the target (default: auto, see above)",
    )
    report.add_argument(
        "--sep", default=",", help="the CSV file's column separator (default: ,)"
    )
    report.add_argument(
        "--n-estimators",
        type=_positive_int,
        default=100,
        help="trees of each forest: the model's and the dependence models' "
        "(default: 100)",
    )
    report.add_argument(
        "--max-rows",
        type=_positive_int,
        default=10000,
        help="use a random sample of at most this many rows (default: 10000)",
    )
    report.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="parallel jobs (default: 1; -1 uses every core)",
    )
    report.add_argument(
        "--random-state",
        type=int,
        default=0,
        help="seed of the split, the forests and the permutations (default: 0)",
    )
    report.add_argument(
        "--quiet", action="store_true", help="no progress messages on stderr"
    )
    return parser


def main(argv=None):
    """Run ``sklearn-fimp`` with the arguments ``argv`` (default: sys.argv).

    Parameters
    ----------
    argv : list of str or None, default=None
        The arguments after the program name.

    Returns
    -------
    status : int
        0 on success, 2 when the input cannot be used (a message is written
        on stderr). Invalid options make argparse exit with status 2.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return run_report(args)
    except ReportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


# ----------------------------------------------------------------------------
# input


def _require(module, purpose):
    try:
        return __import__(module)
    except ImportError:
        extra = "pandas" if module == "pandas" else "plot"
        raise ReportError(
            f"{purpose} needs {module}, which is not installed; install it with "
            f'pip install "sklearn-fimp[{extra}]" (or pip install {module}).'
        ) from None


def _names_list(names):
    names = [repr(str(n)) for n in names]
    if len(names) > MAX_NAMES_SHOWN:
        names = names[:MAX_NAMES_SHOWN] + [f"... ({len(names) - MAX_NAMES_SHOWN} more)"]
    return ", ".join(names)


def read_table(path, sep):
    """The CSV file as a DataFrame, or a ReportError saying why not."""
    pd = _require("pandas", "Reading a CSV file")
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
    _require("pandas", "The demo")
    from sklearn.datasets import load_diabetes

    frame = load_diabetes(as_frame=True, scaled=False).frame
    frame = frame.rename(columns={"target": "progression"})
    return frame, "progression"


def _is_numeric(series):
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
    numeric = _is_numeric(y)
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


class Prepared(NamedTuple):
    """The table split into features and target, with notes for the report."""

    X: object
    y: np.ndarray
    task: str
    notes: list
    categorical: list


def prepare(frame, target, task, max_rows, random_state):
    """Check the table and the target; features and target, ready to fit."""
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    if target is None:
        raise ReportError(
            "--target is required with a data file; name the column to predict "
            f"(the columns are {_names_list(frame.columns)})."
        )
    if target not in frame.columns:
        raise ReportError(
            f"--target {target!r} is not a column of the file; the columns are "
            f"{_names_list(frame.columns)}."
        )
    if frame.shape[1] < 2:
        raise ReportError(
            f"the file has only the column {target!r}; it needs at least one "
            "feature column besides the target."
        )
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
    categorical = [c for c in X.columns if not _is_numeric(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    infinite = [c for c in numeric if np.isinf(X[c].to_numpy(dtype=float)).any()]
    for c in infinite:
        X[c] = X[c].replace([np.inf, -np.inf], np.nan)
    if infinite:
        notes.append(
            f"Infinite values in {_names_list(infinite)} were treated as missing."
        )
    notes.extend(_column_notes(X, categorical))
    if task == "classification":
        y = y.astype(str) if not _is_numeric(y) else y
        counts = y.value_counts()
        if counts.min() < 2:
            rare = [str(v) for v in counts.index[counts < 2]]
            notes.append(
                f"Class(es) {_names_list(rare)} occur once; the held-out split is "
                "not stratified."
            )
    return Prepared(X, y.to_numpy(), task, notes, categorical)


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
        notes.append(f"No values in {_names_list(empty)}: nothing to learn from.")
    if constant:
        notes.append(f"One value only in {_names_list(constant)}: nothing to learn.")
    if identifiers:
        notes.append(
            f"Every row has its own value in {_names_list(identifiers)} (an "
            "identifier?): held-out rows bring values the model never saw, so "
            "these columns cannot help it predict."
        )
    return notes


# ----------------------------------------------------------------------------
# model and measurements


def _unused_name(base, taken):
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


def make_model(task, n_estimators, n_jobs, random_state):
    """Ordinal codes for string columns, then a random forest, in a Pipeline."""
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder

    encode = ColumnTransformer(
        [
            (
                "categories",
                OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
                make_column_selector(dtype_exclude="number"),
            )
        ],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")
    forest = (
        RandomForestClassifier if task == "classification" else RandomForestRegressor
    )(n_estimators=n_estimators, n_jobs=n_jobs, random_state=random_state)
    return Pipeline([("encode", encode), ("forest", forest)])


def _split(y, task, random_state):
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(y))
    stratify = None
    if task == "classification":
        _, counts = np.unique(y, return_counts=True)
        n_test = int(np.ceil(0.25 * len(y)))
        if counts.min() >= 2 and n_test >= len(counts):
            stratify = y
    return train_test_split(
        rows, test_size=0.25, stratify=stratify, random_state=random_state
    )


def _chance_score(y_train, y_test, task):
    """Score of always predicting the training rows' majority class or mean."""
    if task == "classification":
        values, counts = np.unique(y_train, return_counts=True)
        return float(np.mean(y_test == values[np.argmax(counts)]))
    residual = np.sum((y_test - np.mean(y_train)) ** 2)
    total = np.sum((y_test - np.mean(y_test)) ** 2)
    return float(1 - residual / total) if total > 0 else 0.0


def measure_importances(model, X, y, train, test, methods, args, progress):
    """The importance results of each method, keyed by method name."""
    from .. import (
        drop_column_importance,
        mdi_importance,
        oob_mdi_importance,
        oob_permutation_importance,
        permutation_importance,
    )
    from .._utils._frames import take_rows

    X_train, X_test = take_rows(X, train), take_rows(X, test)
    forest = model[-1]
    results = {}
    for method in methods:
        progress.start(f"{method.replace('_', '-')} importance")
        if method == "mdi":
            result = mdi_importance(forest)
        elif method == "oob_mdi":
            result = oob_mdi_importance(forest, model[:-1].transform(X_train), y[train])
        elif method == "permutation":
            result = permutation_importance(
                model,
                X_test,
                y[test],
                n_repeats=10,
                n_jobs=args.n_jobs,
                random_state=args.random_state,
            )
        elif method == "oob_permutation":
            result = oob_permutation_importance(
                forest,
                model[:-1].transform(X_train),
                y[train],
                n_repeats=5,
                n_jobs=args.n_jobs,
                random_state=args.random_state,
            )
        else:
            result = drop_column_importance(
                model,
                X,
                y,
                cv=[(train, test)],
                n_jobs=args.n_jobs,
                random_state=args.random_state,
            )
        results[method] = result
        progress.done()
    return results


# ----------------------------------------------------------------------------
# HTML


def _e(value):
    return html.escape(str(value), quote=True)


def _figure_html(figure, alt):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{_e(alt)}">'


def _table(header, rows, classes=None):
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        css = f' class="{_e(classes[i])}"' if classes and classes[i] else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    return (
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _fmt(value):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return f"{value:.3g}"


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
th { background: #f3f3f3; } tr.kept td { background: #eaf3fb; }
tr.reference td { background: #f1f1f1; font-style: italic; }
img { max-width: 100%; height: auto; } .note { color: #555; font-size: 0.9em; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""


def render_html(sections, title):
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]
    parts.extend(sections)
    parts.append("</body></html>")
    return "\n".join(parts)


# ----------------------------------------------------------------------------
# the report


def _new_figure(width, height):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def run_report(args):
    """Compute everything and write the HTML file; returns the exit status."""
    progress = Progress(args.quiet)
    methods = _methods(args.method)
    if args.demo and (args.data is not None or args.target is not None):
        raise ReportError(
            "--demo uses scikit-learn's diabetes data; pass either --demo or "
            "DATA.csv --target COLUMN, not both."
        )
    if not args.demo and args.data is None:
        raise ReportError(
            "pass a CSV file and its target (report DATA.csv --target COLUMN), "
            "or --demo."
        )
    _require("matplotlib", "Drawing the report's figures")
    out = Path(args.out)
    if out.is_dir():
        raise ReportError(f"--out {str(out)!r} is a directory; name a file.")
    if not out.parent.exists():
        raise ReportError(
            f"--out {str(out)!r}: the directory {str(out.parent)!r} does not exist."
        )

    if args.demo:
        frame, target = demo_table()
        source = "scikit-learn's diabetes data (load_diabetes, original units)"
    else:
        frame, target = read_table(args.data, args.sep), args.target
        source = str(args.data)
    data = prepare(frame, target, args.task, args.max_rows, args.random_state)
    progress.say(
        f"{len(data.y)} rows, {data.X.shape[1]} features, target {target!r} "
        f"({data.task})"
    )
    sections = [_overview_html(source, target, data, methods)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sections.extend(_analyses(data, methods, args, progress))
    messages = list(dict.fromkeys(str(w.message) for w in caught))
    if messages:
        progress.say(f"{len(messages)} distinct warning(s), listed in the report")
        items = "".join(f"<li>{_e(m)}</li>" for m in messages)
        sections.append(f"<h2>Warnings</h2><ul>{items}</ul>")

    name = "diabetes" if args.demo else Path(source).name
    title = f"Feature importances: {target} from {name}"
    try:
        out.write_text(render_html(sections, title), encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"--out {str(out)!r} could not be written: {exc}.") from None
    progress.say(f"wrote {out}")
    return 0


def _analyses(data, methods, args, progress):
    """The report's sections after the overview."""
    sections = []

    random_name = _unused_name("random", set(data.X.columns))
    rng = np.random.RandomState(args.random_state)
    X = data.X.assign(**{random_name: rng.uniform(size=len(data.y))})
    y = data.y
    train, test = _split(y, data.task, args.random_state)
    model = make_model(data.task, args.n_estimators, args.n_jobs, args.random_state)

    from .._utils._frames import take_rows

    progress.start("fitting the forest")
    model.fit(take_rows(X, train), y[train])
    progress.done()
    score = float(model.score(take_rows(X, test), y[test]))
    chance = _chance_score(y[train], y[test], data.task)
    sections.append(_score_html(score, chance, data.task, len(train), len(test)))

    results = measure_importances(model, X, y, train, test, methods, args, progress)
    sections.append(_importance_html(results, random_name, data.task))

    progress.start("ImportanceSelector (probes and p-values)")
    sections.append(_selector_html(data, args))
    progress.done()

    progress.start("DependenceAnalyzer (one forest per feature)")
    sections.append(_dependence_html(data, args))
    progress.done()
    return sections


def _overview_html(source, target, data, methods):
    kinds = []
    for column in data.X.columns:
        series = data.X[column]
        if column in data.categorical:
            kind = f"categories ({series.nunique()} values, ordinal codes)"
        else:
            kind = "number"
        missing = int(series.isna().sum())
        kinds.append([column, kind, missing])
    rule = (
        "it is not numeric, or holds at most "
        f"{MAX_CLASSES_OF_NUMERIC_TARGET} distinct whole numbers"
        if data.task == "classification"
        else "it is numeric with more than "
        f"{MAX_CLASSES_OF_NUMERIC_TARGET} distinct values, or fractional ones"
    )
    notes = "".join(f"<li>{_e(n)}</li>" for n in data.notes)
    return (
        "<h2>Data</h2>"
        f"<p>Source: <code>{_e(source)}</code>. Target: <code>{_e(target)}</code>, "
        f"treated as <b>{_e(data.task)}</b> because {_e(rule)} (override with "
        f"<code>--task</code>). {len(data.y)} rows, {data.X.shape[1]} features, all "
        "used: string columns are encoded as category codes (in sorted order) "
        "inside the model's Pipeline; missing values are left to the forest.</p>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + "<details><summary>Columns</summary>"
        + _table(["column", "read as", "missing values"], kinds)
        + "</details>"
        + f"<p class='note'>Importance methods compared: {_e(', '.join(methods))}.</p>"
    )


def _score_html(score, chance, task, n_train, n_test):
    metric = "accuracy" if task == "classification" else "R²"
    chance_text = (
        "always predicting the most frequent class"
        if task == "classification"
        else "always predicting the mean"
    )
    verdict = ""
    if score < chance:
        verdict = (
            "<p><b>The model predicts the held-out rows worse than that: its "
            "importances say little about the data (look for outliers in the "
            "target, or too few rows).</b></p>"
        )
    elif chance >= 1 or (score - chance) / (1 - chance) < 0.1:
        verdict = (
            "<p><b>The model predicts the target hardly better than that (it "
            "closes less than a tenth of the gap to a perfect score): its "
            "importances say little about the data.</b></p>"
        )
    return (
        "<h2>Model</h2>"
        f"<p>A random forest (in a Pipeline that encodes string columns) trained "
        f"on {n_train} rows scores <b>{metric} = {score:.3f}</b> on the "
        f"{n_test} held-out rows; {_e(chance_text)} scores {chance:.3f}. "
        "Importances are only worth reading for a model that predicts well.</p>"
        + verdict
    )


METHOD_TEXT = {
    "mdi": "MDI: mean decrease in impurity, read from the trees, on training rows",
    "oob_mdi": "MDI-oob: impurity decreases re-scored on out-of-bag rows",
    "permutation": "permutation: drop in the held-out score when the column is "
    "shuffled (10 shuffles)",
    "oob_permutation": "out-of-bag permutation: drop in the out-of-bag score when "
    "the column is shuffled",
    "drop_column": "drop-column: drop in the held-out score when the forest is "
    "retrained without the column",
}


def _importance_html(results, random_name, task):
    from .._methods import METHODS
    from .._plot.importance import ImportanceDisplay

    titled = {METHODS[m].title: r for m, r in results.items()}
    first = next(iter(results.values()))
    n_rows = len(first.feature_names)
    figure = _new_figure(
        max(6.4, 4.2 * len(titled)), min(max(3, 0.3 * n_rows + 1.4), 40)
    )
    axes = figure.subplots(1, len(titled), sharey=True, squeeze=False)[0]
    ImportanceDisplay.from_result(titled, probes=[random_name], ax=list(axes))
    figure_html = _figure_html(figure, "importances of each feature by method")

    names = [str(n) for n in first.feature_names]
    order = np.argsort(-first.importances_mean, kind="stable")
    lookups = [
        dict(zip(map(str, r.feature_names), zip(r.importances_mean, r.importances_std)))
        for r in results.values()
    ]
    rows, classes = [], []
    for i in order:
        row = [names[i]]
        for lookup in lookups:
            mean, std = lookup[names[i]]
            row.append(f"{_fmt(float(mean))} ± {_fmt(float(std))}")
        rows.append(row)
        classes.append("reference" if names[i] == random_name else "")
    table = _table(["feature"] + list(titled), rows, classes)

    findings = []
    for method, result in results.items():
        values = dict(zip(map(str, result.feature_names), result.importances_mean))
        below = [
            n for n in names if n != random_name and values[n] < values[random_name]
        ]
        if below:
            findings.append(
                f"<li>{_e(METHODS[method].title)}: the random column outranks "
                f"{len(below)} real feature(s): {_e(', '.join(below))}.</li>"
            )
        else:
            findings.append(
                f"<li>{_e(METHODS[method].title)}: every real feature is above the "
                "random column.</li>"
            )
    described = "".join(f"<li>{_e(METHOD_TEXT[m])}</li>" for m in results)
    unit = "accuracy" if task == "classification" else "R²"
    return (
        "<h2>Importances, next to a column of random numbers</h2>"
        f"<p>A column of uniform random numbers, <code>{_e(random_name)}</code> "
        "(grey, hatched), was added to the features: a feature no more important "
        "than it is noise the model learnt. MDI is measured on the training rows "
        "and favours features with many distinct values, so it often ranks the "
        "random column above real features; the other methods measure what the "
        f"model loses without a feature (in {unit} for the score-based ones). "
        "Bars: mean; whiskers: standard deviation over trees or shuffles.</p>"
        f"<ul>{described}</ul>" + figure_html + f"<ul>{''.join(findings)}</ul>" + table
    )


def _selector_html(data, args):
    from .. import ImportanceSelector
    from .._plot.importance import ImportanceDisplay

    model = make_model(data.task, args.n_estimators, args.n_jobs, args.random_state)
    encoded = model[:-1].fit_transform(data.X)[list(data.X.columns)]
    selector = ImportanceSelector(
        model[-1], refit=False, n_jobs=args.n_jobs, random_state=args.random_state
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        selector.fit(encoded, data.y)
    for warning in caught:
        if not issubclass(warning.category, UserWarning) or "min_features" not in str(
            warning.message
        ):
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    n_groups = len(selector.groups_)
    result = selector.importances_
    n_rows = len(result.feature_names)
    figure = _new_figure(7.5, min(max(3, 0.25 * n_rows + 1.4), 60))
    ImportanceDisplay.from_selector(selector, ax=figure.subplots(), errorbars=False)
    figure_html = _figure_html(
        figure, "ImportanceSelector: features, probes, threshold"
    )

    names = [str(n) for n in data.X.columns]
    order = np.lexsort((-result.importances_mean[:n_groups], selector.pvalues_))
    rows, classes = [], []
    for j in order:
        kept = bool(selector.support_[j])
        rows.append(
            [
                names[j],
                _fmt(float(result.importances_mean[j])),
                _fmt(float(selector.pvalues_[j])),
                _fmt(float(selector.pvalues_corrected_[j])),
                _decision(kept, selector.pvalues_corrected_[j], selector.alpha),
            ]
        )
        classes.append("kept" if kept else "")
    kept = [names[j] for j in np.flatnonzero(selector.support_)]
    notes = "".join(
        f"<li>{_e(w.message)}</li>" for w in caught if "min_features" in str(w.message)
    )
    return (
        "<h2>Features that beat random probes (ImportanceSelector)</h2>"
        f"<p>ImportanceSelector added {int(result.n_probes)} probe columns "
        "(shuffled copies of the features), fitted the forest, measured every "
        f"column's importance ({_e(selector.method_.replace('_', '-'))}) and kept "
        "a feature only when a one-sided test says its importance is above the "
        f"probes' (p-value adjusted by {_e(selector.correction)}'s method at most "
        f"{selector.alpha}). It keeps <b>{len(kept)} of {len(names)}</b> "
        f"features: {_e(', '.join(kept)) or 'none'}. Bars are mean importances; "
        "the dashed line is the importance a feature needed.</p>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + figure_html
        + _table(
            ["feature", "importance", "p-value", "adjusted p-value", "decision"],
            rows,
            classes,
        )
    )


def _decision(kept, corrected, alpha):
    if not kept:
        return "dropped"
    if corrected <= alpha:
        return "kept"
    return "kept (min_features)"


def _dependence_html(data, args):
    from .. import DependenceAnalyzer
    from .._importance._dependence import default_classifier, default_regressor
    from .._plot.dependence import DependenceDisplay

    if data.X.shape[1] < 2:
        return (
            "<h2>Dependence</h2><p>With a single feature there is no dependence "
            "to measure.</p>"
        )
    estimators = {
        "regressor": default_regressor().set_params(n_estimators=args.n_estimators),
        "classifier": default_classifier().set_params(n_estimators=args.n_estimators),
    }
    analyzer = DependenceAnalyzer(
        estimators, n_jobs=args.n_jobs, random_state=args.random_state
    )
    analyzer.fit(data.X)
    n = data.X.shape[1]
    figure = _new_figure(
        min(max(6.4, 3.0 + 0.5 * (n + 1)), 40), min(max(4.8, 2.0 + 0.4 * n), 40)
    )
    DependenceDisplay.from_analyzer(analyzer, ax=figure.subplots())
    figure_html = _figure_html(figure, "dependence heatmap")
    path = analyzer.elimination_path_
    rows = [
        [
            feature,
            _fmt(float(dependence)),
            "nothing (constant, or no input helps)" if explained is None else explained,
        ]
        for feature, dependence, explained in zip(
            path["feature"], path["dependence"], path["explained_by"]
        )
    ]
    if rows:
        verdict = (
            f"DependenceAnalyzer (threshold {analyzer.threshold}) would drop "
            f"{len(rows)} feature(s), in this order:"
        )
        table = _table(
            ["dropped feature", "its dependence then", "explained most by"], rows
        )
    else:
        verdict = (
            f"No feature has a dependence above {analyzer.threshold}: "
            "DependenceAnalyzer would drop none."
        )
        table = ""
    return (
        "<h2>Dependence between features</h2>"
        "<p>The dependence of a feature is how well a forest predicts it from all "
        "the other features (out-of-bag R², or chance-corrected accuracy for "
        "categories): near 1, the feature is redundant. The first column is the "
        "dependence; the others say how much it drops when each other feature is "
        "shuffled, i.e. which features explain it. Redundant features share their "
        "importance, so a low importance above may only mean that another column "
        "carries the same information.</p>"
        + figure_html
        + f"<p>{_e(verdict)}</p>"
        + table
    )
