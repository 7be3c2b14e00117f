"""Every use of a private scikit-learn name lives in this module.

scikit-learn does not promise stability for names that start with an
underscore. Keeping them in one place means an upgrade that moves one breaks
this file only, and the rest of the package reads public API.
"""

import numpy as np
from sklearn.base import _fit_context
from sklearn.feature_selection._base import _get_feature_importances
from sklearn.metrics._scorer import _MultimetricScorer, _PassthroughScorer
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.metadata_routing import _routing_enabled
from sklearn.utils.validation import _check_sample_weight

__all__ = [
    "HasMethods",
    "Interval",
    "RealNotInt",
    "StrOptions",
    "check_sample_weight",
    "fit_context",
    "gradient_boosting_init",
    "gradient_boosting_proba",
    "hist_gradient_boosting_trees",
    "model_importances",
    "n_training_rows",
    "output_config",
    "routing_enabled",
    "scorer_reads_labels_only",
    "safe_indexing",
    "validate_params",
]

safe_indexing = _safe_indexing

#: ``@fit_context(prefer_skip_nested_validation=...)`` on ``fit``: validates
#: ``_parameter_constraints`` and runs fit in scikit-learn's config context.
fit_context = _fit_context

#: Whether ``sklearn.set_config(enable_metadata_routing=True)`` is in force.
routing_enabled = _routing_enabled


def output_config(method, estimator):
    """The container ``estimator.set_output`` (or the global config) asks
    ``method`` to return: "default", "pandas" or "polars"."""
    return _get_output_config(method, estimator)["dense"]


def check_sample_weight(sample_weight, X):
    """Validate ``sample_weight`` (non-negative, one per row of ``X``, not
    all zero); errors name the offending row."""
    sample_weight = _check_sample_weight(
        sample_weight, X, dtype=np.float64, allow_all_zero_weights=True
    )
    negative = np.flatnonzero(sample_weight < 0)
    if len(negative):
        row = int(negative[0])
        raise ValueError(
            f"sample_weight has {len(negative)} negative value(s), e.g. "
            f"{float(sample_weight[row])} at row {row}; weights must be non-negative. "
            "Pass weights >= 0 (a weight of 0 leaves the row out)."
        )
    if not np.any(sample_weight):
        raise ValueError(
            "sample_weight is 0 for every row, which leaves nothing to fit or "
            "score; give at least one row a positive weight."
        )
    return sample_weight


def model_importances(estimator, getter):
    """A fitted model's own importance of each input column, as
    SelectFromModel reads it: ``getter`` "auto" (``coef_`` or
    ``feature_importances_``), an attribute path ("named_steps.ridge.coef_")
    or a callable; a coefficient matrix (one row per class or output) gives
    the L1 norm of each column."""
    return np.asarray(
        _get_feature_importances(estimator, getter, transform_func="norm", norm_order=1)
    )


def n_training_rows(ensemble):
    """Number of rows a fitted forest or bagging ensemble was trained on.

    ``estimators_samples_`` indexes into the training rows; scikit-learn keeps
    their count in the private ``_n_samples``.
    """
    return getattr(ensemble, "_n_samples", None)


def hist_gradient_boosting_trees(estimator):
    """Yield ``(nodes, original_feature_index)`` for each tree of a fitted HGB.

    ``nodes`` is the structured node array of one tree (fields ``feature_idx``,
    ``gain``, ``is_leaf`` ...). When the model encoded categorical features
    itself, its trees index the columns of an internal ColumnTransformer whose
    output puts the categorical columns first; ``original_feature_index`` maps
    those positions back to the columns the user passed.
    """
    column_map = np.arange(estimator.n_features_in_)
    preprocessor = getattr(estimator, "_preprocessor", None)
    if preprocessor is not None:
        positions = []
        for _, transformer, columns in preprocessor.transformers_:
            if isinstance(transformer, str) and transformer == "drop":
                continue
            if isinstance(columns, slice):
                columns = np.arange(estimator.n_features_in_)[columns]
            columns = np.asarray(columns)
            if columns.dtype == bool:
                columns = np.flatnonzero(columns)
            positions.append(columns)
        column_map = np.concatenate(positions).astype(np.intp)
    for iteration in estimator._predictors:
        for predictor in iteration:
            yield predictor.nodes, column_map


def gradient_boosting_proba(estimator, decision):
    """Class probabilities of a GradientBoostingClassifier from its decision
    values, through the model's own loss (as its ``predict_proba`` does)."""
    return estimator._loss.predict_proba(decision)


def gradient_boosting_init(estimator, X):
    """Raw predictions of a GradientBoosting* model's initial estimator, of
    shape (n_rows, n_columns): what its stages are added to."""
    return estimator._raw_predict_init(X)


def scorer_reads_labels_only(scorer):
    """Whether a scorer looks at predicted labels only (accuracy, F1 ...),
    not at probabilities or decision values: scikit-learn's scorer objects
    record the response method they call (a multi-metric one reads labels
    only when each of its scorers does). ``scoring=None`` gives the
    estimator's ``score``; our stand-in classifiers score accuracy."""
    if isinstance(scorer, _PassthroughScorer):
        return True
    # several metrics (a list or dict of scorers): labels only if each is
    inner = getattr(scorer, "scorer", None)
    if isinstance(inner, _MultimetricScorer):
        return all(scorer_reads_labels_only(s) for s in inner._scorers.values())
    return getattr(scorer, "_response_method", None) == "predict"
