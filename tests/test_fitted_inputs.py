"""X and y given with a fitted model are checked against its fit (issue 56,
items 2, 3 and 8): the columns as its ``predict`` checks them (names and
order, number), and a classifier's labels against its ``classes_``, for
every importance function and every selector method that reads a fitted
model."""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_fimp import ImportanceSelector
from sklearn_fimp._methods import METHODS, MODEL_ONLY, REFITS

pd = pytest.importorskip("pandas")

#: Methods that measure a fitted model (all but the refitting ones).
FITTED_METHODS = [name for name, m in METHODS.items() if m.rows != REFITS]
#: Those whose public function takes rows (mdi_importance takes the model).
FUNCTION_METHODS = [n for n in FITTED_METHODS if METHODS[n].rows != MODEL_ONLY]

#: Small, fast settings per function.
FAST = {
    "permutation": {"n_repeats": 2, "random_state": 0},
    "oob_permutation": {"random_state": 0},
    "conditional_permutation": {
        "n_repeats": 1,
        "sampler": "linear",
        "random_state": 0,
    },
    "shap": {"max_samples": 30, "random_state": 0},
}

#: The fix the errors give: pandas' selection, or polars'.
SELECT = (
    r"(X\[estimator\.feature_names_in_\]"
    r"|X\.select\(list\(estimator\.feature_names_in_\)\))"
)
NAMES_MISMATCH = r"(?s)feature names should match.*" + SELECT
TOO_FEW = r"(?s)X has 4 features.*expecting 5.*all 5 columns"
MISSING = r"(?s)Feature names seen at fit.*- e.*" + SELECT
LABELS = r"^y holds the labels.*was fitted on the classes.*Pass y"


def labels_error(*parts):
    """A pattern of the labels error that also holds each of ``parts``."""
    return "(?s)" + "".join(f"(?=.*{part})" for part in parts) + LABELS


def _needs(method):
    if method == "shap":
        pytest.importorskip("shap")


def _data():
    rng = np.random.RandomState(0)
    X = rng.randn(120, 5)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return pd.DataFrame(X, columns=list("abcde")), y


@pytest.fixture(scope="module")
def frame_forest():
    df, y = _data()
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(df, y)
    return forest, df, y


@pytest.fixture(scope="module")
def array_forest():
    df, y = _data()
    X = df.to_numpy()
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    return forest, X, y


def _function(method, model, X, y):
    kwargs = FAST.get(method, {})
    return METHODS[method].function(model, X, y, **kwargs)


def _selector(method, model):
    kwargs = {}
    if method in ("permutation", "conditional_permutation"):
        kwargs["n_repeats"] = 1
    return ImportanceSelector(
        model,
        prefit=True,
        method=method,
        threshold="mean",
        random_state=0,
        **kwargs,
    )


# ----------------------------------------------------------------------------
# item 2: the columns, as predict checks them


def _reordered(df, container):
    """df's columns in reverse order, as a pandas or polars frame."""
    reordered = df[list("edcba")]
    if container == "polars":
        pl = pytest.importorskip("polars")
        return pl.from_pandas(reordered)
    return reordered


@pytest.mark.parametrize("container", ["pandas", "polars"])
@pytest.mark.parametrize("method", FITTED_METHODS)
def test_prefit_selector_reordered_columns_raise(method, container, frame_forest):
    _needs(method)
    forest, df, y = frame_forest
    with pytest.raises(ValueError, match=NAMES_MISMATCH):
        _selector(method, forest).fit(_reordered(df, container), y)


def test_prefit_selector_importance_getter_reordered_columns_raise(frame_forest):
    forest, df, y = frame_forest
    selector = ImportanceSelector(
        forest, prefit=True, importance_getter="auto", threshold="mean"
    )
    with pytest.raises(ValueError, match=NAMES_MISMATCH):
        selector.fit(df[list("edcba")], y)


@pytest.mark.parametrize("container", ["numpy", "pandas"])
@pytest.mark.parametrize("method", FITTED_METHODS)
def test_prefit_selector_missing_column_raises(method, container, request):
    _needs(method)
    fixture = "array_forest" if container == "numpy" else "frame_forest"
    forest, X, y = request.getfixturevalue(fixture)
    X = X[:, :4] if container == "numpy" else X[list("abcd")]
    with pytest.raises(ValueError, match=TOO_FEW if container == "numpy" else MISSING):
        _selector(method, forest).fit(X, y)


@pytest.mark.parametrize("container", ["pandas", "polars"])
@pytest.mark.parametrize("method", FUNCTION_METHODS)
def test_importance_function_reordered_columns_raise(method, container, frame_forest):
    _needs(method)
    forest, df, y = frame_forest
    with pytest.raises(ValueError, match=NAMES_MISMATCH):
        _function(method, forest, _reordered(df, container), y)


