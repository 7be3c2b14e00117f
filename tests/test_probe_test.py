"""The probe test's pure functions: p-values, tails, standardized scores."""

import numpy as np
import pytest
from scipy import stats
from sklearn.utils import Bunch

from sklearn_fimp._selection._deciding._decisions import (
    look_rounds,
    probe_decision,
    stops_early,
)
from sklearn_fimp._selection._deciding._probe_test import (
    MIN_CLASS_NULL,
    _feature_scales,
    _in_units,
    adjust_pvalues,
    decide,
    mean_test,
    merged_classes,
    rank_pvalues,
    round_critical_value,
    round_test,
    rounds_needed,
    tail_critical_value,
    tail_pvalues,
)
from sklearn_fimp._selection._measuring._probes import (
    TOP_UP_PROBES,
    add_probes,
    class_top_up,
    draw_mirrors,
)
from sklearn_fimp._selection._measuring._rounds import measure_rounds


def test_decide_ranks_rejected_features_with_infinite_scores():
    # scores of +-inf (no spread among the probes) once gave NaN ranks on
    # scipy 1.10 (the floor), and an IndexError in the selector's decisions
    decisions, ranking = decide(
        [0.3, 1.0, 1.0, 0.01],
        [1.0, 1.0, 1.0, 0.02],
        [np.inf, -np.inf, -np.inf, 2.0],
        0.05,
    )
    assert decisions.tolist() == ["rejected", "rejected", "rejected", "confirmed"]
    assert ranking.tolist() == [3, 4, 4, 1]


def test_rank_pvalues_counts_null_values_at_least_as_large():
    null = np.array([0.1, 0.2, 0.2, 0.5])
    pvalues = rank_pvalues([0.2, 0.6, 0.0], null)
    # (1 + #{null >= s}) / (N + 1), ties counted as at least as large
    np.testing.assert_allclose(pvalues, [4 / 5, 1 / 5, 5 / 5])


def test_rank_pvalues_are_exact_for_exchangeable_draws():
    # 2000 statistics each with 99 null draws from the same distribution:
    # P(p <= 0.05) is exactly 5/100; the binomial(2000, 0.05) count lies
    # within 100 +- 35 with probability > 0.999 (z = 3.6).
    rng = np.random.RandomState(0)
    pvalues = np.array(
        [
            rank_pvalues(rng.standard_exponential(1), rng.standard_exponential(99))[0]
            for _ in range(2000)
        ]
    )
    assert abs(np.sum(pvalues <= 0.05) - 100) <= 35


def test_tail_pvalues_equal_rank_pvalues_inside_the_null_values():
    rng = np.random.RandomState(0)
    null = rng.standard_normal(1000)
    statistics = np.array([-1.0, 0.0, 1.5, 2.0])
    np.testing.assert_allclose(
        tail_pvalues(statistics, null), rank_pvalues(statistics, null)
    )


def test_tail_pvalues_extrapolate_beyond_the_null_values():
    rng = np.random.RandomState(0)
    null = rng.standard_exponential(5000)
    statistics = np.array([11.0, 12.0, 14.0])
    pvalues = tail_pvalues(statistics, null)
    # beyond every null value (the largest is 10.2) the rank p-value is
    # stuck at 1 / 5001; the exponential tail is a generalized Pareto tail
    # of shape 0, and the one used (the fitted shape, on 250 values, made
    # one standard error heavier, about 0.06) extrapolates above exp(-s),
    # on the safe side, and below the rank p-value's floor from s = 12 on
    assert np.all(pvalues <= 10 / 5001)
    assert np.all(pvalues[1:] < 1 / 5001)
    assert np.all(np.diff(pvalues) < 0)
    ratio = pvalues / np.exp(-statistics)
    assert np.all((ratio > 1) & (ratio < 300))


