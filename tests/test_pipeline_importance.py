"""Permutation importance of a fitted Pipeline on the tree engine, per
original column (``sklearn_fimp/_importance/_pipeline.py``): equal to
scikit-learn's ``permutation_importance`` on the same Pipeline and
permutations, whatever the preprocessing."""

import numpy as np
import pytest
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.decomposition import PCA
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.inspection import permutation_importance as sklearn_permutation
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    StandardScaler,
)

from sklearn_fimp import permutation_importance
from sklearn_fimp._importance._pipeline import input_sources, pipeline_inputs

pd = pytest.importorskip("pandas")


def mixed_frame(n=400, seed=0, missing=False):
    """Two numeric columns with signal, a categorical one with signal, a
    noise column of each kind; y for regression."""
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "c": rng.choice(["x", "y", "z", "w"], n),
            "noise": rng.normal(size=n),
            "noise_cat": rng.choice(["p", "q", "r"], n),
        }
    )
    y = 2 * X.a + X.b * X.noise * 0.3 + 2 * (X.c == "x") + rng.normal(size=n)
    if missing:
        X.loc[rng.rand(n) < 0.1, "a"] = np.nan
    return X, y.to_numpy()


NUMERIC = ["a", "b", "noise"]
CATEGORICAL = ["c", "noise_cat"]

PREPROCESSING = {
    # one-hot (sparse by default) and scaling, columns by name
    "onehot-scaler": lambda: make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), CATEGORICAL),
        (StandardScaler(), NUMERIC),
    ),
    # dense one-hot with a dropped level, ordinal codes, remainder passthrough
    "onehot-drop-ordinal-remainder": lambda: make_column_transformer(
        (OneHotEncoder(drop="first", sparse_output=False), ["c"]),
        (OrdinalEncoder(), ["noise_cat"]),
        remainder="passthrough",
    ),
    # columns by position and by a callable selector; a dropped column
    "positions-callable-dropped": lambda: make_column_transformer(
        (OrdinalEncoder(), make_column_selector(dtype_exclude="number")),
        (StandardScaler(), [0, 1]),
        ("drop", ["noise"]),
    ),
    # nested Pipeline: imputer with indicator, then discretizer
    "nested-imputer-bins": lambda: make_column_transformer(
        (
            make_pipeline(
                SimpleImputer(add_indicator=True),
                KBinsDiscretizer(n_bins=4, encode="onehot-dense"),
            ),
            ["a"],
        ),
        (KBinsDiscretizer(n_bins=3, encode="ordinal"), ["b", "noise"]),
        (OneHotEncoder(), CATEGORICAL),
    ),
    # transformers that mix columns: polynomial features and PCA
    "mixing": lambda: make_column_transformer(
        (PolynomialFeatures(2), ["a", "b"]),
        (PCA(1), ["b", "noise"]),
        (OrdinalEncoder(), CATEGORICAL),
    ),
    # a FeatureUnion of a one-to-one function and PCA over the numeric
    # columns, and a function that does not declare its columns
    "union-functions": lambda: make_column_transformer(
        (
            FeatureUnion(
                [
                    (
                        "log",
                        FunctionTransformer(np.abs, feature_names_out="one-to-one"),
                    ),
                    ("pca", PCA(2)),
                ]
            ),
            NUMERIC,
        ),
        (FunctionTransformer(lambda Z: Z[:, ::-1], validate=True), ["a", "noise"]),
        (OrdinalEncoder(), CATEGORICAL),
    ),
}

MODELS = {
    "forest": lambda: RandomForestRegressor(n_estimators=15, random_state=0),
    "hist_boosting": lambda: HistGradientBoostingRegressor(max_iter=15, random_state=0),
}


def _booster(library):
    def make():
        module = pytest.importorskip(library)
        if library == "xgboost":
            return module.XGBRegressor(n_estimators=10, max_depth=3, n_jobs=1)
        return module.LGBMRegressor(n_estimators=10, num_leaves=7, n_jobs=1, verbose=-1)

    return make


MODELS["xgboost"] = _booster("xgboost")
MODELS["lightgbm"] = _booster("lightgbm")
#: XGBoost sums its trees in float32, the engine in float64
TOLERANCE = {"xgboost": 1e-5}


def fitted(preprocessing, model, X, y):
    return make_pipeline(PREPROCESSING[preprocessing](), MODELS[model]()).fit(X, y)


