"""Valid input that crashed (issue 56, items 5 to 7): a ``cv`` given as an
iterable of splits, a class of one to three rows under the default
scorer, and sample weights that are zero on a whole held-out split.

Each case either works or raises a clear error naming the parameter, the
value and the fix, never scikit-learn's internal one.
"""

import re
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, KFold, TimeSeriesSplit

from sklearn_fimp import (
    ImportanceSelector,
    RecursiveImportanceSelector,
    drop_column_importance,
)
from sklearn_fimp._methods import HELD_OUT_ROWS, METHODS, REFITS

#: The methods that score rows held out of the model's fit (or refit on
#: the splits of cv), where cv and the held-out rows matter.
SPLIT_METHODS = sorted(
    name for name, entry in METHODS.items() if entry.rows in (HELD_OUT_ROWS, REFITS)
)


def forest(n_estimators=8):
    return RandomForestClassifier(n_estimators=n_estimators, random_state=0)


def classes_data(n_rows=60, rare=None, rare_label=2, seed=0):
    """X of 5 columns, y of two balanced classes from the first; ``rare``
    rows relabelled ``rare_label``."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n_rows, 5)
    y = (X[:, 0] > 0).astype(int)
    if rare:
        y[rng.choice(n_rows, rare, replace=False)] = rare_label
    return X, y


# ----------------------------------------------------------------------
# item 5: cv as an iterable of splits


def _iterables(X, y):
    groups = np.arange(len(y)) % 6
    return {
        "generator": lambda: KFold(3).split(X, y),
        "list": lambda: list(KFold(3).split(X, y)),
        "group_generator": lambda: GroupKFold(3).split(X, y, groups),
    }


@pytest.mark.parametrize("kind", ["generator", "list", "group_generator"])
@pytest.mark.parametrize("method", SPLIT_METHODS)
def test_selector_accepts_cv_iterable(method, kind):
    X, y = classes_data()
    cv = _iterables(X, y)[kind]()
    selector = ImportanceSelector(
        forest(), method=method, cv=cv, threshold="mean", random_state=0
    ).fit(X, y)
    assert selector.support_.shape == (X.shape[1],)


@pytest.mark.parametrize("method", SPLIT_METHODS)
def test_selector_cv_iterable_measures_as_its_splitter(method):
    # the same splits given as a generator or as the splitter give the
    # same importances
    X, y = classes_data()
    kwargs = dict(method=method, threshold="mean", random_state=0)
    by_splitter = ImportanceSelector(forest(), cv=KFold(3), **kwargs).fit(X, y)
    by_splits = ImportanceSelector(forest(), cv=KFold(3).split(X), **kwargs).fit(X, y)
    np.testing.assert_array_equal(
        by_splits.importances_.importances, by_splitter.importances_.importances
    )


@pytest.mark.parametrize(
    "params",
    [
        dict(keep_tentative="cv", method="permutation", n_rounds=2),
        dict(threshold="stability", n_rounds=2),
        dict(method="permutation", n_rounds=2),
    ],
    ids=["keep_tentative", "stability", "probes"],
)
def test_selector_paths_accept_cv_generator(params):
    X, y = classes_data()
    expected = ImportanceSelector(forest(), cv=KFold(3), random_state=0, **params)
    expected.fit(X, y)
    selector = ImportanceSelector(
        forest(), cv=KFold(3).split(X, y), random_state=0, **params
    ).fit(X, y)
    np.testing.assert_array_equal(selector.support_, expected.support_)
    np.testing.assert_array_equal(
        selector.importances_.importances, expected.importances_.importances
    )
    if params.get("keep_tentative") == "cv":  # scored on the same 3 splits
        for key in ("mean_test_score", "split2_test_score"):
            np.testing.assert_array_equal(
                selector.cv_results_[key], expected.cv_results_[key]
            )


def test_selector_stability_says_cv_splits_cannot_split_halves():
    X, y = classes_data()
    selector = ImportanceSelector(
        forest(),
        method="permutation",
        threshold="stability",
        cv=KFold(3).split(X),
        n_rounds=2,
    )
    with pytest.raises(ValueError, match=r"cv was given as splits.*KFold\(3\)"):
        selector.fit(X, y)


def test_selector_stability_refuses_time_ordered_cv_iterable():
    X, y = classes_data()
    selector = ImportanceSelector(
        forest(), threshold="stability", cv=TimeSeriesSplit(3).split(X), n_rounds=2
    )
    with pytest.raises(ValueError, match="time-ordered"):
        selector.fit(X, y)


def test_recursive_selector_accepts_cv_generator():
    X, y = classes_data()
    expected = RecursiveImportanceSelector(forest(), cv=KFold(3), random_state=0)
    expected.fit(X, y)
    selector = RecursiveImportanceSelector(
        forest(), cv=KFold(3).split(X, y), random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(
        selector.cv_results_["mean_test_score"], expected.cv_results_["mean_test_score"]
    )


@pytest.mark.parametrize(
    "selector",
    [
        lambda cv: ImportanceSelector(
            forest(), method="permutation", cv=cv, n_rounds=1, random_state=0
        ),
        lambda cv: RecursiveImportanceSelector(forest(), cv=cv, random_state=0),
    ],
    ids=["ImportanceSelector", "RecursiveImportanceSelector"],
)
def test_selector_routing_keeps_cv_generator(selector):
    # the metadata router reads the splitter's requests before fit; it
    # must not consume the splits
    X, y = classes_data()
    with sklearn.config_context(enable_metadata_routing=True):
        fitted = selector(KFold(3).split(X, y)).fit(X, y)
    assert fitted.support_.shape == (X.shape[1],)


def test_drop_column_importance_accepts_cv_generator():
    X, y = classes_data()
    expected = drop_column_importance(forest(), X, y, cv=KFold(3), random_state=0)
    result = drop_column_importance(
        forest(), X, y, cv=KFold(3).split(X, y), random_state=0
    )
    np.testing.assert_array_equal(result.importances, expected.importances)


# ----------------------------------------------------------------------
# item 6: a class of one to three rows under the default scorer

MODELS = {
    "logistic": lambda: LogisticRegression(),
    "hgb": lambda: HistGradientBoostingClassifier(max_iter=5, random_state=0),
    "forest": lambda: forest(),
}
PATHS = {
    "default": {},
    "permutation": dict(method="permutation"),
    "keep_tentative": dict(keep_tentative="cv"),
    "stability": dict(threshold="stability"),
    "cv5": dict(cv=5),
}
#: What scikit-learn raises where a scorer lacks the labels, or a model
#: fitted without a class is scored on it.
SKLEARN_ERRORS = re.compile(
    "labels argument|predict_proba of shape|needs samples of at least 2 classes"
)


def _fit_or_clear_error(selector, X, y, label, count):
    """Fit, or raise a ValueError naming the class, its rows and a fix."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return selector.fit(X, y)
    except ValueError as exc:
        message = str(exc)
        assert not SKLEARN_ERRORS.search(message), message
        assert f"class {label!r}" in message, message
        assert f"{count} row" in message, message
        return None


