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

from ._compat import StrOptions, brier_score_loss, checked_scorer

SCORING_CONSTRAINT = [StrOptions(set(get_scorer_names())), callable, None]
#: What scikit-learn's ``permutation_importance`` accepts: also several
#: metrics, as a list or tuple of scorer names or a dict of scorers.
MULTIMETRIC_SCORING_CONSTRAINT = [*SCORING_CONSTRAINT, list, tuple, dict]


def get_scorer(estimator, scoring):
    """The scorer for ``scoring`` (None: the estimator's ``score``); for a
    list, tuple or dict, scikit-learn's multi-metric scorer, which returns a
    dict and computes each prediction once for all its metrics.

    ``"neg_log_loss"`` and ``"neg_brier_score"`` score the classes of the
    fitted model (given them as ``labels=``): held-out rows
    that lack a class of a rare one are scored, where scikit-learn asks for
    labels a user cannot pass; rows of a class the model was not fitted on
    are a clear error (:func:`check_scored_classes`)."""
    scorer = check_scoring(estimator, scoring=scoring)
    if isinstance(scoring, str) and scoring in _CLASS_PROBABILITY_SCORINGS:
        return checked_scorer(scorer, *_CLASS_PROBABILITY_SCORINGS[scoring])
    return scorer


def check_scored_classes(estimator, y_true, *, metric="log-loss"):
    """A ValueError when ``y_true`` holds a class the fitted classifier
    ``estimator`` was not fitted on (it gives that class no probability,
    and ``metric`` cannot score it); else the classes of the model."""
    classes = getattr(estimator, "classes_", None)
    y_true = np.asarray(y_true)
    if classes is None or np.ndim(classes) != 1 or y_true.ndim != 1:
        return None
    present, counts = np.unique(y_true, return_counts=True)
    unknown = np.flatnonzero(~np.isin(present, classes))
    if len(unknown):
        label, count = present[unknown[0]], int(counts[unknown[0]])
        label = label.item() if hasattr(label, "item") else label
        raise ValueError(
            f"class {label!r} has {count} row(s) among the {len(y_true)} "
            "rows scored, and the model was fitted on rows without it (its "
            f"classes are {np.asarray(classes).tolist()}): it gives the class "
            f"no probability, which {metric} cannot score. A class of so few "
            "rows cannot be on both sides of every split. Merge it with "
            "another class or remove its rows; or pass a cv whose training "
            "rows all hold it (StratifiedKFold with n_splits at most its "
            "rows), a method that scores the rows the model was fitted on "
            "(method='oob_permutation' or 'mdi'), or scoring='accuracy'."
        )
    return classes


def _labelled(metric):
    """The check of a scorer of class probabilities named ``metric``: the
    fitted model's classes as ``labels=`` (:func:`check_scored_classes`)."""

    def check(estimator, y_true):
        classes = check_scored_classes(estimator, y_true, metric=metric)
        return {} if classes is None else {"labels": classes}

    return check


#: The checks (and labels) of the scorers of class probabilities, and the
#: score function that replaces scikit-learn's (the Brier score of more than
#: two classes, which scikit-learn < 1.7 does not compute).
_CLASS_PROBABILITY_SCORINGS = {
    "neg_log_loss": (_labelled("log-loss"),),
    "neg_brier_score": (_labelled("the Brier score"), brier_score_loss),
}


def probability_scoring(estimator, scoring):
    """``scoring``, or for None and a classifier with ``predict_proba``,
    ``"neg_log_loss"``: a proper scoring rule moves with every row's
    probability, where accuracy changes only when a permutation flips a
    predicted class (on a weak signal, almost never), so a selection scored
    by it sees far more of what a feature adds. Other estimators keep their
    ``score`` (None)."""
    if scoring is not None or not is_classifier(estimator):
        return scoring
    return "neg_log_loss" if hasattr(estimator, "predict_proba") else None


