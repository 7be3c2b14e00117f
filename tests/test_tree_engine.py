"""The tree engine gives the importances of the predict-every-row path."""

import numpy as np
import pytest
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from sklearn_fimp import oob_permutation_importance, permutation_importance
from sklearn_fimp._engine import _tree_engine

CLASSIFIERS = {
    "tree": DecisionTreeClassifier(min_samples_leaf=3, random_state=0),
    "forest": RandomForestClassifier(n_estimators=12, random_state=0),
    "extra_trees": ExtraTreesClassifier(
        n_estimators=12, min_samples_leaf=2, random_state=0
    ),
    "boosting": GradientBoostingClassifier(n_estimators=15, random_state=0),
    "bagging": BaggingClassifier(
        DecisionTreeClassifier(), n_estimators=12, max_features=0.6, random_state=0
    ),
}
REGRESSORS = {
    "tree": DecisionTreeRegressor(min_samples_leaf=3, random_state=0),
    "forest": RandomForestRegressor(n_estimators=12, random_state=0),
    "extra_trees": ExtraTreesRegressor(n_estimators=12, random_state=0),
    "boosting": GradientBoostingRegressor(
        n_estimators=15, subsample=0.8, random_state=0
    ),
    "bagging": BaggingRegressor(
        DecisionTreeRegressor(), n_estimators=12, max_features=0.6, random_state=0
    ),
}


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def kernels(request, monkeypatch):
    """Every test runs with the compiled kernels and with the NumPy
    implementation the engine falls back to without them."""
    if request.param == "numpy":
        monkeypatch.setattr(_tree_engine, "KERNELS", None)
    elif _tree_engine.KERNELS is None:
        pytest.skip("the compiled kernels (sklearn_fimp._ckernels) were not built")
    return request.param


@pytest.fixture(autouse=True)
def reroute_every_group(monkeypatch):
    """Small test forests use most features on most paths, where the engine
    would hand groups to the plain path; make it compute every group."""
    monkeypatch.setattr(_tree_engine, "MAX_AFFECTED_SHARE", 1.01)


def make_data(n_classes):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 5))
    signal = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] * X[:, 3]
    signal = signal + rng.normal(scale=0.5, size=400)
    if n_classes == 0:
        return X, signal
    edges = np.quantile(signal, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.digitize(signal, edges)


def generic(model):
    """The same fitted model behind a Pipeline, which the engine does not
    take: the predict-every-row path."""
    return Pipeline([("model", model)])


def assert_same_importances(model, X, y, **kwargs):
    fast = permutation_importance(model, X, y, random_state=0, **kwargs)
    slow = permutation_importance(generic(model), X, y, random_state=0, **kwargs)
    assert fast.baseline_score == pytest.approx(slow.baseline_score, abs=1e-12)
    np.testing.assert_allclose(fast.importances, slow.importances, atol=1e-10)
    return fast


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "scoring", [None, "neg_log_loss", "roc_auc_ovr", "balanced_accuracy"]
)
def test_engine_classifiers_match_generic_path(name, n_classes, scoring):
    X, y = make_data(n_classes)
    model = CLASSIFIERS[name].fit(X[:250], y[:250])
    assert _tree_engine.tree_ensemble(model) is not None
    assert_same_importances(model, X[250:], y[250:], scoring=scoring, n_repeats=2)


@pytest.mark.parametrize("name", sorted(REGRESSORS))
@pytest.mark.parametrize("scoring", [None, "neg_mean_absolute_error"])
def test_engine_regressors_match_generic_path(name, scoring):
    X, y = make_data(0)
    model = REGRESSORS[name].fit(X[:250], y[:250])
    assert _tree_engine.tree_ensemble(model) is not None
    assert_same_importances(model, X[250:], y[250:], scoring=scoring, n_repeats=2)


@pytest.mark.parametrize(
    "model",
    [CLASSIFIERS["forest"], CLASSIFIERS["boosting"], CLASSIFIERS["bagging"]],
    ids=["forest", "boosting", "bagging"],
)
def test_engine_groups_and_sample_weight_match_generic_path(model):
    X, y = make_data(3)
    model.fit(X[:250], y[:250])
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    weight[:20] = 0
    assert_same_importances(
        model,
        X[250:],
        y[250:],
        groups=[[0, 1], [1, 2, 3], 4],
        sample_weight=weight,
        n_repeats=3,
    )


def test_engine_multi_output_regression_matches_generic_path():
    X, y = make_data(0)
    Y = np.column_stack([y, X[:, 4] ** 2])
    model = RandomForestRegressor(n_estimators=8, random_state=0).fit(X[:250], Y[:250])
    assert_same_importances(model, X[250:], Y[250:])


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


def test_engine_chunks_batches_and_threads_do_not_change_results(monkeypatch):
    X, y = make_data(3)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(
        X[:250], y[:250]
    )
    whole = permutation_importance(model, X[250:], y[250:], random_state=0)
    monkeypatch.setattr(_tree_engine, "CHUNK_ROWS", 37)
    monkeypatch.setattr(_tree_engine, "BATCH_BYTES", 1)
    monkeypatch.setattr(_tree_engine, "TASK_BYTES", 1)
    pieces = permutation_importance(model, X[250:], y[250:], n_jobs=2, random_state=0)
    np.testing.assert_allclose(pieces.importances, whole.importances, atol=1e-12)


