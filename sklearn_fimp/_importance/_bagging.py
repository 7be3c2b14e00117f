"""Out-of-bag rows of bagged ensembles, and predictions made with them."""

from typing import NamedTuple

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from .._utils._compat import n_training_rows, validate_data
from .._utils._models import BAGGED_ENSEMBLES, FORESTS
from .._utils._scoring import (
    StoredClassifierOutputs,
    StoredRegressorOutputs,
    score_outputs,
)


class BaggedMember(NamedTuple):
    """One member of a bagged ensemble.

    ``features`` are the columns of X it was trained on (None: all of them, in
    order); ``in_bag_rows`` the training rows it was fitted on, repeated as
    the bootstrap drew them (None unless asked for: one integer per training
    row and member); ``oob_rows`` the training rows it never saw, in
    increasing order (int32 when that holds every row number).
    """

    estimator: object
    features: np.ndarray | None
    in_bag_rows: np.ndarray | None
    oob_rows: np.ndarray


def no_oob_error(estimator):
    name = type(estimator).__name__
    return ValueError(
        f"estimator={name}(...) has no out-of-bag rows: out-of-bag importances "
        "need a RandomForest*, ExtraTrees* or Bagging* model fitted with "
        "bootstrap=True. Use permutation_importance on a validation set "
        "instead, or refit with bootstrap=True."
    )


def in_bag_rows(ensemble):
    """Each member's in-bag rows, one member at a time.

    ``estimators_samples_`` regenerates the rows of every member at once (on
    1,000,000 rows, 100 trees hold 0.8 GB of them); the generator behind it,
    which the forests and Bagging* share in scikit-learn >= 1.4, yields them
    one by one (Bagging* with each member's feature subset).
    """
    generate = getattr(ensemble, "_get_estimators_indices", None)
    if generate is None:
        yield from ensemble.estimators_samples_
        return
    for drawn in generate():
        yield drawn[1] if isinstance(drawn, tuple) else drawn


def bagged_members(ensemble, n_rows, *, keep_in_bag=False):
    """The members of a fitted bagged ensemble with their out-of-bag rows
    (and their in-bag rows with ``keep_in_bag``).

    Raises a ValueError naming the estimator when it has no out-of-bag rows,
    and when ``n_rows`` is not the number of rows it was trained on.
    """
    if not isinstance(ensemble, BAGGED_ENSEMBLES):
        raise no_oob_error(ensemble)
    check_is_fitted(ensemble)
    n_train = n_training_rows(ensemble)
    if n_train is not None and n_train != n_rows:
        raise ValueError(
            f"X has {n_rows} rows but {type(ensemble).__name__} was fitted on "
            f"{n_train}; out-of-bag importances need the training rows X, y, in "
            "the order they were passed to fit."
        )
    if is_classifier(ensemble) and np.ndim(ensemble.classes_[0]) > 0:
        raise ValueError(
            f"{type(ensemble).__name__} was fitted on a multi-output "
            "classification target, which out-of-bag importances do not "
            "support; fit one model per output."
        )
    feature_sets = getattr(ensemble, "estimators_features_", None)
    row_dtype = np.int32 if n_rows <= np.iinfo(np.int32).max else np.intp
    members = []
    for t, (estimator, in_bag) in enumerate(
        zip(ensemble.estimators_, in_bag_rows(ensemble), strict=True)
    ):
        oob = np.ones(n_rows, dtype=bool)
        oob[in_bag] = False
        features = None if feature_sets is None else np.asarray(feature_sets[t])
        members.append(
            BaggedMember(
                estimator,
                features,
                np.asarray(in_bag) if keep_in_bag else None,
                np.flatnonzero(oob).astype(row_dtype),
            )
        )
    if not any(len(m.oob_rows) for m in members):
        raise no_oob_error(ensemble)
    return members


def ensemble_input(ensemble, X):
    """X validated as the ensemble's ``predict`` validates it (no copy of
    the caller's data is modified)."""
    dtype = np.float32 if isinstance(ensemble, FORESTS) else None
    return validate_data(ensemble, X, reset=False, dtype=dtype, ensure_all_finite=False)


def member_input(member, X):
    """The columns of X the member was trained on."""
    return X if member.features is None else X[:, member.features]


def member_outputs(ensemble, estimator, X):
    """A member's predictions, as the ensemble aggregates them.

    Classifiers: probabilities over all of ``ensemble.classes_`` (members are
    trained on encoded labels and may have seen only some classes).
    Regressors: predicted values.
    """
    if is_classifier(ensemble):
        proba = estimator.predict_proba(X)
        full = np.zeros((X.shape[0], len(ensemble.classes_)))
        full[:, np.asarray(estimator.classes_, dtype=np.intp)] = proba
        return full
    return estimator.predict(X)


def stored_outputs(ensemble, values):
    """Wrap averaged member outputs so any scorer can score them."""
    if is_classifier(ensemble):
        return StoredClassifierOutputs(ensemble.classes_, proba=values)
    return StoredRegressorOutputs(values)


def oob_sums(ensemble, members, X):
    """Sum of member outputs over the members each row is out of bag for,
    and how many such members each row has."""
    total = None
    count = np.zeros(X.shape[0])
    for member in members:
        rows = member.oob_rows
        if not len(rows):
            continue
        outputs = member_outputs(
            ensemble, member.estimator, member_input(member, X[rows])
        )
        if total is None:
            total = np.zeros((X.shape[0],) + outputs.shape[1:])
        total[rows] += outputs
        count[rows] += 1
    return total, count


def score_oob_sums(scorer, ensemble, total, count, y, sample_weight):
    """Score the out-of-bag average on the rows that have one."""
    scored = count > 0
    counts = count[scored].reshape((-1,) + (1,) * (total.ndim - 1))
    outputs = stored_outputs(ensemble, total[scored] / counts)
    weight = None if sample_weight is None else sample_weight[scored]
    return score_outputs(scorer, outputs, y[scored], weight)
