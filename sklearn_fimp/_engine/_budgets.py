"""How much the engine does at once: row chunks, batches of groups and of
tasks, worker threads, each bounded by a memory budget.

The budgets are module attributes read when they are used, so that tests
can shrink them (``monkeypatch.setattr(_budgets, "CHUNK_ROWS", 37)``) to
exercise many chunks and batches on small data.
"""

import numpy as np
from joblib import Parallel, effective_n_jobs

#: Rows routed at once through all trees, at most (bounds the leaf and path
#: caches; see ROUTING_BYTES).
CHUNK_ROWS = 50_000
#: Bytes allowed for one chunk's routing through all trees: deep trees on
#: many features record many (row, feature) pairs, and chunks shrink so that
#: their routing fits. Smaller chunks cost little (W2 of bench_permutation,
#: forest-level out-of-bag: the same time from 512 down to 128 MiB) and keep
#: the peak of large data sets down.
ROUTING_BYTES = 256 * 2**20
#: Rows of X validated and coded at once by the boosting adapters
#: (``coded_in_blocks``): the float64 copies their models' validation and
#: the coding make are a block's, not the whole X's (on 1,000,000 rows x 100
#: features, 0.75 GiB each).
INPUT_ROWS = 50_000
#: Rows sampled to estimate how many paths use each group.
SAMPLE_ROWS = 1000
#: Trees sampled (evenly spaced) to estimate the size of a chunk's routing:
#: boosted models have hundreds of similar trees, each routed by a call.
SAMPLE_TREES = 64
#: Above this share of affected rows, the NumPy backend leaves a group to
#: the predict-every-row path.
MAX_AFFECTED_SHARE = 0.8
#: Bytes allowed for the permuted outputs of one batch of groups.
BATCH_BYTES = 256 * 2**20
#: Bytes a worker of the compiled kernels allows for one batch of tasks
#: (a group and a permutation each): their permuted columns, source rows and
#: changes, for one chunk. A batch reads each tree's nodes once.
TASK_BYTES = 32 * 2**20


def evenly_spaced(n_rows, n_sample):
    """Up to ``n_sample`` evenly spaced row indices of ``n_rows``."""
    return np.unique(np.linspace(0, n_rows - 1, min(n_rows, n_sample)).astype(int))


def row_chunks(ensemble, X, tree_rows, budget=None):
    """Consecutive row ranges whose routing through every tree fits
    ``budget`` bytes (None: ``ROUTING_BYTES``), estimated on a few evenly
    spaced rows of up to ``SAMPLE_TREES`` evenly spaced trees
    (``tree_rows``: each tree's rows, in increasing order, or None for all
    rows)."""
    n_rows = X.shape[0]
    sample = evenly_spaced(n_rows, 256)
    in_sample = np.zeros(n_rows, dtype=bool)
    in_sample[sample] = True
    per_row = 0.0
    n_trees = len(ensemble.terms)
    trees = evenly_spaced(n_trees, SAMPLE_TREES)
    for t in trees:
        rows = sample if tree_rows is None else tree_rows[t][in_sample[tree_rows[t]]]
        if len(rows):
            routing = ensemble.backend.route_tree(ensemble, t, X[rows])
            # a pair (16 bytes, twice while being sorted), a leaf and a row
            per_row += (32 * routing.feature_ptr[-1] + 16 * len(rows)) / len(sample)
    per_row *= n_trees / max(len(trees), 1)
    budget = ROUTING_BYTES if budget is None else budget
    size = int(min(CHUNK_ROWS, max(1000, budget // max(per_row, 1))))
    return [
        np.arange(start, min(start + size, n_rows)) for start in range(0, n_rows, size)
    ]


def group_batch_size(n_groups, n_repeats, n_rows, n_outputs):
    """Groups whose permuted outputs (every row, every repeat) fit
    ``BATCH_BYTES`` together, at least one."""
    per_group = n_repeats * n_rows * n_outputs * 8
    return max(1, min(n_groups, BATCH_BYTES // max(per_group, 1)))


def task_batch_size(n_rows, n_outputs, widest_group):
    """Tasks a compiled kernel call takes at once on a chunk of ``n_rows``
    (their changes, source rows and gathered columns fit ``TASK_BYTES``)."""
    per_task = n_rows * (8 * n_outputs + 8 + 4 * widest_group)
    return max(1, TASK_BYTES // per_task)


def engine_threads(n_jobs):
    """The threads of one pass over the chunks, as a context manager.

    The same threads route and score every chunk: threads started afresh
    for each call would each allocate from an arena of their own (glibc),
    which keeps the memory a chunk freed, and the process's peak would grow
    by up to a chunk's routing for every new arena. ``require="sharedmem"``
    whatever joblib backend is active: the compiled kernels release the GIL,
    and shipping the routing to other processes would cost more than
    computing it."""
    return Parallel(n_jobs=n_jobs, require="sharedmem")


def worker_parts(n_groups, n_jobs):
    """Group indices split into one consecutive part per worker."""
    n_workers = max(1, effective_n_jobs(n_jobs))
    parts = np.array_split(np.arange(n_groups), min(n_workers, max(n_groups, 1)))
    return [part for part in parts if len(part)]