def assert_equal_to_sklearn(pipeline, X, y, atol=1e-12, **kwargs):
    ours = permutation_importance(pipeline, X, y, random_state=0, **kwargs)
    theirs = sklearn_permutation(pipeline, X, y, random_state=0, **kwargs)
    np.testing.assert_allclose(ours.importances, theirs.importances, rtol=0, atol=atol)
    return ours


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("preprocessing", list(PREPROCESSING))
def test_pipeline_importance_equals_sklearn(preprocessing, model):
    X, y = mixed_frame()
    pipeline = fitted(preprocessing, model, X[:300], y[:300])
    result = assert_equal_to_sklearn(
        pipeline, X[300:], y[300:], n_repeats=2, atol=TOLERANCE.get(model, 1e-12)
    )
    assert list(result.feature_names) == list(X.columns)


def test_pipeline_importance_goes_through_the_engine_per_block():
    X, y = mixed_frame()
    pipeline = fitted("mixing", "forest", X[:300], y[:300])
    groups = [np.array([j]) for j in range(X.shape[1])]
    inputs = pipeline_inputs(pipeline, X[300:], groups)
    # a, b feed the polynomial features together (and b PCA with noise):
    # replaced by the transform of the permuted rows; the categorical
    # columns feed one ordinal code each: permuted as blocks
    assert list(inputs.replaced) == [True, True, False, True, False]
    assert [len(block) for block in inputs.blocks] == [3, 4, 1, 1, 1]
    # the result says how each column was measured
    result = permutation_importance(pipeline, X[300:], y[300:], random_state=0)
    assert set(result.pipeline_paths) <= {"block", "transformed", "predicted"}
    assert result.pipeline_paths[2] in ("block", "predicted")
    dropped = fitted("positions-callable-dropped", "forest", X[:300], y[:300])
    paths = permutation_importance(dropped, X[300:], y[300:]).pipeline_paths
    assert paths[list(X.columns).index("noise")] == "unused"


def test_input_sources_follow_the_fitted_column_transformer():
    X, y = mixed_frame()
    pipeline = fitted("nested-imputer-bins", "forest", X, y)
    sources = input_sources(pipeline[:-1], X.shape[1])
    # a: 4 bins of the imputed values and its missing indicator (none
    # missing here: no indicator); b and noise one code each; c and
    # noise_cat one column per category
    expected = [{0}] * 4 + [{1}, {3}] + [{2}] * 4 + [{4}] * 3
    assert [set(s) for s in sources] == expected
    assert len(sources) == pipeline[:-1].transform(X[:5]).shape[1]


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_pipeline_importance_classifier_groups_weights_unknown_categories(kind):
    X, y = mixed_frame(missing=True)
    if kind == "classifier":
        y = (y > np.median(y)).astype(int)
        model = HistGradientBoostingClassifier(max_iter=10, random_state=0)
    else:
        model = HistGradientBoostingRegressor(max_iter=10, random_state=0)
    preprocessing = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), CATEGORICAL),
        remainder="passthrough",
    )
    train = X.c != "w"  # "w" is a category the encoder never saw
    pipeline = make_pipeline(preprocessing, model).fit(X[train], y[train])
    weight = np.random.RandomState(1).uniform(0.5, 2, size=len(y))
    ours = assert_equal_to_sklearn(pipeline, X, y, n_repeats=2, sample_weight=weight)
    grouped = permutation_importance(
        pipeline, X, y, groups=[["a", "c"], ["noise", "noise_cat"]], random_state=0
    )
    # the groups through the engine equal the predict-every-row path (the
    # same groups on the Pipeline as a black box: a wrapper the engine
    # does not read)
    reference = permutation_importance(
        _Opaque(pipeline),
        X,
        y,
        groups=[["a", "c"], ["noise", "noise_cat"]],
        random_state=0,
    )
    np.testing.assert_allclose(grouped.importances, reference.importances, atol=1e-12)
    assert list(grouped.feature_names) == list(reference.feature_names)
    assert ours.importances.shape == (5, 2)


class _Opaque:
    """A fitted model hidden from the engine: predicts every row."""

    _estimator_type = None

    def __init__(self, model):
        self.fitted_ = model
        self._estimator_type = getattr(model, "_estimator_type", None)
        if hasattr(model, "classes_"):
            self.classes_ = model.classes_

    def fit(self, X, y):
        return self

    def predict(self, X):
        return self.fitted_.predict(X)

    def predict_proba(self, X):
        return self.fitted_.predict_proba(X)

    def score(self, X, y, sample_weight=None):
        return self.fitted_.score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        return self.fitted_.__sklearn_tags__()


