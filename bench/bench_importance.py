"""Time sklearn_fimp's importance functions against scikit-learn and rfpimp.

Workload: the rent data set (bathrooms, bedrooms, longitude, latitude, price),
target log(price), plus a seeded uniform random column named "random". One
RandomForestRegressor(n_estimators=100, random_state=0) is fitted on an 80%
split (train_test_split, random_state=0) and every importance method is timed
on it: the median of ``--repeats`` runs of ``time.perf_counter``. Each timing
is also given as a multiple of one ``model.predict`` over the rows the method
evaluates (validation rows for validation methods, training rows for
out-of-bag methods), so that results carry over between machines.

The model keeps the default ``n_jobs=None`` and every importance function is
called with its default ``n_jobs`` (None), so that all timings are of one
process and compare like with like.

Run from the repository root::

    python bench/bench_importance.py            # full run, writes the docs table
    python bench/bench_importance.py --quick     # smoke test, prints the page

The table is printed and written to ``docs/bench_importance.rst``.
"""

import argparse
import os
import platform
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from _common import (
    DOCS,
    RENT_CSV,
    command_line,
    git_commit,
    heading,
    list_table,
    median_time,
    rent_missing,
    reproduce,
    shown,
    skip,
    text_table,
    utc_stamp,
    version,
    versions,
    write_page,
    written_by,
)
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import permutation_importance as sk_permutation_importance
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from sklearn_fimp import (
    drop_column_importance,
    mdi_importance,
    oob_mdi_importance,
    oob_permutation_importance,
    permutation_importance,
)

DEFAULT_DATA = RENT_CSV
DOCS_FILE = DOCS / "bench_importance.rst"

FEATURES = ["bathrooms", "bedrooms", "longitude", "latitude", "random"]
DATA_COLUMNS = ["bathrooms", "bedrooms", "price", "longitude", "latitude"]
SEED = 0
N_REPEATS = 5
N_ESTIMATORS = 100
QUICK_N_ESTIMATORS = 20
QUICK_TRAIN_ROWS = 5_000
SKLEARN_VERSION = ".".join(sklearn.__version__.split(".")[:2])


@dataclass
class Row:
    """One timed method."""

    method: str
    implementation: str
    rows: str  # "valid", "train" or "none"
    repeats: str
    seconds: float | None = None
    ratio: float | None = None
    fits: float | None = None
    importances: dict = field(default_factory=dict)
    error: str | None = None

    @property
    def ranking(self):
        if self.error is not None:
            return self.error
        order = sorted(self.importances, key=self.importances.get, reverse=True)
        return " > ".join(order[:5])


