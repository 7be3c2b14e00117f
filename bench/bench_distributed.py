"""Benchmark of distributed_permutation_importance on Spark (and on Dask).

Compares, on the same Spark data and in one run per size:

1. **ours**: ``sklearn_fimp.distributed_permutation_importance`` on the
   Spark DataFrame read from Parquet: one global permutation per repeat that
   each row computes for itself, one exchange of ``1 + n_repeats`` copies of
   the rows, the tree engine in each partition, only sums to the driver;
2. **one feature at a time** (H2O's design, implemented here on Spark; H2O
   is not installed): H2O's permutation importance shuffles one column of
   the frame, scores the model on the whole frame with that column
   replaced, takes the change of the metric, and does so for each feature
   and each repeat. Here: the rows get a consecutive index once and are
   cached; for each feature and repeat, the column's values are given
   random keys, ranked by key (a shuffle by key bucket and a row number in
   each bucket) and joined back to the rows by index, and the model scores
   the whole permuted DataFrame (``model.transform`` of a pyspark.ml model,
   ``mapInPandas`` for a Python model) with the squared errors summed by a
   Spark aggregation. It measures the same quantity as ours (the drop in
   R² when the column is permuted over all rows), with other permutations;
3. **collect, then in memory**: ``toPandas()`` of the same DataFrame, then
   ``sklearn_fimp.permutation_importance`` on the driver (for a pyspark.ml
   model, on ``SparkTreeModel.from_spark(model)``, whose reading time is
   reported apart), the collect and the computation timed separately.

Models: a pyspark.ml ``RandomForestRegressionModel`` and a
``GBTRegressionModel`` fitted on the cluster, and a LightGBM
``LGBMRegressor`` fitted in memory on a sample collected to the driver and
scored on the Spark DataFrame of columns ("trained on a sample, scored on
everything"). All three are fitted on ``TRAIN_ROWS`` rows of their own (the
same generator, another seed) and measured on every size.

Data: Friedman's first regression function (``y = 10 sin(pi x0 x1) + 20
(x2 - 0.5)**2 + 10 x3 + 5 x4 + N(0, 1)``) of ten uniform features, x5 to x9
pure noise, written once per size to Parquet files of at most
``FILE_ROWS`` rows (at least two) in a temporary directory, which Spark and
Dask read as users' data.

Ours also runs on Dask (``distributed.LocalCluster``, two worker processes
of one thread each, an explicit memory limit, the p2p buffers at 32 MiB) on
the same Parquet files through ``dask.dataframe.read_parquet``, with the
pyspark.ml models' snapshots.

At the smallest size, each of ours' results is also checked exactly:
the collected rows, permuted in memory with ``permutation_sources`` (the
permutations ours used), predicted and scored, give the same importances.

Memory: Spark runs in local mode (``local[2]``: the executor is the
driver's JVM, so ``spark.driver.memory`` is its heap; the Python workers
that run ``mapInPandas`` and the pandas UDFs are processes of their own).
For each stage, the peak resident memory (``VmHWM`` of ``/proc``, reset
through ``/proc/PID/clear_refs`` when the stage starts and read every 0.1 s
while it runs) of the driver's Python process, of the JVM, and of each
Python worker (Spark's ``pyspark.daemon`` and its forks, or Dask's worker
processes), the workers' peaks added.

Run from the repository root::

    python bench/bench_distributed.py                    # 100k and 1M rows
    python bench/bench_distributed.py --sizes 100000 --no-write
    python bench/bench_distributed.py --quick            # seconds, writes nothing

Without pyspark or Java the script says so and exits (Dask's runs are
skipped, saying so, without dask.distributed). The page is written to
docs/bench_distributed.rst after every size (``--no-write`` to skip).
"""

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
from _common import (
    DOCS,
    ROOT,
    command_line,
    git_commit,
    heading,
    list_table,
    load_average,
    missing,
    reproduce,
    skip,
    text_table,
    timed,
    utc_stamp,
    versions,
    write_page,
    written_by,
)

DOCS_TABLE = DOCS / "bench_distributed.rst"
LOAD_AT_START = load_average()
MIB = 2**20

N_FEATURES = 10
FEATURES = [f"x{j}" for j in range(N_FEATURES)]
LABEL = "y"
#: rows each model is fitted on (a data set of their own)
TRAIN_ROWS = 100_000
#: rows of one Parquet file (each size has at least two files)
FILE_ROWS = 500_000
SIZES = [100_000, 1_000_000]
N_REPEATS = 3
SEED = 0
#: Spark: local mode on the machine's two cores
MASTER = "local[2]"
DRIVER_MEMORY = "4g"
SHUFFLE_PARTITIONS = 8
#: Dask: two worker processes of one thread each
DASK_WORKERS = 2
DASK_MEMORY_LIMIT = "4GiB"
DASK_CONFIG = {
    "distributed.p2p.comm.buffer": "32 MiB",
    "distributed.p2p.storage.buffer": "32 MiB",
}
#: the models (keyword arguments of their estimators)
RF = {"numTrees": 20, "maxDepth": 8}
GBT = {"maxIter": 20, "maxDepth": 5}
LGBM = {"n_estimators": 100, "num_leaves": 31}
#: --quick: sizes, training rows, models and repeats
QUICK = {
    "sizes": [4_000],
    "train_rows": 4_000,
    "rf": {"numTrees": 3, "maxDepth": 4},
    "gbt": {"maxIter": 3, "maxDepth": 3},
    "lgbm": {"n_estimators": 10, "num_leaves": 15},
    "n_repeats": 1,
    # the one-feature-at-a-time design timed on two pairs, the rest estimated
    "h2o_max_rows": 0,
    "h2o_permutations": 2,
}
MODEL_NAMES = {
    "rf": "Spark RandomForest",
    "gbt": "Spark GBT",
    "lgbm": "LightGBM (sample)",
}


# --------------------------------------------------------------------------
# data


def friedman(n_rows, rng):
    """Friedman's first function of ten uniform features (x5-x9 noise)."""
    X = rng.uniform(size=(n_rows, N_FEATURES))
    y = (
        10 * np.sin(np.pi * X[:, 0] * X[:, 1])
        + 20 * (X[:, 2] - 0.5) ** 2
        + 10 * X[:, 3]
        + 5 * X[:, 4]
        + rng.normal(size=n_rows)
    )
    return X, y


