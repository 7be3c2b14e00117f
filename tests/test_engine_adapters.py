"""Every supported model family gives, through its adapter, the importances
of the predict-every-row path."""

import inspect
import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import (
    BaggingClassifier,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.neighbors import KNeighborsClassifier

from sklearn_fimp import permutation_importance
from sklearn_fimp._engine import tree_ensemble
from sklearn_fimp._engine.adapters import adapter_for
from sklearn_fimp._engine.adapters._lightgbm import LightGBM
from sklearn_fimp._engine.adapters._sklearn_boosting import GradientBoosting
from sklearn_fimp._engine.adapters._sklearn_hist_boosting import HistGradientBoosting
from sklearn_fimp._engine.adapters._sklearn_trees import AveragedTrees
from sklearn_fimp._engine.adapters._xgboost import XGBoost

from ._engine_cases import (
    CLASSIFIERS,
    REGRESSORS,
    assert_same_importances,
    count_engine_calls,
    generic,
    make_data,
)

pytestmark = pytest.mark.usefixtures("engine_backend", "reroute_every_group")


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "scoring", [None, "neg_log_loss", "roc_auc_ovr", "balanced_accuracy"]
)
def test_engine_classifiers_match_generic_path(name, n_classes, scoring):
    X, y = make_data(n_classes)
    model = CLASSIFIERS[name].fit(X[:250], y[:250])
    assert tree_ensemble(model) is not None
    assert_same_importances(model, X[250:], y[250:], scoring=scoring, n_repeats=2)


@pytest.mark.parametrize("name", sorted(REGRESSORS))
@pytest.mark.parametrize("scoring", [None, "neg_mean_absolute_error"])
def test_engine_regressors_match_generic_path(name, scoring):
    X, y = make_data(0)
    model = REGRESSORS[name].fit(X[:250], y[:250])
    assert tree_ensemble(model) is not None
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


def test_engine_adapters_take_the_supported_families_only():
    X, y = make_data(2)
    for name, model in {**CLASSIFIERS, **REGRESSORS}.items():
        model = clone(model).fit(X, y)
        adapter = adapter_for(model)
        expected = {
            "boosting": GradientBoosting,
            "hist_boosting": HistGradientBoosting,
        }.get(name, AveragedTrees)
        assert isinstance(adapter, expected), name
        assert adapter_for(generic(model)) is None
    # a Bagging ensemble of other estimators, or a multi-output classifier,
    # is taken by no adapter's ensemble
    bagged_knn = BaggingClassifier(KNeighborsClassifier(), n_estimators=2).fit(X, y)
    assert tree_ensemble(bagged_knn) is None
    Y = np.column_stack([y, 1 - y])
    assert tree_ensemble(RandomForestClassifier(n_estimators=2).fit(X, Y)) is None


def _hist_data(n_classes, missing):
    X, y = make_data(n_classes)
    if missing:
        rng = np.random.RandomState(2)
        X = X.copy()
        X[rng.uniform(size=400) < 0.15, 1] = np.nan
        X[rng.uniform(size=400) < 0.05, 3] = np.nan
    return X, y


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize("n_classes", [0, 2, 3])
@pytest.mark.parametrize(
    "scoring", [None, "neg_log_loss", "roc_auc_ovr", "neg_mean_absolute_error"]
)
def test_engine_hist_boosting_matches_generic_path(missing, n_classes, scoring):
    if (scoring == "neg_mean_absolute_error") != (n_classes == 0) and scoring:
        pytest.skip("scorer of the other task")
    X, y = _hist_data(n_classes, missing)
    model = clone(
        REGRESSORS["hist_boosting"] if n_classes == 0 else CLASSIFIERS["hist_boosting"]
    )
    model.fit(X[:250], y[:250])
    assert tree_ensemble(model) is not None
    assert_same_importances(model, X[250:], y[250:], scoring=scoring, n_repeats=3)


