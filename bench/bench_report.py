"""Benchmark of the report command on wide, long and real data.

Times ``python -m sklearn_fimp report`` as a whole process, with its
default settings (every row, the default methods MDI, permutation and
drop-column, ImportanceSelector, the dependence step and the comparison of
ordinary with conditional permutation), on two generated
regression tables written to CSV files:

- wide: 2,000 rows x 100 numeric columns;
- long: 200,000 rows x 20 numeric columns.

In both, the target depends on five columns (``x0`` linearly, ``x1``
squared, ``x2`` through a sine, ``x3 * x4``) plus noise, and ``x5`` is a
noisy copy of ``x0`` (a redundant feature); the other columns are noise.
The New York rental listings of ``../shared/data/rent.csv`` (49,352 rows,
target ``price``, with ``--log-target``; target 60 s) are timed too when the
file is there; when it is not, the script and the page say so
(``--no-rent`` leaves them out). The file is read where it is, never copied.

For each run the script records the wall time of the whole process, its
CPU time (user + system, of the child process), the time of each stage as
the command prints it on stderr, the methods measured (over
``--time-budget``, drop-column gives way to out-of-bag permutation, or,
with 10,000 held-out rows or more, to the held-out permutation alone), and
the machine's 1-minute load average before and after. On a machine shared with other
work, a load above the number of cores means the wall times are upper
bounds; the CPU time is less affected.

Run from the repository root::

    PYTHONPATH=. python bench/bench_report.py            # wide, long, rent
    PYTHONPATH=. python bench/bench_report.py --only wide --n-jobs 2
    PYTHONPATH=. python bench/bench_report.py --no-rent
    PYTHONPATH=. python bench/bench_report.py --quick    # seconds, no docs

Results are written to docs/bench_report.rst (``--no-write`` to skip).
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import (
    DOCS,
    RENT_CSV,
    git_commit,
    heading,
    list_table,
    rent_missing,
    utc_stamp,
    versions,
    write_page,
    written_by,
)

RENT = RENT_CSV
DOCS_FILE = DOCS / "bench_report.rst"
SIZES = {"wide": (2000, 100), "long": (200000, 20)}
TARGETS = {"wide": 60.0, "long": 120.0, "rent": 60.0}
#: --quick: a table of seconds, and the report's options that keep it so
QUICK_SIZE = (300, 8)
QUICK_OPTIONS = ["--n-estimators", "10", "--dependence-trees", "5", "--top", "5"]
#: Seconds between two samples of the load average while a report runs.
LOAD_EVERY = 2.0
STAGE = re.compile(r"^sklearn-fimp: (.+?)(?:: done,| \.\.\.) (\d+\.\d) s$")


def make_table(n_rows, n_features, seed=0):
    """The generated regression table (see the module docstring)."""
    import pandas as pd

    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, n_features))
    X[:, 5] = X[:, 0] + 0.1 * rng.normal(size=n_rows)
    y = (
        2 * X[:, 0]
        + X[:, 1] ** 2
        + np.sin(3 * X[:, 2])
        + 0.5 * X[:, 3] * X[:, 4]
        + 0.5 * rng.normal(size=n_rows)
    )
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(n_features)])
    frame["y"] = y
    return frame


def run_report(path, target, extra, n_jobs, out):
    """Run the command in a child process; its wall and CPU time, stages,
    exit status and the tail of stderr."""
    command = [sys.executable, "-m", "sklearn_fimp", "report", str(path)]
    command += ["--target", target, "--out", str(out), "--n-jobs", str(n_jobs)]
    command += list(extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = load_highest = os.getloadavg()[0]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, stdout=out, stderr=err, text=True)
        while child.poll() is None:
            time.sleep(LOAD_EVERY)
            load_highest = max(load_highest, os.getloadavg()[0])
        wall = time.perf_counter() - started
        err.seek(0)
        stderr = err.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stages = []
    for line in stderr.splitlines():
        match = STAGE.match(line)
        if match:
            stages.append((match.group(1), float(match.group(2))))
    methods = (
        "MDI, permutation, drop-column"
        if "drop-column importance ..." in stderr
        else ""
    )
    if "over --time-budget: out-of-bag permutation instead" in stderr:
        methods = "MDI, permutation, out-of-bag permutation (drop-column over budget)"
    elif "over --time-budget: left out" in stderr:
        methods = "MDI, permutation (drop-column over the budget, left out)"
    return {
        "status": child.returncode,
        "wall": wall,
        "cpu": cpu,
        "stages": stages,
        "load": (load_before, load_highest, os.getloadavg()[0]),
        "methods": methods,
        "stderr": stderr.strip().splitlines()[-3:],
    }


def page(rows, n_jobs, notes):
    lines = [
        *written_by("bench_report.py"),
        ".. _bench_report:",
        "",
        *heading("Benchmark: the report command on wide, long and real data"),
        "",
        f"- date: {utc_stamp()}, commit {git_commit(changed='+ uncommitted changes')}",
        f"- cores (os.cpu_count()): {os.cpu_count()}, --n-jobs {n_jobs}",
        "- " + versions("numpy", "scikit-learn", "sklearn_fimp"),
        "- ``python -m sklearn_fimp report DATA.csv --target y`` with its "
        "defaults: every row; forests of 100 trees, each on at most "
        "--tree-rows 10000 rows, a regression split choosing among a third "
        "of the features; MDI, permutation (at most 10 shuffles, 50,000 "
        "shuffled rows per column, at least 2) and drop-column, which over "
        "--time-budget 60 s gives way to out-of-bag permutation (at most 5 "
        "shuffles, same rule), or to nothing with 10,000 held-out rows or "
        "more; ImportanceSelector, 10 rounds of --selector-trees 30 trees; "
        "dependence of the --top 20 features on "
        "--dependence-rows 2000 rows with --dependence-trees 30 "
        "(docs/user_guide.rst, the report's section, says why)",
        "- rent: ``../shared/data/rent.csv`` (New York rental listings), "
        "``--target price --log-target``, read in place",
        "- wall: the whole process, in-script measurement; CPU: user + system "
        "time of the process; load: 1-minute load average before / highest "
        "while it ran (sampled every 2 s) / after (above the number of cores, "
        "other work shared the machine and the wall time is an upper bound)",
        "",
        "Reproduce from the repository root with::",
        "",
        "    PYTHONPATH=. python bench/bench_report.py",
        "",
    ]
    body = []
    for name, shape, target, result in rows:
        stages = "; ".join(
            f"{stage} {seconds:.1f}" for stage, seconds in result["stages"]
        )
        status = "" if result["status"] == 0 else f" (exit {result['status']})"
        body.append(
            [
                f"{name}: {shape[0]:,} x {shape[1]}",
                target if target else "none",
                f"{result['wall']:.1f}{status}",
                f"{result['cpu']:.1f}",
                " / ".join(f"{load:.1f}" for load in result["load"]),
                result["methods"] or "as chosen",
                stages,
            ]
        )
    lines += list_table(
        None,
        [
            "Data",
            "Target (s)",
            "Wall (s)",
            "CPU (s)",
            "Load",
            "Importances measured",
            "Stages (s)",
        ],
        body,
    )
    lines += [""] + notes
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(SIZES), action="append")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--no-rent",
        dest="rent",
        action="store_false",
        help="do not time the rent listings",
    )
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run in seconds: one {QUICK_SIZE[0]} x {QUICK_SIZE[1]} "
        f"table, with {' '.join(QUICK_OPTIONS)}, one job; fails when the "
        "report does; prints the page",
    )
    args = parser.parse_args(argv)
    sizes, extra = SIZES, []
    if args.quick:
        sizes, extra = {"quick": QUICK_SIZE}, QUICK_OPTIONS
        args.only, args.n_jobs, args.rent = ["quick"], 1, False
    rows, notes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or sorted(SIZES, reverse=True):
            shape = sizes[name]
            path = Path(tmp) / f"{name}.csv"
            make_table(*shape).to_csv(path, index=False)
            result = run_report(path, "y", extra, args.n_jobs, Path(tmp) / "r.html")
            print(
                f"{name} {shape[0]}x{shape[1]}: wall {result['wall']:.1f} s, "
                f"cpu {result['cpu']:.1f} s, load "
                + "/".join(f"{load:.1f}" for load in result["load"])
                + f", status {result['status']}",
                flush=True,
            )
            for stage, seconds in result["stages"]:
                print(f"    {stage}: {seconds:.1f} s")
            if result["status"]:
                print("\n".join(result["stderr"]))
                if args.quick:
                    raise SystemExit(f"the report exited with {result['status']}")
            rows.append((name, shape, TARGETS.get(name), result))
        if args.rent:
            if not rent_missing(RENT):
                import pandas as pd

                shape = pd.read_csv(RENT, nrows=1).shape[1] - 1
                with open(RENT, "rb") as file:
                    n_rows = sum(1 for _ in file) - 1
                result = run_report(
                    RENT, "price", ["--log-target"], args.n_jobs, Path(tmp) / "r.html"
                )
                print(
                    f"rent: wall {result['wall']:.1f} s, cpu {result['cpu']:.1f} s, "
                    "load " + "/".join(f"{load:.1f}" for load in result["load"]),
                    flush=True,
                )
                for stage, seconds in result["stages"]:
                    print(f"    {stage}: {seconds:.1f} s")
                rows.append(
                    (
                        "rent.csv (price, --log-target)",
                        (n_rows, shape),
                        TARGETS["rent"],
                        result,
                    )
                )
            else:
                message = f"{rent_missing(RENT)}: the rent listings were not timed."
                print(message)
                notes.append(message)
    if not args.no_write:
        write_page(DOCS_FILE, page(rows, args.n_jobs, notes), quick=args.quick)


if __name__ == "__main__":
    main()