class MetricsScorer:
    """A multi-metric scorer (one returning a dict) whose values come back
    as one array, in the order of ``names``: the metrics of one score are
    stored side by side, on a last axis, wherever a score is stored."""

    def __init__(self, scorer, names):
        self.scorer = scorer
        self.names = list(names)

    def __call__(self, estimator, X, y, **kwargs):
        values = self.scorer(estimator, X, y, **kwargs)
        if not isinstance(values, dict) or list(values) != self.names:
            got = sorted(values) if isinstance(values, dict) else type(values)
            raise ValueError(
                f"scoring returned {got!r} where it first returned the metrics "
                f"{self.names}; a callable scoring must return the same "
                "metrics, in the same order, on every call."
            )
        return np.array([_scalar_score(values[name], name) for name in self.names])


def metric_scorer(estimator, scoring, X, y, sample_weight=None):
    """The scorer for ``scoring``, its score on X (the baseline), and the
    metric names: None for one metric; for several (a list, tuple or dict,
    or a callable that returns a dict, as scikit-learn accepts) a
    :class:`MetricsScorer`, whose score is an array of one value per name.
    """
    scorer = get_scorer(estimator, scoring)
    kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
    value = scorer(estimator, X, y, **kwargs)
    if not isinstance(value, dict):
        return scorer, _scalar_score(value), None
    scorer = MetricsScorer(scorer, value)
    values = [_scalar_score(v, name) for name, v in value.items()]
    return scorer, np.array(values), scorer.names


def metric_scoring(scoring, name):
    """What one metric of a multi-metric ``scoring`` is: a scorer name, the
    dict's scorer, or the callable that returned it."""
    if isinstance(scoring, dict):
        return scoring[name]
    if isinstance(scoring, (list, tuple)):
        return name
    return scoring


def per_metric(names, scoring, result_of):
    """One result (``result_of(index, scoring_of_the_metric)``) for one
    metric, or a dict of them, by name, for several."""
    if names is None:
        return result_of(Ellipsis, scoring)
    return {
        name: result_of((..., m), metric_scoring(scoring, name))
        for m, name in enumerate(names)
    }


def score(scorer, estimator, X, y, sample_weight=None):
    """The score: a float; for several metrics, an array of one value per
    metric (a :class:`MetricsScorer`) or a dict of floats (a scorer that
    returns a dict)."""
    check_scored_weights(sample_weight)
    if sample_weight is None:
        value = scorer(estimator, X, y)
    else:
        value = scorer(estimator, X, y, sample_weight=sample_weight)
    if isinstance(scorer, MetricsScorer):
        return value
    if isinstance(value, dict):
        return {name: _scalar_score(v, name) for name, v in value.items()}
    return _scalar_score(value)


def _scalar_score(value, metric=None):
    """``value`` as a float; a ValueError naming what a scorer returned
    when it is not one number."""
    if np.ndim(value) == 0:
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    what = "scoring" if metric is None else f"scoring's metric {metric!r}"
    shape = f" of shape {np.shape(value)}" if np.ndim(value) else ""
    raise ValueError(
        f"{what} returned {type(value).__name__}{shape} ({value!r:.80}); a "
        "scorer must return one number per call, the score of the rows it is "
        "given (greater is better). For several metrics, return a dict of "
        "numbers, or pass a list or dict of scorers."
    )


def check_scored_weights(sample_weight):
    """A ValueError when the weights of the rows scored are all zero: their
    weighted score is undefined (the rows held out of a fit, or a model's
    out-of-bag rows, that have only rows of weight 0)."""
    if sample_weight is None or len(sample_weight) == 0:
        return
    if not np.any(sample_weight):
        raise ValueError(
            f"sample_weight is zero on every one of the {len(sample_weight)} "
            "rows scored here (the held-out rows of a split of cv, or a "
            "model's out-of-bag rows), so their weighted score is undefined. "
            "The rows are probably sorted by weight: shuffle them, or pass a "
            "cv that mixes them (KFold(shuffle=True), or StratifiedKFold)."
        )


