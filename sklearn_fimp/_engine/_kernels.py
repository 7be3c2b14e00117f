"""The compiled kernels (``_ckernels.c``), one typed wrapper per C function.

The C functions are called through ctypes, which releases the GIL for the
duration of each call, so the engine's joblib threads run them in parallel.
Each wrapper below takes keyword arguments, derives the sizes the C function
needs from the arrays, and turns a failed allocation into ``MemoryError``;
the argument types are declared once, in ``_SIGNATURES``, in the C
functions' order.

The record dtypes ``NODE_DTYPE`` and ``PAIR_DTYPE`` mirror the C structs
``node_t`` and ``pair_t``. When the library loads, :func:`load_kernels`
asks it for the structs' sizes and field offsets (``record_layout``) and
refuses it, with a warning that names the mismatch, if the dtypes disagree;
the engine then uses its NumPy backend. The extension is optional: when it
was not built (no C compiler at install time) :func:`load_kernels` returns
None, silently.
"""

import ctypes
import importlib.util
import warnings

import numpy as np

#: node_t of _ckernels.c: scikit-learn's node arrays packed, one node per
#: 32 bytes, so that a descent reads one cache line per node;
#: ``category_set`` is where a categorical node's set of codes starts in the
#: ensemble's category words, -1 on other nodes.
NODE_DTYPE = np.dtype(
    [
        ("left", np.int32),
        ("right", np.int32),
        ("column", np.int32),
        ("category_set", np.int32),
        ("missing_left", np.uint8),
        ("padding", "V7"),
        ("threshold", np.float64),
    ],
    align=True,
)

#: pair_t of _ckernels.c: one (row, column) pair of a routing.
PAIR_DTYPE = np.dtype(
    [
        ("row", np.int32),
        ("first_node", np.int32),
        ("lower", np.float32),
        ("upper", np.float32),
    ]
)

#: The fields ``record_layout`` reports, in its order, for each record.
_LAYOUT_FIELDS = {
    "node_t": (
        "NODE_DTYPE",
        ("left", "right", "column", "category_set", "missing_left", "threshold"),
    ),
    "pair_t": ("PAIR_DTYPE", ("row", "first_node", "lower", "upper")),
}

_INT64 = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
_INT32 = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
_FLOAT32 = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
_UINT32 = np.ctypeslib.ndpointer(np.uint32, flags="C_CONTIGUOUS")
_UINT8 = np.ctypeslib.ndpointer(np.uint8, flags="C_CONTIGUOUS")
_FLOAT64 = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
_ADDRESSES = np.ctypeslib.ndpointer(np.uintp, flags="C_CONTIGUOUS")
_SIZE = ctypes.c_int64


def _signatures(node_dtype, pair_dtype):
    """Return and argument types of each C function, in the C order."""
    nodes = np.ctypeslib.ndpointer(node_dtype, flags="C_CONTIGUOUS")
    pairs = np.ctypeslib.ndpointer(pair_dtype, flags="C_CONTIGUOUS")
    return {
        "record_layout": (ctypes.c_int64, [_INT64, _SIZE]),
        "route_rows": (
            ctypes.c_int,
            [nodes, _UINT32, _FLOAT32, _FLOAT32, _SIZE, _INT64, _SIZE, _SIZE]
            + [_INT64]
            + [_INT64, pairs, _INT32, _INT32],
        ),
        "route_scatter": (
            ctypes.c_int,
            [pairs, _INT32, _INT32, _SIZE, _SIZE, _SIZE, _INT64, pairs],
        ),
        "moved_leaves": (
            ctypes.c_int64,
            [nodes, _UINT32, _FLOAT32, _SIZE, _SIZE, _INT64, _SIZE, _INT64, pairs]
            + [_SIZE]
            + [_INT64, _INT64, _INT64, _INT64, _INT64, _INT64],
        ),
        "add_moved_changes": (
            ctypes.c_int64,
            [_SIZE, _INT64, nodes, _UINT32, _ADDRESSES, _SIZE, _INT64, _INT64]
            + [_INT64]
            + [_INT64, _ADDRESSES, _FLOAT32, _SIZE, _SIZE, _SIZE, _SIZE, _FLOAT32]
            + [_INT64, _INT64, _FLOAT64],
        ),
        "add_leaf_values": (
            None,
            [_SIZE, _ADDRESSES, _SIZE, _INT64, _INT64, _INT64, _FLOAT64],
        ),
        "oblivious_leaves": (
            None,
            [_SIZE, _SIZE, _INT64, _INT32, _FLOAT64, _UINT8, _FLOAT32, _SIZE, _SIZE]
            + [_INT32],
        ),
        "oblivious_add_leaf_values": (
            None,
            [_SIZE, _ADDRESSES, _SIZE, _INT32, _SIZE, _FLOAT64],
        ),
        "oblivious_changes": (
            ctypes.c_int64,
            [_SIZE, _INT64, _INT32, _FLOAT64, _UINT8, _ADDRESSES, _SIZE, _INT32]
            + [_SIZE, _SIZE, _SIZE, _FLOAT32, _INT64, _INT64, _FLOAT64],
        ),
    }