@pytest.mark.parametrize(
    "model",
    [
        # early stopping: the predictors the model kept
        HistGradientBoostingClassifier(
            max_iter=200, early_stopping=True, n_iter_no_change=2, random_state=0
        ),
        # a link other than the identity
        HistGradientBoostingRegressor(loss="poisson", max_iter=20, random_state=0),
        HistGradientBoostingRegressor(loss="absolute_error", max_iter=20),
    ],
    ids=["early_stopping", "poisson", "absolute_error"],
)
def test_engine_hist_boosting_losses_and_early_stopping(model):
    X, y = _hist_data(2, missing=True)
    if isinstance(model, HistGradientBoostingRegressor):
        y = np.exp(X[:, 0] / 2)
    model = clone(model).fit(X[:250], y[:250])
    if model.early_stopping:
        assert model.n_iter_ < 200
    assert len(tree_ensemble(model).terms) == model.n_iter_
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)


def test_engine_hist_boosting_groups_and_sample_weight():
    X, y = _hist_data(3, missing=True)
    model = clone(CLASSIFIERS["hist_boosting"]).fit(X[:250], y[:250])
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    weight[:20] = 0
    assert_same_importances(
        model,
        X[250:],
        y[250:],
        groups=[[0, 1], [1, 2, 3], 4],
        sample_weight=weight,
        n_repeats=3,
        scoring="neg_log_loss",
    )


def test_engine_hist_boosting_compares_in_float64():
    # values that round to the same float32 on both sides of the model's
    # float64 thresholds: the engine must send them where the model does
    X, y = make_data(2)
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0)
    model.fit(X[:250], y[:250])
    nodes = np.concatenate([p.nodes for it in model._predictors for p in it])
    nodes = nodes[(nodes["is_leaf"] == 0) & (nodes["feature_idx"] == 0)]
    thresholds = np.unique(nodes["num_threshold"])
    X_test = X[250:].copy()
    picked = np.resize(thresholds, 150)
    X_test[:, 0] = np.where(
        np.arange(150) % 2 == 0, picked, np.nextafter(picked, np.inf)
    )
    # the test exercises values a float32 comparison would confuse
    above = np.nextafter(picked, np.inf)
    assert np.any(picked.astype(np.float32) == above.astype(np.float32))
    result = assert_same_importances(
        model, X_test, y[250:], scoring="neg_log_loss", n_repeats=4
    )
    assert result.importances[0].std() > 0


def _categorical_frame(n_classes, missing):
    """make_data's frame with a pandas categorical column "k" (eight
    categories, predictive) between its numerical ones, and missing values
    in "k" and "b" when ``missing``."""
    pd = pytest.importorskip("pandas")
    X, y = make_data(n_classes)
    frame = pd.DataFrame(X, columns=list("abcde"))
    rng = np.random.RandomState(0)
    codes = np.clip((2 * X[:, 0] + 4 + rng.normal(size=400)).astype(int), 0, 7)
    frame.insert(1, "k", pd.Categorical(np.array(list("pqrstuvw"))[codes]))
    if missing:
        frame.loc[rng.uniform(size=400) < 0.1, "k"] = np.nan
        frame.loc[rng.uniform(size=400) < 0.1, "b"] = np.nan
    return frame, y


def _categorical_splits_match_generic_path(model, frame, y, n_classes, **kwargs):
    """The model (fitted on the frame's first 250 rows) has categorical
    splits in the engine, and its importances on the rest equal the generic
    path's with the default scorer and a probabilistic one; the last
    result."""
    ensemble = tree_ensemble(model)
    assert any((term.tree.category_set >= 0).any() for term in ensemble.terms)
    scoring = "neg_mean_squared_error" if n_classes == 0 else "neg_log_loss"
    for scorer in (None, scoring):
        result = assert_same_importances(
            model, frame[250:], y[250:], scoring=scorer, n_repeats=3, **kwargs
        )
    return result


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize("n_classes", [0, 2, 3])
def test_engine_hist_boosting_categorical_matches_generic_path(missing, n_classes):
    frame, y = _categorical_frame(n_classes, missing)
    model = clone(
        REGRESSORS["hist_boosting"] if n_classes == 0 else CLASSIFIERS["hist_boosting"]
    ).fit(frame[:250], y[:250])
    result = _categorical_splits_match_generic_path(model, frame, y, n_classes)
    # the categorical column matters, and its permutations move rows
    assert result.importances_mean[1] > 0


