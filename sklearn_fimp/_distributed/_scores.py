"""Scores that combine from sums over partitions.

A distributed permutation importance never brings the rows together: each
partition returns, for every (group, repeat), the sum over its rows of a
per-row term, and the driver adds the partitions' sums and turns them into
the score. That is exact (up to the order of floating-point additions) for
the scores below, whose value is a function of such sums and of totals known
before the permutations (the weight of the rows, of each class, the mean of
the target):

=========================  ================================================
scoring                    row term, and the score from its sum ``S``
=========================  ================================================
``accuracy``               ``w [pred = y]``; ``S / W``
``balanced_accuracy``      ``w [pred = y] / (C W_y)``; ``S`` (``C`` classes
                           present in y, ``W_y`` the weight of the row's
                           class)
``r2``                     ``w (y - pred)**2``; ``1 - S / sum w (y - mean)**2``
``neg_mean_squared_error`` ``w (y - pred)**2``; ``-S / W``
``neg_log_loss``           ``-w log(clip(p_y, eps, 1 - eps))``; ``-S / W``
=========================  ================================================

as scikit-learn's scorers of those names compute them (``None`` is the
model's ``score``: accuracy or R²). Ranking scores such as ROC AUC are not
sums over rows, so a distributed call refuses them and names these.
"""

import numpy as np
from sklearn.base import is_classifier

#: scoring -> (row term kind, classifier only, regressor only)
SUMMED_SCORES = {
    "accuracy": "classifier",
    "balanced_accuracy": "classifier",
    "neg_log_loss": "classifier",
    "r2": "regressor",
    "neg_mean_squared_error": "regressor",
}


def summed_scoring(estimator, scoring):
    """The name of ``scoring`` for ``estimator`` (None: accuracy or R²), or
    a ValueError naming the scores a distributed call computes."""
    classifier = is_classifier(estimator)
    if scoring is None:
        return "accuracy" if classifier else "r2"
    if isinstance(scoring, str) and scoring in SUMMED_SCORES:
        wanted = SUMMED_SCORES[scoring]
        if wanted == ("classifier" if classifier else "regressor"):
            return scoring
        raise ValueError(
            f"scoring={scoring!r} needs a {wanted}, and "
            f"{type(estimator).__name__} is not one."
        )
    kind = "classifier" if classifier else "regressor"
    names = [name for name, wanted in SUMMED_SCORES.items() if wanted == kind]
    raise ValueError(
        f"scoring={scoring!r} is not supported on distributed data: a "
        "partition can only return sums over its rows, and this score is not "
        f"a function of such sums. Pass one of {names} (or None), or collect "
        "a sample of rows and call permutation_importance on it."
    )


def class_indices(classes, y):
    """The index of each label of ``y`` among the model's ``classes``
    (sorted), or a ValueError naming a label that is not one of them."""
    index = np.searchsorted(classes, y)
    inside = index < len(classes)
    inside[inside] = classes[index[inside]] == y[inside]
    if not inside.all():
        raise ValueError(
            f"y holds the label {y[~inside][0]!r}, which is not one of the "
            f"model's classes {list(classes)}."
        )
    return index


def check_finite_rows(y, weight, needs_classes):
    """A ValueError when a target (regression) or a weight is missing: a
    missing value would make the summed score NaN without saying why."""
    if not needs_classes and np.isnan(np.asarray(y, dtype=np.float64)).any():
        raise ValueError(
            "y has missing values; drop those rows (or fill them) before measuring."
        )
    if np.isnan(weight).any():
        raise ValueError(
            "sample_weight has missing values; drop those rows or fill them."
        )


class SummedScore:
    """One score's row terms and how their sum becomes the score.

    Built on the driver from the totals of a first pass over the data
    (:meth:`set_totals`), sent to the partitions, which call
    :meth:`row_terms` through :class:`PartitionTerms`.
    """

    def __init__(self, scoring, classes=None):
        self.scoring = scoring
        self.classes = None if classes is None else np.asarray(classes)
        self.total_weight = None
        self.class_weight = None
        self.mean = None
        self.variance = None

    @property
    def needs_classes(self):
        return self.scoring in ("accuracy", "balanced_accuracy", "neg_log_loss")

    def set_totals(self, total_weight, weighted_target=None, class_weight=None):
        """The totals of the first pass: the rows' weight, the weighted sum
        of the target (regression) and the weight of each of ``classes``
        (classification)."""
        if not total_weight > 0:
            raise ValueError(
                "The rows' weights sum to zero (or there are no rows): no score "
                "can be computed."
            )
        self.total_weight = float(total_weight)
        if weighted_target is not None:
            self.mean = float(weighted_target) / self.total_weight
        if class_weight is not None:
            self.class_weight = np.asarray(class_weight, dtype=np.float64)

    def partition_terms(self, y, weight):
        """The row terms of one partition's rows (``weight`` None: ones)."""
        return PartitionTerms(self, y, weight)

    def score(self, total):
        """The score of the summed row terms ``total`` (array or number)."""
        total = np.asarray(total, dtype=np.float64)
        if self.scoring == "accuracy":
            return total / self.total_weight
        if self.scoring == "balanced_accuracy":
            return total
        if self.scoring == "r2":
            if not self.variance > 0:
                raise ValueError(
                    "The target is constant on these rows: R² is undefined. "
                    "Pass scoring='neg_mean_squared_error'."
                )
            return 1.0 - total / self.variance
        return -total / self.total_weight  # squared error, log loss


class PartitionTerms:
    """The row terms of one partition, in the form the engine's
    ``summed_row_terms`` reads (``row_terms(outputs, rows)``)."""

    def __init__(self, score, y, weight):
        self.score = score
        self.y = np.asarray(y)
        weight = np.ones(len(self.y)) if weight is None else np.asarray(weight, float)
        if score.needs_classes:
            self.class_index = class_indices(score.classes, self.y)
        if score.scoring == "balanced_accuracy":
            present = score.class_weight > 0
            weight = weight / (present.sum() * score.class_weight[self.class_index])
        self.weight = weight

    def row_terms(self, outputs, rows):
        """Terms of rows ``rows`` given their outputs (probabilities for
        classifiers, values for regressors)."""
        scoring, weight = self.score.scoring, self.weight[rows]
        if scoring in ("accuracy", "balanced_accuracy"):
            return weight * (np.argmax(outputs, axis=1) == self.class_index[rows])
        if scoring == "neg_log_loss":
            eps = np.finfo(np.float64).eps
            chosen = outputs[np.arange(len(rows)), self.class_index[rows]]
            return -weight * np.log(np.clip(chosen, eps, 1 - eps))
        return weight * (self.y[rows] - np.reshape(outputs, -1)) ** 2

    def squared_deviation(self):
        """``sum w (y - mean)**2`` of the partition (R²'s denominator)."""
        return float(np.sum(self.weight * (self.y - self.score.mean) ** 2))
