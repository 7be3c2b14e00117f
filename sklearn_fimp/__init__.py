"""sklearn_fimp: feature importances you can trust, inside scikit-learn.

Every importance function returns the same :class:`~sklearn.utils.Bunch`
(``importances`` of shape (n_features_or_groups, n_repeats),
``importances_mean``, ``importances_std``, ``feature_names`` and what is
needed to reproduce the result).
"""

from ._distributed import distributed_permutation_importance, permutation_sources
from ._importance._conditional import conditional_permutation_importance
from ._importance._dependence import feature_dependence
from ._importance._drop_column import drop_column_importance
from ._importance._groups import feature_groups
from ._importance._mdi import mdi_importance
from ._importance._oob_mdi import oob_mdi_importance
from ._importance._oob_permutation import oob_permutation_importance
from ._importance._permutation import permutation_importance
from ._importance._shap import shap_importance
from ._plot import (
    CorrelationDisplay,
    DependenceDisplay,
    ImportanceDisplay,
    ProbeDisplay,
    RecursiveSelectionDisplay,
)
from ._selection._dependence_analyzer import DependenceAnalyzer
from ._selection._distributed import distributed_select_features
from ._selection._recursive import RecursiveImportanceSelector
from ._selection._selector import ImportanceSelector
from ._show_versions import show_versions

__version__ = "0.1.0.dev0"

__all__ = [
    "__version__",
    "CorrelationDisplay",
    "DependenceAnalyzer",
    "DependenceDisplay",
    "ImportanceDisplay",
    "ImportanceSelector",
    "conditional_permutation_importance",
    "distributed_permutation_importance",
    "distributed_select_features",
    "RecursiveImportanceSelector",
    "RecursiveSelectionDisplay",
    "ProbeDisplay",
    "drop_column_importance",
    "feature_dependence",
    "feature_groups",
    "mdi_importance",
    "oob_mdi_importance",
    "oob_permutation_importance",
    "permutation_importance",
    "permutation_sources",
    "show_versions",
    "shap_importance",
]