def test_engine_hist_boosting_categorical_codes_of_numpy_input():
    # categorical_features on a numpy array: the model encodes the column's
    # values itself; values unseen in fit are unknown categories (missing)
    X, y = make_data(2)
    X = X.copy()
    X[:, 2] = np.clip(np.round(2 * X[:, 0] + 3), 0, 6)
    X[250:][::7, 2] = 9.0  # unknown to the model
    X[::11, 2] = np.nan
    model = HistGradientBoostingClassifier(
        max_iter=15, max_leaf_nodes=8, categorical_features=[2], random_state=0
    ).fit(X[:250], y[:250])
    assert any(
        (term.tree.category_set >= 0).any() for term in tree_ensemble(model).terms
    )
    assert_same_importances(
        model, X[250:], y[250:], groups=[[0, 2], 1, 3, 4], n_repeats=3
    )


def test_engine_hist_boosting_categorical_sample_weight_and_auc():
    frame, y = _categorical_frame(3, missing=True)
    model = clone(CLASSIFIERS["hist_boosting"]).fit(frame[:250], y[:250])
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    assert_same_importances(
        model,
        frame[250:],
        y[250:],
        sample_weight=weight,
        scoring="roc_auc_ovr",
        n_repeats=3,
    )


def test_engine_hist_boosting_pandas_input_matches_numpy():
    pd = pytest.importorskip("pandas")
    X, y = _hist_data(2, missing=True)
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = clone(CLASSIFIERS["hist_boosting"])
    on_frame = clone(model).fit(frame[:250], y[:250])
    on_array = clone(model).fit(X[:250], y[:250])
    assert tree_ensemble(on_frame) is not None
    a = permutation_importance(on_frame, frame[250:], y[250:], random_state=0)
    b = permutation_importance(on_array, X[250:], y[250:], random_state=0)
    np.testing.assert_array_equal(a.importances, b.importances)


# XGBoost sums its float32 leaf values in float32 and the engine in float64:
# importances agree to float32 precision (a probability's last bit)
XGB_ATOL = 1e-6


def _xgboost_model(n_classes, **params):
    xgboost = pytest.importorskip("xgboost")
    model = xgboost.XGBRegressor if n_classes == 0 else xgboost.XGBClassifier
    params = {"n_estimators": 20, "max_depth": 3, **params}
    return model(n_jobs=1, random_state=0, **params)


@pytest.mark.parametrize(
    "params",
    [
        {"booster": "dart", "rate_drop": 0.3},
        {"objective": "count:poisson"},
        {"missing": 0.0},
        {"early_stopping_rounds": 2, "n_estimators": 200},
    ],
    ids=["dart", "poisson", "missing_zero", "early_stopping"],
)
def test_engine_xgboost_boosters_objectives_and_early_stopping(params):
    X, y = _hist_data(2, missing=True)
    n_classes = 0 if params.get("objective") == "count:poisson" else 2
    if n_classes == 0:
        y = np.exp(X[:, 0] / 2)
    X = np.round(X, 1)  # zeros, for missing=0.0
    model = _xgboost_model(n_classes, **params)
    fit_params = {}
    if "early_stopping_rounds" in params:
        fit_params = {"eval_set": [(X[250:], y[250:])], "verbose": False}
    model.fit(X[:250], y[:250], **fit_params)
    if "early_stopping_rounds" in params:
        assert model.best_iteration + 1 < 200
        assert len(tree_ensemble(model).terms) == model.best_iteration + 1
    assert_same_importances(model, X[250:], y[250:], n_repeats=3, atol=XGB_ATOL)


