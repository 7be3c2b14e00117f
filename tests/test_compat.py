"""The version-dependent helpers of sklearn_fimp._utils._compat, checked on
every supported version (CI runs them on the newest and on the minimum
versions)."""

import numpy as np
import pytest
from sklearn.ensemble import ExtraTreesRegressor, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from sklearn_fimp._utils import _compat
from sklearn_fimp._utils._compat import add_note, check_sample_weight, decision_path


def walked_paths(tree, X):
    """Boolean (n_rows, node_count) matrix of the nodes each row visits,
    walking the tree row by row with the node's missing-value rule."""
    tree_ = tree.tree_
    X = np.asarray(X, dtype=np.float32)
    path = np.zeros((X.shape[0], tree_.node_count), dtype=bool)
    for i, row in enumerate(X):
        node = 0
        path[i, node] = True
        while tree_.children_left[node] != -1:
            value = row[tree_.feature[node]]
            if np.isnan(value):
                left = bool(tree_.missing_go_to_left[node])
            else:
                left = value <= tree_.threshold[node]
            node = tree_.children_left[node] if left else tree_.children_right[node]
            path[i, node] = True
    return path


def data_with_missing(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(150, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    X[rng.uniform(size=X.shape) < 0.2] = np.nan
    return X, y


TREES = {
    "DecisionTreeClassifier": lambda X, y: DecisionTreeClassifier(random_state=0).fit(
        X, y
    ),
    "DecisionTreeRegressor": lambda X, y: DecisionTreeRegressor(
        max_depth=6, random_state=0
    ).fit(X, y.astype(float)),
    "RandomForestClassifier-member": lambda X, y: (
        RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y).estimators_[1]
    ),
    "ExtraTreesRegressor-member": lambda X, y: (
        ExtraTreesRegressor(n_estimators=2, bootstrap=True, random_state=0)
        .fit(X, y.astype(float))
        .estimators_[0]
    ),
}


@pytest.mark.parametrize("name", list(TREES))
@pytest.mark.parametrize("native", [True, False])
def test_decision_path_follows_missing_value_rule(monkeypatch, name, native):
    """Equal to a row-by-row walk on data with missing values, with
    scikit-learn's decision_path where it follows the rule (>= 1.8) and with
    the path rebuilt from ``apply`` (used before 1.8, forced here)."""
    if native and not _compat._DECISION_PATH_FOLLOWS_MISSING_RULE:
        pytest.skip("scikit-learn < 1.8: decision_path ignores the rule")
    monkeypatch.setattr(_compat, "_DECISION_PATH_FOLLOWS_MISSING_RULE", native)
    X, y = data_with_missing()
    tree = TREES[name](X, y)
    X_new, _ = data_with_missing(seed=1)
    for rows in (X, X_new, X_new[:1]):
        path = decision_path(tree, rows.astype(np.float32))
        assert path.shape == (len(rows), tree.tree_.node_count)
        np.testing.assert_array_equal(path.toarray() == 1, walked_paths(tree, rows))
        # node ids increase along each row's path (the engine relies on it)
        for i in range(len(rows)):
            nodes = path.indices[path.indptr[i] : path.indptr[i + 1]]
            assert np.all(np.diff(nodes) > 0)


def test_decision_path_fallback_equals_scikit_learn_without_missing(monkeypatch):
    X, y = data_with_missing()
    X = np.nan_to_num(X, nan=0.5)
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    monkeypatch.setattr(_compat, "_DECISION_PATH_FOLLOWS_MISSING_RULE", False)
    ours = decision_path(tree, X.astype(np.float32))
    expected = tree.decision_path(X.astype(np.float32))
    np.testing.assert_array_equal(ours.toarray(), expected.toarray())


def test_add_note_is_read_where_pytest_and_tracebacks_look():
    error = ValueError("model failed")
    add_note(error, "first")
    add_note(error, "second")
    assert error.__notes__ == ["first", "second"]
    with pytest.raises(ValueError, match="second"):
        raise error


@pytest.mark.parametrize(
    "weight, match",
    [
        ([1.0, -0.5, 2.0], r"1 negative value\(s\), e.g. -0.5 at row 1"),
        ([0.0, 0.0, 0.0], "sample_weight is 0 for every row"),
    ],
)
def test_check_sample_weight_errors_on_every_version(weight, match):
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match=match):
        check_sample_weight(np.asarray(weight), X)


def test_check_sample_weight_accepts_some_zero_weights():
    X = np.zeros((3, 2))
    weight = check_sample_weight([0, 1, 2], X)
    assert weight.dtype == np.float64
    np.testing.assert_array_equal(weight, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(check_sample_weight(None, X), np.ones(3))


def row_by_row_brier(y, proba, classes, weight):
    """The multiclass Brier score written out: each row's squared errors
    against its one-hot truth, summed over the classes, then averaged."""
    total = 0.0
    for label, row, w in zip(y, proba, weight):
        total += w * sum((p - (label == c)) ** 2 for p, c in zip(row, classes))
    return total / sum(weight)


@pytest.mark.parametrize("scikit_learn_scores_classes", [True, False])
def test_brier_score_of_several_classes_on_every_version(
    monkeypatch, scikit_learn_scores_classes
):
    if scikit_learn_scores_classes and not _compat._BRIER_SCORES_CLASSES:
        pytest.skip("scikit-learn < 1.7 scores two classes only")
    monkeypatch.setattr(_compat, "_BRIER_SCORES_CLASSES", scikit_learn_scores_classes)
    rng = np.random.RandomState(0)
    classes = np.array(["a", "b", "c"])
    # the rows lack class "c", which the probabilities' columns name
    y = rng.choice(classes[:2], size=20)
    proba = rng.dirichlet(np.ones(3), size=20)
    weight = rng.uniform(0.5, 2.0, size=20)
    value = _compat.brier_score_loss(y, proba, sample_weight=weight, labels=classes)
    assert value == pytest.approx(row_by_row_brier(y, proba, classes, weight))


def test_brier_score_of_two_classes_is_scikit_learns():
    from sklearn.metrics import brier_score_loss

    rng = np.random.RandomState(0)
    y = rng.randint(2, size=30)
    positive = rng.uniform(size=30)
    value = _compat.brier_score_loss(y, positive, labels=np.array([0, 1]))
    assert value == brier_score_loss(y, positive)