def test_tail_pvalues_never_claim_less_than_the_null_values_show():
    # inside the null values the tail may refine a rank p-value, never
    # undercut the share of null values at least as large
    null = np.random.RandomState(0).standard_exponential(5000)
    statistics = np.sort(null)[-9:] - 1e-9  # 9, 8, ..., 1 values reach them
    pvalues = tail_pvalues(statistics, null)
    assert np.all(pvalues >= np.arange(9, 0, -1) / 5001)
    assert np.all(np.diff(pvalues) <= 0)


def test_tail_pvalues_of_tied_null_values_fit_no_tail_to_the_ties():
    # Importances on a small validation set take few values: most probes
    # score exactly 0, a few one step more. A Pareto tail fitted through
    # the point mass at 0 made a statistic that 4 of 60 null values reach
    # look like p = 1e-23 (a noise feature kept at alpha = 0.05). Without
    # enough values above the ties, Cantelli's bound extrapolates instead.
    null = np.r_[np.zeros(50), np.full(6, -0.7), np.full(3, 2.1), 4.6]
    statistics = np.array([0.69, 35.0, 150.0])
    pvalues = tail_pvalues(statistics, null)
    assert pvalues[0] >= 4 / 61
    cantelli = null.var(ddof=1) / (null.var(ddof=1) + (statistics - null.mean()) ** 2)
    np.testing.assert_allclose(pvalues[1:], cantelli[1:])
    assert pvalues[2] < 1e-4  # far beyond the null values, still small
    for pvalue in (0.1, 0.01, 1e-3):
        critical = tail_critical_value(null, pvalue)
        assert tail_pvalues([critical], null)[0] <= pvalue * (1 + 1e-9)
        assert tail_pvalues([critical - 1e-3], null)[0] > pvalue


def test_tail_pvalues_keep_rank_pvalues_for_small_nulls():
    null = np.arange(10.0)
    np.testing.assert_allclose(tail_pvalues([20.0], null), rank_pvalues([20.0], null))


def standardized_scores(real, probes, owners, n_groups):
    """Each feature's mean importance over rounds in units of its own probes
    (the scales round_test applies round by round), and the probes' null
    scores."""
    center, spread, null = _feature_scales(probes, owners, n_groups)
    return _in_units(np.asarray(real).mean(axis=0), center, spread), null


def test_standardized_scores_use_each_features_own_probes():
    # two features, two rounds of two shadows each (one per feature and
    # round, plus one more of feature 0)
    real = np.array([[1.0, 10.0], [3.0, 30.0]])
    probes = np.array([[0.0, 0.0, 1.0], [1.0, 10.0, 2.0]])
    owners = np.array([[0, 1, 0], [0, 1, 0]])
    scores, null = standardized_scores(real, probes, owners, 2)
    own0 = np.array([0.0, 1.0, 1.0, 2.0])
    assert scores[0] == pytest.approx((2.0 - own0.mean()) / own0.std(ddof=1))
    # feature 1 has only two shadows, too few to standardize: it is scored
    # against all six probes, and so are its shadows in the null (each
    # leaving itself out of the pool)
    everything = probes.ravel()
    assert scores[1] == pytest.approx(
        (20.0 - everything.mean()) / everything.std(ddof=1)
    )

    def loo(values, i):
        others = np.delete(values, i)
        return (values[i] - others.mean()) / others.std(ddof=1)

    expected = [loo(own0, i) for i in range(4)] + [
        loo(everything, i) for i in np.flatnonzero(owners.ravel() == 1)
    ]
    np.testing.assert_allclose(np.sort(null), np.sort(expected))


def test_standardized_scores_treat_rounding_error_as_no_spread():
    # feature 1's shadows were never used by the model: their importances
    # are equal but for rounding error (spread 1e-18). Dividing by that
    # spread would give feature 1 a score of about 1e15; it is compared with
    # all probes instead, and so are its shadows in the null.
    rng = np.random.RandomState(0)
    n_rounds = 10
    shadows0 = rng.normal(0.0, 1.0, size=n_rounds)
    shadows1 = 1e-3 + rng.normal(0.0, 1e-18, size=n_rounds)
    probes = np.column_stack([shadows0, shadows1])
    owners = np.tile([0, 1], (n_rounds, 1))
    real = np.column_stack([np.zeros(n_rounds), np.full(n_rounds, 1e-3 + 1e-3)])
    scores, null = standardized_scores(real, probes, owners, 2)
    everything = probes.ravel()
    expected = (2e-3 - everything.mean()) / everything.std(ddof=1)
    assert scores[1] == pytest.approx(expected)
    assert abs(scores[1]) < 10
    # feature 0's leave-one-out scores, and feature 1's shadows against all
    assert len(null) == 2 * n_rounds
    assert np.all(np.abs(null) < 10)


