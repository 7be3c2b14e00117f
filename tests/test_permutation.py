import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.inspection import permutation_importance as sklearn_permutation
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import get_scorer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_fimp import mdi_importance, permutation_importance

from .conftest import as_frame, sklearn_permutations


def reference_permutation(
    estimator, X, y, groups, seed, n_repeats, scoring=None, sample_weight=None
):
    """Permute, predict and score in a plain loop (numpy X)."""
    scorer = (
        get_scorer(scoring) if scoring else (lambda e, X, y, **kw: e.score(X, y, **kw))
    )
    kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
    baseline = scorer(estimator, X, y, **kwargs)
    orders = sklearn_permutations(seed, X.shape[0], n_repeats)
    drops = np.zeros((len(groups), n_repeats))
    for g, columns in enumerate(groups):
        for r, order in enumerate(orders):
            X_permuted = X.copy()
            for c in columns:
                X_permuted[:, c] = X[order, c]
            drops[g, r] = baseline - scorer(estimator, X_permuted, y, **kwargs)
    return baseline, drops


@pytest.fixture(scope="module")
def classification():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=300) > 0).astype(int)
    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(
        X[:200], y[:200]
    )
    return model, X[200:], y[200:]


@pytest.mark.parametrize("kind", ["numpy", "pandas", "polars"])
@pytest.mark.parametrize(
    "groups, expected_groups",
    [(None, [[0], [1], [2], [3]]), ([[0, 2], 1], [[0, 2], [1], [3]])],
)
@pytest.mark.parametrize("scoring", [None, "roc_auc", "neg_log_loss"])
def test_permutation_importance_equals_reference_loop(
    classification, kind, groups, expected_groups, scoring
):
    model, X, y = classification
    if kind != "numpy":
        model = RandomForestClassifier(n_estimators=20, random_state=0).fit(
            as_frame(X, kind), y
        )
    result = permutation_importance(
        model,
        as_frame(X, kind),
        y,
        scoring=scoring,
        n_repeats=3,
        groups=groups,
        random_state=7,
    )
    reference_model = model
    if kind != "numpy":
        reference_model = RandomForestClassifier(n_estimators=20, random_state=0).fit(
            X, y
        )
    baseline, drops = reference_permutation(
        reference_model, X, y, expected_groups, result.random_state, 3, scoring
    )
    assert result.baseline_score == pytest.approx(baseline, abs=1e-12)
    np.testing.assert_allclose(result.importances, drops, atol=1e-12)
    np.testing.assert_allclose(result.importances_mean, drops.mean(axis=1), atol=1e-12)


def test_permutation_importance_equals_sklearn_for_same_seed(classification):
    model, X, y = classification
    ours = permutation_importance(model, X, y, n_repeats=4, random_state=3)
    theirs = sklearn_permutation(model, X, y, n_repeats=4, random_state=3)
    np.testing.assert_array_equal(ours.importances, theirs.importances)


def test_permutation_importance_sample_weight_reaches_scorer(noisy_regression):
    X, y = noisy_regression
    model = LinearRegression().fit(X[:300], y[:300])
    weight = np.random.RandomState(1).uniform(0, 2, size=300)
    weight[:50] = 0
    result = permutation_importance(
        model, X[300:], y[300:], sample_weight=weight, random_state=0
    )
    baseline, drops = reference_permutation(
        model,
        X[300:],
        y[300:],
        [[0], [1], [2]],
        result.random_state,
        5,
        sample_weight=weight,
    )
    np.testing.assert_allclose(result.importances, drops, atol=1e-12)
    unweighted = permutation_importance(model, X[300:], y[300:], random_state=0)
    assert not np.allclose(unweighted.importances, result.importances)


def test_permutation_importance_max_samples_scores_baseline_on_same_rows(
    noisy_regression,
):
    X, y = noisy_regression
    model = LinearRegression().fit(X[:300], y[:300])
    result = permutation_importance(
        model, X[300:], y[300:], max_samples=100, random_state=0
    )
    # the permuted scores use the same rows as scikit-learn's ...
    theirs = sklearn_permutation(
        model, X[300:], y[300:], max_samples=100, random_state=0
    )
    permuted_ours = result.baseline_score - result.importances
    permuted_theirs = model.score(X[300:], y[300:]) - theirs.importances
    np.testing.assert_allclose(permuted_ours, permuted_theirs, atol=1e-12)
    # ... and, unlike scikit-learn's, the baseline too: not the full-set score
    assert result.baseline_score != pytest.approx(model.score(X[300:], y[300:]))
    assert result.max_samples == 100


