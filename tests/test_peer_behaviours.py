"""Behaviours found by porting other projects' tests: scikit-learn's
``test_select_from_model_pls``, feature-engine's
``test_raises_threshold_error`` and eli5's permutation importance under
``cv`` with ``sample_weight``. Each test says what sklearn_fimp does and
why, where it differs from the project the case came from."""

import numpy as np
import pytest
from sklearn.cross_decomposition import CCA, PLSCanonical, PLSRegression
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._selection._deciding._decisions import UNKNOWN_CAUSE, TooFewPassed


@pytest.mark.parametrize("model", [PLSCanonical, PLSRegression, CCA])
def test_cross_decomposition_model_in_front_of_itself(model):
    # scikit-learn's case: SelectFromModel's pipeline scores above 0.5
    X, y = make_friedman1(n_samples=50, n_features=10, random_state=0)
    pipe = make_pipeline(
        ImportanceSelector(model(n_components=1), random_state=0),
        model(n_components=1),
    ).fit(X, y)
    assert pipe.score(X, y) > 0.5
    # the first five columns carry y; the selection keeps some of them
    assert set(pipe[0].get_support(indices=True)) & {0, 1, 3, 4}


def _classes(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.standard_normal((60, 4))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("threshold", ["hello", [0.1], None, np.nan])
def test_threshold_that_cannot_be_read_raises_naming_it(threshold):
    # feature-engine raises in __init__; a scikit-learn estimator checks
    # its parameters in fit, where GridSearchCV's clones are fitted
    selector = ImportanceSelector(
        RandomForestClassifier(n_estimators=5), threshold=threshold
    )
    with pytest.raises(ValueError, match="threshold"):
        selector.fit(*_classes())


def test_threshold_above_every_importance_says_so():
    selector = ImportanceSelector(
        RandomForestClassifier(n_estimators=5, random_state=0),
        threshold=5.0,
        n_rounds=2,
        random_state=0,
    )
    with pytest.warns(TooFewPassed) as caught:
        selector.fit(*_classes())
    largest = selector.importances_.importances_mean.max()
    (message,) = {str(w.message) for w in caught if w.category is TooFewPassed}
    assert "The threshold (5) is above the mean importance of 4 of them" in message
    assert f"the largest is {largest:.4g}" in message
    # the threshold kept the features out, not the model
    assert UNKNOWN_CAUSE not in message
    # min_features=1 keeps the most important
    assert selector.get_support(indices=True).tolist() == [
        int(np.argmax(selector.importances_.importances_mean))
    ]


class _WeightsSeen(Ridge):
    """A Ridge that records the weights of the rows it is fitted on."""

    def fit(self, X, y, sample_weight=None):
        _WeightsSeen.fitted.append(sample_weight)
        return super().fit(X, y, sample_weight=sample_weight)


def test_cv_fits_and_scores_each_split_with_its_rows_weights():
    # eli5 fits each split with its training rows' weights but scores the
    # held-out rows unweighted; here they weigh in the score too, as in
    # scikit-learn's permutation_importance(sample_weight=...)
    rng = np.random.RandomState(0)
    X = rng.standard_normal((60, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(60)
    weight = rng.uniform(0.5, 2.0, size=60)
    scored = []

    def weighted_r2(estimator, X, y, sample_weight=None):
        scored.append(sample_weight)
        return r2_score(y, estimator.predict(X), sample_weight=sample_weight)

    cv = KFold(3)
    _WeightsSeen.fitted = []
    ImportanceSelector(
        _WeightsSeen(),
        method="permutation",
        threshold="mean",
        cv=cv,
        scoring=weighted_r2,
        refit=False,
        random_state=0,
    ).fit(X, y, sample_weight=weight)
    trains = [weight[train] for train, _ in cv.split(X)]
    tests = [weight[test] for _, test in cv.split(X)]
    # the rounds' fits of the splits of cv (the others are selection_score_'s
    # halves, of 30 rows), then the scores of their held-out rows
    split_fits = [seen for seen in _WeightsSeen.fitted if len(seen) == 40]
    assert len(split_fits) == 3
    for seen, w in zip(split_fits, trains):
        np.testing.assert_array_equal(seen, w)
    split_scores = [seen for seen in scored if len(seen) == 20]
    assert len(split_scores) > 3
    for seen in split_scores:
        assert any(np.array_equal(seen, w) for w in tests)
    for w in tests:
        assert any(np.array_equal(seen, w) for seen in split_scores)
