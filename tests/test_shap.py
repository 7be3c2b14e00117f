import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import (
    BaggingRegressor,
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression

from sklearn_fimp import ImportanceSelector, shap_importance

shap = pytest.importorskip("shap")


def _reference_mean_abs_shap(model, X):
    """mean |SHAP| written out with shap itself: per output, then averaged."""
    values = shap.TreeExplainer(model).shap_values(X)
    values = np.asarray(values)
    if values.ndim == 3:
        return np.abs(values).mean(axis=0).mean(axis=1)
    return np.abs(values).mean(axis=0)


@pytest.mark.parametrize("kind", ["regressor", "classifier", "boosting"])
def test_shap_importance_equals_shap_own_values(kind):
    if kind == "regressor":
        X, y = make_friedman1(n_samples=120, n_features=6, random_state=0)
        model = RandomForestRegressor(n_estimators=8, max_depth=4, random_state=0)
    else:
        n_classes = 3 if kind == "classifier" else 2  # shap: binary boosting only
        X, y = make_classification(
            n_samples=120,
            n_features=6,
            n_classes=n_classes,
            n_informative=3,
            random_state=0,
        )
        model = (
            RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0)
            if kind == "classifier"
            else GradientBoostingClassifier(n_estimators=10, random_state=0)
        )
    model.fit(X[:80], y[:80])
    result = shap_importance(model, X[80:])
    np.testing.assert_allclose(
        result.importances_mean, _reference_mean_abs_shap(model, X[80:]), rtol=1e-10
    )
    assert result.importances.shape == (6, 40)
    assert result.method == "shap"


def test_shap_importance_weights_and_rows():
    X, y = make_friedman1(n_samples=100, n_features=5, random_state=1)
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    weight = np.arange(1, 101, dtype=float)
    values = np.abs(shap.TreeExplainer(model).shap_values(X))
    weighted = shap_importance(model, X, sample_weight=weight)
    np.testing.assert_allclose(
        weighted.importances_mean, np.average(values, axis=0, weights=weight)
    )
    sub = shap_importance(model, X, max_samples=30, random_state=0)
    assert sub.importances.shape == (5, 30)
    again = shap_importance(model, X, max_samples=30, random_state=0)
    np.testing.assert_array_equal(sub.importances, again.importances)


def test_shap_importance_does_not_modify_input():
    X, y = make_friedman1(n_samples=60, n_features=5, random_state=2)
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    copy = X.copy()
    shap_importance(model, X)
    np.testing.assert_array_equal(X, copy)


def test_shap_importance_rejects_models_without_trees():
    X, y = make_friedman1(n_samples=60, n_features=5, random_state=2)
    with pytest.raises(TypeError, match="TreeExplainer"):
        shap_importance(LinearRegression().fit(X, y), X)


def test_selector_shap_method_names_the_supported_models():
    X, y = make_friedman1(n_samples=60, n_features=5, random_state=2)
    message = "method='shap' needs a LightGBM, XGBoost or CatBoost model"
    with pytest.raises(ValueError, match=message):
        ImportanceSelector(BaggingRegressor(), method="shap").fit(X, y)


def test_selector_with_shap_selects_friedman_features():
    X, y = make_friedman1(n_samples=300, n_features=10, random_state=0)
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=30), method="shap", random_state=0
    ).fit(X, y)
    assert set(selector.get_support(indices=True)) >= {0, 1, 3}
    assert not set(selector.get_support(indices=True)) & {5, 6, 7, 8, 9}


def test_shap_missing_extra_error_names_the_extra(monkeypatch):
    X, y = make_friedman1(n_samples=60, n_features=5, random_state=2)
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    monkeypatch.setitem(sys.modules, "shap", None)  # blocks ``import shap``
    message = r'pip install "sklearn-fimp\[shap\]"'
    with pytest.raises(ImportError, match=message):
        shap_importance(model, X)
    with pytest.raises(ImportError, match=message):
        ImportanceSelector(RandomForestRegressor(), method="shap").fit(X, y)


def test_report_offers_shap(tmp_path):
    from sklearn_fimp._report import main

    out = tmp_path / "shap.html"
    argv = ["report", "--demo", "--method", "shap,permutation", "--out", str(out)]
    assert main(argv + ["--n-estimators", "8", "--quiet"]) == 0
    assert "mean |SHAP|" in out.read_text(encoding="utf-8")
