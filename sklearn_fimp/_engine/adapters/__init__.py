"""Model adapters: one module per model family, registered in ``ADAPTERS``
(see ``_base.py`` for the interface an adapter implements)."""

from ._base import ModelAdapter, TreeEnsemble, TreeTerm
from ._catboost import CatBoost
from ._lightgbm import LightGBM
from ._sklearn_boosting import GradientBoosting
from ._sklearn_hist_boosting import HistGradientBoosting
from ._sklearn_trees import AveragedTrees
from ._spark_ml import SparkML
from ._xgboost import XGBoost

#: The families the engine takes, tried in order; a new family is one
#: module of this package and one entry here.
ADAPTERS = (
    AveragedTrees,
    GradientBoosting,
    HistGradientBoosting,
    XGBoost,
    LightGBM,
    CatBoost,
    SparkML,
)


def adapter_for(estimator):
    """The adapter of a fitted estimator's family, or None."""
    for adapter in ADAPTERS:
        if adapter.accepts(estimator):
            return adapter(estimator)
    return None


__all__ = ["ADAPTERS", "ModelAdapter", "TreeEnsemble", "TreeTerm", "adapter_for"]