def test_standardized_scores_keep_a_probe_whose_others_are_all_equal():
    # drop-column accuracies on a small validation set: feature 0's shadows
    # score exactly 0 in every round but one. That one probe cannot be
    # standardized by its class without it (no spread), so it is scored
    # against all other probes, as its feature would be: dropping it would
    # drop the largest null score.
    n_rounds = 10
    shadows0 = np.zeros(n_rounds)
    shadows0[3] = 0.0125
    shadows1 = np.random.RandomState(0).normal(0.0, 0.01, size=n_rounds)
    probes = np.column_stack([shadows0, shadows1])
    owners = np.tile([0, 1], (n_rounds, 1))
    _, null = standardized_scores(np.zeros((n_rounds, 2)), probes, owners, 2)
    assert len(null) == 2 * n_rounds
    others = np.delete(probes.ravel(), 3 * 2)
    expected = (0.0125 - others.mean()) / others.std(ddof=1)
    assert null[3 * 2] == pytest.approx(expected)  # probes in round order


def test_add_probes_reports_the_mirrored_groups():
    X = np.arange(12.0).reshape(4, 3)
    groups = [np.array([0]), np.array([1]), np.array([2])]
    table, probe_groups, labels, mirrored = add_probes(
        X,
        groups,
        ["a", "b", "c"],
        "shadow",
        5,
        np.random.RandomState(0),
        labels=["a", "b", "c"],
        mirrors=True,
    )
    for g, columns in zip(mirrored, probe_groups):
        np.testing.assert_array_equal(np.sort(table[:, columns[0]]), np.sort(X[:, g]))
    assert sorted(mirrored[:3]) == [0, 1, 2]


def test_measure_rounds_holds_probes_fixed_and_refits_with_fresh_seeds():
    X = np.arange(40.0).reshape(20, 2)
    groups = [np.array([0]), np.array([1])]
    seen, seeds = [], []

    def measure(X_measured, all_groups, all_labels, seed, mirrored):
        seen.append(X_measured[:, 2:].copy())
        seeds.append(seed)
        return np.asarray(X_measured[0], dtype=float)

    real, probes, owners = measure_rounds(
        measure,
        X,
        groups,
        ["a", "b"],
        np.array(["a", "b"]),
        "shadow",
        2,
        3,
        np.random.RandomState(0),
    )
    assert real.shape == (3, 2) and probes.shape == (3, 2)
    np.testing.assert_array_equal(real, np.tile(X[0], (3, 1)))
    # the same probe columns in every round, each a shuffled copy of the
    # column it mirrors; a fresh seed for each round's measure
    for later in seen[1:]:
        np.testing.assert_array_equal(later, seen[0])
    for k, owner in enumerate(owners[0]):
        assert not np.array_equal(seen[0][:, k], X[:, owner])
        np.testing.assert_array_equal(np.sort(seen[0][:, k]), X[:, owner])
    assert len(set(seeds)) == 3
    np.testing.assert_array_equal(np.sort(owners, axis=1), [[0, 1]] * 3)
    again = measure_rounds(
        measure,
        X,
        groups,
        ["a", "b"],
        np.array(["a", "b"]),
        "shadow",
        2,
        3,
        np.random.RandomState(0),
    )
    np.testing.assert_array_equal(again[1], probes)


def test_tail_critical_value_inverts_tail_pvalues():
    null = np.random.RandomState(0).standard_normal(3000)
    for pvalue in (0.1, 0.01, 1e-4, 1e-6):
        critical = tail_critical_value(null, pvalue)
        assert tail_pvalues([critical], null)[0] <= pvalue * (1 + 1e-9)
        assert tail_pvalues([critical - 1e-3], null)[0] > pvalue


