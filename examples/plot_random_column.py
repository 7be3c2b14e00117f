"""
=============================================================
A column of random numbers: MDI vs permutation vs drop-column
=============================================================

Impurity-based importance (MDI) is computed on the training rows and favours
features with many distinct values, so a column of random numbers can earn
more MDI than real features. Permutation importance on held-out rows and
drop-column importance measure what the model loses without the feature, and
measure it on rows the model did not train on. This example adds a random
column to scikit-learn's diabetes data (442 patients, ten features, one of
them binary: ``sex``) and compares them. Only features clearly above the
random column deserve trust; the rest is noise the model learnt.
"""

# %%
# Data and model
# --------------
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

from sklearn_fimp import (
    drop_column_importance,
    mdi_importance,
    oob_permutation_importance,
    permutation_importance,
)

X, y = load_diabetes(return_X_y=True, as_frame=True)
X = X.assign(random=np.random.RandomState(0).uniform(size=len(X)))
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
forest = RandomForestRegressor(n_estimators=200, random_state=0)
forest.fit(X_train, y_train)
print(f"test R2: {forest.score(X_test, y_test):.3f}")

# %%
# Four importances of the same model
# ----------------------------------
# Drop-column refits the forest once per feature and scores each refit on its
# out-of-bag rows. Permutation and drop-column importances are drops in R².
results = {
    "MDI": mdi_importance(forest),
    "permutation (test rows)": permutation_importance(
        forest, X_test, y_test, n_repeats=10, random_state=0
    ),
    "permutation (out-of-bag)": oob_permutation_importance(
        forest, X_train, y_train, n_repeats=5, random_state=0
    ),
    "drop-column (out-of-bag)": drop_column_importance(
        forest, X_train, y_train, n_jobs=-1, random_state=0
    ),
}

print(f"\n{'method':<26} {'random':>8} {'largest':>8}  real features below random")
for name, result in results.items():
    importance = dict(zip(result.feature_names, result.importances_mean))
    below = [f for f, v in importance.items() if v < importance["random"]]
    print(
        f"{name:<26} {importance['random']:8.3f} {max(importance.values()):8.3f}  "
        + ", ".join(below)
    )

# %%
# Plot
# ----
# MDI puts the random column (grey, hatched) above several real features;
# the other three measure it near zero, with real features that are no
# better than it. Rows are sorted by MDI in every panel; MDI is a share of
# the total impurity decrease, the other three are drops in R². Two panels
# per row keep the labels readable at the width of this page.
import matplotlib.pyplot as plt

from sklearn_fimp import ImportanceDisplay

fig, axes = plt.subplots(2, 2, figsize=(8, 7.5), sharey=True, layout="constrained")
display = ImportanceDisplay.from_result(results, probes=["random"], ax=axes)
_ = fig.suptitle("The random column under four importance measures")
