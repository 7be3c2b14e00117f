import re

import sklearn_fimp


def test_public_api_is_exported_and_documented():
    for name in sklearn_fimp.__all__:
        obj = getattr(sklearn_fimp, name)
        if name == "__version__":
            assert re.match(r"^\d+\.\d+\.\d+", obj)
            continue
        doc = obj.__doc__
        for section in ("Parameters", "Returns", "Examples"):
            assert section in doc, f"{name} docstring lacks {section}"
