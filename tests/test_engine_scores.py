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


@pytest.mark.parametrize("scoring", ["neg_log_loss", "neg_brier_score"])
def test_engine_probability_scores_beyond_one_chunk_are_summed(scoring, monkeypatch):
    # log-loss and the binary Brier score are sums of row terms too: summed
    # chunk by chunk, they equal scikit-learn's permutation importance
    X, y = make_data(2)
    model = GradientBoostingClassifier(n_estimators=15, random_state=0)
    model.fit(X[:250], y[:250])
    weight = np.random.RandomState(3).uniform(0, 2, size=150)
    monkeypatch.setattr(_budgets, "CHUNK_ROWS", 40)
    assert_same_importances(
        model, X[250:], y[250:], sample_weight=weight, scoring=scoring
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
        ("neg_log_loss", [0, 1]),
        ("neg_log_loss", ["a", "b", "c"]),
        ("neg_brier_score", [0, 1]),
        ("neg_brier_score", [-1, 1]),
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
        proba[:5] = np.eye(k)[rng.randint(0, k, 5)]  # log-loss's clipped zeros
        stored = [StoredClassifierOutputs(classes, proba=proba)]
        reads_probabilities_only = ("roc_auc_ovr", "neg_log_loss", "neg_brier_score")
        if k == 2 and scoring not in reads_probabilities_only:
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
    # changes what the scorer does (log-loss raises, having no labels); the
    # Brier score has a formula here for two classes; other metrics none
    assert DirectScore.for_scoring(model, "roc_auc", y, None) is None
    assert DirectScore.for_scoring(model, "roc_auc_ovr", y[y < 2], None) is None
    assert DirectScore.for_scoring(model, "neg_log_loss", y[y < 2], None) is None
    assert DirectScore.for_scoring(model, "neg_brier_score", y, None) is None
    assert DirectScore.for_scoring(model, "neg_brier_score", y[y < 2], None) is None
    assert DirectScore.for_scoring(model, "neg_log_loss", y, None) is not None
    assert DirectScore.for_scoring(model, "f1_macro", y, None) is None
    assert DirectScore.for_scoring(model, ["roc_auc"], y, None) is None
    direct = DirectScore.for_scoring(model, "roc_auc_ovr", y, None)
    unnormalised = StoredClassifierOutputs(np.arange(3), proba=np.ones((6, 3)))
    assert direct(unnormalised) is None


def _replaced_X(X, columns, values):
    X_replaced = X.copy()
    X_replaced[:, columns] = values
    return X_replaced


@pytest.mark.parametrize(
    "family, n_classes",
    [
        ("forest", 0),
        ("boosting", 0),
        ("hist_boosting", 0),
        ("forest", 3),
        ("extra_trees", 2),
        ("boosting", 2),
        ("hist_boosting", 3),
        ("bagging", 2),
    ],
)
@pytest.mark.parametrize("chunk_rows", [None, 40])
def test_engine_replaced_outputs_equal_predict_on_replaced_rows(
    family, n_classes, chunk_rows, monkeypatch
):
    # Given values (not a permutation) for a group's columns: the engine's
    # outputs are the model's predictions on X with those columns replaced,
    # in one chunk or several, and the unchanged outputs are its predictions
    # on X.
    from sklearn.base import clone

    from sklearn_fimp._engine import (
        engine_input,
        replaced_scorer_outputs,
        tree_ensemble,
    )

    if chunk_rows is not None:
        monkeypatch.setattr(_budgets, "CHUNK_ROWS", chunk_rows)
    X, y = make_data(n_classes)
    models = CLASSIFIERS if n_classes else REGRESSORS
    model = clone(models[family]).fit(X[:250], y[:250])
    X_eval = X[250:]
    rng = np.random.RandomState(1)
    groups = [[0], [1, 3], [4]]
    values = {
        g: [rng.normal(size=(len(X_eval), len(columns))) for _ in range(2)]
        for g, columns in enumerate(groups)
    }
    X_engine = engine_input(model, X_eval)

    def engine_values(g):
        return [
            engine_input(model, _replaced_X(X_eval, groups[g], v))[:, groups[g]]
            for v in values[g]
        ]

    seen = set()
    for g, r, outputs, base in replaced_scorer_outputs(
        tree_ensemble(model),
        X_engine,
        groups,
        engine_values,
        2,
        n_jobs=1,
        ranks_matter=True,
    ):
        seen.add((g, r))
        X_replaced = _replaced_X(X_eval, groups[g], values[g][r])
        if n_classes:
            expected = model.predict_proba(X_replaced)
            np.testing.assert_allclose(
                outputs.predict_proba(None), expected, atol=1e-12
            )
            np.testing.assert_array_equal(
                outputs.predict(None), model.predict(X_replaced)
            )
            np.testing.assert_allclose(
                base.predict_proba(None), model.predict_proba(X_eval), atol=1e-12
            )
        else:
            np.testing.assert_allclose(
                outputs.predict(None), model.predict(X_replaced), atol=1e-12
            )
            np.testing.assert_allclose(
                base.predict(None), model.predict(X_eval), atol=1e-12
            )
    assert seen == {(g, r) for g in range(3) for r in range(2)}


def test_engine_permutation_is_given_values_of_permuted_rows():
    # One mechanism: a permutation's task and the task that gives each row
    # the permuted rows' values change the outputs identically.
    from sklearn_fimp._engine import engine_input, tree_ensemble
    from sklearn_fimp._engine._changes import (
        GivenValues,
        group_changes,
        permutation_tasks,
    )

    X, y = make_data(2)
    model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    ensemble = tree_ensemble(model)
    X_engine = engine_input(model, X)
    permutations = np.array([np.random.RandomState(s).permutation(400) for s in (0, 1)])
    groups = [[0], [1, 2]]
    given = [
        [GivenValues(X_engine[np.ix_(p, columns)]) for p in permutations]
        for columns in groups
    ]

    def changes(replacements):
        chunks = _budgets.row_chunks(ensemble, X_engine, None)
        start = ensemble.raw_start(X_engine)
        ((_, _, out),) = group_changes(
            ensemble,
            X_engine,
            groups,
            replacements,
            1,
            tree_rows=None,
            start=start,
            chunks=chunks,
            progress=None,
        )
        return out

    permuted = changes(permutation_tasks(permutations, len(groups)))
    assert np.abs(permuted).sum() > 0
    np.testing.assert_array_equal(permuted, changes(given))