def test_tail_pvalues_never_use_a_bounded_tail():
    # the normal tail is lighter than any generalized Pareto tail of shape
    # >= 0 that the fit falls back to: beyond the null values the p-values
    # are larger than the normal ones (conservative), not smaller
    null = np.random.RandomState(0).standard_normal(3000)
    statistics = np.array([4.0, 5.0, 6.0])
    assert np.all(tail_pvalues(statistics, null) > stats.norm.sf(statistics))


def _sparse_rounds(seed, n_rounds=10, n_probes=20, n_groups=3, zero=0.95):
    """Importances that are 0 but in rare rounds (held-out accuracy on few
    rows): every column, feature or probe, draws its importance in each
    round from the same law, so each feature is null and exchangeable with
    its probes within a round."""
    rng = np.random.default_rng(seed)

    def draw(size):
        steps = rng.choice([-3, -2, -1, 1, 2, 3], size=size)
        return np.where(rng.random(size) < zero, 0.0, 0.0025 * steps)

    owners = np.tile(np.arange(n_probes) % n_groups, (n_rounds, 1))
    return draw((n_rounds, n_groups)), draw((n_rounds, n_probes)), owners


def test_round_test_is_valid_where_importances_are_sparse():
    # 200 independent data sets (fixed seeds); feature 0 is null in each, so
    # a valid p-value is at most 0.05 in at most Binomial(200, 0.05) of them,
    # and P(Binomial(200, 0.05) >= 22) = 0.00048: a valid test passes "at
    # most 21" with probability >= 0.999. The test the selector used before
    # (the mean over rounds against single rounds' probe scores) is below
    # 0.05 in about a fifth of them here and fails it.
    assert stats.binom.sf(21, 200, 0.05) < 0.001
    new = old = 0
    for seed in range(200):
        real, probes, owners = _sparse_rounds(seed)
        new += round_test(real, probes, owners, 3)[1][0] <= 0.05
        scores, null = standardized_scores(real, probes, owners, 3)
        old += tail_pvalues(scores, null)[0] <= 0.05
    assert new <= 21
    assert old > 21


def test_round_test_combines_the_rounds_by_their_kth_smallest_pvalue():
    rng = np.random.RandomState(0)
    n_rounds, n_groups = 10, 4
    real = rng.standard_normal((n_rounds, n_groups)) + [0.0, 1.0, 2.0, 4.0]
    probes = rng.standard_normal((n_rounds, 40))
    owners = np.tile(np.arange(40) % n_groups, (n_rounds, 1))
    statistics, pvalues, null = round_test(real, probes, owners, n_groups)
    k = rounds_needed(n_rounds)
    assert k == 4 and rounds_needed(1) == 1 and rounds_needed(3) == 1
    # each round's p-value against the same null scores, in the same units
    center = np.array([probes[owners == g].mean() for g in range(n_groups)])
    spread = np.array([probes[owners == g].std(ddof=1) for g in range(n_groups)])
    per_round = np.array(
        [tail_pvalues((r - center) / spread, null, heavier=False) for r in real]
    )
    expected = np.minimum(np.sort(per_round, axis=0)[k - 1] * n_rounds / k, 1.0)
    np.testing.assert_allclose(pvalues, expected)
    np.testing.assert_allclose(statistics, np.sort((real - center) / spread, 0)[-k])
    # the critical value: the smallest statistic with p <= the level
    for level in (0.2, 0.05, 0.01):
        critical = round_critical_value(null, level, n_rounds)
        assert np.all((statistics >= critical) == (pvalues <= level * (1 + 1e-9)))