def test_permutation_importance_pipeline_permutes_raw_columns():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    frame = pd.DataFrame(
        {
            "size": rng.uniform(size=400),
            "city": rng.choice(["a", "b", "c"], size=400),
            "noise": rng.normal(size=400),
        }
    )
    y = 3 * frame["size"] + (frame["city"] == "a") + rng.normal(scale=0.1, size=400)
    model = make_pipeline(
        ColumnTransformer(
            [
                ("onehot", OneHotEncoder(), ["city"]),
                ("scale", StandardScaler(), ["size", "noise"]),
            ]
        ),
        LinearRegression(),
    ).fit(frame[:300], y[:300])
    result = permutation_importance(model, frame[300:], y[300:], random_state=0)
    assert list(result.feature_names) == ["size", "city", "noise"]
    assert result.importances_mean.argmax() == 0
    assert result.importances_mean[1] > 0.05
    assert abs(result.importances_mean[2]) < 0.01


def test_permutation_importance_random_column_last_where_mdi_ranks_it_high():
    # THEORY.md 1-2: MDI favours a continuous random column over a real
    # low-cardinality feature; permutation importance ranks it last.
    rng = np.random.RandomState(0)
    n = 2000
    binary = rng.randint(0, 2, size=n)
    weak = rng.randint(0, 3, size=n)
    random_column = rng.uniform(size=n)
    logit = 2.5 * (binary - 0.5) + 0.6 * (weak - 1)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = np.column_stack([binary, weak, random_column])
    model = RandomForestClassifier(n_estimators=50, random_state=0)
    model.fit(X[:1500], y[:1500])
    mdi = mdi_importance(model).importances_mean
    assert mdi[2] > mdi[1]
    result = permutation_importance(
        model, X[1500:], y[1500:], n_repeats=10, random_state=0
    )
    assert result.importances_mean.argmin() == 2
    assert result.importances_mean[1] > result.importances_mean[2]


def test_permutation_importance_duplicate_splits_and_group_recovers():
    # THEORY.md 4: each copy of a duplicated column gets about half the
    # single column's importance; the pair permuted together gets about all.
    rng = np.random.RandomState(0)
    n = 3000
    X = rng.uniform(size=(n, 2))
    y = 3 * X[:, 0] + X[:, 1] + rng.normal(scale=0.1, size=n)
    X_dup = np.column_stack([X[:, 0], X[:, 0], X[:, 1]])
    params = dict(n_estimators=40, max_features=1, min_samples_leaf=5, random_state=0)
    single = RandomForestRegressor(**params).fit(X[:2000], y[:2000])
    double = RandomForestRegressor(**params).fit(X_dup[:2000], y[:2000])
    alone = permutation_importance(single, X[2000:], y[2000:], random_state=0)
    copies = permutation_importance(double, X_dup[2000:], y[2000:], random_state=0)
    grouped = permutation_importance(
        double, X_dup[2000:], y[2000:], groups=[[0, 1]], random_state=0
    )
    original = alone.importances_mean[0]
    share = copies.importances_mean[:2] / original
    assert np.all((share > 0.2) & (share < 0.8))
    assert grouped.feature_names[0] == "x0+x1"
    assert grouped.importances_mean[0] == pytest.approx(original, rel=0.15)


def test_permutation_importance_same_seed_same_result_whatever_n_jobs(classification):
    model, X, y = classification
    one = permutation_importance(model, X, y, n_jobs=1, random_state=0)
    two = permutation_importance(model, X, y, n_jobs=2, random_state=0)
    np.testing.assert_array_equal(one.importances, two.importances)
    other = permutation_importance(model, X, y, n_jobs=1, random_state=1)
    assert not np.array_equal(one.importances, other.importances)


@pytest.mark.parametrize("kind", ["numpy", "pandas", "polars"])
def test_permutation_importance_leaves_caller_data_untouched(classification, kind):
    model, X, y = classification
    if kind != "numpy":
        model = RandomForestClassifier(n_estimators=5, random_state=0).fit(
            as_frame(X, kind), y
        )
    X_in = as_frame(X, kind)
    before = (
        X.copy()
        if kind == "numpy"
        else X_in.clone()
        if kind == "polars"
        else X_in.copy()
    )
    weight = np.ones(len(y))
    permutation_importance(
        model, X_in, y, sample_weight=weight, n_jobs=2, groups=[[0, 1]], random_state=0
    )
    if kind == "numpy":
        np.testing.assert_array_equal(X_in, before)
    else:
        assert X_in.equals(before)
    np.testing.assert_array_equal(weight, np.ones(len(y)))


