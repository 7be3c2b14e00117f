"""The registry of importance methods (``sklearn_fimp/_methods.py``)."""

import inspect

import pytest

from sklearn_fimp._methods import METHODS


def _keywords(function):
    """The keyword arguments of ``function`` beyond the model, X and y."""
    return {
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if name not in ("estimator", "X", "y")
        and (
            parameter.kind == parameter.KEYWORD_ONLY
            or parameter.default is not inspect.Parameter.empty
        )
    }


@pytest.mark.parametrize("name", METHODS)
def test_method_declares_the_options_its_core_and_function_take(name):
    # a renamed keyword must fail here, not be dropped on the way to the core
    method = METHODS[name]
    assert method.options == _keywords(method.core)
    assert method.parameters == _keywords(method.function)


def test_method_option_no_method_takes_is_an_error():
    method = METHODS["permutation"]
    with pytest.raises(TypeError, match=r"no importance method takes .*n_repeat"):
        method.measure(None, None, None, n_repeat=3)
    with pytest.raises(TypeError, match=r"no importance method takes .*random_sate"):
        method.compute(None, None, None, random_sate=0)
