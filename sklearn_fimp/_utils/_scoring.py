"""Scoring fitted estimators, and scoring predictions computed elsewhere.

Out-of-bag scores and the fast tree engine produce predictions without
calling the estimator's ``predict``. To score them with any scikit-learn
scorer, the predictions are wrapped in a stand-in estimator whose
``predict`` / ``predict_proba`` / ``decision_function`` return them; the
scorer then works exactly as it does on a real model.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
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


class AdditiveScore:
    """A score computed from a weighted sum over rows of a per-row term.

    Accuracy, R² and mean squared error are such scores: when only some
    rows' predictions change, the score is updated from those rows alone.
    :meth:`for_scoring` returns None for any other scoring, and the caller
    falls back to the scorer.
    """

    def __init__(self, kind, y, weight, classes=None):
        self.kind = kind
        self.y = y
        self.weight = np.ones(len(y)) if weight is None else weight
        self.classes = classes
        self.total_weight = self.weight.sum()
        if kind == "r2":
            mean = np.average(y, weights=self.weight)
            self.total_variance = np.sum(self.weight * (y - mean) ** 2)

    @classmethod
    def for_scoring(cls, estimator, scoring, y, weight):
        if y.ndim != 1 or (weight is not None and weight.sum() <= 0):
            return None
        classifier = is_classifier(estimator)
        kind = {
            (None, True): "accuracy",
            ("accuracy", True): "accuracy",
            (None, False): "r2",
            ("r2", False): "r2",
            ("neg_mean_squared_error", False): "neg_mean_squared_error",
        }.get((scoring, classifier))
        if kind is None:
            return None
        score = cls(kind, y, weight, getattr(estimator, "classes_", None))
        if kind == "r2" and not score.total_variance > 0:
            return None  # r2_score's special cases: let the scorer decide
        return score

    def predictions(self, outputs):
        """What a row term reads of outputs (probabilities for classifiers,
        one value per row for regressors, flat or as a column): the
        predicted class, or the value."""
        if self.kind == "accuracy":
            return self.classes[np.argmax(outputs, axis=1)]
        # one output (y is one-dimensional), as a column or a flat array
        return np.reshape(outputs, -1)

    def prediction_terms(self, predictions, rows):
        """Per-row terms of ``rows`` given their :meth:`predictions`."""
        if self.kind == "accuracy":
            return self.weight[rows] * (predictions == self.y[rows])
        return self.weight[rows] * (self.y[rows] - predictions) ** 2

    def row_terms(self, outputs, rows):
        """Per-row terms of ``rows`` given their outputs."""
        return self.prediction_terms(self.predictions(outputs), rows)

    def score(self, total):
        if self.kind == "accuracy":
            return float(total / self.total_weight)
        if self.kind == "r2":
            return float(1 - total / self.total_variance)
        return float(-total / self.total_weight)
