"""Memory and time of the tree engine on many evaluation rows.

Issues 3 and 16 ask that permutation importance on 1,000,000 rows x 100
features run in a few GiB, on a random forest and on HistGradientBoosting:
the engine never makes a permuted copy of X per feature, routes rows in
chunks whose routing fits a fixed budget, and, beyond one chunk, sums
accuracy chunk by chunk.

Each measurement runs in a fresh child process, which loads the data
(written as float32 by the parent), fits the model, then reports its
resident memory before the call, its peak resident memory
(``resource.getrusage``, ru_maxrss) before and after, and the seconds spent;
the engine's own share is the peak during the call (Linux's VmHWM, reset
just before it) minus the resident memory before it. Data:
make_classification(n_features=100, n_informative=10, n_redundant=10,
random_state=0) as float32; a model fitted on 50,000 separate rows
(``--model``: ``forest``, RandomForestClassifier(n_estimators=100,
min_samples_leaf=5, random_state=0); ``hgb``,
HistGradientBoostingClassifier(max_iter=200, early_stopping=False,
random_state=0), as W3 of ``bench_permutation.py``);
``permutation_importance(n_repeats=1)`` of every feature on the evaluation
rows.

Each model's last results are kept in ``bench/bench_engine_memory.json``,
and the page has one table per model in it, so that one model can be
measured again without the other. Run from the repository root::

    python bench/bench_engine_memory.py                 # forest: 100k, 300k, 1M rows
    OMP_NUM_THREADS=1 python bench/bench_engine_memory.py --model hgb
    python bench/bench_engine_memory.py --rows 20000 --no-write  # a check
    python bench/bench_engine_memory.py --quick        # seconds, writes nothing

HistGradientBoosting predicts with OpenMP threads: OMP_NUM_THREADS=1 keeps
its ``predict`` (the baseline score, and the time it is compared with) on
one core, as the forest's.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _common import (
    BENCH,
    DOCS,
    command_line,
    heading,
    list_table,
    load_average,
    reproduce,
    shown,
    timed,
    utc_stamp,
    versions,
    write_page,
    written_by,
)

DOCS_TABLE = DOCS / "bench_engine_memory.rst"
SAVED = BENCH / "bench_engine_memory.json"
#: the machine's load average when the run started (other processes share
#: its cores, and slow the times down, not the memory)
LOAD_AT_START = load_average()
N_FEATURES = 100
TRAIN_ROWS = 50_000
#: --quick: evaluation rows, training rows, and trees (or boosting
#: iterations) of the model
QUICK = {"rows": 2_000, "train_rows": 2_000, "trees": 10}
#: the trees of the forest or iterations of the boosting (None: as described)
TREES = None


def peak_bytes():
    # ru_maxrss is in KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def reset_peak():
    """Reset the peak resident memory (VmHWM) where Linux allows it, so that
    the peak measured after a call is the call's own; True on success."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return True


def high_water_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return peak_bytes()


def make_data(n_rows, folder):
    """Write the training and evaluation rows (float32) to ``folder``, so
    that the child's peak memory starts from X, not from generating it."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=TRAIN_ROWS + n_rows,
        n_features=N_FEATURES,
        n_informative=10,
        n_redundant=10,
        random_state=0,
    )
    np.save(folder / "X.npy", X.astype(np.float32))
    np.save(folder / "y.npy", y)


def fitted_forest(X_train, y_train):
    """The forest, and the bytes of its node arrays."""
    from sklearn.ensemble import RandomForestClassifier

    model = RandomForestClassifier(
        n_estimators=TREES or 100, min_samples_leaf=5, random_state=0, n_jobs=-1
    ).fit(X_train, y_train)
    model.set_params(n_jobs=None)
    model_bytes = sum(
        tree.tree_.node_count * (64 + 8 * tree.tree_.value.shape[-1])
        for tree in model.estimators_
    )
    return model, model_bytes


def fitted_hist_boosting(X_train, y_train):
    """The HistGradientBoosting model, and the bytes of its predictors'
    nodes."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_iter=TREES or 200, early_stopping=False, random_state=0
    ).fit(X_train, y_train)
    model_bytes = sum(
        predictor.nodes.nbytes
        for iteration in model._predictors
        for predictor in iteration
    )
    return model, model_bytes


