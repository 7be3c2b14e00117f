"""method="shap" on LightGBM, XGBoost and CatBoost: the boosters' own exact
TreeSHAP, which needs no ``shap`` package (tests/test_shap.py covers shap's
TreeExplainer path)."""

import itertools
import math
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor

from sklearn_fimp import ImportanceSelector, shap_importance
from sklearn_fimp._importance._shap import shap_values

TASKS = ["regression", "binary", "multiclass"]


def _data(task, n_samples=120, n_features=4):
    if task == "regression":
        X, y = make_friedman1(
            n_samples=n_samples, n_features=max(n_features, 5), random_state=0
        )
        return X[:, :n_features], y
    X, y = make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=3,
        n_redundant=0,
        n_classes=3 if task == "multiclass" else 2,
        random_state=0,
    )
    return X, y


def _lightgbm(task, **params):
    lightgbm = pytest.importorskip("lightgbm")
    model = lightgbm.LGBMRegressor if task == "regression" else lightgbm.LGBMClassifier
    params = {"n_estimators": 4, "num_leaves": 5, "max_depth": 3, **params}
    return model(min_child_samples=5, verbose=-1, n_jobs=1, random_state=0, **params)


def _xgboost(task, **params):
    xgboost = pytest.importorskip("xgboost")
    model = xgboost.XGBRegressor if task == "regression" else xgboost.XGBClassifier
    params = {"n_estimators": 4, "max_depth": 3, **params}
    return model(n_jobs=1, random_state=0, **params)


def _catboost(task, **params):
    catboost = pytest.importorskip("catboost")
    model = (
        catboost.CatBoostRegressor
        if task == "regression"
        else catboost.CatBoostClassifier
    )
    params = {"iterations": 4, "depth": 3, **params}
    return model(thread_count=1, random_seed=0, verbose=0, **params)


def _margin(model, X):
    """The model's raw output, (n_rows, n_outputs)."""
    library = type(model).__module__.partition(".")[0]
    if library == "lightgbm":
        margin = model.predict(X, raw_score=True)
    elif library == "xgboost":
        margin = model.predict(X, output_margin=True)
    else:
        margin = model.predict(X, prediction_type="RawFormulaVal")
    return np.asarray(margin, dtype=np.float64).reshape(len(X), -1)


def _bias(model, X):
    """The expected value each booster adds to the contributions (the last
    of each output's block), (n_rows, n_outputs)."""
    from sklearn_fimp._importance import _shap

    library = type(model).__module__.partition(".")[0]
    contributions = getattr(_shap, f"_{library}_contributions")(model, X)
    contributions = np.asarray(contributions, dtype=np.float64)
    return contributions.reshape(len(X), -1, X.shape[1] + 1)[:, :, -1]


def _path_expectation(node, x, known):
    """A tree's path-dependent expectation of its output given the
    features ``known`` of row x: at a split on a known feature follow the
    row, otherwise average both children weighted by their training
    counts (LightGBM's dump; XGBoost's covers, as :func:`_xgboost_trees`
    writes them)."""
    if "leaf_value" in node:
        return node["leaf_value"]
    left, right = node["left_child"], node["right_child"]
    if node["split_feature"] in known:
        value, threshold = x[node["split_feature"]], node["threshold"]
        # numerical splits, no missing values here: LightGBM's "<=", XGBoost's "<"
        goes_left = (
            value <= threshold if node["decision_type"] == "<=" else (value < threshold)
        )
        return _path_expectation(left if goes_left else right, x, known)

    def count(child):
        return child.get("internal_count", child.get("leaf_count"))

    return (
        count(left) * _path_expectation(left, x, known)
        + count(right) * _path_expectation(right, x, known)
    ) / node["internal_count"]


def _enumerated_shapley(trees, x, n_features):
    """Exact Shapley values of row x, every subset of the features
    enumerated, the value of a subset the trees' summed path-dependent
    expectations."""

    def value(known):
        return sum(_path_expectation(tree, x, known) for tree in trees)

    phi = np.zeros(n_features)
    for i in range(n_features):
        others = [j for j in range(n_features) if j != i]
        for size in range(n_features):
            weight = (
                math.factorial(size)
                * math.factorial(n_features - size - 1)
                / math.factorial(n_features)
            )
            for subset in itertools.combinations(others, size):
                known = set(subset)
                phi[i] += weight * (value(known | {i}) - value(known))
    return phi


