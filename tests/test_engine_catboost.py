"""CatBoost's oblivious trees, through their adapter, give the importances
of the predict-every-row path for the same permutations."""

import numpy as np
import pytest
from sklearn.base import is_regressor

from sklearn_fimp._engine import tree_ensemble
from sklearn_fimp._engine.adapters import adapter_for

from ._engine_cases import assert_same_importances, count_engine_calls, make_data

catboost = pytest.importorskip("catboost")

from sklearn_fimp._engine.adapters._catboost import CatBoost  # noqa: E402

pytestmark = pytest.mark.usefixtures("engine_backend", "reroute_every_group")


def _model(n_classes, **params):
    model = (
        catboost.CatBoostRegressor if n_classes == 0 else catboost.CatBoostClassifier
    )
    params = {"iterations": 20, "depth": 4, "random_seed": 0, **params}
    return model(thread_count=1, verbose=False, allow_writing_files=False, **params)


def _data(n_classes, missing):
    """make_data with missing values in columns 1 and 3 when ``missing``,
    and, in the test rows, in column 4 (complete in training: CatBoost
    reads its missing values as -inf whatever ``nan_mode``)."""
    X, y = make_data(n_classes)
    if missing:
        rng = np.random.RandomState(2)
        X = X.copy()
        X[rng.uniform(size=400) < 0.15, 1] = np.nan
        X[rng.uniform(size=400) < 0.05, 3] = np.nan
        X[250:][rng.uniform(size=150) < 0.1, 4] = np.nan
    return X, y


def _scorings(n_classes):
    if n_classes == 0:
        return [None, "neg_mean_absolute_error"]
    return [None, "neg_log_loss", "roc_auc_ovr", "balanced_accuracy"]


@pytest.mark.parametrize(
    "nan_mode", [None, "Min", "Max"], ids=["complete", "nan_min", "nan_max"]
)
@pytest.mark.parametrize("n_classes", [0, 2, 3])
def test_engine_catboost_matches_generic_path(nan_mode, n_classes):
    X, y = _data(n_classes, missing=nan_mode is not None)
    params = {} if nan_mode is None else {"nan_mode": nan_mode}
    model = _model(n_classes, **params).fit(X[:250], y[:250])
    assert isinstance(adapter_for(model), CatBoost)
    ensemble = tree_ensemble(model)
    assert len(ensemble.terms) == model.tree_count_
    for scoring in _scorings(n_classes):
        result = assert_same_importances(
            model, X[250:], y[250:], scoring=scoring, n_repeats=3
        )
    if nan_mode is not None:
        # the column with missing values matters, so its NaN rows move
        assert result.importances_mean[1] > 0


@pytest.mark.parametrize("nan_mode", ["Min", "Max"])
def test_engine_catboost_missing_values_go_where_the_model_sends_them(nan_mode):
    # a column whose missing values decide the class: they must go to the
    # side of every border CatBoost's nan_mode gives them
    X, y = make_data(2)
    X = X.copy()
    X[::4, 0] = np.nan
    y = np.where(np.isnan(X[:, 0]), 1 if nan_mode == "Min" else 0, y)
    model = _model(2, nan_mode=nan_mode).fit(X[:250], y[:250])
    assert model.get_all_params()["nan_mode"] == nan_mode
    result = assert_same_importances(
        model, X[250:], y[250:], scoring="neg_log_loss", n_repeats=3
    )
    assert result.importances_mean[0] > 0


@pytest.mark.parametrize("depth", [1, 8])
@pytest.mark.parametrize("n_classes", [0, 3])
def test_engine_catboost_depths(depth, n_classes):
    X, y = _data(n_classes, missing=True)
    model = _model(n_classes, depth=depth, iterations=15).fit(X[:250], y[:250])
    ensemble = tree_ensemble(model)
    assert max(term.tree.max_depth for term in ensemble.terms) == depth
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)


def test_engine_catboost_groups_sample_weight_and_scorer():
    X, y = _data(3, missing=True)
    model = _model(3).fit(X[:250], y[:250])
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    weight[:20] = 0
    for scoring in ("neg_log_loss", "balanced_accuracy"):
        assert_same_importances(
            model,
            X[250:],
            y[250:],
            groups=[[0, 1], [1, 2, 3], 4],
            sample_weight=weight,
            scoring=scoring,
            n_repeats=3,
        )


def test_engine_catboost_compares_in_float32():
    # values on CatBoost's float32 borders and float64 values next to them
    # that round onto them: x > border is decided in float32
    X, y = make_data(2)
    model = _model(2).fit(X[:250], y[:250])
    info = adapter_for(model)._model()["features_info"]["float_features"]
    borders = np.float32(info[0]["borders"]).astype(np.float64)
    assert len(borders)
    picked = np.resize(borders, 150)
    X_test = X[250:].copy()
    X_test[:, 0] = np.select(
        [np.arange(150) % 3 == 0, np.arange(150) % 3 == 1],
        [picked, np.nextafter(picked, np.inf)],
        np.nextafter(picked, -np.inf),
    )
    # the float64 neighbours round onto the borders
    assert np.all(np.nextafter(picked, np.inf).astype(np.float32) == picked)
    weight = np.random.RandomState(1).uniform(0, 2, size=150)
    # scoring=None would be CatBoost's own score, which takes no weights
    result = assert_same_importances(
        model, X_test, y[250:], sample_weight=weight, scoring="accuracy", n_repeats=4
    )
    assert result.importances[0].std() > 0