#: per model: how to fit it, and how the page describes it
MODELS = {
    "forest": (
        fitted_forest,
        "RandomForestClassifier(100 trees, min_samples_leaf=5)",
        "scikit-learn's node arrays",
    ),
    "hgb": (
        fitted_hist_boosting,
        "HistGradientBoostingClassifier(max_iter=200, early_stopping=False)",
        "the predictors' node arrays",
    ),
}


def child(folder, n_jobs, model_name):
    """Fit the model, then time permutation_importance; print JSON."""
    from sklearn_fimp import permutation_importance

    X, y = np.load(folder / "X.npy"), np.load(folder / "y.npy")
    X_train, y_train = X[:TRAIN_ROWS], y[:TRAIN_ROWS]
    X_eval, y_eval = X[TRAIN_ROWS:], y[TRAIN_ROWS:]
    model, model_bytes = MODELS[model_name][0](X_train, y_train)
    predict_seconds, _ = timed(lambda: model.predict(X_eval))
    resident, peak_before = resident_bytes(), peak_bytes()
    if reset_peak():
        peak_before = 0  # the peak below is the call's own
    seconds, result = timed(
        lambda: permutation_importance(
            model, X_eval, y_eval, n_repeats=1, random_state=0, n_jobs=n_jobs
        )
    )
    print(
        json.dumps(
            {
                "rows": len(y_eval),
                "n_jobs": n_jobs,
                "X_bytes": X_eval.nbytes,
                "model_bytes": model_bytes,
                "resident": resident,
                "peak_before": peak_before,
                "peak": high_water_bytes(),
                "seconds": seconds,
                "predict_seconds": predict_seconds,
                "top_feature": int(np.argmax(result.importances_mean)),
            }
        )
    )