# --------------------------------------------------------------------------
# data and model


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=(
            "Time sklearn_fimp's importance functions against "
            "sklearn.inspection.permutation_importance and rfpimp on the rent "
            "data set, and write the table to docs/bench_importance.rst."
        )
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help=f"path of rent.csv (default: {DEFAULT_DATA})",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timing runs per method; the median is reported (default: 3)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=(
            f"smoke test in seconds: n_estimators={QUICK_N_ESTIMATORS}, "
            f"{QUICK_TRAIN_ROWS:,} training rows, one run per method; prints "
            "the page instead of writing it (and skips, saying so, without "
            "the rent data)"
        ),
    )
    parser.add_argument(
        "--no-write",
        action="store_true",
        help=f"print the table only; do not write {shown(DOCS_FILE)}",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def load_data(path):
    """Features (with the random column) and log(price); exit 2 if missing."""
    path = Path(path)
    if not path.is_file():
        print(
            f"error: data file not found: {path}\n"
            f"The benchmark looks for rent.csv (columns "
            f"{','.join(DATA_COLUMNS)},interest_level) at {DEFAULT_DATA} by "
            "default, i.e. ../shared/data/rent.csv relative to the repository "
            "root. Pass its location with --data PATH, e.g.\n"
            "    python bench/bench_importance.py --data /path/to/rent.csv",
            file=sys.stderr,
        )
        sys.exit(2)
    data = pd.read_csv(path)
    missing = [c for c in DATA_COLUMNS if c not in data.columns]
    if missing:
        print(
            f"error: {path} has no column(s) {missing}; expected the rent data "
            f"set with columns {','.join(DATA_COLUMNS)}.",
            file=sys.stderr,
        )
        sys.exit(2)
    if (data["price"] <= 0).any():
        print(f"error: {path}: price must be > 0 to take its log.", file=sys.stderr)
        sys.exit(2)
    X = data[["bathrooms", "bedrooms", "longitude", "latitude"]].astype(np.float64)
    X["random"] = np.random.RandomState(SEED).uniform(size=len(X))
    y = pd.Series(np.log(data["price"].to_numpy(dtype=np.float64)), name="log_price")
    return X[FEATURES], y


# --------------------------------------------------------------------------
# timing helpers


def short_error(exc):
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if len(message) > 90:
        message = message[:87] + "..."
    return (
        f"does not run on scikit-learn {SKLEARN_VERSION}: "
        f"{type(exc).__name__}: {message}"
    )


def run(row, func, to_importances, n_runs, predict_seconds, fit_seconds=None):
    """Time ``func`` into ``row``; a failure is recorded, not raised."""
    print(f"  {row.method} / {row.implementation} ...", end=" ", flush=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seconds, result = median_time(func, n_runs)
    except Exception as exc:  # report any failure of third-party code
        row.error = short_error(exc)
        print("FAILED:", row.error, flush=True)
        return row
    finally:
        messages = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    if messages:
        print(f"({len(caught)} warning(s): {'; '.join(messages)})", end=" ")
    row.seconds = seconds
    row.ratio = seconds / predict_seconds
    if fit_seconds is not None:
        row.fits = seconds / fit_seconds
    row.importances = to_importances(result)
    print(f"{seconds:.3f} s", flush=True)
    return row


def from_bunch(result, names=None):
    names = result.get("feature_names", names) if names is None else names
    return {str(n): float(v) for n, v in zip(names, result.importances_mean)}


def from_rfpimp(frame):
    return {str(n): float(v) for n, v in frame["Importance"].items()}


# --------------------------------------------------------------------------
# rfpimp's out-of-bag permutation algorithm, re-implemented


def rfpimp_oob_r2(model, X, y):
    """rfpimp.oob_regression_r2_score with the out-of-bag rows read from
    ``estimators_samples_`` (rfpimp regenerates them from private helpers
    whose signature changed). Every tree predicts its out-of-bag rows; each
    row's predictions are averaged and R^2 is taken over all rows."""
    n_samples = X.shape[0]
    predictions = np.zeros(n_samples)
    n_predictions = np.zeros(n_samples)
    for tree, in_bag in zip(model.estimators_, model.estimators_samples_):
        unsampled = np.ones(n_samples, dtype=bool)
        unsampled[in_bag] = False
        unsampled_indices = np.flatnonzero(unsampled)
        predictions[unsampled_indices] += tree.predict(X[unsampled_indices, :])
        n_predictions[unsampled_indices] += 1
    if (n_predictions == 0).any():
        warnings.warn("Too few trees; some rows have no OOB prediction.", stacklevel=2)
        n_predictions[n_predictions == 0] = 1
    predictions /= n_predictions
    return r2_score(y, predictions)


def rfpimp_oob_importances_reimplemented(model, X_train, y_train, n_repeats, seed):
    """rfpimp.oob_importances(rf, X_train, y_train, n_samples=-1), re-implemented.

    As rfpimp does: OOB R^2 of the unpermuted training rows; then for each
    column, permute it over all training rows (a pandas column assignment on
    a shallow copy), recompute the forest's OOB R^2, restore the column. rfpimp
    draws one permutation per column from numpy's global generator; here
    ``n_repeats`` permutations from a seeded generator, averaged.
    """
    rng = np.random.RandomState(seed)
    X_work = X_train.copy(deep=False)
    y = np.asarray(y_train)
    baseline = rfpimp_oob_r2(model, X_work.values, y)
    importances = {}
    for col in X_work.columns:
        save = X_work[col].copy()
        drops = []
        for _ in range(n_repeats):
            X_work[col] = rng.permutation(save.to_numpy())
            drops.append(baseline - rfpimp_oob_r2(model, X_work.values, y))
        X_work[col] = save
        importances[str(col)] = float(np.mean(drops))
    return importances


def r2_metric(model, X, y):
    """The metric rfpimp.permutation_importances calls: metric(model, X, y)."""
    return r2_score(y, model.predict(X))


def import_rfpimp():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import rfpimp
    except Exception as exc:  # ImportError, or rfpimp failing at import time
        return None, f"rfpimp cannot be imported: {type(exc).__name__}: {exc}"
    return rfpimp, None


# --------------------------------------------------------------------------
# the benchmark


def benchmark(args):
    revision = package_revision()
    X, y = load_data(args.data)
    X_train, X_valid, y_train, y_valid = train_test_split(
        X, y, test_size=0.2, random_state=0
    )
    n_estimators = N_ESTIMATORS
    if args.quick:
        n_estimators = QUICK_N_ESTIMATORS
        X_train, y_train = (
            X_train.iloc[:QUICK_TRAIN_ROWS],
            y_train.iloc[:QUICK_TRAIN_ROWS],
        )
    n_runs = args.repeats
    model = RandomForestRegressor(n_estimators=n_estimators, random_state=0)
    print(
        f"Fitting RandomForestRegressor(n_estimators={n_estimators}, "
        f"random_state=0) on {len(X_train):,} rows (timed: median of "
        f"{max(3, n_runs)} identical fits) ...",
        flush=True,
    )
    # Every fit is identical (random_state=0); the last one is the model used.
    fit_seconds, model = median_time(
        lambda: clone(model).fit(X_train, y_train), max(3, n_runs)
    )

    predict_runs = max(3, n_runs)
    predict_valid, _ = median_time(lambda: model.predict(X_valid), predict_runs)
    predict_train, _ = median_time(lambda: model.predict(X_train), predict_runs)
    valid_r2 = model.score(X_valid, y_valid)
    print(
        f"fit {fit_seconds:.2f} s; predict {len(X_valid):,} validation rows "
        f"{predict_valid:.3f} s, {len(X_train):,} training rows "
        f"{predict_train:.3f} s; validation R^2 {valid_r2:.3f}",
        flush=True,
    )
    per_rows = {"valid": predict_valid, "train": predict_train, "none": predict_train}

    rfpimp, rfpimp_error = import_rfpimp()
    rows = []

    def add(method, implementation, where, repeats, func, convert, *, fits=False):
        row = Row(method, implementation, where, repeats)
        rows.append(row)
        return run(
            row,
            func,
            convert,
            n_runs,
            per_rows[where],
            fit_seconds if fits else None,
        )

    def add_rfpimp(method, name, where, repeats, func, *, fits=False):
        if rfpimp is None:
            row = Row(method, f"rfpimp.{name}", where, repeats, error=rfpimp_error)
            rows.append(row)
            return row

        def call():
            # rfpimp draws its permutations from numpy's global generator
            np.random.seed(SEED)  # noqa: NPY002
            return func()

        return add(
            method, f"rfpimp.{name}", where, repeats, call, from_rfpimp, fits=fits
        )

    R = str(N_REPEATS)

    print("Timing (median of", n_runs, "runs):", flush=True)
    # --- MDI ---------------------------------------------------------------
    add(
        "MDI",
        "sklearn_fimp.mdi_importance",
        "none",
        "-",
        lambda: mdi_importance(model),
        from_bunch,
    )
    add(
        "MDI",
        "scikit-learn feature_importances_",
        "none",
        "-",
        lambda: model.feature_importances_,
        lambda values: dict(zip(FEATURES, map(float, values))),
    )
    add(
        "MDI-oob",
        "sklearn_fimp.oob_mdi_importance",
        "train",
        "-",
        lambda: oob_mdi_importance(model, X_train, y_train),
        from_bunch,
    )

    # --- permutation on validation rows ------------------------------------
    add(
        "permutation (validation)",
        "sklearn_fimp.permutation_importance",
        "valid",
        R,
        lambda: permutation_importance(
            model, X_valid, y_valid, n_repeats=N_REPEATS, random_state=SEED
        ),
        from_bunch,
    )
    add(
        "permutation (validation)",
        "sklearn.inspection.permutation_importance",
        "valid",
        R,
        lambda: sk_permutation_importance(
            model, X_valid, y_valid, n_repeats=N_REPEATS, random_state=SEED
        ),
        lambda result: from_bunch(result, FEATURES),
    )
    add_rfpimp(
        "permutation (validation)",
        "importances(n_samples=-1)",
        "valid",
        "1",
        lambda: rfpimp.importances(model, X_valid.copy(), y_valid.copy(), n_samples=-1),
    )
    add_rfpimp(
        "permutation (validation)",
        "permutation_importances(r2, n_samples=-1)",
        "valid",
        "1",
        lambda: rfpimp.permutation_importances(
            model, X_valid.copy(), y_valid.copy(), r2_metric, n_samples=-1
        ),
    )

    # --- out-of-bag permutation --------------------------------------------
    oob_forest = add(
        "OOB permutation, forest level",
        "sklearn_fimp.oob_permutation_importance",
        "train",
        R,
        lambda: oob_permutation_importance(
            model, X_train, y_train, n_repeats=N_REPEATS, random_state=SEED
        ),
        from_bunch,
    )
    oob_rfpimp = add_rfpimp(
        "OOB permutation, forest level",
        "oob_importances(n_samples=-1)",
        "train",
        "1",
        lambda: rfpimp.oob_importances(
            model, X_train.copy(), y_train.copy(), n_samples=-1
        ),
    )
    if oob_rfpimp.error is not None:
        add(
            "OOB permutation, forest level",
            "rfpimp algorithm, re-implemented (rfpimp's own code does not run "
            f"on scikit-learn {SKLEARN_VERSION})",
            "train",
            R,
            lambda: rfpimp_oob_importances_reimplemented(
                model, X_train.copy(), y_train.copy(), N_REPEATS, SEED
            ),
            lambda importances: importances,
        )
    add(
        "OOB permutation, per tree (Breiman)",
        "sklearn_fimp.oob_permutation_importance(per_tree=True)",
        "train",
        R,
        lambda: oob_permutation_importance(
            model,
            X_train,
            y_train,
            per_tree=True,
            n_repeats=N_REPEATS,
            random_state=SEED,
        ),
        from_bunch,
    )

    # --- drop-column --------------------------------------------------------
    add(
        "drop-column (OOB score)",
        "sklearn_fimp.drop_column_importance(cv=None)",
        "train",
        "-",
        lambda: drop_column_importance(model, X_train, y_train, random_state=SEED),
        from_bunch,
        fits=True,
    )
    add_rfpimp(
        "drop-column (OOB score)",
        "oob_dropcol_importances",
        "train",
        "-",
        lambda: rfpimp.oob_dropcol_importances(model, X_train.copy(), y_train.copy()),
        fits=True,
    )
    add_rfpimp(
        "drop-column (validation score)",
        "dropcol_importances(X_valid, y_valid)",
        "valid",
        "-",
        lambda: rfpimp.dropcol_importances(
            model, X_train.copy(), y_train.copy(), X_valid.copy(), y_valid.copy()
        ),
        fits=True,
    )

    oob_r2 = None
    if oob_forest.error is None:
        oob_r2 = oob_permutation_importance(
            model, X_train, y_train, random_state=SEED
        ).baseline_score
    context = {
        "n_estimators": n_estimators,
        "n_train": len(X_train),
        "n_valid": len(X_valid),
        "fit_seconds": fit_seconds,
        "predict_valid": predict_valid,
        "predict_train": predict_train,
        "valid_r2": valid_r2,
        "oob_r2": oob_r2,
        "n_runs": n_runs,
        "revision": revision,
        "rfpimp_version": version("rfpimp") if rfpimp is not None else None,
    }
    return rows, context


# --------------------------------------------------------------------------
# output


def package_revision():
    """Git commit of the repository, "+ local changes" when sklearn_fimp/ has
    uncommitted edits (read once, when the benchmark imports the package)."""
    return git_commit("sklearn_fimp", changed="+ local changes")


def table_cells(rows, context):
    """Header and body cells of the timing table."""
    header = [
        "Method",
        "Implementation",
        "Rows",
        "Repeats",
        "Time (s)",
        "x predict",
        "x fit",
        "Ranking (most important first)",
    ]
    n_rows = {"valid": context["n_valid"], "train": context["n_train"]}
    body = []
    for row in rows:
        where = (
            "none (tree nodes)"
            if row.rows == "none"
            else f"{row.rows} ({n_rows[row.rows]:,})"
        )
        body.append(
            [
                row.method,
                row.implementation,
                where,
                row.repeats,
                "-" if row.seconds is None else f"{row.seconds:.3f}",
                "-" if row.ratio is None else f"{row.ratio:.1f}",
                "" if row.fits is None else f"{row.fits:.1f}",
                row.ranking,
            ]
        )
    return header, body


def importance_cells(rows):
    header = ["Implementation", *FEATURES]
    body = [
        [
            row.implementation,
            *(f"{row.importances.get(f, np.nan):.4f}" for f in FEATURES),
        ]
        for row in rows
        if row.error is None
    ]
    return header, body


def rst_text(text):
    """Escape what RST would read as markup: ``*`` and a trailing ``_``
    (``feature_importances_`` would be a hyperlink reference)."""
    text = str(text).replace("*", r"\*")
    return re.sub(r"(?<=\w)_(?=\W|$)", r"\_", text)


def rst_list_table(title, header, body):
    """A list-table whose cells are escaped (an empty one is a space)."""
    cells = [[rst_text(cell) or " " for cell in row] for row in [header, *body]]
    return "\n".join(list_table(title, cells[0], cells[1:]))


def machine_lines(context):
    return [
        f"cores (os.cpu_count()): {os.cpu_count()}",
        f"platform: {platform.platform()} ({platform.machine()})",
        versions("numpy", "scikit-learn", "pandas")
        + f", rfpimp {context['rfpimp_version'] or 'not installed'}, "
        f"sklearn_fimp {version('sklearn_fimp')} (git {context['revision']})",
    ]


def setup_lines(context):
    oob = "" if context["oob_r2"] is None else f", OOB R^2 {context['oob_r2']:.3f}"
    return [
        "data: rent.csv; target log(price); features bathrooms, bedrooms, "
        'longitude, latitude and a uniform random column "random" (seed 0)',
        f"model: RandomForestRegressor(n_estimators={context['n_estimators']}, "
        "random_state=0), n_jobs=None (one process), fitted on "
        f"{context['n_train']:,} training rows (80% split, random_state=0); "
        f"{context['n_valid']:,} validation rows",
        f"model quality: validation R^2 {context['valid_r2']:.3f}{oob}",
        f"one fit: {context['fit_seconds']:.2f} s; one predict: "
        f"{context['predict_valid']:.3f} s on the validation rows, "
        f"{context['predict_train']:.3f} s on the training rows (each the "
        f"median of {max(3, context['n_runs'])} runs)",
        f"times: median of {context['n_runs']} run(s) of time.perf_counter; "
        "every importance function at its default n_jobs (None)",
    ]


NOTES = [
    "x predict: time divided by one model.predict over the rows the method "
    "evaluates (validation rows for validation methods, training rows for "
    "out-of-bag methods; plain MDI reads the tree nodes only and is divided "
    "by the training-rows predict). x fit: time divided by one model.fit.",
    "Repeats: permutations per feature. sklearn_fimp's "
    "oob_permutation_importance defaults to n_repeats=1; it is called with "
    "n_repeats=5 here, like the validation methods. rfpimp's permutation "
    "functions have no n_repeats and permute each column once, so they do "
    "about 1/5 of the work of the 5-repeat rows.",
    "rfpimp functions receive copies of the frames (rfpimp assigns permuted "
    "columns into the frames it is given) and np.random is seeded before each "
    "call. n_samples=-1 makes rfpimp use every row instead of its default "
    "sample of 5,000 rows drawn with replacement.",
    "The re-implemented rfpimp algorithm follows rfpimp.oob_importances with "
    "n_samples=-1: permute a column over all training rows, let every tree "
    "predict its out-of-bag rows (from estimators_samples_), average per row, "
    "take R^2; one full pass over the trees per column and permutation.",
    "drop-column: sklearn_fimp refits with the model's random_state (0) and "
    "scores each refit by its OOB R^2; rfpimp refits with random_state=999.",
]


def render_plain(rows, context, argv):
    header, body = table_cells(rows, context)
    iheader, ibody = importance_cells(rows)
    parts = [
        "Feature importance benchmark (sklearn_fimp vs scikit-learn vs rfpimp)",
        "",
        *machine_lines(context),
        *setup_lines(context),
        f"command: {command_line('bench_importance.py', argv)}",
        "",
        text_table(header, body),
        "",
        "importances_mean per feature",
        "",
        text_table(iheader, ibody),
        "",
        *(f"* {note}" for note in NOTES),
    ]
    return "\n".join(parts)


def render_rst(rows, context, argv):
    header, body = table_cells(rows, context)
    iheader, ibody = importance_cells(rows)
    lines = [
        *written_by("bench_importance.py"),
        *heading("Benchmark: feature importance methods"),
        "",
        "sklearn_fimp's importance functions timed side by side with "
        "``sklearn.inspection.permutation_importance`` and rfpimp on the "
        "rent data set.",
        "",
        f"- date: {utc_stamp()}",
        *(f"- {rst_text(line)}" for line in machine_lines(context)),
        *(f"- {rst_text(line)}" for line in setup_lines(context)),
        "",
        *reproduce(command_line("bench_importance.py", argv)),
        rst_list_table("Timings and rankings", header, body),
        "",
        rst_list_table("importances_mean per feature", iheader, ibody),
        "",
        "Notes:",
        "",
        *(f"- {rst_text(note)}" for note in NOTES),
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.quick:
        args.repeats = 1
        if rent_missing(args.data):  # the whole benchmark runs on it
            skip("bench_importance.py", rent_missing(args.data))
            return
    rows, context = benchmark(args)
    print()
    print(render_plain(rows, context, argv))
    if not args.no_write:
        write_page(DOCS_FILE, render_rst(rows, context, argv), quick=args.quick)


if __name__ == "__main__":
    main()