def test_pipeline_importance_polars_and_categorical_dtypes():
    pl = pytest.importorskip("polars")
    X, y = mixed_frame()
    X_cat = X.astype({"c": "category", "noise_cat": "string"})
    pipeline = make_pipeline(
        make_column_transformer(
            (OrdinalEncoder(), CATEGORICAL), remainder="passthrough"
        ),
        RandomForestRegressor(n_estimators=10, random_state=0),
    ).fit(X_cat[:300], y[:300])
    assert_equal_to_sklearn(pipeline, X_cat[300:], y[300:], n_repeats=2)

    # scikit-learn's function turns a polars frame into an array, which a
    # ColumnTransformer selecting by name refuses: compared with the same
    # Pipeline on the pandas frame, itself equal to scikit-learn's result
    def pipeline():
        return make_pipeline(
            make_column_transformer(
                (OneHotEncoder(), CATEGORICAL), remainder="passthrough"
            ),
            RandomForestRegressor(n_estimators=10, random_state=0),
        )

    on_pandas = pipeline().fit(X[:300], y[:300])
    expected = assert_equal_to_sklearn(on_pandas, X[300:], y[300:], n_repeats=2)
    try:
        on_polars = pipeline().fit(pl.from_pandas(X[:300]), y[:300])
    except AttributeError as exc:  # scikit-learn < 1.7 with polars 1.0
        pytest.skip(f"this scikit-learn's ColumnTransformer cannot fit polars: {exc}")
    result = permutation_importance(
        on_polars, pl.from_pandas(X[300:]), y[300:], n_repeats=2, random_state=0
    )
    np.testing.assert_allclose(result.importances, expected.importances, atol=1e-12)


def test_pipeline_importance_of_a_dropped_column_is_zero():
    X, y = mixed_frame()
    pipeline = fitted("positions-callable-dropped", "forest", X[:300], y[:300])
    result = permutation_importance(pipeline, X[300:], y[300:], random_state=0)
    assert np.all(result.importances[list(X.columns).index("noise")] == 0)


def test_pipeline_importance_classifier_forest_with_proba_scoring():
    X, y = mixed_frame()
    y = (y > np.median(y)).astype(int)
    pipeline = make_pipeline(
        PREPROCESSING["onehot-scaler"](),
        RandomForestClassifier(n_estimators=10, random_state=0),
    ).fit(X[:300], y[:300])
    for scoring in ("accuracy", "neg_log_loss", "roc_auc"):
        assert_equal_to_sklearn(
            pipeline, X[300:], y[300:], n_repeats=2, scoring=scoring
        )


@pytest.mark.parametrize("measure", ["mdi", "oob_mdi", "shap"])
def test_additive_measures_of_a_pipeline_sum_each_columns_inputs(measure):
    # the reference: the measure of the last step on the transformed rows,
    # summed by hand over the model inputs each original column feeds
    # (one-hot columns, scaled values; the bias of PolynomialFeatures
    # feeds none, and its a and a**2 terms are a's alone)
    from sklearn_fimp import mdi_importance, oob_mdi_importance, shap_importance

    if measure == "shap":
        pytest.importorskip("shap")
    X, y = mixed_frame()
    preprocessing = make_column_transformer(
        (OneHotEncoder(), CATEGORICAL),
        (StandardScaler(), ["b", "noise"]),
        (PolynomialFeatures(2, interaction_only=False), ["a"]),
    )
    pipeline = make_pipeline(
        preprocessing, RandomForestRegressor(n_estimators=10, random_state=0)
    ).fit(X, y)
    Z = pipeline[:-1].transform(X)  # dense: few one-hot columns among others
    model = pipeline[-1]
    # model inputs: c (4 levels), noise_cat (3), b, noise, 1, a, a**2
    owner = [2] * 4 + [4] * 3 + [1, 3, None, 0, 0]
    if measure == "mdi":
        ours, per_input = mdi_importance(pipeline), mdi_importance(model)
    elif measure == "oob_mdi":
        ours = oob_mdi_importance(pipeline, X, y)
        per_input = oob_mdi_importance(model, Z, y)
    else:
        ours = shap_importance(pipeline, X[:50])
        import shap

        values = shap.TreeExplainer(model).shap_values(Z[:50])
        summed = np.zeros((50, 5))
        for k, column in enumerate(owner):
            if column is not None:
                summed[:, column] += values[:, k]
        np.testing.assert_allclose(ours.importances.T, np.abs(summed), atol=1e-10)
        return
    expected = np.zeros((5, per_input.importances.shape[1]))
    for k, column in enumerate(owner):
        if column is not None:
            expected[column] += per_input.importances[k]
    np.testing.assert_allclose(ours.importances, expected, atol=1e-12)
    assert list(ours.feature_names) == list(X.columns)


def test_additive_measure_of_a_mixed_input_is_an_error_naming_it():
    from sklearn_fimp import mdi_importance

    X, y = mixed_frame()
    pipeline = fitted("mixing", "forest", X, y)
    with pytest.raises(ValueError, match=r"'polynomialfeatures__a b'.*'a', 'b'"):
        mdi_importance(pipeline)