def stack_scores(values):
    """Scores computed apart (floats, or dicts of one float per metric) as
    an array of shape (n_scores,) or (n_scores, n_metrics), and the metric
    names (None for floats)."""
    if not isinstance(values[0], dict):
        return np.asarray(values, dtype=np.float64), None
    names = list(values[0])
    if any(list(value) != names for value in values):
        raise ValueError(
            f"scoring returned the metrics {names} on one call and others on "
            "another; a callable scoring must return the same metrics, in "
            "the same order, on every call."
        )
    return np.array([[value[n] for n in names] for value in values]), names


def score_table(scores, n_rows, n_columns):
    """``scores[i, j]`` (a dict of floats, or of arrays of one value per
    metric) as an array of shape (n_rows, n_columns[, n_metrics])."""
    if not scores:
        return np.empty((n_rows, n_columns))
    return np.array(
        [[scores[i, j] for j in range(n_columns)] for i in range(n_rows)],
        dtype=np.float64,
    ).reshape((n_rows, n_columns, *np.shape(scores[0, 0])))


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


def stored_outputs(estimator, X):
    """What the fitted ``estimator`` predicts on X, as a ``Stored*Outputs``
    (a classifier's probabilities, or its decision values without them),
    so that X can be scored again against other targets without
    predicting again; None for a classifier with neither."""
    if not is_classifier(estimator):
        return StoredRegressorOutputs(estimator.predict(X))
    if hasattr(estimator, "predict_proba"):
        return StoredClassifierOutputs(
            estimator.classes_, proba=estimator.predict_proba(X)
        )
    if hasattr(estimator, "decision_function"):
        return StoredClassifierOutputs(
            estimator.classes_, decision=np.asarray(estimator.decision_function(X))
        )
    return None


def score_outputs(scorer, outputs, y, sample_weight=None):
    """Score stored outputs (a ``Stored*Outputs``) against ``y``."""
    placeholder_X = np.empty((len(y), 0))
    return score(scorer, outputs, placeholder_X, y, sample_weight)


def block_scores(additive, estimator, X, blocks):
    """The score of the fitted ``estimator`` on each block of the rows of X
    (``blocks``: arrays of row positions that cover them) by ``additive``
    (an :class:`AdditiveScore` of X's rows), predicting X once: each block
    gets the score of its rows' terms as if every block were like it, so
    that the blocks' mean is the score of all rows."""
    outputs = (
        estimator.predict_proba(X) if is_classifier(estimator) else estimator.predict(X)
    )
    return terms_block_scores(
        additive, additive.row_terms(outputs, np.arange(X.shape[0])), blocks
    )


def terms_block_scores(additive, terms, blocks):
    """:func:`block_scores` of the rows' terms by ``additive``."""
    return [additive.score(len(blocks) * terms[rows].sum()) for rows in blocks]


