"""The registry of importance methods (``sklearn_fimp/_methods.py``)."""

import inspect
import re
import warnings

import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression

from sklearn_fimp import (
    ImportanceDisplay,
    ImportanceSelector,
    RecursiveImportanceSelector,
    distributed_select_features,
)
from sklearn_fimp._methods import METHODS, uses_option, warn_ignored_options


def _keywords(function):
    """The keyword arguments of ``function`` beyond the model, X and y."""
    return {
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if name not in ("estimator", "X", "y")
        and (
            parameter.kind == parameter.KEYWORD_ONLY
            or parameter.default is not inspect.Parameter.empty
        )
    }


@pytest.mark.parametrize("name", METHODS)
def test_method_declares_the_options_its_core_and_function_take(name):
    # a renamed keyword must fail here, not be dropped on the way to the core
    method = METHODS[name]
    assert method.options == _keywords(method.core)
    assert method.parameters == _keywords(method.function)


def test_method_option_no_method_takes_is_an_error():
    method = METHODS["permutation"]
    with pytest.raises(TypeError, match=r"no importance method takes .*n_repeat"):
        method.measure(None, None, None, n_repeat=3)
    with pytest.raises(TypeError, match=r"no importance method takes .*random_sate"):
        method.compute(None, None, None, random_sate=0)


# --------------------------------------------------------------------------
# options a method ignores: one rule (warn_ignored_options) for every owner

#: per option, a value away from every owner's default
IGNORABLE = {"scoring": "roc_auc", "n_repeats": 3, "max_samples": 50, "cv": 3}


@pytest.mark.parametrize("option", sorted(IGNORABLE))
@pytest.mark.parametrize("name", METHODS)
def test_warn_ignored_options_warns_exactly_where_the_method_ignores(name, option):
    method = METHODS[name]
    value = IGNORABLE[option]
    defaults = {option: None}
    if uses_option(method, option):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warn_ignored_options([method], {option: value}, defaults, owner="Owner")
        return
    with pytest.warns(UserWarning) as record:
        warn_ignored_options([method], {option: value}, defaults, owner="Owner")
    (message,) = [str(w.message) for w in record]
    assert message.startswith(f"Owner: {option}={value!r} has no effect")
    assert f"method={name!r} ignores it" in message
    users = [other for other in METHODS if uses_option(METHODS[other], option)]
    assert users and all(repr(user) in message for user in users)
    assert f"leave {option} at its default (None)" in message
    # the warning points at the caller's line, not inside the package
    assert record[0].filename == __file__


def test_warn_ignored_options_quiet_at_default_and_when_one_method_uses_it():
    mdi, permutation = METHODS["mdi"], METHODS["permutation"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_ignored_options([mdi], {"n_repeats": 5}, {"n_repeats": 5}, owner="O")
        warn_ignored_options(
            [mdi, permutation], {"n_repeats": 3}, {"n_repeats": 5}, owner="O"
        )
    with pytest.warns(UserWarning, match=r"none of method='mdi', method='shap'"):
        warn_ignored_options(
            [mdi, METHODS["shap"]], {"n_repeats": 3}, {"n_repeats": 5}, owner="O"
        )


@pytest.fixture(scope="module")
def small_classification():
    return make_classification(
        n_samples=80, n_features=4, n_informative=2, random_state=0
    )


def _forest():
    return RandomForestClassifier(n_estimators=5, random_state=0)


def _importance_selector(**params):
    return ImportanceSelector(_forest(), threshold="mean", **params)


def _recursive_selector(**params):
    params.setdefault("cv", 2)
    return RecursiveImportanceSelector(_forest(), step=2, **params)


@pytest.mark.parametrize(
    "make, method, option, value",
    [
        # "auto" resolves to MDI-oob, which ignores n_repeats (scoring is
        # selection_score_'s, cv keep_tentative="auto"'s, whatever the method)
        (_importance_selector, "auto", "n_repeats", 3),
        (_importance_selector, "mdi", "n_repeats", 3),
        (_importance_selector, "oob_mdi", "max_samples", 20),
        (_importance_selector, "oob_mdi", "n_repeats", 2),
        (_importance_selector, "drop_column", "n_repeats", 3),
        (_recursive_selector, "mdi", "n_repeats", 3),
        (_recursive_selector, "auto", "max_samples", 20),
    ],
)
def test_selector_warns_of_a_parameter_its_method_ignores(
    small_classification, make, method, option, value
):
    X, y = small_classification
    selector = make(method=method, **{option: value})
    with pytest.warns(UserWarning, match=rf"{option}={value!r} has no effect") as rec:
        selector.fit(X, y)
    assert type(selector).__name__ in str(rec[0].message)
    assert rec[0].filename == __file__


@pytest.mark.parametrize(
    "make, params",
    [
        (_importance_selector, {"method": "permutation", "scoring": "roc_auc"}),
        (_importance_selector, {"method": "oob_permutation", "n_repeats": 2}),
        (_importance_selector, {"method": "permutation", "cv": 2}),
        # the recursive selector scores its subsets with scoring on cv's splits
        (_recursive_selector, {"method": "mdi", "scoring": "roc_auc", "cv": 3}),
    ],
)
def test_selector_quiet_when_its_method_uses_the_parameter(
    small_classification, make, params
):
    X, y = small_classification
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        # what the selection costs is said whatever the parameters
        warnings.filterwarnings("ignore", message=".*selection_score_")
        make(**params).fit(X, y)


def test_selector_importance_getter_warns_of_method_parameters(small_classification):
    X, y = small_classification
    selector = ImportanceSelector(
        LogisticRegression(), importance_getter="auto", threshold="mean", n_repeats=3
    )
    # (scoring is selection_score_'s, whatever measures the importances)
    with pytest.warns(UserWarning, match=r"n_repeats=3 has no effect: import"):
        selector.fit(X, y)


def test_display_from_estimator_warns_of_a_parameter_no_method_uses(
    small_classification,
):
    pytest.importorskip("matplotlib")
    X, y = small_classification
    forest = _forest().fit(X, y)
    with pytest.warns(UserWarning, match=r"n_repeats=3 has no effect"):
        ImportanceDisplay.from_estimator(forest, X, y, method="mdi", n_repeats=3)


def test_distributed_select_features_warns_before_checking_the_estimator():
    ignored = r"test_size=0.5 has no effect: method='mdi'"
    with pytest.warns(UserWarning, match=ignored), pytest.raises(TypeError):
        distributed_select_features(_forest(), None, "y", method="mdi", test_size=0.5)


def _documented_methods(docstring, heading):
    """The quoted method names of the ``heading`` entry of a numpydoc
    Parameters section (its type line and description)."""
    lines = docstring.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(heading))
    indent = len(lines[start]) - len(lines[start].lstrip())
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    return set(re.findall(r'"([a-z_]+)"', "\n".join(block)))