@pytest.mark.parametrize("container", ["numpy", "pandas"])
@pytest.mark.parametrize("method", FUNCTION_METHODS)
def test_importance_function_missing_column_raises(method, container, request):
    _needs(method)
    fixture = "array_forest" if container == "numpy" else "frame_forest"
    forest, X, y = request.getfixturevalue(fixture)
    if container == "numpy":
        with pytest.raises(ValueError, match=TOO_FEW):
            _function(method, forest, X[:, :4], y)
    else:
        with pytest.raises(ValueError, match=MISSING):
            _function(method, forest, X[list("abcd")], y)


def test_shap_importance_missing_column_raises(frame_forest):
    # the case: four values returned without an error
    pytest.importorskip("shap")
    forest, df, _ = frame_forest
    with pytest.raises(ValueError, match=NAMES_MISMATCH):
        METHODS["shap"].function(forest, df[list("abcd")])


@pytest.mark.parametrize("method", ["mdi", "shap"])
def test_prefit_selector_array_for_named_model_warns(method, frame_forest):
    _needs(method)
    forest, df, y = frame_forest
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        _selector(method, forest).fit(df.to_numpy(), y)


@pytest.mark.parametrize("method", ["mdi", "shap"])
def test_prefit_selector_frame_for_unnamed_model_warns(method, array_forest):
    _needs(method)
    forest, X, y = array_forest
    df = pd.DataFrame(X, columns=list("abcde"))
    with pytest.warns(UserWarning, match="X has feature names, but"):
        _selector(method, forest).fit(df, y)


@pytest.mark.parametrize("method", FITTED_METHODS)
def test_prefit_selector_matching_columns_keep_the_signal(method, frame_forest):
    _needs(method)
    forest, df, y = frame_forest
    before = df.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        selector = _selector(method, forest).fit(df, y)
    assert set(selector.get_feature_names_out()) <= {"a", "b"}
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize("method", ["mdi", "permutation", "shap"])
def test_prefit_pipeline_reordered_columns_raise(method, frame_forest):
    _needs(method)
    _, df, y = frame_forest
    pipeline = make_pipeline(
        StandardScaler(), RandomForestClassifier(n_estimators=10, random_state=0)
    ).fit(df, y)
    if method == "mdi" or method == "shap":
        with pytest.raises(ValueError, match=NAMES_MISMATCH):
            _selector(method, pipeline).fit(df[list("edcba")], y)
    with pytest.raises(ValueError, match=NAMES_MISMATCH):
        _function("permutation", pipeline, df[list("edcba")], y)


# ----------------------------------------------------------------------------
# item 3: a classifier's labels


@pytest.mark.parametrize("method", FUNCTION_METHODS)
def test_importance_function_string_labels_for_numeric_classes_raise(
    method, frame_forest
):
    _needs(method)
    forest, df, y = frame_forest
    y_text = np.where(y == 1, "yes", "no")
    with pytest.raises(ValueError, match=labels_error(r"\['no', 'yes'\]", r"\[0, 1\]")):
        _function(method, forest, df, y_text)


@pytest.mark.parametrize("method", FITTED_METHODS)
def test_prefit_selector_string_labels_for_numeric_classes_raise(method, frame_forest):
    _needs(method)
    forest, df, y = frame_forest
    y_text = np.where(y == 1, "yes", "no")
    with pytest.raises(ValueError, match=labels_error()):
        _selector(method, forest).fit(df, y_text)


@pytest.mark.parametrize("method", ["permutation", "oob_mdi"])
def test_importance_function_unseen_labels_raise(method, frame_forest):
    forest, df, y = frame_forest
    with pytest.raises(ValueError, match=labels_error(r"\[5, 6\]", "none of them")):
        _function(method, forest, df, y + 5)


@pytest.mark.parametrize("method", ["permutation", "oob_permutation"])
def test_importance_function_numeric_labels_for_string_classes_raise(method):
    df, y = _data()
    y_text = np.where(y == 1, "yes", "no")
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(df, y_text)
    with pytest.raises(ValueError, match=labels_error(r"\['no', 'yes'\]")):
        _function(method, forest, df, y)
    # the labels of fit pass, as a subset of them does
    assert _function(method, forest, df, y_text).importances_mean[:2].min() > 0
    if method == "permutation":  # out of bag needs every training row
        _function(method, forest, df.iloc[:20], np.full(20, "yes"))


def test_permutation_importance_multi_output_labels(frame_forest):
    _, df, y = frame_forest
    Y = np.column_stack([y, 1 - y])
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(df, Y)
    result = _function("permutation", forest, df, Y)
    assert result.importances_mean[:2].min() > 0
    Y_text = np.column_stack([y, np.where(y == 1, "yes", "no")]).astype(object)
    Y_text[:, 0] = y
    with pytest.raises(ValueError, match=labels_error("column 1")):
        _function("permutation", forest, df, Y_text)


def test_permutation_importance_regressor_takes_any_target(frame_forest):
    _, df, y = frame_forest
    forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(df, y)
    _function("permutation", forest, df, y + 5.0)
