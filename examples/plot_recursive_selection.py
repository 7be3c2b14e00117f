"""
=====================================================================
How few features does the model need? Recursive elimination with CV
=====================================================================

:class:`~sklearn_fimp.ImportanceSelector` asks which features beat random
noise. :class:`~sklearn_fimp.RecursiveImportanceSelector` asks another
question: how few features can the model use before its cross-validated
score drops? In each training split it fits the model, measures importance
on rows the model did not train on (out-of-bag rows by default), drops the
least important features and fits again; each subset is scored on the
split's test rows, never used for the importance.

The data: Friedman's first regression problem, where y depends on the first
five of 20 features (``10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4``
plus noise) and the other 15 are noise.
"""

# %%
# Data and selector
# -----------------
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor

from sklearn_fimp import RecursiveImportanceSelector

X, y = make_friedman1(n_samples=600, n_features=20, noise=1.0, random_state=0)
forest = RandomForestRegressor(n_estimators=40, min_samples_leaf=3, random_state=0)
# 3 features dropped per step: the sizes tried are 20, 17, 14, 11, 8, 5, 2, 1
selector = RecursiveImportanceSelector(forest, step=3, cv=4, random_state=0)
selector.fit(X, y)
print(f"{selector.n_features_} features kept: {selector.get_feature_names_out()}")

# %%
# The score against the number of features
# ----------------------------------------
# Each thin line is one split; the band is one standard deviation around
# the mean. The score rises a little as noise features leave (the forest
# wastes fewer splits on them) and falls steeply once a real feature goes.
from sklearn_fimp import RecursiveSelectionDisplay

display = RecursiveSelectionDisplay.from_selector(selector)

# %%
# ``ranking_`` orders every feature: 1 for the kept ones, then by when the
# elimination on all rows dropped them (higher: earlier).
import numpy as np

order = np.argsort(selector.ranking_, kind="stable")
print([(f"x{i}", int(selector.ranking_[i])) for i in order[:8]])

# %%
# Fewer features at a small cost: the one-standard-error rule
# -----------------------------------------------------------
# ``selection_rule="one_se"`` takes the smallest subset whose mean score is
# within one standard error of the best: a simpler model whose score is not
# distinguishably worse on these splits. Here both rules keep the five real
# features: dropping any of them costs far more than one standard error.
selector_1se = RecursiveImportanceSelector(
    forest, step=3, cv=4, selection_rule="one_se", random_state=0
).fit(X, y)
best = selector.cv_results_["mean_test_score"].max()
print(
    f"best: {selector.n_features_} features; one_se: {selector_1se.n_features_} "
    f"features ({selector_1se.get_feature_names_out()})"
)
print(f"best mean R²: {best:.3f}")

# %%
# In a pipeline
# -------------
# The selector is a scikit-learn transformer: ``transform`` keeps the
# selected columns for the next step (here a ridge regression, which scores
# lower than the forest because Friedman's function is not linear), and
# ``estimator_``, the forest refitted on them, is the selector's own
# ``predict``.
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

pipeline = make_pipeline(
    RecursiveImportanceSelector(forest, step=3, cv=3, random_state=0), RidgeCV()
)
scores = cross_val_score(pipeline, X, y, cv=3)
print(f"selector + ridge, cross-validated R²: {scores.mean():.3f}")
