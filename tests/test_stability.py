"""ImportanceSelector(threshold="stability"): stability selection on
complementary halves of the rows (``_selection/_deciding/_stability.py``)."""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import GroupKFold, TimeSeriesSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._selection._deciding._stability import (
    CUTOFF,
    bound_limits,
    complementary_halves,
    pfer_bound,
    stability_decision,
    top_count,
)


def forest(n_estimators=10, classifier=False):
    model = RandomForestClassifier if classifier else RandomForestRegressor
    return model(n_estimators=n_estimators, random_state=0)


@pytest.mark.parametrize(
    "pfer, n_groups", [(1.0, 1000), (1.0, 10), (2.0, 1107), (0.5, 300), (0.001, 5000)]
)
def test_top_count_is_the_largest_count_the_bound_allows(pfer, n_groups):
    q = top_count(pfer, n_groups)
    assert q >= 1
    assert pfer_bound(q, n_groups) <= pfer * (1 + 1e-9)
    assert pfer_bound(q + 1, n_groups) > pfer


def test_top_count_is_zero_when_one_feature_costs_more_than_pfer():
    assert top_count(0.001, 100) == 0  # one feature costs 1 / (0.2 * 100)
    assert top_count(100.0, 3) == 3  # never more than there are


def reference_decision(history, pfer, cutoff):
    """Stability selection written out, half by half and feature by
    feature: a feature is selected in a half when its importance is
    positive and fewer than q features rank above it (ties by position)."""
    n_halves, n_groups = history.shape
    q = top_count(pfer, n_groups, cutoff)
    counts = np.zeros(n_groups)
    for h in range(n_halves):
        for j in range(n_groups):
            above = sum(
                history[h, k] > history[h, j]
                or (history[h, k] == history[h, j] and k < j)
                for k in range(n_groups)
            )
            counts[j] += above < q and history[h, j] > 0
    frequency = counts / n_halves
    return frequency >= cutoff, frequency


@pytest.mark.parametrize("seed", range(3))
def test_stability_decision_equals_a_reference(seed):
    rng = np.random.RandomState(seed)
    history = rng.standard_normal((12, 40)) + np.linspace(4, -4, 40)
    history[:, 5] = history[:, 6]  # ties, broken by position
    history[3, :] = np.round(history[3, :])
    passed, order, frequency, q = stability_decision(history, pfer=2.0)
    expected_passed, expected_frequency = reference_decision(history, 2.0, CUTOFF)
    assert q == top_count(2.0, 40)
    np.testing.assert_array_equal(frequency, expected_frequency)
    np.testing.assert_array_equal(passed, expected_passed)
    assert passed.any() and not passed.all()
    # order: by frequency, then mean importance
    key = list(zip(-frequency[order], -history.mean(axis=0)[order]))
    assert key == sorted(key)


def test_complementary_halves_are_disjoint():
    first, second = complementary_halves(11, np.random.RandomState(0))
    assert len(first) == len(second) == 5
    assert not set(first) & set(second)


