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
measured among every method, with what each candidate cost and kept.
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
# :class:`~sklearn.model_selection.GridSearchCV` tries every ``method`` the
# forest supports (``"shap"`` where the optional shap package is installed),
# three folds each. Each method's rounds are sized for it (one permutation
# per column and round, one round of drop-column refits, conditional
# permutation's samplers fitted once), so that the grid costs a few plain
# fits of the forest per candidate and fold, not hundreds: the guide's
# :ref:`table of what each method costs <selector_methods>`.
from importlib.util import find_spec

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
        RandomForestClassifier(n_estimators=60, random_state=0),
        refit=False,
        random_state=0,
    ),
    StandardScaler(),
    LogisticRegression(max_iter=1000),
).set_output(transform="pandas")
methods = ["auto", "mdi", "oob_mdi", "permutation", "oob_permutation"]
methods += ["conditional_permutation", "drop_column"]
methods += ["shap"] if find_spec("shap") else []
search = GridSearchCV(
    pipeline, {"importanceselector__method": methods}, cv=3, scoring="roc_auc"
)
search.fit(X_train, y_train)

# %%
# What each candidate cost and kept
# ---------------------------------
# The seconds of one fit of the pipeline (mean over the folds), the
# cross-validated ROC AUC, and the columns the selector keeps with that
# method on the whole training set (no method keeps a noise column). The
# breast cancer features are strongly correlated with each other (radius,
# perimeter and area measure one thing three times). Held-out and
# out-of-bag permutation, which ask what the model loses when one column is
# shuffled, keep fewer of them than the measures that credit every split
# (MDI, MDI-oob, SHAP). Conditional permutation and drop-column ask what a
# column adds given all the others: here every feature has a stand-in, so
# they confirm none, keep the most significant one (``min_features=1``, with
# a warning) and score worst; they also cost the most, a model per column
# (samplers, or refits). A grid search over ``method`` is a choice between
# all-relevant and minimal selections as much as between measures.
import time

results = search.cv_results_
print(f"{'method':<24}{'seconds':>8}{'ROC AUC':>9}{'kept':>6}{'noise':>7}")
for method, seconds, score in zip(
    methods, results["mean_fit_time"], results["mean_test_score"]
):
    selector = ImportanceSelector(
        RandomForestClassifier(n_estimators=60, random_state=0),
        method=method,
        refit=False,
        random_state=0,
    ).fit(X_train, y_train)
    kept = selector.get_feature_names_out()
    noise = sum(name.startswith("noise") for name in kept)
    print(f"{method:<24}{seconds:8.2f}{score:9.3f}{len(kept):6d}{noise:7d}")
start = time.perf_counter()
RandomForestClassifier(n_estimators=60, random_state=0).fit(X_train, y_train)
print(f"one plain fit of the forest: {time.perf_counter() - start:.2f} s")

best = search.best_params_["importanceselector__method"]
print(f"chosen: {best}, test ROC AUC {search.score(X_test, y_test):.3f}")

# %%
# What the chosen selector kept
# -----------------------------
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
