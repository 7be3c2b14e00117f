import copy

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.feature_selection import SelectKBest, f_regression
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_param_validation
from sklearn.utils.validation import check_is_fitted

import sklearn_fimp
from sklearn_fimp import DependenceAnalyzer, ImportanceSelector, feature_dependence
from tests.conftest import as_frame


def small_forests(n_estimators=30):
    """Forests like the defaults, with fewer trees to keep the tests fast."""
    return {
        "regressor": RandomForestRegressor(
            n_estimators=n_estimators, min_samples_leaf=5, max_features=1.0
        ),
        "classifier": RandomForestClassifier(
            n_estimators=n_estimators, min_samples_leaf=5, max_features=1.0
        ),
    }


def analyzer(**params):
    params.setdefault("estimator", small_forests())
    params.setdefault("random_state", 0)
    return DependenceAnalyzer(**params)


def independent_columns(n_columns, n_rows=300, seed=0):
    return np.random.RandomState(seed).normal(size=(n_rows, n_columns))


def dependence_on(X_kept, column, seed=0):
    """Dependence of ``column`` on the columns of ``X_kept`` alone."""
    X = np.column_stack([X_kept, column])
    return feature_dependence(
        X, estimator=small_forests(), random_state=seed
    ).dependence[-1]


# --- duplicates, near copies, noise ------------------------------------------


@pytest.mark.parametrize("n_copies", [2, 3])
def test_dependence_analyzer_keeps_exactly_one_exact_copy(n_copies):
    base = independent_columns(3)  # a, and two independent features
    a = base[:, [0]]
    X = np.hstack([base] + [a] * (n_copies - 1))
    copies = [0] + list(range(3, 3 + n_copies - 1))
    selector = analyzer().fit(X)
    assert selector.support_[copies].sum() == 1
    assert selector.support_[[1, 2]].all()
    assert len(selector.elimination_path_["feature"]) == n_copies - 1
    # the dropped copies are still predicted by what is kept
    X_kept = X[:, selector.support_]
    for dropped in selector.elimination_path_["index"]:
        assert dependence_on(X_kept, X[:, dropped]) > 0.95


def test_dependence_analyzer_keeps_one_of_a_near_copy():
    X = independent_columns(4)
    near = X[:, 0] + 0.01 * np.random.RandomState(1).normal(size=len(X))
    X = np.column_stack([X, near])
    selector = analyzer().fit(X)
    assert selector.dependence_[[0, 4]].min() > 0.95
    assert selector.support_[[0, 4]].sum() == 1
    assert selector.support_[[1, 2, 3]].all()
    (dropped,) = selector.elimination_path_["index"]
    kept = 4 if dropped == 0 else 0
    assert selector.elimination_path_["explained_by"][0] == f"x{kept}"
    assert dependence_on(X[:, selector.support_], X[:, dropped]) > 0.95


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dependence_analyzer_never_drops_independent_noise(seed):
    rng = np.random.RandomState(seed)
    a, b = rng.normal(size=(2, 300))
    noise = rng.uniform(size=(300, 3))
    X = np.column_stack([a, b, a, a + b, np.exp(b), noise])
    selector = analyzer(random_state=seed).fit(X)
    assert selector.support_[5:].all()
    assert selector.dependence_[5:].max() < 0.3
    # something was redundant and is gone
    assert 2 <= len(selector.elimination_path_["feature"]) <= 3
    X_kept = X[:, selector.support_]
    for dropped in selector.elimination_path_["index"]:
        assert dependence_on(X_kept, X[:, dropped], seed) > 0.8


def test_dependence_analyzer_dropping_all_redundant_at_once_would_be_wrong():
    # both copies are above the threshold at first; sequential elimination
    # re-measures the survivor, which then depends on nothing
    X = independent_columns(3)
    X = np.column_stack([X, X[:, 0]])
    selector = analyzer().fit(X)
    assert (selector.dependence_[[0, 3]] > 0.95).all()
    assert selector.support_.sum() == 3
    survivor = 0 if selector.support_[0] else 3
    (remeasured,) = selector.elimination_path_["remeasured"]
    assert remeasured == [f"x{survivor}"]


