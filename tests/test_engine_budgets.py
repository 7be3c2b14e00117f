"""Chunks, batches and threads bound memory without changing a result."""

import numpy as np
import pytest
from sklearn.ensemble import (
    BaggingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeRegressor

from sklearn_fimp import oob_permutation_importance, permutation_importance
from sklearn_fimp._engine import _budgets, tree_ensemble

from ._engine_cases import make_data

pytestmark = pytest.mark.usefixtures("engine_backend", "reroute_every_group")


def test_engine_chunks_shrink_to_fit_the_routing_budget(monkeypatch):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2500, 4)).astype(np.float32)
    y = X[:, 0] + X[:, 1] * X[:, 2]
    model = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    ensemble = tree_ensemble(model)
    assert [len(c) for c in _budgets.row_chunks(ensemble, X, None)] == [2500]
    monkeypatch.setattr(_budgets, "ROUTING_BYTES", 1)
    chunks = _budgets.row_chunks(ensemble, X, None)
    assert [len(c) for c in chunks] == [1000, 1000, 500]
    np.testing.assert_array_equal(np.concatenate(chunks), np.arange(2500))


def test_engine_chunks_batches_and_threads_do_not_change_results(monkeypatch):
    X, y = make_data(3)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(
        X[:250], y[:250]
    )
    whole = permutation_importance(model, X[250:], y[250:], random_state=0)
    monkeypatch.setattr(_budgets, "CHUNK_ROWS", 37)
    monkeypatch.setattr(_budgets, "BATCH_BYTES", 1)
    monkeypatch.setattr(_budgets, "TASK_BYTES", 1)
    pieces = permutation_importance(model, X[250:], y[250:], n_jobs=2, random_state=0)
    np.testing.assert_allclose(pieces.importances, whole.importances, atol=1e-12)


@pytest.mark.parametrize("mode", ["validation", "oob", "per_tree"])
def test_engine_tasks_in_one_batch_or_one_by_one_agree_exactly(
    engine_backend, mode, monkeypatch
):
    # the compiled kernels take many (group, permutation) tasks per pass
    # over the trees (per tree: many groups per call); each row's changes
    # are added in the same order either way, so the importances are the
    # same to the last bit
    X, y = make_data(3)
    model = RandomForestClassifier(n_estimators=10, random_state=0)
    groups = [[0, 1], [2], [1, 3, 4], [4]]

    def importances():
        if mode == "validation":
            return permutation_importance(
                model, X[250:], y[250:], n_repeats=3, groups=groups, random_state=0
            ).importances
        return oob_permutation_importance(
            model,
            X,
            y,
            n_repeats=3,
            groups=groups,
            per_tree=mode == "per_tree",
            random_state=0,
        ).importances

    model.fit(*((X[:250], y[:250]) if mode == "validation" else (X, y)))
    monkeypatch.setattr(_budgets, "CHUNK_ROWS", 60)
    together = importances()
    monkeypatch.setattr(_budgets, "TASK_BYTES", 1)
    np.testing.assert_array_equal(importances(), together)


@pytest.mark.parametrize(
    "model",
    [
        RandomForestClassifier(n_estimators=10, random_state=0),
        BaggingRegressor(
            DecisionTreeRegressor(), n_estimators=10, max_features=0.6, random_state=0
        ),
    ],
    ids=["forest", "bagging"],
)
def test_engine_oob_chunks_and_batches_do_not_change_results(model, monkeypatch):
    X, y = make_data(0 if isinstance(model, BaggingRegressor) else 3)
    model.fit(X, y)
    whole = oob_permutation_importance(model, X, y, n_repeats=2, random_state=0)
    monkeypatch.setattr(_budgets, "CHUNK_ROWS", 37)
    monkeypatch.setattr(_budgets, "BATCH_BYTES", 1)
    monkeypatch.setattr(_budgets, "TASK_BYTES", 1)
    pieces = oob_permutation_importance(
        model, X, y, n_repeats=2, n_jobs=2, random_state=0
    )
    np.testing.assert_allclose(pieces.importances, whole.importances, atol=1e-12)
