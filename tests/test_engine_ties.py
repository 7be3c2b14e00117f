"""Tie repair: rows on a tie get the model's own outputs."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from sklearn_fimp import permutation_importance

from ._engine_cases import generic, make_data

pytestmark = pytest.mark.usefixtures("engine_backend", "reroute_every_group")


def test_engine_fully_grown_trees_break_ties_like_predict():
    # Leaf values 0/1 and an even number of trees: exact 50/50 votes are
    # common, and the engine must resolve them as predict_proba does.
    X, y = make_data(2)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(
        X[:250], y[:250]
    )
    fast = permutation_importance(model, X[250:], y[250:], random_state=0)
    slow = permutation_importance(generic(model), X[250:], y[250:], random_state=0)
    np.testing.assert_array_equal(fast.importances, slow.importances)


@pytest.mark.parametrize("oob", [False, True], ids=["validation", "oob"])
def test_engine_rank_ties_repaired_many_tasks_at_once_like_one_by_one(oob, monkeypatch):
    # ROC AUC on a fully grown forest's vote shares: most moved rows tie
    # with another row and are recomputed in the model's order; the repairs
    # of many (group, permutation) tasks share one pass over the trees, and
    # give each row what a repair of its task alone gives, to the last bit
    from sklearn_fimp import oob_permutation_importance
    from sklearn_fimp._engine import _budgets

    X, y = make_data(2)
    model = RandomForestClassifier(n_estimators=10, random_state=0)
    groups = [[0, 1], [2], [1, 3, 4], [4]]

    def importances(model, X, y):
        if oob:
            return oob_permutation_importance(
                model,
                X,
                y,
                scoring="roc_auc",
                n_repeats=3,
                groups=groups,
                random_state=0,
            ).importances
        return permutation_importance(
            model,
            X,
            y,
            scoring="roc_auc",
            n_repeats=3,
            groups=groups,
            random_state=0,
        ).importances

    rows = slice(None) if oob else slice(250, None)
    model.fit(*((X, y) if oob else (X[:250], y[:250])))
    together = importances(model, X[rows], y[rows])
    if not oob:
        slow = importances(generic(model), X[rows], y[rows])
        np.testing.assert_allclose(together, slow, rtol=0, atol=1e-12)
    monkeypatch.setattr(_budgets, "TASK_BYTES", 1)  # one task per repair
    np.testing.assert_array_equal(importances(model, X[rows], y[rows]), together)
