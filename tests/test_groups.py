import numpy as np
import pytest
import scipy.sparse
from sklearn.linear_model import Ridge
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_fimp import feature_groups, permutation_importance
from sklearn_fimp._importance._groups import correlated_groups

from .conftest import as_frame


@pytest.fixture
def correlated():
    rng = np.random.RandomState(0)
    a, b, c = rng.normal(size=(3, 500))
    X = np.column_stack([a, b, np.exp(a) + 0.01 * rng.normal(size=500), c, -b])
    return X


def test_feature_groups_clusters_monotone_relations(correlated):
    # exp(a) is a monotone function of a (Spearman sees it); -b of b.
    assert feature_groups(correlated) == [[0, 2], [1, 4], [3]]


def test_feature_groups_threshold_extremes(correlated):
    assert feature_groups(correlated, threshold=1.0) == [[0, 1, 2, 3, 4]]
    assert feature_groups(correlated, threshold=0.0) == [[0], [1, 4], [2], [3]]


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_feature_groups_names_members_for_frames(correlated, kind):
    groups = feature_groups(as_frame(correlated, kind))
    assert groups == [["f0", "f2"], ["f1", "f4"], ["f3"]]


def test_feature_groups_constant_column_stays_alone(correlated):
    X = np.column_stack([correlated, np.ones(len(correlated))])
    assert [5] in feature_groups(X)


def test_feature_groups_rejects_text_and_bad_threshold():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "city": ["x", "y", "z"]})
    with pytest.raises(ValueError, match="'city'"):
        feature_groups(frame)
    with pytest.raises(InvalidParameterError, match="threshold"):
        feature_groups(np.ones((3, 2)), threshold=2)


@pytest.fixture
def linear_model(correlated):
    y = correlated[:, 0] + correlated[:, 1]
    return Ridge().fit(correlated, y), correlated, y


@pytest.mark.parametrize(
    "groups, ungrouped, labels",
    [
        ([[0, 2], 1], "separate", ["x0+x2", "x1", "x3", "x4"]),
        ([[0, 2], [2, 3]], "drop", ["x0+x2", "x2+x3"]),
        ({"exp": [0, 2]}, "together", ["exp", "other"]),
        ([["x4", 1]], "drop", ["x4+x1"]),
        ("auto", "separate", ["x0+x2", "x1+x4", "x3"]),
    ],
)
def test_groups_labels_and_ungrouped_features(linear_model, groups, ungrouped, labels):
    model, X, y = linear_model
    result = permutation_importance(
        model, X, y, groups=groups, ungrouped=ungrouped, n_repeats=1, random_state=0
    )
    assert list(result.feature_names) == labels
    if ungrouped == "together":
        np.testing.assert_array_equal(result.groups[1], [1, 3, 4])


def test_groups_overlapping_group_equals_separate_permutation(linear_model):
    model, X, y = linear_model
    overlapping = permutation_importance(
        model, X, y, groups=[[0, 2], [2, 3]], ungrouped="drop", random_state=0
    )
    alone = permutation_importance(
        model, X, y, groups=[[2, 3]], ungrouped="drop", random_state=0
    )
    np.testing.assert_array_equal(overlapping.importances[1], alone.importances[0])


@pytest.mark.parametrize(
    "groups, error, match",
    [
        ([["x0", "missing"]], ValueError, "unknown feature 'missing'"),
        ([[0, -1]], ValueError, "position -1"),
        ([[]], ValueError, "is empty"),
        ({"a": []}, ValueError, "group 'a' is empty"),
        ([[0], 0], ValueError, "label 'x0' is used by two groups"),
        ([[0.5]], TypeError, "type float"),
    ],
)
def test_groups_bad_groups_name_the_problem(linear_model, groups, error, match):
    model, X, y = linear_model
    with pytest.raises(error, match=match):
        permutation_importance(model, X, y, groups=groups)


def test_correlated_groups_cluster_numeric_columns_and_leave_the_rest_alone():
    rng = np.random.RandomState(0)
    a = rng.normal(size=300)
    X = np.column_stack([a, rng.normal(size=300), a + 0.1 * rng.normal(size=300)])
    assert correlated_groups(X) == [[0, 2], [1]]
    # nothing to group: None (each column alone)
    assert correlated_groups(rng.normal(size=(300, 4))) is None
    assert correlated_groups(scipy.sparse.csr_matrix(X)) is None
    assert correlated_groups(np.array([["a", "b"], ["c", "d"]], dtype=object)) is None
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "text": ["x", "y"] * 150,
            "a": a,
            "noise": rng.normal(size=300),
            "twice": 2 * a + 0.05 * rng.normal(size=300),
            "code": pd.Categorical(["u", "v"] * 150),
        }
    )
    # positions in X, text and categories alone
    assert correlated_groups(frame) == [[0], [1, 3], [2], [4]]
    pl = pytest.importorskip("polars")
    assert correlated_groups(pl.from_pandas(frame.drop(columns="code"))) == [
        [0],
        [1, 3],
        [2],
    ]


def test_correlated_groups_rank_at_most_max_grouped_rows(monkeypatch):
    from sklearn_fimp._importance import _groups

    seen = []
    original = _groups.feature_groups

    def spy(X, **kwargs):
        seen.append(X.shape)
        return original(X, **kwargs)

    monkeypatch.setattr(_groups, "feature_groups", spy)
    monkeypatch.setattr(_groups, "MAX_GROUPED_ROWS", 300)
    rng = np.random.RandomState(0)
    a = rng.normal(size=2000)
    X = np.column_stack([a, rng.normal(size=2000), a + 0.1 * rng.normal(size=2000)])
    assert correlated_groups(X) == [[0, 2], [1]]
    assert seen == [(300, 3)]
