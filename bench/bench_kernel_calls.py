"""How much of the tree engine's time the ctypes calls of its kernels cost.

Runs the three engine tasks of bench/bench_permutation.py (validation
permutation importance with n_repeats=5, forest-level and per-tree
out-of-bag permutation importance), on its workloads, with the compiled
kernels' wrappers instrumented: for each kernel, the number of calls and the
time spent in them. Then measures what one call costs when the kernel has
no work (empty arrays: ctypes' argument checks and conversion, the call,
the wrapper), and reports calls x that cost as a share of each task's time.

This is the figure behind the choice of ctypes over Cython for the kernels
(docs/architecture.rst, "The engine"): a Cython wrapper would save at most that
share.

Run from the repository root::

    python bench/bench_kernel_calls.py                 # W1 and W2
    python bench/bench_kernel_calls.py --workload W1   # the rent data only
    python bench/bench_kernel_calls.py --quick         # a smoke run, seconds

The workloads are W1 and W2 of bench_permutation.py (defined in
bench/_common.py); W1 is skipped, with a message, without the rent data.

Forests are fitted with n_jobs=-1 and evaluated with n_jobs=1.
"""

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np
from _common import RENT_CSV, load_rent, load_synthetic, rent_missing, skip, timed
from sklearn.model_selection import train_test_split

import sklearn_fimp
from sklearn_fimp import oob_permutation_importance, permutation_importance

# Private: the script instruments the compiled kernels' wrappers and calls
# them with empty arrays; the package has no public access to its kernels.
from sklearn_fimp._engine import _backend, _kernels

DEFAULT_DATA = RENT_CSV
KERNEL_NAMES = (
    "route_rows",
    "route_scatter",
    "moved_leaves",
    "add_moved_changes",
    "add_leaf_values",
)


class CountingKernels:
    """The compiled kernels, counting each wrapper's calls and time."""

    def __init__(self, kernels):
        self.kernels = kernels
        self.calls = collections.Counter()
        self.seconds = collections.Counter()

    def __getattr__(self, name):
        wrapper = getattr(self.kernels, name)

        def counted(**arguments):
            start = time.perf_counter()
            result = wrapper(**arguments)
            self.seconds[name] += time.perf_counter() - start
            self.calls[name] += 1
            return result

        return counted


def empty_call_seconds(kernels, repeats):
    """Median over kernels of the time of one call with no work to do."""
    empty_nodes = np.zeros(1, dtype=_kernels.NODE_DTYPE)
    empty_nodes["left"] = -1
    no_categories = np.zeros(1, dtype=np.uint32)
    no_rows = np.zeros(0, dtype=np.int64)
    X = np.zeros((1, 1), dtype=np.float32)
    pairs = np.zeros(0, dtype=_kernels.PAIR_DTYPE)
    table = np.zeros((1, 1))
    addresses = np.array([table.ctypes.data], dtype=np.uintp)
    calls = {
        "route_rows": lambda: kernels.route_rows(
            nodes=empty_nodes,
            categories=no_categories,
            threshold32=np.zeros(1, dtype=np.float32),
            X=X,
            rows=no_rows,
            width=1,
            leaves=no_rows,
            counts=np.zeros(1, dtype=np.int64),
            buffer=pairs,
            buffer_columns=np.zeros(0, dtype=np.int32),
            row_counts=np.zeros(0, dtype=np.int32),
        ),
        "route_scatter": lambda: kernels.route_scatter(
            buffer=pairs,
            buffer_columns=np.zeros(0, dtype=np.int32),
            row_counts=np.zeros(0, dtype=np.int32),
            width=1,
            ptr=np.zeros(2, dtype=np.int64),
            pairs=pairs,
        ),
        "moved_leaves": lambda: kernels.moved_leaves(
            nodes=empty_nodes,
            categories=no_categories,
            X=X,
            sources=np.zeros((1, 1), dtype=np.int64),
            ptr=np.zeros(2, dtype=np.int64),
            pairs=pairs,
            group_ptr=np.zeros(1, dtype=np.int64),
            group_columns=no_rows,
            leaves=np.zeros(1, dtype=np.int64),
            moved=np.zeros(1, dtype=np.int64),
            new_leaves=np.zeros(1, dtype=np.int64),
            counts=no_rows,
        ),
        "add_moved_changes": lambda: kernels.add_moved_changes(
            node_offset=no_rows,
            nodes=empty_nodes,
            categories=no_categories,
            table_addresses=addresses,
            n_outputs=1,
            row_offset=np.zeros(1, dtype=np.int64),
            positions=no_rows,
            leaves=no_rows,
            ptr=no_rows,
            pair_addresses=addresses,
            X=X,
            chunk_start=0,
            values=np.zeros((0, 1), dtype=np.float32),
            group_ptr=np.zeros(1, dtype=np.int64),
            group_columns=no_rows,
            out=np.zeros(1),
        ),
        "add_leaf_values": lambda: kernels.add_leaf_values(
            table_addresses=addresses[:0],
            n_outputs=1,
            row_offset=np.zeros(1, dtype=np.int64),
            positions=no_rows,
            leaves=no_rows,
            out=np.zeros(1),
        ),
    }
    per_call = {}
    for name, call in calls.items():
        seconds, _ = timed(lambda call=call: [call() for _ in range(repeats)])
        per_call[name] = seconds / repeats
    return per_call