def test_round_test_with_identical_rounds_pays_the_combination_factor():
    # rounds that agree: the p-value is one round's, times R / k
    rng = np.random.RandomState(1)
    one = rng.standard_normal((1, 3)) + [0.0, 2.0, 3.0]
    real = np.repeat(one, 6, axis=0)
    probes = rng.standard_normal((6, 30))
    owners = np.tile(np.arange(30) % 3, (6, 1))
    _, pvalues, null = round_test(real, probes, owners, 3)
    statistics = round_test(real, probes, owners, 3)[0]
    np.testing.assert_allclose(
        pvalues,
        np.minimum(tail_pvalues(statistics, null, heavier=False) * 6 / 2, 1.0),
    )


def _fixed_rounds(rng, n_rounds, n_real, n_probes, chance=1.0, model=1.0, shift=0.0):
    """Importances of noise features and fixed probes over ``n_rounds``: each
    column keeps one chance association (sd ``chance``) in every round, and
    the model's randomness (sd ``model``) is drawn afresh in each round;
    features ``shift`` above."""
    real = rng.gumbel(scale=chance, size=n_real) + shift
    probes = rng.gumbel(scale=chance, size=n_probes)
    noise = rng.normal(scale=model, size=(n_rounds, n_real + n_probes))
    rounds = np.concatenate([real, probes]) + noise
    owners = np.tile(np.arange(n_probes) % n_real, (n_rounds, 1))
    return rounds[:, :n_real], rounds[:, n_real:], owners


@pytest.mark.slow  # 1000 tests, each fitting a Pareto tail: about a minute
def test_mean_test_is_valid_for_noise_features_and_fixed_probes():
    # 1000 data sets of 10 noise features exchangeable with 50 fixed
    # probes, the chance association as large as the model's noise, heavy
    # (Gumbel) tails. One feature per data set, so the counts are
    # independent: for a valid test the number of p <= 0.05 is at most
    # binomial(1000, 0.05) (mean 50, sd 6.9), above 50 + 3.1 sd = 71 with
    # probability below 0.001.
    rng = np.random.RandomState(0)
    first = [
        mean_test(*_fixed_rounds(rng, 10, 10, 50), 10, classes=np.zeros(10, int))[1][0]
        for _ in range(1000)
    ]
    assert np.sum(np.asarray(first) <= 0.05) <= 71


def test_mean_test_averages_the_models_noise_out():
    # features above the probes in every round, whose model noise is large:
    # one round tells them apart from the probes weakly, the mean of 20
    # rounds ten times more strongly
    rng = np.random.RandomState(1)
    real, probes, owners = _fixed_rounds(
        rng, 20, 3, 60, chance=0.1, model=1.0, shift=2.0
    )
    single = mean_test(real[:1], probes[:1], owners[:1], 3)[1]
    averaged = mean_test(real, probes, owners, 3)[1]
    assert np.all(averaged < 0.005) and np.all(averaged * 10 < single)


def test_mean_test_compares_a_feature_with_the_probes_of_its_class():
    # two classes of probes, one ten times as spread as the other: a
    # feature of the narrow class three narrow sds above its class's center
    # is significant there, and would not be against all probes pooled
    rng = np.random.RandomState(2)
    narrow, wide = rng.normal(size=(1, 100)), 10 * rng.normal(size=(1, 100))
    probes = np.hstack([narrow, wide])
    owners = np.concatenate([np.zeros(100, int), np.ones(100, int)])[None, :]
    real = np.array([[narrow.mean() + 4 * narrow.std(), wide.mean()]])
    _, by_class, _ = mean_test(real, probes, owners, 2, classes=np.array([0, 1]))
    _, pooled, _ = mean_test(real, probes, owners, 2, classes=np.array([0, 0]))
    assert by_class[0] < 0.01 < pooled[0]


def test_mean_test_ranks_features_among_probes_that_all_tie():
    # the model never used the probes: each feature is ranked among their
    # means (a noise feature is exchangeable with them), never given p = 0
    probes = np.zeros((5, 50))
    real = np.array([[0.0, 0.3]] * 5)
    owners = np.tile(np.arange(50) % 2, (5, 1))
    _, pvalues, _ = mean_test(real, probes, owners, 2)
    np.testing.assert_allclose(pvalues, [1.0, 1 / 51])


