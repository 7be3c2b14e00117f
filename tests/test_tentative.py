"""keep_tentative="cv": the tentative features a cross-validated score asks
for (``_selection/_deciding/_tentative.py``)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.datasets import make_classification
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._selection._deciding._tentative import tentative_sizes


def forest(n_estimators=20, classifier=False):
    model = RandomForestClassifier if classifier else RandomForestRegressor
    return model(n_estimators=n_estimators, random_state=0)


@pytest.fixture(scope="module")
def weak():
    """x0 strong, x1-x3 weak, 26 noise columns. With the selector below
    (5 rounds of a 20-tree forest, seed 7), x0 is confirmed and x1 and the
    noise column x8 are tentative (seeds fixed)."""
    rng = np.random.RandomState(1)
    X = rng.standard_normal((300, 30))
    y = X[:, :4] @ np.array([1.0, 0.3, 0.25, 0.2]) + rng.standard_normal(300)
    return X, y


PARAMS = dict(n_rounds=5, random_state=7, refit=False)


def test_tentative_sizes_double_up_to_all_of_them():
    assert tentative_sizes(3, 0).tolist() == [3]
    assert tentative_sizes(3, 1).tolist() == [3, 4]
    assert tentative_sizes(0, 5).tolist() == [0, 1, 2, 4, 5]
    assert tentative_sizes(2, 8).tolist() == [2, 3, 4, 6, 10]


def test_keep_tentative_cv_matches_the_one_se_rule_written_out(weak):
    X, y = weak
    plain = ImportanceSelector(forest(), **PARAMS).fit(X, y)
    cv = KFold(4)
    chosen = ImportanceSelector(forest(), keep_tentative="cv", cv=cv, **PARAMS).fit(
        X, y
    )
    # the same rounds and decisions: only the kept set differs
    np.testing.assert_array_equal(chosen.decisions_, plain.decisions_)
    decisions = plain.decisions_
    assert np.flatnonzero(decisions == "confirmed").tolist() == [0]
    assert sorted(np.flatnonzero(decisions == "tentative")) == [1, 8]

    # the reference: tentative features by p-value (then score), nested
    # sets of the confirmed one and 0, 1 and 2 of them, each scored by
    # cross_val_score of the same forest on the same folds (R^2)
    statistics = plain.importances_.statistics[: X.shape[1]]
    order = np.lexsort((-statistics, plain.pvalues_))
    tentative = [j for j in order if decisions[j] == "tentative"]
    sets = [sorted([0] + tentative[:k]) for k in (0, 1, 2)]  # X's order
    scores = np.array([cross_val_score(forest(), X[:, s], y, cv=cv) for s in sets])
    np.testing.assert_allclose(
        chosen.cv_results_["mean_test_score"], scores.mean(axis=1), rtol=1e-12
    )
    np.testing.assert_allclose(
        chosen.cv_results_["split2_test_score"], scores[:, 2], rtol=1e-12
    )
    assert chosen.cv_results_["n_features"].tolist() == [1, 2, 3]
    means = scores.mean(axis=1)
    best = int(np.argmax(means))
    error = scores[best].std(ddof=1) / np.sqrt(scores.shape[1])
    smallest = int(np.flatnonzero(means >= means[best] - error)[0])
    assert chosen.get_support(indices=True).tolist() == sets[smallest]
    # never a rejected feature; every confirmed one
    assert not chosen.support_[decisions == "rejected"].any()
    assert chosen.support_[decisions == "confirmed"].all()


@pytest.mark.parametrize("every_value", [True, np.True_])
def test_keep_tentative_cv_keeps_a_subset_of_what_true_keeps(weak, every_value):
    X, y = weak
    every = ImportanceSelector(forest(), keep_tentative=every_value, **PARAMS).fit(X, y)
    # True (or a numpy True, which the parameter's validation accepts) keeps
    # every tentative feature
    np.testing.assert_array_equal(
        every.support_, np.isin(every.decisions_, ["confirmed", "tentative"])
    )
    chosen = ImportanceSelector(forest(), keep_tentative="cv", **PARAMS).fit(X, y)
    assert not (chosen.support_ & ~every.support_).any()
    assert not hasattr(every, "cv_results_")
    # the default cv: 5 folds
    assert len([k for k in chosen.cv_results_ if k.startswith("split")]) == 5


def test_keep_tentative_cv_scores_a_classifier_by_log_loss_and_the_empty_set():
    # four informative columns of twelve, weakly separated, few rows: with
    # 3 rounds of a 20-tree forest nothing is confirmed and x2 and x3 are
    # tentative (seeds fixed), so the first candidate is no feature at all,
    # scored as the training rows' class shares predicted for every row, the
    # next the more significant of the two
    X, y = make_classification(
        n_samples=200,
        n_features=12,
        n_informative=4,
        n_redundant=0,
        shuffle=False,
        class_sep=0.5,
        random_state=6,
    )
    cv = StratifiedKFold(3)
    selector = ImportanceSelector(
        forest(classifier=True),
        keep_tentative="cv",
        cv=cv,
        n_rounds=3,
        min_features=0,
        random_state=5,
        refit=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        selector.fit(X, y)
    assert not (selector.decisions_ == "confirmed").any()
    assert np.flatnonzero(selector.decisions_ == "tentative").tolist() == [2, 3]
    results = selector.cv_results_
    assert results["n_features"].tolist() == [0, 1, 2]
    first = int(np.argmin(selector.pvalues_[[2, 3]])) + 2
    empty = [
        np.mean(np.log((np.bincount(y[train]) / len(train))[y[test]]))
        for train, test in cv.split(X, y)
    ]
    scores = [
        cross_val_score(
            forest(classifier=True), X[:, columns], y, cv=cv, scoring="neg_log_loss"
        )
        for columns in ([first], [2, 3])
    ]
    for k in range(3):
        np.testing.assert_allclose(
            results[f"split{k}_test_score"],
            [empty[k], scores[0][k], scores[1][k]],
            rtol=1e-12,
        )


def test_keep_tentative_cv_with_nothing_tentative_fits_nothing_more():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 6))
    y = X[:, :3] @ np.array([4.0, 3.0, 3.0]) + rng.normal(size=300)
    selector = ImportanceSelector(forest(), keep_tentative="cv", **PARAMS).fit(X, y)
    assert not (selector.decisions_ == "tentative").any()
    assert selector.get_support(indices=True).tolist() == [0, 1, 2]
    assert selector.cv_results_["n_features"].tolist() == [3]
    assert np.isnan(selector.cv_results_["mean_test_score"]).all()


def test_keep_tentative_cv_reads_cv_and_scoring(weak):
    X, y = weak
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selector = ImportanceSelector(
            forest(), keep_tentative="cv", cv=3, scoring="r2", **PARAMS
        ).fit(X, y)
    # it may warn what the selection costs (selection_score_), never that
    # cv or scoring went unread
    assert not [w for w in caught if "no effect" in str(w.message)]
    assert len([k for k in selector.cv_results_ if k.startswith("split")]) == 3
    # "auto" reads them where it chooses; without either the method
    # (MDI-oob) ignores them, and says so
    with pytest.warns(UserWarning, match="cv=3 has no effect"):
        ImportanceSelector(forest(), cv=3, keep_tentative=False, **PARAMS).fit(X, y)


def test_keep_tentative_cv_refit_without_it_drops_cv_results(weak):
    X, y = weak
    selector = ImportanceSelector(forest(), keep_tentative="cv", **PARAMS).fit(X, y)
    assert hasattr(selector, "cv_results_")
    selector.set_params(keep_tentative=False).fit(X, y)
    assert not hasattr(selector, "cv_results_")


def test_keep_tentative_cv_through_a_pipeline_listing_columns_by_name(weak):
    X, y = weak
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    frame_before = frame.copy()
    pipeline = make_pipeline(
        make_column_transformer((StandardScaler(), list(frame.columns))), forest()
    )
    selector = ImportanceSelector(
        pipeline, keep_tentative="cv", cv=KFold(4), **dict(PARAMS, refit=True)
    ).fit(frame, y)
    # each candidate is the Pipeline on its columns, by name: scaling does
    # not move a forest's splits, so the first (the confirmed features)
    # scores as the bare forest on them
    first = selector.decisions_ == "confirmed"
    expected = cross_val_score(forest(), X[:, first], y, cv=KFold(4))
    np.testing.assert_allclose(
        selector.cv_results_["mean_test_score"][0], expected.mean(), rtol=1e-9
    )
    kept = selector.decisions_[selector.support_]
    assert set(kept) <= {"confirmed", "tentative"} and len(kept) >= first.sum()
    assert selector.transform(frame).shape[1] == selector.support_.sum()
    assert np.isfinite(selector.score(frame, y))
    pd.testing.assert_frame_equal(frame, frame_before)


def test_keep_tentative_cv_fits_the_model_as_refitted_with_sample_weight(weak):
    X, y = weak
    weight = np.random.RandomState(0).uniform(0.5, 1.5, len(y))

    class Recording(RandomForestRegressor):
        fits = []

        def fit(self, X, y, sample_weight=None):
            Recording.fits.append((self.n_estimators, sample_weight is not None))
            return super().fit(X, y, sample_weight=sample_weight)

    selector = ImportanceSelector(
        Recording(n_estimators=100, random_state=0),
        keep_tentative="cv",
        **dict(PARAMS, refit=True),
    ).fit(X, y, sample_weight=weight)
    # the rounds: 30 trees (round_trees="auto"); every candidate's fit on
    # every fold, as the refit: all 100; the selection's score on the
    # halves, as the rounds: 30; each with the weights
    n_scored = selector.cv_results_["n_features"].size * 5
    assert Recording.fits == (
        [(30, True)] * selector.n_rounds_
        + [(100, True)] * n_scored
        + [(30, True)] * selector.selection_score_.n_fits
        + [(100, True)]
    )


@pytest.mark.parametrize("value", ["yes", "CV", 1.0])
def test_keep_tentative_rejects_other_values(weak, value):
    X, y = weak
    with pytest.raises(InvalidParameterError, match="keep_tentative"):
        ImportanceSelector(keep_tentative=value).fit(X, y)


def test_dummy_candidate_is_a_mean_for_a_regressor():
    # no confirmed feature and a tentative one: the empty set is scored as
    # the training rows' mean (DummyRegressor), by R^2 on the test rows
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 30))
    y = 0.25 * X[:, 0] + rng.standard_normal(300)
    cv = KFold(3)
    selector = ImportanceSelector(
        forest(),
        keep_tentative="cv",
        cv=cv,
        min_features=0,
        correction="holm",
        **PARAMS,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        selector.fit(X, y)
    assert not (selector.decisions_ == "confirmed").any()
    assert (selector.decisions_ == "tentative").any()
    expected = cross_val_score(DummyRegressor(), X[:, :1], y, cv=cv)
    np.testing.assert_allclose(
        [selector.cv_results_[f"split{k}_test_score"][0] for k in range(3)], expected
    )


def test_keep_tentative_cv_fits_a_class_of_one_row_in_every_fold():
    # issue 69: the default fit succeeded on a class of one row (its held-out
    # rows leave it out) and keep_tentative="cv" raised, the fold that held
    # the row out unable to score it
    from sklearn_fimp._utils._splits import folds_fitting_single_rows

    rng = np.random.RandomState(1)
    X = rng.normal(size=(120, 60))
    y = (X[:, :6].sum(axis=1) + rng.normal(size=120) > 0).astype(int)
    y[0] = 2
    forest = RandomForestClassifier(n_estimators=20, random_state=0)
    splits = folds_fitting_single_rows(forest, 5, y)
    assert len(splits) == 5
    assert all(0 in train and 0 not in test for train, test in splits)
    tested = np.sort(np.concatenate([test for _, test in splits]))
    np.testing.assert_array_equal(tested, np.arange(1, 120))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selector = ImportanceSelector(
            forest, n_rounds=3, keep_tentative="cv", random_state=0
        ).fit(X, y)
    assert (selector.decisions_ == "tentative").any()
    assert np.isfinite(selector.cv_results_["mean_test_score"]).all()
