import re

from sklearn.ensemble import (
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import sklearn_fimp
from sklearn_fimp import (
    DependenceAnalyzer,
    ImportanceSelector,
    RecursiveImportanceSelector,
)


def test_public_api_is_exported_and_documented():
    for name in sklearn_fimp.__all__:
        obj = getattr(sklearn_fimp, name)
        if name == "__version__":
            assert re.match(r"^\d+\.\d+\.\d+", obj)
            continue
        doc = obj.__doc__
        for section in ("Parameters", "Returns", "Examples"):
            if section == "Returns" and isinstance(obj, type):
                continue  # classes document attributes instead
            assert section in doc, f"{name} docstring lacks {section}"


def estimators_to_check():
    """Every public estimator, in each configuration worth checking.

    Each estimator module adds its instances here (default parameters first,
    then one instance per method or mode that changes what fit does).
    """
    return [
        # default forests, made small: a regressor and a classifier
        DependenceAnalyzer(
            estimator={
                "regressor": RandomForestRegressor(n_estimators=5),
                "classifier": RandomForestClassifier(n_estimators=5),
            }
        ),
        # one regressor for every feature, and a threshold that drops some
        DependenceAnalyzer(
            estimator=ExtraTreesRegressor(n_estimators=5, bootstrap=True),
            threshold=0.5,
            categorical_threshold=0,
        ),
        # ImportanceSelector: the default with 2 rounds of probes instead of
        # 10 (the same code for a fifth of the fits; below 4 rounds the test
        # looks once), then one instance per method with one round and two
        # probes instead of the 50 or more of "auto" (the checks fit each
        # dozens of times, and each probe is a column measured like a
        # feature: a sampler forest for conditional permutation, a refit for
        # drop-column; test_selector.py covers the rounds and the test
        # themselves, with their default probes).
        ImportanceSelector(n_rounds=2),
        ImportanceSelector(
            RandomForestClassifier(n_estimators=5),
            method="mdi",
            n_probes=2,
            n_rounds=1,
        ),
        ImportanceSelector(
            RandomForestRegressor(n_estimators=5),
            method="oob_mdi",
            n_probes=2,
            n_rounds=1,
        ),
        ImportanceSelector(
            make_pipeline(StandardScaler(), Ridge()),
            method="permutation",
            n_probes=2,
            n_repeats=2,
            n_rounds=1,
        ),
        ImportanceSelector(
            ExtraTreesRegressor(n_estimators=5, bootstrap=True),
            method="oob_permutation",
            n_probes=2,
            n_repeats=2,
            n_rounds=1,
        ),
        ImportanceSelector(Ridge(), method="drop_column", n_probes=2, n_rounds=1),
        ImportanceSelector(
            Ridge(),
            method="conditional_permutation",
            n_probes=2,
            n_repeats=2,
            n_rounds=1,
        ),
        # the model's own importances (coef_), probes included
        ImportanceSelector(Ridge(), importance_getter="auto", n_probes=2, n_rounds=1),
        # RecursiveImportanceSelector: out-of-bag (auto) and held-out rows,
        # on two splits (each split runs the whole elimination)
        RecursiveImportanceSelector(RandomForestRegressor(n_estimators=5), cv=2),
        # (two shuffles per column instead of 5: the regressor checks fit it
        # on every one of their data sets)
        RecursiveImportanceSelector(
            make_pipeline(StandardScaler(), Ridge()),
            method="permutation",
            cv=2,
            n_repeats=2,
        ),
    ]


@parametrize_with_checks(estimators_to_check())
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
