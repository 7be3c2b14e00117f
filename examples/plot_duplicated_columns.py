"""
============================================================
A duplicated column under MDI, permutation and drop-column
============================================================

When two columns carry the same information, a model can use either, and
each importance measure answers a different question about the pair:

- MDI and permutation importance split the importance evenly between the
  copies: the model uses both, and permuting one leaves the other intact;
- drop-column importance gives both copies about zero: a model retrained
  without one copy does as well with the other.

This example measures the three importances of a random forest on
Friedman's regression problem #1, before and after one of its features is
duplicated.
"""

# %%
# Data with a known answer
# ------------------------
# :func:`~sklearn.datasets.make_friedman1` draws ten uniform features; the
# target depends on the first five only,
# ``10 sin(pi x0 x1) + 20 (x2 - 0.5)² + 10 x3 + 5 x4`` plus noise, so ``x5``
# to ``x9`` are noise. The second data set appends ``x3_copy``, an exact
# copy of ``x3``, the feature with the largest linear effect.
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

X, y = make_friedman1(n_samples=1000, n_features=10, noise=1.0, random_state=0)
X = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
X_copied = X.assign(x3_copy=X["x3"])

# %%
# Three importances of one model
# ------------------------------
# Permutation importance is measured on held-out rows; drop-column
# importance refits the forest without each column and scores every refit
# on its out-of-bag rows (no held-out rows needed). Both are drops in R².
from sklearn_fimp import drop_column_importance, mdi_importance, permutation_importance


def three_importances(X, y):
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    forest = RandomForestRegressor(n_estimators=100, n_jobs=2, random_state=0)
    forest.fit(X_train, y_train)
    print(f"{X.shape[1]} features, test R²: {forest.score(X_test, y_test):.3f}")
    return {
        "MDI": mdi_importance(forest),
        "permutation (test rows)": permutation_importance(
            forest, X_test, y_test, n_repeats=10, random_state=0
        ),
        "drop-column (out-of-bag)": drop_column_importance(
            forest, X_train, y_train, n_jobs=2, random_state=0
        ),
    }


original = three_importances(X, y)
copied = three_importances(X_copied, y)

# %%
# ``x3`` and its copy, side by side
# ---------------------------------
rows = []
for name in original:
    before = dict(zip(original[name].feature_names, original[name].importances_mean))
    after = dict(zip(copied[name].feature_names, copied[name].importances_mean))
    rows.append(
        {
            "method": name,
            "x3 alone": before["x3"],
            "x3 with copy": after["x3"],
            "x3_copy": after["x3_copy"],
            "sum of the two": after["x3"] + after["x3_copy"],
        }
    )
print(pd.DataFrame(rows).set_index("method").round(3).to_string())

# %%
# MDI splits ``x3``'s importance evenly between the two copies, and their
# sum is about what ``x3`` had alone: the trees split on one copy or the
# other, about equally often. Permutation importance splits it evenly too,
# but each copy gets about a quarter of the original, not half: permuting
# one copy moves each prediction about half as far as permuting ``x3``
# did, and the squared error behind R² grows with the square of that move.
# Drop-column importance of either copy falls to about zero. None of the
# three says that the pair matters as much as ``x3`` did on its own: to ask
# that, permute or drop the two columns together
# (``groups=[["x3", "x3_copy"]]``, see
# :ref:`sphx_glr_auto_examples_plot_grouped_permutation.py`).

# %%
# The three measures with the copy
# --------------------------------
# The other features keep their importances; only ``x3`` and its copy
# change. Bars are sorted by MDI.
import matplotlib.pyplot as plt

from sklearn_fimp import ImportanceDisplay

fig, axes = plt.subplots(1, 3, figsize=(8.5, 4), sharey=True, layout="constrained")
display = ImportanceDisplay.from_result(copied, ax=axes)
_ = fig.suptitle("Friedman #1 with x3 duplicated")

# %%
# The same figure before the copy, for comparison.
fig, axes = plt.subplots(1, 3, figsize=(8.5, 3.8), sharey=True, layout="constrained")
display = ImportanceDisplay.from_result(original, ax=axes)
_ = fig.suptitle("Friedman #1")
