"""
===========================================
Running the parallel work on a Dask cluster
===========================================

Drop-column importance refits the model once per feature, feature
dependence fits one model per feature, and per-tree out-of-bag importance
works tree by tree: all of it is embarrassingly parallel, and all of it goes
through :mod:`joblib`. Wrapping a call in
``joblib.parallel_config(backend="dask")`` sends those jobs to the workers of
a Dask cluster instead of local processes. Every random number is drawn
before the jobs are dispatched, so the results are exactly those of a local
run with the same ``random_state``.

This example starts a small cluster on this machine; on a real cluster,
connect to its scheduler with ``Client("tcp://scheduler-address:8786")``
instead, and nothing else changes.
"""

# %%
# A cluster and some data
# -----------------------
# The workers here are threads of this process, so that the example runs
# anywhere as it is. A script that starts worker *processes*
# (``processes=True``, the default) must create the cluster under
# ``if __name__ == "__main__":``, because each worker process imports the
# script.
import time

import joblib
import numpy as np
from distributed import Client, LocalCluster
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from sklearn_fimp import DependenceAnalyzer, ImportanceDisplay, drop_column_importance

cluster = LocalCluster(
    n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
)
client = Client(cluster)

X, y = make_classification(
    n_samples=1000,
    n_features=8,
    n_informative=3,
    n_redundant=2,
    shuffle=False,
    random_state=0,
)
forest = RandomForestClassifier(n_estimators=50, min_samples_leaf=3)

# %%
# The same drop-column importances, locally and on the cluster
# ------------------------------------------------------------
# Nine fits: the baseline and one without each feature, one after the other
# here; inside ``parallel_config(backend="dask")`` the same call runs them
# on the cluster's workers (``n_jobs`` defaults to all of them).
start = time.perf_counter()
local = drop_column_importance(forest, X, y, random_state=0)
print(f"local: {time.perf_counter() - start:.1f} s")

start = time.perf_counter()
with joblib.parallel_config(backend="dask"):
    remote = drop_column_importance(forest, X, y, verbose=1, random_state=0)
print(f"dask: {time.perf_counter() - start:.1f} s")

print("identical:", np.array_equal(local.importances, remote.importances))
display = ImportanceDisplay.from_result({"local": local, "on Dask": remote})

# %%
# ``verbose=1`` printed, on stderr, the number of fits and joblib's progress
# of the jobs; the two panels show the same bars. Every importance is small:
# x3 and x4 are linear combinations of x0, x1 and x2, so the model loses
# little without any one of them.
#
# Sequential elimination on the cluster
# -------------------------------------
# :class:`~sklearn_fimp.DependenceAnalyzer` fits one model per feature, then
# re-measures a few after each elimination step; every batch of fits is a
# parallel job, and each feature keeps its own seed whatever the backend. It
# drops redundant columns among x0 to x4 and keeps the noise, which no other
# feature explains.
analyzer = DependenceAnalyzer(RandomForestRegressor(n_estimators=30), random_state=0)
with joblib.parallel_config(backend="dask"):
    remote_support = analyzer.fit(X).support_
local_support = analyzer.fit(X).support_
print("kept:", np.flatnonzero(remote_support))
print("identical:", np.array_equal(local_support, remote_support))

# %%
# What travels to the workers
# ---------------------------
# joblib's Dask backend scatters every large array passed to a job once per
# parallel call, so X and y travel to the cluster once, not once per fit.
# A *fitted* model is not an array, and Dask would send it with every job:
# the functions that ship one (permutation importance of any model,
# out-of-bag importance per tree) therefore split their work into one job
# per worker, so the model travels once per worker. To send X once for
# several calls, scatter it up front:
# ``joblib.parallel_config(backend="dask", scatter=[X])``.
client.close()
cluster.close()
