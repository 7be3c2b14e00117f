"""Benchmark of feature selection at scale: time and peak memory by rows.

Runs ``ImportanceSelector(RandomForestClassifier(n_estimators=100,
min_samples_leaf=5), method="oob_permutation", refit=False)`` on
``make_classification(n_features=100, n_informative=10, n_redundant=10)``
stored as float32, at 100k, 300k and 1M rows (``--sizes``), and reports how
time and peak memory grow with the number of rows.

Each size runs in a child process of its own, so that its peak resident
memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) is the selector's and
not a previous size's. The data are generated once in the parent and saved
to a ``.npy`` file that the child loads, so the peak does not include the
float64 array ``make_classification`` builds. The child reports:

- the peak RSS after loading X (the interpreter, libraries and X),
- the peak RSS at the end (everything the selection needed at once),
- the size of X (``X.nbytes``) and of the fitted model (its pickle),
- the time of the whole ``fit``, and (up to ``--fit-time-max-rows`` rows)
  of a plain ``fit`` of the same forest on X with the selector's probe
  columns appended, which tells fitting from measuring importances.

``ratio`` is the peak RSS divided by the size of X plus the size of the
model; 3 is the target for 1M rows. The machine's 15-minute load average at
the end of each size is recorded too: on a shared machine, a load above the
number of cores means the timings are upper bounds.

Run from the repository root::

    python bench/bench_scale.py                      # 100k, 300k, 1M
    python bench/bench_scale.py --sizes 100000 300000
    python bench/bench_scale.py --timeout 7200       # seconds per size

A size that exceeds ``--timeout`` is killed and reported as such. Results
are written to docs/bench_scale.rst (``--no-write`` to skip).
"""

import argparse
import datetime
import json
import os
import pickle
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sklearn

ROOT = Path(__file__).resolve().parents[1]
DOCS_TABLE = ROOT / "docs" / "bench_scale.rst"
N_FEATURES = 100
MIB = 2**20


def make_data(n_rows, directory):
    """Write X (float32) and y for ``n_rows`` rows; return the file paths."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n_rows,
        n_features=N_FEATURES,
        n_informative=10,
        n_redundant=10,
        random_state=0,
    )
    x_path = Path(directory) / f"X_{n_rows}.npy"
    y_path = Path(directory) / f"y_{n_rows}.npy"
    np.save(x_path, X.astype(np.float32))
    np.save(y_path, y)
    return x_path, y_path


def peak_rss_bytes():
    """Peak resident set size of this process (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(x_path, y_path, fit_time, n_jobs):
    """Run one size and print a JSON line with its figures."""
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier

    from sklearn_fimp import ImportanceSelector
    from sklearn_fimp._selector import add_probes

    X = np.load(x_path)
    y = np.load(y_path)
    loaded = peak_rss_bytes()
    forest = RandomForestClassifier(
        n_estimators=100, min_samples_leaf=5, n_jobs=n_jobs, random_state=0
    )
    figures = {"rows": int(X.shape[0]), "x_bytes": int(X.nbytes)}
    if fit_time:
        names = np.asarray([f"x{i}" for i in range(X.shape[1])], dtype=object)
        groups = [np.array([j]) for j in range(X.shape[1])]
        X_probed, _, _ = add_probes(
            X, groups, names, "shadow", X.shape[1], np.random.RandomState(0)
        )
        start = time.perf_counter()
        clone(forest).fit(X_probed, y)
        figures["fit_seconds"] = time.perf_counter() - start
        del X_probed
    selector = ImportanceSelector(
        forest,
        method="oob_permutation",
        refit=False,
        n_jobs=n_jobs,
        random_state=0,
    )
    start = time.perf_counter()
    selector.fit(X, y)
    figures["selector_seconds"] = time.perf_counter() - start
    figures["peak_rss_bytes"] = peak_rss_bytes()
    figures["loaded_rss_bytes"] = loaded
    figures["model_bytes"] = len(
        pickle.dumps(selector.estimator_, protocol=pickle.HIGHEST_PROTOCOL)
    )
    figures["n_selected"] = int(selector.support_.sum())
    figures["n_columns_measured"] = len(selector.importances_.importances_mean)
    print(json.dumps(figures), flush=True)


def run_size(n_rows, directory, timeout, fit_time, n_jobs):
    """Run one size in a child process; its figures, or why it stopped."""
    x_path, y_path = make_data(n_rows, directory)
    command = [
        sys.executable,
        __file__,
        "--child",
        str(x_path),
        str(y_path),
        "--n-jobs",
        str(n_jobs),
    ]
    if fit_time:
        command.append("--fit-time")
    start = time.perf_counter()
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"rows": n_rows, "status": f"killed after {timeout:.0f} s"}
    finally:
        x_path.unlink(missing_ok=True)
        y_path.unlink(missing_ok=True)
    if completed.returncode != 0:
        tail = completed.stderr.strip().splitlines()[-3:]
        return {
            "rows": n_rows,
            "status": f"exit code {completed.returncode}: {' | '.join(tail)}",
            "wall_seconds": time.perf_counter() - start,
        }
    figures = json.loads(completed.stdout.strip().splitlines()[-1])
    figures["status"] = "ok"
    return figures