@pytest.mark.parametrize("per_tree", [False, True])
def test_oob_permutation_of_a_pipeline_permutes_each_columns_block(per_tree):
    # the reference: the forest's out-of-bag permutation importance on the
    # transformed training rows, each original column's inputs (its one-hot
    # block) permuted together; a dropped column scores 0
    from sklearn_fimp import oob_permutation_importance

    X, y = mixed_frame()
    preprocessing = make_column_transformer(
        (OneHotEncoder(sparse_output=False), CATEGORICAL),
        (StandardScaler(), ["a", "b"]),
    )
    pipeline = make_pipeline(
        preprocessing, RandomForestRegressor(n_estimators=10, random_state=0)
    ).fit(X, y)
    ours = oob_permutation_importance(
        pipeline, X, y, per_tree=per_tree, n_repeats=2, random_state=0
    )
    Z = pipeline[:-1].transform(X)
    # inputs: c (4 levels), noise_cat (3), a, b; noise is dropped
    blocks = [[7], [8], [0, 1, 2, 3], [4, 5, 6]]
    reference = oob_permutation_importance(
        pipeline[-1],
        Z,
        y,
        groups=blocks,
        per_tree=per_tree,
        n_repeats=2,
        random_state=0,
    )
    np.testing.assert_allclose(
        ours.importances[[0, 1, 2, 4]], reference.importances, atol=1e-12
    )
    assert np.all(ours.importances[3] == 0)
    assert list(ours.feature_names) == list(X.columns)
    mixing = fitted("mixing", "forest", X, y)
    with pytest.raises(ValueError, match="'a' feeds inputs that a step computes"):
        oob_permutation_importance(mixing, X, y)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_pipeline_importance_on_sparse_inputs_reads_them_as_the_model_does(library):
    # a one-hot block past the ColumnTransformer's sparse threshold: XGBoost
    # reads the entries a sparse matrix does not store as missing values,
    # LightGBM as zeros; the engine's dense inputs must say the same (they
    # were zeros for both, and XGBoost's importances were off by up to 0.58)
    module = pytest.importorskip(library)
    rng = np.random.RandomState(0)
    n = 600
    X = pd.DataFrame(
        {
            "city": rng.choice([f"c{i}" for i in range(40)], n),
            "a": rng.normal(size=n),
            "kind": rng.choice(list("pqrs"), n),
        }
    )
    y = (X.city.str[1:].astype(int) % 5) + X.a + rng.normal(size=n)
    preprocessing = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["city", "kind"]),
        remainder="passthrough",
        sparse_threshold=0.9,
    )
    if library == "xgboost":
        model = module.XGBRegressor(n_estimators=20, max_depth=4, n_jobs=1)
    else:
        model = module.LGBMRegressor(
            n_estimators=20, num_leaves=15, n_jobs=1, verbose=-1
        )
    pipeline = make_pipeline(preprocessing, model).fit(X[:450], y[:450])
    assert hasattr(pipeline[:-1].transform(X[:2]), "tocsr")
    assert_equal_to_sklearn(
        pipeline, X[450:], y[450:], n_repeats=2, atol=TOLERANCE.get(library, 1e-12)
    )


class CountingForest(RandomForestRegressor):
    """A forest that counts the calls of its ``predict``."""

    calls = 0

    def predict(self, X):
        type(self).calls += 1
        return super().predict(X)


@pytest.mark.parametrize("through_pipeline", [True, False])
def test_the_engine_scores_the_unpermuted_rows_without_predict(through_pipeline):
    # the baseline score comes from the engine's own outputs on the rows,
    # which are the model's predictions (its trees added in its order)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(1500, 4))
    y = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=1500)
    model = CountingForest(n_estimators=20, random_state=0)
    estimator = make_pipeline(StandardScaler(), model) if through_pipeline else model
    estimator.fit(X[:1000], y[:1000])
    CountingForest.calls = 0
    result = permutation_importance(
        estimator, X[1000:], y[1000:], n_repeats=2, random_state=0
    )
    assert CountingForest.calls == 0
    expected = estimator.score(X[1000:], y[1000:])
    assert result.baseline_score == pytest.approx(expected, rel=0, abs=1e-12)
    # several metrics: each scored by its scorer on the model's predictions
    several = permutation_importance(
        estimator, X[1000:], y[1000:], scoring=["r2"], n_repeats=2, random_state=0
    )
    assert several["r2"].baseline_score == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(
        several["r2"].importances, result.importances, rtol=0, atol=1e-12
    )