def write_parquet(n_rows, directory, seed):
    """``n_rows`` rows in Parquet files of at most FILE_ROWS rows (at least
    two files, so that Dask has a partition per core too)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    directory.mkdir(parents=True)
    n_files = max(2, -(-n_rows // FILE_ROWS))
    bounds = np.linspace(0, n_rows, n_files + 1).astype(int)
    for i, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        X, y = friedman(stop - start, np.random.default_rng([seed, i]))
        table = pa.table({**{c: X[:, j] for j, c in enumerate(FEATURES)}, LABEL: y})
        pq.write_table(table, directory / f"part-{i:05d}.parquet")


def make_data(n_rows, directory, seed):
    """Write the Parquet files in a child process, so that the driver's
    memory does not hold the generated arrays."""
    subprocess.run(
        [
            sys.executable,
            __file__,
            "--make-data",
            str(n_rows),
            str(directory),
            str(seed),
        ],
        check=True,
    )
    return sum(path.stat().st_size for path in Path(directory).glob("*.parquet"))


# --------------------------------------------------------------------------
# memory of the processes of a stage


def _status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _parents():
    """{pid: parent pid} of the machine's processes."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    # the command may hold spaces: the fields after its ')'
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def descendants(pid):
    """The processes descended from ``pid``."""
    parents = _parents()
    found, frontier = [], [pid]
    while frontier:
        children = [p for p, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def command(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def spark_processes():
    """(JVM pid, [pids of its Python workers]) of this driver's Spark."""
    jvms = [p for p in descendants(os.getpid()) if "java" in command(p).split(" ")[0]]
    if not jvms:
        return None, []
    jvm = jvms[0]
    workers = [p for p in descendants(jvm) if "pyspark" in command(p)]
    return jvm, workers


class PeakMemory:
    """Peak resident memory of groups of processes during a ``with`` block.

    ``groups``: {name: function returning the group's pids}. When the block
    starts, each process's peak (``VmHWM``) is reset through
    ``/proc/PID/clear_refs``; while it runs, a thread reads every process's
    peak each ``interval`` seconds (and finds processes started meanwhile),
    so that a process that ends keeps its last peak. ``peaks[name]`` is the
    sum of the group's processes' peaks, in bytes.
    """

    def __init__(self, groups, interval=0.1):
        self.groups = groups
        self.interval = interval
        self.seen = {name: {} for name in groups}
        self.reset_ok = True
        #: the group's resident memory when the block starts, in bytes
        self.start = {}

    def _read(self):
        for name, pids in self.groups.items():
            for pid in pids():
                peak = _status_kib(pid, "VmHWM:")
                if peak is not None:
                    self.seen[name][pid] = peak * 1024

    def _watch(self):
        while not self._stop.wait(self.interval):
            self._read()

    def __enter__(self):
        for name, pids in self.groups.items():
            resident = [_status_kib(pid, "VmRSS:") for pid in pids()]
            self.start[name] = 1024 * sum(filter(None, resident))
            for pid in pids():
                try:
                    with open(f"/proc/{pid}/clear_refs", "w") as clear_refs:
                        clear_refs.write("5")
                except OSError:
                    self.reset_ok = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._read()
        self.peaks = {name: sum(seen.values()) for name, seen in self.seen.items()}
        return False


def spark_memory():
    """PeakMemory of the driver's Python, the JVM and the Python workers."""
    return PeakMemory(
        {
            "driver": lambda: [os.getpid()],
            "jvm": lambda: [p for p in [spark_processes()[0]] if p is not None],
            "workers": lambda: spark_processes()[1],
        }
    )


# --------------------------------------------------------------------------
# Spark


def start_spark():
    from pyspark.sql import SparkSession

    # the Python workers run this interpreter and import this checkout
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    spark = (
        SparkSession.builder.master(MASTER)
        .appName("bench_distributed")
        .config("spark.driver.memory", DRIVER_MEMORY)
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_settings(spark):
    conf = spark.sparkContext.getConf()
    names = [
        "spark.master",
        "spark.driver.memory",
        "spark.executor.memory",
        "spark.sql.shuffle.partitions",
        "spark.sql.adaptive.enabled",
        "spark.sql.execution.arrow.maxRecordsPerBatch",
    ]
    settings = {}
    for name in names:
        settings[name] = conf.get(name)
        if settings[name] is None:
            try:
                settings[name] = spark.conf.get(name)
            except Exception:  # neither set nor a SQL setting with a default
                settings[name] = "not set"
    return settings


def assembler():
    from pyspark.ml.feature import VectorAssembler

    return VectorAssembler(inputCols=FEATURES, outputCol="features")


def fit_models(spark, train_path, params):
    """The three fitted models, their fitting seconds, and the LightGBM
    sample's size."""
    import lightgbm
    from pyspark.ml.regression import GBTRegressor, RandomForestRegressor

    train = assembler().transform(spark.read.parquet(str(train_path)))
    models, seconds = {}, {}
    for key, estimator in (
        ("rf", RandomForestRegressor(labelCol=LABEL, seed=SEED, **params["rf"])),
        ("gbt", GBTRegressor(labelCol=LABEL, seed=SEED, **params["gbt"])),
    ):
        start = time.perf_counter()
        models[key] = estimator.fit(train)
        seconds[key] = time.perf_counter() - start
    # the LightGBM user: a sample collected to the driver, fitted in memory
    start = time.perf_counter()
    sample = spark.read.parquet(str(train_path)).toPandas()
    model = lightgbm.LGBMRegressor(
        **params["lgbm"], random_state=SEED, n_jobs=2, verbose=-1
    ).fit(sample[FEATURES], sample[LABEL])
    # one thread per process from here on: Spark runs two tasks at a time
    models["lgbm"] = model.set_params(n_jobs=1)
    seconds["lgbm"] = time.perf_counter() - start
    return models, seconds


def read_model(model):
    """(seconds, snapshot, nodes) of ``SparkTreeModel.from_spark`` (no
    public name: the engine's adapter module holds it)."""
    from sklearn_fimp._engine.adapters._spark_ml import SparkTreeModel

    start = time.perf_counter()
    snapshot = SparkTreeModel.from_spark(model)
    seconds = time.perf_counter() - start
    return seconds, snapshot, sum(tree.node_count for tree in snapshot.trees_)


def spark_frame(spark, path, key):
    """The DataFrame a user scores: the Parquet columns, plus the feature
    vector for a pyspark.ml model."""
    frame = spark.read.parquet(str(path))
    return assembler().transform(frame) if key in ("rf", "gbt") else frame


def ours_on_spark(model, frame, key, n_repeats):
    from sklearn_fimp import distributed_permutation_importance

    if key in ("rf", "gbt"):  # the target and the vector column: the model's
        return distributed_permutation_importance(
            model, frame, n_repeats=n_repeats, random_state=SEED
        )
    return distributed_permutation_importance(
        model, frame, LABEL, features=FEATURES, n_repeats=n_repeats, random_state=SEED
    )


# --------------------------------------------------------------------------
# one feature at a time (H2O's design) on Spark


def indexed_rows(frame):
    """``frame``'s feature and target columns with ``_rid``, the rows'
    consecutive index ``0 .. n - 1`` in the frame's order (the offset of
    each partition, counted once, plus the row's place in it)."""
    from pyspark.sql import functions as F

    tagged = frame.select(
        *FEATURES,
        LABEL,
        F.spark_partition_id().alias("_pid"),
        F.monotonically_increasing_id().alias("_mid"),
    )
    counts = dict(tagged.groupBy("_pid").count().collect())
    sizes = [counts.get(p, 0) for p in range(max(counts) + 1)]
    offsets = F.array(*[F.lit(int(o)) for o in np.cumsum([0, *sizes[:-1]])])
    # monotonically_increasing_id: the partition id in the upper 31 bits
    place = F.col("_mid") - F.shiftleft(F.col("_pid").cast("long"), 33)
    return tagged.select(
        *FEATURES, LABEL, (offsets[F.col("_pid")] + place).alias("_rid")
    )


def permuted_column(rows, column, seed, n_buckets):
    """``rows`` with ``column`` permuted over all rows, uniformly at random:
    its values, ordered by a random key (bucketed by key, numbered by key
    within each bucket, the buckets' counts giving their offsets), go to the
    rows whose index is their rank."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keyed = rows.select(F.col(column).alias("_value"), F.rand(seed).alias("_key"))
    keyed = keyed.withColumn("_bucket", F.floor(F.col("_key") * n_buckets).cast("int"))
    counts = dict(keyed.groupBy("_bucket").count().collect())
    sizes = [counts.get(b, 0) for b in range(n_buckets)]
    offsets = F.array(*[F.lit(int(o)) for o in np.cumsum([0, *sizes[:-1]])])
    within = F.row_number().over(Window.partitionBy("_bucket").orderBy("_key"))
    ranked = keyed.select(
        "_value", (offsets[F.col("_bucket")] + within - 1).alias("_rank")
    )
    joined = rows.drop(column).join(ranked, rows["_rid"] == ranked["_rank"])
    return joined.withColumnRenamed("_value", column).drop("_rank")


def squared_error_of_spark_model(model):
    """frame -> sum of squared errors of a pyspark.ml model (its
    ``transform``, then a Spark aggregation)."""
    from pyspark.sql import functions as F

    vectors = assembler()

    def sse(frame):
        predicted = model.transform(vectors.transform(frame))
        error = (F.col(LABEL) - F.col("prediction")) ** 2
        return predicted.agg(F.sum(error)).first()[0]

    return sse


def squared_error_of_python_model(spark, model):
    """frame -> sum of squared errors of a Python model (its ``predict`` in
    ``mapInPandas``, the model broadcast once), then a Spark aggregation."""
    import pandas as pd
    from pyspark.sql import functions as F

    shared = spark.sparkContext.broadcast(model)

    def batch_sums(batches):
        for batch in batches:
            error = batch[LABEL] - shared.value.predict(batch[FEATURES])
            yield pd.DataFrame({"sse": [float(np.sum(error**2))]})

    def sse(frame):
        sums = frame.select(*FEATURES, LABEL).mapInPandas(batch_sums, "sse double")
        return sums.agg(F.sum("sse")).first()[0]

    sse.shared = shared
    return sse


def one_feature_at_a_time(frame, sse, n_repeats, seed, n_permutations=None):
    """H2O's design: importances ``(n_features, n_repeats)`` as drops in R²,
    each from one permutation of one column scored on every row; with
    ``n_permutations``, only the first ones (the rest NaN), for timing.
    Returns (importances, seconds of each permutation)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    rows = indexed_rows(frame)
    n_buckets = SHUFFLE_PARTITIONS
    rows = rows.repartition(SHUFFLE_PARTITIONS, "_rid").persist(
        StorageLevel.MEMORY_AND_DISK
    )
    variance, n_rows = rows.agg(F.var_pop(LABEL), F.count(LABEL)).first()
    total = variance * n_rows
    baseline = sse(rows)
    importances = np.full((N_FEATURES, n_repeats), np.nan)
    seconds = []
    tasks = [(j, r) for j in range(N_FEATURES) for r in range(n_repeats)]
    for j, r in tasks[:n_permutations]:
        start = time.perf_counter()
        permuted = permuted_column(
            rows, FEATURES[j], seed + j * n_repeats + r, n_buckets
        )
        importances[j, r] = (sse(permuted) - baseline) / total
        seconds.append(time.perf_counter() - start)
    rows.unpersist()
    return importances, seconds


# --------------------------------------------------------------------------
# collect, then in memory


def collect(frame):
    """(X, y) of the Parquet columns, collected to the driver."""
    table = frame.select(*FEATURES, LABEL).toPandas()
    X = table[FEATURES].to_numpy(dtype=np.float64)
    y = table[LABEL].to_numpy(dtype=np.float64)
    return X, y


def in_memory(model, X, y, key, n_repeats):
    import pandas as pd

    from sklearn_fimp import permutation_importance

    if key == "lgbm":  # fitted with names
        X = pd.DataFrame(X, columns=FEATURES)
    return permutation_importance(
        model, X, y, scoring="r2", n_repeats=n_repeats, n_jobs=2, random_state=SEED
    )


def exact_difference(result, model, X, y, key):
    """Largest difference between ours' importances and those of the
    collected rows permuted in memory with ours' permutations
    (``permutation_sources``), predicted and scored."""
    import pandas as pd
    from sklearn.metrics import r2_score

    from sklearn_fimp import permutation_sources

    def predict(rows):
        return model.predict(
            pd.DataFrame(rows, columns=FEATURES) if key == "lgbm" else rows
        )

    baseline = r2_score(y, predict(X))
    expected = np.empty_like(result.importances)
    for r in range(result.importances.shape[1]):
        sources = permutation_sources(len(y), result.random_state, r)
        for j in range(N_FEATURES):
            permuted = X.copy()
            permuted[:, j] = X[sources, j]
            expected[j, r] = baseline - r2_score(y, predict(permuted))
    return float(np.max(np.abs(expected - result.importances)))


#: differences of importances at most this are the rounding of sums added in
#: another order, not a disagreement
ROUNDING = 1e-12


def agreement(a, b):
    """(largest |mean a - mean b|, largest |difference| / its standard
    error) over features, for two (n_features, n_repeats) importances from
    independent permutations."""
    a, b = np.asarray(a), np.asarray(b)
    difference = np.abs(a.mean(axis=1) - b.mean(axis=1))
    # a feature no tree uses has importance 0 up to the rounding of sums
    # added in another order (1e-16): that is no difference
    difference[difference <= ROUNDING] = 0.0
    if a.shape[1] < 2 or b.shape[1] < 2:
        return float(difference.max()), float("nan")
    error = np.sqrt(
        a.var(axis=1, ddof=1) / a.shape[1] + b.var(axis=1, ddof=1) / b.shape[1]
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(error > 0, difference / error, np.where(difference > 0, np.inf, 0))
    return float(difference.max()), float(z.max())


# --------------------------------------------------------------------------
# Dask


def start_dask():
    import dask
    from distributed import Client, LocalCluster

    dask.config.set(DASK_CONFIG)  # for good: the workers inherit it at start
    cluster = LocalCluster(
        n_workers=DASK_WORKERS,
        threads_per_worker=1,
        processes=True,
        memory_limit=DASK_MEMORY_LIMIT,
        dashboard_address=":0",  # any free port: another cluster may run
    )
    client = Client(cluster)
    return client, cluster


def dask_memory(client):
    pids = list(client.run(os.getpid).values())
    return PeakMemory({"workers": lambda: pids})


def ours_on_dask(model, path, n_repeats):
    import dask.dataframe as dd

    from sklearn_fimp import distributed_permutation_importance

    frame = dd.read_parquet(str(path))
    return distributed_permutation_importance(
        model, frame, LABEL, features=FEATURES, n_repeats=n_repeats, random_state=SEED
    )


# --------------------------------------------------------------------------
# one size


def measure_ours(row, model, frame, n_repeats):
    """Ours on the Spark DataFrame: time, memory; returns its result."""
    gc.collect()
    with spark_memory() as memory:
        row["ours"], result = timed(
            partial(ours_on_spark, model, frame, row["model"], n_repeats)
        )
    row["ours_memory"] = memory.peaks
    row["ours_memory_start"] = memory.start
    print(f"  {row['model']} ours on Spark: {row['ours']:.1f} s", flush=True)
    return result


def measure_one_at_a_time(row, spark, model, frame, args, result):
    """The one-feature-at-a-time design (in full up to --h2o-max-rows)."""
    if row["model"] == "lgbm":
        sse = squared_error_of_python_model(spark, model)
    else:
        sse = squared_error_of_spark_model(model)
    full = row["rows"] <= args.h2o_max_rows
    gc.collect()
    with spark_memory() as memory:
        row["h2o"], (importances, seconds) = timed(
            partial(
                one_feature_at_a_time,
                frame,
                sse,
                args.n_repeats,
                SEED + 1,
                None if full else args.h2o_permutations,
            )
        )
    if hasattr(sse, "shared"):
        sse.shared.unpersist()
    row["h2o_memory"] = memory.peaks
    row["h2o_memory_start"] = memory.start
    row["h2o_permutation"] = float(np.mean(seconds))
    row["h2o_full"] = full
    if full:
        row["h2o_difference"], row["h2o_z"] = agreement(result.importances, importances)
    else:  # the fixed part measured, every permutation at the measured mean
        n_tasks = N_FEATURES * args.n_repeats
        row["h2o"] += (n_tasks - len(seconds)) * row["h2o_permutation"]
    print(
        f"  {row['model']} one feature at a time: {row['h2o']:.1f} s"
        + ("" if full else " (estimated)")
        + f", {row['h2o_permutation']:.2f} s per permutation",
        flush=True,
    )


def measure_collect(row, model, frame, args, result, check):
    """Collect, read the model (pyspark.ml), compute in memory; with
    ``check``, also ours against its own permutations in memory."""
    gc.collect()
    with spark_memory() as memory:
        row["collect"], (X, y) = timed(partial(collect, frame))
        estimator, row["read"] = model, 0.0
        if row["model"] in ("rf", "gbt"):
            row["read"], estimator, _ = read_model(model)
        row["in_memory"], collected = timed(
            partial(in_memory, estimator, X, y, row["model"], args.n_repeats)
        )
    row["collect_memory"] = memory.peaks
    row["collect_memory_start"] = memory.start
    row["memory_difference"], row["memory_z"] = agreement(
        result.importances, collected.importances
    )
    row["largest"] = float(np.max(np.abs(result.importances_mean)))
    print(
        f"  {row['model']} collect {row['collect']:.1f} s, read the model "
        f"{row['read']:.1f} s, in memory {row['in_memory']:.1f} s",
        flush=True,
    )
    if check:
        row["exact"] = exact_difference(result, estimator, X, y, row["model"])
        print(f"  {row['model']} ours against its permutations: {row['exact']:.1e}")


def measure_dask(row, client, model, path, n_repeats):
    gc.collect()
    with dask_memory(client) as memory:
        row["dask"], _ = timed(partial(ours_on_dask, model, path, n_repeats))
    row["dask_memory"] = memory.peaks["workers"]
    row["dask_memory_start"] = memory.start["workers"]
    print(f"  {row['model']} ours on Dask: {row['dask']:.1f} s", flush=True)


def run_size(spark, dask_client, models, snapshots, n_rows, path, args, check):
    """Every measurement of one size: a list of rows (dicts), one per model."""
    rows = []
    for key, model in models.items():
        row = {"rows": n_rows, "model": key}
        row["data_bytes"] = n_rows * (N_FEATURES + 1) * 8
        frame = spark_frame(spark, path, key)
        result = measure_ours(row, model, frame, args.n_repeats)
        measure_one_at_a_time(row, spark, model, frame, args, result)
        measure_collect(row, model, frame, args, result, check)
        rows.append(row)
    if dask_client is not None:
        for row in rows:
            model = snapshots.get(row["model"], models[row["model"]])
            measure_dask(row, dask_client, model, path, args.n_repeats)
    return rows


# --------------------------------------------------------------------------
# the page


def mib(value):
    return f"{value / MIB:,.0f}"


def seconds_text(value):
    return f"{value:.1f}"


def ratio_text(value):
    return f"{value:.2f}x"


def time_rows(results):
    body = []
    for row in results:
        collect_total = row["collect"] + row["read"] + row["in_memory"]
        estimated = "" if row["h2o_full"] else " (est.)"
        body.append(
            [
                f"{row['rows']:,}",
                MODEL_NAMES[row["model"]],
                seconds_text(row["ours"]),
                seconds_text(row["h2o"]) + estimated,
                seconds_text(row["h2o_permutation"]),
                seconds_text(row["collect"]),
                seconds_text(row["read"]) if row["read"] else "-",
                seconds_text(row["in_memory"]),
                ratio_text(row["h2o"] / row["ours"]) + estimated,
                ratio_text(collect_total / row["ours"]),
                seconds_text(row["dask"]) if "dask" in row else "-",
            ]
        )
    return body


TIME_HEADER = [
    "Rows",
    "Model",
    "Ours, Spark (s)",
    "One feature at a time (s)",
    "per permutation (s)",
    "Collect (s)",
    "Read the model (s)",
    "In memory (s)",
    "One at a time / ours",
    "Collect + read + in memory / ours",
    "Ours, Dask (s)",
]


def memory_rows(results):
    body = []
    for row in results:
        for method, name in (
            ("ours", "ours"),
            ("h2o", "one feature at a time"),
            ("collect", "collect + in memory"),
        ):
            peaks, start = row[f"{method}_memory"], row[f"{method}_memory_start"]
            body.append(
                [
                    f"{row['rows']:,}",
                    MODEL_NAMES[row["model"]],
                    name,
                    *(
                        f"{mib(peaks[group])} ({mib(start[group])})"
                        for group in ("driver", "jvm", "workers")
                    ),
                ]
            )
    return body


MEMORY_HEADER = [
    "Rows",
    "Model",
    "Method",
    "Driver's Python: peak (at start), MiB",
    "JVM: peak (at start), MiB",
    "Python workers: peak (at start), MiB",
]


def dask_rows(results):
    body = []
    for row in results:
        if "dask" not in row:
            continue
        body.append(
            [
                f"{row['rows']:,}",
                MODEL_NAMES[row["model"]],
                mib(row["data_bytes"]),
                seconds_text(row["dask"]),
                seconds_text(row["ours"]),
                f"{mib(row['dask_memory'])} ({mib(row['dask_memory_start'])})",
                f"{row['dask_memory'] / row['data_bytes']:.1f}",
            ]
        )
    return body


DASK_HEADER = [
    "Rows",
    "Model",
    "Data in memory (MiB)",
    "Ours, Dask (s)",
    "Ours, Spark (s)",
    "Workers: peak (at start), MiB",
    "Workers' peak / data",
]


def agreement_rows(results):
    body = []
    for row in results:
        body.append(
            [
                f"{row['rows']:,}",
                MODEL_NAMES[row["model"]],
                f"{row['largest']:.3f}",
                f"{row['h2o_difference']:.4f}" if "h2o_difference" in row else "-",
                f"{row['h2o_z']:.1f}" if "h2o_z" in row else "-",
                f"{row['memory_difference']:.4f}",
                f"{row['memory_z']:.1f}",
                f"{row['exact']:.1e}" if "exact" in row else "-",
            ]
        )
    return body


AGREEMENT_HEADER = [
    "Rows",
    "Model",
    "Largest importance (ours)",
    "max abs(ours - one at a time)",
    "in standard errors",
    "max abs(ours - in memory)",
    "in standard errors",
    "max abs(ours - its permutations in memory)",
]


def page(results, context, command):
    settings = context["spark_settings"]
    reads = context["reads"]
    lines = [
        *written_by("bench_distributed.py"),
        ".. _bench_distributed:",
        "",
        *heading("Benchmark: permutation importance on Spark and Dask"),
        "",
        f"- date: {utc_stamp()}, commit {context['commit']}",
        f"- cores (os.cpu_count()): {os.cpu_count()}, memory "
        f"{context['memory_gib']:.0f} GiB (other work on the machine shows in "
        "the load average below)",
        "- "
        + versions(
            "numpy",
            "pandas",
            "pyarrow",
            "scikit-learn",
            "sklearn_fimp",
            "lightgbm",
            "pyspark",
            "dask",
            "distributed",
        )
        + f", Java {context['java']}",
        f"- load average (1, 5, 15 min) when the run started: {LOAD_AT_START}; "
        f"when it ended: {load_average()}",
        f"- Spark: ``{settings['spark.master']}`` (local mode: one JVM is the "
        "driver and the executor, so the executor's memory is the driver's "
        f"heap, spark.driver.memory={settings['spark.driver.memory']}; "
        f"spark.executor.memory {settings['spark.executor.memory']}), "
        f"spark.sql.shuffle.partitions={settings['spark.sql.shuffle.partitions']}, "
        f"adaptive execution {settings['spark.sql.adaptive.enabled']}, Arrow "
        "for toPandas; the Python workers run this interpreter",
        f"- Dask: ``LocalCluster(n_workers={DASK_WORKERS}, threads_per_worker=1, "
        f'memory_limit="{DASK_MEMORY_LIMIT}")`` with '
        + ", ".join(f'``"{k}": "{v}"``' for k, v in DASK_CONFIG.items()),
        f"- n_repeats={context['n_repeats']}, scoring R² (the drop in R²), "
        "random_state=0; one run of this script, each figure from that run",
        f"- the whole run took {context['total_seconds'] / 60:.1f} min",
        "",
        *reproduce(command),
        *context["description"],
        "",
    ]
    lines += list_table(
        "Wall times (seconds) and ratios", TIME_HEADER, time_rows(results)
    )
    lines += [
        "",
        "*Ours* includes reading a pyspark.ml model's trees on the driver "
        "(``SparkTreeModel.from_spark``), as every call does; *read the "
        "model* is that reading in the collect path, timed apart (see the "
        "table below). *Collect + read + in memory / ours* adds the three. "
        "Above 1 ours is faster.",
        "",
    ]
    lines += list_table(
        "Peak resident memory of each stage (MiB)", MEMORY_HEADER, memory_rows(results)
    )
    lines += [
        "",
        *context["memory_note"],
        "",
    ]
    if any("dask" in row for row in results):
        lines += list_table(
            "Ours on Dask: time and the workers' peak memory against the data's "
            "size in memory (float64)",
            DASK_HEADER,
            dask_rows(results),
        )
        lines += [""]
    lines += list_table(
        "Agreement of the importances (drops in R²)",
        AGREEMENT_HEADER,
        agreement_rows(results),
    )
    lines += ["", *context["agreement_note"], ""]
    lines += list_table(
        "Reading a pyspark.ml model on the driver (SparkTreeModel.from_spark)",
        ["Model", "Trees", "Nodes", "Seconds", "µs per node"],
        [
            [
                MODEL_NAMES[key],
                str(read["trees"]),
                f"{read['nodes']:,}",
                f"{read['seconds']:.2f}",
                f"{read['seconds'] / read['nodes'] * 1e6:.0f}",
            ]
            for key, read in reads.items()
        ],
    )
    lines += ["", *context.get("notes", [])]
    return "\n".join(lines) + "\n"


def description(args, fit_seconds, train_rows, params):
    return [
        "Compared on the same Spark DataFrame (Parquet files read by Spark), "
        "one run per size:",
        "",
        "- **ours**: ``distributed_permutation_importance(model, df, ...)``: "
        "one global permutation per repeat that each row computes for itself, "
        f"one exchange of 1 + n_repeats = {args.n_repeats + 1} copies of the "
        "rows, the tree engine in each partition, only sums to the driver;",
        "- **one feature at a time**, H2O's design, implemented by the "
        "script on Spark (H2O is not installed). H2O's documentation "
        "describes its permutation importance as: shuffle one variable, "
        "score the model on the data set with it replaced, take the change "
        "of the metric, for each variable (and repeat). Here the rows get a "
        "consecutive index once and are cached (``MEMORY_AND_DISK``, counted "
        "in its time); for each feature and repeat the column's values are "
        "ranked by a random key (a shuffle by key bucket, numbered within "
        "buckets) and joined back by index, and the model scores every row "
        "of the permuted DataFrame (``model.transform`` for a pyspark.ml "
        "model, ``mapInPandas`` with the model broadcast for LightGBM), the "
        "squared errors summed by a Spark aggregation. H2O itself takes the "
        "absolute change and by default 10,000 sampled rows and one repeat; "
        "here the signed drop in R² on every row, with ours' n_repeats, so "
        "that both compute the same quantity;",
        "- **collect + in memory**: ``df.toPandas()``, then "
        "``sklearn_fimp.permutation_importance(..., n_jobs=2)`` on the "
        "driver (for a pyspark.ml model on ``SparkTreeModel.from_spark(model)``).",
        "",
        f"Data: Friedman's first function (``make_friedman1``'s formula, "
        "noise N(0, 1)) of ten uniform features, x5 to x9 pure noise, as "
        f"float64 Parquet files of at most {FILE_ROWS:,} rows (two at least), "
        "written once per size in a temporary directory. Models, each fitted "
        f"once on {train_rows:,} rows of their own (another seed) and "
        "measured at every size: "
        f"Spark ``RandomForestRegressor({fmt(params['rf'])})`` "
        f"({fit_seconds['rf']:.0f} s to fit on the cluster), "
        f"Spark ``GBTRegressor({fmt(params['gbt'])})`` "
        f"({fit_seconds['gbt']:.0f} s), and "
        f"``lightgbm.LGBMRegressor({fmt(params['lgbm'])})`` fitted on "
        f"those rows collected to the driver ({fit_seconds['lgbm']:.0f} s "
        "with the collect), then scored on the Spark DataFrame of columns "
        "with ``n_jobs=1`` (Spark runs two tasks at a time). Ours also runs "
        "on Dask on the same Parquet files (``dask.dataframe.read_parquet``, "
        "the pyspark.ml models' snapshots).",
    ]


def fmt(params):
    return ", ".join(f"{name}={value}" for name, value in params.items())


MEMORY_NOTE = [
    "How measured: when a stage starts, the peak resident memory (Linux's "
    "``VmHWM``) of each process is reset through ``/proc/PID/clear_refs``; "
    "a thread reads each process's peak every 0.1 s while the stage runs "
    "(finding processes started meanwhile) and once at its end. *Driver's "
    "Python* is the process that calls the function (for the collect path "
    "it holds the collected rows and runs the in-memory computation); "
    "*JVM* is Spark's driver and executor; *Python workers* is the sum of "
    "the peaks of ``pyspark.daemon`` and the workers it forks (they run "
    "``mapInPandas`` and the pandas UDFs; a sum of peaks, so at most what "
    "they held at once).",
]


# --------------------------------------------------------------------------


def physical_memory():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def java_version(spark):
    return spark.sparkContext._jvm.java.lang.System.getProperty("java.version")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--n-repeats", type=int, default=N_REPEATS)
    parser.add_argument(
        "--h2o-max-rows",
        type=int,
        default=1_000_000,
        help="run the one-feature-at-a-time design in full up to this many "
        "rows; above, time its first --h2o-permutations permutations and "
        "estimate the rest at their mean (marked 'est.')",
    )
    parser.add_argument("--h2o-permutations", type=int, default=3)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--make-data", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run in seconds ({QUICK['sizes'][0]:,} rows, small "
        "models, one repeat); prints the page instead of writing it",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.make_data:
        write_parquet(int(args.make_data[0]), args.make_data[1], int(args.make_data[2]))
        return
    started = time.perf_counter()
    why = missing("pyspark")
    if why is None and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        why = "Spark needs Java: no java on PATH and no JAVA_HOME"
    if why is not None:
        skip("bench_distributed.py (every measurement runs on Spark)", why)
        return
    if why := missing("lightgbm"):
        skip("bench_distributed.py (the LightGBM model is one of its three)", why)
        return
    use_dask = not args.no_dask
    if use_dask and (why := missing("distributed")):
        skip("ours on Dask", why)
        use_dask = False
    params = {"rf": RF, "gbt": GBT, "lgbm": LGBM}
    train_rows = TRAIN_ROWS
    if args.quick:
        args.sizes, args.n_repeats = QUICK["sizes"], QUICK["n_repeats"]
        args.h2o_max_rows = QUICK["h2o_max_rows"]
        args.h2o_permutations = QUICK["h2o_permutations"]
        params = {key: QUICK[key] for key in params}
        train_rows = QUICK["train_rows"]
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support")
    command = command_line("bench_distributed.py", argv)

    with tempfile.TemporaryDirectory(prefix="bench_distributed_") as directory:
        directory = Path(directory)
        spark = start_spark()
        context = {
            "commit": git_commit("sklearn_fimp", "bench", changed="+ local changes"),
            "memory_gib": physical_memory() / 2**30,
            "java": java_version(spark),
            "spark_settings": spark_settings(spark),
            "n_repeats": args.n_repeats,
            "memory_note": MEMORY_NOTE,
        }
        make_data(train_rows, directory / "train", SEED + 1)
        models, fit_seconds = fit_models(spark, directory / "train", params)
        print(
            "fitted: " + ", ".join(f"{k} {v:.1f} s" for k, v in fit_seconds.items()),
            flush=True,
        )
        context["description"] = description(args, fit_seconds, train_rows, params)
        reads, snapshots = {}, {}
        for key in ("rf", "gbt"):
            seconds, snapshots[key], nodes = read_model(models[key])
            reads[key] = {
                "seconds": seconds,
                "nodes": nodes,
                "trees": len(snapshots[key].trees_),
            }
            print(f"{key}: from_spark {seconds:.2f} s for {nodes:,} nodes", flush=True)
        context["reads"] = reads
        client = cluster = None
        if use_dask:
            client, cluster = start_dask()
        results = []
        try:
            for i, n_rows in enumerate(sorted(args.sizes)):
                path = directory / f"rows_{n_rows}"
                on_disk = make_data(n_rows, path, SEED + 2 + i)
                print(
                    f"{n_rows:,} rows ({on_disk / MIB:.0f} MiB of Parquet)", flush=True
                )
                results += run_size(
                    spark, client, models, snapshots, n_rows, path, args, check=i == 0
                )
                shutil.rmtree(path)
                context["parquet_per_million"] = on_disk / n_rows * 1_000_000
                context["free_gib"] = shutil.disk_usage(directory).free / 2**30
                context["total_seconds"] = time.perf_counter() - started
                context["agreement_note"] = agreement_note(results, args.n_repeats)
                context["notes"] = notes(results, context)
                if not args.quick and not args.no_write:
                    write_page(DOCS_TABLE, page(results, context, command))
        finally:
            if client is not None:
                client.close()
                cluster.close()
            spark.stop()
    print("\n" + text_table(TIME_HEADER, time_rows(results)))
    print("\n" + text_table(MEMORY_HEADER, memory_rows(results)))
    print("\n" + text_table(AGREEMENT_HEADER, agreement_rows(results)))
    if client is not None:
        print("\n" + text_table(DASK_HEADER, dask_rows(results)))
    if args.quick and not args.no_write:
        context["total_seconds"] = time.perf_counter() - started
        write_page(DOCS_TABLE, page(results, context, command), quick=True)


def agreement_note(results, n_repeats):
    lines = [
        "Ours, the one-feature-at-a-time design and the in-memory function "
        "draw different permutations, so their importances differ by the "
        "permutations' noise: the table gives the largest difference of the "
        f"mean importances (over {n_repeats} repeats) over the ten "
        "features, and the largest difference in units of its standard error "
        "(the repeats' standard deviations of both, over the square root of "
        "the number of repeats; with so few repeats that error is itself "
        "uncertain, and over ten features values up to 4 or 5 come by chance: "
        "the 99th percentile of abs(t) with 4 degrees of freedom is 4.6). The "
        "last column compares ours with the same permutations in memory "
        "(``permutation_sources``): the collected rows permuted, predicted by "
        "the model and scored with scikit-learn's ``r2_score`` (smallest size "
        "only).",
    ]
    sizes = sorted({row["rows"] for row in results})
    full = [row for row in results if "h2o_difference" in row]
    first = [row["h2o_difference"] for row in full if row["rows"] == sizes[0]]
    last = [row["h2o_difference"] for row in full if row["rows"] == sizes[-1]]
    if len(sizes) > 1 and first and last:
        lines += [
            "",
            f"From {sizes[0]:,} to {sizes[-1]:,} rows the largest difference "
            "between ours and the one-feature-at-a-time design went from "
            f"{min(first):.4f}-{max(first):.4f} to {min(last):.4f}-{max(last):.4f}"
            f" (the permutations' noise should shrink as one over the square "
            f"root of the rows, {np.sqrt(sizes[-1] / sizes[0]):.1f} times "
            "here): both measure the same quantity.",
        ]
    return lines


def span(values, text=ratio_text):
    low, high = text(min(values)), text(max(values))
    return low if low == high else f"{low}-{high}"


def notes(results, context):
    """The page's notes, from the run's figures."""
    from sklearn_fimp._distributed import _partition

    sizes = sorted({row["rows"] for row in results})
    smallest = [row for row in results if row["rows"] == sizes[0]]
    largest = [row for row in results if row["rows"] == sizes[-1]]
    n_tasks = N_FEATURES * context["n_repeats"]
    lines = [*heading("Notes", "-"), ""]
    for size in sizes:
        rows = [row for row in results if row["rows"] == size]
        lines += [
            f"- {size:,} rows: one feature at a time / ours "
            f"{span([row['h2o'] / row['ours'] for row in rows])}, collect + read "
            "+ in memory / ours "
            + span(
                [
                    (row["collect"] + row["read"] + row["in_memory"]) / row["ours"]
                    for row in rows
                ]
            )
            + "."
        ]
    lines += [
        "",
        "**Against one feature at a time**, ours was faster in "
        f"{sum(row['h2o'] > row['ours'] for row in results)} of {len(results)} "
        f"cases: that design runs, for each of the {n_tasks} (feature, repeat) pairs, "
        "a global shuffle of one column and a scoring pass over every row "
        f"({span([row['h2o_permutation'] for row in largest], seconds_text)} s "
        f"per pair at {sizes[-1]:,} rows, a few Spark jobs each), where ours "
        f"exchanges {context['n_repeats'] + 1} copies of the rows once and "
        "reads each partition once with the tree engine, which re-routes only "
        "the rows whose paths split on the permuted feature.",
        "",
    ]
    losses = [
        row
        for row in results
        if row["collect"] + row["read"] + row["in_memory"] < row["ours"]
    ]
    lines += [
        "**Where ours loses: collect + in memory** was faster than ours in "
        f"{len(losses)} of {len(results)} cases"
        + (
            " ("
            + "; ".join(
                f"{row['rows']:,} rows, {MODEL_NAMES[row['model']]}: "
                f"{row['collect'] + row['read'] + row['in_memory']:.1f} s against "
                f"{row['ours']:.1f} s"
                for row in losses
            )
            + ")"
            if losses
            else ""
        )
        + ". On one machine the rows fit in the driver's memory, collecting "
        f"them is cheap ({span([row['collect'] for row in largest], seconds_text)}"
        f" s for {sizes[-1]:,} rows) and the in-memory computation exchanges "
        "nothing; ours pays Spark's fixed costs (a first pass for the totals, "
        "the Python workers, Arrow conversions both ways, the exchange of "
        f"{context['n_repeats'] + 1} copies of every row), which dominate on "
        "small data. What ours buys is the driver's memory and not needing the "
        "rows on one machine: at "
        f"{sizes[-1]:,} rows the driver's Python grew by at most "
        f"{max_growth(largest, 'ours_memory', 'driver')} MiB with ours and by up "
        f"to {max_growth(largest, 'collect_memory', 'driver')} MiB with the "
        "collect path, which holds every row; the Python workers' peaks with "
        "ours (partitions of about "
        f"{_partition.PARTITION_BYTES // 2**20} MiB of sent rows) were "
        + " and ".join(
            span([row["ours_memory"]["workers"] for row in rows], mib)
            + f" MiB at {rows[0]['rows']:,} rows"
            for rows in ([smallest, largest] if len(sizes) > 1 else [largest])
        )
        + ".",
        "",
    ]
    reads = context["reads"]
    forest = reads["rf"]
    small = [row for row in smallest if row["read"]]
    lines += [
        "**Reading a pyspark.ml model** (``SparkTreeModel.from_spark``) goes "
        "through py4j node by node, about "
        f"{forest['seconds'] / forest['nodes'] * 1e6:.0f} µs per node: "
        f"{forest['seconds']:.1f} s for the forest's {forest['nodes']:,} nodes. "
        "Every call of ours on a pyspark.ml model reads it again; "
        "in the collect path the same reading took "
        + ", ".join(
            f"{row['read']:.1f} s ({MODEL_NAMES[row['model']]})" for row in small
        )
        + ".",
        "",
    ]
    dask = [row for row in results if "dask" in row]
    if dask:
        lines += [
            "**Ours on Dask** took "
            f"{span([row['dask'] / row['ours'] for row in dask])} the time of "
            "ours on Spark, on the same Parquet files (no JVM, no Arrow conversion "
            "between the JVM and Python; the pyspark.ml models' snapshots are "
            "read once, outside the timing), with the workers' peaks at "
            + span(
                [row["dask_memory"] / row["data_bytes"] for row in largest],
                seconds_text,
            )
            + f" times the data's size in memory at {sizes[-1]:,} rows (their "
            "resident memory at start, the interpreter and libraries, included).",
            "",
        ]
    h2o_minutes = sum(row["h2o"] for row in largest) / 60
    per_row = [row["h2o_permutation"] / row["rows"] for row in largest]
    estimated = not all(row["h2o_full"] for row in largest)
    next_size = 10 * sizes[-1]
    next_minutes = next_size * np.mean(per_row) * n_tasks * len(largest) / 60
    disk_rows = context["free_gib"] * 2**30 / context["parquet_per_million"] * 1e6
    lines += [
        f"**Why {sizes[-1]:,} rows is the largest size**: the run took "
        f"{context['total_seconds'] / 60:.0f} min, and the "
        f"one-feature-at-a-time design {'would take' if estimated else 'took'} "
        f"{h2o_minutes:.0f} min at {sizes[-1]:,} rows"
        f"{' (estimated from its first pairs)' if estimated else ''}; its cost "
        "grows with the rows (a shuffle and a scoring pass per pair), so "
        f"{next_size:,} rows would need about {next_minutes:.0f} min for it "
        "alone, and ours and the in-memory path grow about as fast. Time, not "
        f"the disk, is the limit: {context['free_gib']:.0f} GiB were free and "
        f"Parquet takes about {context['parquet_per_million'] / MIB:.0f} MiB "
        f"per million rows, room for about {disk_rows / 1e6:,.0f} million rows. "
        "``--sizes`` with ``--h2o-max-rows`` measures other sizes, with that "
        "design timed on its first ``--h2o-permutations`` pairs above "
        "``--h2o-max-rows`` and the rest estimated at their mean (marked est.).",
        "",
        "The load average includes this benchmark's own processes (the JVM's "
        "threads, Spark's two Python workers, the driver).",
    ]
    return lines


def max_growth(rows, stage, group):
    return mib(max(row[stage][group] - row[f"{stage}_start"][group] for row in rows))


if __name__ == "__main__":
    main()