class AdditiveScore:
    """A score computed from a weighted sum over rows of a per-row term.

    Accuracy, R², mean squared error, log-loss and the (binary) Brier
    score are such scores: when only some rows' predictions change, the
    score is updated from those rows alone.
    :meth:`for_scoring` returns None for any other scoring, and the caller
    falls back to the scorer.
    """

    def __init__(self, kind, y, weight, classes=None):
        self.kind = kind
        self.y = y
        self.weight = np.ones(len(y)) if weight is None else weight
        self.classes = classes
        self.total_weight = self.weight.sum()
        if kind in _PROBABILITY_KINDS:
            self._class_index = np.searchsorted(classes, y)
        if kind == "r2":
            mean = np.average(y, weights=self.weight)
            self.total_variance = np.sum(self.weight * (y - mean) ** 2)

    @classmethod
    def for_scoring(cls, estimator, scoring, y, weight):
        if y.ndim != 1 or (weight is not None and weight.sum() <= 0):
            return None
        if scoring is not None and not isinstance(scoring, str):
            return None  # a callable, or several metrics
        classifier = is_classifier(estimator)
        kind = {
            (None, True): "accuracy",
            ("accuracy", True): "accuracy",
            ("neg_log_loss", True): "neg_log_loss",
            ("neg_brier_score", True): "neg_brier_score",
            (None, False): "r2",
            ("r2", False): "r2",
            ("neg_mean_squared_error", False): "neg_mean_squared_error",
        }.get((scoring, classifier))
        if kind is None:
            return None
        classes = getattr(estimator, "classes_", None)
        if kind in _PROBABILITY_KINDS and not _scores_probabilities(
            kind, classes, y, estimator
        ):
            return None  # the scorer decides (or raises)
        score = cls(kind, y, weight, classes)
        if kind == "r2" and not score.total_variance > 0:
            return None  # r2_score's special cases: let the scorer decide
        return score

    def predictions(self, outputs):
        """What a row term reads of outputs (probabilities for classifiers,
        one value per row for regressors, flat or as a column): the
        predicted class, the probabilities, or the value."""
        if self.kind == "accuracy":
            return self.classes[np.argmax(outputs, axis=1)]
        if self.kind in _PROBABILITY_KINDS:
            return outputs
        # one output (y is one-dimensional), as a column or a flat array
        return np.reshape(outputs, -1)

    def stored_predictions(self, stored):
        """:meth:`predictions` of stored outputs (a ``Stored*Outputs``)."""
        if isinstance(stored, StoredRegressorOutputs):
            return np.reshape(stored.values, -1)
        if self.kind in _PROBABILITY_KINDS:
            return stored.proba
        return stored.predict(None)

    def prediction_terms(self, predictions, rows):
        """Per-row terms of ``rows`` given their :meth:`predictions`, as
        scikit-learn's scorer of the same name computes them (log-loss:
        the probability of the row's class clipped to ``[eps, 1 - eps]``;
        binary Brier: the squared gap between the second class's
        probability and the row being of that class)."""
        weight = self.weight[rows]
        if self.kind == "accuracy":
            return weight * (predictions == self.y[rows])
        if self.kind == "neg_log_loss":
            eps = np.finfo(np.float64).eps
            chosen = predictions[np.arange(len(rows)), self._class_index[rows]]
            return -weight * np.log(np.clip(chosen, eps, 1 - eps))
        if self.kind == "neg_brier_score":
            positive = self._class_index[rows] == 1
            return weight * (positive - predictions[:, 1]) ** 2
        return weight * (self.y[rows] - predictions) ** 2

    def row_terms(self, outputs, rows):
        """Per-row terms of ``rows`` given their outputs."""
        return self.prediction_terms(self.predictions(outputs), rows)

    def score(self, total):
        if self.kind == "accuracy":
            return float(total / self.total_weight)
        if self.kind == "r2":
            return float(1 - total / self.total_variance)
        return float(-total / self.total_weight)


#: The scores of AdditiveScore read from probabilities.
_PROBABILITY_KINDS = ("neg_log_loss", "neg_brier_score")


def _scores_probabilities(kind, classes, y, estimator):
    """Whether scikit-learn's scorer ``kind`` computes its row terms from
    the model's probabilities of ``classes`` as :class:`AdditiveScore`
    does: the model has ``predict_proba`` and sorted classes, y holds every
    one of them (log-loss refuses fewer, having no labels), and for the
    Brier score two numeric classes (the second is the positive one)."""
    if classes is None or np.ndim(classes) != 1:
        return False
    if not hasattr(estimator, "predict_proba"):
        return False
    present = np.unique(y)
    if len(present) != len(classes) or not np.array_equal(present, classes):
        return False
    if kind == "neg_brier_score":
        return len(classes) == 2 and np.asarray(classes).dtype.kind in "biuf"
    return True


def _binary_auc(positive, values, weight):
    """Area under the ROC curve of ``values`` for the boolean ``positive``,
    as scikit-learn's ``roc_auc_score`` computes it: the curve's points at
    each distinct value (ties form one step), joined by the trapezoid rule."""
    order = np.argsort(-values, kind="mergesort")
    values, positive, weight = values[order], positive[order], weight[order]
    # np.concatenate, not np.r_: this runs once per permutation, and np.r_
    # parses its arguments each time
    last = np.concatenate((np.flatnonzero(np.diff(values)), [len(values) - 1]))
    true_positives = np.cumsum(weight * positive)[last]
    false_positives = np.cumsum(weight * ~positive)[last]
    tpr = np.concatenate(([0.0], true_positives)) / true_positives[-1]
    fpr = np.concatenate(([0.0], false_positives)) / false_positives[-1]
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


