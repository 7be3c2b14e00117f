"""Permutation importance of linear models (``_importance/_linear.py``):
equal to scikit-learn's for the same draws, alone and behind steps, with
ties repaired by the model itself."""

import numpy as np
import pytest
from sklearn.compose import make_column_transformer
from sklearn.datasets import make_classification, make_regression
from sklearn.inspection import permutation_importance as sklearn_permutation
from sklearn.linear_model import (
    BayesianRidge,
    Lasso,
    LinearRegression,
    LogisticRegression,
    Ridge,
    RidgeClassifier,
    SGDClassifier,
    SGDRegressor,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures, StandardScaler
from sklearn.svm import LinearSVC

from sklearn_fimp import permutation_importance
from sklearn_fimp._importance import _linear
from sklearn_fimp._importance._linear import linear_inputs

CLASSIFIERS = {
    "logistic": lambda: LogisticRegression(max_iter=500),
    "sgd-log": lambda: SGDClassifier(loss="log_loss", random_state=0),
    "linear-svc": lambda: LinearSVC(),
    "ridge-classifier": lambda: RidgeClassifier(),
}
REGRESSORS = {
    "ols": LinearRegression,
    "ridge": Ridge,
    "lasso": lambda: Lasso(alpha=0.1),
    "bayesian-ridge": BayesianRidge,
    "sgd": lambda: SGDRegressor(random_state=0),
}


def classification(n_classes=2, seed=0):
    return make_classification(
        n_samples=300,
        n_features=6,
        n_informative=3,
        n_classes=n_classes,
        random_state=seed,
    )


def assert_equal_to_sklearn(model, X, y, atol=1e-12, **kwargs):
    ours = permutation_importance(model, X, y, random_state=0, **kwargs)
    theirs = sklearn_permutation(model, X, y, random_state=0, **kwargs)
    np.testing.assert_allclose(ours.importances, theirs.importances, rtol=0, atol=atol)
    return ours


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("scoring", [None, "neg_log_loss", "roc_auc_ovr", "f1_macro"])
@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_linear_classifier_importance_equals_sklearn(name, scoring, n_classes):
    model = CLASSIFIERS[name]()
    if scoring in ("neg_log_loss", "roc_auc_ovr") and not hasattr(
        model, "predict_proba"
    ):
        pytest.skip("the scorer needs probabilities")
    X, y = classification(n_classes)
    model = make_pipeline(StandardScaler(), model).fit(X[:200], y[:200])
    assert linear_inputs(model, X[200:], [np.array([j]) for j in range(6)])
    assert_equal_to_sklearn(model, X[200:], y[200:], scoring=scoring, n_repeats=3)


@pytest.mark.parametrize("scoring", [None, "neg_mean_squared_error", "r2"])
@pytest.mark.parametrize("name", list(REGRESSORS))
def test_linear_regressor_importance_equals_sklearn(name, scoring):
    X, y = make_regression(n_samples=300, n_features=6, noise=5.0, random_state=0)
    model = REGRESSORS[name]().fit(X[:200], y[:200])
    assert linear_inputs(model, X[200:], [np.array([j]) for j in range(6)])
    assert_equal_to_sklearn(
        model, X[200:], y[200:], atol=1e-9, scoring=scoring, n_repeats=3
    )


def test_linear_importance_of_several_outputs_equals_sklearn():
    X, y = make_regression(
        n_samples=200, n_features=5, n_targets=3, noise=1.0, random_state=0
    )
    model = Ridge().fit(X[:120], y[:120])
    assert_equal_to_sklearn(model, X[120:], y[120:], atol=1e-9, n_repeats=2)


def mixed_frame(seed=0, n=400):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "color": rng.choice(["red", "green", "blue"], size=n),
            "size": rng.choice(["S", "M", "L", "XL"], size=n),
        }
    )
    logit = X["a"] - 0.5 * X["b"] + (X["color"] == "red") * 1.5
    y = (logit + rng.logistic(size=n) > 0.5).astype(int).to_numpy()
    return X, y


@pytest.mark.parametrize("scoring", [None, "roc_auc", "neg_log_loss", "accuracy"])
def test_linear_importance_behind_encoders_and_mixing_steps(scoring):
    X, y = mixed_frame()
    pipeline = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["color", "size"]),
            (PolynomialFeatures(2), ["a", "b"]),
        ),
        StandardScaler(with_mean=False),
        LogisticRegression(max_iter=1000),
    ).fit(X[:250], y[:250])
    result = assert_equal_to_sklearn(
        pipeline, X[250:], y[250:], scoring=scoring, n_repeats=3
    )
    # a and b feed the polynomial terms together; the categories their own
    paths = ["transformed", "transformed", "block", "block"]
    assert list(result.pipeline_paths) == paths


