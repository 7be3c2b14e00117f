"""The compiled kernels load only when their structs match the record
dtypes; the engine then prepares ensembles for them."""

import numpy as np
import pytest

from sklearn_fimp._engine import _backend, _kernels


def test_engine_kernels_match_the_record_dtypes():
    if _backend.COMPILED is None:
        pytest.skip("the compiled kernels (sklearn_fimp._ckernels) were not built")
    library = _backend.COMPILED.kernels._library
    assert _kernels.layout_mismatches(library) == []
    assert _backend.BACKEND is _backend.COMPILED


@pytest.mark.parametrize(
    "records, message",
    [
        (
            {
                "node_dtype": [
                    ("left", np.int32),
                    ("right", np.int32),
                    ("column", np.int32),
                    ("missing_left", np.uint8),
                    ("padding", "V3"),
                ]
            },
            r"sizeof\(node_t\) is 32 bytes but NODE_DTYPE has 16.*"
            r"NODE_DTYPE has no field 'threshold'",
        ),
        (
            {
                "pair_dtype": [
                    ("row", np.int32),
                    ("first_node", np.int32),
                    ("lower", np.float64),
                    ("upper", np.float32),
                ]
            },
            r"pair_t.lower is 4 bytes at offset 8 but PAIR_DTYPE\['lower'\] is 8 "
            r"bytes at offset 8",
        ),
    ],
    ids=["node_t", "pair_t"],
)
def test_engine_kernels_refused_when_a_struct_does_not_match(records, message):
    # a record dtype that disagrees with its C struct would make the kernels
    # read garbage: the loader refuses them, says why, and the engine runs
    # on NumPy
    if _backend.COMPILED is None:
        pytest.skip("the compiled kernels (sklearn_fimp._ckernels) were not built")
    records = {name: np.dtype(fields) for name, fields in records.items()}
    with pytest.warns(RuntimeWarning, match=message) as record:
        assert _kernels.load_kernels(**records) is None
    assert "NumPy backend" in str(record[0].message)
