"""What users throw at sklearn_fimp: odd input, bad values, misuse, faults.

Every public function and both estimators are run on the same small cases
(numpy, pandas, polars, lists, memory-mapped arrays; one feature, two rows,
more features than rows; NaN, infinity, strings; constant and noise
columns; odd targets and weights), with generated cases from hypothesis on
top. Each case either works, with results of the right shape, or raises an
error that names the parameter or column, the offending value and a fix.
The caller's X, y and sample_weight must come back byte for byte as they
went in. The same random_state gives the same result whatever n_jobs, the
joblib backend and the container of X.
"""

import pickle
import re
import warnings

import joblib
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from joblib import parallel_config
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.ensemble import (
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from sklearn_fimp import (
    DependenceAnalyzer,
    ImportanceSelector,
    drop_column_importance,
    feature_dependence,
    feature_groups,
    mdi_importance,
    oob_mdi_importance,
    oob_permutation_importance,
    permutation_importance,
)
from sklearn_fimp._utils._compat import MISSING_VALUES_ROUTED_AS_FITTED

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

N_TREES = 8


def forest(classifier=False, **params):
    cls = RandomForestClassifier if classifier else RandomForestRegressor
    return cls(n_estimators=N_TREES, random_state=0, **params)


def small_forests():
    """Small forests for both kinds of feature of the dependence models."""
    return {"regressor": forest(), "classifier": forest(classifier=True)}


def regression_data(n_rows=40, n_features=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, n_features))
    y = 2 * X[:, 0] + (X[:, 1] if n_features > 1 else 0) + 0.1 * rng.normal(size=n_rows)
    return X, y


# ----------------------------------------------------------------------------
# Every public entry point, called the same way


def _fitted(X, y, estimator=None):
    model = estimator if estimator is not None else forest()
    if isinstance(X, pd.DataFrame) and X.columns.duplicated().any():
        # the model cannot be fitted on it; the function must still say why
        return model.fit(X.to_numpy(), y)
    return model.fit(X, y)


def call_mdi(X, y, sample_weight=None, estimator=None):
    model = _fitted(X, y, estimator)
    return mdi_importance(model)


def call_oob_mdi(X, y, sample_weight=None, estimator=None):
    model = _fitted(X, y, estimator)
    return oob_mdi_importance(model, X, y, sample_weight=sample_weight)


def call_permutation(X, y, sample_weight=None, estimator=None, n_jobs=None):
    model = _fitted(X, y, estimator)
    return permutation_importance(
        model,
        X,
        y,
        n_repeats=2,
        sample_weight=sample_weight,
        n_jobs=n_jobs,
        random_state=0,
    )


def call_oob_permutation(X, y, sample_weight=None, estimator=None, n_jobs=None):
    model = _fitted(X, y, estimator)
    return oob_permutation_importance(
        model,
        X,
        y,
        n_repeats=2,
        sample_weight=sample_weight,
        n_jobs=n_jobs,
        random_state=0,
    )


def call_drop_column(X, y, sample_weight=None, estimator=None, n_jobs=None):
    return drop_column_importance(
        estimator if estimator is not None else forest(),
        X,
        y,
        sample_weight=sample_weight,
        n_jobs=n_jobs,
        random_state=0,
    )


def call_feature_groups(X, y=None, sample_weight=None, estimator=None):
    return feature_groups(X)


def call_feature_dependence(X, y=None, sample_weight=None, estimator=None, n_jobs=None):
    return feature_dependence(
        X, estimator=small_forests(), n_jobs=n_jobs, random_state=0
    )


def call_selector(X, y, sample_weight=None, estimator=None, n_jobs=None, **params):
    # 3 rounds of 6 probes instead of 10 of 50: the tests here check shapes,
    # errors, untouched input and equal results, not the power of the test
    # (each probe is a column measured like a feature: a refit each for
    # drop-column)
    selector = ImportanceSelector(
        estimator if estimator is not None else forest(),
        n_repeats=2,
        n_jobs=n_jobs,
        random_state=0,
        **{"n_rounds": 3, "n_probes": 6, **params},
    )
    with warnings.catch_warnings():
        # too few rows to beat the probes: the min_features warning
        warnings.simplefilter("ignore", UserWarning)
        fit_params = {} if sample_weight is None else {"sample_weight": sample_weight}
        selector.fit(X, y, **fit_params)
    selector.transform(X)
    return selector


def call_analyzer(X, y=None, sample_weight=None, estimator=None, n_jobs=None):
    analyzer = DependenceAnalyzer(small_forests(), n_jobs=n_jobs, random_state=0)
    analyzer.fit(X)
    analyzer.transform(X)
    return analyzer


CALLS = {
    "mdi_importance": call_mdi,
    "oob_mdi_importance": call_oob_mdi,
    "permutation_importance": call_permutation,
    "oob_permutation_importance": call_oob_permutation,
    "drop_column_importance": call_drop_column,
    "feature_groups": call_feature_groups,
    "feature_dependence": call_feature_dependence,
    "ImportanceSelector": call_selector,
    "DependenceAnalyzer": call_analyzer,
}
#: The calls that fit or score a model on X and y.
SUPERVISED = [
    "mdi_importance",
    "oob_mdi_importance",
    "permutation_importance",
    "oob_permutation_importance",
    "drop_column_importance",
    "ImportanceSelector",
]
#: The calls that score a model on X, y (and so use sample_weight).
WEIGHTED = [
    "oob_mdi_importance",
    "permutation_importance",
    "oob_permutation_importance",
    "drop_column_importance",
    "ImportanceSelector",
]


def check_outcome(name, outcome, n_features):
    """The result of a successful call has one finite entry per feature."""
    if name == "feature_groups":
        # every feature in exactly one group
        members = [m for group in outcome for m in group]
        assert len(members) == len(set(members)) == n_features
        return
    if name == "ImportanceSelector":
        assert outcome.support_.shape == (n_features,)
        assert outcome.support_.sum() >= 1
        return
    if name == "DependenceAnalyzer":
        assert outcome.support_.shape == (n_features,)
        assert outcome.support_.any()
        return
    if name == "feature_dependence":
        assert outcome.dependence.shape == (n_features,)
        assert np.all(np.isfinite(outcome.dependence))
        return
    assert outcome.importances_mean.shape == (n_features,)
    assert np.all(np.isfinite(outcome.importances))
    assert len(outcome.feature_names) == n_features


# ----------------------------------------------------------------------------
# Snapshots: the caller's data must not change