def test_complementary_halves_split_each_class_in_two():
    # 3 rows of a rare class, 20 and 8 of the others: each half gets 1 or 2
    # of the rare one, 10 and 4 of the others
    classes = np.repeat([2, 0, 1], [3, 20, 8])
    for seed in range(20):
        rng = np.random.RandomState(seed)
        first, second = complementary_halves(31, rng, classes)
        assert not set(first) & set(second)
        assert len(first) == len(second) == 15
        for label, count in ((0, 20), (1, 8), (2, 3)):
            in_first = np.sum(classes[first] == label)
            in_second = np.sum(classes[second] == label)
            assert {in_first, in_second} <= {count // 2, (count + 1) // 2}
            assert in_first + in_second >= count - 1


@pytest.fixture(scope="module")
def wide():
    """120 rows, 300 columns, the first three strong and alike (more
    columns than rows)."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((120, 300))
    y = 2 * X[:, :3].sum(axis=1) + 0.5 * rng.standard_normal(120)
    return X, y


def test_stability_keeps_the_strong_columns_of_a_wide_table(wide):
    # fixed seeds: the three strong columns are selected in 0.8 to 1.0 of
    # the halves over selector seeds 0-5, the next column in at most 0.4
    X, y = wide
    X_before = X.copy()
    selector = ImportanceSelector(
        forest(20),
        threshold="stability",
        n_rounds=5,
        random_state=0,
    ).fit(X, y)
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(selector.get_support(indices=True), [0, 1, 2])
    assert selector.selection_frequency_[:3].min() >= 0.8
    assert selector.threshold_ == CUTOFF
    assert selector.n_rounds_ == 5
    assert selector.importance_history_.shape == (10, 300)
    assert selector.importances_.importances.shape == (300, 10)
    assert selector.pvalues_ is None and selector.decisions_ is None
    assert list(selector.ranking_[:3]) == [1, 1, 1] and selector.ranking_.min() == 1
    assert sorted(selector.ranking_[3:]) == list(range(2, 299))
    assert selector.estimator_.n_features_in_ == 3
    assert selector.estimator_.random_state == 0  # the user's seed, refit
    # reproducible with the same random_state
    again = ImportanceSelector(
        forest(20), threshold="stability", n_rounds=5, random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(
        again.selection_frequency_, selector.selection_frequency_
    )


def test_stability_keeps_no_noise_on_a_wide_null():
    # pure noise, 5,000 columns on 60 rows; pfer=0.001 bounds the expected
    # number of noise columns kept, hence the probability of keeping any,
    # by 0.001 (one column selected in each half: q = 1)
    rng = np.random.RandomState(0)
    X = rng.standard_normal((60, 5000))
    y = rng.standard_normal(60)
    selector = ImportanceSelector(
        forest(5),
        threshold="stability",
        pfer=0.001,
        n_rounds=5,
        min_features=0,
        refit=False,
        random_state=0,
    ).fit(X, y)
    assert top_count(0.001, 5000) == 1
    assert not selector.support_.any()


def test_stability_through_a_pipeline_and_its_permutation_importance(wide):
    X, y = wide
    selector = ImportanceSelector(
        make_pipeline(StandardScaler(), Ridge()),
        threshold="stability",
        n_rounds=3,
        random_state=0,
    ).fit(X[:, :60], y)
    assert selector.method_ == "permutation"
    np.testing.assert_array_equal(selector.get_support(indices=True), [0, 1, 2])


def test_stability_refuses_dependent_rows_and_prefit(wide):
    X, y = wide
    with pytest.raises(ValueError, match="threshold='stability'.*time-ordered"):
        ImportanceSelector(forest(), threshold="stability", cv=TimeSeriesSplit(3)).fit(
            X, y
        )
    with pytest.raises(ValueError, match="threshold='stability'.*grouped rows"):
        ImportanceSelector(forest(), threshold="stability", cv=GroupKFold(3)).fit(
            X, y, groups=np.repeat(np.arange(30), 4)
        )
    fitted = forest().fit(X, y)
    with pytest.raises(ValueError, match="threshold='stability' with prefit=True"):
        ImportanceSelector(fitted, threshold="stability", prefit=True).fit(X, y)
    with pytest.raises(ValueError, match="at least 4"):
        ImportanceSelector(forest(), threshold="stability").fit(X[:3], y[:3])


def test_stability_warns_when_pfer_allows_no_feature(wide):
    X, y = wide
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selector = ImportanceSelector(
            forest(5),
            threshold="stability",
            pfer=0.001,
            n_rounds=1,
            min_features=0,
            refit=False,
            random_state=0,
        ).fit(X[:, :20], y)
    assert not selector.support_.any()
    messages = [str(w.message) for w in caught]
    assert any("pfer=0.001" in m and "at least" in m for m in messages), messages


@pytest.mark.parametrize("pfer", [0, -1.0, "1"])
def test_stability_rejects_a_bad_pfer(wide, pfer):
    X, y = wide
    with pytest.raises(ValueError, match="pfer"):
        ImportanceSelector(forest(), threshold="stability", pfer=pfer).fit(X, y)


def test_probe_display_says_stability_adds_no_probes(wide):
    pytest.importorskip("matplotlib")
    from sklearn_fimp import ProbeDisplay

    X, y = wide
    selector = ImportanceSelector(
        forest(5), threshold="stability", n_rounds=1, refit=False, random_state=0
    ).fit(X[:, :20], y)
    with pytest.raises(ValueError, match="adds none.*selection_frequency_"):
        ProbeDisplay.from_estimator(selector)


def test_bound_limits_names_the_top_count_the_halves_agree_on():
    # three equally strong columns share the top place of 50 halves: at
    # q = 1 none reaches 60%; at q = 2 each is in about two thirds of the
    # halves' top two
    rng = np.random.RandomState(0)
    history = rng.uniform(0, 0.1, size=(50, 18))
    history[:, :3] = 1.0 + rng.uniform(size=(50, 3))
    passed, _, frequency, q = stability_decision(history, 1.0)
    assert q == 1 and not passed.any() and frequency[:3].sum() == pytest.approx(1)
    larger, agreed = bound_limits(history, 1.0)
    assert (larger, agreed) == (2, 3)
    assert top_count(pfer_bound(larger, 18) * (1 + 1e-9), 18) == larger
    # where the allowed top already holds what the halves agree on: None
    history[:, 1:3] = 0.0
    assert bound_limits(history, 1.0) is None


def test_stability_says_pfer_when_its_bound_drops_strong_columns():
    # issue 69: three equally strong columns among 18, pfer=1 (q = 1): it
    # kept only the one min_features asked for and blamed the data
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(10)
    X = rng.normal(size=(300, 18))
    y = ((X[:, :3].sum(axis=1) + 0.7 * rng.normal(size=300)) > 0).astype(int)
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ImportanceSelector(
            model, threshold="stability", n_rounds=5, refit=False, random_state=0
        ).fit(X, y)
    messages = [str(w.message) for w in caught]
    assert any("pfer=1.0 lets each half select its top 1" in m for m in messages)
    assert not any("no better than chance" in m for m in messages), messages