def test_dependence_analyzer_remeasures_only_features_that_relied_on_the_drop():
    rng = np.random.RandomState(0)
    a, b, c = rng.normal(size=(3, 300))
    X = np.column_stack([a, a + 0.01 * rng.normal(size=300), b, b, c])
    selector = analyzer().fit(X)
    path = selector.elimination_path_
    assert len(path["feature"]) == 2
    pairs = {"x0": "x1", "x1": "x0", "x2": "x3", "x3": "x2"}
    for feature, explained_by, remeasured in zip(
        path["feature"], path["explained_by"], path["remeasured"]
    ):
        assert explained_by == pairs[feature]
        # only the other member of the pair relied on the dropped feature
        assert remeasured == [pairs[feature]]
    assert selector.n_fits_ == 5 + 2
    assert selector.support_[4]


# --- the dependence values ---------------------------------------------------


def test_feature_dependence_breast_cancer_families():
    X, _ = load_breast_cancer(return_X_y=True, as_frame=True)
    # 20 trees: the size measures' dependence is 0.98 at least, the shape
    # errors' 0.48 at most (40 trees: 0.98, 0.52)
    result = feature_dependence(
        X, estimator=small_forests(20), n_jobs=2, random_state=0
    )
    dependence = dict(zip(result.feature_names, result.dependence))
    for size in ("radius", "perimeter", "area"):
        for prefix in ("mean", "worst"):
            assert dependence[f"{prefix} {size}"] > 0.95, size
    for shape in ("symmetry", "smoothness", "texture"):
        assert dependence[f"{shape} error"] < 0.65, shape
    # the radius is explained by the other size measures
    matrix_row = result.matrix[list(result.feature_names).index("mean radius")]
    best = result.feature_names[np.nanargmax(matrix_row)]
    assert best.split()[-1] in ("radius", "perimeter", "area")


def test_feature_dependence_result_shape_and_names():
    X = as_frame(independent_columns(3), "pandas", ["a", "b", "c"])
    result = feature_dependence(X, estimator=small_forests(10), random_state=0)
    assert result.dependence.shape == (3,)
    assert result.matrix.shape == (3, 3)
    assert np.isnan(np.diag(result.matrix)).all()
    assert np.isfinite(result.matrix[~np.eye(3, dtype=bool)]).all()
    assert list(result.feature_names) == ["a", "b", "c"]
    assert list(result.target_kind) == ["regression"] * 3
    assert result.n_samples == 300
    assert isinstance(result.random_state, int)


def test_feature_dependence_matrix_entry_is_the_drop_of_the_dependence():
    # a is b + c: permuting b or c in a's model costs much; the noise d little
    rng = np.random.RandomState(0)
    b, c, d = rng.uniform(size=(3, 400))
    X = np.column_stack([b + c, b, c, d])
    result = feature_dependence(X, estimator=small_forests(), random_state=0)
    row = result.matrix[0]
    assert row[1] > 0.2 and row[2] > 0.2
    assert abs(row[3]) < 0.02
    assert result.dependence[0] > 0.8
    assert result.dependence[3] < 0.1


def test_feature_dependence_categorical_target_is_chance_corrected():
    # a rare category independent of everything: plain accuracy would be
    # about 0.9 (always guessing the frequent value); chance-corrected, 0
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(2, 400))
    rare = np.where(rng.uniform(size=400) < 0.1, "rare", "common")
    sign = np.where(a > 0, "positive", "negative")
    X = as_frame(np.column_stack([a, b]), "pandas", ["a", "b"])
    X = X.assign(rare=rare, sign=sign)
    result = feature_dependence(X, estimator=small_forests(), random_state=0)
    dependence = dict(zip(result.feature_names, result.dependence))
    assert list(result.target_kind) == [
        "regression",
        "regression",
        "classification",
        "classification",
    ]
    assert abs(dependence["rare"]) < 0.15
    assert dependence["sign"] > 0.9
    assert result.matrix[3, 0] > 0.5  # sign is explained by a


def test_feature_dependence_few_valued_numeric_feature_is_classified():
    X = independent_columns(2)
    X = np.column_stack([X, X[:, 0] > 0])
    result = feature_dependence(X, estimator=small_forests(), random_state=0)
    assert list(result.target_kind) == ["regression", "regression", "classification"]
    assert result.dependence[2] > 0.9
    result = feature_dependence(
        X, estimator=small_forests(), categorical_threshold=0, random_state=0
    )
    assert result.target_kind[2] == "regression"


