"""The global permutation of distributed_permutation_importance, and what
the distributed function checks before it starts an engine (no cluster: the
Dask collections here run on Dask's local threads)."""

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from sklearn_fimp import distributed_permutation_importance, permutation_sources
from sklearn_fimp._distributed._permutations import GlobalPermutation

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")


@pytest.mark.parametrize("n_rows", [1, 2, 3, 4, 5, 17, 64, 65, 1000, 4097])
def test_targets_are_a_bijection(n_rows):
    permutation = GlobalPermutation(seed=11, n_rows=n_rows)
    for repeat in range(3):
        targets = permutation.targets(np.arange(n_rows), repeat)
        assert targets.dtype == np.int64
        np.testing.assert_array_equal(np.sort(targets), np.arange(n_rows))
        # computed row by row, in any order or any split, the same
        ids = np.arange(n_rows)[::-1]
        np.testing.assert_array_equal(permutation.targets(ids, repeat), targets[ids])


def test_sources_invert_targets():
    permutation = GlobalPermutation(seed=3, n_rows=500)
    source = permutation_sources(500, 3, 1)
    targets = permutation.targets(np.arange(500), 1)
    np.testing.assert_array_equal(source[targets], np.arange(500))


def test_seeds_and_repeats_give_other_permutations():
    first = permutation_sources(1000, 0, 0)
    assert not np.array_equal(first, permutation_sources(1000, 0, 1))
    assert not np.array_equal(first, permutation_sources(1000, 1, 0))
    np.testing.assert_array_equal(first, permutation_sources(1000, 0, 0))


def test_permutations_look_uniform():
    """Over 4,000 seeds on 8 rows, where each row goes is uniform (the 8 x 8
    table of counts against 500 each), and the number of fixed points has
    a uniform permutation's mean of 1. Bounds: the chi-square statistic
    below its 0.9995 quantile with 64 degrees of freedom (a uniform
    permutation has 49), and the mean of the fixed points within 4.5
    standard errors (sd 1 per permutation): each fails with probability
    below 0.0005 for uniform permutations; the seeds are fixed."""
    n, n_seeds = 8, 4000
    counts = np.zeros((n, n))
    fixed = []
    for seed in range(n_seeds):
        targets = GlobalPermutation(seed, n).targets(np.arange(n), 0)
        counts[np.arange(n), targets] += 1
        fixed.append(np.sum(targets == np.arange(n)))
    expected = n_seeds / n
    chi2 = np.sum((counts - expected) ** 2 / expected)
    assert chi2 < stats.chi2.ppf(0.9995, 64)
    assert abs(np.mean(fixed) - 1) < 4.5 / np.sqrt(n_seeds)


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(n_samples=300, n_features=4, random_state=0)
    model = RandomForestClassifier(5, max_depth=3, random_state=0).fit(X, y)
    return model, da.from_array(X, chunks=100), da.from_array(y, chunks=100)


def test_dask_array_on_local_threads_equals_every_row_predicted(fitted):
    model, X, y = fitted
    result = distributed_permutation_importance(
        model, X, y, n_repeats=2, random_state=4
    )
    X_mem, y_mem = X.compute(), y.compute()
    baseline = model.score(X_mem, y_mem)
    for r in range(2):
        source = permutation_sources(len(y_mem), result.random_state, r)
        for j in range(X_mem.shape[1]):
            permuted = X_mem.copy()
            permuted[:, j] = X_mem[source, j]
            expected = baseline - model.score(permuted, y_mem)
            assert result.importances[j, r] == pytest.approx(expected, abs=1e-12)
    assert result.permutation == "global"
    assert result.engine == "dask"
    assert result.n_rows == 300


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"scoring": "roc_auc"}, "not supported on distributed data"),
        ({"scoring": "r2"}, "needs a regressor"),
        ({"groups": "auto"}, "groups='auto' is not offered"),
    ],
)
def test_refused_arguments_say_why(fitted, kwargs, message):
    model, X, y = fitted
    with pytest.raises(ValueError, match=message):
        distributed_permutation_importance(model, X, y, **kwargs)


def test_a_model_the_engine_does_not_read_is_refused(fitted):
    _, X, y = fitted
    model = LogisticRegression().fit(X.compute(), y.compute())
    with pytest.raises(ValueError, match="not a model the tree engine reads"):
        distributed_permutation_importance(model, X, y)


def test_data_in_memory_is_refused(fitted):
    model, X, y = fitted
    with pytest.raises(TypeError, match="call permutation_importance"):
        distributed_permutation_importance(model, X.compute(), y.compute())


def test_columns_must_be_the_models(fitted):
    import pandas as pd

    model, X, y = fitted
    frame = pd.DataFrame(X.compute(), columns=["a", "b", "c", "d"])
    frame["target"] = y.compute()
    data = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match="fitted on 4"):
        distributed_permutation_importance(
            model, data, "target", features=["a", "b", "c"]
        )
    with pytest.raises(ValueError, match="not a column of X"):
        distributed_permutation_importance(model, data, "label")


def test_the_callers_data_is_not_modified(fitted):
    model, X, y = fitted
    before = X.compute().copy()
    distributed_permutation_importance(model, X, y, n_repeats=1, random_state=0)
    np.testing.assert_array_equal(X.compute(), before)


def test_a_missing_target_is_refused_not_scored_as_nan():
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(200, 3)), rng.normal(size=200)
    model = RandomForestRegressor(5, random_state=0).fit(X, y)
    y_missing = y.copy()
    y_missing[7] = np.nan
    with pytest.raises(ValueError, match="y has missing values"):
        distributed_permutation_importance(
            model, da.from_array(X, chunks=50), da.from_array(y_missing, chunks=50)
        )


def test_a_label_the_model_never_saw_is_named(fitted):
    model, X, y = fitted
    with pytest.raises(ValueError, match="not one of the model's classes"):
        distributed_permutation_importance(model, X, y + 5)