def test_probe_decision_spends_a_quarter_of_alpha_at_the_first_look():
    rng = np.random.RandomState(3)
    real, probes, owners = _fixed_rounds(rng, 10, 4, 60, shift=0.0)
    history = Bunch(real=real, probes=probes, owners=owners, classes=None)
    test = probe_decision(
        history, 4, alpha=0.05, correction="holm", keep_tentative=False, n_rounds=10
    )
    first = adjust_pvalues(mean_test(real[:5], probes[:5], owners[:5], 4)[1], "holm")
    last = adjust_pvalues(mean_test(real, probes, owners, 4)[1], "holm")
    np.testing.assert_allclose(
        test.corrected, np.minimum(np.minimum(first / 0.25, last / 0.75), 1.0)
    )
    assert look_rounds(10) == (5, 10) and look_rounds(3) == (3,)
    # one look when the rounds planned are not given
    single = probe_decision(
        history, 4, alpha=0.05, correction="holm", keep_tentative=False
    )
    np.testing.assert_allclose(single.corrected, last)


def test_stops_early_only_when_every_feature_is_settled():
    rng = np.random.RandomState(4)
    real, probes, owners = _fixed_rounds(rng, 5, 3, 60, chance=0.1, model=0.1)
    real[:, 0] += 5.0  # clearly above the probes: confirmed
    real[:, 1] -= 1.0  # clearly below: p > 0.1
    history = Bunch(real=real, probes=probes, owners=owners, classes=None)
    settled = dict(alpha=0.05, correction="fdr_bh", n_rounds=10)
    real[:, 2] -= 1.0
    assert stops_early(history, 3, **settled)
    real[:, 2] += 1.0 + probes.mean(axis=0).std() * 2.0  # p between 0.05 and 0.1?
    pvalue = mean_test(real, probes, owners, 3)[1][2]
    assert stops_early(history, 3, **settled) == (pvalue > 0.1)


def test_fresh_probe_decision_confirms_a_clear_feature_and_no_noise():
    # the distributed selection's test (rounds with fresh probes, in the
    # Spark module): feature 0 is far above every probe in every round,
    # features 1 and 2 are drawn as the probes are
    from sklearn_fimp._selection._distributed import fresh_probe_decision

    rng = np.random.RandomState(0)
    n_rounds, n_groups, n_probes = 10, 3, 30
    real = rng.normal(size=(n_rounds, n_groups))
    real[:, 0] += 10
    probes = rng.normal(size=(n_rounds, n_probes))
    owners = np.tile(np.arange(n_probes) % n_groups, (n_rounds, 1))
    history = Bunch(real=real, probes=probes, owners=owners)
    test = fresh_probe_decision(
        history, n_groups, alpha=0.05, correction="holm", keep_tentative=False
    )
    assert list(test.decisions) == ["confirmed", "rejected", "rejected"]
    np.testing.assert_array_equal(test.passed, [True, False, False])


def test_mean_test_scores_a_feature_tied_with_probes_as_they_score():
    # a deterministic model that never splits on most columns: most
    # features and probes have a mean of exactly 0, a few probes a positive
    # one. A feature at 0 ties with the probes at 0 and must not beat them
    # (each probe is standardized leaving itself out, the feature by all
    # probes, which broke the tie by a hair, the same way for every tied
    # feature: p-values of 0.007 that confirmed 1,380 columns of a wide
    # table)
    rng = np.random.RandomState(0)
    n_rounds, n_probes = 5, 300
    probes = np.zeros((n_rounds, n_probes))
    used = rng.choice(n_probes, 15, replace=False)
    probes[:, used] = rng.exponential(size=(n_rounds, 15))
    real = np.zeros((n_rounds, 300))
    real[:, :3] = 50.0  # three features far above every probe
    owners = np.tile(np.arange(n_probes) % 300, (n_rounds, 1))
    _, pvalues, null = mean_test(real, probes, owners, 300)
    tied = pvalues[3:]
    # the share of probes at or above 0: all of them
    assert np.all(tied > 0.9)
    assert np.all(pvalues[:3] < 0.01)


