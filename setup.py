"""Build the optional compiled kernels; everything else is in pyproject.toml.

The extension is optional: if no C compiler is available the package installs
without it and the tree engine uses its NumPy implementation (same results,
slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sklearn_fimp._engine._ckernels",
            sources=["sklearn_fimp/_engine/_ckernels.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
