import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from sklearn_fimp._engine import _backend, _budgets


@pytest.fixture(autouse=True, scope="session")
def one_openmp_thread():
    """Every test on one OpenMP thread (HistGradientBoosting, XGBoost,
    LightGBM). On the tests' few hundred rows more threads only wait for
    each other, and on a busy machine (CI, or two cores shared with another
    job) they wait for the core: a test of HistGradientBoosting that takes
    half a second alone took 33 s beside one other process. The package's
    own parallelism (joblib) is not OpenMP and is unaffected. Entered before
    the first test, after collection has imported every test module (and so
    the libraries they import)."""
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def as_frame(X, kind, names=None):
    """``X`` as a numpy array, pandas or polars DataFrame."""
    if kind == "numpy":
        return X
    names = names or [f"f{i}" for i in range(X.shape[1])]
    if kind == "pandas":
        pd = pytest.importorskip("pandas")
        return pd.DataFrame(X, columns=names)
    pl = pytest.importorskip("polars")
    return pl.DataFrame({n: X[:, i] for i, n in enumerate(names)})


def sklearn_permutations(seed, n_rows, n_repeats):
    """The row order scikit-learn's permutation_importance gives a column on
    each repeat for ``random_state=seed``: a generator seeded with a number
    drawn from ``seed``, an index array shuffled in place once per repeat and
    applied to the already shuffled column."""
    generator = np.random.RandomState(
        np.random.RandomState(seed).randint(np.iinfo(np.int32).max + 1)
    )
    column = np.arange(n_rows)
    shuffle = np.arange(n_rows)
    orders = []
    for _ in range(n_repeats):
        generator.shuffle(shuffle)
        column = column[shuffle]
        orders.append(column.copy())
    return orders


@pytest.fixture
def noisy_regression():
    """y depends on x0 strongly, x1 weakly; x2 is uniform noise."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(600, 3))
    y = 4 * X[:, 0] + X[:, 1] + rng.normal(scale=0.2, size=600)
    return X, y


def use_numpy_backend(monkeypatch):
    """Prepare the ensembles of the rest of the test for the NumPy backend."""
    monkeypatch.setattr(_backend, "BACKEND", _backend.NUMPY)


@pytest.fixture(params=["compiled", "numpy"])
def engine_backend(request, monkeypatch):
    """The tree engine's tests run with the compiled kernels and with the
    NumPy implementation the engine falls back to without them
    (``pytestmark = pytest.mark.usefixtures("engine_backend", ...)``)."""
    if request.param == "numpy":
        use_numpy_backend(monkeypatch)
    elif _backend.COMPILED is None:
        pytest.skip("the compiled kernels (sklearn_fimp._ckernels) were not built")
    return request.param


@pytest.fixture
def reroute_every_group(monkeypatch):
    """Small test forests use most features on most paths, where the engine
    would hand groups to the plain path; make it compute every group."""
    monkeypatch.setattr(_budgets, "MAX_AFFECTED_SHARE", 1.01)


@pytest.fixture(scope="session")
def spark_session():
    """One local Spark session (``local[2]``) for every Spark test module of
    the run, started once (the JVM, its Python workers and the first jobs
    cost most of a minute on two cores); its Python workers run this
    interpreter and import this checkout of sklearn_fimp. Skips, saying
    why, without pyspark or Java."""
    import os
    import shutil
    import sys
    from pathlib import Path

    pytest.importorskip("pyspark", reason="pyspark is not installed")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java: no java on PATH and no JAVA_HOME")
    from pyspark.sql import SparkSession

    import sklearn_fimp

    checkout = str(Path(sklearn_fimp.__file__).resolve().parents[1])
    saved = {name: os.environ.get(name) for name in ("PYSPARK_PYTHON", "PYTHONPATH")}
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [checkout, saved["PYTHONPATH"]])
    )
    session = (
        SparkSession.builder.master("local[2]")
        .appName("sklearn_fimp tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module")
def dask_client():
    """A ``distributed`` LocalCluster of two single-threaded worker
    processes and its Client, for one test module; skips without
    ``distributed``."""
    import logging

    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