def run_tasks(name, X, y, model, repeats):
    X_train, X_valid, y_train, y_valid = train_test_split(
        X, y, test_size=0.2, random_state=0
    )
    model.fit(X_train, y_train)
    model.set_params(n_jobs=None)
    tasks = {
        "validation permutation": lambda: permutation_importance(
            model, X_valid, y_valid, n_repeats=repeats, n_jobs=1, random_state=0
        ),
        "OOB permutation, forest": lambda: oob_permutation_importance(
            model, X_train, y_train, n_jobs=1, random_state=0
        ),
        "OOB permutation, per tree": lambda: oob_permutation_importance(
            model, X_train, y_train, per_tree=True, n_jobs=1, random_state=0
        ),
    }
    rows = []
    for task, run in tasks.items():
        counting = CountingKernels(_backend.COMPILED.kernels)
        _backend.COMPILED.kernels = counting
        try:
            seconds, _ = timed(run)
        finally:
            _backend.COMPILED.kernels = counting.kernels
        rows.append((name, task, seconds, counting.calls, counting.seconds))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workload", choices=["W1", "W2", "all"], default="all")
    args = parser.parse_args(argv)
    if _backend.COMPILED is None:
        sys.exit("the compiled kernels are not built: nothing to measure")
    print(f"sklearn_fimp {sklearn_fimp.__version__} from {sklearn_fimp.__file__}")
    per_call = empty_call_seconds(
        _backend.COMPILED.kernels, 1_000 if args.quick else 20_000
    )
    print("\nOne call with no work (ctypes conversion + call + wrapper):")
    for kernel, seconds in per_call.items():
        print(f"  {kernel:<20} {seconds * 1e6:6.1f} us")
    workloads = []
    if args.workload in ("W1", "all"):
        if rent_missing(args.data):
            skip("W1", rent_missing(args.data))
        else:
            workloads.append(load_rent(args.data, args.quick))
    if args.workload in ("W2", "all"):
        workloads.append(load_synthetic(args.quick))
    for name, X, y, model, _ in workloads:
        for workload, task, seconds, calls, kernel_seconds in run_tasks(
            name, X, y, model, repeats=5
        ):
            overhead = sum(calls[k] * per_call[k] for k in calls)
            print(f"\n== {workload}, {task}: {seconds:.2f} s")
            for kernel in KERNEL_NAMES:
                if calls[kernel]:
                    print(
                        f"  {kernel:<20} {calls[kernel]:7,} calls "
                        f"{kernel_seconds[kernel]:8.3f} s in the kernel"
                    )
            print(
                f"  {sum(calls.values()):,} calls; their call overhead "
                f"{overhead * 1e3:.2f} ms = {100 * overhead / seconds:.3f}% of the "
                f"task; {100 * sum(kernel_seconds.values()) / seconds:.0f}% of the "
                "task inside the kernels"
            )


if __name__ == "__main__":
    main()
