"""Rows that hang together (``sklearn_fimp/_selection/_rows.py``): shadows
that keep time order and groups, "auto" under a dependent cv, and the
warning on strongly autocorrelated rows."""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import GroupKFold, KFold, TimeSeriesSplit

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._selection._rows import (
    GROUPS,
    INDEPENDENT,
    TIME,
    RowStructure,
    lag_one_autocorrelation,
    row_structure,
)


def ar1(n, phi, rng):
    x = np.empty(n)
    x[0] = rng.normal()
    steps = rng.normal(size=n) * np.sqrt(1 - phi**2)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + steps[t]
    return x


def time_ordered_null(seed, n=300, n_features=6):
    """Independent AR(1) series (phi 0.9): features and a target with no
    relation at all."""
    rng = np.random.RandomState(seed)
    X = np.column_stack([ar1(n, 0.9, rng) for _ in range(n_features)])
    return X, ar1(n, 0.9, rng)


def grouped_null(seed, n_groups=30, size=10):
    """30 groups of 10 rows: three columns constant within groups, three
    row-level, a target with a group effect, all independent."""
    rng = np.random.RandomState(seed)
    groups = np.repeat(np.arange(n_groups), size)
    X = np.column_stack(
        [rng.normal(size=n_groups)[groups] for _ in range(3)]
        + [rng.normal(size=n_groups * size) for _ in range(3)]
    )
    y = rng.normal(size=n_groups)[groups] + 0.5 * rng.normal(size=n_groups * size)
    return X, y, groups


def test_time_shadow_is_a_circular_shift_by_a_long_lag():
    X = np.arange(100.0).reshape(-1, 1)
    rows = RowStructure(TIME).shadow_rows(X, [0], np.random.RandomState(0))
    lag = (0 - rows[0]) % 100
    np.testing.assert_array_equal(rows, (np.arange(100) - lag) % 100)
    assert 10 <= lag <= 90


def test_group_shadows_permute_whole_groups_or_within_groups():
    groups = np.repeat(np.arange(5), 4)
    level = np.repeat(np.arange(5.0) * 10, 4)  # constant within groups
    row = np.arange(20.0)  # varies within groups
    X = np.column_stack([level, row])
    structure = RowStructure(GROUPS, groups)
    rng = np.random.RandomState(0)
    whole = X[structure.shadow_rows(X, [0], rng), 0]
    # constant within groups, and the groups' values permuted
    assert all(len(set(whole[groups == g])) == 1 for g in range(5))
    assert sorted(whole[::4]) == sorted(level[::4])
    within = structure.shadow_rows(X, [1], rng)
    # each row copies a row of its own group
    np.testing.assert_array_equal(groups[within], groups)
    assert sorted(within) == list(range(20))


def test_row_structure_reads_the_users_cv_and_groups():
    X, y = time_ordered_null(0, n=60)
    forest = RandomForestRegressor()
    assert row_structure(forest, TimeSeriesSplit(3), X, y, {}).kind == TIME
    assert row_structure(forest, KFold(3), X[:, :0] + 1, y * 0 + 1, {}).kind == (
        INDEPENDENT
    )
    groups = np.repeat(np.arange(6), 10)
    structure = row_structure(forest, GroupKFold(3), X, y, {"groups": groups})
    assert structure.kind == GROUPS
    np.testing.assert_array_equal(structure.groups, groups)


def test_auto_picks_held_out_permutation_under_a_time_ordered_cv():
    X, y = time_ordered_null(0, n=120)
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=5),
        cv=TimeSeriesSplit(3),
        n_rounds=1,
        min_features=0,
        random_state=0,
    ).fit(X, y)
    assert selector.method_ == "permutation"


def test_strongly_autocorrelated_rows_without_a_splitter_warn():
    X, y = time_ordered_null(0, n=200)
    assert lag_one_autocorrelation(y) > 0.8
    with pytest.warns(UserWarning, match=r"TimeSeriesSplit.*GroupKFold"):
        ImportanceSelector(
            RandomForestRegressor(n_estimators=5), n_rounds=1, random_state=0
        ).fit(X, y)
    # independent rows do not
    rng = np.random.RandomState(0)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*neighbouring rows")
        ImportanceSelector(
            RandomForestRegressor(n_estimators=5),
            n_rounds=1,
            min_features=0,
            random_state=0,
        ).fit(rng.normal(size=(200, 3)), rng.normal(size=200))


def _kept_noise(X, y, cv, seed, n_estimators, groups=None):
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=n_estimators),
        cv=cv,
        alpha=0.05,
        min_features=0,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # nothing kept: expected
        selector.fit(X, y, **({} if groups is None else {"groups": groups}))
    return bool(selector.support_.any())


# Each data set is pure noise: a valid test at alpha=0.05 (Holm) keeps any
# noise with probability at most 0.05, independently across data sets. The
# shuffled-shadow test with out-of-bag importance kept noise in every one
# of them (THEORY.md section 9). Bounds a valid test passes with probability
# >= 0.999: at most 2 of 4 (P(3 or more of 4) <= 4.8e-4) and at most 5 of 20
# (P(6 or more of 20) <= 3.0e-4).


def test_time_ordered_null_keeps_no_noise_under_time_series_split():
    kept = sum(
        _kept_noise(*time_ordered_null(seed), TimeSeriesSplit(3), seed, 10)
        for seed in range(4)
    )
    assert kept <= 2


def test_grouped_null_keeps_no_noise_under_group_kfold():
    kept = 0
    for seed in range(4):
        X, y, groups = grouped_null(seed)
        kept += _kept_noise(X, y, GroupKFold(3), seed, 10, groups)
    assert kept <= 2


@pytest.mark.slow
def test_time_ordered_and_grouped_nulls_on_twenty_data_sets():
    kept_time = sum(
        _kept_noise(*time_ordered_null(100 + seed), TimeSeriesSplit(3), seed, 10)
        for seed in range(20)
    )
    kept_groups = 0
    for seed in range(20):
        X, y, groups = grouped_null(100 + seed)
        kept_groups += _kept_noise(X, y, GroupKFold(3), seed, 10, groups)
    assert kept_time <= 5
    assert kept_groups <= 5


def test_rows_sorted_by_class_do_not_warn():
    # scikit-learn's iris is sorted by class: its labels in row order are
    # not a time series, and no splitter is needed
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_iris(return_X_y=True)
    assert lag_one_autocorrelation(y) is None
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*neighbouring rows")
        ImportanceSelector(
            RandomForestClassifier(n_estimators=5), n_rounds=1, random_state=0
        ).fit(X, y)
