"""
==========================================================
Feature dependence: which features the others already know
==========================================================

Collinear features split and hide importance: permuting one of two copies of
a column costs the model little, because the other copy still carries the
information. Before reading importances, it helps to know which features are
predictable from the others. The *dependence* of a feature is the
out-of-bag R² of a random forest that predicts it from all the other
features: near 1, the feature is redundant; near 0, it carries information
of its own.

This example measures the dependence of the 30 features of scikit-learn's
breast-cancer data, whose features come in three families (mean, standard
error and worst value of ten cell-nucleus measurements), then lets
:class:`~sklearn_fimp.DependenceAnalyzer` remove redundant features one at a
time.
"""

# %%
# Dependence of every feature
# ---------------------------
# Fitting a :class:`~sklearn_fimp.DependenceAnalyzer` first measures every
# feature's dependence (one forest per feature, in parallel) and the
# dependence matrix: row ``i`` holds how much the dependence of feature ``i``
# drops when another feature is permuted, that is which features explain it.
# A drop can exceed the dependence itself, up to about 2: a model that
# relies on one input alone makes scrambled predictions when it is permuted,
# and scrambled predictions score an R² below zero.
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer

from sklearn_fimp import DependenceAnalyzer

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
analyzer = DependenceAnalyzer(threshold=0.95, n_jobs=2, random_state=0).fit(X)

matrix = pd.DataFrame(analyzer.dependence_matrix_, index=X.columns, columns=X.columns)
table = pd.DataFrame(
    {
        "dependence": analyzer.dependence_,
        "explained best by": matrix.idxmax(axis=1),
        "its importance": matrix.max(axis=1),
    },
    index=X.columns,
).sort_values("dependence", ascending=False)
print(table.round(3).to_string())

# %%
# The size measurements (radius, perimeter and area, both mean and worst)
# are almost perfectly predictable from each other: a perimeter is about
# 2π radii, an area about π radii squared. At the other end, the standard
# errors of symmetry, smoothness and texture are the least predictable
# features: what they measure is not in the other columns.

# %%
# The dependence matrix
# ---------------------
# :class:`~sklearn_fimp.DependenceDisplay` draws it with the dependence as
# the first column, rows and columns sorted by dependence, and the values
# above 0.05 written in the cells; the features the analyzer dropped are
# marked. Its 15 most dependent features (``max_features``; the table
# above has all 30) show the pattern: most features lean on one or two
# others, and the size block (radius, perimeter and area) stands out.
import matplotlib.pyplot as plt

from sklearn_fimp import DependenceDisplay

fig, ax = plt.subplots(figsize=(9, 7.5), layout="constrained")
display = DependenceDisplay.from_analyzer(analyzer, ax=ax, max_features=15)

# %%
# Sequential elimination
# ----------------------
# Dropping every feature above the threshold at once would throw away whole
# families: mean radius, perimeter and area all have dependence above 0.98,
# but only because the others are there. The analyzer drops the most
# dependent feature, re-measures only the features whose models relied on
# it, and repeats until no feature is above the threshold.
path = pd.DataFrame(analyzer.elimination_path_)
print(path[["feature", "dependence", "explained_by", "remeasured"]].to_string())
print(f"\nkept {analyzer.support_.sum()} of {X.shape[1]} features")
print(f"models fitted: {analyzer.n_fits_} (one full pass: {X.shape[1]})")

# %%
# The kept features still carry what was dropped: predicted from the kept
# features alone (a forest like the analyzer's, scored out of bag), every
# dropped feature has a dependence close to the one it had on all features.
from sklearn.ensemble import RandomForestRegressor

kept = X.columns[analyzer.support_]
for dropped in path["feature"]:
    forest = RandomForestRegressor(
        min_samples_leaf=5, oob_score=True, n_jobs=2, random_state=0
    ).fit(X[kept], X[dropped])
    on_all = analyzer.dependence_[X.columns.get_loc(dropped)]
    print(
        f"{dropped:<16} on all features: {on_all:.3f}"
        f"  on the kept ones: {forest.oob_score_:.3f}"
    )

# %%
# ``DependenceAnalyzer`` is a scikit-learn feature selector: put it in a
# Pipeline, before a model or another selector, and it transforms data to
# the kept columns.
X_kept = analyzer.set_output(transform="pandas").transform(X)
print(X_kept.shape, np.all(X_kept.columns == kept))