@pytest.mark.parametrize(
    "owner, heading, extra",
    [
        (ImportanceSelector, "method :", {"auto"}),
        (RecursiveImportanceSelector, "method :", {"auto"}),
        (ImportanceDisplay.from_estimator, "method :", {"permutation"}),
    ],
)
def test_method_docstrings_list_every_registered_method(owner, heading, extra):
    # the method lists written in docstrings are checked against the
    # registry, so that a method added there is documented everywhere
    documented = _documented_methods(owner.__doc__, heading)
    assert set(METHODS) <= documented
    assert documented <= set(METHODS) | extra


@pytest.mark.parametrize("name", ["mdi", "oob_mdi"])
def test_additive_method_measures_a_group_as_its_columns_sum(name):
    # the slow reference: each column measured alone, then summed by group,
    # on the same fitted forest (MDI and MDI-oob draw nothing at measure)
    import numpy as np

    X, y = make_classification(200, 6, n_informative=3, random_state=0)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    method = METHODS[name]
    assert method.additive
    options = dict(labels=[f"c{j}" for j in range(6)], sample_weight=None, n_jobs=1)
    alone = method.measure(model, X, y, **options)
    groups = [[0, 4], [1], [2, 3, 5]]
    grouped = method.measure(
        model, X, y, **dict(options, labels=["a", "b", "c"], groups=groups)
    )
    expected = np.array([alone.importances[g].sum(axis=0) for g in groups])
    np.testing.assert_array_equal(grouped.importances, expected)
    assert list(grouped.feature_names) == ["a", "b", "c"]
    assert [list(g) for g in grouped.groups] == groups
    # groups=None: each column alone, as before
    none = method.measure(model, X, y, **dict(options, groups=None))
    np.testing.assert_array_equal(none.importances, alone.importances)


def test_selector_prefit_warns_of_a_scoring_its_method_ignores(small_classification):
    # with prefit=True no selection_score_ is measured, so that MDI-oob
    # leaves scoring unused
    X, y = small_classification
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    selector = ImportanceSelector(
        forest, prefit=True, method="oob_mdi", threshold="mean", scoring="roc_auc"
    )
    with pytest.warns(UserWarning, match=r"scoring='roc_auc' has no effect"):
        selector.fit(X, y)
    assert selector.selection_score_ is None


def test_method_attributes_say_what_the_selection_modules_branch_on():
    # _composed.py, _round_models.py and _distributed.py read these, never a
    # method's name, so that a new method sets them in its entry
    expected = {
        "measures_held_out": {"permutation", "conditional_permutation", "shap"},
        "repeats": {"permutation", "oob_permutation", "conditional_permutation"},
        "in_sample_impurity": {"mdi"},
        "marginal": {"permutation", "oob_permutation"},
        "linear_path": {"permutation"},
        "misses_redundant": {
            "permutation",
            "oob_permutation",
            "conditional_permutation",
            "drop_column",
        },
    }
    for attribute, names in expected.items():
        having = {name for name, entry in METHODS.items() if getattr(entry, attribute)}
        assert having == names, attribute