@pytest.mark.parametrize("task", ["regression", "multiclass"])
def test_shap_values_lightgbm_equal_enumerated_shapley_values(task):
    X, y = _data(task, n_features=4)
    model = _lightgbm(task, n_estimators=3).fit(X[:90], y[:90])
    dump = model.booster_.dump_model()
    n_outputs = dump["num_tree_per_iteration"]
    trees = [tree["tree_structure"] for tree in dump["tree_info"]]
    rows = X[90:100]
    values = shap_values(model, rows).reshape(len(rows), 4, -1)
    assert values.shape[2] == n_outputs
    for output in range(n_outputs):
        output_trees = trees[output::n_outputs]
        for r, x in enumerate(rows):
            np.testing.assert_allclose(
                values[r, :, output],
                _enumerated_shapley(output_trees, x, 4),
                rtol=1e-9,
                atol=1e-12,
            )
    # the importance's per-row values are their absolute values
    result = shap_importance(model, rows)
    np.testing.assert_allclose(
        result.importances.T, np.abs(values).mean(axis=2), rtol=1e-12
    )


def _xgboost_trees(model):
    """XGBoost's trees as nested nodes of LightGBM's dump (a node's cover,
    its training rows' hessian sum, in place of its count), with the class
    each tree adds to."""
    import json

    learner = json.loads(bytes(model.get_booster().save_raw(raw_format="json")))
    forest = learner["learner"]["gradient_booster"]["model"]

    def node(tree, k):
        cover = tree["sum_hessian"][k]
        if tree["left_children"][k] < 0:
            return {"leaf_value": tree["split_conditions"][k], "leaf_count": cover}
        return {
            "split_feature": tree["split_indices"][k],
            "threshold": np.float32(tree["split_conditions"][k]),
            "decision_type": "<",
            "internal_count": cover,
            "left_child": node(tree, tree["left_children"][k]),
            "right_child": node(tree, tree["right_children"][k]),
        }

    return [node(tree, 0) for tree in forest["trees"]], forest["tree_info"]


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_shap_values_xgboost_equal_enumerated_shapley_values(task):
    X, y = _data(task, n_features=4)
    model = _xgboost(task, n_estimators=3).fit(X[:90], y[:90])
    trees, classes = _xgboost_trees(model)
    rows = X[90:100].astype(np.float32)  # XGBoost reads float32
    values = shap_values(model, rows).reshape(len(rows), 4, -1)
    for output in range(values.shape[2]):
        output_trees = [t for t, c in zip(trees, classes) if c == output]
        for r, x in enumerate(rows):
            # XGBoost adds its contributions in float32
            np.testing.assert_allclose(
                values[r, :, output],
                _enumerated_shapley(output_trees, x, 4),
                rtol=1e-5,
                atol=1e-6,
            )


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("make_model", [_lightgbm, _xgboost, _catboost])
def test_shap_values_native_sum_to_the_raw_output(make_model, task):
    X, y = _data(task)
    model = make_model(task).fit(X[:80], y[:80])
    rows = X[80:]
    values = shap_values(model, rows)
    n_outputs = 3 if task == "multiclass" else 1
    expected_shape = (40, 4, 3) if n_outputs == 3 else (40, 4)
    assert values.shape == expected_shape
    total = values.reshape(40, 4, n_outputs).sum(axis=1) + _bias(model, rows)
    np.testing.assert_allclose(total, _margin(model, rows), rtol=1e-5, atol=1e-5)
    result = shap_importance(model, rows)
    np.testing.assert_allclose(
        result.importances_mean,
        np.abs(values.reshape(40, 4, n_outputs)).mean(axis=(0, 2)),
        rtol=1e-12,
    )


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("make_model", [_lightgbm, _xgboost, _catboost])
def test_shap_values_native_equal_tree_explainer(make_model, task):
    shap = pytest.importorskip("shap")
    X, y = _data(task)
    model = make_model(task).fit(X[:80], y[:80])
    rows = X[80:]
    theirs = np.asarray(shap.TreeExplainer(model).shap_values(rows))
    ours = shap_values(model, rows)
    np.testing.assert_allclose(ours, theirs.reshape(ours.shape), atol=1e-5)


