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