def test_engine_xgboost_groups_sample_weight_and_float32_ties():
    # values on XGBoost's float32 split conditions and float64 values next
    # to them that round onto them: x < t is decided in float32
    X, y = _hist_data(3, missing=True)
    model = _xgboost_model(3).fit(X[:250], y[:250])
    conditions = np.unique(
        np.concatenate(
            [
                np.asarray(t.tree.threshold)[t.tree.feature >= 0]
                for t in tree_ensemble(model).terms
            ]
        )
    )
    assert len(conditions)
    booster = json.loads(bytes(model.get_booster().save_raw(raw_format="json")))
    tree = booster["learner"]["gradient_booster"]["model"]["trees"][0]
    on_zero = [
        c
        for f, c, left in zip(
            tree["split_indices"], tree["split_conditions"], tree["left_children"]
        )
        if f == 0 and left >= 0
    ]
    X_test = X[250:].copy()
    picked = np.resize(np.float32(on_zero), 150).astype(np.float64)
    X_test[:, 0] = np.where(
        np.arange(150) % 2 == 0, picked, np.nextafter(picked, -np.inf)
    )
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    result = assert_same_importances(
        model,
        X_test,
        y[250:],
        groups=[[0, 1], [1, 2, 3], 4],
        sample_weight=weight,
        n_repeats=3,
        atol=XGB_ATOL,
    )
    assert result.importances[0].std() > 0


def test_engine_xgboost_out_of_reach_takes_the_generic_path():
    # one tree per target of a multi-output regressor: not in the engine
    X, y = _hist_data(0, missing=True)
    targets = np.column_stack([y, X[:, 0]])
    model = _xgboost_model(0).fit(X[:250], targets[:250])
    assert adapter_for(model) is not None
    assert tree_ensemble(model) is None
    slow = permutation_importance(
        generic(model), X[250:], targets[250:], n_repeats=2, random_state=0
    )
    fast = permutation_importance(
        model, X[250:], targets[250:], n_repeats=2, random_state=0
    )
    np.testing.assert_array_equal(fast.importances, slow.importances)


@pytest.mark.parametrize("one_hot", [False, True], ids=["partition", "one_hot"])
@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize("n_classes", [0, 2, 3])
def test_engine_xgboost_categorical_matches_generic_path(one_hot, missing, n_classes):
    # XGBoost sends the categories listed at a node right (one category for
    # a one-hot split), every other one left, a missing one by default
    frame, y = _categorical_frame(n_classes, missing)
    model = _xgboost_model(
        n_classes,
        enable_categorical=True,
        tree_method="hist",
        max_cat_to_onehot=16 if one_hot else 1,
    ).fit(frame[:250], y[:250])
    result = _categorical_splits_match_generic_path(
        model, frame, y, n_classes, atol=XGB_ATOL
    )
    # the categorical column's permutations move rows
    assert np.all(result.importances[1] != 0)


def test_engine_xgboost_categorical_codes_of_numpy_input():
    # a numpy column declared categorical: XGBoost reads int(x); negative
    # values (-0.5 too), values past every list and NaN go left or by
    # default, never into a list; the missing value is the model's
    X, y = make_data(2)
    X = X.copy()
    X[:, 2] = np.clip(np.round(2 * X[:, 0] + 3), 0, 6)
    X[::9, 2] = np.nan
    X_test = X[250:]
    X_test[::7, 2] = -0.5
    X_test[::11, 2] += 0.7  # truncated
    X_test[::13, 2] = 40.0
    X_test[::17, 2] = -3.0
    X_test[::19, 2] = 2.0**24
    types = ["q", "q", "c", "q", "q"]
    model = _xgboost_model(
        2, enable_categorical=True, tree_method="hist", feature_types=types
    ).fit(X[:250], y[:250])
    assert any(
        (term.tree.category_set >= 0).any() for term in tree_ensemble(model).terms
    )
    for scoring in (None, "neg_log_loss"):
        assert_same_importances(
            model,
            X_test,
            y[250:],
            groups=[[0, 2], 1, 3, 4],
            scoring=scoring,
            atol=XGB_ATOL,
        )


def test_engine_xgboost_categorical_frame_coded_as_the_model_codes_it():
    # a frame whose categories are ordered otherwise than in training:
    # XGBoost 3 codes its values by the training categories it stores (XGBoost
    # 2 has none and reads the frame's own codes); the engine codes them as
    # the installed XGBoost does, which the comparison with its predictions
    # checks either way
    frame, y = _categorical_frame(2, missing=True)
    model = _xgboost_model(2, enable_categorical=True, tree_method="hist")
    model.fit(frame[:250], y[:250])
    test = frame[250:].copy()
    test["k"] = test["k"].cat.reorder_categories(list("wvutsrqp"))
    if hasattr(model.get_booster(), "get_categories"):
        np.testing.assert_array_equal(
            model.predict_proba(test), model.predict_proba(frame[250:])
        )
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    assert_same_importances(
        model, test, y[250:], sample_weight=weight, n_repeats=3, atol=XGB_ATOL
    )


