"""The tree engine's compiled inner loops (``_ckernels.c``), through ctypes.

ctypes releases the GIL during each call, so the engine's joblib threads run
them in parallel. The extension is optional: when it was not built (no C
compiler at install time), ``KERNELS`` is None and the engine uses its NumPy
implementation, which gives the same results.
"""

import ctypes
import importlib.util
import warnings

import numpy as np

_INT64 = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
_INT32 = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
_UINT8 = np.ctypeslib.ndpointer(np.uint8, flags="C_CONTIGUOUS")
_FLOAT32 = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
_FLOAT64 = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
_SIZE = ctypes.c_int64

#: node_t of _ckernels.c: scikit-learn's node arrays packed, one node per
#: 24 bytes, so that a descent reads one cache line per node.
NODE_DTYPE = np.dtype(
    [
        ("left", np.int32),
        ("right", np.int32),
        ("column", np.int32),
        ("missing_left", np.uint8),
        ("padding", "V3"),
        ("threshold", np.float64),
    ],
    align=True,
)
_NODES = np.ctypeslib.ndpointer(NODE_DTYPE, flags="C_CONTIGUOUS")

#: pair_t of _ckernels.c: one (row, column) pair of a routing.
PAIR_DTYPE = np.dtype(
    [
        ("row", np.int32),
        ("first_node", np.int32),
        ("lower", np.float32),
        ("upper", np.float32),
    ]
)
_PAIRS = np.ctypeslib.ndpointer(PAIR_DTYPE, flags="C_CONTIGUOUS")
_ADDRESSES = np.ctypeslib.ndpointer(np.uintp, flags="C_CONTIGUOUS")
_TREE = [_NODES]

_SIGNATURES = {
    "route_rows": (
        ctypes.c_int,
        _TREE
        + [_FLOAT32, _FLOAT32, _SIZE, _INT64, _SIZE, _SIZE, _INT64, _INT64]
        + [_PAIRS, _INT32, _INT32],
    ),
    "route_scatter": (
        ctypes.c_int,
        [_PAIRS, _INT32, _INT32, _SIZE, _SIZE, _SIZE, _INT64, _PAIRS],
    ),
    "moved_leaves": (
        ctypes.c_int64,
        _TREE
        + [_FLOAT32, _SIZE, _SIZE, _INT64, _SIZE, _INT64, _PAIRS, _SIZE, _INT64]
        + [_INT64, _INT64, _INT64, _INT64, _INT64],
    ),
    "add_moved_changes": (
        ctypes.c_int64,
        [_SIZE, _INT64]
        + _TREE
        + [_ADDRESSES, _SIZE, _INT64, _INT64, _INT64, _INT64, _ADDRESSES, _FLOAT32]
        + [_SIZE, _SIZE, _SIZE, _SIZE, _INT64, _INT64, _INT64, _FLOAT64],
    ),
    "add_leaf_values": (
        None,
        [_SIZE, _ADDRESSES, _SIZE, _INT64, _INT64, _INT64, _FLOAT64],
    ),
}


def _load():
    spec = importlib.util.find_spec("sklearn_fimp._engine._ckernels")
    if spec is None or spec.origin is None:
        return None
    try:
        library = ctypes.CDLL(spec.origin)
    except OSError:
        return None
    for name, (restype, argtypes) in _SIGNATURES.items():
        function = getattr(library, name)
        function.restype = restype
        function.argtypes = argtypes
    return library


#: The compiled library, or None when the extension was not built.
KERNELS = _load()

_warned = False


def warn_without_kernels():
    """Say once per process that the engine runs without its compiled
    kernels (when they are missing)."""
    global _warned
    if KERNELS is not None or _warned:
        return
    _warned = True
    warnings.warn(
        "sklearn_fimp's compiled kernels are not installed (no C compiler "
        "was found when the package was built), so the tree engine runs its "
        "NumPy implementation: the same results, several times slower. "
        "Reinstall sklearn_fimp where a C compiler is available to get them; "
        "sklearn_fimp.show_versions() reports whether they are in use.",
        UserWarning,
        stacklevel=2,
    )


def check_status(status):
    """Raise MemoryError when a kernel reports that malloc failed."""
    if status < 0:
        raise MemoryError("the tree engine could not allocate its work arrays")
    return status