@pytest.mark.parametrize(
    "loss",
    [
        "CrossEntropy",
        "MAE",
        "Quantile:alpha=0.3",
        "Poisson",
        "Tweedie:variance_power=1.5",
    ],
)
def test_engine_catboost_losses(loss):
    X, y = _data(2, missing=True)
    n_classes = 2 if loss == "CrossEntropy" else 0
    if n_classes == 0:
        y = np.exp(np.nan_to_num(X[:, 0]) / 2)
    model = _model(n_classes, loss_function=loss).fit(X[:250], y[:250])
    assert tree_ensemble(model) is not None
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)


def test_engine_catboost_multi_target_regression():
    X, y = _data(0, missing=True)
    Y = np.column_stack([y, np.nan_to_num(X[:, 1]) ** 2])
    model = _model(0, loss_function="MultiRMSE").fit(X[:250], Y[:250])
    assert tree_ensemble(model).n_outputs == 2
    assert_same_importances(model, X[250:], Y[250:], n_repeats=3)


@pytest.mark.parametrize("n_classes", [0, 2])
def test_engine_catboost_scale_and_bias(n_classes):
    # CatBoost's raw output is scale * (sum of leaf values) + bias
    X, y = _data(n_classes, missing=True)
    model = _model(n_classes).fit(X[:250], y[:250])
    model.set_scale_and_bias(0.7, [0.3])
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)


def test_engine_catboost_early_stopping_keeps_the_best_trees():
    X, y = _data(2, missing=True)
    model = _model(2, iterations=50, learning_rate=0.5, early_stopping_rounds=2)
    model.fit(X[:200], y[:200], eval_set=(X[200:250], y[200:250]))
    assert model.tree_count_ < 50
    assert len(tree_ensemble(model).terms) == model.tree_count_
    assert_same_importances(model, X[250:], y[250:], n_repeats=3)


def test_engine_catboost_pandas_input_matches_numpy():
    pd = pytest.importorskip("pandas")
    X, y = _data(2, missing=True)
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = _model(2).fit(frame[:250], y[:250])
    assert tree_ensemble(model) is not None
    assert_same_importances(model, frame[250:], y[250:], n_repeats=3)


def test_engine_catboost_categorical_features_take_the_generic_path():
    pd = pytest.importorskip("pandas")
    X, y = make_data(2)
    frame = pd.DataFrame(X, columns=list("abcde"))
    rng = np.random.RandomState(0)
    codes = np.clip((2 * X[:, 0] + 4 + rng.normal(size=400)).astype(int), 0, 7)
    frame.insert(1, "k", np.array(list("pqrstuvw"))[codes])
    model = _model(2, cat_features=["k"]).fit(frame[:250], y[:250])
    assert adapter_for(model) is not None
    assert tree_ensemble(model) is None
    result = assert_same_importances(model, frame[250:], y[250:], n_repeats=2)
    assert result.importances_mean[1] > 0


def test_engine_catboost_probability_threshold_takes_the_generic_path():
    X, y = _data(2, missing=True)
    model = _model(2).fit(X[:250], y[:250])
    model.set_probability_threshold(0.3)
    assert tree_ensemble(model) is None
    assert_same_importances(model, X[250:], y[250:], n_repeats=2)


@pytest.mark.parametrize("loss", ["RMSE", "Logloss", "MultiClass", "Poisson"])
def test_engine_catboost_plain_model_predicts_raw_values(loss):
    # the plain CatBoost model's predict gives the raw output, whatever its
    # loss
    n_classes = {"Logloss": 2, "MultiClass": 3}.get(loss, 0)
    X, y = _data(n_classes, missing=True)
    if loss == "Poisson":
        y = np.exp(np.nan_to_num(X[:, 0]) / 2)
    params = {"iterations": 15, "depth": 3, "loss_function": loss}
    params.update(thread_count=1, verbose=False, allow_writing_files=False)
    plain = catboost.CatBoost({**params, "random_seed": 0}).fit(X[:250], y[:250])
    # the engine takes it when scikit-learn takes it for a regressor: with a
    # classification loss it is a classifier whose predict gives raw values,
    # and CatBoost 1.2 gives the plain model no estimator tags
    # (scikit-learn 1.6 then takes it for neither)
    assert (tree_ensemble(plain) is not None) == is_regressor(plain)
    if is_regressor(plain):
        assert isinstance(adapter_for(plain), CatBoost)
    raw = plain.predict(X[250:])
    target = raw + np.random.RandomState(0).normal(scale=0.5, size=raw.shape)
    assert_same_importances(
        plain, X[250:], target, scoring="neg_mean_squared_error", n_repeats=3
    )


def test_engine_catboost_unfitted_takes_no_adapter():
    assert adapter_for(_model(2)) is None


def test_engine_serves_the_selector_on_catboost(monkeypatch):
    from sklearn_fimp import ImportanceSelector

    calls = count_engine_calls(monkeypatch)
    X, y = make_data(2)
    selector = ImportanceSelector(
        _model(2, iterations=10), method="permutation", n_repeats=2, random_state=0
    ).fit(X, y)
    assert calls
    assert selector.get_support().sum() >= 1


def test_an_unpickled_model_reads_as_the_model():
    """CatBoost 1.2 reports ``n_features_in_ == 0`` after pickling (as when
    a model is sent to a Dask or Spark worker); the adapter counts the
    columns from the model's export."""
    import pickle

    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    model = catboost.CatBoostClassifier(
        iterations=4, depth=2, verbose=0, thread_count=1, random_seed=0
    ).fit(X, y)
    copy = pickle.loads(pickle.dumps(model))
    ensemble = tree_ensemble(copy)
    assert ensemble is not None
    np.testing.assert_array_equal(
        ensemble.adapter.engine_input(X), tree_ensemble(model).adapter.engine_input(X)
    )