def _check_status(status):
    """Raise MemoryError when a kernel reports that malloc failed."""
    if status < 0:
        raise MemoryError("the tree engine could not allocate its work arrays")
    return status


def layout_mismatches(library, node_dtype=NODE_DTYPE, pair_dtype=PAIR_DTYPE):
    """Where the record dtypes disagree with the library's structs: a list
    of messages, empty when every size and field offset matches."""
    reported = np.zeros(64, dtype=np.int64)
    n_values = library.record_layout(reported, len(reported))
    values = iter(reported[:n_values].tolist())
    problems = []
    for struct, dtype in zip(_LAYOUT_FIELDS, (node_dtype, pair_dtype)):
        dtype_name, fields = _LAYOUT_FIELDS[struct]
        size = next(values, None)
        if size != dtype.itemsize:
            problems.append(
                f"sizeof({struct}) is {size} bytes but {dtype_name} has "
                f"{dtype.itemsize}"
            )
        for field in fields:
            offset, field_size = next(values, None), next(values, None)
            if field not in (dtype.names or ()):
                problems.append(f"{dtype_name} has no field {field!r}")
                continue
            field_dtype, field_offset = dtype.fields[field][:2]
            if (offset, field_size) != (field_offset, field_dtype.itemsize):
                problems.append(
                    f"{struct}.{field} is {field_size} bytes at offset {offset} "
                    f"but {dtype_name}[{field!r}] is {field_dtype.itemsize} "
                    f"bytes at offset {field_offset}"
                )
    return problems


