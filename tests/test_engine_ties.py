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
