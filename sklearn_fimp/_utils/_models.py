"""Model families, and what each can offer the importance methods.

Every check of the kind "does this model have trees / out-of-bag rows"
lives here, so that the method registry (``sklearn_fimp/_methods.py``)
gives one error message per missing capability.
"""

import numpy as np
from sklearn.base import is_classifier, is_regressor
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import BaseDecisionTree

FORESTS = (
    RandomForestClassifier,
    RandomForestRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
)
BAGGING = (BaggingClassifier, BaggingRegressor)
BAGGED_ENSEMBLES = FORESTS + BAGGING
GRADIENT_BOOSTING = (GradientBoostingClassifier, GradientBoostingRegressor)
HIST_GRADIENT_BOOSTING = (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
#: XGBoost boosters made of trees ("gblinear" has none)
XGBOOST_TREE_BOOSTERS = (None, "gbtree", "dart")


def _library(estimator):
    return type(estimator).__module__.partition(".")[0]


def is_xgboost_trees(estimator):
    """An XGBoost scikit-learn model whose booster grows trees."""
    return (
        _library(estimator) == "xgboost"
        and hasattr(estimator, "get_booster")
        and estimator.get_params().get("booster") in XGBOOST_TREE_BOOSTERS
    )


def is_lightgbm_trees(estimator):
    """A LightGBM scikit-learn model (every LightGBM booster grows trees)."""
    return _library(estimator) == "lightgbm" and hasattr(estimator, "fit")


def is_catboost_estimator(estimator):
    """A CatBoost model, fitted or not (CatBoostClassifier, CatBoostRegressor,
    plain ``CatBoost``, or a class of the user's derived from one)."""
    return hasattr(estimator, "fit") and any(
        cls.__module__.partition(".")[0] == "catboost"
        for cls in type(estimator).__mro__
    )


def is_catboost_model(estimator):
    """A fitted CatBoostClassifier, CatBoostRegressor or plain ``CatBoost``
    model (a regressor to scikit-learn)."""
    return (
        _library(estimator) == "catboost"
        and (is_classifier(estimator) or is_regressor(estimator))
        and hasattr(estimator, "is_fitted")
        and estimator.is_fitted()
    )


def _bags_trees(estimator):
    base = estimator.estimator
    return base is None or isinstance(base, BaseDecisionTree)


def has_trees(estimator):
    """Whether ``mdi_importance`` can read ``estimator``'s trees."""
    if isinstance(estimator, BAGGING):
        return _bags_trees(estimator)
    return isinstance(
        estimator,
        (BaseDecisionTree,) + FORESTS + GRADIENT_BOOSTING + HIST_GRADIENT_BOOSTING,
    ) or (is_xgboost_trees(estimator) or is_lightgbm_trees(estimator))


def supports_oob(estimator):
    """Whether a (possibly unfitted) estimator will have out-of-bag rows."""
    return isinstance(estimator, BAGGED_ENSEMBLES) and bool(
        getattr(estimator, "bootstrap", False)
    )


def has_bagged_trees(estimator):
    """Whether ``oob_mdi_importance`` can use ``estimator``: bagged decision
    trees with out-of-bag rows."""
    if not supports_oob(estimator):
        return False
    return _bags_trees(estimator) if isinstance(estimator, BAGGING) else True


def single_output(y):
    """Whether ``y`` is one target (a 1-D array or a single column)."""
    return np.ndim(y) == 1 or (np.ndim(y) == 2 and np.shape(y)[1] == 1)


def supports_tree_shap(estimator):
    """Whether ``shap_importance`` explains ``estimator`` (fitted or not):
    LightGBM, XGBoost and CatBoost models with their own TreeSHAP, and the
    other tree models ``has_trees`` accepts, except Bagging*, through shap's
    TreeExplainer (which does not know Bagging*)."""
    return (
        has_trees(estimator) and not isinstance(estimator, BAGGING)
    ) or is_catboost_estimator(estimator)


def nan_handling(step):
    """What a (possibly unfitted) model or step does with NaN in its input:
    "removes" (an imputer, or a Pipeline or ColumnTransformer whose every
    branch removes them), "passes" (accepts them, and a transformer passes
    them on) or "refuses". A Pipeline's own tags never allow NaN
    (scikit-learn leaves the tag at its default), though its first steps
    may impute them: this follows its steps."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.utils import get_tags

    if step is None or (isinstance(step, str) and step == "passthrough"):
        return "passes"
    if isinstance(step, str):  # "drop"
        return "removes"
    if isinstance(step, Pipeline):
        for _, inner in step.steps:
            handling = nan_handling(inner)
            if handling != "passes":
                return handling
        return "passes"
    if isinstance(step, ColumnTransformer):
        branches = [inner for _, inner, _ in step.transformers]
        branches.append(step.remainder)
        handlings = {nan_handling(inner) for inner in branches}
        if "refuses" in handlings:
            return "refuses"
        return "removes" if handlings == {"removes"} else "passes"
    if type(step).__module__.startswith("sklearn.impute"):
        return "removes"
    try:
        allowed = get_tags(step).input_tags.allow_nan
    except Exception:  # not an estimator scikit-learn can read
        return "refuses"
    return "passes" if allowed else "refuses"
