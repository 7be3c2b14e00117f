"""
============================================================
Selecting features that beat random probes, in a grid search
============================================================

:class:`~sklearn_fimp.ImportanceSelector` appends probe columns to X
(shuffled copies of the features by default), fits a model, and keeps a
feature only when a statistical test says its importance is larger than the
probes'. Probes never leave ``fit``: the next step of a pipeline sees the
selected real features only.

This example adds ten columns of noise to scikit-learn's breast cancer data,
puts the selector in front of a logistic regression, and lets
:class:`~sklearn.model_selection.GridSearchCV` choose how importance is
measured.
"""

# %%
# Data: 30 real features and 10 columns of noise
# ----------------------------------------------
import numpy as np
from sklearn.datasets import load_breast_cancer

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
rng = np.random.RandomState(0)
for i in range(10):
    X[f"noise_{i}"] = rng.normal(size=len(X))
print(X.shape)

# %%
# A pipeline tuned over the importance method
# -------------------------------------------
# ``refit=False``: the logistic regression after the selector is the model
# that predicts, so the selector need not refit its forest on the selection.
#
# The breast cancer features are strongly correlated with each other (radius,
# perimeter and area measure one thing three times). Permuting one of them
# barely changes the forest's predictions, because the others carry the same
# information, so out-of-bag permutation importance measured with accuracy
# finds few features that beat the probes (in one fold none, which the
# selector reports in a warning while ``min_features=1`` keeps the best one).
# MDI-oob credits every split a feature makes on out-of-bag rows and keeps
# the correlated features together.
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_fimp import ImportanceSelector

X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, stratify=y, random_state=0
)
pipeline = make_pipeline(
    ImportanceSelector(
        RandomForestClassifier(n_estimators=100, random_state=0),
        refit=False,
        random_state=0,
    ),
    StandardScaler(),
    LogisticRegression(max_iter=1000),
).set_output(transform="pandas")
search = GridSearchCV(
    pipeline,
    {"importanceselector__method": ["oob_mdi", "mdi", "oob_permutation"]},
    cv=3,
)
search.fit(X_train, y_train)
for params, score in zip(
    search.cv_results_["params"], search.cv_results_["mean_test_score"]
):
    print(f"{params['importanceselector__method']:<16} CV accuracy {score:.3f}")
print(f"best: {search.best_params_}, test accuracy {search.score(X_test, y_test):.3f}")

# %%
# What the chosen selector kept
# -----------------------------
# No noise column survives; the features that go are real ones that add
# nothing the kept ones do not already say (the breast cancer features are
# strongly correlated with each other).
selector = search.best_estimator_.named_steps["importanceselector"]
kept = selector.get_feature_names_out()
print(f"{len(kept)} of {X.shape[1]} columns kept:", ", ".join(kept))
print("noise columns kept:", [c for c in kept if c.startswith("noise")])

# %%
# Features against the probes
# ---------------------------
# :meth:`ImportanceDisplay.from_selector
# <sklearn_fimp.ImportanceDisplay.from_selector>` draws what the selector
# measured: kept features in colour, dropped ones pale, probes grey and
# hatched (the mean over the rounds of probes).
import matplotlib.pyplot as plt

from sklearn_fimp import ImportanceDisplay

fig, ax = plt.subplots(figsize=(7, 8), layout="constrained")
display = ImportanceDisplay.from_selector(selector, ax=ax, max_features=40)

# %%
# Each feature over the rounds of probes
# --------------------------------------
# :class:`~sklearn_fimp.ProbeDisplay` draws each feature's importance in every
# round of probes as a box, green when confirmed, yellow when tentative, red
# when rejected, against the smallest, mean and largest probe of each round
# (in blue), as R's Boruta does.
from sklearn_fimp import ProbeDisplay

fig, ax = plt.subplots(figsize=(7, 8), layout="constrained")
display = ProbeDisplay.from_estimator(selector, ax=ax, max_features=25)