class CompiledKernels:
    """The loaded library, with one typed wrapper per kernel.

    Arrays must be C-contiguous and of the dtypes the C functions take
    (ctypes checks them); the wrappers allocate nothing.
    """

    def __init__(self, library):
        self._library = library

    @property
    def path(self):
        """The file the library was loaded from."""
        return self._library._name

    def route_rows(
        self,
        *,
        nodes,
        categories,
        threshold32,
        X,
        rows,
        width,
        leaves,
        counts,
        buffer,
        buffer_columns,
        row_counts,
    ):
        """Route rows ``X[rows]`` through one tree (``nodes``, with the
        category sets of its categorical nodes in ``categories``): each row's
        leaf into ``leaves`` and its (row, column) pairs, row after row, into
        ``buffer`` (``width`` slots per row) with their columns in
        ``buffer_columns`` and their number in ``row_counts``; ``counts[c]``
        (zeroed by the caller) += the rows whose path splits on ``c``."""
        _check_status(
            self._library.route_rows(
                nodes,
                categories,
                threshold32,
                X,
                X.shape[1],
                rows,
                len(rows),
                width,
                leaves,
                counts,
                buffer,
                buffer_columns,
                row_counts,
            )
        )

    def route_scatter(self, *, buffer, buffer_columns, row_counts, width, ptr, pairs):
        """Store the pairs :meth:`route_rows` wrote row by row column by
        column: column ``c``'s in ``pairs[ptr[c]:ptr[c + 1]]``."""
        _check_status(
            self._library.route_scatter(
                buffer,
                buffer_columns,
                row_counts,
                len(row_counts),
                width,
                len(ptr) - 1,
                ptr,
                pairs,
            )
        )

    def moved_leaves(
        self,
        *,
        nodes,
        categories,
        X,
        sources,
        ptr,
        pairs,
        group_ptr,
        group_columns,
        leaves,
        moved,
        new_leaves,
        counts,
    ):
        """One tree routed on every row of ``X``: for each group
        (``group_columns[group_ptr[g]:group_ptr[g + 1]]``) and each row of
        ``sources`` (a permutation's source rows), the rows that reach
        another leaf, into ``moved`` and ``new_leaves``, and how many into
        ``counts[g * n_repeats + r]``. Returns how many in all."""
        n_repeats, n_rows = sources.shape
        return _check_status(
            self._library.moved_leaves(
                nodes,
                categories,
                X,
                X.shape[1],
                n_rows,
                sources,
                n_repeats,
                ptr,
                pairs,
                len(group_ptr) - 1,
                group_ptr,
                group_columns,
                leaves,
                moved,
                new_leaves,
                counts,
            )
        )

    def add_moved_changes(
        self,
        *,
        node_offset,
        nodes,
        categories,
        table_addresses,
        n_outputs,
        row_offset,
        positions,
        leaves,
        ptr,
        pair_addresses,
        X,
        chunk_start,
        values,
        group_ptr,
        group_columns,
        out,
    ):
        """Every tree at once, for each task ``k`` (a group,
        ``group_columns[group_ptr[k]:group_ptr[k + 1]]``, replaced by rows
        ``group_ptr[k]:group_ptr[k + 1]`` of ``values``, one per column, one
        value per position): add to ``out[k]`` (n_positions x n_outputs)
        the change of each tree's leaf value on the rows that leave their
        path. Returns the number of moved (row, tree, task) triples."""
        n_tasks, n_positions = len(group_ptr) - 1, values.shape[1]
        return _check_status(
            self._library.add_moved_changes(
                len(node_offset),
                node_offset,
                nodes,
                categories,
                table_addresses,
                n_outputs,
                row_offset,
                positions,
                leaves,
                ptr,
                pair_addresses,
                X,
                X.shape[1],
                chunk_start,
                n_positions,
                n_tasks,
                values,
                group_ptr,
                group_columns,
                out,
            )
        )

    def add_leaf_values(
        self, *, table_addresses, n_outputs, row_offset, positions, leaves, out
    ):
        """Add to ``out`` every tree's leaf values on its routed rows, tree
        after tree in order."""
        self._library.add_leaf_values(
            len(table_addresses),
            table_addresses,
            n_outputs,
            row_offset,
            positions,
            leaves,
            out,
        )

    def oblivious_leaves(self, *, levels, first_tree, last_tree, X, bits):
        """Write into ``bits[t]`` (trees ``first_tree`` to ``last_tree - 1``)
        the leaf numbers of the rows of X in the oblivious trees of
        ``levels`` (an :class:`~._backend.ObliviousLevels`)."""
        self._library.oblivious_leaves(
            first_tree,
            last_tree,
            levels.offset,
            levels.column,
            levels.threshold,
            levels.missing_left,
            X,
            X.shape[1],
            X.shape[0],
            bits,
        )

    def oblivious_add_leaf_values(self, *, levels, n_outputs, bits, out):
        """Add to ``out`` every oblivious tree's leaf values on the rows of
        ``bits`` (n_trees x n_rows), tree after tree in order."""
        self._library.oblivious_add_leaf_values(
            bits.shape[0], levels.table_addresses, n_outputs, bits, bits.shape[1], out
        )

    def oblivious_changes(
        self,
        *,
        levels,
        n_outputs,
        bits,
        n_columns,
        values,
        group_ptr,
        group_columns,
        out,
    ):
        """:meth:`add_moved_changes` for the oblivious trees of ``levels``
        on every row of a chunk (``bits``: n_trees x n_rows). Returns the
        number of (row, tree, task) triples that change leaf."""
        return _check_status(
            self._library.oblivious_changes(
                bits.shape[0],
                levels.offset,
                levels.column,
                levels.threshold,
                levels.missing_left,
                levels.table_addresses,
                n_outputs,
                bits,
                bits.shape[1],
                n_columns,
                len(group_ptr) - 1,
                values,
                group_ptr,
                group_columns,
                out,
            )
        )


def load_kernels(node_dtype=NODE_DTYPE, pair_dtype=PAIR_DTYPE):
    """The compiled kernels, or None when the extension was not built or its
    structs do not match the record dtypes (then with a warning)."""
    spec = importlib.util.find_spec("sklearn_fimp._engine._ckernels")
    if spec is None or spec.origin is None:
        return None
    try:
        library = ctypes.CDLL(spec.origin)
    except OSError:
        return None
    try:
        signatures = _signatures(node_dtype, pair_dtype)
        for name, (restype, argtypes) in signatures.items():
            function = getattr(library, name)
            function.restype = restype
            function.argtypes = argtypes
    except AttributeError as error:
        warnings.warn(
            f"sklearn_fimp's compiled kernels ({spec.origin}) are out of date "
            f"({error}); the tree engine uses its NumPy backend (same results, "
            "slower). Rebuild them with `python setup.py build_ext --inplace` "
            "or reinstall sklearn_fimp.",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    problems = layout_mismatches(library, node_dtype, pair_dtype)
    if problems:
        warnings.warn(
            f"sklearn_fimp's compiled kernels ({spec.origin}) do not match "
            f"the engine's record dtypes: {'; '.join(problems)}. The tree engine "
            "uses its NumPy backend (same results, slower); rebuild the "
            "kernels with `python setup.py build_ext --inplace` or reinstall "
            "sklearn_fimp.",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return CompiledKernels(library)