class DirectScore:
    """A named score computed from stored outputs by its formula, without
    the scorer's checks of its input on every call.

    Permutation importance scores the same rows hundreds of times; on a few
    hundred rows a scikit-learn scorer's input checks take longer than the
    tree engine's work. The rows' labels and weights are checked once here,
    and each score agrees with the scorer's to floating-point precision.
    :meth:`for_scoring` returns None for any other scoring, or when the
    labels are not those the formula covers (the scorer then decides).
    """

    def __init__(self, kind, y, weight, classes=None, additive=None):
        self.kind = kind
        self.y = y
        self.weight = np.ones(len(y)) if weight is None else np.asarray(weight, float)
        self.classes = classes
        self.additive = additive
        self.all_rows = np.arange(len(y))

    @classmethod
    def for_scoring(cls, estimator, scoring, y, weight):
        additive = AdditiveScore.for_scoring(estimator, scoring, y, weight)
        if additive is not None:
            return cls("additive", y, weight, additive=additive)
        if scoring not in ("roc_auc", "roc_auc_ovr") or not is_classifier(estimator):
            return None
        classes = getattr(estimator, "classes_", None)
        if y.ndim != 1 or classes is None or np.ndim(classes) != 1:
            return None
        present = np.unique(y)
        if len(present) != len(classes) or not np.array_equal(present, classes):
            return None  # the scorer raises or handles missing classes
        if weight is not None and (np.any(weight < 0) or not weight.sum() > 0):
            return None
        if len(classes) == 2:
            # roc_auc reads decision values where the model has them,
            # roc_auc_ovr probabilities only
            kind = "binary_auc" if scoring == "roc_auc" else "binary_auc_proba"
            return cls(kind, y == classes[1], weight)
        if scoring == "roc_auc_ovr":
            return cls("ovr_auc", y, weight, classes=classes)
        return None  # roc_auc on several classes: the scorer raises

    def __call__(self, stored):
        """The score of ``stored`` outputs (a ``Stored*Outputs``), or None
        where the scorer must decide (probabilities that do not sum to 1,
        which ``roc_auc_ovr`` refuses, or no probabilities where only they
        are read)."""
        if self.kind == "additive":
            predictions = self.additive.stored_predictions(stored)
            if predictions is None:
                return None  # no probabilities stored: the scorer decides
            terms = self.additive.prediction_terms(predictions, self.all_rows)
            return self.additive.score(terms.sum())
        if self.kind == "binary_auc" and stored.decision is not None:
            return _binary_auc(self.y, np.reshape(stored.decision, -1), self.weight)
        proba = stored.proba
        if proba is None:
            return None
        if self.kind in ("binary_auc", "binary_auc_proba"):
            # the probability of the second class
            return _binary_auc(self.y, proba[:, 1], self.weight)
        if not np.allclose(proba.sum(axis=1), 1.0):
            return None
        return float(
            np.mean(
                [
                    _binary_auc(self.y == label, proba[:, k], self.weight)
                    for k, label in enumerate(self.classes)
                ]
            )
        )


def chance_score(estimator, scoring, y, sample_weight=None):
    """The score of a constant prediction on y (a classifier's: the classes'
    shares; a regressor's: y's mean), by the scorer ``scoring`` gives
    ``estimator``: what a model that learned nothing scores, beside which
    a held-out score says whether a model predicts y. None where that
    scorer cannot score a constant prediction, or gives several values."""
    from sklearn.dummy import DummyClassifier, DummyRegressor

    constant = (
        DummyClassifier(strategy="prior")
        if is_classifier(estimator)
        else DummyRegressor()
    )
    X = np.zeros((len(y), 1))
    try:
        constant.fit(X, y, sample_weight=sample_weight)
        value = score(get_scorer(constant, scoring), constant, X, y, sample_weight)
    except Exception:  # a scorer of the model's own: nothing to compare with
        return None
    return value if isinstance(value, float) and np.isfinite(value) else None
