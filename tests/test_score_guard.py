"""keep_tentative="auto": where the first decision loses more than
SCORE_LOSS of what all columns score above a constant, the score guard adds
features by significance until the kept ones recover
(``_score_cost.ScoreGuard``), scored as ``selection_score_`` scores."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.utils import Bunch

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._selection._deciding._decisions import TooFewPassed
from sklearn_fimp._selection._deciding._score_cost import (
    CHANCE_Z,
    GUARD_LEVEL,
    NULL_BATCH,
    NULL_PERMUTATIONS,
    SCORE_LOSS,
    ScoreGuard,
    cost_scorings,
    null_threshold,
    selection_score,
)
from sklearn_fimp._selection._rows import GROUPS, INDEPENDENT


def _plan(estimator, n_features, scoring=None, kind=INDEPENDENT, sample_weight=None):
    return Bunch(
        rows=Bunch(kind=kind),
        cv=None,
        scoring=scoring,
        estimator=estimator,
        options={"scoring": scoring, "sample_weight": sample_weight},
        round_estimator=lambda seed: estimator,
        column_names=[],
        groups=[np.array([j]) for j in range(n_features)],
        progress=lambda text: None,
    )


def _graded(seed=0):
    """Ten columns whose weights fall by halves, then ten of noise: a Ridge
    on the first k columns loses less the larger k is."""
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((400, 20))
    y = X[:, :10] @ (0.7 ** np.arange(10)) + 0.3 * rng.standard_normal(400)
    return X, y


def test_guard_keeps_the_fewest_columns_that_recover_as_written_out():
    X, y = _graded()
    n = X.shape[1]
    plan = _plan(Ridge(), n)
    order = np.arange(n)  # by significance: the weights' order
    first = selection_score(plan, X, y, order < 1, fit_kwargs={}, seed=5)
    assert first.lost > SCORE_LOSS
    test = Bunch(order=order, passed=order < 1, pvalues=np.zeros(n))
    guard = ScoreGuard(plan, X, y, {}, 5, first, kept=np.arange(n) < 1)
    passed = guard(test)
    # the reference: every prefix scored; the smallest that recovers
    lost = [
        selection_score(plan, X, y, order < k, fit_kwargs={}, seed=5).lost
        for k in range(1, n)
    ]
    assert np.all(np.diff(lost) <= 1e-12)  # monotone here, so the search finds it
    smallest = 1 + int(np.flatnonzero(np.array(lost) <= SCORE_LOSS)[0])
    np.testing.assert_array_equal(passed, order < smallest)
    assert guard.cost.n_kept == smallest
    assert guard.cost.lost == pytest.approx(lost[smallest - 1], rel=1e-12)
    # 2, 3, 5, 9 by doubling, then halved: far fewer than every prefix
    scored = guard.cv_results["n_features"].tolist()
    assert smallest in scored
    assert len(scored) <= 2 * np.log2(n) and guard.n_fits == 2 * len(scored)


def test_guard_adds_only_candidates_and_keeps_them_all_when_none_recovers():
    X, y = _graded()
    n = X.shape[1]
    plan = _plan(Ridge(), n)
    first = selection_score(plan, X, y, np.arange(n) < 1, fit_kwargs={}, seed=5)
    # columns 0 and 1 beat half of their probes (raw p-value at most
    # GUARD_LEVEL), the others not: with both the selection still loses
    pvalues = np.where(np.arange(n) < 2, GUARD_LEVEL, 0.9)
    test = Bunch(order=np.arange(n), pvalues=pvalues, passed=np.arange(n) < 1)
    guard = ScoreGuard(plan, X, y, {}, 5, first, kept=np.arange(n) < 1)
    passed = guard(test)
    assert passed.tolist() == [True] * 2 + [False] * (n - 2)
    assert guard.cost.lost > SCORE_LOSS
    assert guard.cv_results["n_features"].tolist() == [2]
    # no candidate beyond the first decision: it stands, nothing is fitted
    test.pvalues = np.ones(n)
    guard = ScoreGuard(plan, X, y, {}, 5, first, kept=np.arange(n) < 1)
    assert guard(test).tolist() == [True] + [False] * (n - 1)
    assert guard.n_fits == 0


def test_guard_keeps_every_feature_the_first_decision_kept_wherever_it_ranks():
    # a corrected p-value need not follow the raw one (the union of two
    # tests, two looks): the first decision may keep a feature that ranks
    # below others by raw p-value; the guard keeps it, and adds the others
    X, y = _graded()
    n = X.shape[1]
    plan = _plan(Ridge(), n)
    kept = np.arange(n) == 15  # kept first, 16th by significance
    first = selection_score(plan, X, y, kept, fit_kwargs={}, seed=5)
    assert first.lost > SCORE_LOSS
    test = Bunch(order=np.arange(n), pvalues=np.zeros(n), passed=kept)
    guard = ScoreGuard(plan, X, y, {}, 5, first, kept=kept)
    passed = guard(test)
    assert passed[15] and passed[0] and passed.sum() < n
    # its support and cost are those of the groups it passed
    np.testing.assert_array_equal(guard.support, passed)
    again = selection_score(plan, X, y, passed, fit_kwargs={}, seed=5, known=first)
    assert guard.cost.kept == pytest.approx(again.kept, rel=1e-12)


def test_auto_recovers_an_interaction_the_test_leaves_out():
    # y = (x0 * x1 > 0) with 10% of the labels flipped: neither column alone
    # predicts y, so the probe test confirms at most one of them; the guard
    # adds the other (seeds fixed)
    rng = np.random.RandomState(0)
    X = rng.standard_normal((600, 12))
    y = ((X[:, 0] * X[:, 1] > 0) ^ (rng.uniform(size=600) < 0.1)).astype(int)
    forest = RandomForestClassifier(n_estimators=50, random_state=0)
    params = dict(n_rounds=5, random_state=0, refit=False)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        auto = ImportanceSelector(forest, **params).fit(X, y)
    with warnings.catch_warnings(record=True) as plain_said:
        warnings.simplefilter("always")
        plain = ImportanceSelector(forest, keep_tentative=False, **params).fit(X, y)
    assert plain.selection_score_.lost > SCORE_LOSS
    assert auto.support_[:2].all()
    assert auto.selection_score_.lost <= SCORE_LOSS
    assert set(auto.selection_score_.scores) == {"roc_auc", "neg_brier_score"}
    # the cost counts the first decision's scoring and the guard's
    assert auto.selection_score_.n_fits > plain.selection_score_.n_fits
    for name, first in plain.selection_score_.scores.items():
        assert auto.selection_score_.scores[name]["all"] == first["all"]
    np.testing.assert_array_equal(auto.decisions_, plain.decisions_)
    assert "cv_results_" in vars(auto) and "cv_results_" not in vars(plain)
    # the first decision's "too few passed" is not said: the guard replaced it
    too_few = [w for w in plain_said if issubclass(w.category, TooFewPassed)]
    assert too_few or plain.support_.sum() > 1
    assert not [w for w in said if issubclass(w.category, TooFewPassed)]


def test_auto_leaves_a_selection_that_costs_little_alone():
    X, y = make_friedman1(300, 10, noise=0.5, random_state=0)
    forest = RandomForestRegressor(n_estimators=30, random_state=0)
    params = dict(n_rounds=5, random_state=0, refit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = ImportanceSelector(forest, **params).fit(X, y)
        plain = ImportanceSelector(forest, keep_tentative=False, **params).fit(X, y)
    assert plain.selection_score_.lost <= SCORE_LOSS
    np.testing.assert_array_equal(auto.support_, plain.support_)
    assert "cv_results_" not in vars(auto)
    assert auto.selection_score_.n_fits == plain.selection_score_.n_fits


def test_cost_scorings_rank_and_score_probabilities_where_every_half_holds_them():
    forest = RandomForestClassifier()
    binary, three = np.repeat([0, 1], 5), np.repeat([0, 1, 2], 4)
    brier = "neg_brier_score"
    assert cost_scorings(_plan(forest, 3), binary) == ("roc_auc", brier)
    assert cost_scorings(_plan(forest, 3), three) == ("roc_auc_ovr", brier)
    # a class of one row is held out in neither half: the rounds' scoring
    single = np.array([0, 0, 1, 1, 2])
    assert cost_scorings(_plan(forest, 3), single) == (None,)
    # nor is a class whose rows but one weigh nothing
    weight = np.array([1.0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    assert cost_scorings(_plan(forest, 3, sample_weight=weight), binary) == (None,)
    # the user's scoring, a regressor's own score, grouped rows: as given
    assert cost_scorings(_plan(forest, 3, scoring="f1"), binary) == ("f1",)
    assert cost_scorings(_plan(Ridge(), 3), binary) == (None,)
    assert cost_scorings(_plan(forest, 3, kind=GROUPS), binary) == (None,)
    assert cost_scorings(_plan(LogisticRegression(), 3), binary)[0] == "roc_auc"


def test_selection_cost_is_not_measured_where_the_weighed_rows_hold_one_class():
    # scikit-learn's check_classifiers_one_label_sample_weights: a forest of
    # scikit-learn < 1.7 gives NaN probabilities where a tree's sample
    # weighs nothing, and a constant predicts the one class that weighs
    rng = np.random.RandomState(0)
    X, y = rng.uniform(size=(10, 3)), np.arange(10) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selector = ImportanceSelector(
            RandomForestClassifier(n_estimators=5, random_state=0),
            method="mdi",
            n_probes=2,
            n_rounds=1,
            random_state=0,
        ).fit(X, y, sample_weight=y.astype(float))
    cost = selector.selection_score_
    assert cost.lost is None and cost.n_fits == 0 and cost.scores == {}
    assert (selector.predict(X) == 1).all()


def test_selection_score_loses_the_larger_share_of_its_scorings():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((400, 6))
    y = (X[:, :3].sum(axis=1) + rng.standard_normal(400) > 0).astype(int) + (
        X[:, 3] > 1
    )
    model = LogisticRegression()
    plan = _plan(model, 6)
    cost = selection_score(plan, X, y, np.arange(6) < 2, fit_kwargs={}, seed=1)
    assert set(cost.scores) == {"roc_auc_ovr", "neg_brier_score"}
    # the headline is the scoring by which the selection loses the most
    losts = {name: v["lost"] for name, v in cost.scores.items()}
    assert cost.scoring == max(losts, key=losts.get)
    assert cost.lost == max(losts.values()) and min(losts.values()) >= 0
    assert cost.kept == cost.scores[cost.scoring]["kept"]
    assert cost.scores["roc_auc_ovr"]["chance"] == pytest.approx(0.5)
    # the same, taking all columns' scores from it
    again = selection_score(
        plan, X, y, np.arange(6) < 2, fit_kwargs={}, seed=1, known=cost
    )
    assert again.scores == cost.scores and again.n_fits == 2


def _held_out(seed=0):
    """Two halves' stored probabilities of a two-class model, as
    selection_score keeps them for the null threshold."""
    from sklearn.metrics import check_scoring

    from sklearn_fimp._utils._scoring import StoredClassifierOutputs

    rng = np.random.default_rng(seed)
    halves = []
    for n in (50, 51):
        p = rng.uniform(size=n)
        stored = StoredClassifierOutputs(np.array([0, 1]), proba=np.c_[1 - p, p])
        scorer = check_scoring(LogisticRegression(), scoring="roc_auc")
        halves.append(([scorer], stored, np.empty((n, 0)), rng.integers(0, 2, n), None))
    return halves


def _permuted_aucs(held_out, seed, n_draws):
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    draws = [[] for _ in held_out]
    for _ in range(n_draws):
        for drawn, (_, stored, _, y, _) in zip(draws, held_out):
            drawn.append(roc_auc_score(y[rng.permutation(len(y))], stored.proba[:, 1]))
    center = np.mean([np.mean(d) for d in draws])
    return center + CHANCE_Z * np.mean([np.std(d, ddof=1) for d in draws])


def test_null_threshold_is_the_permuted_scores_as_written_out():
    held_out = _held_out()
    # all columns' score below any threshold: every draw is made
    got = null_threshold(held_out, 0, seed=3, every=-np.inf)
    assert got == pytest.approx(_permuted_aucs(held_out, 3, NULL_PERMUTATIONS))
    # far beyond it: the draws stop after the first batch
    early = null_threshold(held_out, 0, seed=3, every=2.0)
    assert early == pytest.approx(_permuted_aucs(held_out, 3, NULL_BATCH))


def test_no_loss_is_measured_where_all_columns_gain_by_chance():
    # On 100 rows of noise a regularized logistic regression scores above a
    # constant on its held-out halves, by the ROC AUC or the Brier score, in
    # 27 of 60 data sets; kept columns that predict nothing then read as a
    # loss of 100% or more, and the guard added noise. With the null
    # threshold a loss is measured only where the gain beats predictions
    # that know nothing of y: 1 of 500 other seeds. At most 2 of 40 here
    # (more has a probability below 0.001 at a rate of 0.003).
    plan = _plan(LogisticRegression(C=0.02), 5)
    measured = by_chance = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        X, y = rng.standard_normal((100, 5)), rng.integers(0, 2, 100)
        cost = selection_score(plan, X, y, np.zeros(5, bool), fit_kwargs={}, seed=seed)
        measured += cost.lost is not None
        by_chance += any(v["all"] > v["chance"] for v in cost.scores.values())
    assert by_chance >= 10  # the gains by chance the threshold is for
    assert measured <= 2