def test_merged_classes_join_a_small_class_to_the_next():
    # one probe column per group: classes 7 (3 groups), 20 (12), 30 (2) and
    # 40 (9); 7 joins 20, then 30 joins 40, which with 11 columns stands
    classes = np.array([7] * 3 + [20] * 12 + [30] * 2 + [40] * 9)
    owners = np.arange(len(classes))
    merged = merged_classes(classes, owners, owners)
    np.testing.assert_array_equal(merged, [20] * 15 + [40] * 11)
    # the last class, too small, joins the one before; a class of probes
    # spanning few columns over many rounds is small too
    classes = np.array([1] * 10 + [2] * 2)
    np.testing.assert_array_equal(merged_classes(classes, owners[:12], owners[:12]), 1)
    rounds = np.tile(np.arange(12), 5)
    np.testing.assert_array_equal(merged_classes(classes, rounds, rounds), 1)
    # too few columns for any class: one class
    np.testing.assert_array_equal(
        merged_classes(np.array([1, 2, 3]), owners[:3], owners[:3]), 3
    )
    # the caller's array is left alone
    assert list(classes) == [1] * 10 + [2] * 2


def test_mean_test_merges_a_class_too_small_to_standardize_its_probes():
    # a class of three probes, two of which tie but for 1e-4: the third's
    # score against the other two (about 7,000) dwarfed every other null
    # score, and left a feature 40 standard deviations above the 40 probes
    # of its class a p-value of 0.03. Merged into that class, the three
    # score as its probes do, and the feature's p-value is below 1e-4.
    rng = np.random.RandomState(4)
    probes = np.concatenate([rng.normal(size=40), [0.1, 0.1 + 1e-4, 0.6]])[None, :]
    owners = np.arange(43)[None, :]
    classes = np.array([1] * 40 + [0] * 3)
    real = np.concatenate([[40.0], np.zeros(42)])[None, :]
    _, pvalues, null = mean_test(real, probes, owners, 43, classes=classes)
    assert np.max(np.abs(null)) < 10
    assert pvalues[0] < 1e-4


# --------------------------------------------------------------------------
# shadows of their own for the classes short of a null of their own


def test_class_top_up_fills_the_small_classes_within_the_column_budget():
    classes = np.array([0] * 200 + [1] * 20)
    merged, extra = class_top_up(classes, 220, np.ones(220, int))
    # 220 added columns allow 240 probes in the small class; at most 500
    assert merged.tolist() == classes.tolist() and extra == {1: 220}
    widths = np.array([1] * 200 + [2] * 20)
    # two columns a probe: (140 - 20) * 2 = 240 columns, the groups' own
    assert class_top_up(classes, 220, widths)[1] == {1: 120}
    # a null of its own at least, past the budget
    assert class_top_up(classes, 220, np.array([1] * 200 + [50] * 20))[1] == {1: 30}
    # a large budget stops at TOP_UP_PROBES
    many = np.array([0] * 2000 + [1] * 20)
    assert class_top_up(many, 2020, np.ones(2020, int))[1] == {1: TOP_UP_PROBES - 20}


def test_class_top_up_adds_nothing_unless_some_class_has_its_own_null_and_some_not():
    # no class reaches MIN_CLASS_NULL: all share the pooled null, as measured
    small = np.array([0] * 30 + [1] * 15)
    assert class_top_up(small, 50, np.ones(45, int))[1] == {}
    # every class has its own
    both = np.array([0] * 60 + [1] * 60)
    merged, extra = class_top_up(both, 120, np.ones(120, int))
    assert extra == {} and merged.tolist() == both.tolist()
    # each short class is filled as it is, even one of fewer than
    # MIN_CLASS_COLUMNS probes: merged into its neighbour first, two kinds
    # would share one null (issue 69: normal columns scored against
    # ten-level shadows)
    three = np.array([0] * 100 + [1] * 4 + [2] * 12)
    merged, extra = class_top_up(three, 116, np.ones(116, int))
    assert merged.tolist() == three.tolist()
    # one common count within the 116 added columns: (66 - 4) + (66 - 12)
    assert extra == {1: 62, 2: 54}


