"""Calibration and cost of distributed_select_features on Spark.

**Calibration.** Data sets where the truth is known, each selected on a
Spark DataFrame (local mode) by ``distributed_select_features`` with a
pyspark.ml forest of Spark's defaults (``numTrees=20, maxDepth=5``), its
defaults otherwise (10 rounds, "auto" probes) and ``alpha=0.05`` with Holm's
correction (the calibration page's level: at most 5% of data sets may keep
any noise feature). Per regime and method: the data sets with any noise
feature kept, with the Clopper-Pearson 95% upper bound of that share, and
(regimes with signal) the mean share of informative features kept.

Regimes (name: task, rows, columns):

- ``null-reg-1000``: regression, pure noise, 1,000 rows: 4 N(0, 1) and 4
  three-level columns, y N(0, 1) independent of them.
- ``signal-bin-1000``: binary, 1,000 rows: y drawn from a logistic model of
  3 N(0, 1) columns (coefficients 1.5, 1, 0.75); noise: 3 N(0, 1) and 2
  three-level columns.

**Cost.** On ``--cost-rows`` rows generated on the cluster (``spark.range``
and Spark's ``rand``: Friedman's first function of ten uniform columns, x5
to x9 pure noise, cached as a user's data would be): one plain fit of the
same forest against ``distributed_select_features`` with each method, in one
run, and what each selected.

Run from the repository root::

    python bench/bench_distributed_selection.py            # the page
    python bench/bench_distributed_selection.py --quick    # seconds, writes nothing

Rows are appended to ``--log`` as they finish, and a run resumes from it:
a data set is run again only when the log has no row of it with the same
rows, rounds and ``--repeats`` (``n_repeats`` as passed, the function's
default unless told; a row without it was run with 5, the default).
``--minutes`` stops starting data sets after that much calibration and
reports those done; the cost runs after, in the same process. The page's
note compares the rows of other ``n_repeats`` of "permutation" in the log
(issue 58 measured "auto", one permutation per column in each round)::

    python bench/bench_distributed_selection.py --repeats auto --minutes 30

Without pyspark or Java the script says so and exits.
"""

import argparse
import inspect
import json
import math
import os
import shutil
import sys
import time
import warnings
from pathlib import Path

import _common

ALPHA = 0.05
MASTER = "local[2]"
REGIMES = ("null-reg-1000", "signal-bin-1000")
METHODS = ("permutation", "mdi")
#: ``n_repeats`` of "permutation" of the rows that do not say (before
#: issue 58)
OLD_REPEATS = 5
LOG = _common.BENCH / "bench_distributed_selection_rows.jsonl"
PAGE = _common.DOCS / "bench_distributed_selection.rst"