@pytest.mark.parametrize("scoring", ["roc_auc", "accuracy", None])
def test_linear_importance_repairs_ties_between_rows_and_classes(scoring):
    # integer columns and coefficients: many rows share an output exactly,
    # and a regrouped sum can part them by a rounding; ROC AUC counts
    # tied pairs as halves, accuracy reads the sign of 0-ties
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(400, 4)).astype(float) * 0.1
    y = (X[:, 0] + X[:, 1] + rng.normal(scale=0.1, size=400) > 0.2).astype(int)
    model = LogisticRegression().fit(X, y)
    model.coef_ = np.array([[0.7, 0.3, -0.1, 0.1]])
    model.intercept_ = np.array([-0.3])
    assert_equal_to_sklearn(model, X, y, scoring=scoring, n_repeats=5)


def test_linear_importance_without_the_tie_repair_would_differ(monkeypatch):
    # the case above has ties the regrouped sums break: the test has teeth
    monkeypatch.setattr(_linear.LinearInputs, "_repair", lambda *args: None)
    with pytest.raises(AssertionError):
        test_linear_importance_repairs_ties_between_rows_and_classes("roc_auc")


def test_linear_importance_predicts_no_permuted_row_but_tied_ones(monkeypatch):
    X, y = classification()
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    calls = []
    original = _linear._raw

    def counted(model, Z):
        if Z.shape[1] == X.shape[1]:  # the model's inputs, not the link's
            calls.append(len(Z))
        return original(model, Z)

    monkeypatch.setattr(_linear, "_raw", counted)
    result = permutation_importance(model, X, y, scoring="neg_log_loss", n_repeats=5)
    # the rows once; no row of a permutation
    assert sum(calls) == len(X)
    assert list(result.pipeline_paths) == ["block"] * X.shape[1]


class _Shifted(Ridge):
    """A linear model whose prediction is not its coefficients'."""

    def predict(self, X):
        return super().predict(X) + 1.0


def test_a_model_that_is_not_its_coefficients_is_predicted():
    X, y = make_regression(n_samples=200, n_features=4, random_state=0)
    model = _Shifted().fit(X, y)
    assert linear_inputs(model, X, [np.array([j]) for j in range(4)]) is None
    assert_equal_to_sklearn(model, X, y, atol=1e-9, n_repeats=2)


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_identity_link_gives_the_models_outputs_of_its_raw_outputs(name):
    X, y = classification(3)
    model = CLASSIFIERS[name]().fit(X, y)
    raw = model.decision_function(X)
    link = _linear._identity_link(model, raw.shape[1])
    np.testing.assert_array_equal(link.decision_function(raw), raw)
    np.testing.assert_array_equal(link.predict(raw), model.predict(X))
    if hasattr(model, "predict_proba"):
        np.testing.assert_allclose(
            link.predict_proba(raw), model.predict_proba(X), rtol=0, atol=1e-15
        )


class _Calibrated(LogisticRegression):
    """A linear classifier whose probabilities are not its link's."""

    def predict_proba(self, X):
        proba = super().predict_proba(X)
        return proba**2 / (proba**2).sum(axis=1, keepdims=True)


def test_a_model_that_overrides_how_it_predicts_is_predicted():
    X, y = classification()
    model = _Calibrated().fit(X, y)
    assert linear_inputs(model, X, [np.array([j]) for j in range(6)]) is None
    assert_equal_to_sklearn(model, X, y, scoring="neg_log_loss", n_repeats=2)


def test_a_wide_sparse_encoding_is_predicted_not_made_dense(monkeypatch):
    X, y = mixed_frame()
    pipeline = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), ["color", "size"]),
            remainder=StandardScaler(),
        ),
        LogisticRegression(max_iter=1000),
    )
    pipeline.set_params(columntransformer__sparse_threshold=1.0).fit(X, y)
    groups = [np.array([j]) for j in range(X.shape[1])]
    assert linear_inputs(pipeline, X, groups) is not None
    monkeypatch.setattr(_linear, "DENSE_BYTES", 1000)
    assert linear_inputs(pipeline, X, groups) is None
    assert_equal_to_sklearn(pipeline, X, y, scoring="neg_log_loss", n_repeats=2)