@pytest.mark.parametrize("mode", ["validation", "oob", "per_tree"])
def test_engine_tasks_in_one_batch_or_one_by_one_agree_exactly(
    kernels, mode, monkeypatch
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
    monkeypatch.setattr(_tree_engine, "CHUNK_ROWS", 60)
    together = importances()
    monkeypatch.setattr(_tree_engine, "TASK_BYTES", 1)
    np.testing.assert_array_equal(importances(), together)


def test_engine_pandas_input_matches_numpy():
    pd = pytest.importorskip("pandas")
    X, y = make_data(2)
    frame = pd.DataFrame(X, columns=list("abcde"))
    on_frame = RandomForestClassifier(n_estimators=8, random_state=0).fit(
        frame[:250], y[:250]
    )
    on_array = RandomForestClassifier(n_estimators=8, random_state=0).fit(
        X[:250], y[:250]
    )
    a = permutation_importance(on_frame, frame[250:], y[250:], random_state=0)
    b = permutation_importance(on_array, X[250:], y[250:], random_state=0)
    np.testing.assert_array_equal(a.importances, b.importances)


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
    monkeypatch.setattr(_tree_engine, "CHUNK_ROWS", 37)
    monkeypatch.setattr(_tree_engine, "BATCH_BYTES", 1)
    monkeypatch.setattr(_tree_engine, "TASK_BYTES", 1)
    pieces = oob_permutation_importance(
        model, X, y, n_repeats=2, n_jobs=2, random_state=0
    )
    np.testing.assert_allclose(pieces.importances, whole.importances, atol=1e-12)


def test_engine_leaves_groups_every_path_uses_to_the_plain_path(kernels, monkeypatch):
    # Deep trees on two features use both on nearly every path: without the
    # compiled kernels, re-routing would cost as much as predicting. A
    # feature no tree splits on costs nothing to re-route.
    if kernels == "compiled":
        pytest.skip("compiled, the engine re-routes every group")
    monkeypatch.setattr(_tree_engine, "MAX_AFFECTED_SHARE", 0.8)
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.uniform(size=(500, 2)), np.zeros(500)])
    y = X[:, 0] + X[:, 1]
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    ensemble = _tree_engine.tree_ensemble(model)
    X32 = X.astype(np.float32)
    groups = [np.array([0]), np.array([1]), np.array([2])]
    assert list(_tree_engine.worth_rerouting(ensemble, X32, groups)) == [
        False,
        False,
        True,
    ]
    mixed = permutation_importance(model, X, y, random_state=0)
    plain = permutation_importance(generic(model), X, y, random_state=0)
    np.testing.assert_array_equal(mixed.importances, plain.importances)


@pytest.mark.parametrize("name", ["forest", "extra_trees", "bagging"])
def test_engine_missing_values_follow_the_trees_rule(name):
    # Trees trained with missing values send them where missing_go_to_left
    # says; permuted-in missing values and rows missing a value must be
    # re-routed accordingly.
    X, y = make_data(2)
    X[np.random.RandomState(2).uniform(size=X.shape) < 0.15] = np.nan
    model = CLASSIFIERS[name].fit(X[:250], y[:250])
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)
    assert_same_importances(model, X[250:], y[250:], groups=[[0, 1], 2, [3, 4]])


@pytest.mark.parametrize("per_tree", [False, True])
@pytest.mark.parametrize("groups", [None, [[0, 1], 2, [3, 4]]])
def test_engine_compiled_and_numpy_oob_agree(kernels, monkeypatch, per_tree, groups):
    if kernels == "numpy":
        pytest.skip("compares the compiled kernels with the NumPy implementation")
    X, y = make_data(3)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)

    def importances():
        return oob_permutation_importance(
            model, X, y, n_repeats=3, per_tree=per_tree, groups=groups, random_state=0
        ).importances

    compiled = importances()
    monkeypatch.setattr(_tree_engine, "KERNELS", None)
    np.testing.assert_allclose(compiled, importances(), atol=1e-12)


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
    monkeypatch.setattr(_tree_engine, "CHUNK_ROWS", 40)
    assert_same_importances(
        model, X[250:], y[250:], sample_weight=weight, groups=[[0, 1], 2, 3, 4]
    )


def test_engine_oob_rows_beyond_one_chunk_are_scored_chunk_by_chunk(monkeypatch):
    X, y = make_data(0)
    model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    whole = oob_permutation_importance(model, X, y, n_repeats=2, random_state=0)
    monkeypatch.setattr(_tree_engine, "CHUNK_ROWS", 45)
    chunked = oob_permutation_importance(model, X, y, n_repeats=2, random_state=0)
    np.testing.assert_allclose(chunked.importances, whole.importances, atol=1e-12)


def test_engine_chunks_shrink_to_fit_the_routing_budget(monkeypatch):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2500, 4)).astype(np.float32)
    y = X[:, 0] + X[:, 1] * X[:, 2]
    model = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    ensemble = _tree_engine.tree_ensemble(model)
    assert [len(c) for c in _tree_engine._chunks(ensemble, X, None)] == [2500]
    monkeypatch.setattr(_tree_engine, "ROUTING_BYTES", 1)
    chunks = _tree_engine._chunks(ensemble, X, None)
    assert [len(c) for c in chunks] == [1000, 1000, 500]
    np.testing.assert_array_equal(np.concatenate(chunks), np.arange(2500))