def start_spark(partitions):
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(_common.ROOT), os.environ.get("PYTHONPATH")])
    )
    spark = (
        SparkSession.builder.master(MASTER)
        .appName("bench_distributed_selection")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def regime_data(regime, seed, n_rows):
    """``(frame, features, informative, task)`` of one data set, in memory."""
    import numpy as np
    import pandas as pd

    rng = np.random.RandomState(seed)
    if regime == "null-reg-1000":
        normal = rng.normal(size=(n_rows, 4))
        levels = rng.randint(3, size=(n_rows, 4)).astype(float)
        X = np.hstack([normal, levels])
        y = rng.normal(size=n_rows)
        informative, task = [], "regression"
    else:
        signal = rng.normal(size=(n_rows, 3))
        logit = signal @ np.array([1.5, 1.0, 0.75])
        y = (rng.uniform(size=n_rows) < 1 / (1 + np.exp(-logit))).astype(float)
        noise = np.hstack(
            [rng.normal(size=(n_rows, 3)), rng.randint(3, size=(n_rows, 2))]
        )
        X = np.hstack([signal, noise])
        informative, task = [0, 1, 2], "classification"
    features = [f"x{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=features)
    frame["y"] = y
    return frame, features, informative, task


def forest(task):
    from pyspark.ml.classification import RandomForestClassifier
    from pyspark.ml.regression import RandomForestRegressor

    cls = RandomForestClassifier if task == "classification" else RandomForestRegressor
    return cls(numTrees=20, maxDepth=5, labelCol="y")


def repeats_given(method, repeats):
    """``n_repeats`` as a row records it: None for "mdi", which has none."""
    return repeats if method == "permutation" else None


def row_repeats(row):
    """The ``n_repeats`` a logged row was run with (``repeats_given``)."""
    default = OLD_REPEATS if row["method"] == "permutation" else None
    return row.get("n_repeats", default)


def function_default(name):
    from sklearn_fimp import distributed_select_features

    return inspect.signature(distributed_select_features).parameters[name].default


def parse_repeats(value):
    return value if value == "auto" else int(value)


def calibration_row(spark, regime, seed, method, args):
    from sklearn_fimp import distributed_select_features

    frame, features, informative, task = regime_data(regime, seed, args.rows)
    data = spark.createDataFrame(frame).repartition(2)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = distributed_select_features(
            forest(task),
            data,
            "y",
            features=features,
            method=method,
            n_rounds=args.rounds,
            alpha=ALPHA,
            n_repeats=args.repeats,
            random_state=seed,
        )
    seconds = time.perf_counter() - start
    kept = [int(j) for j in result.support.nonzero()[0]]
    return dict(
        regime=regime,
        seed=seed,
        method=method,
        rows=args.rows,
        rounds=args.rounds,
        n_repeats=repeats_given(method, args.repeats),
        repeats=result.n_repeats,
        kept=kept,
        noise_kept=sum(j not in informative for j in kept),
        informative=len(informative),
        informative_kept=sum(j in informative for j in kept),
        seconds=seconds,
    )


def read_log(path):
    if not Path(path).exists():
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def clopper_pearson_upper(k, n, level=0.95):
    from scipy import stats

    return 1.0 if k >= n else float(stats.beta.ppf(level, k + 1, n - k))


def same_design(row, regime, method, args, repeats):
    return (
        row["regime"] == regime
        and row["method"] == method
        and row["rows"] == args.rows
        and row["rounds"] == args.rounds
        and row_repeats(row) == repeats_given(method, repeats)
    )


def counts(chosen):
    """``(data sets, any noise kept, informative kept or None)``."""
    n = len(chosen)
    errors = sum(r["noise_kept"] > 0 for r in chosen)
    power = None
    if chosen[0]["informative"]:
        share = sum(r["informative_kept"] / r["informative"] for r in chosen)
        power = share / n
    return n, errors, power


def calibration_table(rows, args):
    header = [
        "regime",
        "method",
        "data sets",
        "any noise kept",
        "95% upper bound",
        "informative kept",
        "s per data set",
    ]
    table = []
    for regime in REGIMES:
        for method in METHODS:
            chosen = [
                r for r in rows if same_design(r, regime, method, args, args.repeats)
            ]
            if not chosen:
                continue
            n, errors, power = counts(chosen)
            power = "n/a" if power is None else f"{power:.2f}"
            seconds = sorted(r["seconds"] for r in chosen)[n // 2]
            table.append(
                [
                    regime,
                    method,
                    str(n),
                    f"{errors}/{n}",
                    f"{clopper_pearson_upper(errors, n):.2f}",
                    power,
                    f"{seconds:.0f}",
                ]
            )
    return header, table


def repeats_note(rows, args):
    """How "permutation" fared with each other ``n_repeats`` in the log
    against ``args.repeats`` (the table's), per regime (empty without
    other rows)."""
    others = {row_repeats(r) for r in rows if r["method"] == "permutation"} - {
        args.repeats
    }
    sentences = []
    for other in sorted(others, key=str):
        figures = []
        for regime in REGIMES:
            chosen = [
                [r for r in rows if same_design(r, regime, "permutation", args, value)]
                for value in (args.repeats, other)
            ]
            if not all(chosen):
                continue
            seeds = {r["seed"] for r in chosen[1]}
            chosen[0] = [r for r in chosen[0] if r["seed"] in seeds]
            described = []
            for value, rows_of in zip((args.repeats, other), chosen):
                n, errors, power = counts(rows_of)
                text = f"with {value!r}, noise kept in {errors}/{n} data sets"
                if power is not None:
                    text += f" and informative kept {power:.2f}"
                described.append(text)
            figures.append(f"{regime}, seeds of both: " + ", ".join(described))
        if not figures:
            continue
        resolved = {r.get("repeats") for r in rows if r.get("n_repeats") == other} - {
            None
        }
        each = ", ".join(str(value) for value in sorted(resolved)) or other
        sentences.append(
            f"'permutation' with ``n_repeats={other!r}`` ({each} permutation(s) "
            "per column in each round; issue 58 measured 'auto', the in-memory "
            "selector's, on the first seeds) against the "
            f"table's ``n_repeats={args.repeats!r}``: "
            + "; ".join(figures)
            + ". 'mdi' measures no permutation."
        )
    return [line for sentence in sentences for line in ("", sentence)]


def cost_data(spark, n_rows, seed):
    """Friedman's first function of ten uniform columns, generated and
    cached on the cluster."""
    from pyspark.sql import functions as F

    frame = spark.range(n_rows).repartition(4)
    for j in range(10):
        frame = frame.withColumn(f"x{j}", F.rand(seed + j))
    y = (
        10 * F.sin(F.lit(3.141592653589793) * F.col("x0") * F.col("x1"))
        + 20 * (F.col("x2") - 0.5) ** 2
        + 10 * F.col("x3")
        + 5 * F.col("x4")
        + F.randn(seed + 99)
    )
    frame = frame.withColumn("y", y).drop("id").cache()
    frame.count()
    return frame, [f"x{j}" for j in range(10)]


def cost_rows(spark, args):
    from pyspark.ml.feature import VectorAssembler

    from sklearn_fimp import distributed_select_features

    frame, features = cost_data(spark, args.cost_rows, 0)
    assembled = VectorAssembler(inputCols=features, outputCol="features")
    vectors = assembled.transform(frame).cache()
    vectors.count()
    rows = []
    start = time.perf_counter()
    forest("regression").fit(vectors)
    rows.append(dict(what="one plain fit", seconds=time.perf_counter() - start))
    vectors.unpersist()
    for method in METHODS:
        start = time.perf_counter()
        result = distributed_select_features(
            forest("regression"),
            frame,
            "y",
            features=features,
            method=method,
            n_rounds=args.cost_rounds,
            random_state=0,
        )
        rows.append(
            dict(
                what=f"distributed_select_features, method={method!r}",
                seconds=time.perf_counter() - start,
                selected=result.selected,
            )
        )
    frame.unpersist()
    return rows


def cost_table(rows):
    fit = rows[0]["seconds"]
    header = ["run", "seconds", "plain fits", "selected"]
    table = [
        [
            row["what"],
            f"{row['seconds']:.1f}",
            f"{row['seconds'] / fit:.1f}",
            ", ".join(row.get("selected", [])) or "n/a",
        ]
        for row in rows
    ]
    return header, table


def page(calibration, cost, args, command, note=()):
    lines = _common.written_by("bench_distributed_selection.py")
    lines += _common.heading("Benchmark: feature selection on Spark")
    lines += [
        "",
        ":func:`~sklearn_fimp.distributed_select_features` on Spark in local "
        f"mode ({MASTER}, Spark {_common.distribution_version('pyspark')}) on a "
        f"2-core machine, {_common.utc_stamp()}, commit "
        f"{_common.git_commit(changed='+ local changes')}, "
        f"{_common.versions('scikit-learn', 'sklearn_fimp')}; load average at "
        f"the end {_common.load_average()}.",
        "",
    ]
    lines += _common.reproduce(command)
    lines += _common.heading("Calibration", "-")
    lines += [
        "",
        f"Data sets of {args.rows:,} rows where the truth is known, each "
        "selected with a pyspark.ml random forest of Spark's defaults "
        f"(20 trees, depth 5), {args.rounds} rounds, 'auto' probes, "
        f"``n_repeats={args.repeats!r}`` for 'permutation', "
        f"``alpha={ALPHA}`` with Holm's correction: a valid test keeps any "
        "noise feature in at most 5% of data sets. The regimes are described "
        "in the script's docstring. The rows come from "
        f"``{_common.shown(args.log or 'no log (--quick)')}``, appended as "
        "each data set finished (by this run or the runs it resumed).",
        "",
    ]
    lines += _common.list_table(None, *calibration)
    lines += list(note)
    lines += [""]
    lines += _common.heading("Cost", "-")
    lines += [
        "",
        f"{args.cost_rows:,} rows of Friedman's first function (x0 to x4 "
        "informative, x5 to x9 noise) generated and cached on the cluster; "
        "one plain fit of the same forest (on an assembled, cached vector "
        f"column) against the selection with its defaults ({args.cost_rounds} "
        "rounds, ``alpha=0.01``), in one run.",
        "",
    ]
    lines += _common.list_table(None, *cost)
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=60)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--cost-rows", type=int, default=200_000)
    parser.add_argument("--cost-rounds", type=int, default=10)
    parser.add_argument(
        "--repeats",
        type=parse_repeats,
        default=function_default("n_repeats"),
        help='n_repeats of "permutation" ("auto" or an int)',
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=math.inf,
        help="start no data set after this many minutes of calibration",
    )
    parser.add_argument("--log", default=str(LOG))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    if args.quick:
        args.datasets, args.rows, args.rounds, args.cost_rows = 1, 300, 2, 2000
        args.cost_rounds = 2
        args.log = None
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("pyspark is not installed: nothing to measure.")
        return
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        print("Spark needs Java: no java on PATH and no JAVA_HOME.")
        return
    spark = start_spark(partitions=2)
    rows = read_log(args.log) if args.log else []
    start = time.perf_counter()
    for seed in range(args.datasets):
        for regime in REGIMES:
            for method in METHODS:
                done = any(
                    r["seed"] == seed
                    and same_design(r, regime, method, args, args.repeats)
                    for r in rows
                )
                if done or time.perf_counter() - start > 60 * args.minutes:
                    continue
                row = calibration_row(spark, regime, seed, method, args)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.log:
                    with open(args.log, "a") as f:
                        f.write(json.dumps(row) + "\n")
    calibration = calibration_table(rows, args)
    print(_common.text_table(*calibration))
    cost = cost_table(cost_rows(spark, args))
    print(_common.text_table(*cost))
    command = _common.command_line("bench_distributed_selection.py", argv)
    note = repeats_note(rows, args)
    print(*note, sep="\n")
    text = page(calibration, cost, args, command, note)
    _common.write_page(PAGE, text, quick=args.quick or args.no_write)
    spark.stop()


if __name__ == "__main__":
    main()