def _lightgbm_model(n_classes, **params):
    lightgbm = pytest.importorskip("lightgbm")
    model = lightgbm.LGBMRegressor if n_classes == 0 else lightgbm.LGBMClassifier
    params = {
        "n_estimators": 20,
        "num_leaves": 8,
        "min_child_samples": 5,
        "min_data_per_group": 5,
        "cat_smooth": 1.0,
        **params,
    }
    return model(n_jobs=1, random_state=0, verbose=-1, **params)


#: Per boosting library: the model factory, its adapter, and how closely
#: the engine's importances agree with the generic path's
BOOSTING_LIBRARIES = {
    "xgboost": (_xgboost_model, XGBoost, XGB_ATOL),
    "lightgbm": (_lightgbm_model, LightGBM, 1e-10),
}


@pytest.mark.parametrize("library", sorted(BOOSTING_LIBRARIES))
@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize("n_classes", [0, 2, 3])
def test_engine_boosting_library_matches_generic_path(library, missing, n_classes):
    make_model, adapter, atol = BOOSTING_LIBRARIES[library]
    X, y = _hist_data(n_classes, missing)
    model = make_model(n_classes).fit(X[:250], y[:250])
    assert isinstance(adapter_for(model), adapter)
    assert tree_ensemble(model) is not None
    scorings = (
        [None, "neg_mean_absolute_error"]
        if n_classes == 0
        else [None, "neg_log_loss", "roc_auc_ovr"]
    )
    for scoring in scorings:
        assert_same_importances(
            model, X[250:], y[250:], scoring=scoring, n_repeats=3, atol=atol
        )


@pytest.mark.parametrize(
    "params",
    [
        {"boosting_type": "rf", "bagging_freq": 1, "bagging_fraction": 0.7},
        {"boosting_type": "dart"},
        {"objective": "poisson"},
        {"zero_as_missing": True},
        {"use_missing": False},
        {"n_estimators": 200, "early_stopping_round": 2},
    ],
    ids=["rf", "dart", "poisson", "zero_as_missing", "no_missing", "early_stopping"],
)
def test_engine_lightgbm_boosting_types_missing_types_and_early_stopping(params):
    X, y = _hist_data(2, missing=True)
    n_classes = 0 if params.get("objective") == "poisson" else 2
    if n_classes == 0:
        y = np.exp(X[:, 0] / 2)
    X = np.round(X, 1)  # zeros, for zero_as_missing
    model = _lightgbm_model(n_classes, **params)
    fit_params = {}
    if "early_stopping_round" in params:
        # LightGBM 4.7 replaced eval_set by eval_X and eval_y
        if "eval_X" in inspect.signature(model.fit).parameters:
            fit_params = {"eval_X": (X[250:],), "eval_y": (y[250:],)}
        else:
            fit_params = {"eval_set": [(X[250:], y[250:])]}
    model.fit(X[:250], y[:250], **fit_params)
    if "early_stopping_round" in params:
        assert 0 < model.booster_.best_iteration < 200
        assert len(tree_ensemble(model).terms) == model.booster_.best_iteration
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)


def test_engine_lightgbm_categorical_codes_of_numpy_input():
    # LightGBM reads a categorical value as int(x): negative values, NaN
    # and categories unseen in fit go right
    X, y = make_data(3)
    X = X.copy()
    X[:, 2] = np.clip(np.round(2 * X[:, 0] + 3), 0, 6)
    X[::9, 2] = np.nan
    X[::13, 2] = -1.0
    X[250:][::7, 2] = 11.0
    X[250:][::5, 2] += 0.5  # truncated
    model = _lightgbm_model(3).fit(X[:250], y[:250], categorical_feature=[2])
    ensemble = tree_ensemble(model)
    assert any((term.tree.category_set >= 0).any() for term in ensemble.terms)
    for scoring in (None, "neg_log_loss"):
        assert_same_importances(
            model, X[250:], y[250:], groups=[[0, 2], 1, 3, 4], scoring=scoring
        )


