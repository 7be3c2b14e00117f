"""ImportanceSelector against scikit-learn's meta-estimator conventions:
metadata routing, the rows' groups of a group-aware cv, SelectFromModel's
threshold / max_features / importance_getter, estimator tags and delegated
methods, and targets it cannot select for."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.base import is_classifier, is_regressor
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GroupKFold, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

import sklearn_fimp
from sklearn_fimp import ImportanceSelector

PACKAGE_ROOT = str(Path(sklearn_fimp.__file__).resolve().parent.parent)


@pytest.fixture(scope="module")
def labels():
    """Three informative features (0, 1, 2) among eight."""
    X, y = make_classification(
        n_samples=300,
        n_features=8,
        n_informative=3,
        n_redundant=0,
        shuffle=False,
        random_state=0,
    )
    return X, y


def run_python(code, timeout):
    """Run ``code`` in a fresh interpreter importing this package; fail
    (instead of blocking the test run) when it does not end in ``timeout``
    seconds."""
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, OMP_NUM_THREADS="1")
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {timeout} s (a hang)")
    assert done.returncode == 0, done.stderr
    return done.stdout


# --------------------------------------------------------------------------
# metadata routing


def test_selector_routing_without_metadata_does_not_hang():
    # every call passes no metadata: scikit-learn then routes through an
    # empty request object, on which a membership test never ended
    out = run_python(
        """
        import sklearn
        from sklearn.datasets import make_classification
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GridSearchCV, cross_val_score
        from sklearn.pipeline import make_pipeline
        from sklearn_fimp import ImportanceSelector

        X, y = make_classification(n_samples=120, n_features=5, random_state=0)
        sklearn.set_config(enable_metadata_routing=True)
        model = LogisticRegression().set_fit_request(sample_weight=True)
        model.set_score_request(sample_weight=True)
        selector = ImportanceSelector(
            model, n_repeats=2, n_rounds=3, n_probes=10, random_state=0
        )
        print("fit", selector.fit(X, y).n_features_in_)
        print("pipeline", make_pipeline(selector, model).fit(X, y).score(X, y) > 0)
        print("cv", len(cross_val_score(selector, X, y, cv=2)))
        search = GridSearchCV(selector, {"alpha": [0.01, 0.05]}, cv=2).fit(X, y)
        print("grid", search.best_params_ is not None)
        """,
        timeout=240,
    )
    assert out.split() == ["fit", "5", "pipeline", "True", "cv", "2", "grid", "True"]


def test_selector_routes_groups_to_a_group_aware_cv(labels):
    X, y = labels
    rows_groups = np.repeat(np.arange(10), 30)
    splits = list(GroupKFold(n_splits=3).split(X, y, rows_groups))
    # equal results are compared: 3 rounds of probes are enough. The rows'
    # groups also shape the shadows (permuted within or across groups), so
    # the reference gets them too, with GroupKFold's splits given as a list
    common = dict(
        method="permutation", n_repeats=2, n_rounds=3, n_probes=10, random_state=0
    )
    reference = ImportanceSelector(
        RandomForestClassifier(n_estimators=10), cv=splits, **common
    ).fit(X, y, groups=rows_groups)
    # without routing: fit's groups go to the splitter, as in RFECV
    plain = ImportanceSelector(
        RandomForestClassifier(n_estimators=10), cv=GroupKFold(n_splits=3), **common
    ).fit(X, y, groups=rows_groups)
    # with routing: GroupKFold requests groups, so they are routed to it
    with sklearn.config_context(enable_metadata_routing=True):
        model = RandomForestClassifier(n_estimators=10).set_fit_request(
            sample_weight=False
        )
        model.set_score_request(sample_weight=False)
        routed = ImportanceSelector(model, cv=GroupKFold(n_splits=3), **common).fit(
            X, y, groups=rows_groups
        )
    for fitted in (plain, routed):
        np.testing.assert_array_equal(
            fitted.importances_.importances, reference.importances_.importances
        )
        np.testing.assert_array_equal(fitted.support_, reference.support_)


def test_selector_groups_of_rows_need_a_cv(labels):
    X, y = labels
    selector = ImportanceSelector(Ridge(), method="permutation")
    with pytest.raises(ValueError, match=r"fit got groups=.*cv=None.*GroupKFold"):
        selector.fit(X, y, groups=np.arange(len(y)) % 3)
    # a splitter that ignores groups ignores them, as in scikit-learn
    # (a numeric threshold measures once, so the result keeps one column per
    # split and repeat)
    kept = ImportanceSelector(
        Ridge(),
        method="permutation",
        threshold=0.0,
        cv=KFold(3),
        n_repeats=2,
        random_state=0,
    )
    with pytest.warns(UserWarning, match="groups parameter is ignored by KFold"):
        kept.fit(X, y, groups=np.arange(len(y)) % 3)
    assert kept.importances_.importances.shape[1] == 6


# --------------------------------------------------------------------------
# SelectFromModel's conventions


def test_selector_minus_inf_threshold_selects_by_max_features(labels):
    X, y = labels
    selector = ImportanceSelector(
        RandomForestClassifier(n_estimators=20),
        method="mdi",
        threshold=-np.inf,
        max_features=3,
        random_state=0,
    ).fit(X, y)
    means = selector.importances_.importances_mean
    np.testing.assert_array_equal(
        selector.get_support(indices=True), np.sort(np.argsort(-means)[:3])
    )
    assert selector.threshold_ == -np.inf
    assert selector.max_features_ == 3


def test_selector_callable_max_features_is_called_with_X(labels):
    X, y = labels
    seen = []

    def half(X):
        seen.append(X.shape)
        return X.shape[1] // 2

    selector = ImportanceSelector(
        RandomForestClassifier(n_estimators=20),
        method="mdi",
        threshold=-np.inf,
        max_features=half,
        random_state=0,
    ).fit(X, y)
    assert seen == [X.shape]
    assert selector.max_features_ == 4
    assert selector.get_support().sum() == 4
    for bad, error in [(2.5, TypeError), (-1, ValueError)]:
        selector.set_params(max_features=lambda X, bad=bad: bad)
        with pytest.raises(error, match="max_features is a callable, and it returned"):
            selector.fit(X, y)


def test_selector_max_features_attribute(labels):
    X, y = labels
    common = dict(method="mdi", threshold="mean", random_state=0)
    for max_features, expected in [(None, 8), (2, 2), (0.5, 4)]:
        selector = ImportanceSelector(
            RandomForestClassifier(n_estimators=10),
            max_features=max_features,
            **common,
        ).fit(X, y)
        assert selector.max_features_ == expected


def test_selector_estimator_type_follows_the_estimator():
    assert is_classifier(ImportanceSelector(LogisticRegression()))
    assert is_classifier(
        ImportanceSelector(make_pipeline(StandardScaler(), LogisticRegression()))
    )
    assert is_regressor(ImportanceSelector(Ridge()))
    assert not is_classifier(ImportanceSelector(Ridge()))
    # the default estimator depends on y: the kind is unknown until fit
    assert not is_classifier(ImportanceSelector())
    assert not is_regressor(ImportanceSelector())


def test_selector_delegates_predict_log_proba(labels):
    X, y = labels
    selector = ImportanceSelector(
        LogisticRegression(),
        method="permutation",
        n_repeats=2,
        n_rounds=3,
        random_state=0,
    ).fit(X, y)
    kept = selector.get_support()
    np.testing.assert_allclose(
        selector.predict_log_proba(X),
        selector.estimator_.predict_log_proba(X[:, kept]),
    )
    assert not hasattr(ImportanceSelector(Ridge()), "predict_log_proba")


# --------------------------------------------------------------------------
# targets the selector cannot select for


@pytest.mark.parametrize(
    "estimator",
    [None, RandomForestClassifier(n_estimators=5), LogisticRegression()],
    ids=["default", "forest", "logistic"],
)
def test_selector_one_class_target_is_an_error_naming_the_class(labels, estimator):
    X, _ = labels
    y = np.full(X.shape[0], "spam", dtype=object)
    with pytest.raises(ValueError, match=r"y has a single class, 'spam'"):
        ImportanceSelector(estimator, random_state=0).fit(X, y)


def test_selector_several_metrics_are_an_error_naming_scoring(labels):
    X, y = labels

    def two(estimator, X, y):
        return {"a": 1.0, "b": 2.0}

    with pytest.raises(InvalidParameterError, match="scoring"):
        ImportanceSelector(Ridge(), scoring=["r2", "neg_mean_squared_error"]).fit(X, y)
    selector = ImportanceSelector(
        LogisticRegression(), method="permutation", scoring=two, n_repeats=2
    )
    with pytest.raises(ValueError, match=r"scoring=.*returned several metrics"):
        selector.fit(X, y)


# --------------------------------------------------------------------------
# importance_getter: the model's own importances


def test_selector_importance_getter_reads_a_prefit_model(labels):
    X, y = labels
    model = LogisticRegression().fit(X, y)
    expected = np.abs(model.coef_).sum(axis=0)
    for getter in ["auto", "coef_", lambda m: m.coef_]:
        selector = ImportanceSelector(
            model, prefit=True, threshold="mean", importance_getter=getter
        ).fit(X, y)
        np.testing.assert_allclose(selector.importances_.importances_mean, expected)
        np.testing.assert_array_equal(selector.support_, expected >= expected.mean())
        assert selector.method_ == "importance_getter"
    # the same as scikit-learn's SelectFromModel
    from sklearn.feature_selection import SelectFromModel

    theirs = SelectFromModel(model, prefit=True, threshold="mean")
    np.testing.assert_array_equal(selector.support_, theirs.get_support())


def test_selector_importance_getter_with_a_pipeline_and_probes(labels):
    X, y = labels
    pipeline = make_pipeline(StandardScaler(), LogisticRegression())
    selector = ImportanceSelector(
        pipeline,
        importance_getter="named_steps.logisticregression.coef_",
        n_rounds=20,
        random_state=0,
    ).fit(X, y)
    # the three informative features beat the probes' coefficients
    assert set(np.flatnonzero(selector.support_)) >= {0, 1, 2}
    assert selector.importances_.n_probes == 50
    # one column per round run, each round a refit with the same probes
    assert selector.importances_.importances.shape == (58, selector.n_rounds_)


def test_selector_importance_getter_errors(labels):
    X, y = labels
    model = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match=r"importance_getter='auto'.*method='mdi'"):
        ImportanceSelector(model, method="mdi", importance_getter="auto").fit(X, y)
    with pytest.warns(UserWarning, match=r"max_samples=10 .*importance_getter"):
        ImportanceSelector(model, max_samples=10, importance_getter="auto").fit(X, y)
    pipeline = make_pipeline(StandardScaler(), LogisticRegression())
    with pytest.raises(ValueError, match="coef_"):
        ImportanceSelector(pipeline, importance_getter="auto").fit(X, y)


@pytest.mark.parametrize(
    "selector", [ImportanceSelector, sklearn_fimp.RecursiveImportanceSelector]
)
def test_method_parameter_lists_every_registry_method(selector):
    """A method added to the registry is accepted by both selectors; their
    docstrings must list it too."""
    from sklearn_fimp._methods import METHODS

    doc = selector.__doc__
    start = doc.index("method : {")
    listed = doc[start : doc.index("}", start)]
    missing = [name for name in METHODS if f'"{name}"' not in listed]
    assert not missing, f"{selector.__name__}'s method docstring lacks {missing}"