def snapshot(value):
    """A hash of the value and of its memory (flags, strides, bytes)."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return (
            joblib.hash(value),
            value.flags.writeable,
            value.strides,
            value.dtype.str,
            None  # an object array's bytes are pointers; the hash reads values
            if value.dtype.hasobject
            else bytes(np.ascontiguousarray(value).view(np.uint8)),
        )
    if isinstance(value, pd.Series):
        return (joblib.hash(value), str(value.dtype), list(value.index), value.name)
    if isinstance(value, pd.DataFrame):
        return (
            joblib.hash(value),
            list(map(str, value.dtypes)),
            list(value.columns),
            list(value.index),
            value.index.name,
        )
    if isinstance(value, pl.DataFrame):
        return (joblib.hash(value.to_dicts()), value.schema)
    if isinstance(value, pl.Series):
        return (joblib.hash(value.to_list()), value.dtype, value.name)
    return joblib.hash(value)


def test_snapshot_sees_every_kind_of_change():
    X, _ = regression_data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    changes = {
        "value": lambda a: a.__setitem__((0, 0), 1.0),
        "dtype": lambda a: a.astype(np.float32),
        "flags": lambda a: a.setflags(write=False) or a,
        "order": lambda a: np.asfortranarray(a),
    }
    for change in changes.values():
        copy = X.copy()
        changed = change(copy)
        assert snapshot(copy if changed is None else changed) != snapshot(X)
    for change in (
        lambda f: f.iloc.__setitem__((0, 0), 1.0),
        lambda f: setattr(f, "columns", list("zbcd")),
        lambda f: setattr(f, "index", f.index + 1),
        lambda f: setattr(f.index, "name", "id"),
        lambda f: f.__setitem__("a", f["a"].astype(np.float32)),
    ):
        copy = frame.copy()
        change(copy)
        assert snapshot(copy) != snapshot(frame)
    polars_frame = pl.from_pandas(frame)
    assert snapshot(polars_frame.with_columns(pl.col("a") * 2)) != snapshot(
        polars_frame
    )
    assert snapshot(polars_frame.clone()) == snapshot(polars_frame)


# ----------------------------------------------------------------------------
# Input shapes and types


def _as_memmap(X, tmp_path):
    path = tmp_path / "X.npy"
    np.save(path, X)
    return np.load(path, mmap_mode="r")


def _containers(X, tmp_path):
    names = [f"f{j}" for j in range(X.shape[1])]
    # a named index, not 0..n-1 and not sorted: rows are taken by position
    order = np.random.RandomState(0).permutation(X.shape[0])
    index = pd.Index(100 + 3 * order, name="row_id")
    return {
        "numpy": X,
        "pandas": pd.DataFrame(X, columns=names),
        "pandas_named_index": pd.DataFrame(X, columns=names, index=index),
        "pandas_int_columns": pd.DataFrame(X),
        "polars": pl.DataFrame({n: X[:, j] for j, n in enumerate(names)}),
        "list": X.tolist(),
        "memmap_read_only": _as_memmap(X, tmp_path),
        "float32": X.astype(np.float32),
        "fortran_order": np.asfortranarray(X),
    }


CONTAINERS = [
    "numpy",
    "pandas",
    "pandas_named_index",
    "pandas_int_columns",
    "polars",
    "list",
    "memmap_read_only",
    "float32",
    "fortran_order",
]


@pytest.mark.parametrize("container", CONTAINERS)
@pytest.mark.parametrize("name", list(CALLS))
def test_containers_work_and_are_not_modified(name, container, tmp_path):
    X, y = regression_data()
    X = _containers(X, tmp_path)[container]
    if container == "pandas_named_index":
        y = pd.Series(y, index=X.index, name="target")
    if container == "polars":
        y = pl.Series("target", y)
    before = snapshot(X), snapshot(y)
    outcome = CALLS[name](X, y)
    check_outcome(name, outcome, 4)
    assert (snapshot(X), snapshot(y)) == before


def test_containers_give_the_same_importances(tmp_path):
    X, y = regression_data()
    containers = _containers(X, tmp_path)
    for name in ["permutation_importance", "oob_permutation_importance"]:
        reference = CALLS[name](X, y).importances
        for container in [
            "pandas",
            "pandas_named_index",
            "polars",
            "list",
            "memmap_read_only",
        ]:
            result = CALLS[name](containers[container], y).importances
            np.testing.assert_array_equal(result, reference, err_msg=container)


@pytest.mark.parametrize("name", list(CALLS))
def test_integer_and_bool_columns(name):
    X, y = regression_data(n_rows=60)
    X_int = np.round(X * 3).astype(np.int64)
    X_bool = X > 0
    for X_kind in (X_int, X_bool, pd.DataFrame({"i": X_int[:, 0], "b": X_bool[:, 1]})):
        outcome = CALLS[name](X_kind, y)
        check_outcome(name, outcome, X_kind.shape[1])


@pytest.mark.parametrize("name", list(CALLS))
def test_one_feature(name):
    X, y = regression_data(n_features=1)
    if name == "drop_column_importance":
        # dropping the only feature leaves nothing to fit: a clear error
        with pytest.raises(ValueError, match="would leave no feature to train on"):
            CALLS[name](X, y)
        return
    outcome = CALLS[name](X, y)
    check_outcome(name, outcome, 1)
    if name == "feature_dependence":
        assert outcome.dependence.tolist() == [0.0]  # nothing to predict it from


@pytest.mark.parametrize("name", list(CALLS))
def test_two_rows(name):
    X, y = regression_data(n_rows=2)
    outcome = CALLS[name](X, y)
    check_outcome(name, outcome, 4)


@pytest.mark.parametrize("name", list(CALLS))
def test_more_features_than_rows(name):
    X, y = regression_data(n_rows=8, n_features=15)
    outcome = CALLS[name](X, y)
    check_outcome(name, outcome, 15)


def test_one_row_is_rejected_clearly():
    X, y = regression_data(n_rows=1)
    with pytest.raises(ValueError, match="1 sample"):
        ImportanceSelector(forest()).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 samples"):
        DependenceAnalyzer(small_forests()).fit(X)
    with pytest.raises(ValueError, match="at least 2 samples"):
        feature_dependence(X)


@pytest.mark.parametrize("name", list(CALLS))
def test_sparse_X_is_rejected_with_a_fix(name):
    sparse = pytest.importorskip("scipy.sparse")
    X, y = regression_data()
    for X_sparse in (sparse.csr_matrix(X), sparse.csc_array(X)):
        if name == "mdi_importance":
            # mdi reads a fitted model: sparse X is the model's business
            forest().fit(X_sparse, y)
            continue
        with pytest.raises(TypeError, match=r"X is a sparse matrix.*X\.toarray\(\)"):
            CALLS[name](X_sparse, y)


@pytest.mark.parametrize("name", [n for n in CALLS if n != "mdi_importance"])
def test_duplicated_column_names_are_rejected_with_a_fix(name):
    X, y = regression_data()
    X = pd.DataFrame(X, columns=["a", "b", "a", "c"])
    before = snapshot(X)
    with pytest.raises(ValueError, match=r"duplicated column names \['a'\].*Rename"):
        CALLS[name](X, y, estimator=Ridge())
    assert snapshot(X) == before


def test_columns_equal_as_strings_count_as_duplicates():
    X, y = regression_data()
    X = pd.DataFrame(X, columns=[1, "1", 2, 3])
    with pytest.raises(ValueError, match=r"duplicated column names \['1'\]"):
        permutation_importance(Ridge().fit(X.to_numpy(), y), X, y)


def _mixed_frame(kind, n_rows=60):
    X, y = regression_data(n_rows=n_rows, n_features=3)
    labels = np.where(X[:, 1] > 0, "up", "down")
    if kind == "object":
        text = pd.Series(labels, dtype=object)
    elif kind == "string":
        text = pd.Series(labels, dtype="string")
    else:
        text = pd.Series(pd.Categorical(labels))
    return pd.DataFrame({"num": X[:, 0], "text": text, "noise": X[:, 2]}), y


def _encoding_pipeline():
    # columns chosen by dtype, so that drop-column can drop any of them
    encode = make_column_transformer(
        (
            OneHotEncoder(handle_unknown="ignore"),
            make_column_selector(dtype_exclude="number"),
        ),
        remainder="passthrough",
    )
    return make_pipeline(encode, Ridge())


@pytest.mark.parametrize("kind", ["object", "string", "categorical"])
def test_string_and_categorical_columns_through_a_pipeline(kind):
    X, y = _mixed_frame(kind)
    before = snapshot(X)
    model = _encoding_pipeline().fit(X, y)
    result = permutation_importance(model, X, y, n_repeats=2, random_state=0)
    assert result.feature_names.tolist() == ["num", "text", "noise"]
    assert result.importances_mean[0] > result.importances_mean[2]
    result = drop_column_importance(_encoding_pipeline(), X, y, cv=2, random_state=0)
    assert result.importances.shape == (3, 2)
    # 3 rounds: "num"'s corrected p-value is 1e-37 (1e-7 with 10 rounds)
    selector = ImportanceSelector(
        _encoding_pipeline(),
        method="permutation",
        random_state=0,
        n_repeats=2,
        n_rounds=3,
        n_probes=9,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        selector.fit(X, y)
    assert selector.support_[0]
    # the dependence models encode strings and categories themselves
    assert feature_dependence(X, estimator=small_forests()).target_kind[1] == (
        "classification"
    )
    hgb = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype")
    if kind == "categorical":
        model = hgb.fit(X, y)
        assert mdi_importance(model).importances_mean.shape == (3,)
    assert snapshot(X) == before


@pytest.mark.parametrize("container", ["numpy", "polars_string", "polars_categorical"])
def test_dependence_encodes_strings_of_every_container(container):
    X, _ = regression_data(n_rows=60, n_features=2)
    labels = np.where(X[:, 0] > 0, "up", "down")
    if container == "numpy":
        table = np.empty((60, 2), dtype=object)  # numbers and strings
        table[:, 0], table[:, 1] = X[:, 0], labels
    else:
        dtype = pl.String if container == "polars_string" else pl.Categorical
        table = pl.DataFrame({"x": X[:, 0], "label": pl.Series(labels, dtype=dtype)})
    before = snapshot(table)
    result = feature_dependence(table, estimator=small_forests(), random_state=0)
    assert result.target_kind[1] == "classification"
    assert result.dependence[1] > 0.5  # the sign of x0 says the label
    analyzer = call_analyzer(table)
    assert analyzer.support_.any()
    assert snapshot(table) == before


@pytest.mark.parametrize("kind", ["object", "string", "categorical"])
@pytest.mark.parametrize(
    "name", ["drop_column_importance", "ImportanceSelector", "permutation_importance"]
)
def test_string_columns_a_model_cannot_use_are_named(name, kind):
    X, y = _mixed_frame(kind)
    if name == "permutation_importance":
        # a model fitted on numbers, given the frame with the strings
        model = forest().fit(X.assign(text=X["num"]), y)
        call = lambda: permutation_importance(model, X, y)  # noqa: E731
    else:
        call = lambda: CALLS[name](X, y)  # noqa: E731
    with pytest.raises(
        ValueError,
        match=r"X column\(s\) 'text' .*'up'.* hold non-numeric values.*Encode them",
    ):
        call()


@pytest.mark.parametrize("kind", ["object", "string", "categorical"])
def test_shadows_of_text_columns_an_encoder_selects_by_name_are_explained(kind):
    # The encoder lists "text" by name. Held-out permutation passes each
    # shadow through the preprocessing as the column it copies, so the
    # shadows of "text" are encoded as "text" is and the selector fits.
    # Drop-column refits without columns, so its probes are raw columns:
    # the shadow copies of "text" pass through unencoded and the model fails
    # on them, though it fits X, and the error says why.
    # (two shuffles per column instead of 5, and 6 probes: the selector's
    # fits, errors and untouched input are checked, not the importances)
    X, y = _mixed_frame(kind)
    before = X.copy()
    by_name = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["text"]), remainder="passthrough"
    )
    ImportanceSelector(
        make_pipeline(by_name, Ridge()),
        method="permutation",
        n_repeats=2,
        n_rounds=1,
        n_probes=6,
        min_features=0,
    ).fit(X, y)
    pd.testing.assert_frame_equal(X, before)
    selector = ImportanceSelector(
        make_pipeline(by_name, Ridge()), method="drop_column", n_rounds=1, n_probes=6
    )
    with pytest.raises(
        ValueError,
        match=r"fits X but not X with probes.*'text'.*"
        r"make_column_selector\(dtype_exclude='number'\).*probes='normal'",
    ):
        selector.fit(X, y)
    pd.testing.assert_frame_equal(X, before)
    # the two fixes the message gives
    ImportanceSelector(
        _encoding_pipeline(),
        method="permutation",
        n_repeats=2,
        n_rounds=1,
        n_probes=6,
        min_features=0,
    ).fit(X, y)
    ImportanceSelector(
        make_pipeline(by_name, Ridge()),
        method="permutation",
        n_repeats=2,
        n_rounds=1,
        n_probes=6,
        probes="normal",
        min_features=0,
    ).fit(X, y)


# ----------------------------------------------------------------------------
# Values


def _with(X, rows, column, value):
    X = X.copy()
    X[rows, column] = value
    return X


@pytest.mark.parametrize("name", list(CALLS))
def test_nan_accepted_where_the_model_accepts_it(name):
    X, y = regression_data(n_rows=60)
    X = _with(X, [3, 10, 20], 2, np.nan)
    for X_kind in (X, pd.DataFrame(X, columns=list("abcd"))):
        # random forests accept NaN since scikit-learn 1.4; MDI-oob needs 1.8
        if name == "oob_mdi_importance" and not MISSING_VALUES_ROUTED_AS_FITTED:
            with pytest.raises(ValueError, match="scikit-learn >= 1.8"):
                CALLS[name](X_kind, y)
            continue
        outcome = CALLS[name](X_kind, y)
        check_outcome(name, outcome, 4)


def test_nan_and_infinity_accepted_by_histogram_boosting():
    X, y = regression_data(n_rows=60)
    X = _with(_with(X, [3, 10, 20], 2, np.nan), [5], 1, np.inf)
    hgb = HistGradientBoostingRegressor(max_iter=10)
    with threadpool_limits(1):  # OpenMP threads on tiny data only wait
        for name in ["permutation_importance", "drop_column_importance"]:
            check_outcome(name, CALLS[name](X, y, estimator=hgb), 4)
        selector = call_selector(X, y, estimator=hgb)
        assert selector.method_ == "permutation"


@pytest.mark.parametrize(
    "name", ["permutation_importance", "drop_column_importance", "ImportanceSelector"]
)
@pytest.mark.parametrize("frame", [False, True])
def test_nan_rejected_by_the_model_names_the_column(name, frame):
    X, y = regression_data(n_rows=60)
    X_nan = _with(X, [7, 9], 2, np.nan)
    if frame:
        X_nan = pd.DataFrame(X_nan, columns=["a", "b", "income", "d"])
    column = "income" if frame else "x2"
    if name == "permutation_importance":
        model = Ridge().fit(X if not frame else X_nan.fillna(0), y)
        call = lambda: permutation_importance(model, X_nan, y)  # noqa: E731
    else:
        call = lambda: CALLS[name](X_nan, y, estimator=Ridge())  # noqa: E731
    with pytest.raises(
        ValueError,
        match=(
            rf"X column\(s\) '{column}' \('{column}': first at row 7\) contain "
            r"missing values \(NaN\), which Ridge\(\.\.\.\) does not accept.*Impute"
        ),
    ):
        call()


def test_a_pipeline_that_imputes_takes_nan_and_one_that_does_not_names_it():
    X, y = regression_data(n_rows=60)
    X_nan = _with(X, [7, 9], 2, np.nan)
    imputing = make_pipeline(SimpleImputer(), StandardScaler(), Ridge())
    selector = ImportanceSelector(imputing, refit=False, random_state=0)
    assert selector.fit(X_nan, y).n_features_in_ == X.shape[1]
    scaling = make_pipeline(StandardScaler(), Ridge())
    with pytest.raises(ValueError, match=r"missing values \(NaN\).*Impute"):
        ImportanceSelector(scaling, refit=False, random_state=0).fit(X_nan, y)


#: The functions that take a fitted model and X, y.
PREFITTED = {
    "oob_mdi_importance": oob_mdi_importance,
    "permutation_importance": permutation_importance,
    "oob_permutation_importance": oob_permutation_importance,
}


def test_infinity_is_a_large_value_for_feature_groups():
    X, _ = regression_data(n_rows=60)
    X_inf = _with(X, [5], 1, np.inf)
    assert feature_groups(X_inf) == feature_groups(_with(X, [5], 1, 1e300))


@pytest.mark.parametrize(
    "name", [n for n in CALLS if n not in ("mdi_importance", "feature_groups")]
)
def test_infinity_names_the_column(name):
    X, y = regression_data(n_rows=60)
    X_inf = _with(X, [5], 1, np.inf)
    with pytest.raises(ValueError, match=r"infinit.*'x1'|'x1'.*infinit"):
        if name in PREFITTED:
            PREFITTED[name](forest().fit(X, y), X_inf, y)
        else:
            CALLS[name](X_inf, y)


def test_has_infinity_reads_arrays_frames_and_sparse_matrices():
    # where X holds infinity, permutation_importance asks the model's predict
    # for the baseline score (which names the column) instead of the engine
    import pandas as pd
    import scipy.sparse as sp

    from sklearn_fimp._utils._validation import has_infinity

    X, _ = regression_data(n_rows=20)
    X_inf = _with(X, [5], 1, np.inf)
    assert not has_infinity(X) and has_infinity(X_inf)
    assert has_infinity(pd.DataFrame(X_inf).assign(text="a"))
    assert not has_infinity(pd.DataFrame(X).assign(text="a"))
    assert has_infinity(sp.csr_matrix(X_inf)) and not has_infinity(sp.csr_matrix(X))
    assert not has_infinity(X.astype(np.int64))
    # a frame's numeric columns are read in one block: nullable integers,
    # booleans and -inf too; a text column holding "inf" is not infinity
    frame = pd.DataFrame(X).assign(
        n=pd.array([1, None] * 10, dtype="Int64"), b=True, text="inf"
    )
    assert not has_infinity(frame)
    assert has_infinity(frame.assign(f=np.r_[-np.inf, np.zeros(19)]))


def test_predict_names_the_column_the_refitted_model_rejects():
    X, y = regression_data(n_rows=60)
    selector = call_selector(X, y, estimator=Ridge())
    X_nan = _with(X, [2], 0, np.nan)
    with pytest.raises(
        ValueError, match=r"X column\(s\) 'x0' \('x0': first at row 2\)"
    ):
        selector.predict(X_nan)


@pytest.mark.parametrize("name", list(CALLS))
def test_constant_column(name):
    X, y = regression_data(n_rows=60)
    X = np.column_stack([X, np.full(60, 7.0)])
    outcome = CALLS[name](X, y)
    check_outcome(name, outcome, 5)
    if name in ("mdi_importance", "oob_mdi_importance"):
        assert outcome.importances_mean[4] == 0  # never split on
    if name in ("permutation_importance", "oob_permutation_importance"):
        assert np.all(outcome.importances[4] == 0)  # permuting changes nothing
    if name == "feature_groups":
        assert [4] in outcome  # correlates with nothing
    if name == "feature_dependence":
        assert outcome.target_kind[4] == "constant"
    if name == "ImportanceSelector":
        assert not outcome.support_[4]
    if name == "DependenceAnalyzer":
        assert not outcome.support_[4]  # predicted perfectly by nothing


@pytest.mark.parametrize("min_features", [0, 1, 3])
@pytest.mark.parametrize("method", ["oob_mdi", "permutation"])
def test_all_noise_warns_and_honours_min_features(method, min_features):
    rng = np.random.RandomState(2)
    X, y = rng.normal(size=(80, 5)), rng.normal(size=80)
    selector = ImportanceSelector(
        forest(), method=method, min_features=min_features, random_state=0
    )
    with pytest.warns(UserWarning, match=r"only \d+ of 5 features") as record:
        selector.fit(X, y)
    message = str(record[0].message)
    assert f"min_features={min_features}" in message
    assert selector.support_.sum() == min_features
    if min_features == 0:
        assert selector.estimator_ is None
        with pytest.warns(UserWarning, match="No features were selected"):
            assert selector.transform(X).shape == (80, 0)
    else:
        assert selector.transform(X).shape == (80, min_features)
        assert selector.predict(X).shape == (80,)


def test_all_noise_dependence_keeps_every_feature():
    rng = np.random.RandomState(2)
    X = rng.normal(size=(80, 5))
    analyzer = call_analyzer(X)
    assert analyzer.support_.all()  # nothing explains independent noise
    assert np.all(analyzer.dependence_ < 0.5)


def test_min_features_above_the_number_of_features_is_explained():
    X, y = regression_data()
    with pytest.raises(
        ValueError, match=r"min_features=5 is more than the 4.*at most 4"
    ):
        ImportanceSelector(forest(), min_features=5).fit(X, y)


@pytest.mark.parametrize("name", SUPERVISED)
def test_target_with_one_class(name):
    X, _ = regression_data()
    y = np.full(len(X), "only")
    if name == "ImportanceSelector":
        # a selection would be arbitrary: an error naming the class
        with pytest.raises(ValueError, match=r"y has a single class, 'only'"):
            CALLS[name](X, y, estimator=forest(classifier=True))
        return
    outcome = CALLS[name](X, y, estimator=forest(classifier=True))
    check_outcome(name, outcome, 4)
    assert np.all(outcome.importances_mean == 0)


@pytest.mark.parametrize("name", SUPERVISED)
def test_target_with_one_value(name):
    X, _ = regression_data()
    y = np.full(len(X), 3.5)
    outcome = CALLS[name](X, y)
    check_outcome(name, outcome, 4)
    if name != "ImportanceSelector":
        assert np.all(outcome.importances_mean == 0)


def test_one_class_with_a_model_that_needs_two_says_so():
    X, _ = regression_data()
    y = np.zeros(len(X), dtype=int)
    with pytest.raises(ValueError, match="at least 2 classes") as error:
        drop_column_importance(LogisticRegression(), X, y)
    # the model's own message, and which of the fits raised it
    assert error.value.__notes__ == [
        "drop_column_importance: raised by the fit with all columns."
    ]


@pytest.mark.parametrize("name", SUPERVISED)
def test_extreme_class_imbalance(name):
    X, _ = regression_data(n_rows=60)
    y = np.zeros(60, dtype=int)
    y[0] = 1  # one row of the rare class
    outcome = CALLS[name](X, y, estimator=forest(classifier=True))
    check_outcome(name, outcome, 4)


def test_extreme_imbalance_holdout_split_falls_back_to_a_random_split():
    X, _ = regression_data(n_rows=60)
    y = np.zeros(60, dtype=int)
    y[:2] = 1
    y[2] = 2  # a class with one row cannot be stratified
    result = drop_column_importance(
        forest(classifier=True, bootstrap=False), X, y, random_state=0
    )
    assert result.evaluation == "holdout"
    assert np.all(np.isfinite(result.importances))


#: Multi-output y: supported everywhere but by the out-of-bag functions on a
#: multi-output classifier, which must say so.
@pytest.mark.parametrize("name", SUPERVISED)
def test_multi_output_regression_target(name):
    X, y = regression_data()
    Y = np.column_stack([y, -y, X[:, 2]])
    outcome = CALLS[name](X, Y)
    check_outcome(name, outcome, 4)


@pytest.mark.parametrize("name", ["oob_mdi_importance", "oob_permutation_importance"])
def test_multi_output_classification_is_rejected_with_a_fix(name):
    X, y = regression_data()
    Y = np.column_stack([y > 0, X[:, 2] > 0]).astype(int)
    with pytest.raises(ValueError, match="multi-output classification.*one model"):
        CALLS[name](X, Y, estimator=forest(classifier=True))


def test_multi_output_classification_where_supported():
    X, y = regression_data()
    Y = np.column_stack([y > 0, X[:, 2] > 0]).astype(int)
    for name in ["permutation_importance", "drop_column_importance"]:
        outcome = CALLS[name](X, Y, estimator=forest(classifier=True, bootstrap=False))
        check_outcome(name, outcome, 4)
    selector = call_selector(X, Y, estimator=forest(classifier=True))
    assert selector.method_ == "permutation"


@pytest.mark.parametrize("name", WEIGHTED)
def test_sample_weights_with_zeros(name):
    X, y = regression_data(n_rows=60)
    weights = np.ones(60)
    weights[::3] = 0
    before = snapshot(weights)
    outcome = CALLS[name](X, y, sample_weight=weights)
    check_outcome(name, outcome, 4)
    assert snapshot(weights) == before


def test_zero_weights_equal_dropping_the_rows():
    X, y = regression_data(n_rows=60)
    model = Ridge().fit(X, y)
    weights = np.ones(60)
    weights[::3] = 0
    kept = weights > 0
    weighted = permutation_importance(
        model,
        X,
        y,
        sample_weight=weights,
        scoring="neg_mean_squared_error",
        random_state=0,
    )
    assert np.isfinite(weighted.baseline_score)
    plain = permutation_importance(
        model, X[kept], y[kept], scoring="neg_mean_squared_error", random_state=0
    )
    assert weighted.baseline_score == pytest.approx(plain.baseline_score)


@pytest.mark.parametrize("name", WEIGHTED)
def test_negative_weights_are_rejected_naming_the_row(name):
    X, y = regression_data()
    weights = np.ones(len(X))
    weights[6] = -0.5
    with pytest.raises(
        ValueError, match=r"sample_weight has 1 negative value\(s\), e.g. -0.5 at row 6"
    ):
        CALLS[name](X, y, sample_weight=weights)


@pytest.mark.parametrize("name", WEIGHTED)
def test_all_zero_weights_are_rejected(name):
    X, y = regression_data()
    with pytest.raises(ValueError, match="sample_weight is 0 for every row"):
        CALLS[name](X, y, sample_weight=np.zeros(len(X)))


@pytest.mark.parametrize("name", [n for n in SUPERVISED if n != "mdi_importance"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_missing_or_infinite_target_is_rejected_naming_the_row(name, value):
    X, y = regression_data()
    model = forest().fit(X, y)
    y_bad = y.copy()
    y_bad[4] = value
    message = (
        rf"y has 1 row\(s\) with a missing or infinite target, e.g. {value} at row 4"
    )
    with pytest.raises(ValueError, match=message + r".*Drop those rows"):
        if name in PREFITTED:
            PREFITTED[name](model, X, y_bad)
        else:
            CALLS[name](X, y_bad)


def test_target_errors_are_not_blamed_on_string_columns_of_X():
    X, y = _mixed_frame("object")
    model = _encoding_pipeline().fit(X, y)
    labels = np.full(len(y), "high")
    with pytest.raises(ValueError, match="could not convert string to float") as error:
        permutation_importance(model, X, labels)
    assert "column" not in str(error.value)


# ----------------------------------------------------------------------------
# Misuse


@pytest.mark.parametrize("estimator", [ImportanceSelector(), DependenceAnalyzer()])
def test_transform_before_fit(estimator):
    X, _ = regression_data()
    for method in ("transform", "get_support", "get_feature_names_out"):
        with pytest.raises(NotFittedError):
            getattr(estimator, method)(*([X] if method == "transform" else []))
    with pytest.raises(NotFittedError):
        estimator.inverse_transform(X[:, :2])


def _fitted_selectors(X, y):
    return [call_selector(X, y), call_analyzer(X)]


def test_transform_with_a_different_number_of_columns():
    X, y = regression_data()
    for fitted in _fitted_selectors(X, y):
        for X_other in (X[:, :3], np.column_stack([X, X[:, 0]])):
            with pytest.raises(
                ValueError, match=r"X has \d features, but .* is expecting 4"
            ):
                fitted.transform(X_other)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_transform_with_columns_in_another_order_or_renamed(kind):
    X, y = regression_data()
    names = ["a", "b", "c", "d"]
    frame = (
        pd.DataFrame(X, columns=names)
        if kind == "pandas"
        else pl.DataFrame({n: X[:, j] for j, n in enumerate(names)})
    )
    reordered = frame[["b", "a", "c", "d"]]
    renamed = (
        frame.rename(columns={"d": "e"})
        if kind == "pandas"
        else frame.rename({"d": "e"})
    )
    for fitted in _fitted_selectors(frame, y):
        with pytest.raises(ValueError, match="same order as they were in fit"):
            fitted.transform(reordered)
        with pytest.raises(ValueError, match="Feature names unseen at fit time"):
            fitted.transform(renamed)


def test_importance_functions_check_the_model_was_fitted():
    X, y = regression_data()
    for function in (
        permutation_importance,
        oob_permutation_importance,
        oob_mdi_importance,
    ):
        with pytest.raises(NotFittedError):
            function(forest(), X, y)
    with pytest.raises(NotFittedError):
        mdi_importance(forest())


def test_out_of_bag_functions_need_the_training_rows():
    X, y = regression_data()
    model = forest().fit(X, y)
    for function in (oob_permutation_importance, oob_mdi_importance):
        with pytest.raises(ValueError, match=r"X has 30 rows but .* fitted on 40"):
            function(model, X[:30], y[:30])


def test_rows_of_X_and_y_must_agree():
    X, y = regression_data()
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match="X has 40 rows but y has 39"):
        permutation_importance(model, X, y[:-1])
    with pytest.raises(ValueError, match="X has 40 rows but y has 39"):
        ImportanceSelector(Ridge()).fit(X, y[:-1])


#: (call, parameter, bad value) for every numeric or enumerated parameter.
OUT_OF_RANGE = [
    ("permutation_importance", "n_repeats", 0),
    ("permutation_importance", "max_samples", 1.5),
    ("permutation_importance", "max_samples", 0),
    ("permutation_importance", "ungrouped", "merge"),
    ("permutation_importance", "scoring", "not_a_scorer"),
    ("oob_permutation_importance", "n_repeats", -1),
    ("oob_permutation_importance", "groups", 3),
    ("drop_column_importance", "cv", "five"),
    ("drop_column_importance", "n_jobs", 1.5),
    ("feature_groups", "threshold", 1.5),
    ("feature_groups", "linkage", "ward"),
    ("feature_dependence", "max_samples", 1),
    ("feature_dependence", "categorical_threshold", -1),
    ("mdi_importance", "normalization", "l2"),
    ("ImportanceSelector", "alpha", 0),
    ("ImportanceSelector", "alpha", 1.0),
    ("ImportanceSelector", "n_probes", 1),
    ("ImportanceSelector", "method", "gain"),
    ("ImportanceSelector", "min_features", -1),
    ("ImportanceSelector", "max_features", -1),
    ("ImportanceSelector", "correction", "sidak"),
    ("DependenceAnalyzer", "threshold", 1.01),
    ("DependenceAnalyzer", "tol", -0.1),
    ("DependenceAnalyzer", "n_repeats", 0),
]


@pytest.mark.parametrize("name, parameter, value", OUT_OF_RANGE)
def test_parameters_out_of_range(name, parameter, value):
    X, y = regression_data()
    model = forest().fit(X, y)
    calls = {
        "permutation_importance": lambda kw: permutation_importance(model, X, y, **kw),
        "oob_permutation_importance": lambda kw: oob_permutation_importance(
            model, X, y, **kw
        ),
        "drop_column_importance": lambda kw: drop_column_importance(
            forest(), X, y, **kw
        ),
        "feature_groups": lambda kw: feature_groups(X, **kw),
        "feature_dependence": lambda kw: feature_dependence(X, **kw),
        "mdi_importance": lambda kw: mdi_importance(model, **kw),
        "ImportanceSelector": lambda kw: ImportanceSelector(forest(), **kw).fit(X, y),
        "DependenceAnalyzer": lambda kw: DependenceAnalyzer(**kw).fit(X),
    }
    with pytest.raises(InvalidParameterError) as error:
        calls[name]({parameter: value})
    message = str(error.value)
    # the parameter, the value and what would be accepted instead
    assert f"'{parameter}' parameter" in message
    assert repr(value) in message or str(value) in message
    assert "must be" in message


@pytest.mark.parametrize(
    "name",
    ["permutation_importance", "oob_permutation_importance", "drop_column_importance"],
)
def test_groups_naming_unknown_columns(name):
    X, y = regression_data()
    frame = pd.DataFrame(X, columns=["age", "income", "height", "weight"])
    model = forest().fit(frame, y)
    function = {
        "permutation_importance": lambda g: permutation_importance(
            model, frame, y, groups=g
        ),
        "oob_permutation_importance": lambda g: oob_permutation_importance(
            model, frame, y, groups=g
        ),
        "drop_column_importance": lambda g: drop_column_importance(
            forest(), frame, y, groups=g
        ),
    }[name]
    with pytest.raises(
        ValueError,
        match=(
            r"group 'body' names unknown feature 'wieght'; the features of X are "
            r"\['age', 'income', 'height', 'weight'\]"
        ),
    ):
        function({"body": ["height", "wieght"]})
    with pytest.raises(ValueError, match=r"column position 7, but X has 4 columns"):
        function([[0, 7]])
    with pytest.raises(TypeError, match=r"member 2\.5 of type float"):
        function([[0, 2.5]])
    with pytest.raises(ValueError, match="group 'empty' is empty"):
        function({"empty": []})


def test_selector_groups_naming_unknown_columns():
    X, y = regression_data()
    frame = pd.DataFrame(X, columns=["age", "income", "height", "weight"])
    selector = ImportanceSelector(
        forest(), groups={"body": ["height", "wieght"]}, method="oob_permutation"
    )
    with pytest.raises(ValueError, match="names unknown feature 'wieght'"):
        selector.fit(frame, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(selector)


# ----------------------------------------------------------------------------
# Persistence


ALLOWED_TYPE_PREFIXES = ("sklearn.", "numpy.", "sklearn_fimp.")


@pytest.mark.parametrize("kind", ["numpy", "pandas"])
def test_fitted_selectors_survive_pickle_and_skops(kind):
    sio = pytest.importorskip("skops.io")
    X, y = regression_data()
    if kind == "pandas":
        X = pd.DataFrame(X, columns=list("abcd"))
    for fitted in _fitted_selectors(X, y):
        expected = fitted.transform(X)
        restored = pickle.loads(pickle.dumps(fitted))
        np.testing.assert_array_equal(np.asarray(restored.transform(X)), expected)
        dumped = sio.dumps(fitted)
        untrusted = sio.get_untrusted_types(data=dumped)
        assert all(t.startswith(ALLOWED_TYPE_PREFIXES) for t in untrusted), untrusted
        loaded = sio.loads(dumped, trusted=untrusted)
        np.testing.assert_array_equal(np.asarray(loaded.transform(X)), expected)
        np.testing.assert_array_equal(loaded.support_, fitted.support_)


# ----------------------------------------------------------------------------
# Determinism


def _same(a, b):
    """Two results of a call are identical (arrays exactly equal)."""
    if hasattr(a, "support_"):
        np.testing.assert_array_equal(a.support_, b.support_)
        if hasattr(a, "importances_"):
            np.testing.assert_array_equal(
                a.importances_.importances, b.importances_.importances
            )
        if hasattr(a, "dependence_"):
            np.testing.assert_array_equal(a.dependence_, b.dependence_)
        return
    if isinstance(a, list):
        assert a == b
        return
    key = "importances" if "importances" in a else "dependence"
    np.testing.assert_array_equal(a[key], b[key])


PARALLEL = [
    "permutation_importance",
    "oob_permutation_importance",
    "drop_column_importance",
    "feature_dependence",
    "ImportanceSelector",
    "DependenceAnalyzer",
]


#: Calls that reach the lead's tree engine, whose in-place writes from
#: joblib workers get lost under the loky backend (see
#: sklearn_fimp/_engine/_budgets.py, engine_threads: require="sharedmem"
#: rather than prefer="threads").
@pytest.mark.parametrize("backend", ["threading", "loky"])
@pytest.mark.parametrize("name", PARALLEL)
def test_same_result_for_every_n_jobs_and_backend(name, backend):
    X, y = regression_data(n_rows=50, n_features=5)
    X = np.column_stack([X, X[:, 0] + 0.01 * X[:, 1]])  # something redundant
    reference = CALLS[name](X, y, n_jobs=1)
    with parallel_config(backend=backend):
        _same(CALLS[name](X, y, n_jobs=2), reference)


@pytest.mark.parametrize("backend", ["threading", "loky"])
@pytest.mark.parametrize(
    "method, estimator",
    [
        ("oob_permutation", forest()),
        ("drop_column", forest()),
        ("permutation", make_pipeline(StandardScaler(), Ridge())),
    ],
)
def test_selector_methods_are_the_same_for_every_backend(method, estimator, backend):
    X, y = regression_data(n_rows=50, n_features=5)
    reference = call_selector(X, y, estimator=estimator, n_jobs=1, method=method)
    with parallel_config(backend=backend):
        result = call_selector(X, y, estimator=estimator, n_jobs=2, method=method)
    _same(result, reference)


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_generic_permutation_path_is_the_same_for_every_backend(backend):
    X, y = regression_data(n_rows=50, n_features=5)
    reference = call_permutation(X, y, estimator=Ridge(), n_jobs=1)
    with parallel_config(backend=backend):
        _same(call_permutation(X, y, estimator=Ridge(), n_jobs=2), reference)
    selector = call_selector(X, y, estimator=Ridge(), n_jobs=1, method="permutation")
    with parallel_config(backend=backend):
        _same(
            call_selector(X, y, estimator=Ridge(), n_jobs=2, method="permutation"),
            selector,
        )


@pytest.mark.parametrize("name", list(CALLS))
def test_same_result_for_numpy_and_pandas_input(name):
    X, y = regression_data(n_rows=50, n_features=5)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    numpy_result = CALLS[name](X, y)
    pandas_result = CALLS[name](frame, pd.Series(y))
    if name == "feature_groups":
        assert pandas_result == [[f"x{j}" for j in g] for g in numpy_result]
        return
    _same(numpy_result, pandas_result)


def test_same_random_state_same_selection_twice():
    X, y = regression_data(n_rows=50, n_features=5)
    for method in ["auto", "mdi", "permutation", "oob_permutation", "drop_column"]:
        first = call_selector(X, y, method=method)
        _same(call_selector(X, y, method=method), first)


# ----------------------------------------------------------------------------
# Faults


class FailingForest(RandomForestRegressor):
    """A forest whose fit raises when it is given ``FAIL_AT`` columns."""

    FAIL_AT = None
    ERROR = RuntimeError

    def fit(self, X, y, sample_weight=None):
        if np.shape(X)[1] == self.FAIL_AT:
            raise self.ERROR(f"cannot fit on {np.shape(X)[1]} columns")
        return super().fit(X, y, sample_weight=sample_weight)


class InterruptedOnFive(FailingForest):
    FAIL_AT = 5
    ERROR = KeyboardInterrupt


class FailsOnDrop(RandomForestRegressor):
    """A forest whose fit raises when a column is constant: a drop-column
    fit (the dropped column is held at one value, in its place)."""

    ERROR = RuntimeError

    def fit(self, X, y, sample_weight=None):
        constant = np.flatnonzero(np.ptp(np.asarray(X, dtype=float), axis=0) == 0)
        if constant.size:
            raise self.ERROR(f"cannot fit with column {constant[0]} held constant")
        return super().fit(X, y, sample_weight=sample_weight)


class InterruptedOnDrop(FailsOnDrop):
    ERROR = KeyboardInterrupt


class InterruptedPredict(RegressorMixin, BaseEstimator):
    """Fits as Ridge; predict is interrupted (a user pressing Ctrl-C)."""

    def fit(self, X, y, sample_weight=None):
        self.model_ = Ridge().fit(X, y)
        self.n_features_in_ = np.shape(X)[1]
        return self

    def predict(self, X):
        raise KeyboardInterrupt


def _fitted_attributes(estimator):
    return [name for name in vars(estimator) if name.endswith("_")]


@pytest.mark.parametrize("backend", ["sequential", "threading", "loky"])
def test_drop_column_refit_error_propagates_with_context(backend):
    X, y = regression_data()
    with (
        parallel_config(backend=backend),
        pytest.raises(RuntimeError, match=r"cannot fit with column \d held") as error,
    ):
        drop_column_importance(FailsOnDrop(n_estimators=5), X, y, n_jobs=2)
    notes = getattr(error.value, "__notes__", [])
    assert any("drop_column_importance" in note and "dropped" in note for note in notes)


@pytest.mark.parametrize("backend", ["sequential", "threading", "loky"])
def test_interrupt_inside_drop_column_loop_propagates(backend):
    X, y = regression_data()
    with parallel_config(backend=backend), pytest.raises(KeyboardInterrupt):
        drop_column_importance(InterruptedOnDrop(n_estimators=5), X, y, n_jobs=2)


def test_selector_refit_error_leaves_it_unfitted():
    X, y = regression_data()
    selector = ImportanceSelector(Ridge(), method="permutation", random_state=0)
    selector.fit(X, y)
    n_selected = int(selector.support_.sum())
    assert n_selected == 2

    class FailsOnRefit(FailingForest):
        # every fit while measuring sees X and the probes; the refit sees
        # at most X's columns
        def fit(self, X_fit, y_fit, sample_weight=None):
            if np.shape(X_fit)[1] <= np.shape(X)[1]:
                raise RuntimeError(f"cannot fit on {np.shape(X_fit)[1]} columns")
            return super().fit(X_fit, y_fit, sample_weight=sample_weight)

    selector.set_params(estimator=FailsOnRefit(n_estimators=5), method="oob_mdi")
    with pytest.raises(RuntimeError, match="cannot fit on [1-4] columns") as error:
        selector.fit(X, y)
    assert any("refit" in note for note in error.value.__notes__)
    # no attribute left from the first fit, none from the failed one
    assert _fitted_attributes(selector) == []
    with pytest.raises(NotFittedError):
        check_is_fitted(selector)
    with pytest.raises(NotFittedError):
        selector.transform(X)


@pytest.mark.parametrize("backend", ["sequential", "threading", "loky"])
def test_selector_drop_column_error_leaves_it_unfitted(backend):
    X, y = regression_data()
    # the fits with one column (a feature or a probe) held constant fail
    selector = ImportanceSelector(
        FailsOnDrop(n_estimators=5), method="drop_column", n_jobs=2, random_state=0
    )
    with (
        parallel_config(backend=backend),
        pytest.raises(RuntimeError, match="held constant"),
    ):
        selector.fit(X, y)
    assert _fitted_attributes(selector) == []


@pytest.mark.parametrize("backend", ["sequential", "threading", "loky"])
def test_interrupt_inside_the_selector_leaves_it_unfitted(backend):
    X, y = regression_data()
    selector = call_selector(X, y)  # fitted once: the interrupt must undo it
    selector.set_params(estimator=InterruptedPredict(), method="permutation", n_jobs=2)
    with parallel_config(backend=backend), pytest.raises(KeyboardInterrupt):
        selector.fit(X, y)
    assert _fitted_attributes(selector) == []
    with pytest.raises(NotFittedError):
        selector.transform(X)


def _redundant_data():
    X, _ = regression_data(n_rows=60, n_features=4)
    return np.column_stack([X, X[:, 0], X[:, 1] + 0.001 * X[:, 2]])


def test_dependence_refit_error_leaves_the_analyzer_unfitted():
    X = _redundant_data()
    analyzer = DependenceAnalyzer(forest(), threshold=0.5, random_state=0).fit(X)
    assert not analyzer.support_.all()
    # the first pass fits on 5 inputs each; the re-measurement after a drop
    # on 4: it fails in the middle of the elimination
    analyzer.set_params(estimator=type("FailsOn4", (FailingForest,), {"FAIL_AT": 4})())
    with pytest.raises(RuntimeError, match="cannot fit on 4 columns") as error:
        analyzer.fit(X)
    assert any("feature dependence" in note for note in error.value.__notes__)
    assert _fitted_attributes(analyzer) == []
    with pytest.raises(NotFittedError):
        analyzer.transform(X)


@pytest.mark.parametrize("backend", ["sequential", "threading", "loky"])
def test_interrupt_inside_the_dependence_loop_leaves_the_analyzer_unfitted(backend):
    X = _redundant_data()
    analyzer = DependenceAnalyzer(forest(), threshold=0.5, random_state=0).fit(X)
    analyzer.set_params(estimator=InterruptedOnFive(n_estimators=5), n_jobs=2)
    with parallel_config(backend=backend), pytest.raises(KeyboardInterrupt):
        analyzer.fit(X)
    assert _fitted_attributes(analyzer) == []
    with pytest.raises(NotFittedError):
        check_is_fitted(analyzer)


def test_failed_validation_leaves_no_fitted_state():
    X, y = regression_data()
    selector = call_selector(X, y)
    X_bad = X.copy()
    X_bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        selector.fit(X_bad, y)
    assert _fitted_attributes(selector) == []
    analyzer = call_analyzer(X)
    with pytest.raises(ValueError, match="infinity"):
        analyzer.fit(X_bad)
    assert _fitted_attributes(analyzer) == []


# ----------------------------------------------------------------------------
# Generated cases


@st.composite
def tables(draw):
    """Small tables of float, int and bool columns, some constant, some with
    NaN, in numpy, pandas or polars, with a regression target."""
    n_rows = draw(st.integers(8, 30))
    n_features = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.RandomState(seed)
    columns = {}
    for j in range(n_features):
        kind = draw(st.sampled_from(["float", "int", "bool", "constant", "nan"]))
        values = rng.normal(size=n_rows)
        if kind == "int":
            values = rng.randint(-3, 4, size=n_rows)
        elif kind == "bool":
            values = rng.uniform(size=n_rows) > 0.5
        elif kind == "constant":
            values = np.full(n_rows, 1.5)
        elif kind == "nan":
            values[rng.uniform(size=n_rows) < 0.2] = np.nan
        columns[f"c{j}"] = values
    y = rng.normal(size=n_rows)
    container = draw(st.sampled_from(["numpy", "pandas", "polars"]))
    if container == "pandas":
        X = pd.DataFrame(columns)
    elif container == "polars":
        X = pl.DataFrame(columns)
    else:
        X = np.column_stack([np.asarray(v, dtype=np.float64) for v in columns.values()])
    weights = draw(st.sampled_from([None, "zeros"]))
    if weights == "zeros":
        weights = rng.uniform(size=n_rows)
        weights[rng.uniform(size=n_rows) < 0.3] = 0
        weights[0] = 1.0
    return X, y, weights


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(case=tables(), name=st.sampled_from(list(CALLS)))
def test_generated_tables(case, name):
    X, y, weights = case
    before = snapshot(X), snapshot(y), snapshot(weights)
    n_features = X.shape[1]
    weighted = weights if name in WEIGHTED else None
    try:
        outcome = CALLS[name](X, y, sample_weight=weighted)
    except ValueError as exc:
        # the only errors allowed: one feature for drop-column
        assert n_features == 1 and name == "drop_column_importance", exc
    else:
        check_outcome(name, outcome, n_features)
    assert (snapshot(X), snapshot(y), snapshot(weights)) == before


@settings(max_examples=10, deadline=None, derandomize=True)
@given(
    case=tables(), which=st.sampled_from(["ImportanceSelector", "DependenceAnalyzer"])
)
def test_generated_transform_returns_the_selected_columns(case, which):
    X, y, _ = case
    fitted = CALLS[which](X, y)
    before = snapshot(X)
    Xt = fitted.transform(X)
    assert snapshot(X) == before
    kept = np.flatnonzero(fitted.get_support())
    assert Xt.shape == (X.shape[0], len(kept))
    values = X.to_numpy() if hasattr(X, "to_numpy") else np.asarray(X)
    np.testing.assert_array_equal(
        np.asarray(Xt, dtype=float), values[:, kept].astype(float)
    )
    if hasattr(X, "columns"):
        names = [str(c) for c in X.columns]
        assert list(fitted.get_feature_names_out()) == [names[j] for j in kept]


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    value=st.sampled_from([np.nan, np.inf, -np.inf]),
    column=st.integers(0, 3),
    row=st.integers(0, 39),
    frame=st.booleans(),
)
def test_generated_bad_values_name_their_column(value, column, row, frame):
    X, y = regression_data()
    X_bad = X.copy()
    X_bad[row, column] = value
    names = ["alpha", "beta", "gamma", "delta"]
    name = names[column] if frame else f"x{column}"
    if frame:
        X, X_bad = pd.DataFrame(X, columns=names), pd.DataFrame(X_bad, columns=names)
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError) as error:
        permutation_importance(model, X_bad, y)
    message = str(error.value)
    assert re.search(rf"'{name}' \('{name}': first at row {row}\)", message), message
    assert ("Impute" in message) if np.isnan(value) else ("finite" in message)


NAMES = ["age", "income", "height", "weight"]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    groups=st.lists(
        st.lists(
            st.one_of(st.sampled_from(NAMES), st.integers(0, 3)),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=4,
    ),
    ungrouped=st.sampled_from(["separate", "together", "drop"]),
    unknown=st.sampled_from([None, "wieght", 9]),
)
def test_generated_groups(groups, ungrouped, unknown):
    X, y = regression_data()
    frame = pd.DataFrame(X, columns=NAMES)
    model = Ridge().fit(frame, y)
    if unknown is not None:
        groups = groups[:-1] + [groups[-1] + [unknown]]
        expected = "unknown feature 'wieght'" if unknown == "wieght" else "position 9"
        with pytest.raises(ValueError, match=expected):
            permutation_importance(model, frame, y, groups=groups)
        return
    positions = [
        sorted({m if isinstance(m, int) else NAMES.index(m) for m in g}) for g in groups
    ]
    labels = [
        "+".join(
            NAMES[p]
            for p in dict.fromkeys(
                m if isinstance(m, int) else NAMES.index(m) for m in g
            )
        )
        for g in groups
    ]
    if len(set(labels)) < len(labels):
        with pytest.raises(ValueError, match="is used by two groups"):
            permutation_importance(model, frame, y, groups=groups)
        return
    result = permutation_importance(
        model, frame, y, groups=groups, ungrouped=ungrouped, n_repeats=2
    )
    n_given = len(groups)
    assert [sorted(g) for g in result.groups[:n_given]] == positions
    assert list(result.feature_names[:n_given]) == labels
    mentioned = set().union(*map(set, positions))
    rest = [j for j in range(4) if j not in mentioned]
    extra = {"separate": len(rest), "together": int(bool(rest)), "drop": 0}
    assert result.importances.shape == (n_given + extra[ungrouped], 2)
    # a group holding x0 (what y depends on most) matters more than one without
    with_x0 = [i for i, g in enumerate(positions) if 0 in g]
    without = [i for i, g in enumerate(positions) if 0 not in g and 1 not in g]
    for i in with_x0:
        for k in without:
            assert result.importances_mean[i] > result.importances_mean[k]


def test_datetime_column_error_names_it_and_the_fix():
    # numpy's own error lists 26 dtypes and no column
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    X = pd.DataFrame(
        {"a": rng.normal(size=40), "when": pd.date_range("2020-01-01", periods=40)}
    )
    with pytest.raises(ValueError, match=r"'when'.*dates or times.*astype\('int64'\)"):
        ImportanceSelector(RandomForestRegressor(n_estimators=3), n_rounds=1).fit(
            X, rng.normal(size=40)
        )


@pytest.mark.parametrize("estimator", [None, RandomForestClassifier(n_estimators=3)])
def test_string_target_with_missing_labels_is_an_error_naming_the_row(estimator):
    # it said to pass estimator=, then failed comparing str with float
    X = np.random.RandomState(0).normal(size=(50, 2))
    y = np.array(["a", "b"] * 24 + [np.nan, "a"], dtype=object)
    with pytest.raises(ValueError, match=r"missing label .* row 48.*Drop those rows"):
        ImportanceSelector(estimator, n_rounds=1).fit(X, y)


def test_mdi_importance_given_rows_says_it_reads_the_model_only():
    X, y = np.random.RandomState(0).normal(size=(30, 2)), np.arange(30.0)
    forest = RandomForestRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(TypeError, match=r"takes no rows.*permutation_importance"):
        mdi_importance(forest, X)