def test_draw_mirrors_draws_the_same_probes_and_then_each_short_class_evenly():
    classes = np.array([0] * 60 + [1] * 7)
    extra = {1: 30}
    before = draw_mirrors(67, 67, np.random.RandomState(3))
    after = draw_mirrors(67, 97, np.random.RandomState(3), (classes, extra))
    np.testing.assert_array_equal(after[:67], before)
    added = after[67:]
    assert len(added) == 30 and set(added.tolist()) <= set(range(60, 67))
    counts = np.bincount(added - 60, minlength=7)
    assert counts.max() - counts.min() <= 1  # every group once before twice


def _mixed_wide(seed, n=150):
    rng = np.random.RandomState(seed)
    X = np.hstack(
        [
            rng.standard_normal((n, 60)),
            rng.randint(0, 10, size=(n, 12)).astype(float),
        ]
    )
    return X, rng.randint(0, 2, size=n)


def test_selector_gives_a_small_class_shadows_of_its_own():
    from sklearn.ensemble import RandomForestClassifier

    from sklearn_fimp import ImportanceSelector

    X, y = _mixed_wide(0)
    forest = RandomForestClassifier(n_estimators=10, random_state=0)
    selector = ImportanceSelector(
        forest, n_rounds=2, min_features=0, refit=False, random_state=0
    ).fit(X, y)
    mirrors = np.asarray(selector.importances_.mirrors)[0]  # fixed: one row
    # 72 columns, one shadow each; the ten-level class (12 of them) gets
    # shadows up to the common count the 72 added columns allow (72 + 12 = 84)
    assert selector.probe_history_.shape[1] == 72 + 72
    assert np.sum(mirrors >= 60) == 84 and np.sum(mirrors < 60) == 60
    # a given count, or noise probes, are as asked
    for params in ({"n_probes": 72}, {"probes": "uniform"}):
        other = ImportanceSelector(
            forest, n_rounds=2, min_features=0, refit=False, random_state=0, **params
        ).fit(X, y)
        assert other.probe_history_.shape[1] == 72


def _kinds_wide(seed, n=60):
    """Issue 69's design: 56 binary columns, 8 normal and 8 ten-level ones;
    y from three binary columns and the first normal one."""
    rng = np.random.default_rng(seed)
    binary = (rng.uniform(size=(n, 56)) < rng.uniform(0.1, 0.5, size=56)).astype(float)
    X = np.hstack(
        [binary, rng.normal(size=(n, 8)), rng.integers(0, 10, size=(n, 8))]
    ).astype(float)
    signal = 1.5 * X[:, :3].sum(axis=1) + 1.5 * X[:, 56] + 0.5 * rng.normal(size=n)
    return X, (signal > np.median(signal)).astype(int)


def test_selector_keeps_two_small_classes_of_different_kinds_apart():
    # merged before they were filled, the normal and the ten-level columns
    # shared one null, part ten-level shadows, whose spread is smaller: the
    # normal noise columns' p-values were at most 0.05 in 10.7% of 140 over
    # 20 seeds of this design (3.6% apart)
    from sklearn.ensemble import RandomForestClassifier

    from sklearn_fimp import ImportanceSelector

    X, y = _kinds_wide(106)
    selector = ImportanceSelector(
        RandomForestClassifier(n_estimators=10, random_state=0),
        n_rounds=2,
        refit=False,
        random_state=6,
    ).fit(X, y)
    classes = np.asarray(selector.importances_.classes)
    binary, normal, levels = classes[:56], classes[56:64], classes[64:]
    assert len({*binary}) == len({*normal}) == len({*levels}) == 1
    assert len({binary[0], normal[0], levels[0]}) == 3
    mirrors = np.asarray(selector.importances_.mirrors)[0]
    for kind in (normal, levels):
        own = np.isin(mirrors, np.flatnonzero(classes == kind[0]))
        assert own.sum() >= MIN_CLASS_NULL