def test_feature_dependence_missing_values_use_observed_rows():
    X = independent_columns(3)
    X = np.column_stack([X, X[:, 0]])
    X[::5, 3] = np.nan
    X[1::7, 1] = np.nan
    result = feature_dependence(X, estimator=small_forests(), random_state=0)
    assert np.isfinite(result.dependence).all()
    assert result.dependence[3] > 0.95
    assert result.dependence[1] < 0.3
    selector = analyzer().fit(X)
    assert selector.support_[[0, 3]].sum() == 1
    assert selector.transform(X).shape == (300, 3)


def test_dependence_constant_and_single_features():
    X = independent_columns(3)
    X[:, 1] = 7.0
    result = feature_dependence(X, estimator=small_forests(10), random_state=0)
    assert result.dependence[1] == 1.0
    assert result.target_kind[1] == "constant"
    assert np.isnan(result.matrix[1]).all()
    selector = analyzer().fit(X)
    assert list(selector.support_) == [True, False, True]
    assert selector.elimination_path_["explained_by"][0] is None

    single = feature_dependence(X[:, :1], random_state=0)
    assert single.dependence.tolist() == [0.0]
    assert analyzer().fit(X[:, :1]).support_.tolist() == [True]
    # the last feature is never dropped, even when it is constant
    assert analyzer().fit(X[:, [1]]).support_.tolist() == [True]


@pytest.mark.parametrize(
    "max_samples, expected", [(100, 100), (0.5, 150), (10_000, 300), (None, 300)]
)
def test_feature_dependence_max_samples(max_samples, expected):
    result = feature_dependence(
        independent_columns(2),
        estimator=small_forests(5),
        max_samples=max_samples,
        random_state=0,
    )
    assert result.n_samples == expected


def test_dependence_analyzer_threshold_bounds():
    X = independent_columns(3)
    X = np.column_stack([X, X[:, 0]])
    assert analyzer(threshold=1.0).fit(X).support_.all()
    # with 0, everything predictable at all goes, but never the last feature
    assert analyzer(threshold=0.0).fit(X).support_.sum() >= 1


# --- reproducibility ---------------------------------------------------------


def test_dependence_analyzer_reproducible_whatever_n_jobs():
    rng = np.random.RandomState(0)
    a, b, c = rng.normal(size=(3, 200))
    X = np.column_stack([a, b, a + b, c, a, np.sin(c)])
    fits = [analyzer(n_jobs=n_jobs, random_state=3).fit(X) for n_jobs in (1, 2)]
    np.testing.assert_array_equal(fits[0].dependence_, fits[1].dependence_)
    np.testing.assert_array_equal(
        fits[0].dependence_matrix_, fits[1].dependence_matrix_
    )
    for key in fits[0].elimination_path_:
        assert list(fits[0].elimination_path_[key]) == list(
            fits[1].elimination_path_[key]
        )
    np.testing.assert_array_equal(fits[0].support_, fits[1].support_)

    first, second = (
        feature_dependence(X, estimator=small_forests(), n_jobs=n, random_state=3)
        for n in (1, 2)
    )
    np.testing.assert_array_equal(first.matrix, second.matrix)
    np.testing.assert_array_equal(first.dependence, fits[0].dependence_)


def test_feature_dependence_random_state_instance_and_seeds():
    X = independent_columns(3, n_rows=150)
    run = lambda state: feature_dependence(  # noqa: E731
        X, estimator=small_forests(10), random_state=state
    )
    np.testing.assert_array_equal(run(5).dependence, run(5).dependence)
    np.testing.assert_array_equal(
        run(np.random.RandomState(5)).dependence,
        run(np.random.RandomState(5)).dependence,
    )
    assert not np.array_equal(run(5).dependence, run(6).dependence)


# --- data types and the caller's data ---------------------------------------


def mixed_frame(kind):
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(2, 200))
    frame = pd.DataFrame(
        {
            "a": a,
            "b": b,
            "colour": np.where(a > 0.3, "red", np.where(a < -0.3, "blue", "green")),
            "grade": pd.Categorical(np.where(b > 0, "high", "low")),
            "flag": a > 0,
        }
    )
    frame.loc[::9, "b"] = np.nan
    frame.loc[::11, "colour"] = None
    if kind == "polars":
        pl = pytest.importorskip("polars")
        return pl.from_pandas(frame)
    if kind == "numpy":
        return frame.to_numpy()
    return frame


