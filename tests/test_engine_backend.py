"""The compiled and NumPy backends give the same results, and each
ensemble carries the backend it was prepared for."""

import pickle

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from sklearn_fimp import oob_permutation_importance
from sklearn_fimp._engine import tree_ensemble

from ._engine_cases import make_data
from .conftest import use_numpy_backend

pytestmark = pytest.mark.usefixtures("engine_backend", "reroute_every_group")


@pytest.mark.parametrize("per_tree", [False, True])
@pytest.mark.parametrize("groups", [None, [[0, 1], 2, [3, 4]]])
def test_engine_compiled_and_numpy_oob_agree(
    engine_backend, monkeypatch, per_tree, groups
):
    if engine_backend == "numpy":
        pytest.skip("compares the compiled kernels with the NumPy implementation")
    X, y = make_data(3)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)

    def importances():
        return oob_permutation_importance(
            model, X, y, n_repeats=3, per_tree=per_tree, groups=groups, random_state=0
        ).importances

    compiled = importances()
    use_numpy_backend(monkeypatch)
    np.testing.assert_allclose(compiled, importances(), atol=1e-12)


def test_engine_ensembles_carry_their_backend(engine_backend):
    X, y = make_data(2)
    model = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    ensemble = tree_ensemble(model)
    assert ensemble.backend.name == engine_backend
    # ensembles travel to joblib workers in processes
    assert pickle.loads(pickle.dumps(ensemble)).backend is ensemble.backend