def describe(figures):
    if figures["status"] != "ok":
        return f"{figures['rows']:>9,} rows: {figures['status']}"
    ratio = figures["peak_rss_bytes"] / (figures["x_bytes"] + figures["model_bytes"])
    fit = figures.get("fit_seconds")
    return (
        f"{figures['rows']:>9,} rows: selector {figures['selector_seconds']:8.1f} s"
        + ("" if fit is None else f" (plain fit {fit:.1f} s)")
        + f", peak RSS {figures['peak_rss_bytes'] / MIB:8.0f} MiB"
        f" (after loading X {figures['loaded_rss_bytes'] / MIB:.0f} MiB),"
        f" X {figures['x_bytes'] / MIB:.0f} MiB,"
        f" model {figures['model_bytes'] / MIB:.0f} MiB, ratio {ratio:.2f}"
    )


def write_rst(results, command, n_jobs, path):
    import sklearn_fimp

    now = datetime.datetime.now(datetime.timezone.utc)
    lines = [
        ".. This file is written by bench/bench_scale.py; do not edit it.",
        "",
        "Benchmark: selection at scale (time and peak memory by rows)",
        "============================================================",
        "",
        f"- date: {now:%Y-%m-%d %H:%M} UTC",
        f"- cores (os.cpu_count()): {os.cpu_count()}, n_jobs={n_jobs}",
        f"- Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, sklearn_fimp {sklearn_fimp.__version__}",
        "- ``ImportanceSelector(RandomForestClassifier(n_estimators=100, "
        'min_samples_leaf=5), method="oob_permutation", refit=False)`` on '
        "make_classification with 100 float32 features (100 shadow probes "
        "are added, so 200 columns are measured, n_repeats=5)",
        "- peak RSS: ``ru_maxrss`` of a child process per size; ratio: peak "
        "RSS / (X.nbytes + pickled size of the fitted forest)",
        "",
        "Reproduce from the repository root with::",
        "",
        f"    {command}",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - Rows",
        "     - Status",
        "     - Selector fit (s)",
        "     - Plain forest fit (s)",
        "     - Peak RSS (MiB)",
        "     - RSS after loading X (MiB)",
        "     - X (MiB)",
        "     - Model (MiB)",
        "     - Ratio",
        "     - Load (15 min)",
    ]
    for figures in results:
        ok = figures["status"] == "ok"
        cells = [f"{figures['rows']:,}", figures["status"]]
        if ok:
            ratio = figures["peak_rss_bytes"] / (
                figures["x_bytes"] + figures["model_bytes"]
            )
            fit = figures.get("fit_seconds")
            cells += [
                f"{figures['selector_seconds']:.1f}",
                "" if fit is None else f"{fit:.1f}",
                f"{figures['peak_rss_bytes'] / MIB:.0f}",
                f"{figures['loaded_rss_bytes'] / MIB:.0f}",
                f"{figures['x_bytes'] / MIB:.0f}",
                f"{figures['model_bytes'] / MIB:.0f}",
                f"{ratio:.2f}",
            ]
        else:
            cells += [""] * 7
        load = figures.get("load_average")
        cells.append("" if load is None else f"{load:.1f}")
        lines.append(f"   * - {cells[0]}")
        lines.extend(f"     - {cell}" for cell in cells[1:])
    ok = [f for f in results if f["status"] == "ok"]
    if len(ok) >= 2:
        first, last = ok[0], ok[-1]
        growth = last["selector_seconds"] / first["selector_seconds"]
        lines += [
            "",
            f"From {first['rows']:,} to {last['rows']:,} rows "
            f"({last['rows'] / first['rows']:.0f}x), the selector's time grew "
            f"{growth:.1f}x and its peak RSS "
            f"{last['peak_rss_bytes'] / first['peak_rss_bytes']:.1f}x.",
        ]
    path.write_text("\n".join(lines) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000]
    )
    parser.add_argument("--timeout", type=float, default=4 * 3600)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument(
        "--fit-time-max-rows",
        type=int,
        default=300_000,
        help="also time a plain forest fit at sizes up to this many rows",
    )
    parser.add_argument("--fit-time", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("X_PATH", "Y_PATH"))
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child, args.fit_time, args.n_jobs)
        return
    command = " ".join(
        ["python bench/bench_scale.py", *(sys.argv[1:] if argv is None else argv)]
    )
    results = []
    with tempfile.TemporaryDirectory() as directory:
        for n_rows in args.sizes:
            fit_time = n_rows <= args.fit_time_max_rows
            figures = run_size(n_rows, directory, args.timeout, fit_time, args.n_jobs)
            figures["load_average"] = os.getloadavg()[2]
            print(describe(figures), flush=True)
            results.append(figures)
            if not args.no_write:  # after every size: a long run keeps its rows
                write_rst(results, command, args.n_jobs, DOCS_TABLE)


if __name__ == "__main__":
    main()
