"""scikit-learn's own metadata-routing tests, run on the selectors.

scikit-learn checks its meta-estimators with the test functions of
``sklearn/tests/test_metaestimators_metadata_routing.py``, each taking one
description of a meta-estimator (which parameter holds the sub-estimator,
the scorer, the splitter). The selectors are described here the way that
file describes ``SelectFromModel`` and ``RFECV``, and every test function
of the installed scikit-learn that takes such a description is run on them,
for every method that measures a model the test's consuming estimators can
be (any classifier). The tree methods, which need a model with trees, get
the same check through a forest that records what its ``fit`` receives.
"""

import numpy as np
import pytest
import sklearn
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline

from sklearn_fimp import ImportanceSelector, RecursiveImportanceSelector

routing_tests = pytest.importorskip(
    "sklearn.tests.test_metaestimators_metadata_routing",
    reason="scikit-learn's test modules are not installed",
)

#: Methods that measure any classifier (the consuming estimators of
#: scikit-learn's tests are plain classifiers with no trees).
ANY_MODEL_METHODS = ("permutation", "drop_column", "conditional_permutation")
TEST_FUNCTIONS = (
    "test_default_request",
    "test_error_on_missing_requests_for_sub_estimator",
    "test_setting_request_on_sub_estimator_removes_error",
    "test_non_consuming_estimator_works",
    "test_metadata_is_routed_correctly_to_scorer",
    "test_metadata_is_routed_correctly_to_splitter",
    "test_metadata_routed_to_sub_estimator_in_pipeline",
    "test_metadata_routed_to_group_splitter",
)


def _selector_description(method):
    return {
        "metaestimator": ImportanceSelector,
        "estimator_name": "estimator",
        "estimator": "classifier",
        # one round of two probes: what every fit receives is checked all the
        # same, and conditional permutation fits a sampler forest for every
        # column and probe (with the 20 probes of "auto", 46 s of this file)
        "init_args": {"method": method, "n_rounds": 1, "n_repeats": 1, "n_probes": 2},
        "X": routing_tests.X,
        "y": routing_tests.y,
        "estimator_routing_methods": ["fit"],
        "scorer_name": "scoring",
        "scorer_routing_methods": ["fit"],
        "cv_name": "cv",
        "cv_routing_methods": ["fit"],
        # the model is fitted on the training rows of held-out splits, so
        # it receives the rows' subset of sample_weight, as in RFECV
        "preserves_metadata": "subset",
    }


def _recursive_description(method):
    return dict(
        _selector_description(method),
        metaestimator=RecursiveImportanceSelector,
        init_args={"method": method, "n_repeats": 1, "step": 2},
    )


DESCRIPTIONS = [
    (f"ImportanceSelector-{method}", _selector_description(method))
    for method in ANY_MODEL_METHODS
] + [
    # the routing is the base class's, shared with ImportanceSelector: the
    # held-out and refitting paths of the elimination are checked here (the
    # conditional sampler adds nothing to routing but minutes of fits)
    (f"RecursiveImportanceSelector-{method}", _recursive_description(method))
    for method in ("permutation", "drop_column")
]


# the consuming estimators predict at random: no feature beats the probes
@pytest.mark.filterwarnings("ignore:.*probe:UserWarning")
@pytest.mark.parametrize("name", TEST_FUNCTIONS)
@pytest.mark.parametrize(
    "description", [d for _, d in DESCRIPTIONS], ids=[i for i, _ in DESCRIPTIONS]
)
def test_scikit_learn_routing_tests_pass(name, description):
    test = getattr(routing_tests, name, None)
    if test is None:
        pytest.skip(f"scikit-learn {sklearn.__version__} has no {name}")
    if description["init_args"]["method"] == "conditional_permutation":
        from sklearn.tests.metadata_routing_common import ConsumingClassifier

        X, y = routing_tests.X, routing_tests.y
        proba = ConsumingClassifier().fit(X, y).predict_proba(X)
        if proba.shape[1] != len(np.unique(y)):
            pytest.skip(
                f"scikit-learn {sklearn.__version__}'s ConsumingClassifier gives "
                f"{proba.shape[1]} class probabilities for {len(np.unique(y))} "
                "classes, which no scorer of probabilities can read"
            )
    test(description)


class _Registry(list):
    """Records shared by every clone of the forest (clone deep-copies)."""

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self


class RecordingForest(RandomForestClassifier):
    """A forest that records the keys of the parameters each fit receives."""

    def __init__(self, registry=None, n_estimators=5, random_state=None):
        super().__init__(n_estimators=n_estimators, random_state=random_state)
        self.registry = registry

    def fit(self, X, y, sample_weight=None):
        self.registry.append(sample_weight is not None)
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.mark.filterwarnings("ignore:.*probe:UserWarning")
@pytest.mark.parametrize("method", ["mdi", "oob_mdi", "oob_permutation", "shap"])
@pytest.mark.parametrize(
    "selector",
    [
        ImportanceSelector(n_rounds=1, n_repeats=1),
        RecursiveImportanceSelector(n_repeats=1, step=2, cv=2),
    ],
    ids=["ImportanceSelector", "RecursiveImportanceSelector"],
)
def test_tree_methods_route_sample_weight_to_every_fit(selector, method):
    # the check of test_metadata_routed_to_sub_estimator_in_pipeline for the
    # methods that read trees: every fit of the forest, in a Pipeline, with
    # routing enabled, receives sample_weight
    if method == "shap":
        pytest.importorskip("shap")
    if not hasattr(routing_tests, "test_metadata_routed_to_sub_estimator_in_pipeline"):
        pytest.skip(
            f"scikit-learn {sklearn.__version__}'s Pipeline does not route "
            "metadata to an intermediate step's sub-estimator (scikit-learn "
            "issue 30527)"
        )
    from sklearn.tests.metadata_routing_common import NonConsumingClassifier

    registry = _Registry()
    with sklearn.config_context(enable_metadata_routing=True):
        forest = RecordingForest(registry).set_fit_request(sample_weight=True)
        forest.set_score_request(sample_weight=True)
        selector = sklearn.clone(selector).set_params(
            estimator=forest, method=method, random_state=0
        )
        steps = [("select", selector), ("model", NonConsumingClassifier())]
        Pipeline(steps).fit(
            routing_tests.X, routing_tests.y, sample_weight=routing_tests.sample_weight
        )
    assert len(registry) > 1
    assert all(registry), f"{registry.count(False)} of {len(registry)} fits unweighted"