def test_shap_values_xgboost_stop_early_missing_values_and_frames():
    pd = pytest.importorskip("pandas")
    X, y = _data("binary", n_samples=200)
    X[::7, 1] = np.nan
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["d"] = pd.Categorical(np.where(X[:, 3] > 0, "high", "low"))
    model = _xgboost(
        "binary",
        n_estimators=50,
        early_stopping_rounds=2,
        learning_rate=0.8,
        enable_categorical=True,
        tree_method="hist",
    )
    model.fit(frame[:120], y[:120], eval_set=[(frame[120:160], y[120:160])], verbose=0)
    assert model.best_iteration + 1 < 50  # predict adds only the best trees
    rows = frame[160:]
    values = shap_values(model, rows)
    total = values.sum(axis=1)[:, None] + _bias(model, rows)
    np.testing.assert_allclose(total, _margin(model, rows), rtol=1e-5, atol=1e-5)


def test_shap_values_catboost_categorical_features():
    pd = pytest.importorskip("pandas")
    X, y = _data("regression")
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["d"] = np.where(X[:, 3] > 0.5, "high", "low")
    model = _catboost("regression", cat_features=["d"]).fit(frame[:80], y[:80])
    rows = frame[80:]
    values = shap_values(model, rows)
    total = values.sum(axis=1)[:, None] + _bias(model, rows)
    np.testing.assert_allclose(total, _margin(model, rows), rtol=1e-6, atol=1e-6)


def test_shap_importance_pipeline_ending_in_lightgbm_sums_per_column():
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    X, y = _data("regression")
    frame = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    frame["c"] = np.where(X[:, 2] > 0.5, "x", "y")
    preprocessing = make_column_transformer(
        (StandardScaler(), ["a", "b"]), (OneHotEncoder(), ["c"])
    )
    pipeline = make_pipeline(preprocessing, _lightgbm("regression")).fit(frame, y)
    result = shap_importance(pipeline, frame[:30])
    values = shap_values(pipeline[-1], pipeline[:-1].transform(frame[:30]))
    summed = np.column_stack([values[:, 0], values[:, 1], values[:, 2:].sum(axis=1)])
    np.testing.assert_allclose(result.importances.T, np.abs(summed), rtol=1e-12)
    assert list(result.feature_names) == ["a", "b", "c"]


@pytest.mark.parametrize("task", ["regression", "multiclass"])
def test_shap_importance_of_a_group_sums_its_columns_signed_values(task):
    # a group's value on a row is the sum of its columns' signed values,
    # taken before the absolute value (the outputs' mean after it)
    X, y = _data(task)
    model = _lightgbm(task).fit(X, y)
    result = shap_importance(model, X[:40], groups={"ab": [0, 1], "c": [2]})
    values = shap_values(model, X[:40])
    if values.ndim == 2:
        values = values[:, :, None]
    expected = [
        np.abs(values[:, [0, 1]].sum(axis=1)).mean(axis=1),
        np.abs(values[:, 2]).mean(axis=1),
    ]
    rest = shap_importance(model, X[:40]).importances[3:]
    np.testing.assert_allclose(result.importances[:2], expected, rtol=1e-12)
    np.testing.assert_allclose(result.importances[2:], rest, rtol=1e-12)
    assert list(result.feature_names[:2]) == ["ab", "c"]
    assert [list(g) for g in result.groups[:2]] == [[0, 1], [2]]


@pytest.mark.parametrize("make_model", [_lightgbm, _catboost])
def test_selector_shap_with_boosters_needs_no_shap_package(make_model, monkeypatch):
    monkeypatch.setitem(sys.modules, "shap", None)  # blocks ``import shap``
    X, y = make_friedman1(n_samples=200, n_features=6, random_state=0)
    size = "n_estimators" if make_model is _lightgbm else "iterations"
    model = make_model("regression", **{size: 20})
    selector = ImportanceSelector(model, method="shap", random_state=0).fit(X, y)
    assert selector.get_support()[[0, 1, 3]].all()


def test_selector_shap_hist_gradient_boosting_without_shap_names_the_extra(
    monkeypatch,
):
    monkeypatch.setitem(sys.modules, "shap", None)
    X, y = make_friedman1(n_samples=60, n_features=5, random_state=2)
    with pytest.raises(ImportError, match=r'pip install "sklearn-fimp\[shap\]"'):
        ImportanceSelector(
            HistGradientBoostingRegressor(max_iter=5), method="shap"
        ).fit(X, y)
