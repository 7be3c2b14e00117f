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