@pytest.mark.parametrize("rare", [1, 2, 3])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("model", MODELS)
def test_selector_rare_class_fits_or_says_why(model, path, rare):
    X, y = classes_data(rare=rare)
    selector = ImportanceSelector(
        MODELS[model](), n_rounds=2, random_state=0, **PATHS[path]
    )
    fitted = _fit_or_clear_error(selector, X, y, 2, rare)
    if rare >= 2:  # a class of two rows can be on both sides of a split
        assert fitted is not None


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("model", MODELS)
def test_selector_binary_single_minority_row_fits_or_says_why(model, path):
    X, _ = classes_data(n_rows=50)
    y = np.zeros(50, dtype=int)
    y[7] = 1
    selector = ImportanceSelector(
        MODELS[model](), n_rounds=2, random_state=0, **PATHS[path]
    )
    fitted = _fit_or_clear_error(selector, X, y, 1, 1)
    if path in ("default", "permutation"):
        # one held-out split: the lone row is fitted on, not held out
        assert fitted is not None


# ----------------------------------------------------------------------
# item 7: zero weights on a whole held-out split


def _zero_first_fold():
    X, y = classes_data(n_rows=120)
    weight = np.ones(120)
    weight[:40] = 0  # the test rows of KFold(3)'s first split
    return X, y, weight


@pytest.mark.parametrize("method", SPLIT_METHODS)
def test_selector_zero_weight_split_says_which(method):
    X, y, weight = _zero_first_fold()
    selector = ImportanceSelector(
        forest(), method=method, cv=KFold(3), threshold="mean", random_state=0
    )
    with pytest.raises(
        ValueError, match=r"sample_weight is zero.*split 1 of 3.*shuffle"
    ):
        selector.fit(X, y, sample_weight=weight)


def test_recursive_selector_zero_weight_split_says_which():
    X, y, weight = _zero_first_fold()
    selector = RecursiveImportanceSelector(forest(), cv=KFold(3), random_state=0)
    with pytest.raises(
        ValueError, match=r"sample_weight is zero.*split 1 of 3.*shuffle"
    ):
        selector.fit(X, y, sample_weight=weight)


def test_drop_column_importance_zero_weight_split_says_why():
    X, y, weight = _zero_first_fold()
    with pytest.raises(ValueError, match=r"sample_weight.*zero.*shuffle"):
        drop_column_importance(forest(), X, y, cv=KFold(3), sample_weight=weight)


@pytest.mark.parametrize("threshold", ["mean", "probes"])
def test_selector_shap_on_several_splits(threshold):
    # SHAP has no baseline score: combining the splits' results read one
    # and raised AttributeError with any cv of more than one split.
    pytest.importorskip("shap")
    X, y = classes_data()
    selector = ImportanceSelector(
        forest(),
        method="shap",
        cv=KFold(3),
        threshold=threshold,
        n_rounds=2,
        random_state=0,
    ).fit(X, y)
    assert selector.get_support()[0]
    assert "baseline_score" not in selector.importances_
