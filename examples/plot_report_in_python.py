"""
====================================================
The command-line report, and the same in Python
====================================================

The package installs a command that writes one self-contained HTML page
about a CSV file: the model's score, its importances under several methods
next to a column of random numbers, the features
:class:`~sklearn_fimp.ImportanceSelector` keeps, and the dependence between
features::

    sklearn-fimp report DATA.csv --target COLUMN --out report.html
    sklearn-fimp report --demo     # scikit-learn's diabetes data

(``python -m sklearn_fimp report ...`` does the same.) The report is a
convenience for a first look, not a requirement: everything in it is a few
lines of Python with the package's functions and displays, as below, on the
same diabetes data (in its original units, as the demo uses it). In Python
you choose the model, the split and every setting, and you keep the
results.
"""

# %%
# The model, and a column of random numbers for reference
# -------------------------------------------------------
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
X = X.assign(random=np.random.RandomState(0).uniform(size=len(X)))
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
forest = RandomForestRegressor(n_estimators=100, n_jobs=2, random_state=0)
forest.fit(X_train, y_train)
print(f"held-out R²: {forest.score(X_test, y_test):.3f}")

# %%
# MDI and permutation importance
# ------------------------------
# The forest explains only about a quarter of the variance of the held-out
# targets (the report states the score first for that reason): the
# importances describe what this modest model uses.
#
# :meth:`ImportanceDisplay.from_estimator
# <sklearn_fimp.ImportanceDisplay.from_estimator>` computes and draws them
# in one call: MDI and permutation importance on the held-out rows,
# with the random column drawn as a probe (grey, hatched).
from sklearn_fimp import ImportanceDisplay

display = ImportanceDisplay.from_estimator(
    forest,
    X_test,
    y_test,
    method=["mdi", "permutation"],
    probes=["random"],
    n_repeats=10,
    random_state=0,
)

# %%
# What the selector keeps
# -----------------------
# :class:`~sklearn_fimp.ImportanceSelector` compares every feature with
# shuffled copies of the features and keeps those that beat them, with
# corrected p-values (Benjamini-Hochberg by default).
import pandas as pd

from sklearn_fimp import ImportanceSelector

selector = ImportanceSelector(
    RandomForestRegressor(n_estimators=100, n_jobs=2), random_state=0
).fit(X_train, y_train)
print(
    pd.DataFrame(
        {"corrected p-value": selector.pvalues_corrected_, "kept": selector.support_},
        index=X.columns,
    ).sort_values("corrected p-value")
)
display = ImportanceDisplay.from_selector(selector)

# %%
# Dependence between the features
# -------------------------------
# How well each feature is predicted by the others, and which features
# :class:`~sklearn_fimp.DependenceAnalyzer` would drop as redundant (none
# above the default threshold of 0.95 here: the blood-serum measurements
# ``s1`` to ``s6`` are related, but none is a copy of the others).
from sklearn_fimp import DependenceAnalyzer, DependenceDisplay

analyzer = DependenceAnalyzer(n_jobs=2, random_state=0).fit(X.drop(columns="random"))
print("dropped:", list(X.columns[:-1][~analyzer.support_]))
display = DependenceDisplay.from_analyzer(analyzer)