@pytest.mark.parametrize("kind", ["numpy", "pandas", "polars"])
def test_dependence_encodes_strings_internally_and_leaves_data_alone(kind):
    X = mixed_frame(kind)
    snapshot = copy.deepcopy(X)
    estimator = small_forests(15)
    params = copy.deepcopy(estimator["regressor"].get_params())
    result = feature_dependence(X, estimator=estimator, random_state=0)
    selector = analyzer(estimator=estimator, threshold=0.9).fit(X)
    selector.transform(X)
    if kind == "numpy":
        assert X.dtype == object
        assert all((x == y) or (x is y) for x, y in zip(X.ravel(), snapshot.ravel()))
    elif kind == "pandas":
        import pandas as pd

        pd.testing.assert_frame_equal(X, snapshot)
    else:
        assert X.equals(snapshot)
    assert estimator["regressor"].get_params() == params
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator["regressor"])
    assert list(result.target_kind) == [
        "regression",
        "regression",
        "classification",
        "classification",
        "classification",
    ]
    # colour and flag are functions of a
    assert result.dependence[2] > 0.8 and result.dependence[4] > 0.9
    assert selector.support_[[0, 1]].all()


@pytest.mark.parametrize("kind", ["unicode", "pandas-string"])
def test_dependence_string_columns_are_categories_even_when_numeric_looking(kind):
    rng = np.random.RandomState(0)
    digit = rng.randint(0, 3, size=200).astype(str)  # "0", "1", "2"
    letter = np.array(["a", "b", "c"])[digit.astype(int)]
    noise = rng.choice(["u", "v"], size=200)
    X = np.column_stack([digit, letter, noise])
    if kind == "pandas-string":
        pd = pytest.importorskip("pandas")
        X = pd.DataFrame(X, columns=["digit", "letter", "noise"]).astype("string")
    result = feature_dependence(X, estimator=small_forests(), random_state=0)
    assert list(result.target_kind) == ["classification"] * 3
    assert result.dependence[:2].min() > 0.95
    assert result.dependence[2] < 0.2


def test_dependence_same_result_for_numpy_pandas_and_polars():
    seeds = dict(estimator=small_forests(10), random_state=0)
    results = [
        feature_dependence(mixed_frame(kind), **seeds)
        for kind in ("numpy", "pandas", "polars")
    ]
    for other in results[1:]:
        np.testing.assert_allclose(other.dependence, results[0].dependence)
        np.testing.assert_allclose(other.matrix, results[0].matrix)


@pytest.mark.parametrize(
    "make_X, error, match",
    [
        (
            lambda pd: pd.DataFrame(
                {"a": [1.0, 2.0, 3.0], "when": pd.date_range("2020", periods=3)}
            ),
            TypeError,
            "column 'when' has dtype datetime64",
        ),
        (
            lambda pd: pd.DataFrame({"a": [1.0, 2.0], "bag": [{"x": 1}, {"y": 2}]}),
            TypeError,
            "column 'bag' .*dict",
        ),
        (
            lambda pd: pd.DataFrame({"a": [1.0, 2.0], "mixed": ["u", 3.5]}),
            TypeError,
            "column 'mixed' .*mixes strings and numbers",
        ),
        (
            lambda pd: pd.DataFrame({"a": [1.0, np.inf], "b": [1.0, 2.0]}),
            ValueError,
            "infinity in column 'a'",
        ),
        (lambda pd: np.ones((1, 3)), ValueError, "1 sample"),
        (
            lambda pd: __import__("scipy.sparse").sparse.random(5, 3, format="csr"),
            TypeError,
            "sparse",
        ),
    ],
)
def test_dependence_rejects_unusable_data_naming_the_column(make_X, error, match):
    pd = pytest.importorskip("pandas")
    X = make_X(pd)
    with pytest.raises(error, match=match):
        feature_dependence(X, estimator=small_forests(5))
    with pytest.raises(error, match=match):
        analyzer().fit(X)