@pytest.mark.parametrize("n_classes", [0, 2])
def test_engine_lightgbm_pandas_categorical_matches_generic_path(n_classes):
    frame, y = _categorical_frame(n_classes, missing=True)
    frame = frame.drop(columns="a")  # "k" carries its signal
    model = _lightgbm_model(n_classes).fit(frame[:250], y[:250])
    ensemble = tree_ensemble(model)
    assert any((term.tree.category_set >= 0).any() for term in ensemble.terms)
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    result = assert_same_importances(
        model, frame[250:], y[250:], sample_weight=weight, n_repeats=3
    )
    assert result.importances_mean[0] > 0


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_engine_serves_the_selector_on_boosting_libraries(library, monkeypatch):
    # the selector measures through the registry's permutation core, which
    # hands the booster to the engine with no change on the selector's side
    from sklearn_fimp import ImportanceSelector

    calls = count_engine_calls(monkeypatch)
    X, y = make_data(2)
    model = _xgboost_model(2) if library == "xgboost" else _lightgbm_model(2)
    selector = ImportanceSelector(
        model, method="permutation", n_repeats=2, random_state=0
    ).fit(X, y)
    assert calls
    assert selector.get_support().sum() >= 1


@pytest.mark.parametrize("library", ["hist_boosting", "xgboost", "lightgbm"])
def test_engine_boosting_input_coded_in_blocks_equals_whole(library, monkeypatch):
    # the boosting adapters validate and code X a block of rows at a time
    # (their float64 copies are a block's): the codes are those of the
    # whole X, categorical and missing values included
    from sklearn_fimp._engine import _budgets, engine_input

    frame, y = _categorical_frame(2, missing=True)
    if library == "hist_boosting":
        model, X = clone(CLASSIFIERS["hist_boosting"]), frame
    elif library == "lightgbm":
        model, X = _lightgbm_model(2), frame
    else:
        model = _xgboost_model(2)
        X = frame.drop(columns="k").to_numpy()
    model.fit(X[:250], y[:250])
    whole = engine_input(model, X[250:])
    monkeypatch.setattr(_budgets, "INPUT_ROWS", 37)
    blocks = engine_input(model, X[250:])
    assert blocks.dtype == whole.dtype == np.float32
    assert np.isnan(whole).any()
    np.testing.assert_array_equal(blocks, whole)
    assert_same_importances(
        model,
        X[250:],
        y[250:],
        n_repeats=2,
        atol=XGB_ATOL if library == "xgboost" else 1e-10,
    )


def test_engine_lightgbm_reg_sqrt_is_predicted_not_read():
    # reg_sqrt fits sqrt(|y|) with y's sign and squares the raw output back
    # in predict: the engine's links do not, so the model is predicted
    X, y = _hist_data(2, missing=True)
    y = np.exp(X[:, 0] / 2)
    model = _lightgbm_model(0, reg_sqrt=True).fit(X[:250], y[:250])
    assert tree_ensemble(model) is None
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)


@pytest.mark.parametrize("library", ["lightgbm", "xgboost", "sklearn"])
def test_engine_log_link_regressor_beyond_one_chunk_is_scored_through_its_link(
    library, monkeypatch
):
    # beyond one chunk R² is summed from row terms, which read the model's
    # predictions (exp of a Poisson booster's raw sums), not its raw sums
    from sklearn_fimp._engine import _budgets

    X, y = _hist_data(2, missing=False)
    y = np.exp(X[:, 0] / 2)
    if library == "lightgbm":
        model = _lightgbm_model(0, objective="poisson")
    elif library == "xgboost":
        xgboost = pytest.importorskip("xgboost")
        model = xgboost.XGBRegressor(
            objective="count:poisson", n_estimators=10, max_depth=3, n_jobs=1
        )
    else:
        model = HistGradientBoostingRegressor(loss="poisson", max_iter=10)
    model.fit(X[:250], y[:250])
    monkeypatch.setattr(_budgets, "CHUNK_ROWS", 40)
    assert_same_importances(
        model,
        X[250:],
        y[250:],
        n_repeats=2,
        atol=1e-5 if library == "xgboost" else 1e-12,
    )