def test_permutation_importance_result_records_how_to_reproduce(classification):
    model, X, y = classification
    result = permutation_importance(
        model, X, y, scoring="accuracy", n_repeats=2, random_state=0
    )
    assert result.importances.shape == (4, 2)
    assert result.method == "permutation"
    assert result.scoring == "accuracy"
    assert result.n_repeats == 2
    # the seed of the permutations (the reference tests regenerate them)
    assert isinstance(result.random_state, int)
    repeated = permutation_importance(
        model, X, y, scoring="accuracy", n_repeats=2, random_state=0
    )
    np.testing.assert_array_equal(repeated.importances, result.importances)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"groups": [["x0", "nope"]]}, ValueError, "unknown feature 'nope'"),
        ({"groups": [[]]}, ValueError, "is empty"),
        ({"groups": [[0, 9]]}, ValueError, "position 9"),
        ({"groups": "everything"}, InvalidParameterError, "groups"),
        ({"n_repeats": 0}, InvalidParameterError, "n_repeats"),
        ({"max_samples": 1000}, ValueError, "max_samples=1000"),
        ({"scoring": "accurasy"}, InvalidParameterError, "scoring"),
    ],
)
def test_permutation_importance_bad_parameter_names_it(
    classification, kwargs, error, match
):
    model, X, y = classification
    with pytest.raises(error, match=match):
        permutation_importance(model, X, y, **kwargs)


def test_permutation_importance_unfitted_or_mismatched_input(classification):
    model, X, y = classification
    with pytest.raises(NotFittedError):
        permutation_importance(LogisticRegression(), X, y)
    with pytest.raises(ValueError, match="X has 100 rows but y has 99"):
        permutation_importance(model, X, y[:-1])
    with pytest.raises(TypeError, match="sparse"):
        from scipy import sparse

        permutation_importance(model, sparse.csr_matrix(X), y)


def test_permutation_importance_recorded_seed_reproduces_the_result(classification):
    model, X, y = classification
    first = permutation_importance(
        model, X, y, max_samples=0.5, random_state=np.random.RandomState(3)
    )
    again = permutation_importance(
        model, X, y, max_samples=0.5, random_state=first.random_state
    )
    np.testing.assert_array_equal(first.importances, again.importances)


def two_metrics(estimator, X, y):
    """A callable scoring that returns several metrics, as scikit-learn
    accepts."""
    return {
        "auc": get_scorer("roc_auc")(estimator, X, y),
        "loss": get_scorer("neg_log_loss")(estimator, X, y),
    }


@pytest.mark.parametrize(
    "scoring",
    [
        ["accuracy", "roc_auc", "neg_log_loss"],
        ("roc_auc", "accuracy"),
        {"acc": "accuracy", "auc": get_scorer("roc_auc")},
        two_metrics,
    ],
    ids=["list", "tuple", "dict", "callable"],
)
@pytest.mark.parametrize("engine", [True, False], ids=["forest", "logistic"])
def test_permutation_importance_multimetric_equals_sklearn(
    classification, scoring, engine
):
    model, X, y = classification
    if not engine:
        model = LogisticRegression().fit(X, y)
    ours = permutation_importance(
        model, X, y, scoring=scoring, n_repeats=3, random_state=5
    )
    theirs = sklearn_permutation(
        model, X, y, scoring=scoring, n_repeats=3, random_state=5
    )
    assert isinstance(ours, dict)
    assert list(ours) == list(theirs)
    for name, result in ours.items():
        np.testing.assert_allclose(
            result.importances, theirs[name].importances, rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(
            result.importances_mean, theirs[name].importances_mean, atol=1e-12
        )
        # each metric's result is that of a call with the metric alone (to
        # floating-point precision: alone, a metric with a formula is scored
        # by it, see DirectScore)
        if not callable(scoring):
            alone = permutation_importance(
                model, X, y, scoring=result.scoring, n_repeats=3, random_state=5
            )
            np.testing.assert_allclose(
                result.importances, alone.importances, rtol=0, atol=1e-12
            )
            assert result.baseline_score == alone.baseline_score


class CountingLogistic(LogisticRegression):
    """Counts its predict_proba calls."""

    def predict_proba(self, X):
        self.calls_ = getattr(self, "calls_", 0) + 1
        return super().predict_proba(X)


def test_permutation_importance_multimetric_predicts_each_permutation_once(
    classification,
):
    _, X, y = classification
    model = CountingLogistic().fit(X, y)
    permutation_importance(
        model, X, y, scoring=["roc_auc", "neg_log_loss"], n_repeats=2, random_state=0
    )
    # the baseline and one per feature and repeat, for both metrics at once
    assert model.calls_ == 1 + X.shape[1] * 2


def test_permutation_importance_callable_scoring_must_keep_its_metrics(
    classification,
):
    model, X, y = classification
    calls = []

    def changing(estimator, X, y):
        calls.append(1)
        return {f"m{len(calls) > 1}": 1.0}

    with pytest.raises(ValueError, match="same metrics, in the same order"):
        permutation_importance(model, X, y, scoring=changing, random_state=0)
