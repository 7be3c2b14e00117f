"""Memory and time of the tree engine on many evaluation rows.

Issue 3 asks that permutation importance on 1,000,000 rows x 100 features
run in a few GiB: the engine never makes a permuted copy of X per feature,
routes rows in chunks whose routing fits a fixed budget, and, beyond one
chunk, sums accuracy chunk by chunk.

Each measurement runs in a fresh child process, which reports its peak
resident memory (``resource.getrusage``, ru_maxrss) and the seconds spent;
the child first builds the data and the model, whose memory is reported
too, so the engine's own share is the difference. Data:
make_classification(n_features=100, n_informative=10, n_redundant=10,
random_state=0) as float32; RandomForestClassifier(n_estimators=100,
min_samples_leaf=5, random_state=0) fitted on 50,000 separate rows;
``permutation_importance(n_repeats=1)`` of every feature on the evaluation
rows.

Run from the repository root::

    python bench/bench_engine_memory.py                 # 100k, 300k, 1M rows
    python bench/bench_engine_memory.py --rows 20000    # a quick check
"""

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOCS_TABLE = ROOT / "docs" / "bench_engine_memory.rst"
N_FEATURES = 100
TRAIN_ROWS = 50_000


def peak_bytes():
    # ru_maxrss is in KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(n_rows, n_jobs):
    """Build data and model, then time permutation_importance; print JSON."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from sklearn_fimp import permutation_importance

    X, y = make_classification(
        n_samples=TRAIN_ROWS + n_rows,
        n_features=N_FEATURES,
        n_informative=10,
        n_redundant=10,
        random_state=0,
    )
    X = X.astype(np.float32)
    X_train, y_train = X[:TRAIN_ROWS], y[:TRAIN_ROWS]
    X_eval, y_eval = np.ascontiguousarray(X[TRAIN_ROWS:]), y[TRAIN_ROWS:]
    del X
    model = RandomForestClassifier(
        n_estimators=100, min_samples_leaf=5, random_state=0, n_jobs=-1
    ).fit(X_train, y_train)
    model.set_params(n_jobs=None)
    model_bytes = sum(
        tree.tree_.node_count * (64 + 8 * tree.tree_.value.shape[-1])
        for tree in model.estimators_
    )
    start = time.perf_counter()
    model.predict(X_eval)
    predict_seconds = time.perf_counter() - start
    before = peak_bytes()
    start = time.perf_counter()
    result = permutation_importance(
        model, X_eval, y_eval, n_repeats=1, random_state=0, n_jobs=n_jobs
    )
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "rows": n_rows,
                "n_jobs": n_jobs,
                "X_bytes": X_eval.nbytes,
                "model_bytes": model_bytes,
                "peak_before": before,
                "peak": peak_bytes(),
                "seconds": seconds,
                "predict_seconds": predict_seconds,
                "top_feature": int(np.argmax(result.importances_mean)),
            }
        )
    )


def run(n_rows, n_jobs):
    completed = subprocess.run(
        [sys.executable, __file__, "--child", str(n_rows), "--n-jobs", str(n_jobs)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode:
        raise SystemExit(f"child for {n_rows} rows failed:\n{completed.stderr}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def gib(n_bytes):
    return n_bytes / 2**30


def write_rst(results, command):
    import sklearn

    import sklearn_fimp

    lines = [
        ".. This file is written by bench/bench_engine_memory.py; do not edit it.",
        "",
        "Benchmark: memory of the tree engine on many rows",
        "=================================================",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- cores (os.cpu_count()): {os.cpu_count()}",
        f"- Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, sklearn_fimp {sklearn_fimp.__version__}",
        "- permutation_importance(n_repeats=1) of 100 float32 features; "
        "RandomForestClassifier(100 trees, min_samples_leaf=5) fitted on 50,000 "
        "other rows",
        "",
        "Reproduce from the repository root with::",
        "",
        f"    {command}",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - Rows",
        "     - n_jobs",
        "     - X (GiB)",
        "     - Peak before (GiB)",
        "     - Peak (GiB)",
        "     - Engine's extra (GiB)",
        "     - Time (s)",
        "     - x predict per feature",
    ]
    for r in results:
        extra = r["peak"] - r["peak_before"]
        lines += [
            f"   * - {r['rows']:,}",
            f"     - {r['n_jobs']}",
            f"     - {gib(r['X_bytes']):.2f}",
            f"     - {gib(r['peak_before']):.2f}",
            f"     - {gib(r['peak']):.2f}",
            f"     - {gib(extra):.2f}",
            f"     - {r['seconds']:.1f}",
            f"     - {r['seconds'] / N_FEATURES / r['predict_seconds']:.3f}",
        ]
    lines += [
        "",
        "*Peak before* is the child's peak after building the data (float64, then "
        "float32) and fitting the model; *engine's extra* is how much the peak "
        "grew during permutation_importance.",
        "",
    ]
    DOCS_TABLE.write_text("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[100_000, 300_000, 1_000_000]
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child, args.n_jobs)
        return
    results = []
    for n_rows in args.rows:
        r = run(n_rows, args.n_jobs)
        results.append(r)
        per_feature = r["seconds"] / N_FEATURES / r["predict_seconds"]
        print(
            f"{n_rows:>9,} rows: X {gib(r['X_bytes']):.2f} GiB, peak before "
            f"{gib(r['peak_before']):.2f} GiB, peak {gib(r['peak']):.2f} GiB, "
            f"{r['seconds']:.1f} s ({per_feature:.3f} x predict per feature)",
            flush=True,
        )
    if not args.no_write:
        command = "python bench/bench_engine_memory.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        write_rst(results, command.strip())
        print(f"wrote {DOCS_TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