def run(n_rows, n_jobs, model_name, quick=False):
    with tempfile.TemporaryDirectory() as folder:
        make_data(n_rows, Path(folder))
        completed = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                folder,
                "--n-jobs",
                str(n_jobs),
                "--model",
                model_name,
                *(["--quick"] if quick else []),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    if completed.returncode:
        raise SystemExit(f"child for {n_rows} rows failed:\n{completed.stderr}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def gib(n_bytes):
    return n_bytes / 2**30


def extra(r):
    """The engine's peak memory above the resident memory before the call."""
    if r["peak"] > r["peak_before"]:
        return f"{gib(r['peak'] - r['resident']):.2f}"
    return f"<= {gib(r['peak_before'] - r['resident']):.2f}"


def run_record(results, command):
    """What the page says of one model's run: its results, and when, how
    and with which versions it was measured."""
    return {
        "date": utc_stamp(),
        "command": command,
        "cores": os.cpu_count(),
        "versions": versions("numpy", "scikit-learn", "sklearn_fimp"),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset"),
        "load_at_start": LOAD_AT_START,
        "results": results,
    }


def model_table(name, record):
    """The page's section of one model."""
    _, description, model_column = MODELS[name]
    lines = [
        *heading(f"{description}, fitted on 50,000 other rows", "-"),
        "",
        f"- date: {record['date']}",
        f"- cores (os.cpu_count()): {record['cores']}",
        f"- {record['versions']}",
        f"- OMP_NUM_THREADS={record['omp_num_threads']}",
        "- load average (1, 5, 15 min) when the run started: "
        + record.get("load_at_start", "not recorded"),
        f"- the model column counts {model_column}",
        "",
        *reproduce(record["command"]),
    ]
    lines += list_table(
        None,
        [
            "Rows",
            "n_jobs",
            "X (GiB)",
            "Model (GiB)",
            "Resident before (GiB)",
            "Peak (GiB)",
            "Engine's extra (GiB)",
            "Time (s)",
            "x predict per feature",
        ],
        [
            [
                f"{r['rows']:,}",
                r["n_jobs"],
                f"{gib(r['X_bytes']):.2f}",
                f"{gib(r['model_bytes']):.2f}",
                f"{gib(r['resident']):.2f}",
                f"{gib(r['peak']):.2f}",
                extra(r),
                f"{r['seconds']:.1f}",
                f"{r['seconds'] / N_FEATURES / r['predict_seconds']:.3f}",
            ]
            for r in record["results"]
        ],
    )
    return [*lines, ""]


def page(saved):
    """The page: one section per model in ``saved`` (the JSON's records)."""
    lines = [
        *written_by("bench_engine_memory.py"),
        *heading("Benchmark: memory of the tree engine on many rows"),
        "",
        "permutation_importance(n_repeats=1) of 100 float32 features "
        "(make_classification) on many evaluation rows, one table per model, "
        "each from the last run of ``bench/bench_engine_memory.py`` on that "
        "model (kept in ``bench/bench_engine_memory.json``).",
        "",
        "*Resident before* is the child's memory after loading the data and "
        "fitting the model; *engine's extra* is the peak during "
        "permutation_importance minus that (an upper bound, marked <=, when "
        "the call did not raise the peak reached while fitting); *x predict "
        "per feature* is the time divided by 100 features and by one "
        "``predict`` of the evaluation rows.",
        "",
    ]
    for name in MODELS:
        if name in saved:
            lines += model_table(name, saved[name])
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[100_000, 300_000, 1_000_000]
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument(
        "--model",
        choices=list(MODELS),
        default="forest",
        help="the model measured (default: forest)",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--no-write",
        action="store_true",
        help=f"do not write {shown(SAVED)} and {shown(DOCS_TABLE)}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run in seconds: {QUICK['rows']:,} evaluation rows, a "
        f"model of {QUICK['trees']} trees on {QUICK['train_rows']:,} rows; "
        f"prints the page, writes neither {shown(SAVED)} nor the docs",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.quick:
        global TRAIN_ROWS, TREES
        TRAIN_ROWS, TREES = QUICK["train_rows"], QUICK["trees"]
        args.rows = [QUICK["rows"]]
    if args.child is not None:
        child(args.child, args.n_jobs, args.model)
        return
    results = []
    for n_rows in args.rows:
        r = run(n_rows, args.n_jobs, args.model, args.quick)
        results.append(r)
        per_feature = r["seconds"] / N_FEATURES / r["predict_seconds"]
        print(
            f"{args.model} {n_rows:>9,} rows: X {gib(r['X_bytes']):.2f} GiB, model "
            f"{gib(r['model_bytes']):.2f} GiB, resident before "
            f"{gib(r['resident']):.2f} GiB, peak {gib(r['peak']):.2f} GiB, engine's "
            f"extra {extra(r)} GiB, {r['seconds']:.1f} s ({per_feature:.3f} x "
            "predict per feature)",
            flush=True,
        )
    if not args.no_write:
        command = command_line(
            "bench_engine_memory.py", argv, environment=("OMP_NUM_THREADS",)
        )
        record = run_record(results, command)
        if args.quick:  # this run's table alone, printed
            write_page(DOCS_TABLE, page({args.model: record}), quick=True)
            return
        saved = json.loads(SAVED.read_text()) if SAVED.is_file() else {}
        saved[args.model] = record
        SAVED.write_text(json.dumps(saved, indent=1) + "\n")
        print(f"wrote {shown(SAVED)}")
        write_page(DOCS_TABLE, page(saved))


if __name__ == "__main__":
    main()
