"""Scores beyond one chunk are summed chunk by chunk and equal the scorer's."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor

from sklearn_fimp import oob_permutation_importance
from sklearn_fimp._engine import _budgets

from ._engine_cases import (
    CLASSIFIERS,
    REGRESSORS,
    assert_same_importances,
    make_data,
)

pytestmark = pytest.mark.usefixtures("engine_backend", "reroute_every_group")


@pytest.mark.parametrize(
    "model, n_classes",
    [
        (GradientBoostingClassifier(n_estimators=15, random_state=0), 2),
        (CLASSIFIERS["bagging"], 3),
        (REGRESSORS["forest"], 0),
        (REGRESSORS["boosting"], 0),
    ],
    ids=["boosting-binary", "bagging-3-classes", "forest-regressor", "boosting-reg"],
)
def test_engine_rows_beyond_one_chunk_are_scored_chunk_by_chunk(
    model, n_classes, monkeypatch
):
    # Beyond one chunk, accuracy and R² are summed chunk by chunk; the
    # result is the scorer's on all rows.
    X, y = make_data(n_classes)
    model.fit(X[:250], y[:250])
    weight = np.random.RandomState(3).uniform(0, 2, size=150)
    weight[:10] = 0
    monkeypatch.setattr(_budgets, "CHUNK_ROWS", 40)
    assert_same_importances(
        model, X[250:], y[250:], sample_weight=weight, groups=[[0, 1], 2, 3, 4]
    )


def test_engine_oob_rows_beyond_one_chunk_are_scored_chunk_by_chunk(monkeypatch):
    X, y = make_data(0)
    model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    whole = oob_permutation_importance(model, X, y, n_repeats=2, random_state=0)
    monkeypatch.setattr(_budgets, "CHUNK_ROWS", 45)
    chunked = oob_permutation_importance(model, X, y, n_repeats=2, random_state=0)
    np.testing.assert_allclose(chunked.importances, whole.importances, atol=1e-12)


def _stand_in_classifier(classes):
    from sklearn.dummy import DummyClassifier

    labels = np.resize(np.asarray(classes), 2 * len(classes))
    return DummyClassifier().fit(np.zeros((len(labels), 1)), labels)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(
    "scoring, classes",
    [
        ("roc_auc", [0, 1]),
        ("roc_auc", ["no", "yes"]),
        ("roc_auc_ovr", [0, 1]),
        ("roc_auc_ovr", ["a", "b", "c"]),
        ("accuracy", [0, 1, 2]),
        (None, [0, 1]),
    ],
)
def test_direct_scores_equal_the_scorers(scoring, classes, weighted):
    # Scores by formula, without the scorer's checks, equal scikit-learn's on
    # the same stored outputs: tied values included (rounded probabilities),
    # decision values where the stand-in has them, zero weights.
    from sklearn_fimp._utils._scoring import (
        DirectScore,
        StoredClassifierOutputs,
        get_scorer,
        score_outputs,
    )

    rng = np.random.RandomState(0)
    n, k = 300, len(classes)
    classes = np.asarray(classes)
    y = classes[rng.randint(0, k, n)]
    weight = rng.uniform(0, 2, n) if weighted else None
    if weighted:
        weight[:20] = 0
    model = _stand_in_classifier(classes)
    scorer = get_scorer(model, scoring)
    direct = DirectScore.for_scoring(model, scoring, y, weight)
    assert direct is not None
    for _ in range(5):
        proba = np.round(rng.dirichlet(np.ones(k), n), 1)  # many ties
        proba /= proba.sum(axis=1, keepdims=True)
        stored = [StoredClassifierOutputs(classes, proba=proba)]
        if k == 2 and scoring != "roc_auc_ovr":  # it reads probabilities only
            decision = np.round(rng.normal(size=n), 1)
            stored.append(StoredClassifierOutputs(classes, decision=decision))
        for outputs in stored:
            expected = score_outputs(scorer, outputs, y, weight)
            assert direct(outputs) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_direct_scores_leave_what_they_do_not_cover_to_the_scorer():
    from sklearn_fimp._utils._scoring import DirectScore, StoredClassifierOutputs

    model = _stand_in_classifier([0, 1, 2])
    y = np.array([0, 1, 2, 1, 0, 2])
    # roc_auc on three classes raises in the scorer; a class missing from y
    # changes what the scorer does; other metrics have no formula here
    assert DirectScore.for_scoring(model, "roc_auc", y, None) is None
    assert DirectScore.for_scoring(model, "roc_auc_ovr", y[y < 2], None) is None
    assert DirectScore.for_scoring(model, "neg_log_loss", y, None) is None
    assert DirectScore.for_scoring(model, ["roc_auc"], y, None) is None
    direct = DirectScore.for_scoring(model, "roc_auc_ovr", y, None)
    unnormalised = StoredClassifierOutputs(np.arange(3), proba=np.ones((6, 3)))
    assert direct(unnormalised) is None
