"""Scoring fitted estimators, and scoring predictions computed elsewhere.

Out-of-bag scores and the fast tree engine produce predictions without
calling the estimator's ``predict``. To score them with any scikit-learn
scorer, the predictions are wrapped in a stand-in estimator whose
``predict`` / ``predict_proba`` / ``decision_function`` return them; the
scorer then works exactly as it does on a real model.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.utils.metaestimators import available_if

from ._compat import StrOptions

SCORING_CONSTRAINT = [StrOptions(set(get_scorer_names())), callable, None]


def get_scorer(estimator, scoring):
    """The scorer for ``scoring`` (None: the estimator's ``score``)."""
    return check_scoring(estimator, scoring=scoring)


def score(scorer, estimator, X, y, sample_weight=None):
    if sample_weight is None:
        return float(scorer(estimator, X, y))
    return float(scorer(estimator, X, y, sample_weight=sample_weight))


def _has(attribute):
    return lambda self: getattr(self, attribute) is not None


class StoredClassifierOutputs(ClassifierMixin, BaseEstimator):
    """Classifier stand-in returning stored class probabilities.

    ``proba`` has one column per entry of ``classes``; ``decision`` (optional)
    holds decision-function values. ``predict`` is the most probable class,
    or the decision rule when only decision values are stored.
    """

    def __init__(self, classes, proba=None, decision=None):
        self.classes = classes
        self.proba = proba
        self.decision = decision

    @property
    def classes_(self):
        return self.classes

    def predict(self, X):
        if self.proba is not None:
            return self.classes[np.argmax(self.proba, axis=1)]
        if self.decision.ndim == 1:
            return self.classes[(self.decision > 0).astype(np.intp)]
        return self.classes[np.argmax(self.decision, axis=1)]

    @available_if(_has("proba"))
    def predict_proba(self, X):
        return self.proba

    @available_if(_has("decision"))
    def decision_function(self, X):
        return self.decision


class StoredRegressorOutputs(RegressorMixin, BaseEstimator):
    """Regressor stand-in returning stored predictions."""

    def __init__(self, values):
        self.values = values

    def predict(self, X):
        return self.values


def score_outputs(scorer, outputs, y, sample_weight=None):
    """Score stored outputs (a ``Stored*Outputs``) against ``y``."""
    placeholder_X = np.empty((len(y), 0))
    return score(scorer, outputs, placeholder_X, y, sample_weight)