@pytest.mark.parametrize(
    "estimator, match",
    [
        (RandomForestRegressor(bootstrap=False), "no out-of-bag rows"),
        (GradientBoostingRegressor(), "no out-of-bag rows"),
        ({"regressor": RandomForestClassifier()}, r"estimator\['regressor'\]"),
        ({"forest": RandomForestRegressor()}, "unknown key"),
        (LinearRegression(), "no out-of-bag rows"),
    ],
)
def test_dependence_rejects_estimators_without_oob_rows(estimator, match):
    X = independent_columns(2, n_rows=20)
    with pytest.raises(ValueError, match=match):
        feature_dependence(X, estimator=estimator)
    with pytest.raises(ValueError, match=match):
        DependenceAnalyzer(estimator).fit(X)


def test_dependence_analyzer_uses_a_single_estimator_for_its_kind():
    X = independent_columns(3)
    X = np.column_stack([X, X[:, 0] > 0])
    extra = ExtraTreesRegressor(n_estimators=10, bootstrap=True)
    selector = DependenceAnalyzer(extra, random_state=0, threshold=0.99).fit(X)
    assert list(selector.target_kind_) == ["regression"] * 3 + ["classification"]
    with pytest.raises(NotFittedError):
        check_is_fitted(extra)


def test_dependence_analyzer_param_validation():
    check_param_validation("DependenceAnalyzer", analyzer(estimator=small_forests(5)))
    with pytest.raises(ValueError, match="threshold"):
        DependenceAnalyzer(threshold=2).fit(independent_columns(2))
    with pytest.raises(ValueError, match="max_samples"):
        feature_dependence(independent_columns(2), max_samples=0)


# --- the selector API --------------------------------------------------------


@pytest.mark.parametrize("output", ["pandas", "polars"])
def test_dependence_analyzer_set_output(output):
    pytest.importorskip(output)
    names = ["a", "b", "a_copy", "c"]
    X = independent_columns(4)
    X[:, 2] = X[:, 0]
    frame = as_frame(X, "pandas" if output == "pandas" else "polars", names)
    selector = analyzer().set_output(transform=output).fit(frame)
    kept = list(selector.get_feature_names_out())
    assert len(kept) == 3 and {"b", "c"} <= set(kept)
    with pytest.warns(UserWarning, match="feature names"):
        from_array = selector.transform(X)
    for out in (selector.transform(frame), from_array):
        assert type(out).__module__.split(".")[0] == output
        assert list(out.columns) == kept
        assert all(str(t).lower().startswith("float") for t in out.dtypes)
    fitted = analyzer().set_output(transform=output).fit_transform(frame)
    assert list(fitted.columns) == kept


def test_dependence_analyzer_transform_keeps_pandas_dtypes():
    X = mixed_frame("pandas")
    selector = analyzer(threshold=0.8).set_output(transform="pandas").fit(X)
    out = selector.transform(X)
    assert list(out.columns) == list(selector.get_feature_names_out())
    for column in out.columns:
        assert out[column].dtype == X[column].dtype


def test_dependence_analyzer_get_support_and_unfitted():
    selector = analyzer()
    with pytest.raises(NotFittedError):
        selector.transform(independent_columns(2))
    X = independent_columns(3)
    X = np.column_stack([X, X[:, 1]])
    selector.fit(X)
    assert selector.get_support(indices=True).tolist() == list(
        np.flatnonzero(selector.support_)
    )
    assert selector.transform(X).shape == (300, 3)
    assert selector.n_features_in_ == 4


@pytest.mark.parametrize(
    "next_selector",
    [
        SelectKBest(f_regression, k=2),
        ImportanceSelector(RandomForestRegressor(n_estimators=20)),
    ],
    ids=type,
)
def test_dependence_analyzer_in_a_pipeline_before_another_selector(next_selector):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + 2 * X[:, 1] + 0.1 * rng.normal(size=300)
    X = as_frame(np.column_stack([X, X[:, 0]]), "pandas", ["a", "b", "c", "d", "a2"])
    pipeline = make_pipeline(
        analyzer(), clone(next_selector), LinearRegression()
    ).set_output(transform="pandas")
    pipeline.fit(X, y)
    dropped = set(X.columns) - set(pipeline[0].get_feature_names_out())
    assert len(dropped) == 1 and dropped <= {"a", "a2"}
    kept = set(pipeline[1].get_feature_names_out())
    assert "b" in kept and kept & {"a", "a2"}
    assert pipeline.score(X, y) > 0.95


def test_estimators_are_public():
    assert "DependenceAnalyzer" in sklearn_fimp.__all__
    assert "feature_dependence" in sklearn_fimp.__all__
